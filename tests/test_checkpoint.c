/*
 * test_checkpoint.c - dr_record_checkpointed: a time-stepping loop as one
 * node with binomial checkpointing, and dr_loop_repeats.
 *
 * The reference for every derivative is the same step function called on
 * the caller's tape, one step after the other (no checkpoints): the same
 * operations in the same order, so gradients must agree to the last bit.
 * The state is a damped pendulum with a decaying third coordinate and two
 * entries the step copies through (a rate and a parameter), so that
 * pass-through entries, constants and nonlinear rules are all exercised.
 */
#include "check.h"

#include <math.h>
#include <string.h>

#define N 5
#define RTOL 1e-13

typedef struct loop_ctx {
    double dt;
    size_t calls;      /* step calls (atomic: parallel sweeps) */
    size_t *per_step;  /* calls per step k, or NULL */
    size_t fail_at;    /* the call (1-based) that fails, 0: none */
    dr_status fail_with;
    int destroyed;
} loop_ctx;

static dr_status step(void *ctx, dr_tape *t, size_t k, size_t n,
                      const dr_real *x, dr_real *y)
{
    loop_ctx *c = ctx;
    assert_int_equal(n, N);
    size_t call = __atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
    if (c->per_step)
        __atomic_add_fetch(&c->per_step[k], 1, __ATOMIC_RELAXED);
    if (call == c->fail_at)
        return c->fail_with;
    dr_real dt = dr_const(c->dt);
    /* a forcing that depends on k: the step is called with the right k */
    dr_real force = dr_const(0.01 * cos((double)k));
    y[0] = dr_add(t, x[0], dr_mul(t, dt, x[1]));
    dr_real acc = dr_add(t, dr_mul(t, x[4], dr_sin(t, x[0])),
                         dr_mul(t, dr_const(0.1), dr_mul(t, x[1], x[3])));
    y[1] = dr_add(t, dr_sub(t, x[1], dr_mul(t, dt, acc)), force);
    y[2] = dr_add(t, dr_mul(t, x[2], dr_exp(t, dr_mul(t, dr_neg(t, dt),
                                                       dr_mul(t, x[3], x[3])))),
                  dr_mul(t, dt, dr_tanh(t, x[0])));
    y[3] = x[3];
    y[4] = x[4];
    return dr_tape_status(t);
}

static void ctx_destroy(void *ctx)
{
    ((loop_ctx *)ctx)->destroyed++;
}

static const double X0[N] = {0.7, -0.2, 1.3, 0.5, 2.0};

/* a loss of the loop's outputs only */
static dr_real loss(dr_tape *t, const dr_real *y)
{
    dr_real s = dr_mul(t, y[0], y[2]);
    s = dr_add(t, s, dr_mul(t, y[1], y[1]));
    return dr_add(t, s, dr_mul(t, y[3], dr_sin(t, y[4])));
}

/* steps per segment of the loops record_loop makes */
static size_t g_segment = 1;

/* the loop on t: checkpointed with `snapshots`, or (snapshots == SIZE_MAX)
   step by step on t itself */
static void record_loop(dr_tape *t, loop_ctx *c, size_t nsteps, size_t snapshots,
                        const dr_real *x0, dr_real *out)
{
    if (snapshots != SIZE_MAX) {
        dr_loop loop = {c, step, ctx_destroy, g_segment};
        CHK_STATUS(dr_record_checkpointed(t, &loop, nsteps, N, x0, snapshots, out),
                   DR_OK);
        return;
    }
    dr_real a[N], b[N];
    memcpy(a, x0, sizeof a);
    for (size_t k = 0; k < nsteps; k++) {
        CHK_STATUS(step(c, t, k, N, a, b), DR_OK);
        memcpy(a, b, sizeof a);
    }
    memcpy(out, a, sizeof a);
}

/* the gradient of the loss over the loop, with x0[i] a constant where
   constant[i]; returns the loss's value */
static double gradient_of(size_t nsteps, size_t snapshots, const bool *constant,
                          double *g)
{
    loop_ctx c = {.dt = 0.05};
    dr_tape *t = chk_tape_new();
    dr_real x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = constant && constant[i] ? dr_const(X0[i]) : dr_input(t, X0[i]);
    record_loop(t, &c, nsteps, snapshots, x, y);
    dr_real f = loss(t, y);
    CHK_STATUS(dr_gradient(t, f, N, x, g), DR_OK);
    dr_tape_free(t);
    return f.val;
}

static void test_bit_identical(void **state)
{
    (void)state;
    static const size_t steps[] = {0, 1, 2, 3, 4, 7, 17, 64, 301};
    static const size_t snaps[] = {0, 1, 2, 3, 5, 20, 1000};
    static const size_t segments[] = {1, 3, 0};
    static const bool consts[2][N] = {{false}, {false, false, false, true, true}};
    for (int ci = 0; ci < 2; ci++)
        for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
            double gr[N], g[N];
            double fr = gradient_of(steps[i], SIZE_MAX, consts[ci], gr);
            for (size_t j = 0; j < sizeof snaps / sizeof *snaps; j++)
                for (size_t q = 0; q < 3; q++) {
                    g_segment = segments[q];
                    chk_context("constants %d, %zu steps, %zu snapshots, segment %zu",
                                ci, steps[i], snaps[j], g_segment);
                    double f = gradient_of(steps[i], snaps[j], consts[ci], g);
                    CHK_SAME(f, fr);
                    for (int k = 0; k < N; k++)
                        CHK_SAME(g[k], gr[k]);
                }
        }
    g_segment = 1;
}

/* segment = 0: segments as long as the snapshots' memory; a step of about
   20 nodes makes thousands of steps a segment, and more snapshots longer
   ones (counted through the step calls of a sweep) */
static void test_segment_choice(void **state)
{
    (void)state;
    size_t calls[3];
    static const size_t snaps[3] = {2, 1000, 10000000};
    for (int i = 0; i < 3; i++) {
        loop_ctx c = {.dt = 0.05};
        dr_tape *t = chk_tape_new();
        dr_real x[N], y[N];
        CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
        dr_loop loop = {&c, step, NULL, 0};
        CHK_STATUS(dr_record_checkpointed(t, &loop, 50000, N, x, snaps[i], y), DR_OK);
        c.calls = 0;
        double g[N];
        CHK_STATUS(dr_gradient(t, loss(t, y), N, x, g), DR_OK);
        c.calls = 0;
        CHK_STATUS(dr_gradient(t, loss(t, y), N, x, g), DR_OK);
        calls[i] = c.calls;
        dr_tape_free(t);
    }
    /* 2 or 1000 snapshots (under 256 KiB): segments of some 450 steps,
       about 110 of them, recomputed up to 7 times with 2 snapshots and once
       with 1000; 10^7 snapshots (taken as one per step, 2.25 MB): some 13
       segments, each recomputed once */
    assert_true(calls[0] > 3 * 50000);
    assert_true(calls[1] <= 2 * 50000);
    assert_true(calls[2] < calls[1]);
    assert_true(calls[2] > 50000);
}

/* The loop's memory (its snapshots, its own tape) is in dr_tape_bytes of
   the tape that holds it, and a clear keeps it for the next recording. */
static void test_bytes_counted(void **state)
{
    (void)state;
    loop_ctx c = {.dt = 0.05};
    dr_tape *t = chk_tape_new();
    dr_real x[N], y[N];
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    size_t before = dr_tape_bytes(t);
    const size_t snaps = 400; /* 400 states of N doubles: 16 KB at least */
    dr_loop loop = {&c, step, NULL, 20};
    CHK_STATUS(dr_record_checkpointed(t, &loop, 20000, N, x, snaps, y), DR_OK);
    size_t recorded = dr_tape_bytes(t);
    assert_true(recorded - before >= snaps * N * sizeof(double));
    double g[N];
    CHK_STATUS(dr_gradient(t, loss(t, y), N, x, g), DR_OK);
    size_t swept = dr_tape_bytes(t);
    assert_true(swept >= recorded);
    /* cleared: kept (as the tape keeps its chunks) */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(dr_tape_bytes(t), swept);
    dr_tape_free(t);
}

/* a step of m values (m = the loop's n): x_i' = x_i + 0.1 x_(i+1) */
static dr_status step_m(void *ctx, dr_tape *t, size_t k, size_t m,
                        const dr_real *x, dr_real *y)
{
    (void)ctx, (void)k;
    for (size_t i = 0; i < m; i++)
        y[i] = i + 1 < m ? dr_add(t, x[i], dr_mul(t, dr_const(0.1), x[i + 1]))
                         : x[i];
    return dr_tape_status(t);
}

/* loops of another size at every recording: the spare of the last one
   goes at the clear after (the tape's bytes drop by it; a clear frees
   nothing else), so the tape holds one loop's memory at a time */
static void test_spares_do_not_pile_up(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    for (size_t m = 1; m <= 12; m++) {
        chk_context("loop of %zu values", m);
        dr_real x[12], y[12];
        for (size_t i = 0; i < m; i++)
            x[i] = dr_input(t, 0.1 * (double)i);
        dr_loop loop = {NULL, step_m, NULL, 2};
        CHK_STATUS(dr_record_checkpointed(t, &loop, 10, m, x, 2, y), DR_OK);
        double g[12];
        CHK_STATUS(dr_gradient(t, y[0], m, x, g), DR_OK);
        size_t before = dr_tape_bytes(t);
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        if (m > 1)
            assert_true(dr_tape_bytes(t) < before);
        else
            assert_int_equal(dr_tape_bytes(t), before);
    }
    chk_context(NULL);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
}

/* dr_tape_clear's promise holds for a program with loops: recording and
   sweeping it again allocates nothing, counts the same bytes and gives the
   same gradient, at order 1 and at order 2 (then replayed too); the
   caller's context is let go at every clear */
static void test_clear_reuses_loops(void **state)
{
    (void)state;
    for (int order = 1; order <= 2; order++) {
        chk_context("order %d", order);
        chk_alloc al;
        chk_alloc_install(&al);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        loop_ctx c = {.dt = 0.05}, c2 = {.dt = 0.02};
        size_t bytes = 0, calls = 0;
        double g1[N];
        for (int cyc = 0; cyc < 4; cyc++) {
            dr_real x[N], y[N], z[N];
            CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
            g_segment = 3;
            record_loop(t, &c, 50, 4, x, y);
            g_segment = 0; /* (the library's choice: a run of step 0) */
            record_loop(t, &c2, 40, 2, y, z);
            g_segment = 1;
            dr_real l = loss(t, z);
            double g[N];
            CHK_STATUS(dr_gradient(t, l, N, x, g), DR_OK);
            if (order == 2)
                CHK_STATUS(dr_replay(t, N, x, X0), DR_OK);
            if (cyc == 0) {
                bytes = dr_tape_bytes(t);
                calls = al.calls;
                memcpy(g1, g, sizeof g);
            } else {
                assert_int_equal(dr_tape_bytes(t), bytes);
                assert_int_equal(al.calls, calls);
                assert_memory_equal(g, g1, sizeof g);
            }
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            assert_int_equal(c.destroyed, cyc + 1);
            assert_int_equal(c2.destroyed, cyc + 1);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    chk_context(NULL);
}

/* constants stay constants: entries x0 gives as constants and the steps
   copy through come out as constants, and the loop's tape records no node
   for them */
static void test_constants(void **state)
{
    (void)state;
    loop_ctx c = {.dt = 0.05};
    dr_tape *t = chk_tape_new();
    dr_real x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = i >= 3 ? dr_const(X0[i]) : dr_input(t, X0[i]);
    record_loop(t, &c, 10, 2, x, y);
    for (int i = 0; i < N; i++)
        assert_int_equal(y[i].idx == DR_NONE, i >= 3);
    /* all constant: a loop of constants, whose outputs are constants */
    for (int i = 0; i < N; i++)
        x[i] = dr_const(X0[i]);
    record_loop(t, &c, 10, 2, x, y);
    for (int i = 0; i < N; i++)
        assert_int_equal(y[i].idx, DR_NONE);
    dr_tape_free(t);
}

/* the loss as a function of plain doubles, for finite differences */
static double loss_of(const double *x, size_t n, void *ctx)
{
    (void)n;
    dr_tape *t = chk_tape_new();
    loop_ctx c = {.dt = 0.05};
    dr_real xs[N], y[N];
    for (int i = 0; i < N; i++)
        xs[i] = dr_const(x[i]);
    record_loop(t, &c, *(size_t *)ctx, SIZE_MAX, xs, y);
    double f = loss(t, y).val;
    dr_tape_free(t);
    return f;
}

static void test_finite_differences(void **state)
{
    (void)state;
    size_t nsteps = 40;
    double g[N];
    gradient_of(nsteps, 3, NULL, g);
    for (size_t i = 0; i < N; i++) {
        chk_context("input %zu", i);
        chk_deriv fd = chk_fd_partial(loss_of, &nsteps, N, X0, i, 0.0);
        CHK_DERIV(g[i], fd, 1e-7);
    }
}

/* the fewest steps a reverse sweep over t steps with s free snapshots can
   recompute (besides recording each once): by dynamic programming over
   every first split, the bound the schedule must reach */
#define DP_T 48
#define DP_S 6
static size_t dp_best[DP_T + 1][DP_S + 1];
static void dp_fill(void)
{
    for (size_t s = 0; s <= DP_S; s++)
        for (size_t t = 1; t <= DP_T; t++) {
            size_t best = t * (t - 1) / 2; /* no snapshot: each from the start */
            for (size_t l = 1; s > 0 && l < t; l++) {
                size_t v = l + dp_best[t - l][s - 1] + dp_best[l][s];
                if (v < best)
                    best = v;
            }
            dp_best[t][s] = t == 1 ? 0 : best;
        }
}

static void test_schedule_is_optimal(void **state)
{
    (void)state;
    dp_fill();
    size_t per_step[DP_T];
    for (size_t t = 1; t <= DP_T; t++)
        for (size_t s = 0; s <= DP_S; s++) {
            chk_context("%zu steps, %zu snapshots", t, s);
            loop_ctx c = {.dt = 0.05, .per_step = per_step};
            memset(per_step, 0, sizeof per_step);
            dr_tape *tp = chk_tape_new();
            dr_real x[N], y[N];
            CHK_STATUS(dr_inputs(tp, N, X0, x), DR_OK);
            record_loop(tp, &c, t, s, x, y);
            assert_int_equal(c.calls, t); /* recording: each step once */
            dr_real f = loss(tp, y);
            double g[N];
            /* the first sweep starts from the snapshots the recording left */
            c.calls = 0;
            CHK_STATUS(dr_gradient(tp, f, N, x, g), DR_OK);
            size_t first = c.calls;
            /* a second sweep recomputes them: the optimum exactly */
            c.calls = 0;
            memset(per_step, 0, sizeof per_step);
            CHK_STATUS(dr_gradient(tp, f, N, x, g), DR_OK);
            size_t s_eff = s < DP_S ? s : DP_S;
            assert_int_equal(c.calls, t + dp_best[t][s_eff]);
            assert_true(first <= c.calls);
            /* and no step more often than dr_loop_repeats says */
            size_t most = 0;
            for (size_t k = 0; k < t; k++)
                most = per_step[k] > most ? per_step[k] : most;
            assert_int_equal(most, dr_loop_repeats(t, s) + 1);
            dr_tape_free(tp);
            assert_int_equal(c.destroyed, 1);
        }
}

static void test_repeats(void **state)
{
    (void)state;
    assert_int_equal(dr_loop_repeats(0, 0), 0);
    assert_int_equal(dr_loop_repeats(1, 0), 0);
    assert_int_equal(dr_loop_repeats(1, 100), 0);
    assert_int_equal(dr_loop_repeats(2, 0), 1);
    assert_int_equal(dr_loop_repeats(1000, 0), 999);
    assert_int_equal(dr_loop_repeats(1000, 998), 1);
    assert_int_equal(dr_loop_repeats(1000, 997), 2);
    /* C(s + 1 + r, r) >= nsteps: C(100003, 2) = 5000250003 */
    assert_int_equal(dr_loop_repeats(1000000, 100000), 2);
    assert_int_equal(dr_loop_repeats(5000250003ull, 100000), 2);
    assert_int_equal(dr_loop_repeats(5000250004ull, 100000), 3);
    /* C(11 + 6, 6) = 12376 */
    assert_int_equal(dr_loop_repeats(12376, 10), 6);
    assert_int_equal(dr_loop_repeats(12377, 10), 7);
    /* no overflow, no endless loop at the extremes */
    assert_true(dr_loop_repeats(SIZE_MAX, SIZE_MAX) == 1);
    assert_true(dr_loop_repeats(SIZE_MAX, 1) < 10000000000ull);
    /* exact where an intermediate product overflows 64 bits but the
       binomial fits (values from Python's math.comb) */
    if (SIZE_MAX == UINT64_MAX) {
        static const struct { size_t nseg, snaps, r; } big[] = {
            {1000000000000000ull, 1, 44721359},
            {1000000000000000ull, 2, 181711},
            {1000000000000000ull, 3, 12445},
            {1000000000000000ull, 9, 138},
            {1000000000000000000ull, 5, 2991},
            {UINT64_MAX, 0, UINT64_MAX - 1},
            {UINT64_MAX, 1, 6074000999ull},
            {UINT64_MAX, 2, 4801278},
            {UINT64_MAX, 3, 145053},
            {UINT64_MAX, 9, 377},
            {UINT64_MAX, 40, 29},
            {UINT64_MAX, 1000, 8},
            {UINT64_MAX, UINT64_MAX - 1, 1},
            {9223372036854775808ull, 63, 20},
        };
        for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
            chk_context("dr_loop_repeats(%zu, %zu)", big[i].nseg, big[i].snaps);
            assert_int_equal(dr_loop_repeats(big[i].nseg, big[i].snaps), big[i].r);
        }
        chk_context(NULL);
    }
}

/* forward mode, vector modes and Jacobians against the plain recording */
static void test_modes(void **state)
{
    (void)state;
    loop_ctx c = {.dt = 0.05};
    dr_tape *tc = chk_tape_new(), *tr = chk_tape_new();
    dr_real xc[N], xr[N], yc[N], yr[N];
    CHK_STATUS(dr_inputs(tc, N, X0, xc), DR_OK);
    CHK_STATUS(dr_inputs(tr, N, X0, xr), DR_OK);
    record_loop(tc, &c, 50, 4, xc, yc);
    record_loop(tr, &c, 50, SIZE_MAX, xr, yr);
    for (int i = 0; i < N; i++)
        CHK_SAME(yc[i].val, yr[i].val);
    double xdot[N] = {0.3, -1.0, 0.25, 2.0, -0.5}, ydc[N], ydr[N];
    CHK_STATUS(dr_jvp(tc, N, yc, N, xc, xdot, ydc), DR_OK);
    CHK_STATUS(dr_jvp(tr, N, yr, N, xr, xdot, ydr), DR_OK);
    for (int i = 0; i < N; i++)
        CHK_REL(ydc[i], ydr[i], RTOL);
    double Jc[N * N], Jr[N * N];
    CHK_STATUS(dr_jacobian(tc, N, yc, N, xc, Jc), DR_OK);
    CHK_STATUS(dr_jacobian(tr, N, yr, N, xr, Jr), DR_OK);
    for (int i = 0; i < N * N; i++)
        CHK_CLOSE(Jc[i], Jr[i], RTOL, 1e-15);
    double Yb[3 * N], Xc[3 * N], Xr[3 * N], Xd[3 * N], Yd[3 * N];
    for (int i = 0; i < 3 * N; i++)
        Yb[i] = Xd[i] = 0.1 * (i % 7) - 0.3;
    CHK_STATUS(dr_vjp_vec(tc, N, yc, 3, Yb, N, xc, Xc), DR_OK);
    CHK_STATUS(dr_vjp_vec(tr, N, yr, 3, Yb, N, xr, Xr), DR_OK);
    for (int i = 0; i < 3 * N; i++)
        CHK_SAME(Xc[i], Xr[i]);
    /* the transpose identity <Ybar, J Xdot> = <J^T Ybar, Xdot> */
    CHK_STATUS(dr_jvp_vec(tc, N, yc, N, xc, 3, Xd, Yd), DR_OK);
    double lhs = 0, rhs = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 3; j++) {
            lhs += Yb[j * N + i] * Yd[i * 3 + j];
            rhs += Xc[j * N + i] * Xd[i * 3 + j];
        }
    CHK_REL(lhs, rhs, 1e-12);
    dr_tape_free(tc);
    dr_tape_free(tr);
}

/* a loop inside a loop's step: the inner loop is a node of the outer
   loop's own tape */
static dr_status nested_step(void *ctx, dr_tape *t, size_t k, size_t n,
                             const dr_real *x, dr_real *y)
{
    (void)k;
    dr_loop inner = {ctx, step, NULL, 1};
    return dr_record_checkpointed(t, &inner, 3, n, x, 1, y);
}

static void test_nested(void **state)
{
    (void)state;
    loop_ctx c = {.dt = 0.05};
    dr_tape *t = chk_tape_new(), *r = chk_tape_new();
    dr_real x[N], y[N], xr[N];
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    dr_loop outer = {&c, nested_step, NULL, 1};
    CHK_STATUS(dr_record_checkpointed(t, &outer, 10, N, x, 2, y), DR_OK);
    /* the same 30 steps on the caller's tape, k running 0..2 ten times */
    CHK_STATUS(dr_inputs(r, N, X0, xr), DR_OK);
    dr_real a[N], b[N];
    memcpy(a, xr, sizeof a);
    for (size_t k = 0; k < 30; k++) {
        CHK_STATUS(step(&c, r, k % 3, N, a, b), DR_OK);
        memcpy(a, b, sizeof a);
    }
    CHK_SAME_GRADIENT(t, loss(t, y), x, r, loss(r, a), xr, N);
    dr_tape_free(t);
    dr_tape_free(r);
}

/* one loop per child job, swept in parallel */
static void test_fork_join(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        chk_context("threads %u", threads);
        loop_ctx c[3] = {{.dt = 0.05}, {.dt = 0.04}, {.dt = 0.03}};
        dr_tape *t = chk_tape_new(), *r = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real x[N], xr[N], y[3][N], yr[N];
        CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
        CHK_STATUS(dr_inputs(r, N, X0, xr), DR_OK);
        dr_tape *kids[3];
        CHK_STATUS(dr_fork(t, 3, kids), DR_OK);
        for (int i = 0; i < 3; i++)
            record_loop(kids[i], &c[i], 40, 3, x, y[i]);
        CHK_STATUS(dr_join(t), DR_OK);
        dr_real s = dr_const(0.0), sr = dr_const(0.0);
        for (int i = 0; i < 3; i++) {
            s = dr_add(t, s, loss(t, y[i]));
            record_loop(r, &c[i], 40, SIZE_MAX, xr, yr);
            sr = dr_add(r, sr, loss(r, yr));
        }
        CHK_SAME(s.val, sr.val);
        double g[N], gr[N];
        CHK_STATUS(dr_gradient(t, s, N, x, g), DR_OK);
        CHK_STATUS(dr_gradient(r, sr, N, xr, gr), DR_OK);
        for (int i = 0; i < N; i++)
            CHK_REL(g[i], gr[i], RTOL);
        dr_tape_free(t);
        dr_tape_free(r);
        for (int i = 0; i < 3; i++)
            assert_int_equal(c[i].destroyed, 1);
    }
}

/* a step that uses a value of the caller's tape instead of its state */
static dr_status capture_step(void *ctx, dr_tape *t, size_t k, size_t n,
                              const dr_real *x, dr_real *y)
{
    (void)k;
    const dr_real *p = ctx;
    for (size_t i = 0; i < n; i++)
        y[i] = dr_mul(t, x[i], *p);
    return dr_tape_status(t);
}

static void test_errors(void **state)
{
    (void)state;
    loop_ctx c = {.dt = 0.05};
    dr_loop loop = {&c, step, ctx_destroy, 1}, no_step = {&c, NULL, NULL, 1};
    dr_tape *t = chk_tape_new();
    dr_real x[N], y[N];
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    CHK_STATUS(dr_record_checkpointed(NULL, &loop, 5, N, x, 2, y), DR_EINVAL);
    CHK_STATUS(dr_record_checkpointed(t, NULL, 5, N, x, 2, y), DR_EINVAL);
    CHK_STATUS(dr_record_checkpointed(t, &no_step, 5, N, x, 2, y), DR_EINVAL);
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, 0, x, 2, y), DR_EINVAL);
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, NULL, 2, y), DR_EINVAL);
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, x, 2, NULL), DR_EINVAL);
    dr_real bad[N];
    memcpy(bad, x, sizeof bad);
    bad[2].idx = 1000000;
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, bad, 2, y), DR_EINVAL);
    for (int i = 0; i < N; i++) { /* a failed call leaves constants */
        assert_int_equal(y[i].idx, DR_NONE);
        CHK_SAME(y[i].val, X0[i]);
    }
    assert_int_equal(c.calls, 0);
    /* a step that fails while the loop is recorded: its status, nothing
       recorded, destroy not called, the tape records on */
    c.fail_at = 4;
    c.fail_with = DR_ERANGE;
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, x, 2, y), DR_ERANGE);
    assert_int_equal(c.destroyed, 0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* one that fails when the sweep runs it again: the sweep answers it */
    c.calls = 0;
    c.fail_at = 7;
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, x, 2, y), DR_OK);
    double g[N];
    CHK_STATUS(dr_gradient(t, loss(t, y), N, x, g), DR_ERANGE);
    CHK_STATUS(dr_tape_status(t), DR_ERANGE);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(c.destroyed, 1);
    /* a captured value of the caller's tape: an id not on the loop's */
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    dr_real p = dr_input(t, 2.0);
    dr_loop capture = {&p, capture_step, NULL, 1};
    CHK_STATUS(dr_record_checkpointed(t, &capture, 5, N, x, 2, y), DR_EINVAL);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    p = dr_const(2.0); /* (the same step with a constant is fine) */
    CHK_STATUS(dr_record_checkpointed(t, &capture, 5, N, x, 2, y), DR_OK);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    /* the same on a tape that was never cleared, the parameter its first
       node: the loop's tape numbers from the same id when ranges are not
       per tape */
    for (size_t steps = 1; steps <= 5; steps += 4) {
        dr_tape *fresh = chk_tape_new();
        p = dr_input(fresh, 2.0);
        CHK_STATUS(dr_inputs(fresh, N, X0, x), DR_OK);
        CHK_STATUS(dr_record_checkpointed(fresh, &capture, steps, N, x, 2, y),
                   DR_EINVAL);
        CHK_STATUS(dr_tape_status(fresh), DR_OK);
        dr_real l = dr_mul(fresh, x[0], p);
        CHK_STATUS(dr_gradient(fresh, l, 1, &p, g), DR_OK);
        CHK_SAME(g[0], X0[0]);
        dr_tape_free(fresh);
    }
    /* order 2: recorded (it replays), with no second-order rule */
    c.fail_at = 0;
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, x, 2, y), DR_OK);
    double hv[N], dir[N] = {1, 0, 0, 0, 0};
    dr_real l2 = loss(t, y);
    CHK_STATUS(dr_hvp(t, l2, N, x, dir, hv), DR_ENOTSUP);
    CHK_STATUS(dr_gradient(t, l2, N, x, g), DR_OK);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(c.destroyed, 2);
    /* and a forked handle */
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, x, 2, y), DR_EBUSY);
    CHK_STATUS(dr_join(t), DR_OK);
    /* after all that the tape still differentiates a loop */
    c.calls = 0;
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_inputs(t, N, X0, x), DR_OK);
    CHK_STATUS(dr_record_checkpointed(t, &loop, 5, N, x, 2, y), DR_OK);
    CHK_STATUS(dr_gradient(t, loss(t, y), N, x, g), DR_OK);
    double gr[N];
    gradient_of(5, SIZE_MAX, NULL, gr);
    for (int i = 0; i < N; i++)
        CHK_SAME(g[i], gr[i]);
    dr_tape_free(t);
    assert_int_equal(c.destroyed, 3);
}

static void test_oom(void **state)
{
    (void)state;
    chk_alloc al;
    bool failed = false, succeeded = false;
    double gr[N];
    gradient_of(20, SIZE_MAX, NULL, gr);
    for (size_t k = 1; k < 60; k++) {
        chk_context("allocation %zu", k);
        dr_tape *t = chk_oom_tape(&al, k);
        if (!t)
            continue;
        loop_ctx c = {.dt = 0.05};
        dr_loop loop = {&c, step, ctx_destroy, 2};
        dr_real x[N], y[N];
        int recorded = 0;
        if (dr_inputs(t, N, X0, x) == DR_OK) {
            dr_status st = dr_record_checkpointed(t, &loop, 20, N, x, 2, y);
            assert_true(st == DR_OK || st == DR_ENOMEM);
            if (st == DR_OK) {
                recorded = 1;
                double g[N];
                st = dr_gradient(t, loss(t, y), N, x, g);
                assert_true(st == DR_OK || st == DR_ENOMEM);
                if (st == DR_OK) {
                    succeeded = true;
                    for (int i = 0; i < N; i++)
                        CHK_SAME(g[i], gr[i]);
                } else {
                    failed = true;
                }
            } else {
                failed = true;
                CHK_STATUS(dr_tape_status(t), DR_OK);
            }
        }
        dr_tape_free(t);
        chk_alloc_uninstall();
        assert_int_equal(al.live, 0);
        assert_int_equal(c.destroyed, recorded);
    }
    assert_true(failed);
    assert_true(succeeded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bit_identical),
        cmocka_unit_test(test_segment_choice),
        cmocka_unit_test(test_bytes_counted),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_finite_differences),
        cmocka_unit_test(test_schedule_is_optimal),
        cmocka_unit_test(test_repeats),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_fork_join),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_teardown(test_clear_reuses_loops, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_spares_do_not_pile_up, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
