/*
 * gradient.c - the gradient in one call, a sequence of what the sweep layer
 * offers (clear the adjoints, seed, sweep, read).  The Jacobian is
 * jacobian.c's, the products jvp.c's.
 */
#include "sweep/sweep.h"

#include <stdint.h>

dr_status dr_gradient_range(dr_tape *t, dr_real y, dr_idx first, size_t n,
                            double *g)
{
    if (!t || (n && !g))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, 1, &y, 0, NULL);
    if (st != DR_OK)
        return st;
    int64_t r = 0;
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
    return dr_jacobian(t, 1, &y, n, x, g);
}
