/* llsq.c - the eval "llsq": a linear least-squares objective
   0.5 |s - T x|^2 with T[i][j] = t_i^j, t_i = -1 + 2i/(n-1), s_i = sign t_i,
   and its gradient, recorded as array operations (a BLAS matrix-vector
   product and a dot product) */
#include <stdlib.h>

#include "evals.h"

typedef struct {
    size_t n, m;
    double *x, *T, *s, *grad, y;
    dr_tape *t;
} llsq;

static double t_of(size_t i, size_t n)
{
    return -1.0 + (double)i * 2.0 / ((double)n - 1.0);
}

static double sign(double v)
{
    return (double)((0 < v) - (v < 0));
}

static void release(void *st)
{
    llsq *l = st;
    if (!l)
        return;
    dr_tape_free(l->t);
    free(l->x);
    free(l->T);
    free(l->s);
    free(l->grad);
    free(l);
}

static void *prepare(const json_t *input, char *err)
{
    llsq *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (gb_get_size(input, "n", &l->n, err) ||
        !(l->x = gb_get_vector(input, "x", &l->m, err)))
        goto fail;
    if (l->n < 2 || l->n > INT32_MAX || l->m == 0 || l->m > INT32_MAX ||
        l->n > (size_t)INT32_MAX / l->m) {
        snprintf(err, GB_ERRLEN, "llsq: need n >= 2, a non-empty x, n * |x| < 2^31");
        goto fail;
    }
    l->t = dr_tape_new();
    l->T = malloc(l->n * l->m * sizeof *l->T);
    l->s = malloc(l->n * sizeof *l->s);
    l->grad = malloc(l->m * sizeof *l->grad);
    if (!l->t || !l->T || !l->s || !l->grad) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    return l;
fail:
    release(l);
    return NULL;
}

static int primal(void *st, char *err)
{
    (void)err;
    llsq *l = st;
    double sum = 0;
    for (size_t i = 0; i < l->n; i++) {
        double ti = t_of(i, l->n), r = sign(ti), p = 1;
        for (size_t j = 0; j < l->m; j++) {
            r -= l->x[j] * p;
            p *= ti;
        }
        sum += r * r;
    }
    l->y = sum / 2;
    return 0;
}

static int gradient(void *st, char *err)
{
    llsq *l = st;
    size_t n = l->n, m = l->m;
    for (size_t i = 0; i < n; i++) {
        double ti = t_of(i, n), p = 1;
        l->s[i] = sign(ti);
        for (size_t j = 0; j < m; j++) {
            l->T[i * m + j] = p;
            p *= ti;
        }
    }
    dr_tape *t = l->t;
    dr_status rc = dr_tape_clear(t);
    if (rc != DR_OK)
        return gb_fail(err, "llsq", rc);
    dr_arr x = dr_arr_input(t, 1, (int64_t)m, 1, l->x);
    dr_arr T = dr_arr_const_ref(t, 2, (int64_t)n, (int64_t)m, l->T);
    dr_arr s = dr_arr_const_ref(t, 1, (int64_t)n, 1, l->s);
    dr_arr r = dr_arr_sub(t, s, dr_arr_matvec(t, T, x));
    dr_real y = dr_mul(t, dr_const(0.5), dr_arr_dot(t, r, r));
    if ((rc = dr_tape_status(t)) == DR_OK && (rc = dr_seed(t, y.idx, 1.0)) == DR_OK &&
        (rc = dr_reverse(t)) == DR_OK)
        rc = dr_arr_adjoint(t, x.idx, l->grad);
    l->y = y.val;
    return rc == DR_OK ? 0 : gb_fail(err, "llsq", rc);
}

static json_t *out_primal(void *st, char *err)
{
    return gb_json_number(((llsq *)st)->y, err);
}

static json_t *out_gradient(void *st, char *err)
{
    llsq *l = st;
    return gb_json_vector(l->grad, l->m, err);
}

const gb_function gb_llsq_primal = {"llsq", "primal", prepare, primal, out_primal, release};
const gb_function gb_llsq_gradient = {"llsq", "gradient", prepare, gradient, out_gradient, release};
