/*
 * test_replay.c - a recorded program evaluated again at new inputs
 * (dualrev.h, "replay"): random programs over every scalar operation, in
 * both entry points (dr_OP and dr_fe_OP_rec), sums of products, selects
 * and every kind of input, replayed at many points, against a fresh
 * recording at each point, bit for bit (values, Jacobians, forward
 * products, Hessian-vector products); guards that flip (piecewise
 * functions, a loop whose trip count depends on a value) answer
 * DR_ERETAPE and leave the tape as it was; a gradient descent that
 * re-records where a branch flips follows the fresh recording's path
 * exactly; every refusal, and out of memory at each allocation.
 */
#include "check.h"
#include "frontend/frontend.h"

#include <math.h>
#include <string.h>

#define NIN 7   /* inputs of a random program */
#define NOUT 3  /* its outputs                */
#define POOL 96

/* the inputs: three of dr_inputs, two of dr_input, one of dr_input_range
   and one of dr_record0 (those two without their values: a replay must
   give them) */
static void record_inputs(dr_tape *t, const double *xv, dr_real *x)
{
    CHK_STATUS(dr_inputs(t, 3, xv, x), DR_OK);
    x[3] = dr_input(t, xv[3]);
    x[4] = dr_input(t, xv[4]);
    dr_idx first;
    CHK_STATUS(dr_input_range(t, 1, &first), DR_OK);
    x[5] = (dr_real){xv[5], first};
    x[6] = (dr_real){xv[6], dr_record0(t)};
}

typedef dr_real (*unary_fn)(dr_tape *, dr_real);
typedef dr_real (*binary_fn)(dr_tape *, dr_real, dr_real);
typedef double (*fe_unary_val)(double);
typedef dr_idx (*fe_unary_rec)(dr_tape *, dr_idx, double, double);
typedef double (*fe_binary_val)(double, double);
typedef dr_idx (*fe_binary_rec)(dr_tape *, dr_idx, dr_idx, double, double,
                                double);

#define U_FN(op) dr_##op,
#define U_FEV(op) dr_fe_##op,
#define U_FER(op) dr_fe_##op##_rec,
static const unary_fn unaries[] = {DR_RULES_UNARY(U_FN) DR_RULES_UNARY_FUSED(U_FN)};
static const fe_unary_val fe_unary_vals[] = {
    DR_RULES_UNARY(U_FEV) DR_RULES_UNARY_FUSED(U_FEV)};
static const fe_unary_rec fe_unary_recs[] = {
    DR_RULES_UNARY(U_FER) DR_RULES_UNARY_FUSED(U_FER)};
static const binary_fn binaries[] = {DR_RULES_BINARY(U_FN)};
static const fe_binary_val fe_binary_vals[] = {DR_RULES_BINARY(U_FEV)};
static const fe_binary_rec fe_binary_recs[] = {DR_RULES_BINARY(U_FER)};
#define NU (sizeof unaries / sizeof *unaries)
#define NB (sizeof binaries / sizeof *binaries)

/* A random straight-line program: its choices come from the seed alone,
   never from the values, so every point records the same program.  Values
   leave their domains at some points (NaN, inf): replay must give the same
   bits there too. */
static void program(dr_tape *t, uint64_t seed, const dr_real *x, dr_real *y)
{
    chk_rng r;
    chk_rng_seed(&r, seed);
    dr_real pool[POOL];
    size_t m = NIN;
    memcpy(pool, x, NIN * sizeof *x);
    while (m < POOL) {
        /* mostly recent values, sometimes the oldest (far arguments) */
        size_t ia = chk_rng_below(&r, 4) ? m - 1 - chk_rng_below(&r, m < 8 ? m : 8)
                                         : chk_rng_below(&r, NIN);
        size_t ib = chk_rng_below(&r, m);
        dr_real a = pool[ia], b = pool[ib];
        if (chk_rng_below(&r, 8) == 0)
            b = dr_const(chk_rng_uniform(&r, -2, 2));
        if (chk_rng_below(&r, 16) == 0)
            a = dr_const(chk_rng_uniform(&r, -2, 2));
        dr_real v;
        switch (chk_rng_below(&r, 8)) {
        case 0: case 1:
            v = unaries[chk_rng_below(&r, NU)](t, a);
            break;
        case 2: {
            size_t k = chk_rng_below(&r, NU);
            double val = fe_unary_vals[k](a.val);
            v = (dr_real){val, fe_unary_recs[k](t, a.idx, a.val, val)};
            break;
        }
        case 3: case 4:
            v = binaries[chk_rng_below(&r, NB)](t, a, b);
            break;
        case 5: {
            size_t k = chk_rng_below(&r, NB);
            double val = fe_binary_vals[k](a.val, b.val);
            v = (dr_real){val, fe_binary_recs[k](t, a.idx, b.idx, a.val, b.val, val)};
            break;
        }
        case 6: {
            if (chk_rng_below(&r, 2)) {
                v = dr_powi(t, a, (int)chk_rng_below(&r, 8) - 3);
            } else {
                /* cond - 0.1 > 0 chooses a, else b */
                dr_real c = dr_sub(t, pool[chk_rng_below(&r, m)], dr_const(0.1));
                v = dr_select(t, c, a, b);
            }
            break;
        }
        default: { /* a sum of products, some factors constant */
            dr_idx ia3[4], ib3[4];
            double xa[4], xb[4];
            size_t k = 1 + chk_rng_below(&r, 4);
            double s = chk_rng_below(&r, 2) ? a.val : 0.0;
            dr_idx acc = s != 0.0 ? a.idx : DR_NONE;
            double sum = s;
            for (size_t j = 0; j < k; j++) {
                dr_real p = pool[chk_rng_below(&r, m)], q = pool[chk_rng_below(&r, m)];
                if (chk_rng_below(&r, 4) == 0)
                    p = dr_const(0.5);
                if (chk_rng_below(&r, 4) == 0)
                    q = dr_const(-1.5);
                ia3[j] = p.idx;
                xa[j] = p.val;
                ib3[j] = q.idx;
                xb[j] = q.val;
                sum += p.val * q.val;
            }
            v = (dr_real){sum, dr_fe_dot_rec(t, acc, s, k, ia3, xa, ib3, xb)};
            /* the node's own value where the tape keeps one: a NaN's sign
               may come out of the library's fold otherwise than out of
               this one (an addition's operands in the other order), and a
               later operation handed another value than its argument's
               makes the tape refuse to replay */
            double own;
            if (v.idx != DR_NONE && dr_value(t, v.idx, &own) == DR_OK)
                v.val = own;
            break;
        }
        }
        pool[m++] = v;
    }
    for (size_t i = 0; i < NOUT; i++)
        y[i] = pool[POOL - 1 - 5 * i];
}

/* what a tape gives at its current point */
typedef struct results {
    double y[NOUT];
    double J[NOUT * NIN];
    double jv[NOUT];
    double hv[NIN];
    dr_status hv_st;
} results;

static const double DIR[NIN] = {0.3, -1.1, 0.7, 0.25, -0.5, 1.9, -0.05};

static void read_results(dr_tape *t, const dr_real *x, const dr_real *y,
                         results *r)
{
    for (size_t i = 0; i < NOUT; i++)
        if (dr_value(t, y[i].idx, &r->y[i]) != DR_OK)
            r->y[i] = y[i].val; /* a constant output */
    CHK_STATUS(dr_jacobian(t, NOUT, y, NIN, x, r->J), DR_OK);
    CHK_STATUS(dr_jvp(t, NOUT, y, NIN, x, DIR, r->jv), DR_OK);
    r->hv_st = dr_hvp(t, y[0], NIN, x, DIR, r->hv);
}

static void check_same(const results *a, const results *b)
{
    for (size_t i = 0; i < NOUT; i++) {
        CHK_SAME(a->y[i], b->y[i]);
        CHK_SAME(a->jv[i], b->jv[i]);
    }
    for (size_t i = 0; i < NOUT * NIN; i++)
        CHK_SAME(a->J[i], b->J[i]);
    CHK_STATUS(a->hv_st, b->hv_st);
    for (size_t i = 0; a->hv_st == DR_OK && i < NIN; i++)
        CHK_SAME(a->hv[i], b->hv[i]);
}

/* a fresh recording of program seed at xv, at order 2 or 1, kept for
   replay (dr_fe_programs) or not */
static void fresh_as(uint64_t seed, const double *xv, int order, bool kept,
                     results *r)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
    CHK_STATUS(dr_fe_programs(t, kept), DR_OK);
    dr_real x[NIN], y[NOUT];
    record_inputs(t, xv, x);
    program(t, seed, x, y);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    read_results(t, x, y, r);
    dr_tape_free(t);
}

static void fresh(uint64_t seed, const double *xv, results *r)
{
    fresh_as(seed, xv, 2, false, r);
}

static void random_point(chk_rng *r, double *xv)
{
    for (size_t i = 0; i < NIN; i++)
        xv[i] = chk_rng_uniform(r, -1.5, 1.5);
}

/* program seed recorded at order 2 at x0 (programs: on a tape kept for
   replay, dr_fe_programs) */
static dr_tape *recorded_program(uint64_t seed, const double *x0,
                                 bool programs, dr_real *x, dr_real *y)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    if (programs)
        CHK_STATUS(dr_fe_programs(t, 1), DR_OK);
    record_inputs(t, x0, x);
    program(t, seed, x, y);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    return t;
}

static void test_random_programs(void **state)
{
    (void)state;
    chk_rng pts;
    chk_rng_seed(&pts, 99);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        double x0[NIN];
        random_point(&pts, x0);
        dr_real x[NIN], y[NOUT];
        dr_tape *t = recorded_program(seed, x0, false, x, y);
        results at0, again;
        read_results(t, x, y, &at0);
        for (int k = 0; k < 6; k++) {
            chk_context("program %llu, point %d", (unsigned long long)seed, k);
            double x1[NIN];
            random_point(&pts, x1);
            dr_status st = dr_replay(t, NIN, x, x1);
            if (st == DR_ERETAPE) /* a select's guard? no: programs have none */
                fail_msg("a program without comparisons asked to be retaped");
            CHK_STATUS(st, DR_OK);
            results got, want;
            read_results(t, x, y, &got);
            fresh(seed, x1, &want);
            check_same(&got, &want);
        }
        /* back at the first point: every bit as recorded */
        chk_context("program %llu, back", (unsigned long long)seed);
        CHK_STATUS(dr_replay(t, NIN, x, x0), DR_OK);
        read_results(t, x, y, &again);
        check_same(&again, &at0);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* The same programs on a tape kept for replay (dr_fe_programs), where a
   sum of products is one statement a batch: replay is a fresh recording's
   bit for bit; values, and Jacobians and forward products where finite,
   are those of order 1, whose batches are n-ary nodes of the same
   partials; a Hessian-vector
   product through such a statement is refused (no second order). */
static void test_programs_kept_for_replay(void **state)
{
    (void)state;
    chk_rng pts;
    chk_rng_seed(&pts, 7);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        double x0[NIN];
        random_point(&pts, x0);
        dr_real x[NIN], y[NOUT];
        dr_tape *t = recorded_program(seed, x0, true, x, y);
        for (int k = 0; k < 4; k++) {
            chk_context("program %llu, point %d", (unsigned long long)seed, k);
            double x1[NIN];
            random_point(&pts, x1);
            CHK_STATUS(dr_replay(t, NIN, x, x1), DR_OK);
            results got, want, order1;
            read_results(t, x, y, &got);
            fresh_as(seed, x1, 2, true, &want);
            check_same(&got, &want);
            fresh_as(seed, x1, 1, false, &order1);
            /* (where a NaN or an infinity meets a zero the node structures
               part: order 1 leaves out what order 2 logs) */
            for (size_t i = 0; i < NOUT; i++) {
                CHK_SAME(got.y[i], order1.y[i]);
                if (isfinite(got.jv[i]) && isfinite(order1.jv[i]))
                    CHK_SAME(got.jv[i], order1.jv[i]);
            }
            for (size_t i = 0; i < NOUT * NIN; i++)
                if (isfinite(got.J[i]) && isfinite(order1.J[i]))
                    CHK_SAME(got.J[i], order1.J[i]);
            assert_true(got.hv_st == DR_OK || got.hv_st == DR_ENOTSUP);
        }
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* A long sum of products kept for replay: a statement per batch of
   DR_FE_DOT_CHUNK pairs over the sum so far, constant factors and a
   factor given twice among the leaves; its value the left fold of the
   products, its gradient the products' partials, a Hessian-vector product
   refused and the tape still usable, and fewer nodes than the products
   and additions one by one. */
static void test_long_sum_of_products(void **state)
{
    (void)state;
    enum { NX = 40, PAIRS = 2 * DR_FE_DOT_CHUNK + 37 };
    double xv[NX], x1v[NX];
    for (size_t i = 0; i < NX; i++) {
        xv[i] = sin(1.0 + (double)i);
        x1v[i] = cos(0.5 + 2.0 * (double)i);
    }
    size_t lens[2];
    for (int kept = 1; kept >= 0; kept--) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        CHK_STATUS(dr_fe_programs(t, kept), DR_OK);
        dr_real x[NX];
        CHK_STATUS(dr_inputs(t, NX, xv, x), DR_OK);
        dr_idx ia[PAIRS], ib[PAIRS];
        double xa[PAIRS], xb[PAIRS], want = 0.0, g[NX] = {0};
        for (size_t k = 0; k < PAIRS; k++) {
            size_t i = (7 * k) % NX, j = (3 * k + 1) % NX;
            ia[k] = x[i].idx;
            xa[k] = xv[i];
            /* every fifth factor a constant, every seventh the same input
               twice */
            bool c = k % 5 == 0;
            if (k % 7 == 0)
                j = i;
            ib[k] = c ? DR_NONE : x[j].idx;
            xb[k] = c ? 0.25 * (double)k : xv[j];
            want = want + xa[k] * xb[k];
            g[i] += xb[k];
            if (!c)
                g[j] += xa[k];
        }
        dr_real y = {want, dr_fe_dot_rec(t, DR_NONE, 0.0, PAIRS, ia, xa, ib, xb)};
        CHK_STATUS(dr_tape_status(t), DR_OK);
        double v, grad[NX];
        CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
        CHK_SAME(v, want);
        CHK_STATUS(dr_gradient(t, y, NX, x, grad), DR_OK);
        for (size_t i = 0; i < NX; i++)
            assert_true(fabs(grad[i] - g[i]) <= 1e-12 * (1.0 + fabs(g[i])));
        lens[kept] = dr_tape_len(t);
        double dir[NX], hv[NX];
        for (size_t i = 0; i < NX; i++)
            dir[i] = 1.0;
        if (kept) {
            CHK_STATUS(dr_hvp(t, y, NX, x, dir, hv), DR_ENOTSUP);
            /* replay at x1 is a fresh recording at x1 (the value bit for
               bit, by the same left fold) */
            CHK_STATUS(dr_replay(t, NX, x, x1v), DR_OK);
            double w = 0.0;
            for (size_t k = 0; k < PAIRS; k++) {
                size_t i = (7 * k) % NX, j = k % 7 == 0 ? i : (3 * k + 1) % NX;
                w = w + x1v[i] * (k % 5 == 0 ? 0.25 * (double)k : x1v[j]);
            }
            CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
            CHK_SAME(v, w);
            CHK_STATUS(dr_gradient(t, y, NX, x, grad), DR_OK);
        } else {
            CHK_STATUS(dr_hvp(t, y, NX, x, dir, hv), DR_OK);
        }
        dr_tape_free(t);
    }
    /* three statements over the inputs, against a product and an addition
       a pair */
    assert_int_equal(lens[1], NX + 3);
    assert_true(lens[0] > NX + PAIRS);
}

/* a chain of 2000 operations at order 2 (the log past its first block
   several times over), replayed at x1: value and gradient */
static void chain(const double *x0, const double *x1, double *out)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[2];
    CHK_STATUS(dr_inputs(t, 2, x0, x), DR_OK);
    dr_real y = x[0];
    for (int i = 0; i < 1000; i++)
        y = dr_add(t, dr_mul(t, dr_sin(t, y), x[1]), x[0]);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_replay(t, 2, x, x1), DR_OK);
    CHK_STATUS(dr_value(t, y.idx, &out[0]), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 2, x, out + 1), DR_OK);
    dr_tape_free(t);
}

/* The log grows by realloc with the library's allocator and by a new
   block and a copy with a user's: the same values either way; a growth
   that fails answers DR_ENOMEM, leaks nothing, and the tape records on
   after a clear. */
static void test_log_growth(void **state)
{
    (void)state;
    const double x0[2] = {0.4, 0.9}, x1[2] = {-0.3, 0.7};
    double lib[3], user[3];
    chain(x0, x1, lib);
    chk_alloc al;
    chk_alloc_install(&al);
    chain(x0, x1, user);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
    for (int i = 0; i < 3; i++)
        CHK_SAME(user[i], lib[i]);
    /* the k-th allocation fails, for every k up to a clean run */
    bool done = false;
    for (size_t k = 1; !done && k < 200; k++) {
        chk_context("allocation %zu", k);
        dr_tape *t = chk_oom_tape(&al, k);
        assert_non_null(t);
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[2];
        dr_status st = dr_inputs(t, 2, x0, x);
        dr_real y = x[0];
        for (int i = 0; st == DR_OK && i < 1000; i++)
            y = dr_add(t, dr_mul(t, dr_sin(t, y), x[1]), x[0]);
        st = st == DR_OK ? dr_tape_status(t) : st;
        chk_alloc_fail_in(&al, 0, false);
        if (al.fails == 0) {
            CHK_STATUS(st, DR_OK);
            done = true;
        } else {
            CHK_STATUS(st, DR_ENOMEM);
            /* usable again after a clear */
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            CHK_STATUS(dr_inputs(t, 2, x0, x), DR_OK);
            y = dr_mul(t, x[0], x[1]);
            CHK_STATUS(dr_tape_status(t), DR_OK);
        }
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    chk_context(NULL);
    assert_true(done);
}

/* Only some inputs given: the others keep their values (those recorded
   with one; the two recorded without must be given). */
static void test_some_inputs(void **state)
{
    (void)state;
    const uint64_t seed = 7;
    double x0[NIN] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
    dr_real x[NIN], y[NOUT];
    dr_tape *t = recorded_program(seed, x0, false, x, y);
    /* inputs 1, 4, 5, 6 new (in another order), 0, 2, 3 as recorded */
    dr_real some[4] = {x[6], x[1], x[5], x[4]};
    double vals[4] = {-0.9, 1.3, 0.05, -0.4};
    /* the two inputs recorded without a value take theirs from their
       first use: left out, they keep the recorded ones */
    CHK_STATUS(dr_replay(t, 3, some + 1, vals + 1), DR_OK);
    double x1b[NIN] = {0.1, 1.3, 0.3, 0.4, -0.4, 0.05, 0.7};
    results got, want;
    read_results(t, x, y, &got);
    fresh(seed, x1b, &want);
    check_same(&got, &want);
    double v;
    CHK_STATUS(dr_replay(t, 4, some, vals), DR_OK);
    double x1[NIN] = {0.1, 1.3, 0.3, 0.4, -0.4, 0.05, -0.9};
    read_results(t, x, y, &got);
    fresh(seed, x1, &want);
    check_same(&got, &want);
    CHK_STATUS(dr_value(t, x[6].idx, &v), DR_OK);
    CHK_SAME(v, -0.9);
    CHK_STATUS(dr_value(t, x[3].idx, &v), DR_OK);
    CHK_SAME(v, 0.4);
    /* now they have values: inputs 0 and 1 alone */
    CHK_STATUS(dr_replay(t, 2, x, x0), DR_OK);
    x1[0] = x0[0];
    x1[1] = x0[1];
    read_results(t, x, y, &got);
    fresh(seed, x1, &want);
    check_same(&got, &want);
    dr_tape_free(t);
}

/* dr_replay_range: the inputs of a range by their first id, as dr_replay
   of the same ids; ranges that are not all inputs refused. */
static void test_replay_range(void **state)
{
    (void)state;
    const uint64_t seed = 11;
    double x0[NIN] = {0.2, -0.4, 0.6, 0.1, 0.3, -0.5, 0.9};
    dr_tape *a = chk_tape_new(), *b = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(a, 2), DR_OK);
    CHK_STATUS(dr_tape_set_order(b, 2), DR_OK);
    dr_real xa[NIN], xb[NIN], ya[NOUT], yb[NOUT];
    record_inputs(a, x0, xa);
    record_inputs(b, x0, xb);
    program(a, seed, xa, ya);
    program(b, seed, xb, yb);
    double v[3] = {-0.7, 0.25, 1.1};
    CHK_STATUS(dr_replay_range(a, xa[0].idx, 3, v), DR_OK); /* dr_inputs' three */
    CHK_STATUS(dr_replay(b, 3, xb, v), DR_OK);
    results ra, rb;
    read_results(a, xa, ya, &ra);
    read_results(b, xb, yb, &rb);
    check_same(&ra, &rb);
    /* a range running past the inputs into other nodes, no range, an
       overflowing one, NULL values: refused, nothing changed */
    CHK_STATUS(dr_replay_range(a, xa[0].idx, NIN + 5, v), DR_EINVAL);
    CHK_STATUS(dr_replay_range(a, DR_NONE, 1, v), DR_EINVAL);
    CHK_STATUS(dr_replay_range(a, INT64_MAX - 1, 4, v), DR_EINVAL);
    CHK_STATUS(dr_replay_range(a, xa[0].idx, 1, NULL), DR_EINVAL);
    CHK_STATUS(dr_replay_range(a, xa[0].idx, 0, NULL), DR_OK);
    read_results(a, xa, ya, &ra);
    check_same(&ra, &rb);
    dr_tape_free(a);
    dr_tape_free(b);
}

/* x0 x1 + sin x2 on inputs x[0..2] of a fresh tape of order 2 */
static dr_real small_program(dr_tape *t, const double *v, dr_real *x)
{
    for (int i = 0; i < 3; i++)
        x[i] = dr_input(t, v[i]);
    return dr_add(t, dr_mul(t, x[0], x[1]), dr_sin(t, x[2]));
}

/* Replay remembers the inputs it last checked; the same inputs again are
   not looked at, but any other set is, and so is the same set after a
   clear, though as many nodes are recorded again. */
static double value_of(const dr_tape *t, dr_real y)
{
    double v = NAN;
    CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
    return v;
}

static void test_inputs_remembered(void **state)
{
    (void)state;
    const double v0[3] = {0.5, -1.25, 0.75}, v1[3] = {2.0, 0.5, -0.25};
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[3];
    dr_real y = small_program(t, v0, x);
    double g[3];
    for (int k = 0; k < 4; k++) { /* the first call checks, then not */
        const double *v = k % 2 ? v0 : v1;
        CHK_STATUS(dr_replay(t, 3, x, v), DR_OK);
        CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
        CHK_SAME(value_of(t, y), v[0] * v[1] + sin(v[2]));
        CHK_SAME(g[0], v[1]);
        CHK_SAME(g[2], cos(v[2]));
    }
    /* as many inputs, other ids: a repeated input, a node that is no
       input, refused with the tape at its last point */
    dr_real rep[3] = {x[0], x[0], x[1]}, nonin[3] = {x[0], x[1], y};
    CHK_STATUS(dr_replay(t, 3, rep, v0), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 3, nonin, v0), DR_EINVAL);
    CHK_SAME(value_of(t, y), v0[0] * v0[1] + sin(v0[2]));
    /* the same ids as a range, then as an array again */
    CHK_STATUS(dr_replay_range(t, x[0].idx, 3, v1), DR_OK);
    CHK_STATUS(dr_replay_range(t, x[0].idx + 1, 3, v1), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 3, x, v0), DR_OK);
    /* cleared, and as many nodes recorded again: the old inputs, no ids of
       the tape now, are refused */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real p = dr_input(t, 0.5);
    dr_real s = dr_sin(t, p);
    dr_real q = dr_input(t, 1.5), r = dr_input(t, 2.5);
    dr_real y2 = dr_add(t, dr_mul(t, q, r), s);
    CHK_STATUS(dr_replay(t, 3, x, v0), DR_EINVAL);
    dr_real z[3] = {p, q, r};
    CHK_STATUS(dr_replay(t, 3, z, v1), DR_OK);
    CHK_SAME(value_of(t, y2), v1[1] * v1[2] + sin(v1[0]));
    dr_tape_free(t);
}

/* An input recorded without its value takes it from its first use, so a
   replay that gives it a value and fails sets it back to the recorded one
   (not to a placeholder). */
static void test_unknown_input_set_back(void **state)
{
    (void)state;
    for (int uses = 0; uses < 2; uses++) {
        chk_context("used first by %s", uses ? "a comparison" : "an operation");
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_idx first;
        CHK_STATUS(dr_input_range(t, 1, &first), DR_OK);
        dr_real x = {1.0, first};
        double v;
        CHK_STATUS(dr_value(t, x.idx, &v), DR_ENOTSUP);
        int below = uses ? dr_lt(t, x, dr_const(1.2)) : 0;
        dr_real y = dr_sin(t, x);
        if (!uses)
            below = dr_lt(t, y, dr_const(0.9));
        assert_int_equal(below, 1);
        double g, g0;
        CHK_STATUS(dr_gradient(t, y, 1, &x, &g0), DR_OK);
        /* a flip at the first replay: back to the recorded value */
        v = 1.5;
        CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
        CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
        CHK_SAME(v, sin(1.0));
        CHK_STATUS(dr_value(t, x.idx, &v), DR_OK);
        CHK_SAME(v, 1.0);
        CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
        CHK_SAME(g, g0);
        /* left out, it keeps the recorded value */
        CHK_STATUS(dr_replay(t, 0, NULL, NULL), DR_OK);
        CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
        CHK_SAME(v, sin(1.0));
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* ------------------------------------------------------------ guards */

/* f(x) = x < 0.5 ? x^3 : sin(x) * x, the branch taken with dr_lt */
static dr_real piecewise(dr_tape *t, dr_real x)
{
    if (dr_lt(t, x, dr_const(0.5)))
        return dr_powi(t, x, 3);
    return dr_mul(t, dr_sin(t, x), x);
}

static void test_guard_flips(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.2);
    dr_real y = piecewise(t, x);
    double g0, g;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g0), DR_OK);
    CHK_SAME(g0, 3 * 0.2 * 0.2);
    /* the same side: replays */
    double v = -0.3;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 3 * pow(-0.3, 2));
    /* the other side: refused, and the tape as it was before the call */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    size_t len = dr_tape_len(t);
    v = 0.5; /* the boundary: 0.5 < 0.5 is false */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_SAME(dr_adjoint(t, x.idx), 3 * pow(-0.3, 2)); /* the sweep's too */
    double yv;
    CHK_STATUS(dr_value(t, y.idx, &yv), DR_OK);
    CHK_SAME(yv, pow(-0.3, 3));
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 3 * pow(-0.3, 2));
    /* a NaN input makes every comparison false: refused too */
    v = NAN;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    dr_tape_free(t);

    /* each comparison, each way it can flip */
    int (*const cmp[6])(dr_tape *, dr_real, dr_real) = {dr_lt, dr_le, dr_gt,
                                                         dr_ge, dr_eq, dr_ne};
    for (int k = 0; k < 6; k++) {
        chk_context("comparison %d", k);
        t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real a = dr_input(t, 1.0), b = dr_input(t, 2.0);
        int out = cmp[k](t, a, b);
        assert_int_equal(out, k == 0 || k == 1 || k == 5);
        dr_real ab[2] = {a, b};
        /* a < b, a == b, a > b: the outcome of each comparison there */
        const double pts[3][2] = {{0.0, 3.0}, {2.5, 2.5}, {3.0, 0.0}};
        const int same[6][3] = {{1, 0, 0}, {1, 1, 0}, {0, 0, 1},
                                {0, 1, 1}, {0, 1, 0}, {1, 0, 1}};
        for (int p = 0; p < 3; p++) {
            int now = same[k][p];
            CHK_STATUS(dr_replay(t, 2, ab, pts[p]),
                       now == out ? DR_OK : DR_ERETAPE);
        }
        dr_tape_free(t);
    }
    chk_context(NULL);
    /* constants compared record nothing; an id of another tape is refused */
    t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    assert_int_equal(dr_lt(t, dr_const(1), dr_const(2)), 1);
    assert_int_equal(dr_lt(NULL, dr_const(3), dr_const(2)), 0);
    dr_tape *u = chk_tape_new();
    dr_real w = dr_input(u, 1.0);
    assert_int_equal(dr_gt(t, w, dr_const(0)), 1);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape_free(u);
    dr_tape_free(t);
}

/* The discrete results: roundings and classes, each a guard. */
static void test_discrete_guards(void **state)
{
    (void)state;
    static const struct {
        int kind;       /* 0 floor, 1 ceil, 2 trunc, 3 rint, 4 isnan, 5 isinf,
                           6 signbit */
        double at, same, other;
    } cases[] = {
        {0, 1.5, 1.9, 2.0},   {0, -0.5, -0.01, 0.0},  {0, NAN, NAN, 1.0},
        {1, 1.5, 1.01, 1.0},  {1, -0.5, -0.9, -1.0},  {2, -0.5, -0.2, 0.5},
        {3, -0.3, -0.4, 0.3}, /* a rounded zero keeps its sign */
        {2, 2.7, 2.0, 3.0},   {3, 2.5, 1.5, 3.5},     {3, 2.4, 2.0, 2.6},
        {4, NAN, -NAN, 1.0},  {4, 1.0, INFINITY, NAN}, {5, INFINITY, -INFINITY, 1e308},
        {5, 0.0, 1e308, INFINITY}, {6, -0.0, -1.0, 0.0}, {6, 1.0, 0.0, -2.0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        chk_context("case %zu", k);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x = dr_input(t, cases[k].at);
        double r = 0;
        switch (cases[k].kind) {
        case 0: r = dr_floor(t, x); CHK_SAME(r, floor(x.val)); break;
        case 1: r = dr_ceil(t, x); CHK_SAME(r, ceil(x.val)); break;
        case 2: r = dr_trunc(t, x); CHK_SAME(r, trunc(x.val)); break;
        case 3: r = dr_rint(t, x); CHK_SAME(r, rint(x.val)); break;
        case 4: assert_int_equal(dr_isnan(t, x), isnan(x.val) != 0); break;
        case 5: assert_int_equal(dr_isinf(t, x), isinf(x.val) != 0); break;
        default: assert_int_equal(dr_signbit(t, x), signbit(x.val) != 0); break;
        }
        double v = cases[k].same;
        CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
        v = cases[k].other;
        CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
        dr_tape_free(t);
    }
    chk_context(NULL);
    /* the front ends' entry: an op out of range records nothing */
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 1.0);
    assert_int_equal(dr_fe_guard(t, 13, 1.0, x.idx, 0.0, DR_NONE), 0);
    assert_int_equal(dr_fe_guard(t, -1, 1.0, x.idx, 0.0, DR_NONE), 0);
    assert_int_equal(dr_fe_guard(t, 0, 1.0, x.idx, 2.0, DR_NONE), 1);
    double v = 3.0;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* A replay after a call that drops nodes again (dr_hvp records its tangent
   and takes it off), which makes replay look at the tape again: the
   guards' values are those of the last replay, not of the recording. */
static void test_guard_after_restore(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.1);
    dr_real s = dr_sin(t, x);
    assert_int_equal(dr_lt(t, s, dr_const(0.5)), 1);
    dr_real y = dr_mul(t, s, s);
    double v = 0.2, h, one = 1.0, g;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
    CHK_STATUS(dr_hvp(t, y, 1, &x, &one, &h), DR_OK);
    v = 0.3;
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 2 * sin(0.3) * cos(0.3));
    v = 1.0; /* sin 1 > 0.5: flips */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    dr_tape_free(t);
}

/* A loop whose trip count depends on the value: doubling until past 10. */
static void test_loop_trip_count(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 1.5), y = x;
    int steps = 0;
    while (dr_lt(t, y, dr_const(10.0))) {
        y = dr_mul(t, y, dr_const(2.0));
        steps++;
    }
    assert_int_equal(steps, 3); /* 1.5 3 6 12 */
    double v = 1.9, g; /* 1.9 3.8 7.6 15.2: three steps too */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 8.0);
    double yv;
    CHK_STATUS(dr_value(t, y.idx, &yv), DR_OK);
    CHK_SAME(yv, 15.2);
    v = 1.2; /* 1.2 2.4 4.8 9.6 19.2: four */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    v = 2.6; /* 2.6 5.2 10.4: two */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ERETAPE);
    CHK_STATUS(dr_value(t, y.idx, &yv), DR_OK);
    CHK_SAME(yv, 15.2);
    dr_tape_free(t);
}

/* dr_select: one tape for both sides of the condition. */
static void test_select(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 0.7);
    /* relu-like: x > 0 ? x^2 : 0.1 x; and a select of two constants */
    dr_real y = dr_select(t, x, dr_mul(t, x, x), dr_mul(t, dr_const(0.1), x));
    dr_real s = dr_select(t, x, dr_const(1.0), dr_const(-1.0));
    dr_real z = dr_add(t, y, s);
    const double pts[] = {0.7, -2.0, 0.0, 3.0, -0.0, 1e-300};
    for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
        chk_context("x = %g", pts[i]);
        double v = pts[i], g, zv;
        CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
        CHK_STATUS(dr_gradient(t, z, 1, &x, &g), DR_OK);
        CHK_STATUS(dr_value(t, z.idx, &zv), DR_OK);
        bool pos = v > 0;
        CHK_SAME(zv, (pos ? v * v : 0.1 * v) + (pos ? 1.0 : -1.0));
        CHK_SAME(g, pos ? 2 * v : 0.1);
        /* second order through it: the chosen side's */
        double h, one = 1.0;
        CHK_STATUS(dr_hvp(t, z, 1, &x, &one, &h), DR_OK);
        CHK_SAME(h, pos ? 2.0 : 0.0);
    }
    chk_context(NULL);
    /* a condition recorded without its value (dr_input_range) takes the
       one the select was given */
    dr_tape *w = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(w, 2), DR_OK);
    dr_idx first;
    CHK_STATUS(dr_input_range(w, 1, &first), DR_OK);
    dr_real c = {0.5, first}, a2 = dr_input(w, 3.0);
    dr_real s2 = dr_select(w, c, dr_mul(w, a2, a2), a2);
    double sv, cv = -0.5;
    CHK_STATUS(dr_replay(w, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_value(w, s2.idx, &sv), DR_OK);
    CHK_SAME(sv, 9.0);
    CHK_STATUS(dr_replay(w, 1, &c, &cv), DR_OK);
    CHK_STATUS(dr_value(w, s2.idx, &sv), DR_OK);
    CHK_SAME(sv, 3.0);
    dr_tape_free(w);
    /* a constant condition picks at once; order 1 gives the value picked */
    dr_real k = dr_select(t, dr_const(-1), x, dr_const(4));
    assert_int_equal(k.idx, DR_NONE);
    CHK_SAME(k.val, 4.0);
    dr_tape *u = chk_tape_new();
    dr_real ux = dr_input(u, 2.0);
    dr_real uy = dr_select(u, ux, ux, dr_const(0));
    assert_int_equal(uy.idx, ux.idx);
    dr_tape_free(u);
    dr_tape_free(t);
}

/* Gradient descent on a function with a branch: record once, replay each
   step, record again where the branch flips; the path is the one that
   recording at every step takes, bit for bit. */
static dr_real objective(dr_tape *t, const dr_real *w)
{
    /* (w0 - 1)^2 + 3 (w1 + 0.5)^2, plus |w0 - 0.3| written as a branch */
    dr_real a = dr_sub(t, w[0], dr_const(1.0));
    dr_real b = dr_add(t, w[1], dr_const(0.5));
    dr_real f = dr_add(t, dr_mul(t, a, a),
                       dr_mul(t, dr_const(3.0), dr_mul(t, b, b)));
    dr_real d = dr_sub(t, w[0], dr_const(0.3));
    dr_real kink = dr_lt(t, d, dr_const(0.0)) ? dr_neg(t, d) : d;
    return dr_add(t, f, dr_mul(t, dr_const(0.4), kink));
}

static void test_descent(void **state)
{
    (void)state;
    double wr[2] = {-1.0, 1.0}, wf[2] = {-1.0, 1.0};
    dr_tape *t = chk_tape_new(), *f = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real w[2], y = {0, DR_NONE};
    int records = 0, flips = 0;
    for (int step = 0; step < 120; step++) {
        chk_context("step %d", step);
        double g[2], gf[2];
        dr_status st = records ? dr_replay(t, 2, w, wr) : DR_ERETAPE;
        if (st == DR_ERETAPE) {
            flips += records > 0;
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            CHK_STATUS(dr_inputs(t, 2, wr, w), DR_OK);
            y = objective(t, w);
            records++;
        } else {
            CHK_STATUS(st, DR_OK);
        }
        CHK_STATUS(dr_gradient(t, y, 2, w, g), DR_OK);
        /* the fresh recording at the same point */
        CHK_STATUS(dr_tape_clear(f), DR_OK);
        dr_real v[2];
        CHK_STATUS(dr_inputs(f, 2, wf, v), DR_OK);
        CHK_STATUS(dr_gradient(f, objective(f, v), 2, v, gf), DR_OK);
        for (int i = 0; i < 2; i++) {
            CHK_SAME(g[i], gf[i]);
            wr[i] -= 0.1 * g[i];
            wf[i] -= 0.1 * gf[i];
        }
    }
    chk_context(NULL);
    assert_true(flips >= 1); /* w0 crosses 0.3 on its way to 0.8 */
    assert_true(records < 10);
    CHK_CLOSE(wr[0], 0.8, 1e-6, 0);
    CHK_CLOSE(wr[1], -0.5, 1e-6, 0);
    dr_tape_free(f);
    dr_tape_free(t);
}

/* ------------------------------------------------------------- refusals */

static void test_refused(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0), y = dr_sin(t, x);
    double v = 2.0, out;
    /* order 1 */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    CHK_STATUS(dr_value(t, y.idx, &out), DR_ENOTSUP);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    x = dr_input(t, 1.0);
    y = dr_sin(t, x);
    /* bad arguments */
    CHK_STATUS(dr_replay(NULL, 1, &x, &v), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 1, NULL, &v), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 1, &x, NULL), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_replay(t, 1, &y, &v), DR_EINVAL); /* not an input */
    dr_real twice[2] = {x, x};
    double vv[2] = {2.0, 3.0};
    CHK_STATUS(dr_replay(t, 2, twice, vv), DR_EINVAL);
    dr_real bad = {1.0, (dr_idx)1 << 50}, none = dr_const(1.0);
    CHK_STATUS(dr_replay(t, 1, &bad, &v), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 1, &none, &v), DR_EINVAL);
    CHK_STATUS(dr_value(t, y.idx, NULL), DR_EINVAL);
    CHK_STATUS(dr_value(NULL, y.idx, &out), DR_EINVAL);
    CHK_STATUS(dr_value(t, DR_NONE, &out), DR_EINVAL);
    CHK_STATUS(dr_value(t, bad.idx, &out), DR_EINVAL);
    CHK_STATUS(dr_value(t, y.idx, &out), DR_OK);
    CHK_SAME(out, sin(1.0));
    /* after the refusals, it replays (the duplicate's mark is gone) */
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_OK);
    CHK_STATUS(dr_value(t, y.idx, &out), DR_OK);
    CHK_SAME(out, sin(2.0));
    /* an operation given a value other than its argument node's (a front
       end that folded a constant into the value, not into a node): the
       replay would compute otherwise, so it refuses */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 1.0);
    y = dr_sin(t, x);
    dr_real folded = {y.val + 0.5, y.idx};
    dr_real w = dr_mul(t, folded, x);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    CHK_STATUS(dr_value(t, w.idx, &out), DR_OK);
    CHK_SAME(out, (sin(1.0) + 0.5) * 1.0);
    /* ... also where a comparison was given one */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 1.0);
    y = dr_sin(t, x);
    folded.idx = y.idx;
    folded.val = y.val + 0.5;
    dr_lt(t, folded, dr_const(0.0));
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 1.0);
    y = dr_sin(t, x);
    /* nodes whose value the library never saw */
    dr_idx given = dr_record1(t, x.idx, 2.0);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    CHK_STATUS(dr_value(t, given, &out), DR_ENOTSUP);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 1.0);
    dr_idx args[3] = {x.idx, x.idx, x.idx};
    double ps[3] = {1.0, 2.0, 3.0};
    given = dr_recordn(t, 3, args, ps);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    /* nodes recorded at order 1 */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    x = dr_input(t, 1.0);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    y = dr_sin(t, x);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    dr_real x2 = dr_input(t, 1.0);
    CHK_STATUS(dr_replay(t, 1, &x2, &v), DR_ENOTSUP);
    /* a sticky status */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    x = dr_input(t, 1.0);
    dr_sin(t, bad);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_EINVAL);
    /* forked: busy, then a job graph */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 1), DR_OK);
    x = dr_input(t, 1.0);
    dr_tape *kids[1];
    CHK_STATUS(dr_fork(t, 1, kids), DR_OK);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_EBUSY);
    CHK_STATUS(dr_replay(kids[0], 1, &x, &v), DR_EINVAL);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_replay(t, 1, &x, &v), DR_ENOTSUP);
    dr_tape_free(t);
}

/* Out of memory at each allocation of a replay: DR_ENOMEM and the tape as
   it was, or the replay done. */
static void test_oom(void **state)
{
    (void)state;
    bool done = false;
    for (size_t k = 1; !done && k < 20; k++) {
        chk_context("allocation %zu", k);
        chk_alloc al;
        chk_alloc_install(&al);
        double x0[NIN] = {0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7};
        double x1[NIN] = {0.3, 0.2, -0.1, 0.4, -0.5, 0.6, 0.9};
        dr_real x[NIN], y[NOUT];
        dr_tape *t = recorded_program(5, x0, false, x, y);
        results before, after;
        read_results(t, x, y, &before);
        chk_alloc_reset_counts(&al);
        chk_alloc_fail_in(&al, k, false);
        dr_status st = dr_replay(t, NIN, x, x1);
        chk_alloc_fail_in(&al, 0, false);
        read_results(t, x, y, &after);
        if (al.fails == 0) {
            CHK_STATUS(st, DR_OK);
            fresh(5, x1, &before);
            done = true;
        } else {
            CHK_STATUS(st, DR_ENOMEM);
        }
        check_same(&after, &before);
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    chk_context(NULL);
    assert_true(done);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_random_programs, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_programs_kept_for_replay, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_long_sum_of_products, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_log_growth, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_some_inputs, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_replay_range, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_inputs_remembered, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_unknown_input_set_back, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_guard_flips, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_discrete_guards, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_guard_after_restore, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_loop_trip_count, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_select, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_descent, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_refused, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
