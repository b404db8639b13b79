/*
 * gradient.c - the gradient in one call, a sequence of what the sweep layer
 * offers (clear the adjoints, seed, sweep, read).  The Jacobian is
 * jacobian.c's, the products jvp.c's.
 */
#include "sweep/sweep.h"

#include <stdint.h>

/* A gradient may be taken: a whole root handle with no sticky error. */
static dr_status gradient_ready(const dr_tape *t)
{
    dr_status st = dr__whole(t);
    return st != DR_OK ? st : t->status;
}

/* One gradient's sweep: clear the adjoints, seed y with 1, sweep. */
static dr_status sweep_from(dr_tape *t, dr_idx y)
{
    dr_status st = dr_adjoints_clear(t);
    if (st == DR_OK)
        st = dr_seed(t, y, 1.0);
    if (st == DR_OK)
        st = dr_reverse(t);
    return st;
}

dr_status dr_gradient_range(dr_tape *t, dr_real y, dr_idx first, size_t n,
                            double *g)
{
    if (!t || (n && !g))
        return DR_EINVAL;
    dr_status st = gradient_ready(t);
    if (st != DR_OK)
        return st;
    int64_t r = 0, ry;
    if ((n && !dr__adj_range(t, first, n, &r)) || !dr__rel(t, y.idx, &ry))
        return DR_EINVAL;
    st = sweep_from(t, y.idx);
    if (st == DR_OK && n)
        dr__adj_read(t, r, n, g);
    return st;
}

dr_status dr_gradient(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                      double *g)
{
    return dr_jacobian(t, 1, &y, n, x, g);
}
