/*
 * fparticles_par_seqmicro.c - microbenchmark of the sequential fast path,
 * used to check that fork-join support (cbits/jobs/) does not slow down
 * programs that never fork: records N scalar nodes (a mix of unary and binary
 * operations) on one tape, seeds, sweeps once, and repeats after a clear.
 *
 *   fparticles_par_seqmicro [nodes=10000000] [reps=5]
 *
 * Prints a checksum (a gradient entry) so the work cannot be optimised away,
 * and on stderr the fastest repetition's recording and sweep times (the
 * first repetition, which allocates, is not counted when reps > 1), in
 * thread CPU time.
 */
#include <dualrev.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* thread CPU time: time the process was not running (a busy machine) does
   not count; set SEQMICRO_WALL=1 for wall-clock time */
static clockid_t clk = CLOCK_THREAD_CPUTIME_ID;

static double now(void)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000L;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    const char *w = getenv("SEQMICRO_WALL");
    if (w && *w && *w != '0')
        clk = CLOCK_MONOTONIC;
    dr_tape *t = dr_tape_new();
    if (!t)
        return 1;
    double check = 0.0, best_rec = 1e30, best_sw = 1e30;
    for (int r = 0; r < reps; r++) {
        dr_tape_clear(t);
        double t0 = now();
        dr_real x = dr_input(t, 0.5), y = dr_input(t, 0.25);
        dr_real acc = x;
        /* three nodes per iteration: mul, add, neg/scale */
        for (long i = 0; i + 3 <= n; i += 3) {
            acc = dr_mul(t, acc, y);
            acc = dr_add(t, acc, x);
            acc = dr_mul(t, acc, dr_const(0.999));
        }
        double t1 = now();
        double g[2];
        dr_real in[2] = {x, y};
        if (dr_gradient(t, acc, 2, in, g) != DR_OK)
            return 2;
        double t2 = now();
        if (r > 0 || reps == 1) {
            if (t1 - t0 < best_rec)
                best_rec = t1 - t0;
            if (t2 - t1 < best_sw)
                best_sw = t2 - t1;
        }
        check += g[0] + g[1] + (double)dr_tape_len(t);
    }
    fprintf(stderr, "best of %d: record %.2f ms (%.2f ns/node), sweep %.2f ms (%.2f ns/node)\n",
            reps, best_rec * 1e3, best_rec * 1e9 / (double)n, best_sw * 1e3,
            best_sw * 1e9 / (double)n);
    printf("seqmicro %ld %d checksum %.17g\n", n, reps, check);
    dr_tape_free(t);
    return 0;
}
