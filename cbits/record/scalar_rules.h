/*
 * scalar_rules.h - the value and the partial derivatives of every scalar
 * operation, written once.  scalar_ops.c records them for the C API
 * (dr_sin, ...), frontend.c for front ends that pass plain doubles
 * (dr_fe_sin, ...), so the two can never disagree.  The special points
 * (ties, zero, NaN) are documented in include/dualrev.h.
 *
 * An operation OP of one argument has
 *     double dr_rule_OP(double x)              its value
 *     double dr_rule_OP_d(double x, double v)  its derivative, v its value
 * and one of two arguments
 *     double dr_rule_OP(double a, double b)
 *     dr_rule_d2 dr_rule_OP_d(double a, double b, double v)
 * The partials take the value so that the rules built on it (exp, tan,
 * sqrt, div, pow, ...) do not compute it again.
 *
 * The lists below name every operation once; the C entry points of each
 * are generated from them.  DR_RULES_UNARY_FUSED lists the operations whose
 * value and derivative share an intermediate that the C op computes once
 * (dr_rule_OP_vd); their dr_rule_OP_d computes it again.
 */
#ifndef DR_SCALAR_RULES_H
#define DR_SCALAR_RULES_H

#include <math.h>
#include <stdbool.h>

#define DR_RULES_UNARY(X)                                                    \
    X(neg) X(sqrt) X(cbrt) X(exp) X(expm1) X(log) X(log1p) X(sin) X(cos)     \
    X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh)          \
    X(acosh) X(atanh) X(abs) X(erf) X(relu) X(softplus)
#define DR_RULES_UNARY_FUSED(X) X(sigmoid)
#define DR_RULES_BINARY(X)                                                   \
    X(add) X(sub) X(mul) X(div) X(atan2) X(pow) X(min) X(max) X(hypot)       \
    X(logbase)

/* the partials of a two-argument operation, in argument order */
typedef struct dr_rule_d2 {
    double a, b;
} dr_rule_d2;

static inline dr_rule_d2 dr_rule__d2(double a, double b)
{
    dr_rule_d2 d = {a, b};
    return d;
}

/* ------------------------------------------------------------ one argument */

static inline double dr_rule_neg(double x) { return -x; }
static inline double dr_rule_neg_d(double x, double v)
{
    (void)x;
    (void)v;
    return -1.0;
}

static inline double dr_rule_sqrt(double x) { return sqrt(x); }
static inline double dr_rule_sqrt_d(double x, double v)
{
    (void)x;
    return 0.5 / v;
}

static inline double dr_rule_cbrt(double x) { return cbrt(x); }
static inline double dr_rule_cbrt_d(double x, double v)
{
    (void)x;
    return 1.0 / (3.0 * v * v);
}

static inline double dr_rule_exp(double x) { return exp(x); }
static inline double dr_rule_exp_d(double x, double v)
{
    (void)x;
    return v;
}

static inline double dr_rule_expm1(double x) { return expm1(x); }
static inline double dr_rule_expm1_d(double x, double v)
{
    /* not v + 1, which loses the digits expm1 keeps for small x */
    (void)v;
    return exp(x);
}

static inline double dr_rule_log(double x) { return log(x); }
static inline double dr_rule_log_d(double x, double v)
{
    (void)v;
    return 1.0 / x;
}

static inline double dr_rule_log1p(double x) { return log1p(x); }
static inline double dr_rule_log1p_d(double x, double v)
{
    (void)v;
    return 1.0 / (1.0 + x);
}

static inline double dr_rule_sin(double x) { return sin(x); }
static inline double dr_rule_sin_d(double x, double v)
{
    (void)v;
    return cos(x);
}

static inline double dr_rule_cos(double x) { return cos(x); }
static inline double dr_rule_cos_d(double x, double v)
{
    (void)v;
    return -sin(x);
}

static inline double dr_rule_tan(double x) { return tan(x); }
static inline double dr_rule_tan_d(double x, double v)
{
    (void)x;
    return 1.0 + v * v;
}

static inline double dr_rule_asin(double x) { return asin(x); }
static inline double dr_rule_asin_d(double x, double v)
{
    /* (1 - x)(1 + x), not 1 - x*x: exact near |x| = 1 */
    (void)v;
    return 1.0 / sqrt((1.0 - x) * (1.0 + x));
}

static inline double dr_rule_acos(double x) { return acos(x); }
static inline double dr_rule_acos_d(double x, double v)
{
    (void)v;
    return -1.0 / sqrt((1.0 - x) * (1.0 + x));
}

static inline double dr_rule_atan(double x) { return atan(x); }
static inline double dr_rule_atan_d(double x, double v)
{
    (void)v;
    return 1.0 / (1.0 + x * x);
}

static inline double dr_rule_sinh(double x) { return sinh(x); }
static inline double dr_rule_sinh_d(double x, double v)
{
    (void)v;
    return cosh(x);
}

static inline double dr_rule_cosh(double x) { return cosh(x); }
static inline double dr_rule_cosh_d(double x, double v)
{
    (void)v;
    return sinh(x);
}

static inline double dr_rule_tanh(double x) { return tanh(x); }
static inline double dr_rule_tanh_d(double x, double v)
{
    /* 1 / cosh^2, not 1 - tanh^2, which cancels to 0 for |x| > 19 */
    (void)v;
    double c = cosh(x);
    return 1.0 / c / c;
}

static inline double dr_rule_asinh(double x) { return asinh(x); }
static inline double dr_rule_asinh_d(double x, double v)
{
    /* hypot, not sqrt(x*x + 1), which overflows for |x| > 1e154 */
    (void)v;
    return 1.0 / hypot(x, 1.0);
}

static inline double dr_rule_acosh(double x) { return acosh(x); }
static inline double dr_rule_acosh_d(double x, double v)
{
    /* two roots, not sqrt(x*x - 1): exact near x = 1 (x - 1 is), and no
       overflow for large x */
    (void)v;
    return 1.0 / (sqrt(x - 1.0) * sqrt(x + 1.0));
}

static inline double dr_rule_atanh(double x) { return atanh(x); }
static inline double dr_rule_atanh_d(double x, double v)
{
    /* (1 - x)(1 + x), not 1 - x*x: exact near |x| = 1 */
    (void)v;
    return 1.0 / ((1.0 - x) * (1.0 + x));
}

static inline double dr_rule_abs(double x) { return fabs(x); }
static inline double dr_rule_abs_d(double x, double v)
{
    (void)v;
    return (double)((x > 0.0) - (x < 0.0));
}

static inline double dr_rule_erf(double x) { return erf(x); }
static inline double dr_rule_erf_d(double x, double v)
{
    const double two_over_sqrt_pi = 1.1283791670955126;
    (void)v;
    return two_over_sqrt_pi * exp(-x * x);
}

static inline double dr_rule_relu(double x)
{
    return x > 0.0 || isnan(x) ? x : 0.0;
}
static inline double dr_rule_relu_d(double x, double v)
{
    (void)v;
    return x > 0.0 ? 1.0 : 0.0;
}

/* e = exp(-|x|) <= 1: no overflow, and the derivative e / (1 + e)^2 does
   not cancel the way s (1 - s) does for large |x| */
static inline double dr_rule__sigmoid_e(double x) { return exp(-fabs(x)); }
static inline double dr_rule__sigmoid_of(double x, double e)
{
    return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
static inline double dr_rule__sigmoid_d_of(double e)
{
    return e / ((1.0 + e) * (1.0 + e));
}
static inline double dr_rule_sigmoid(double x)
{
    return dr_rule__sigmoid_of(x, dr_rule__sigmoid_e(x));
}
static inline double dr_rule_sigmoid_d(double x, double v)
{
    (void)v;
    return dr_rule__sigmoid_d_of(dr_rule__sigmoid_e(x));
}
static inline double dr_rule_sigmoid_vd(double x, double *d)
{
    double e = dr_rule__sigmoid_e(x);
    *d = dr_rule__sigmoid_d_of(e);
    return dr_rule__sigmoid_of(x, e);
}

/* log1p(exp x) as max(x, 0) + log1p(exp(-|x|)): exp x overflows for
   x > 709 where the value is x; the derivative is the sigmoid */
static inline double dr_rule_softplus(double x)
{
    return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}
static inline double dr_rule_softplus_d(double x, double v)
{
    (void)v;
    return dr_rule_sigmoid(x);
}

/* x^n for an integer n (carried as a double): the a-partial of pow */
static inline double dr_rule_powi(double x, double n) { return pow(x, n); }
static inline double dr_rule_powi_d(double x, double n, double v)
{
    /* n == 0: the function is the constant 1 (avoids 0 * inf at x == 0) */
    (void)v;
    return n == 0.0 ? 0.0 : n * pow(x, n - 1.0);
}

/* ----------------------------------------------------------- two arguments */

static inline double dr_rule_add(double a, double b) { return a + b; }
static inline dr_rule_d2 dr_rule_add_d(double a, double b, double v)
{
    (void)a;
    (void)b;
    (void)v;
    return dr_rule__d2(1.0, 1.0);
}

static inline double dr_rule_sub(double a, double b) { return a - b; }
static inline dr_rule_d2 dr_rule_sub_d(double a, double b, double v)
{
    (void)a;
    (void)b;
    (void)v;
    return dr_rule__d2(1.0, -1.0);
}

static inline double dr_rule_mul(double a, double b) { return a * b; }
static inline dr_rule_d2 dr_rule_mul_d(double a, double b, double v)
{
    (void)v;
    return dr_rule__d2(b, a);
}

static inline double dr_rule_div(double a, double b) { return a / b; }
static inline dr_rule_d2 dr_rule_div_d(double a, double b, double v)
{
    (void)a;
    return dr_rule__d2(1.0 / b, -v / b);
}

/* atan2(y, x), the angle of the point (x, y) */
static inline double dr_rule_atan2(double y, double x) { return atan2(y, x); }
static inline dr_rule_d2 dr_rule_atan2_d(double y, double x, double v)
{
    (void)v;
    double h = x * x + y * y;
    if (__builtin_expect(h >= 0x1p-1022 && h <= 0x1.fffffffffffffp1023, 1))
        return dr_rule__d2(x / h, -y / h);
    /* x^2 + y^2 under- or overflows: scale by the hypotenuse */
    double r = hypot(x, y);
    return dr_rule__d2((x / r) / r, -(y / r) / r);
}

static inline double dr_rule_pow(double a, double b) { return pow(a, b); }
static inline dr_rule_d2 dr_rule_pow_d(double a, double b, double v)
{
    /* d/db = a^b log a, taken as 0 where a^b == 0 (so pow(0, b) with b > 0
       has a finite derivative in b) */
    return dr_rule__d2(dr_rule_powi_d(a, b, v), v == 0.0 ? 0.0 : v * log(a));
}

/* fmin/fmax semantics, derivative to the argument chosen; ties choose a */
static inline bool dr_rule__min_picks_b(double a, double b)
{
    return b < a || isnan(a);
}
static inline double dr_rule_min(double a, double b)
{
    return dr_rule__min_picks_b(a, b) ? b : a;
}
static inline dr_rule_d2 dr_rule_min_d(double a, double b, double v)
{
    (void)v;
    bool pick_b = dr_rule__min_picks_b(a, b);
    return dr_rule__d2(pick_b ? 0.0 : 1.0, pick_b ? 1.0 : 0.0);
}

static inline bool dr_rule__max_picks_b(double a, double b)
{
    return b > a || isnan(a);
}
static inline double dr_rule_max(double a, double b)
{
    return dr_rule__max_picks_b(a, b) ? b : a;
}
static inline dr_rule_d2 dr_rule_max_d(double a, double b, double v)
{
    (void)v;
    bool pick_b = dr_rule__max_picks_b(a, b);
    return dr_rule__d2(pick_b ? 0.0 : 1.0, pick_b ? 1.0 : 0.0);
}

static inline double dr_rule_hypot(double a, double b) { return hypot(a, b); }
static inline dr_rule_d2 dr_rule_hypot_d(double a, double b, double v)
{
    return v == 0.0 ? dr_rule__d2(0.0, 0.0) : dr_rule__d2(a / v, b / v);
}

/* the logarithm of x in base b: log x / log b */
static inline double dr_rule_logbase(double b, double x)
{
    return log(x) / log(b);
}
static inline dr_rule_d2 dr_rule_logbase_d(double b, double x, double v)
{
    double lb = log(b);
    return dr_rule__d2(-v / (b * lb), 1.0 / (x * lb));
}

#endif /* DR_SCALAR_RULES_H */
