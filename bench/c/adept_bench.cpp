/*
 * adept_bench.cpp - the six benchmark programs with Adept 2
 * (https://github.com/rjhogan/Adept-2), the operator-overloading reverse
 * mode with expression templates.
 *
 *     adept-bench <program> <size> <reps>
 *
 * Built only from a checkout and a library the user provides (bench/bench.mk:
 * ADEPT_DIR holding include/adept.h, ADEPT_LIB the directory of libadept.a
 * or libadept.so); nothing of Adept is part of this repository.
 *
 * One adept::Stack for the process.  One repetition does what it does for
 * dualrev and ADOL-C: the inputs get their values (set_values, which records
 * nothing), stack.new_recording() starts a fresh recording, the program runs
 * on adouble, and then the gradient: the output's gradient is set to 1,
 * stack.compute_adjoint() sweeps, and the input gradients are read out
 * (get_gradients).  frotvecquat uses Adept's Jacobian driver as an Adept
 * user would: stack.independent(x, 7), stack.dependent(y, 3),
 * stack.jacobian(J), which for 3 outputs and 7 inputs takes reverse passes
 * over the recording, several directions at a time.  The active input
 * arrays are allocated once per process (as the input doubles are).
 *
 * The programs are written as a C++ user writes them, in the order of
 * bench/c/adolc_bench.cpp (right folds onto 0, relu and the running maximum
 * branching on values with dualrev's convention at ties), so whole
 * expressions such as `xs[i] * ys[i] + acc` become one statement each.
 *
 * Checksum: the sum of all gradient (Jacobian) entries of the last rep.
 * fparticles-fork (no fork-join here) exits with status 2.
 */
#include <adept.h>

#include <vector>

#include "bench_common.h"

using adept::adouble;

static adept::Stack *S;

static double sum(size_t n, const double *g)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g[i];
    return s;
}

/* values in, then a fresh recording */
static void start(size_t n, const double *v, adouble *x)
{
    adept::set_values(x, (adept::Index)n, v);
    S->new_recording();
}

/* the gradient of y with respect to the n inputs x, into g */
static void sweep(const adouble &y, size_t n, const adouble *x, double *g)
{
    y.set_gradient(1.0);
    S->compute_adjoint();
    adept::get_gradients(x, (adept::Index)n, g);
}

static double run_fmult(const bench_args *a)
{
    double in[2] = {3.0, 4.0}, g[2] = {0, 0};
    adouble x[2];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(2, in, x);
        adouble y = x[0] * x[1];
        sweep(y, 2, x, g);
        bench_use(g);
    }
    return g[0] + g[1];
}

/* sum' (zipWith (*) xs ys), sum' a right fold onto 0 */
static adouble dot(size_t n, const adouble *xs, const adouble *ys)
{
    adouble acc = 0.0;
    for (size_t i = n; i-- > 0;)
        acc = xs[i] * ys[i] + acc;
    return acc;
}

static double run_fdotprod(const bench_args *a)
{
    size_t n = (size_t)a->size;
    std::vector<double> xv(2 * n), g(2 * n, 0.0);
    bench_dot_inputs(a->size, xv.data(), xv.data() + n);
    std::vector<adouble> x(2 * n);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        start(2 * n, xv.data(), x.data());
        adouble y = dot(n, x.data(), x.data() + n);
        sweep(y, 2 * n, x.data(), g.data());
        bench_use(g.data());
    }
    return sum(2 * n, g.data());
}

static double run_fsummatvec(const bench_args *a)
{
    size_t k = (size_t)bench_summatvec_k(a->size), nin = k * k + k;
    std::vector<double> xv(nin), g(nin, 0.0);
    bench_summatvec_inputs((long)k, xv.data(), xv.data() + k * k);
    std::vector<adouble> x(nin), rows(k);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        start(nin, xv.data(), x.data());
        const adouble *m = x.data(), *v = x.data() + k * k;
        /* sum' (map' (dotp v) m): the row dots first, then the fold */
        for (size_t i = 0; i < k; i++)
            rows[i] = dot(k, v, m + i * k);
        adouble y = 0.0;
        for (size_t i = k; i-- > 0;)
            y = rows[i] + y;
        sweep(y, nin, x.data(), g.data());
        bench_use(g.data());
    }
    return sum(nin, g.data());
}

static double run_frotvecquat(const bench_args *a)
{
    double in[7], J[21] = {0};
    memcpy(in, bench_rot_inputs, sizeof in);
    adouble x[7];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(7, in, x);
        const adouble &vx = x[0], &vy = x[1], &vz = x[2];
        const adouble &ux = x[3], &uy = x[4], &uz = x[5], &s = x[6];
        adouble k1 = 2.0 * (ux * vx + uy * vy + uz * vz);
        adouble k2 = s * s - (ux * ux + uy * uy + uz * uz);
        adouble k3 = 2.0 * s;
        adouble cx = uy * vz - uz * vy, cy = uz * vx - ux * vz,
                cz = ux * vy - uy * vx;
        adouble o[3] = {(k1 * ux + k2 * vx) + k3 * cx,
                        (k1 * uy + k2 * vy) + k3 * cy,
                        (k1 * uz + k2 * vz) + k3 * cz};
        S->independent(x, 7);
        S->dependent(o, 3);
        S->jacobian(J); /* column-major 3 x 7; the checksum is the sum */
        bench_use(J);
    }
    return sum(21, J);
}

/* relu: derivative 0 at 0, as dr_relu */
static adouble relu(const adouble &x)
{
    if (x.value() > 0.0)
        return x;
    return adouble(0.0);
}

static void layer(int out, int in, const adouble *w, const adouble *b,
                  const adouble *x, adouble *y)
{
    for (int i = 0; i < out; i++)
        y[i] = relu(dot((size_t)in, w + (size_t)i * in, x) + b[i]);
}

static double run_fneural(const bench_args *a)
{
    static double pv[NN_NPARAM], g[NN_NPARAM];
    bench_neural_inputs(pv);
    std::vector<adouble> p(NN_NPARAM);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(pv);
        start(NN_NPARAM, pv, p.data());
        const adouble *w1 = p.data(), *b1 = w1 + NN_H1 * NN_IN,
                      *w2 = b1 + NN_H1, *b2 = w2 + NN_H2 * NN_H1,
                      *in = b2 + NN_H2;
        adouble h1[NN_H1], h2[NN_H2], e[NN_H2];
        layer(NN_H1, NN_IN, w1, b1, in, h1);
        layer(NN_H2, NN_H1, w2, b2, h1, h2);
        /* safe softmax: running maximum started at 0 (tie: keep m) */
        adouble m = 0.0;
        for (int i = 0; i < NN_H2; i++)
            if (h2[i].value() > m.value())
                m = h2[i];
        for (int i = 0; i < NN_H2; i++)
            e[i] = exp(h2[i] - m);
        adouble s = 0.0;
        for (int i = NN_H2; i-- > 0;)
            s = e[i] + s;
        adouble y = 0.0;
        for (int i = NN_H2; i-- > 0;)
            y = e[i] / s + y;
        sweep(y, NN_NPARAM, p.data(), g);
        bench_use(g);
    }
    return sum(NN_NPARAM, g);
}

static double run_fparticles(const bench_args *a)
{
    double in[4 * PT_N], g[4 * PT_N] = {0};
    bench_particle_inputs(in);
    adouble x[4 * PT_N];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(4 * PT_N, in, x);
        adouble fin[PT_N];
        for (int i = 0; i < PT_N; i++) {
            adouble px = x[4 * i], py = x[4 * i + 1], vx = x[4 * i + 2],
                    vy = x[4 * i + 3];
            for (int k = 0; k < PT_STEPS; k++) {
                /* a = (-0.5 p) + (-0.2 v), p' = p + dt v, v' = v + dt a */
                adouble ax = -0.5 * px + -0.2 * vx;
                adouble ay = -0.5 * py + -0.2 * vy;
                adouble npx = px + PT_DT * vx, npy = py + PT_DT * vy;
                vx = vx + PT_DT * ax;
                vy = vy + PT_DT * ay;
                px = npx;
                py = npy;
            }
            fin[i] = px * py;
        }
        adouble y = 0.0;
        for (int i = PT_N; i-- > 0;)
            y = fin[i] + y;
        sweep(y, 4 * PT_N, x, g);
        bench_use(g);
    }
    return sum(4 * PT_N, g);
}

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    double (*run)(const bench_args *) = nullptr;
    switch (a.prog) {
    case P_FMULT: run = run_fmult; break;
    case P_FDOTPROD: run = run_fdotprod; break;
    case P_FSUMMATVEC: run = run_fsummatvec; break;
    case P_FROTVECQUAT: run = run_frotvecquat; break;
    case P_FNEURAL: run = run_fneural; break;
    case P_FPARTICLES: run = run_fparticles; break;
    default: /* fparticles-fork: no fork-join version with Adept */
        fprintf(stderr, "adept-bench: %s not implemented\n",
                bench_prog_names[a.prog]);
        return 2;
    }
    adept::Stack stack;
    S = &stack;
    printf("%.10g\n", run(&a));
    return 0;
}
