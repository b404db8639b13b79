/*
 * codipack_bench.cpp - the six benchmark programs with CoDiPack 3.x
 * (header-only, https://github.com/SciCompKL/CoDiPack), the operator-
 * overloading reverse mode with expression templates.
 *
 *     codipack-bench <program> <size> <reps>
 *
 * Built only from a checkout the user provides (bench/bench.mk: CODIPACK_DIR
 * holding include/codi.hpp); nothing of CoDiPack is part of this repository.
 *
 * Type: codi::RealReverse (Jacobian tape, linear index management: a
 * statement stores one partial derivative and one index per active argument
 * of a whole right-hand side).  One repetition does what it does for
 * dualrev and ADOL-C: the tape is activated, the inputs get their values and
 * are registered, the program runs on the active type, the output is
 * registered, the tape is made passive, seeded and evaluated, the gradient
 * is read out, and tape.reset() clears the tape and its adjoints for the
 * next repetition.  The active input arrays are allocated once per process
 * (as the input doubles are); re-registering them gives them fresh
 * identifiers every repetition.
 *
 * frotvecquat takes the 3x7 Jacobian by three evaluations of one recorded
 * codi::RealReverse tape (seed one output, evaluate, read a row,
 * clearAdjoints), as dualrev and benchmarks.md define the unit.  Built with
 * -DCODI_BENCH_JAC_VEC it uses CoDiPack's vector mode instead,
 * codi::RealReverseVec<3> (each output seeded in its own direction, one
 * evaluation), which is about 10 % slower here (bench/README.md).
 *
 * The forward passes are those of bench/c/bench_programs.hpp, shared with
 * the ADOL-C and CoDiPack/Adept files: whole expressions such as
 * `xs[i] * ys[i] + acc` become one statement each.
 *
 * Checksum: the sum of all gradient (Jacobian) entries of the last rep.
 * fparticles-fork (no fork-join here) exits with status 2.
 */
#include <codi.hpp>

#include <vector>

using Real = codi::RealReverse;
using Tape = Real::Tape;

static double bench_value(const Real &x) { return x.getValue(); }

#include "bench_programs.hpp"

/* the part of a repetition after the forward pass: one output, seed 1,
   evaluate, read n input gradients into g, reset */
static void sweep(Tape &tape, Real &y, size_t n, const Real *x, double *g)
{
    tape.registerOutput(y);
    tape.setPassive();
    y.setGradient(1.0);
    tape.evaluate();
    for (size_t i = 0; i < n; i++)
        g[i] = x[i].getGradient();
    tape.reset();
}

/* values in, registered as inputs of the tape */
template <typename T>
static void take_inputs(typename T::Tape &tape, size_t n, const double *v, T *x)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = v[i];
        tape.registerInput(x[i]);
    }
}

static double run_fmult(const bench_args *a)
{
    Tape &tape = Real::getTape();
    double in[2] = {3.0, 4.0}, g[2] = {0, 0};
    Real x[2];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        tape.setActive();
        take_inputs(tape, 2, in, x);
        Real y = x[0] * x[1];
        sweep(tape, y, 2, x, g);
        bench_use(g);
    }
    return g[0] + g[1];
}

static double run_fdotprod(const bench_args *a)
{
    Tape &tape = Real::getTape();
    size_t n = (size_t)a->size;
    std::vector<double> xv(2 * n), g(2 * n, 0.0);
    bench_dot_inputs(a->size, xv.data(), xv.data() + n);
    std::vector<Real> x(2 * n);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        tape.setActive();
        take_inputs(tape, 2 * n, xv.data(), x.data());
        Real y = bench_dot(n, x.data(), x.data() + n);
        sweep(tape, y, 2 * n, x.data(), g.data());
        bench_use(g.data());
    }
    return bench_sum(2 * n, g.data());
}

static double run_fsummatvec(const bench_args *a)
{
    Tape &tape = Real::getTape();
    size_t k = (size_t)bench_summatvec_k(a->size), nin = k * k + k;
    std::vector<double> xv(nin), g(nin, 0.0);
    bench_summatvec_inputs((long)k, xv.data(), xv.data() + k * k);
    std::vector<Real> x(nin), rows(k);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        tape.setActive();
        take_inputs(tape, nin, xv.data(), x.data());
        Real y = bench_summatvec(k, x.data(), x.data() + k * k, rows.data());
        sweep(tape, y, nin, x.data(), g.data());
        bench_use(g.data());
    }
    return bench_sum(nin, g.data());
}

#ifndef CODI_BENCH_JAC_VEC
/* three scalar evaluations of one recording */
static double run_frotvecquat(const bench_args *a)
{
    Tape &tape = Real::getTape();
    double in[7], J[21] = {0};
    memcpy(in, bench_rot_inputs, sizeof in);
    Real x[7];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        tape.setActive();
        take_inputs(tape, 7, in, x);
        Real o[3];
        bench_rotate(x, o);
        for (int i = 0; i < 3; i++)
            tape.registerOutput(o[i]);
        tape.setPassive();
        for (int i = 0; i < 3; i++) {
            o[i].gradient() = 1.0;
            tape.evaluate();
            for (int j = 0; j < 7; j++)
                J[7 * i + j] = x[j].getGradient();
            tape.clearAdjoints();
        }
        tape.reset();
        bench_use(J);
    }
    return bench_sum(21, J);
}
#else
/* vector mode: three adjoint directions in one evaluation */
static double run_frotvecquat(const bench_args *a)
{
    using RealV = codi::RealReverseVec<3>;
    RealV::Tape &tape = RealV::getTape();
    double in[7], J[21] = {0};
    memcpy(in, bench_rot_inputs, sizeof in);
    RealV x[7];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        tape.setActive();
        take_inputs(tape, 7, in, x);
        RealV o[3];
        bench_rotate(x, o);
        for (int i = 0; i < 3; i++)
            tape.registerOutput(o[i]);
        tape.setPassive();
        for (int i = 0; i < 3; i++)
            o[i].gradient()[i] = 1.0;
        tape.evaluate();
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 7; j++)
                J[7 * i + j] = x[j].getGradient()[i];
        tape.reset();
        bench_use(J);
    }
    return bench_sum(21, J);
}
#endif

static double run_fneural(const bench_args *a)
{
    Tape &tape = Real::getTape();
    static double pv[NN_NPARAM], g[NN_NPARAM];
    bench_neural_inputs(pv);
    std::vector<Real> p(NN_NPARAM);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(pv);
        tape.setActive();
        take_inputs(tape, NN_NPARAM, pv, p.data());
        Real y = bench_neural(p.data());
        sweep(tape, y, NN_NPARAM, p.data(), g);
        bench_use(g);
    }
    return bench_sum(NN_NPARAM, g);
}

static double run_fparticles(const bench_args *a)
{
    Tape &tape = Real::getTape();
    double in[4 * PT_N], g[4 * PT_N] = {0};
    bench_particle_inputs(in);
    Real x[4 * PT_N];
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        tape.setActive();
        take_inputs(tape, 4 * PT_N, in, x);
        Real y = bench_particles(x);
        sweep(tape, y, 4 * PT_N, x, g);
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
                                        run_fparticles, nullptr /* no fork-join version with CoDiPack */};
    bench_run_fn run = bench_pick(&a, runs, "codipack-bench");
    printf("%.10g\n", run(&a));
    return 0;
}
