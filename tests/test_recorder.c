/*
 * test_recorder.c - inline recording through a dr_rec (dualrev.h): the same
 * nodes, ids, values and gradients as the tape calls, bit for bit, across
 * chunk boundaries (and far arguments in the test-far build), also with the
 * tape's own calls in between; what a tape with an open recorder refuses; every error path (NULLs, ids not on the tape, a
 * recorder that failed to open, out of memory) gives constants and a sticky
 * status, and leaks nothing; recorders on the child handles of a fork.
 */
#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One step of a random program over a pool of values, through the tape
   calls (r == NULL) or a recorder: the operation and its arguments are
   drawn from the seed, constants in every argument position included. */
static dr_real step(dr_tape *t, dr_rec *r, chk_rng *rng, const dr_real *pool,
                    size_t n)
{
    dr_real a = pool[chk_rng_below(rng, n)], b = pool[chk_rng_below(rng, n)];
    if (chk_rng_below(rng, 5) == 0)
        a = dr_const(a.val);
    if (chk_rng_below(rng, 5) == 0)
        b = dr_const(b.val);
    double da = chk_rng_uniform(rng, -1.0, 1.0);
    double db = chk_rng_uniform(rng, -1.0, 1.0);
    switch (chk_rng_below(rng, 7)) {
    case 0:
        return r ? dr_rec_add(r, a, b) : dr_add(t, a, b);
    case 1:
        return r ? dr_rec_sub(r, a, b) : dr_sub(t, a, b);
    case 2:
        return r ? dr_rec_mul(r, a, b) : dr_mul(t, a, b);
    case 3: /* keep the divisor away from 0 */
        b.val = 1.5 + b.val * b.val;
        return r ? dr_rec_div(r, a, b) : dr_div(t, a, b);
    case 4:
        return r ? dr_rec_neg(r, a) : dr_neg(t, a);
    case 5: /* (dr_record1 of a constant would record an argument-less
               node; the recorder's, like an operation, records nothing) */
        if (r)
            return dr_rec_record1(r, a.val * 0.5, a, da);
        if (a.idx == DR_NONE)
            return dr_const(a.val * 0.5);
        return (dr_real){a.val * 0.5, dr_record1(t, a.idx, da)};
    default:
        if (r)
            return dr_rec_record2(r, a.val - b.val, a, da, b, db);
        if (a.idx == DR_NONE && b.idx == DR_NONE)
            return dr_const(a.val - b.val);
        return (dr_real){a.val - b.val, dr_record2(t, a.idx, da, b.idx, db)};
    }
}

/* Record the same program on two tapes, one through the calls, one
   through a recorder (ended and begun again every `reopen` steps), and
   compare everything. */
static void check_same_program(size_t steps, size_t reopen, bool mix,
                               uint64_t seed)
{
    chk_context("steps=%zu reopen=%zu mix=%d", steps, reopen, (int)mix);
    chk_rng mixer;
    chk_rng_seed(&mixer, seed + 2);
    enum { NIN = 40 };
    dr_tape *t1 = chk_tape_new(), *t2 = chk_tape_new();
    dr_real *p1 = malloc((NIN + steps) * sizeof *p1);
    dr_real *p2 = malloc((NIN + steps) * sizeof *p2);
    assert_non_null(p1);
    assert_non_null(p2);
    chk_rng g1, g2;
    chk_rng_seed(&g1, seed);
    for (size_t i = 0; i < NIN; i++) {
        double v = chk_rng_uniform(&g1, -2.0, 2.0);
        p1[i] = dr_input(t1, v);
        p2[i] = dr_input(t2, v);
    }
    chk_rng_seed(&g1, seed + 1);
    chk_rng_seed(&g2, seed + 1);
    dr_rec r;
    CHK_STATUS(dr_rec_begin(t2, &r), DR_OK);
    for (size_t i = 0; i < steps; i++) {
        /* the window of recent values keeps the program from growing
           without bound, while older ones are still used now and then */
        size_t n = NIN + i;
        p1[n] = step(t1, NULL, &g1, p1, n);
        /* a fifth of the steps through the tape's calls while the recorder
           is open: they take the cursor back and the recorder borrows it
           again, and ids of either are arguments of the other */
        bool by_call = mix && chk_rng_below(&mixer, 5) == 0;
        p2[n] = step(t2, by_call ? NULL : &r, &g2, p2, n);
        CHK_SAME(p2[n].val, p1[n].val);
        /* (each tape has ids of its own: compared from its first) */
        assert_true(p2[n].idx == DR_NONE ? p1[n].idx == DR_NONE
                                         : p2[n].idx - p2[0].idx == p1[n].idx - p1[0].idx);
        if (reopen && i % reopen == reopen - 1) {
            CHK_STATUS(dr_rec_end(&r), DR_OK);
            assert_int_equal(dr_tape_len(t2), dr_tape_len(t1));
            CHK_STATUS(dr_rec_begin(t2, &r), DR_OK);
        }
    }
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    assert_int_equal(dr_tape_len(t2), dr_tape_len(t1));
    /* the gradient of the sum of the last 16 values */
    dr_real y1 = dr_const(0.0), y2 = dr_const(0.0);
    for (size_t i = NIN + steps - 16; i < NIN + steps; i++) {
        y1 = dr_add(t1, y1, p1[i]);
        y2 = dr_add(t2, y2, p2[i]);
    }
    double gr1[NIN], gr2[NIN];
    CHK_STATUS(dr_gradient(t1, y1, NIN, p1, gr1), DR_OK);
    CHK_STATUS(dr_gradient(t2, y2, NIN, p2, gr2), DR_OK);
    for (size_t i = 0; i < NIN; i++)
        CHK_SAME(gr2[i], gr1[i]);
    CHK_STATUS(dr_tape_status(t2), DR_OK);
    free(p1);
    free(p2);
    dr_tape_free(t1);
    dr_tape_free(t2);
}

static void test_same_as_calls(void **state)
{
    (void)state;
    check_same_program(100, 0, false, 1);
    check_same_program(5000, 0, false, 2);   /* many chunks */
    check_same_program(3000, 7, false, 3);   /* ended and begun again */
    check_same_program(200000, 0, false, 4); /* chunks of the largest size */
    check_same_program(5000, 0, true, 5);    /* tape calls in between */
    check_same_program(3000, 11, true, 6);
}

/* The fold a dot product records: its gradient, and after a clear the
   same again (the recorder starts on the kept chunk). */
static void test_dot_product(void **state)
{
    (void)state;
    enum { N = 3000 };
    static double x[N], y[N], g[2 * N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (double)i + 1.0;
        y[i] = 2.0 * (double)i - 5.0;
    }
    dr_tape *t = chk_tape_new();
    for (int rep = 0; rep < 3; rep++) {
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        dr_idx first;
        CHK_STATUS(dr_input_range(t, 2 * N, &first), DR_OK);
        dr_rec r;
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
        dr_real acc = dr_const(0.0);
        for (size_t i = 0; i < N; i++) {
            dr_real xi = {x[i], first + (dr_idx)i};
            dr_real yi = {y[i], first + (dr_idx)(N + i)};
            acc = dr_rec_add(&r, acc, dr_rec_mul(&r, xi, yi));
        }
        CHK_STATUS(dr_rec_end(&r), DR_OK);
        /* N products and N sums (the first sum has a constant argument) */
        assert_int_equal(dr_tape_len(t), 2 * N + 2 * N);
        CHK_STATUS(dr_gradient_range(t, acc, first, 2 * N, g), DR_OK);
        for (size_t i = 0; i < N; i++) {
            CHK_SAME(g[i], y[i]);
            CHK_SAME(g[N + i], x[i]);
        }
    }
    dr_tape_free(t);
}

/* While a recorder is open, the tape's own recording calls still work
   (they take the cursor back, and the recorder borrows it again), but the
   calls that need the whole tape refuse: sweeping, seeding, clearing,
   forking, a second recorder. */
static void test_open_recorder(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 3.0);
    dr_rec r, r2;
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    CHK_STATUS(dr_rec_begin(t, &r2), DR_EBUSY); /* one at a time */
    dr_real y = dr_rec_mul(&r, x, x);           /* 9, dy/dx = 6 */
    dr_real z = dr_sin(t, y);                   /* a call on the recorder's id */
    assert_true(z.idx == y.idx + 1);
    dr_real w = dr_rec_mul(&r, z, x);           /* the recorder on the call's */
    assert_true(w.idx == z.idx + 1);
    dr_real u = dr_input(t, 2.0);
    dr_idx first;
    CHK_STATUS(dr_input_range(t, 3, &first), DR_OK);
    assert_true(first == u.idx + 1);
    dr_real v = dr_rec_add(&r, w, (dr_real){5.0, first + 2});
    v = dr_rec_mul(&r, v, u);
    /* an n-ary node over the recorder's ids, through the tape: q = v */
    dr_idx qargs[3] = {v.idx, y.idx, x.idx};
    double qparts[3] = {1.0, 0.0, 0.0};
    dr_real q = {v.val, dr_recordn(t, 3, qargs, qparts)};
    assert_true(q.idx == v.idx + 1);
    v = dr_rec_mul(&r, q, dr_const(1.0));
    CHK_STATUS(dr_reverse(t), DR_EBUSY);
    CHK_STATUS(dr_seed(t, v.idx, 1.0), DR_EBUSY);
    CHK_STATUS(dr_tape_clear(t), DR_EBUSY);
    double g;
    CHK_STATUS(dr_gradient(t, v, 1, &x, &g), DR_EBUSY);
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_EBUSY);
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    CHK_STATUS(dr_rec_end(&r), DR_EINVAL); /* not open any more */
    /* x, y, z, w, u, three inputs, the sum, two products and q */
    assert_int_equal(dr_tape_len(t), 12);
    /* v = (sin(x^2) x + in2) u: dv/dx = (cos(x^2) 2x x + sin(x^2)) u */
    CHK_STATUS(dr_gradient(t, v, 1, &x, &g), DR_OK);
    CHK_CLOSE(g, (cos(9.0) * 18.0 + sin(9.0)) * 2.0, 1e-14, 0);
    double gr[3];
    CHK_STATUS(dr_gradient_range(t, v, first, 3, gr), DR_OK);
    CHK_SAME(gr[0], 0.0);
    CHK_SAME(gr[2], 2.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* Bad arguments: NULLs, a recorder that failed to open, ids not on the
   tape (from before a clear, never recorded, beyond the end). */
static void test_errors(void **state)
{
    (void)state;
    dr_rec r;
    CHK_STATUS(dr_rec_begin(NULL, &r), DR_EINVAL);
    dr_real c = {2.0, 7};
    dr_real y = dr_rec_mul(&r, c, c); /* a closed recorder: constants */
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 4.0);
    CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
    CHK_STATUS(dr_rec_end(NULL), DR_EINVAL);
    assert_true(dr__rec_slow(NULL, 0, 1.0, DR_NONE, 0.0, DR__REC_GIVEN,
                             dr_const(0.0), dr_const(0.0)) == DR_NONE);

    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_rec_begin(t, NULL), DR_EINVAL);
    dr_real old = dr_input(t, 1.0);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real x = dr_input(t, 2.0);
    dr_real bad[] = {
        old,                              /* from before the clear */
        {1.0, x.idx + 1},                 /* not recorded yet      */
        {1.0, x.idx + 1000000},
        {1.0, INT64_MAX},
        {1.0, INT64_MIN},
        {1.0, -7},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        chk_context("bad id %zu", i);
        for (int pos = 0; pos < 3; pos++) {
            CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
            size_t len = dr_tape_len(t);
            dr_real a = pos == 1 ? x : bad[i], b = pos == 0 ? x : bad[i];
            y = pos == 2 ? dr_rec_neg(&r, bad[i]) : dr_rec_add(&r, a, b);
            assert_true(y.idx == DR_NONE);
            CHK_SAME(y.val, a.val + (pos == 2 ? -2.0 * a.val : b.val));
            CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
            assert_int_equal(dr_tape_len(t), len);
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            x = dr_input(t, 2.0);
        }
    }
    dr_tape_free(t);
}

/* Out of memory at every allocation of a recorder's program: constants
   and DR_ENOMEM, nothing leaked, and the nodes recorded before the failure
   still sweep. */
static void test_oom(void **state)
{
    (void)state;
    chk_alloc al;
    for (size_t k = 1;; k++) {
        dr_tape *t = chk_oom_tape(&al, k);
        if (!t)
            continue;
        dr_real x = dr_input(t, 1.5);
        dr_rec r;
        dr_status sb = dr_rec_begin(t, &r);
        CHK_STATUS(sb, DR_OK);
        dr_real acc = x;
        for (int i = 0; i < 2000; i++)
            acc = dr_rec_add(&r, dr_rec_mul(&r, acc, dr_const(0.5)), x);
        dr_status se = dr_rec_end(&r);
        double g = -1.0;
        dr_status sg = dr_gradient(t, acc, 1, &x, &g);
        if (al.fails == 0) {
            CHK_STATUS(se, DR_OK);
            CHK_STATUS(sg, DR_OK);
            CHK_CLOSE(g, 2.0, 1e-12, 0); /* 1 + 0.5 + 0.25 + ... */
        } else {
            /* failed while recording, or later for the adjoints */
            assert_true(se == DR_ENOMEM || sg == DR_ENOMEM);
        }
        bool failed = al.fails > 0;
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
        if (!failed)
            break;
    }
}

/* Recorders on the child handles of a fork (one per child, each on its
   own thread's handle): the same gradient as the sequential recording. */
static void child_job(dr_tape *kid, size_t i, void *ctx)
{
    dr_real *xs = ctx;
    dr_rec r;
    if (dr_rec_begin(kid, &r) != DR_OK)
        return;
    dr_real acc = dr_const(0.0);
    for (size_t k = 0; k < 500; k++)
        acc = dr_rec_add(&r, acc, dr_rec_mul(&r, xs[i], xs[(i + k) % 4]));
    dr_rec_end(&r);
    xs[4 + i] = acc;
}

static void test_in_child_jobs(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real xs[8];
        for (size_t i = 0; i < 4; i++)
            xs[i] = dr_input(t, (double)i + 1.0);
        CHK_STATUS(dr_fork_run(t, 4, child_job, xs), DR_OK);
        dr_real y = dr_const(0.0);
        for (size_t i = 4; i < 8; i++)
            y = dr_add(t, y, xs[i]);
        double g[4];
        CHK_STATUS(dr_gradient(t, y, 4, xs, g), DR_OK);
        /* y = 125 * sum_i x_i * (x0 + x1 + x2 + x3) = 125 * S^2 */
        for (size_t i = 0; i < 4; i++)
            CHK_CLOSE(g[i], 250.0 * 10.0, 1e-12, 0);
        dr_tape_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_calls),
        cmocka_unit_test(test_dot_product),
        cmocka_unit_test(test_open_recorder),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
        cmocka_unit_test(test_in_child_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
