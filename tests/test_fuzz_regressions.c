/*
 * test_fuzz_regressions.c - reductions of what the differential fuzz target
 * (tests/fuzz/) found, one test per defect, each with the exact expected
 * answer worked out by hand.
 */
#include "check.h"

#include <math.h>

/* Large elements: the reverse rule of logsumexp gave every maximal element
   the weight exp(x_i - lse), and lse = x + log(3) rounds to x when the ulp
   of x (32 here) swallows log(3): three weights of 1 instead of 1/3. */
static void test_logsumexp_weights_large_elements(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    const double big = 1.759218604457984e17, small = 3037748764297472.0;
    double v[5] = {small, big, big, big, small};
    dr_arr x = dr_arr_input(t, 1, 5, 1, v);
    dr_real y = dr_arr_logsumexp(t, x);
    CHK_SAME(y.val, big); /* + log(3) is below the ulp */
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double g[5];
    CHK_STATUS(dr_arr_adjoint(t, x.idx, g), DR_OK);
    CHK_REL(g[1], 1.0 / 3.0, 1e-15);
    CHK_REL(g[2], 1.0 / 3.0, 1e-15);
    CHK_REL(g[3], 1.0 / 3.0, 1e-15);
    CHK_SAME(g[0], 0.0); /* exp(small - big) underflows */
    CHK_SAME(g[4], 0.0);
    dr_tape_free(t);
}

/* The same for the row-wise logsumexp of a matrix: the weights of a row sum
   to 1 whatever the magnitude of its elements. */
static void test_logsumexp_rows_weights_large_elements(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    const double big = 1e17;
    double v[6] = {big, big, 1.0, -big, -big, 2.0};
    dr_arr m = dr_arr_input(t, 2, 2, 3, v);
    dr_arr r = dr_arr_logsumexp_rows(t, m);
    CHK_SAME(r.val[0], big);
    CHK_SAME(r.val[1], 2.0);
    double cot[2] = {1.0, 1.0};
    CHK_STATUS(dr_arr_seed(t, r.idx, cot), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double g[6];
    CHK_STATUS(dr_arr_adjoint(t, m.idx, g), DR_OK);
    CHK_REL(g[0], 0.5, 1e-15);
    CHK_REL(g[1], 0.5, 1e-15);
    CHK_SAME(g[2], 0.0);
    CHK_SAME(g[3], 0.0);
    CHK_SAME(g[4], 0.0);
    CHK_REL(g[5], 1.0, 1e-15);
    dr_tape_free(t);
}

/* Moderate elements keep their exact softmax weights, and infinite ones
   keep the rule exp(x_i - lse) (+inf: NaN weight, as before). */
static void test_logsumexp_weights_moderate_and_infinite(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double v[3] = {0.0, log(2.0), log(5.0)};
    dr_arr x = dr_arr_input(t, 1, 3, 1, v);
    dr_real y = dr_arr_logsumexp(t, x);
    CHK_REL(y.val, log(8.0), 1e-15);
    CHK_STATUS(dr_seed(t, y.idx, 2.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double g[3];
    CHK_STATUS(dr_arr_adjoint(t, x.idx, g), DR_OK);
    CHK_REL(g[0], 2.0 / 8.0, 1e-15);
    CHK_REL(g[1], 4.0 / 8.0, 1e-15);
    CHK_REL(g[2], 10.0 / 8.0, 1e-15);

    CHK_STATUS(dr_tape_clear(t), DR_OK);
    double w[2] = {-INFINITY, 1.0};
    dr_arr z = dr_arr_input(t, 1, 2, 1, w);
    dr_real l = dr_arr_logsumexp(t, z);
    CHK_SAME(l.val, 1.0);
    CHK_STATUS(dr_seed(t, l.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_STATUS(dr_arr_adjoint(t, z.idx, g), DR_OK);
    CHK_SAME(g[0], 0.0);
    CHK_SAME(g[1], 1.0);
    dr_tape_free(t);
}

/* A checkpointed loop whose step makes an output a constant with a value
   that depends on the loop's input (a branch on a value in the step): the
   caller's program holds that value, so a replay where it comes out
   otherwise is another program.  dr_replay answered DR_OK and the sum
   after the loop kept the recorded constant (1/8 - 1 at x = -1 read 0.875
   instead of -1.125). */
static dr_status sign_step(void *ctx, dr_tape *t, size_t k, size_t n,
                           const dr_real *x, dr_real *y)
{
    (void)ctx;
    (void)k;
    (void)n;
    y[0] = dr_mul(t, x[0], dr_const(0.5));
    y[1] = dr_const(x[0].val > 0.0 ? 1.0 : -1.0);
    return dr_tape_status(t);
}

static void test_loop_constant_output_replay(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 1.0);
    dr_real x0[2] = {x, dr_const(0.0)}, out[2];
    dr_loop loop = {NULL, sign_step, NULL, 0};
    CHK_STATUS(dr_record_checkpointed(t, &loop, 3, 2, x0, 0, out), DR_OK);
    assert_int_equal(out[1].idx, DR_NONE);
    CHK_SAME(out[1].val, 1.0);
    dr_real y = dr_add(t, out[0], out[1]);
    CHK_SAME(y.val, 1.125);
    /* the same constant at x = 2: a replay */
    double v = 2.0, yv, g;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
    CHK_STATUS(dr_value(t, y.idx, &yv), DR_OK);
    CHK_SAME(yv, 1.25);
    /* another at x = -1 (a fresh recording: -1/8 - 1): the tape as it was */
    v = -1.0;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_value(t, y.idx, &yv), DR_OK);
    CHK_SAME(yv, 1.25);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 0.125);
    dr_tape_free(t);
}

/* An n-ary node of given partials, one of them infinite, over a node of
   zero tangent: the Hessian-vector products' tangent pass multiplied the
   partial by the zero tangent (inf * 0 = NaN) where every other rule adds
   nothing, so the NaN reached the products of directions that move
   nothing (a constant's row of dr_hessian, found as NaN where no second
   derivative reaches). */
static void test_nary_infinite_partial_zero_tangent(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real a = dr_input(t, -5.0), b = dr_input(t, -4.875);
    /* a is no variable below: s's tangents are zero, and written (an
       n-ary sum's are, whatever its terms') */
    dr_real aa[2] = {a, a};
    dr_real s = dr_sin(t, dr_sumn(t, 2, aa));
    dr_idx ids[3] = {s.idx, b.idx, s.idx};
    double ps[3] = {INFINITY, 2.0, 1.0};
    dr_real v = {0.25, dr_recordn(t, 3, ids, ps)};
    dr_real y = dr_mul(t, v, v);
    /* a constant's row (its direction moves nothing), then b's */
    dr_real x[2] = {dr_const(0.5), b};
    double H[4];
    CHK_STATUS(dr_hessian(t, y, 2, x, H), DR_OK);
    CHK_SAME(H[0], 0.0);
    CHK_SAME(H[1], 0.0);
    CHK_SAME(H[2], 0.0);
    CHK_SAME(H[3], 8.0); /* y = v^2, dv/db = 2 */
    double V[4] = {1.0, 0.0, 0.0, 0.0}, out[4];
    CHK_STATUS(dr_hvp_vec(t, y, 2, x, 2, V, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    CHK_SAME(out[1], 0.0);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logsumexp_weights_large_elements),
        cmocka_unit_test(test_logsumexp_rows_weights_large_elements),
        cmocka_unit_test(test_logsumexp_weights_moderate_and_infinite),
        cmocka_unit_test(test_loop_constant_output_replay),
        cmocka_unit_test(test_nary_infinite_partial_zero_tangent),
    };
    return cmocka_run_group_tests_name("fuzz regressions", tests, NULL, NULL);
}
