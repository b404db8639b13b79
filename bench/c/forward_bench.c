/*
 * forward_bench.c - forward mode and vector mode against reverse sweeps on
 * one recorded tape (bench/README.md, "Forward and vector mode").
 *
 *     forward-bench <mode> <program> <size> <reps>
 *
 * records the program once, then runs the mode's unit `reps` times and
 * prints a checksum; bench/cpu_slope.py takes the marginal time of a unit,
 * so the recording drops out.  Modes:
 *
 *   rev     clear the adjoints, seed output 0, dr_reverse (one gradient)
 *   fwd     clear the tangents, seed input 0, dr_forward (one JVP)
 *   rows    the m x n Jacobian by m dr_gradient calls (a scalar sweep each)
 *   jac     dr_jacobian (vector mode: forward blocks when n < m)
 *   vecK    K vector-Jacobian products by dr_vjp_vec (one K-wide sweep)
 *   sglK    the same K products by K dr_vjp calls
 *
 * Programs (n = size):
 *   dot     sum x_i * y_i over 2n inputs (dr_inputs), 1 output
 *   chain   v <- sin(v) * x + exp(-0.1 v), n steps over 1 input
 *   mix     a random DAG of n operations with recent arguments over 16
 *           inputs, 10 outputs (the last values)
 *   tall    mix over 3 inputs: a 10 x 3 Jacobian
 *   rot     frotvecquat: the rotation of a vector by a quaternion, 3 x 7
 */
#include "dualrev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXOUT 10

static dr_tape *T;
static dr_real X[2000002], Y[MAXOUT];
static size_t NXS, NYS;

static void die(const char *what)
{
    fprintf(stderr, "forward-bench: %s\n", what);
    exit(1);
}

static void ok(dr_status st, const char *what)
{
    if (st != DR_OK)
        die(what);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void rec_dot(long n)
{
    double *v = malloc(2 * (size_t)n * sizeof *v);
    for (long i = 0; i < 2 * n; i++)
        v[i] = 1.0 + 1e-3 * (double)(i % 1000);
    ok(dr_inputs(T, 2 * (size_t)n, v, X), "inputs");
    dr_real s = dr_mul(T, X[0], X[n]);
    for (long i = 1; i < n; i++)
        s = dr_add(T, s, dr_mul(T, X[i], X[n + i]));
    NXS = 2 * (size_t)n;
    Y[0] = s;
    NYS = 1;
    free(v);
}

static void rec_chain(long n)
{
    X[0] = dr_input(T, 0.7);
    dr_real v = X[0];
    for (long i = 0; i < n; i++)
        v = dr_add(T, dr_mul(T, dr_sin(T, v), X[0]),
                   dr_exp(T, dr_mul(T, dr_const(-0.1), v)));
    NXS = 1;
    Y[0] = v;
    NYS = 1;
}

static void rec_mix(long n, size_t nin)
{
    size_t cap = (size_t)n + nin;
    dr_real *v = malloc(cap * sizeof *v);
    for (size_t i = 0; i < nin; i++)
        v[i] = X[i] = dr_input(T, 0.5 + 0.01 * (double)i);
    size_t nv = nin;
    for (long i = 0; i < n; i++) {
        size_t back = nv < 64 ? nv : 64;
        dr_real a = v[nv - 1 - next_u64() % back];
        dr_real b = v[nv - 1 - next_u64() % back];
        dr_real c;
        switch (next_u64() % 5) {
        case 0: c = dr_add(T, a, b); break;
        case 1: c = dr_mul(T, a, b); break;
        case 2: c = dr_sin(T, a); break;
        case 3: c = dr_tanh(T, dr_sub(T, a, b)); break;
        default: c = dr_mul(T, dr_const(0.5), dr_add(T, a, dr_cos(T, b)));
        }
        v[nv++] = c;
    }
    NXS = nin;
    NYS = MAXOUT;
    for (size_t i = 0; i < MAXOUT; i++)
        Y[i] = v[nv - 1 - i];
    free(v);
}

static dr_real dot3(const dr_real *p, const dr_real *q)
{
    return dr_add(T, dr_add(T, dr_mul(T, p[0], q[0]), dr_mul(T, p[1], q[1])),
                  dr_mul(T, p[2], q[2]));
}

static void rec_rot(void)
{
    for (int i = 0; i < 7; i++)
        X[i] = dr_input(T, (double)(i + 1));
    const dr_real *v = X, *u = X + 3;
    dr_real s = X[6], two = dr_const(2.0);
    dr_real k1 = dr_mul(T, two, dot3(u, v));
    dr_real k2 = dr_sub(T, dr_mul(T, s, s), dot3(u, u));
    dr_real k3 = dr_mul(T, two, s);
    dr_real c[3] = {dr_sub(T, dr_mul(T, u[1], v[2]), dr_mul(T, u[2], v[1])),
                    dr_sub(T, dr_mul(T, u[2], v[0]), dr_mul(T, u[0], v[2])),
                    dr_sub(T, dr_mul(T, u[0], v[1]), dr_mul(T, u[1], v[0]))};
    for (int i = 0; i < 3; i++)
        Y[i] = dr_add(T, dr_add(T, dr_mul(T, k1, u[i]), dr_mul(T, k2, v[i])),
                      dr_mul(T, k3, c[i]));
    NXS = 7;
    NYS = 3;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        die("usage: forward-bench <mode> <program> <size> <reps>");
    const char *mode = argv[1], *prog = argv[2];
    long n = atol(argv[3]), reps = atol(argv[4]);
    if (n < 1 || n > 1000000)
        die("size in 1 .. 10^6");
    T = dr_tape_new();
    if (!T)
        die("tape");
    if (!strcmp(prog, "dot"))
        rec_dot(n);
    else if (!strcmp(prog, "chain"))
        rec_chain(n);
    else if (!strcmp(prog, "mix"))
        rec_mix(n, 16);
    else if (!strcmp(prog, "tall"))
        rec_mix(n, 3);
    else if (!strcmp(prog, "rot"))
        rec_rot();
    else
        die("unknown program");
    ok(dr_tape_status(T), "recording");

    double sum = 0.0;
    static double J[1 << 16];
    size_t K = 0;
    if (!strncmp(mode, "vec", 3) || !strncmp(mode, "sgl", 3))
        K = (size_t)atol(mode + 3);
    if ((K > 16) || ((!strcmp(mode, "rows") || !strcmp(mode, "jac") || K) &&
                     NXS * (K ? K : NYS) > sizeof J / sizeof *J))
        die("too many inputs for this mode");
    double Ybar[16 * MAXOUT];
    for (size_t i = 0; i < sizeof Ybar / sizeof *Ybar; i++)
        Ybar[i] = (double)(i % 7) - 3.0;
    for (long r = 0; r < reps; r++) {
        if (!strcmp(mode, "rev")) {
            ok(dr_adjoints_clear(T), "clear");
            ok(dr_seed(T, Y[0].idx, 1.0), "seed");
            ok(dr_reverse(T), "reverse");
            sum = dr_adjoint(T, X[0].idx);
        } else if (!strcmp(mode, "fwd")) {
            ok(dr_tangents_clear(T), "clear");
            ok(dr_tangent_seed(T, X[0].idx, 1.0), "seed");
            ok(dr_forward(T), "forward");
            sum = dr_tangent(T, Y[0].idx);
        } else if (!strcmp(mode, "rows")) {
            for (size_t i = 0; i < NYS; i++)
                ok(dr_gradient(T, Y[i], NXS, X, J + i * NXS), "gradient");
            sum = J[0] + J[NYS * NXS - 1];
        } else if (!strcmp(mode, "jac")) {
            ok(dr_jacobian(T, NYS, Y, NXS, X, J), "jacobian");
            sum = J[0] + J[NYS * NXS - 1];
        } else if (!strncmp(mode, "vec", 3) && K) {
            ok(dr_vjp_vec(T, NYS, Y, K, Ybar, NXS, X, J), "vjp_vec");
            sum = J[0] + J[K * NXS - 1];
        } else if (!strncmp(mode, "sgl", 3) && K) {
            for (size_t j = 0; j < K; j++)
                ok(dr_vjp(T, NYS, Y, Ybar + j * NYS, NXS, X, J + j * NXS),
                   "vjp");
            sum = J[0] + J[K * NXS - 1];
        } else {
            die("unknown mode");
        }
        __asm__ volatile("" : : "g"(sum) : "memory");
    }
    printf("%.10g\n", sum);
    dr_tape_free(T);
    return 0;
}
