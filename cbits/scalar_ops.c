/*
 * scalar_ops.c - the scalar primitives: value and partial derivatives of each
 * operation, recorded as one node.  The special points (ties, zero, NaN) are
 * documented in include/dualrev.h.
 */
#include "internal.h"

#include <math.h>

static inline dr_real mk(double v, dr_idx id)
{
    dr_real r = {v, id};
    return r;
}

static inline dr_real unary(dr_tape *t, dr_real a, double v, double d)
{
    if (a.idx == DR_NONE || DR_UNLIKELY(!t))
        return mk(v, DR_NONE);
    int64_t ra;
    if (DR_UNLIKELY(!dr__rel_arg(t, a.idx, &ra))) {
        dr__fail(t, DR_EINVAL);
        return mk(v, DR_NONE);
    }
    return mk(v, dr__push(t, ra, d, -1, 0.0));
}

static inline dr_real binary(dr_tape *t, dr_real a, dr_real b, double v,
                             double da, double db)
{
    if ((a.idx == DR_NONE && b.idx == DR_NONE) || DR_UNLIKELY(!t))
        return mk(v, DR_NONE);
    return mk(v, dr__rec2(t, a.idx, da, b.idx, db));
}

dr_real dr_add(dr_tape *t, dr_real a, dr_real b)
{
    return binary(t, a, b, a.val + b.val, 1.0, 1.0);
}

dr_real dr_sub(dr_tape *t, dr_real a, dr_real b)
{
    return binary(t, a, b, a.val - b.val, 1.0, -1.0);
}

dr_real dr_mul(dr_tape *t, dr_real a, dr_real b)
{
    return binary(t, a, b, a.val * b.val, b.val, a.val);
}

dr_real dr_div(dr_tape *t, dr_real a, dr_real b)
{
    double q = a.val / b.val;
    return binary(t, a, b, q, 1.0 / b.val, -q / b.val);
}

dr_real dr_neg(dr_tape *t, dr_real a)
{
    return unary(t, a, -a.val, -1.0);
}

dr_real dr_sqrt(dr_tape *t, dr_real a)
{
    double r = sqrt(a.val);
    return unary(t, a, r, 0.5 / r);
}

dr_real dr_cbrt(dr_tape *t, dr_real a)
{
    double r = cbrt(a.val);
    return unary(t, a, r, 1.0 / (3.0 * r * r));
}

dr_real dr_exp(dr_tape *t, dr_real a)
{
    double r = exp(a.val);
    return unary(t, a, r, r);
}

dr_real dr_expm1(dr_tape *t, dr_real a)
{
    return unary(t, a, expm1(a.val), exp(a.val));
}

dr_real dr_log(dr_tape *t, dr_real a)
{
    return unary(t, a, log(a.val), 1.0 / a.val);
}

dr_real dr_log1p(dr_tape *t, dr_real a)
{
    return unary(t, a, log1p(a.val), 1.0 / (1.0 + a.val));
}

dr_real dr_sin(dr_tape *t, dr_real a)
{
    return unary(t, a, sin(a.val), cos(a.val));
}

dr_real dr_cos(dr_tape *t, dr_real a)
{
    return unary(t, a, cos(a.val), -sin(a.val));
}

dr_real dr_tan(dr_tape *t, dr_real a)
{
    double r = tan(a.val);
    return unary(t, a, r, 1.0 + r * r);
}

dr_real dr_asin(dr_tape *t, dr_real a)
{
    /* (1 - a)(1 + a), not 1 - a*a: exact near |a| = 1 */
    return unary(t, a, asin(a.val), 1.0 / sqrt((1.0 - a.val) * (1.0 + a.val)));
}

dr_real dr_acos(dr_tape *t, dr_real a)
{
    return unary(t, a, acos(a.val), -1.0 / sqrt((1.0 - a.val) * (1.0 + a.val)));
}

dr_real dr_atan(dr_tape *t, dr_real a)
{
    return unary(t, a, atan(a.val), 1.0 / (1.0 + a.val * a.val));
}

dr_real dr_atan2(dr_tape *t, dr_real y, dr_real x)
{
    double h = x.val * x.val + y.val * y.val;
    double dy, dx;
    if (DR_LIKELY(h >= 0x1p-1022 && h <= 0x1.fffffffffffffp1023)) {
        dy = x.val / h;
        dx = -y.val / h;
    } else { /* x^2 + y^2 under- or overflows: scale by the hypotenuse */
        double r = hypot(x.val, y.val);
        dy = (x.val / r) / r;
        dx = -(y.val / r) / r;
    }
    return binary(t, y, x, atan2(y.val, x.val), dy, dx);
}

dr_real dr_sinh(dr_tape *t, dr_real a)
{
    return unary(t, a, sinh(a.val), cosh(a.val));
}

dr_real dr_cosh(dr_tape *t, dr_real a)
{
    return unary(t, a, cosh(a.val), sinh(a.val));
}

dr_real dr_tanh(dr_tape *t, dr_real a)
{
    /* 1 / cosh^2, not 1 - tanh^2, which cancels to 0 for |a| > 19 */
    double c = cosh(a.val);
    return unary(t, a, tanh(a.val), 1.0 / c / c);
}

dr_real dr_pow(dr_tape *t, dr_real a, dr_real b)
{
    double r = pow(a.val, b.val);
    /* b == 0: the function is constant 1 in a (avoids 0 * inf at a == 0) */
    double da = b.val == 0.0 ? 0.0 : b.val * pow(a.val, b.val - 1.0);
    double db = r == 0.0 ? 0.0 : r * log(a.val);
    return binary(t, a, b, r, da, db);
}

dr_real dr_powi(dr_tape *t, dr_real a, int n)
{
    double r = pow(a.val, (double)n);
    double d = n == 0 ? 0.0 : (double)n * pow(a.val, (double)n - 1.0);
    return unary(t, a, r, d);
}

dr_real dr_abs(dr_tape *t, dr_real a)
{
    double s = (double)((a.val > 0.0) - (a.val < 0.0));
    return unary(t, a, fabs(a.val), s);
}

/* fmin/fmax semantics, derivative to the argument chosen; ties choose a */
dr_real dr_min(dr_tape *t, dr_real a, dr_real b)
{
    bool pick_b = b.val < a.val || isnan(a.val);
    return binary(t, a, b, pick_b ? b.val : a.val, pick_b ? 0.0 : 1.0,
                  pick_b ? 1.0 : 0.0);
}

dr_real dr_max(dr_tape *t, dr_real a, dr_real b)
{
    bool pick_b = b.val > a.val || isnan(a.val);
    return binary(t, a, b, pick_b ? b.val : a.val, pick_b ? 0.0 : 1.0,
                  pick_b ? 1.0 : 0.0);
}

dr_real dr_hypot(dr_tape *t, dr_real a, dr_real b)
{
    double h = hypot(a.val, b.val);
    double da = h == 0.0 ? 0.0 : a.val / h, db = h == 0.0 ? 0.0 : b.val / h;
    return binary(t, a, b, h, da, db);
}

dr_real dr_erf(dr_tape *t, dr_real a)
{
    const double two_over_sqrt_pi = 1.1283791670955126;
    return unary(t, a, erf(a.val),
                 two_over_sqrt_pi * exp(-a.val * a.val));
}

dr_real dr_sigmoid(dr_tape *t, dr_real a)
{
    /* e = exp(-|a|) <= 1: no overflow, and the derivative e / (1 + e)^2
       does not cancel the way s (1 - s) does for large |a| */
    double e = exp(-fabs(a.val));
    double s = a.val >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    return unary(t, a, s, e / ((1.0 + e) * (1.0 + e)));
}

dr_real dr_relu(dr_tape *t, dr_real a)
{
    bool on = a.val > 0.0;
    return unary(t, a, on || isnan(a.val) ? a.val : 0.0, on ? 1.0 : 0.0);
}
