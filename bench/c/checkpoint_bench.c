/*
 * checkpoint_bench.c - fparticles over many steps, with and without
 * checkpointing: time per gradient and peak memory.
 *
 *     checkpoint-bench <steps> <snapshots> [reps]
 *
 * The state is the four particles of fparticles (16 values); one step of
 * the loop moves all four by dt, as bench_particle.h does, each assignment
 * one statement.  snapshots = "plain" records the steps one after the other
 * on the caller's tape; a number records them with dr_record_checkpointed
 * and that many snapshots.  Each repetition records from the inputs and
 * takes the gradient of sum x*y over the final positions.  Prints one line:
 *
 *     <mode> steps=<n> snapshots=<s> time_s=<min over reps>
 *     rss_mb=<peak resident set> base_mb=<resident before the first run>
 *     nodes=<nodes on the caller's tape> grad_sum=<%.17g> grad_hash=<hex>
 *
 * grad_hash is a hash of the gradient's bits, equal between the modes when
 * the gradients are bit-identical.  Peak memory is the process's (getrusage),
 * so run each mode in a process of its own (bench.mk's bench-checkpoint).
 */
#include "bench_common.h"

#include <dualrev.h>

#include <sys/resource.h>
#include <time.h>

#define NS (4 * PT_N)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "checkpoint-bench: %s: %s\n", what, dr_strerror(st));
        exit(4);
    }
}

/* one step of the four particles: p' = p + dt v, v' = v + dt a with
   a = -0.5 p - 0.2 v, each assignment a statement */
static dr_status particles_step(void *ctx, dr_tape *t, size_t k, size_t n,
                                const dr_real *x, dr_real *y)
{
    (void)ctx, (void)k, (void)n;
    dr_rec rec, *R = &rec;
    dr_status st = dr_rec_begin(t, R);
    if (st != DR_OK)
        return st;
    for (int i = 0; i < PT_N; i++) {
        const dr_real *s = x + 4 * i;
        dr_real *o = y + 4 * i;
        dr_expr ax = dr_ex_add(dr_ex_scale(-0.5, dr_ex(s[0])),
                               dr_ex_scale(-0.2, dr_ex(s[2])));
        dr_expr ay = dr_ex_add(dr_ex_scale(-0.5, dr_ex(s[1])),
                               dr_ex_scale(-0.2, dr_ex(s[3])));
        o[0] = dr_rec_stmt(R, dr_ex_add(dr_ex(s[0]), dr_ex_scale(PT_DT, dr_ex(s[2]))));
        o[1] = dr_rec_stmt(R, dr_ex_add(dr_ex(s[1]), dr_ex_scale(PT_DT, dr_ex(s[3]))));
        o[2] = dr_rec_stmt(R, dr_ex_add(dr_ex(s[2]), dr_ex_scale(PT_DT, ax)));
        o[3] = dr_rec_stmt(R, dr_ex_add(dr_ex(s[3]), dr_ex_scale(PT_DT, ay)));
    }
    return dr_rec_end(R);
}

/* one gradient: record from the inputs, sweep, read */
static double gradient(dr_tape *T, size_t steps, long snapshots, double *g)
{
    double in[NS];
    bench_particle_inputs(in);
    check(dr_tape_clear(T), "clear");
    dr_real x[NS], s[NS];
    check(dr_inputs(T, NS, in, x), "inputs");
    if (snapshots < 0) {
        dr_real a[NS];
        memcpy(s, x, sizeof s);
        for (size_t k = 0; k < steps; k++) {
            check(particles_step(NULL, T, k, NS, s, a), "step");
            memcpy(s, a, sizeof s);
        }
    } else {
        dr_loop loop = {NULL, particles_step, NULL, 0}; /* segments: the library's */
        check(dr_record_checkpointed(T, &loop, steps, NS, x, (size_t)snapshots, s),
              "checkpointed loop");
    }
    dr_real y = dr_const(0.0);
    for (int i = PT_N; i-- > 0;)
        y = dr_add(T, dr_mul(T, s[4 * i], s[4 * i + 1]), y);
    check(dr_gradient(T, y, NS, x, g), "gradient");
    return y.val;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: checkpoint-bench <steps> <snapshots|plain> [reps]\n");
        return 1;
    }
    size_t steps = strtoull(argv[1], NULL, 10);
    long snapshots = strcmp(argv[2], "plain") == 0 ? -1 : strtol(argv[2], NULL, 10);
    long reps = argc > 3 ? strtol(argv[3], NULL, 10) : 3;
    double base = rss_mb(), best = 1e300, g[NS];
    dr_tape *T = dr_tape_new();
    if (!T)
        return 4;
    long nodes = 0;
    for (long r = 0; r < reps; r++) {
        double t0 = now();
        gradient(T, steps, snapshots, g);
        double dt = now() - t0;
        best = dt < best ? dt : best;
        nodes = (long)dr_tape_len(T);
    }
    double sum = 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the gradient's bits */
    for (int i = 0; i < NS; i++) {
        uint64_t b;
        memcpy(&b, &g[i], sizeof b);
        for (int j = 0; j < 8; j++)
            h = (h ^ ((b >> (8 * j)) & 0xff)) * 1099511628211ull;
        sum += g[i];
    }
    printf("%s steps=%zu snapshots=%s time_s=%.4f rss_mb=%.1f "
           "base_mb=%.1f nodes=%ld grad_sum=%.17g grad_hash=%016llx\n",
           snapshots < 0 ? "plain" : "checkpointed", steps,
           snapshots < 0 ? "-" : argv[2], best, rss_mb(), base, nodes, sum, (unsigned long long)h);
    dr_tape_free(T);
    return 0;
}
