/*
 * test_hvp.c - Hessian-vector products in numbers (dr_hvp, dr_hvp_vec,
 * dr_hessian: forward over reverse on the second-order log) against the
 * recorded tangents of the same tape (dr_tangent_record, then a gradient
 * of the recorded tangent): two computations of the same second
 * derivatives that share only the first-order rules.  Every scalar
 * operation, every node kind with a second-order rule (given partials,
 * n-ary nodes, sums, dr_select, statements and the inline recorder at
 * order 2), more inputs than one pass carries, many directions at once,
 * partials that are infinite in a direction not taken, and the errors.
 * And the recorded reverse pass (dr_adjoint_record): its gradient against
 * dr_gradient, the Hessian of its recorded gradient against dr_hessian,
 * nesting, outer values as constants, and its errors.
 * Finite differences of every operation's Hessian, and running out of
 * memory, are in test_second_order.c.
 */
#include "check.h"
#include "record/record.h"

#include <math.h>
#include <string.h>

#define MAXN 48

/* the Hessian of y by recorded tangents: one dr_tangent_record per unit
   vector from mark on, and the gradient of each recorded tangent */
static void hessian_recorded(dr_tape *t, dr_idx mark, dr_real y, size_t n,
                             const dr_real *x, double *H)
{
    dr_idx ids[MAXN];
    dr_real seeds[MAXN];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            ids[j] = x[j].idx;
            seeds[j] = dr_const(i == j ? 1.0 : 0.0);
        }
        dr_real yd;
        CHK_STATUS(dr_tangent_record(t, mark, n, ids, seeds, y, &yd), DR_OK);
        CHK_STATUS(dr_gradient(t, yd, n, x, H + i * n), DR_OK);
    }
}

/* the largest magnitude of a matrix (a scale for rounding) */
static double scale_of(size_t m, const double *A)
{
    double s = 1e-300;
    for (size_t i = 0; i < m; i++)
        s = fmax(s, fabs(A[i]));
    return s;
}

/* dr_hessian on t (numbers) equals the recorded tangents' Hessian to
   rounding; and the tape is as it was (length, status) */
static void check_against_recorded(dr_tape *t, dr_idx mark, dr_real y,
                                   size_t n, const dr_real *x)
{
    static double H[MAXN * MAXN], R[MAXN * MAXN];
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    hessian_recorded(t, mark, y, n, x, R);
    double s = scale_of(n * n, R);
    for (size_t i = 0; i < n * n; i++) {
        assert_false(isnan(H[i]));
        CHK_CLOSE(H[i], R[i], 1e-12, 1e-13 * s);
    }
}

/* ------------------------------------------------------- every operation */

#define UNARY_CALL(op) dr_##op,
static dr_real (*const unary_ops[])(dr_tape *, dr_real) = {
    DR_RULES_UNARY(UNARY_CALL) DR_RULES_UNARY_FUSED(UNARY_CALL)
};
#define BINARY_CALL(op) dr_##op,
static dr_real (*const binary_ops[])(dr_tape *, dr_real, dr_real) = {
    DR_RULES_BINARY(BINARY_CALL)
};

/* each operation of one and two arguments, at points inside every domain,
   composed with products so that each second partial is exercised */
static void test_every_operation(void **state)
{
    (void)state;
    const double pts[][2] = {{0.31, 0.62}, {0.47, 1.3}, {0.12, 0.25}};
    for (size_t p = 0; p < sizeof pts / sizeof pts[0]; p++) {
        for (size_t u = 0; u < sizeof unary_ops / sizeof unary_ops[0]; u++) {
            chk_context("unary op %zu at %g", u, pts[p][0]);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_idx mark = dr_tape_mark(t);
            dr_real x[2];
            CHK_STATUS(dr_inputs(t, 2, pts[p], x), DR_OK);
            /* acosh needs x > 1: shift by a constant */
            dr_real a = dr_add(t, dr_mul(t, x[0], x[1]), dr_const(u == 17 ? 1.2 : 0.0));
            dr_real y = dr_mul(t, unary_ops[u](t, a), dr_add(t, x[0], x[1]));
            check_against_recorded(t, mark, y, 2, x);
            dr_tape_free(t);
        }
        for (size_t b = 0; b < sizeof binary_ops / sizeof binary_ops[0]; b++) {
            chk_context("binary op %zu at (%g, %g)", b, pts[p][0], pts[p][1]);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_idx mark = dr_tape_mark(t);
            dr_real x[3];
            double xv[3] = {pts[p][0], pts[p][1], 0.7};
            CHK_STATUS(dr_inputs(t, 3, xv, x), DR_OK);
            dr_real a = dr_mul(t, x[0], x[2]), c = dr_add(t, x[1], x[2]);
            dr_real y = dr_mul(t, binary_ops[b](t, a, c), dr_sin(t, x[2]));
            check_against_recorded(t, mark, y, 3, x);
            dr_tape_free(t);
        }
    }
}

/* pow's exponent at exactly zero: the a-partial is the constant 0 only
   where the exponent does not vary (its derivative along b is 1/a) */
static void test_pow_exponent_zero(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){1.7, 0.0}, x), DR_OK);
    dr_real y = dr_pow(t, x[0], x[1]);
    double H[4];
    CHK_STATUS(dr_hessian(t, y, 2, x, H), DR_OK);
    /* d2/dadb a^b = a^(b-1) (1 + b log a) = 1/a at b = 0; d2/db2 = log^2 a */
    CHK_REL(H[1], 1.0 / 1.7, 1e-14);
    CHK_REL(H[2], 1.0 / 1.7, 1e-14);
    CHK_REL(H[3], log(1.7) * log(1.7), 1e-14);
    CHK_ABS(H[0], 0.0, 0.0);
    dr_tape_free(t);
}

/* ------------------------------------------------------ every node kind */

/* a random program over n inputs with every kind of node that has a
   second-order rule */
static dr_real prog_kinds(dr_tape *t, size_t n, const dr_real *x,
                          uint64_t seed)
{
    chk_rng r;
    chk_rng_seed(&r, seed);
    dr_real pool[256];
    size_t m = n;
    for (size_t i = 0; i < n; i++)
        pool[i] = x[i];
    while (m < n + 120) {
        dr_real a = pool[chk_rng_below(&r, m)], b = pool[chk_rng_below(&r, m)];
        dr_real v;
        switch (chk_rng_below(&r, 10)) {
        case 0: v = dr_mul(t, a, b); break;
        case 1: v = dr_tanh(t, dr_add(t, a, b)); break;
        case 2: { /* given partials: linear */
            v.val = 2.0 * a.val - 0.5 * b.val;
            v.idx = dr_record2(t, a.idx, 2.0, b.idx, -0.5);
            break;
        }
        case 3: { /* an n-ary node of given partials */
            dr_real c = pool[chk_rng_below(&r, m)];
            dr_idx ids[3] = {a.idx, b.idx, c.idx};
            double ps[3] = {0.3, -1.1, 0.7};
            v.val = 0.3 * a.val - 1.1 * b.val + 0.7 * c.val;
            v.idx = dr_recordn(t, 3, ids, ps);
            break;
        }
        case 4: { /* an n-ary sum */
            dr_real terms[4] = {a, b, dr_mul(t, a, a), dr_const(0.25)};
            v = dr_sumn(t, 4, terms);
            break;
        }
        case 5: /* a choice without a branch */
            v = dr_select(t, dr_sub(t, a, b), dr_sin(t, a), dr_mul(t, a, b));
            break;
        case 6: v = dr_powi(t, a, 3); break;
        case 7: v = dr_div(t, a, dr_add(t, dr_const(1.5), dr_mul(t, b, b))); break;
        case 8: v = dr_exp(t, dr_mul(t, dr_const(0.1), a)); break;
        default: v = dr_hypot(t, a, b); break;
        }
        /* keep values moderate */
        if (fabs(v.val) > 4.0)
            v = dr_tanh(t, v);
        pool[m++] = v;
    }
    dr_real y = dr_const(0.0);
    for (size_t i = m - 30; i < m; i++)
        y = dr_add(t, y, pool[i]);
    for (size_t i = 0; i + 1 < n; i++) /* every input to second order */
        y = dr_add(t, y, dr_mul(t, x[i], dr_cos(t, x[i + 1])));
    return y;
}

static void test_node_kinds_random(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 42);
    const size_t ns[] = {1, 3, 16, 17, 40};
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++)
        for (uint64_t s = 0; s < 4; s++) {
            size_t n = ns[q];
            chk_context("random program %llu, n = %zu", (unsigned long long)s, n);
            double xv[MAXN];
            for (size_t i = 0; i < n; i++)
                xv[i] = chk_rng_uniform(&r, -1.2, 1.2);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_idx mark = dr_tape_mark(t);
            dr_real x[MAXN];
            CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
            dr_real y = prog_kinds(t, n, x, 100 + s);
            check_against_recorded(t, mark, y, n, x);
            dr_tape_free(t);
        }
}

/* statements and the inline recorder at order 2 (recorded through the
   tape's own operations, with their rules) */
static void test_recorder_statements(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_idx mark = dr_tape_mark(t);
    dr_real x[4];
    CHK_STATUS(dr_inputs(t, 4, (double[]){0.3, -0.8, 1.1, 0.5}, x), DR_OK);
    dr_rec rc;
    CHK_STATUS(dr_rec_begin(t, &rc), DR_OK);
    dr_real acc = dr_const(0.0);
    for (int i = 0; i < 4; i++)
        acc = dr_rec_add(&rc, acc, dr_rec_mul(&rc, x[i], x[(i + 1) % 4]));
    dr_real s = dr_rec_stmt(&rc, dr_ex_add(dr_ex(acc), dr_ex_scale(0.5, dr_ex(x[2]))));
    CHK_STATUS(dr_rec_end(&rc), DR_OK);
    dr_real y = dr_mul(t, s, dr_sin(t, acc));
    check_against_recorded(t, mark, y, 4, x);
    dr_tape_free(t);
}

/* ---------------------------------------------------- vector mode, blocks */

/* k products at once equal k single products, and H times the directions;
   k above the 16 a pass carries */
static void test_hvp_vec(void **state)
{
    (void)state;
    const size_t n = 20, ks[] = {1, 2, 16, 37};
    chk_rng r;
    chk_rng_seed(&r, 9);
    double xv[MAXN];
    for (size_t i = 0; i < n; i++)
        xv[i] = chk_rng_uniform(&r, -1.0, 1.0);
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[MAXN];
    CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
    dr_real y = prog_kinds(t, n, x, 7);
    static double H[MAXN * MAXN], V[40 * MAXN], W[40 * MAXN], one[MAXN];
    CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
    double s = scale_of(n * n, H);
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
        size_t k = ks[q];
        chk_context("k = %zu", k);
        for (size_t i = 0; i < k * n; i++)
            V[i] = chk_rng_uniform(&r, -1.0, 1.0);
        CHK_STATUS(dr_hvp_vec(t, y, n, x, k, V, W), DR_OK);
        for (size_t j = 0; j < k; j++) {
            CHK_STATUS(dr_hvp(t, y, n, x, V + j * n, one), DR_OK);
            for (size_t i = 0; i < n; i++) {
                double hv = 0.0;
                for (size_t c = 0; c < n; c++)
                    hv += H[i * n + c] * V[j * n + c];
                CHK_CLOSE(W[j * n + i], one[i], 1e-12, 1e-13 * s);
                CHK_CLOSE(W[j * n + i], hv, 1e-10, 1e-12 * s * n);
            }
        }
    }
    dr_tape_free(t);
}

/* one product (its own pass, k == 1, which passes a node's adjoint and
   its tangent on as a pair) equals the same direction's column of a pass
   of three, exactly: the same sums in the same order, on programs with
   zero values, zero directions and adjoints, squares, differences and
   partials that are infinite where no direction reaches (where the pair
   pass must fall back on the tests of the other) */
static bool same_number(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static dr_real prog_special(dr_tape *t, const dr_real *x)
{
    dr_real sq = dr_mul(t, x[0], x[0]);           /* a square       */
    dr_real zero = dr_mul(t, x[1], dr_const(0.0)); /* a zero partial */
    dr_real d = dr_sub(t, sq, dr_mul(t, x[2], x[3]));
    dr_real r = dr_sqrt(t, x[4]);                  /* x4 = 0: infinite */
    /* ... and a product of it whose adjoint is 0 (a direction on x4 makes
       its tangent infinite) */
    dr_real dead = dr_mul(t, dr_mul(t, r, x[5]), dr_const(0.0));
    dr_real big = dr_mul(t, dr_exp(t, dr_mul(t, dr_const(400.0), x[2])),
                         dr_exp(t, dr_mul(t, dr_const(400.0), x[3])));
    dr_real y = dr_add(t, dr_mul(t, d, dr_sin(t, x[1])), dr_sub(t, zero, dead));
    y = dr_add(t, y, dr_mul(t, dr_mul(t, x[5], x[0]), dr_mul(t, x[5], x[5])));
    /* a product of an infinite value (log 0) whose adjoint's tangent is 0 */
    y = dr_add(t, y, dr_mul(t, dr_mul(t, dr_log(t, x[4]), x[3]),
                            dr_const(0.5)));
    return dr_add(t, y, dr_mul(t, dr_const(1e-300), big));
}

static void test_one_product_as_columns(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 77);
    for (int q = 0; q < 12; q++) {
        size_t n = q < 4 ? 6 : 3 + (size_t)q * 3;
        chk_context("program %d, n = %zu", q, n);
        double xv[MAXN], V[3 * MAXN], W[3 * MAXN], one[MAXN];
        for (size_t i = 0; i < n; i++)
            xv[i] = i % 3 == 1 ? 0.0 : chk_rng_uniform(&r, -1.2, 1.2);
        if (q < 4) {
            xv[4] = 0.0;       /* sqrt at 0 */
            xv[2] = xv[3] = 1; /* exp(400)^2: the product overflows */
        }
        for (size_t i = 0; i < 3 * n; i++)
            V[i] = i % 4 == (size_t)q % 4 || (q < 2 && i % n == 4)
                       ? 0.0 : chk_rng_uniform(&r, -1.0, 1.0);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[MAXN];
        CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
        dr_real y = q < 4 ? prog_special(t, x) : prog_kinds(t, n, x, 300 + q);
        CHK_STATUS(dr_hvp_vec(t, y, n, x, 3, V, W), DR_OK);
        for (size_t j = 0; j < 3; j++) {
            CHK_STATUS(dr_hvp(t, y, n, x, V + j * n, one), DR_OK);
            for (size_t i = 0; i < n; i++)
                if (!same_number(one[i], W[j * n + i]))
                    fail_msg("direction %zu, input %zu: %.17g against %.17g",
                             j, i, one[i], W[j * n + i]);
        }
        dr_tape_free(t);
    }
}

/* --------------------------------------------------------- special points */

/* a partial that is infinite along a direction the product does not take
   (sqrt and log at 0) gives no NaN: only x2 moves */
static void test_infinite_partial_not_taken(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.0, 1.5}, x), DR_OK);
    dr_real y = dr_add(t, dr_sqrt(t, x[0]), dr_mul(t, x[1], x[1]));
    double hv[2];
    CHK_STATUS(dr_hvp(t, y, 2, x, (double[]){0.0, 1.0}, hv), DR_OK);
    CHK_SAME(hv[0], 0.0);
    CHK_SAME(hv[1], 2.0);
    dr_tape_free(t);
}

/* --------------------------------------------- the recorded reverse pass */

/* the gradient recorded by dr_adjoint_record equals dr_gradient; the
   gradient of each recorded entry is a row of the Hessian */
static void test_adjoint_record_random(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 77);
    const size_t ns[] = {1, 4, 17};
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++)
        for (uint64_t s = 0; s < 3; s++) {
            size_t n = ns[q];
            chk_context("random program %llu, n = %zu", (unsigned long long)s, n);
            double xv[MAXN];
            for (size_t i = 0; i < n; i++)
                xv[i] = chk_rng_uniform(&r, -1.2, 1.2);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_idx mark = dr_tape_mark(t);
            dr_real x[MAXN];
            CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
            dr_real y = prog_kinds(t, n, x, 300 + s);
            static double g[MAXN], H[MAXN * MAXN], row[MAXN];
            CHK_STATUS(dr_gradient(t, y, n, x, g), DR_OK);
            CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
            dr_idx ids[MAXN];
            dr_real gr[MAXN];
            for (size_t i = 0; i < n; i++)
                ids[i] = x[i].idx;
            CHK_STATUS(dr_adjoint_record(t, mark, y, n, ids, gr), DR_OK);
            double sg = scale_of(n, g), sh = scale_of(n * n, H);
            for (size_t i = 0; i < n; i++) {
                CHK_CLOSE(gr[i].val, g[i], 1e-13, 1e-14 * sg);
                CHK_STATUS(dr_gradient(t, gr[i], n, x, row), DR_OK);
                for (size_t j = 0; j < n; j++)
                    CHK_CLOSE(row[j], H[i * n + j], 1e-12, 1e-13 * sh);
            }
            dr_tape_free(t);
        }
}

/* the inner derivative's perturbation is its own: x * d/dy (x + y) at y
   = x is x, whose derivative is 1 (not 2); nodes before the mark are
   constants of the inner derivative */
static void test_adjoint_record_nested(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 5.0);
    dr_idx mark = dr_tape_mark(t);
    dr_real y = {x.val, dr_record1(t, x.idx, 1.0)}; /* a fresh copy of x */
    dr_real inner = dr_add(t, x, y), d;
    CHK_STATUS(dr_adjoint_record(t, mark, inner, 1, &y.idx, &d), DR_OK);
    CHK_SAME(d.val, 1.0);
    dr_real f = dr_mul(t, x, d);
    double g;
    CHK_STATUS(dr_gradient(t, f, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0);
    /* third derivatives: d3/dx3 of x^4 through two recorded passes */
    dr_idx m0 = dr_tape_mark(t);
    dr_real z = dr_input(t, 1.5);
    dr_real z4 = dr_powi(t, z, 4), d1, d2;
    CHK_STATUS(dr_adjoint_record(t, m0, z4, 1, &z.idx, &d1), DR_OK);
    CHK_STATUS(dr_adjoint_record(t, m0, d1, 1, &z.idx, &d2), DR_OK);
    CHK_REL(d1.val, 4 * 1.5 * 1.5 * 1.5, 1e-15);
    CHK_REL(d2.val, 12 * 1.5 * 1.5, 1e-15);
    CHK_STATUS(dr_gradient(t, d2, 1, &z, &g), DR_OK);
    CHK_REL(g, 24 * 1.5, 1e-15);
    dr_tape_free(t);
}

/* variables before the mark (an inner loop's point, recorded by the step
   before), given in descending order and one twice: their adjoints equal a
   gradient with them as the inputs, and the tangent pass seeded at them
   the directional derivative.  Short and long passes, few and many
   variables (the pass keeps small arrays on the stack, large ones not) */
static dr_real short_or_long(dr_tape *t, size_t n, const dr_real *z, int longer)
{
    if (longer)
        return prog_kinds(t, n, z, 500 + n);
    dr_real y = dr_const(0.0);
    for (size_t i = 0; i < n; i++)
        y = dr_add(t, y, dr_mul(t, z[i], dr_sin(t, z[(i + 1) % n])));
    return y;
}

static void test_recorded_passes_before(void **state)
{
    (void)state;
    const size_t ns[] = {5, 20};
    for (size_t q = 0; q < 2; q++)
        for (int longer = 0; longer < 2; longer++) {
            size_t n = ns[q];
            chk_context("n = %zu, %s pass", n, longer ? "long" : "short");
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_real x[MAXN], z[MAXN];
            double zv[MAXN];
            for (size_t i = 0; i < n; i++) {
                x[i] = dr_input(t, 0.3 + 0.1 * (double)i);
                z[i] = dr_exp(t, x[i]);
                zv[i] = z[i].val;
            }
            dr_idx mark = dr_tape_mark(t);
            dr_real y = short_or_long(t, n, z, longer);
            assert_true(longer ? dr_tape_mark(t) - mark > 128 : dr_tape_mark(t) - mark < 128);
            dr_idx ids[MAXN + 1];
            dr_real gr[MAXN + 1];
            for (size_t i = 0; i < n; i++)
                ids[i] = z[n - 1 - i].idx;
            ids[n] = z[0].idx;
            CHK_STATUS(dr_adjoint_record(t, mark, y, n + 1, ids, gr), DR_OK);
            /* the reference: z as the inputs of a tape of their own */
            dr_tape *u = chk_tape_new();
            dr_real zu[MAXN];
            CHK_STATUS(dr_inputs(u, n, zv, zu), DR_OK);
            double g[MAXN];
            CHK_STATUS(dr_gradient(u, short_or_long(u, n, zu, longer), n, zu, g), DR_OK);
            double sg = scale_of(n, g);
            for (size_t i = 0; i < n; i++)
                CHK_CLOSE(gr[i].val, g[n - 1 - i], 1e-13, 1e-14 * sg);
            CHK_CLOSE(gr[n].val, g[0], 1e-13, 1e-14 * sg);
            /* the tangent pass with the same nodes as seeds (z[0]'s two
               seeds summed): the directional derivative */
            dr_real seeds[MAXN + 1], yd;
            double want = 0;
            for (size_t i = 0; i <= n; i++) {
                seeds[i] = dr_const(0.5 - 0.1 * (double)i);
                want += seeds[i].val * (i < n ? g[n - 1 - i] : g[0]);
            }
            CHK_STATUS(dr_tangent_record(t, mark, n + 1, ids, seeds, y, &yd), DR_OK);
            CHK_CLOSE(yd.val, want, 1e-13, 1e-14 * sg * (double)n);
            dr_tape_free(u);
            dr_tape_free(t);
        }
}

static void test_adjoint_record_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_idx mark = dr_tape_mark(t);
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.5, 0.25}, x), DR_OK);
    dr_real y = dr_mul(t, x[0], dr_exp(t, x[1]));
    dr_idx ids[2] = {x[0].idx, x[1].idx};
    dr_real out[2];
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_adjoint_record(NULL, mark, y, 2, ids, out), DR_EINVAL);
    CHK_STATUS(dr_adjoint_record(t, mark, y, 2, NULL, out), DR_EINVAL);
    CHK_STATUS(dr_adjoint_record(t, mark, y, 2, ids, NULL), DR_EINVAL);
    dr_idx bad[2] = {x[0].idx, y.idx + 100};
    CHK_STATUS(dr_adjoint_record(t, mark, y, 2, bad, out), DR_EINVAL);
    CHK_STATUS(dr_adjoint_record(t, y.idx + 100, y, 2, ids, out), DR_EINVAL);
    dr_real yb = {1.0, y.idx + 100};
    CHK_STATUS(dr_adjoint_record(t, mark, yb, 2, ids, out), DR_EINVAL);
    assert_int_equal(dr_tape_len(t), len);
    /* a constant output: constant zeros, nothing recorded */
    CHK_STATUS(dr_adjoint_record(t, mark, dr_const(2.0), 2, ids, out), DR_OK);
    CHK_SAME(out[0].val, 0.0);
    assert_true(out[0].idx == DR_NONE);
    /* y a variable: dy/dy = 1, 0 for the other */
    CHK_STATUS(dr_adjoint_record(t, mark, x[1], 2, ids, out), DR_OK);
    CHK_SAME(out[0].val, 0.0);
    CHK_SAME(out[1].val, 1.0);
    /* a node recorded at order 1 on the way: DR_ENOTSUP, nothing recorded */
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    dr_real z = dr_mul(t, y, y);
    len = dr_tape_len(t);
    CHK_STATUS(dr_adjoint_record(t, mark, z, 2, ids, out), DR_ENOTSUP);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* ----------------------------------------------------------------- forks */

typedef struct forkprog {
    dr_real x[4];
    dr_real out[3];
} forkprog;

static void fork_job(dr_tape *h, size_t i, void *ctx)
{
    forkprog *P = ctx;
    dr_real a = P->x[i], b = P->x[(i + 1) % 4];
    for (int s = 0; s < 150; s++) {
        a = dr_add(h, dr_mul(h, a, dr_const(0.9)), dr_sin(h, dr_mul(h, a, b)));
        b = dr_tanh(h, dr_sub(h, b, dr_mul(h, dr_const(0.1), a)));
    }
    P->out[i] = dr_mul(h, a, b);
}

/* a job graph at order 2, its log taken in at the join: every entry of
   the root's log is a node's or a gap (the ids a child's chunk did not
   use, the last one included), and the product equals the recorded
   tangents'; under an allocator whose new memory is not zero */
static void test_forked(void **state)
{
    chk_alloc *a = *state;
    chk_alloc_install(a);
    for (unsigned th = 1; th <= 2; th++) {
        chk_context("%u threads", th);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, th), DR_OK);
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_idx mark = dr_tape_mark(t);
        forkprog P;
        CHK_STATUS(dr_inputs(t, 4, (double[]){0.3, -0.4, 0.8, 0.1}, P.x), DR_OK);
        CHK_STATUS(dr_fork_run(t, 3, fork_job, &P), DR_OK);
        dr_real y = dr_add(t, dr_mul(t, P.out[0], P.out[1]), P.out[2]);
        for (int64_t i = 0; i < t->oplog_n; i++) {
            const dr_oplog *e = &t->oplog[i];
            assert_true(e->op >= 0 && e->op < DR_OPC_COUNT);
            if (e->op == DR_OPC_GAP) {
                assert_true(e->ra == 0 && e->rb == 0);
            }
        }
        check_against_recorded(t, mark, y, 4, P.x);
        dr_tape_free(t);
    }
    chk_alloc_uninstall();
}

/* the output an input recorded before the log began (the order raised
   after it): the Hessian of an input is zero, and nothing is written past
   the product's storage (ASan) */
static void test_output_before_log(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, (double[]){0.5, -1.0, 2.0}, x), DR_OK);
    for (int i = 0; i < 40; i++) /* a log that begins far after x */
        (void)dr_mul(t, x[1], x[2]);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real z = dr_mul(t, x[1], x[2]);
    double H[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHK_STATUS(dr_hessian(t, x[0], 3, x, H), DR_OK);
    for (int i = 0; i < 9; i++)
        CHK_SAME(H[i], 0.0);
    /* and z: every node up to it must have a rule, and the products
       recorded at order 1 before the log have none */
    dr_real xz[2] = {x[1], x[2]};
    double Hz[4];
    CHK_STATUS(dr_hessian(t, z, 2, xz, Hz), DR_ENOTSUP);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* a tape with no log (recorded at order 1) whose output is an input of the
   product: nothing to visit, and the passes touch no log (a pass that
   took the log's address before its empty range was undefined behaviour
   on a NULL log, which the sanitizers' build of this test catches) */
static void test_no_log(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.5, -1.0}, x), DR_OK);
    double hv[2] = {7, 7}, H[4] = {7, 7, 7, 7};
    CHK_STATUS(dr_hvp(t, x[0], 2, x, (double[]){1.0, 2.0}, hv), DR_OK);
    CHK_SAME(hv[0], 0.0);
    CHK_SAME(hv[1], 0.0);
    CHK_STATUS(dr_hessian(t, x[1], 2, x, H), DR_OK);
    for (int i = 0; i < 4; i++)
        CHK_SAME(H[i], 0.0);
    dr_tape_free(t);
}

/* ----------------------------------------------------------------- errors */

static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.5, 0.25}, x), DR_OK);
    dr_real y = dr_mul(t, x[0], dr_exp(t, x[1]));
    double V[4] = {1, 0, 0, 1}, W[4] = {-1, -1, -1, -1};
    CHK_STATUS(dr_hvp_vec(NULL, y, 2, x, 2, V, W), DR_EINVAL);
    CHK_STATUS(dr_hvp_vec(t, y, 2, NULL, 2, V, W), DR_EINVAL);
    CHK_STATUS(dr_hvp_vec(t, y, 2, x, 2, NULL, W), DR_EINVAL);
    CHK_STATUS(dr_hvp_vec(t, y, 2, x, 2, V, NULL), DR_EINVAL);
    CHK_STATUS(dr_hvp_vec(t, y, 2, x, 0, NULL, NULL), DR_OK);
    dr_real bad = {1.0, y.idx + 1000};
    CHK_STATUS(dr_hvp_vec(t, bad, 2, x, 2, V, W), DR_EINVAL);
    CHK_SAME(W[0], -1.0); /* nothing written */
    /* a constant output: zeros */
    CHK_STATUS(dr_hvp_vec(t, dr_const(3.0), 2, x, 2, V, W), DR_OK);
    for (int i = 0; i < 4; i++)
        CHK_SAME(W[i], 0.0);
    /* a node recorded at order 1 on the way: DR_ENOTSUP, zeros */
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    dr_real z = dr_mul(t, y, y);
    CHK_STATUS(dr_hvp_vec(t, z, 2, x, 2, V, W), DR_ENOTSUP);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* and the product below it still works */
    CHK_STATUS(dr_hvp_vec(t, y, 2, x, 2, V, W), DR_OK);
    CHK_REL(W[1], exp(0.25), 1e-15);          /* d2/dx1dx0 */
    CHK_REL(W[3], 0.5 * exp(0.25), 1e-15);    /* d2/dx1^2 */
    dr_tape_free(t);
}

int main(void)
{
    static chk_alloc alloc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_operation),
        cmocka_unit_test(test_pow_exponent_zero),
        cmocka_unit_test(test_node_kinds_random),
        cmocka_unit_test(test_recorder_statements),
        cmocka_unit_test(test_hvp_vec),
        cmocka_unit_test(test_one_product_as_columns),
        cmocka_unit_test(test_infinite_partial_not_taken),
        cmocka_unit_test(test_output_before_log),
        cmocka_unit_test(test_no_log),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_adjoint_record_random),
        cmocka_unit_test(test_adjoint_record_nested),
        cmocka_unit_test(test_recorded_passes_before),
        cmocka_unit_test(test_adjoint_record_errors),
        cmocka_unit_test_prestate_setup_teardown(test_forked, NULL,
                                                 chk_alloc_teardown, &alloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
