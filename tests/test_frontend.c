/*
 * test_frontend.c - the entry points for foreign-function front ends
 * (cbits/record/frontend.h) against the C API they stand for: for every operation,
 * dr_fe_OP's value and the node dr_fe_OP_rec records are bit for bit those
 * of dr_OP, at ordinary and special points (zeros, ties, infinities, NaN,
 * tiny and huge values, domain edges), and constants, a NULL tape and ids
 * not on the tape are treated as dr_OP treats them.
 *
 * The input ranges a front end reads back (dr_fe_input_range, _len) are
 * looked up in order, out of order, after clears, restores and forks.
 *
 * The derivatives themselves are tested in test_ops.c and test_semantics.c.
 */
#include "check.h"
#include "frontend/frontend.h"
#include "tape/tape.h"

#include <math.h>
#include <stdio.h>

typedef struct unary {
    const char *name;
    dr_real (*op)(dr_tape *, dr_real);
    double (*val)(double);
    dr_idx (*rec)(dr_tape *, dr_idx, double, double);
} unary;

typedef struct binary {
    const char *name;
    dr_real (*op)(dr_tape *, dr_real, dr_real);
    double (*val)(double, double);
    dr_idx (*rec)(dr_tape *, dr_idx, dr_idx, double, double, double);
} binary;

#define UNARY_ROW(op) {#op, dr_##op, dr_fe_##op, dr_fe_##op##_rec},
static const unary unaries[] = {
    DR_RULES_UNARY(UNARY_ROW) DR_RULES_UNARY_FUSED(UNARY_ROW)
};
#define BINARY_ROW(op) {#op, dr_##op, dr_fe_##op, dr_fe_##op##_rec},
static const binary binaries[] = {DR_RULES_BINARY(BINARY_ROW)};

static const double points[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 20.0, 710.0,
    1 + 0x1p-52, 1 - 0x1p-53, -1 + 0x1p-53, 1e-200, -1e-200, 5e-324,
    1e300, -1e300, INFINITY, -INFINITY, NAN,
};
#define N_POINTS (sizeof points / sizeof points[0])

/* d y / d x on t, by a sweep */
static double partial(dr_tape *t, dr_real y, dr_real x)
{
    double g = -12345.0;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    return g;
}

static void test_unary(void **state)
{
    const unary *u = *state;
    for (size_t i = 0; i < N_POINTS; i++) {
        double xv = points[i];
        chk_context("%s at %.17g", u->name, xv);
        dr_tape *t = chk_tape_new();
        dr_real x = dr_input(t, xv);
        dr_real y = u->op(t, x);
        double v = u->val(xv);
        CHK_SAME(v, y.val);
        dr_real z = {v, u->rec(t, x.idx, xv, v)};
        assert_int_equal(z.idx, y.idx + 1);
        CHK_SAME(partial(t, z, x), partial(t, y, x));
        /* a constant records nothing */
        assert_int_equal(u->rec(t, DR_NONE, xv, v), DR_NONE);
        assert_int_equal(dr_tape_len(t), 3);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        dr_tape_free(t);
    }
}

static void test_binary(void **state)
{
    const binary *o = *state;
    for (size_t i = 0; i < N_POINTS; i++) {
        for (size_t j = 0; j < N_POINTS; j++) {
            double av = points[i], bv = points[j];
            chk_context("%s at (%.17g, %.17g)", o->name, av, bv);
            double v = o->val(av, bv);
            dr_tape *t = chk_tape_new();
            dr_real x[2] = {dr_input(t, av), dr_input(t, bv)};
            dr_real ca = dr_const(av), cb = dr_const(bv);
            /* var/var, var/const, const/var */
            dr_real ys[3] = {o->op(t, x[0], x[1]), o->op(t, x[0], cb),
                             o->op(t, ca, x[1])};
            dr_real zs[3] = {
                {v, o->rec(t, x[0].idx, x[1].idx, av, bv, v)},
                {v, o->rec(t, x[0].idx, DR_NONE, av, bv, v)},
                {v, o->rec(t, DR_NONE, x[1].idx, av, bv, v)},
            };
            for (int k = 0; k < 3; k++) {
                CHK_SAME(v, ys[k].val);
                assert_int_equal(zs[k].idx, ys[k].idx + 3);
                CHK_SAME(partial(t, zs[k], x[0]), partial(t, ys[k], x[0]));
                CHK_SAME(partial(t, zs[k], x[1]), partial(t, ys[k], x[1]));
            }
            assert_int_equal(o->rec(t, DR_NONE, DR_NONE, av, bv, v), DR_NONE);
            assert_int_equal(dr_tape_len(t), 8);
            CHK_STATUS(dr_tape_status(t), DR_OK);
            dr_tape_free(t);
        }
    }
}

static void test_powi(void **state)
{
    (void)state;
    const int ns[] = {-3, -1, 0, 1, 2, 3, 7, 1000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        for (size_t i = 0; i < N_POINTS; i++) {
            double xv = points[i], n = ns[k];
            chk_context("powi(%.17g, %d)", xv, ns[k]);
            dr_tape *t = chk_tape_new();
            dr_real x = dr_input(t, xv);
            dr_real y = dr_powi(t, x, ns[k]);
            double v = dr_fe_powi(xv, n);
            CHK_SAME(v, y.val);
            dr_real z = {v, dr_fe_powi_rec(t, x.idx, xv, n, v)};
            CHK_SAME(partial(t, z, x), partial(t, y, x));
            assert_int_equal(dr_fe_powi_rec(t, DR_NONE, xv, n, v), DR_NONE);
            dr_tape_free(t);
        }
    }
}

/* an id not on the tape, a NULL tape: what dr_sin and dr_add do */
static void test_bad_arguments(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 0.5);
    dr_real bad = {0.5, x.idx + 1000};
    assert_int_equal(dr_fe_sin_rec(t, bad.idx, 0.5, sin(0.5)), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape *u = chk_tape_new();
    assert_int_equal(dr_sin(u, bad).idx, DR_NONE);
    CHK_STATUS(dr_tape_status(u), DR_EINVAL);
    dr_tape_free(u);

    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 0.5);
    bad.idx = x.idx + 1000;
    assert_int_equal(dr_fe_add_rec(t, x.idx, bad.idx, 0.5, 0.5, 1.0), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    assert_int_equal(dr_tape_len(t), 1);
    dr_tape_free(t);

    assert_int_equal(dr_fe_sin_rec(NULL, 0, 0.5, sin(0.5)), DR_NONE);
    assert_int_equal(dr_fe_add_rec(NULL, 0, 1, 0.5, 0.5, 1.0), DR_NONE);
    assert_int_equal(dr_fe_powi_rec(NULL, 0, 0.5, 2, 0.25), DR_NONE);
}

/* a statement: the gradient through its nodes is its partials (repeated
   leaves adding, constant leaves left out), k - 1 nodes for k active
   leaves, none for none; order 2 records nothing and says so; a leaf not
   on the tape fails as a binary node does, and pairs past n are unread */
static void test_statement(void **state)
{
    (void)state;
    assert_int_equal(dr_fe_stmt_max(), DR_FE_STMT_MAX);
    dr_tape *t = chk_tape_new();
    dr_real x[4];
    for (int i = 0; i < 4; i++)
        x[i] = dr_input(t, 1.0 + i);
    size_t len = dr_tape_len(t);
    /* partials 2, 3 (x0 twice: 2 + 0.5), a constant, 5; pairs past n = 5
       name x3 and must not count */
    dr_idx y = dr_fe_stmt(t, 5, x[0].idx, 2.0, x[1].idx, 3.0, DR_NONE, 7.0,
                          x[0].idx, 0.5, x[2].idx, 5.0, x[3].idx, 11.0);
    assert_int_not_equal(y, DR_NONE);
    assert_int_equal(dr_tape_len(t), len + 3); /* 4 active leaves */
    double g[4];
    dr_real out = {0.0, y};
    CHK_STATUS(dr_gradient(t, out, 4, x, g), DR_OK);
    assert_true(g[0] == 2.5 && g[1] == 3.0 && g[2] == 5.0 && g[3] == 0.0);

    /* one active leaf: one node; none: no node */
    len = dr_tape_len(t);
    y = dr_fe_stmt(t, 2, DR_NONE, 1.0, x[1].idx, -4.0, 0, 0, 0, 0, 0, 0, 0, 0);
    assert_int_equal(dr_tape_len(t), len + 1);
    out.idx = y;
    CHK_STATUS(dr_gradient(t, out, 4, x, g), DR_OK);
    assert_true(g[0] == 0.0 && g[1] == -4.0 && g[2] == 0.0 && g[3] == 0.0);
    assert_int_equal(dr_fe_stmt(t, 1, DR_NONE, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                     DR_NONE);
    assert_int_equal(dr_tape_len(t), len + 1);

    /* a leaf not on the tape: DR_NONE, the tape's DR_EINVAL, as dr_add */
    y = dr_fe_stmt(t, 3, x[0].idx, 1.0, x[1].idx, 1.0, x[3].idx + 1000, 1.0,
                   0, 0, 0, 0, 0, 0);
    assert_int_equal(y, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);

    /* order 2: nothing recorded, DR_FE_STMT_BY_OPS */
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real a = dr_input(t, 1.0), b = dr_input(t, 2.0);
    len = dr_tape_len(t);
    assert_int_equal(dr_fe_stmt(t, 2, a.idx, 1.0, b.idx, 1.0, 0, 0, 0, 0, 0,
                                0, 0, 0),
                     DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);

    assert_int_equal(dr_fe_stmt(NULL, 1, 0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                     DR_NONE);
}

/* while paused, every recording entry point records nothing and returns
   DR_NONE, at orders 1 and 2; resumed, they record again; a clear resumes */
static void test_pause(void **state)
{
    (void)state;
    assert_int_equal(dr_fe_pause(NULL, 1), 0);
    dr_tape *t = chk_tape_new();
    for (int order = 1; order <= 2; order++) {
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        chk_context("order %d", order);
        dr_real x = dr_input(t, 0.5), y = dr_input(t, 2.0);
        assert_int_equal(dr_fe_pause(t, 1), 0);
        assert_int_equal(dr_fe_pause(t, 1), 1);
        size_t len = dr_tape_len(t);
        for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++)
            assert_int_equal(unaries[i].rec(t, x.idx, x.val, 1.0), DR_NONE);
        for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++)
            assert_int_equal(binaries[i].rec(t, x.idx, y.idx, x.val, y.val, 1.0), DR_NONE);
        assert_int_equal(dr_fe_powi_rec(t, x.idx, x.val, 3.0, 0.125), DR_NONE);
        dr_idx ia[2] = {x.idx, y.idx};
        double xa[2] = {x.val, y.val};
        assert_int_equal(dr_fe_dot_rec(t, DR_NONE, 0.0, 2, ia, xa, ia, xa), DR_NONE);
        assert_int_equal(dr_fe_stmt(t, 2, x.idx, 1.0, y.idx, 2.0, 0, 0, 0, 0, 0, 0, 0, 0),
                         DR_NONE);
        assert_int_equal(dr_fe_stmt2(t, x.idx, 1.0, y.idx, 2.0), DR_NONE);
        assert_int_equal(dr_fe_stmt3(t, x.idx, 1.0, y.idx, 2.0, x.idx, 3.0), DR_NONE);
        assert_int_equal(dr_fe_prog(t, NULL, 1.0, x.idx, x.val, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                         DR_NONE);
        assert_int_equal(dr_tape_len(t), len);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        /* resumed: recorded */
        assert_int_equal(dr_fe_pause(t, 0), 1);
        dr_idx m = binaries[0].rec(t, x.idx, y.idx, x.val, y.val, 1.0);
        assert_int_not_equal(m, DR_NONE);
        assert_int_equal(dr_tape_len(t), len + 1);
        /* a clear resumes */
        dr_fe_pause(t, 1);
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        assert_int_equal(dr_fe_pause(t, 0), 0);
    }
    dr_tape_free(t);
}

/* dr_fe_stmt2 and dr_fe_stmt3 record what dr_fe_stmt of two and three
   leaves records (the same nodes, ids and partials, constants and repeated
   leaves included), and fail, refuse order 2 and NULL as it does */
static void test_statement_small(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new(), *u = chk_tape_new();
    dr_real x[3], y[3];
    for (int i = 0; i < 3; i++) {
        x[i] = dr_input(t, 1.0 + i);
        y[i] = dr_input(u, 1.0 + i);
    }
    /* leaf ids as positions into x / y; -1 a constant */
    static const int cases[][3] = {{0, 1, -1}, {0, -1, 1}, {-1, 0, 2},
                                   {2, 2, 0},  {-1, -1, 1}, {-1, -1, -1},
                                   {1, 0, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int *k = cases[c];
        dr_idx at[3], au[3];
        for (int i = 0; i < 3; i++) {
            at[i] = k[i] < 0 ? DR_NONE : x[k[i]].idx;
            au[i] = k[i] < 0 ? DR_NONE : y[k[i]].idx;
        }
        double d[3] = {2.0 + (double)c, -0.5, 3.25};
        size_t lt = dr_tape_len(t), lu = dr_tape_len(u);
        dr_idx a = dr_fe_stmt3(t, at[0], d[0], at[1], d[1], at[2], d[2]);
        dr_idx b = dr_fe_stmt(u, 3, au[0], d[0], au[1], d[1], au[2], d[2],
                              0, 0, 0, 0, 0, 0);
        assert_int_equal(dr_tape_len(t) - lt, dr_tape_len(u) - lu);
        assert_int_equal(a == DR_NONE, b == DR_NONE);
        /* the two-leaf call on the first two leaves */
        lt = dr_tape_len(t);
        lu = dr_tape_len(u);
        dr_idx a2 = dr_fe_stmt2(t, at[0], d[0], at[1], d[1]);
        dr_idx b2 = dr_fe_stmt(u, 2, au[0], d[0], au[1], d[1], au[2], d[2],
                               0, 0, 0, 0, 0, 0);
        assert_int_equal(dr_tape_len(t) - lt, dr_tape_len(u) - lu);
        assert_int_equal(a2 == DR_NONE, b2 == DR_NONE);
        dr_idx outs_t[2] = {a, a2}, outs_u[2] = {b, b2};
        for (int o = 0; o < 2; o++) {
            if (outs_t[o] == DR_NONE)
                continue;
            double gt[3], gu[3];
            dr_real rt = {0.0, outs_t[o]}, ru = {0.0, outs_u[o]};
            CHK_STATUS(dr_gradient(t, rt, 3, x, gt), DR_OK);
            CHK_STATUS(dr_gradient(u, ru, 3, y, gu), DR_OK);
            for (int i = 0; i < 3; i++)
                assert_true(gt[i] == gu[i]);
        }
    }
    /* a leaf not on the tape */
    assert_int_equal(dr_fe_stmt2(t, x[0].idx, 1.0, x[2].idx + 1000, 1.0),
                     DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real a = dr_input(t, 1.0), b = dr_input(t, 2.0);
    assert_int_equal(dr_fe_stmt3(t, a.idx, 1.0, DR_NONE, 1.0, b.idx + 1000,
                                 1.0),
                     DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    /* order 2: nothing recorded */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    a = dr_input(t, 1.0);
    b = dr_input(t, 2.0);
    size_t len = dr_tape_len(t);
    assert_int_equal(dr_fe_stmt2(t, a.idx, 1.0, b.idx, 1.0), DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_fe_stmt3(t, a.idx, 1.0, b.idx, 1.0, a.idx, 1.0),
                     DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_tape_len(t), len);
    dr_tape_free(t);
    dr_tape_free(u);
    assert_int_equal(dr_fe_stmt2(NULL, 0, 1.0, 0, 1.0), DR_NONE);
    assert_int_equal(dr_fe_stmt3(NULL, 0, 1.0, 0, 1.0, 0, 1.0), DR_NONE);
}

/* every range's length from its first id, in the order made, backwards and
   at random; ids that start no range (inside one, past the tape, made by
   dr_input_range) answer 0; a clear, a restore past a range and a range
   made while forked forget or never note it; bad tapes answer 0 / DR_NONE */
static void test_input_ranges(void **state)
{
    (void)state;
    enum { R = 300 }; /* past the notes' first allocation */
    dr_tape *t = chk_tape_new();
    static dr_idx first[R];
    static size_t len[R];
    for (size_t k = 0; k < R; k++) {
        len[k] = 1 + (k * 7919) % 97;
        first[k] = dr_fe_input_range(t, len[k]);
        assert_int_not_equal(first[k], DR_NONE);
        if (k % 50 == 0) /* ranges need not be adjacent */
            (void)dr_mul(t, dr_input(t, 2.0), dr_input(t, 3.0));
    }
    for (size_t k = 0; k < R; k++)
        assert_int_equal(dr_fe_input_len(t, first[k]), len[k]);
    for (size_t k = R; k-- > 0;)
        assert_int_equal(dr_fe_input_len(t, first[k]), len[k]);
    for (size_t i = 0; i < 1000; i++) {
        size_t k = (i * 2654435761u) % R;
        assert_int_equal(dr_fe_input_len(t, first[k]), len[k]);
    }
    dr_idx plain;
    CHK_STATUS(dr_input_range(t, 5, &plain), DR_OK);
    assert_int_equal(dr_fe_input_len(t, plain), 0);
    assert_int_equal(dr_fe_input_len(t, first[3] + 1), 0);
    assert_int_equal(dr_fe_input_len(t, first[R - 1] + 100000), 0);
    assert_int_equal(dr_fe_input_len(t, DR_NONE), 0);
    assert_int_equal(dr_fe_input_range(t, 0), DR_NONE);

    /* a restore drops the ranges made since the save; the ids come again */
    dr_tape_pos pos;
    dr__tape_save(t, &pos);
    dr_idx gone = dr_fe_input_range(t, 40);
    assert_int_equal(dr_fe_input_len(t, gone), 40);
    dr__tape_restore(t, &pos);
    assert_int_equal(dr_fe_input_len(t, gone), 0);
    dr_idx again = dr_fe_input_range(t, 3);
    assert_int_equal(again, gone);
    assert_int_equal(dr_fe_input_len(t, again), 3);
    assert_int_equal(dr_fe_input_len(t, first[7]), len[7]);

    /* a clear forgets every range */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(dr_fe_input_len(t, first[0]), 0);
    dr_idx f = dr_fe_input_range(t, 9);
    assert_int_equal(dr_fe_input_len(t, f), 9);

    /* a child handle of a fork makes its range but notes nothing */
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    dr_idx kf = dr_fe_input_range(kids[0], 4);
    assert_int_not_equal(kf, DR_NONE);
    assert_int_equal(dr_fe_input_len(kids[0], kf), 0);
    CHK_STATUS(dr_join(t), DR_OK);
    assert_int_equal(dr_fe_input_len(t, kf), 0);
    assert_int_equal(dr_fe_input_len(t, f), 9);
    dr_tape_free(t);

    assert_int_equal(dr_fe_input_range(NULL, 3), DR_NONE);
    assert_int_equal(dr_fe_input_len(NULL, 0), 0);
}

int main(void)
{
    /* (the array is sized from this list, so a test added here has room) */
    static const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_powi),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_statement),
        cmocka_unit_test(test_statement_small),
        cmocka_unit_test(test_pause),
        cmocka_unit_test(test_input_ranges),
    };
    enum { NU = sizeof unaries / sizeof unaries[0],
           NB = sizeof binaries / sizeof binaries[0],
           NF = sizeof fixed / sizeof fixed[0] };
    struct CMUnitTest tests[NU + NB + NF];
    static char names[NU + NB][32];
    size_t n = 0;
    for (size_t i = 0; i < NU; i++, n++) {
        snprintf(names[n], sizeof names[n], "fe_%s", unaries[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_unary, NULL, NULL,
                                       (void *)&unaries[i]};
    }
    for (size_t i = 0; i < NB; i++, n++) {
        snprintf(names[n], sizeof names[n], "fe_%s", binaries[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_binary, NULL, NULL,
                                       (void *)&binaries[i]};
    }
    for (size_t i = 0; i < NF; i++)
        tests[n++] = fixed[i];
    return _cmocka_run_group_tests("frontend", tests, n, NULL, NULL);
}
