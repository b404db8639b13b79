/*
 * test_misuse.c - calls a careless program makes: each gets a status, and
 * the tape stays usable afterwards (a small computation then gives the
 * right gradient).
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>

/* After a misuse: clearing works and a fresh y = x0 * x1 + sin(x0) has the
   right gradient on the same tape. */
static void chk_tape_usable(dr_tape *t)
{
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real x0 = dr_input(t, 0.5), x1 = dr_input(t, -2.0);
    dr_real y = dr_add(t, dr_mul(t, x0, x1), dr_sin(t, x0));
    dr_real xs[2] = {x0, x1};
    double g[2];
    CHK_STATUS(dr_gradient(t, y, 2, xs, g), DR_OK);
    CHK_CLOSE(g[0], -2.0 + cos(0.5), 1e-15, 0);
    CHK_CLOSE(g[1], 0.5, 1e-15, 0);
}

/* ------------------------------------------- a recorder begun twice */

static void test_recorder_begun_twice(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 3.0);
    dr_rec r;
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    dr_real y = dr_rec_mul(&r, x, x);
    /* the open recorder again: refused, and r keeps the cursor */
    CHK_STATUS(dr_rec_begin(t, &r), DR_EBUSY);
    y = dr_rec_mul(&r, y, x); /* x^3 */
    assert_true(y.idx != DR_NONE);
    /* another recorder on the same tape: refused, and closed */
    dr_rec r2;
    CHK_STATUS(dr_rec_begin(t, &r2), DR_EBUSY);
    dr_real z = dr_rec_mul(&r2, x, x);
    assert_true(z.idx == DR_NONE);
    CHK_CLOSE(z.val, 9.0, 0, 0);
    CHK_STATUS(dr_rec_end(&r2), DR_EINVAL);
    /* a tape call while r is open still records */
    y = dr_add(t, y, x); /* x^3 + x */
    y = dr_rec_add(&r, y, x); /* x^3 + 2x */
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    double g;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_CLOSE(g, 3.0 * 9.0 + 2.0, 1e-15, 0);
    /* and r can be begun again after its end */
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    chk_tape_usable(t);
    dr_tape_free(t);
}

/* ------------------------------------ gradients with no inputs, NULL */

static void test_gradient_no_inputs(void **state)
{
    (void)state;
    /* on an empty tape (no adjoint storage yet) and on a recorded one */
    dr_tape *t = chk_tape_new();
    dr_real c = dr_const(2.0);
    CHK_STATUS(dr_gradient(t, c, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_jacobian(t, 1, &c, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_gradient_range(t, c, DR_NONE, 0, NULL), DR_OK);
    dr_real x = dr_input(t, 1.5);
    dr_real ys[2] = {dr_exp(t, x), dr_mul(t, x, x)};
    CHK_STATUS(dr_gradient(t, ys[0], 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_jacobian(t, 2, ys, 0, NULL, NULL), DR_OK);
    /* a constant input and a constant output on an empty tape read 0 */
    dr_tape *e = chk_tape_new();
    double g = -1.0;
    CHK_STATUS(dr_gradient(e, c, 1, &c, &g), DR_OK);
    CHK_SAME(g, 0.0);
    dr_tape_free(e);
    double J[2];
    CHK_STATUS(dr_jacobian(t, 2, ys, 1, &x, J), DR_OK);
    CHK_CLOSE(J[0], exp(1.5), 1e-15, 0);
    CHK_CLOSE(J[1], 3.0, 1e-15, 0);
    chk_tape_usable(t);
    dr_tape_free(t);
}

/* ---------------------------------- fork_run jobs that leave things open */

typedef struct left_ctx {
    dr_real x;
    size_t bad;  /* the job that misbehaves */
    int how;     /* 0: leaves a fork open; 1: a recorder; 2: a nested job
                    of it leaves a recorder open; 3: a fork whose child has
                    a recorder open */
} left_ctx;

static void leave_recorder(dr_tape *c, size_t i, void *p)
{
    (void)i;
    const left_ctx *k = p;
    dr_rec r;
    if (dr_rec_begin(c, &r) == DR_OK)
        (void)dr_rec_mul(&r, k->x, k->x); /* and never ended */
}

static void left_job(dr_tape *c, size_t i, void *p)
{
    const left_ctx *k = p;
    dr_real y = dr_sin(c, k->x);
    (void)y;
    if (i != k->bad)
        return;
    dr_tape *kids[2];
    switch (k->how) {
    case 0:
        if (dr_fork(c, 2, kids) == DR_OK)
            (void)dr_cos(kids[1], k->x);
        break;
    case 1:
        leave_recorder(c, i, p);
        break;
    case 2: {
        left_ctx inner = *k;
        /* the nested call reports it; the outer job ignores that */
        CHK_STATUS(dr_fork_run(c, 2, leave_recorder, &inner), DR_EBUSY);
        break;
    }
    default:
        if (dr_fork(c, 2, kids) == DR_OK)
            leave_recorder(kids[0], 0, p);
        break;
    }
}

static void test_fork_run_left_open(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++)
        for (int how = 0; how < 4; how++)
            for (size_t bad = 0; bad < 3; bad++) {
                chk_context("threads %u, how %d, bad job %zu", threads, how,
                            bad);
                dr_tape *t = chk_tape_new();
                CHK_STATUS(dr_set_threads(t, threads), DR_OK);
                left_ctx k = {dr_input(t, 0.25), bad, how};
                /* (how 2: the nested call closed it and reported it to
                   the job, whose failure the join passes on as sticky) */
                CHK_STATUS(dr_fork_run(t, 3, left_job, &k),
                           how == 2 ? DR_OK : DR_EBUSY);
                /* not forked any more: the failure is sticky until clear */
                CHK_STATUS(dr_tape_status(t), DR_EBUSY);
                double g;
                CHK_STATUS(dr_gradient(t, k.x, 1, &k.x, &g), DR_EBUSY);
                CHK_STATUS(dr_join(t), DR_EINVAL);
                chk_tape_usable(t);
                /* and the tape forks again */
                k.x = dr_input(t, 0.25);
                k.bad = 99;
                CHK_STATUS(dr_fork_run(t, 3, left_job, &k), DR_OK);
                dr_real y = dr_mul(t, k.x, k.x);
                CHK_STATUS(dr_gradient(t, y, 1, &k.x, &g), DR_OK);
                CHK_CLOSE(g, 0.5, 1e-15, 0);
                dr_tape_free(t);
            }
    chk_context(NULL);
}

/* ------------------------------------- an array id given as a scalar */

/* on a cleared t: an input array, a constant one, a scalar input x; the
   id of array k (0: the input, 1: the constant) as a scalar of value 1 */
static dr_real fresh_arrays(dr_tape *t, int k, dr_real *x, dr_arr *a)
{
    static const double v[3] = {1.0, 2.0, 3.0};
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_arr in = dr_arr_input(t, 1, 3, 1, v);
    dr_arr c = dr_arr_const(t, 1, 3, 1, v);
    *x = dr_input(t, 2.0);
    assert_true(in.idx != DR_NONE && c.idx != DR_NONE);
    if (a)
        *a = in;
    dr_real bad = {1.0, k ? c.idx : in.idx};
    return bad;
}

static void test_array_id_as_scalar(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x;
    dr_arr a;
    for (int k = 0; k < 2; k++) {
        chk_context("array %d", k);
        /* operations: a constant with the right value, sticky DR_EINVAL */
        dr_real bad = fresh_arrays(t, k, &x, NULL);
        dr_real y = dr_sin(t, bad);
        assert_true(y.idx == DR_NONE);
        CHK_CLOSE(y.val, sin(1.0), 0, 0);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        chk_tape_usable(t);
        bad = fresh_arrays(t, k, &x, NULL);
        y = dr_mul(t, x, bad);
        assert_true(y.idx == DR_NONE);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        bad = fresh_arrays(t, k, &x, NULL);
        assert_true(dr_record1(t, bad.idx, 1.0) == DR_NONE);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        bad = fresh_arrays(t, k, &x, NULL);
        const dr_idx args[3] = {x.idx, x.idx, bad.idx};
        const double parts[3] = {1.0, 1.0, 1.0};
        assert_true(dr_recordn(t, 3, args, parts) == DR_NONE);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        /* through a recorder */
        bad = fresh_arrays(t, k, &x, NULL);
        dr_rec r;
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
        y = dr_rec_add(&r, x, bad);
        assert_true(y.idx == DR_NONE);
        CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
        /* as an input or output of a gradient; seeding and reading */
        bad = fresh_arrays(t, k, &x, &a);
        dr_real s = dr_arr_sum(t, a); /* a scalar from an array: fine */
        dr_real ins[2] = {x, bad};
        double g[2] = {7.0, 7.0};
        CHK_STATUS(dr_gradient(t, s, 2, ins, g), DR_EINVAL);
        CHK_SAME(g[0], 7.0); /* nothing written */
        CHK_STATUS(dr_gradient(t, bad, 1, &x, g), DR_EINVAL);
        CHK_STATUS(dr_jacobian(t, 1, &s, 2, ins, g), DR_EINVAL);
        CHK_STATUS(dr_seed(t, bad.idx, 1.0), DR_EINVAL);
        double out;
        CHK_STATUS(dr_adjoint_get(t, bad.idx, &out), DR_EINVAL);
        /* none of those touched the tape */
        CHK_STATUS(dr_tape_status(t), DR_OK);
        CHK_STATUS(dr_gradient(t, s, 1, &x, g), DR_OK);
        /* and the array id still names the array */
        int64_t rows;
        CHK_STATUS(dr_arr_shape(t, bad.idx, NULL, &rows, NULL), DR_OK);
        assert_int_equal(rows, 3);
    }
    chk_context(NULL);
    /* the other way round: a scalar id is not an array */
    x = dr_input(t, 2.0);
    assert_true(dr_arr_size(t, x.idx) == -1);
    chk_tape_usable(t);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorder_begun_twice),
        cmocka_unit_test(test_gradient_no_inputs),
        cmocka_unit_test(test_fork_run_left_open),
        cmocka_unit_test(test_array_id_as_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
