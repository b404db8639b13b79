/*
 * test_parallel.c - fork-join parallelism (dr_fork, dr_join, dr_fork_run,
 * dr_set_threads): gradients of forked programs against the same program
 * recorded sequentially (bit-identical at any thread count: a parallel
 * sweep adds each job's logged adds into its ancestors in the sequential
 * order; to rounding only after an allocation failed), nested and
 * unbalanced fork trees, empty jobs, thousands of small jobs, jobs
 * recorded by several pthreads at once, repeated sweeps, clear-and-reuse,
 * out-of-memory injection, and the error cases.
 * Also run under ThreadSanitizer (make test-tsan).
 */
#include "check.h"
#include "jobs/jobs.h" /* dr__find_node */

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ programs
 * A random program tree: a job does some scalar operations on its copy of
 * the variables, may fork into children (each runs a sub-program on a copy
 * of the variables and returns one scalar), folds the children's results
 * into its variables after the join, does more operations, and returns
 * the sum of its variables.  Every choice comes from a seed derived from the
 * path in the tree, so all execution modes record the same computation.
 */
#define NV 6

enum mode {
    SEQ,      /* no forks: children run in order on the same handle      */
    FORK,     /* dr_fork, children in order on this thread, dr_join      */
    RUN,      /* dr_fork_run (the tape's pool when threads > 1)          */
    PTHREADS  /* dr_fork, one pthread per child at the top levels        */
};

typedef struct prog {
    enum mode mode;
    int depth;        /* maximum fork depth                              */
    int max_kids;     /* children per fork: 1 .. max_kids                */
    int ops;          /* operations per stretch: 0 .. ops - 1            */
    int pthread_levels; /* PTHREADS: levels that use pthreads (then FORK) */
    int fork_fail;    /* out: dr_fork failed (fell back to SEQ)          */
} prog;

static uint64_t mix(uint64_t a, uint64_t b)
{
    chk_rng r;
    chk_rng_seed(&r, a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull));
    return chk_rng_u64(&r);
}

static dr_real run(prog *p, dr_tape *t, const dr_real *vin, uint64_t seed,
                   int level);

static void ops(dr_tape *t, dr_real *v, chk_rng *r, int n)
{
    for (int k = 0; k < n; k++) {
        int i = (int)chk_rng_below(r, NV), j = (int)chk_rng_below(r, NV);
        int dst = (int)chk_rng_below(r, NV);
        switch (chk_rng_below(r, 7)) {
        case 0: v[dst] = dr_add(t, v[i], v[j]); break;
        case 1: v[dst] = dr_mul(t, v[i], v[j]); break;
        case 2: v[dst] = dr_sin(t, v[i]); break;
        case 3: v[dst] = dr_tanh(t, dr_sub(t, v[i], v[j])); break;
        case 4: v[dst] = dr_mul(t, v[i], dr_const(0.75)); break;
        case 5: {
            dr_idx a[3] = {v[i].idx, v[j].idx, v[dst].idx};
            double d[3] = {0.5, -0.25, 0.125};
            double val = 0.5 * v[i].val - 0.25 * v[j].val + 0.125 * v[dst].val;
            dr_real y = {val, dr_recordn(t, 3, a, d)};
            if (y.idx == DR_NONE && (v[i].idx != DR_NONE || v[j].idx != DR_NONE ||
                                     v[dst].idx != DR_NONE))
                y.idx = DR_NONE; /* failure: keep the value, as ops do */
            v[dst] = y;
            break;
        }
        default: v[dst] = dr_cos(t, v[i]); break;
        }
    }
}

typedef struct kidarg {
    prog *p;
    const dr_real *v;
    uint64_t seed;
    int level;
    dr_tape *handle;
    dr_real out;
} kidarg;

static void *kid_thread(void *arg)
{
    kidarg *a = arg;
    a->out = run(a->p, a->handle, a->v, a->seed, a->level);
    return NULL;
}

static void kid_fn(dr_tape *child, size_t i, void *ctx)
{
    kidarg *a = &((kidarg *)ctx)[i];
    a->out = run(a->p, child, a->v, a->seed, a->level);
}

static dr_real run(prog *p, dr_tape *t, const dr_real *vin, uint64_t seed,
                   int level)
{
    chk_rng r;
    chk_rng_seed(&r, seed);
    dr_real v[NV];
    memcpy(v, vin, sizeof v);
    if (chk_rng_below(&r, 6) == 0 && level > 0)
        return v[chk_rng_below(&r, NV)]; /* an empty job: records nothing */
    ops(t, v, &r, (int)chk_rng_below(&r, (uint64_t)p->ops));
    /* unbalanced: some jobs fork deeper than others */
    bool fork = level < p->depth && (level < 2 || chk_rng_below(&r, 3) != 0);
    if (fork) {
        size_t n = 1 + (size_t)chk_rng_below(&r, (uint64_t)p->max_kids);
        kidarg *ka = calloc(n, sizeof *ka);
        dr_tape **kids = calloc(n, sizeof *kids);
        assert_non_null(ka);
        assert_non_null(kids);
        for (size_t i = 0; i < n; i++) {
            ka[i].p = p;
            ka[i].v = v;
            ka[i].seed = mix(seed, i);
            ka[i].level = level + 1;
        }
        enum mode m = p->mode;
        if (m == PTHREADS && level >= p->pthread_levels)
            m = FORK;
        dr_status st = DR_OK;
        if (m == RUN) {
            st = dr_fork_run(t, n, kid_fn, ka);
            if (st != DR_OK) {
                /* dr_fork failed before running anything: run here */
                p->fork_fail++;
                for (size_t i = 0; i < n; i++)
                    ka[i].out = run(p, t, v, ka[i].seed, level + 1);
            }
        } else if (m == FORK || m == PTHREADS) {
            st = dr_fork(t, n, kids);
            if (st != DR_OK) {
                p->fork_fail++;
                for (size_t i = 0; i < n; i++)
                    ka[i].out = run(p, t, v, ka[i].seed, level + 1);
            } else if (m == FORK) {
                for (size_t i = 0; i < n; i++)
                    ka[i].out = run(p, kids[i], v, ka[i].seed, level + 1);
            } else {
                pthread_t *th = calloc(n, sizeof *th);
                bool *ok = calloc(n, sizeof *ok);
                assert_non_null(th);
                assert_non_null(ok);
                for (size_t i = 0; i < n; i++) {
                    ka[i].handle = kids[i];
                    ok[i] = pthread_create(&th[i], NULL, kid_thread, &ka[i]) == 0;
                    if (!ok[i])
                        kid_thread(&ka[i]);
                }
                for (size_t i = 0; i < n; i++)
                    if (ok[i])
                        pthread_join(th[i], NULL);
                free(th);
                free(ok);
            }
            if (st == DR_OK)
                CHK_STATUS(dr_join(t), DR_OK);
        } else {
            for (size_t i = 0; i < n; i++)
                ka[i].out = run(p, t, v, ka[i].seed, level + 1);
        }
        for (size_t i = 0; i < n; i++)
            v[i % NV] = dr_add(t, v[i % NV], ka[i].out);
        free(ka);
        free(kids);
        ops(t, v, &r, (int)chk_rng_below(&r, (uint64_t)p->ops));
    }
    dr_real s = v[0];
    for (int i = 1; i < NV; i++)
        s = dr_add(t, s, v[i]);
    return s;
}

typedef struct result {
    double y;
    double g[NV];
    size_t len;
    dr_status st;
} result;

/* record the program on t (cleared first), gradient w.r.t. the inputs */
static result eval_on(dr_tape *t, prog *p, uint64_t seed)
{
    result res;
    memset(&res, 0, sizeof res);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real x[NV];
    for (int i = 0; i < NV; i++)
        x[i] = dr_input(t, 0.1 + 0.13 * i);
    dr_real y = run(p, t, x, seed, 0);
    res.y = y.val;
    res.len = dr_tape_len(t);
    res.st = dr_gradient(t, y, NV, x, res.g);
    return res;
}

static result eval(prog p, unsigned threads, uint64_t seed)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_set_threads(t, threads), DR_OK);
    result r = eval_on(t, &p, seed);
    dr_tape_free(t);
    return r;
}

static void expect_same(result a, result b)
{
    CHK_STATUS(a.st, DR_OK);
    CHK_STATUS(b.st, DR_OK);
    CHK_SAME(a.y, b.y);
    assert_int_equal(a.len, b.len);
    for (int i = 0; i < NV; i++)
        CHK_SAME(a.g[i], b.g[i]);
}


/* ---------------------------------------------------------------- tests */

/* A fixed small fork: two children, results combined; threads 1 and 2. */
static void test_basic_fork(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        assert_int_equal(dr_get_threads(t), threads);
        dr_real a = dr_input(t, 2.0), b = dr_input(t, 3.0);
        dr_tape *k[2];
        CHK_STATUS(dr_fork(t, 2, k), DR_OK);
        dr_real u = dr_mul(k[0], a, b);   /* 6, from ancestors' ids */
        dr_real w = dr_sin(k[1], a);      /* sin 2 */
        dr_real w2 = dr_mul(k[1], w, a);  /* a sin a */
        assert_true(u.idx != DR_NONE && w2.idx != DR_NONE);
        assert_int_equal(dr_tape_len(k[0]), 1);
        assert_int_equal(dr_tape_len(k[1]), 2);
        CHK_STATUS(dr_join(t), DR_OK);
        assert_int_equal(dr_tape_len(t), 5);
        dr_real y = dr_add(t, u, w2);     /* ab + a sin a */
        dr_real x[2] = {a, b};
        double g[2];
        CHK_STATUS(dr_gradient(t, y, 2, x, g), DR_OK);
        CHK_REL(g[0], 3.0 + sin(2.0) + 2.0 * cos(2.0), 1e-15);
        CHK_SAME(g[1], 2.0);
        CHK_REL(y.val, 6.0 + 2.0 * sin(2.0), 1e-15);
        assert_true(dr_tape_bytes(t) > 0);
        dr_tape_free(t);
    }
}

/* Random fork trees, depth 4-5, 1-4 children: every mode and thread count
   against the sequential recording. */
static void test_trees_match_sequential(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        prog p = {SEQ, 4 + (int)(seed % 2), 4, 12, 2, 0};
        result ref = eval(p, 1, seed);
        CHK_STATUS(ref.st, DR_OK);
        chk_context("seed %llu", (unsigned long long)seed);
        p.mode = FORK;
        expect_same(eval(p, 1, seed), ref);  /* bit-identical */
        p.mode = RUN;
        expect_same(eval(p, 1, seed), ref);
        p.mode = PTHREADS;
        expect_same(eval(p, 1, seed), ref); /* parallel recording, 1 sweeper */
        for (unsigned threads = 2; threads <= 4; threads += 2) {
            p.mode = FORK;
            expect_same(eval(p, threads, seed), ref);
            p.mode = RUN;
            expect_same(eval(p, threads, seed), ref);
            p.mode = PTHREADS;
            expect_same(eval(p, threads, seed), ref);
        }
        chk_context(NULL);
    }
}

/* A deep chain of nested single forks and a deep unbalanced tree. */
static void test_deep_nesting(void **state)
{
    (void)state;
    prog p = {SEQ, 12, 2, 6, 3, 0};
    for (uint64_t seed = 100; seed < 104; seed++) {
        result ref = eval(p, 1, seed);
        prog q = p;
        q.mode = RUN;
        expect_same(eval(q, 1, seed), ref);
        expect_same(eval(q, 2, seed), ref);
        q.mode = PTHREADS;
        expect_same(eval(q, 3, seed), ref);
    }
    /* 200 nested forks of one child each, recorded and swept */
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_set_threads(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.5);
    dr_tape *h[201];
    h[0] = t;
    dr_real v = x;
    for (int d = 0; d < 200; d++) {
        v = dr_mul(h[d], v, dr_const(1.01));
        CHK_STATUS(dr_fork(h[d], 1, &h[d + 1]), DR_OK);
    }
    v = dr_add(h[200], v, x);
    for (int d = 199; d >= 0; d--)
        CHK_STATUS(dr_join(h[d]), DR_OK);
    double g;
    CHK_STATUS(dr_gradient(t, v, 1, &x, &g), DR_OK);
    CHK_REL(g, pow(1.01, 200) + 1.0, 1e-13);
    assert_int_equal(dr_tape_len(t), 202);
    dr_tape_free(t);
}

/* Children that record nothing, alone and beside busy ones. */
static void test_empty_jobs(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        /* fork before anything is recorded: the first job is empty */
        dr_tape *k[4];
        CHK_STATUS(dr_fork(t, 3, k), DR_OK);
        dr_real a = dr_input(k[1], 1.5);
        CHK_STATUS(dr_join(t), DR_OK);
        dr_real y = dr_mul(t, a, a);
        double g;
        CHK_STATUS(dr_gradient(t, y, 1, &a, &g), DR_OK);
        CHK_SAME(g, 3.0);
        /* all children empty, and an empty continuation */
        CHK_STATUS(dr_fork(t, 4, k), DR_OK);
        CHK_STATUS(dr_join(t), DR_OK);
        CHK_STATUS(dr_fork(t, 1, k), DR_OK);
        CHK_STATUS(dr_join(t), DR_OK);
        CHK_STATUS(dr_gradient(t, y, 1, &a, &g), DR_OK);
        CHK_SAME(g, 3.0);
        dr_real z = dr_mul(t, y, a); /* ids from before the forks */
        CHK_STATUS(dr_gradient(t, z, 1, &a, &g), DR_OK);
        CHK_SAME(g, 6.75);
        assert_int_equal(dr_tape_len(t), 3);
        dr_tape_free(t);
    }
}

/* Thousands of small jobs in one fork, and many forks in a row. */
typedef struct small_ctx {
    dr_real x;
    dr_real *out;
} small_ctx;

static void small_fn(dr_tape *c, size_t i, void *ctx)
{
    small_ctx *s = ctx;
    dr_real v = dr_mul(c, s->x, dr_const((double)(i % 7) + 1.0));
    if (i % 3 == 0)
        v = dr_sin(c, v);
    if (i % 5 == 0)
        v = dr_const(1.0); /* an empty job */
    s->out[i] = v;
}

static void test_many_small_jobs(void **state)
{
    (void)state;
    enum { N = 5000 };
    static dr_real out[N];
    double ref = 0.0;
    for (size_t i = 0; i < N; i++) {
        double c = (double)(i % 7) + 1.0;
        if (i % 5 == 0)
            continue;
        ref += i % 3 == 0 ? c * cos(0.3 * c) : c;
    }
    for (unsigned threads = 1; threads <= 3; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        for (int rep = 0; rep < 2; rep++) {
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            dr_real x = dr_input(t, 0.3);
            small_ctx s = {x, out};
            CHK_STATUS(dr_fork_run(t, N, small_fn, &s), DR_OK);
            dr_idx ids[N];
            double ps[N];
            size_t m = 0;
            for (size_t i = 0; i < N; i++)
                if (out[i].idx != DR_NONE) {
                    ids[m] = out[i].idx;
                    ps[m++] = 1.0;
                }
            dr_real y = {0.0, dr_recordn(t, m, ids, ps)};
            double g;
            CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
            CHK_REL(g, ref, 1e-12);
        }
        /* 300 forks in a row on the root, 2 children each */
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        dr_real x = dr_input(t, 0.3), v = x;
        for (int f = 0; f < 300; f++) {
            dr_tape *k[2];
            CHK_STATUS(dr_fork(t, 2, k), DR_OK);
            dr_real a = dr_mul(k[0], v, dr_const(0.5));
            dr_real b = dr_mul(k[1], v, dr_const(0.5));
            CHK_STATUS(dr_join(t), DR_OK);
            v = dr_add(t, a, b);
            v = dr_mul(t, v, dr_const(1.001));
        }
        double g;
        CHK_STATUS(dr_gradient(t, v, 1, &x, &g), DR_OK);
        CHK_REL(g, pow(1.001, 300), 1e-12);
        assert_int_equal(dr_tape_len(t), 1 + 300 * 4);
        dr_tape_free(t);
    }
}

/* Jobs recorded truly at once: 4 pthreads, each forks again into 3. */
static void test_concurrent_recording(void **state)
{
    (void)state;
    for (uint64_t seed = 200; seed < 215; seed++) {
        prog p = {SEQ, 4, 4, 40, 2, 0};
        result ref = eval(p, 1, seed);
        p.mode = PTHREADS;
        expect_same(eval(p, 1, seed), ref);
        expect_same(eval(p, 2, seed), ref);
    }
}

/* Sweeping the same forked tape again; Jacobian rows; seeds inside jobs. */
static void test_repeated_sweeps(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        prog p = {RUN, 4, 3, 10, 0, 0};
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real x[NV];
        for (int i = 0; i < NV; i++)
            x[i] = dr_input(t, 0.2 * i - 0.4);
        dr_real y = run(&p, t, x, 77, 0);
        dr_real y2 = dr_mul(t, y, y);
        double g1[NV], g2[NV], J[2 * NV];
        CHK_STATUS(dr_gradient(t, y, NV, x, g1), DR_OK);
        for (int rep = 0; rep < 5; rep++) {
            CHK_STATUS(dr_gradient(t, y, NV, x, g2), DR_OK);
            for (int i = 0; i < NV; i++)
                CHK_SAME(g2[i], g1[i]);
        }
        dr_real ys[2] = {y, y2};
        CHK_STATUS(dr_jacobian(t, 2, ys, NV, x, J), DR_OK);
        for (int i = 0; i < NV; i++) {
            CHK_SAME(J[i], g1[i]);
            CHK_CLOSE(J[NV + i], 2.0 * y.val * g1[i], 1e-12, 1e-13);
        }
        /* seeding by hand, adjoints of every input readable */
        CHK_STATUS(dr_adjoints_clear(t), DR_OK);
        CHK_STATUS(dr_seed(t, y.idx, 2.0), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        for (int i = 0; i < NV; i++)
            CHK_SAME(dr_adjoint(t, x[i].idx), 2.0 * g1[i]); /* x2 is exact */
        dr_tape_free(t);
    }
}

/* Clear and record again: same results, and nothing allocated the second
   time round (one thread: the same chunks are reused in the same order;
   two: each thread's chunks go back to its own list, see take_chunk). */
static void test_clear_and_reuse(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    for (unsigned threads = 1; threads <= 2; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        prog p = {RUN, 4, 4, 30, 0, 0};
        prog s = p;
        s.mode = SEQ;
        for (uint64_t seed = 300; seed < 306; seed++) {
            result ref = eval(s, 1, seed);
            result a = eval_on(t, &p, seed);
            size_t bytes = dr_tape_bytes(t);
            chk_alloc_reset_counts(&al);
            result b = eval_on(t, &p, seed);
            if (threads == 1) {
                assert_int_equal(al.calls, 0);
                assert_int_equal(dr_tape_bytes(t), bytes);
                expect_same(a, ref);
                expect_same(b, ref);
            } else {
                /* no chunk storage at 2 threads either: whichever thread
                   records a job finds a free chunk (its own first, then
                   the others').  Only a recording handle may be new, when
                   more jobs than the first time happen to be open at once
                   (a handle is far smaller than the smallest chunk). */
                assert_true(al.max_size < 32 * sizeof(double[4]));
                expect_same(a, ref);
                expect_same(b, ref);
            }
        }
        /* a different program on the same tape */
        p.depth = 2;
        s.depth = 2;
        result ref = eval(s, 1, 999);
        result c = eval_on(t, &p, 999);
        if (threads == 1)
            expect_same(c, ref);
        else
            expect_same(c, ref);
        dr_tape_free(t);
    }
    assert_int_equal(al.live, 0);
    assert_int_equal(al.bad_frees, 0);
    chk_alloc_uninstall();
}

/* Fail every allocation in turn: no crash, no leak, and either the right
   gradient or DR_ENOMEM (a failed dr_fork falls back to sequential). */
static void test_oom_injection(void **state)
{
    (void)state;
    prog s = {SEQ, 4, 3, 20, 0, 0};
    result ref = eval(s, 1, 4242);
    CHK_STATUS(ref.st, DR_OK);
    chk_alloc al;
    chk_alloc_install(&al);
    static const enum mode modes[] = {FORK, RUN, PTHREADS};
    for (size_t mi = 0; mi < 3; mi++) {
        for (unsigned threads = 1; threads <= 2; threads++) {
            size_t ok_runs = 0, oom_runs = 0;
            for (size_t k = 1; k < 400; k++) {
                chk_context("mode %zu threads %u fail at %zu", mi, threads, k);
                prog p = s;
                p.mode = modes[mi];
                p.pthread_levels = 1;
                chk_alloc_reset_counts(&al);
                chk_alloc_fail_in(&al, k, false);
                dr_tape *t = dr_tape_new();
                if (!t) {
                    chk_alloc_fail_in(&al, 0, false);
                    continue;
                }
                dr_status st = dr_set_threads(t, threads);
                CHK_STATUS(st, DR_OK);
                dr_real x[NV];
                for (int i = 0; i < NV; i++)
                    x[i] = dr_input(t, 0.1 + 0.13 * i);
                dr_real y = run(&p, t, x, 4242, 0);
                double g[NV];
                st = dr_gradient(t, y, NV, x, g);
                bool failed = al.fails > 0;
                chk_alloc_fail_in(&al, 0, false);
                if (st == DR_OK) {
                    ok_runs++;
                    CHK_SAME(y.val, ref.y);
                    double scale = 0.0;
                    for (int i = 0; i < NV; i++)
                        scale = fmax(scale, fabs(ref.g[i]));
                    for (int i = 0; i < NV; i++)
                        CHK_CLOSE(g[i], ref.g[i], 1e-12, 1e-13 * scale);
                } else {
                    oom_runs++;
                    CHK_STATUS(st, DR_ENOMEM);
                    assert_true(failed);
                    /* sticky, unless only the adjoint array failed */
                    assert_true(dr_tape_status(t) == DR_ENOMEM ||
                                dr_tape_status(t) == DR_OK);
                    /* clear resets the status; the tape works again */
                    CHK_STATUS(dr_tape_clear(t), DR_OK);
                    dr_real a = dr_input(t, 2.0);
                    dr_real b = dr_mul(t, a, a);
                    double ga;
                    CHK_STATUS(dr_gradient(t, b, 1, &a, &ga), DR_OK);
                    CHK_SAME(ga, 4.0);
                }
                dr_tape_free(t);
                assert_int_equal(al.live, 0);
                if (!failed && k > 1)
                    break; /* every allocation point has been failed once */
            }
            assert_true(oom_runs > 5);
            assert_true(ok_runs >= 1);
        }
    }
    chk_context(NULL);
    chk_alloc_uninstall();
}

/* Jobs that read their ancestors' ids at every step: each job's sweep logs
   a few blocks of adds into the inputs' adjoints. */
/* (1000 steps: a kid's log takes blocks of five sizes, record.h) */
enum { LOG_KIDS = 4, LOG_STEPS = 1000 };

static void log_fn(dr_tape *c, size_t i, void *ctx)
{
    dr_real *x = ctx; /* x[0 .. NV-1] the inputs, x[NV + i] kid i's result */
    dr_real v = x[i % NV];
    for (int j = 0; j < LOG_STEPS; j++)
        v = dr_mul(c, dr_sin(c, v), x[(i + (size_t)j) % NV]);
    x[NV + i] = v;
}

/* the gradient of the sum of the kids' results at the inputs, recorded on
   a new tape of the given threads; *failed: an allocation of the gradient
   failed (with al, failing the k-th allocation of the gradient, k > 0) */
static dr_status log_program(unsigned threads, chk_alloc *al, size_t k,
                             double *g, bool *failed)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_set_threads(t, threads), DR_OK);
    dr_real x[NV + LOG_KIDS];
    for (int i = 0; i < NV; i++)
        x[i] = dr_input(t, 0.5 + 0.07 * i);
    CHK_STATUS(dr_fork_run(t, LOG_KIDS, log_fn, x), DR_OK);
    dr_real y = x[NV];
    for (int i = 1; i < LOG_KIDS; i++)
        y = dr_add(t, y, x[NV + i]);
    if (al) {
        chk_alloc_reset_counts(al);
        chk_alloc_fail_in(al, k, false);
    }
    dr_status st = dr_gradient(t, y, NV, x, g);
    if (al) {
        *failed = al->fails > 0;
        chk_alloc_fail_in(al, 0, false);
    }
    dr_tape_free(t);
    return st;
}

/* The parallel sweep's logs: bit-identical to one thread; and with each
   allocation of the sweep failing in turn (the adjoints, the threads'
   table of array buffers, a log's blocks), either DR_ENOMEM or the same
   gradient, bit for bit, and no leak. */
static void test_sweep_logs(void **state)
{
    (void)state;
    double ref[NV], g[NV];
    bool failed = false;
    CHK_STATUS(log_program(1, NULL, 0, ref, &failed), DR_OK);
    for (unsigned threads = 2; threads <= 3; threads++) {
        CHK_STATUS(log_program(threads, NULL, 0, g, &failed), DR_OK);
        for (int i = 0; i < NV; i++)
            CHK_SAME(g[i], ref[i]);
    }
    chk_alloc al;
    chk_alloc_install(&al);
    size_t ok_after_failure = 0;
    for (size_t k = 1; k < 200; k++) {
        chk_context("fail at %zu", k);
        dr_status st = log_program(2, &al, k, g, &failed);
        assert_int_equal(al.live, 0);
        if (st == DR_OK) {
            ok_after_failure += failed;
            for (int i = 0; i < NV; i++)
                CHK_SAME(g[i], ref[i]);
        } else {
            CHK_STATUS(st, DR_ENOMEM);
            assert_true(failed);
        }
        if (!failed)
            break; /* every allocation of the gradient has failed once */
    }
    chk_context(NULL);
    /* what the sweep can do without (the table of array buffers) could
       not be had, and the sweep went on without it */
    assert_true(ok_after_failure >= 1);
    chk_alloc_uninstall();
}

/* A tape of more ids than the zeroing of the adjoints does on one thread
   (DR_ZERO_SPLIT): the slots are zeroed in pieces on the pool.  The same
   gradient twice on the same tape, after a clear, and bit for bit the same
   at 1, 2 and 3 threads: a slot left over from the first sweep would add
   into the second. */
enum { BIG_KIDS = 4, BIG_STEPS = 25000 }; /* 2 nodes a step: 200000 ids */

static void big_fn(dr_tape *c, size_t i, void *ctx)
{
    dr_real *x = ctx; /* x[0] the input, x[1 + i] kid i's result */
    dr_real v = dr_mul(c, x[0], dr_const(1.0 + 0.1 * (double)i));
    for (int j = 0; j < BIG_STEPS; j++)
        v = dr_add(c, dr_mul(c, v, dr_const(0.99999)), dr_const(1e-3));
    x[1 + i] = v;
}

static void test_large_parallel_clear(void **state)
{
    (void)state;
    double ref = 0.0;
    for (unsigned threads = 1; threads <= 3; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real x[1 + BIG_KIDS];
        x[0] = dr_input(t, 0.7);
        CHK_STATUS(dr_fork_run(t, BIG_KIDS, big_fn, x), DR_OK);
        dr_real y = dr_sumn(t, BIG_KIDS, x + 1);
        assert_true(dr_tape_len(t) > 2 * (size_t)BIG_KIDS * BIG_STEPS);
        double g[2];
        for (int rep = 0; rep < 2; rep++)
            CHK_STATUS(dr_gradient(t, y, 1, x, &g[rep]), DR_OK);
        CHK_SAME(g[1], g[0]);
        if (threads == 1)
            ref = g[0];
        CHK_SAME(g[0], ref);
        dr_tape_free(t);
    }
    double want = 0.0;
    for (int i = 0; i < BIG_KIDS; i++)
        want += (1.0 + 0.1 * i) * pow(0.99999, BIG_STEPS);
    CHK_REL(ref, want, 1e-12);
}

/* The error cases of the API. */
static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_tape *k[2], *kk[2];
    dr_real a = dr_input(t, 1.0);

    CHK_STATUS(dr_join(t), DR_EINVAL);          /* join without fork */
    CHK_STATUS(dr_join(NULL), DR_EINVAL);
    CHK_STATUS(dr_fork(t, 0, k), DR_EINVAL);
    CHK_STATUS(dr_fork(t, 2, NULL), DR_EINVAL);
    CHK_STATUS(dr_fork(NULL, 2, k), DR_EINVAL);
    CHK_STATUS(dr_fork_run(t, 2, NULL, NULL), DR_EINVAL);
    CHK_STATUS(dr_set_threads(NULL, 2), DR_EINVAL);

    CHK_STATUS(dr_fork(t, 2, k), DR_OK);
    CHK_STATUS(dr_fork(t, 2, kk), DR_EBUSY);    /* already forked */
    /* the forked parent refuses everything that records, sweeps or clears */
    dr_real bad = dr_mul(t, a, a);
    assert_true(bad.idx == DR_NONE);
    CHK_SAME(bad.val, 1.0);
    CHK_STATUS(dr_seed(t, a.idx, 1.0), DR_EBUSY);
    CHK_STATUS(dr_reverse(t), DR_EBUSY);
    CHK_STATUS(dr_adjoints_clear(t), DR_EBUSY);
    CHK_STATUS(dr_tape_clear(t), DR_EBUSY);
    CHK_STATUS(dr_set_threads(t, 2), DR_EBUSY);
    double g;
    CHK_STATUS(dr_gradient(t, a, 1, &a, &g), DR_EBUSY);
    /* child handles cannot seed, sweep, read adjoints or clear */
    CHK_STATUS(dr_seed(k[0], a.idx, 1.0), DR_EINVAL);
    CHK_STATUS(dr_reverse(k[0]), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(k[0]), DR_EINVAL);
    CHK_STATUS(dr_set_threads(k[0], 2), DR_EINVAL);
    CHK_STATUS(dr_adjoint_get(k[0], a.idx, &g), DR_EINVAL);
    dr_tape_free(k[0]); /* does nothing */
    /* nested: join the parent while a child is forked */
    dr_real c0 = dr_mul(k[0], a, dr_const(3.0));
    CHK_STATUS(dr_fork(k[0], 2, kk), DR_OK);
    dr_real c1 = dr_mul(kk[1], c0, a);
    CHK_STATUS(dr_join(t), DR_EBUSY);
    CHK_STATUS(dr_join(k[0]), DR_OK);
    /* an id from the future of a child's job is rejected */
    dr_real d = dr_mul(k[1], c1, a);  /* c1 was reserved after k[1]'s start */
    assert_true(d.idx == DR_NONE);
    CHK_STATUS(dr_tape_status(k[1]), DR_EINVAL);
    CHK_STATUS(dr_join(t), DR_OK);
    /* the child's failure and the parent's EBUSY: the first one (the
       parent's, recorded before the join) is the tape's sticky status */
    CHK_STATUS(dr_tape_status(t), DR_EBUSY);
    CHK_STATUS(dr_gradient(t, c1, 1, &a, &g), DR_EBUSY);
    /* a joined child handle records nothing */
    dr_real e = dr_mul(k[1], a, a);
    assert_true(e.idx == DR_NONE);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);

    /* child failure alone reaches the root after the join */
    a = dr_input(t, 1.0);
    CHK_STATUS(dr_fork(t, 2, k), DR_OK);
    dr_real ok1 = dr_mul(k[0], a, a);
    dr_real inv = dr_mul(k[1], a, (dr_real){1.0, 123456789});
    assert_true(ok1.idx != DR_NONE && inv.idx == DR_NONE);
    CHK_STATUS(dr_tape_status(k[1]), DR_EINVAL);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, ok1, 1, &a, &g), DR_EINVAL);

    /* an id of a sibling that started earlier is accepted (a usage error,
       documented as undetected): memory-safe, and the sweep runs */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_set_threads(t, 2), DR_OK);
    a = dr_input(t, 1.0);
    CHK_STATUS(dr_fork(t, 2, k), DR_OK);
    dr_real s0 = dr_mul(k[0], a, a);
    dr_real s1 = dr_mul(k[1], a, a);
    dr_real s2 = dr_mul(k[1], s0, s1);
    (void)s2;
    CHK_STATUS(dr_join(t), DR_OK);
    dr_real y = dr_add(t, s0, s1);
    CHK_STATUS(dr_gradient(t, y, 1, &a, &g), DR_OK);
    CHK_SAME(g, 4.0);

    /* ids stay rejected after a clear */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_adjoint_get(t, s0.idx, &g), DR_EINVAL);

    /* freeing a forked tape frees its children (checked by ASan) */
    a = dr_input(t, 1.0);
    CHK_STATUS(dr_fork(t, 2, k), DR_OK);
    dr_mul(k[0], a, a);
    CHK_STATUS(dr_fork(k[1], 2, kk), DR_OK);
    dr_mul(kk[0], a, a);
    dr_tape_free(t);
}

/* Statuses, lengths and bytes across forks; set_threads round trips. */
static void test_counters(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    assert_int_equal(dr_get_threads(t), 1);
    CHK_STATUS(dr_set_threads(t, 0), DR_OK);
    assert_true(dr_get_threads(t) >= 1);
    CHK_STATUS(dr_set_threads(t, 3), DR_OK);
    size_t b0 = dr_tape_bytes(t);
    dr_real a = dr_input(t, 1.0);
    const dr_idx first = a.idx;
    dr_tape *k[3];
    CHK_STATUS(dr_fork(t, 3, k), DR_OK);
    assert_int_equal(dr_get_threads(k[2]), 3);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j <= i * 300; j++)
            a = (dr_real){a.val, dr_mul(k[i], (dr_real){1.0, first}, dr_const(1.0)).idx};
    CHK_STATUS(dr_join(t), DR_OK);
    assert_int_equal(dr_tape_len(t), 1 + 1 + 301 + 601);
    assert_true(dr_tape_bytes(t) > b0);
    /* resize the pool between sweeps */
    dr_real y = dr_mul(t, (dr_real){1.0, first}, (dr_real){1.0, first});
    double g;
    for (unsigned n = 1; n <= 4; n++) {
        CHK_STATUS(dr_set_threads(t, n), DR_OK);
        dr_real x0 = {1.0, first};
        CHK_STATUS(dr_gradient(t, y, 1, &x0, &g), DR_OK);
        CHK_SAME(g, 2.0);
    }
    dr_tape_free(t);
}

/* dr__find_node (for array lookups): a job sees its own nodes, its
   ancestors' nodes from before the fork, and joined children's nodes. */
static void test_find_node(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real a = dr_input(t, 1.0);
    dr_tape *k[2], *kk[2];
    CHK_STATUS(dr_fork(t, 2, k), DR_OK);
    dr_real u = dr_mul(k[0], a, a);
    dr_real v = dr_mul(k[1], a, dr_const(2.0));
    CHK_STATUS(dr_fork(k[1], 2, kk), DR_OK);
    dr_real w = dr_mul(kk[0], v, a);
    int64_t ra = a.idx - t->base, ru = u.idx - t->base, rv = v.idx - t->base,
            rw = w.idx - t->base;
    assert_non_null(dr__find_node(kk[0], ra)); /* grand-parent's node */
    assert_non_null(dr__find_node(kk[0], rv)); /* parent's node */
    assert_non_null(dr__find_node(kk[0], rw)); /* own */
    assert_null(dr__find_node(kk[1], rw));     /* a sibling's */
    assert_null(dr__find_node(kk[0], ru));     /* an uncle's */
    const dr_node *n = dr__find_node(kk[0], rw);
    if (n->a != DR_EXT_TAG) { /* (a far node in the test-far build) */
        assert_int_equal(rw - n->a, rv); /* arguments: distances back */
        assert_int_equal(rw - n->b, ra);
    }
    CHK_STATUS(dr_join(k[1]), DR_OK);
    assert_non_null(dr__find_node(k[1], rw)); /* joined child's */
    CHK_STATUS(dr_join(t), DR_OK);
    assert_non_null(dr__find_node(t, ru));
    assert_non_null(dr__find_node(t, rw));
    assert_null(dr__find_node(t, rw + 1)); /* a gap */
    assert_null(dr__find_node(t, -1));
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_fork),
        cmocka_unit_test(test_trees_match_sequential),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_empty_jobs),
        cmocka_unit_test(test_many_small_jobs),
        cmocka_unit_test(test_concurrent_recording),
        cmocka_unit_test(test_repeated_sweeps),
        cmocka_unit_test(test_clear_and_reuse),
        cmocka_unit_test(test_oom_injection),
        cmocka_unit_test(test_sweep_logs),
        cmocka_unit_test(test_large_parallel_clear),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_find_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
