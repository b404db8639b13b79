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
 * The forward passes are those of bench/c/bench_programs.hpp, shared with
 * the ADOL-C and CoDiPack/Adept files: whole expressions such as
 * `xs[i] * ys[i] + acc` become one statement each.
 *
 * Checksum: the sum of all gradient (Jacobian) entries of the last rep.
 * fparticles-fork (no fork-join here) exits with status 2.
 */
#include <adept.h>

#include <vector>

using adept::adouble;

static double bench_value(const adouble &x) { return x.value(); }

#include "bench_programs.hpp"

static adept::Stack *S;

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

static double run_fdotprod(const bench_args *a)
{
    size_t n = (size_t)a->size;
    std::vector<double> xv(2 * n), g(2 * n, 0.0);
    bench_dot_inputs(a->size, xv.data(), xv.data() + n);
    std::vector<adouble> x(2 * n);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        start(2 * n, xv.data(), x.data());
        adouble y = bench_dot(n, x.data(), x.data() + n);
        sweep(y, 2 * n, x.data(), g.data());
        bench_use(g.data());
    }
    return bench_sum(2 * n, g.data());
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
        adouble y = bench_summatvec(k, x.data(), x.data() + k * k, rows.data());
        sweep(y, nin, x.data(), g.data());
        bench_use(g.data());
    }
    return bench_sum(nin, g.data());
}

static double run_frotvecquat(const bench_args *a)
{
    double in[7], J[21] = {0};
    memcpy(in, bench_rot_inputs, sizeof in);
    adouble x[7];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(7, in, x);
        adouble o[3];
        bench_rotate(x, o);
        S->independent(x, 7);
        S->dependent(o, 3);
        S->jacobian(J); /* column-major 3 x 7; the checksum is the sum */
        bench_use(J);
    }
    return bench_sum(21, J);
}

static double run_fneural(const bench_args *a)
{
    static double pv[NN_NPARAM], g[NN_NPARAM];
    bench_neural_inputs(pv);
    std::vector<adouble> p(NN_NPARAM);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(pv);
        start(NN_NPARAM, pv, p.data());
        adouble y = bench_neural(p.data());
        sweep(y, NN_NPARAM, p.data(), g);
        bench_use(g);
    }
    return bench_sum(NN_NPARAM, g);
}

static double run_fparticles(const bench_args *a)
{
    double in[4 * PT_N], g[4 * PT_N] = {0};
    bench_particle_inputs(in);
    adouble x[4 * PT_N];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(4 * PT_N, in, x);
        adouble y = bench_particles(x);
        sweep(y, 4 * PT_N, x, g);
        bench_use(g);
    }
    return bench_sum(4 * PT_N, g);
}

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    /* (in the order of the P_* programs) */
    const bench_run_fn runs[P_COUNT] = {run_fmult, run_fdotprod, run_fsummatvec,
                                        run_frotvecquat, run_fneural,
                                        run_fparticles, nullptr /* no fork-join version with Adept */};
    bench_run_fn run = bench_pick(&a, runs, "adept-bench");
    adept::Stack stack;
    S = &stack;
    printf("%.10g\n", run(&a));
    return 0;
}
