/*
 * mpi_mlp.c - data-parallel training of a 784-300-100-10 network (relu hidden
 * layers, softmax cross-entropy averaged over the batch) across MPI ranks:
 * every rank records the loss of its share of each batch on its own tape,
 * sweeps it, and dr_mpi_allreduce_sum (include/dualrev_mpi.h) sums the
 * 266,610-element gradient, so that every rank takes the same SGD step.
 * Built by make mpi (mpicc), not by make demo.
 *
 *     mpirun -np 2 build/examples/mpi_mlp [--steps N] [--batch B]
 *            [--batches K] [--lr R] [--seed S] [--check] [--time]
 *
 * The data are synthetic and deterministic (no files): sample i is 784
 * values in [-1, 1) drawn from a generator seeded by (seed, i), labelled by
 * the largest of 10 scores of a fixed random linear "teacher".  The data set
 * is K batches of B samples, step s uses batch s mod K, and rank r of P owns
 * rows [B r / P, B (r + 1) / P) of every batch: it generates only those.
 * The parameters start from the same seed on every rank.
 *
 * --check   on rank 0, also the gradient of the whole batch recorded by one
 *           process, compared with the sum of the shards' gradients: the
 *           largest difference over the largest whole-batch component,
 *           max_i |sum_i - whole_i| / max_i |whole_i|, must be at most 1e-12
 *           (the two differ only in the order of additions); the loss
 *           likewise.  Checks too that all ranks hold bit-identical
 *           parameters (a hash of them, at the start and after the steps),
 *           and dr_mpi_allreduce_sum's refusals of invalid arguments.  Exit
 *           status 1 on any failure, on every rank.
 * --time    per step: the median wall time of the steps (after two warm-up
 *           steps), of their compute (record, sweep, read the gradient) and
 *           of the sum across ranks (which includes waiting for the slowest
 *           rank), and the median of 20 sums of the gradient alone, each
 *           after a barrier.
 * Loss per step is printed by rank 0 otherwise.  OpenBLAS threads follow
 * OPENBLAS_NUM_THREADS: with as many ranks as cores, set it to 1.
 */
#include <dualrev.h>
#include <dualrev_mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { L0 = 784, L1 = 300, L2 = 100, L3 = 10 };
#define NPARAM (L0 * L1 + L1 + L1 * L2 + L2 + L2 * L3 + L3) /* 266,610 */
static const int dims[4] = {L0, L1, L2, L3};

static int rank, nranks;

static void die(const char *what, int st)
{
    fprintf(stderr, "mpi_mlp (rank %d): %s: %s\n", rank, what,
            dr_mpi_strerror(st));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("malloc", DR_ENOMEM);
    return p;
}

/* ------------------------------------------------------------- the data */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double uniform(uint64_t *s)
{
    return (double)(splitmix(s) >> 11) * 0x1.0p-52 - 1.0;
}

/* the parameters W1 (784 x 300, h = x W1), b1, W2, b2, W3, b3, one after
   the other; weights uniform with the variance 1 / fan-in, biases 0 */
static void init_params(uint64_t seed, double *p)
{
    uint64_t s = seed;
    for (int l = 0; l < 3; l++) {
        double a = sqrt(3.0 / dims[l]);
        for (int i = 0; i < dims[l] * dims[l + 1]; i++)
            *p++ = a * uniform(&s);
        for (int j = 0; j < dims[l + 1]; j++)
            *p++ = 0.0;
    }
}

/* sample i: its 784 inputs x[] and a one-hot label y[10] */
static void sample(uint64_t seed, const double *teacher, int64_t i, double *x,
                   double *y)
{
    uint64_t s = seed ^ (0xD1B54A32D192ED03u * (uint64_t)(i + 1));
    double score[L3] = {0};
    for (int j = 0; j < L0; j++) {
        x[j] = uniform(&s);
        for (int k = 0; k < L3; k++)
            score[k] += x[j] * teacher[j * L3 + k];
    }
    int best = 0;
    for (int k = 1; k < L3; k++)
        best = score[k] > score[best] ? k : best;
    for (int k = 0; k < L3; k++)
        y[k] = k == best;
}

/* ------------------------------------------------------------ the model */

/*
 * Record the loss share of n samples X (n x 784), Y (n x 10, one-hot) of a
 * batch of btotal, (sum of logsumexp(z_b) - z_b[label]) / btotal, at the
 * parameters p; its gradient goes to g[0 .. NPARAM-1], the share to *loss.
 * The shares of a split batch add up to the batch's mean loss, and their
 * gradients to its gradient.
 */
static void shard_gradient(dr_tape *t, const double *p, const double *X,
                           const double *Y, int64_t n, int64_t btotal,
                           double *g, double *loss)
{
    int st = dr_tape_clear(t);
    if (st != DR_OK)
        die("dr_tape_clear", st);
    dr_arr w[3], c[3];
    const double *q = p;
    for (int l = 0; l < 3; l++) { /* borrowed: p is not written meanwhile */
        w[l] = dr_arr_input_ref(t, 2, dims[l], dims[l + 1], q);
        q += dims[l] * dims[l + 1];
        c[l] = dr_arr_input_ref(t, 1, dims[l + 1], 1, q);
        q += dims[l + 1];
    }
    dr_arr a = dr_arr_const_ref(t, 2, n, L0, X);
    dr_arr y = dr_arr_const_ref(t, 2, n, L3, Y);
    for (int l = 0; l < 3; l++) {
        a = dr_arr_add_rowvec(t, dr_arr_matmul(t, a, 0, w[l], 0), c[l]);
        if (l < 2)
            a = dr_arr_map(t, DR_FN_RELU, a);
    }
    dr_real lse = dr_arr_sum(t, dr_arr_logsumexp_rows(t, a));
    dr_real f = dr_mul(t, dr_sub(t, lse, dr_arr_dot(t, y, a)),
                       dr_const(1.0 / (double)btotal));
    if ((st = dr_tape_status(t)) != DR_OK)
        die("recording", st);
    if ((st = dr_seed(t, f.idx, 1.0)) != DR_OK ||
        (st = dr_reverse(t)) != DR_OK)
        die("reverse pass", st);
    double *o = g;
    for (int l = 0; l < 3; l++) {
        if ((st = dr_arr_adjoint(t, w[l].idx, o)) != DR_OK)
            die("dr_arr_adjoint", st);
        o += dims[l] * dims[l + 1];
        if ((st = dr_arr_adjoint(t, c[l].idx, o)) != DR_OK)
            die("dr_arr_adjoint", st);
        o += dims[l + 1];
    }
    *loss = f.val;
}

/* --------------------------------------------------------------- checks */

/* FNV-1a over the bytes of the parameters */
static uint64_t hash_params(const double *p)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 0xCBF29CE484222325u;
    for (size_t i = 0; i < sizeof(double) * NPARAM; i++)
        h = (h ^ b[i]) * 0x100000001B3u;
    return h;
}

/* 1 when every rank holds the same parameters */
static int params_agree(const double *p)
{
    uint64_t h = hash_params(p), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

/* max_i |a_i - b_i| / max_i |b_i|; NaN if either holds one (a NaN is not
   <= any bound) */
static double rel_err(const double *a, const double *b, size_t n)
{
    double d = 0.0, m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]);
        if (isnan(e))
            return NAN;
        d = e > d ? e : d;
        m = fabs(b[i]) > m ? fabs(b[i]) : m;
    }
    return m > 0.0 ? d / m : d;
}

/* the refusals that happen before any communication (so on every rank) */
static int helper_refusals(void)
{
    int bad = 0;
    double v = 1.0;
    bad |= dr_mpi_allreduce_sum(NULL, 3, MPI_COMM_WORLD) != DR_EINVAL;
    bad |= dr_mpi_allreduce_sum(NULL, 0, MPI_COMM_WORLD) != DR_OK;
    bad |= dr_mpi_allreduce_sum(&v, 1, MPI_COMM_NULL) != DR_EINVAL;
    if (nranks >= 2) { /* an intercommunicator between even and odd ranks */
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7,
                             &inter);
        bad |= dr_mpi_allreduce_sum(&v, 1, inter) != DR_EINVAL;
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    bad |= v != 1.0 || dr_mpi_strerror(DR_EMPI) == NULL;
    if (bad)
        fprintf(stderr, "mpi_mlp (rank %d): dr_mpi_allreduce_sum accepted "
                        "an invalid call\n", rank);
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ----------------------------------------------------------------- main */

static long arg_long(int argc, char **argv, int *i, long lo)
{
    char *end;
    long v = *i + 1 < argc ? strtol(argv[*i + 1], &end, 10) : lo - 1;
    if (*i + 1 >= argc || *end || v < lo) {
        if (rank == 0)
            fprintf(stderr, "mpi_mlp: %s needs a number >= %ld\n", argv[*i], lo);
        MPI_Finalize();
        exit(2);
    }
    ++*i;
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    long steps = -1, batch = 256, nbatch = 16, seed = 1;
    double lr = 0.5;
    int check = 0, timing = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check"))
            check = 1;
        else if (!strcmp(argv[i], "--time"))
            timing = 1;
        else if (!strcmp(argv[i], "--steps"))
            steps = arg_long(argc, argv, &i, 1);
        else if (!strcmp(argv[i], "--batch"))
            batch = arg_long(argc, argv, &i, 1);
        else if (!strcmp(argv[i], "--batches"))
            nbatch = arg_long(argc, argv, &i, 1);
        else if (!strcmp(argv[i], "--seed"))
            seed = arg_long(argc, argv, &i, 0);
        else if (!strcmp(argv[i], "--lr") && i + 1 < argc)
            lr = atof(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: mpi_mlp [--steps N] [--batch B] "
                                "[--batches K] [--lr R] [--seed S] [--check] [--time]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (steps < 0)
        steps = check ? 3 : timing ? 30 : 60;

    /* this rank's rows of every batch */
    const int64_t lo = batch * rank / nranks, hi = batch * (rank + 1) / nranks,
                  n = hi - lo;
    double *teacher = xmalloc(sizeof(double) * L0 * L3);
    uint64_t ts = (uint64_t)seed * 3 + 1;
    for (int i = 0; i < L0 * L3; i++)
        teacher[i] = uniform(&ts);
    double *X = xmalloc(sizeof(double) * (size_t)(nbatch * n * L0));
    double *Y = xmalloc(sizeof(double) * (size_t)(nbatch * n * L3));
    for (int64_t k = 0; k < nbatch; k++)
        for (int64_t r = 0; r < n; r++)
            sample((uint64_t)seed, teacher, k * batch + lo + r,
                   X + (k * n + r) * L0, Y + (k * n + r) * L3);

    double *p = xmalloc(sizeof(double) * NPARAM);
    init_params((uint64_t)seed * 3 + 2, p);
    /* the gradient and, as its last element, the loss share: one sum */
    double *g = xmalloc(sizeof(double) * (NPARAM + 1));
    dr_tape *t = dr_tape_new();
    if (!t)
        die("dr_tape_new", DR_ENOMEM);

    int fail = 0;
    double worst = 0.0;
    double *gw = NULL, *Xw = NULL, *Yw = NULL;
    if (check) {
        fail |= helper_refusals();
        if (!params_agree(p)) {
            fprintf(stderr, "mpi_mlp (rank %d): parameters differ at the start\n", rank);
            fail = 1;
        }
        if (rank == 0) {
            gw = xmalloc(sizeof(double) * NPARAM);
            Xw = xmalloc(sizeof(double) * (size_t)(batch * L0));
            Yw = xmalloc(sizeof(double) * (size_t)(batch * L3));
        }
    }
    double *t_step = xmalloc(sizeof(double) * (size_t)steps);
    double *t_comp = xmalloc(sizeof(double) * (size_t)steps);
    double *t_sum = xmalloc(sizeof(double) * (size_t)steps);
    if (rank == 0 && !timing)
        printf("%d rank%s, batch %ld (%lld on rank 0), %d parameters\n",
               nranks, nranks > 1 ? "s" : "", batch, (long long)n, NPARAM);

    for (long s = 0; s < steps; s++) {
        const int64_t k = s % nbatch;
        double t0 = MPI_Wtime();
        shard_gradient(t, p, X + k * n * L0, Y + k * n * L3, n, batch, g,
                       &g[NPARAM]);
        double t1 = MPI_Wtime();
        int st = dr_mpi_allreduce_sum(g, NPARAM + 1, MPI_COMM_WORLD);
        if (st != DR_OK)
            die("dr_mpi_allreduce_sum", st);
        double t2 = MPI_Wtime();
        if (check && rank == 0) {
            /* the whole batch in one process, from the samples' indices */
            double lw;
            for (int64_t r = 0; r < batch; r++)
                sample((uint64_t)seed, teacher, k * batch + r, Xw + r * L0,
                       Yw + r * L3);
            shard_gradient(t, p, Xw, Yw, batch, batch, gw, &lw);
            double eg = rel_err(g, gw, NPARAM), el = rel_err(&g[NPARAM], &lw, 1);
            printf("step %ld: loss %.6f; sum over %d rank%s against the whole "
                   "batch: gradient %.2e, loss %.2e (relative, bound 1e-12)\n",
                   s, lw, nranks, nranks > 1 ? "s" : "", eg, el);
            worst = eg > worst ? eg : worst;
            if (!(eg <= 1e-12 && el <= 1e-12))
                fail = 1;
        } else if (rank == 0 && !timing)
            printf("step %3ld  loss %.6f\n", s, g[NPARAM]);
        for (size_t i = 0; i < NPARAM; i++)
            p[i] -= lr * g[i];
        t_step[s] = MPI_Wtime() - t0;
        t_comp[s] = t1 - t0;
        t_sum[s] = t2 - t1;
    }

    if (check) {
        if (!params_agree(p)) {
            fprintf(stderr, "mpi_mlp (rank %d): parameters differ after %ld steps\n",
                    rank, steps);
            fail = 1;
        }
        MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("mpi_mlp --check, %d rank%s: %s (largest relative error "
                   "%.2e)\n", nranks, nranks > 1 ? "s" : "",
                   fail ? "FAILED" : "ok", worst);
    }
    if (timing) {
        /* the sum alone, each after a barrier */
        enum { NSUM = 20 };
        double t_alone[NSUM];
        for (int i = 0; i < NSUM; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            int st = dr_mpi_allreduce_sum(g, NPARAM, MPI_COMM_WORLD);
            if (st != DR_OK)
                die("dr_mpi_allreduce_sum", st);
            t_alone[i] = MPI_Wtime() - t0;
        }
        int warm = steps > 4 ? 2 : 0, m = (int)(steps - warm);
        if (rank == 0)
            printf("%d rank%s, batch %ld, %d steps: step %.3f ms (compute %.3f "
                   "ms, sum %.3f ms); the sum of %d doubles alone %.3f ms\n",
                   nranks, nranks > 1 ? "s" : "", batch, m,
                   1e3 * median(t_step + warm, m), 1e3 * median(t_comp + warm, m),
                   1e3 * median(t_sum + warm, m), NPARAM, 1e3 * median(t_alone, NSUM));
    }

    dr_tape_free(t);
    free(t_step);
    free(t_comp);
    free(t_sum);
    free(gw);
    free(Xw);
    free(Yw);
    free(g);
    free(p);
    free(X);
    free(Y);
    free(teacher);
    MPI_Finalize();
    return fail;
}
