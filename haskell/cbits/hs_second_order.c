/*
 * Entry points of the C engine for the Haskell front end that Haskell's FFI
 * cannot call directly (a dr_real passed by value), and the same for the
 * forward-mode and second-order calls.
 *
 * The engine's forward-mode and second-order functions are referenced
 * weakly: a library built without them still links, and these entry points
 * then answer DRHS_MISSING (drhs_have says which are present), which the
 * Haskell side reports as a DualRevError naming the missing function.
 */
#include "dualrev.h"

#define DRHS_MISSING (-1)

#pragma weak dr_jvp
#pragma weak dr_tape_set_order
#pragma weak dr_hvp
#pragma weak dr_hessian

/* 1 if the engine has forward mode (what = 1) or second order (what = 2) */
int drhs_have(int what)
{
    if (what == 1)
        return dr_jvp != 0;
    if (what == 2)
        return dr_tape_set_order != 0 && dr_hvp != 0 && dr_hessian != 0;
    return 0;
}

int drhs_jvp(dr_tape *t, size_t m, const dr_real *y, size_t n,
             const dr_real *x, const double *xdot, double *ydot)
{
    if (!dr_jvp)
        return DRHS_MISSING;
    return (int)dr_jvp(t, m, y, n, x, xdot, ydot);
}

int drhs_tape_set_order(dr_tape *t, int order)
{
    if (!dr_tape_set_order)
        return DRHS_MISSING;
    return (int)dr_tape_set_order(t, order);
}

int drhs_hvp(dr_tape *t, double yval, dr_idx yidx, size_t n,
             const dr_real *x, const double *v, double *out)
{
    if (!dr_hvp)
        return DRHS_MISSING;
    dr_real y = {yval, yidx};
    return (int)dr_hvp(t, y, n, x, v, out);
}

int drhs_hessian(dr_tape *t, double yval, dr_idx yidx, size_t n,
                 const dr_real *x, double *H)
{
    if (!dr_hessian)
        return DRHS_MISSING;
    dr_real y = {yval, yidx};
    return (int)dr_hessian(t, y, n, x, H);
}
