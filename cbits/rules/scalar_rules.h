/*
 * scalar_rules.h - the value and the partial derivatives of every scalar
 * operation, written once.  scalar_ops.c records them for the C API
 * (dr_sin, ...), frontend.c for front ends that pass plain doubles
 * (dr_fe_sin, ...), replay.c recomputes them at new inputs and the array
 * maps apply them elementwise, so none of these can disagree.  The special
 * points (ties, zero, NaN) are documented in include/dualrev.h.
 *
 * An operation OP of one argument has
 *     double dr_rule_OP(double x)              its value (here)
 *     double dr_rule_OP_d(double x, double v)  its derivative, v its value
 * and one of two arguments
 *     double dr_rule_OP(double a, double b)
 *     dr_rule_d2 dr_rule_OP_d(double a, double b, double v)
 * The partials take the value so that the rules built on it (exp, tan,
 * sqrt, div, pow, ...) do not compute it again.  They are written in
 * rule_partials.h over an arithmetic of the includer's, and expanded here
 * over doubles; tangent.c expands the same formulas over recorded
 * operations, for second order.
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

/* ------------------------------------------------------------ one argument */

static inline double dr_rule_neg(double x) { return -x; }
static inline double dr_rule_sqrt(double x) { return sqrt(x); }
static inline double dr_rule_cbrt(double x) { return cbrt(x); }
static inline double dr_rule_exp(double x) { return exp(x); }
static inline double dr_rule_expm1(double x) { return expm1(x); }
static inline double dr_rule_log(double x) { return log(x); }
static inline double dr_rule_log1p(double x) { return log1p(x); }
static inline double dr_rule_sin(double x) { return sin(x); }
static inline double dr_rule_cos(double x) { return cos(x); }
static inline double dr_rule_tan(double x) { return tan(x); }
static inline double dr_rule_asin(double x) { return asin(x); }
static inline double dr_rule_acos(double x) { return acos(x); }
static inline double dr_rule_atan(double x) { return atan(x); }
static inline double dr_rule_sinh(double x) { return sinh(x); }
static inline double dr_rule_cosh(double x) { return cosh(x); }
static inline double dr_rule_tanh(double x) { return tanh(x); }
static inline double dr_rule_asinh(double x) { return asinh(x); }
static inline double dr_rule_acosh(double x) { return acosh(x); }
static inline double dr_rule_atanh(double x) { return atanh(x); }
static inline double dr_rule_abs(double x) { return fabs(x); }
static inline double dr_rule_erf(double x) { return erf(x); }

static inline double dr_rule_relu(double x)
{
    return x > 0.0 || isnan(x) ? x : 0.0;
}

/* of e = exp(-|x|) <= 1: no overflow (its derivative, rule_partials.h,
   shares e: dr_rule_sigmoid_vd below) */
static inline double dr_rule__sigmoid_e(double x) { return exp(-fabs(x)); }
static inline double dr_rule__sigmoid_of(double x, double e)
{
    return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
static inline double dr_rule_sigmoid(double x)
{
    return dr_rule__sigmoid_of(x, dr_rule__sigmoid_e(x));
}

/* log1p(exp x) as max(x, 0) + log1p(exp(-|x|)): exp x overflows for
   x > 709 where the value is x; the derivative is the sigmoid */
static inline double dr_rule_softplus(double x)
{
    return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

/* x^n for an integer n (carried as a double): the a-partial of pow */
static inline double dr_rule_powi(double x, double n) { return pow(x, n); }

/* ----------------------------------------------------------- two arguments */

static inline double dr_rule_add(double a, double b) { return a + b; }

static inline double dr_rule_sub(double a, double b) { return a - b; }

static inline double dr_rule_mul(double a, double b) { return a * b; }

static inline double dr_rule_div(double a, double b) { return a / b; }

/* atan2(y, x), the angle of the point (x, y) */
static inline double dr_rule_atan2(double y, double x) { return atan2(y, x); }

static inline double dr_rule_pow(double a, double b) { return pow(a, b); }

/* fmin/fmax semantics, derivative to the argument chosen; ties choose a */
static inline bool dr_rule__min_picks_b(double a, double b)
{
    return b < a || isnan(a);
}
static inline double dr_rule_min(double a, double b)
{
    return dr_rule__min_picks_b(a, b) ? b : a;
}

static inline bool dr_rule__max_picks_b(double a, double b)
{
    return b > a || isnan(a);
}
static inline double dr_rule_max(double a, double b)
{
    return dr_rule__max_picks_b(a, b) ? b : a;
}

static inline double dr_rule_hypot(double a, double b) { return hypot(a, b); }

/* the logarithm of x in base b: log x / log b */
static inline double dr_rule_logbase(double b, double x)
{
    return log(x) / log(b);
}

/* ------------------------------------------------- the partials, in doubles */

/* the partials of a two-argument operation, in argument order */
typedef struct dr_rule_d2 {
    double a, b;
} dr_rule_d2;

#define RT double
#define RD2 dr_rule_d2
#define RULE_FN(op) dr_rule_##op##_d
#define RULE_TAPE
#define RULE_ARGS
#define RULE_BEGIN ((void)0)
#define RULE_LIKELY(c) __builtin_expect(!!(c), 1)
#define K(c) (c)
#define RV(r) (r)
#define KZERO(r) ((r) == 0.0)
#define ADD(a, b) ((a) + (b))
#define SUB(a, b) ((a) - (b))
#define MUL(a, b) ((a) * (b))
#define DIV(a, b) ((a) / (b))
#define NEG(a) (-(a))
#define ABS(a) fabs(a)
#define SQRT(a) sqrt(a)
#define EXP(a) exp(a)
#define LOG(a) log(a)
#define SIN(a) sin(a)
#define COS(a) cos(a)
#define SINH(a) sinh(a)
#define COSH(a) cosh(a)
#define HYPOT(a, b) hypot(a, b)
#define POW(a, b) pow(a, b)
#define POWI(a, m) pow(a, m)
#define SIGMOID(a) dr_rule_sigmoid(a)
#include "rules/rule_partials.h"

/* the sigmoid's value and derivative sharing exp(-|x|) */
static inline double dr_rule_sigmoid_vd(double x, double *d)
{
    double e = dr_rule__sigmoid_e(x);
    *d = dr_rule__sigmoid_d_of_d(e, 0.0);
    return dr_rule__sigmoid_of(x, e);
}

#endif /* DR_SCALAR_RULES_H */
