/*
 * profile_phases.c - where the time of one fdotprod gradient goes, phase by
 * phase, through the public API exactly as dualrev-bench does it (not run
 * by the driver; a profiling aid for bench/README.md).
 *
 *     profile-phases <n> <reps>
 *
 * Prints nanoseconds per element (per x_i * y_i) of: dr_tape_clear, the
 * one dr_input_range call for the 2n inputs, the n products and n sums
 * through a recorder (values paired with their ids on the fly, as
 * dualrev-bench does), clearing
 * and seeding the adjoints (their zeroing happens here), the reverse sweep,
 * and copying the 2n adjoints out with dr_adjoints_read; then the same
 * through dr_gradient_range (clear, seed, sweep, read) for comparison: the
 * mean and the fastest repetition of each phase.  The first repetition (page
 * faults, allocation) is left out.
 */
#include "bench_common.h"

#include <dualrev.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <n> <reps>\n", argv[0]);
        return 1;
    }
    long n = atol(argv[1]), reps = atol(argv[2]);
    if (n < 1 || reps < 2) {
        fprintf(stderr, "%s: n >= 1 and reps >= 2\n", argv[0]);
        return 1;
    }
    double *xv = bench_xmalloc(2 * (size_t)n * sizeof(double));
    bench_dot_inputs(n, xv, xv + n);
    double *g = bench_xmalloc(2 * (size_t)n * sizeof(double));
    dr_tape *T = dr_tape_new();
    if (!T)
        return 3;
    enum { CLEAR, INPUTS, RECORD, SEED, SWEEP, READ, GRADIENT, NPH };
    static const char *const name[NPH] = {
        "dr_tape_clear", "dr_input_range", "dr_rec_mul+dr_rec_add", "clear+seed adjoints",
        "dr_reverse sweep", "dr_adjoints_read", "(dr_gradient_range)"};
    double tot[NPH] = {0}, best[NPH];
    for (int k = 0; k < NPH; k++)
        best[k] = 1e30;
    for (long r = 0; r < reps; r++) {
        double t[NPH + 1];
        t[0] = now();
        dr_tape_clear(T);
        t[1] = now();
        dr_idx first;
        if (dr_input_range(T, 2 * (size_t)n, &first) != DR_OK)
            return 4;
        t[2] = now();
        dr_rec rec;
        if (dr_rec_begin(T, &rec) != DR_OK)
            return 4;
        dr_real acc = dr_const(0.0);
        for (long i = n; i-- > 0;) {
            dr_real xi = {xv[i], first + i}, yi = {xv[n + i], first + n + i};
            acc = dr_rec_add(&rec, dr_rec_mul(&rec, xi, yi), acc);
        }
        if (dr_rec_end(&rec) != DR_OK)
            return 4;
        t[3] = now();
        dr_adjoints_clear(T);
        dr_seed(T, acc.idx, 1.0);
        t[4] = now();
        dr_reverse(T);
        t[5] = now();
        dr_adjoints_read(T, first, 2 * (size_t)n, g);
        t[6] = now();
        bench_use(g);
        if (dr_gradient_range(T, acc, first, 2 * (size_t)n, g) != DR_OK)
            return 4;
        t[7] = now();
        bench_use(g);
        if (r > 0)
            for (int k = 0; k < NPH; k++) {
                double d = t[k + 1] - t[k];
                tot[k] += d;
                best[k] = d < best[k] ? d : best[k];
            }
    }
    /* the mean, and the fastest repetition: this machine's noise only adds
       time, so the minimum is the steadier figure for an A/B comparison */
    double scale = 1e9 / ((double)(reps - 1) * (double)n), sum = 0, sumb = 0;
    printf("fdotprod n = %ld, ns per element (%ld reps, first left out):\n", n, reps);
    printf("  %-32s %7s %7s\n", "", "mean", "min");
    for (int k = 0; k < NPH; k++) {
        double b = best[k] * 1e9 / (double)n;
        printf("  %-32s %7.2f %7.2f\n", name[k], tot[k] * scale, b);
        if (k < GRADIENT) {
            sum += tot[k] * scale;
            sumb += b;
        }
    }
    printf("  %-32s %7.2f %7.2f\n", "total (without dr_gradient)", sum, sumb);
    dr_tape_free(T);
    free(xv);
    free(g);
    return 0;
}
