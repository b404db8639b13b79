/*
 * hessian.c - second derivatives of a recorded scalar: the Hessian times a
 * vector as the gradient of a directional derivative (reverse over a
 * tangent pass recorded on the tape, record/tangent.c), and the dense
 * Hessian as one such product per input.  The tangent pass is recorded
 * after the user's nodes and dropped again, so the tape is left as it was.
 */
#include "sweep/sweep.h"

#include <stdint.h>

static dr_status check(const dr_tape *t, dr_real y, size_t n, const dr_real *x)
{
    if (!t || (n && !x))
        return DR_EINVAL;
    /* not the tape's order: what was recorded at order 2 keeps its rules
       after dr_tape_set_order(t, 1); the tangent pass checks every node */
    return dr__sweep_ready(t, 1, &y, n, x);
}

/* H v for a checked call, with ids[i] = x[i].idx and scratch seeds[n] */
static dr_status hvp_once(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                          const double *v, double *out, dr_idx *ids,
                          dr_real *seeds)
{
    for (size_t i = 0; i < n; i++) {
        ids[i] = x[i].idx;
        seeds[i] = dr_const(v[i]);
    }
    dr_tape_pos pos;
    dr__tape_save(t, &pos);
    dr_real yd;
    /* the whole tape: every node recorded at order 2 from its first id;
       the tangent's own nodes are only swept once and dropped, so they
       are recorded at order 1 (not logged: a third of the time) */
    unsigned order = t->order;
    t->order = 1;
    dr_status st = dr_tangent_record(t, t->base, n, ids, seeds, y, &yd);
    t->order = order;
    if (st == DR_OK)
        st = dr_adjoints_clear(t);
    if (st == DR_OK)
        st = dr_seed(t, yd.idx, 1.0);
    if (st == DR_OK)
        st = dr_reverse(t);
    for (size_t i = 0; st == DR_OK && i < n; i++)
        st = dr_adjoint_get(t, x[i].idx, &out[i]);
    /* drop the tangent pass; a failure in it (out of memory) is not the
       user's nodes' and must not stay sticky */
    dr__tape_restore(t, &pos);
    if (t->adj_valid > t->next)
        t->adj_valid = t->next;
    t->status = DR_OK;
    return st;
}

static dr_status with_scratch(dr_tape *t, dr_real y, size_t n,
                              const dr_real *x, const double *v, double *out,
                              double *H)
{
    if (n > SIZE_MAX / (sizeof(dr_idx) + sizeof(dr_real) + sizeof(double)))
        return DR_ENOMEM;
    dr_idx *ids = dr__malloc(n * sizeof *ids + 1);
    dr_real *seeds = dr__malloc(n * sizeof *seeds + 1);
    double *e = H ? dr__malloc(n * sizeof *e + 1) : NULL;
    dr_status st = DR_OK;
    if (!ids || !seeds || (H && !e)) {
        st = DR_ENOMEM;
    } else if (!H) {
        st = hvp_once(t, y, n, x, v, out, ids, seeds);
    } else {
        for (size_t j = 0; j < n; j++)
            e[j] = 0.0;
        for (size_t i = 0; st == DR_OK && i < n; i++) {
            e[i] = 1.0;
            st = hvp_once(t, y, n, x, e, H + i * n, ids, seeds);
            e[i] = 0.0;
        }
    }
    dr__free(ids);
    dr__free(seeds);
    dr__free(e);
    return st;
}

dr_status dr_hvp(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                 const double *v, double *out)
{
    if (n && (!v || !out))
        return DR_EINVAL;
    dr_status st = check(t, y, n, x);
    /* no inputs: nothing to compute (as the Hessian of none) */
    return st != DR_OK || n == 0 ? st : with_scratch(t, y, n, x, v, out, NULL);
}

dr_status dr_hessian(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                     double *H)
{
    if (n && !H)
        return DR_EINVAL;
    if (n > SIZE_MAX / (n ? n : 1))
        return DR_EINVAL;
    dr_status st = check(t, y, n, x);
    return st != DR_OK || n == 0 ? st : with_scratch(t, y, n, x, NULL, NULL, H);
}
