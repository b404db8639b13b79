/*
 * test_inputs.c - batch inputs (dr_inputs) and reading gradients by id range
 * (dr_adjoints_read, dr_gradient_range): consecutive ids in every position
 * of a chunk and beyond the largest chunk, agreement with dr_input +
 * dr_gradient bit for bit, the sweep skipping a chunk's leading inputs, and
 * every error path (bad arguments change nothing; out of memory leaves
 * constants and a sticky status, leaks nothing).
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sum_i w_i * x_i^2 + x_0 * x_{n-1}: every input gets its own partial */
static dr_real weighted(dr_tape *t, size_t n, const dr_real *x)
{
    dr_real acc = dr_mul(t, x[0], x[n - 1]);
    for (size_t i = 0; i < n; i++) {
        dr_real sq = dr_mul(t, x[i], x[i]);
        acc = dr_add(t, acc, dr_mul(t, sq, dr_const(1.0 + (double)(i % 7))));
    }
    return acc;
}

static double weighted_partial(size_t n, const double *v, size_t i)
{
    double g = 2.0 * (1.0 + (double)(i % 7)) * v[i];
    if (i == 0)
        g += v[n - 1];
    if (i == n - 1)
        g += v[0];
    return g;
}

/* n inputs made by dr_inputs after `before` single nodes: ids consecutive,
   values kept, and the gradient by range equals the analytic one and the
   one dr_gradient reads through the ids, bit for bit */
static void check_batch(size_t before, size_t n, uint64_t seed)
{
    chk_context("before=%zu n=%zu", before, n);
    chk_rng rng;
    chk_rng_seed(&rng, seed);
    dr_tape *t = chk_tape_new();
    for (size_t i = 0; i < before; i++)
        (void)dr_input(t, 1.0);
    double *v = malloc(n * sizeof *v), *g1 = malloc(n * sizeof *g1),
           *g2 = malloc(n * sizeof *g2);
    dr_real *x = malloc(n * sizeof *x);
    assert_non_null(v);
    assert_non_null(g1);
    assert_non_null(g2);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        v[i] = chk_rng_uniform(&rng, -2.0, 2.0);
    size_t len0 = dr_tape_len(t);
    CHK_STATUS(dr_inputs(t, n, v, x), DR_OK);
    assert_int_equal(dr_tape_len(t), len0 + n);
    for (size_t i = 0; i < n; i++) {
        CHK_SAME(x[i].val, v[i]);
        assert_true(x[i].idx == x[0].idx + (dr_idx)i);
    }
    dr_real y = weighted(t, n, x);
    CHK_STATUS(dr_gradient_range(t, y, x[0].idx, n, g1), DR_OK);
    CHK_STATUS(dr_gradient(t, y, n, x, g2), DR_OK);
    for (size_t i = 0; i < n; i++) {
        assert_true(chk_same_bits(g1[i], g2[i]));
        CHK_CLOSE(g1[i], weighted_partial(n, v, i), 1e-14, 1e-14);
    }
    /* the same adjoints once more, after the sweep dr_gradient just made */
    memset(g1, 0, n * sizeof *g1);
    CHK_STATUS(dr_adjoints_read(t, x[0].idx, n, g1), DR_OK);
    for (size_t i = 0; i < n; i++)
        assert_true(chk_same_bits(g1[i], g2[i]));
    dr_tape_free(t);
    free(v);
    free(g1);
    free(g2);
    free(x);
    chk_context(NULL);
}

/* Batches that fit the current chunk, fill it exactly, overflow it, start
   the tape, and exceed the largest chunk size (2^17 nodes). */
static void test_batches(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 7, 255, 256, 257, 1000, 5000};
    const size_t befores[] = {0, 1, 100, 255, 256, 300};
    uint64_t seed = 1;
    for (size_t a = 0; a < sizeof befores / sizeof *befores; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
            check_batch(befores[a], sizes[b], seed++);
    check_batch(3, (1u << 17) + 5, seed++);
}

/* Inputs from dr_inputs beside ordinary ones and constants: the leading
   inputs of a chunk are not swept, the others are, and a range that covers
   ordinary nodes reads their adjoints. */
static void test_mixed(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double v[3] = {2.0, 3.0, 5.0};
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, v, x), DR_OK);  /* a chunk's leading inputs */
    dr_real u = dr_input(t, 7.0);
    dr_real z = dr_mul(t, x[0], x[2]);
    dr_real w[3];
    CHK_STATUS(dr_inputs(t, 3, v, w), DR_OK);  /* inputs after an operation */
    dr_real y = dr_mul(t, z, dr_add(t, u, w[1]));
    double g[3];
    CHK_STATUS(dr_gradient_range(t, y, x[0].idx, 3, g), DR_OK);
    CHK_SAME(g[0], 5.0 * 10.0);
    CHK_SAME(g[1], 0.0);
    CHK_SAME(g[2], 2.0 * 10.0);
    CHK_STATUS(dr_adjoints_read(t, w[0].idx, 3, g), DR_OK);
    CHK_SAME(g[0], 0.0);
    CHK_SAME(g[1], 10.0);
    CHK_SAME(g[2], 0.0);
    /* x[0] .. u: three inputs and then u, one range */
    double h[4];
    CHK_STATUS(dr_adjoints_read(t, x[0].idx, 4, h), DR_OK);
    CHK_SAME(h[3], 10.0);
    /* n = 0 reads nothing, even with NULL */
    CHK_STATUS(dr_inputs(t, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_adjoints_read(t, x[0].idx, 0, NULL), DR_OK);
    CHK_STATUS(dr_gradient_range(t, y, x[0].idx, 0, NULL), DR_OK);
    /* the gradient with respect to a constant output is zero */
    CHK_STATUS(dr_gradient_range(t, dr_const(1.0), x[0].idx, 3, g), DR_OK);
    CHK_SAME(g[0] + g[1] + g[2], 0.0);
    dr_tape_free(t);
}

/* Batches recorded by child jobs, swept by the parallel reverse pass (which
   skips a chunk's leading inputs too): the same gradient as one job. */
static void test_in_child_jobs(void **state)
{
    (void)state;
    double v[6] = {1.5, -2.0, 0.25, 3.0, -1.0, 2.0};
    double ref[6], got[6];
    for (int forked = 0; forked <= 1; forked++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, 2), DR_OK);
        dr_real w = dr_input(t, 0.5);
        dr_real x[6], y[2];
        dr_tape *kid[2] = {t, t};
        if (forked)
            CHK_STATUS(dr_fork(t, 2, kid), DR_OK);
        for (int j = 0; j < 2; j++) {
            CHK_STATUS(dr_inputs(kid[j], 3, v + 3 * j, x + 3 * j), DR_OK);
            y[j] = dr_mul(kid[j], dr_mul(kid[j], x[3 * j], x[3 * j + 2]),
                          dr_add(kid[j], x[3 * j + 1], w));
        }
        if (forked)
            CHK_STATUS(dr_join(t), DR_OK);
        dr_real z = dr_add(t, y[0], dr_mul(t, y[1], w));
        double *out = forked ? got : ref;
        CHK_STATUS(dr_gradient_range(t, z, x[0].idx, 3, out), DR_OK);
        CHK_STATUS(dr_gradient_range(t, z, x[3].idx, 3, out + 3), DR_OK);
        dr_tape_free(t);
    }
    for (int i = 0; i < 6; i++)
        CHK_CLOSE(got[i], ref[i], 1e-15, 0.0);
    CHK_SAME(ref[0], 0.25 * (-2.0 + 0.5)); /* d/dx0 of x0 x2 (x1 + w) */
}

/* Recording the same program with dr_inputs 1000 times allocates nothing
   after the first time, even for a batch larger than the largest chunk. */
static void test_clear_and_reuse(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    size_t n = (1u << 17) + 100;
    double *v = calloc(n, sizeof *v), *g = malloc(n * sizeof *g);
    dr_real *x = malloc(n * sizeof *x);
    assert_non_null(v);
    assert_non_null(g);
    assert_non_null(x);
    size_t bytes = 0;
    for (int cycle = 0; cycle < 1000; cycle++) {
        if (cycle == 2) { /* both batch sizes seen once */
            bytes = dr_tape_bytes(t);
            chk_alloc_reset_counts(&al);
        }
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        v[0] = (double)cycle;
        CHK_STATUS(dr_inputs(t, cycle % 2 ? n : 10, v, x), DR_OK);
        dr_real y = dr_mul(t, x[0], x[0]);
        CHK_STATUS(dr_gradient_range(t, y, x[0].idx, 10, g), DR_OK);
        CHK_SAME(g[0], 2.0 * cycle);
    }
    assert_int_equal(al.calls, 0);
    assert_int_equal(dr_tape_bytes(t), bytes);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
    free(v);
    free(g);
    free(x);
}

/* Bad arguments: DR_EINVAL and nothing written or recorded. */
static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double v[2] = {1.0, 2.0}, g[2] = {-1.0, -1.0}, h[3];
    dr_real x[2];
    CHK_STATUS(dr_inputs(NULL, 2, v, x), DR_EINVAL);
    CHK_STATUS(dr_inputs(t, 2, NULL, x), DR_EINVAL);
    CHK_STATUS(dr_inputs(t, 2, v, NULL), DR_EINVAL);
    assert_int_equal(dr_tape_len(t), 0);
    CHK_STATUS(dr_tape_status(t), DR_OK);

    CHK_STATUS(dr_inputs(t, 2, v, x), DR_OK);
    dr_real y = dr_mul(t, x[0], x[1]);
    /* ranges that leave the tape: past the newest node, before the base,
       DR_NONE, far away (no overflow), and ids from before a clear */
    CHK_STATUS(dr_adjoints_read(t, x[0].idx, 4, g), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(t, y.idx + 1, 1, g), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(t, x[0].idx - 1, 1, g), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(t, DR_NONE, 1, g), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(t, INT64_MAX, 1, g), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(t, x[0].idx, SIZE_MAX, g), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(t, x[0].idx, 1, NULL), DR_EINVAL);
    CHK_STATUS(dr_adjoints_read(NULL, x[0].idx, 1, g), DR_EINVAL);
    CHK_STATUS(dr_gradient_range(t, y, x[0].idx, 4, g), DR_EINVAL);
    CHK_STATUS(dr_gradient_range(t, y, x[0].idx, 2, NULL), DR_EINVAL);
    CHK_STATUS(dr_gradient_range(NULL, y, x[0].idx, 2, g), DR_EINVAL);
    dr_real bad = {1.0, y.idx + 5};
    CHK_STATUS(dr_gradient_range(t, bad, x[0].idx, 2, g), DR_EINVAL);
    CHK_SAME(g[0], -1.0);
    CHK_SAME(g[1], -1.0);
    /* nothing was swept by the refused calls */
    CHK_SAME(dr_adjoint(t, x[0].idx), 0.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);

    dr_idx old = x[0].idx;
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    (void)dr_input(t, 1.0);
    (void)dr_input(t, 1.0);
    CHK_STATUS(dr_adjoints_read(t, old, 1, g), DR_EINVAL);

    /* dr_input_range: the ids without values */
    dr_idx first = 0;
    CHK_STATUS(dr_input_range(NULL, 2, &first), DR_EINVAL);
    CHK_STATUS(dr_input_range(t, 2, NULL), DR_EINVAL);
    CHK_STATUS(dr_input_range(t, 0, &first), DR_OK);
    assert_true(first == DR_NONE);
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_input_range(t, 3, &first), DR_OK);
    assert_int_equal(dr_tape_len(t), len + 3);
    dr_real r2 = {4.0, first + 2};
    dr_real sq = dr_mul(t, r2, r2);
    CHK_STATUS(dr_gradient_range(t, sq, first, 3, h), DR_OK);
    CHK_SAME(h[0], 0.0);
    CHK_SAME(h[2], 8.0);

    /* a forked handle records nothing: constants and DR_EBUSY */
    dr_tape *kid;
    CHK_STATUS(dr_fork(t, 1, &kid), DR_OK);
    CHK_STATUS(dr_inputs(t, 2, v, x), DR_EBUSY);
    assert_true(x[0].idx == DR_NONE && x[1].idx == DR_NONE);
    CHK_STATUS(dr_input_range(t, 2, &first), DR_EBUSY);
    assert_true(first == DR_NONE);
    CHK_SAME(x[1].val, 2.0);
    /* a child handle records its own inputs, and cannot read adjoints */
    CHK_STATUS(dr_inputs(kid, 2, v, x), DR_OK);
    assert_true(x[1].idx == x[0].idx + 1);
    CHK_STATUS(dr_adjoints_read(kid, x[0].idx, 2, g), DR_EINVAL);
    CHK_STATUS(dr_gradient_range(kid, x[0], x[0].idx, 2, g), DR_EINVAL);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_gradient_range(t, x[1], x[0].idx, 2, g), DR_EBUSY);
    dr_tape_free(t);
}

/* Out of memory at each allocation: constants, a sticky DR_ENOMEM, no
   leak; once allocation works again (after a clear) everything does. */
static void test_oom(void **state)
{
    (void)state;
    chk_alloc al;
    size_t n = 3000;
    double *v = malloc(n * sizeof *v);
    dr_real *x = malloc(n * sizeof *x);
    assert_non_null(v);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(i + 1);
    for (size_t k = 1;; k++) {
        dr_tape *t = chk_oom_tape(&al, k);
        if (!t)
            continue;
        dr_status st = dr_inputs(t, n, v, x);
        dr_real y = dr_mul(t, x[0], x[n - 1]);
        double g = -1.0;
        dr_status sg = dr_gradient_range(t, y, x[n - 1].idx, 1, &g);
        bool failed = al.fails > 0;
        if (st == DR_ENOMEM) {
            for (size_t i = 0; i < n; i++)
                assert_true(x[i].idx == DR_NONE && x[i].val == v[i]);
            CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
        } else {
            CHK_STATUS(st, DR_OK);
        }
        if (!failed) {
            CHK_STATUS(sg, DR_OK);
            CHK_SAME(g, 1.0); /* d(x0 * x_last)/dx_last = x0 */
        } else {
            assert_true(sg == DR_ENOMEM || sg == DR_EINVAL || sg == DR_OK);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
        if (!failed)
            break;
    }
    free(v);
    free(x);
}

/* A chunk's leading inputs have no record written: where the chunk last
   held array nodes, those ids must still read as plain inputs (no array
   behind them) and sweep as inputs, not as the stale records. */
/* inputs after an earlier failure: the tape keeps its sticky status, and
   the inputs are recorded and reported as such, at either order */
static void test_after_sticky_error(void **state)
{
    (void)state;
    for (int order = 1; order <= 2; order++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        dr_real bad = {1.0, (dr_idx)123456};
        dr_add(t, bad, bad);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        dr_idx first = DR_NONE;
        CHK_STATUS(dr_input_range(t, 3, &first), DR_OK);
        assert_true(first != DR_NONE);
        double v[2] = {1, 2};
        dr_real out[2];
        CHK_STATUS(dr_inputs(t, 2, v, out), DR_OK);
        assert_true(out[1].idx == out[0].idx + 1);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        dr_tape_free(t);
    }
}

static void test_stale_records(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double data[3] = {1.0, 2.0, 3.0};
    dr_idx arr[8];
    for (size_t i = 0; i < 8; i++) {
        arr[i] = dr_arr_input_id(t, 1, 3, 1, data);
        assert_true(dr_arr_size(t, arr[i]) == 3);
    }
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_idx first;
    CHK_STATUS(dr_input_range(t, 8, &first), DR_OK);
    for (size_t i = 0; i < 8; i++) {
        dr_idx id = first + (dr_idx)i;
        assert_true(dr_arr_size(t, id) == -1);
        assert_int_equal(dr_arr_active(t, id), -1);
        assert_null(dr_arr_values(t, id));
    }
    dr_real x0 = {2.0, first}, x7 = {5.0, first + 7};
    dr_real y = dr_mul(t, x0, x7);
    double g[8];
    CHK_STATUS(dr_gradient_range(t, y, first, 8, g), DR_OK);
    for (size_t i = 0; i < 8; i++)
        CHK_SAME(g[i], i == 0 ? 5.0 : i == 7 ? 2.0 : 0.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_in_child_jobs),
        cmocka_unit_test_teardown(test_clear_and_reuse, chk_alloc_teardown),
        cmocka_unit_test(test_stale_records),
        cmocka_unit_test(test_after_sticky_error),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
