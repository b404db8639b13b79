/*
 * test_forward.c - forward (tangent) mode and vector mode: every scalar
 * operation's tangent against central finite differences and against the
 * reverse sweep; the transpose identity <ybar, J xdot> = <J^T ybar, xdot>
 * on random programs (with n-ary nodes, inputs made by dr_inputs, and a
 * job graph from fork-join); k-wide sweeps against k single ones; the
 * Jacobian by forward blocks against the Jacobian by reverse rows; tapes
 * with array nodes (no forward rule: DR_ENOTSUP or the reverse fallback);
 * every error path.  `make test-far` runs all of it with far nodes.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* forward and reverse compute the same products in other orders */
#define RTOL 1e-12

/* ------------------------------------------------------- scalar ops */

typedef dr_real (*un_op)(dr_tape *, dr_real);
typedef dr_real (*bin_op)(dr_tape *, dr_real, dr_real);

static dr_real op_powi3(dr_tape *t, dr_real a) { return dr_powi(t, a, 3); }

static const struct {
    const char *name;
    un_op op;
    double x;
} unops[] = {
    {"neg", dr_neg, 0.37},     {"sqrt", dr_sqrt, 0.37},
    {"cbrt", dr_cbrt, 0.37},   {"exp", dr_exp, 0.37},
    {"expm1", dr_expm1, 0.37}, {"log", dr_log, 0.37},
    {"log1p", dr_log1p, 0.37}, {"sin", dr_sin, 0.37},
    {"cos", dr_cos, 0.37},     {"tan", dr_tan, 0.37},
    {"asin", dr_asin, 0.37},   {"acos", dr_acos, 0.37},
    {"atan", dr_atan, 0.37},   {"sinh", dr_sinh, 0.37},
    {"cosh", dr_cosh, 0.37},   {"tanh", dr_tanh, 0.37},
    {"asinh", dr_asinh, 0.37}, {"acosh", dr_acosh, 1.7},
    {"atanh", dr_atanh, 0.37}, {"abs", dr_abs, -0.37},
    {"erf", dr_erf, 0.37},     {"sigmoid", dr_sigmoid, 0.37},
    {"relu", dr_relu, 0.37},   {"softplus", dr_softplus, 0.37},
    {"powi3", op_powi3, 0.37},
};

static const struct {
    const char *name;
    bin_op op;
    double a, b;
} binops[] = {
    {"add", dr_add, 0.3, 1.7},     {"sub", dr_sub, 0.3, 1.7},
    {"mul", dr_mul, 0.3, 1.7},     {"div", dr_div, 0.3, 1.7},
    {"atan2", dr_atan2, 0.3, 1.7}, {"pow", dr_pow, 1.3, 1.7},
    {"min", dr_min, 0.3, 1.7},     {"max", dr_max, 0.3, 1.7},
    {"hypot", dr_hypot, 0.3, 1.7}, {"logbase", dr_logbase, 2.5, 1.7},
};

/* the value of an op on constants (no tape records nothing) */
static double un_val(double x, void *ctx)
{
    return ((un_op)ctx)(NULL, dr_const(x)).val;
}
static double bin_val(double a, double b, void *ctx)
{
    return ((bin_op)ctx)(NULL, dr_const(a), dr_const(b)).val;
}

/* the tangent of y in direction xdot over x[0..n-1] by dr_jvp */
static double jvp1(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                   const double *xdot)
{
    double yd = NAN;
    CHK_STATUS(dr_jvp(t, 1, &y, n, x, xdot, &yd), DR_OK);
    return yd;
}

static void test_unary_tangents(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof unops / sizeof *unops; i++) {
        chk_context("%s", unops[i].name);
        dr_tape *t = chk_tape_new();
        dr_real x = dr_input(t, unops[i].x);
        dr_real y = unops[i].op(t, x);
        double one = 1.0, g = NAN;
        double yd = jvp1(t, y, 1, &x, &one);
        CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
        CHK_REL(yd, g, RTOL);
        chk_deriv fd = chk_fd1(un_val, (void *)unops[i].op, unops[i].x, 0.0);
        CHK_DERIV(yd, fd, 1e-8);
        /* a tangent scales */
        double two = -2.0;
        CHK_REL(jvp1(t, y, 1, &x, &two), -2.0 * g, RTOL);
        dr_tape_free(t);
    }
}

static void test_binary_tangents(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof binops / sizeof *binops; i++) {
        chk_context("%s", binops[i].name);
        dr_tape *t = chk_tape_new();
        dr_real x[2] = {dr_input(t, binops[i].a), dr_input(t, binops[i].b)};
        dr_real y = binops[i].op(t, x[0], x[1]);
        double g[2];
        CHK_STATUS(dr_gradient(t, y, 2, x, g), DR_OK);
        chk_deriv fa, fb;
        chk_fd2(bin_val, (void *)binops[i].op, binops[i].a, binops[i].b, 0.0,
                0.0, &fa, &fb);
        double e0[2] = {1, 0}, e1[2] = {0, 1}, mix[2] = {0.5, -1.5};
        CHK_REL(jvp1(t, y, 2, x, e0), g[0], RTOL);
        CHK_REL(jvp1(t, y, 2, x, e1), g[1], RTOL);
        CHK_DERIV(jvp1(t, y, 2, x, e0), fa, 1e-8);
        CHK_DERIV(jvp1(t, y, 2, x, e1), fb, 1e-8);
        CHK_REL(jvp1(t, y, 2, x, mix), 0.5 * g[0] - 1.5 * g[1], RTOL);
        /* the same variable in both positions */
        dr_real z = binops[i].op(t, x[1], x[1]);
        double gz;
        CHK_STATUS(dr_gradient(t, z, 1, &x[1], &gz), DR_OK);
        CHK_REL(jvp1(t, z, 2, x, e1), gz, RTOL);
        dr_tape_free(t);
    }
}

/* --------------------------------------------------- random programs */

#define NX 6
#define NY 10
#define NODES 400

/*
 * A random program over NX inputs (half of them by dr_inputs, whose nodes
 * the sweeps do not visit): NODES operations over random earlier values,
 * n-ary nodes among them (some with a constant argument), and NY outputs
 * taken from the last values.
 */
static void random_program(dr_tape *t, chk_rng *r, dr_real *x, dr_real *y)
{
    static dr_real v[NX + NODES];
    double in[NX / 2];
    for (size_t i = 0; i < NX / 2; i++)
        in[i] = chk_rng_uniform(r, 0.5, 1.5);
    CHK_STATUS(dr_inputs(t, NX / 2, in, x), DR_OK);
    for (size_t i = NX / 2; i < NX; i++)
        x[i] = dr_input(t, chk_rng_uniform(r, 0.5, 1.5));
    size_t nv = 0;
    for (size_t i = 0; i < NX; i++)
        v[nv++] = x[i];
    for (size_t i = 0; i < NODES; i++) {
        dr_real a = v[chk_rng_below(r, nv)], b = v[chk_rng_below(r, nv)];
        dr_real c;
        switch (chk_rng_below(r, 7)) {
        case 0: c = dr_add(t, a, b); break;
        case 1: c = dr_mul(t, a, dr_const(0.9)); c = dr_mul(t, c, b); break;
        case 2: c = dr_sin(t, a); break;
        case 3: c = dr_tanh(t, dr_sub(t, a, b)); break;
        case 4: c = dr_div(t, a, dr_add(t, dr_mul(t, b, b), dr_const(1))); break;
        case 5: c = dr_exp(t, dr_mul(t, dr_const(0.1), a)); break;
        default: {
            dr_idx args[4] = {a.idx, b.idx, v[chk_rng_below(r, nv)].idx,
                              chk_rng_below(r, 2) ? DR_NONE : a.idx};
            double p[4] = {0.3, -0.7, 0.2, 1.1};
            c.val = 0.3 * a.val - 0.7 * b.val;
            c.idx = dr_recordn(t, 4, args, p);
        }
        }
        v[nv++] = c;
    }
    for (size_t i = 0; i < NY; i++)
        y[i] = v[nv - 1 - 3 * i];
    CHK_STATUS(dr_tape_status(t), DR_OK);
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* J by reverse rows (dr_vjp on unit vectors) */
static void jac_rows(dr_tape *t, size_t m, const dr_real *y, size_t n,
                     const dr_real *x, double *J)
{
    double e[NY];
    for (size_t i = 0; i < m; i++) {
        memset(e, 0, sizeof e);
        e[i] = 1.0;
        CHK_STATUS(dr_vjp(t, m, y, e, n, x, J + i * n), DR_OK);
    }
}

static void check_program(dr_tape *t, chk_rng *r, const dr_real *x,
                          const dr_real *y)
{
    double xdot[NX], ybar[NY], ydot[NY], xbar[NX];
    for (size_t i = 0; i < NX; i++)
        xdot[i] = chk_rng_uniform(r, -1, 1);
    for (size_t i = 0; i < NY; i++)
        ybar[i] = chk_rng_uniform(r, -1, 1);
    CHK_STATUS(dr_jvp(t, NY, y, NX, x, xdot, ydot), DR_OK);
    CHK_STATUS(dr_vjp(t, NY, y, ybar, NX, x, xbar), DR_OK);
    double lhs = dot(ybar, ydot, NY), rhs = dot(xbar, xdot, NX);
    CHK_CLOSE(lhs, rhs, 1e-11, 1e-12);

    /* the Jacobian: tall (forward blocks), wide (reverse blocks), against
       reverse rows */
    double J[NY * NX], R[NY * NX], JT[NX * NY];
    jac_rows(t, NY, y, NX, x, R);
    CHK_STATUS(dr_jacobian(t, NY, y, NX, x, J), DR_OK);
    for (size_t i = 0; i < NY * NX; i++)
        CHK_CLOSE(J[i], R[i], RTOL, 1e-14);
    /* x and y swapped: J^T of the map y -> x is zero but exercises the
       reverse blocks; the map of the inputs to the first 3 outputs is wide
       when taken over all inputs twice */
    dr_real x2[2 * NX];
    for (size_t i = 0; i < 2 * NX; i++)
        x2[i] = x[i % NX];
    double W[3 * 2 * NX];
    CHK_STATUS(dr_jacobian(t, 3, y, 2 * NX, x2, W), DR_OK);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 2 * NX; j++)
            CHK_CLOSE(W[i * 2 * NX + j], R[i * NX + j % NX], RTOL, 1e-14);
    CHK_STATUS(dr_jacobian(t, NX, x, NY, y, JT), DR_OK);
    for (size_t i = 0; i < NX * NY; i++)
        CHK_SAME(JT[i], 0.0);
}

static void test_transpose_identity(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 42);
    for (int rep = 0; rep < 5; rep++) {
        chk_context("rep %d", rep);
        dr_tape *t = chk_tape_new();
        dr_real x[NX], y[NY];
        random_program(t, &r, x, y);
        check_program(t, &r, x, y);
        dr_tape_free(t);
    }
}

/* k-wide sweeps equal k single ones */
static void test_vector_mode(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 7);
    dr_tape *t = chk_tape_new();
    dr_real x[NX], y[NY];
    random_program(t, &r, x, y);
    /* every width dr__reverse_vec unrolls, odd ones (kept in an even width
       with a zero column) and ones past the Jacobian's blocks */
    static const size_t ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17};
    for (size_t q = 0; q < sizeof ks / sizeof *ks; q++) {
        size_t k = ks[q];
        chk_context("k %zu", k);
        double Xdot[NX * 17], Ydot[NY * 17], Ybar[17 * NY], Xbar[17 * NX];
        for (size_t i = 0; i < NX * k; i++)
            Xdot[i] = chk_rng_uniform(&r, -1, 1);
        for (size_t i = 0; i < NY * k; i++)
            Ybar[i] = chk_rng_uniform(&r, -1, 1);
        CHK_STATUS(dr_jvp_vec(t, NY, y, NX, x, k, Xdot, Ydot), DR_OK);
        CHK_STATUS(dr_vjp_vec(t, NY, y, k, Ybar, NX, x, Xbar), DR_OK);
        for (size_t j = 0; j < k; j++) {
            double xd[NX], yd[NY], xb[NX];
            for (size_t i = 0; i < NX; i++)
                xd[i] = Xdot[i * k + j];
            CHK_STATUS(dr_jvp(t, NY, y, NX, x, xd, yd), DR_OK);
            for (size_t i = 0; i < NY; i++)
                CHK_CLOSE(Ydot[i * k + j], yd[i], RTOL, 1e-14);
            CHK_STATUS(dr_vjp(t, NY, y, Ybar + j * NY, NX, x, xb), DR_OK);
            for (size_t i = 0; i < NX; i++)
                CHK_CLOSE(Xbar[j * NX + i], xb[i], RTOL, 1e-14);
        }
    }
    /* the tape's own tangents and adjoints are not those of vector mode */
    double one[NX] = {1, 0, 0, 0, 0, 0}, yd[NY], xb[NX];
    CHK_STATUS(dr_jvp(t, NY, y, NX, x, one, yd), DR_OK);
    CHK_STATUS(dr_vjp(t, NY, y, (double[NY]){1}, NX, x, xb), DR_OK);
    double Xd[NX * 4] = {0}, Yd[NY * 4], Yb[4 * NY] = {0}, Xb[4 * NX];
    CHK_STATUS(dr_jvp_vec(t, NY, y, NX, x, 4, Xd, Yd), DR_OK);
    CHK_STATUS(dr_vjp_vec(t, NY, y, 4, Yb, NX, x, Xb), DR_OK);
    CHK_SAME(dr_tangent(t, y[0].idx), yd[0]);
    CHK_SAME(dr_adjoint(t, x[0].idx), xb[0]);
    dr_tape_free(t);
}

/* k-wide reverse sweeps: a direction whose adjoint at a node is zero adds
   nothing there, so an infinite partial of a node that direction never
   reaches makes no NaN in it; the directions that do reach it get what the
   one-direction sweep gets (inf, NaN), for every lane width */
static void test_vector_nonfinite(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.0, 0.5}, x), DR_OK);
    /* y3: an n-ary node with an infinite partial (of x0) */
    dr_real y[4] = {dr_add(t, dr_sqrt(t, x[0]), x[1]),
                    dr_mul(t, x[1], dr_const(2.0)),
                    dr_mul(t, dr_sqrt(t, x[0]), dr_sin(t, x[1])),
                    {0.0, DR_NONE}};
    y[3].idx = dr_recordn(t, 3, (dr_idx[]){x[0].idx, x[1].idx, y[1].idx},
                          (double[]){INFINITY, 1.0, 2.0});
    for (size_t k = 1; k <= 5; k++) {
        chk_context("k %zu", k);
        double Ybar[5 * 4], Xbar[5 * 2], xb[2];
        for (size_t j = 0; j < k; j++)
            for (size_t i = 0; i < 4; i++)
                Ybar[j * 4 + i] = i == j % 4 ? 1.0 : 0.0;
        CHK_STATUS(dr_vjp_vec(t, 4, y, k, Ybar, 2, x, Xbar), DR_OK);
        for (size_t j = 0; j < k; j++) {
            CHK_STATUS(dr_vjp(t, 4, y, Ybar + j * 4, 2, x, xb), DR_OK);
            CHK_SAME(Xbar[j * 2], xb[0]);
            CHK_SAME(Xbar[j * 2 + 1], xb[1]);
        }
    }
    /* the reference itself: y0 reaches sqrt (inf), y1 does not (0), y3
       reaches x0 through its infinite partial */
    double xb[2];
    CHK_STATUS(dr_vjp(t, 4, y, (double[]){0, 1, 0, 0}, 2, x, xb), DR_OK);
    CHK_SAME(xb[0], 0.0);
    CHK_STATUS(dr_vjp(t, 4, y, (double[]){1, 0, 0, 0}, 2, x, xb), DR_OK);
    assert_true(isinf(xb[0]));
    CHK_STATUS(dr_vjp(t, 4, y, (double[]){0, 0, 0, 1}, 2, x, xb), DR_OK);
    assert_true(isinf(xb[0]));
    CHK_SAME(xb[1], 1.0 + 2.0 * 2.0);
    dr_tape_free(t);
}

/* k-wide forward sweeps: a zero partial adds nothing though its
   argument's tangent is infinite, and an infinite partial adds nothing
   where its argument's tangent is zero, in two-argument and n-ary nodes
   and for every lane width (the loop of finite partials reads the zero
   slots for a zero partial); each direction is the one-direction sweep's
   to the bit */
static void test_vector_forward_nonfinite(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, (double[]){0.0, 0.5}, x), DR_OK);
    dr_real s = dr_sqrt(t, x[0]);      /* partial inf: tangent inf along x0 */
    dr_real w = dr_sub(t, x[1], x[1]); /* 0, and so its tangents */
    dr_real y[4] = {dr_add(t, s, x[1]),
                    dr_mul(t, s, w), /* partials 0 and 0 */
                    {0.0, DR_NONE},
                    {0.0, DR_NONE}};
    y[2].idx = dr_recordn(t, 3, (dr_idx[]){s.idx, x[1].idx, x[0].idx},
                          (double[]){0.0, 2.0, 1.0});
    y[3].idx = dr_recordn(t, 3, (dr_idx[]){x[1].idx, x[0].idx, s.idx},
                          (double[]){INFINITY, 1.0, 0.0});
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* the reference: along x0, then along x1 */
    const double want[2][4] = {{INFINITY, 0.0, 1.0, 1.0},
                               {1.0, 0.0, 2.0, INFINITY}};
    for (int d = 0; d < 2; d++) {
        double yd[4];
        CHK_STATUS(dr_jvp(t, 4, y, 2, x, (double[]){d == 0, d == 1}, yd), DR_OK);
        for (int i = 0; i < 4; i++)
            CHK_SAME(yd[i], want[d][i]);
    }
    static const size_t ks[] = {1, 2, 3, 4, 5, 6, 8, 10, 16};
    for (size_t q = 0; q < sizeof ks / sizeof *ks; q++) {
        size_t k = ks[q];
        chk_context("k %zu", k);
        double Xdot[2 * 16], Ydot[4 * 16];
        for (size_t j = 0; j < k; j++) {
            Xdot[0 * k + j] = j % 2 == 0;
            Xdot[1 * k + j] = j % 2 == 1;
        }
        CHK_STATUS(dr_jvp_vec(t, 4, y, 2, x, k, Xdot, Ydot), DR_OK);
        for (size_t j = 0; j < k; j++)
            for (int i = 0; i < 4; i++)
                CHK_SAME(Ydot[i * k + j], want[j % 2][i]);
    }
    dr_tape_free(t);
}

/* Products with no outputs or no inputs (NULL arrays allowed there) on a
   plain tape, one with an array node and one that forked (the row-by-row
   reverse path): zeros or nothing written, and no sweep per direction, so
   a count of directions nothing could hold returns at once. */
static void test_vector_empty(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        chk_context("tape kind %d", kind);
        dr_tape *t = chk_tape_new();
        dr_real x[2];
        CHK_STATUS(dr_inputs(t, 2, (double[]){0.3, -0.8}, x), DR_OK);
        dr_real y = dr_mul(t, x[0], dr_sin(t, x[1]));
        if (kind == 1) {
            dr_arr a = dr_arr_from_reals(t, 2, x);
            y = dr_add(t, y, dr_arr_sum(t, a));
        } else if (kind == 2) {
            dr_tape *kids[1];
            CHK_STATUS(dr_fork(t, 1, kids), DR_OK);
            dr_real c = dr_exp(kids[0], x[0]);
            CHK_STATUS(dr_join(t), DR_OK);
            y = dr_add(t, y, c);
        }
        double Xbar[6] = {7, 7, 7, 7, 7, 7}, Ydot[3] = {7, 7, 7};
        const size_t huge = (size_t)1 << 40;
        CHK_STATUS(dr_vjp_vec(t, 0, NULL, 3, NULL, 2, x, Xbar), DR_OK);
        for (int i = 0; i < 6; i++)
            CHK_SAME(Xbar[i], 0.0);
        CHK_STATUS(dr_vjp_vec(t, 1, &y, 3, (double[3]){1, 2, 3}, 0, NULL, NULL),
                   DR_OK);
        CHK_STATUS(dr_vjp_vec(t, 0, NULL, huge, NULL, 0, NULL, NULL), DR_OK);
        if (kind != 1) { /* (arrays have no forward rule yet everywhere) */
            CHK_STATUS(dr_jvp_vec(t, 0, NULL, 2, x, 3, (double[6]){0}, NULL),
                       DR_OK);
            CHK_STATUS(dr_jvp_vec(t, 0, NULL, 0, NULL, huge, NULL, NULL), DR_OK);
            CHK_STATUS(dr_jvp_vec(t, 1, &y, 0, NULL, 3, NULL, Ydot), DR_OK);
            for (int i = 0; i < 3; i++)
                CHK_SAME(Ydot[i], 0.0);
        }
        /* the tape still answers a real product */
        double g[2];
        CHK_STATUS(dr_vjp_vec(t, 1, &y, 1, (double[1]){1}, 2, x, g), DR_OK);
        CHK_CLOSE(g[1], x[0].val * cos(x[1].val) + (kind == 1), 1e-15, 0);
        dr_tape_free(t);
    }
}

/* a job graph: the forward sweep must take parents' nodes first */
static void fork_child(dr_tape *c, dr_real base, dr_real *out, size_t i)
{
    dr_real v = base;
    for (int j = 0; j < 50; j++)
        v = dr_add(c, dr_sin(c, v), dr_mul(c, base, dr_const(0.01 * (double)i)));
    *out = v;
}

static void test_forked_tape(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        chk_context("threads %u", threads);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real x[3] = {dr_input(t, 0.3), dr_input(t, 0.6), dr_input(t, 0.9)};
        dr_real a = dr_mul(t, x[0], x[1]);
        dr_real y[6];
        for (int round = 0; round < 2; round++) {
            dr_tape *kids[3];
            CHK_STATUS(dr_fork(t, 3, kids), DR_OK);
            for (size_t i = 0; i < 3; i++)
                fork_child(kids[i], round ? y[i] : dr_add(kids[i], a, x[i]),
                           &y[round * 3 + i], i);
            /* a child handle is refused */
            CHK_STATUS(dr_forward(kids[0]), DR_EINVAL);
            CHK_STATUS(dr_tangent_seed(kids[0], x[0].idx, 1), DR_EINVAL);
            CHK_STATUS(dr_tangents_clear(kids[0]), DR_EINVAL);
            CHK_STATUS(dr_jvp(kids[0], 0, NULL, 0, NULL, NULL, NULL), DR_EINVAL);
            /* the forked root is busy */
            CHK_STATUS(dr_forward(t), DR_EBUSY);
            CHK_STATUS(dr_jvp_vec(t, 0, NULL, 0, NULL, 1, NULL, NULL), DR_EBUSY);
            CHK_STATUS(dr_join(t), DR_OK);
        }
        dr_real z = dr_mul(t, y[3], y[5]);
        dr_real out[7] = {y[0], y[1], y[2], y[3], y[4], y[5], z};
        double J[7 * 3], R[7 * 3];
        CHK_STATUS(dr_jacobian(t, 7, out, 3, x, J), DR_OK); /* forward */
        for (size_t i = 0; i < 7; i++)
            CHK_STATUS(dr_gradient(t, out[i], 3, x, R + i * 3), DR_OK);
        for (size_t i = 0; i < 21; i++)
            CHK_CLOSE(J[i], R[i], RTOL, 1e-14);
        /* vector mode reverse on a forked tape: one direction at a time */
        double Yb[2 * 7] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, Xb[2 * 3];
        CHK_STATUS(dr_vjp_vec(t, 7, out, 2, Yb, 3, x, Xb), DR_OK);
        for (size_t j = 0; j < 3; j++) {
            CHK_CLOSE(Xb[j], R[j], RTOL, 1e-14);
            CHK_CLOSE(Xb[3 + j], R[6 * 3 + j], RTOL, 1e-14);
        }
        dr_tape_free(t);
    }
}

/* ------------------------------------------------------ dr_forward itself */

static void test_forward_api(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    /* an empty tape */
    CHK_STATUS(dr_forward(t), DR_OK);
    CHK_SAME(dr_tangent(t, DR_NONE), 0.0);
    dr_real x = dr_input(t, 2.0), w = dr_input(t, 3.0);
    dr_real u = dr_mul(t, x, w);          /* 6 */
    dr_real y = dr_add(t, u, dr_sin(t, x));
    CHK_STATUS(dr_tangent_seed(t, x.idx, 1.0), DR_OK);
    CHK_STATUS(dr_tangent_seed(t, DR_NONE, 5.0), DR_OK);
    CHK_STATUS(dr_forward(t), DR_OK);
    CHK_SAME(dr_tangent(t, x.idx), 1.0);
    CHK_SAME(dr_tangent(t, w.idx), 0.0);
    CHK_SAME(dr_tangent(t, u.idx), 3.0);
    CHK_REL(dr_tangent(t, y.idx), 3.0 + cos(2.0), RTOL);
    /* seeds add; a seed on an intermediate node perturbs it (as a seed of
       the reverse sweep does), so tangents match reverse adjoints */
    CHK_STATUS(dr_tangents_clear(t), DR_OK);
    CHK_SAME(dr_tangent(t, u.idx), 0.0);
    CHK_STATUS(dr_tangent_seed(t, u.idx, 0.5), DR_OK);
    CHK_STATUS(dr_tangent_seed(t, u.idx, 0.5), DR_OK);
    CHK_STATUS(dr_forward(t), DR_OK);
    CHK_SAME(dr_tangent(t, y.idx), 1.0);
    /* an infinite partial of an unperturbed argument makes no NaN */
    dr_real zero = dr_input(t, 0.0);
    dr_real s = dr_add(t, dr_sqrt(t, zero), w);
    double g;
    CHK_STATUS(dr_gradient(t, s, 1, &w, &g), DR_OK);
    CHK_SAME(jvp1(t, s, 1, &w, (double[]){1.0}), g);
    dr_tape_free(t);
}

/* ------------------------------------------ arrays beside scalars */

static void test_arrays_mixed(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double d[3] = {1, 2, 3};
    dr_arr v = dr_arr_input(t, 1, 3, 1, d);
    dr_real x = dr_input(t, 0.5);
    dr_real s = dr_mul(t, dr_arr_dot(t, v, v), x);   /* 14 x */
    dr_real s2 = dr_sin(t, x);
    dr_real s3 = dr_mul(t, x, x);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_tangent_seed(t, x.idx, 1.0), DR_OK);
    /* array nodes have forward rules: the sweep goes through them */
    CHK_STATUS(dr_forward(t), DR_OK);
    CHK_REL(dr_tangent(t, s.idx), 14.0, RTOL);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    double xd = 1, yd = 42;
    CHK_STATUS(dr_jvp(t, 1, &s, 1, &x, &xd, &yd), DR_OK);
    CHK_REL(yd, 14.0, RTOL);
    double Yd[2] = {42, 42};
    CHK_STATUS(dr_jvp_vec(t, 1, &s, 1, &x, 2, (double[]){1, 1}, Yd), DR_OK);
    CHK_REL(Yd[0], 14.0, RTOL);
    CHK_REL(Yd[1], 14.0, RTOL);
    /* the Jacobian and vjp_vec through array nodes */
    dr_real ys[3] = {s, s2, s3};
    double J[3];
    CHK_STATUS(dr_jacobian(t, 3, ys, 1, &x, J), DR_OK);
    CHK_REL(J[0], 14.0, RTOL);
    CHK_REL(J[1], cos(0.5), RTOL);
    CHK_REL(J[2], 1.0, RTOL);
    double Yb[2 * 3] = {1, 0, 0, 0, 1, 1}, Xb[2];
    CHK_STATUS(dr_vjp_vec(t, 3, ys, 2, Yb, 1, &x, Xb), DR_OK);
    CHK_REL(Xb[0], 14.0, RTOL);
    CHK_REL(Xb[1], cos(0.5) + 1.0, RTOL);
    /* the tape is usable: gradients as before */
    double g;
    CHK_STATUS(dr_gradient(t, s, 1, &x, &g), DR_OK);
    CHK_REL(g, 14.0, RTOL);
    dr_tape_free(t);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0);
    dr_real y = dr_sin(t, x);
    dr_real bad = {0.0, y.idx + 1000};
    double v = 1, out = 42, V[2] = {1, 1}, O[2] = {42, 42};

    /* NULL */
    CHK_STATUS(dr_tangent_seed(NULL, x.idx, 1), DR_EINVAL);
    CHK_STATUS(dr_forward(NULL), DR_EINVAL);
    CHK_STATUS(dr_tangents_clear(NULL), DR_EINVAL);
    assert_true(isnan(dr_tangent(NULL, x.idx)));
    CHK_STATUS(dr_jvp(NULL, 1, &y, 1, &x, &v, &out), DR_EINVAL);
    CHK_STATUS(dr_vjp(NULL, 1, &y, &v, 1, &x, &out), DR_EINVAL);
    CHK_STATUS(dr_jvp_vec(NULL, 1, &y, 1, &x, 2, V, O), DR_EINVAL);
    CHK_STATUS(dr_vjp_vec(NULL, 1, &y, 2, V, 1, &x, O), DR_EINVAL);
    CHK_STATUS(dr_jvp(t, 1, NULL, 1, &x, &v, &out), DR_EINVAL);
    CHK_STATUS(dr_jvp(t, 1, &y, 1, &x, NULL, &out), DR_EINVAL);
    CHK_STATUS(dr_jvp(t, 1, &y, 1, &x, &v, NULL), DR_EINVAL);
    CHK_STATUS(dr_vjp(t, 1, &y, NULL, 1, &x, &out), DR_EINVAL);
    CHK_STATUS(dr_vjp(t, 1, &y, &v, 1, &x, NULL), DR_EINVAL);
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 1, &x, 2, NULL, O), DR_EINVAL);
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 1, &x, 2, V, NULL), DR_EINVAL);
    CHK_STATUS(dr_vjp_vec(t, 1, &y, 2, NULL, 1, &x, O), DR_EINVAL);
    CHK_STATUS(dr_vjp_vec(t, 1, &y, 2, V, 1, NULL, O), DR_EINVAL);
    /* k * n overflows */
    dr_real xx[2] = {x, x};
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 2, xx, SIZE_MAX, V, O), DR_EINVAL);
    CHK_STATUS(dr_vjp_vec(t, 1, &y, SIZE_MAX, V, 2, xx, O), DR_EINVAL);
    /* k * ids beyond memory */
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 1, &x, SIZE_MAX, V, O), DR_ENOMEM);
    /* k == 0 and empty products are fine */
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 1, &x, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_vjp_vec(t, 1, &y, 0, NULL, 1, &x, NULL), DR_OK);
    CHK_STATUS(dr_jvp(t, 0, NULL, 0, NULL, NULL, NULL), DR_OK);

    /* bad ids change nothing */
    CHK_STATUS(dr_tangent_seed(t, x.idx, 1), DR_OK);
    CHK_STATUS(dr_forward(t), DR_OK);
    double ty = dr_tangent(t, y.idx);
    CHK_STATUS(dr_tangent_seed(t, bad.idx, 1), DR_EINVAL);
    assert_true(isnan(dr_tangent(t, bad.idx)));
    CHK_STATUS(dr_jvp(t, 1, &bad, 1, &x, &v, &out), DR_EINVAL);
    CHK_STATUS(dr_jvp(t, 1, &y, 1, &bad, &v, &out), DR_EINVAL);
    CHK_STATUS(dr_vjp(t, 1, &bad, &v, 1, &x, &out), DR_EINVAL);
    CHK_STATUS(dr_jvp_vec(t, 1, &y, 1, &bad, 2, V, O), DR_EINVAL);
    CHK_STATUS(dr_vjp_vec(t, 1, &y, 2, V, 1, &bad, O), DR_EINVAL);
    dr_real ys[2] = {y, bad};
    double J[2];
    CHK_STATUS(dr_jacobian(t, 2, ys, 1, &x, J), DR_EINVAL);
    CHK_SAME(out, 42.0);
    CHK_SAME(O[0], 42.0);
    CHK_SAME(dr_tangent(t, y.idx), ty);
    CHK_SAME(dr_tangent(t, x.idx), 1.0);
    dr_idx ids[2] = {(dr_idx)INT64_MIN, (dr_idx)INT64_MAX};
    for (int i = 0; i < 2; i++)
        CHK_STATUS(dr_tangent_seed(t, ids[i], 1), DR_EINVAL);

    /* the sticky status: refused, nothing swept */
    dr_sin(t, bad);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_forward(t), DR_EINVAL);
    CHK_STATUS(dr_jvp(t, 1, &y, 1, &x, &v, &out), DR_EINVAL);
    CHK_STATUS(dr_vjp_vec(t, 1, &y, 2, V, 1, &x, O), DR_EINVAL);
    CHK_SAME(out, 42.0);
    CHK_SAME(dr_tangent(t, y.idx), ty);
    dr_tape_free(t);
}

/* out of memory anywhere in forward and vector mode: a status, no leak */
static void test_oom(void **state)
{
    (void)state;
    chk_alloc a;
    for (size_t k = 1; k < 200; k++) {
        dr_tape *t = chk_oom_tape(&a, k);
        if (!t)
            continue;
        dr_real x[2] = {dr_input(t, 0.5), dr_input(t, 1.5)};
        dr_real y[3] = {dr_sin(t, x[0]), dr_mul(t, x[0], x[1]),
                        dr_exp(t, x[1])};
        double J[6], V[2 * 2] = {1, 0, 0, 1}, O[3 * 2];
        dr_status st = dr_jacobian(t, 3, y, 2, x, J);
        assert_true(st == DR_OK || st == DR_ENOMEM);
        st = dr_jvp_vec(t, 3, y, 2, x, 2, V, O);
        assert_true(st == DR_OK || st == DR_ENOMEM);
        st = dr_jvp(t, 3, y, 2, x, V, O);
        assert_true(st == DR_OK || st == DR_ENOMEM);
        /* the Gauss-Newton product: out untouched on failure */
        double g[2] = {7.0, 7.0};
        st = dr_gnvp(t, 3, y, 2, x, V, g);
        assert_true(st == DR_OK || st == DR_ENOMEM);
        if (st != DR_OK) {
            CHK_SAME(g[0], 7.0);
            CHK_SAME(g[1], 7.0);
        }
        dr_tape_free(t);
        chk_alloc_uninstall();
        assert_int_equal(a.live, 0);
    }
}

/* ------------------------------------------------------ Gauss-Newton */

/* residuals r(x) of 3 inputs, 5 outputs, through scalar and array
   operations (W x by a matvec of a vector built from the inputs) */
static void residuals(dr_tape *t, const dr_real *x, dr_real *r)
{
    static const double W[15] = {0.5, -1.0, 0.3, 0.2, 0.7, -0.4, 1.1, 0.0,
                                 0.6, -0.8, 0.9, 0.25, 0.1, 0.3, -0.5};
    dr_arr v = dr_arr_from_reals(t, 3, x);
    dr_arr wv = dr_arr_map(t, DR_FN_TANH,
                           dr_arr_matvec(t, dr_arr_const(t, 2, 5, 3, W), v));
    for (int i = 0; i < 5; i++)
        r[i] = dr_add(t, dr_arr_index(t, wv, i),
                      dr_mul(t, x[i % 3], dr_sin(t, x[(i + 1) % 3])));
}

static void test_gnvp(void **state)
{
    (void)state;
    const double xv[3] = {0.3, -0.7, 1.2}, v[3] = {1.0, 0.5, -2.0};
    dr_tape *t = chk_tape_new();
    dr_real x[3], r[5];
    for (int i = 0; i < 3; i++)
        x[i] = dr_input(t, xv[i]);
    residuals(t, x, r);
    double J[15], out[3];
    CHK_STATUS(dr_jacobian(t, 5, r, 3, x, J), DR_OK);
    CHK_STATUS(dr_gnvp(t, 5, r, 3, x, v, out), DR_OK);
    /* J^T (J v) from the Jacobian */
    for (int j = 0; j < 3; j++) {
        double e = 0.0;
        for (int i = 0; i < 5; i++) {
            double jv = 0.0;
            for (int k = 0; k < 3; k++)
                jv += J[i * 3 + k] * v[k];
            e += J[i * 3 + j] * jv;
        }
        CHK_CLOSE(out[j], e, 1e-14, 1e-15);
    }
    /* positive semidefinite: <v, J^T J v> = |J v|^2 >= 0 */
    assert_true(v[0] * out[0] + v[1] * out[1] + v[2] * out[2] >= 0.0);
    /* errors: out unchanged */
    double keep[3] = {7, 7, 7};
    CHK_STATUS(dr_gnvp(t, 5, r, 3, x, NULL, keep), DR_EINVAL);
    CHK_STATUS(dr_gnvp(t, 5, r, 3, x, v, NULL), DR_EINVAL);
    CHK_STATUS(dr_gnvp(NULL, 5, r, 3, x, v, keep), DR_EINVAL);
    dr_tape *u = chk_tape_new();
    dr_real other = dr_input(u, 1.0);
    CHK_STATUS(dr_gnvp(t, 1, &other, 3, x, v, keep), DR_EINVAL);
    CHK_SAME(keep[0], 7.0);
    dr_tape_free(u);
    /* no outputs: zero */
    CHK_STATUS(dr_gnvp(t, 0, NULL, 3, x, v, out), DR_OK);
    CHK_SAME(out[1], 0.0);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_tangents),
        cmocka_unit_test(test_binary_tangents),
        cmocka_unit_test(test_transpose_identity),
        cmocka_unit_test(test_vector_mode),
        cmocka_unit_test(test_vector_nonfinite),
        cmocka_unit_test(test_vector_forward_nonfinite),
        cmocka_unit_test(test_vector_empty),
        cmocka_unit_test(test_forked_tape),
        cmocka_unit_test(test_forward_api),
        cmocka_unit_test(test_arrays_mixed),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_gnvp),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
