/*
 * test_external.c - dr_record_external: a user's function as one node.
 *
 * The function under test, f(x0, x1, x2) = (x0 x1, sin x0 + x2 x2, x1 / x2),
 * is also recorded operation by operation, so every derivative of a program
 * around the external node has a reference to rounding, besides finite
 * differences.  Its context counts the calls of its rules and of destroy.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-13

typedef struct counts {
    int reverse, forward, destroyed;
} counts;

static void f_values(const double *x, double *y)
{
    y[0] = x[0] * x[1];
    y[1] = sin(x[0]) + x[2] * x[2];
    y[2] = x[1] / x[2];
}

static void f_reverse(void *ctx, size_t n, const double *x, size_t m,
                      const double *y, const double *ybar, double *xbar)
{
    assert_int_equal(n, 3);
    assert_int_equal(m, 3);
    /* (atomic: in a parallel sweep rules run beside each other) */
    __atomic_fetch_add(&((counts *)ctx)->reverse, 1, __ATOMIC_RELAXED);
    xbar[0] += ybar[0] * x[1] + ybar[1] * cos(x[0]);
    xbar[1] += ybar[0] * x[0] + ybar[2] / x[2];
    xbar[2] += ybar[1] * 2.0 * x[2] - ybar[2] * y[2] / x[2];
}

static void f_forward(void *ctx, size_t n, const double *x, const double *xdot,
                      size_t m, const double *y, double *ydot)
{
    (void)n;
    (void)m;
    __atomic_fetch_add(&((counts *)ctx)->forward, 1, __ATOMIC_RELAXED);
    ydot[0] = x[1] * xdot[0] + x[0] * xdot[1];
    ydot[1] = cos(x[0]) * xdot[0] + 2.0 * x[2] * xdot[2];
    ydot[2] = xdot[1] / x[2] - y[2] / x[2] * xdot[2];
}

static void f_destroy(void *ctx)
{
    ((counts *)ctx)->destroyed++;
}

/* f of three recorded values, through the external node or op by op */
static void record_f(dr_tape *t, counts *c, bool external, bool forward,
                     const dr_real *x, dr_real *y)
{
    if (!external) {
        y[0] = dr_mul(t, x[0], x[1]);
        y[1] = dr_add(t, dr_sin(t, x[0]), dr_mul(t, x[2], x[2]));
        y[2] = dr_div(t, x[1], x[2]);
        return;
    }
    double xv[3] = {x[0].val, x[1].val, x[2].val}, yv[3];
    f_values(xv, yv);
    dr_external f = {c, f_reverse, forward ? f_forward : NULL, f_destroy, NULL};
    CHK_STATUS(dr_record_external(t, &f, 3, x, 3, yv, y), DR_OK);
}

/* a program around f: inputs feed f and the code after it, f's outputs are
   used twice and combined with each other */
static dr_real program(dr_tape *t, counts *c, bool external, bool forward,
                       const dr_real *in)
{
    dr_real a[3] = {dr_exp(t, in[0]), in[1], dr_add(t, in[2], in[0])}, y[3];
    record_f(t, c, external, forward, a, y);
    dr_real s = dr_mul(t, y[0], y[1]);
    s = dr_add(t, s, dr_sin(t, y[2]));
    s = dr_add(t, s, dr_mul(t, y[2], in[1]));
    return dr_sub(t, s, dr_mul(t, y[0], dr_const(0.25)));
}

static double program_value(const double *x, size_t n, void *ctx)
{
    (void)n;
    (void)ctx;
    double a[3] = {exp(x[0]), x[1], x[2] + x[0]}, y[3];
    f_values(a, y);
    return y[0] * y[1] + sin(y[2]) + y[2] * x[1] - y[0] * 0.25;
}

static const double X0[3] = {0.3, -1.2, 2.5};

static void test_gradient(void **state)
{
    (void)state;
    counts c = {0, 0, 0}, c_ref = {0, 0, 0};
    dr_tape *t = chk_tape_new(), *r = chk_tape_new();
    dr_real x[3], xr[3];
    CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
    CHK_STATUS(dr_inputs(r, 3, X0, xr), DR_OK);
    dr_real y = program(t, &c, true, true, x);
    dr_real yr = program(r, &c_ref, false, true, xr);
    CHK_SAME(y.val, yr.val);
    double g[3], gr[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_STATUS(dr_gradient(r, yr, 3, xr, gr), DR_OK);
    assert_int_equal(c.reverse, 1);
    for (size_t i = 0; i < 3; i++) {
        chk_context("x%zu", i);
        CHK_REL(g[i], gr[i], RTOL);
        CHK_DERIV(g[i], chk_fd_partial(program_value, NULL, 3, X0, i, 0), 1e-9);
    }
    /* a second sweep calls the rule again, with the same result */
    double g2[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g2), DR_OK);
    assert_int_equal(c.reverse, 2);
    for (size_t i = 0; i < 3; i++)
        CHK_SAME(g2[i], g[i]);
    /* a sweep that does not reach the outputs does not call it */
    dr_real z = dr_mul(t, x[0], x[1]);
    CHK_STATUS(dr_gradient(t, z, 3, x, g2), DR_OK);
    assert_int_equal(c.reverse, 2);
    assert_int_equal(c.destroyed, 0);
    dr_tape_free(t);
    dr_tape_free(r);
    assert_int_equal(c.destroyed, 1);
}

/* forward mode, the vector modes and the Jacobian in both directions, each
   against the op-by-op tape; the transpose identity on random vectors */
static void test_modes(void **state)
{
    (void)state;
    chk_rng rng;
    chk_rng_seed(&rng, 11);
    counts c = {0, 0, 0}, c_ref = {0, 0, 0};
    dr_tape *t = chk_tape_new(), *r = chk_tape_new();
    dr_real x[3], xr[3], a[3], ar[3], y[3], yr[3];
    CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
    CHK_STATUS(dr_inputs(r, 3, X0, xr), DR_OK);
    for (int i = 0; i < 3; i++) {
        a[i] = dr_sin(t, x[i]);
        ar[i] = dr_sin(r, xr[i]);
    }
    record_f(t, &c, true, true, a, y);
    record_f(r, &c_ref, false, true, ar, yr);
    double J[9], Jr[9];
    CHK_STATUS(dr_jacobian(t, 3, y, 3, x, J), DR_OK);
    CHK_STATUS(dr_jacobian(r, 3, yr, 3, xr, Jr), DR_OK);
    for (int i = 0; i < 9; i++)
        CHK_REL(J[i], Jr[i], RTOL);
    /* taller than wide (forward) and wider than tall (reverse) */
    double Jt[6], Jtr[6];
    CHK_STATUS(dr_jacobian(t, 3, y, 2, x, Jt), DR_OK);
    CHK_STATUS(dr_jacobian(r, 3, yr, 2, xr, Jtr), DR_OK);
    for (int i = 0; i < 6; i++)
        CHK_REL(Jt[i], Jtr[i], RTOL);
    CHK_STATUS(dr_jacobian(t, 2, y, 3, x, Jt), DR_OK);
    CHK_STATUS(dr_jacobian(r, 2, yr, 3, xr, Jtr), DR_OK);
    for (int i = 0; i < 6; i++)
        CHK_REL(Jt[i], Jtr[i], RTOL);
    for (size_t k = 1; k <= 5; k++) {
        chk_context("k %zu", k);
        double Xd[15], Yd[15], Ydr[15], Yb[15], Xb[15], Xbr[15];
        for (size_t i = 0; i < 3 * k; i++) {
            Xd[i] = chk_rng_uniform(&rng, -1, 1);
            Yb[i] = chk_rng_uniform(&rng, -1, 1);
        }
        CHK_STATUS(dr_jvp_vec(t, 3, y, 3, x, k, Xd, Yd), DR_OK);
        CHK_STATUS(dr_jvp_vec(r, 3, yr, 3, xr, k, Xd, Ydr), DR_OK);
        CHK_STATUS(dr_vjp_vec(t, 3, y, k, Yb, 3, x, Xb), DR_OK);
        CHK_STATUS(dr_vjp_vec(r, 3, yr, k, Yb, 3, xr, Xbr), DR_OK);
        for (size_t i = 0; i < 3 * k; i++) {
            CHK_REL(Yd[i], Ydr[i], RTOL);
            CHK_REL(Xb[i], Xbr[i], RTOL);
        }
        /* <ybar, J xdot> = <J^T ybar, xdot>, direction by direction */
        for (size_t j = 0; j < k; j++) {
            double lhs = 0, rhs = 0;
            for (size_t i = 0; i < 3; i++) {
                lhs += Yb[j * 3 + i] * Yd[i * k + j];
                rhs += Xb[j * 3 + i] * Xd[i * k + j];
            }
            CHK_REL(lhs, rhs, RTOL);
        }
    }
    assert_true(c.forward > 0);
    dr_tape_free(t);
    dr_tape_free(r);
    assert_int_equal(c.destroyed, 1);
}

/* without a forward rule: forward mode says so, reverse mode works */
static void test_no_forward(void **state)
{
    (void)state;
    counts c = {0, 0, 0};
    dr_tape *t = chk_tape_new();
    dr_real x[3], y[3];
    CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
    record_f(t, &c, true, false, x, y);
    double xd[3] = {1, 0, 0}, yd[3], J[9], Xb[6];
    CHK_STATUS(dr_jvp(t, 3, y, 3, x, xd, yd), DR_ENOTSUP);
    CHK_STATUS(dr_vjp_vec(t, 3, y, 2, (double[6]){1, 0, 0, 0, 1, 1}, 3, x, Xb),
               DR_OK);
    CHK_STATUS(dr_jacobian(t, 3, y, 3, x, J), DR_OK);
    CHK_REL(J[0], X0[1], RTOL);      /* dy0/dx0 */
    CHK_REL(J[3], cos(X0[0]), RTOL); /* dy1/dx0 */
    CHK_REL(Xb[3], cos(X0[0]), RTOL);
    assert_int_equal(c.forward, 0);
    dr_tape_free(t);
}

/* constant inputs get no adjoint and their values reach the rules; the
   outputs are ordinary values for everything recorded after them */
static void test_constants_and_recorder(void **state)
{
    (void)state;
    counts c = {0, 0, 0};
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, X0[1]);
    dr_real in[3] = {dr_const(X0[0]), x, dr_const(X0[2])}, y[3];
    dr_rec rec;
    CHK_STATUS(dr_rec_begin(t, &rec), DR_OK);
    dr_real x2 = dr_rec_mul(&rec, x, x);
    in[1] = x2;
    record_f(t, &c, true, true, in, y);
    dr_real s = dr_rec_add(&rec, y[0], dr_rec_mul(&rec, y[2], x));
    CHK_STATUS(dr_rec_end(&rec), DR_OK);
    double g;
    CHK_STATUS(dr_gradient(t, s, 1, &x, &g), DR_OK);
    /* s = X0[0] x^2 + (x^2 / X0[2]) x */
    double v = X0[1];
    CHK_REL(g, 2 * X0[0] * v + 3 * v * v / X0[2], RTOL);
    dr_tape_free(t);
}

static void test_destroy(void **state)
{
    (void)state;
    counts c = {0, 0, 0};
    dr_tape *t = chk_tape_new();
    dr_real x[3], y[3];
    for (int round = 1; round <= 3; round++) {
        CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
        record_f(t, &c, true, true, x, y);
        record_f(t, &c, true, true, y, y);
        assert_int_equal(c.destroyed, 2 * (round - 1));
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        assert_int_equal(c.destroyed, 2 * round);
    }
    /* no destroy: nothing to call */
    CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
    double yv[3];
    f_values(X0, yv);
    dr_external f = {&c, f_reverse, NULL, NULL, NULL};
    CHK_STATUS(dr_record_external(t, &f, 3, x, 3, yv, y), DR_OK);
    dr_tape_free(t);
    assert_int_equal(c.destroyed, 6);
}

static void test_errors(void **state)
{
    (void)state;
    counts c = {0, 0, 0};
    dr_tape *t = chk_tape_new();
    dr_real x[3], y[3];
    CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
    double yv[3] = {1, 2, 3};
    dr_external f = {&c, f_reverse, NULL, f_destroy, NULL};
    dr_external bad = {&c, NULL, NULL, f_destroy, NULL};
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_record_external(NULL, &f, 3, x, 3, yv, y), DR_EINVAL);
    CHK_STATUS(dr_record_external(t, NULL, 3, x, 3, yv, y), DR_EINVAL);
    CHK_STATUS(dr_record_external(t, &bad, 3, x, 3, yv, y), DR_EINVAL);
    CHK_STATUS(dr_record_external(t, &f, 3, NULL, 3, yv, y), DR_EINVAL);
    CHK_STATUS(dr_record_external(t, &f, 3, x, 3, NULL, y), DR_EINVAL);
    CHK_STATUS(dr_record_external(t, &f, 3, x, 3, yv, NULL), DR_EINVAL);
    CHK_STATUS(dr_record_external(t, &f, 3, x, 0, yv, y), DR_EINVAL);
    /* an id not on the tape: the outputs are constants with the values */
    dr_real stale[3] = {x[0], {1.0, x[2].idx + 1000}, x[2]};
    CHK_STATUS(dr_record_external(t, &f, 3, stale, 3, yv, y), DR_EINVAL);
    for (int i = 0; i < 3; i++) {
        CHK_SAME(y[i].val, yv[i]);
        assert_int_equal(y[i].idx, DR_NONE);
    }
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* forked: on the child handles, not the parent */
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    CHK_STATUS(dr_record_external(t, &f, 3, x, 3, yv, y), DR_EBUSY);
    dr_real yk[3];
    CHK_STATUS(dr_record_external(kids[0], &f, 3, x, 3, yv, yk), DR_OK);
    CHK_STATUS(dr_join(t), DR_OK);
    /* a joined child handle */
    CHK_STATUS(dr_record_external(kids[0], &f, 3, x, 3, yv, y), DR_EINVAL);
    /* order 2: recorded, with no second-order rule (and without a
       primal, no replay: test_replay_arrays) */
    dr_tape *t2 = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t2, 2), DR_OK);
    dr_real x2[3], y2[3];
    CHK_STATUS(dr_inputs(t2, 3, X0, x2), DR_OK);
    CHK_STATUS(dr_record_external(t2, &f, 3, x2, 3, yv, y2), DR_OK);
    double h[3], dir[3] = {1, 0, 0};
    CHK_STATUS(dr_hvp(t2, y2[0], 3, x2, dir, h), DR_ENOTSUP);
    dr_tape_free(t2);
    /* the tape still works; only the successful calls' contexts are freed */
    dr_real s = dr_add(t, yk[0], x[0]);
    double g;
    CHK_STATUS(dr_gradient(t, s, 1, x, &g), DR_OK);
    CHK_REL(g, 1.0 + X0[1], RTOL);
    dr_tape_free(t);
    assert_int_equal(c.destroyed, 2);
}

/* f recorded by parallel jobs on child handles: the same gradient as one
   job, every context freed, also those of forks never joined */
static void job(dr_tape *child, size_t i, void *ctx)
{
    counts *c = ctx;
    dr_real x[3];
    double xv[3] = {X0[0] + 0.1 * (double)i, X0[1], X0[2]};
    CHK_STATUS(dr_inputs(child, 3, xv, x), DR_OK);
    dr_real y[3];
    record_f(child, c, true, true, x, y);
}

static void test_fork_join(void **state)
{
    (void)state;
    counts c = {0, 0, 0};
    for (unsigned threads = 1; threads <= 2; threads++) {
        chk_context("threads %u", threads);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real x[3], a[3], y[3];
        CHK_STATUS(dr_inputs(t, 3, X0, x), DR_OK);
        dr_tape *kids[4];
        CHK_STATUS(dr_fork(t, 4, kids), DR_OK);
        dr_real outs[4][3];
        for (size_t i = 0; i < 4; i++) {
            for (int j = 0; j < 3; j++)
                a[j] = dr_mul(kids[i], x[j], dr_const(1.0 + 0.1 * (double)i));
            record_f(kids[i], &c, true, true, a, outs[i]);
        }
        CHK_STATUS(dr_join(t), DR_OK);
        dr_real s = dr_const(0.0);
        for (size_t i = 0; i < 4; i++)
            s = dr_add(t, s, dr_mul(t, outs[i][0], outs[i][2]));
        double g[3], gr[3];
        CHK_STATUS(dr_gradient(t, s, 3, x, g), DR_OK);
        /* the reference: the same jobs recorded one after the other */
        dr_tape *r = chk_tape_new();
        dr_real xr[3];
        CHK_STATUS(dr_inputs(r, 3, X0, xr), DR_OK);
        dr_real sr = dr_const(0.0);
        for (size_t i = 0; i < 4; i++) {
            for (int j = 0; j < 3; j++)
                a[j] = dr_mul(r, xr[j], dr_const(1.0 + 0.1 * (double)i));
            record_f(r, &c, false, true, a, y);
            sr = dr_add(r, sr, dr_mul(r, y[0], y[2]));
        }
        CHK_SAME(s.val, sr.val);
        CHK_STATUS(dr_gradient(r, sr, 3, xr, gr), DR_OK);
        for (int i = 0; i < 3; i++)
            CHK_REL(g[i], gr[i], RTOL);
        dr_tape_free(r);
        /* dr_fork_run's jobs, then a fork left open when the tape goes */
        CHK_STATUS(dr_fork_run(t, 3, job, &c), DR_OK);
        CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
        record_f(kids[1], &c, true, true, x, y);
        int before = c.destroyed;
        dr_tape_free(t);
        assert_int_equal(c.destroyed, before + 4 + 3 + 1);
    }
}

static void test_oom(void **state)
{
    (void)state;
    chk_alloc al;
    bool failed = false, succeeded = false;
    for (size_t k = 1; k < 40; k++) {
        dr_tape *t = chk_oom_tape(&al, k);
        if (!t)
            continue;
        counts c = {0, 0, 0};
        dr_real x[3], y[3];
        int recorded = 0;
        if (dr_inputs(t, 3, X0, x) == DR_OK) {
            for (int i = 0; i < 40; i++) {
                double yv[3];
                double xv[3] = {x[0].val, x[1].val, x[2].val};
                f_values(xv, yv);
                dr_external f = {&c, f_reverse, f_forward, f_destroy, NULL};
                dr_status st = dr_record_external(t, &f, 3, x, 3, yv, y);
                assert_true(st == DR_OK || st == DR_ENOMEM);
                if (st == DR_OK) {
                    recorded++;
                    memcpy(x, y, sizeof x);
                } else {
                    failed = true;
                    /* nothing lost: the tape records and sweeps on */
                    CHK_STATUS(dr_tape_status(t), DR_OK);
                    for (int j = 0; j < 3; j++)
                        assert_int_equal(y[j].idx, DR_NONE);
                }
            }
            succeeded |= recorded == 40;
        }
        dr_tape_free(t);
        chk_alloc_uninstall();
        assert_int_equal(al.live, 0);
        assert_int_equal(c.destroyed, recorded);
    }
    assert_true(failed);
    assert_true(succeeded);
}

/* an allocator whose memory holds a pattern: what a record's fields hold
   unless the library sets them */
static void *fill_malloc(size_t n, void *user)
{
    (void)user;
    void *p = malloc(n);
    if (p)
        memset(p, 0xbe, n);
    return p;
}
static void plain_free(void *p, void *user)
{
    (void)user;
    free(p);
}

static double stmt3(const void *ctx, size_t n, const double *x, double *d)
{
    (void)ctx, (void)n;
    d[0] = x[1] * x[2];
    d[1] = x[0] * x[2];
    d[2] = x[0] * x[1];
    return x[0] * x[1] * x[2];
}

/* records of an external call, a statement of three leaves and an n-ary
   node set every hook they lack to NULL (the arena does not zero what it
   hands out): the second-order drivers and the sparse walks, which read
   them, answer DR_ENOTSUP without calling one */
static void test_hooks_of_fresh_records(void **state)
{
    (void)state;
    CHK_STATUS(dr_set_allocator(fill_malloc, plain_free, NULL), DR_OK);
    for (int kind = 0; kind < 3; kind++) {
        chk_context("kind %d", kind);
        dr_tape *t = dr_tape_new();
        assert_non_null(t);
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[3];
        CHK_STATUS(dr_inputs(t, 3, (double[]){1.5, -0.5, 2.0}, x), DR_OK);
        dr_real y[3];
        counts c = {0}; /* (the call's context: as long as the tape) */
        if (kind == 0) {
            record_f(t, &c, true, false, x, y);
        } else if (kind == 1) {
            y[0] = dr_record_statement(t, stmt3, NULL, 3, x);
        } else {
            dr_idx ids[3] = {x[0].idx, x[1].idx, x[2].idx};
            y[0] = (dr_real){0.0, dr_recordn(t, 3, ids, (double[]){1, 2, 3})};
        }
        /* a value after the node, not through it: the walks over the
           log meet the node's entry all the same */
        dr_real z = dr_sin(t, x[0]);
        (void)y;
        dr_sparse H = {0};
        dr_status st = dr_sparse_hessian(t, z, 3, x, &H);
        assert_true(st == DR_ENOTSUP || st == DR_OK);
        dr_sparse_free(&H);
        double v[3] = {1, 0, 0}, hv[3];
        st = dr_hvp(t, z, 3, x, v, hv);
        assert_true(st == DR_ENOTSUP || st == DR_OK);
        double g[3];
        CHK_STATUS(dr_gradient(t, z, 3, x, g), DR_OK);
        dr_tape_free(t);
    }
    chk_context(NULL);
    CHK_STATUS(dr_set_allocator(NULL, NULL, NULL), DR_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradient),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_no_forward),
        cmocka_unit_test(test_constants_and_recorder),
        cmocka_unit_test(test_destroy),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_fork_join),
        cmocka_unit_test(test_hooks_of_fresh_records),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
