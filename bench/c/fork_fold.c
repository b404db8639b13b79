/*
 * fork_fold.c - the reverse pass of forked jobs whose work is a fold
 * (profiling aid, not run by the driver).
 *
 *     fork-fold <steps> <reps> [own|shared]
 *
 * Two jobs (dr_fork_run), each a chain of `steps` steps.  own (the
 * default): a recurrence w <- 0.9999 w started from the one input, and a
 * running sum acc <- w * w + acc, so the sweep of each job is a chain
 * through its own adjoints (as a dot product's sum is) and only its first
 * node reads an ancestor's id.  shared: s <- w[k mod 8] * sin(s) + 0.1,
 * with w eight inputs both jobs read at every step (weights shared by the
 * jobs of a split batch), so each step adds into an ancestor's adjoint.
 * BENCH_THREADS (default 1) is the tape's thread count.  Prints the sum of
 * the gradient, and on stderr the fastest of reps calls of dr_gradient
 * (wall time: at two threads the jobs are swept side by side).
 */
#include <dualrev.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NW 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct fold {
    long steps;
    dr_real w[NW]; /* the inputs (own: only w[0]) */
    dr_real out[2];
} fold;

static void own_job(dr_tape *child, size_t i, void *ctx)
{
    fold *f = ctx;
    dr_real w = dr_mul(child, f->w[0], dr_const(1.0 + (double)i));
    dr_real acc = dr_const(0.0);
    for (long k = 0; k < f->steps; k++) {
        w = dr_mul(child, w, dr_const(0.9999));
        acc = dr_add(child, dr_mul(child, w, w), acc);
    }
    f->out[i] = acc;
}

static void shared_job(dr_tape *child, size_t i, void *ctx)
{
    fold *f = ctx;
    dr_real s = dr_const(0.3 + (double)i);
    for (long k = 0; k < f->steps; k++)
        s = dr_add(child, dr_mul(child, f->w[k % NW], dr_sin(child, s)),
                   dr_const(0.1));
    f->out[i] = s;
}

int main(int argc, char **argv)
{
    bool shared = argc > 3 && strcmp(argv[3], "shared") == 0;
    if (argc < 3 || (argc > 3 && !shared && strcmp(argv[3], "own") != 0)) {
        fprintf(stderr, "usage: fork-fold <steps> <reps> [own|shared]\n");
        return 2;
    }
    fold f;
    memset(&f, 0, sizeof f);
    f.steps = atol(argv[1]);
    long reps = atol(argv[2]);
    int nin = shared ? NW : 1;
    const char *th = getenv("BENCH_THREADS");
    unsigned threads = th && *th ? (unsigned)atoi(th) : 1u;
    dr_tape *t = dr_tape_new();
    if (!t || f.steps < 1 || reps < 1 || dr_set_threads(t, threads) != DR_OK) {
        fprintf(stderr, "fork-fold: bad arguments or out of memory\n");
        return 3;
    }
    double best = 1e30, g[NW] = {0};
    for (long r = 0; r < reps; r++) {
        dr_tape_clear(t);
        for (int k = 0; k < nin; k++)
            f.w[k] = dr_input(t, shared ? 0.9 + 0.01 * k : 0.5);
        dr_status st =
            dr_fork_run(t, 2, shared ? shared_job : own_job, &f);
        dr_real y = dr_add(t, f.out[0], f.out[1]);
        double t0 = now();
        if (st == DR_OK)
            st = dr_gradient(t, y, (size_t)nin, f.w, g);
        double t1 = now();
        if (st != DR_OK) {
            fprintf(stderr, "fork-fold: %s\n", dr_strerror(st));
            return 4;
        }
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    double sum = 0.0;
    for (int k = 0; k < nin; k++)
        sum += g[k];
    fprintf(stderr, "fork-fold %s, %u thread%s: fastest gradient %.1f us\n",
            shared ? "shared" : "own", threads, threads == 1 ? "" : "s",
            best * 1e6);
    printf("%.17g\n", sum);
    dr_tape_free(t);
    return 0;
}
