/*
 * The engine's calls that take the scalar y by value (dr_hvp, dr_hessian,
 * dr_gradient_range), with y given as its value and id: Haskell's FFI
 * cannot pass a dr_real by value.
 */
#include "dualrev.h"

dr_status drhs_hvp(dr_tape *t, double yval, dr_idx yidx, size_t n,
                   const dr_real *x, const double *v, double *out)
{
    dr_real y = {yval, yidx};
    return dr_hvp(t, y, n, x, v, out);
}

dr_status drhs_hessian(dr_tape *t, double yval, dr_idx yidx, size_t n,
                       const dr_real *x, double *H)
{
    dr_real y = {yval, yidx};
    return dr_hessian(t, y, n, x, H);
}

dr_status drhs_gradient_range(dr_tape *t, double yval, dr_idx yidx,
                              dr_idx first, size_t n, double *g)
{
    dr_real y = {yval, yidx};
    return dr_gradient_range(t, y, first, n, g);
}
