/*
 * scaling_bench.c - how the fork-join recording and the parallel reverse
 * pass scale with the thread count (not run by the driver; bench/README.md,
 * "Parallel scaling").
 *
 *     scaling-bench <program> <jobs> <steps> <reps> <threads>...
 *
 * Programs: J = <jobs> jobs recorded by dr_fork_run, each a nonlinear chain
 * of <steps> steps of 8 nodes, their results summed by the parent.
 *   own     each job reads its own input in its first node only: the jobs
 *           share nothing, the sweep is J independent chains
 *   shared  every step of every job reads one of 8 weights recorded by the
 *           parent (the weights of a batch split over jobs): every step
 *           adds into an ancestor's adjoint
 * For each thread count T (0: the number of online CPUs) the tape is
 * recorded and differentiated <reps> times; the fastest of each phase is
 * kept.  Phases: record (dr_tape_clear to the parent's sum), clear (what
 * dr_gradient does before sweeping: dr_adjoints_clear and dr_seed, which
 * sizes and zeroes the adjoints of every id), reverse (dr_reverse) and the
 * whole dr_gradient call (timed on its own, as users call it).  Prints a
 * Markdown table: times in ms, speed-ups against the first thread count,
 * and the serial fraction s that Amdahl's law gives for the speed-up S at T
 * threads, s = (T/S - 1)/(T - 1).  Exits with status 4 if a gradient
 * differs in a bit from the first thread count's.  SCALING_NOFORK=1 records
 * the same jobs one after the other on the root, without forks (the
 * sequential program the forked one must match bit for bit).
 */
#include <dualrev.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NW 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "scaling-bench: %s: %s\n", what, dr_strerror(st));
        exit(3);
    }
}

typedef struct prog {
    bool shared;
    long steps;
    size_t jobs;
    dr_real *in;  /* shared: NW weights; own: one input per job */
    dr_real *out; /* one result per job */
    bool nofork;  /* SCALING_NOFORK=1: the jobs in order on the root */
} prog;

/* one step: 8 nodes, nonlinear, with a derivative near 1 (the adjoints
   neither vanish, which would let the sweep skip nodes, nor blow up over
   thousands of steps) */
static dr_real step(dr_tape *t, dr_real s, dr_real w)
{
    dr_real a = dr_sin(t, s);
    dr_real b = dr_mul(t, a, w);
    dr_real c = dr_cos(t, b);
    dr_real d = dr_mul(t, c, dr_const(0.25));
    dr_real e = dr_tanh(t, d);
    dr_real f = dr_mul(t, e, dr_const(0.05));
    dr_real g = dr_sub(t, f, dr_const(0.01));
    return dr_add(t, s, g);
}

static void job(dr_tape *t, size_t i, void *ctx)
{
    prog *p = ctx;
    dr_real s, w = dr_const(0.9);
    if (p->shared) {
        s = dr_const(0.1 + 0.01 * (double)i);
        for (long k = 0; k < p->steps; k++)
            s = step(t, s, p->in[k % NW]);
    } else {
        s = dr_mul(t, p->in[i], dr_const(1.0 + 1e-3 * (double)i));
        for (long k = 0; k < p->steps; k++)
            s = step(t, s, w);
    }
    p->out[i] = s;
}

static dr_real record(dr_tape *t, prog *p)
{
    check(dr_tape_clear(t), "dr_tape_clear");
    size_t nin = p->shared ? NW : p->jobs;
    for (size_t k = 0; k < nin; k++)
        p->in[k] = dr_input(t, 0.3 + 0.001 * (double)k);
    if (p->nofork)
        for (size_t i = 0; i < p->jobs; i++)
            job(t, i, p);
    else
        check(dr_fork_run(t, p->jobs, job, p), "dr_fork_run");
    dr_real y = dr_sumn(t, p->jobs, p->out);
    check(dr_tape_status(t), "recording");
    return y;
}

typedef struct times {
    double rec, clear, rev, grad;
} times;

int main(int argc, char **argv)
{
    if (argc < 6 || (strcmp(argv[1], "own") && strcmp(argv[1], "shared"))) {
        fprintf(stderr, "usage: scaling-bench own|shared <jobs> <steps> <reps> <threads>...\n");
        return 2;
    }
    prog p = {strcmp(argv[1], "shared") == 0, atol(argv[3]),
              (size_t)atol(argv[2]), NULL, NULL, false};
    const char *nf = getenv("SCALING_NOFORK");
    p.nofork = nf && *nf && *nf != '0';
    long reps = atol(argv[4]);
    if (p.jobs < 1 || p.steps < 1 || reps < 1) {
        fprintf(stderr, "scaling-bench: jobs, steps and reps must be >= 1\n");
        return 2;
    }
    size_t nin = p.shared ? NW : p.jobs;
    p.in = calloc(nin, sizeof(dr_real));
    p.out = calloc(p.jobs, sizeof(dr_real));
    double *g = calloc(nin, sizeof(double)), *g1 = calloc(nin, sizeof(double));
    int nt = argc - 5;
    times *tm = calloc((size_t)nt, sizeof(times));
    unsigned *th = calloc((size_t)nt, sizeof(unsigned));
    if (!p.in || !p.out || !g || !g1 || !tm || !th) {
        fprintf(stderr, "scaling-bench: out of memory\n");
        return 3;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nodes = 0;
    for (int k = 0; k < nt; k++) {
        long v = atol(argv[5 + k]);
        th[k] = v > 0 ? (unsigned)v : (unsigned)(cpus > 0 ? cpus : 1);
        /* a new tape per thread count: each starts with cold storage */
        dr_tape *t = dr_tape_new();
        if (!t)
            check(DR_ENOMEM, "dr_tape_new");
        check(dr_set_threads(t, th[k]), "dr_set_threads");
        times best = {1e30, 1e30, 1e30, 1e30};
        for (long r = 0; r < reps; r++) {
            double t0 = now();
            dr_real y = record(t, &p);
            double t1 = now();
            check(dr_gradient(t, y, nin, p.in, g), "dr_gradient");
            double t2 = now();
            /* the same gradient in its phases */
            check(dr_adjoints_clear(t), "dr_adjoints_clear");
            check(dr_seed(t, y.idx, 1.0), "dr_seed");
            double t3 = now();
            check(dr_reverse(t), "dr_reverse");
            double t4 = now();
            times x = {t1 - t0, t3 - t2, t4 - t3, t2 - t1};
            best.rec = x.rec < best.rec ? x.rec : best.rec;
            best.clear = x.clear < best.clear ? x.clear : best.clear;
            best.rev = x.rev < best.rev ? x.rev : best.rev;
            best.grad = x.grad < best.grad ? x.grad : best.grad;
        }
        tm[k] = best;
        nodes = dr_tape_len(t);
        if (k == 0)
            memcpy(g1, g, nin * sizeof(double));
        else if (memcmp(g1, g, nin * sizeof(double)) != 0) {
            fprintf(stderr, "scaling-bench: the gradient at %u threads differs from %u threads'\n",
                    th[k], th[0]);
            return 4;
        }
        dr_tape_free(t);
    }
    printf("%s: %zu jobs x %ld steps, %zu nodes, fastest of %ld, times in ms\n\n",
           argv[1], p.jobs, p.steps, nodes, reps);
    printf("| T | record | clear | reverse | gradient | record x | gradient x | record+gradient x | serial fraction (gradient) |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < nt; k++) {
        double sr = tm[0].rec / tm[k].rec, sg = tm[0].grad / tm[k].grad;
        double sb = (tm[0].rec + tm[0].grad) / (tm[k].rec + tm[k].grad);
        double T = (double)th[k] / (double)th[0];
        printf("| %u | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | ", th[k],
               tm[k].rec * 1e3, tm[k].clear * 1e3, tm[k].rev * 1e3,
               tm[k].grad * 1e3, sr, sg, sb);
        if (T > 1.0)
            printf("%.3f |\n", (T / sg - 1.0) / (T - 1.0));
        else
            printf("- |\n");
    }
    double sum = 0.0;
    for (size_t k = 0; k < nin; k++)
        sum += g1[k];
    printf("\ngradient sum %.17g (bit-identical at every T)\n", sum);
    return 0;
}
