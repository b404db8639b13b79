/*
 * bench_programs.hpp - the forward passes of the benchmark programs on any
 * C++ active type T (ADOL-C's, CoDiPack's, Adept's adouble), written once:
 * each tool's bench file records, seeds, sweeps and reads out around them.
 *
 * The operations and their order are those of bench/c/dualrev_bench.c (right
 * folds onto 0; relu and the softmax's running maximum branch on values with
 * dualrev's convention at ties), so every tool computes the same gradient.
 * Written as a C++ user writes them: an expression-template tool records
 * whole right-hand sides such as `xs[i] * ys[i] + acc` as one statement.
 *
 * Before including it, a tool's file declares
 *     static double bench_value(const T &x);   (the value of an active x)
 * and may declare
 *     static bool bench_gt(const T &a, const T &b);
 *     static bool bench_positive(const T &a);
 * for the comparisons the programs branch on (a tool whose tape records
 * them: dualrev's replayed tapes); the defaults compare the values.
 */
#ifndef BENCH_PROGRAMS_HPP
#define BENCH_PROGRAMS_HPP

#include <cmath>
#include <cstddef>

#include "bench_common.h"

static inline double bench_sum(size_t n, const double *g)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g[i];
    return s;
}

/* a > b and a > 0, where the programs branch on values */
template <typename T>
static bool bench_gt(const T &a, const T &b)
{
    return bench_value(a) > bench_value(b);
}
template <typename T>
static bool bench_positive(const T &a)
{
    return bench_value(a) > 0.0;
}

/* sum' (zipWith (*) xs ys), sum' a right fold onto 0 */
template <typename T>
static T bench_dot(size_t n, const T *xs, const T *ys)
{
    T acc = 0.0;
    for (size_t i = n; i-- > 0;)
        acc = xs[i] * ys[i] + acc;
    return acc;
}

/* sum' (map' (dotp v) m) for the k x k matrix m: the row dots first (into
   rows, k of them), then the fold */
template <typename T>
static T bench_summatvec(size_t k, const T *m, const T *v, T *rows)
{
    for (size_t i = 0; i < k; i++)
        rows[i] = bench_dot(k, v, m + i * k);
    T y = 0.0;
    for (size_t i = k; i-- > 0;)
        y = rows[i] + y;
    return y;
}

/* rotate_vec_by_quat; x = v (3), q = (u, s) (4), o the rotated v (3) */
template <typename T>
static void bench_rotate(const T *x, T *o)
{
    const T &vx = x[0], &vy = x[1], &vz = x[2];
    const T &ux = x[3], &uy = x[4], &uz = x[5], &s = x[6];
    T k1 = 2.0 * (ux * vx + uy * vy + uz * vz);
    T k2 = s * s - (ux * ux + uy * uy + uz * uz);
    T k3 = 2.0 * s;
    T cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
    o[0] = (k1 * ux + k2 * vx) + k3 * cx;
    o[1] = (k1 * uy + k2 * vy) + k3 * cy;
    o[2] = (k1 * uz + k2 * vz) + k3 * cz;
}

/* relu: derivative 0 at 0, as dr_relu */
template <typename T>
static T bench_relu(const T &x)
{
    if (bench_positive(x))
        return x;
    return T(0.0);
}

/* x' = relu (W x + b), W is out x in */
template <typename T>
static void bench_layer(int out, int in, const T *w, const T *b, const T *x,
                        T *y)
{
    for (int i = 0; i < out; i++)
        y[i] = bench_relu<T>(bench_dot((size_t)in, w + (size_t)i * in, x) + b[i]);
}

/* fneural on its NN_NPARAM parameters p (both layers' weights and biases,
   then the input) */
template <typename T>
static T bench_neural(const T *p)
{
    const T *w1 = p, *b1 = w1 + NN_H1 * NN_IN, *w2 = b1 + NN_H1,
            *b2 = w2 + NN_H2 * NN_H1, *in = b2 + NN_H2;
    T h1[NN_H1], h2[NN_H2], e[NN_H2];
    bench_layer(NN_H1, NN_IN, w1, b1, in, h1);
    bench_layer(NN_H2, NN_H1, w2, b2, h1, h2);
    /* safe softmax: running maximum started at 0 (tie: keep m) */
    T m = 0.0;
    for (int i = 0; i < NN_H2; i++)
        if (bench_gt(h2[i], m))
            m = h2[i];
    for (int i = 0; i < NN_H2; i++)
        e[i] = exp(h2[i] - m);
    T s = 0.0;
    for (int i = NN_H2; i-- > 0;)
        s = e[i] + s;
    T y = 0.0;
    for (int i = NN_H2; i-- > 0;)
        y = e[i] / s + y;
    return y;
}

/* one particle of fparticles from its px, py, vx, vy: px * py after
   PT_STEPS steps */
template <typename T>
static T bench_particle(const T *s)
{
    T px = s[0], py = s[1], vx = s[2], vy = s[3];
    for (int k = 0; k < PT_STEPS; k++) {
        /* a = (-0.5 p) + (-0.2 v), p' = p + dt v, v' = v + dt a */
        T ax = -0.5 * px + -0.2 * vx;
        T ay = -0.5 * py + -0.2 * vy;
        T npx = px + PT_DT * vx, npy = py + PT_DT * vy;
        vx = vx + PT_DT * ax;
        vy = vy + PT_DT * ay;
        px = npx;
        py = npy;
    }
    return px * py;
}

/* fparticles on the 4 * PT_N inputs x (px, py, vx, vy per particle): the
   right fold of px * py over the particles after PT_STEPS steps */
template <typename T>
static T bench_particles(const T *x)
{
    T fin[PT_N];
    for (int i = 0; i < PT_N; i++)
        fin[i] = bench_particle(x + 4 * i);
    T y = 0.0;
    for (int i = PT_N; i-- > 0;)
        y = fin[i] + y;
    return y;
}

/* A tool's run function per program (indexed by P_*; nullptr: the tool
   has no version of it): the one for a's program, or exit 2 ("not
   implemented", which the driver takes as a row to leave out). */
typedef double (*bench_run_fn)(const bench_args *);
static inline bench_run_fn bench_pick(const bench_args *a,
                                      const bench_run_fn run[P_COUNT],
                                      const char *exe)
{
    if (!run[a->prog]) {
        fprintf(stderr, "%s: %s not implemented\n", exe,
                bench_prog_names[a->prog]);
        exit(2);
    }
    return run[a->prog];
}

#endif
