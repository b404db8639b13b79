/*
 * test_array_parallel.c - array operations inside fork-join jobs: children
 * read arrays (and scalars) of their parent job, and sibling jobs add into
 * the adjoint of the same ancestor array during a parallel sweep.  The
 * gradient equals the sequential recording of the same program (bit for bit
 * with one thread, to rounding with several).  Run it under ThreadSanitizer
 * with: make test-tsan TSAN_TESTS=tests/test_array_parallel.c
 */
#include "check.h"

#include <cblas.h> /* openblas_get_num_threads */
#include <math.h>
#include <sched.h>
#include <string.h>
#include <time.h>

enum { R = 120, C = 90, KIDS = 8, ROUNDS = 3 };

typedef struct job {
    dr_arr W, x;    /* the parent's arrays */
    dr_real s;      /* the parent's scalar */
    dr_real out[KIDS];
} job;

/* child i: y_i = sum(tanh(W (x * (i+1) * s))) + logsumexp(W^T W row i) */
static void child(dr_tape *t, size_t i, void *ctx)
{
    job *j = ctx;
    dr_real k = dr_mul(t, j->s, dr_const((double)i + 1.0));
    dr_arr xi = dr_arr_scale(t, k, j->x);
    dr_arr h = dr_arr_map(t, DR_FN_TANH, dr_arr_matvec(t, j->W, xi));
    dr_arr g = dr_arr_matmul(t, j->W, 1, j->W, 0); /* C x C */
    dr_arr row = dr_arr_slice(t, g, (int64_t)(i % C), 1);
    dr_real a = dr_add(t, dr_arr_sum(t, h), dr_arr_logsumexp(t, row));
    for (int r = 1; r < ROUNDS; r++) { /* more work, more ancestor reads */
        dr_arr hx = dr_arr_vecmat(t, h, j->W);
        a = dr_add(t, a, dr_arr_dot(t, hx, j->x));
    }
    j->out[i] = a;
}

static void inputs(double *w, double *x)
{
    for (int i = 0; i < R * C; i++)
        w[i] = 0.3 * sin(0.7 * i + 0.1);
    for (int i = 0; i < C; i++)
        x[i] = cos(0.3 * i);
}

/* a new tape with the parent's inputs W, x, s recorded into j */
static dr_tape *job_tape(job *j)
{
    double w[R * C], x[C];
    inputs(w, x);
    dr_tape *t = chk_tape_new();
    j->W = dr_arr_input(t, 2, R, C, w);
    j->x = dr_arr_input(t, 1, C, 1, x);
    j->s = dr_input(t, 0.8);
    return t;
}

/* gradient w.r.t. W, x, s: forked (threads) or sequential (threads == 0) */
static void run(unsigned threads, double *g)
{
    job j;
    dr_tape *t = job_tape(&j);
    if (threads) {
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        CHK_STATUS(dr_fork_run(t, KIDS, child, &j), DR_OK);
    } else {
        for (size_t i = 0; i < KIDS; i++)
            child(t, i, &j);
    }
    dr_real y = dr_const(0.0);
    for (int i = 0; i < KIDS; i++)
        y = dr_add(t, y, j.out[i]);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    for (int rep = 0; rep < 2; rep++) { /* twice: clear and sweep again */
        CHK_STATUS(dr_adjoints_clear(t), DR_OK);
        CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        CHK_STATUS(dr_arr_adjoint(t, j.W.idx, g), DR_OK);
        CHK_STATUS(dr_arr_adjoint(t, j.x.idx, g + R * C), DR_OK);
        g[R * C + C] = dr_adjoint(t, j.s.idx);
    }
    dr_tape_free(t);
}

#define NG (R * C + C + 1)

static void test_fork_arrays(void **state)
{
    (void)state;
    double seq[NG], one[NG], many[NG];
    run(0, seq);
    run(1, one);
    for (int i = 0; i < NG; i++)
        CHK_SAME(one[i], seq[i]);
    /* a new tape each time, often at the address of the one freed before
       it: each thread must still have a slot of its own (a slot two
       threads shared made their array buffers race) */
    for (int rep = 0; rep < 20; rep++) {
        run(4, many);
        for (int i = 0; i < NG; i++)
            CHK_CLOSE(many[i], seq[i], 1e-12, 1e-12);
    }
}

/* ------------------------------------------------ the BLAS thread budget
 * While jobs may run at once, OpenBLAS runs single-threaded (dualrev.h,
 * "threads"); outside, it keeps its own count.  No BLAS runs outside jobs
 * here, so under ThreadSanitizer no OpenBLAS worker ever writes our
 * memory even with its count set to 2. */

static int seen[KIDS]; /* OpenBLAS's thread count inside each job */

static void budget_child(dr_tape *t, size_t i, void *ctx)
{
    job *j = ctx;
    seen[i] = openblas_get_num_threads();
    dr_arr g = dr_arr_matmul(t, j->W, 1, j->W, 0);
    j->out[i] = dr_arr_sum(t, g);
}

static void test_blas_thread_budget(void **state)
{
    (void)state;
    const int before = openblas_get_num_threads();
    openblas_set_num_threads(2);
    job j;
    dr_tape *t = job_tape(&j);
    /* the worker pool: one thread of BLAS per job, restored after */
    CHK_STATUS(dr_set_threads(t, 2), DR_OK);
    memset(seen, 0, sizeof seen);
    CHK_STATUS(dr_fork_run(t, KIDS, budget_child, &j), DR_OK);
    for (int i = 0; i < KIDS; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(openblas_get_num_threads(), 2);
    /* dr_fork: the caller's own threads may record, so also single */
    dr_tape *kids[2], *grand[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    assert_int_equal(openblas_get_num_threads(), 1);
    budget_child(kids[0], 0, &j);
    CHK_STATUS(dr_fork(kids[1], 2, grand), DR_OK); /* holds nest */
    budget_child(grand[1], 1, &j);
    CHK_STATUS(dr_join(kids[1]), DR_OK);
    assert_int_equal(openblas_get_num_threads(), 1);
    CHK_STATUS(dr_join(t), DR_OK);
    assert_int_equal(openblas_get_num_threads(), 2);
    /* the gradient of the jobs' arrays, swept on the pool */
    dr_real y = dr_add(t, j.out[0], j.out[1]);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    assert_int_equal(openblas_get_num_threads(), 2);
    /* a tape freed while forked gives its holds back */
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    CHK_STATUS(dr_fork(kids[0], 1, grand), DR_OK);
    assert_int_equal(openblas_get_num_threads(), 1);
    dr_tape_free(t);
    assert_int_equal(openblas_get_num_threads(), 2);
    openblas_set_num_threads(before);
}

/* ------------------------------------------- out of memory in the sweep
 * Every allocation of a parallel sweep over jobs that share the parent's
 * arrays (adjoint buffers, the jobs' scratch buffers) fails in turn: the
 * sweep reports DR_ENOMEM or succeeds, nothing leaks, and after a clear
 * the same tape gives the right gradient. */

/* Which allocations a sweep makes depends on which thread runs which job:
   the forking thread's jobs add into the weights' adjoint directly, the
   others' into buffers of their threads.  Each job ends in an identity
   external node whose reverse rule (the first of the job's sweep) waits
   until `parties` jobs have reached it, so that the jobs run on as many
   threads at once (up to a second: a pool with fewer threads goes on). */
static int arrived, parties = 1;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void meet_reverse(void *ctx, size_t n, const double *x, size_t m,
                         const double *y, const double *ybar, double *xbar)
{
    (void)ctx, (void)n, (void)x, (void)m, (void)y;
    __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
    double t0 = now_s();
    while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < parties &&
           now_s() - t0 < 1.0)
        sched_yield();
    xbar[0] = ybar[0];
}

static void small_child(dr_tape *t, size_t i, void *ctx)
{
    job *j = ctx;
    dr_arr h = dr_arr_matvec(t, j->W, j->x);
    dr_arr g = dr_arr_matmul(t, j->W, 1, j->W, 0);
    dr_real o = dr_add(t, dr_arr_sum(t, dr_arr_map(t, DR_FN_TANH, h)),
                       dr_mul(t, dr_arr_sum(t, g), dr_const(1e-3 * (i + 1))));
    dr_external meet = {NULL, meet_reverse, NULL, NULL, NULL};
    double v = o.val;
    if (dr_record_external(t, &meet, 1, &o, 1, &v, &j->out[i]) != DR_OK)
        j->out[i] = dr_const(0.0);
}

/* record the small program on t; y and W's gradient's first entry */
static dr_real small_program(dr_tape *t, job *j, const double *w,
                             const double *x)
{
    j->W = dr_arr_input(t, 2, 6, 5, w);
    j->x = dr_arr_input(t, 1, 5, 1, x);
    if (dr_fork_run(t, 3, small_child, j) != DR_OK)
        return dr_const(0.0);
    return dr_add(t, dr_add(t, j->out[0], j->out[1]), j->out[2]);
}

static void test_oom_parallel_sweep(void **state)
{
    (void)state;
    double w[30], x[5], ref[30], g[30];
    for (int i = 0; i < 30; i++)
        w[i] = 0.2 * sin(1.3 * i);
    for (int i = 0; i < 5; i++)
        x[i] = cos(0.9 * i);
    { /* the reference: one thread */
        dr_tape *t = chk_tape_new();
        job j;
        dr_real y = small_program(t, &j, w, x);
        CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        CHK_STATUS(dr_arr_adjoint(t, j.W.idx, ref), DR_OK);
        dr_tape_free(t);
    }
    chk_alloc al;
    chk_alloc_install(&al);
    bool failed_once = false;
    parties = 3; /* the three jobs on three threads */
    for (size_t k = 1; k < 200; k++) {
        chk_context("allocation %zu of the sweep", k);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, 3), DR_OK);
        job j;
        dr_real y = small_program(t, &j, w, x);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
        size_t fails = al.fails;
        chk_alloc_fail_in(&al, k, false);
        __atomic_store_n(&arrived, 0, __ATOMIC_RELEASE);
        dr_status st = dr_reverse(t);
        bool hit = al.fails > fails;
        chk_alloc_fail_in(&al, 0, false);
        if (st == DR_OK) {
            CHK_STATUS(dr_arr_adjoint(t, j.W.idx, g), DR_OK);
            for (int i = 0; i < 30; i++)
                CHK_CLOSE(g[i], ref[i], 1e-13, 1e-15);
        } else {
            CHK_STATUS(st, DR_ENOMEM);
            failed_once = true;
            /* usable again after a clear */
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            y = small_program(t, &j, w, x);
            CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
            __atomic_store_n(&arrived, 0, __ATOMIC_RELEASE);
            CHK_STATUS(dr_reverse(t), DR_OK);
            CHK_STATUS(dr_arr_adjoint(t, j.W.idx, g), DR_OK);
            for (int i = 0; i < 30; i++)
                CHK_CLOSE(g[i], ref[i], 1e-13, 1e-15);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        if (!hit)
            break; /* past the sweep's last allocation */
    }
    chk_context(NULL);
    parties = 1;
    assert_true(failed_once);
    chk_alloc_uninstall();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_arrays),
        cmocka_unit_test(test_blas_thread_budget),
        cmocka_unit_test_teardown(test_oom_parallel_sweep, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
