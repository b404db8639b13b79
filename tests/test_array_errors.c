/*
 * test_array_errors.c - arrays on bad input: shape mismatches (DR_ESHAPE),
 * indices and sizes out of range (DR_ERANGE), ids that are not arrays of
 * this tape (DR_EINVAL), NULL arguments; the sticky status; empty arrays and
 * 1 x n / n x 1 shapes; out-of-memory at every allocation of an array
 * program (no crash, no leak, correct results when nothing failed).
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double D[64] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16,
    .5, .25, .125, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

typedef struct fix {
    dr_tape *t;
    dr_arr v2, v3, m23, m32, m33, s;
} fix;

static void fix_new(fix *f)
{
    f->t = chk_tape_new();
    f->v2 = dr_arr_input(f->t, 1, 2, 1, D);
    f->v3 = dr_arr_input(f->t, 1, 3, 1, D);
    f->m23 = dr_arr_input(f->t, 2, 2, 3, D);
    f->m32 = dr_arr_input(f->t, 2, 3, 2, D);
    f->m33 = dr_arr_input(f->t, 2, 3, 3, D);
    CHK_STATUS(dr_tape_status(f->t), DR_OK);
}

/* the handle failed, the status is st, and later calls still behave */
static void expect_fail(fix *f, dr_arr y, dr_status st)
{
    assert_int_equal(y.idx, DR_NONE);
    assert_int_equal(y.rank, 0);
    assert_null(y.val);
    CHK_STATUS(dr_tape_status(f->t), st);
    /* sticky: sweeps report it, operations on the failed handle fail */
    CHK_STATUS(dr_reverse(f->t), st);
    dr_arr z = dr_arr_add(f->t, y, y);
    assert_int_equal(z.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(f->t), st); /* still the first error */
    dr_tape_free(f->t);
}

static void expect_sfail(fix *f, dr_real y, dr_status st)
{
    assert_int_equal(y.idx, DR_NONE);
    assert_true(isnan(y.val));
    CHK_STATUS(dr_tape_status(f->t), st);
    CHK_STATUS(dr_reverse(f->t), st);
    dr_tape_free(f->t);
}

#define FAILS(expr, st)                                                       \
    do {                                                                      \
        fix f;                                                                \
        fix_new(&f);                                                          \
        chk_context("%s", #expr);                                             \
        expect_fail(&f, (expr), st);                                          \
    } while (0)
#define SFAILS(expr, st)                                                      \
    do {                                                                      \
        fix f;                                                                \
        fix_new(&f);                                                          \
        chk_context("%s", #expr);                                             \
        expect_sfail(&f, (expr), st);                                         \
    } while (0)

static void test_shape_errors(void **state)
{
    (void)state;
    int64_t i0[2] = {0, 1};
    FAILS(dr_arr_add(f.t, f.v2, f.v3), DR_ESHAPE);
    FAILS(dr_arr_sub(f.t, f.m23, f.m32), DR_ESHAPE);
    FAILS(dr_arr_mul(f.t, f.v3, f.m33), DR_ESHAPE);
    FAILS(dr_arr_div(f.t, f.m23, f.v2), DR_ESHAPE);
    FAILS(dr_arr_matvec(f.t, f.m23, f.v2), DR_ESHAPE);
    FAILS(dr_arr_matvec(f.t, f.v3, f.v3), DR_ESHAPE);
    FAILS(dr_arr_vecmat(f.t, f.v3, f.m23), DR_ESHAPE);
    FAILS(dr_arr_matmul(f.t, f.m23, 0, f.m23, 0), DR_ESHAPE);
    FAILS(dr_arr_matmul(f.t, f.m23, 1, f.m32, 0), DR_ESHAPE);
    FAILS(dr_arr_matmul(f.t, f.m23, 0, f.v3, 0), DR_ESHAPE);
    FAILS(dr_arr_outer(f.t, f.m23, f.v2), DR_ESHAPE);
    FAILS(dr_arr_transpose(f.t, f.v3), DR_ESHAPE);
    FAILS(dr_arr_add_rowvec(f.t, f.m23, f.v2), DR_ESHAPE);
    FAILS(dr_arr_add_colvec(f.t, f.m23, f.v3), DR_ESHAPE);
    FAILS(dr_arr_add_rowvec(f.t, f.v3, f.v3), DR_ESHAPE);
    FAILS(dr_arr_replicate_rows(f.t, f.m23, 2), DR_ESHAPE);
    FAILS(dr_arr_sum_rows(f.t, f.v3), DR_ESHAPE);
    FAILS(dr_arr_sum_cols(f.t, f.v3), DR_ESHAPE);
    FAILS(dr_arr_logsumexp_rows(f.t, f.v3), DR_ESHAPE);
    FAILS(dr_arr_slice2(f.t, f.v3, 0, 1, 0, 1), DR_ESHAPE);
    FAILS(dr_arr_reshape(f.t, f.m23, 2, 4, 2), DR_ESHAPE);
    FAILS(dr_arr_reshape(f.t, f.m23, 1, 6, 2), DR_ESHAPE);
    FAILS(dr_arr_reshape(f.t, f.m23, 3, 6, 1), DR_ESHAPE);
    FAILS(dr_arr_input(f.t, 1, 3, 2, D), DR_ESHAPE);
    FAILS(dr_arr_input(f.t, 0, 3, 1, D), DR_ESHAPE);
    {
        dr_arr xs[2];
        FAILS((xs[0] = f.v3, xs[1] = f.m33, dr_arr_concat(f.t, 0, 2, xs)),
              DR_ESHAPE);
        FAILS((xs[0] = f.m23, xs[1] = f.m33, dr_arr_concat(f.t, 1, 2, xs)),
              DR_ESHAPE);
        FAILS((xs[0] = f.m23, xs[1] = f.m32, dr_arr_concat(f.t, 0, 2, xs)),
              DR_ESHAPE);
        FAILS((xs[0] = f.v3, xs[1] = f.v3, dr_arr_concat(f.t, 1, 2, xs)),
              DR_ESHAPE);
        FAILS(dr_arr_concat(f.t, 0, 0, xs), DR_EINVAL);
        FAILS((xs[0] = f.v3, xs[1] = f.v3, dr_arr_concat(f.t, 2, 2, xs)),
              DR_EINVAL);
    }
    SFAILS(dr_arr_dot(f.t, f.v2, f.v3), DR_ESHAPE);
    SFAILS(dr_arr_dot(f.t, f.m23, f.m32), DR_ESHAPE);
    SFAILS(dr_arr_index2(f.t, f.v3, 0, 0), DR_ESHAPE);
    (void)i0;
    chk_context(NULL);
}

static void test_range_errors(void **state)
{
    (void)state;
    int64_t bad[3] = {0, 3, 1}, neg[2] = {-1, 0}, ok[3] = {0, 1, 2};
    FAILS(dr_arr_input(f.t, 2, -1, 2, D), DR_ERANGE);
    FAILS(dr_arr_input(f.t, 2, (int64_t)1 << 40, 2, D), DR_ERANGE);
    FAILS(dr_arr_const(f.t, 1, -5, 1, D), DR_ERANGE);
    FAILS(dr_arr_replicate_rows(f.t, f.v3, -1), DR_ERANGE);
    FAILS(dr_arr_replicate_cols(f.t, f.v3, (int64_t)1 << 33), DR_ERANGE);
    FAILS(dr_arr_slice(f.t, f.v3, 2, 2), DR_ERANGE);
    FAILS(dr_arr_slice(f.t, f.v3, -1, 1), DR_ERANGE);
    FAILS(dr_arr_slice(f.t, f.m33, 0, 4), DR_ERANGE);
    FAILS(dr_arr_slice2(f.t, f.m23, 0, 2, 2, 2), DR_ERANGE);
    FAILS(dr_arr_slice2(f.t, f.m23, 1, -1, 0, 1), DR_ERANGE);
    FAILS(dr_arr_gather(f.t, f.v3, 3, bad), DR_ERANGE);
    FAILS(dr_arr_gather(f.t, f.v3, 2, neg), DR_ERANGE);
    FAILS(dr_arr_gather(f.t, f.m23, 3, ok), DR_ERANGE); /* rows: 0..1 */
    FAILS(dr_arr_scatter(f.t, f.v3, 2, ok), DR_ERANGE);
    FAILS(dr_arr_scatter(f.t, f.v3, 3, bad), DR_ERANGE);
    FAILS(dr_arr_scatter(f.t, f.v3, -1, ok), DR_ERANGE);
    SFAILS(dr_arr_index(f.t, f.v3, 3), DR_ERANGE);
    SFAILS(dr_arr_index(f.t, f.v3, -1), DR_ERANGE);
    SFAILS(dr_arr_index2(f.t, f.m23, 2, 0), DR_ERANGE);
    SFAILS(dr_arr_index2(f.t, f.m23, 0, 3), DR_ERANGE);
    /* the id API reports the value through the pointer */
    {
        fix f;
        fix_new(&f);
        double v = 0;
        assert_int_equal(dr_arr_index_id(f.t, f.v3.idx, 7, &v), DR_NONE);
        assert_true(isnan(v));
        CHK_STATUS(dr_tape_status(f.t), DR_ERANGE);
        dr_tape_free(f.t);
    }
    chk_context(NULL);
}

static void test_invalid_ids(void **state)
{
    (void)state;
    dr_arr none = {DR_NONE, 0, 0, 0, NULL};
    FAILS(dr_arr_add(f.t, f.v3, none), DR_EINVAL);
    FAILS(dr_arr_map(f.t, (dr_arr_fn)99, f.v3), DR_EINVAL);
    FAILS(dr_arr_map(f.t, (dr_arr_fn)-1, f.v3), DR_EINVAL);
    FAILS(dr_arr_input(f.t, 1, 3, 1, NULL), DR_EINVAL);
    FAILS(dr_arr_gather(f.t, f.v3, 2, NULL), DR_EINVAL);
    FAILS(dr_arr_from_reals(f.t, 2, NULL), DR_EINVAL);
    SFAILS(dr_arr_sum(f.t, none), DR_EINVAL);
    /* a scalar node is not an array */
    {
        fix f;
        fix_new(&f);
        dr_real s = dr_input(f.t, 2.0);
        dr_arr fake = {s.idx, 1, 1, 1, NULL};
        expect_fail(&f, dr_arr_map(f.t, DR_FN_EXP, fake), DR_EINVAL);
    }
    /* an n-ary (extended) scalar node is not an array either */
    {
        fix f;
        fix_new(&f);
        dr_real a = dr_input(f.t, 1), b = dr_input(f.t, 2), c = dr_input(f.t, 3);
        dr_idx args[3] = {a.idx, b.idx, c.idx};
        double parts[3] = {1, 1, 1};
        dr_idx nid = dr_recordn(f.t, 3, args, parts);
        assert_int_not_equal(nid, DR_NONE);
        expect_fail(&f, dr_arr_get(f.t, dr_arr_transpose_id(f.t, nid)),
                    DR_EINVAL);
    }
    /* a scalar-valued array op (dot) is not an array */
    {
        fix f;
        fix_new(&f);
        dr_real d = dr_arr_dot(f.t, f.v3, f.v3);
        assert_int_not_equal(d.idx, DR_NONE);
        assert_int_equal(dr_arr_size(f.t, d.idx), -1);
        expect_fail(&f, dr_arr_get(f.t, dr_arr_sum_rows_id(f.t, d.idx)),
                    DR_EINVAL);
    }
    /* stale ids after a clear, ids past the end */
    {
        fix f;
        fix_new(&f);
        dr_idx old = f.m23.idx;
        CHK_STATUS(dr_tape_clear(f.t), DR_OK);
        assert_int_equal(dr_arr_size(f.t, old), -1);
        assert_null(dr_arr_values(f.t, old));
        double out[6];
        CHK_STATUS(dr_arr_read(f.t, old, out), DR_EINVAL);
        CHK_STATUS(dr_arr_seed(f.t, old, out), DR_EINVAL);
        CHK_STATUS(dr_arr_adjoint(f.t, old, out), DR_EINVAL);
        assert_null(dr_arr_adjoint_ptr(f.t, old));
        expect_fail(&f, dr_arr_get(f.t, dr_arr_transpose_id(f.t, old)),
                    DR_EINVAL);
    }
    {
        fix f;
        fix_new(&f);
        expect_fail(&f, dr_arr_get(f.t, dr_arr_transpose_id(f.t, 1000000)),
                    DR_EINVAL);
    }
    /* NULL pointers to the access functions */
    {
        fix f;
        fix_new(&f);
        CHK_STATUS(dr_arr_read(f.t, f.v3.idx, NULL), DR_EINVAL);
        CHK_STATUS(dr_arr_seed(f.t, f.v3.idx, NULL), DR_EINVAL);
        CHK_STATUS(dr_arr_adjoint(f.t, f.v3.idx, NULL), DR_EINVAL);
        CHK_STATUS(dr_tape_status(f.t), DR_OK);
        dr_tape_free(f.t);
    }
    /* a NULL tape: failed handles, no crash */
    assert_int_equal(dr_arr_input(NULL, 1, 2, 1, D).idx, DR_NONE);
    assert_int_equal(dr_arr_add_id(NULL, 0, 0), DR_NONE);
    assert_true(isnan(dr_arr_sum(NULL, none).val));
    assert_int_equal(dr_arr_size(NULL, 0), -1);
    CHK_STATUS(dr_arr_shape(NULL, 0, NULL, NULL, NULL), DR_EINVAL);
    chk_context(NULL);
}

/* --------------------------------------------- empty and thin shapes */

static void test_empty(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_arr e = dr_arr_input(t, 1, 0, 1, NULL);
    dr_arr m0 = dr_arr_input(t, 2, 3, 0, NULL); /* 3 x 0 */
    dr_arr n0 = dr_arr_input(t, 2, 0, 4, NULL); /* 0 x 4 */
    assert_int_not_equal(e.idx, DR_NONE);
    assert_int_equal(dr_arr_size(t, m0.idx), 0);
    /* 3 x 0 times 0 x 4: a 3 x 4 matrix of zeros */
    dr_arr p = dr_arr_matmul(t, m0, 0, n0, 0);
    assert_int_equal(p.rows, 3);
    assert_int_equal(p.cols, 4);
    for (int i = 0; i < 12; i++)
        CHK_SAME(p.val[i], 0.0);
    dr_arr mv = dr_arr_matvec(t, m0, e); /* 3 x 0 times length 0 */
    assert_int_equal(mv.rows, 3);
    CHK_SAME(mv.val[2], 0.0);
    dr_real s = dr_arr_sum(t, e);
    CHK_SAME(s.val, 0.0);
    dr_real d = dr_arr_dot(t, e, e);
    CHK_SAME(d.val, 0.0);
    dr_real l = dr_arr_logsumexp(t, e);
    assert_true(isinf(l.val) && l.val < 0);
    dr_arr sm = dr_arr_softmax(t, e);
    assert_int_equal(sm.rows, 0);
    dr_arr sr = dr_arr_sum_rows(t, m0); /* 3 zeros */
    CHK_SAME(sr.val[1], 0.0);
    dr_arr sc = dr_arr_sum_cols(t, n0); /* 4 zeros */
    assert_int_equal(sc.rows, 4);
    dr_arr tr = dr_arr_transpose(t, m0);
    assert_int_equal(tr.rows, 0);
    assert_int_equal(tr.cols, 3);
    dr_arr g = dr_arr_gather(t, e, 0, NULL);
    assert_int_equal(g.rows, 0);
    dr_arr sc2 = dr_arr_scatter(t, e, 4, NULL); /* 4 zeros */
    CHK_SAME(sc2.val[3], 0.0);
    dr_arr sl = dr_arr_slice(t, e, 0, 0);
    assert_int_not_equal(sl.idx, DR_NONE);
    dr_arr xs[2] = {e, e};
    dr_arr c = dr_arr_concat(t, 0, 2, xs);
    assert_int_equal(c.rows, 0);
    dr_arr b = dr_arr_from_reals(t, 0, NULL);
    assert_int_equal(b.rows, 0);
    dr_arr r = dr_arr_reshape(t, m0, 2, 0, 7);
    assert_int_equal(r.cols, 7);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* a sweep through all of it */
    dr_real x = dr_input(t, 2.0);
    dr_arr ps = dr_arr_scale(t, x, p);
    dr_real y = dr_add(t, dr_arr_sum(t, ps), dr_mul(t, x, x));
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_SAME(dr_adjoint(t, x.idx), 4.0);
    double nothing[1];
    CHK_STATUS(dr_arr_adjoint(t, e.idx, nothing), DR_OK);
    CHK_STATUS(dr_arr_adjoint(t, e.idx, NULL), DR_OK); /* 0 elements */
    SFAILS(dr_arr_max(f.t, dr_arr_input(f.t, 1, 0, 1, NULL)), DR_ESHAPE);
    dr_tape_free(t);
}

static void test_thin(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    dr_arr row = dr_arr_input(t, 2, 1, 4, a); /* 1 x 4 */
    dr_arr col = dr_arr_input(t, 2, 4, 1, b); /* 4 x 1 */
    dr_arr inner = dr_arr_matmul(t, row, 0, col, 0); /* 1 x 1 */
    assert_int_equal(inner.rows, 1);
    assert_int_equal(inner.cols, 1);
    CHK_SAME(inner.val[0], 70.0);
    dr_arr outer = dr_arr_matmul(t, col, 0, row, 0); /* 4 x 4 */
    CHK_SAME(outer.val[15], 32.0);
    dr_arr same = dr_arr_matmul(t, row, 1, col, 1); /* 4x1 * 1x4 */
    assert_int_equal(same.rows, 4);
    CHK_SAME(same.val[1], 6.0);
    dr_arr v1 = dr_arr_reshape(t, row, 1, 4, 1);
    dr_arr sm = dr_arr_softmax(t, col); /* each row has one element */
    CHK_SAME(sm.val[2], 1.0);
    dr_arr sm1 = dr_arr_softmax(t, row);
    CHK_REL(sm1.val[0] + sm1.val[1] + sm1.val[2] + sm1.val[3], 1.0, 1e-15);
    dr_real y = dr_add(t, dr_arr_index(t, inner, 0),
                       dr_arr_dot(t, v1, dr_arr_reshape(t, col, 1, 4, 1)));
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_SAME(y.val, 140.0);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double ga[4], gb[4];
    CHK_STATUS(dr_arr_adjoint(t, row.idx, ga), DR_OK);
    CHK_STATUS(dr_arr_adjoint(t, col.idx, gb), DR_OK);
    for (int i = 0; i < 4; i++) {
        CHK_SAME(ga[i], 2 * b[i]);
        CHK_SAME(gb[i], 2 * a[i]);
    }
    dr_tape_free(t);
}

/* ----------------------------------------------------- out of memory */

/* A small array program; returns DR_OK and the gradient, or the first
   failure.  Must never crash whatever allocation fails. */
static dr_status oom_program(double *g, size_t *ng)
{
    dr_tape *t = dr_tape_new();
    if (!t)
        return DR_ENOMEM;
    double W[12], x[8];
    for (int i = 0; i < 12; i++)
        W[i] = sin(i + 1.0);
    for (int i = 0; i < 8; i++)
        x[i] = cos(i + 0.5);
    dr_status st = DR_OK;
    for (int round = 0; round < 2 && st == DR_OK; round++) {
        if (round)
            st = dr_tape_clear(t);
        dr_arr Wa = dr_arr_input(t, 2, 3, 4, W);
        dr_arr X = dr_arr_const(t, 2, 2, 4, x);
        dr_real s = dr_input(t, 0.7);
        dr_arr h = dr_arr_matmul(t, X, 0, Wa, 1); /* 2 x 3 */
        h = dr_arr_map(t, DR_FN_TANH, dr_arr_scale(t, s, h));
        dr_arr ls = dr_arr_log_softmax(t, h);
        int64_t idx[3] = {0, 1, 0};
        dr_arr gth = dr_arr_gather(t, ls, 3, idx);
        dr_real a = dr_arr_index(t, ls, 4);
        dr_real y = dr_add(t, dr_arr_sum(t, gth), dr_mul(t, a, s));
        dr_real parts[2] = {y, s};
        dr_arr v = dr_arr_from_reals(t, 2, parts);
        dr_real z = dr_arr_logsumexp(t, v);
        if (st == DR_OK)
            st = dr_tape_status(t);
        if (st == DR_OK)
            st = dr_seed(t, z.idx, 1.0);
        if (st == DR_OK)
            st = dr_reverse(t);
        if (st == DR_OK)
            st = dr_tape_status(t);
        if (st == DR_OK) {
            st = dr_arr_adjoint(t, Wa.idx, g);
            g[12] = dr_adjoint(t, s.idx);
            *ng = 13;
        }
    }
    dr_tape_free(t);
    return st;
}

static void test_oom(void **state)
{
    (void)state;
    double ref[16], g[16];
    size_t nref = 0, ng = 0;
    CHK_STATUS(oom_program(ref, &nref), DR_OK);
    assert_int_equal(nref, 13);
    chk_alloc al;
    bool saw_all_ok = false;
    for (size_t k = 1; k < 200 && !saw_all_ok; k++) {
        for (int rest = 0; rest < 2; rest++) {
            chk_alloc_install(&al);
            chk_alloc_fail_in(&al, k, rest != 0);
            memset(g, 0, sizeof g);
            dr_status st = oom_program(g, &ng);
            size_t fails = al.fails, live = al.live;
            chk_alloc_uninstall();
            chk_context("fail allocation %zu%s", k, rest ? " and later" : "");
            assert_int_equal(live, 0); /* no leak */
            assert_int_equal(al.bad_frees, 0);
            if (fails == 0) {
                CHK_STATUS(st, DR_OK);
                saw_all_ok = true;
            } else {
                assert_true(st == DR_OK || st == DR_ENOMEM);
            }
            if (st == DR_OK)
                for (int i = 0; i < 13; i++)
                    CHK_SAME(g[i], ref[i]);
        }
    }
    assert_true(saw_all_ok);
    chk_context(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_range_errors),
        cmocka_unit_test(test_invalid_ids),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_thin),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
