/*
 * profile_phases.c - where the time of one fdotprod gradient goes, phase by
 * phase, through the public API exactly as dualrev-bench does it (not run
 * by the driver; a profiling aid for bench/README.md).
 *
 *     profile-phases <n> <reps> [fdotprod|fsummatvec]
 *
 * (fsummatvec: the same phases for its k x k matrix, k = round(sqrt n), per
 * matrix element.)
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
#include <stdbool.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the recording of one repetition: fdotprod's fold over the two halves of
   the input range, or fsummatvec's k row folds and the fold of the rows
   (as dualrev-bench records them); returns the output */
static dr_real record(dr_tape *T, bool summatvec, long n, long k,
                      const double *xv, dr_idx first, dr_real *rows)
{
    dr_rec rec;
    if (dr_rec_begin(T, &rec) != DR_OK)
        exit(4);
    dr_real acc = dr_const(0.0);
    if (!summatvec) {
        for (long i = n; i-- > 0;) {
            dr_real xi = {xv[i], first + i}, yi = {xv[n + i], first + n + i};
            acc = dr_rec_add(&rec, dr_rec_mul(&rec, xi, yi), acc);
        }
    } else {
        const double *v = xv + k * k;
        for (long i = 0; i < k; i++) {
            dr_real row = dr_const(0.0);
            for (long j = k; j-- > 0;) {
                dr_real vj = {v[j], first + k * k + j};
                dr_real mij = {xv[i * k + j], first + i * k + j};
                row = dr_rec_add(&rec, dr_rec_mul(&rec, vj, mij), row);
            }
            rows[i] = row;
        }
        for (long i = k; i-- > 0;)
            acc = dr_rec_add(&rec, rows[i], acc);
    }
    if (dr_rec_end(&rec) != DR_OK)
        exit(4);
    return acc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <n> <reps> [fdotprod|fsummatvec]\n", argv[0]);
        return 1;
    }
    long n = atol(argv[1]), reps = atol(argv[2]);
    bool summatvec = argc > 3 && strcmp(argv[3], "fsummatvec") == 0;
    if (n < 1 || reps < 2) {
        fprintf(stderr, "%s: n >= 1 and reps >= 2\n", argv[0]);
        return 1;
    }
    /* inputs: fdotprod's two vectors, or fsummatvec's k x k matrix and v */
    long k = summatvec ? bench_summatvec_k(n) : 0;
    long nin = summatvec ? k * k + k : 2 * n, units = summatvec ? k * k : n;
    double *xv = bench_xmalloc((size_t)nin * sizeof(double));
    if (summatvec)
        bench_summatvec_inputs(k, xv, xv + k * k);
    else
        bench_dot_inputs(n, xv, xv + n);
    double *g = bench_xmalloc((size_t)nin * sizeof(double));
    dr_real *rows = bench_xmalloc((size_t)(k + 1) * sizeof(dr_real));
    dr_tape *T = dr_tape_new();
    if (!T)
        return 3;
    enum { CLEAR, INPUTS, RECORD, SEED, SWEEP, READ, GRADIENT, NPH };
    static const char *const name[NPH] = {
        "dr_tape_clear", "dr_input_range", "recording (dr_rec)", "clear+seed adjoints",
        "dr_reverse sweep", "dr_adjoints_read", "(dr_gradient_range)"};
    double tot[NPH] = {0}, best[NPH];
    for (int ph = 0; ph < NPH; ph++)
        best[ph] = 1e30;
    for (long r = 0; r < reps; r++) {
        double t[NPH + 1];
        t[0] = now();
        dr_tape_clear(T);
        t[1] = now();
        dr_idx first;
        if (dr_input_range(T, (size_t)nin, &first) != DR_OK)
            return 4;
        t[2] = now();
        dr_real acc = record(T, summatvec, n, k, xv, first, rows);
        t[3] = now();
        dr_adjoints_clear(T);
        dr_seed(T, acc.idx, 1.0);
        t[4] = now();
        dr_reverse(T);
        t[5] = now();
        dr_adjoints_read(T, first, (size_t)nin, g);
        t[6] = now();
        bench_use(g);
        if (dr_gradient_range(T, acc, first, (size_t)nin, g) != DR_OK)
            return 4;
        t[7] = now();
        bench_use(g);
        if (r > 0)
            for (int ph = 0; ph < NPH; ph++) {
                double d = t[ph + 1] - t[ph];
                tot[ph] += d;
                best[ph] = d < best[ph] ? d : best[ph];
            }
    }
    /* the mean, and the fastest repetition: this machine's noise only adds
       time, so the minimum is the steadier figure for an A/B comparison */
    double scale = 1e9 / ((double)(reps - 1) * (double)units), sum = 0, sumb = 0;
    printf("%s n = %ld, ns per %s (%ld reps, first left out):\n",
           summatvec ? "fsummatvec" : "fdotprod", n,
           summatvec ? "matrix element" : "element", reps);
    printf("  %-32s %7s %7s\n", "", "mean", "min");
    for (int ph = 0; ph < NPH; ph++) {
        double b = best[ph] * 1e9 / (double)units;
        printf("  %-32s %7.2f %7.2f\n", name[ph], tot[ph] * scale, b);
        if (ph < GRADIENT) {
            sum += tot[ph] * scale;
            sumb += b;
        }
    }
    printf("  %-32s %7.2f %7.2f\n", "total (without dr_gradient)", sum, sumb);
    dr_tape_free(T);
    free(rows);
    free(xv);
    free(g);
    return 0;
}
