/*
 * test_semantics.c - the semantics documented in dualrev.h's header comment:
 * derivatives at non-differentiable points (abs, relu at 0; min/max at ties
 * and with NaN), IEEE values (NaN, infinities) flowing without an error
 * status, zero-adjoint nodes being skipped (an unreached infinite or NaN
 * partial does not poison a gradient, a reached one does), pow's special
 * cases, and the conveniences' documented corner cases.
 */
#include "check.h"

#include <math.h>

/* d y / d x for a single-input program built by f. */
typedef dr_real (*prog1)(dr_tape *t, dr_real x);

static double grad1(prog1 f, double xv, double *val)
{
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, xv);
    dr_real y = f(t, x);
    double g = -12345.0;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    if (val)
        *val = y.val;
    dr_tape_free(t);
    return g;
}

/* Both partials of a two-input program. */
typedef dr_real (*prog2)(dr_tape *t, dr_real a, dr_real b);

static void grad2(prog2 f, double av, double bv, double *val, double *ga,
                  double *gb)
{
    dr_tape *t = chk_tape_new();
    dr_real x[2] = {dr_input(t, av), dr_input(t, bv)};
    dr_real y = f(t, x[0], x[1]);
    double g[2] = {-12345.0, -12345.0};
    CHK_STATUS(dr_gradient(t, y, 2, x, g), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    *val = y.val;
    *ga = g[0];
    *gb = g[1];
    dr_tape_free(t);
}

/* ------------------------------------------------ non-differentiable points */

static void test_abs_relu_at_zero(void **state)
{
    (void)state;
    double v;
    /* abs: sign(x), 0 at 0 (both zeros) */
    CHK_SAME(grad1(dr_abs, 0.0, &v), 0.0);
    CHK_SAME(v, 0.0);
    CHK_SAME(grad1(dr_abs, -0.0, &v), 0.0);
    CHK_SAME(v, 0.0); /* fabs(-0) = +0 */
    CHK_SAME(grad1(dr_abs, 0x1p-1074, &v), 1.0);
    CHK_SAME(grad1(dr_abs, -0x1p-1074, &v), -1.0);
    CHK_SAME(grad1(dr_abs, INFINITY, &v), 1.0);
    CHK_SAME(v, INFINITY);
    CHK_SAME(grad1(dr_abs, -INFINITY, &v), -1.0);
    CHK_SAME(v, INFINITY);
    /* relu: 1 for x > 0, else 0; 0 at 0 */
    CHK_SAME(grad1(dr_relu, 0.0, &v), 0.0);
    CHK_SAME(v, 0.0);
    CHK_SAME(grad1(dr_relu, -0.0, &v), 0.0);
    assert_true(v == 0.0);
    CHK_SAME(grad1(dr_relu, 0x1p-1074, &v), 1.0);
    CHK_SAME(v, 0x1p-1074);
    CHK_SAME(grad1(dr_relu, -0x1p-1074, &v), 0.0);
    CHK_SAME(v, 0.0);
    CHK_SAME(grad1(dr_relu, -INFINITY, &v), 0.0);
    CHK_SAME(v, 0.0);
    CHK_SAME(grad1(dr_relu, INFINITY, &v), 1.0);
    CHK_SAME(v, INFINITY);
    /* relu(NaN): the value is NaN (NaN flows through values), and NaN is not
       > 0, so the derivative is 0 */
    CHK_SAME(grad1(dr_relu, NAN, &v), 0.0);
    assert_true(isnan(v));
}

static void test_min_max_ties_and_nan(void **state)
{
    (void)state;
    double v, ga, gb;
    const double ties[] = {0.0, 1.5, -2.0, 1e300, -INFINITY, INFINITY};
    for (size_t i = 0; i < sizeof ties / sizeof ties[0]; i++) {
        chk_context("tie at %g", ties[i]);
        /* at a tie the whole derivative goes to the first argument */
        grad2(dr_min, ties[i], ties[i], &v, &ga, &gb);
        CHK_SAME(v, ties[i]);
        CHK_SAME(ga, 1.0);
        CHK_SAME(gb, 0.0);
        grad2(dr_max, ties[i], ties[i], &v, &ga, &gb);
        CHK_SAME(v, ties[i]);
        CHK_SAME(ga, 1.0);
        CHK_SAME(gb, 0.0);
    }
    chk_context("tie between +0 and -0");
    grad2(dr_min, 0.0, -0.0, &v, &ga, &gb);
    assert_true(v == 0.0);
    CHK_SAME(ga, 1.0);
    CHK_SAME(gb, 0.0);
    grad2(dr_max, -0.0, 0.0, &v, &ga, &gb);
    assert_true(v == 0.0);
    CHK_SAME(ga, 1.0);
    CHK_SAME(gb, 0.0);

    /* one NaN: the result is the other argument (fmin/fmax), and so is the
       derivative */
    chk_context("NaN first");
    grad2(dr_min, NAN, 2.0, &v, &ga, &gb);
    CHK_SAME(v, 2.0);
    CHK_SAME(v, fmin(NAN, 2.0));
    CHK_SAME(ga, 0.0);
    CHK_SAME(gb, 1.0);
    grad2(dr_max, NAN, -2.0, &v, &ga, &gb);
    CHK_SAME(v, -2.0);
    CHK_SAME(v, fmax(NAN, -2.0));
    CHK_SAME(ga, 0.0);
    CHK_SAME(gb, 1.0);
    chk_context("NaN second");
    grad2(dr_min, 3.0, NAN, &v, &ga, &gb);
    CHK_SAME(v, 3.0);
    CHK_SAME(ga, 1.0);
    CHK_SAME(gb, 0.0);
    grad2(dr_max, -3.0, NAN, &v, &ga, &gb);
    CHK_SAME(v, -3.0);
    CHK_SAME(ga, 1.0);
    CHK_SAME(gb, 0.0);
    chk_context("both NaN");
    grad2(dr_min, NAN, NAN, &v, &ga, &gb);
    assert_true(isnan(v));
    CHK_SAME(ga + gb, 1.0); /* one argument carries it, never both */
    grad2(dr_max, NAN, NAN, &v, &ga, &gb);
    assert_true(isnan(v));
    CHK_SAME(ga + gb, 1.0);
    /* with a constant NaN: the variable wins */
    chk_context("constant NaN");
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 4.0);
    dr_real m = dr_min(t, dr_const(NAN), x);
    CHK_SAME(m.val, 4.0);
    double g;
    CHK_STATUS(dr_gradient(t, m, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0);
    m = dr_max(t, x, dr_const(NAN));
    CHK_SAME(m.val, 4.0);
    CHK_STATUS(dr_gradient(t, m, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0);
    /* not a tie: the derivative goes to the chosen argument only */
    m = dr_min(t, x, dr_const(1.0));
    CHK_STATUS(dr_gradient(t, m, 1, &x, &g), DR_OK);
    CHK_SAME(g, 0.0);
    dr_tape_free(t);
    chk_context(NULL);
}

/* --------------------------------------------------- zero-adjoint skipping */

/* An infinite-partial node that the output does not use has adjoint 0 and
   contributes nothing. */
static void test_unreached_infinite_partial(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 2.0);
    dr_real z = dr_sub(t, x, x);         /* 0, a node                    */
    dr_real s = dr_sqrt(t, z);           /* partial 0.5 / 0 = inf        */
    dr_real l = dr_log(t, z);            /* partial 1 / 0 = inf          */
    dr_real q = dr_div(t, z, z);         /* NaN value, NaN partials      */
    dr_idx n = dr_record1(t, x.idx, NAN); /* a NaN partial, user-given   */
    dr_idx args[3] = {x.idx, z.idx, x.idx};
    double parts[3] = {INFINITY, NAN, -INFINITY};
    dr_idx w = dr_recordn(t, 3, args, parts); /* n-ary, non-finite        */
    CHK_SAME(s.val, 0.0);
    CHK_SAME(l.val, -INFINITY);
    assert_true(isnan(q.val));
    assert_true(n != DR_NONE && w != DR_NONE);
    dr_real y = dr_mul(t, x, dr_const(3.0));
    double g = NAN;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 3.0);
    CHK_SAME(dr_adjoint(t, s.idx), 0.0);
    CHK_SAME(dr_adjoint(t, z.idx), 0.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* Reached, but through a zero partial: the node's adjoint is 0 (or -0) and
   it is skipped, so 0 * inf never happens.  y = x * 1 + 0 * sqrt(x - x). */
static void test_zero_adjoint_skipped(void **state)
{
    (void)state;
    const double zeros[] = {0.0, -0.0};
    for (int i = 0; i < 2; i++) {
        dr_tape *t = chk_tape_new();
        dr_real x = dr_input(t, 2.0);
        dr_real s = dr_sqrt(t, dr_sub(t, x, x));
        dr_real w = dr_mul(t, dr_const(zeros[i]), s);
        dr_real y = dr_add(t, dr_mul(t, x, dr_const(1.0)), w);
        double g = NAN;
        CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
        CHK_SAME(g, 1.0);
        CHK_SAME(fabs(dr_adjoint(t, s.idx)), 0.0);
        /* the same through an n-ary node with a zero partial */
        dr_idx args[2] = {s.idx, x.idx};
        double p[3] = {zeros[i], 2.0};
        dr_idx a3[3] = {s.idx, x.idx, s.idx};
        double p3[3] = {zeros[i], 2.0, 0.0};
        dr_real n2 = {0.0, dr_recordn(t, 2, args, p)};
        dr_real n3 = {0.0, dr_recordn(t, 3, a3, p3)};
        CHK_STATUS(dr_gradient(t, n2, 1, &x, &g), DR_OK);
        CHK_SAME(g, 2.0);
        CHK_STATUS(dr_gradient(t, n3, 1, &x, &g), DR_OK);
        CHK_SAME(g, 2.0);
        /* a seed of zero on the poisoned node itself reaches nothing */
        CHK_STATUS(dr_adjoints_clear(t), DR_OK);
        CHK_STATUS(dr_seed(t, s.idx, zeros[i]), DR_OK);
        CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        CHK_SAME(dr_adjoint(t, x.idx), 1.0);
        dr_tape_free(t);
    }
}

/* Reached with a non-zero adjoint, an infinite or NaN partial gives the
   honest infinite or NaN adjoint, and a NaN adjoint is propagated. */
static void test_reached_nonfinite_partial(void **state)
{
    (void)state;
    double v;
    /* sqrt at 0: derivative +inf */
    CHK_SAME(grad1(dr_sqrt, 0.0, &v), INFINITY);
    CHK_SAME(v, 0.0);
    /* log at 0: value -inf, derivative +inf */
    CHK_SAME(grad1(dr_log, 0.0, &v), INFINITY);
    CHK_SAME(v, -INFINITY);
    /* cbrt at 0: +inf */
    CHK_SAME(grad1(dr_cbrt, 0.0, &v), INFINITY);
    /* asin at 1: +inf */
    CHK_SAME(grad1(dr_asin, 1.0, &v), INFINITY);
    /* acosh at 1 and atanh at +-1: +inf */
    CHK_SAME(grad1(dr_acosh, 1.0, &v), INFINITY);
    CHK_SAME(v, 0.0);
    CHK_SAME(grad1(dr_atanh, 1.0, &v), INFINITY);
    CHK_SAME(v, INFINITY);
    CHK_SAME(grad1(dr_atanh, -1.0, &v), INFINITY);
    CHK_SAME(v, -INFINITY);
    /* outside the domain: NaN value and NaN derivative, no error */
    assert_true(isnan(grad1(dr_sqrt, -1.0, &v)));
    assert_true(isnan(v));
    assert_true(isnan(grad1(dr_asin, 2.0, &v)));
    assert_true(isnan(v));
    assert_true(isnan(grad1(dr_acosh, 0.5, &v)));
    assert_true(isnan(v));

    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 2.0);
    dr_real z = dr_sub(t, x, x);
    dr_real q = dr_div(t, z, z); /* 0/0 */
    dr_real y = dr_add(t, x, q);
    double g = 0;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    assert_true(isnan(g));
    /* a NaN seed is not zero: it is propagated */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, y.idx, NAN), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    assert_true(isnan(dr_adjoint(t, x.idx)));
    /* a NaN partial supplied by a code generator, reached */
    dr_real n = {0.0, dr_record1(t, x.idx, NAN)};
    CHK_STATUS(dr_gradient(t, n, 1, &x, &g), DR_OK);
    assert_true(isnan(g));
    /* an infinite adjoint times a zero partial is NaN, as IEEE says */
    dr_real big = {0.0, dr_record1(t, x.idx, INFINITY)};
    dr_real zp = {0.0, dr_record1(t, big.idx, 0.0)};
    dr_real sum = {0.0, dr_record2(t, zp.idx, 1.0, x.idx, 1.0)};
    CHK_STATUS(dr_gradient(t, sum, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0); /* zp's adjoint 1 * 0 = 0 at big: big skipped */
    dr_real inf_then_zero = {0.0, dr_record1(t, zp.idx, INFINITY)};
    CHK_STATUS(dr_gradient(t, inf_then_zero, 1, &x, &g), DR_OK);
    /* inf into zp, inf * 0 = NaN into big, NaN * inf into x */
    assert_true(isnan(g));
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* NaN and infinite values flow through values and partials without any
   error status. */
static dr_real nan_prog(dr_tape *t, dr_real x)
{
    dr_real y = dr_mul(t, dr_sin(t, x), dr_exp(t, x));
    y = dr_add(t, y, dr_tanh(t, x));
    return dr_div(t, y, dr_add(t, dr_const(1.0), dr_abs(t, x)));
}

static void test_ieee_values_flow(void **state)
{
    (void)state;
    double v;
    double g = grad1(nan_prog, NAN, &v);
    assert_true(isnan(v));
    assert_true(isnan(g));
    /* overflow to inf */
    CHK_SAME(grad1(dr_exp, 1000.0, &v), INFINITY);
    CHK_SAME(v, INFINITY);
    CHK_SAME(grad1(dr_exp, -1000.0, &v), 0.0);
    CHK_SAME(v, 0.0);
    /* infinite inputs */
    CHK_SAME(grad1(dr_tanh, INFINITY, &v), 0.0);
    CHK_SAME(v, 1.0);
    CHK_SAME(grad1(dr_sigmoid, -INFINITY, &v), 0.0);
    CHK_SAME(v, 0.0);
    CHK_SAME(grad1(dr_sigmoid, INFINITY, &v), 0.0);
    CHK_SAME(v, 1.0);
    CHK_SAME(grad1(dr_atan, INFINITY, &v), 0.0);
    CHK_SAME(v, atan(INFINITY));
    CHK_SAME(grad1(dr_asinh, -INFINITY, &v), 0.0);
    CHK_SAME(v, -INFINITY);
    CHK_SAME(grad1(dr_acosh, INFINITY, &v), 0.0);
    CHK_SAME(v, INFINITY);
    assert_true(isnan(grad1(dr_sin, INFINITY, &v)));
    assert_true(isnan(v));
    /* a NaN constant mixed with a variable */
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0);
    dr_real y = dr_mul(t, x, dr_const(NAN));
    assert_true(isnan(y.val));
    assert_true(y.idx != DR_NONE);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    assert_true(isnan(g));
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* ---------------------------------------------------------- pow and co. */

static dr_real pow_var_var(dr_tape *t, dr_real a, dr_real b)
{
    return dr_pow(t, a, b);
}

static void test_pow_special_cases(void **state)
{
    (void)state;
    double v, ga, gb;
    /* a^b == 0 (a = 0, b > 0): d/db taken as 0, not 0 * log 0 = NaN */
    const double bs[] = {0.5, 1.0, 2.0, 3.0, 7.5};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
        chk_context("pow(0, %g)", bs[i]);
        grad2(pow_var_var, 0.0, bs[i], &v, &ga, &gb);
        CHK_SAME(v, 0.0);
        CHK_SAME(gb, 0.0);
        /* d/da = b 0^(b-1): inf, 1, 0 */
        CHK_SAME(ga, bs[i] < 1 ? INFINITY : bs[i] == 1 ? 1.0 : 0.0);
    }
    /* underflow to 0 counts too: 1e-200^2 == 0 */
    chk_context("pow(1e-200, 2)");
    grad2(pow_var_var, 1e-200, 2.0, &v, &ga, &gb);
    CHK_SAME(v, 0.0);
    CHK_SAME(gb, 0.0);
    /* b == 0: the function is the constant 1 in a, d/da = 0, also at a = 0
       (not 0 * 0^-1 = 0 * inf) */
    const double as[] = {0.0, -0.0, 2.0, -3.0, INFINITY};
    for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
        chk_context("pow(%g, 0)", as[i]);
        grad2(pow_var_var, as[i], 0.0, &v, &ga, &gb);
        CHK_SAME(v, 1.0);
        CHK_SAME(ga, 0.0);
    }
    /* a = 1: d/db = log 1 = 0 */
    chk_context("pow(1, b)");
    grad2(pow_var_var, 1.0, 2.5, &v, &ga, &gb);
    CHK_SAME(v, 1.0);
    CHK_SAME(ga, 2.5);
    CHK_SAME(gb, 0.0);
    /* a negative base with an integer exponent: d/da is finite; d/db is
       log of a negative number, NaN (only reached if b is a variable) */
    chk_context("pow(-2, 3)");
    grad2(pow_var_var, -2.0, 3.0, &v, &ga, &gb);
    CHK_SAME(v, -8.0);
    CHK_SAME(ga, 12.0);
    assert_true(isnan(gb));
    dr_tape *t = chk_tape_new();
    dr_real a = dr_input(t, -2.0);
    dr_real y = dr_pow(t, a, dr_const(3.0));
    double g = NAN;
    CHK_STATUS(dr_gradient(t, y, 1, &a, &g), DR_OK);
    CHK_SAME(g, 12.0);
    dr_tape_free(t);
    chk_context(NULL);

    /* powi: n x^(n-1), 0 when n == 0 (even at x = 0) */
    struct { double x; int n; double v, d; } pc[] = {
        {0.0, 0, 1.0, 0.0},  {0.0, 1, 0.0, 1.0},  {0.0, 2, 0.0, 0.0},
        {0.0, 3, 0.0, 0.0},  {0.0, -1, INFINITY, -INFINITY},
        {5.0, 0, 1.0, 0.0},  {-2.0, 3, -8.0, 12.0}, {-2.0, -1, -0.5, -0.25},
        {INFINITY, 0, 1.0, 0.0},
    };
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        chk_context("powi(%g, %d)", pc[i].x, pc[i].n);
        t = chk_tape_new();
        dr_real x = dr_input(t, pc[i].x);
        y = dr_powi(t, x, pc[i].n);
        CHK_SAME(y.val, pc[i].v);
        CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
        CHK_SAME(g, pc[i].d);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

static void test_hypot_at_zero(void **state)
{
    (void)state;
    double v, ga, gb;
    /* partials a/h and b/h, 0 when h == 0 */
    grad2(dr_hypot, 0.0, 0.0, &v, &ga, &gb);
    CHK_SAME(v, 0.0);
    CHK_SAME(ga, 0.0);
    CHK_SAME(gb, 0.0);
    grad2(dr_hypot, -0.0, 0.0, &v, &ga, &gb);
    CHK_SAME(v, 0.0);
    assert_true(ga == 0.0 && gb == 0.0);
    /* no overflow in the value or the partials */
    grad2(dr_hypot, 3e300, 4e300, &v, &ga, &gb);
    CHK_CLOSE(v, 5e300, 1e-15, 0);
    CHK_CLOSE(ga, 0.6, 1e-15, 0);
    CHK_CLOSE(gb, 0.8, 1e-15, 0);
}

/* ------------------------------------------- the conveniences' corners */

static void test_gradient_corners(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.5);
    dr_real u = dr_input(t, 7.0); /* not used by y */
    dr_real y = dr_mul(t, x, x);
    dr_real xs[4] = {x, dr_const(2.0), u, y};
    double g[4] = {NAN, NAN, NAN, NAN};
    CHK_STATUS(dr_gradient(t, y, 4, xs, g), DR_OK);
    CHK_SAME(g[0], 3.0);
    CHK_SAME(g[1], 0.0); /* a constant x gets 0 */
    CHK_SAME(g[2], 0.0); /* not reached */
    CHK_SAME(g[3], 1.0); /* y itself */
    /* a constant y: every g is 0 */
    dr_real c = dr_const(3.0);
    CHK_STATUS(dr_gradient(t, c, 4, xs, g), DR_OK);
    for (int i = 0; i < 4; i++)
        CHK_SAME(g[i], 0.0);
    /* a Jacobian with constant rows */
    dr_real ys[2] = {c, y};
    double J[8];
    CHK_STATUS(dr_jacobian(t, 2, ys, 4, xs, J), DR_OK);
    const double want[8] = {0, 0, 0, 0, 3.0, 0, 0, 1.0};
    for (int i = 0; i < 8; i++)
        CHK_SAME(J[i], want[i]);
    /* dr_adjoint: 0 for DR_NONE and for nodes not reached */
    CHK_SAME(dr_adjoint(t, DR_NONE), 0.0);
    CHK_SAME(dr_adjoint(t, u.idx), 0.0);
    double out = -1;
    CHK_STATUS(dr_adjoint_get(t, DR_NONE, &out), DR_OK);
    CHK_SAME(out, 0.0);
    /* seeding DR_NONE is allowed and does nothing */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, DR_NONE, 5.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_SAME(dr_adjoint(t, x.idx), 0.0);
    CHK_SAME(dr_adjoint(t, y.idx), 0.0);
    /* adjoints before any sweep are 0 */
    dr_real z = dr_sin(t, y);
    CHK_SAME(dr_adjoint(t, z.idx), 0.0);
    dr_tape_free(t);
}

/* Sweeps are deterministic even where values are NaN or infinite. */
static void test_deterministic_with_specials(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x[3] = {dr_input(t, 0.0), dr_input(t, -1.0), dr_input(t, 1e308)};
    dr_real y = dr_add(t, dr_sqrt(t, x[0]), dr_log(t, x[1]));
    y = dr_add(t, y, dr_mul(t, x[2], x[2]));
    y = dr_add(t, y, dr_div(t, x[0], x[0]));
    double g0[3], g[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g0), DR_OK);
    for (int rep = 0; rep < 10; rep++) {
        CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
        for (int i = 0; i < 3; i++)
            CHK_SAME(g[i], g0[i]);
    }
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abs_relu_at_zero),
        cmocka_unit_test(test_min_max_ties_and_nan),
        cmocka_unit_test(test_unreached_infinite_partial),
        cmocka_unit_test(test_zero_adjoint_skipped),
        cmocka_unit_test(test_reached_nonfinite_partial),
        cmocka_unit_test(test_ieee_values_flow),
        cmocka_unit_test(test_pow_special_cases),
        cmocka_unit_test(test_hypot_at_zero),
        cmocka_unit_test(test_gradient_corners),
        cmocka_unit_test(test_deterministic_with_specials),
    };
    return cmocka_run_group_tests_name("semantics", tests, NULL, NULL);
}
