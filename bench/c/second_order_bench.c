/*
 * second_order_bench.c - the cost of second order (not run by the driver).
 *
 *     second-order-bench <program> <size> <reps>
 *
 * Scalar programs recorded with the scalar operations (dr_mul, dr_sin,
 * ...):
 *   nn   a two-layer network, 40 inputs, 60 tanh units, one softplus loss
 *        head over them: about 10 000 operations
 *   rot  frotvecquat's rotation of a vector by a quaternion, its three
 *        outputs summed to one scalar
 * and the measured units, each `reps` times:
 *   nn-grad, rot-grad      one dr_gradient on a tape recorded once at order 2
 *   nn-hvp,  rot-hvp       one dr_hvp on the same tape
 *   nn-rec1, rot-rec1      clear + record at order 1
 *   nn-rec2, rot-rec2      clear + record at order 2
 *   nn-rechvp, rot-rechvp  clear + record at order 2 + one dr_hvp (what a
 *                          Hessian-vector product at a new point costs;
 *                          bench/hs's nn-hvp and rot-hvp do the same)
 *   nn-rephvp, rot-rephvp  dr_replay at a new point of the tape recorded
 *                          once + one dr_hvp (bench/hs's nn-taped-hvp and
 *                          rot-taped-hvp do the same)
 *   rosen-hess, quad-hess  clear + record at order 2 + dr_hessian
 *   PROG-hessp             the same with the Hessian as the products with
 *                          the unit vectors (dr_hvp_vec), for the programs
 *                          above and three whose Hessians edge pushing gives
 *                          up on (bench/README.md, "Second order"):
 *   layers  three tanh layers of width 60 over 60 inputs, summed squares
 *   chain   the product of 200 inputs, one dr_mul at a time
 *   rank1   100 sines of the sum of 400 inputs' squares
 *   mult-ops               fmult with dr_mul (clear, record, gradient)
 *   dot-ops                fdotprod of length `size` with dr_mul/dr_add
 *                          (clear, record, gradient)
 * Sparse Jacobians and Hessians (size = n, the inputs), on a tape recorded
 * once at order 2:
 *   band-hess, band-shess, band-shess1   the Hessian of the banded
 *                          f = sum_i (x_{i-1} x_i)^2 + sin x_i
 *                          + exp(x_i + x_{i+2}) / 2 (half-bandwidth 2):
 *                          dense dr_hessian; dr_sparse_hessian_eval of a
 *                          plan made once; dr_sparse_hessian (pattern,
 *                          colouring and sweeps every time)
 *   band-jac, band-sjac, band-sjac1      the Jacobian (n x n) of
 *                          y_i = sin(x_{i-1} x_i) + x_{i+1}^2, the same
 *                          three ways (dr_jacobian; dr_sparse_jacobian_eval;
 *                          dr_sparse_jacobian)
 *   fsum-sjac1, rsum-sjac1               dr_sparse_jacobian of one output,
 *                          the sum of the n inputs by dr_add, in index
 *                          order or from the last
 *   arrow-plan             dr_sparse_jacobian_plan of y_0 = sum x,
 *                          y_i = x_0 cos x_i (an arrowhead, n colours)
 * mult-ops and dot-ops use only the order-1 API; built with
 * -DBENCH_ORDER1_ONLY they link against a library without second order,
 * so the scalar operations' speed at order 1 can be compared across
 * versions (docs/engine-performance.md, "Second order").  Prints a checksum.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dualrev.h>

#define bench_clobber(p) __asm__ volatile("" : : "r"(p) : "memory")
#define bench_use(x) __asm__ volatile("" : : "g"(x) : "memory")

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "second-order-bench: %s: %s\n", what, dr_strerror(st));
        exit(4);
    }
}

#ifndef BENCH_ORDER1_ONLY
#define NN_IN 40
#define NN_H 60
#define NN_N (NN_IN + NN_H * NN_IN + NN_H + NN_H) /* inputs: x, W, b, v */

static void nn_inputs(double *p)
{
    unsigned s = 12345;
    for (int i = 0; i < NN_N; i++) {
        s = s * 1103515245u + 12345u;
        p[i] = ((double)(s >> 8) / (double)(1u << 24) - 0.5) * 0.4;
    }
}

/* loss = softplus(sum_j v_j tanh(sum_i W_ji x_i + b_j)) + 0.01 sum W^2 */
static dr_real nn(dr_tape *t, const dr_real *p)
{
    const dr_real *x = p, *W = p + NN_IN, *b = W + NN_H * NN_IN,
                  *v = b + NN_H;
    dr_real out = dr_const(0.0), reg = dr_const(0.0);
    for (int j = 0; j < NN_H; j++) {
        dr_real s = b[j];
        for (int i = 0; i < NN_IN; i++) {
            dr_real w = W[j * NN_IN + i];
            s = dr_add(t, s, dr_mul(t, w, x[i]));
            reg = dr_add(t, reg, dr_mul(t, w, w));
        }
        out = dr_add(t, out, dr_mul(t, v[j], dr_tanh(t, s)));
    }
    return dr_add(t, dr_softplus(t, out), dr_mul(t, dr_const(0.01), reg));
}

typedef struct {
    dr_real x, y, z;
} vec3;

static dr_real dot3(dr_tape *t, vec3 p, vec3 q)
{
    return dr_add(t, dr_add(t, dr_mul(t, p.x, q.x), dr_mul(t, p.y, q.y)),
                  dr_mul(t, p.z, q.z));
}
static vec3 vadd(dr_tape *t, vec3 p, vec3 q)
{
    vec3 r = {dr_add(t, p.x, q.x), dr_add(t, p.y, q.y), dr_add(t, p.z, q.z)};
    return r;
}
static vec3 scale(dr_tape *t, dr_real k, vec3 p)
{
    vec3 r = {dr_mul(t, k, p.x), dr_mul(t, k, p.y), dr_mul(t, k, p.z)};
    return r;
}
static vec3 cross(dr_tape *t, vec3 a, vec3 b)
{
    vec3 r = {dr_sub(t, dr_mul(t, a.y, b.z), dr_mul(t, a.z, b.y)),
              dr_sub(t, dr_mul(t, a.z, b.x), dr_mul(t, a.x, b.z)),
              dr_sub(t, dr_mul(t, a.x, b.y), dr_mul(t, a.y, b.x))};
    return r;
}

static dr_real rot(dr_tape *t, const dr_real *x)
{
    vec3 v = {x[0], x[1], x[2]}, u = {x[3], x[4], x[5]};
    dr_real s = x[6], two = dr_const(2.0);
    vec3 t1 = scale(t, dr_mul(t, two, dot3(t, u, v)), u);
    vec3 t2 = scale(t, dr_sub(t, dr_mul(t, s, s), dot3(t, u, u)), v);
    vec3 t3 = scale(t, dr_mul(t, two, s), cross(t, u, v));
    vec3 o = vadd(t, vadd(t, t1, t2), t3);
    return dr_add(t, dr_add(t, o.x, o.y), o.z);
}
#endif

static double sum(size_t n, const double *g)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g[i];
    return s;
}

static double run_mult(long reps)
{
    dr_tape *t = dr_tape_new();
    double g[2] = {0, 0}, in[2] = {3.0, 4.0};
    for (long r = 0; r < reps; r++) {
        bench_clobber(in);
        dr_tape_clear(t);
        dr_real x[2] = {dr_input(t, in[0]), dr_input(t, in[1])};
        dr_real y = dr_mul(t, x[0], x[1]);
        check(dr_gradient(t, y, 2, x, g), "gradient");
        bench_use(g);
    }
    dr_tape_free(t);
    return g[0] + g[1];
}

static double run_dot(long n, long reps)
{
    dr_tape *t = dr_tape_new();
    double *v = malloc(2 * (size_t)n * sizeof *v), *g = malloc(2 * (size_t)n * sizeof *g);
    dr_real *x = malloc(2 * (size_t)n * sizeof *x);
    if (!t || !v || !g || !x)
        check(DR_ENOMEM, "setup");
    for (long i = 0; i < 2 * n; i++)
        v[i] = 1.0 + (double)(i % 7) / 7.0;
    for (long r = 0; r < reps; r++) {
        bench_clobber(v);
        dr_tape_clear(t);
        check(dr_inputs(t, 2 * (size_t)n, v, x), "inputs");
        dr_real acc = dr_const(0.0);
        for (long i = n; i-- > 0;)
            acc = dr_add(t, dr_mul(t, x[i], x[n + i]), acc);
        check(dr_gradient_range(t, acc, x[0].idx, 2 * (size_t)n, g), "gradient");
        bench_use(g);
    }
    double s = sum(2 * (size_t)n, g);
    free(v);
    free(g);
    free(x);
    dr_tape_free(t);
    return s;
}

#ifndef BENCH_ORDER1_ONLY
typedef dr_real (*program)(dr_tape *, const dr_real *);

/* the 2-D Rosenbrock function (1 - x)^2 + 100 (y - x^2)^2 */
static dr_real rosen(dr_tape *t, const dr_real *p)
{
    dr_real a = dr_sub(t, dr_const(1.0), p[0]);
    dr_real b = dr_sub(t, p[1], dr_mul(t, p[0], p[0]));
    return dr_add(t, dr_mul(t, a, a), dr_mul(t, dr_const(100.0), dr_mul(t, b, b)));
}

/* a quadratic form x^T A x of 100 inputs, A fixed (a_ij = 1 / (1 + i + 2 j)) */
#define QUAD_N 100
static dr_real quad(dr_tape *t, const dr_real *x)
{
    dr_real f = dr_const(0.0);
    for (int i = 0; i < QUAD_N; i++) {
        dr_real r = dr_const(0.0);
        for (int j = 0; j < QUAD_N; j++)
            r = dr_add(t, r, dr_mul(t, dr_const(1.0 / (1 + i + 2 * j)), x[j]));
        f = dr_add(t, f, dr_mul(t, x[i], r));
    }
    return f;
}

/* three tanh layers of width LAYERS_N over as many inputs, the outputs'
   squares summed */
#define LAYERS_N 60
static dr_real layers(dr_tape *t, const dr_real *x)
{
    dr_real z[LAYERS_N], w[LAYERS_N];
    memcpy(z, x, sizeof z);
    for (int l = 0; l < 3; l++) {
        for (int i = 0; i < LAYERS_N; i++) {
            dr_real s = dr_const(0.0);
            for (int j = 0; j < LAYERS_N; j++)
                s = dr_add(t, s, dr_mul(t, dr_const(sin(1.0 + i * 7 + j * 3 + l) / 8), z[j]));
            w[i] = dr_tanh(t, s);
        }
        memcpy(z, w, sizeof z);
    }
    dr_real y = dr_const(0.0);
    for (int i = 0; i < LAYERS_N; i++)
        y = dr_add(t, y, dr_mul(t, z[i], z[i]));
    return y;
}

/* the product of CHAIN_N inputs */
#define CHAIN_N 200
static dr_real chain(dr_tape *t, const dr_real *x)
{
    dr_real y = x[0];
    for (int i = 1; i < CHAIN_N; i++)
        y = dr_mul(t, y, x[i]);
    return y;
}

/* 100 sines of the sum of RANK1_N squares: a dense Hessian of rank one
   plus a diagonal */
#define RANK1_N 400
static dr_real rank1(dr_tape *t, const dr_real *x)
{
    dr_real s = dr_const(0.0);
    for (int i = 0; i < RANK1_N; i++)
        s = dr_add(t, s, dr_mul(t, x[i], x[i]));
    for (int k = 0; k < 100; k++)
        s = dr_sin(t, s);
    return s;
}

static double run_so(program f, size_t n, const double *in, const char *what,
                     long reps)
{
    dr_tape *t = dr_tape_new();
    bool products = !strcmp(what, "hessp");
    bool hess = !strcmp(what, "hess") || products;
    double *g = malloc((hess ? n * n : n) * sizeof *g), *v = malloc(n * sizeof *v);
    double *at = malloc(n * sizeof *at);
    double *E = products ? calloc(n * n, sizeof *E) : NULL;
    dr_real *x = malloc(n * sizeof *x);
    if (!t || !g || !v || !x || !at || (products && !E))
        check(DR_ENOMEM, "setup");
    for (size_t i = 0; products && i < n; i++)
        E[i * n + i] = 1.0;
    for (size_t i = 0; i < n; i++)
        v[i] = 1.0 / (1.0 + (double)i);
    /* rec1, rec2, hess: the unit records the program (hess: then takes its
       dense Hessian, the whole cost of a Hessian from scratch) */
    bool rechvp = !strcmp(what, "rechvp");
    bool rec = !strcmp(what, "rec1") || !strcmp(what, "rec2") || hess || rechvp;
    check(dr_tape_set_order(t, strcmp(what, "rec1") ? 2 : 1), "order");
    dr_real y = {0, DR_NONE};
    if (!rec) {
        check(dr_inputs(t, n, in, x), "inputs");
        y = f(t, x);
    }
    for (long r = 0; r < reps; r++) {
        bench_clobber(in);
        if (rec) {
            dr_tape_clear(t);
            check(dr_inputs(t, n, in, x), "inputs");
            y = f(t, x);
            bench_use(y.val);
            if (products)
                check(dr_hvp_vec(t, y, n, x, n, E, g), "products");
            else if (hess)
                check(dr_hessian(t, y, n, x, g), "hessian");
            if (rechvp)
                check(dr_hvp(t, y, n, x, v, g), "hvp");
        } else if (!strcmp(what, "rephvp")) {
            /* the first input moved a little at each repetition */
            memcpy(at, in, n * sizeof *at);
            at[0] += (double)r * 1e-12;
            check(dr_replay(t, n, x, at), "replay");
            check(dr_hvp(t, y, n, x, v, g), "hvp");
        } else if (!strcmp(what, "grad")) {
            check(dr_gradient(t, y, n, x, g), "gradient");
        } else {
            check(dr_hvp(t, y, n, x, v, g), "hvp");
        }
        bench_use(g);
    }
    check(dr_tape_status(t), "tape");
    double s = hess ? sum(n * n, g) : rechvp ? sum(n, g) : rec ? y.val : sum(n, g);
    free(g);
    free(v);
    free(at);
    free(E);
    free(x);
    dr_tape_free(t);
    return s;
}

/* ------------------------------------------------------- sparse */

static dr_real band_f(dr_tape *t, size_t n, const dr_real *x)
{
    dr_real f = dr_const(0.0);
    for (size_t i = 0; i < n; i++) {
        f = dr_add(t, f, dr_sin(t, x[i]));
        if (i > 0) {
            dr_real p = dr_mul(t, x[i - 1], x[i]);
            f = dr_add(t, f, dr_mul(t, p, p));
        }
        if (i + 2 < n)
            f = dr_add(t, f, dr_mul(t, dr_const(0.5),
                                    dr_exp(t, dr_add(t, x[i], x[i + 2]))));
    }
    return f;
}

static void band_y(dr_tape *t, size_t n, const dr_real *x, dr_real *y)
{
    for (size_t i = 0; i < n; i++) {
        dr_real r = i + 1 < n ? dr_mul(t, x[i + 1], x[i + 1]) : dr_const(1.0);
        r = dr_add(t, r, i > 0 ? dr_sin(t, dr_mul(t, x[i - 1], x[i]))
                               : dr_exp(t, x[0]));
        y[i] = r;
    }
}

/* y_0 = x_0 + ... + x_{n-1} by dr_add, the terms in index order or from
   the last (fsum, rsum) */
static void chain_sum(dr_tape *t, size_t n, const dr_real *x, bool backwards,
                      dr_real *y)
{
    dr_real s = dr_const(0.0);
    for (size_t k = 0; k < n; k++)
        s = dr_add(t, s, x[backwards ? n - 1 - k : k]);
    y[0] = s;
}

/* y_0 = x_0 + ... + x_{n-1}, y_i = x_0 cos x_i: a dense row and column */
static void arrow_y(dr_tape *t, size_t n, const dr_real *x, dr_real *y)
{
    y[0] = dr_sumn(t, n, x);
    for (size_t i = 1; i < n; i++)
        y[i] = dr_mul(t, x[0], dr_cos(t, x[i]));
}

static double run_sparse(size_t n, const char *what, long reps)
{
    bool jac = strstr(what, "jac") != NULL || strstr(what, "plan") != NULL;
    bool sums = what[1] == 's' && what[2] == 'u'; /* fsum-, rsum- */
    size_t m = sums ? 1 : n;                      /* the Jacobian's rows */
    bool dense = !strcmp(what, "hess") || !strcmp(what, "jac");
    bool once = what[strlen(what) - 1] != '1'; /* a plan made once */
    bool plan_only = strstr(what, "plan") != NULL;  /* arrow-plan */
    dr_tape *t = dr_tape_new();
    double *in = malloc(n * sizeof *in);
    dr_real *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *D = dense ? malloc(n * n * sizeof *D) : NULL;
    if (!t || !in || !x || !y || (dense && !D))
        check(DR_ENOMEM, "setup");
    for (size_t i = 0; i < n; i++)
        in[i] = 0.3 + 0.4 * sin((double)i);
    check(dr_tape_set_order(t, 2), "order");
    check(dr_inputs(t, n, in, x), "inputs");
    dr_real f = {0, DR_NONE};
    if (sums)
        chain_sum(t, n, x, what[0] == 'r', y);
    else if (what[0] == 'a')
        arrow_y(t, n, x, y);
    else if (jac)
        band_y(t, n, x, y);
    else
        f = band_f(t, n, x);
    dr_sparse_plan *p = NULL;
    size_t nnz = 0;
    double *val = NULL;
    if (plan_only) {
        for (long r = 0; r < reps; r++) {
            check(dr_sparse_jacobian_plan(t, m, y, n, x, &p), "plan");
            dr_sparse_plan_free(p);
        }
        p = NULL;
        reps = 0;
    }
    if (!dense) {
        check(jac ? dr_sparse_jacobian_plan(t, m, y, n, x, &p)
                  : dr_sparse_hessian_plan(t, f, n, x, &p), "plan");
        dr_sparse_plan_pattern(p, NULL, NULL, &nnz, NULL, NULL);
        val = malloc(nnz * sizeof *val + 1);
        fprintf(stderr, "%s: n = %zu, %zu nodes, %zu nonzeros, %zu colours\n",
                what, n, dr_tape_len(t), nnz, dr_sparse_plan_colors(p));
    }
    double s = 0.0;
    for (long r = 0; r < reps; r++) {
        bench_clobber(in);
        if (dense) {
            check(jac ? dr_jacobian(t, m, y, n, x, D)
                      : dr_hessian(t, f, n, x, D), "dense");
            s = sum(m * n, D);
        } else if (once) {
            check(jac ? dr_sparse_jacobian_eval(t, p, m, y, n, x, val)
                      : dr_sparse_hessian_eval(t, p, f, n, x, val), "eval");
            s = sum(nnz, val);
        } else {
            dr_sparse S;
            check(jac ? dr_sparse_jacobian(t, m, y, n, x, &S)
                      : dr_sparse_hessian(t, f, n, x, &S), "sparse");
            s = sum(S.nnz, S.val);
            dr_sparse_free(&S);
        }
        bench_use(s);
    }
    dr_sparse_plan_free(p);
    free(val);
    free(D);
    free(in);
    free(x);
    free(y);
    dr_tape_free(t);
    return s;
}
#endif

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s <program> <size> <reps>\n", argv[0]);
        return 1;
    }
    const char *prog = argv[1];
    long size = atol(argv[2]), reps = atol(argv[3]);
    double s;
    if (!strcmp(prog, "mult-ops")) {
        s = run_mult(reps);
    } else if (!strcmp(prog, "dot-ops")) {
        s = run_dot(size > 0 ? size : 1000, reps);
#ifndef BENCH_ORDER1_ONLY
    } else if (!strncmp(prog, "nn-", 3)) {
        static double in[NN_N];
        nn_inputs(in);
        s = run_so(nn, NN_N, in, prog + 3, reps);
    } else if (!strncmp(prog, "rot-", 4)) {
        static const double in[7] = {1, 2, 3, 4, 5, 6, 7};
        s = run_so(rot, 7, in, prog + 4, reps);
    } else if (!strncmp(prog, "rosen-", 6)) {
        static const double in[2] = {-1.2, 1.0};
        s = run_so(rosen, 2, in, prog + 6, reps);
    } else if (!strncmp(prog, "quad-", 5)) {
        static double in[QUAD_N];
        for (int i = 0; i < QUAD_N; i++)
            in[i] = 0.01 * i - 0.3;
        s = run_so(quad, QUAD_N, in, prog + 5, reps);
    } else if (!strncmp(prog, "layers-", 7) || !strncmp(prog, "chain-", 6) ||
               !strncmp(prog, "rank1-", 6)) {
        static double in[RANK1_N];
        for (int i = 0; i < RANK1_N; i++)
            in[i] = 0.3 + 0.4 * sin(i + 1.0);
        const char *what = strchr(prog, '-') + 1;
        s = prog[0] == 'l'   ? run_so(layers, LAYERS_N, in, what, reps)
            : prog[0] == 'c' ? run_so(chain, CHAIN_N, in, what, reps)
                             : run_so(rank1, RANK1_N, in, what, reps);
    } else if (!strncmp(prog, "band-", 5)) {
        s = run_sparse(size > 0 ? (size_t)size : 10000, prog + 5, reps);
    } else if (!strncmp(prog, "fsum-", 5) || !strncmp(prog, "rsum-", 5) ||
               !strncmp(prog, "arrow-", 6)) {
        s = run_sparse(size > 0 ? (size_t)size : 10000, prog, reps);
#endif
    } else {
        return 2;
    }
    printf("%.10g\n", s);
    return 0;
}
