/*
 * fork_fold.c - the reverse pass of forked jobs whose work is a fold over
 * their own nodes (profiling aid, not run by the driver).
 *
 *     fork-fold <steps> <reps>
 *
 * Two jobs (dr_fork_run), each a recurrence w <- 0.9999 w started from the
 * one input, and a running sum acc <- w * w + acc over its steps: the
 * sweep of each job is a chain through its own adjoints, as a dot
 * product's sum is, and only its first node reads an ancestor's id.
 * BENCH_THREADS (default 1) is the tape's thread count.  Prints the
 * gradient, and on stderr the fastest of reps calls of dr_gradient (wall
 * time: at two threads the jobs are swept side by side).
 */
#include <dualrev.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct fold {
    long steps;
    dr_real x;
    dr_real out[2];
} fold;

static void fold_job(dr_tape *child, size_t i, void *ctx)
{
    fold *f = ctx;
    dr_real w = dr_mul(child, f->x, dr_const(1.0 + (double)i));
    dr_real acc = dr_const(0.0);
    for (long k = 0; k < f->steps; k++) {
        w = dr_mul(child, w, dr_const(0.9999));
        acc = dr_add(child, dr_mul(child, w, w), acc);
    }
    f->out[i] = acc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fork-fold <steps> <reps>\n");
        return 2;
    }
    fold f = {atol(argv[1]), {0.0, DR_NONE}, {{0.0, DR_NONE}, {0.0, DR_NONE}}};
    long reps = atol(argv[2]);
    const char *th = getenv("BENCH_THREADS");
    unsigned threads = th && *th ? (unsigned)atoi(th) : 1u;
    dr_tape *t = dr_tape_new();
    if (!t || f.steps < 1 || reps < 1 || dr_set_threads(t, threads) != DR_OK) {
        fprintf(stderr, "fork-fold: bad arguments or out of memory\n");
        return 3;
    }
    double best = 1e30, g = 0.0;
    for (long r = 0; r < reps; r++) {
        dr_tape_clear(t);
        f.x = dr_input(t, 0.5);
        dr_status st = dr_fork_run(t, 2, fold_job, &f);
        dr_real y = dr_add(t, f.out[0], f.out[1]);
        double t0 = now();
        if (st == DR_OK)
            st = dr_gradient(t, y, 1, &f.x, &g);
        double t1 = now();
        if (st != DR_OK) {
            fprintf(stderr, "fork-fold: %s\n", dr_strerror(st));
            return 4;
        }
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    fprintf(stderr, "fork-fold, %u thread%s: fastest gradient %.1f us\n",
            threads, threads == 1 ? "" : "s", best * 1e6);
    printf("%.10g\n", g);
    dr_tape_free(t);
    return 0;
}
