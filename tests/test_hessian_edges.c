/*
 * test_hessian_edges.c - the dense Hessian by edge pushing
 * (cbits/sweep/edge_push.c), which dr_hessian takes for more than 16
 * inputs: against the products with the unit vectors (dr_hvp_vec) and
 * central differences on programs with every node kind the pass has a rule
 * for (scalar operations, sums, given partials, n-ary nodes, selects, a
 * node twice in one operation); inputs given twice, constants, inner
 * nodes and inputs left out of x; giving up (the budget, a node without a
 * rule) with dr_hessian then taking the products; out of memory at each
 * allocation.  Every scalar operation's rule is checked against the
 * products in test_second_order.c.
 */
#include "check.h"
#include "sweep/sweep.h" /* dr__hessian_edges */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 24       /* inputs: more than one block of products */
#define NX (N + 4) /* x: the inputs and the odd places of test_places */

/* a program of N inputs with every kind of node edge pushing reads: a
   quadratic form written op by op, a chain of products, transcendental
   functions of sums, a quotient, powers, x * x, given partials (linear),
   an n-ary node, an n-ary sum and a select on both sides */
static dr_real mixed(dr_tape *t, const dr_real *x)
{
    dr_real f = dr_const(0.0);
    for (int i = 0; i < N; i++) {
        dr_real r = dr_const(0.0);
        for (int j = i; j < N; j += 3)
            r = dr_add(t, r, dr_mul(t, dr_const(1.0 / (1 + i + 2 * j)), x[j]));
        f = dr_add(t, f, dr_mul(t, x[i], r));
    }
    dr_real p = x[0];
    for (int i = 1; i < 6; i++)
        p = dr_mul(t, p, x[i]);
    f = dr_sub(t, f, p);
    f = dr_add(t, f, dr_sin(t, dr_add(t, x[6], dr_mul(t, x[7], x[8]))));
    f = dr_add(t, f, dr_div(t, x[9], dr_add(t, dr_const(3.0), dr_mul(t, x[10], x[10]))));
    f = dr_add(t, f, dr_powi(t, dr_sub(t, x[11], x[12]), 3));
    f = dr_add(t, f, dr_exp(t, dr_mul(t, dr_const(0.3), x[13])));
    f = dr_add(t, f, dr_tanh(t, dr_mul(t, x[14], x[14])));
    dr_real lin = {2.0 * x[15].val - 0.5 * x[16].val,
                   dr_record2(t, x[15].idx, 2.0, x[16].idx, -0.5)};
    f = dr_add(t, f, dr_mul(t, lin, lin));
    dr_idx ids[4] = {x[17].idx, x[18].idx, x[17].idx, x[19].idx};
    double ps[4] = {1.5, -1.0, 0.5, 2.0};
    dr_real nary = {2.0 * x[17].val - x[18].val + 2.0 * x[19].val,
                    dr_recordn(t, 4, ids, ps)};
    f = dr_add(t, f, dr_cos(t, nary));
    dr_real terms[3] = {x[20], dr_mul(t, x[21], x[22]), x[20]};
    dr_real sum = dr_sumn(t, 3, terms);
    f = dr_add(t, f, dr_mul(t, sum, sum));
    /* x[23] > 0: the first side, then the second */
    dr_real s1 = dr_select(t, x[23], dr_mul(t, x[23], x[23]), dr_neg(t, x[23]));
    dr_real s2 = dr_select(t, dr_neg(t, x[23]), dr_mul(t, x[22], x[23]),
                           dr_mul(t, x[21], x[23]));
    return dr_add(t, f, dr_add(t, s1, s2));
}

static void point(double *xv)
{
    for (int i = 0; i < N; i++)
        xv[i] = 0.3 + 0.05 * i - (i % 3 == 0 ? 0.4 : 0.0);
}

/* the Hessian by the products with the unit vectors */
static void by_products(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                        double *H)
{
    double *E = calloc(n * n, sizeof *E);
    assert_non_null(E);
    for (size_t i = 0; i < n; i++)
        E[i * n + i] = 1.0;
    CHK_STATUS(dr_hvp_vec(t, y, n, x, n, E, H), DR_OK);
    free(E);
}

static void close_all(const double *H, const double *want, size_t n)
{
    double scale = 0;
    for (size_t i = 0; i < n * n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < n * n; i++) {
        chk_context("entry (%zu, %zu)", i / n, i % n);
        CHK_CLOSE(H[i], want[i], 1e-13, 1e-12 * scale);
    }
}

static double gradient_i(const double *xv, size_t n, void *ctx)
{
    size_t i = *(const size_t *)ctx;
    dr_tape *t = chk_tape_new();
    dr_real x[N];
    CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
    double g[N];
    CHK_STATUS(dr_gradient(t, mixed(t, x), n, x, g), DR_OK);
    dr_tape_free(t);
    return g[i];
}

/* a tape of order 2 with the N inputs xv (into x) */
static dr_tape *order2_tape(const double *xv, dr_real *x)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_inputs(t, N, xv, x), DR_OK);
    return t;
}

/* the pass itself (dr__hessian_edges) of y with respect to x[0..n-1] */
static dr_status edges(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                       uint64_t budget, double *E, bool *done)
{
    int64_t rx[NX];
    for (size_t i = 0; i < n; i++)
        rx[i] = dr__rel_of(t, x[i].idx);
    return dr__hessian_edges(t, dr__rel_of(t, y.idx), n, rx, budget, E, done);
}

/* the pass itself, unbounded, on the program of every node kind: exactly
   symmetric, equal to the products to rounding and to central differences
   of the gradient; dr_hessian agrees (either way it goes at 24 inputs) */
static void test_mixed(void **state)
{
    (void)state;
    double xv[N], H[N * N], P[N * N], E[N * N];
    point(xv);
    dr_real x[N];
    dr_tape *t = order2_tape(xv, x);
    dr_real y = mixed(t, x);
    size_t len = dr_tape_len(t);
    bool done = false;
    CHK_STATUS(edges(t, y, N, x, UINT64_MAX, E, &done), DR_OK);
    assert_true(done);
    by_products(t, y, N, x, P);
    close_all(E, P, N);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < i; j++)
            CHK_SAME(E[i * N + j], E[j * N + i]);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++) {
            chk_context("H[%zu][%zu] against differences", i, j);
            chk_deriv fd = chk_fd_partial(gradient_i, &i, N, xv, j, 0.0);
            CHK_DERIV(E[i * N + j], fd, 1e-7);
        }
    /* the closed forms of a few entries */
    CHK_CLOSE(E[0 * N + 3], 1.0 / 7 - xv[1] * xv[2] * xv[4] * xv[5], 1e-13, 0);
    CHK_CLOSE(E[14 * N + 14],
              2 * (1 - pow(tanh(xv[14] * xv[14]), 2)) *
                      (1 - 4 * xv[14] * xv[14] * tanh(xv[14] * xv[14])) +
                  2.0 / 43,
              1e-13, 0);
    CHK_STATUS(dr_hessian(t, y, N, x, H), DR_OK);
    close_all(H, P, N);
    /* nothing on the tape changed: the same again */
    double E2[N * N];
    CHK_STATUS(edges(t, y, N, x, UINT64_MAX, E2, &done), DR_OK);
    for (size_t i = 0; i < N * N; i++)
        CHK_SAME(E2[i], E[i]);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* a quadratic form x^T A x of NQ inputs, recorded op by op (on the inputs
   it records) */
#define NQ 100
static dr_real quad_form(dr_tape *t, dr_real *x)
{
    double xv[NQ];
    for (int i = 0; i < NQ; i++)
        xv[i] = sin(i + 1.0);
    CHK_STATUS(dr_inputs(t, NQ, xv, x), DR_OK);
    dr_real f = dr_const(0.0);
    for (int i = 0; i < NQ; i++) {
        dr_real r = dr_const(0.0);
        for (int j = 0; j < NQ; j++)
            r = dr_add(t, r, dr_mul(t, dr_const(1.0 / (1 + i + 2 * j)), x[j]));
        f = dr_add(t, f, dr_mul(t, x[i], r));
    }
    return f;
}

/* its dr_hessian: by edge pushing (counted), exactly A + A^T */
static void test_quadratic_form(void **state)
{
    (void)state;
    static double H[NQ * NQ];
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NQ];
    dr_real f = quad_form(t, x);
    uint64_t before = dr__hessians_by_edges;
    CHK_STATUS(dr_hessian(t, f, NQ, x, H), DR_OK);
    assert_int_equal(dr__hessians_by_edges, before + 1);
    for (int i = 0; i < NQ; i++)
        for (int j = 0; j < NQ; j++) {
            chk_context("H[%d][%d]", i, j);
            CHK_SAME(H[i * NQ + j], 1.0 / (1 + i + 2 * j) + 1.0 / (1 + j + 2 * i));
        }
    /* a second call on the same tape: the same way, the same bits */
    static double H2[NQ * NQ];
    CHK_STATUS(dr_hessian(t, f, NQ, x, H2), DR_OK);
    assert_int_equal(dr__hessians_by_edges, before + 2);
    for (int i = 0; i < NQ * NQ; i++)
        CHK_SAME(H2[i], H[i]);
    dr_tape_free(t);
}

/* x with an input twice, a constant, an inner node (the Hessian with
   respect to it, holding what it depends on), an input not among the
   others (a constant here), and inputs left out of x */
static void test_places(void **state)
{
    (void)state;
    double xv[N];
    point(xv);
    dr_real in[N];
    dr_tape *t = order2_tape(xv, in);
    dr_real y = mixed(t, in);
    dr_real late = dr_input(t, 0.25); /* after y */
    dr_real x[NX];
    /* inputs 0..N-3 (N-2 left out: a constant here), then the odd places */
    memcpy(x, in, (N - 2) * sizeof *x);
    size_t n = N - 2;
    x[n++] = in[4];          /* twice, at N - 2 */
    x[n++] = dr_const(2.0);  /* a constant, at N - 1 */
    x[n++] = late;           /* an input recorded after y, at N */
    x[n++] = in[N - 1];      /* out of order, at N + 1 */
    double H[NX * NX], P[NX * NX], E[NX * NX];
    bool done = false;
    CHK_STATUS(edges(t, y, n, x, UINT64_MAX, E, &done), DR_OK);
    assert_true(done);
    CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
    by_products(t, y, n, x, P);
    close_all(E, P, n);
    close_all(H, P, n);
    for (size_t j = 0; j < n; j++) {
        CHK_SAME(E[(N - 2) * n + j], E[4 * n + j]); /* a row twice */
        CHK_SAME(E[j * n + N - 2], E[j * n + 4]);   /* and its column */
        CHK_SAME(E[(N - 1) * n + j], 0.0);          /* the constant's */
        CHK_SAME(E[N * n + j], 0.0);                /* after y */
    }

    /* an inner node as an input: the sum under the cosine, u; the
       Hessian of cos(u) in u is -cos(u), with every other place's
       dependence through u held */
    dr_tape_free(t);

    t = order2_tape(xv, in);
    dr_real u = dr_add(t, dr_mul(t, in[0], in[1]), in[2]);
    dr_real z = dr_add(t, dr_cos(t, u), dr_mul(t, u, in[3]));
    for (int i = 4; i < N; i++)
        z = dr_add(t, z, dr_mul(t, in[i], in[i - 1]));
    dr_real xs[N];
    memcpy(xs, in, N * sizeof *xs);
    xs[2] = u; /* in place of input 2, which then reaches y only through u */
    CHK_STATUS(dr_hessian(t, z, N, xs, H), DR_OK);
    by_products(t, z, N, xs, P);
    close_all(H, P, N);
    CHK_CLOSE(H[2 * N + 2], -cos(u.val), 1e-15, 0);
    CHK_SAME(H[2 * N + 3], 1.0);
    CHK_SAME(H[0 * N + 1], 0.0); /* in0 in1 only through u: held */
    dr_tape_free(t);
}

/* a dense Hessian of tanh layers costs edge pushing more than the
   products: it gives up (done false) within its budget, and dr_hessian's
   answer is then the products', bit for bit */
static dr_real layers(dr_tape *t, const dr_real *x)
{
    dr_real z[N], w[N];
    memcpy(z, x, N * sizeof *z);
    for (int l = 0; l < 3; l++) {
        for (int i = 0; i < N; i++) {
            dr_real s = dr_const(0.0);
            for (int j = 0; j < N; j++)
                s = dr_add(t, s, dr_mul(t, dr_const(sin(1.0 + i * 7 + j * 3 + l) / 5), z[j]));
            w[i] = dr_tanh(t, s);
        }
        memcpy(z, w, N * sizeof *z);
    }
    dr_real y = dr_const(0.0);
    for (int i = 0; i < N; i++)
        y = dr_add(t, y, dr_mul(t, z[i], z[i]));
    return y;
}

static void test_gives_up(void **state)
{
    (void)state;
    double xv[N], H[N * N], P[N * N], E[N * N];
    point(xv);
    dr_real x[N];
    dr_tape *t = order2_tape(xv, x);
    dr_real y = layers(t, x);
    bool done = true;
    /* the budget dr_hessian gives it (hessian.c: 2 passes of 16
       directions) */
    uint64_t budget = 2 * (uint64_t)(dr__rel_of(t, y.idx) + 1) * (8 + 3 * 16) / 48;
    CHK_STATUS(edges(t, y, N, x, budget, E, &done), DR_OK);
    assert_false(done);
    CHK_STATUS(edges(t, y, N, x, 0, E, &done), DR_OK);
    assert_false(done);
    CHK_STATUS(dr_hessian(t, y, N, x, H), DR_OK);
    by_products(t, y, N, x, P);
    for (size_t i = 0; i < N * N; i++)
        CHK_SAME(H[i], P[i]);
    /* unbounded, it finishes, with the same Hessian to rounding */
    CHK_STATUS(edges(t, y, N, x, UINT64_MAX, E, &done), DR_OK);
    assert_true(done);
    close_all(E, P, N);
    dr_tape_free(t);
}

/* a node without a rule for edge pushing (an external function's output,
   a node recorded at order 1): it does not start, and dr_hessian answers
   as the products do */
static void ext_rev(void *ctx, size_t n, const double *x, size_t m,
                    const double *y, const double *ybar, double *xbar)
{
    (void)ctx;
    (void)n;
    (void)m;
    (void)y;
    xbar[0] += ybar[0] * x[1];
    xbar[1] += ybar[0] * x[0];
}

static void test_no_rule(void **state)
{
    (void)state;
    double xv[N], H[N * N];
    point(xv);
    dr_real x[N], e;
    dr_tape *t = order2_tape(xv, x);
    dr_external ext = {.reverse = ext_rev};
    double ev = xv[0] * xv[1];
    CHK_STATUS(dr_record_external(t, &ext, 2, x, 1, &ev, &e), DR_OK);
    dr_real y = dr_add(t, mixed(t, x), dr_mul(t, e, e));
    bool done = true;
    CHK_STATUS(edges(t, y, N, x, UINT64_MAX, H, &done), DR_OK);
    assert_false(done);
    CHK_STATUS(dr_hessian(t, y, N, x, H), DR_ENOTSUP);
    dr_tape_free(t);

    /* order 1 below order 2 */
    t = chk_tape_new();
    CHK_STATUS(dr_inputs(t, N, xv, x), DR_OK);
    dr_real s = dr_sin(t, x[0]);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    y = dr_add(t, mixed(t, x), dr_mul(t, s, s));
    CHK_STATUS(dr_hessian(t, y, N, x, H), DR_ENOTSUP);
    dr_tape_free(t);
}

/* out of memory at each allocation of dr_hessian by edge pushing (the
   quadratic form): DR_ENOMEM or the Hessian (the products take over where
   edge pushing ran out), the tape usable after, nothing leaked */
static void test_out_of_memory(void **state)
{
    (void)state;
    static double want[NQ * NQ], H[NQ * NQ];
    for (int i = 0; i < NQ; i++)
        for (int j = 0; j < NQ; j++)
            want[i * NQ + j] = 1.0 / (1 + i + 2 * j) + 1.0 / (1 + j + 2 * i);
    bool finished = false;
    for (size_t k = 1; k < 1000 && !finished; k++) {
        for (int rest = 0; rest < 2; rest++) {
            chk_context("allocation %zu fails%s", k, rest ? " (and all later)" : "");
            chk_alloc al;
            chk_alloc_install(&al);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_real x[NQ];
            dr_real y = quad_form(t, x);
            size_t len = dr_tape_len(t);
            chk_alloc_reset_counts(&al);
            chk_alloc_fail_in(&al, k, rest);
            uint64_t before = dr__hessians_by_edges;
            dr_status st = dr_hessian(t, y, NQ, x, H);
            chk_alloc_fail_in(&al, 0, false);
            if (st == DR_OK) {
                /* (the products' answer where edge pushing ran out) */
                close_all(H, want, NQ);
                if (al.fails == 0) {
                    finished = true;
                    assert_int_equal(dr__hessians_by_edges, before + 1);
                }
            } else {
                CHK_STATUS(st, DR_ENOMEM);
            }
            CHK_STATUS(dr_tape_status(t), DR_OK);
            assert_int_equal(dr_tape_len(t), len);
            CHK_STATUS(dr_hessian(t, y, NQ, x, H), DR_OK);
            for (size_t i = 0; i < NQ * NQ; i++)
                CHK_SAME(H[i], want[i]);
            dr_tape_free(t);
            assert_int_equal(al.live, 0);
            chk_alloc_uninstall();
        }
    }
    assert_true(finished);

    /* the pass itself where its terms outgrow their first block (tanh
       layers, unbounded): DR_ENOMEM and not done, or the Hessian */
    double xv[N], E[N * N], E0[N * N];
    point(xv);
    {
        dr_real x[N];
        dr_tape *t = order2_tape(xv, x);
        bool done = false;
        CHK_STATUS(edges(t, layers(t, x), N, x, UINT64_MAX, E0, &done), DR_OK);
        assert_true(done);
        dr_tape_free(t);
    }
    finished = false;
    for (size_t k = 1; k < 1000 && !finished; k++) {
        chk_context("the pass: allocation %zu fails", k);
        chk_alloc al;
        chk_alloc_install(&al);
        dr_real x[N];
        dr_tape *t = order2_tape(xv, x);
        dr_real y = layers(t, x);
        chk_alloc_reset_counts(&al);
        chk_alloc_fail_in(&al, k, false);
        bool done = true;
        dr_status st = edges(t, y, N, x, UINT64_MAX, E, &done);
        chk_alloc_fail_in(&al, 0, false);
        if (al.fails == 0) {
            CHK_STATUS(st, DR_OK);
            assert_true(done);
            assert_true(k > 2); /* (its terms took blocks of their own) */
            for (size_t i = 0; i < N * N; i++)
                CHK_SAME(E[i], E0[i]);
            finished = true;
        } else {
            CHK_STATUS(st, DR_ENOMEM);
            assert_false(done);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    assert_true(finished);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_quadratic_form),
        cmocka_unit_test(test_places),
        cmocka_unit_test(test_gives_up),
        cmocka_unit_test(test_no_rule),
        cmocka_unit_test_teardown(test_out_of_memory, chk_alloc_teardown),
    };
    return cmocka_run_group_tests_name("hessian_edges", tests, NULL, NULL);
}
