/*
 * nn_array_bench.c - dense networks written with dualrev's array operations
 * (one tape node per array operation, OpenBLAS kernels), and, compiled with
 * -DNN_PRIMAL, the primal-only version of the same programs using the same
 * BLAS calls and no tape.
 *
 *     nn-array-bench  <program> <size> <reps>     gradient (dualrev arrays)
 *     nn-primal-bench <program> <size> <reps>     primal only
 *
 * Programs (size is ignored):
 *   fneural  the benchmark of ../shared/benchmarks.md (50 -> 100 -> 50, relu,
 *            safe softmax, sum of the outputs) with matrix-vector products;
 *            one gradient with respect to all weights, biases and the input.
 *            The checksum is the sum of all gradient entries, comparable with
 *            dualrev-bench's scalar fneural (both are rounding noise around
 *            0, since the output is identically 1).
 *   nn784    784 -> 300 -> 100 -> 10, relu hidden layers, softmax
 *            cross-entropy averaged over a batch of 64 inputs, the batch as
 *            matrix-matrix products (dgemm); one gradient with respect to all
 *            weights and biases.  Checksum: the sum of all gradient entries
 *            (the primal: the loss).
 *   nn784-split  nn784 with the batch split into BENCH_JOBS (default 2, a
 *            divisor of 64) parts of equal rows, each recorded in its own
 *            job (dr_fork_run) and the jobs swept in parallel, on
 *            BENCH_THREADS threads (default 2).  The same gradient to
 *            rounding; nn-primal-bench runs nn784 for it.
 *   nn784-grad2, nn784-hvp  (dualrev only) nn784 recorded once at order 2,
 *            then per repetition a gradient (seed, sweep, read) or a
 *            Hessian-vector product in a fixed direction (dr_hvp, the
 *            parameters' tangents seeded once, read with dr_arr_hvp).
 *            Checksum: the sum of the gradient or of H v.
 *   nn784-rechvp  as nn784-hvp, recorded (order 2) at every repetition.
 * With BENCH_TIMING=1, nn784 and nn784-split print on stderr the fastest
 * repetition (record, sweep and read of the gradient).
 * Any other program name exits with status 2.  OpenBLAS threads follow
 * OPENBLAS_NUM_THREADS.
 */
#include "bench_common.h"

#include <cblas.h>
#include <stdbool.h>
#include <time.h>

#ifndef NN_PRIMAL
#include "dualrev.h"
static dr_tape *T;

/* BENCH_TIMING: the fastest repetition, and the fastest recording and
   sweep (seed to the read of the gradient) of any, printed on stderr at
   the end */
static double rep_best = 1e30, rec_best = 1e30, sweep_best = 1e30, rep_t0,
              rep_t1;
static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void rep_begin(void) { rep_t0 = wall_now(); }
static void rep_recorded(void) { rep_t1 = wall_now(); }
static void rep_end(void)
{
    double t2 = wall_now(), d = t2 - rep_t0;
    rep_best = d < rep_best ? d : rep_best;
    rec_best = rep_t1 - rep_t0 < rec_best ? rep_t1 - rep_t0 : rec_best;
    sweep_best = t2 - rep_t1 < sweep_best ? t2 - rep_t1 : sweep_best;
}
static void rep_report(const char *what)
{
    const char *e = getenv("BENCH_TIMING");
    if (e && *e && *e != '0')
        fprintf(stderr, "%s: fastest repetition %.1f us (record %.1f us, sweep %.1f us)\n",
                what, rep_best * 1e6, rec_best * 1e6, sweep_best * 1e6);
}

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "nn-array-bench: %s: %s\n", what, dr_strerror(st));
        exit(3);
    }
}
#endif

/* ----------------------------------------------------------- fneural */

#ifdef NN_PRIMAL
static void relu_bias(int n, double *y, const double *b)
{
    for (int i = 0; i < n; i++) {
        double v = y[i] + b[i];
        y[i] = v > 0 ? v : 0.0;
    }
}
#endif

static double run_fneural(long reps)
{
    double pv[NN_NPARAM];
    bench_neural_inputs(pv);
    const double *w1 = pv, *b1 = w1 + NN_H1 * NN_IN, *w2 = b1 + NN_H1,
                 *b2 = w2 + NN_H2 * NN_H1, *in = b2 + NN_H2;
#ifdef NN_PRIMAL
    double h1[NN_H1], h2[NN_H2], y = 0.0;
    for (long r = 0; r < reps; r++) {
        bench_clobber(pv);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, NN_H1, NN_IN, 1.0, w1, NN_IN,
                    in, 1, 0.0, h1, 1);
        relu_bias(NN_H1, h1, b1);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, NN_H2, NN_H1, 1.0, w2, NN_H1,
                    h1, 1, 0.0, h2, 1);
        relu_bias(NN_H2, h2, b2);
        double m = 0.0, s = 0.0; /* running maximum started at 0 */
        for (int i = 0; i < NN_H2; i++)
            m = h2[i] > m ? h2[i] : m;
        for (int i = 0; i < NN_H2; i++)
            s += (h2[i] = exp(h2[i] - m));
        y = 0.0;
        for (int i = 0; i < NN_H2; i++)
            y += h2[i] / s;
        bench_use(y);
    }
    return y;
#else
    double g[NN_NPARAM] = {0};
    for (long r = 0; r < reps; r++) {
        bench_clobber(pv);
        check(dr_tape_clear(T), "clear");
        /* the data stays in place (borrowed, as the primal reads it) */
        dr_arr W1 = dr_arr_input_ref(T, 2, NN_H1, NN_IN, w1);
        dr_arr B1 = dr_arr_input_ref(T, 1, NN_H1, 1, b1);
        dr_arr W2 = dr_arr_input_ref(T, 2, NN_H2, NN_H1, w2);
        dr_arr B2 = dr_arr_input_ref(T, 1, NN_H2, 1, b2);
        dr_arr X = dr_arr_input_ref(T, 1, NN_IN, 1, in);
        dr_arr h1 = dr_arr_map(T, DR_FN_RELU,
                               dr_arr_add(T, dr_arr_matvec(T, W1, X), B1));
        dr_arr h2 = dr_arr_map(T, DR_FN_RELU,
                               dr_arr_add(T, dr_arr_matvec(T, W2, h1), B2));
        /* softmax subtracts the maximum (>= 0 after relu, so the same as a
           running maximum started at 0) */
        dr_real y = dr_arr_sum(T, dr_arr_softmax(T, h2));
        check(dr_tape_status(T), "record");
        check(dr_seed(T, y.idx, 1.0), "seed");
        check(dr_reverse(T), "reverse");
        double *q = g;
        check(dr_arr_adjoint(T, W1.idx, q), "adjoint");
        q += NN_H1 * NN_IN;
        check(dr_arr_adjoint(T, B1.idx, q), "adjoint");
        q += NN_H1;
        check(dr_arr_adjoint(T, W2.idx, q), "adjoint");
        q += NN_H2 * NN_H1;
        check(dr_arr_adjoint(T, B2.idx, q), "adjoint");
        q += NN_H2;
        check(dr_arr_adjoint(T, X.idx, q), "adjoint");
        bench_use(g);
    }
    double s = 0.0;
    for (int i = 0; i < NN_NPARAM; i++)
        s += g[i];
    return s;
#endif
}

/* ------------------------------------------------------------- nn784 */

enum { B = NN784_B, L0 = NN784_L0, L1 = NN784_L1, L2 = NN784_L2, L3 = NN784_L3 };
#define N784 NN784_NPARAM

#ifdef NN_PRIMAL
/* y (B x n) = relu(x (B x k) W (k x n) + b) via dgemm; last: no relu */
static void dense(int k, int n, const double *x, const double *W,
                  const double *b, double *y, int relu)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, n, k, 1.0, x, k,
                W, n, 0.0, y, n);
    for (int r = 0; r < B; r++)
        for (int j = 0; j < n; j++) {
            double v = y[r * n + j] + b[j];
            y[r * n + j] = relu && v < 0 ? 0.0 : v;
        }
}
#endif

#ifndef NN_PRIMAL
/* nn784's loss on T (cleared) for the parameters p and batch X, Y, its six
   parameter arrays in ps */
static dr_real record_nn784(const double *p, const double *X, const double *Y,
                            dr_arr ps[6])
{
    const double *W1 = p, *b1 = W1 + L0 * L1, *W2 = b1 + L1,
                 *b2 = W2 + L1 * L2, *W3 = b2 + L2, *b3 = W3 + L2 * L3;
    check(dr_tape_clear(T), "clear");
    /* the data stays in place (borrowed, as the primal reads it) */
    dr_arr x = dr_arr_const_ref(T, 2, B, L0, X);
    dr_arr y = dr_arr_const_ref(T, 2, B, L3, Y);
    dr_arr w1 = dr_arr_input_ref(T, 2, L0, L1, W1);
    dr_arr c1 = dr_arr_input_ref(T, 1, L1, 1, b1);
    dr_arr w2 = dr_arr_input_ref(T, 2, L1, L2, W2);
    dr_arr c2 = dr_arr_input_ref(T, 1, L2, 1, b2);
    dr_arr w3 = dr_arr_input_ref(T, 2, L2, L3, W3);
    dr_arr c3 = dr_arr_input_ref(T, 1, L3, 1, b3);
    dr_arr h1 = dr_arr_map(T, DR_FN_RELU,
                           dr_arr_add_rowvec(T, dr_arr_matmul(T, x, 0, w1, 0), c1));
    dr_arr h2 = dr_arr_map(T, DR_FN_RELU,
                           dr_arr_add_rowvec(T, dr_arr_matmul(T, h1, 0, w2, 0), c2));
    dr_arr z = dr_arr_add_rowvec(T, dr_arr_matmul(T, h2, 0, w3, 0), c3);
    dr_real lse = dr_arr_sum(T, dr_arr_logsumexp_rows(T, z));
    dr_real loss = dr_mul(T, dr_sub(T, lse, dr_arr_dot(T, y, z)),
                          dr_const(1.0 / B));
    check(dr_tape_status(T), "record");
    const dr_arr all[6] = {w1, c1, w2, c2, w3, c3};
    memcpy(ps, all, sizeof all);
    return loss;
}

/* the six parameter arrays' adjoints (what = "adjoint") or Hessian-vector
   products into g, in order */
static void read_params(const dr_arr ps[6], double *g, bool hvp)
{
    for (int k = 0; k < 6; k++) {
        check(hvp ? dr_arr_hvp(T, ps[k].idx, g) : dr_arr_adjoint(T, ps[k].idx, g),
              hvp ? "hvp" : "adjoint");
        g += ps[k].rows * ps[k].cols;
    }
}

/*
 * nn784-grad2 and nn784-hvp: the tape recorded once at order 2, then per
 * repetition one gradient (seed, sweep, read) or one Hessian-vector
 * product in a fixed direction (dr_hvp over the parameters' tangent
 * seeds, read): what a product costs against a gradient.
 */
static double run_nn784_second(long reps, bool hvp, bool rec)
{
    double *p = bench_xmalloc(sizeof(double) * N784);
    double *X = bench_xmalloc(sizeof(double) * B * L0);
    double Y[B * L3];
    bench_nn784_inputs(p, X, Y);
    double *g = bench_xmalloc(sizeof(double) * N784);
    double *v = bench_xmalloc(sizeof(double) * N784);
    for (int i = 0; i < N784; i++)
        v[i] = sin(0.37 * i);
    check(dr_tape_set_order(T, 2), "order");
    dr_arr ps[6];
    dr_real loss;
    for (long r = 0; r < reps; r++) {
        bench_clobber(p);
        if (r == 0 || rec) {
            loss = record_nn784(p, X, Y, ps);
            const double *q = v;
            for (int k = 0; hvp && k < 6; k++) {
                check(dr_arr_tangent_seed(T, ps[k].idx, q), "tangent seed");
                q += ps[k].rows * ps[k].cols;
            }
        }
        if (hvp) {
            check(dr_hvp(T, loss, 0, NULL, NULL, NULL), "hvp");
        } else {
            check(dr_adjoints_clear(T), "clear adjoints");
            check(dr_seed(T, loss.idx, 1.0), "seed");
            check(dr_reverse(T), "reverse");
        }
        read_params(ps, g, hvp);
        bench_use(g);
    }
    double result = 0.0;
    for (int i = 0; i < N784; i++)
        result += g[i];
    free(g);
    free(v);
    free(p);
    free(X);
    return result;
}
#endif

static double run_nn784(long reps)
{
    double *p = bench_xmalloc(sizeof(double) * N784);
    double *X = bench_xmalloc(sizeof(double) * B * L0);
    double Y[B * L3];
    bench_nn784_inputs(p, X, Y);
    double result = 0.0;
#ifdef NN_PRIMAL
    const double *W1 = p, *b1 = W1 + L0 * L1, *W2 = b1 + L1,
                 *b2 = W2 + L1 * L2, *W3 = b2 + L2, *b3 = W3 + L2 * L3;
    double *h1 = bench_xmalloc(sizeof(double) * B * L1);
    double *h2 = bench_xmalloc(sizeof(double) * B * L2);
    double z[B * L3];
    for (long r = 0; r < reps; r++) {
        bench_clobber(p);
        bench_clobber(X);
        dense(L0, L1, X, W1, b1, h1, 1);
        dense(L1, L2, h1, W2, b2, h2, 1);
        dense(L2, L3, h2, W3, b3, z, 0);
        /* mean over the batch of logsumexp(z_b) - <y_b, z_b> */
        double loss = 0.0;
        for (int b = 0; b < B; b++) {
            const double *zb = z + b * L3;
            double m = zb[0], s = 0.0;
            for (int j = 1; j < L3; j++)
                m = zb[j] > m ? zb[j] : m;
            for (int j = 0; j < L3; j++)
                s += exp(zb[j] - m);
            loss += m + log(s);
        }
        loss -= cblas_ddot(B * L3, Y, 1, z, 1);
        result = loss / B;
        bench_use(result);
    }
    free(h1);
    free(h2);
#else
    double *g = bench_xmalloc(sizeof(double) * N784);
    for (long r = 0; r < reps; r++) {
        rep_begin();
        bench_clobber(p);
        bench_clobber(X);
        dr_arr ps[6];
        dr_real loss = record_nn784(p, X, Y, ps);
        rep_recorded();
        check(dr_seed(T, loss.idx, 1.0), "seed");
        check(dr_reverse(T), "reverse");
        read_params(ps, g, false);
        bench_use(g);
        rep_end();
    }
    rep_report("nn784");
    for (int i = 0; i < N784; i++)
        result += g[i];
    free(g);
#endif
    free(p);
    free(X);
    return result;
}

#ifndef NN_PRIMAL
/* nn784-split: the parameters are the parent's arrays; job i takes rows
   i*H .. (i+1)*H-1 of the batch, H = B / jobs, and leaves its share of the
   loss in out[i] */
typedef struct split_job {
    const double *X, *Y;
    int H;
    dr_arr w[3], c[3];
    dr_real out[B];
} split_job;

static void nn784_part(dr_tape *t, size_t i, void *ctx)
{
    split_job *j = ctx;
    const int H = j->H;
    dr_arr a = dr_arr_const_ref(t, 2, H, L0, j->X + i * H * L0);
    dr_arr y = dr_arr_const_ref(t, 2, H, L3, j->Y + i * H * L3);
    for (int l = 0; l < 3; l++) {
        a = dr_arr_add_rowvec(t, dr_arr_matmul(t, a, 0, j->w[l], 0), j->c[l]);
        if (l < 2)
            a = dr_arr_map(t, DR_FN_RELU, a);
    }
    dr_real lse = dr_arr_sum(t, dr_arr_logsumexp_rows(t, a));
    j->out[i] = dr_mul(t, dr_sub(t, lse, dr_arr_dot(t, y, a)),
                       dr_const(1.0 / B));
}

static double run_nn784_split(long reps)
{
    double *p = bench_xmalloc(sizeof(double) * N784);
    double *X = bench_xmalloc(sizeof(double) * B * L0);
    double Y[B * L3];
    bench_nn784_inputs(p, X, Y);
    const char *env = getenv("BENCH_THREADS");
    check(dr_set_threads(T, env ? (unsigned)atoi(env) : 2u), "dr_set_threads");
    const char *je = getenv("BENCH_JOBS");
    int jobs = je && *je ? atoi(je) : 2;
    if (jobs < 1 || jobs > B || B % jobs != 0) {
        fprintf(stderr, "nn-array-bench: BENCH_JOBS must divide %d\n", B);
        exit(2);
    }
    const int dims[4] = {L0, L1, L2, L3};
    double *g = bench_xmalloc(sizeof(double) * N784);
    for (long r = 0; r < reps; r++) {
        rep_begin();
        bench_clobber(p);
        bench_clobber(X);
        check(dr_tape_clear(T), "clear");
        split_job j;
        memset(&j, 0, sizeof j);
        j.X = X;
        j.Y = Y;
        const double *q = p;
        for (int l = 0; l < 3; l++) {
            j.w[l] = dr_arr_input_ref(T, 2, dims[l], dims[l + 1], q);
            q += dims[l] * dims[l + 1];
            j.c[l] = dr_arr_input_ref(T, 1, dims[l + 1], 1, q);
            q += dims[l + 1];
        }
        j.H = B / jobs;
        check(dr_fork_run(T, (size_t)jobs, nn784_part, &j), "fork_run");
        dr_real loss = dr_sumn(T, (size_t)jobs, j.out);
        check(dr_tape_status(T), "record");
        rep_recorded();
        check(dr_seed(T, loss.idx, 1.0), "seed");
        check(dr_reverse(T), "reverse");
        double *o = g;
        for (int l = 0; l < 3; l++) {
            check(dr_arr_adjoint(T, j.w[l].idx, o), "adjoint");
            o += dims[l] * dims[l + 1];
            check(dr_arr_adjoint(T, j.c[l].idx, o), "adjoint");
            o += dims[l + 1];
        }
        bench_use(g);
        rep_end();
    }
    rep_report("nn784-split");
    double result = 0.0;
    for (int i = 0; i < N784; i++)
        result += g[i];
    free(g);
    free(p);
    free(X);
    return result;
}
#endif

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s fneural|nn784|nn784-split|nn784-grad2|nn784-hvp"
                        "|nn784-rechvp <size> <reps>\n", argv[0]);
        return 1;
    }
    char *end;
    long reps = strtol(argv[3], &end, 10);
    if (*end || reps < 0) {
        fprintf(stderr, "%s: bad reps '%s'\n", argv[0], argv[3]);
        return 1;
    }
    int prog = strcmp(argv[1], "fneural") == 0       ? 0
               : strcmp(argv[1], "nn784") == 0       ? 1
               : strcmp(argv[1], "nn784-split") == 0 ? 2
               : strcmp(argv[1], "nn784-grad2") == 0 ? 3
               : strcmp(argv[1], "nn784-hvp") == 0   ? 4
               : strcmp(argv[1], "nn784-rechvp") == 0 ? 5
                                                     : -1;
#ifdef NN_PRIMAL
    if (prog == 2)
        prog = 1; /* the primal has nothing to split */
    if (prog > 2)
        prog = -1;
#endif
    if (prog < 0) {
        fprintf(stderr, "%s: unknown program '%s'\n", argv[0], argv[1]);
        return 2;
    }
#ifndef NN_PRIMAL
    T = dr_tape_new();
    if (!T) {
        fprintf(stderr, "nn-array-bench: out of memory\n");
        return 3;
    }
#endif
#ifdef NN_PRIMAL
    double c = prog == 0 ? run_fneural(reps) : run_nn784(reps);
#else
    double c = prog == 0   ? run_fneural(reps)
               : prog == 1 ? run_nn784(reps)
               : prog == 2 ? run_nn784_split(reps)
                           : run_nn784_second(reps, prog >= 4, prog == 5);
#endif
    printf("%.10g\n", c);
#ifndef NN_PRIMAL
    dr_tape_free(T);
#endif
    return 0;
}
