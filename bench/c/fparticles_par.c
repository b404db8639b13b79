/*
 * fparticles_par.c - fparticles of ../shared/benchmarks.md with the four
 * particles as parallel jobs of the fork-join API (thesis section 3.10):
 * both the forward pass (each particle recorded by its own job, on the
 * tape's worker threads via dr_fork_run) and the reverse pass (the four jobs
 * swept concurrently) are parallel.
 *
 *     fparticles-par <program> <size> <reps>       (bench_common.h interface)
 *
 * <program> is "fparticles" or "fparticles-fork" (the same forked program);
 * size is ignored; BENCH_THREADS (1 or 2, default 1) is the tape's thread
 * count (dr_set_threads).  Prints the sum of the 16 gradient entries with
 * %.10g, like dualrev-bench.  With one thread the result is bit-identical to
 * the sequential program (dualrev-bench fparticles): the jobs are recorded
 * in order and swept last-to-first, exactly as the sequential tape.
 *
 * BENCH_NOFORK=1 runs the same program without forks on the same tape (for a
 * same-binary comparison with the sequential path); BENCH_CHECK_LEN=1 checks
 * the node count as dualrev-bench does; BENCH_TIMING=1 prints on stderr the
 * fastest and the median time of one repetition (robust to a busy machine:
 * the minimum is what the code costs when it has the cores to itself).
 */
#include "bench_common.h"

#include <dualrev.h>

#include "bench_particle.h"

#include <stdbool.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "fparticles-par: %s: %s\n", what, dr_strerror(st));
        exit(4);
    }
}

/* the job of particle i: runs on the child handle, on any thread */
static void particle_job(dr_tape *child, size_t i, void *ctx)
{
    dr_real *s = ctx;
    particle(child, s + 4 * i);
}

static double run_fparticles_fork(const bench_args *a, dr_tape *T, bool fork)
{
    double in[4 * PT_N], g[4 * PT_N] = {0};
    bench_particle_inputs(in);
    check(dr_set_threads(T, (unsigned)a->threads), "dr_set_threads");
    const char *tm = getenv("BENCH_TIMING");
    double *times = NULL, best_fwd = 1e30, best_rev = 1e30;
    if (tm && *tm && *tm != '0')
        times = bench_xmalloc((size_t)(a->reps + 1) * sizeof(double));
    for (long r = 0; r < a->reps; r++) {
        double t0 = times ? now() : 0.0;
        bench_clobber(in);
        dr_tape_clear(T);
        dr_real x[4 * PT_N], s[4 * PT_N];
        for (int i = 0; i < 4 * PT_N; i++)
            s[i] = x[i] = dr_input(T, in[i]);
        if (fork) {
            /* the particles as parallel jobs (the (|*|) of benchmarks.md) */
            check(dr_fork_run(T, PT_N, particle_job, s), "dr_fork_run");
        } else {
            for (int i = 0; i < PT_N; i++)
                particle(T, s + 4 * i);
        }
        dr_real y = dr_const(0.0);
        for (int i = PT_N; i-- > 0;)
            y = dr_add(T, dr_mul(T, s[4 * i], s[4 * i + 1]), y);
        double t1 = times ? now() : 0.0;
        check(dr_gradient(T, y, 4 * PT_N, x, g), "gradient");
        bench_use(g);
        if (times) {
            double t2 = now();
            times[r] = t2 - t0;
            if (t1 - t0 < best_fwd)
                best_fwd = t1 - t0;
            if (t2 - t1 < best_rev)
                best_rev = t2 - t1;
        }
    }
    if (times && a->reps > 0) {
        qsort(times, (size_t)a->reps, sizeof(double), cmp_double);
        fprintf(stderr, "fparticles (%s, %d thread%s): min %.1f us, median %.1f us per gradient\n",
                fork ? "forked" : "no forks", a->threads,
                a->threads == 1 ? "" : "s", times[0] * 1e6,
                times[a->reps / 2] * 1e6);
        fprintf(stderr, "  fastest forward pass %.1f us, fastest gradient call %.1f us\n",
                best_fwd * 1e6, best_rev * 1e6);
        free(times);
    }
    const char *e = getenv("BENCH_CHECK_LEN");
    if (e && *e && *e != '0') {
        long want = bench_tape_nodes(a->prog, a->size);
        long got = (long)dr_tape_len(T);
        fprintf(stderr, "%s: tape nodes %ld, floor records %ld%s\n",
                bench_prog_names[a->prog], got, want,
                got == want ? "" : "  MISMATCH");
        if (got != want)
            exit(5);
    }
    double sum = 0.0;
    for (int i = 0; i < 4 * PT_N; i++)
        sum += g[i];
    return sum;
}

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    if (a.prog != P_FPARTICLES && a.prog != P_FPARTICLES_FORK) {
        fprintf(stderr, "fparticles-par: only fparticles\n");
        return 2;
    }
    const char *nf = getenv("BENCH_NOFORK");
    bool fork = !(nf && *nf && *nf != '0');
    dr_tape *T = dr_tape_new();
    if (!T) {
        fprintf(stderr, "fparticles-par: out of memory\n");
        return 3;
    }
    double c = run_fparticles_fork(&a, T, fork);
    printf("%.10g\n", c);
    dr_tape_free(T);
    return 0;
}
