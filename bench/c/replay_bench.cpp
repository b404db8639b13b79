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
 *   replay-only  dr_replay alone (checksum: the output's new value)
 *   grad2    the gradient alone, on a tape recorded once at order 2
 *   hvp      one dr_hvp on the same tape, in the direction 1 / (1 + i)
 *            (checksum: the product's sum): second order against grad2
 * Checksum: the sum of the gradient (Jacobian) entries of the last rep, as
 * every executable of the suite prints it.
 *
 * fparticles-fork is fparticles with each particle a job of dr_fork_run
 * (as fparticles-par records it, here op by op), on BENCH_THREADS threads
 * (1 or 2, default 1): the replay runs the jobs side by side on the
 * tape's pool with 2.
 *
 * fparticles-stmt (a name of its own, size ignored) is fparticles with each
 * assignment of a step one statement that replays (dr_record_statement).
 *
 * Array programs (names of their own, size ignored): nn784, the
 * 784-300-100-10 network of nn_array_bench.c on a batch of 64 (three
 * dgemm layers, relu, softmax cross-entropy), and nn-fneural, fneural's
 * network with array operations; the parameters are borrowed inputs
 * (dr_arr_input_ref) read where they lie, and the gradient is with respect
 * to all of them.  replay: dr_replay_arrays with every parameter array
 * (the same memory) and the gradient; record2 / record1: a fresh recording
 * and the gradient, as nn-array-bench.
 */
#include "bench_common.h"

#include <dualrev.h>

#include <vector>

/* the handle the operations record on: the root's, or in a job of
   fparticles-fork the job's own (on the thread that runs it) */
static thread_local dr_tape *T;

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

enum mode { REPLAY, RECORD2, RECORD1, REPLAY_ONLY, GRAD2, HVP };

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "dualrev-replay-bench: %s: %s\n", what, dr_strerror(st));
        exit(4);
    }
}

/* the checksum every executable of the suite prints (the sum of the last
   repetition's gradient or Jacobian), and the tape freed; main's answer */
static int finish(const std::vector<double> &g)
{
    double s = 0;
    for (double v : g)
        s += v;
    printf("%.10g\n", s);
    dr_tape_free(T);
    return 0;
}

/* the program as a function of its inputs: records its outputs y */
typedef void (*program)(const dr_real *x, dr_real *y, size_t n);

/* one measured unit per repetition, in the mode asked for; g receives the
   gradient (m == 1) or the m x n Jacobian */
static void run(enum mode md, program f, size_t n, size_t m, double *in,
                double *g, long reps)
{
    std::vector<dr_real> x(n), y(m);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = 1.0 / (1.0 + (double)i);
    bool once = md == GRAD2 || md == HVP; /* the tape recorded once */
    if (md == HVP && m != 1) {
        fprintf(stderr, "dualrev-replay-bench: hvp is for programs of one output\n");
        exit(1);
    }
    if (md == REPLAY || md == REPLAY_ONLY || once) {
        check(dr_tape_set_order(T, 2), "order");
        check(dr_inputs(T, n, in, x.data()), "inputs");
        f(x.data(), y.data(), n);
        check(dr_tape_status(T), "recording");
    } else {
        check(dr_tape_set_order(T, md == RECORD2 ? 2 : 1), "order");
    }
    for (long r = 0; r < reps; r++) {
        bench_clobber(in);
        if (md == HVP) {
            check(dr_hvp(T, y[0], n, x.data(), v.data(), g), "hvp");
            bench_use(g);
            continue;
        }
        if (md == REPLAY || md == REPLAY_ONLY) {
            check(dr_replay(T, n, x.data(), in), "replay");
            if (md == REPLAY_ONLY) {
                check(dr_value(T, y[0].idx, g), "value");
                continue;
            }
        } else if (!once) {
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

/* a particle as a job on its child handle, on any thread */
static void particle_job(dr_tape *child, size_t i, void *ctx)
{
    dr_tape *root = T;
    T = child;
    R *s = static_cast<R *>(ctx);
    s[4 * i] = bench_particle(s + 4 * i);
    T = root;
}
static void p_particles_fork(const dr_real *x, dr_real *y, size_t n)
{
    std::vector<R> v = active(x, n);
    check(dr_fork_run(T, PT_N, particle_job, v.data()), "dr_fork_run");
    R acc = 0.0;
    for (int i = PT_N; i-- > 0;)
        acc = v[4 * i] + acc;
    y[0] = acc.v;
}

/* fparticles-stmt: fparticles with each assignment of a step one
   statement that replays (dr_record_statement), the arithmetic of
   bench_particle in C: p' = p + dt v over {p, v}, v' = v + dt (-0.5 p -
   0.2 v) over {v, p} (four nodes a step, as dualrev-bench's dr_rec_stmt
   version, which does not replay) */
static double step_p(const void *, size_t, const double *x, double *d)
{
    d[0] = 1.0;
    d[1] = PT_DT;
    return x[0] + PT_DT * x[1];
}
static double step_v(const void *, size_t, const double *x, double *d)
{
    d[0] = 1.0 + PT_DT * -0.2;
    d[1] = PT_DT * -0.5;
    return x[0] + PT_DT * (-0.5 * x[1] + -0.2 * x[0]);
}
static dr_real statement(dr_statement_fn f, dr_real a, dr_real b)
{
    dr_real x[2] = {a, b};
    return dr_record_statement(T, f, nullptr, 2, x);
}
static void p_particles_stmt(const dr_real *x, dr_real *y, size_t)
{
    dr_real fin[PT_N];
    for (int i = 0; i < PT_N; i++) {
        dr_real px = x[4 * i], py = x[4 * i + 1], vx = x[4 * i + 2],
                vy = x[4 * i + 3];
        for (int k = 0; k < PT_STEPS; k++) {
            dr_real npx = statement(step_p, px, vx);
            dr_real npy = statement(step_p, py, vy);
            vx = statement(step_v, vx, px);
            vy = statement(step_v, vy, py);
            px = npx;
            py = npy;
        }
        fin[i] = dr_mul(T, px, py);
    }
    dr_real acc = dr_const(0.0);
    for (int i = PT_N; i-- > 0;)
        acc = dr_add(T, fin[i], acc);
    y[0] = acc;
}

/* ---------------------------------------------------- array programs */

enum { NB = NN784_B, L0 = NN784_L0, L1 = NN784_L1, L2 = NN784_L2, L3 = NN784_L3 };

/* an array network: its parameters (borrowed) and its loss */
struct arr_net {
    int nparam;
    dr_arr param[6];
    dr_real loss;
};

static void record_nn784(const double *p, const double *X, const double *Y,
                         arr_net *net)
{
    const int dims[4] = {L0, L1, L2, L3};
    dr_arr a = dr_arr_const_ref(T, 2, NB, L0, X);
    dr_arr y = dr_arr_const_ref(T, 2, NB, L3, Y);
    net->nparam = 6;
    for (int l = 0; l < 3; l++) {
        dr_arr w = dr_arr_input_ref(T, 2, dims[l], dims[l + 1], p);
        p += dims[l] * dims[l + 1];
        dr_arr c = dr_arr_input_ref(T, 1, dims[l + 1], 1, p);
        p += dims[l + 1];
        net->param[2 * l] = w;
        net->param[2 * l + 1] = c;
        a = dr_arr_add_rowvec(T, dr_arr_matmul(T, a, 0, w, 0), c);
        if (l < 2)
            a = dr_arr_map(T, DR_FN_RELU, a);
    }
    dr_real lse = dr_arr_sum(T, dr_arr_logsumexp_rows(T, a));
    net->loss = dr_mul(T, dr_sub(T, lse, dr_arr_dot(T, y, a)),
                       dr_const(1.0 / NB));
}

static void record_fneural(const double *pv, arr_net *net)
{
    const double *w1 = pv, *b1 = w1 + NN_H1 * NN_IN, *w2 = b1 + NN_H1,
                 *b2 = w2 + NN_H2 * NN_H1, *in = b2 + NN_H2;
    dr_arr W1 = dr_arr_input_ref(T, 2, NN_H1, NN_IN, w1);
    dr_arr B1 = dr_arr_input_ref(T, 1, NN_H1, 1, b1);
    dr_arr W2 = dr_arr_input_ref(T, 2, NN_H2, NN_H1, w2);
    dr_arr B2 = dr_arr_input_ref(T, 1, NN_H2, 1, b2);
    dr_arr X = dr_arr_input_ref(T, 1, NN_IN, 1, in);
    dr_arr h1 = dr_arr_map(T, DR_FN_RELU, dr_arr_add(T, dr_arr_matvec(T, W1, X), B1));
    dr_arr h2 = dr_arr_map(T, DR_FN_RELU, dr_arr_add(T, dr_arr_matvec(T, W2, h1), B2));
    net->loss = dr_arr_sum(T, dr_arr_softmax(T, h2));
    net->nparam = 5;
    const dr_arr ps[5] = {W1, B1, W2, B2, X};
    for (int i = 0; i < 5; i++)
        net->param[i] = ps[i];
}

static void arr_gradient(const arr_net *net, double *g)
{
    check(dr_adjoints_clear(T), "clear");
    check(dr_seed(T, net->loss.idx, 1.0), "seed");
    check(dr_reverse(T), "reverse");
    for (int k = 0; k < net->nparam; k++) {
        check(dr_arr_adjoint(T, net->param[k].idx, g), "adjoint");
        g += net->param[k].rows * net->param[k].cols;
    }
}

static int run_arrays(const char *name, enum mode md, long reps)
{
    bool nn784 = !strcmp(name, "nn784");
    size_t np = nn784 ? (size_t)(L0 * L1 + L1 + L1 * L2 + L2 + L2 * L3 + L3)
                      : (size_t)NN_NPARAM;
    std::vector<double> p(np), X(NB * L0), Y(NB * L3), g(np);
    if (nn784)
        bench_nn784_inputs(p.data(), X.data(), Y.data());
    else
        bench_neural_inputs(p.data());
    arr_net net;
    auto record = [&]() {
        if (nn784)
            record_nn784(p.data(), X.data(), Y.data(), &net);
        else
            record_fneural(p.data(), &net);
        check(dr_tape_status(T), "recording");
    };
    check(dr_tape_set_order(T, md == RECORD1 ? 1 : 2), "order");
    if (md == REPLAY)
        record();
    const double *vals[6];
    for (long r = 0; r < reps; r++) {
        bench_clobber(p.data());
        if (md == REPLAY) {
            for (int k = 0; k < net.nparam; k++)
                vals[k] = net.param[k].val;
            check(dr_replay_arrays(T, 0, nullptr, nullptr, (size_t)net.nparam,
                                   net.param, vals),
                  "replay");
        } else {
            dr_tape_clear(T);
            record();
        }
        arr_gradient(&net, g.data());
        bench_use(g.data());
    }
    return finish(g);
}

int main(int argc, char **argv)
{
    const char *ms = getenv("REPLAY_BENCH_MODE");
    enum mode md = !ms || !*ms || !strcmp(ms, "replay") ? REPLAY
                   : !strcmp(ms, "record2")             ? RECORD2
                   : !strcmp(ms, "record1")             ? RECORD1
                   : !strcmp(ms, "replay-only")         ? REPLAY_ONLY
                   : !strcmp(ms, "grad2")               ? GRAD2
                   : !strcmp(ms, "hvp")                 ? HVP
                                                        : (enum mode)-1;
    if ((int)md < 0) {
        fprintf(stderr, "dualrev-replay-bench: REPLAY_BENCH_MODE is replay, "
                        "replay-only, record2, record1, grad2 or hvp\n");
        return 1;
    }
    T = dr_tape_new();
    if (!T)
        return 4;
    if (argc >= 4 && (!strcmp(argv[1], "nn784") || !strcmp(argv[1], "nn-fneural"))) {
        if (md == REPLAY_ONLY || md == GRAD2 || md == HVP) {
            fprintf(stderr, "dualrev-replay-bench: replay-only, grad2 and hvp "
                            "are for the scalar programs\n");
            return 1;
        }
        return run_arrays(argv[1], md, atol(argv[3]));
    }
    if (argc >= 4 && !strcmp(argv[1], "fparticles-stmt")) {
        std::vector<double> in(4 * PT_N), g(4 * PT_N, 0.0);
        bench_particle_inputs(in.data());
        run(md, p_particles_stmt, in.size(), 1, in.data(), g.data(),
            atol(argv[3]));
        return finish(g);
    }
    bench_args a = bench_parse(argc, argv);
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
        in.resize(4 * PT_N);
        bench_particle_inputs(in.data());
        f = p_particles;
        break;
    case P_FPARTICLES_FORK:
        in.resize(4 * PT_N);
        bench_particle_inputs(in.data());
        f = p_particles_fork;
        check(dr_set_threads(T, (unsigned)a.threads), "dr_set_threads");
        break;
    default:
        fprintf(stderr, "dualrev-replay-bench: %s not implemented\n", argv[1]);
        return 2;
    }
    g.assign(m * in.size(), 0.0);
    run(md, f, in.size(), m, in.data(), g.data(), a.reps);
    return finish(g);
}
