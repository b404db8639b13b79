/*
 * adolc_second_order.cpp - second_order_bench.c's programs with ADOL-C
 * (Debian libadolc-dev): its second-order drivers, the anchors for
 * dualrev's dr_hvp, dr_hessian and dr_sparse_hessian.
 *
 *     adolc-second-order <program>-<unit> <size> <reps>
 *
 * Programs, written op for op as second_order_bench.c writes them: nn (40
 * inputs, 60 tanh units, a softplus head, a weight penalty), rot
 * (frotvecquat's outputs summed), quad (x^T A x, 100 inputs) and band (n
 * inputs, half-bandwidth 2; size is n).  Units, each `reps` times:
 *   hvp     hess_vec() on a tape traced once (ADOL-C's trace once,
 *           evaluate at new points: its drivers' forward sweeps recompute
 *           the values at every call)
 *   rechvp  trace + hess_vec(): a product at a new point
 *   hess    trace + hessian() (the dense Hessian from scratch)
 *   shess   sparse_hess() on a tape traced once, its pattern and colouring
 *           kept (repeat = 1 after the first call)
 *   shess1  trace + sparse_hess() with the pattern found again
 * Prints a checksum (the sum of the result's entries), or exits 3 where
 * the installed ADOL-C lacks a driver (sparse_hess needs ColPack).
 */
#include <adolc/adolc.h>
#include <adolc/adolc_sparse.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const short TAG = 2;

static void start(long nodes)
{
    unsigned n = (unsigned)(nodes + 1024);
    trace_on(TAG, 0, 2 * n, 4 * n, 2 * n, 2 * n);
}

/* ------------------------------------------------------------- programs */

#define NN_IN 40
#define NN_H 60
#define NN_N (NN_IN + NN_H * NN_IN + NN_H + NN_H)

static void nn_inputs(double *p)
{
    unsigned s = 12345;
    for (int i = 0; i < NN_N; i++) {
        s = s * 1103515245u + 12345u;
        p[i] = ((double)(s >> 8) / (double)(1u << 24) - 0.5) * 0.4;
    }
}

static adouble softplus(const adouble &x)
{
    /* max(x, 0) + log1p(exp(-|x|)), as dualrev's rule: on the branch the
       value takes (the tape is retaken where the sign changes) */
    return (x.getValue() > 0 ? x : adouble(0.0)) + log(1.0 + exp(-fabs(x)));
}

static adouble nn(const adouble *p)
{
    const adouble *x = p, *W = p + NN_IN, *b = W + NN_H * NN_IN, *v = b + NN_H;
    adouble out = 0.0, reg = 0.0;
    for (int j = 0; j < NN_H; j++) {
        adouble s = b[j];
        for (int i = 0; i < NN_IN; i++) {
            const adouble &w = W[j * NN_IN + i];
            s = s + w * x[i];
            reg = reg + w * w;
        }
        out = out + v[j] * tanh(s);
    }
    return softplus(out) + 0.01 * reg;
}

static adouble rot(const adouble *x)
{
    adouble vx = x[0], vy = x[1], vz = x[2], ux = x[3], uy = x[4], uz = x[5],
            s = x[6];
    adouble uv = ux * vx + uy * vy + uz * vz, uu = ux * ux + uy * uy + uz * uz;
    adouble a = 2.0 * uv, c = s * s - uu, d = 2.0 * s;
    adouble cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
    adouble ox = a * ux + c * vx + d * cx, oy = a * uy + c * vy + d * cy,
            oz = a * uz + c * vz + d * cz;
    return ox + oy + oz;
}

#define QUAD_N 100
static adouble quad(const adouble *x)
{
    adouble f = 0.0;
    for (int i = 0; i < QUAD_N; i++) {
        adouble r = 0.0;
        for (int j = 0; j < QUAD_N; j++)
            r = r + (1.0 / (1 + i + 2 * j)) * x[j];
        f = f + x[i] * r;
    }
    return f;
}

static size_t band_n;
static adouble band(const adouble *x)
{
    adouble f = 0.0;
    for (size_t i = 0; i < band_n; i++) {
        f = f + sin(x[i]);
        if (i > 0) {
            adouble p = x[i - 1] * x[i];
            f = f + p * p;
        }
        if (i + 2 < band_n)
            f = f + 0.5 * exp(x[i] + x[i + 2]);
    }
    return f;
}

/* ------------------------------------------------------------------ run */

typedef adouble (*program)(const adouble *);

static void trace(program f, size_t n, const double *in, long nodes)
{
    start(nodes);
    std::vector<adouble> x(n);
    for (size_t i = 0; i < n; i++)
        x[i] <<= in[i];
    adouble y = f(x.data());
    double out;
    y >>= out;
    trace_off();
}

static volatile double sink;

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s <program>-<unit> <size> <reps>\n", argv[0]);
        return 1;
    }
    char prog[64];
    snprintf(prog, sizeof prog, "%s", argv[1]);
    char *unit = strchr(prog, '-');
    if (!unit)
        return 2;
    *unit++ = '\0';
    long size = atol(argv[2]), reps = atol(argv[3]);
    program f;
    size_t n;
    long nodes;
    std::vector<double> in;
    if (!strcmp(prog, "nn")) {
        f = nn, n = NN_N, nodes = 12000;
        in.resize(n);
        nn_inputs(in.data());
    } else if (!strcmp(prog, "rot")) {
        f = rot, n = 7, nodes = 100;
        in = {1, 2, 3, 4, 5, 6, 7};
    } else if (!strcmp(prog, "quad")) {
        f = quad, n = QUAD_N, nodes = 4 * QUAD_N * QUAD_N;
        in.resize(n);
        for (size_t i = 0; i < n; i++)
            in[i] = 0.01 * (double)i - 0.3;
    } else if (!strcmp(prog, "band")) {
        band_n = n = size > 0 ? (size_t)size : 10000;
        f = band, nodes = 12 * (long)n;
        in.resize(n);
        for (size_t i = 0; i < n; i++)
            in[i] = 0.3 + 0.4 * sin((double)i);
    } else {
        return 2;
    }
    std::vector<double> v(n), w(n);
    for (size_t i = 0; i < n; i++)
        v[i] = 1.0 / (1.0 + (double)i);
    bool once = !strcmp(unit, "hvp") || !strcmp(unit, "shess");
    if (once)
        trace(f, n, in.data(), nodes);
    double s = 0.0;
    unsigned int *rind = NULL, *cind = NULL;
    double *values = NULL;
    int nnz = 0, options[2] = {0, 0};
    for (long r = 0; r < reps; r++) {
        if (!once)
            trace(f, n, in.data(), nodes);
        if (!strcmp(unit, "hvp") || !strcmp(unit, "rechvp")) {
            hess_vec(TAG, (int)n, in.data(), v.data(), w.data());
            s = 0.0;
            for (size_t i = 0; i < n; i++)
                s += w[i];
        } else if (!strcmp(unit, "hess")) {
            double **H = myalloc2((int)n, (int)n);
            hessian(TAG, (int)n, in.data(), H);
            s = 0.0;
            for (size_t i = 0; i < n; i++) /* the lower triangle, mirrored */
                for (size_t j = 0; j <= i; j++)
                    s += (i == j ? 1.0 : 2.0) * H[i][j];
            myfree2(H);
        } else if (!strcmp(unit, "shess") || !strcmp(unit, "shess1")) {
            int repeat = !strcmp(unit, "shess") && r > 0;
            if (!repeat) {
                free(rind);
                free(cind);
                free(values);
                rind = cind = NULL;
                values = NULL;
            }
            int st = -1;
            try { /* Debian's ADOL-C throws where ColPack is missing */
                st = sparse_hess(TAG, (int)n, repeat, in.data(), &nnz, &rind,
                                 &cind, &values, options);
            } catch (...) {
                st = -1;
            }
            if (st < 0) {
                fprintf(stderr, "sparse_hess: %d (no ColPack in this ADOL-C?)\n", st);
                return 3;
            }
            s = 0.0;
            for (int k = 0; k < nnz; k++) /* the upper triangle, mirrored */
                s += (rind[k] == cind[k] ? 1.0 : 2.0) * values[k];
        } else {
            return 2;
        }
        sink = s;
    }
    printf("%.10g\n", s);
    return 0;
}
