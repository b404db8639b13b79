/*
 * test_parallel_nested.c - derivatives taken inside fork-join jobs and
 * after a join (dualrev.h, "second order"): a child handle raises its own
 * order, records a tangent pass of its own nodes with dr_tangent_record,
 * and the root differentiates through it; the same after dr_join on the
 * root; several jobs doing so at once on the worker pool, bit-identical to
 * one thread.  Also run under ThreadSanitizer (make test-tsan).
 */
#include "check.h"

#include <math.h>
#include <string.h>

/* d/dc of exp(w c) sin(c), recorded on handle h as a nested derivative of
   the inner variable c = x (a fresh node depending on x), at order 2 only
   while it is taken: the result depends on x, so the caller can
   differentiate it again */
static dr_real nested_derivative(dr_tape *h, dr_real x, double w)
{
    int old = dr_tape_order(h);
    CHK_STATUS(dr_tape_set_order(h, 2), DR_OK);
    dr_idx mark = dr_tape_mark(h);
    dr_real c = {x.val, dr_record1(h, x.idx, 1.0)};
    dr_real y = dr_mul(h, dr_exp(h, dr_mul(h, dr_const(w), c)), dr_sin(h, c));
    dr_real one = dr_const(1.0), d;
    CHK_STATUS(dr_tangent_record(h, mark, 1, &c.idx, &one, y, &d), DR_OK);
    CHK_STATUS(dr_tape_set_order(h, old), DR_OK);
    return d;
}

/* the derivative of exp(w x) sin(x) and its own derivative */
static double d1(double x, double w) { return exp(w * x) * (w * sin(x) + cos(x)); }
static double d2(double x, double w)
{
    return exp(w * x) * ((w * w - 1) * sin(x) + 2 * w * cos(x));
}

/* Inside a child job, beside a sibling, and after the join on the root. */
static void test_in_child_and_after_join(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 0.6);
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    dr_real a = nested_derivative(kids[0], x, 0.5);
    dr_real b = dr_mul(kids[1], x, x);
    assert_int_equal(dr_tape_order(kids[0]), 1);
    CHK_STATUS(dr_tape_status(kids[0]), DR_OK);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_CLOSE(a.val, d1(0.6, 0.5), 1e-15, 0);
    /* after the join, on the root's continuation */
    dr_real c = nested_derivative(t, a, -0.25);
    CHK_CLOSE(c.val, d1(a.val, -0.25), 1e-15, 0);
    dr_real y = dr_add(t, dr_add(t, a, b), c);
    double g;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    double da = d2(0.6, 0.5);
    CHK_CLOSE(g, da + 2 * 0.6 + d2(a.val, -0.25) * da, 1e-13, 0);
    /* nothing recorded in a job has a rule for the root: a Hessian over
       the whole tape is refused, changing nothing */
    size_t len = dr_tape_len(t);
    double H;
    CHK_STATUS(dr_hessian(t, y, 1, &x, &H), DR_ENOTSUP);
    assert_int_equal(dr_tape_len(t), len);
    /* the handles of the fork are joined: refused */
    CHK_STATUS(dr_tape_set_order(kids[0], 2), DR_EINVAL);
    /* the same tape cleared and used again, fork and all */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 0.6);
    CHK_STATUS(dr_fork(t, 1, kids), DR_OK);
    assert_int_equal(dr_tape_order(kids[0]), 1);
    a = nested_derivative(kids[0], x, 0.5);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_gradient(t, a, 1, &x, &g), DR_OK);
    CHK_CLOSE(g, d2(0.6, 0.5), 1e-13, 0);
    dr_tape_free(t);
}

/* A third derivative inside a job: the tangent of a tangent. */
static void test_third_order_in_child(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 0.3);
    dr_tape *kid[1];
    CHK_STATUS(dr_fork(t, 1, kid), DR_OK);
    dr_tape *h = kid[0];
    CHK_STATUS(dr_tape_set_order(h, 2), DR_OK);
    dr_idx mark = dr_tape_mark(h);
    dr_real c = {x.val, dr_record1(h, x.idx, 1.0)};
    dr_real y = dr_powi(h, c, 4);
    dr_real one = dr_const(1.0), y1, y2;
    CHK_STATUS(dr_tangent_record(h, mark, 1, &c.idx, &one, y, &y1), DR_OK);
    CHK_STATUS(dr_tangent_record(h, mark, 1, &c.idx, &one, y1, &y2), DR_OK);
    CHK_STATUS(dr_tape_set_order(h, 1), DR_OK);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_CLOSE(y1.val, 4 * pow(0.3, 3), 1e-15, 0);
    CHK_CLOSE(y2.val, 12 * 0.3 * 0.3, 1e-15, 0);
    double g;
    CHK_STATUS(dr_gradient(t, y2, 1, &x, &g), DR_OK);
    CHK_CLOSE(g, 24 * 0.3, 1e-14, 0);
    dr_tape_free(t);
}

/* ------------------------------------------- many jobs on the worker pool */

#define JOBS 8

typedef struct jobs_ctx {
    dr_real x;
    dr_real out[JOBS];
} jobs_ctx;

static void job(dr_tape *h, size_t i, void *ctx)
{
    jobs_ctx *c = ctx;
    double w = 0.1 * (double)i - 0.3;
    dr_real d = nested_derivative(h, c->x, w);
    c->out[i] = dr_mul(h, d, dr_const(1.0 + (double)i));
}

/* the sum over the jobs, each a nested derivative, and its gradient, at
   `threads` threads */
static void jobs_gradient(unsigned threads, double *value, double *grad)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_set_threads(t, threads), DR_OK);
    jobs_ctx c;
    memset(&c, 0, sizeof c);
    c.x = dr_input(t, 0.45);
    CHK_STATUS(dr_fork_run(t, JOBS, job, &c), DR_OK);
    dr_real y = dr_const(0.0);
    for (size_t i = 0; i < JOBS; i++)
        y = dr_add(t, y, c.out[i]);
    CHK_STATUS(dr_gradient(t, y, 1, &c.x, grad), DR_OK);
    *value = y.val;
    dr_tape_free(t);
}

static void test_jobs_at_once(void **state)
{
    (void)state;
    double v1, g1;
    jobs_gradient(1, &v1, &g1);
    double want_v = 0, want_g = 0;
    for (size_t i = 0; i < JOBS; i++) {
        double w = 0.1 * (double)i - 0.3;
        want_v += (1.0 + (double)i) * d1(0.45, w);
        want_g += (1.0 + (double)i) * d2(0.45, w);
    }
    CHK_CLOSE(v1, want_v, 1e-14, 0);
    CHK_CLOSE(g1, want_g, 1e-13, 0);
    for (unsigned threads = 2; threads <= 4; threads++)
        for (int rep = 0; rep < 20; rep++) {
            chk_context("%u threads, round %d", threads, rep);
            double v, g;
            jobs_gradient(threads, &v, &g);
            CHK_SAME(v, v1);
            CHK_SAME(g, g1);
        }
    chk_context(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_in_child_and_after_join, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_third_order_in_child, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_jobs_at_once, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
