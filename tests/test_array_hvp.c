/*
 * test_array_hvp.c - second order through the array primitives: Hessian-
 * vector products (dr_hvp_vec, array inputs seeded with
 * dr_arr_tangent_seed_vec, products read with dr_arr_hvp_vec) of a
 * nonlinear objective over every program of array_progs.h:
 *   - H v elementwise against central finite differences of gradients
 *     (recorded afresh at order 1 at x +- h v);
 *   - symmetry, <w, H v> = <v, H w>;
 *   - k directions in one pass against k passes of one, and a pass
 *     repeated gives the same numbers;
 * and fixed cases: scalar and array inputs together, dr_hessian of scalar
 * inputs through arrays, an MLP's Hessian against finite differences, what
 * has no second-order rule, and the error paths of dr_arr_hvp_vec.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_progs.h" /* shapes, programs */

#define REPS 4
#define KDIR 3
#define FD_RTOL 1e-6

typedef struct run {
    dr_tape *t;
    dr_arr in[MAXIN];
    dr_real f;
} run;

static void record(const prog *p, const shapes *s, const double *x,
                   const objective *ob, int order, run *o)
{
    memset(o, 0, sizeof *o);
    o->t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(o->t, order), DR_OK);
    const double *q = x;
    for (int k = 0; k < s->nin; k++) {
        o->in[k] = dr_arr_input(o->t, s->rank[k], s->rows[k], s->cols[k], q);
        assert_int_not_equal(o->in[k].idx, DR_NONE);
        q += numel(s, k);
    }
    dr_arr ya;
    dr_real ys;
    o->f = objective_of(o->t, p, o->in, s, ob, &ya, &ys);
    CHK_STATUS(dr_tape_status(o->t), DR_OK);
}

/* the gradient of the objective at x (order 1), all inputs flat */
static void gradient_at(const prog *p, const shapes *s, const double *x,
                        const objective *ob, double *g)
{
    run o;
    record(p, s, x, ob, 1, &o);
    int64_t n = total_in(s);
    if (o.f.idx == DR_NONE) {
        memset(g, 0, (size_t)n * sizeof *g);
    } else {
        CHK_STATUS(dr_seed(o.t, o.f.idx, 1.0), DR_OK);
        CHK_STATUS(dr_reverse(o.t), DR_OK);
        double *q = g;
        for (int k = 0; k < s->nin; k++) {
            CHK_STATUS(dr_arr_adjoint(o.t, o.in[k].idx, q), DR_OK);
            q += numel(s, k);
        }
    }
    dr_tape_free(o.t);
}

typedef struct fctx {
    const prog *p;
    const shapes *s;
    const objective *ob;
    const double *x0, *dir;
    int64_t n, elem;
} fctx;

/* element elem of the gradient at x0 + h dir */
static double grad_elem(double h, void *c)
{
    fctx *f = c;
    double *x = malloc((size_t)(f->n + 1) * sizeof *x);
    double *g = malloc((size_t)(f->n + 1) * sizeof *g);
    for (int64_t i = 0; i < f->n; i++)
        x[i] = f->x0[i] + h * f->dir[i];
    gradient_at(f->p, f->s, x, f->ob, g);
    double v = g[f->elem];
    free(x);
    free(g);
    return v;
}

/* seed k directions (flat: direction j of all inputs at dflat[j * n]),
   take the products, read them flat into hv; the status of dr_hvp_vec */
static dr_status products(const run *o, const shapes *s, size_t k,
                          const double *dflat, double *hv)
{
    int64_t n = total_in(s);
    CHK_STATUS(dr_arr_tangents_clear(o->t), DR_OK);
    double *buf = malloc(((size_t)n * k + 1) * sizeof *buf);
    int64_t off = 0;
    for (int i = 0; i < s->nin; i++) {
        int64_t ni = numel(s, i);
        for (size_t d = 0; d < k; d++)
            memcpy(buf + d * (size_t)ni, dflat + d * (size_t)n + off,
                   (size_t)ni * sizeof *buf);
        CHK_STATUS(dr_arr_tangent_seed_vec(o->t, o->in[i].idx, k, buf),
                   DR_OK);
        off += ni;
    }
    dr_status st = dr_hvp_vec(o->t, o->f, 0, NULL, k, NULL, NULL);
    off = 0;
    for (int i = 0; st == DR_OK && i < s->nin; i++) {
        int64_t ni = numel(s, i);
        CHK_STATUS(dr_arr_hvp_vec(o->t, o->in[i].idx, k, buf), DR_OK);
        for (size_t d = 0; d < k; d++)
            memcpy(hv + d * (size_t)n + off, buf + d * (size_t)ni,
                   (size_t)ni * sizeof *buf);
        off += ni;
    }
    free(buf);
    return st;
}

static void check_instance(const prog *p, chk_rng *r, int rep)
{
    shapes s;
    memset(&s, 0, sizeof s);
    p->shape(r, &s);
    int64_t n = total_in(&s);
    size_t k = KDIR;
    double *x = malloc((size_t)(n + 1) * sizeof *x);
    fill_inputs(r, p, x, n);
    double *dflat = malloc(((size_t)n * k + 1) * sizeof *dflat);
    for (int64_t i = 0; i < n * (int64_t)k; i++)
        dflat[i] = chk_rng_uniform(r, -1, 1);
    static objective ob;
    objective_draw(r, &ob);

    run o;
    record(p, &s, x, &ob, 2, &o);
    chk_context("%s rep %d: in0 %lldx%lld in1 %lldx%lld", p->name, rep,
                (long long)s.rows[0], (long long)s.cols[0],
                (long long)s.rows[1], (long long)s.cols[1]);
    double *hv = calloc((size_t)n * k + 1, sizeof *hv);
    CHK_STATUS(products(&o, &s, k, dflat, hv), DR_OK);

    /* H v against finite differences of the gradient, direction 0 */
    fctx f = {p, &s, &ob, x, dflat, n, 0};
    for (int64_t i = 0; i < n; i++) {
        f.elem = i;
        chk_deriv fd = chk_fd1(grad_elem, &f, 0.0, 1.0 / 1024);
        chk_context("%s rep %d: (H v) element %lld of %lld", p->name, rep,
                    (long long)i, (long long)n);
        CHK_DERIV(hv[i], fd, FD_RTOL);
    }

    /* symmetry: <v1, H v0> = <v0, H v1> */
    double lhs = 0.0, rhs = 0.0, mag = 0.0;
    for (int64_t i = 0; i < n; i++) {
        lhs += dflat[n + i] * hv[i];
        rhs += dflat[i] * hv[n + i];
        mag += fabs(dflat[n + i] * hv[i]) + fabs(dflat[i] * hv[n + i]);
    }
    chk_context("%s rep %d: symmetry", p->name, rep);
    CHK_ABS(lhs, rhs, 1e-12 * mag + 1e-300);

    /* k directions in one pass == one direction a pass */
    double *one = calloc((size_t)n + 1, sizeof *one);
    double *first = calloc((size_t)n + 1, sizeof *first);
    for (size_t d = 0; d < k; d++) {
        CHK_STATUS(products(&o, &s, 1, dflat + d * (size_t)n, one), DR_OK);
        if (d == 0)
            memcpy(first, one, (size_t)n * sizeof *one);
        chk_context("%s rep %d: k = %zu vs direction %zu alone", p->name,
                    rep, k, d);
        for (int64_t i = 0; i < n; i++)
            CHK_CLOSE(one[i], hv[d * (size_t)n + i], 1e-12,
                      1e-12 * (fabs(hv[d * (size_t)n + i]) + 1.0));
    }
    /* direction 0 through dr_hvp_inputs (the direction as the inputs'
       adjoint seeds, the product read as their adjoints): the same pass */
    CHK_STATUS(dr_adjoints_clear(o.t), DR_OK);
    {
        int64_t off = 0;
        for (int i = 0; i < s.nin; i++) {
            CHK_STATUS(dr_arr_seed(o.t, o.in[i].idx, dflat + off), DR_OK);
            off += numel(&s, i);
        }
        CHK_STATUS(dr_hvp_inputs(o.t, o.f), DR_OK);
        off = 0;
        for (int i = 0; i < s.nin; i++) {
            CHK_STATUS(dr_arr_adjoint(o.t, o.in[i].idx, one + off), DR_OK);
            off += numel(&s, i);
        }
        chk_context("%s rep %d: dr_hvp_inputs", p->name, rep);
        for (int64_t i = 0; i < n; i++)
            CHK_SAME(one[i], first[i]);
    }
    /* and the k-direction pass again: the same numbers (storage reused) */
    double *again = calloc((size_t)n * k + 1, sizeof *again);
    CHK_STATUS(products(&o, &s, k, dflat, again), DR_OK);
    chk_context("%s rep %d: repeated pass", p->name, rep);
    for (int64_t i = 0; i < n * (int64_t)k; i++)
        CHK_SAME(again[i], hv[i]);
    chk_context(NULL);
    free(again);
    free(first);
    free(one);
    free(hv);
    dr_tape_free(o.t);
    free(x);
    free(dflat);
}

static void test_all_primitives(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROGS; i++) {
        chk_rng r;
        chk_rng_seed(&r, 7000 + i);
        for (int rep = 0; rep < REPS; rep++)
            check_instance(&progs[i], &r, rep);
    }
}

/* ------------------------------------------------------------ fixed cases */

/* f(s, x) = sum(tanh(s x) * x) + s^2 <x, x>: one scalar input s, one
   array input x; H (ds, dx) in one pass, both parts against finite
   differences */
static double mixed_f(const double *z, size_t n, void *ctx)
{
    (void)ctx;
    double s = z[0], a = 0.0, b = 0.0;
    for (size_t i = 1; i < n; i++) {
        a += tanh(s * z[i]) * z[i];
        b += z[i] * z[i];
    }
    return a + s * s * b;
}

static dr_real mixed_rec(dr_tape *t, dr_real s, dr_arr x)
{
    dr_arr sx = dr_arr_map(t, DR_FN_TANH, dr_arr_scale(t, s, x));
    dr_real a = dr_arr_sum(t, dr_arr_mul(t, sx, x));
    return dr_add(t, a, dr_mul(t, dr_mul(t, s, s), dr_arr_dot(t, x, x)));
}

typedef struct hctx {
    size_t i, j, n;
} hctx;

/* d f / d z_j at z, for finite differences of the gradient along z_i */
static double mixed_grad_j(const double *z, size_t n, void *ctx)
{
    hctx *h = ctx;
    dr_tape *t = chk_tape_new();
    dr_real s = dr_input(t, z[0]);
    dr_arr x = dr_arr_input(t, 1, (int64_t)n - 1, 1, z + 1);
    dr_real f = mixed_rec(t, s, x);
    double g;
    CHK_STATUS(dr_seed(t, f.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    if (h->j == 0) {
        g = dr_adjoint(t, s.idx);
    } else {
        double *xa = malloc(n * sizeof *xa);
        CHK_STATUS(dr_arr_adjoint(t, x.idx, xa), DR_OK);
        g = xa[h->j - 1];
        free(xa);
    }
    dr_tape_free(t);
    return g;
}

static void test_scalar_and_array_inputs(void **state)
{
    (void)state;
    enum { N = 5 };
    double z[N + 1] = {0.7, 0.3, -0.5, 1.1, 0.2, -0.9};
    double v[N + 1] = {0.4, 1.0, -0.3, 0.2, 0.5, -0.7};
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real s = dr_input(t, z[0]);
    dr_arr x = dr_arr_input(t, 1, N, 1, z + 1);
    dr_real f = mixed_rec(t, s, x);
    CHK_REL(f.val, mixed_f(z, N + 1, NULL), 1e-14);
    CHK_STATUS(dr_arr_tangent_seed(t, x.idx, v + 1), DR_OK);
    double hs, hx[N];
    CHK_STATUS(dr_hvp(t, f, 1, &s, v, &hs), DR_OK);
    CHK_STATUS(dr_arr_hvp(t, x.idx, hx), DR_OK);
    /* H v by finite differences: sum_i H_ji v_i as the derivative of
       g_j along v */
    for (size_t j = 0; j <= N; j++) {
        hctx h = {0, j, N + 1};
        double fd = 0.0;
        for (size_t i = 0; i <= N; i++) {
            chk_deriv d = chk_fd_partial(mixed_grad_j, &h, N + 1, z, i, 0.0);
            fd += d.d * v[i];
        }
        chk_context("element %zu", j);
        CHK_REL(j == 0 ? hs : hx[j - 1], fd, 1e-7);
    }
    chk_context(NULL);
    /* the same product through dr_hvp_vec of k = 1: bit for bit */
    double hs2, hx2[N];
    CHK_STATUS(dr_hvp_vec(t, f, 1, &s, 1, v, &hs2), DR_OK);
    CHK_STATUS(dr_arr_hvp(t, x.idx, hx2), DR_OK);
    CHK_SAME(hs2, hs);
    for (int i = 0; i < N; i++)
        CHK_SAME(hx2[i], hx[i]);
    /* and through dr_hvp_inputs: the direction seeded on the inputs, the
       product read as their adjoints; again: the same */
    for (int rep = 0; rep < 2; rep++) {
        CHK_STATUS(dr_adjoints_clear(t), DR_OK);
        CHK_STATUS(dr_seed(t, s.idx, v[0]), DR_OK);
        CHK_STATUS(dr_arr_seed(t, x.idx, v + 1), DR_OK);
        CHK_STATUS(dr_hvp_inputs(t, f), DR_OK);
        CHK_SAME(dr_adjoint(t, s.idx), hs);
        CHK_STATUS(dr_arr_adjoint(t, x.idx, hx2), DR_OK);
        for (int i = 0; i < N; i++)
            CHK_SAME(hx2[i], hx[i]);
        /* every other adjoint reads zero, and the array input's tangent */
        CHK_SAME(dr_adjoint(t, f.idx), 0.0);
        double tx[N];
        CHK_STATUS(dr_arr_tangent(t, x.idx, tx), DR_OK);
        for (int i = 0; i < N; i++)
            CHK_SAME(tx[i], 0.0);
    }
    /* a direction on the scalar alone */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, s.idx, 1.0), DR_OK);
    CHK_STATUS(dr_hvp_inputs(t, f), DR_OK);
    double e0[N + 1] = {1, 0, 0, 0, 0, 0}, h0;
    CHK_STATUS(dr_arr_tangents_clear(t), DR_OK);
    CHK_STATUS(dr_hvp(t, f, 1, &s, e0, &h0), DR_OK);
    CHK_SAME(dr_adjoint(t, s.idx), h0);
    dr_tape_free(t);
}

/* dr_hessian of scalar inputs through array operations (from_reals,
   matvec, softmax, logsumexp): against the Hessian of the same function
   written with scalar operations alone */
static dr_real through_arrays(dr_tape *t, const dr_real *x, const double *A)
{
    dr_arr v = dr_arr_from_reals(t, 3, x);
    dr_arr m = dr_arr_const(t, 2, 4, 3, A);
    dr_arr y = dr_arr_matvec(t, m, v);
    dr_arr p = dr_arr_softmax(t, y);
    dr_real l = dr_arr_logsumexp(t, dr_arr_mul(t, y, p));
    return dr_add(t, l, dr_arr_dot(t, v, dr_arr_map(t, DR_FN_SIN, v)));
}

static dr_real with_scalars(dr_tape *t, const dr_real *x, const double *A)
{
    dr_real y[4], e[4], q[4], sum = dr_const(0.0), acc = dr_const(0.0);
    for (int i = 0; i < 4; i++) {
        y[i] = dr_const(0.0);
        for (int j = 0; j < 3; j++)
            y[i] = dr_add(t, y[i], dr_mul(t, dr_const(A[i * 3 + j]), x[j]));
        e[i] = dr_exp(t, y[i]);
        sum = dr_add(t, sum, e[i]);
    }
    for (int i = 0; i < 4; i++) {
        q[i] = dr_mul(t, y[i], dr_div(t, e[i], sum));
        acc = dr_add(t, acc, dr_exp(t, q[i]));
    }
    dr_real r = dr_log(t, acc);
    for (int j = 0; j < 3; j++)
        r = dr_add(t, r, dr_mul(t, x[j], dr_sin(t, x[j])));
    return r;
}

static void test_hessian_through_arrays(void **state)
{
    (void)state;
    const double A[12] = {0.3, -0.2, 0.5, 0.1, 0.4, -0.6,
                          -0.3, 0.2, 0.7, 0.9, -0.1, 0.2};
    const double xv[3] = {0.4, -1.2, 0.8};
    double H1[9], H2[9];
    for (int pass = 0; pass < 2; pass++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[3];
        for (int i = 0; i < 3; i++)
            x[i] = dr_input(t, xv[i]);
        dr_real f = pass ? with_scalars(t, x, A) : through_arrays(t, x, A);
        CHK_STATUS(dr_hessian(t, f, 3, x, pass ? H2 : H1), DR_OK);
        dr_tape_free(t);
    }
    for (int i = 0; i < 9; i++)
        CHK_CLOSE(H1[i], H2[i], 1e-12, 1e-13);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            CHK_CLOSE(H1[i * 3 + j], H1[j * 3 + i], 1e-14, 1e-15);
}

/*
 * An MLP with the array primitives, loss = logsumexp(W2 tanh(W1 x + b)) -
 * <y, W2 tanh(W1 x + b)> + 0.01 |W1|^2: the dense Hessian over the
 * weights W1 (one pass of as many directions as weights: unit vectors)
 * against finite differences of the gradient, column by column.
 */
enum { MI = 4, MH = 3, MO = 2 };
static const double mlp_x[MI] = {0.5, -1.0, 0.25, 2.0};
static const double mlp_b[MH] = {0.1, -0.2, 0.05};
static const double mlp_W2[MO * MH] = {0.7, -0.4, 0.2, -0.3, 0.8, 0.5};
static const double mlp_y[MO] = {1.0, 0.0};

static dr_real mlp_loss(dr_tape *t, dr_arr W1)
{
    dr_arr x = dr_arr_const(t, 1, MI, 1, mlp_x);
    dr_arr b = dr_arr_const(t, 1, MH, 1, mlp_b);
    dr_arr W2 = dr_arr_const(t, 2, MO, MH, mlp_W2);
    dr_arr y = dr_arr_const(t, 1, MO, 1, mlp_y);
    dr_arr h = dr_arr_map(t, DR_FN_TANH,
                          dr_arr_add(t, dr_arr_matvec(t, W1, x), b));
    dr_arr o = dr_arr_matvec(t, W2, h);
    dr_real l = dr_sub(t, dr_arr_logsumexp(t, o), dr_arr_dot(t, y, o));
    return dr_add(t, l, dr_mul(t, dr_const(0.01), dr_arr_dot(t, W1, W1)));
}

static double mlp_grad_j(const double *w, size_t n, void *ctx)
{
    const size_t *j = ctx;
    double g[MH * MI];
    (void)n;
    dr_tape *t = chk_tape_new();
    dr_arr W1 = dr_arr_input(t, 2, MH, MI, w);
    dr_real l = mlp_loss(t, W1);
    CHK_STATUS(dr_seed(t, l.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_STATUS(dr_arr_adjoint(t, W1.idx, g), DR_OK);
    dr_tape_free(t);
    return g[*j];
}

/* the MLP's loss recorded at order 2 at weights w (into *W1 and *l), and
   its k products with the directions V (k x MH*MI) into out: the tape,
   for more products */
static dr_tape *mlp_products(const double *w, size_t k, const double *V,
                             double *out, dr_arr *W1, dr_real *l)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    *W1 = dr_arr_input(t, 2, MH, MI, w);
    *l = mlp_loss(t, *W1);
    CHK_STATUS(dr_arr_tangent_seed_vec(t, W1->idx, k, V), DR_OK);
    CHK_STATUS(dr_hvp_vec(t, *l, 0, NULL, k, NULL, NULL), DR_OK);
    CHK_STATUS(dr_arr_hvp_vec(t, W1->idx, k, out), DR_OK);
    return t;
}

static void test_mlp_hessian(void **state)
{
    (void)state;
    enum { NW = MH * MI };
    double w[NW], E[NW * NW], H[NW * NW];
    for (int i = 0; i < NW; i++)
        w[i] = 0.3 * sin(1.0 + i);
    memset(E, 0, sizeof E);
    for (int i = 0; i < NW; i++)
        E[i * NW + i] = 1.0;
    dr_arr W1;
    dr_real l;
    dr_tape *t = mlp_products(w, NW, E, H, &W1, &l);
    for (size_t j = 0; j < NW; j++)
        for (size_t i = 0; i < NW; i++) {
            chk_deriv d = chk_fd_partial(mlp_grad_j, &j, NW, w, i, 0.0);
            chk_context("H[%zu][%zu]", i, j);
            CHK_DERIV(H[i * NW + j], d, 1e-7);
            CHK_CLOSE(H[i * NW + j], H[j * NW + i], 1e-12, 1e-14);
        }
    chk_context(NULL);
    dr_tape_free(t);
}

/* more directions than a pass of the scalar drivers takes (16): with
   arrays, all k in one pass; each the product of its own */
static void test_many_directions(void **state)
{
    (void)state;
    enum { NW = MH * MI, K = 20 };
    double w[NW], V[K * NW], HV[K * NW], one[NW];
    for (int i = 0; i < NW; i++)
        w[i] = 0.3 * sin(1.0 + i);
    for (int i = 0; i < K * NW; i++)
        V[i] = cos(0.7 * i);
    dr_arr W1;
    dr_real l;
    dr_tape *t = mlp_products(w, K, V, HV, &W1, &l);
    for (int d = 0; d < K; d++) {
        CHK_STATUS(dr_arr_tangents_clear(t), DR_OK);
        CHK_STATUS(dr_arr_tangent_seed(t, W1.idx, V + d * NW), DR_OK);
        CHK_STATUS(dr_hvp(t, l, 0, NULL, NULL, NULL), DR_OK);
        CHK_STATUS(dr_arr_hvp(t, W1.idx, one), DR_OK);
        for (int i = 0; i < NW; i++)
            CHK_CLOSE(HV[d * NW + i], one[i], 1e-12, 1e-14);
    }
    dr_tape_free(t);
}

/* out of memory at each allocation of a product (dr_hvp through arrays,
   dr_hvp_inputs): DR_ENOMEM or the product, the tape usable after, the
   product then as without the failure, nothing leaked */
static void test_out_of_memory(void **state)
{
    (void)state;
    enum { NW = MH * MI };
    double w[NW], v[NW], ref[NW], got[NW];
    for (int i = 0; i < NW; i++) {
        w[i] = 0.3 * sin(1.0 + i);
        v[i] = cos(0.7 * i);
    }
    for (int inputs = 0; inputs < 2; inputs++)
        for (size_t k = 1;; k++) {
            chk_alloc a;
            chk_alloc_install(&a);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_arr W1 = dr_arr_input(t, 2, MH, MI, w);
            dr_real l = mlp_loss(t, W1);
            CHK_STATUS(dr_tape_status(t), DR_OK);
            if (k == 1) { /* the reference, without failures */
                CHK_STATUS(dr_arr_tangent_seed(t, W1.idx, v), DR_OK);
                CHK_STATUS(dr_hvp(t, l, 0, NULL, NULL, NULL), DR_OK);
                CHK_STATUS(dr_arr_hvp(t, W1.idx, ref), DR_OK);
                CHK_STATUS(dr_arr_tangents_clear(t), DR_OK);
            }
            dr_status st;
            if (inputs) {
                CHK_STATUS(dr_arr_seed(t, W1.idx, v), DR_OK);
                chk_alloc_fail_in(&a, k, false);
                st = dr_hvp_inputs(t, l);
            } else {
                CHK_STATUS(dr_arr_tangent_seed(t, W1.idx, v), DR_OK);
                chk_alloc_fail_in(&a, k, false);
                st = dr_hvp(t, l, 0, NULL, NULL, NULL);
            }
            bool failed = a.fails > 0;
            chk_alloc_fail_in(&a, 0, false);
            chk_context("%s, allocation %zu", inputs ? "dr_hvp_inputs" : "dr_hvp", k);
            assert_true(st == DR_OK || st == DR_ENOMEM);
            assert_true(failed || st == DR_OK);
            CHK_STATUS(dr_tape_status(t), DR_OK);
            if (st != DR_OK) { /* again: the product */
                if (inputs) {
                    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
                    CHK_STATUS(dr_arr_seed(t, W1.idx, v), DR_OK);
                    st = dr_hvp_inputs(t, l);
                } else {
                    st = dr_hvp(t, l, 0, NULL, NULL, NULL);
                }
                CHK_STATUS(st, DR_OK);
            }
            CHK_STATUS(inputs ? dr_arr_adjoint(t, W1.idx, got)
                              : dr_arr_hvp(t, W1.idx, got), DR_OK);
            for (int i = 0; i < NW; i++)
                CHK_SAME(got[i], ref[i]);
            dr_tape_free(t);
            chk_alloc_uninstall();
            assert_int_equal(a.live, 0);
            chk_context(NULL);
            if (!failed)
                break; /* no allocation left to fail */
        }
}

/* dr_hvp_inputs out of memory for the adjoint of an array input nothing
   seeded (its product is written there: a large one takes a new block):
   DR_ENOMEM, the tape usable, the product whole when called again */
static void test_out_of_memory_adjoint(void **state)
{
    (void)state;
    enum { NB = 200000 };
    double *bv = malloc(NB * sizeof *bv), *got = malloc(NB * sizeof *got);
    for (int i = 0; i < NB; i++)
        bv[i] = 1.0 + 1e-5 * i;
    bool hit = false;
    for (size_t k = 1;; k++) {
        chk_alloc a;
        chk_alloc_install(&a);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real s = dr_input(t, 2.0);
        dr_arr b = dr_arr_input(t, 1, NB, 1, bv);
        dr_real f = dr_mul(t, dr_mul(t, s, s), dr_arr_dot(t, b, b)); /* s^2 |b|^2 */
        CHK_STATUS(dr_tape_status(t), DR_OK);
        CHK_STATUS(dr_seed(t, s.idx, 1.0), DR_OK); /* direction: s alone */
        chk_alloc_fail_in(&a, k, false);
        dr_status st = dr_hvp_inputs(t, f);
        bool failed = a.fails > 0;
        chk_alloc_fail_in(&a, 0, false);
        chk_context("allocation %zu", k);
        assert_true(st == DR_OK || st == DR_ENOMEM);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        hit |= st == DR_ENOMEM;
        if (st != DR_OK) {
            CHK_STATUS(dr_adjoints_clear(t), DR_OK);
            CHK_STATUS(dr_seed(t, s.idx, 1.0), DR_OK);
            CHK_STATUS(dr_hvp_inputs(t, f), DR_OK);
        }
        /* d/db of 2 s |b|^2 (the s-row of H): 4 s b */
        CHK_STATUS(dr_arr_adjoint(t, b.idx, got), DR_OK);
        for (int i = 0; i < NB; i += 9973)
            CHK_SAME(got[i], 8.0 * bv[i]);
        dr_tape_free(t);
        chk_alloc_uninstall();
        assert_int_equal(a.live, 0);
        chk_context(NULL);
        if (!failed)
            break;
    }
    assert_true(hit);
    free(bv);
    free(got);
}

/* ------------------------------------------------------------ error paths */

static void test_errors(void **state)
{
    (void)state;
    const double xv[3] = {1, 2, 3}, v[3] = {1, 0, -1};
    double out[6];
    /* order 1: no second-order record, DR_ENOTSUP */
    dr_tape *t = chk_tape_new();
    dr_arr x = dr_arr_input(t, 1, 3, 1, xv);
    dr_real f = dr_arr_dot(t, x, dr_arr_map(t, DR_FN_EXP, x));
    CHK_STATUS(dr_arr_tangent_seed(t, x.idx, v), DR_OK);
    CHK_STATUS(dr_hvp(t, f, 0, NULL, NULL, NULL), DR_ENOTSUP);
    /* dr_hvp_inputs too, the seeds left as they were */
    CHK_STATUS(dr_arr_seed(t, x.idx, v), DR_OK);
    CHK_STATUS(dr_hvp_inputs(t, f), DR_ENOTSUP);
    CHK_STATUS(dr_arr_adjoint(t, x.idx, out), DR_OK);
    for (int i = 0; i < 3; i++)
        CHK_SAME(out[i], v[i]);
    CHK_STATUS(dr_hvp_inputs(NULL, f), DR_EINVAL);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);

    t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    x = dr_arr_input(t, 1, 3, 1, xv);
    dr_arr u = dr_arr_input(t, 1, 3, 1, xv);
    f = dr_arr_sum(t, dr_arr_map(t, DR_FN_EXP, x));
    /* before any product: zeros */
    for (int i = 0; i < 3; i++)
        out[i] = 7;
    CHK_STATUS(dr_arr_hvp(t, x.idx, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    /* without seeds: a product in direction zero */
    CHK_STATUS(dr_hvp(t, f, 0, NULL, NULL, NULL), DR_OK);
    CHK_STATUS(dr_arr_hvp(t, x.idx, out), DR_OK);
    CHK_SAME(out[1], 0.0);
    CHK_STATUS(dr_arr_tangent_seed(t, x.idx, v), DR_OK);
    CHK_STATUS(dr_hvp(t, f, 0, NULL, NULL, NULL), DR_OK);
    CHK_STATUS(dr_arr_hvp(t, x.idx, out), DR_OK);
    for (int i = 0; i < 3; i++)
        CHK_REL(out[i], exp(xv[i]) * v[i], 1e-15);
    /* u is not reached: zeros; another k than the product's: DR_EINVAL */
    CHK_STATUS(dr_arr_hvp(t, u.idx, out), DR_OK);
    CHK_SAME(out[2], 0.0);
    CHK_STATUS(dr_arr_hvp_vec(t, x.idx, 2, out), DR_EINVAL);
    CHK_STATUS(dr_arr_hvp_vec(t, x.idx, 0, out), DR_EINVAL);
    CHK_STATUS(dr_arr_hvp_vec(t, u.idx, SIZE_MAX / 2, out), DR_ERANGE);
    CHK_STATUS(dr_arr_hvp(t, x.idx, NULL), DR_EINVAL);
    CHK_STATUS(dr_arr_hvp(t, f.idx, out), DR_EINVAL); /* not an array */
    CHK_STATUS(dr_arr_hvp(NULL, x.idx, out), DR_EINVAL);
    /* seeds of another k than the call's are not read */
    CHK_STATUS(dr_hvp_vec(t, f, 0, NULL, 2, NULL, NULL), DR_OK);
    CHK_STATUS(dr_arr_hvp_vec(t, x.idx, 2, out), DR_OK);
    for (int i = 0; i < 6; i++)
        CHK_SAME(out[i], 0.0);
    /* dr_hessian reads no array seeds: H of nothing */
    CHK_STATUS(dr_hessian(t, f, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_primitives),
        cmocka_unit_test(test_scalar_and_array_inputs),
        cmocka_unit_test(test_hessian_through_arrays),
        cmocka_unit_test(test_mlp_hessian),
        cmocka_unit_test(test_many_directions),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_out_of_memory_adjoint),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
