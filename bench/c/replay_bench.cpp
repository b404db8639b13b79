/*
 * replay_bench.cpp - the benchmark programs recorded once and replayed
 * (dualrev.h, "replay"): the forward passes of bench_programs.hpp on a
 * thin C++ type over the C API, op by op at order 2, with the comparisons
 * the programs branch on recorded as guards (dr_gt).
 *
 *     dualrev-replay-bench <program> <size> <reps>
 *
 * REPLAY_BENCH_MODE chooses what one repetition measures:
 *   replay   (default) dr_replay at the inputs, then the gradient (or
 *            Jacobian) of a tape recorded once before the repetitions
 *   record2  a fresh recording at order 2 (replayable), then the gradient
 *   record1  the same recording at order 1, then the gradient: what
 *            recording a replayable tape costs is record2 against this
 * Checksum: the sum of the gradient (Jacobian) entries of the last rep, as
 * every executable of the suite prints it.
 */
#include "bench_common.h"

#include <dualrev.h>

#include <vector>

static dr_tape *T;

/* an active value of the programs: every operation one dualrev call */
struct R {
    dr_real v;
    R() : v(dr_const(0.0)) {}
    R(double c) : v(dr_const(c)) {}
    R(dr_real x) : v(x) {}
};
[[maybe_unused]] static double bench_value(const R &x) { return x.v.val; }
static bool bench_gt(const R &a, const R &b) { return dr_gt(T, a.v, b.v); }
static bool bench_positive(const R &a) { return dr_gt(T, a.v, dr_const(0.0)); }
static inline R operator+(const R &a, const R &b) { return dr_add(T, a.v, b.v); }
static inline R operator-(const R &a, const R &b) { return dr_sub(T, a.v, b.v); }
static inline R operator*(const R &a, const R &b) { return dr_mul(T, a.v, b.v); }
static inline R operator/(const R &a, const R &b) { return dr_div(T, a.v, b.v); }
static inline R exp(const R &a) { return dr_exp(T, a.v); }

#include "bench_programs.hpp"

enum mode { REPLAY, RECORD2, RECORD1 };

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "dualrev-replay-bench: %s: %s\n", what, dr_strerror(st));
        exit(4);
    }
}

/* the program as a function of its inputs: records its outputs y */
typedef void (*program)(const dr_real *x, dr_real *y, size_t n);

/* one measured unit per repetition, in the mode asked for; g receives the
   gradient (m == 1) or the m x n Jacobian */
static void run(enum mode md, program f, size_t n, size_t m, double *in,
                double *g, long reps)
{
    std::vector<dr_real> x(n), y(m);
    if (md == REPLAY) {
        check(dr_tape_set_order(T, 2), "order");
        check(dr_inputs(T, n, in, x.data()), "inputs");
        f(x.data(), y.data(), n);
        check(dr_tape_status(T), "recording");
    } else {
        check(dr_tape_set_order(T, md == RECORD2 ? 2 : 1), "order");
    }
    for (long r = 0; r < reps; r++) {
        bench_clobber(in);
        if (md == REPLAY) {
            check(dr_replay(T, n, x.data(), in), "replay");
        } else {
            dr_tape_clear(T);
            check(dr_inputs(T, n, in, x.data()), "inputs");
            f(x.data(), y.data(), n);
        }
        if (m == 1)
            check(dr_gradient(T, y[0], n, x.data(), g), "gradient");
        else
            check(dr_jacobian(T, m, y.data(), n, x.data(), g), "jacobian");
        bench_use(g);
    }
}

static std::vector<R> active(const dr_real *x, size_t n)
{
    std::vector<R> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = R(x[i]);
    return v;
}

static void p_mult(const dr_real *x, dr_real *y, size_t)
{
    y[0] = (R(x[0]) * R(x[1])).v;
}
static void p_dot(const dr_real *x, dr_real *y, size_t n)
{
    std::vector<R> v = active(x, n);
    y[0] = bench_dot(n / 2, v.data(), v.data() + n / 2).v;
}
static size_t summatvec_k;
static void p_summatvec(const dr_real *x, dr_real *y, size_t n)
{
    std::vector<R> v = active(x, n), rows(summatvec_k);
    size_t k = summatvec_k;
    y[0] = bench_summatvec(k, v.data(), v.data() + k * k, rows.data()).v;
}
static void p_rotate(const dr_real *x, dr_real *y, size_t n)
{
    std::vector<R> v = active(x, n);
    R o[3];
    bench_rotate(v.data(), o);
    for (int i = 0; i < 3; i++)
        y[i] = o[i].v;
}
static void p_neural(const dr_real *x, dr_real *y, size_t n)
{
    std::vector<R> v = active(x, n);
    y[0] = bench_neural(v.data()).v;
}
static void p_particles(const dr_real *x, dr_real *y, size_t n)
{
    std::vector<R> v = active(x, n);
    y[0] = bench_particles(v.data()).v;
}

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    const char *ms = getenv("REPLAY_BENCH_MODE");
    enum mode md = !ms || !*ms || !strcmp(ms, "replay") ? REPLAY
                   : !strcmp(ms, "record2")             ? RECORD2
                   : !strcmp(ms, "record1")             ? RECORD1
                                                        : (enum mode)-1;
    if ((int)md < 0) {
        fprintf(stderr, "dualrev-replay-bench: REPLAY_BENCH_MODE is replay, "
                        "record2 or record1\n");
        return 1;
    }
    T = dr_tape_new();
    if (!T)
        return 4;
    std::vector<double> in, g;
    size_t m = 1;
    program f = nullptr;
    switch (a.prog) {
    case P_FMULT:
        in = {3.0, 4.0};
        f = p_mult;
        break;
    case P_FDOTPROD:
        in.resize(2 * (size_t)a.size);
        bench_dot_inputs(a.size, in.data(), in.data() + a.size);
        f = p_dot;
        break;
    case P_FSUMMATVEC: {
        size_t k = (size_t)bench_summatvec_k(a.size);
        summatvec_k = k;
        in.resize(k * k + k);
        bench_summatvec_inputs((long)k, in.data(), in.data() + k * k);
        f = p_summatvec;
        break;
    }
    case P_FROTVECQUAT:
        in.assign(bench_rot_inputs, bench_rot_inputs + 7);
        f = p_rotate;
        m = 3;
        break;
    case P_FNEURAL:
        in.resize(NN_NPARAM);
        bench_neural_inputs(in.data());
        f = p_neural;
        break;
    case P_FPARTICLES:
    case P_FPARTICLES_FORK: /* the sequential program */
        in.resize(4 * PT_N);
        bench_particle_inputs(in.data());
        f = p_particles;
        break;
    default:
        fprintf(stderr, "dualrev-replay-bench: %s not implemented\n", argv[1]);
        return 2;
    }
    g.assign(m * in.size(), 0.0);
    run(md, f, in.size(), m, in.data(), g.data(), a.reps);
    double s = 0;
    for (double v : g)
        s += v;
    printf("%.10g\n", s);
    dr_tape_free(T);
    return 0;
}
