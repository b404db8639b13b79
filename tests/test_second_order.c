/*
 * test_second_order.c - second derivatives (dualrev.h, "second order"):
 * dr_hessian of every scalar operation, through the C API and through the
 * front-end entry points, against central differences of first-order
 * gradients; Hessian symmetry and dr_hvp == H v on random programs; the
 * tape left as it was by dr_hvp/dr_hessian; nested and higher derivatives
 * with dr_tangent_record; nodes of given partials (linear); tapes whose
 * order was raised mid-recording; every error path and out of memory.
 */
#include "check.h"
#include "frontend/frontend.h"
#include "sweep/sweep.h" /* dr__hessian_edges */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 12

/* ------------------------------------------------- programs of n inputs */

typedef dr_real (*program)(dr_tape *t, const dr_real *x, const void *ctx);

/* f(x) on an order-1 tape and its gradient */
static void gradient_at(program f, const void *ctx, size_t n,
                        const double *xv, double *g)
{
    dr_tape *t = chk_tape_new();
    dr_real x[MAXN];
    CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
    dr_real y = f(t, x, ctx);
    CHK_STATUS(dr_gradient(t, y, n, x, g), DR_OK);
    dr_tape_free(t);
}

/* the Hessian of f at xv on an order-2 tape */
static void hessian_at(program f, const void *ctx, size_t n, const double *xv,
                       double *H)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[MAXN];
    CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
    dr_real y = f(t, x, ctx);
    CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* edge pushing, which dr_hessian takes for more inputs than these,
       gives the same Hessian to rounding (every operation's rule) */
    int64_t rx[MAXN];
    for (size_t i = 0; i < n; i++)
        rx[i] = dr__rel_of(t, x[i].idx);
    double He[MAXN * MAXN], scale = 0;
    bool done = false;
    CHK_STATUS(dr__hessian_edges(t, dr__rel_of(t, y.idx), n, rx, UINT64_MAX,
                                 He, &done),
               DR_OK);
    assert_true(done);
    for (size_t i = 0; i < n * n; i++)
        if (isfinite(H[i]))
            scale = fmax(scale, fabs(H[i]));
    for (size_t i = 0; i < n * n; i++)
        CHK_CLOSE(He[i], H[i], 1e-12, 1e-14 * scale + 1e-300);
    dr_tape_free(t);
}

typedef struct grad_i {
    program f;
    const void *ctx;
    size_t i;
} grad_i;

static double grad_component(const double *x, size_t n, void *ctx)
{
    const grad_i *g = ctx;
    double gr[MAXN];
    gradient_at(g->f, g->ctx, n, x, gr);
    return gr[g->i];
}

/* dr_hessian of f against central differences of its gradient; h as
   chk_fd1's (<= 0: the default step) */
static void check_fd(program f, const void *ctx, size_t n, const double *xv,
                     double h, double rtol)
{
    double H[MAXN * MAXN];
    hessian_at(f, ctx, n, xv, H);
    for (size_t i = 0; i < n; i++) {
        grad_i g = {f, ctx, i};
        for (size_t j = 0; j < n; j++) {
            chk_deriv fd = chk_fd_partial(grad_component, &g, n, xv, j, h);
            CHK_DERIV(H[i * n + j], fd, rtol);
        }
    }
}

/* ---------------------------------------------------- the scalar operations */

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
#define NU (sizeof unaries / sizeof unaries[0])
#define NB (sizeof binaries / sizeof binaries[0])

/* points inside each operation's domain, away from kinks */
typedef struct upoints {
    const char *name;
    double p[4];
} upoints;
static const upoints unary_points[] = {
    {"neg", {-1.3, 0.7, 2.1}},       {"sqrt", {0.3, 1.7, 4.2}},
    {"cbrt", {-2.5, 0.4, 3.0}},      {"exp", {-1.2, 0.3, 2.0}},
    {"expm1", {-1.2, 0.3, 2.0}},     {"log", {0.3, 1.5, 4.0}},
    {"log1p", {-0.5, 0.3, 3.0}},     {"sin", {-1.1, 0.4, 2.5}},
    {"cos", {-1.1, 0.4, 2.5}},       {"tan", {-1.1, 0.4, 1.2}},
    {"asin", {-0.6, 0.1, 0.7}},      {"acos", {-0.6, 0.1, 0.7}},
    {"atan", {-2.0, 0.3, 1.5}},      {"sinh", {-1.3, 0.4, 1.8}},
    {"cosh", {-1.3, 0.4, 1.8}},      {"tanh", {-1.3, 0.4, 1.8}},
    {"asinh", {-2.0, 0.3, 1.5}},     {"acosh", {1.3, 2.0, 5.0}},
    {"atanh", {-0.6, 0.1, 0.7}},     {"abs", {-1.3, 0.7, 2.0}},
    {"erf", {-1.2, 0.3, 1.5}},       {"relu", {-1.3, 0.7, 2.0}},
    {"softplus", {-2.0, 0.3, 1.5}},  {"sigmoid", {-2.0, 0.3, 1.5}},
};
typedef struct bpoints {
    const char *name;
    double p[3][2];
} bpoints;
static const bpoints binary_points[] = {
    {"add", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"sub", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"mul", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"div", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"atan2", {{1.3, -0.7}, {0.4, 2.2}, {-0.5, 0.8}}},
    {"pow", {{1.3, -0.7}, {0.4, 2.2}, {2.5, 3.0}}},
    {"min", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"max", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"hypot", {{1.3, -0.7}, {0.4, 2.2}, {-2.0, 0.5}}},
    {"logbase", {{2.0, 3.0}, {0.5, 1.7}, {3.5, 0.4}}},
};

static const double *points_of_unary(const char *name)
{
    for (size_t i = 0; i < sizeof unary_points / sizeof *unary_points; i++)
        if (!strcmp(unary_points[i].name, name))
            return unary_points[i].p;
    fail_msg("no test points for %s", name);
    return NULL;
}

static const bpoints *points_of_binary(const char *name)
{
    for (size_t i = 0; i < sizeof binary_points / sizeof *binary_points; i++)
        if (!strcmp(binary_points[i].name, name))
            return &binary_points[i];
    fail_msg("no test points for %s", name);
    return NULL;
}

typedef struct opctx {
    const unary *u;
    const binary *b;
    bool fe;      /* through dr_fe_OP_rec */
    int mode;     /* binary: 0 op(x0, x1), 1 op(x0, c), 2 op(c, x1);
                     unary: 0 op(x0), 1 op(x0) * x1 */
    double c;
    int n;        /* powi */
} opctx;

static dr_real un(dr_tape *t, const opctx *c, dr_real a)
{
    if (!c->fe)
        return c->u->op(t, a);
    double v = c->u->val(a.val);
    dr_real r = {v, c->u->rec(t, a.idx, a.val, v)};
    return r;
}

static dr_real bin(dr_tape *t, const opctx *c, dr_real a, dr_real b)
{
    if (!c->fe)
        return c->b->op(t, a, b);
    double v = c->b->val(a.val, b.val);
    dr_real r = {v, c->b->rec(t, a.idx, b.idx, a.val, b.val, v)};
    return r;
}

static dr_real prog_unary(dr_tape *t, const dr_real *x, const void *ctx)
{
    const opctx *c = ctx;
    dr_real y = un(t, c, x[0]);
    return c->mode ? dr_mul(t, y, x[1]) : y;
}

static dr_real prog_binary(dr_tape *t, const dr_real *x, const void *ctx)
{
    const opctx *c = ctx;
    switch (c->mode) {
    case 1:
        return bin(t, c, x[0], dr_const(c->c));
    case 2:
        return bin(t, c, dr_const(c->c), x[1]);
    default:
        return bin(t, c, x[0], x[1]);
    }
}

static dr_real prog_powi(dr_tape *t, const dr_real *x, const void *ctx)
{
    const opctx *c = ctx;
    if (!c->fe)
        return dr_powi(t, x[0], c->n);
    double v = dr_fe_powi(x[0].val, c->n);
    dr_real r = {v, dr_fe_powi_rec(t, x[0].idx, x[0].val, c->n, v)};
    return r;
}

static void unary_case(const unary *u, bool fe)
{
    const double *p = points_of_unary(u->name);
    for (int i = 0; i < 3; i++)
        for (int mode = 0; mode < 2; mode++) {
            chk_context("%s%s at %g (mode %d)", fe ? "fe_" : "", u->name,
                        p[i], mode);
            opctx c = {.u = u, .fe = fe, .mode = mode};
            double xv[2] = {p[i], 1.7};
            check_fd(prog_unary, &c, mode ? 2 : 1, xv, 0.0, 1e-6);
        }
}

static void binary_case(const binary *b, bool fe)
{
    const bpoints *bp = points_of_binary(b->name);
    for (int i = 0; i < 3; i++)
        for (int mode = 0; mode < 3; mode++) {
            const double *p = bp->p[i];
            chk_context("%s%s at (%g, %g) (mode %d)", fe ? "fe_" : "", b->name,
                        p[0], p[1], mode);
            /* the constant takes the other argument's value */
            opctx c = {.b = b, .fe = fe, .mode = mode,
                       .c = mode == 1 ? p[1] : p[0]};
            check_fd(prog_binary, &c, 2, p, 0.0, 1e-6);
        }
}

static void test_unary(void **state) { unary_case(*state, false); }
static void test_binary(void **state) { binary_case(*state, false); }
static void test_fe_unary(void **state) { unary_case(*state, true); }
static void test_fe_binary(void **state) { binary_case(*state, true); }

static void test_powi(void **state)
{
    (void)state;
    static const int ns[] = {0, 1, 2, 3, 5, -1, -3};
    static const double xs[] = {0.7, 1.6, -1.3};
    for (int fe = 0; fe < 2; fe++)
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            for (size_t j = 0; j < sizeof xs / sizeof *xs; j++) {
                chk_context("%spowi(%g, %d)", fe ? "fe_" : "", xs[j], ns[i]);
                opctx c = {.fe = fe, .n = ns[i]};
                check_fd(prog_powi, &c, 1, &xs[j], 0.0, 1e-6);
                /* and the closed form */
                double H, n = ns[i], x = xs[j];
                hessian_at(prog_powi, &c, 1, &xs[j], &H);
                CHK_CLOSE(H, n * (n - 1) * pow(x, n - 2), 1e-13, 1e-300);
            }
    /* the extreme exponents (n - 1 is no int for INT_MIN), at +-1 where
       every power is finite: n (n - 1) (+-1)^n */
    static const int big[] = {INT_MIN, INT_MIN + 1, INT_MAX, INT_MAX - 1};
    for (int fe = 0; fe < 2; fe++)
        for (size_t i = 0; i < sizeof big / sizeof *big; i++)
            for (double x = -1.0; x <= 1.0; x += 2.0) {
                chk_context("%spowi(%g, %d)", fe ? "fe_" : "", x, big[i]);
                opctx c = {.fe = fe, .n = big[i]};
                double H, n = big[i];
                hessian_at(prog_powi, &c, 1, &x, &H);
                CHK_SAME(H, n * (n - 1) * (x < 0 && big[i] % 2 ? -1.0 : 1.0));
            }
}

/* ----------------------------------------------------- random programs */

typedef struct randctx {
    uint64_t seed;
    size_t n;
} randctx;

/* a random composition of polynomials and trigonometry over n inputs
   (the same program for the same seed) */
static dr_real prog_random(dr_tape *t, const dr_real *x, const void *ctx)
{
    const randctx *c = ctx;
    chk_rng r;
    chk_rng_seed(&r, c->seed);
    dr_real pool[64];
    size_t m = c->n;
    for (size_t i = 0; i < m; i++)
        pool[i] = x[i];
    while (m < 40) {
        dr_real a = pool[chk_rng_below(&r, m)], b = pool[chk_rng_below(&r, m)];
        dr_real v;
        switch (chk_rng_below(&r, 8)) {
        case 0: v = dr_add(t, a, b); break;
        case 1: v = dr_mul(t, a, b); break;
        case 2: v = dr_sin(t, a); break;
        case 3: v = dr_cos(t, dr_sub(t, a, b)); break;
        case 4: v = dr_mul(t, dr_const(chk_rng_uniform(&r, -1, 1)), a); break;
        case 5: v = dr_powi(t, a, 2); break;
        case 6: v = dr_tanh(t, a); break;
        default: v = dr_div(t, a, dr_add(t, dr_const(2.0), dr_mul(t, b, b)));
            break;
        }
        pool[m++] = v;
    }
    dr_real y = dr_const(0.0);
    for (size_t i = m - 8; i < m; i++)
        y = dr_add(t, y, pool[i]);
    /* every input to second order at least once */
    for (size_t i = 0; i + 1 < c->n; i++)
        y = dr_add(t, y, dr_mul(t, x[i], dr_sin(t, x[i + 1])));
    return y;
}

static void random_point(chk_rng *r, size_t n, double *x)
{
    for (size_t i = 0; i < n; i++)
        x[i] = chk_rng_uniform(r, -1.5, 1.5);
}

static void test_symmetry(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 7);
    for (int k = 0; k < 20; k++) {
        randctx c = {1000 + (uint64_t)k, 5 + (size_t)k % 6};
        chk_context("random program %d (n = %zu)", k, c.n);
        double xv[MAXN], H[MAXN * MAXN];
        random_point(&r, c.n, xv);
        hessian_at(prog_random, &c, c.n, xv, H);
        double scale = 0;
        for (size_t i = 0; i < c.n * c.n; i++)
            scale = fmax(scale, fabs(H[i]));
        for (size_t i = 0; i < c.n; i++)
            for (size_t j = 0; j < i; j++)
                CHK_CLOSE(H[i * c.n + j], H[j * c.n + i], 0, 1e-12 * scale);
        if (k < 4)
            check_fd(prog_random, &c, c.n, xv, 0.0, 1e-6);
    }
}

static void test_hvp_is_hessian_times_v(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 11);
    for (int k = 0; k < 10; k++) {
        randctx c = {2000 + (uint64_t)k, 5 + (size_t)k % 6};
        size_t n = c.n;
        chk_context("random program %d (n = %zu)", k, n);
        double xv[MAXN], v[MAXN], H[MAXN * MAXN], hv[MAXN];
        random_point(&r, n, xv);
        random_point(&r, n, v);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[MAXN];
        CHK_STATUS(dr_inputs(t, n, xv, x), DR_OK);
        dr_real y = prog_random(t, x, &c);
        CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
        CHK_STATUS(dr_hvp(t, y, n, x, v, hv), DR_OK);
        for (size_t i = 0; i < n; i++) {
            double s = 0, a = 0;
            for (size_t j = 0; j < n; j++) {
                s += H[i * n + j] * v[j];
                a += fabs(H[i * n + j] * v[j]);
            }
            CHK_CLOSE(hv[i], s, 0, 1e-13 * a + 1e-300);
        }
        dr_tape_free(t);
    }
}

static void test_seed_example(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    assert_int_equal(dr_tape_order(t), 2);
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){3, 4}, x), DR_OK);
    dr_real f = dr_add(t, dr_mul(t, dr_const(2), dr_mul(t, x[0], x[0])),
                       dr_add(t, dr_mul(t, dr_const(3), dr_mul(t, x[0], x[1])),
                              dr_mul(t, dr_const(4), dr_mul(t, x[1], x[1]))));
    double out[2];
    CHK_STATUS(dr_hvp(t, f, 2, x, (double[]){7, 8}, out), DR_OK);
    CHK_SAME(out[0], 52.0);
    CHK_SAME(out[1], 85.0);
    double H[4];
    CHK_STATUS(dr_hessian(t, f, 2, x, H), DR_OK);
    CHK_SAME(H[0], 4.0);
    CHK_SAME(H[1], 3.0);
    CHK_SAME(H[2], 3.0);
    CHK_SAME(H[3], 8.0);
    /* n = 0 and a y that is a constant or does not depend on x; with no
       inputs nothing is computed, whatever the tape's nodes (order 1 too),
       and NULL arrays are allowed */
    CHK_STATUS(dr_hvp(t, f, 0, NULL, NULL, NULL), DR_OK);
    {
        dr_tape *u = chk_tape_new();
        dr_real ux = dr_input(u, 2.0), uy = dr_sin(u, ux);
        CHK_STATUS(dr_hvp(u, uy, 0, NULL, NULL, NULL), DR_OK);
        CHK_STATUS(dr_hessian(u, uy, 0, NULL, NULL), DR_OK);
        CHK_STATUS(dr_hessian(u, uy, 0, NULL, H), DR_OK);
        CHK_STATUS(dr_hessian(u, uy, 1, &ux, H), DR_ENOTSUP);
        dr_tape_free(u);
    }
    dr_real z = dr_input(t, 1.0);
    CHK_STATUS(dr_hvp(t, z, 2, x, (double[]){7, 8}, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    CHK_SAME(out[1], 0.0);
    CHK_STATUS(dr_hvp(t, dr_const(2.0), 2, x, (double[]){7, 8}, out), DR_OK);
    CHK_SAME(out[0], 0.0);
    CHK_SAME(out[1], 0.0);
    /* linear in x: a tangent that is a constant */
    dr_real l = dr_add(t, x[0], x[1]);
    CHK_STATUS(dr_hessian(t, l, 2, x, H), DR_OK);
    for (int i = 0; i < 4; i++)
        CHK_SAME(H[i], 0.0);
    dr_tape_free(t);
}

static void test_tape_unchanged(void **state)
{
    (void)state;
    randctx c = {42, 8};
    double xv[MAXN], v[MAXN], H[MAXN * MAXN], hv[MAXN], g0[MAXN], g1[MAXN];
    chk_rng r;
    chk_rng_seed(&r, 3);
    random_point(&r, c.n, xv);
    random_point(&r, c.n, v);
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[MAXN];
    CHK_STATUS(dr_inputs(t, c.n, xv, x), DR_OK);
    dr_real y = prog_random(t, x, &c);
    size_t len = dr_tape_len(t);
    dr_idx mark = dr_tape_mark(t);
    CHK_STATUS(dr_gradient(t, y, c.n, x, g0), DR_OK);
    CHK_STATUS(dr_hvp(t, y, c.n, x, v, hv), DR_OK);
    assert_int_equal(dr_tape_len(t), len);
    assert_int_equal(dr_tape_mark(t), mark);
    CHK_STATUS(dr_gradient(t, y, c.n, x, g1), DR_OK);
    for (size_t i = 0; i < c.n; i++)
        CHK_SAME(g1[i], g0[i]);
    CHK_STATUS(dr_hessian(t, y, c.n, x, H), DR_OK);
    size_t bytes = dr_tape_bytes(t);
    for (int k = 0; k < 50; k++) {
        CHK_STATUS(dr_hessian(t, y, c.n, x, H), DR_OK);
        CHK_STATUS(dr_hvp(t, y, c.n, x, v, hv), DR_OK);
    }
    assert_int_equal(dr_tape_bytes(t), bytes);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_gradient(t, y, c.n, x, g1), DR_OK);
    for (size_t i = 0; i < c.n; i++)
        CHK_SAME(g1[i], g0[i]);
    /* recording goes on where it was */
    dr_real z = dr_mul(t, y, y);
    assert_int_equal(z.idx, mark);
    CHK_STATUS(dr_gradient(t, z, c.n, x, g1), DR_OK);
    for (size_t i = 0; i < c.n; i++)
        CHK_CLOSE(g1[i], 2 * y.val * g0[i], 1e-14, 1e-300);
    /* and a clear keeps the order */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(dr_tape_order(t), 2);
    CHK_STATUS(dr_inputs(t, c.n, xv, x), DR_OK);
    y = prog_random(t, x, &c);
    double H2[MAXN * MAXN];
    CHK_STATUS(dr_hessian(t, y, c.n, x, H2), DR_OK);
    for (size_t i = 0; i < c.n * c.n; i++)
        CHK_SAME(H2[i], H[i]);
    dr_tape_free(t);
}

/* whether the library records far arguments as ext records in the arena
   already 10 nodes back (make test-far) */
static bool far_build(void)
{
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0), y = x;
    for (int i = 0; i < 10; i++)
        y = dr_neg(t, y);
    size_t before = dr_tape_bytes(t);
    dr_add(t, x, y);
    bool far = dr_tape_bytes(t) != before;
    dr_tape_free(t);
    return far;
}

/* a tape whose tangent pass opens new chunks: the ids, the log, the
   adjoints and the memory stay where they were */
static void test_tape_unchanged_large(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[4];
    CHK_STATUS(dr_inputs(t, 4, (double[]){0.3, -0.2, 0.5, 0.1}, x), DR_OK);
    dr_real y = dr_const(0);
    for (int k = 0; k < 3000; k++)
        y = dr_add(t, y, dr_mul(t, dr_sin(t, dr_mul(t, x[k % 4], x[(k + 1) % 4])),
                                dr_const(1.0 / (1 + k))));
    dr_idx mark = dr_tape_mark(t);
    size_t len = dr_tape_len(t);
    double H[16], H0[16], v[4] = {1, 2, 3, 4}, hv[4];
    CHK_STATUS(dr_hessian(t, y, 4, x, H0), DR_OK);
    CHK_STATUS(dr_hvp(t, y, 4, x, v, hv), DR_OK);
    size_t bytes = dr_tape_bytes(t);
    for (int k = 0; k < 40; k++) {
        CHK_STATUS(dr_hessian(t, y, 4, x, H), DR_OK);
        CHK_STATUS(dr_hvp(t, y, 4, x, v, hv), DR_OK);
        assert_int_equal(dr_tape_mark(t), mark);
        assert_int_equal(dr_tape_len(t), len);
    }
    /* (with far arguments everywhere the arena blocks filled in between
       during a tangent pass stay until the clear) */
    if (!far_build())
        assert_int_equal(dr_tape_bytes(t), bytes);
    for (int i = 0; i < 16; i++)
        CHK_SAME(H[i], H0[i]);
    dr_real z = dr_input(t, 1.0);
    assert_int_equal(z.idx, mark);
    dr_tape_free(t);
}

/* ---------------------------------------------- dr_tangent_record, nesting */

static void test_perturbation_confusion(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_idx m0 = dr_tape_mark(t);
    dr_real x = dr_input(t, 3.0);
    /* inner: d/dy (x + y) at y = x */
    dr_idx m1 = dr_tape_mark(t);
    dr_real y = {x.val, dr_record1(t, x.idx, 1.0)};
    dr_real s = dr_add(t, x, y);
    dr_real ds;
    dr_real one = dr_const(1.0);
    CHK_STATUS(dr_tangent_record(t, m1, 1, &y.idx, &one, s, &ds), DR_OK);
    CHK_SAME(ds.val, 1.0);
    /* outer: d/dx [x * ds] */
    dr_real z = dr_mul(t, x, ds);
    double g;
    CHK_STATUS(dr_gradient(t, z, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0);
    dr_real dz;
    CHK_STATUS(dr_tangent_record(t, m0, 1, &x.idx, &one, z, &dz), DR_OK);
    CHK_SAME(dz.val, 1.0);

    /* the same with a nonlinear inner function: d/dx [x * d/dy (x y^2)]
       at y = x is d/dx [2 x^3] = 6 x^2 */
    dr_idx m2 = dr_tape_mark(t);
    dr_real y2 = {x.val, dr_record1(t, x.idx, 1.0)};
    dr_real s2 = dr_mul(t, x, dr_mul(t, y2, y2));
    dr_real ds2;
    CHK_STATUS(dr_tangent_record(t, m2, 1, &y2.idx, &one, s2, &ds2), DR_OK);
    CHK_CLOSE(ds2.val, 2 * 9.0, 1e-15, 0);
    dr_real z2 = dr_mul(t, x, ds2);
    CHK_STATUS(dr_gradient(t, z2, 1, &x, &g), DR_OK);
    CHK_CLOSE(g, 6 * 9.0, 1e-15, 0);
    dr_tape_free(t);
}

typedef struct third {
    const char *name;
    dr_real (*f)(dr_tape *, dr_real);
    double (*d1)(double), (*d2)(double), (*d3)(double);
    double x[3];
} third;

static dr_real f_sin(dr_tape *t, dr_real x) { return dr_sin(t, x); }
static double sin_d3(double x) { return -cos(x); }
static double sin_d2(double x) { return -sin(x); }
static dr_real f_exp(dr_tape *t, dr_real x) { return dr_exp(t, x); }
static dr_real f_p5(dr_tape *t, dr_real x) { return dr_powi(t, x, 5); }
static double p5_d1(double x) { return 5 * pow(x, 4); }
static double p5_d2(double x) { return 20 * pow(x, 3); }
static double p5_d3(double x) { return 60 * x * x; }
static dr_real f_log(dr_tape *t, dr_real x) { return dr_log(t, x); }
static double log_d1(double x) { return 1 / x; }
static double log_d2(double x) { return -1 / (x * x); }
static double log_d3(double x) { return 2 / (x * x * x); }
static dr_real f_atan(dr_tape *t, dr_real x) { return dr_atan(t, x); }
static double atan_d1(double x) { return 1 / (1 + x * x); }
static double atan_d2(double x) { return -2 * x / ((1 + x * x) * (1 + x * x)); }
static double atan_d3(double x)
{
    return (6 * x * x - 2) / pow(1 + x * x, 3);
}
static dr_real f_tanh(dr_tape *t, dr_real x) { return dr_tanh(t, x); }
static double tanh_d1(double x) { return 1 - tanh(x) * tanh(x); }
static double tanh_d2(double x) { return -2 * tanh(x) * tanh_d1(x); }
static double tanh_d3(double x)
{
    double T = tanh(x);
    return (1 - T * T) * (6 * T * T - 2);
}
static dr_real f_sqrt(dr_tape *t, dr_real x) { return dr_sqrt(t, x); }
static double sqrt_d1(double x) { return 0.5 / sqrt(x); }
static double sqrt_d2(double x) { return -0.25 * pow(x, -1.5); }
static double sqrt_d3(double x) { return 0.375 * pow(x, -2.5); }
static dr_real f_xexpx(dr_tape *t, dr_real x)
{
    return dr_mul(t, x, dr_exp(t, x));
}
static double xe_d1(double x) { return (x + 1) * exp(x); }
static double xe_d2(double x) { return (x + 2) * exp(x); }
static double xe_d3(double x) { return (x + 3) * exp(x); }

static const third thirds[] = {
    {"sin", f_sin, cos, sin_d2, sin_d3, {-1.0, 0.3, 2.0}},
    {"exp", f_exp, exp, exp, exp, {-1.0, 0.3, 2.0}},
    {"powi5", f_p5, p5_d1, p5_d2, p5_d3, {-1.0, 0.3, 2.0}},
    {"log", f_log, log_d1, log_d2, log_d3, {0.5, 1.3, 3.0}},
    {"atan", f_atan, atan_d1, atan_d2, atan_d3, {-1.0, 0.3, 2.0}},
    {"tanh", f_tanh, tanh_d1, tanh_d2, tanh_d3, {-1.0, 0.3, 2.0}},
    {"sqrt", f_sqrt, sqrt_d1, sqrt_d2, sqrt_d3, {0.5, 1.3, 3.0}},
    {"x exp x", f_xexpx, xe_d1, xe_d2, xe_d3, {-1.0, 0.3, 2.0}},
};

static void test_third_derivatives(void **state)
{
    (void)state;
    dr_real one = dr_const(1.0);
    for (size_t i = 0; i < sizeof thirds / sizeof *thirds; i++)
        for (int j = 0; j < 3; j++) {
            const third *f = &thirds[i];
            double xv = f->x[j];
            chk_context("%s at %g", f->name, xv);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
            dr_idx m = dr_tape_mark(t);
            dr_real x = dr_input(t, xv);
            dr_real y = f->f(t, x), d1, d2;
            CHK_STATUS(dr_tangent_record(t, m, 1, &x.idx, &one, y, &d1),
                       DR_OK);
            CHK_CLOSE(d1.val, f->d1(xv), 1e-13, 1e-300);
            CHK_STATUS(dr_tangent_record(t, m, 1, &x.idx, &one, d1, &d2),
                       DR_OK);
            CHK_CLOSE(d2.val, f->d2(xv), 1e-13, 1e-300);
            double g;
            CHK_STATUS(dr_gradient(t, d2, 1, &x, &g), DR_OK);
            CHK_CLOSE(g, f->d3(xv), 1e-12, 1e-300);
            /* and one more: the fourth of sin is sin */
            if (f->f == f_sin) {
                dr_real d3;
                CHK_STATUS(dr_tangent_record(t, m, 1, &x.idx, &one, d2, &d3),
                           DR_OK);
                CHK_CLOSE(d3.val, -cos(xv), 1e-13, 1e-300);
                CHK_STATUS(dr_gradient(t, d3, 1, &x, &g), DR_OK);
                CHK_CLOSE(g, sin(xv), 1e-12, 1e-300);
            }
            dr_tape_free(t);
        }
}

static void test_tangent_record_basics(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, (double[]){0.5, -1.2, 2.0}, x), DR_OK);
    dr_real y = dr_mul(t, dr_sin(t, x[0]), dr_mul(t, x[1], x[2]));
    /* directional derivative in direction (1, 2, 3), seeds as constants */
    dr_real seeds[3] = {dr_const(1), dr_const(2), dr_const(3)};
    dr_idx ids[3] = {x[0].idx, x[1].idx, x[2].idx};
    dr_real d;
    CHK_STATUS(dr_tangent_record(t, x[0].idx, 3, ids, seeds, y, &d), DR_OK);
    double g[3];
    dr_real yy = y;
    CHK_STATUS(dr_gradient(t, yy, 3, x, g), DR_OK);
    CHK_CLOSE(d.val, g[0] + 2 * g[1] + 3 * g[2], 1e-15, 1e-300);
    /* from the mark after y: nothing replayed, a constant */
    CHK_STATUS(dr_tangent_record(t, dr_tape_mark(t), 3, ids, seeds, y, &d),
               DR_OK);
    assert_int_equal(d.idx, DR_NONE);
    CHK_SAME(d.val, 0.0);
    /* y a seed itself before from: its seed */
    CHK_STATUS(dr_tangent_record(t, dr_tape_mark(t), 1, &y.idx, &seeds[2], y,
                                 &d),
               DR_OK);
    CHK_SAME(d.val, 3.0);
    /* y a constant */
    CHK_STATUS(dr_tangent_record(t, x[0].idx, 3, ids, seeds, dr_const(5), &d),
               DR_OK);
    assert_int_equal(d.idx, DR_NONE);
    CHK_SAME(d.val, 0.0);
    /* an active seed: the tangent depends on it */
    dr_real w = dr_input(t, 0.7);
    dr_real sw = {w.val, w.idx};
    CHK_STATUS(dr_tangent_record(t, x[0].idx, 1, &x[1].idx, &sw, y, &d),
               DR_OK);
    double gw;
    CHK_STATUS(dr_gradient(t, d, 1, &w, &gw), DR_OK);
    CHK_CLOSE(gw, g[1], 1e-15, 1e-300);
    /* a seed in the middle of the replayed part replaces its tangent */
    dr_real s = dr_sin(t, x[0]);
    dr_real y2 = dr_mul(t, s, x[1]);
    CHK_STATUS(dr_tangent_record(t, s.idx, 1, &s.idx, &seeds[0], y2, &d),
               DR_OK);
    CHK_SAME(d.val, x[1].val);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* ------------------------------------------------- nodes of given partials */

static void test_given_partials_linear(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, (double[]){0.5, -1.2, 2.0}, x), DR_OK);
    /* y = 2 a + 3 b, f = y^2: H = 2 [2 3]^T [2 3] */
    dr_real y = {2 * 0.5 + 3 * -1.2, dr_record2(t, x[0].idx, 2, x[1].idx, 3)};
    dr_real f = dr_mul(t, y, y);
    double H[9];
    CHK_STATUS(dr_hessian(t, f, 2, x, H), DR_OK);
    CHK_SAME(H[0], 8.0);
    CHK_SAME(H[1], 12.0);
    CHK_SAME(H[2], 12.0);
    CHK_SAME(H[3], 18.0);
    /* n-ary: s = p . x, f = sin s: H = -sin(s) p p^T */
    double p[3] = {0.5, -2.0, 1.5};
    dr_idx ids[3] = {x[0].idx, x[1].idx, x[2].idx};
    double sv = 0.5 * 0.5 + -2.0 * -1.2 + 1.5 * 2.0;
    dr_real s = {sv, dr_recordn(t, 3, ids, p)};
    f = dr_sin(t, s);
    CHK_STATUS(dr_hessian(t, f, 3, x, H), DR_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            CHK_CLOSE(H[i * 3 + j], -sin(sv) * p[i] * p[j], 1e-15, 1e-300);
    /* dr_recordn of two arguments and dr_record1 */
    dr_real s2 = {sv, dr_recordn(t, 2, ids, p)};
    dr_real s1 = {sv, dr_record1(t, s2.idx, 2.0)};
    f = dr_mul(t, s1, s1);
    CHK_STATUS(dr_hessian(t, f, 2, x, H), DR_OK);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            CHK_CLOSE(H[i * 2 + j], 2 * 4 * p[i] * p[j], 1e-15, 1e-300);
    /* a nonlinear function recorded by its partial is taken as linear */
    dr_real z = {sin(x[0].val), dr_record1(t, x[0].idx, cos(x[0].val))};
    CHK_STATUS(dr_hessian(t, z, 1, x, H), DR_OK);
    CHK_SAME(H[0], 0.0);
    /* dr_record0: a new independent node */
    dr_real c = {1.5, dr_record0(t)};
    f = dr_mul(t, c, dr_mul(t, x[0], x[0]));
    double H2[4];
    dr_real xc[2] = {x[0], c};
    CHK_STATUS(dr_hessian(t, f, 2, xc, H2), DR_OK);
    CHK_SAME(H2[0], 3.0);
    CHK_SAME(H2[1], 1.0);
    CHK_SAME(H2[2], 1.0);
    CHK_SAME(H2[3], 0.0);
    dr_tape_free(t);
}

/* dr_tangent_record straight after recording an n-ary node, as a nested
   derivative does (no dr_hvp or dr_hessian before it, which save the tape's
   position): the node is in the open chunk, and its partials must be found
   there; then the same with the node in a closed chunk */
static void test_tangent_record_nary(void **state)
{
    (void)state;
    for (int closed = 0; closed < 2; closed++) {
        chk_context("n-ary node in the %s chunk", closed ? "closed" : "open");
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[3];
        CHK_STATUS(dr_inputs(t, 3, (double[]){0.5, -1.2, 2.0}, x), DR_OK);
        /* inner function of copies y of x: s = 2 y0 y1 + 3 y1 y2 - y0 y2,
           as one n-ary node over the three products */
        dr_idx m = dr_tape_mark(t);
        dr_real y[3];
        dr_idx ids[3];
        for (int i = 0; i < 3; i++) {
            y[i] = (dr_real){x[i].val, dr_record1(t, x[i].idx, 1.0)};
            ids[i] = y[i].idx;
        }
        dr_real pr[3] = {dr_mul(t, y[0], y[1]), dr_mul(t, y[1], y[2]),
                         dr_mul(t, y[0], y[2])};
        dr_idx pid[3] = {pr[0].idx, pr[1].idx, pr[2].idx};
        double pp[3] = {2.0, 3.0, -1.0};
        dr_real s = {2 * pr[0].val + 3 * pr[1].val - pr[2].val,
                     dr_recordn(t, 3, pid, pp)};
        /* a sum of the copies themselves, and s, as one more n-ary node */
        dr_idx sid[4] = {ids[0], ids[1], ids[2], s.idx};
        double sp[4] = {1.0, 1.0, 1.0, 0.5};
        dr_real u = {y[0].val + y[1].val + y[2].val + 0.5 * s.val,
                     dr_recordn(t, 4, sid, sp)};
        for (int k = 0; closed && k < 600; k++) /* past DR_CHUNK_MIN */
            (void)dr_add(t, x[0], x[1]);
        /* the gradient of u by tangents: 1 + 0.5 ds/dy_i */
        double x0 = x[0].val, x1 = x[1].val, x2 = x[2].val;
        double ds[3] = {2 * x1 - x2, 2 * x0 + 3 * x2, 3 * x1 - x0};
        double H[3][3] = {{0, 2, -1}, {2, 0, 3}, {-1, 3, 0}};
        dr_real one = dr_const(1.0), d[3];
        for (int i = 0; i < 3; i++) {
            CHK_STATUS(dr_tangent_record(t, m, 1, &ids[i], &one, u, &d[i]),
                       DR_OK);
            CHK_CLOSE(d[i].val, 1 + 0.5 * ds[i], 1e-15, 1e-300);
        }
        /* and through it, by the outer gradient: 0.5 H */
        for (int i = 0; i < 3; i++) {
            double g[3];
            CHK_STATUS(dr_gradient(t, d[i], 3, x, g), DR_OK);
            for (int j = 0; j < 3; j++)
                CHK_CLOSE(g[j], 0.5 * H[i][j], 1e-15, 1e-300);
        }
        CHK_STATUS(dr_tape_status(t), DR_OK);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

static void test_input_kinds(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    /* dr_input_range (no values on the tape), then dr_inputs, dr_input */
    dr_idx first;
    CHK_STATUS(dr_input_range(t, 2, &first), DR_OK);
    dr_real a = {1.5, first}, b = {-0.5, first + 1};
    dr_real c[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.25, 2.0}, c), DR_OK);
    dr_real d = dr_input(t, 0.75);
    dr_real x[5] = {a, b, c[0], c[1], d};
    /* an input from dr_input_range that ends the tape */
    dr_idx last;
    CHK_STATUS(dr_input_range(t, 1, &last), DR_OK);
    double h0;
    dr_real lr = {0.5, last};
    CHK_STATUS(dr_hvp(t, lr, 1, &a, (double[]){1}, &h0), DR_OK);
    CHK_SAME(h0, 0.0);
    /* f = a b c0 + sin(c1) d */
    dr_real f = dr_add(t, dr_mul(t, dr_mul(t, a, b), c[0]),
                       dr_mul(t, dr_sin(t, c[1]), d));
    double H[25];
    CHK_STATUS(dr_hessian(t, f, 5, x, H), DR_OK);
    double E[25] = {0};
    E[0 * 5 + 1] = E[1 * 5 + 0] = c[0].val;
    E[0 * 5 + 2] = E[2 * 5 + 0] = b.val;
    E[1 * 5 + 2] = E[2 * 5 + 1] = a.val;
    E[3 * 5 + 3] = -sin(c[1].val) * d.val;
    E[3 * 5 + 4] = E[4 * 5 + 3] = cos(c[1].val);
    for (int i = 0; i < 25; i++)
        CHK_CLOSE(H[i], E[i], 1e-15, 1e-300);
    /* a Hessian with respect to some of the inputs only */
    double H2[4];
    dr_real sub[2] = {c[1], d};
    CHK_STATUS(dr_hessian(t, f, 2, sub, H2), DR_OK);
    CHK_CLOSE(H2[0], E[18], 1e-15, 0);
    CHK_CLOSE(H2[1], E[19], 1e-15, 0);
    CHK_CLOSE(H2[3], E[24], 1e-15, 1e-300);
    /* with respect to an intermediate node: its successors only */
    dr_real u = dr_mul(t, a, b);
    dr_real g = dr_mul(t, u, u);
    double hu;
    CHK_STATUS(dr_hessian(t, g, 1, &u, &hu), DR_OK);
    CHK_SAME(hu, 2.0);
    /* given twice, and beside an input it depends on: one variable whose
       directions add, and the input's stays unseen behind it */
    dr_real uu[3] = {u, a, u};
    double hv[3];
    CHK_STATUS(dr_hvp(t, g, 3, uu, (double[]){1.0, 5.0, 2.0}, hv), DR_OK);
    CHK_SAME(hv[0], 6.0);
    CHK_SAME(hv[1], 0.0);
    CHK_SAME(hv[2], 6.0);
    dr_tape_free(t);
}

/* ------------------------------------------------ order raised mid-way */

static void test_order_raised_midway(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    assert_int_equal(dr_tape_order(t), 1);
    dr_real a = dr_input(t, 0.5);
    dr_real b = dr_sin(t, a);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_idx m = dr_tape_mark(t);
    dr_real c = dr_input(t, 2.0);
    dr_real d = dr_mul(t, b, dr_mul(t, c, c));
    double H[4], out[2];
    dr_real x[2] = {a, c};
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_hvp(t, d, 2, x, (double[]){1, 1}, out), DR_ENOTSUP);
    CHK_STATUS(dr_hessian(t, d, 2, x, H), DR_ENOTSUP);
    CHK_STATUS(dr_hessian(t, d, 1, &c, H), DR_ENOTSUP);
    dr_real r;
    CHK_STATUS(dr_tangent_record(t, a.idx, 1, &a.idx, (dr_real[]){{1, DR_NONE}},
                                 d, &r),
               DR_ENOTSUP);
    assert_int_equal(r.idx, DR_NONE);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* from the mark after the raise: b is a value of tangent zero */
    dr_real one = dr_const(1.0), d1, d2;
    CHK_STATUS(dr_tangent_record(t, m, 1, &c.idx, &one, d, &d1), DR_OK);
    CHK_CLOSE(d1.val, 2 * c.val * b.val, 1e-15, 0);
    CHK_STATUS(dr_tangent_record(t, m, 1, &c.idx, &one, d1, &d2), DR_OK);
    CHK_CLOSE(d2.val, 2 * b.val, 1e-15, 0);
    /* d1 depends on a through b (first order through the order-1 part) */
    double g[2];
    CHK_STATUS(dr_gradient(t, d1, 2, x, g), DR_OK);
    CHK_CLOSE(g[0], 2 * c.val * cos(a.val), 1e-15, 0);
    CHK_CLOSE(g[1], 2 * b.val, 1e-15, 0);

    /* order 2, then 1, then 2 again: the order-1 part is not replayed */
    dr_tape *u = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
    dr_real p = dr_input(u, 0.5);
    dr_real q = dr_sin(u, p);
    CHK_STATUS(dr_tape_set_order(u, 1), DR_OK);
    assert_int_equal(dr_tape_order(u), 1);
    dr_real s = dr_mul(u, q, q);
    CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
    dr_real w = dr_exp(u, s);
    CHK_STATUS(dr_hessian(u, w, 1, &p, H), DR_ENOTSUP);
    CHK_STATUS(dr_hessian(u, q, 1, &p, H), DR_OK);
    CHK_CLOSE(H[0], -sin(0.5), 1e-15, 0);
    /* seeding the order-1 node itself: only the order-2 part is replayed */
    CHK_STATUS(dr_hessian(u, w, 1, &s, H), DR_OK);
    CHK_CLOSE(H[0], exp(s.val), 1e-15, 0);
    dr_tape_free(u);
    dr_tape_free(t);
}

/* ------------------------------------------------------ repeated inputs */

/* An input given twice is one variable seen twice: dr_jvp adds the
   directions of its places, so dr_hvp does too, and each place reads the
   same row; the Hessian is symmetric with every entry of that variable. */
static void test_repeated_inputs(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real a = dr_input(t, 0.7), b = dr_input(t, -1.3);
    /* f = sin(a) b + a^3 */
    dr_real y = dr_add(t, dr_mul(t, dr_sin(t, a), b), dr_powi(t, a, 3));
    double faa = -sin(a.val) * b.val + 6 * a.val, fab = cos(a.val);
    dr_real x[3] = {a, a, b};
    double H[9], out[3], v[3] = {0.5, -2.0, 3.0};
    CHK_STATUS(dr_hessian(t, y, 3, x, H), DR_OK);
    const double want[9] = {faa, faa, fab, faa, faa, fab, fab, fab, 0.0};
    for (int i = 0; i < 9; i++)
        CHK_CLOSE(H[i], want[i], 1e-14, 1e-15);
    CHK_STATUS(dr_hvp(t, y, 3, x, v, out), DR_OK);
    for (int i = 0; i < 3; i++) {
        double hv = 0;
        for (int j = 0; j < 3; j++)
            hv += want[i * 3 + j] * v[j];
        CHK_CLOSE(out[i], hv, 1e-14, 1e-15);
    }
    /* the same as dr_jvp of the gradient: directions of a place add up */
    double jv;
    CHK_STATUS(dr_jvp(t, 1, &y, 3, x, v, &jv), DR_OK);
    double g[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_CLOSE(jv, g[0] * v[0] + g[1] * v[1] + g[2] * v[2], 1e-14, 0);
    /* dr_tangent_record with a seed id twice: the seeds add up (also for
       a seed before the mark, and an active seed) */
    dr_real r, d = dr_const(2.0), e = dr_const(5.0);
    dr_idx ids[2] = {a.idx, a.idx};
    dr_real seeds[2] = {d, e};
    CHK_STATUS(dr_tangent_record(t, a.idx, 2, ids, seeds, y, &r), DR_OK);
    double fa = cos(a.val) * b.val + 3 * a.val * a.val;
    CHK_CLOSE(r.val, 7.0 * fa, 1e-14, 0);
    CHK_STATUS(dr_tangent_record(t, b.idx, 2, ids, seeds, y, &r), DR_OK);
    CHK_CLOSE(r.val, 7.0 * fa, 1e-14, 0);
    dr_real sb[2] = {b, b}; /* tangent 2b along a: d/da = 2 b f_a */
    CHK_STATUS(dr_tangent_record(t, b.idx, 2, ids, sb, y, &r), DR_OK);
    CHK_CLOSE(r.val, 2 * b.val * fa, 1e-14, 0);
    double gr[2];
    dr_real ab[2] = {a, b};
    CHK_STATUS(dr_gradient(t, r, 2, ab, gr), DR_OK);
    CHK_CLOSE(gr[0], 2 * b.val * faa, 1e-13, 0);
    CHK_CLOSE(gr[1], 2 * fa + 2 * b.val * fab, 1e-13, 0);
    dr_tape_free(t);
}

/* A failed dr_tangent_record changes nothing: a seed tangent that is not
   on the tape is refused before anything is recorded. */
static void test_tangent_record_checks_first(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new(), *other = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.3), w = dr_input(other, 1.0);
    dr_real y = dr_exp(t, dr_mul(t, x, x));
    size_t len = dr_tape_len(t);
    dr_real r = {1, 1}, bad = {1.0, (dr_idx)1 << 50};
    dr_real seeds[2][1] = {{bad}, {w}};
    for (int i = 0; i < 2; i++) {
        CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, seeds[i], y, &r),
                   DR_EINVAL);
        assert_int_equal(r.idx, DR_NONE);
        assert_int_equal(dr_tape_len(t), len);
        CHK_STATUS(dr_tape_status(t), DR_OK);
    }
    /* the same call with a good seed works */
    dr_real one = dr_const(1.0);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, y, &r), DR_OK);
    CHK_CLOSE(r.val, 2 * x.val * exp(x.val * x.val), 1e-15, 0);
    dr_tape_free(other);
    dr_tape_free(t);
}

/* Order 2, then 1: what was recorded at order 2 keeps its rules, so every
   second-order call works for outputs recorded before the switch, and
   answers DR_ENOTSUP (nothing recorded) for later ones. */
static void test_order_lowered(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.4);
    dr_real y = dr_mul(t, dr_sin(t, x), x);
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    dr_real z = dr_exp(t, y);
    double H, v = 1.0, out;
    double want = 2 * cos(x.val) - x.val * sin(x.val);
    CHK_STATUS(dr_hessian(t, y, 1, &x, &H), DR_OK);
    CHK_CLOSE(H, want, 1e-15, 0);
    CHK_STATUS(dr_hvp(t, y, 1, &x, &v, &out), DR_OK);
    CHK_CLOSE(out, want, 1e-15, 0);
    dr_real r, one = dr_const(1.0);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, y, &r), DR_OK);
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_hessian(t, z, 1, &x, &H), DR_ENOTSUP);
    CHK_STATUS(dr_hvp(t, z, 1, &x, &v, &out), DR_ENOTSUP);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, z, &r),
               DR_ENOTSUP);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* ------------------------------------------------------------ error paths */

static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double H[4], out[2], v[2] = {1, 2};
    dr_real r, one = dr_const(1.0);
    dr_real x = dr_input(t, 1.0);
    dr_real y = dr_sin(t, x);
    /* order 1 */
    CHK_STATUS(dr_hvp(t, y, 1, &x, v, out), DR_ENOTSUP);
    CHK_STATUS(dr_hessian(t, y, 1, &x, H), DR_ENOTSUP);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, y, &r),
               DR_ENOTSUP);
    assert_int_equal(dr_tape_len(t), 2);
    /* dr_tape_set_order */
    CHK_STATUS(dr_tape_set_order(NULL, 2), DR_EINVAL);
    CHK_STATUS(dr_tape_set_order(t, 0), DR_EINVAL);
    CHK_STATUS(dr_tape_set_order(t, 3), DR_EINVAL);
    CHK_STATUS(dr_tape_set_order(t, -1), DR_EINVAL);
    assert_int_equal(dr_tape_order(t), 1);
    assert_int_equal(dr_tape_order(NULL), 0);
    assert_int_equal(dr_tape_mark(NULL), DR_NONE);
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    CHK_STATUS(dr_tape_clear(t), DR_OK);

    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    x = dr_input(t, 1.0);
    y = dr_mul(t, dr_sin(t, x), x);
    dr_idx bad = (dr_idx)1 << 40;
    dr_real badr = {1.0, bad};
    /* NULL arguments */
    CHK_STATUS(dr_hvp(NULL, y, 1, &x, v, out), DR_EINVAL);
    CHK_STATUS(dr_hvp(t, y, 1, NULL, v, out), DR_EINVAL);
    CHK_STATUS(dr_hvp(t, y, 1, &x, NULL, out), DR_EINVAL);
    CHK_STATUS(dr_hvp(t, y, 1, &x, v, NULL), DR_EINVAL);
    CHK_STATUS(dr_hessian(NULL, y, 1, &x, H), DR_EINVAL);
    CHK_STATUS(dr_hessian(t, y, 1, NULL, H), DR_EINVAL);
    CHK_STATUS(dr_hessian(t, y, 1, &x, NULL), DR_EINVAL);
    CHK_STATUS(dr_hessian(t, y, (size_t)1 << 33, &x, H), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, y, NULL),
               DR_EINVAL);
    CHK_STATUS(dr_tangent_record(NULL, x.idx, 1, &x.idx, &one, y, &r),
               DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, NULL, &one, y, &r), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, NULL, y, &r), DR_EINVAL);
    /* bad ids */
    CHK_STATUS(dr_hvp(t, badr, 1, &x, v, out), DR_EINVAL);
    CHK_STATUS(dr_hvp(t, y, 1, &badr, v, out), DR_EINVAL);
    CHK_STATUS(dr_hessian(t, badr, 1, &x, H), DR_EINVAL);
    CHK_STATUS(dr_hessian(t, y, 1, &badr, H), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, bad, 1, &x.idx, &one, y, &r), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, DR_NONE, 1, &x.idx, &one, y, &r),
               DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &bad, &one, y, &r), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, badr, &r),
               DR_EINVAL);
    assert_int_equal(r.idx, DR_NONE);
    assert_int_equal(dr_tape_len(t), 3);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* a recorder opens at order 2 (the order stays 2: setting it is
       DR_EBUSY meanwhile, and so is dr_hvp); dr_fork gives children of
       order 2 */
    dr_rec rec;
    CHK_STATUS(dr_rec_begin(t, &rec), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_EBUSY);
    CHK_STATUS(dr_hvp(t, y, 1, &x, v, out), DR_EBUSY);
    CHK_STATUS(dr_rec_end(&rec), DR_OK);
    assert_int_equal(dr_tape_order(t), 2);
    assert_int_equal(dr_tape_len(t), 3);
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    assert_int_equal(dr_tape_order(kids[0]), 2);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_hessian(t, y, 1, &x, H), DR_OK);
    CHK_CLOSE(H[0], 2 * cos(1.0) - sin(1.0), 1e-15, 0);

    /* a child handle (the fork at order 1): sweeps are the root's; the
       child's nodes recorded at order 1 have no rule */
    dr_tape *u = chk_tape_new();
    dr_real ux = dr_input(u, 1.0);
    CHK_STATUS(dr_fork(u, 2, kids), DR_OK);
    dr_real uy = dr_sin(kids[0], ux);
    CHK_STATUS(dr_tape_set_order(u, 2), DR_EBUSY);
    CHK_STATUS(dr_hvp(kids[0], uy, 1, &ux, v, out), DR_EINVAL);
    CHK_STATUS(dr_hessian(kids[0], uy, 1, &ux, H), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(kids[0], ux.idx, 1, &ux.idx, &one, uy, &r),
               DR_ENOTSUP);
    assert_int_equal(dr_tape_order(kids[0]), 1);
    CHK_STATUS(dr_tape_set_order(kids[0], 2), DR_OK);
    assert_int_equal(dr_tape_order(kids[0]), 2);
    assert_int_equal(dr_tape_order(u), 1);
    CHK_STATUS(dr_tangent_record(kids[0], ux.idx, 1, &ux.idx, &one, uy, &r),
               DR_ENOTSUP);
    /* a child at order 2 forks children of order 2 */
    dr_tape *grand[1];
    CHK_STATUS(dr_fork(kids[0], 1, grand), DR_OK);
    assert_int_equal(dr_tape_order(grand[0]), 2);
    CHK_STATUS(dr_join(kids[0]), DR_OK);
    CHK_STATUS(dr_join(u), DR_OK);
    /* a joined handle */
    CHK_STATUS(dr_tape_set_order(kids[0], 2), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(kids[0], ux.idx, 1, &ux.idx, &one, uy, &r),
               DR_EINVAL);
    CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
    /* an open recorder */
    CHK_STATUS(dr_tape_set_order(u, 1), DR_OK);
    CHK_STATUS(dr_rec_begin(u, &rec), DR_OK);
    CHK_STATUS(dr_tape_set_order(u, 2), DR_EBUSY);
    CHK_STATUS(dr_rec_end(&rec), DR_OK);
    dr_tape_free(u);

    /* sticky status */
    dr_real z = dr_mul(t, y, badr);
    assert_int_equal(z.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_hvp(t, y, 1, &x, v, out), DR_EINVAL);
    CHK_STATUS(dr_hessian(t, y, 1, &x, H), DR_EINVAL);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, y, &r), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 1.0);
    y = dr_exp(t, x);
    CHK_STATUS(dr_hessian(t, y, 1, &x, H), DR_OK);
    CHK_CLOSE(H[0], exp(1.0), 1e-15, 0);
    dr_tape_free(t);
}

static void test_array_node(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.5);
    dr_arr a = dr_arr_input(t, 1, 3, 1, (double[]){1, 2, 3});
    dr_real s = dr_arr_sum(t, a);
    dr_real y = dr_mul(t, dr_sin(t, x), s);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    size_t len = dr_tape_len(t);
    double H[1], out[1], g0, g1;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g0), DR_OK);
    /* the products and the recorded tangent through the array
       (tests/test_array_hvp.c, tests/test_array_recorded.c) */
    CHK_STATUS(dr_hvp(t, y, 1, &x, (double[]){1}, out), DR_OK);
    CHK_CLOSE(out[0], -6 * sin(0.5), 1e-15, 0);
    CHK_STATUS(dr_hessian(t, y, 1, &x, H), DR_OK);
    CHK_SAME(H[0], out[0]);
    assert_int_equal(dr_tape_len(t), len);
    dr_real r, one = dr_const(1);
    CHK_STATUS(dr_tangent_record(t, x.idx, 1, &x.idx, &one, y, &r), DR_OK);
    CHK_CLOSE(r.val, 6 * cos(0.5), 1e-15, 0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g1), DR_OK);
    CHK_SAME(g1, g0);
    CHK_CLOSE(g1, 6 * cos(0.5), 1e-15, 0);
    /* the array's sum taken as a seed: what follows it is replayed */
    CHK_STATUS(dr_tangent_record(t, s.idx, 2, (dr_idx[]){x.idx, s.idx},
                                 (dr_real[]){{1, DR_NONE}, {0, DR_NONE}}, y,
                                 &r),
               DR_OK);
    CHK_CLOSE(r.val, 6 * cos(0.5), 1e-15, 0);
    /* recording after it still works */
    dr_real z = dr_mul(t, x, x);
    CHK_STATUS(dr_hessian(t, z, 1, &x, H), DR_OK);
    CHK_SAME(H[0], 2.0);
    dr_real rz;
    CHK_STATUS(dr_tangent_record(t, z.idx, 1, &x.idx, &one, z, &rz), DR_OK);
    CHK_CLOSE(rz.val, 1.0, 0, 0);
    dr_tape_free(t);
}

/* ----------------------------------------------------------- out of memory */

static dr_real prog_oom(dr_tape *t, const dr_real *x, const void *ctx)
{
    (void)ctx;
    dr_real y = dr_const(0);
    for (int k = 0; k < 200; k++)
        y = dr_add(t, y, dr_mul(t, dr_sin(t, dr_mul(t, x[k % 3], x[(k + 1) % 3])),
                                dr_const(1.0 + k)));
    return y;
}

typedef enum { OOM_HVP, OOM_HESSIAN, OOM_TANGENT } oom_kind;

static void oom_case(oom_kind kind, bool rest)
{
    double xv[3] = {0.3, -0.7, 1.1}, v[3] = {1, -2, 0.5};
    double Hexp[9], hvexp[3];
    hessian_at(prog_oom, NULL, 3, xv, Hexp);
    for (int i = 0; i < 3; i++)
        hvexp[i] = Hexp[i * 3] * v[0] + Hexp[i * 3 + 1] * v[1] +
                   Hexp[i * 3 + 2] * v[2];
    bool done = false;
    for (size_t k = 1; k < 10000 && !done; k++) {
        chk_context("kind %d: allocation %zu fails%s", (int)kind, k,
                    rest ? " (and all later)" : "");
        chk_alloc al;
        chk_alloc_install(&al);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[3];
        CHK_STATUS(dr_inputs(t, 3, xv, x), DR_OK);
        dr_real y = prog_oom(t, x, NULL);
        double g0[3], g1[3], H[9], out[3];
        CHK_STATUS(dr_gradient(t, y, 3, x, g0), DR_OK);
        size_t len = dr_tape_len(t);
        chk_alloc_reset_counts(&al);
        chk_alloc_fail_in(&al, k, rest);
        dr_status st;
        dr_real r = {0, 0};
        dr_real one = dr_const(1);
        if (kind == OOM_HVP)
            st = dr_hvp(t, y, 3, x, v, out);
        else if (kind == OOM_HESSIAN)
            st = dr_hessian(t, y, 3, x, H);
        else
            st = dr_tangent_record(t, x[0].idx, 1, &x[0].idx, &one, y, &r);
        chk_alloc_fail_in(&al, 0, false);
        if (al.fails == 0) {
            CHK_STATUS(st, DR_OK);
            done = true;
        } else {
            CHK_STATUS(st, DR_ENOMEM);
        }
        /* a failed call changes nothing: the tape as it was */
        if (kind != OOM_TANGENT || st != DR_OK) {
            CHK_STATUS(dr_tape_status(t), DR_OK);
            assert_int_equal(dr_tape_len(t), len);
            if (kind == OOM_TANGENT)
                assert_int_equal(r.idx, DR_NONE);
        }
        if (dr_tape_status(t) == DR_OK) {
            CHK_STATUS(dr_gradient(t, y, 3, x, g1), DR_OK);
            for (int i = 0; i < 3; i++)
                CHK_SAME(g1[i], g0[i]);
            if (kind == OOM_HVP || kind == OOM_HESSIAN) {
                CHK_STATUS(dr_hvp(t, y, 3, x, v, out), DR_OK);
                for (int i = 0; i < 3; i++)
                    CHK_CLOSE(out[i], hvexp[i], 1e-13, 1e-13);
                CHK_STATUS(dr_hessian(t, y, 3, x, H), DR_OK);
                for (int i = 0; i < 9; i++)
                    CHK_CLOSE(H[i], Hexp[i], 1e-13, 1e-13);
            }
        } else {
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            CHK_STATUS(dr_inputs(t, 3, xv, x), DR_OK);
            y = prog_oom(t, x, NULL);
            CHK_STATUS(dr_hessian(t, y, 3, x, H), DR_OK);
            for (int i = 0; i < 9; i++)
                CHK_CLOSE(H[i], Hexp[i], 1e-13, 1e-13);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    assert_true(done);
}

static void test_oom_hvp(void **state)
{
    (void)state;
    oom_case(OOM_HVP, false);
    oom_case(OOM_HVP, true);
}
static void test_oom_hessian(void **state)
{
    (void)state;
    oom_case(OOM_HESSIAN, false);
    oom_case(OOM_HESSIAN, true);
}
static void test_oom_tangent(void **state)
{
    (void)state;
    oom_case(OOM_TANGENT, false);
    oom_case(OOM_TANGENT, true);
}

int main(void)
{
    enum { N_FIXED = 21 };
    struct CMUnitTest tests[2 * NU + 2 * NB + N_FIXED];
    static char names[2 * NU + 2 * NB][32];
    size_t n = 0;
    for (size_t i = 0; i < NU; i++, n++) {
        snprintf(names[n], sizeof names[n], "hessian_%s", unaries[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_unary, NULL, NULL,
                                       (void *)&unaries[i]};
    }
    for (size_t i = 0; i < NB; i++, n++) {
        snprintf(names[n], sizeof names[n], "hessian_%s", binaries[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_binary, NULL, NULL,
                                       (void *)&binaries[i]};
    }
    for (size_t i = 0; i < NU; i++, n++) {
        snprintf(names[n], sizeof names[n], "hessian_fe_%s", unaries[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_fe_unary, NULL, NULL,
                                       (void *)&unaries[i]};
    }
    for (size_t i = 0; i < NB; i++, n++) {
        snprintf(names[n], sizeof names[n], "hessian_fe_%s", binaries[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_fe_binary, NULL, NULL,
                                       (void *)&binaries[i]};
    }
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_powi);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_symmetry);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_hvp_is_hessian_times_v);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_seed_example);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_tape_unchanged);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_tape_unchanged_large);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_perturbation_confusion);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_third_derivatives);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_tangent_record_basics);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_given_partials_linear);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_tangent_record_nary);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_input_kinds);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_order_raised_midway);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_repeated_inputs);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_tangent_record_checks_first);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_order_lowered);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_errors);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_array_node);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test_teardown(
        test_oom_hvp, chk_alloc_teardown);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test_teardown(
        test_oom_hessian, chk_alloc_teardown);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test_teardown(
        test_oom_tangent, chk_alloc_teardown);
    return _cmocka_run_group_tests("second_order", tests, n, NULL, NULL);
}
