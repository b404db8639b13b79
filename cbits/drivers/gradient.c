/*
 * gradient.c - the gradient in one call, a sequence of what the sweep layer
 * offers (clear the adjoints, seed, sweep, read).  The Jacobian is
 * jacobian.c's, the products jvp.c's.
 *
 * dr_gradient of a small program in a loop (record, gradient, clear) is
 * mostly the calls' own overhead: a sequential tape without array nodes
 * takes one path that checks each id once and sweeps directly; any other
 * tape takes the Jacobian's general path (m == 1), with the same result.
 * dr_gradient_range takes the same path where it can (a taped gradient
 * from Haskell replays and reads its gradient so).
 */
#include "sweep/sweep.h"

#include <stdint.h>

dr_status dr_gradient_range(dr_tape *t, dr_real y, dr_idx first, size_t n,
                            double *g)
{
    if (!t || (n && !g))
        return DR_EINVAL;
    int64_t ry, r = 0;
    /* (the path of a small gradient, as dr_gradient's) */
    if (DR_LIKELY(dr__sweep_seq_ok(t) && dr__rel(t, y.idx, &ry) &&
                  (!n || dr__adj_range(t, first, n, &r))))
        return dr__sweep_seq_range(t, ry, r, n, g);
    dr_status st = dr__sweep_ready(t, 1, &y, 0, NULL);
    if (st != DR_OK)
        return st;
    if (n && !dr__adj_range(t, first, n, &r))
        return DR_EINVAL;
    st = dr__sweep_from(t, y.idx);
    if (st == DR_OK && n)
        dr__adj_read(t, r, n, g);
    return st;
}

dr_status dr_gradient(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                      double *g)
{
    if (DR_UNLIKELY(!t || (n && (!x || !g))))
        return DR_EINVAL;
    int64_t ry;
    if (DR_UNLIKELY(!dr__sweep_seq_ok(t) || !dr__rel(t, y.idx, &ry)))
        return dr_jacobian(t, 1, &y, n, x, g);
    return dr__sweep_seq(t, ry, n, x, g);
}
