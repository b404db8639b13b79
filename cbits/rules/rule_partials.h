/*
 * rule_partials.h - the partial derivatives of every scalar operation,
 * written once over an arithmetic that the includer chooses:
 *
 *   - plain doubles (scalar_rules.h): the partials every first-order
 *     recording, replay and array map computes, dr_rule_OP_d;
 *   - recorded operations (recorded/tangent.c): the same formulas as nodes
 *     on the tape, dr_tangent_OP_d, so that a tangent's partials can be
 *     differentiated in turn (second order, nested derivatives).
 *
 * The two cannot disagree: one formula, two evaluations.  Where a rule is
 * piecewise (abs, relu, min, max, the zero cases of pow and hypot, the
 * scaled atan2) the piece is chosen by values (RV), as the first-order rule
 * chose it, and a piecewise-constant partial is a constant (K).
 *
 * No include guard: included once per arithmetic.  The includer defines
 *   RT            the number type (double, dr_real)
 *   RD2           a pair of RT, with fields a and b (dr_rule_d2, ...)
 *   RULE_FN(op)   the name of op's partials function
 *   RULE_TAPE     the leading parameters ("dr_tape *t," or nothing)
 *   RULE_BEGIN    a statement opening every function (marks t used)
 *   K(c)          the constant c; RV(r) the double value of r
 *   KZERO(r)      whether r is the constant 0 (not merely equal to it)
 *   ADD SUB MUL DIV NEG, SQRT EXP LOG SIN COS SINH COSH HYPOT POW SIGMOID
 *   POWI(r, m)    r to the integral power m (a double)
 * and undefines them afterwards (RULE_ARITH_DONE below does).
 */
#ifndef RULE_FN
#error "rule_partials.h: define the arithmetic first (see its header)"
#endif

#define RULE1(op, body)                                                      \
    static inline RT RULE_FN(op)(RULE_TAPE RT x, RT v)                       \
    {                                                                        \
        RULE_BEGIN;                                                          \
        (void)x;                                                             \
        (void)v;                                                             \
        body                                                                 \
    }
#define RULE2(op, body)                                                      \
    static inline RD2 RULE_FN(op)(RULE_TAPE RT a, RT b, RT v)                \
    {                                                                        \
        RULE_BEGIN;                                                          \
        (void)a;                                                             \
        (void)b;                                                             \
        (void)v;                                                             \
        RD2 d;                                                               \
        body                                                                 \
        return d;                                                            \
    }

/* ------------------------------------------------------------ one argument */

RULE1(neg, return K(-1.0);)
RULE1(sqrt, return DIV(K(0.5), v);)
RULE1(cbrt, return DIV(K(1.0), MUL(MUL(K(3.0), v), v));)
RULE1(exp, return v;)
/* not v + 1, which loses the digits expm1 keeps for small x */
RULE1(expm1, return EXP(x);)
RULE1(log, return DIV(K(1.0), x);)
RULE1(log1p, return DIV(K(1.0), ADD(K(1.0), x));)
RULE1(sin, return COS(x);)
RULE1(cos, return NEG(SIN(x));)
RULE1(tan, return ADD(K(1.0), MUL(v, v));)
/* (1 - x)(1 + x), not 1 - x*x: exact near |x| = 1 */
RULE1(asin, return DIV(K(1.0), SQRT(MUL(SUB(K(1.0), x), ADD(K(1.0), x))));)
RULE1(acos, return DIV(K(-1.0), SQRT(MUL(SUB(K(1.0), x), ADD(K(1.0), x))));)
RULE1(atan, return DIV(K(1.0), ADD(K(1.0), MUL(x, x)));)
RULE1(sinh, return COSH(x);)
RULE1(cosh, return SINH(x);)
/* 1 / cosh^2, not 1 - tanh^2, which cancels to 0 for |x| > 19 */
RULE1(tanh, RT c = COSH(x); return DIV(DIV(K(1.0), c), c);)
/* hypot, not sqrt(x*x + 1), which overflows for |x| > 1e154 */
RULE1(asinh, return DIV(K(1.0), HYPOT(x, K(1.0)));)
/* two roots, not sqrt(x*x - 1): exact near x = 1 (x - 1 is), and no
   overflow for large x */
RULE1(acosh,
      return DIV(K(1.0), MUL(SQRT(SUB(x, K(1.0))), SQRT(ADD(x, K(1.0)))));)
RULE1(atanh, return DIV(K(1.0), MUL(SUB(K(1.0), x), ADD(K(1.0), x)));)
RULE1(abs, return K((double)((RV(x) > 0.0) - (RV(x) < 0.0)));)
RULE1(erf, return MUL(K(1.1283791670955126), /* 2 / sqrt(pi) */
                      EXP(NEG(MUL(x, x))));)
RULE1(relu, return K(RV(x) > 0.0 ? 1.0 : 0.0);)
/* of e = exp(-|x|) <= 1: e / (1 + e)^2 does not cancel the way s (1 - s)
   does for large |x| (the fused first-order op shares e with the value) */
RULE1(_sigmoid_d_of, return DIV(x, MUL(ADD(K(1.0), x), ADD(K(1.0), x)));)
RULE1(sigmoid, return RULE_FN(_sigmoid_d_of)(RULE_ARGS EXP(NEG(ABS(x))), v);)
RULE1(softplus, return SIGMOID(x);)

/* x^n for an integer n (a double, a constant in both arithmetics): n
   x^(n-1); n == 0 is the constant 1 (avoids 0 * inf at x == 0) */
static inline RT RULE_FN(powi)(RULE_TAPE RT x, double n, RT v)
{
    RULE_BEGIN;
    (void)v;
    return n == 0.0 ? K(0.0) : MUL(K(n), POWI(x, n - 1.0));
}

/* ----------------------------------------------------------- two arguments */

RULE2(add, d.a = K(1.0); d.b = K(1.0);)
RULE2(sub, d.a = K(1.0); d.b = K(-1.0);)
RULE2(mul, d.a = b; d.b = a;)
RULE2(div, d.a = DIV(K(1.0), b); d.b = NEG(DIV(v, b));)
/* atan2(y, x) = atan2(a, b): x / h and -y / h with h = x^2 + y^2, scaled
   by the hypotenuse where h under- or overflows */
RULE2(atan2, {
    RT h = ADD(MUL(b, b), MUL(a, a));
    if (RULE_LIKELY(RV(h) >= 0x1p-1022 && RV(h) <= 0x1.fffffffffffffp1023)) {
        d.a = DIV(b, h);
        d.b = NEG(DIV(a, h));
    } else {
        RT r = HYPOT(b, a);
        d.a = DIV(DIV(b, r), r);
        d.b = NEG(DIV(DIV(a, r), r));
    }
})
/* b a^(b-1) (0 where b is the constant 0), and a^b log a, taken as 0 where
   a^b == 0 (so pow(0, b) with b > 0 has a finite derivative in b) */
RULE2(pow, d.a = KZERO(b) ? K(0.0) : MUL(b, POW(a, SUB(b, K(1.0))));
      d.b = RV(v) == 0.0 ? K(0.0) : MUL(v, LOG(a));)
/* fmin/fmax semantics (dr_rule__min_picks_b), the partial 1 to the
   argument chosen; ties choose a */
RULE2(min, bool pick_b = dr_rule__min_picks_b(RV(a), RV(b));
      d.a = K(pick_b ? 0.0 : 1.0); d.b = K(pick_b ? 1.0 : 0.0);)
RULE2(max, bool pick_b = dr_rule__max_picks_b(RV(a), RV(b));
      d.a = K(pick_b ? 0.0 : 1.0); d.b = K(pick_b ? 1.0 : 0.0);)
RULE2(hypot, if (RV(v) == 0.0) {
    d.a = K(0.0);
    d.b = K(0.0);
} else {
    d.a = DIV(a, v);
    d.b = DIV(b, v);
})
/* logbase(b, x): -v / (b ln b), 1 / (x ln b) */
RULE2(logbase, RT lb = LOG(a); d.a = NEG(DIV(v, MUL(a, lb)));
      d.b = DIV(K(1.0), MUL(b, lb));)

#undef RULE1
#undef RULE2
#undef RT
#undef RD2
#undef RULE_FN
#undef RULE_TAPE
#undef RULE_ARGS
#undef RULE_BEGIN
#undef RULE_LIKELY
#undef K
#undef RV
#undef KZERO
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef NEG
#undef ABS
#undef SQRT
#undef EXP
#undef LOG
#undef SIN
#undef COS
#undef SINH
#undef COSH
#undef HYPOT
#undef POW
#undef POWI
#undef SIGMOID
