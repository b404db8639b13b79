/*
 * test_tape.c - the tape and the reverse pass on whole programs: sharing,
 * fan-out, Jacobians by repeated sweeps, several seeded outputs, determinism
 * of sweeps, clear-and-reuse without allocation, ids across clears, n-ary
 * nodes, tapes of millions of nodes spanning many chunks, and the counters.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x(k+1) = x(k) + x(k): the derivative doubles at every step and every node
   is used twice by the same node.  2^1000 is finite, and exact. */
static void test_sharing_chain(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x0 = dr_input(t, 1.0);
    dr_real x = x0;
    for (int k = 0; k < 1000; k++) {
        x = dr_add(t, x, x);
        if (k == 9) { /* x(10) */
            double g = NAN;
            CHK_STATUS(dr_gradient(t, x, 1, &x0, &g), DR_OK);
            CHK_SAME(g, 1024.0);
        }
    }
    CHK_SAME(x.val, ldexp(1.0, 1000));
    assert_int_equal(dr_tape_len(t), 1001);
    double g = NAN;
    CHK_STATUS(dr_gradient(t, x, 1, &x0, &g), DR_OK);
    CHK_SAME(g, ldexp(1.0, 1000));
    /* and one more doubling step overflows to +inf, not NaN: 2^1024 */
    for (int k = 0; k < 24; k++)
        x = dr_add(t, x, x);
    CHK_SAME(x.val, INFINITY);
    CHK_STATUS(dr_gradient(t, x, 1, &x0, &g), DR_OK);
    CHK_SAME(g, INFINITY);
    dr_tape_free(t);
}

/* The same chain written as x*2 with a constant, and as mul(x, 1) + x. */
static void test_sharing_chain_variants(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x0 = dr_input(t, 0.75);
    dr_real a = x0, b = x0;
    for (int k = 0; k < 1000; k++) {
        a = dr_mul(t, a, dr_const(2.0));
        b = dr_add(t, dr_mul(t, b, dr_const(1.0)), b);
    }
    double g = NAN;
    CHK_STATUS(dr_gradient(t, a, 1, &x0, &g), DR_OK);
    CHK_SAME(g, ldexp(1.0, 1000));
    CHK_STATUS(dr_gradient(t, b, 1, &x0, &g), DR_OK);
    CHK_SAME(g, ldexp(1.0, 1000));
    CHK_SAME(a.val, ldexp(0.75, 1000));
    dr_tape_free(t);
}

/* One node with 10000 users (a diamond with a wide middle), summed by a
   chain of adds and, separately, by one n-ary node naming it 10000 times. */
static void test_diamond_fan_out(void **state)
{
    (void)state;
    enum { USES = 10000 };
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 0.3);
    dr_real u = dr_sin(t, x);
    dr_real s = dr_const(0.0);
    double csum = 0;
    for (int i = 0; i < USES; i++) {
        double c = (double)(i % 7 - 3); /* small integers: exact sums */
        csum += c;
        s = dr_add(t, s, dr_mul(t, u, dr_const(c)));
    }
    /* also a branch through a different path: s2 = exp(u) * u */
    dr_real s2 = dr_mul(t, dr_exp(t, u), u);
    dr_real y = dr_add(t, s, s2);
    double g = NAN;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    double du = csum + exp(u.val) * (u.val + 1.0);
    CHK_CLOSE(dr_adjoint(t, u.idx), du, 1e-15, 0);
    CHK_CLOSE(g, du * cos(0.3), 1e-15, 0);

    /* n-ary: one node, 10000 arguments, all the same id */
    dr_idx *args = malloc(USES * sizeof *args);
    double *parts = malloc(USES * sizeof *parts);
    assert_non_null(args);
    assert_non_null(parts);
    for (int i = 0; i < USES; i++) {
        args[i] = u.idx;
        parts[i] = (double)(i % 5 - 2) * 0.5;
    }
    dr_idx n = dr_recordn(t, USES, args, parts);
    assert_true(n != DR_NONE);
    double psum = 0;
    for (int i = 0; i < USES; i++)
        psum += parts[i];
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, n, 2.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_SAME(dr_adjoint(t, u.idx), 2.0 * psum);
    CHK_CLOSE(dr_adjoint(t, x.idx), 2.0 * psum * cos(0.3), 1e-15, 0);
    /* the sum node and its users were not reached */
    CHK_SAME(dr_adjoint(t, y.idx), 0.0);
    free(args);
    free(parts);
    dr_tape_free(t);
}

/* f: R^3 -> R^4 with a known Jacobian. */
static void f_analytic(const double *x, double *f, double *J)
{
    double a = x[0], b = x[1], c = x[2];
    f[0] = a * b + sin(c);
    f[1] = exp(a) / b;
    f[2] = c * c * a;
    f[3] = 5.0; /* constant output: a zero row */
    double Jv[4][3] = {
        {b, a, cos(c)},
        {exp(a) / b, -exp(a) / (b * b), 0},
        {c * c, 0, 2 * c * a},
        {0, 0, 0},
    };
    memcpy(J, Jv, sizeof Jv);
}

static void record_f(dr_tape *t, const dr_real *x, dr_real *y)
{
    y[0] = dr_add(t, dr_mul(t, x[0], x[1]), dr_sin(t, x[2]));
    y[1] = dr_div(t, dr_exp(t, x[0]), x[1]);
    y[2] = dr_mul(t, dr_mul(t, x[2], x[2]), x[0]);
    y[3] = dr_const(5.0);
}

static void test_jacobian(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 42);
    for (int trial = 0; trial < 20; trial++) {
        double xv[3];
        for (int i = 0; i < 3; i++)
            xv[i] = chk_rng_uniform(&r, 0.5, 2.0);
        chk_context("jacobian trial %d", trial);
        dr_tape *t = chk_tape_new();
        /* a fourth "input" that is a constant: a zero column */
        dr_real x[4] = {dr_input(t, xv[0]), dr_input(t, xv[1]),
                        dr_input(t, xv[2]), dr_const(9.0)};
        dr_real y[4];
        record_f(t, x, y);
        double f[4], Ja[12], J[16];
        f_analytic(xv, f, Ja);
        for (int i = 0; i < 4; i++)
            CHK_CLOSE(y[i].val, f[i], 1e-15, 0);
        size_t len = dr_tape_len(t);
        memset(J, 0xff, sizeof J); /* NaN: every entry must be written */
        CHK_STATUS(dr_jacobian(t, 4, y, 4, x, J), DR_OK);
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 3; j++)
                CHK_CLOSE(J[i * 4 + j], Ja[i * 3 + j], 1e-15, 0);
            CHK_SAME(J[i * 4 + 3], 0.0);
        }
        /* the tape is unchanged, and rows equal single gradients */
        assert_int_equal(dr_tape_len(t), len);
        for (int i = 0; i < 4; i++) {
            double g[4];
            CHK_STATUS(dr_gradient(t, y[i], 4, x, g), DR_OK);
            for (int j = 0; j < 4; j++)
                CHK_SAME(g[j], J[i * 4 + j]);
        }
        /* a Jacobian of the outputs with respect to intermediate nodes and
           to themselves: d y_i / d y_j is the identity */
        double I[16];
        CHK_STATUS(dr_jacobian(t, 3, y, 3, y, I), DR_OK);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                CHK_SAME(I[i * 3 + j], i == j ? 1.0 : 0.0);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* Seeding several outputs at once gives the vector-Jacobian product. */
static void test_vjp_multi_seed(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double xv[3] = {0.7, 1.3, -0.4};
    dr_real x[3] = {dr_input(t, xv[0]), dr_input(t, xv[1]),
                    dr_input(t, xv[2])};
    dr_real y[4];
    record_f(t, x, y);
    double f[4], Ja[12];
    f_analytic(xv, f, Ja);
    const double w[4] = {0.5, -2.0, 3.0, 7.0};
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    for (int i = 0; i < 4; i++)
        CHK_STATUS(dr_seed(t, y[i].idx, w[i]), DR_OK); /* y[3]: a constant */
    CHK_STATUS(dr_reverse(t), DR_OK);
    for (int j = 0; j < 3; j++) {
        double want = 0;
        for (int i = 0; i < 4; i++)
            want += w[i] * Ja[i * 3 + j];
        CHK_CLOSE(dr_adjoint(t, x[j].idx), want, 1e-14, 1e-15);
    }
    /* seeding the same node twice adds the cotangents */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    for (int j = 0; j < 3; j++)
        CHK_SAME(dr_adjoint(t, x[j].idx), 0.0);
    CHK_STATUS(dr_seed(t, y[0].idx, 1.0), DR_OK);
    CHK_STATUS(dr_seed(t, y[0].idx, 2.0), DR_OK);
    CHK_SAME(dr_adjoint(t, y[0].idx), 3.0);
    CHK_STATUS(dr_reverse(t), DR_OK);
    for (int j = 0; j < 3; j++)
        CHK_CLOSE(dr_adjoint(t, x[j].idx), 3.0 * Ja[j], 1e-14, 0);
    /* a seed on an intermediate node counts as well (here on x itself) */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, x[1].idx, 1.0), DR_OK);
    CHK_STATUS(dr_seed(t, y[1].idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_CLOSE(dr_adjoint(t, x[1].idx), 1.0 + Ja[1 * 3 + 1], 1e-14, 0);
    /* without dr_adjoints_clear a second sweep accumulates (documented) */
    double before = dr_adjoint(t, x[0].idx);
    CHK_STATUS(dr_reverse(t), DR_OK);
    assert_true(dr_adjoint(t, x[0].idx) != before);
    dr_tape_free(t);
}

/* A random program of ~20000 nodes mixing every kind of node. */
static dr_real random_program(dr_tape *t, chk_rng *r, size_t nin,
                              dr_real *in, size_t steps)
{
    dr_real *pool = malloc((nin + steps) * sizeof *pool);
    assert_non_null(pool);
    for (size_t i = 0; i < nin; i++)
        pool[i] = in[i] = dr_input(t, chk_rng_uniform(r, 0.5, 1.5));
    size_t np = nin;
    for (size_t s = 0; s < steps; s++) {
        dr_real a = pool[chk_rng_below(r, np)], b = pool[chk_rng_below(r, np)];
        dr_real v;
        switch (chk_rng_below(r, 8)) {
        case 0: v = dr_add(t, a, b); break;
        case 1: v = dr_mul(t, dr_sin(t, a), b); break;
        case 2: v = dr_tanh(t, dr_sub(t, a, b)); break;
        case 3: v = dr_div(t, a, dr_add(t, dr_const(2.0), dr_abs(t, b))); break;
        case 4: v = dr_hypot(t, a, b); break;
        case 5: v = dr_sigmoid(t, dr_mul(t, a, dr_const(0.5))); break;
        case 6: {
            dr_idx args[3] = {a.idx, b.idx, a.idx};
            double p[3] = {0.25, -0.5, 0.125};
            v.val = 0.375 * a.val - 0.5 * b.val;
            v.idx = dr_recordn(t, 3, args, p);
            break;
        }
        default:
            v.val = a.val * 0.5;
            v.idx = dr_record1(t, a.idx, 0.5);
            break;
        }
        pool[np++] = v;
    }
    /* the output sums the last few so many nodes are reached */
    dr_real y = dr_const(0.0);
    for (size_t i = np - 20; i < np; i++)
        y = dr_add(t, y, pool[i]);
    free(pool);
    return y;
}

static void test_repeated_sweeps_identical(void **state)
{
    (void)state;
    enum { NIN = 50, STEPS = 10000 };
    dr_tape *t = chk_tape_new();
    chk_rng r;
    chk_rng_seed(&r, 7);
    dr_real in[NIN];
    dr_real y = random_program(t, &r, NIN, in, STEPS);
    double g0[NIN], g[NIN];
    CHK_STATUS(dr_gradient(t, y, NIN, in, g0), DR_OK);
    bool any = false;
    for (int i = 0; i < NIN; i++)
        any |= g0[i] != 0.0;
    assert_true(any);
    for (int rep = 0; rep < 5; rep++) {
        CHK_STATUS(dr_gradient(t, y, NIN, in, g), DR_OK);
        assert_memory_equal(g, g0, sizeof g);
        /* the explicit route gives the same bits */
        CHK_STATUS(dr_adjoints_clear(t), DR_OK);
        CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        for (int i = 0; i < NIN; i++)
            CHK_SAME(dr_adjoint(t, in[i].idx), g0[i]);
    }
    /* re-recording the same program after a clear gives the same bits */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    chk_rng_seed(&r, 7);
    dr_real y2 = random_program(t, &r, NIN, in, STEPS);
    CHK_SAME(y2.val, y.val);
    CHK_STATUS(dr_gradient(t, y2, NIN, in, g), DR_OK);
    assert_memory_equal(g, g0, sizeof g);
    /* and on a fresh tape */
    dr_tape *t2 = chk_tape_new();
    chk_rng_seed(&r, 7);
    y2 = random_program(t2, &r, NIN, in, STEPS);
    CHK_STATUS(dr_gradient(t2, y2, NIN, in, g), DR_OK);
    assert_memory_equal(g, g0, sizeof g);
    dr_tape_free(t2);
    dr_tape_free(t);
}

/* Recording and sweeping the same program 1000 times: after the first cycle
   the tape's memory does not grow and the allocator is never called. */
static void test_clear_reuse_no_alloc(void **state)
{
    (void)state;
    enum { NIN = 20, STEPS = 3000, CYCLES = 1000 };
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    size_t bytes1 = 0, calls1 = 0, len1 = 0;
    double g1[NIN];
    dr_idx last_id = DR_NONE;
    for (int cyc = 0; cyc < CYCLES; cyc++) {
        chk_context("clear/reuse cycle %d", cyc);
        chk_rng r;
        chk_rng_seed(&r, 99);
        dr_real in[NIN];
        dr_real y = random_program(t, &r, NIN, in, STEPS);
        /* ids keep growing across clears */
        assert_true(in[0].idx > last_id);
        assert_true(y.idx > in[NIN - 1].idx);
        last_id = y.idx;
        double g[NIN];
        CHK_STATUS(dr_gradient(t, y, NIN, in, g), DR_OK);
        if (cyc == 0) {
            bytes1 = dr_tape_bytes(t);
            calls1 = al.calls;
            len1 = dr_tape_len(t);
            memcpy(g1, g, sizeof g);
            assert_true(bytes1 >= len1 * 24);
        } else {
            assert_int_equal(dr_tape_bytes(t), bytes1);
            assert_int_equal(al.calls, calls1);
            assert_int_equal(dr_tape_len(t), len1);
            assert_memory_equal(g, g1, sizeof g);
        }
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        assert_int_equal(dr_tape_len(t), 0);
        assert_int_equal(dr_tape_bytes(t), bytes1); /* memory is kept */
    }
    chk_context(NULL);
    assert_int_equal(al.calls, calls1);
    assert_int_equal(al.fails, 0);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    assert_int_equal(al.live_bytes, 0);
    assert_int_equal(al.bad_frees, 0);
    chk_alloc_uninstall();
}

/* Clearing keeps the memory but a bigger second program still works, and a
   smaller one afterwards needs no new memory. */
static void test_clear_then_grow(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    size_t sizes[] = {10, 100000, 500, 300000, 1};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        dr_real x = dr_input(t, 1.0);
        dr_real y = x;
        for (size_t i = 0; i < sizes[k]; i++)
            y = dr_add(t, y, x);
        assert_int_equal(dr_tape_len(t), sizes[k] + 1);
        double g = NAN;
        CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
        CHK_SAME(g, (double)(sizes[k] + 1));
        CHK_STATUS(dr_tape_clear(t), DR_OK);
    }
    dr_tape_free(t);
}

/* Recording more after a sweep, then sweeping again (the adjoint storage
   grows while keeping the earlier adjoints). */
static void test_record_after_sweep(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 2.0);
    dr_real y = dr_mul(t, x, x);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_SAME(dr_adjoint(t, x.idx), 4.0);
    /* grow the tape well past the adjoint array's size */
    dr_real z = y;
    for (int i = 0; i < 100000; i++)
        z = dr_add(t, z, dr_const(1.0));
    /* adjoints computed before are still readable, new nodes read 0 */
    CHK_SAME(dr_adjoint(t, x.idx), 4.0);
    CHK_SAME(dr_adjoint(t, z.idx), 0.0);
    double g = NAN;
    CHK_STATUS(dr_gradient(t, z, 1, &x, &g), DR_OK);
    CHK_SAME(g, 4.0);
    CHK_SAME(z.val, 100004.0);
    /* seed, record more, then sweep: the seed survives the growth */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    dr_real w = z;
    for (int i = 0; i < 300000; i++)
        w = dr_mul(t, w, dr_const(1.0));
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_SAME(dr_adjoint(t, x.idx), 4.0);
    CHK_SAME(dr_adjoint(t, w.idx), 0.0);
    dr_tape_free(t);
}

/* dr_recordn with n = 0, 1, 2, 3, 1000, DR_NONE and repeated arguments. */
static void check_recordn(size_t n, chk_rng *r)
{
    chk_context("dr_recordn with n = %zu", n);
    enum { NIN = 5 };
    dr_tape *t = chk_tape_new();
    dr_real in[NIN];
    for (int i = 0; i < NIN; i++)
        in[i] = dr_input(t, (double)i);
    dr_idx *args = malloc((n ? n : 1) * sizeof *args);
    double *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(args);
    assert_non_null(p);
    double want[NIN] = {0};
    for (size_t k = 0; k < n; k++) {
        /* about one in six arguments is a constant */
        uint64_t j = chk_rng_below(r, NIN + 1);
        args[k] = j < NIN ? in[j].idx : DR_NONE;
        p[k] = (double)((int)chk_rng_below(r, 17) - 8); /* exact sums */
        if (j < NIN)
            want[j] += p[k];
    }
    if (n >= 2) { /* make sure a repeat is present */
        args[1] = args[0];
        p[1] = 3.0;
        for (int i = 0; i < NIN; i++)
            want[i] = 0;
        for (size_t k = 0; k < n; k++)
            for (int i = 0; i < NIN; i++)
                if (args[k] == in[i].idx)
                    want[i] += p[k];
    }
    size_t len = dr_tape_len(t);
    dr_idx y = dr_recordn(t, n, args, p);
    assert_true(y != DR_NONE);
    assert_true(y > in[NIN - 1].idx);
    assert_int_equal(dr_tape_len(t), len + 1);
    /* the caller's arrays are copied: changing them now changes nothing */
    for (size_t k = 0; k < n; k++)
        p[k] = 1e300;
    CHK_STATUS(dr_seed(t, y, 2.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    for (int i = 0; i < NIN; i++)
        CHK_SAME(dr_adjoint(t, in[i].idx), 2.0 * want[i]);
    CHK_SAME(dr_adjoint(t, y), 2.0);
    /* used as an argument of an ordinary node */
    dr_real yv = {1.0, y};
    dr_real z = dr_mul(t, yv, dr_const(-1.5));
    double g[NIN];
    CHK_STATUS(dr_gradient(t, z, NIN, in, g), DR_OK);
    for (int i = 0; i < NIN; i++)
        CHK_CLOSE(g[i], -1.5 * want[i], 0, 0); /* 0 == -0 here */
    CHK_STATUS(dr_tape_status(t), DR_OK);
    free(args);
    free(p);
    dr_tape_free(t);
}

static void test_recordn(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 3);
    const size_t ns[] = {0, 1, 2, 3, 4, 17, 1000, 100000};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int rep = 0; rep < 3; rep++)
            check_recordn(ns[i], &r);
    chk_context(NULL);
    /* n = 0 may take NULL arrays */
    dr_tape *t = chk_tape_new();
    dr_idx y = dr_recordn(t, 0, NULL, NULL);
    assert_true(y != DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* dr_record0/1/2 as a code generator would use them. */
static void test_record_012(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_idx a = dr_record0(t), b = dr_record0(t);
    assert_true(a != DR_NONE && b > a);
    dr_idx c = dr_record1(t, a, 3.0);               /* c = 3a           */
    dr_idx d = dr_record2(t, c, 2.0, b, -1.0);      /* d = 2c - b       */
    dr_idx e = dr_record2(t, d, 0.5, d, 0.25);      /* same arg twice   */
    dr_idx f = dr_record2(t, DR_NONE, 9.0, e, 4.0); /* constant arg     */
    dr_idx h = dr_record1(t, DR_NONE, 1.0);         /* only a constant  */
    assert_true(c > b && d > c && e > d && f > e && h > f);
    assert_int_equal(dr_tape_len(t), 7);
    CHK_STATUS(dr_seed(t, f, 1.0), DR_OK);
    CHK_STATUS(dr_seed(t, h, 5.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    /* df/de = 4, de/dd = 0.75, dd/dc = 2, dc/da = 3, dd/db = -1 */
    CHK_SAME(dr_adjoint(t, e), 4.0);
    CHK_SAME(dr_adjoint(t, d), 3.0);
    CHK_SAME(dr_adjoint(t, c), 6.0);
    CHK_SAME(dr_adjoint(t, a), 18.0);
    CHK_SAME(dr_adjoint(t, b), -3.0);
    CHK_SAME(dr_adjoint(t, h), 5.0);
    CHK_SAME(dr_adjoint(t, DR_NONE), 0.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* 10^6 nodes and more, spanning many chunks. */
static void test_large_tapes(void **state)
{
    (void)state;
    enum { N = 340000 };
    dr_tape *t = chk_tape_new();
    dr_real *x = malloc(N * sizeof *x);
    double *g = malloc(N * sizeof *g);
    assert_non_null(x);
    assert_non_null(g);
    /* y = sum (i + 1) x_i: 3N - 1 nodes */
    dr_real y = dr_const(0.0);
    for (int i = 0; i < N; i++) {
        x[i] = dr_input(t, 1.0 / (i + 1));
        y = dr_add(t, y, dr_mul(t, x[i], dr_const((double)(i + 1))));
    }
    assert_int_equal(dr_tape_len(t), 3 * (size_t)N);
    assert_true(dr_tape_bytes(t) >= 3 * (size_t)N * 24); /* 24-byte nodes */
    CHK_CLOSE(y.val, (double)N, 1e-12, 0);
    CHK_STATUS(dr_gradient(t, y, N, x, g), DR_OK);
    for (int i = 0; i < N; i++)
        if (g[i] != (double)(i + 1))
            CHK_SAME(g[i], (double)(i + 1));
    free(x);
    free(g);
    dr_tape_free(t);

    /* a long chain across every chunk boundary: x_{k+1} = x_k * c */
    t = chk_tape_new();
    dr_real x0 = dr_input(t, 1.0), v = x0;
    const double c = 1.000001;
    for (int k = 0; k < 2000000; k++)
        v = dr_mul(t, v, dr_const(c));
    assert_int_equal(dr_tape_len(t), 2000001);
    double gv = NAN;
    CHK_STATUS(dr_gradient(t, v, 1, &x0, &gv), DR_OK);
    CHK_CLOSE(gv, pow(c, 2e6), 1e-9, 0);
    CHK_SAME(gv, v.val); /* the same products, in the same order */
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* dr_tape_len and dr_tape_bytes. */
static void test_counters(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    assert_int_equal(dr_tape_len(t), 0);
    size_t b0 = dr_tape_bytes(t);
    assert_true(b0 > 0);
    dr_real x = dr_input(t, 1.0);
    assert_int_equal(dr_tape_len(t), 1);
    assert_true(dr_tape_bytes(t) > b0);
    dr_real c = dr_const(2.0);
    dr_real k = dr_mul(t, c, c); /* constants: nothing recorded */
    assert_int_equal(k.idx, DR_NONE);
    assert_int_equal(dr_tape_len(t), 1);
    dr_real y = dr_mul(t, x, c);
    (void)y;
    assert_int_equal(dr_tape_len(t), 2);
    for (int i = 0; i < 10000; i++)
        x = dr_sin(t, x);
    assert_int_equal(dr_tape_len(t), 10002);
    size_t b1 = dr_tape_bytes(t);
    assert_true(b1 >= 10002 * 24);
    /* a sweep adds the adjoint array to the bytes held */
    double g;
    CHK_STATUS(dr_gradient(t, x, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0);
    assert_true(dr_tape_bytes(t) >= b1 + 10002 * sizeof(double));
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(dr_tape_len(t), 0);
    dr_tape_free(t);
}

/* Ids: distinct and increasing in recording order, and across clears. */
static void test_ids_monotonic(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_idx last = DR_NONE;
    for (int cyc = 0; cyc < 50; cyc++) {
        dr_real x = dr_input(t, 1.0);
        assert_true(x.idx > last);
        last = x.idx;
        for (int i = 0; i < 37 * cyc; i++) {
            x = dr_exp(t, dr_neg(t, x));
            assert_true(x.idx > last);
            last = x.idx;
        }
        CHK_STATUS(dr_tape_clear(t), DR_OK);
    }
    dr_tape_free(t);
}

/* Random programs over a window of the last few values, so that a node's
   adjoint is read one, two or three nodes after it was stored, often after
   being stored again (the patterns the sweep carries in registers), and
   every argument shape occurs: both the same, one constant, one-argument
   nodes.  The gradient's product with a random direction must equal the
   forward-mode derivative along it, computed beside the recording. */
static void test_short_range_patterns(void **state)
{
    (void)state;
    /* short programs: the operations shrink derivatives, and a test whose
       derivatives have all vanished could not fail */
    enum { NIN = 3, STEPS = 40, WIN = 4 };
    chk_rng rng;
    chk_rng_seed(&rng, 77);
    int live = 0;
    for (int prog = 0; prog < 2000; prog++) {
        chk_context("program %d", prog);
        dr_tape *t = chk_tape_new();
        static dr_real v[NIN + STEPS];
        static double d[NIN + STEPS];
        double dir[NIN], g[NIN];
        for (size_t i = 0; i < NIN; i++) {
            v[i] = dr_input(t, chk_rng_uniform(&rng, 0.5, 1.5));
            dir[i] = chk_rng_uniform(&rng, -1.0, 1.0);
            d[i] = dir[i];
        }
        for (size_t n = NIN; n < NIN + STEPS; n++) {
            size_t i = n - 1 - chk_rng_below(&rng, WIN < n ? WIN : n);
            size_t j = n - 1 - chk_rng_below(&rng, WIN < n ? WIN : n);
            dr_real a = v[i], b = v[j];
            double da = d[i], db = d[j];
            if (chk_rng_below(&rng, 8) == 0) {
                b = dr_const(0.75);
                db = 0.0;
            }
            /* keep the values near 1 so that nothing overflows; cases 4
               and 5 record one node, the others two */
            switch (chk_rng_below(&rng, 6)) {
            case 4:
                v[n] = dr_add(t, a, b);
                d[n] = da + db;
                break;
            case 5:
                v[n] = dr_sub(t, a, b);
                d[n] = da - db;
                break;
            case 0:
                v[n] = dr_mul(t, dr_add(t, a, b), dr_const(0.5));
                d[n] = 0.5 * (da + db);
                break;
            case 1:
                v[n] = dr_add(t, dr_mul(t, a, b), dr_const(0.25));
                v[n] = dr_mul(t, v[n], dr_const(0.8));
                d[n] = 0.8 * (da * b.val + a.val * db);
                break;
            case 2:
                v[n] = dr_sub(t, dr_mul(t, a, dr_const(1.5)), dr_mul(t, b, dr_const(0.5)));
                d[n] = 1.5 * da - 0.5 * db;
                break;
            default:
                v[n] = dr_mul(t, dr_neg(t, dr_add(t, a, b)), dr_const(0.5));
                d[n] = -0.5 * (da + db);
                break;
            }
        }
        dr_real y = v[NIN + STEPS - 1];
        CHK_STATUS(dr_gradient(t, y, NIN, v, g), DR_OK);
        double dot = 0.0, mag = 0.0;
        for (size_t i = 0; i < NIN; i++) {
            dot += g[i] * dir[i];
            mag += fabs(g[i] * dir[i]);
        }
        CHK_ABS(dot, d[NIN + STEPS - 1], 1e-12 * (1.0 + mag));
        live += fabs(d[NIN + STEPS - 1]) > 1e-3;
        dr_tape_free(t);
    }
    assert_true(live > 500);
}

/* A random program for test_gradient_paths: inputs interleaved with
   operations (so some inputs lead their chunk and some do not), n-ary
   nodes among them, and y picked anywhere (nodes after it add nothing). */
static dr_real gradient_program(dr_tape *t, chk_rng *rng, size_t steps,
                                dr_real *x, size_t *nx, size_t maxx)
{
    dr_real pool[64];
    size_t np = 0;
    *nx = 0;
    dr_real y = dr_const(0.0);
    size_t at = chk_rng_below(rng, steps + 1);
    for (size_t s = 0; s <= steps; s++) {
        dr_real v;
        size_t k = chk_rng_below(rng, 8);
        if (np < 2 || (k == 0 && *nx < maxx)) {
            v = dr_input(t, chk_rng_uniform(rng, 0.5, 1.5));
            if (*nx < maxx)
                x[(*nx)++] = v;
        } else {
            dr_real a = pool[chk_rng_below(rng, np)];
            dr_real b = pool[chk_rng_below(rng, np)];
            if (k == 1) {
                dr_idx args[3] = {a.idx, b.idx, a.idx};
                double parts[3] = {0.5, -0.25, 0.125};
                v = (dr_real){a.val, dr_recordn(t, 3, args, parts)};
            } else if (k < 5) {
                v = dr_mul(t, a, dr_add(t, b, dr_const(0.25)));
            } else {
                v = dr_sub(t, dr_mul(t, a, dr_const(0.9)), b);
            }
        }
        pool[np++ % 64] = v;
        if (np > 64)
            np = 64;
        if (s == at)
            y = v;
    }
    return y;
}

/* dr_gradient's path for sequential tapes against the general one
   (dr_vjp: clear, seed, dr_reverse), on small tapes (its own loop) and
   large ones (several chunks), with constants and DR_NONE among the x,
   and its error paths: nothing is written into g and the tape stays
   usable. */
static void test_gradient_paths(void **state)
{
    (void)state;
    chk_rng rng;
    chk_rng_seed(&rng, 91);
    dr_tape *t = chk_tape_new();
    const size_t sizes[] = {0, 1, 3, 10, 60, 70, 300, 5000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int rep = 0; rep < 20; rep++) {
            chk_context("size %zu, rep %d", sizes[si], rep);
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            dr_real x[18];
            size_t nx;
            dr_real y = gradient_program(t, &rng, sizes[si], x, &nx, 16);
            x[nx++] = dr_const(2.0);
            x[nx++] = x[0];
            double g[18], want[18], ybar = 1.0;
            CHK_STATUS(dr_vjp(t, 1, &y, &ybar, nx, x, want), DR_OK);
            CHK_STATUS(dr_gradient(t, y, nx, x, g), DR_OK);
            for (size_t i = 0; i < nx; i++) {
                CHK_SAME(g[i], want[i]);
                CHK_SAME(dr_adjoint(t, x[i].idx), want[i]);
            }
            /* again on the same tape: the same */
            CHK_STATUS(dr_gradient(t, y, nx, x, g), DR_OK);
            for (size_t i = 0; i < nx; i++)
                CHK_SAME(g[i], want[i]);
        }
    chk_context(NULL);
    /* errors: an x or y not on the tape, NULLs; g untouched */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real a = dr_input(t, 2.0), b = dr_input(t, 3.0);
    dr_real y = dr_mul(t, a, b);
    dr_real x[2] = {a, b}, bad[2] = {a, {1.0, a.idx + 1000}};
    double g[2] = {7.0, 7.0};
    CHK_STATUS(dr_gradient(t, y, 2, bad, g), DR_EINVAL);
    CHK_SAME(g[0], 7.0);
    CHK_SAME(g[1], 7.0);
    dr_real ybad = {1.0, y.idx + 1};
    CHK_STATUS(dr_gradient(t, ybad, 2, x, g), DR_EINVAL);
    CHK_SAME(g[0], 7.0);
    CHK_STATUS(dr_gradient(NULL, y, 2, x, g), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, y, 2, NULL, g), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, y, 2, x, NULL), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, y, 0, NULL, NULL), DR_OK);
    /* a constant y: every g is 0 */
    CHK_STATUS(dr_gradient(t, dr_const(1.0), 2, x, g), DR_OK);
    CHK_SAME(g[0], 0.0);
    CHK_SAME(g[1], 0.0);
    CHK_STATUS(dr_gradient(t, y, 2, x, g), DR_OK);
    CHK_SAME(g[0], 3.0);
    CHK_SAME(g[1], 2.0);
    /* a stale id after a clear; an empty tape */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 2, x, g), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, dr_const(1.0), 0, NULL, NULL), DR_OK);
    dr_real none = dr_const(1.0);
    CHK_STATUS(dr_gradient(t, none, 1, &none, g), DR_OK);
    CHK_SAME(g[0], 0.0);
    /* a sticky error is reported (the general path) */
    a = dr_input(t, 1.0);
    (void)dr_add(t, a, bad[1]);
    CHK_STATUS(dr_gradient(t, a, 1, &a, g), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    a = dr_input(t, 1.0);
    CHK_STATUS(dr_gradient(t, dr_mul(t, a, a), 1, &a, g), DR_OK);
    CHK_SAME(g[0], 2.0);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sharing_chain, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_sharing_chain_variants, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_diamond_fan_out, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_jacobian, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_vjp_multi_seed, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_repeated_sweeps_identical, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_clear_reuse_no_alloc, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_clear_then_grow, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_record_after_sweep, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_recordn, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_record_012, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_large_tapes, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_counters, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_ids_monotonic, chk_alloc_teardown),
        cmocka_unit_test(test_short_range_patterns),
        cmocka_unit_test_teardown(test_gradient_paths, chk_alloc_teardown),
    };
    return cmocka_run_group_tests_name("tape", tests, NULL, NULL);
}
