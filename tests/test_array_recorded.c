/*
 * test_array_recorded.c - the passes recorded as operations
 * (dr_tangent_record, dr_adjoint_record) through every array primitive, on
 * the programs of array_progs.h with scalar inputs made into arrays
 * (dr_arr_from_reals, reshaped), under a nonlinear objective:
 *   - the recorded tangent's value is the forward sweep's J v (dr_jvp),
 *     and its gradient is the Hessian-vector product H v (dr_hvp);
 *   - the recorded adjoints' values are the gradient (dr_gradient), and
 *     the gradient of their weighted sum is H w (dr_hvp);
 * so each array op's recorded rules are checked to first order against
 * the numeric sweeps and, differentiated once more, to second order.
 */
#include "check.h"
#include "arrays/array.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_progs.h" /* shapes, programs */

#define REPS 3

typedef struct run {
    dr_tape *t;
    dr_real *x;   /* the scalar inputs */
    dr_idx mark;  /* after them: where the recorded passes begin */
    dr_real f;
    dr_arr y;     /* the program's output (idx DR_NONE: a scalar, ys) */
    dr_real ys;
} run;

static void record(const prog *p, const shapes *s, const double *xv,
                   const objective *ob, run *o)
{
    int64_t n = total_in(s);
    o->t = chk_tape_new();
    dr_tape *t = o->t;
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    o->x = malloc((size_t)(n + 1) * sizeof *o->x);
    for (int64_t i = 0; i < n; i++)
        o->x[i] = dr_input(t, xv[i]);
    o->mark = dr_tape_mark(t);
    dr_arr in[MAXIN];
    int64_t off = 0;
    for (int k = 0; k < s->nin; k++) {
        int64_t nk = numel(s, k);
        dr_arr v = dr_arr_from_reals(t, (size_t)nk, o->x + off);
        in[k] = s->rank[k] == 2 ? dr_arr_reshape(t, v, 2, s->rows[k], s->cols[k]) : v;
        assert_int_not_equal(in[k].idx, DR_NONE);
        off += nk;
    }
    o->f = objective_of(t, p, in, s, ob, &o->y, &o->ys);
    CHK_STATUS(dr_tape_status(t), DR_OK);
}

static double mag(size_t n, const double *a)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

static void check_instance(const prog *p, chk_rng *r, int rep)
{
    shapes s;
    memset(&s, 0, sizeof s);
    p->shape(r, &s);
    int64_t n = total_in(&s);
    size_t N = (size_t)n;
    double *xv = malloc((N + 1) * sizeof *xv), *v = malloc((N + 1) * sizeof *v),
           *wv = malloc((N + 1) * sizeof *wv);
    fill_inputs(r, p, xv, n);
    for (size_t i = 0; i < N; i++) {
        v[i] = chk_rng_uniform(r, -1, 1);
        wv[i] = chk_rng_uniform(r, -1, 1);
    }
    static objective ob;
    objective_draw(r, &ob);
    run o;
    record(p, &s, xv, &ob, &o);
    dr_tape *t = o.t;
    chk_context("%s rep %d: in0 %lldx%lld in1 %lldx%lld", p->name, rep,
                (long long)s.rows[0], (long long)s.cols[0],
                (long long)s.rows[1], (long long)s.cols[1]);
    double *g = calloc(N + 1, sizeof *g), *hv = calloc(N + 1, sizeof *hv),
           *hw = calloc(N + 1, sizeof *hw), *got = calloc(N + 1, sizeof *got);
    dr_idx *ids = malloc((N + 1) * sizeof *ids);
    dr_real *seeds = malloc((N + 1) * sizeof *seeds),
            *adj = malloc((N + 1) * sizeof *adj);
    for (size_t i = 0; i < N; i++) {
        ids[i] = o.x[i].idx;
        seeds[i] = dr_const(v[i]);
    }
    double jv = 0.0;
    CHK_STATUS(dr_jvp(t, 1, &o.f, N, o.x, v, &jv), DR_OK);
    CHK_STATUS(dr_gradient(t, o.f, N, o.x, g), DR_OK);
    CHK_STATUS(dr_hvp(t, o.f, N, o.x, v, hv), DR_OK);
    CHK_STATUS(dr_hvp(t, o.f, N, o.x, wv, hw), DR_OK);

    /* the tangent recorded: J v, and its gradient H v */
    dr_real tr;
    CHK_STATUS(dr_tangent_record(t, o.mark, N, ids, seeds, o.f, &tr), DR_OK);
    chk_context("%s rep %d: recorded tangent (n %lld)", p->name, rep,
                (long long)n);
    CHK_CLOSE(tr.val, jv, 1e-12, 1e-12 * (1.0 + fabs(jv)));
    CHK_STATUS(dr_gradient(t, tr, N, o.x, got), DR_OK);
    double m = mag(N, hv);
    for (size_t i = 0; i < N; i++)
        CHK_CLOSE(got[i], hv[i], 1e-11, 1e-11 * (1.0 + m));

    /* the adjoints recorded: the gradient, and the gradient of their
       weighted sum H w */
    CHK_STATUS(dr_adjoint_record(t, o.mark, o.f, N, ids, adj), DR_OK);
    chk_context("%s rep %d: recorded adjoints", p->name, rep);
    m = mag(N, g);
    dr_real sum = dr_const(0.0);
    for (size_t i = 0; i < N; i++) {
        CHK_CLOSE(adj[i].val, g[i], 1e-12, 1e-12 * (1.0 + m));
        sum = dr_add(t, sum, dr_mul(t, dr_const(wv[i]), adj[i]));
    }
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_gradient(t, sum, N, o.x, got), DR_OK);
    m = mag(N, hw);
    for (size_t i = 0; i < N; i++)
        CHK_CLOSE(got[i], hw[i], 1e-11, 1e-11 * (1.0 + m));
    chk_context(NULL);
    free(ids);
    free(seeds);
    free(adj);
    free(g);
    free(hv);
    free(hw);
    free(got);
    free(o.x);
    dr_tape_free(t);
    free(xv);
    free(v);
    free(wv);
}

/* the sparse drivers through the array operations: the Hessian of the
   objective and the Jacobian of the program's output (its elements as
   index nodes) against the dense ones, entry by entry; outside the
   pattern the dense ones are zero */
static void check_sparse(const prog *p, chk_rng *r, int rep)
{
    shapes s;
    memset(&s, 0, sizeof s);
    p->shape(r, &s);
    int64_t n = total_in(&s);
    size_t N = (size_t)n;
    double *xv = malloc((N + 1) * sizeof *xv);
    fill_inputs(r, p, xv, n);
    static objective ob;
    objective_draw(r, &ob);
    run o;
    record(p, &s, xv, &ob, &o);
    dr_tape *t = o.t;
    chk_context("%s rep %d: sparse Hessian (n %lld)", p->name, rep, (long long)n);
    double *H = calloc(N * N + 1, sizeof *H);
    CHK_STATUS(dr_hessian(t, o.f, N, o.x, H), DR_OK);
    dr_sparse S;
    CHK_STATUS(dr_sparse_hessian(t, o.f, N, o.x, &S), DR_OK);
    sparse_is_dense(&S, H, N, N);
    dr_sparse_free(&S);
    /* the Jacobian of the output's elements */
    size_t M = 1;
    dr_real *ys = NULL;
    if (o.y.idx != DR_NONE) {
        M = (size_t)(o.y.rows * o.y.cols);
        ys = malloc((M + 1) * sizeof *ys);
        for (size_t i = 0; i < M; i++)
            ys[i] = o.y.rank == 1 ? dr_arr_index(t, o.y, (int64_t)i)
                                  : dr_arr_index2(t, o.y, (int64_t)i / o.y.cols,
                                                  (int64_t)i % o.y.cols);
    } else {
        ys = malloc(sizeof *ys);
        ys[0] = o.ys;
    }
    chk_context("%s rep %d: sparse Jacobian (%zu x %lld)", p->name, rep, M,
                (long long)n);
    double *J = calloc(M * N + 1, sizeof *J);
    CHK_STATUS(dr_jacobian(t, M, ys, N, o.x, J), DR_OK);
    CHK_STATUS(dr_sparse_jacobian(t, M, ys, N, o.x, &S), DR_OK);
    sparse_is_dense(&S, J, M, N);
    dr_sparse_free(&S);
    chk_context(NULL);
    free(ys);
    free(J);
    free(H);
    free(o.x);
    dr_tape_free(t);
    free(xv);
}

static void test_sparse_drivers(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROGS; i++) {
        chk_rng r;
        chk_rng_seed(&r, 11000 + i);
        for (int rep = 0; rep < REPS; rep++)
            check_sparse(&progs[i], &r, rep);
    }
}

static void test_all_primitives(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROGS; i++) {
        chk_rng r;
        chk_rng_seed(&r, 9000 + i);
        for (int rep = 0; rep < REPS; rep++)
            check_instance(&progs[i], &r, rep);
    }
}

/* a derivative of a derivative of a derivative through arrays: the third
   derivative of sum(tanh(s x)) in s, by recorded tangents twice and a
   gradient, against its closed form */
static void test_third_order(void **state)
{
    (void)state;
    const double xv[3] = {0.3, -0.8, 1.1};
    double s0 = 0.7;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real s = dr_input(t, s0);
    dr_idx mark = dr_tape_mark(t);
    dr_arr x = dr_arr_const(t, 1, 3, 1, xv);
    dr_real f = dr_arr_sum(t, dr_arr_map(t, DR_FN_TANH, dr_arr_scale(t, s, x)));
    dr_real one = dr_const(1.0), d1, d2;
    CHK_STATUS(dr_tangent_record(t, mark, 1, &s.idx, &one, f, &d1), DR_OK);
    CHK_STATUS(dr_tangent_record(t, mark, 1, &s.idx, &one, d1, &d2), DR_OK);
    double d3;
    CHK_STATUS(dr_gradient(t, d2, 1, &s, &d3), DR_OK);
    double e1 = 0, e2 = 0, e3 = 0;
    for (int i = 0; i < 3; i++) {
        double th = tanh(s0 * xv[i]), sech2 = 1 - th * th, xi = xv[i];
        e1 += xi * sech2;
        e2 += -2 * xi * xi * th * sech2;
        e3 += xi * xi * xi * (-2 * sech2 * sech2 + 4 * th * th * sech2);
    }
    CHK_CLOSE(d1.val, e1, 1e-14, 1e-15);
    CHK_CLOSE(d2.val, e2, 1e-13, 1e-14);
    CHK_CLOSE(d3, e3, 1e-12, 1e-13);
    dr_tape_free(t);
}

/* an array input has no scalar seed: its tangent is zero, and what goes
   through it alone is a constant of the recorded passes */
static void test_array_input_constant(void **state)
{
    (void)state;
    const double av[2] = {1.0, 2.0};
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real s = dr_input(t, 3.0);
    dr_idx mark = dr_tape_mark(t);
    dr_arr a = dr_arr_input(t, 1, 2, 1, av);
    dr_real f = dr_mul(t, s, dr_arr_dot(t, a, a)); /* s |a|^2 */
    dr_real one = dr_const(1.0), d, g;
    CHK_STATUS(dr_tangent_record(t, mark, 1, &s.idx, &one, f, &d), DR_OK);
    CHK_SAME(d.val, 5.0);
    CHK_STATUS(dr_adjoint_record(t, mark, f, 1, &s.idx, &g), DR_OK);
    CHK_SAME(g.val, 5.0);
    /* the recorded derivative depends on the array: its gradient there */
    CHK_STATUS(dr_seed(t, d.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double ga[2];
    CHK_STATUS(dr_arr_adjoint(t, a.idx, ga), DR_OK);
    CHK_SAME(ga[0], 2.0);
    CHK_SAME(ga[1], 4.0);
    dr_tape_free(t);
}

/* a node of a kind the recorded passes have no rules for (a new
   primitive whose node was given no hooks of its own): DR_ENOTSUP, never
   a zero derivative */
static void test_kind_without_rules(void **state)
{
    (void)state;
    const double av[3] = {0.5, -1.0, 2.0};
    for (int pass = 0; pass < 2; pass++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real s = dr_input(t, 1.5);
        dr_idx mark = dr_tape_mark(t);
        dr_arr a = dr_arr_input(t, 1, 3, 1, av);
        dr_arr b = dr_arr_map(t, DR_FN_EXP, dr_arr_scale(t, s, a));
        dr_real f = dr_arr_sum(t, b);
        dr__arr_find(t, b.idx)->kind = DR_ARR_K_OWN; /* and no hooks */
        dr_real one = dr_const(1.0), d;
        dr_status st = pass == 0
            ? dr_tangent_record(t, mark, 1, &s.idx, &one, f, &d)
            : dr_adjoint_record(t, mark, f, 1, &s.idx, &d);
        assert_int_equal(st, DR_ENOTSUP);
        dr_tape_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_primitives),
        cmocka_unit_test(test_sparse_drivers),
        cmocka_unit_test(test_third_order),
        cmocka_unit_test(test_array_input_constant),
        cmocka_unit_test(test_kind_without_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
