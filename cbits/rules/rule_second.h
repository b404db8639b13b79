/*
 * rule_second.h - the second partial derivatives of every scalar
 * operation, from the same formulas as the first (rule_partials.h)
 * expanded over a third arithmetic: numbers that carry, beside their value,
 * their derivatives with respect to the operation's two arguments.  A
 * partial computed in that arithmetic comes out with its own partials, the
 * operation's second derivatives, so no second-derivative formula is
 * written anywhere and none can disagree with the first: the numeric
 * Hessian-vector product (sweep/hvp.c) is built on these.
 *
 *   dr_rule_so1(op, x, v)     of a one-argument op: d = f'(x), dd = f''(x)
 *   dr_rule_so2(op, a, b, v)  of a two-argument op: pa, pb and the
 *                             symmetric second partials haa, hab, hbb
 *
 * v is the operation's value, as the first-order rules take it.  A
 * partial's derivative is computed where its argument's tangent is not
 * zero only, as the recorded tangents (recorded/tangent.c) skip a term whose
 * tangent is a known zero: a partial that is infinite in the direction
 * not taken (log at 0, pow's log a for a < 0) does not turn into NaN.
 */
#ifndef DR_RULE_SECOND_H
#define DR_RULE_SECOND_H

#include "rules/scalar_rules.h"

/* a value and its derivatives along the two arguments */
typedef struct dr_dual2 {
    double v, a, b;
} dr_dual2;

typedef struct dr_dual2_d2 {
    dr_dual2 a, b;
} dr_dual2_d2;

static inline dr_dual2 dr__du_k(double c)
{
    dr_dual2 r = {c, 0.0, 0.0};
    return r;
}
/* f(u) from f's value fv and derivative fd at u.v: the chain rule, a zero
   direction kept zero */
static inline dr_dual2 dr__du_chain(double fv, double fd, dr_dual2 u)
{
    dr_dual2 r = {fv, u.a == 0.0 ? 0.0 : fd * u.a, u.b == 0.0 ? 0.0 : fd * u.b};
    return r;
}
/* f(u, w) from f's value and its partials along u and w */
static inline double dr__du_lin(double pu, double du, double pw, double dw)
{
    return (du == 0.0 ? 0.0 : pu * du) + (dw == 0.0 ? 0.0 : pw * dw);
}
static inline dr_dual2 dr__du_chain2(double fv, dr_rule_d2 p, dr_dual2 u,
                                     dr_dual2 w)
{
    dr_dual2 r = {fv, dr__du_lin(p.a, u.a, p.b, w.a),
                  dr__du_lin(p.a, u.b, p.b, w.b)};
    return r;
}
static inline dr_dual2 dr__du_add(dr_dual2 x, dr_dual2 y)
{
    dr_dual2 r = {x.v + y.v, x.a + y.a, x.b + y.b};
    return r;
}
static inline dr_dual2 dr__du_sub(dr_dual2 x, dr_dual2 y)
{
    dr_dual2 r = {x.v - y.v, x.a - y.a, x.b - y.b};
    return r;
}
static inline dr_dual2 dr__du_neg(dr_dual2 x)
{
    dr_dual2 r = {-x.v, -x.a, -x.b};
    return r;
}
static inline dr_dual2 dr__du_mul(dr_dual2 x, dr_dual2 y)
{
    dr_dual2 r = {x.v * y.v, dr__du_lin(y.v, x.a, x.v, y.a),
                  dr__du_lin(y.v, x.b, x.v, y.b)};
    return r;
}
static inline dr_dual2 dr__du_div(dr_dual2 x, dr_dual2 y)
{
    double q = x.v / y.v;
    return dr__du_chain2(q, dr_rule_div_d(x.v, y.v, q), x, y);
}
/* the functions, each by its own first-order rule */
#define DR__DU_UNARY(name, op)                                               \
    static inline dr_dual2 dr__du_##name(dr_dual2 u)                         \
    {                                                                        \
        double fv = dr_rule_##op(u.v);                                       \
        return dr__du_chain(fv, dr_rule_##op##_d(u.v, fv), u);               \
    }
DR__DU_UNARY(abs, abs)
DR__DU_UNARY(sqrt, sqrt)
DR__DU_UNARY(exp, exp)
DR__DU_UNARY(log, log)
DR__DU_UNARY(sin, sin)
DR__DU_UNARY(cos, cos)
DR__DU_UNARY(sinh, sinh)
DR__DU_UNARY(cosh, cosh)
DR__DU_UNARY(sigmoid, sigmoid)
#undef DR__DU_UNARY
static inline dr_dual2 dr__du_hypot(dr_dual2 x, dr_dual2 y)
{
    double h = dr_rule_hypot(x.v, y.v);
    return dr__du_chain2(h, dr_rule_hypot_d(x.v, y.v, h), x, y);
}
static inline dr_dual2 dr__du_pow(dr_dual2 x, dr_dual2 y)
{
    double p = dr_rule_pow(x.v, y.v);
    return dr__du_chain2(p, dr_rule_pow_d(x.v, y.v, p), x, y);
}
static inline dr_dual2 dr__du_powi(dr_dual2 x, double m)
{
    double p = dr_rule_powi(x.v, m);
    return dr__du_chain(p, dr_rule_powi_d(x.v, m, p), x);
}

#define RT dr_dual2
#define RD2 dr_dual2_d2
#define RULE_FN(op) dr_rule_so_##op##_d
#define RULE_TAPE
#define RULE_ARGS
#define RULE_BEGIN ((void)0)
#define RULE_LIKELY(c) __builtin_expect(!!(c), 1)
#define K(c) dr__du_k(c)
#define RV(r) ((r).v)
#define KZERO(r) ((r).v == 0.0 && (r).a == 0.0 && (r).b == 0.0)
#define ADD(x, y) dr__du_add(x, y)
#define SUB(x, y) dr__du_sub(x, y)
#define MUL(x, y) dr__du_mul(x, y)
#define DIV(x, y) dr__du_div(x, y)
#define NEG(x) dr__du_neg(x)
#define ABS(x) dr__du_abs(x)
#define SQRT(x) dr__du_sqrt(x)
#define EXP(x) dr__du_exp(x)
#define LOG(x) dr__du_log(x)
#define SIN(x) dr__du_sin(x)
#define COS(x) dr__du_cos(x)
#define SINH(x) dr__du_sinh(x)
#define COSH(x) dr__du_cosh(x)
#define HYPOT(x, y) dr__du_hypot(x, y)
#define POW(x, y) dr__du_pow(x, y)
#define POWI(x, m) dr__du_powi(x, m)
#define SIGMOID(x) dr__du_sigmoid(x)
#include "rules/rule_partials.h"

/* the first and second derivatives of a one-argument operation */
typedef struct dr_rule_so1_t {
    double d, dd;
} dr_rule_so1_t;

/* the partials and second partials of a two-argument operation */
typedef struct dr_rule_so2_t {
    double pa, pb, haa, hab, hbb;
} dr_rule_so2_t;

/* one argument x (value v, first derivative d): the rule in the
   arithmetic of one direction, x's own */
#define dr_rule_so1(op, xa, xv, d)                                           \
    dr__rule_so1_of(dr_rule_so_##op##_d((dr_dual2){(xa), 1.0, 0.0},         \
                                        (dr_dual2){(xv), (d), 0.0}))
static inline dr_rule_so1_t dr__rule_so1_of(dr_dual2 p)
{
    dr_rule_so1_t r = {p.v, p.a};
    return r;
}
/* two arguments a, b (value v, first partials p): both directions at once;
   the two mixed partials agree analytically, and the first one found (the
   derivative of the a-partial along b) is kept */
#define dr_rule_so2(op, xa, xb, xv, pd)                                      \
    dr__rule_so2_of(dr_rule_so_##op##_d((dr_dual2){(xa), 1.0, 0.0},         \
                                        (dr_dual2){(xb), 0.0, 1.0},         \
                                        (dr_dual2){(xv), (pd).a, (pd).b}))
static inline dr_rule_so2_t dr__rule_so2_of(dr_dual2_d2 d)
{
    dr_rule_so2_t r = {d.a.v, d.b.v, d.a.a, d.a.b, d.b.b};
    return r;
}

#endif /* DR_RULE_SECOND_H */
