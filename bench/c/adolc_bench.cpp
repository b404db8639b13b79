/*
 * adolc_bench.cpp - the six benchmark programs with ADOL-C (Debian
 * libadolc-dev), the established operator-overloading, tape-based AD tool for
 * C/C++.
 *
 *     adolc-bench <program> <size> <reps>
 *
 * What one repetition measures, to compare like with like with dualrev
 * (which records a fresh tape per unit): the program is RETAPED every
 * repetition - trace_on, one adouble per independent variable (<<=), the
 * forward pass on adoubles, the output (>>=), trace_off - and then the
 * standard driver is called: gradient() (a zero-order forward sweep over the
 * tape that keeps the Taylor values, then a first-order reverse sweep), or
 * for frotvecquat jacobian() (3 outputs < 7 inputs, so one forward sweep and
 * a vector reverse sweep over 3 directions).  The tape buffers are sized by
 * trace_on to hold the whole tape in memory (ADOL-C would otherwise spill
 * tapes bigger than its 524288-element default buffers to files).  The
 * forward passes are those of bench/c/bench_programs.hpp (shared with the
 * CoDiPack and Adept files): the operations of bench/c/dualrev_bench.c in
 * the same order.  relu and the running max of the softmax branch
 * on values (legitimate because every unit is retaped) with dualrev's
 * convention at ties (ADOL-C's fmax would warn at ties and record extra
 * negations).
 *
 * Checksum: the sum of all gradient (Jacobian) entries of the last rep.
 */
#include <adolc/adolc.h>

#include <vector>

static double bench_value(const adouble &x) { return x.getValue(); }

#include "bench_programs.hpp"

static const short TAG = 1;

/* ADOLC_TAPE_ONCE=1: the program is taped at the first repetition only and
   every repetition after it calls the driver on that tape at the
   (clobbered) inputs: ADOL-C's own "trace once, evaluate at new points"
   (the drivers' zero-order forward sweep recomputes the values), the
   anchor for dualrev's replay.  The programs' branches (fneural's relu and
   maximum) are taken as taped: right at these inputs, as ADOL-C leaves
   branches to the user. */
static bool tape_once()
{
    static int once = -1;
    if (once < 0) {
        const char *e = getenv("ADOLC_TAPE_ONCE");
        once = e && *e && *e != '0';
    }
    return once != 0;
}
static bool record_now(long r) { return !tape_once() || r == 0; }

/* trace_on with in-memory buffers for a tape of about `nodes` operations */
static void start(long nodes)
{
    unsigned n = (unsigned)(nodes + 1024);
    trace_on(TAG, 0, 2 * n, 4 * n, 2 * n, 2 * n);
}

static double run_fmult(const bench_args *a)
{
    double in[2] = {3.0, 4.0}, g[2] = {0, 0}, y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        if (record_now(r)) {
            start(bench_tape_nodes(a->prog, a->size));
            {
                adouble x0, x1, ay;
                x0 <<= in[0];
                x1 <<= in[1];
                ay = x0 * x1;
                ay >>= y;
            }
            trace_off();
        }
        gradient(TAG, 2, in, g);
        bench_use(g);
    }
    return g[0] + g[1];
}

static double run_fdotprod(const bench_args *a)
{
    size_t n = (size_t)a->size;
    std::vector<double> xv(2 * n), g(2 * n, 0.0);
    bench_dot_inputs(a->size, xv.data(), xv.data() + n);
    double y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        if (record_now(r)) {
            start(bench_tape_nodes(a->prog, a->size));
            {
                std::vector<adouble> x(2 * n);
                for (size_t i = 0; i < 2 * n; i++)
                    x[i] <<= xv[i];
                adouble ay = bench_dot(n, x.data(), x.data() + n);
                ay >>= y;
            }
            trace_off();
        }
        gradient(TAG, (int)(2 * n), xv.data(), g.data());
        bench_use(g.data());
    }
    return bench_sum(2 * n, g.data());
}

static double run_fsummatvec(const bench_args *a)
{
    size_t k = (size_t)bench_summatvec_k(a->size), nin = k * k + k;
    std::vector<double> xv(nin), g(nin, 0.0);
    bench_summatvec_inputs((long)k, xv.data(), xv.data() + k * k);
    double y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        if (record_now(r)) {
            start(bench_tape_nodes(a->prog, a->size));
            {
                std::vector<adouble> x(nin);
                for (size_t i = 0; i < nin; i++)
                    x[i] <<= xv[i];
                std::vector<adouble> rows(k);
                adouble ay = bench_summatvec(k, x.data(), x.data() + k * k, rows.data());
                ay >>= y;
            }
            trace_off();
        }
        gradient(TAG, (int)nin, xv.data(), g.data());
        bench_use(g.data());
    }
    return bench_sum(nin, g.data());
}

static double run_frotvecquat(const bench_args *a)
{
    double in[7], y[3];
    memcpy(in, bench_rot_inputs, sizeof in);
    double **J = myalloc2(3, 7);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        if (record_now(r)) {
            start(bench_tape_nodes(a->prog, a->size));
            {
                adouble x[7];
                for (int i = 0; i < 7; i++)
                    x[i] <<= in[i];
                adouble o[3];
                bench_rotate(x, o);
                for (int i = 0; i < 3; i++)
                    o[i] >>= y[i];
            }
            trace_off();
        }
        jacobian(TAG, 3, 7, in, J);
        bench_use(J[0]);
    }
    double s = 0;
    for (int i = 0; i < 3; i++)
        s += bench_sum(7, J[i]);
    myfree2(J);
    return s;
}

static double run_fneural(const bench_args *a)
{
    static double pv[NN_NPARAM], g[NN_NPARAM];
    bench_neural_inputs(pv);
    double y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(pv);
        if (record_now(r)) {
            start(bench_tape_nodes(a->prog, a->size));
            {
                std::vector<adouble> p(NN_NPARAM);
                for (int i = 0; i < NN_NPARAM; i++)
                    p[i] <<= pv[i];
                adouble ay = bench_neural(p.data());
                ay >>= y;
            }
            trace_off();
        }
        gradient(TAG, NN_NPARAM, pv, g);
        bench_use(g);
    }
    return bench_sum(NN_NPARAM, g);
}

static double run_fparticles(const bench_args *a)
{
    double in[4 * PT_N], g[4 * PT_N] = {0}, y;
    bench_particle_inputs(in);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        if (record_now(r)) {
            start(bench_tape_nodes(a->prog, a->size));
            {
                adouble x[4 * PT_N];
                for (int i = 0; i < 4 * PT_N; i++)
                    x[i] <<= in[i];
                adouble ay = bench_particles(x);
                ay >>= y;
            }
            trace_off();
        }
        gradient(TAG, 4 * PT_N, in, g);
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
                                        run_fparticles, run_fparticles /* the sequential program */};
    bench_run_fn run = bench_pick(&a, runs, "adolc-bench");
    printf("%.10g\n", run(&a));
    return 0;
}
