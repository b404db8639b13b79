/*
 * test_array_ops.c - every array primitive of dualrev.h on random shapes and
 * data:
 *   - the gradient of <w, y(x)> (w random) read back from one sweep, against
 *     central finite differences of every input element;
 *   - the transpose identity <ybar, J xdot> = <J^T ybar, xdot>, with J xdot
 *     a finite-difference directional derivative and J^T ybar one sweep;
 *   - the id-based (FFI) entry points give the same values.
 * Shapes include empty arrays and 1 x n / n x 1 cases.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_progs.h" /* shapes, programs */

#define FD_RTOL 1e-7

/* ----------------------------------------------------------- evaluation */

typedef struct run {
    dr_tape *t;
    dr_arr in[MAXIN];
    dr_arr y;    /* array output */
    dr_real ys;  /* scalar output */
    int64_t ny;  /* output elements (1 for a scalar) */
} run;

static void run_prog(const prog *p, const shapes *s, const double *x, run *o)
{
    o->t = chk_tape_new();
    const double *q = x;
    for (int k = 0; k < s->nin; k++) {
        o->in[k] = dr_arr_input(o->t, s->rank[k], s->rows[k], s->cols[k], q);
        assert_int_not_equal(o->in[k].idx, DR_NONE);
        q += numel(s, k);
    }
    if (p->ya) {
        o->y = p->ya(o->t, o->in, s);
        CHK_STATUS(dr_tape_status(o->t), DR_OK);
        assert_int_not_equal(o->y.idx, DR_NONE);
        o->ny = o->y.rows * o->y.cols;
    } else {
        o->ys = p->ys(o->t, o->in, s);
        CHK_STATUS(dr_tape_status(o->t), DR_OK);
        o->ny = 1;
    }
}

static void out_values(const run *o, double *out)
{
    if (o->ny == 0)
        return;
    if (o->y.idx != DR_NONE && o->y.rank)
        CHK_STATUS(dr_arr_read(o->t, o->y.idx, out), DR_OK);
    else
        out[0] = o->ys.val;
}

typedef struct fctx {
    const prog *p;
    const shapes *s;
    const double *w; /* output weights */
    const double *x0, *dir; /* for directional derivatives */
    int64_t n;
} fctx;

/* <w, y(x)> */
static double loss_at(const double *x, size_t n, void *c)
{
    (void)n;
    fctx *f = c;
    run o;
    memset(&o, 0, sizeof o);
    o.y.idx = DR_NONE;
    run_prog(f->p, f->s, x, &o);
    double *y = malloc((size_t)(o.ny ? o.ny : 1) * sizeof(double));
    out_values(&o, y);
    double acc = 0.0;
    for (int64_t i = 0; i < o.ny; i++)
        acc += f->w[i] * y[i];
    free(y);
    dr_tape_free(o.t);
    return acc;
}

/* <w, y(x0 + h dir)> */
static double loss_dir(double h, void *c)
{
    fctx *f = c;
    double *x = malloc((size_t)(f->n ? f->n : 1) * sizeof(double));
    for (int64_t i = 0; i < f->n; i++)
        x[i] = f->x0[i] + h * f->dir[i];
    double v = loss_at(x, (size_t)f->n, c);
    free(x);
    return v;
}


/* One random instance of p: gradient vs FD and the transpose identity. */
static void check_instance(const prog *p, chk_rng *r, int rep)
{
    shapes s;
    memset(&s, 0, sizeof s);
    p->shape(r, &s);
    int64_t n = total_in(&s);
    double *x = malloc((size_t)(n + 1) * sizeof(double));
    double *dir = malloc((size_t)(n + 1) * sizeof(double));
    fill_inputs(r, p, x, n);
    for (int64_t i = 0; i < n; i++)
        dir[i] = chk_rng_uniform(r, -1, 1);

    run o;
    memset(&o, 0, sizeof o);
    o.y.idx = DR_NONE;
    run_prog(p, &s, x, &o);
    chk_context("%s rep %d: in0 %lldx%lld in1 %lldx%lld out %lld", p->name,
                rep, (long long)s.rows[0], (long long)s.cols[0],
                (long long)s.rows[1], (long long)s.cols[1], (long long)o.ny);
    double *w = malloc((size_t)(o.ny + 1) * sizeof(double));
    for (int64_t i = 0; i < o.ny; i++)
        w[i] = chk_rng_uniform(r, -1, 1);

    /* J^T w by one sweep */
    if (p->ya)
        CHK_STATUS(dr_arr_seed(o.t, o.y.idx, w), DR_OK);
    else
        CHK_STATUS(dr_seed(o.t, o.ys.idx, w[0]), DR_OK);
    CHK_STATUS(dr_reverse(o.t), DR_OK);
    double *g = malloc((size_t)(n + 1) * sizeof(double));
    double *q = g;
    for (int k = 0; k < s.nin; k++) {
        CHK_STATUS(dr_arr_adjoint(o.t, o.in[k].idx, q), DR_OK);
        q += numel(&s, k);
    }

    /* elementwise against finite differences */
    fctx f = {p, &s, w, x, dir, n};
    for (int64_t i = 0; i < n; i++) {
        chk_deriv d = chk_fd_partial(loss_at, &f, (size_t)n, x, (size_t)i, 0);
        chk_context("%s rep %d: d/dx[%lld]", p->name, rep, (long long)i);
        CHK_DERIV(g[i], d, FD_RTOL);
    }

    /* transpose identity: <w, J dir> = <J^T w, dir> */
    double lhs_ad = 0.0;
    for (int64_t i = 0; i < n; i++)
        lhs_ad += g[i] * dir[i];
    chk_deriv jd = chk_fd1(loss_dir, &f, 0.0, 1.0 / 1024);
    chk_context("%s rep %d: transpose identity", p->name, rep);
    CHK_DERIV(lhs_ad, jd, FD_RTOL);

    /* a second sweep after clearing gives the same adjoints */
    CHK_STATUS(dr_adjoints_clear(o.t), DR_OK);
    if (p->ya)
        CHK_STATUS(dr_arr_seed(o.t, o.y.idx, w), DR_OK);
    else
        CHK_STATUS(dr_seed(o.t, o.ys.idx, w[0]), DR_OK);
    CHK_STATUS(dr_reverse(o.t), DR_OK);
    q = g;
    for (int k = 0; k < s.nin; k++) {
        double *g2 = malloc((size_t)(numel(&s, k) + 1) * sizeof(double));
        CHK_STATUS(dr_arr_adjoint(o.t, o.in[k].idx, g2), DR_OK);
        for (int64_t i = 0; i < numel(&s, k); i++)
            CHK_SAME(g2[i], q[i]);
        free(g2);
        q += numel(&s, k);
    }
    chk_context(NULL);
    dr_tape_free(o.t);
    free(x);
    free(dir);
    free(w);
    free(g);
}

#define REPS 12

static void test_all_primitives(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROGS; i++) {
        chk_rng r;
        chk_rng_seed(&r, 1000 + i);
        for (int rep = 0; rep < REPS; rep++)
            check_instance(&progs[i], &r, rep);
    }
}

/* ------------------------------------------------- values, fixed cases */

static void test_values(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double a[6] = {1, 2, 3, 4, 5, 6}, v3[3] = {1, -1, 2}, v2[2] = {3, -2};
    dr_arr m = dr_arr_input(t, 2, 2, 3, a); /* [[1 2 3] [4 5 6]] */
    dr_arr x = dr_arr_const(t, 1, 3, 1, v3);
    dr_arr u = dr_arr_input(t, 1, 2, 1, v2);
    a[0] = 100; /* the tape copied the data */
    assert_true(m.val[0] == 1.0);
    a[0] = 1;
    /* borrowed data is not copied */
    dr_arr mr = dr_arr_const_ref(t, 2, 3, 2, a);
    assert_ptr_equal(mr.val, a);
    assert_int_equal(dr_arr_active(t, mr.idx), 0);
    assert_ptr_equal(dr_arr_values(t, dr_arr_input_ref_id(t, 1, 6, 1, a)), a);
    assert_int_equal(dr_arr_active(t, x.idx), 0);
    assert_int_equal(dr_arr_active(t, m.idx), 1);
    dr_arr mv = dr_arr_matvec(t, m, x); /* [5, 11] */
    CHK_SAME(mv.val[0], 5.0);
    CHK_SAME(mv.val[1], 11.0);
    dr_arr vm = dr_arr_vecmat(t, u, m); /* 3*[1 2 3] - 2*[4 5 6] */
    CHK_SAME(vm.val[0], -5.0);
    CHK_SAME(vm.val[2], -3.0);
    dr_arr mt = dr_arr_transpose(t, m);
    assert_int_equal(mt.rows, 3);
    CHK_SAME(mt.val[1], 4.0);
    dr_arr p = dr_arr_matmul(t, m, 0, m, 1); /* m m^T = [[14 32] [32 77]] */
    CHK_SAME(p.val[1], 32.0);
    CHK_SAME(p.val[3], 77.0);
    dr_arr sr = dr_arr_sum_rows(t, m), sc = dr_arr_sum_cols(t, m);
    assert_int_equal(sr.rows, 2);
    assert_int_equal(sc.rows, 3);
    CHK_SAME(sr.val[1], 15.0);
    CHK_SAME(sc.val[2], 9.0);
    dr_real mx = dr_arr_max(t, m);
    CHK_SAME(mx.val, 6.0);
    /* softmax rows sum to one, stable at large inputs */
    double big[4] = {1000, 1001, -1000, -1001};
    dr_arr bm = dr_arr_input(t, 2, 2, 2, big);
    dr_arr sm = dr_arr_softmax(t, bm);
    CHK_REL(sm.val[0] + sm.val[1], 1.0, 1e-15);
    CHK_REL(sm.val[1], 1.0 / (1.0 + exp(-1.0)), 1e-15);
    dr_arr ls = dr_arr_log_softmax(t, bm);
    CHK_REL(ls.val[0], -log1p(exp(1.0)), 1e-15);
    dr_real l = dr_arr_logsumexp(t, bm);
    CHK_REL(l.val, 1001 + log1p(exp(-1.0)), 1e-15);
    dr_arr lr = dr_arr_logsumexp_rows(t, bm);
    CHK_REL(lr.val[1], -1000 + log1p(exp(-1.0)), 1e-15);
    /* max: derivative to the first maximal element */
    double tie[4] = {1, 3, 3, 2};
    dr_arr tv = dr_arr_input(t, 1, 4, 1, tie);
    dr_real tm = dr_arr_max(t, tv);
    /* gather / scatter with collisions */
    int64_t gi[5] = {2, 0, 2, 2, 1};
    dr_arr g = dr_arr_gather(t, tv, 5, gi);
    CHK_SAME(g.val[0], 3.0);
    CHK_SAME(g.val[1], 1.0);
    dr_arr sct = dr_arr_scatter(t, g, 3, gi);
    CHK_SAME(sct.val[2], 9.0); /* 3 + 3 + 3 */
    CHK_SAME(sct.val[0], 1.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);

    CHK_STATUS(dr_seed(t, tm.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double adj[4];
    CHK_STATUS(dr_arr_adjoint(t, tv.idx, adj), DR_OK);
    CHK_SAME(adj[0], 0.0);
    CHK_SAME(adj[1], 1.0);
    CHK_SAME(adj[2], 0.0);
    /* unreached arrays read as zero and have no buffer */
    assert_null(dr_arr_adjoint_ptr(t, m.idx));
    assert_null(dr_arr_adjoint_ptr(t, x.idx));
    double z[6];
    CHK_STATUS(dr_arr_adjoint(t, m.idx, z), DR_OK);
    CHK_SAME(z[5], 0.0);
    /* seeding a constant does nothing */
    CHK_STATUS(dr_arr_seed(t, x.idx, v3), DR_OK);
    dr_tape_free(t);
}

/* dr_arr_sum's value (added in partial sums, base/sum.c) at every length
   from 0 to 40, so that every element of the vector part and of the tail
   counts: integers, whose sum is exact in any order; its tangent likewise;
   a NaN or an infinity anywhere comes through */
static void test_sum_every_length(void **state)
{
    (void)state;
    double x[40], dx[40];
    for (int i = 0; i < 40; i++) {
        x[i] = (double)(i * 7 % 13) - 5.0;
        dx[i] = (double)(i % 5) + 1.0;
    }
    for (int n = 0; n <= 40; n++) {
        double want = 0.0, dwant = 0.0;
        for (int i = 0; i < n; i++) {
            want += x[i];
            dwant += dx[i];
        }
        dr_tape *t = chk_tape_new();
        dr_arr a = dr_arr_input(t, 1, n, 1, x);
        dr_real s = dr_arr_sum(t, a);
        CHK_SAME(s.val, want);
        CHK_STATUS(dr_arr_tangent_seed(t, a.idx, dx), DR_OK);
        CHK_STATUS(dr_forward(t), DR_OK);
        CHK_SAME(dr_tangent(t, s.idx), dwant);
        for (int i = 0; i < n; i++) {
            double keep = x[i];
            x[i] = i % 2 ? NAN : INFINITY;
            dr_real si = dr_arr_sum(t, dr_arr_input(t, 1, n, 1, x));
            assert_true(i % 2 ? isnan(si.val) : si.val == INFINITY);
            x[i] = keep;
        }
        CHK_STATUS(dr_tape_status(t), DR_OK);
        dr_tape_free(t);
    }
}

/* by id: shape and values read back */
static void test_id_access(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double a[6] = {1, 2, 3, 4, 5, 6};
    dr_idx m = dr_arr_input_id(t, 2, 3, 2, a);
    dr_idx v = dr_arr_const_id(t, 1, 2, 1, a);
    dr_idx y = dr_arr_matvec_id(t, m, v);
    int rank;
    int64_t rows, cols;
    CHK_STATUS(dr_arr_shape(t, y, &rank, &rows, &cols), DR_OK);
    assert_int_equal(rank, 1);
    assert_int_equal(rows, 3);
    assert_int_equal(cols, 1);
    assert_int_equal(dr_arr_size(t, y), 3);
    const double *yv = dr_arr_values(t, y);
    assert_non_null(yv);
    CHK_SAME(yv[2], 5.0 + 12.0);
    double out[3];
    CHK_STATUS(dr_arr_read(t, y, out), DR_OK);
    CHK_SAME(out[0], 5.0);
    dr_arr h = dr_arr_get(t, y);
    assert_int_equal(h.idx, y);
    assert_int_equal(h.rows, 3);
    /* scalar ids are not arrays */
    dr_real s = dr_input(t, 1.0);
    assert_int_equal(dr_arr_size(t, s.idx), -1);
    assert_null(dr_arr_values(t, s.idx));
    CHK_STATUS(dr_arr_shape(t, s.idx, NULL, NULL, NULL), DR_EINVAL);
    CHK_STATUS(dr_arr_shape(t, DR_NONE, NULL, NULL, NULL), DR_EINVAL);
    assert_int_equal(dr_arr_get(t, 12345).idx, DR_NONE);
    /* queries do not set the sticky status */
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* dr_arr_map is the scalar operation element by element: the same value,
   and the same derivative in a reverse and a forward sweep, bit for bit,
   at ordinary points and where a formula in the value would cancel
   (tanh' = 1 - tanh^2 is 0 from |x| = 19 on, sigmoid' = s (1 - s) from
   x = 37 on, while both derivatives are far from 0 there). */
static void test_map_is_scalar_op(void **state)
{
    (void)state;
    static const struct {
        dr_arr_fn fn;
        dr_real (*op)(dr_tape *, dr_real);
    } maps[] = {{DR_FN_NEG, dr_neg},   {DR_FN_ABS, dr_abs},
                {DR_FN_SQRT, dr_sqrt}, {DR_FN_EXP, dr_exp},
                {DR_FN_LOG, dr_log},   {DR_FN_SIN, dr_sin},
                {DR_FN_COS, dr_cos},   {DR_FN_TANH, dr_tanh},
                {DR_FN_SIGMOID, dr_sigmoid}, {DR_FN_RELU, dr_relu},
                {DR_FN_SQUARE, NULL}};
    static const double xs[] = {0.3, -1.7, 0.0, 2.5, 25.0, -25.0, 40.0,
                                -40.0, 700.0, 1e-310, NAN, INFINITY};
    enum { N = sizeof xs / sizeof *xs };
    for (size_t k = 0; k < sizeof maps / sizeof *maps; k++) {
        chk_context("map %d", (int)maps[k].fn);
        dr_tape *t = chk_tape_new();
        dr_arr x = dr_arr_input(t, 1, N, 1, xs);
        dr_arr y = dr_arr_map(t, maps[k].fn, x);
        double g[N], tan[N], one[N];
        for (size_t i = 0; i < N; i++)
            one[i] = 1.0;
        CHK_STATUS(dr_arr_seed(t, y.idx, one), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        CHK_STATUS(dr_arr_adjoint(t, x.idx, g), DR_OK);
        CHK_STATUS(dr_tangents_clear(t), DR_OK);
        CHK_STATUS(dr_arr_tangent_seed(t, x.idx, one), DR_OK);
        CHK_STATUS(dr_forward(t), DR_OK);
        CHK_STATUS(dr_arr_tangent(t, y.idx, tan), DR_OK);
        for (size_t i = 0; i < N; i++) {
            dr_tape *u = chk_tape_new();
            dr_real a = dr_input(u, xs[i]);
            dr_real b = maps[k].op ? maps[k].op(u, a) : dr_mul(u, a, a);
            double d;
            CHK_STATUS(dr_gradient(u, b, 1, &a, &d), DR_OK);
            CHK_SAME(y.val[i], b.val);
            /* (+ 0.0: a sum that starts from 0 makes -0 into 0) */
            CHK_SAME(g[i] + 0.0, d + 0.0);
            CHK_SAME(tan[i] + 0.0, d + 0.0);
            dr_tape_free(u);
        }
        dr_tape_free(t);
    }
    chk_context(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_is_scalar_op),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_sum_every_length),
        cmocka_unit_test(test_id_access),
        cmocka_unit_test(test_all_primitives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
