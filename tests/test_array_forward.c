/*
 * test_array_forward.c - the forward (tangent) rules of every array
 * primitive, on the random programs of array_progs.h, for k >= 1
 * directions at once:
 *   - the transpose identity <ybar, J xdot> = <J^T ybar, xdot> per
 *     direction, J xdot from the forward rules, J^T ybar from the reverse
 *     sweep;
 *   - every element of J xdot against central finite differences;
 *   - a sweep of k directions equals k sweeps of one (through the public
 *     k == 1 calls), and repeated sweeps with varying k agree;
 *   - constant (inactive) operands: zero tangents, no effect of seeds;
 *   - the error paths of the seeding and reading calls.
 *
 * The forward sweep itself (dr_forward) is another layer's; the rules are
 * driven here by a minimal sweep of the test's own over the tape's nodes,
 * oldest first, through the same hook (record.h's dr_ext.forward).
 */
#include "check.h"
#include "jobs/jobs.h" /* dr__find_node, dr_ext, dr_fsweep */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_progs.h" /* shapes, programs */

#define FD_RTOL 1e-7
#define REPS 6
#define KDIR 3

/* ------------------------------------------------------- a minimal sweep */

/*
 * Scalar tangents (k per relative id) after one forward sweep of t: scalar
 * inputs have zero tangent, plain nodes the sum of partial times argument
 * tangent, extended nodes their forward hook.  NULL if the tape holds an
 * extended node without a forward rule (far nodes, in the test-far build,
 * have none until the forward sweep's layer gives them one).
 */
static double *mini_forward(dr_tape *t, size_t k)
{
    size_t N = (size_t)t->next;
    double *tan = calloc(N * k + 1, sizeof *tan);
    dr_fsweep f = {tan, k, t, DR_ARR_SEEDS_TANGENT};
    for (int64_t rel = 0; rel < t->next; rel++) {
        const dr_node *p = dr__find_node(t, rel);
        if (!p || p->a == 0) /* an input */
            continue;
        if (p->a == DR_EXT_TAG) {
            dr_ext *e = dr__node_ext(p);
            if (!e->forward) {
                free(tan);
                return NULL;
            }
            e->forward(e, &f);
            continue;
        }
        for (size_t d = 0; d < k; d++) {
            double v = p->da * tan[(size_t)(rel - p->a) * k + d];
            if (p->b > 0)
                v += p->db * tan[(size_t)(rel - p->b) * k + d];
            tan[(size_t)rel * k + d] = v;
        }
    }
    return tan;
}

/* ------------------------------------------------------------ evaluation */

typedef struct run {
    dr_tape *t;
    dr_arr in[MAXIN];
    dr_arr y;
    dr_real ys;
    int64_t ny;
} run;

/* inputs whose bit is set in cmask are constants */
static void run_prog(const prog *p, const shapes *s, const double *x,
                     unsigned cmask, run *o)
{
    memset(o, 0, sizeof *o);
    o->y.idx = DR_NONE;
    o->t = chk_tape_new();
    const double *q = x;
    for (int k = 0; k < s->nin; k++) {
        o->in[k] = (cmask >> k & 1u)
                       ? dr_arr_const(o->t, s->rank[k], s->rows[k],
                                      s->cols[k], q)
                       : dr_arr_input(o->t, s->rank[k], s->rows[k],
                                      s->cols[k], q);
        assert_int_not_equal(o->in[k].idx, DR_NONE);
        q += numel(s, k);
    }
    if (p->ya) {
        o->y = p->ya(o->t, o->in, s);
        assert_int_not_equal(o->y.idx, DR_NONE);
        o->ny = o->y.rows * o->y.cols;
    } else {
        o->ys = p->ys(o->t, o->in, s);
        o->ny = 1;
    }
    CHK_STATUS(dr_tape_status(o->t), DR_OK);
}

static void out_values(const run *o, double *out)
{
    if (o->ny == 0)
        return;
    if (o->y.idx != DR_NONE)
        CHK_STATUS(dr_arr_read(o->t, o->y.idx, out), DR_OK);
    else
        out[0] = o->ys.val;
}

/*
 * Seed each input with k directions (dir: the inputs' n values times k,
 * input after input, each direction-major), sweep k directions, read the
 * output's tangents into ydot (k blocks of ny).  false if the tape has a
 * node without a forward rule.
 */
static bool tangents(const run *o, const shapes *s, size_t k,
                     const double *dir, double *ydot)
{
    CHK_STATUS(dr_arr_tangents_clear(o->t), DR_OK);
    const double *q = dir;
    for (int i = 0; i < s->nin; i++) {
        CHK_STATUS(dr_arr_tangent_seed_vec(o->t, o->in[i].idx, k, q),
                   DR_OK);
        q += (size_t)numel(s, i) * k;
    }
    double *tan = mini_forward(o->t, k);
    if (!tan)
        return false;
    CHK_STATUS(dr_tape_status(o->t), DR_OK);
    if (o->y.idx != DR_NONE) {
        CHK_STATUS(dr_arr_tangent_vec(o->t, o->y.idx, k, ydot), DR_OK);
    } else {
        for (size_t d = 0; d < k; d++)
            ydot[d] = o->ys.idx == DR_NONE
                          ? 0.0
                          : tan[(size_t)(o->ys.idx - o->t->base) * k + d];
    }
    free(tan);
    return true;
}

typedef struct fctx {
    const prog *p;
    const shapes *s;
    const double *x0, *dir; /* dir: one direction, all inputs */
    int64_t n, elem;
} fctx;

/* output element f->elem at x0 + h dir */
static double elem_dir(double h, void *c)
{
    fctx *f = c;
    double *x = malloc((size_t)(f->n + 1) * sizeof(double));
    for (int64_t i = 0; i < f->n; i++)
        x[i] = f->x0[i] + h * f->dir[i];
    run o;
    run_prog(f->p, f->s, x, 0, &o);
    double *y = malloc((size_t)(o.ny + 1) * sizeof(double));
    out_values(&o, y);
    double v = y[f->elem];
    free(y);
    free(x);
    dr_tape_free(o.t);
    return v;
}

static int64_t instances, skipped;

/*
 * One random instance of p with the inputs of cmask constant: k
 * directions; the transpose identity for each; J xdot elementwise against
 * finite differences (first direction); the k-direction sweep against k
 * sweeps of one.
 */
static void check_instance(const prog *p, chk_rng *r, int rep, unsigned cmask)
{
    shapes s;
    memset(&s, 0, sizeof s);
    p->shape(r, &s);
    cmask &= (1u << s.nin) - 1u;
    int64_t n = total_in(&s);
    size_t k = KDIR;
    double *x = malloc((size_t)(n + 1) * sizeof(double));
    fill_inputs(r, p, x, n);
    /* directions as seeded (per input, direction-major), and the same
       with constant inputs' parts zero, as one vector per direction over
       all inputs (the layout of the reverse sweep's gradient) */
    double *dseed = malloc(((size_t)n * k + 1) * sizeof(double));
    double *dflat = malloc(((size_t)n * k + 1) * sizeof(double));
    for (int64_t i = 0; i < n * (int64_t)k; i++)
        dseed[i] = chk_rng_uniform(r, -1, 1);
    {
        int64_t off = 0;
        for (int i = 0; i < s.nin; i++) {
            int64_t ni = numel(&s, i);
            for (size_t d = 0; d < k; d++)
                for (int64_t e = 0; e < ni; e++)
                    dflat[(int64_t)d * n + off + e] =
                        (cmask >> i & 1u)
                            ? 0.0
                            : dseed[off * (int64_t)k + (int64_t)d * ni + e];
            off += ni;
        }
    }

    run o;
    run_prog(p, &s, x, cmask, &o);
    chk_context("%s rep %d cmask %u: in0 %lldx%lld in1 %lldx%lld out %lld",
                p->name, rep, cmask, (long long)s.rows[0],
                (long long)s.cols[0], (long long)s.rows[1],
                (long long)s.cols[1], (long long)o.ny);
    int64_t ny = o.ny;
    double *ydot = malloc(((size_t)ny * k + 1) * sizeof(double));
    instances++;
    if (!tangents(&o, &s, k, dseed, ydot)) {
        skipped++;
        goto done;
    }

    /* J^T w by one reverse sweep */
    double *w = malloc((size_t)(ny + 1) * sizeof(double));
    double *g = calloc((size_t)n + 1, sizeof(double));
    for (int64_t i = 0; i < ny; i++)
        w[i] = chk_rng_uniform(r, -1, 1);
    bool active = p->ya ? dr_arr_active(o.t, o.y.idx) == 1
                        : o.ys.idx != DR_NONE;
    if (active) {
        if (p->ya)
            CHK_STATUS(dr_arr_seed(o.t, o.y.idx, w), DR_OK);
        else
            CHK_STATUS(dr_seed(o.t, o.ys.idx, w[0]), DR_OK);
        CHK_STATUS(dr_reverse(o.t), DR_OK);
        double *q = g;
        for (int i = 0; i < s.nin; i++) {
            CHK_STATUS(dr_arr_adjoint(o.t, o.in[i].idx, q), DR_OK);
            q += numel(&s, i);
        }
    } else { /* nothing depends on an input: the tangent is zero */
        for (int64_t i = 0; i < ny * (int64_t)k; i++)
            CHK_SAME(ydot[i], 0.0);
    }

    /* transpose identity, per direction; the tolerance scales with the
       terms summed */
    for (size_t d = 0; d < k; d++) {
        double lhs = 0.0, rhs = 0.0, mag = 0.0;
        for (int64_t i = 0; i < ny; i++) {
            lhs += w[i] * ydot[(int64_t)d * ny + i];
            mag += fabs(w[i] * ydot[(int64_t)d * ny + i]);
        }
        for (int64_t i = 0; i < n; i++) {
            rhs += g[i] * dflat[(int64_t)d * n + i];
            mag += fabs(g[i] * dflat[(int64_t)d * n + i]);
        }
        chk_context("%s rep %d cmask %u: transpose identity, direction %zu",
                    p->name, rep, cmask, d);
        CHK_ABS(lhs, rhs, 1e-13 * (mag + 1e-300) + 1e-300);
    }

    /* J xdot against finite differences, direction 0, every element (the
       constant inputs are perturbed by nothing: their dflat is zero) */
    if (cmask == 0) {
        fctx f = {p, &s, x, dflat, n, 0};
        for (int64_t i = 0; i < ny; i++) {
            f.elem = i;
            chk_deriv fd = chk_fd1(elem_dir, &f, 0.0, 1.0 / 1024);
            chk_context("%s rep %d: J xdot element %lld", p->name, rep,
                        (long long)i);
            CHK_DERIV(ydot[i], fd, FD_RTOL);
        }
    }

    /* k directions at once == k sweeps of one direction, through the
       public k == 1 calls */
    for (size_t d = 0; d < k; d++) {
        CHK_STATUS(dr_arr_tangents_clear(o.t), DR_OK);
        int64_t off = 0;
        for (int i = 0; i < s.nin; i++) {
            int64_t ni = numel(&s, i);
            CHK_STATUS(dr_arr_tangent_seed(o.t, o.in[i].idx,
                                           dseed + off * (int64_t)k +
                                               (int64_t)d * ni),
                       DR_OK);
            off += ni;
        }
        double *tan = mini_forward(o.t, 1);
        assert_non_null(tan);
        double *y1 = malloc((size_t)(ny + 1) * sizeof(double));
        if (o.y.idx != DR_NONE)
            CHK_STATUS(dr_arr_tangent(o.t, o.y.idx, y1), DR_OK);
        else
            y1[0] = o.ys.idx == DR_NONE ? 0.0
                                        : tan[o.ys.idx - o.t->base];
        chk_context("%s rep %d cmask %u: k = %zu vs direction %zu alone",
                    p->name, rep, cmask, k, d);
        /* BLAS may block a stack of k directions differently */
        for (int64_t i = 0; i < ny; i++)
            CHK_CLOSE(y1[i], ydot[(int64_t)d * ny + i], 1e-13, 1e-300);
        free(y1);
        free(tan);
    }

    /* again with k directions after the k == 1 sweeps: buffers reused,
       the same numbers */
    double *again = malloc(((size_t)ny * k + 1) * sizeof(double));
    assert_true(tangents(&o, &s, k, dseed, again));
    chk_context("%s rep %d cmask %u: repeated sweep", p->name, rep, cmask);
    for (int64_t i = 0; i < ny * (int64_t)k; i++)
        CHK_SAME(again[i], ydot[i]);
    free(again);
    free(w);
    free(g);
done:
    chk_context(NULL);
    dr_tape_free(o.t);
    free(ydot);
    free(x);
    free(dseed);
    free(dflat);
}

static void test_all_primitives(void **state)
{
    (void)state;
    instances = skipped = 0;
    for (size_t i = 0; i < NPROGS; i++) {
        chk_rng r;
        chk_rng_seed(&r, 2000 + i);
        for (int rep = 0; rep < REPS; rep++)
            check_instance(&progs[i], &r, rep, 0);
    }
#if DR_NEAR_MAX == INT32_MAX
    /* only the test-far build records nodes without forward rules */
    assert_int_equal(skipped, 0);
#endif
    assert_true(skipped < instances);
}

/* constant operands: every nonempty proper subset of the inputs, and all */
static void test_inactive_operands(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROGS; i++) {
        chk_rng r;
        chk_rng_seed(&r, 3000 + i);
        for (int rep = 0; rep < REPS; rep++)
            check_instance(&progs[i], &r, rep, 1u + (unsigned)rep % 3u);
    }
}

/* ------------------------------------------------------------ fixed cases */

/* y = A x by hand: the tangent of a matvec, and reading back */
static void test_matvec_values(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    const double A[6] = {1, 2, 3, 4, 5, 6}, xv[3] = {1, -1, 2};
    const double dA[6] = {0, 1, 0, 0, 0, 1}, dx[3] = {1, 0, 0};
    dr_arr a = dr_arr_input(t, 2, 2, 3, A);
    dr_arr x = dr_arr_input(t, 1, 3, 1, xv);
    dr_arr y = dr_arr_matvec(t, a, x);
    /* before any sweep: zeros */
    double out[2] = {7, 7};
    CHK_STATUS(dr_arr_tangent(t, y.idx, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    CHK_SAME(out[1], 0.0);
    CHK_STATUS(dr_arr_tangent_seed(t, a.idx, dA), DR_OK);
    CHK_STATUS(dr_arr_tangent_seed(t, x.idx, dx), DR_OK);
    double *tan = mini_forward(t, 1);
    assert_non_null(tan);
    CHK_STATUS(dr_arr_tangent(t, y.idx, out), DR_OK);
    /* dA x + A dx = (-1, 2) + (1, 4) */
    CHK_SAME(out[0], 0.0);
    CHK_SAME(out[1], 6.0);
    /* seeds add */
    CHK_STATUS(dr_arr_tangent_seed(t, x.idx, dx), DR_OK);
    free(tan);
    tan = mini_forward(t, 1);
    CHK_STATUS(dr_arr_tangent(t, y.idx, out), DR_OK);
    CHK_SAME(out[0], 1.0);
    CHK_SAME(out[1], 10.0);
    /* the input's own tangent is its seed */
    double xt[3];
    CHK_STATUS(dr_arr_tangent(t, x.idx, xt), DR_OK);
    CHK_SAME(xt[0], 2.0);
    /* cleared: zero */
    CHK_STATUS(dr_arr_tangents_clear(t), DR_OK);
    free(tan);
    tan = mini_forward(t, 1);
    CHK_STATUS(dr_arr_tangent(t, y.idx, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    CHK_SAME(out[1], 0.0);
    free(tan);
    dr_tape_free(t);
}

/* ------------------------------------------------------------ error paths */

static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    const double v[4] = {1, 2, 3, 4};
    double out[8];
    dr_arr a = dr_arr_input(t, 1, 4, 1, v);
    dr_arr c = dr_arr_const(t, 1, 4, 1, v);
    dr_real s = dr_arr_sum(t, a);
    dr_arr e = dr_arr_input(t, 1, 0, 1, NULL);

    /* not an array node: scalar ids, DR_NONE, garbage, NULL tape */
    CHK_STATUS(dr_arr_tangent_seed(t, s.idx, v), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_seed(t, DR_NONE, v), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_seed(t, a.idx + 1000, v), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_seed(NULL, a.idx, v), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent(t, s.idx, out), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent(NULL, a.idx, out), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_vec(t, INT64_MIN, 1, out), DR_EINVAL);
    /* NULL data (nonempty), k == 0 */
    CHK_STATUS(dr_arr_tangent_seed(t, a.idx, NULL), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent(t, a.idx, NULL), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_seed_vec(t, a.idx, 0, v), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_vec(t, a.idx, 0, out), DR_EINVAL);
    /* k * size beyond any buffer */
    CHK_STATUS(dr_arr_tangent_seed_vec(t, a.idx, SIZE_MAX / 2, v),
               DR_ERANGE);
    /* an empty array: NULL is fine */
    CHK_STATUS(dr_arr_tangent_seed(t, e.idx, NULL), DR_OK);
    CHK_STATUS(dr_arr_tangent(t, e.idx, NULL), DR_OK);
    /* a constant: accepted, no effect, zero tangent */
    CHK_STATUS(dr_arr_tangent_seed(t, c.idx, v), DR_OK);
    /* none of it failed the tape */
    CHK_STATUS(dr_tape_status(t), DR_OK);

    /* a sweep of k = 2 is read with k = 2, not 1 */
    const double d2[8] = {1, 0, 0, 0, 0, 1, 0, 0};
    CHK_STATUS(dr_arr_tangent_seed_vec(t, a.idx, 2, d2), DR_OK);
    double *tan = mini_forward(t, 2);
    assert_non_null(tan);
    CHK_STATUS(dr_arr_tangent(t, a.idx, out), DR_EINVAL);
    CHK_STATUS(dr_arr_tangent_vec(t, a.idx, 2, out), DR_OK);
    for (int i = 0; i < 8; i++)
        CHK_SAME(out[i], d2[i]);
    CHK_STATUS(dr_arr_tangent_vec(t, c.idx, 2, out), DR_OK);
    for (int i = 0; i < 4; i++)
        CHK_SAME(out[i], 0.0);
    /* sum's tangents: 1 in each direction */
    int64_t rs = s.idx - t->base;
    CHK_SAME(tan[rs * 2], 1.0);
    CHK_SAME(tan[rs * 2 + 1], 1.0);
    free(tan);
    /* a k = 1 sweep: the k = 2 seeds do not apply, the tangent is zero */
    tan = mini_forward(t, 1);
    CHK_STATUS(dr_arr_tangent(t, a.idx, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    CHK_SAME(tan[rs], 0.0);
    free(tan);

    CHK_STATUS(dr_arr_tangents_clear(NULL), DR_EINVAL);
    dr_tape_free(t);
}

/* out of memory for a tangent buffer: the sweep fails the tape, nothing
   leaks or crashes */
static void test_enomem(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = dr_tape_new();
    assert_non_null(t);
    /* a large array whose values take the arena's first block, so that
       the tangent buffer needs a new one */
    size_t n = 1 << 16;
    double *v = calloc(n, sizeof *v);
    dr_arr a = dr_arr_input(t, 1, (int64_t)n, 1, v);
    dr_arr y = dr_arr_map(t, DR_FN_SQUARE, a);
    assert_int_not_equal(y.idx, DR_NONE);
    CHK_STATUS(dr_arr_tangent_seed(t, a.idx, v), DR_OK);
    chk_alloc_fail_in(&al, 1, true); /* every allocation from now on */
    double *tan = mini_forward(t, 1); /* the test's calloc: not counted */
    assert_non_null(tan);
    CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
    double *out = malloc(n * sizeof *out);
    CHK_STATUS(dr_arr_tangent(t, y.idx, out), DR_OK); /* zero */
    CHK_SAME(out[0], 0.0);
    free(out);
    free(tan);
    chk_alloc_fail_in(&al, 0, false);
    dr_tape_free(t);
    free(v);
    chk_alloc_uninstall();
}

/* dr_jacobian seeds its own directions: tangent seeds left on array inputs
   for dr_forward / dr_jvp play no part in it (its forward sweeps, n < m),
   and are still there for the next dr_jvp. */
static void test_jacobian_ignores_array_seeds(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_arr a = dr_arr_input(t, 1, 2, 1, (double[]){1.0, 2.0});
    dr_real s = dr_arr_sum(t, a);
    dr_real x = dr_input(t, 1.0);
    dr_real ys[2] = {dr_mul(t, s, x), s};
    double J[2], before[2], after[2];
    CHK_STATUS(dr_jacobian(t, 2, ys, 1, &x, before), DR_OK);
    CHK_SAME(before[0], 3.0);
    CHK_SAME(before[1], 0.0);
    CHK_STATUS(dr_arr_tangent_seed(t, a.idx, (double[]){1.0, 1.0}), DR_OK);
    CHK_STATUS(dr_jacobian(t, 2, ys, 1, &x, J), DR_OK);
    CHK_SAME(J[0], 3.0);
    CHK_SAME(J[1], 0.0);
    /* the seeds are still there: dr_jvp with x's direction 0 sees them */
    CHK_STATUS(dr_jvp(t, 2, ys, 1, &x, (double[]){0.0}, after), DR_OK);
    CHK_SAME(after[0], 2.0);
    CHK_SAME(after[1], 2.0);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_primitives),
        cmocka_unit_test(test_inactive_operands),
        cmocka_unit_test(test_matvec_values),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_jacobian_ignores_array_seeds),
        cmocka_unit_test_teardown(test_enomem, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
