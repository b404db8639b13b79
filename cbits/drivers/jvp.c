/*
 * jvp.c - Jacobian-vector and vector-Jacobian products in one call: one
 * forward sweep (J xdot) or one reverse sweep (J^T ybar), and k of them in
 * one k-wide sweep (vector mode, scratch storage: the tape's own tangents
 * and adjoints are untouched).  A k-wide reverse sweep that cannot run (a
 * node kind without a k-wide rule, a tape that forked) is k scalar sweeps;
 * a forward sweep over a node kind without a forward rule is DR_ENOTSUP.
 * The Gauss-Newton product J^T J v is one of each.
 */
#include "sweep/sweep.h"

#include <stdint.h>
#include <string.h>

dr_status dr_jvp(dr_tape *t, size_t m, const dr_real *y, size_t n,
                 const dr_real *x, const double *xdot, double *ydot)
{
    if (!t || (m && (!y || !ydot)) || (n && (!x || !xdot)))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st != DR_OK)
        return st;
    if (!dr__forward_ok(t))
        return DR_ENOTSUP; /* before the tangents are cleared */
    st = dr_tangents_clear(t);
    for (size_t i = 0; st == DR_OK && i < n; i++)
        st = dr_tangent_seed(t, x[i].idx, xdot[i]);
    if (st == DR_OK)
        st = dr_forward(t);
    for (size_t i = 0; st == DR_OK && i < m; i++)
        ydot[i] = dr_tangent(t, y[i].idx);
    return st;
}

dr_status dr_vjp(dr_tape *t, size_t m, const dr_real *y, const double *ybar,
                 size_t n, const dr_real *x, double *xbar)
{
    if (!t || (m && (!y || !ybar)) || (n && (!x || !xbar)))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st != DR_OK)
        return st;
    st = dr_adjoints_clear(t);
    for (size_t i = 0; st == DR_OK && i < m; i++)
        st = dr_seed(t, y[i].idx, ybar[i]);
    if (st == DR_OK)
        st = dr_reverse(t);
    for (size_t i = 0; st == DR_OK && i < n; i++)
        xbar[i] = dr_adjoint(t, x[i].idx);
    return st;
}

/* the checks of the vector calls: k * rows must not overflow */
static bool vec_args_ok(size_t rows, size_t k)
{
    return k == 0 || rows <= SIZE_MAX / k;
}

dr_status dr_jvp_vec(dr_tape *t, size_t m, const dr_real *y, size_t n,
                     const dr_real *x, size_t k, const double *Xdot,
                     double *Ydot)
{
    if (!t || (m && !y) || (n && !x) || (k && ((m && !Ydot) || (n && !Xdot)))
        || !vec_args_ok(m, k) || !vec_args_ok(n, k))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st != DR_OK || k == 0 || m == 0) /* nothing to write */
        return st;
    if (!dr__forward_ok(t))
        return DR_ENOTSUP;
    dr_pass_io in = {n, x, k, 1}, out = {m, y, k, 1};
    return dr__pass_k(t, true, k, in, Xdot, out, Ydot, true);
}

/* k products in one k-wide reverse sweep; DR_ENOTSUP or DR_ENOMEM: not
   done (the caller sweeps one direction at a time) */
static dr_status vjp_wide(dr_tape *t, size_t m, const dr_real *y, size_t k,
                          const double *Ybar, size_t n, const dr_real *x,
                          double *Xbar)
{
    if (t->hist || !dr__reverse_vec_ok(t))
        return DR_ENOTSUP;
    dr_pass_io in = {m, y, 1, m}, out = {n, x, 1, n};
    return dr__pass_k(t, false, k, in, Ybar, out, Xbar, false);
}

dr_status dr_vjp_vec(dr_tape *t, size_t m, const dr_real *y, size_t k,
                     const double *Ybar, size_t n, const dr_real *x,
                     double *Xbar)
{
    if (!t || (m && !y) || (n && !x) || (k && ((m && !Ybar) || (n && !Xbar)))
        || !vec_args_ok(m, k) || !vec_args_ok(n, k))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st != DR_OK || k == 0)
        return st;
    if (m == 0 || n == 0) { /* no sweep: J^T Ybar is zero or empty */
        for (size_t i = 0; i < n * k; i++)
            Xbar[i] = 0.0;
        return DR_OK;
    }
    st = vjp_wide(t, m, y, k, Ybar, n, x, Xbar);
    if (st != DR_ENOTSUP && st != DR_ENOMEM)
        return st;
    st = DR_OK;
    for (size_t j = 0; st == DR_OK && j < k; j++)
        st = dr_vjp(t, m, y, Ybar + j * m, n, x, Xbar + j * n);
    return st;
}

dr_status dr_gnvp(dr_tape *t, size_t m, const dr_real *y, size_t n,
                  const dr_real *x, const double *v, double *out)
{
    if (!t || (m && !y) || (n && (!x || !v || !out)))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st != DR_OK)
        return st;
    if (m > SIZE_MAX / sizeof(double) - 1)
        return DR_ENOMEM;
    double *jv = dr__malloc((m + 1) * sizeof *jv);
    if (!jv)
        return DR_ENOMEM;
    double *res = n ? dr__malloc(n * sizeof *res) : NULL;
    if (n && !res) {
        dr__free(jv);
        return DR_ENOMEM;
    }
    /* J v forward, then J^T (J v) in reverse; out written only when both
       succeed */
    st = dr_jvp(t, m, y, n, x, v, jv);
    if (st == DR_OK)
        st = dr_vjp(t, m, y, jv, n, x, res);
    if (st == DR_OK && n)
        dr__copy_doubles(out, res, n);
    dr__free(res);
    dr__free(jv);
    return st;
}
