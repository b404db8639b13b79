/*
 * linear_solve.c - a LAPACK linear solve x = A^-1 b as one node of the tape
 * (dr_record_external), inside a program that is differentiated as usual.
 *
 * The solve is done once, with an LU factorisation (dgetrf) that the node
 * keeps for its rules:
 *   reverse:  bbar = A^-T xbar,  Abar = -bbar x^T   (one more solve)
 *   forward:  xdot = A^-1 (bdot - Adot x)
 * instead of recording the O(n^3) operations of the factorisation.  The
 * gradient of a loss of x with respect to A and b is checked against
 * central finite differences; the exit status says whether it agreed.
 */
#include <dualrev.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK (OpenBLAS exports it) */
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
             const int *lda, const int *ipiv, double *b, const int *ldb,
             int *info);

#define N 4

/* what the node keeps: the LU factors of A (column-major) and the pivots */
typedef struct solve_ctx {
    int n;
    double *lu;
    int *piv;
} solve_ctx;

static void solve_destroy(void *p)
{
    solve_ctx *c = p;
    free(c->lu);
    free(c->piv);
    free(c);
}

/* A (row-major, n x n) factorised; NULL if A is singular or memory ran out */
static solve_ctx *solve_factor(int n, const double *A)
{
    solve_ctx *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->lu = malloc((size_t)n * n * sizeof(double));
    c->piv = malloc((size_t)n * sizeof(int));
    int info = -1;
    if (c->lu && c->piv) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                c->lu[j * n + i] = A[i * n + j];
        dgetrf_(&n, &n, c->lu, &n, c->piv, &info);
    }
    if (info != 0) {
        solve_destroy(c);
        return NULL;
    }
    return c;
}

/* v <- A^-1 v ("N") or A^-T v ("T") */
static void solve_apply(const solve_ctx *c, const char *trans, double *v)
{
    int one = 1, info;
    dgetrs_(trans, &c->n, &one, c->lu, &c->n, c->piv, v, &c->n, &info);
}

/* inputs: A (n*n, row-major) then b (n); outputs: x (n) */
static void solve_reverse(void *p, size_t ni, const double *in, size_t m,
                          const double *x, const double *xbar, double *inbar)
{
    (void)ni;
    (void)in;
    const solve_ctx *c = p;
    int n = c->n;
    double *bbar = inbar + (size_t)n * n;
    memcpy(bbar, xbar, m * sizeof(double));
    solve_apply(c, "T", bbar);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            inbar[i * n + j] = -bbar[i] * x[j];
}

static void solve_forward(void *p, size_t ni, const double *in,
                          const double *indot, size_t m, const double *x,
                          double *xdot)
{
    (void)ni;
    (void)in;
    (void)m;
    const solve_ctx *c = p;
    int n = c->n;
    const double *Adot = indot, *bdot = indot + (size_t)n * n;
    for (int i = 0; i < n; i++) {
        xdot[i] = bdot[i];
        for (int j = 0; j < n; j++)
            xdot[i] -= Adot[i * n + j] * x[j];
    }
    solve_apply(c, "N", xdot);
}

/* record x = A^-1 b; the inputs p hold A (row-major) then b */
static dr_status record_solve(dr_tape *t, const dr_real *p, dr_real *x)
{
    double A[N * N], xv[N];
    for (int i = 0; i < N * N; i++)
        A[i] = p[i].val;
    for (int i = 0; i < N; i++)
        xv[i] = p[N * N + i].val;
    solve_ctx *c = solve_factor(N, A);
    if (!c)
        return DR_EINVAL; /* singular (or no memory): nothing recorded */
    solve_apply(c, "N", xv);
    dr_external f = {c, solve_reverse, solve_forward, solve_destroy, NULL};
    dr_status st = dr_record_external(t, &f, N * N + N, p, N, xv, x);
    if (st != DR_OK)
        solve_destroy(c); /* a failed call leaves the context to us */
    return st;
}

/* the loss: sum_i w_i x_i^2 + sin(x_0 x_1), w_i = i + 1 */
static dr_real loss(dr_tape *t, const dr_real *x)
{
    dr_real s = dr_sin(t, dr_mul(t, x[0], x[1]));
    for (int i = 0; i < N; i++)
        s = dr_add(t, s, dr_mul(t, dr_const(i + 1.0), dr_mul(t, x[i], x[i])));
    return s;
}

/* the same in plain C, for the finite differences */
static double loss_plain(const double *p)
{
    solve_ctx *c = solve_factor(N, p);
    if (!c)
        return NAN;
    double x[N];
    memcpy(x, p + N * N, sizeof x);
    solve_apply(c, "N", x);
    solve_destroy(c);
    double s = sin(x[0] * x[1]);
    for (int i = 0; i < N; i++)
        s += (i + 1.0) * x[i] * x[i];
    return s;
}

int main(void)
{
    double p[N * N + N];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            p[i * N + j] = (i == j ? 4.0 : 0.0) + 0.5 * sin(1.0 + i + 2.0 * j);
        p[N * N + i] = cos(0.7 * i);
    }
    dr_tape *t = dr_tape_new();
    if (!t) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    dr_real in[N * N + N], x[N];
    dr_status st = dr_inputs(t, N * N + N, p, in);
    if (st == DR_OK)
        st = record_solve(t, in, x);
    double g[N * N + N];
    dr_real l = {0, DR_NONE};
    if (st == DR_OK) {
        l = loss(t, x);
        st = dr_gradient(t, l, N * N + N, in, g);
    }
    if (st != DR_OK) {
        fprintf(stderr, "linear_solve: %s\n", dr_strerror(st));
        dr_tape_free(t);
        return 1;
    }
    double worst = 0.0;
    for (int k = 0; k < N * N + N; k++) {
        double h = 1e-5, q[N * N + N];
        memcpy(q, p, sizeof q);
        q[k] = p[k] + h;
        double up = loss_plain(q);
        q[k] = p[k] - h;
        double fd = (up - loss_plain(q)) / (2 * h);
        double err = fabs(g[k] - fd) / (1e-3 + fabs(fd));
        if (err > worst)
            worst = err;
    }
    /* forward mode through the same node: the directional derivative
       along v equals g . v */
    double v[N * N + N], dl = 0.0, gv = 0.0;
    for (int k = 0; k < N * N + N; k++) {
        v[k] = sin(3.0 * k + 1.0);
        gv += g[k] * v[k];
    }
    st = dr_jvp(t, 1, &l, N * N + N, in, v, &dl);
    double fwd_err = st == DR_OK ? fabs(dl - gv) / (1e-3 + fabs(gv)) : 1.0;
    printf("loss %.6f; d loss / d b = (%.6f, %.6f, %.6f, %.6f)\n", l.val,
           g[N * N], g[N * N + 1], g[N * N + 2], g[N * N + 3]);
    printf("largest relative difference to central differences, over all "
           "%d inputs: %.1e\n", N * N + N, worst);
    printf("forward mode along a direction against the gradient: %.1e\n",
           fwd_err);
    dr_tape_free(t);
    return worst < 1e-6 && fwd_err < 1e-12 ? 0 : 1;
}
