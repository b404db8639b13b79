/* lse.c - the eval "lse": log-sum-exp of a vector and its gradient, as one
   array node of the tape (dr_arr_logsumexp) */
#include <math.h>
#include <stdlib.h>

#include "evals.h"

typedef struct {
    size_t n;
    double *x, *grad, y;
    dr_tape *t;
} lse;

static void release(void *s)
{
    lse *l = s;
    if (!l)
        return;
    dr_tape_free(l->t);
    free(l->x);
    free(l->grad);
    free(l);
}

static void *prepare(const json_t *input, char *err)
{
    lse *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (!(l->x = gb_get_vector(input, "x", &l->n, err)))
        goto fail;
    if (l->n == 0 || l->n > INT32_MAX) {
        snprintf(err, GB_ERRLEN, "lse: \"x\" must hold 1 to 2^31-1 numbers");
        goto fail;
    }
    if (!(l->t = dr_tape_new()) || !(l->grad = malloc(l->n * sizeof *l->grad))) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    return l;
fail:
    release(l);
    return NULL;
}

static int primal(void *s, char *err)
{
    (void)err;
    lse *l = s;
    double m = l->x[0], sum = 0;
    for (size_t i = 1; i < l->n; i++)
        m = fmax(m, l->x[i]);
    for (size_t i = 0; i < l->n; i++)
        sum += exp(l->x[i] - m);
    l->y = log(sum) + m;
    return 0;
}

static int gradient(void *s, char *err)
{
    lse *l = s;
    dr_status st = dr_tape_clear(l->t);
    if (st != DR_OK)
        return gb_fail(err, "lse", st);
    dr_arr x = dr_arr_input(l->t, 1, (int64_t)l->n, 1, l->x);
    dr_real y = dr_arr_logsumexp(l->t, x);
    if ((st = dr_tape_status(l->t)) == DR_OK && (st = dr_seed(l->t, y.idx, 1.0)) == DR_OK &&
        (st = dr_reverse(l->t)) == DR_OK)
        st = dr_arr_adjoint(l->t, x.idx, l->grad);
    l->y = y.val;
    return st == DR_OK ? 0 : gb_fail(err, "lse", st);
}

static json_t *out_primal(void *s, char *err)
{
    return gb_json_number(((lse *)s)->y, err);
}

static json_t *out_gradient(void *s, char *err)
{
    lse *l = s;
    return gb_json_vector(l->grad, l->n, err);
}

const gb_function gb_lse_primal = {"lse", "primal", prepare, primal, out_primal, release};
const gb_function gb_lse_gradient = {"lse", "gradient", prepare, gradient, out_gradient, release};
