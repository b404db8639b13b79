/*
 * test_dead_nodes.c - the reverse sweep over dead nodes (adjoint zero when
 * the sweep reaches them): a long run of them is passed by reading the
 * adjoints alone, without their records.  Every gradient here is checked
 * bit for bit against a reverse pass written out in the test over the same
 * program, which visits every node; the runs are long, short, at chunk
 * boundaries, beside batch inputs, inside forked jobs, and past an array
 * node, whose adjoints are not in the scalar slots.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a node of the program as the test keeps it: arguments (indices into the
   program's values; -1: none) and the partials the engine records */
typedef struct {
    int64_t a, b;
    double da, db;
} pnode;

typedef struct {
    size_t n, cap;       /* values: the inputs first, then the nodes */
    size_t m;            /* inputs */
    pnode *node;         /* by value index (inputs: a = b = -1) */
    dr_real *v;
    unsigned seed;
} prog;

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffffu;
}

static void prog_push(prog *p, dr_real v, int64_t a, double da, int64_t b,
                      double db)
{
    assert_true(p->n < p->cap);
    p->node[p->n] = (pnode){a, b, da, db};
    p->v[p->n++] = v;
}

/* one operation over two values of the live pool, recorded on t and kept
   in p: a product, a sum, a difference, or a scaling by a constant */
static void prog_op(prog *p, dr_tape *t, const size_t *pool, size_t npool)
{
    size_t i = pool[rnd(&p->seed) % npool], j = pool[rnd(&p->seed) % npool];
    dr_real x = p->v[i], y = p->v[j];
    switch (rnd(&p->seed) % 4) {
    case 0:
        prog_push(p, dr_mul(t, x, y), (int64_t)i, y.val, (int64_t)j, x.val);
        break;
    case 1:
        prog_push(p, dr_add(t, x, y), (int64_t)i, 1.0, (int64_t)j, 1.0);
        break;
    case 2:
        prog_push(p, dr_sub(t, x, y), (int64_t)i, 1.0, (int64_t)j, -1.0);
        break;
    default: {
        double c = (rnd(&p->seed) % 2) ? 0.5 : -0.75;
        prog_push(p, dr_mul(t, x, dr_const(c)), (int64_t)i, c, -1, 0.0);
        break;
    }
    }
}

/* The gradient of the last node with respect to the inputs, every node
   visited (a zero adjoint passes nothing on, as the engine's does): in the
   engine's order, a node's first argument then its second. */
static void reference_gradient(const prog *p, size_t out, double *g)
{
    double *A = calloc(p->n, sizeof *A);
    assert_non_null(A);
    A[out] = 1.0;
    for (size_t k = out + 1; k-- > p->m;) {
        const pnode *q = &p->node[k];
        if (A[k] == 0.0)
            continue;
        A[q->a] = A[q->a] + q->da * A[k];
        if (q->b >= 0)
            A[q->b] = A[q->b] + q->db * A[k];
    }
    memcpy(g, A, p->m * sizeof *g);
    free(A);
}

/*
 * A program of live nodes with dead runs between them: a live node takes
 * its arguments from the live pool and joins it; a dead run's nodes take
 * theirs from the pool too but nothing reads them.  Run lengths are drawn
 * from 0 .. maxrun (some shorter than the look-ahead's threshold, some
 * longer).  The output is the last live node.
 */
static void check_program(unsigned seed, size_t m, size_t nlive,
                          size_t maxrun, bool batch)
{
    prog p = {0};
    p.seed = seed;
    p.m = m;
    p.cap = m + nlive * (maxrun + 1) + 1;
    p.node = malloc(p.cap * sizeof *p.node);
    p.v = malloc(p.cap * sizeof *p.v);
    size_t *pool = malloc(p.cap * sizeof *pool);
    double *xs = malloc(m * sizeof *xs), *g = malloc(m * sizeof *g),
           *want = malloc(m * sizeof *want);
    dr_real *in = malloc(m * sizeof *in);
    assert_true(p.node && p.v && pool && xs && g && want && in);

    dr_tape *t = chk_tape_new();
    for (size_t i = 0; i < m; i++)
        xs[i] = 0.5 + (double)(rnd(&p.seed) % 1000) / 1000.0;
    if (batch) {
        CHK_STATUS(dr_inputs(t, m, xs, in), DR_OK);
    } else {
        for (size_t i = 0; i < m; i++)
            in[i] = dr_input(t, xs[i]);
    }
    size_t npool = 0;
    for (size_t i = 0; i < m; i++) {
        prog_push(&p, in[i], -1, 0.0, -1, 0.0);
        pool[npool++] = i;
    }
    for (size_t k = 0; k < nlive; k++) {
        size_t run = rnd(&p.seed) % (maxrun + 1);
        for (size_t d = 0; d < run; d++)
            prog_op(&p, t, pool, npool); /* dead: not in the pool */
        prog_op(&p, t, pool, npool);
        pool[npool++] = p.n - 1;
    }
    size_t out = p.n - 1;
    CHK_STATUS(dr_tape_status(t), DR_OK);
    assert_true(isfinite(p.v[out].val));

    reference_gradient(&p, out, want);
    CHK_STATUS(dr_gradient(t, p.v[out], m, in, g), DR_OK);
    for (size_t i = 0; i < m; i++)
        CHK_SAME(g[i], want[i]);
    /* the same through seed and sweep, the adjoints read one by one */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, p.v[out].idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    for (size_t i = 0; i < m; i++)
        CHK_SAME(dr_adjoint(t, in[i].idx), want[i]);

    dr_tape_free(t);
    free(p.node);
    free(p.v);
    free(pool);
    free(xs);
    free(g);
    free(want);
    free(in);
}

static void test_dead_runs(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 20; seed++)
        check_program(seed, 6, 300, seed % 4 == 0 ? 12 : 120, seed % 2);
}

/* runs only shorter than the threshold, and runs of hundreds */
static void test_dead_run_lengths(void **state)
{
    (void)state;
    check_program(101, 4, 2000, 15, false);
    check_program(102, 4, 200, 900, false);
    check_program(103, 4, 60, 3000, true);
}

/* a program of many chunks: runs across chunk boundaries */
static void test_dead_runs_across_chunks(void **state)
{
    (void)state;
    check_program(201, 16, 20000, 60, true);
}

/* a program whose output is not the last node: everything after it is
   dead, and the nodes before the first input are batch inputs */
static void test_output_before_the_end(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double xs[3] = {0.25, 1.5, -2.0};
    dr_real x[3];
    CHK_STATUS(dr_inputs(t, 3, xs, x), DR_OK);
    dr_real y = dr_mul(t, x[0], dr_add(t, x[1], x[2])); /* x0 (x1 + x2) */
    dr_real z = x[2];
    for (int k = 0; k < 5000; k++)
        z = dr_mul(t, z, x[k % 3]);
    double g[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_SAME(g[0], xs[1] + xs[2]);
    CHK_SAME(g[1], xs[0]);
    CHK_SAME(g[2], xs[0]);
    dr_tape_free(t);
}

/* An array node below a dead run: its scalar slot stays zero (its
   adjoints are the array's own), so the look-ahead must not pass it. */
static void test_dead_run_past_an_array_node(void **state)
{
    (void)state;
    double xs[5] = {1, 2, 3, 4, 5};
    dr_tape *t = chk_tape_new();
    dr_real s = dr_input(t, 2.0);
    dr_arr X = dr_arr_input(t, 1, 5, 1, xs);
    dr_arr Y = dr_arr_scale(t, s, X); /* s X */
    dr_real d = s;
    for (int k = 0; k < 200; k++) /* dead */
        d = dr_mul(t, d, s);
    dr_real y = dr_arr_sum(t, Y); /* s (x1 + ... + x5) */
    CHK_STATUS(dr_tape_status(t), DR_OK);
    double gs = NAN;
    CHK_STATUS(dr_gradient(t, y, 1, &s, &gs), DR_OK);
    CHK_SAME(gs, 15.0);
    double gx[5];
    CHK_STATUS(dr_arr_adjoint(t, X.idx, gx), DR_OK);
    for (int i = 0; i < 5; i++)
        CHK_SAME(gx[i], 2.0);
    dr_tape_free(t);
}

/* dead runs inside forked jobs, swept on one and on two threads */
typedef struct {
    prog *p;       /* one program per job, recorded on its handle */
    dr_real *in;   /* the root's inputs, read by every job */
    size_t m;
    dr_real *out;  /* each job's last live node */
} jobs_ctx;

static void job(dr_tape *child, size_t i, void *ctx)
{
    jobs_ctx *c = ctx;
    prog *p = &c->p[i];
    size_t *pool = malloc(p->cap * sizeof *pool);
    assert_non_null(pool);
    size_t npool = 0;
    for (size_t k = 0; k < c->m; k++) {
        prog_push(p, c->in[k], -1, 0.0, -1, 0.0);
        pool[npool++] = k;
    }
    for (size_t k = 0; k < 400; k++) {
        size_t run = rnd(&p->seed) % 100;
        for (size_t d = 0; d < run; d++)
            prog_op(p, child, pool, npool);
        prog_op(p, child, pool, npool);
        pool[npool++] = p->n - 1;
    }
    c->out[i] = p->v[p->n - 1];
    free(pool);
}

static void test_dead_runs_in_jobs(void **state)
{
    (void)state;
    enum { M = 4, J = 4 };
    for (unsigned threads = 1; threads <= 2; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        double xs[M] = {0.75, 1.25, 0.5, 1.5};
        dr_real in[M], out[J];
        for (int k = 0; k < M; k++)
            in[k] = dr_input(t, xs[k]);
        prog p[J];
        for (int j = 0; j < J; j++) {
            p[j] = (prog){0};
            p[j].seed = 300u + (unsigned)j;
            p[j].m = M;
            p[j].cap = M + 400 * 100 + 1;
            p[j].node = malloc(p[j].cap * sizeof *p[j].node);
            p[j].v = malloc(p[j].cap * sizeof *p[j].v);
            assert_true(p[j].node && p[j].v);
        }
        jobs_ctx c = {p, in, M, out};
        CHK_STATUS(dr_fork_run(t, J, job, &c), DR_OK);
        /* y = the sum of the jobs' outputs */
        dr_real y = out[0];
        for (int j = 1; j < J; j++)
            y = dr_add(t, y, out[j]);
        double g[M], want[M] = {0};
        CHK_STATUS(dr_gradient(t, y, M, in, g), DR_OK);
        for (int j = 0; j < J; j++) {
            double gj[M];
            reference_gradient(&p[j], p[j].n - 1, gj);
            for (int k = 0; k < M; k++)
                want[k] += gj[k];
        }
        /* the jobs' shares are added in the engine's own order: equal to
           rounding, and bit for bit at one thread and at two */
        for (int k = 0; k < M; k++)
            CHK_REL(g[k], want[k], 1e-12);
        static double first[M];
        for (int k = 0; k < M; k++) {
            if (threads == 1)
                first[k] = g[k];
            else
                CHK_SAME(g[k], first[k]);
        }
        for (int j = 0; j < J; j++) {
            free(p[j].node);
            free(p[j].v);
        }
        dr_tape_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_dead_runs, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_dead_run_lengths, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_dead_runs_across_chunks, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_output_before_the_end, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_dead_run_past_an_array_node, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_dead_runs_in_jobs, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
