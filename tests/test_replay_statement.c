/*
 * test_replay_statement.c - statements the caller's code evaluates
 * (dr_record_statement, dualrev/external.h): the gradient and the forward
 * product equal the operations' one by one and finite differences;
 * replayed at many points (alone, among operations, with an open
 * recorder, inside forked jobs on two threads) the tape is a fresh
 * recording's bit for bit; no second order; a leaf given another value
 * than its node's does not replay; constants; every error.
 */
#include "check.h"

#include <math.h>
#include <string.h>

/* s(x) = x0 x1 + sin(x2) x0 / (1 + c x1) + x0 over the leaves
   {x0, x1, x2, c, x0}: x0 twice (its partials added), c a constant */
static double stmt(const void *ctx, size_t n, const double *x, double *d)
{
    (void)ctx;
    assert_int_equal(n, 5);
    double q = 1.0 + x[3] * x[1], s2 = sin(x[2]);
    d[0] = x[1] + s2 / q;
    d[1] = x[0] - s2 * x[0] * x[3] / (q * q);
    d[2] = cos(x[2]) * x[0] / q;
    d[3] = -s2 * x[0] * x[1] / (q * q);
    d[4] = 1.0;
    return x[0] * x[1] + s2 * x[0] / q + x[4];
}

/* the same with the tape's operations */
static dr_real stmt_ops(dr_tape *t, const dr_real *x, dr_real c)
{
    dr_real q = dr_add(t, dr_const(1.0), dr_mul(t, c, x[1]));
    dr_real a = dr_div(t, dr_mul(t, dr_sin(t, x[2]), x[0]), q);
    return dr_add(t, dr_add(t, dr_mul(t, x[0], x[1]), a), x[0]);
}

static dr_real record_stmt(dr_tape *t, const dr_real *x, dr_real c)
{
    dr_real leaves[5] = {x[0], x[1], x[2], c, x[0]};
    return dr_record_statement(t, stmt, NULL, 5, leaves);
}

/* a step of a linear recurrence, ctx its time step: v' = v + dt (-0.5 p -
   0.2 v), over {v, p} */
static double step_v(const void *ctx, size_t n, const double *x, double *d)
{
    (void)n;
    double dt = *(const double *)ctx;
    d[0] = 1.0 - 0.2 * dt;
    d[1] = -0.5 * dt;
    return x[0] + dt * (-0.5 * x[1] - 0.2 * x[0]);
}

static const double dt = 0.05;

/* a b + sin(a) over {a, b}; over {a, a}: a^2 + sin(a) (one argument) */
static double two(const void *ctx, size_t n, const double *x, double *d)
{
    (void)ctx, (void)n;
    d[0] = x[1] + cos(x[0]);
    d[1] = x[0];
    return x[0] * x[1] + sin(x[0]);
}

/* a program of statements and operations over three inputs: statements
   of three arguments (an n-ary node), two and one (a node of two) */
static dr_real program(dr_tape *t, const dr_real *x)
{
    dr_real c = dr_const(0.7);
    dr_real s = record_stmt(t, x, c);
    s = dr_record_statement(t, two, NULL, 2, (dr_real[]){s, x[2]});
    s = dr_record_statement(t, two, NULL, 2, (dr_real[]){s, s});
    dr_real v = x[1], p = x[2];
    for (int k = 0; k < 40; k++) {
        v = dr_record_statement(t, step_v, &dt, 2, (dr_real[]){v, p});
        p = dr_add(t, p, dr_mul(t, dr_const(dt), v));
    }
    return dr_add(t, dr_mul(t, s, dr_cos(t, v)), dr_tanh(t, p));
}

/* s's partials at x against the operations' and central differences */
static double stmt_at(const double *x, size_t n, void *ctx)
{
    (void)n, (void)ctx;
    double d[5];
    return stmt(NULL, 5, (double[]){x[0], x[1], x[2], 0.7, x[0]}, d);
}

/* a node's value as the tape holds it */
static double value(const dr_tape *t, dr_idx id)
{
    double v = NAN;
    CHK_STATUS(dr_value(t, id, &v), DR_OK);
    return v;
}

/* a tape of order 2 and its three inputs, at the first point */
static dr_tape *tape2(dr_real *x)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_inputs(t, 3, (double[]){0.8, -0.4, 1.3}, x), DR_OK);
    return t;
}

static void test_gradient(void **state)
{
    (void)state;
    const double xv[3] = {0.8, -0.4, 1.3};
    dr_tape *t = chk_tape_new();
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, xv, x), DR_OK);
    dr_real y = record_stmt(t, x, dr_const(0.7));
    assert_int_equal(dr_tape_len(t), 4); /* one node */
    dr_real z = stmt_ops(t, x, dr_const(0.7));
    CHK_CLOSE(y.val, z.val, 1e-15, 0.0);
    double g[3], h[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_STATUS(dr_gradient(t, z, 3, x, h), DR_OK);
    for (size_t i = 0; i < 3; i++) {
        chk_context("input %zu", i);
        CHK_CLOSE(g[i], h[i], 1e-13, 1e-15);
        CHK_DERIV(g[i], chk_fd_partial(stmt_at, NULL, 3, xv, i, 0.0), 1e-7);
    }
    chk_context(NULL);
    /* forward mode through the node */
    double xd[3] = {0.3, -1.1, 0.6}, yd, zd;
    CHK_STATUS(dr_jvp(t, 1, &y, 3, x, xd, &yd), DR_OK);
    CHK_STATUS(dr_jvp(t, 1, &z, 3, x, xd, &zd), DR_OK);
    CHK_CLOSE(yd, zd, 1e-13, 1e-15);
    /* vector mode through the node: two directions forward, two
       cotangents back (k-wide sweeps), against the operations' */
    double X[6] = {0.3, -1.1, 0.6, 1.0, 0.0, -2.0}, Yy[2], Yz[2];
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 3, x, 2, X, Yy), DR_OK);
    CHK_STATUS(dr_jvp_vec(t, 1, &z, 3, x, 2, X, Yz), DR_OK);
    double W[2] = {1.5, -0.25}, Gy[6], Gz[6];
    CHK_STATUS(dr_vjp_vec(t, 1, &y, 2, W, 3, x, Gy), DR_OK);
    CHK_STATUS(dr_vjp_vec(t, 1, &z, 2, W, 3, x, Gz), DR_OK);
    for (size_t i = 0; i < 2; i++)
        CHK_CLOSE(Yy[i], Yz[i], 1e-13, 1e-15);
    for (size_t i = 0; i < 6; i++)
        CHK_CLOSE(Gy[i], Gz[i], 1e-13, 1e-15);
    dr_tape_free(t);
}

typedef struct results {
    double y, g[3], jv;
} results;

static void read_results(dr_tape *t, const dr_real *x, dr_real y, results *r)
{
    r->y = value(t, y.idx);
    CHK_STATUS(dr_gradient(t, y, 3, x, r->g), DR_OK);
    CHK_STATUS(dr_jvp(t, 1, &y, 3, x, (double[]){1.0, -0.5, 0.25}, &r->jv),
               DR_OK);
}

static void check_same(const results *a, const results *b)
{
    CHK_SAME(a->y, b->y);
    for (size_t i = 0; i < 3; i++)
        CHK_SAME(a->g[i], b->g[i]);
    CHK_SAME(a->jv, b->jv);
}

/* the program recorded afresh at xv, its results */
static void fresh(const double *xv, results *r)
{
    dr_tape *f = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(f, 2), DR_OK);
    dr_real x[3];
    CHK_STATUS(dr_inputs(f, 3, xv, x), DR_OK);
    read_results(f, x, program(f, x), r);
    dr_tape_free(f);
}

static void test_replay_bitwise(void **state)
{
    (void)state;
    chk_rng rng;
    chk_rng_seed(&rng, 11);
    dr_real x[3];
    dr_tape *t = tape2(x);
    dr_real y = program(t, x);
    for (int k = 0; k < 25; k++) {
        chk_context("point %d", k);
        double xv[3];
        for (size_t i = 0; i < 3; i++)
            xv[i] = chk_rng_uniform(&rng, -1.5, 1.5);
        CHK_STATUS(dr_replay(t, 3, x, xv), DR_OK);
        results a, b;
        read_results(t, x, y, &a);
        fresh(xv, &b);
        check_same(&a, &b);
    }
    chk_context(NULL);
    dr_tape_free(t);
}

/* through an open recorder, between its inline operations */
static void test_open_recorder(void **state)
{
    (void)state;
    dr_real x[3];
    dr_tape *t = tape2(x);
    dr_rec r;
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    dr_real a = dr_rec_mul(&r, x[0], x[1]);
    dr_real s = record_stmt(t, (dr_real[]){a, x[1], x[2]}, dr_const(0.7));
    dr_real y = dr_rec_add(&r, s, dr_rec_mul(&r, s, x[2]));
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    double g[3], h[3];
    CHK_STATUS(dr_replay(t, 3, x, (double[]){0.5, 0.9, -0.2}), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    dr_tape *f = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(f, 2), DR_OK);
    dr_real u[3];
    CHK_STATUS(dr_inputs(f, 3, (double[]){0.5, 0.9, -0.2}, u), DR_OK);
    dr_real fa = dr_mul(f, u[0], u[1]);
    dr_real fs = record_stmt(f, (dr_real[]){fa, u[1], u[2]}, dr_const(0.7));
    dr_real fy = dr_add(f, fs, dr_mul(f, fs, u[2]));
    CHK_STATUS(dr_gradient(f, fy, 3, u, h), DR_OK);
    CHK_SAME(value(t, y.idx), fy.val);
    for (size_t i = 0; i < 3; i++)
        CHK_SAME(g[i], h[i]);
    dr_tape_free(f);
    dr_tape_free(t);
}

/* each child of a fork a chain of statements; replayed with the children
   side by side on two threads */
static void chain_job(dr_tape *h, size_t i, void *ctx)
{
    dr_real *io = ctx;
    dr_real v = io[i], p = io[3];
    for (int k = 0; k < 200; k++)
        v = dr_record_statement(h, step_v, &dt, 2, (dr_real[]){v, p});
    io[4 + i] = v;
}

static dr_real forked(dr_tape *t, const double *xv, dr_real *in)
{
    dr_real io[7];
    CHK_STATUS(dr_inputs(t, 4, xv, io), DR_OK);
    memcpy(in, io, 4 * sizeof *io);
    CHK_STATUS(dr_fork_run(t, 3, chain_job, io), DR_OK);
    return dr_add(t, dr_mul(t, io[4], io[5]), io[6]);
}

static void test_forked(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new(), *f = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_tape_set_order(f, 2), DR_OK);
    CHK_STATUS(dr_set_threads(t, 2), DR_OK);
    const double x0[4] = {0.3, -0.2, 0.9, 0.4}, x1[4] = {-0.6, 1.1, 0.2, -0.3};
    dr_real in[4], fin[4];
    dr_real y = forked(t, x0, in);
    CHK_STATUS(dr_replay(t, 4, in, x1), DR_OK);
    dr_real yf = forked(f, x1, fin);
    double g[4], h[4];
    CHK_STATUS(dr_gradient(t, y, 4, in, g), DR_OK);
    CHK_STATUS(dr_gradient(f, yf, 4, fin, h), DR_OK);
    CHK_SAME(value(t, y.idx), yf.val);
    for (size_t i = 0; i < 4; i++)
        CHK_SAME(g[i], h[i]);
    dr_tape_free(f);
    dr_tape_free(t);
}

/* no second-order rule: the second-order drivers refuse and the tape
   stays usable */
static void test_no_second_order(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_idx mark = dr_tape_mark(t);
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, (double[]){0.8, -0.4, 1.3}, x), DR_OK);
    dr_real s = record_stmt(t, x, dr_const(0.7));
    dr_real y = dr_mul(t, s, x[1]);
    CHK_SAME(value(t, s.idx), s.val); /* a statement's value is read */
    double v[3] = {1, 0, 0}, hv[3], H[9];
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_hvp(t, y, 3, x, v, hv), DR_ENOTSUP);
    CHK_STATUS(dr_hessian(t, y, 3, x, H), DR_ENOTSUP);
    dr_real yd;
    dr_idx ids[3] = {x[0].idx, x[1].idx, x[2].idx};
    dr_real seeds[3] = {dr_const(1), dr_const(0), dr_const(0)};
    CHK_STATUS(dr_tangent_record(t, mark, 3, ids, seeds, y, &yd), DR_ENOTSUP);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    double g[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_STATUS(dr_replay(t, 3, x, (double[]){0.1, 0.2, 0.3}), DR_OK);
    double d[5];
    CHK_SAME(value(t, s.idx), stmt(NULL, 5, (double[]){0.1, 0.2, 0.3, 0.7, 0.1}, d));
    dr_tape_free(t);
}

/* a leaf whose value is not its node's: the tape does not replay; on a
   tape of order 1 nothing does */
static void test_not_replayed(void **state)
{
    (void)state;
    dr_real x[3];
    dr_tape *t = tape2(x);
    dr_real lie = {0.5, x[1].idx};
    dr_real y = record_stmt(t, (dr_real[]){x[0], lie, x[2]}, dr_const(0.7));
    double g[3], g2[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_STATUS(dr_replay(t, 3, x, (double[]){0.1, 0.2, 0.3}), DR_ENOTSUP);
    CHK_STATUS(dr_gradient(t, y, 3, x, g2), DR_OK); /* as it was */
    for (size_t i = 0; i < 3; i++)
        CHK_SAME(g2[i], g[i]);
    dr_tape_free(t);

    t = chk_tape_new();
    CHK_STATUS(dr_inputs(t, 3, (double[]){0.8, -0.4, 1.3}, x), DR_OK);
    y = record_stmt(t, x, dr_const(0.7));
    assert_int_not_equal(dr_replay(t, 3, x, (double[]){0.1, 0.2, 0.3}), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    dr_tape_free(t);
}

static size_t calls;
static double count_calls(const void *ctx, size_t n, const double *x,
                          double *d)
{
    (void)ctx;
    calls++;
    double s = 1.0;
    for (size_t i = 0; i < n; i++) {
        d[i] = 2.0;
        s += 2.0 * x[i];
    }
    return s;
}

/* no active leaf: nothing recorded, the value f's */
static void test_constants(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    calls = 0;
    dr_real y = dr_record_statement(t, count_calls, NULL, 2,
                                    (dr_real[]){dr_const(1.5), dr_const(2)});
    assert_int_equal(y.idx, DR_NONE);
    CHK_SAME(y.val, 8.0);
    y = dr_record_statement(t, count_calls, NULL, 0, NULL);
    assert_int_equal(y.idx, DR_NONE);
    CHK_SAME(y.val, 1.0);
    assert_int_equal(calls, 2);
    assert_int_equal(dr_tape_len(t), 0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

static void test_errors(void **state)
{
    (void)state;
    dr_real y = dr_record_statement(NULL, count_calls, NULL, 0, NULL);
    assert_int_equal(y.idx, DR_NONE);
    assert_true(isnan(y.val));
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0);
    size_t len = dr_tape_len(t);
    calls = 0;
    y = dr_record_statement(t, NULL, NULL, 1, &x);
    assert_int_equal(y.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape_free(t);

    t = chk_tape_new();
    x = dr_input(t, 1.0);
    y = dr_record_statement(t, count_calls, NULL, 1, NULL);
    assert_int_equal(y.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape_free(t);

    t = chk_tape_new();
    x = dr_input(t, 1.0);
    y = dr_record_statement(t, count_calls, NULL, 2,
                            (dr_real[]){x, {1.0, x.idx + 5}});
    assert_int_equal(y.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    assert_int_equal(dr_tape_len(t), len);
    assert_int_equal(calls, 0);
    dr_tape_free(t);
}

/* out of memory at each allocation: DR_ENOMEM, nothing recorded, no
   leak */
static void test_oom(void **state)
{
    (void)state;
    bool done = false;
    for (size_t k = 1; !done && k < 40; k++) {
        chk_context("allocation %zu", k);
        chk_alloc al;
        chk_alloc_install(&al);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[3];
        CHK_STATUS(dr_inputs(t, 3, (double[]){0.8, -0.4, 1.3}, x), DR_OK);
        size_t len = dr_tape_len(t);
        chk_alloc_reset_counts(&al);
        chk_alloc_fail_in(&al, k, false);
        dr_real y = record_stmt(t, x, dr_const(0.7));
        chk_alloc_fail_in(&al, 0, false);
        if (al.fails == 0) {
            CHK_STATUS(dr_tape_status(t), DR_OK);
            assert_int_not_equal(y.idx, DR_NONE);
            done = true;
        } else {
            CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
            assert_int_equal(y.idx, DR_NONE);
            assert_int_equal(dr_tape_len(t), len);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    chk_context(NULL);
    assert_true(done);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradient),
        cmocka_unit_test(test_replay_bitwise),
        cmocka_unit_test(test_open_recorder),
        cmocka_unit_test(test_forked),
        cmocka_unit_test(test_no_second_order),
        cmocka_unit_test(test_not_replayed),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
