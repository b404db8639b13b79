/*
 * bench_common.h - what every C benchmark executable shares: the command-line
 * interface, the inputs of the six programs (primal_bench.c), the
 * number of tape records each program makes, and compiler barriers.
 *
 * Interface (the Haskell bench executables follow it too):
 *
 *     <exe> <program> <size> <reps>
 *
 * runs the program's measured unit `reps` times and prints ONE line: a
 * checksum of the result with %.10g.  For the gradient implementations
 * (dualrev, ADOL-C, Haskell) the checksum is the sum of all gradient
 * entries (frotvecquat: of all 21 Jacobian entries), so implementations can
 * be cross-checked; the primal prints the sum of the outputs; the floor
 * prints its accumulator.  `size` is n for fdotprod / fsummatvec and is
 * ignored by the others.  fparticles reads its thread count from the
 * environment variable BENCH_THREADS (default 1).  Exit status 2 means "this
 * executable does not implement that program" (the driver then leaves the
 * cell empty); extra arguments after the three are ignored.
 *
 * The inputs are built once, outside the repetitions; each repetition then
 * does the whole unit (recording from the inputs onwards, all sweeps, reading
 * the gradient).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bench_prog {
    P_FMULT,
    P_FDOTPROD,
    P_FSUMMATVEC,
    P_FROTVECQUAT,
    P_FNEURAL,
    P_FPARTICLES,
    /* slot for the fork-join version of fparticles (parallel API, added with
       it): every executable that has no forked variant runs the sequential
       program for it, so the driver's ratios stay defined */
    P_FPARTICLES_FORK,
    P_COUNT
};

static const char *const bench_prog_names[P_COUNT] = {
    "fmult", "fdotprod", "fsummatvec", "frotvecquat", "fneural", "fparticles",
    "fparticles-fork"};

typedef struct bench_args {
    int prog;
    long size;  /* n for fdotprod / fsummatvec */
    long reps;
    int threads; /* BENCH_THREADS */
} bench_args;

static inline void bench_usage(const char *exe)
{
    fprintf(stderr, "usage: %s <program> <size> <reps>\nprograms:", exe);
    for (int i = 0; i < P_COUNT; i++)
        fprintf(stderr, " %s", bench_prog_names[i]);
    fprintf(stderr, "\n");
}

/* Parse argv; exits with 2 on an unknown program, 1 on bad numbers. */
static inline bench_args bench_parse(int argc, char **argv)
{
    bench_args a = {-1, 0, 0, 1};
    if (argc < 4) {
        bench_usage(argv[0]);
        exit(1);
    }
    for (int i = 0; i < P_COUNT; i++)
        if (strcmp(argv[1], bench_prog_names[i]) == 0)
            a.prog = i;
    if (a.prog < 0) {
        fprintf(stderr, "%s: unknown program '%s'\n", argv[0], argv[1]);
        bench_usage(argv[0]);
        exit(2);
    }
    char *end;
    a.size = strtol(argv[2], &end, 10);
    if (*end || a.size < 0) {
        fprintf(stderr, "%s: bad size '%s'\n", argv[0], argv[2]);
        exit(1);
    }
    a.reps = strtol(argv[3], &end, 10);
    if (*end || a.reps < 0) {
        fprintf(stderr, "%s: bad reps '%s'\n", argv[0], argv[3]);
        exit(1);
    }
    const char *th = getenv("BENCH_THREADS");
    if (th && *th)
        a.threads = atoi(th) > 0 ? atoi(th) : 1;
    if ((a.prog == P_FDOTPROD || a.prog == P_FSUMMATVEC) && a.size < 1) {
        fprintf(stderr, "%s: %s needs a size >= 1\n", argv[0], argv[1]);
        exit(1);
    }
    return a;
}

/* Keep the compiler from hoisting work out of the repetition loop: after
   bench_clobber(p) it must assume *p changed; bench_use(x) makes x live. */
#define bench_clobber(p) __asm__ volatile("" : : "r"(p) : "memory")
#define bench_use(x) __asm__ volatile("" : : "g"(x) : "memory")

static inline void *bench_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", n);
        exit(3);
    }
    return p;
}

/* ------------------------------------------------------------- inputs */

/* fdotprod: xs = [1..n], ys = [3,5..] */
static inline void bench_dot_inputs(long n, double *xs, double *ys)
{
    for (long i = 0; i < n; i++) {
        xs[i] = (double)(i + 1);
        ys[i] = (double)(3 + 2 * i);
    }
}

/* fsummatvec: k = round(sqrt n); matrix k x k filled row by row from [1..],
   v the first k of [3,5..] */
static inline long bench_summatvec_k(long n)
{
    return lround(sqrt((double)n));
}
static inline void bench_summatvec_inputs(long k, double *m, double *v)
{
    for (long i = 0; i < k * k; i++)
        m[i] = (double)(i + 1);
    for (long i = 0; i < k; i++)
        v[i] = (double)(3 + 2 * i);
}

/* frotvecquat: v = Vec3 1 2 3, q = Quaternion 4 5 6 7 (x y z w) */
static const double bench_rot_inputs[7] = {1, 2, 3, 4, 5, 6, 7};

/* fneural: layers 50 -> 100 -> 50, W[i][j] = sin(i+j), b[i] = sin(0.41 i),
   input[i] = sin(0.41 i).  Parameters are laid out as
   W1 (100x50, row-major), b1 (100), W2 (50x100), b2 (50), input (50). */
#define NN_IN 50
#define NN_H1 100
#define NN_H2 50
#define NN_NPARAM (NN_H1 * NN_IN + NN_H1 + NN_H2 * NN_H1 + NN_H2 + NN_IN)
static inline void bench_neural_inputs(double *p)
{
    double *w1 = p, *b1 = w1 + NN_H1 * NN_IN, *w2 = b1 + NN_H1,
           *b2 = w2 + NN_H2 * NN_H1, *in = b2 + NN_H2;
    for (int i = 0; i < NN_H1; i++)
        for (int j = 0; j < NN_IN; j++)
            w1[i * NN_IN + j] = sin((double)(i + j));
    for (int i = 0; i < NN_H1; i++)
        b1[i] = sin(0.41 * i);
    for (int i = 0; i < NN_H2; i++)
        for (int j = 0; j < NN_H1; j++)
            w2[i * NN_H1 + j] = sin((double)(i + j));
    for (int i = 0; i < NN_H2; i++)
        b2[i] = sin(0.41 * i);
    for (int i = 0; i < NN_IN; i++)
        in[i] = sin(0.41 * i);
}

/* fparticles: 4 particles, p_i = (0.5 i, 0.1), v = (1, 1), i = 1..4; laid
   out as px py vx vy per particle; 1000 steps of dt = 0.05 */
#define PT_N 4
#define PT_STEPS 1000
#define PT_DT 0.05
static inline void bench_particle_inputs(double *s)
{
    for (int i = 0; i < PT_N; i++) {
        s[4 * i + 0] = 0.5 * (i + 1);
        s[4 * i + 1] = 0.1;
        s[4 * i + 2] = 1.0;
        s[4 * i + 3] = 1.0;
    }
}

/* ------------------------------------------------------ sizes and counts */

/* Units per repetition: the time per unit is time / (reps * units). */
static inline double bench_units(int prog, long size)
{
    if (prog == P_FDOTPROD)
        return (double)size;
    if (prog == P_FSUMMATVEC) {
        long k = bench_summatvec_k(size);
        return (double)(k * k);
    }
    return 1.0;
}

/*
 * Nodes the dualrev C programs (bench/c/dualrev_bench.c) record for one unit,
 * inputs included (checked against dr_tape_len by `dualrev-bench` with
 * BENCH_CHECK_LEN=1).  The floor writes exactly this many 32-byte records.
 */
static inline long bench_tape_nodes(int prog, long size)
{
    switch (prog) {
    case P_FMULT:
        return 2 + 1;
    case P_FDOTPROD: /* 2n inputs, n mul, n add (right fold onto 0) */
        return 4 * size;
    case P_FSUMMATVEC: { /* k^2 + k inputs; per row k mul + k add; k adds */
        long k = bench_summatvec_k(size);
        return k * k + k + k * (2 * k) + k;
    }
    case P_FROTVECQUAT:
        /* 7 inputs; dot u v: 5; 2*dot: 1; scale: 3; dot u u: 5; s*s: 1;
           sub: 1; scale: 3; 2*s: 1; cross: 9; scale: 3; two vadds: 6 */
        return 7 + 5 + 1 + 3 + 5 + 1 + 1 + 3 + 1 + 9 + 3 + 6;
    case P_FNEURAL:
        /* inputs; each layer: out statements (dot product + bias, one
           n-ary node each: bench_tape_entries) + out relu; softmax over
           50: 50 max, 50 sub, 50 exp, 50 add (sum), 50 div, 50 add (final
           sum) */
        return NN_NPARAM + 2 * NN_H1 + 2 * NN_H2 + 6 * NN_H2;
    case P_FPARTICLES:
    case P_FPARTICLES_FORK:
        /* 16 inputs; per particle step one statement (node) for each of
           p' = p + dt v and v' = v + dt a (a a sub-expression): 4; final
           sum of x*y: 4 mul, 4 add */
        return 4 * PT_N + (long)PT_N * PT_STEPS * 4 + 2 * PT_N;
    }
    return 0;
}

/*
 * The (argument, partial) entries of the tape's n-ary nodes for a program,
 * beyond the nodes of bench_tape_nodes: a statement of k > 2 arguments
 * (dr_rec_sum) is one node plus k entries of 16 bytes (an id and a
 * partial) that the floor writes and reads back as well.
 */
static inline long bench_tape_entries(int prog, long size)
{
    (void)size;
    switch (prog) {
    case P_FNEURAL: /* per neuron: in weights, in inputs, the bias */
        return (long)NN_H1 * (2 * NN_IN + 1) + (long)NN_H2 * (2 * NN_H1 + 1);
    }
    return 0;
}

/* The 784-300-100-10 network on a batch of 64 (nn784): deterministic
   inputs, weights scaled by 1/sqrt(fan-in), inputs in [-1, 1], labels b mod
   10.  Parameters laid out W1 (784x300, row-major, h = x W1), b1, W2
   (300x100), b2, W3 (100x10), b3. */
enum { NN784_B = 64, NN784_L0 = 784, NN784_L1 = 300, NN784_L2 = 100, NN784_L3 = 10 };
#define NN784_NPARAM (NN784_L0 * NN784_L1 + NN784_L1 + NN784_L1 * NN784_L2 + \
                      NN784_L2 + NN784_L2 * NN784_L3 + NN784_L3)
static inline void bench_nn784_inputs(double *p, double *X, double *Y)
{
    double *q = p;
    const int dims[4] = {NN784_L0, NN784_L1, NN784_L2, NN784_L3};
    for (int l = 0; l < 3; l++) {
        double sc = 1.0 / sqrt((double)dims[l]);
        for (int i = 0; i < dims[l]; i++)
            for (int j = 0; j < dims[l + 1]; j++)
                *q++ = sc * sin(0.7 * i + 1.3 * j + l);
        for (int j = 0; j < dims[l + 1]; j++)
            *q++ = 0.1 * sin(0.41 * j + l);
    }
    for (int b = 0; b < NN784_B; b++)
        for (int i = 0; i < NN784_L0; i++)
            X[b * NN784_L0 + i] = sin(0.37 * (b + 1) + 0.013 * i * (b % 7 + 1));
    memset(Y, 0, sizeof(double) * NN784_B * NN784_L3);
    for (int b = 0; b < NN784_B; b++)
        Y[b * NN784_L3 + b % NN784_L3] = 1.0;
}

#ifdef __cplusplus
}
#endif

#endif /* BENCH_COMMON_H */
