/* det.c - the eval "det": the determinant of an ell x ell matrix by
   expansion by minors along the first row, and its gradient recorded on a
   tape through the inline recorder */
#include <stdlib.h>

#include "evals.h"

typedef struct {
    size_t ell;
    double *A, *grad, det;
    dr_tape *t;
    dr_real *x;      /* the inputs A as tape values */
    size_t *cols;    /* level k: the ell - k columns of its minor */
} det;

/* the determinant of the minor of rows k..ell-1 and columns cols (ell - k
   of them, at level k of the scratch arrays) */
static double minor_val(det *d, size_t k)
{
    size_t ell = d->ell, m = ell - k;
    const size_t *cols = d->cols + k * ell;
    if (m == 1)
        return d->A[k * ell + cols[0]];
    size_t *sub = d->cols + (k + 1) * ell;
    double sum = 0, sign = 1;
    for (size_t j = 0; j < m; j++) {
        for (size_t c = 0, o = 0; c < m; c++)
            if (c != j)
                sub[o++] = cols[c];
        sum += sign * d->A[k * ell + cols[j]] * minor_val(d, k + 1);
        sign = -sign;
    }
    return sum;
}

/* the same, recorded: each term of the sum a product node and a sum
   node, all of the recorder's own.  (One n-ary node per minor, a dr_sum,
   took 2.7x the time: an n-ary node costs an arena record when recorded
   and a call when swept, more than the nodes it saves.) */
static dr_real minor_rec(det *d, dr_rec *r, size_t k)
{
    size_t ell = d->ell, m = ell - k;
    const size_t *cols = d->cols + k * ell;
    if (m == 1)
        return d->x[k * ell + cols[0]];
    size_t *sub = d->cols + (k + 1) * ell;
    dr_real acc = dr_const(0.0);
    for (size_t j = 0; j < m; j++) {
        for (size_t c = 0, o = 0; c < m; c++)
            if (c != j)
                sub[o++] = cols[c];
        dr_real p = dr_rec_mul(r, d->x[k * ell + cols[j]], minor_rec(d, r, k + 1));
        acc = j == 0 ? p : j % 2 ? dr_rec_sub(r, acc, p) : dr_rec_add(r, acc, p);
    }
    return acc;
}

static void release(void *s)
{
    det *d = s;
    if (!d)
        return;
    dr_tape_free(d->t);
    free(d->A);
    free(d->grad);
    free(d->x);
    free(d->cols);
    free(d);
}

static void *prepare(const json_t *input, char *err)
{
    size_t ell, n;
    if (gb_get_size(input, "ell", &ell, err))
        return NULL;
    det *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    d->ell = ell;
    if (!(d->A = gb_get_vector(input, "A", &n, err)))
        goto fail;
    if (ell == 0 || ell > 16 || n != ell * ell) {
        snprintf(err, GB_ERRLEN,
                 "det: \"ell\" must be 1 to 16 and \"A\" hold ell^2 numbers");
        goto fail;
    }
    d->t = dr_tape_new();
    d->grad = malloc(n * sizeof *d->grad);
    d->x = malloc(n * sizeof *d->x);
    d->cols = malloc((ell + 1) * ell * sizeof *d->cols);
    if (!d->t || !d->grad || !d->x || !d->cols) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    for (size_t c = 0; c < ell; c++)
        d->cols[c] = c;
    return d;
fail:
    release(d);
    return NULL;
}

static int primal(void *s, char *err)
{
    (void)err;
    det *d = s;
    d->det = minor_val(d, 0);
    return 0;
}

static int gradient(void *s, char *err)
{
    det *d = s;
    size_t n = d->ell * d->ell;
    dr_status st = dr_tape_clear(d->t);
    if (st == DR_OK)
        st = dr_inputs(d->t, n, d->A, d->x);
    if (st != DR_OK)
        return gb_fail(err, "det", st);
    dr_rec r;
    if ((st = dr_rec_begin(d->t, &r)) != DR_OK)
        return gb_fail(err, "det", st);
    dr_real y = minor_rec(d, &r, 0);
    if ((st = dr_rec_end(&r)) == DR_OK)
        st = dr_gradient_range(d->t, y, d->x[0].idx, n, d->grad);
    d->det = y.val;
    return st == DR_OK ? 0 : gb_fail(err, "det", st);
}

static json_t *out_primal(void *s, char *err)
{
    return gb_json_number(((det *)s)->det, err);
}

static json_t *out_gradient(void *s, char *err)
{
    det *d = s;
    return gb_json_vector(d->grad, d->ell * d->ell, err);
}

const gb_function gb_det_primal = {"det", "primal", prepare, primal, out_primal, release};
const gb_function gb_det_gradient = {"det", "gradient", prepare, gradient, out_gradient, release};
