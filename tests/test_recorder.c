/*
 * test_recorder.c - inline recording through a dr_rec (dualrev.h): the same
 * nodes, ids, values and gradients as the tape calls, bit for bit, across
 * chunk boundaries (and far arguments in the test-far build), also with the
 * tape's own calls in between; what a tape with an open recorder refuses; every error path (NULLs, ids not on the tape, a
 * recorder that failed to open, out of memory) gives constants and a sticky
 * status, and leaks nothing; recorders on the child handles of a fork.
 * On tapes of order 2, where each of the recorder's operations is the
 * tape's own, logged: the same ids, values, gradients and Hessians as the
 * calls' (bit for bit, interleaved with tape calls, across chunks), Hessian-
 * vector products against finite differences of the gradient, replay at
 * many points against a fresh recording, and nodes of given partials
 * (dr_rec_record1/2, statements, sums) linear and refused by replay.
 */
#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One step of a random program over a pool of values, through the tape
   calls (r == NULL) or a recorder: the operation and its arguments are
   drawn from the seed, constants in every argument position included. */
static dr_real step(dr_tape *t, dr_rec *r, chk_rng *rng, const dr_real *pool,
                    size_t n)
{
    dr_real a = pool[chk_rng_below(rng, n)], b = pool[chk_rng_below(rng, n)];
    if (chk_rng_below(rng, 5) == 0)
        a = dr_const(a.val);
    if (chk_rng_below(rng, 5) == 0)
        b = dr_const(b.val);
    double da = chk_rng_uniform(rng, -1.0, 1.0);
    double db = chk_rng_uniform(rng, -1.0, 1.0);
    switch (chk_rng_below(rng, 7)) {
    case 0:
        return r ? dr_rec_add(r, a, b) : dr_add(t, a, b);
    case 1:
        return r ? dr_rec_sub(r, a, b) : dr_sub(t, a, b);
    case 2:
        return r ? dr_rec_mul(r, a, b) : dr_mul(t, a, b);
    case 3: /* keep the divisor away from 0 */
        b.val = 1.5 + b.val * b.val;
        return r ? dr_rec_div(r, a, b) : dr_div(t, a, b);
    case 4:
        return r ? dr_rec_neg(r, a) : dr_neg(t, a);
    case 5: /* (dr_record1 of a constant would record an argument-less
               node; the recorder's, like an operation, records nothing) */
        if (r)
            return dr_rec_record1(r, a.val * 0.5, a, da);
        if (a.idx == DR_NONE)
            return dr_const(a.val * 0.5);
        return (dr_real){a.val * 0.5, dr_record1(t, a.idx, da)};
    default:
        if (r)
            return dr_rec_record2(r, a.val - b.val, a, da, b, db);
        if (a.idx == DR_NONE && b.idx == DR_NONE)
            return dr_const(a.val - b.val);
        return (dr_real){a.val - b.val, dr_record2(t, a.idx, da, b.idx, db)};
    }
}

/* Record the same program on two tapes, one through the calls, one
   through a recorder (ended and begun again every `reopen` steps), and
   compare everything. */
static void check_same_program(size_t steps, size_t reopen, bool mix,
                               uint64_t seed, int order)
{
    chk_context("steps=%zu reopen=%zu mix=%d order=%d", steps, reopen,
                (int)mix, order);
    chk_rng mixer;
    chk_rng_seed(&mixer, seed + 2);
    enum { NIN = 40 };
    dr_tape *t1 = chk_tape_new(), *t2 = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t1, order), DR_OK);
    CHK_STATUS(dr_tape_set_order(t2, order), DR_OK);
    dr_real *p1 = malloc((NIN + steps) * sizeof *p1);
    dr_real *p2 = malloc((NIN + steps) * sizeof *p2);
    assert_non_null(p1);
    assert_non_null(p2);
    chk_rng g1, g2;
    chk_rng_seed(&g1, seed);
    for (size_t i = 0; i < NIN; i++) {
        double v = chk_rng_uniform(&g1, -2.0, 2.0);
        p1[i] = dr_input(t1, v);
        p2[i] = dr_input(t2, v);
    }
    chk_rng_seed(&g1, seed + 1);
    chk_rng_seed(&g2, seed + 1);
    dr_rec r;
    CHK_STATUS(dr_rec_begin(t2, &r), DR_OK);
    for (size_t i = 0; i < steps; i++) {
        /* the window of recent values keeps the program from growing
           without bound, while older ones are still used now and then */
        size_t n = NIN + i;
        p1[n] = step(t1, NULL, &g1, p1, n);
        /* a fifth of the steps through the tape's calls while the recorder
           is open: they take the cursor back and the recorder borrows it
           again, and ids of either are arguments of the other */
        bool by_call = mix && chk_rng_below(&mixer, 5) == 0;
        p2[n] = step(t2, by_call ? NULL : &r, &g2, p2, n);
        CHK_SAME(p2[n].val, p1[n].val);
        /* (each tape has ids of its own: compared from its first) */
        assert_true(p2[n].idx == DR_NONE ? p1[n].idx == DR_NONE
                                         : p2[n].idx - p2[0].idx == p1[n].idx - p1[0].idx);
        if (reopen && i % reopen == reopen - 1) {
            CHK_STATUS(dr_rec_end(&r), DR_OK);
            assert_int_equal(dr_tape_len(t2), dr_tape_len(t1));
            CHK_STATUS(dr_rec_begin(t2, &r), DR_OK);
        }
    }
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    assert_int_equal(dr_tape_len(t2), dr_tape_len(t1));
    /* the gradient of the sum of the last 16 values */
    dr_real y1 = dr_const(0.0), y2 = dr_const(0.0);
    for (size_t i = NIN + steps - 16; i < NIN + steps; i++) {
        y1 = dr_add(t1, y1, p1[i]);
        y2 = dr_add(t2, y2, p2[i]);
    }
    double gr1[NIN], gr2[NIN];
    CHK_STATUS(dr_gradient(t1, y1, NIN, p1, gr1), DR_OK);
    CHK_STATUS(dr_gradient(t2, y2, NIN, p2, gr2), DR_OK);
    for (size_t i = 0; i < NIN; i++)
        CHK_SAME(gr2[i], gr1[i]);
    if (order == 2) {
        /* the recorder's nodes have the rules of the calls' (dr_record1/2:
           linear): the same Hessian-vector product, bit for bit */
        double v[NIN], h1[NIN], h2[NIN];
        for (size_t i = 0; i < NIN; i++)
            v[i] = chk_rng_uniform(&mixer, -1.0, 1.0);
        CHK_STATUS(dr_hvp(t1, y1, NIN, p1, v, h1), DR_OK);
        CHK_STATUS(dr_hvp(t2, y2, NIN, p2, v, h2), DR_OK);
        for (size_t i = 0; i < NIN; i++)
            CHK_SAME(h2[i], h1[i]);
    }
    CHK_STATUS(dr_tape_status(t2), DR_OK);
    free(p1);
    free(p2);
    dr_tape_free(t1);
    dr_tape_free(t2);
}

static void test_same_as_calls(void **state)
{
    (void)state;
    check_same_program(100, 0, false, 1, 1);
    check_same_program(5000, 0, false, 2, 1);   /* many chunks */
    check_same_program(3000, 7, false, 3, 1);   /* ended and begun again */
    check_same_program(200000, 0, false, 4, 1); /* chunks of the largest size */
    check_same_program(5000, 0, true, 5, 1);    /* tape calls in between */
    check_same_program(3000, 11, true, 6, 1);
}

/* The same on tapes of order 2, where every node of the recorder is
   recorded (and logged) by the tape's own operation */
static void test_same_as_calls_order2(void **state)
{
    (void)state;
    check_same_program(100, 0, false, 11, 2);
    check_same_program(5000, 0, false, 12, 2);
    check_same_program(3000, 7, false, 13, 2);
    check_same_program(50000, 0, true, 14, 2);
    check_same_program(3000, 11, true, 15, 2);
}

/* ------------------------------------------------------------ order 2 */

/* One step of a program whose values stay bounded (so that it can be
   replayed and differenced anywhere): each of the recorder's operations,
   constants on either side, and now and then a tape call (dr_sin, dr_exp,
   or the same operation through the tape: `mix`) while the recorder is
   open.  r == NULL: every operation through the tape.  The program's
   shape comes from rng alone, never from its values. */
#define OP2(name, a, b) (r && !call ? dr_rec_##name(r, a, b) : dr_##name(t, a, b))
static dr_real smooth_step(dr_tape *t, dr_rec *r, chk_rng *rng,
                           const dr_real *pool, size_t n, bool mix)
{
    dr_real a = pool[chk_rng_below(rng, n)], b = pool[chk_rng_below(rng, n)];
    bool call = chk_rng_below(rng, 4) == 0 && mix; /* (drawn either way) */
    dr_real half = dr_const(0.5), one = dr_const(1.0);
    switch (chk_rng_below(rng, 9)) {
    case 0: /* (a + b) / 2, the constant second */
        return OP2(mul, OP2(add, a, b), half);
    case 1: /* (a - b) / 2, the constant first */
        return OP2(mul, half, OP2(sub, a, b));
    case 2: /* (1 - b) / 2 */
        return OP2(mul, OP2(sub, one, b), half);
    case 3: /* sin(a * b) through the tape */
        return dr_sin(t, OP2(mul, a, b));
    case 4: { /* a / (1.5 + b * b) */
        dr_real d = OP2(add, dr_const(1.5), OP2(mul, b, b));
        return OP2(div, a, d);
    }
    case 5: { /* 1 / (1.5 + b * b) - a / 3 */
        dr_real d = OP2(add, OP2(mul, b, b), dr_const(1.5));
        return OP2(sub, OP2(div, one, d), OP2(div, a, dr_const(3.0)));
    }
    case 6: /* -a */
        return r && !call ? dr_rec_neg(r, a) : dr_neg(t, a);
    case 7: /* a dot product of four, its sum the recorder's */
    {
        dr_real acc = dr_const(0.0);
        for (int k = 0; k < 4; k++) {
            dr_real u = pool[chk_rng_below(rng, n)];
            dr_real w = pool[chk_rng_below(rng, n)];
            acc = OP2(add, acc, OP2(mul, u, w));
        }
        return OP2(mul, acc, dr_const(0.25));
    }
    default: /* exp(-a * a) through the tape, (1 - that) through r */
        return OP2(sub, one, dr_exp(t, dr_neg(t, OP2(mul, a, a))));
    }
}
#undef OP2

enum { SNIN = 12 };

/* record the smooth program of `steps` steps at x on t (at order 2),
   through a recorder (rec) or the tape's calls, into pool; y the sum of
   its last 8 values (through the tape) */
static dr_real smooth_program(dr_tape *t, bool rec, bool mix, size_t steps,
                              uint64_t seed, const double *x, dr_real *pool)
{
    chk_rng g;
    chk_rng_seed(&g, seed);
    for (size_t i = 0; i < SNIN; i++)
        pool[i] = dr_input(t, x[i]);
    dr_rec r;
    if (rec)
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    for (size_t i = 0; i < steps; i++)
        pool[SNIN + i] = smooth_step(t, rec ? &r : NULL, &g, pool, SNIN + i,
                                     mix);
    if (rec)
        CHK_STATUS(dr_rec_end(&r), DR_OK);
    dr_real y = dr_const(0.0);
    for (size_t i = SNIN + steps - 8; i < SNIN + steps; i++)
        y = dr_add(t, y, pool[i]);
    return y;
}

/* Through the recorder and through the calls, at order 2: the same ids,
   values, gradient, Hessian (bit for bit), and the Hessian-vector product
   against finite differences of the gradient */
typedef struct {
    size_t steps;
    uint64_t seed;
    const double *x, *v;
    size_t i;
} fd_ctx;

static double grad_along(double s, void *ctx)
{
    fd_ctx *c = ctx;
    double x[SNIN], g[SNIN];
    for (size_t k = 0; k < SNIN; k++)
        x[k] = c->x[k] + s * c->v[k];
    dr_tape *t = chk_tape_new();
    dr_real *pool = malloc((SNIN + c->steps) * sizeof *pool);
    assert_non_null(pool);
    dr_real y = smooth_program(t, false, false, c->steps, c->seed, x, pool);
    CHK_STATUS(dr_gradient(t, y, SNIN, pool, g), DR_OK);
    free(pool);
    dr_tape_free(t);
    return g[c->i];
}

static void test_order2_hvp(void **state)
{
    (void)state;
    static const size_t steps_of[] = {40, 400, 20000};
    for (size_t q = 0; q < 3; q++) {
        size_t steps = steps_of[q];
        uint64_t seed = 100 + q;
        chk_context("steps=%zu", steps);
        double x[SNIN], v[SNIN];
        chk_rng g;
        chk_rng_seed(&g, seed + 50);
        for (size_t i = 0; i < SNIN; i++) {
            x[i] = chk_rng_uniform(&g, -1.5, 1.5);
            v[i] = chk_rng_uniform(&g, -1.0, 1.0);
        }
        dr_tape *t1 = chk_tape_new(), *t2 = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t1, 2), DR_OK);
        CHK_STATUS(dr_tape_set_order(t2, 2), DR_OK);
        dr_real *p1 = malloc((SNIN + steps) * sizeof *p1);
        dr_real *p2 = malloc((SNIN + steps) * sizeof *p2);
        assert_non_null(p1);
        assert_non_null(p2);
        dr_real y1 = smooth_program(t1, false, false, steps, seed, x, p1);
        dr_real y2 = smooth_program(t2, true, true, steps, seed, x, p2);
        CHK_STATUS(dr_tape_status(t2), DR_OK);
        assert_int_equal(dr_tape_len(t2), dr_tape_len(t1));
        assert_true(y2.idx - p2[0].idx == y1.idx - p1[0].idx);
        CHK_SAME(y2.val, y1.val);
        for (size_t i = 0; i < SNIN + steps; i++) {
            CHK_SAME(p2[i].val, p1[i].val);
            assert_true(p2[i].idx - p2[0].idx == p1[i].idx - p1[0].idx);
            double v1, v2;
            CHK_STATUS(dr_value(t1, p1[i].idx, &v1), DR_OK);
            CHK_STATUS(dr_value(t2, p2[i].idx, &v2), DR_OK);
            CHK_SAME(v2, v1);
            CHK_SAME(v2, p2[i].val);
        }
        double g1[SNIN], g2[SNIN], h1[SNIN], h2[SNIN];
        CHK_STATUS(dr_gradient(t1, y1, SNIN, p1, g1), DR_OK);
        CHK_STATUS(dr_gradient(t2, y2, SNIN, p2, g2), DR_OK);
        CHK_STATUS(dr_hvp(t1, y1, SNIN, p1, v, h1), DR_OK);
        CHK_STATUS(dr_hvp(t2, y2, SNIN, p2, v, h2), DR_OK);
        /* dr_hvp leaves the tape as it was */
        assert_int_equal(dr_tape_len(t2), dr_tape_len(t1));
        for (size_t i = 0; i < SNIN; i++) {
            CHK_SAME(g2[i], g1[i]);
            CHK_SAME(h2[i], h1[i]);
        }
        static double H1[SNIN * SNIN], H2[SNIN * SNIN];
        CHK_STATUS(dr_hessian(t1, y1, SNIN, p1, H1), DR_OK);
        CHK_STATUS(dr_hessian(t2, y2, SNIN, p2, H2), DR_OK);
        for (size_t i = 0; i < SNIN * SNIN; i++)
            CHK_SAME(H2[i], H1[i]);
        if (steps <= 400) {
            /* H v = d/ds grad(x + s v) at s = 0 */
            for (size_t i = 0; i < SNIN; i++) {
                fd_ctx c = {steps, seed, x, v, i};
                CHK_DERIV(h2[i], chk_fd1(grad_along, &c, 0.0, 1.0 / 64),
                          1e-7);
            }
        }
        free(p1);
        free(p2);
        dr_tape_free(t1);
        dr_tape_free(t2);
    }
}

/* Replay of a program recorded through a recorder at order 2: at many
   points, bit for bit what a fresh recording gives there (every value,
   the gradient, a Hessian-vector product) */
static void test_order2_replay(void **state)
{
    (void)state;
    enum { STEPS = 6000, POINTS = 25 };
    const uint64_t seed = 7;
    double x[SNIN], v[SNIN];
    chk_rng g;
    chk_rng_seed(&g, 99);
    for (size_t i = 0; i < SNIN; i++) {
        x[i] = chk_rng_uniform(&g, -1.5, 1.5);
        v[i] = chk_rng_uniform(&g, -1.0, 1.0);
    }
    dr_tape *t = chk_tape_new(), *f = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_tape_set_order(f, 2), DR_OK);
    static dr_real p[SNIN + STEPS], q[SNIN + STEPS];
    dr_real y = smooth_program(t, true, true, STEPS, seed, x, p);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    for (int k = 0; k < POINTS; k++) {
        chk_context("point %d", k);
        for (size_t i = 0; i < SNIN; i++)
            x[i] = chk_rng_uniform(&g, -3.0, 3.0);
        /* (some points leave an input as it was) */
        size_t n = k % 3 == 2 ? SNIN - 1 : SNIN;
        CHK_STATUS(dr_replay(t, n, p, x), DR_OK);
        if (n < SNIN)
            CHK_STATUS(dr_value(t, p[SNIN - 1].idx, &x[SNIN - 1]), DR_OK);
        CHK_STATUS(dr_tape_clear(f), DR_OK);
        /* the fresh recording through the recorder, one time in two */
        dr_real yf = smooth_program(f, k % 2 == 0, true, STEPS, seed, x, q);
        CHK_STATUS(dr_tape_status(f), DR_OK);
        for (size_t i = 0; i < SNIN + STEPS; i++) {
            double vt, vf;
            CHK_STATUS(dr_value(t, p[i].idx, &vt), DR_OK);
            CHK_STATUS(dr_value(f, q[i].idx, &vf), DR_OK);
            CHK_SAME(vt, vf);
            CHK_SAME(vt, q[i].val);
        }
        double yt;
        CHK_STATUS(dr_value(t, y.idx, &yt), DR_OK);
        CHK_SAME(yt, yf.val);
        double gt[SNIN], gf[SNIN], ht[SNIN], hf[SNIN];
        CHK_STATUS(dr_gradient(t, y, SNIN, p, gt), DR_OK);
        CHK_STATUS(dr_gradient(f, yf, SNIN, q, gf), DR_OK);
        CHK_STATUS(dr_hvp(t, y, SNIN, p, v, ht), DR_OK);
        CHK_STATUS(dr_hvp(f, yf, SNIN, q, v, hf), DR_OK);
        for (size_t i = 0; i < SNIN; i++) {
            CHK_SAME(gt[i], gf[i]);
            CHK_SAME(ht[i], hf[i]);
        }
    }
    dr_tape_free(t);
    dr_tape_free(f);
}

/* Nodes of given partials at order 2 - dr_rec_record1/2 and statements
   (one or two arguments: as dr_record1/2; more, and dr_rec_sum: as
   dr_recordn) - are linear to second order, as the tape's: dr_hvp gives
   the calls' bits; and they do not replay (DR_ENOTSUP, the tape as it
   was).  w = 0 through a recorder, w = 1 through the tape's calls. */
static dr_real given_program(dr_tape *t, int w, const dr_real *x)
{
    dr_rec r;
    if (w == 0)
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    dr_real g1, g2, g3, s1, s2, s3, y;
    double v1 = 2.0 * x[0].val, v2 = x[0].val - 3.0 * x[1].val;
    double v3 = 5.0 + x[2].val;
    if (w == 0) {
        g1 = dr_rec_record1(&r, v1, x[0], 2.0);
        g2 = dr_rec_record2(&r, v2, x[0], 1.0, x[1], -3.0);
        g3 = dr_rec_record2(&r, v3, dr_const(5.0), 9.0, x[2], 1.0);
        s1 = dr_rec_stmt(&r, dr_ex_add(dr_ex_scale(3.0, dr_ex(g1)),
                                       dr_ex(g2)));
        s2 = dr_rec_stmt(&r, dr_ex_add(dr_ex_add(dr_ex(g1),
                                                 dr_ex_scale(2.0, dr_ex(g2))),
                                       dr_ex_neg(dr_ex(g3))));
        dr_idx ids[6];
        double ps[6];
        dr_sum sum;
        dr_sum_init(&sum, 6, ids, ps);
        dr_sum_mul(&sum, g1, g3);
        dr_sum_mul(&sum, x[1], dr_const(4.0));
        dr_sum_add(&sum, dr_ex(g2));
        s3 = dr_rec_sum(&r, &sum);
        y = dr_rec_add(&r, dr_rec_mul(&r, s1, s2), dr_rec_mul(&r, s3, g3));
        y = dr_rec_div(&r, y, dr_rec_add(&r, dr_const(2.0),
                                         dr_rec_mul(&r, s1, s1)));
        /* a sum of one active term: a node as dr_record1's */
        dr_sum_init(&sum, 6, ids, ps);
        dr_sum_mul(&sum, g1, dr_const(2.0));
        dr_real s4 = dr_rec_sum(&r, &sum);
        y = dr_rec_sub(&r, y, dr_rec_mul(&r, s4, s4));
        CHK_STATUS(dr_rec_end(&r), DR_OK);
    } else {
        g1 = (dr_real){v1, dr_record1(t, x[0].idx, 2.0)};
        g2 = (dr_real){v2, dr_record2(t, x[0].idx, 1.0, x[1].idx, -3.0)};
        g3 = (dr_real){v3, dr_record1(t, x[2].idx, 1.0)};
        s1 = (dr_real){3.0 * g1.val + g2.val,
                       dr_record2(t, g1.idx, 3.0, g2.idx, 1.0)};
        dr_idx a2[3] = {g1.idx, g2.idx, g3.idx};
        double d2[3] = {1.0, 2.0, -1.0};
        s2 = (dr_real){(g1.val + 2.0 * g2.val) + -g3.val,
                       dr_recordn(t, 3, a2, d2)};
        dr_idx a3[4] = {g1.idx, g3.idx, x[1].idx, g2.idx};
        double d3[4] = {g3.val, g1.val, 4.0, 1.0};
        s3 = (dr_real){g1.val * g3.val + x[1].val * 4.0 + g2.val,
                       dr_recordn(t, 4, a3, d3)};
        y = dr_add(t, dr_mul(t, s1, s2), dr_mul(t, s3, g3));
        y = dr_div(t, y, dr_add(t, dr_const(2.0), dr_mul(t, s1, s1)));
        dr_real s4 = {g1.val * 2.0, dr_record1(t, g1.idx, 2.0)};
        y = dr_sub(t, y, dr_mul(t, s4, s4));
    }
    return y;
}

static void test_order2_given(void **state)
{
    (void)state;
    const double xv[3] = {0.7, -1.3, 0.4}, v[3] = {0.3, -1.1, 0.8};
    const double nv[3] = {1.1, 0.2, -0.6};
    dr_tape *t[2];
    dr_real x[2][3], y[2];
    double h[2][3], g[2][3];
    for (int w = 0; w < 2; w++) {
        t[w] = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t[w], 2), DR_OK);
        CHK_STATUS(dr_inputs(t[w], 3, xv, x[w]), DR_OK);
        y[w] = given_program(t[w], w, x[w]);
        CHK_STATUS(dr_tape_status(t[w]), DR_OK);
        CHK_STATUS(dr_gradient(t[w], y[w], 3, x[w], g[w]), DR_OK);
        CHK_STATUS(dr_hvp(t[w], y[w], 3, x[w], v, h[w]), DR_OK);
    }
    assert_int_equal(dr_tape_len(t[0]), dr_tape_len(t[1]));
    assert_true(y[0].idx - x[0][0].idx == y[1].idx - x[1][0].idx);
    CHK_SAME(y[0].val, y[1].val);
    for (int i = 0; i < 3; i++) {
        CHK_SAME(g[0][i], g[1][i]);
        CHK_SAME(h[0][i], h[1][i]);
    }
    /* no replay, through either: nothing changes */
    for (int w = 0; w < 2; w++) {
        size_t len = dr_tape_len(t[w]);
        CHK_STATUS(dr_replay(t[w], 3, x[w], nv), DR_ENOTSUP);
        assert_int_equal(dr_tape_len(t[w]), len);
        CHK_STATUS(dr_tape_status(t[w]), DR_OK);
        double yv, xv0, gg[3], hh[3];
        CHK_STATUS(dr_value(t[w], y[w].idx, &yv), DR_OK);
        CHK_SAME(yv, y[w].val);
        CHK_STATUS(dr_value(t[w], x[w][0].idx, &xv0), DR_OK);
        CHK_SAME(xv0, xv[0]);
        CHK_STATUS(dr_gradient(t[w], y[w], 3, x[w], gg), DR_OK);
        CHK_STATUS(dr_hvp(t[w], y[w], 3, x[w], v, hh), DR_OK);
        for (int i = 0; i < 3; i++) {
            CHK_SAME(gg[i], g[w][i]);
            CHK_SAME(hh[i], h[w][i]);
        }
        dr_tape_free(t[w]);
    }

    /* the order set to 1 while a recorder is open: from then on its nodes
       are recorded inline, without a rule (DR_ENOTSUP), as the calls' */
    dr_tape *u = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
    dr_real a = dr_input(u, 1.5);
    dr_rec r;
    CHK_STATUS(dr_rec_begin(u, &r), DR_OK);
    dr_real b = dr_rec_mul(&r, a, a);
    CHK_STATUS(dr_tape_set_order(u, 2), DR_EBUSY);
    CHK_STATUS(dr_tape_set_order(u, 1), DR_OK);
    dr_real c = dr_rec_mul(&r, b, a);
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    double gb, gc, hb, hc, one = 1.0;
    CHK_STATUS(dr_gradient(u, c, 1, &a, &gc), DR_OK);
    CHK_SAME(gc, 3.0 * 1.5 * 1.5);
    CHK_STATUS(dr_gradient(u, b, 1, &a, &gb), DR_OK);
    CHK_SAME(gb, 3.0);
    CHK_STATUS(dr_hvp(u, b, 1, &a, &one, &hb), DR_OK);
    CHK_SAME(hb, 2.0);
    CHK_STATUS(dr_hvp(u, c, 1, &a, &one, &hc), DR_ENOTSUP);
    dr_tape_free(u);
}

/* The fold a dot product records: its gradient, and after a clear the
   same again (the recorder starts on the kept chunk). */
static void test_dot_product(void **state)
{
    (void)state;
    enum { N = 3000 };
    static double x[N], y[N], g[2 * N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (double)i + 1.0;
        y[i] = 2.0 * (double)i - 5.0;
    }
    dr_tape *t = chk_tape_new();
    for (int rep = 0; rep < 3; rep++) {
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        dr_idx first;
        CHK_STATUS(dr_input_range(t, 2 * N, &first), DR_OK);
        dr_rec r;
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
        dr_real acc = dr_const(0.0);
        for (size_t i = 0; i < N; i++) {
            dr_real xi = {x[i], first + (dr_idx)i};
            dr_real yi = {y[i], first + (dr_idx)(N + i)};
            acc = dr_rec_add(&r, acc, dr_rec_mul(&r, xi, yi));
        }
        CHK_STATUS(dr_rec_end(&r), DR_OK);
        /* N products and N sums (the first sum has a constant argument) */
        assert_int_equal(dr_tape_len(t), 2 * N + 2 * N);
        CHK_STATUS(dr_gradient_range(t, acc, first, 2 * N, g), DR_OK);
        for (size_t i = 0; i < N; i++) {
            CHK_SAME(g[i], y[i]);
            CHK_SAME(g[N + i], x[i]);
        }
    }
    dr_tape_free(t);
}

/* While a recorder is open, the tape's own recording calls still work
   (they take the cursor back, and the recorder borrows it again), but the
   calls that need the whole tape refuse: sweeping, seeding, clearing,
   forking, a second recorder. */
static void test_open_recorder(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 3.0);
    dr_rec r, r2;
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    CHK_STATUS(dr_rec_begin(t, &r2), DR_EBUSY); /* one at a time */
    dr_real y = dr_rec_mul(&r, x, x);           /* 9, dy/dx = 6 */
    dr_real z = dr_sin(t, y);                   /* a call on the recorder's id */
    assert_true(z.idx == y.idx + 1);
    dr_real w = dr_rec_mul(&r, z, x);           /* the recorder on the call's */
    assert_true(w.idx == z.idx + 1);
    dr_real u = dr_input(t, 2.0);
    dr_idx first;
    CHK_STATUS(dr_input_range(t, 3, &first), DR_OK);
    assert_true(first == u.idx + 1);
    dr_real v = dr_rec_add(&r, w, (dr_real){5.0, first + 2});
    v = dr_rec_mul(&r, v, u);
    /* an n-ary node over the recorder's ids, through the tape: q = v */
    dr_idx qargs[3] = {v.idx, y.idx, x.idx};
    double qparts[3] = {1.0, 0.0, 0.0};
    dr_real q = {v.val, dr_recordn(t, 3, qargs, qparts)};
    assert_true(q.idx == v.idx + 1);
    v = dr_rec_mul(&r, q, dr_const(1.0));
    CHK_STATUS(dr_reverse(t), DR_EBUSY);
    CHK_STATUS(dr_seed(t, v.idx, 1.0), DR_EBUSY);
    CHK_STATUS(dr_tape_clear(t), DR_EBUSY);
    double g;
    CHK_STATUS(dr_gradient(t, v, 1, &x, &g), DR_EBUSY);
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_EBUSY);
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    CHK_STATUS(dr_rec_end(&r), DR_EINVAL); /* not open any more */
    /* x, y, z, w, u, three inputs, the sum, two products and q */
    assert_int_equal(dr_tape_len(t), 12);
    /* v = (sin(x^2) x + in2) u: dv/dx = (cos(x^2) 2x x + sin(x^2)) u */
    CHK_STATUS(dr_gradient(t, v, 1, &x, &g), DR_OK);
    CHK_CLOSE(g, (cos(9.0) * 18.0 + sin(9.0)) * 2.0, 1e-14, 0);
    double gr[3];
    CHK_STATUS(dr_gradient_range(t, v, first, 3, gr), DR_OK);
    CHK_SAME(gr[0], 0.0);
    CHK_SAME(gr[2], 2.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* Bad arguments: NULLs, a recorder that failed to open, ids not on the
   tape (from before a clear, never recorded, beyond the end). */
static void test_errors(void **state)
{
    (void)state;
    dr_rec r;
    CHK_STATUS(dr_rec_begin(NULL, &r), DR_EINVAL);
    dr_real c = {2.0, 7};
    dr_real y = dr_rec_mul(&r, c, c); /* a closed recorder: constants */
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 4.0);
    CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
    CHK_STATUS(dr_rec_end(NULL), DR_EINVAL);
    assert_true(dr__rec_slow(NULL, 0, 1.0, DR_NONE, 0.0, DR__REC_GIVEN,
                             dr_const(0.0), dr_const(0.0)) == DR_NONE);

    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_rec_begin(t, NULL), DR_EINVAL);
    dr_real old = dr_input(t, 1.0);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real x = dr_input(t, 2.0);
    dr_real bad[] = {
        old,                              /* from before the clear */
        {1.0, x.idx + 1},                 /* not recorded yet      */
        {1.0, x.idx + 1000000},
        {1.0, INT64_MAX},
        {1.0, INT64_MIN},
        {1.0, -7},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        chk_context("bad id %zu", i);
        for (int pos = 0; pos < 3; pos++) {
            CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
            size_t len = dr_tape_len(t);
            dr_real a = pos == 1 ? x : bad[i], b = pos == 0 ? x : bad[i];
            y = pos == 2 ? dr_rec_neg(&r, bad[i]) : dr_rec_add(&r, a, b);
            assert_true(y.idx == DR_NONE);
            CHK_SAME(y.val, a.val + (pos == 2 ? -2.0 * a.val : b.val));
            CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
            assert_int_equal(dr_tape_len(t), len);
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            x = dr_input(t, 2.0);
        }
    }
    dr_tape_free(t);
}

/* Out of memory at every allocation of a recorder's program: constants
   and DR_ENOMEM, nothing leaked, and the nodes recorded before the failure
   still sweep. */
static void test_oom(void **state)
{
    (void)state;
    chk_alloc al;
    for (size_t k = 1;; k++) {
        dr_tape *t = chk_oom_tape(&al, k);
        if (!t)
            continue;
        dr_real x = dr_input(t, 1.5);
        dr_rec r;
        dr_status sb = dr_rec_begin(t, &r);
        CHK_STATUS(sb, DR_OK);
        dr_real acc = x;
        for (int i = 0; i < 2000; i++)
            acc = dr_rec_add(&r, dr_rec_mul(&r, acc, dr_const(0.5)), x);
        dr_status se = dr_rec_end(&r);
        double g = -1.0;
        dr_status sg = dr_gradient(t, acc, 1, &x, &g);
        if (al.fails == 0) {
            CHK_STATUS(se, DR_OK);
            CHK_STATUS(sg, DR_OK);
            CHK_CLOSE(g, 2.0, 1e-12, 0); /* 1 + 0.5 + 0.25 + ... */
        } else {
            /* failed while recording, or later for the adjoints */
            assert_true(se == DR_ENOMEM || sg == DR_ENOMEM);
        }
        bool failed = al.fails > 0;
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
        if (!failed)
            break;
    }
}

/* Recorders on the child handles of a fork (one per child, each on its
   own thread's handle): the same gradient as the sequential recording. */
static void child_job(dr_tape *kid, size_t i, void *ctx)
{
    dr_real *xs = ctx;
    dr_rec r;
    if (dr_rec_begin(kid, &r) != DR_OK)
        return;
    dr_real acc = dr_const(0.0);
    for (size_t k = 0; k < 500; k++)
        acc = dr_rec_add(&r, acc, dr_rec_mul(&r, xs[i], xs[(i + k) % 4]));
    dr_rec_end(&r);
    xs[4 + i] = acc;
}

static void test_in_child_jobs(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_set_threads(t, threads), DR_OK);
        dr_real xs[8];
        for (size_t i = 0; i < 4; i++)
            xs[i] = dr_input(t, (double)i + 1.0);
        CHK_STATUS(dr_fork_run(t, 4, child_job, xs), DR_OK);
        dr_real y = dr_const(0.0);
        for (size_t i = 4; i < 8; i++)
            y = dr_add(t, y, xs[i]);
        double g[4];
        CHK_STATUS(dr_gradient(t, y, 4, xs, g), DR_OK);
        /* y = 125 * sum_i x_i * (x0 + x1 + x2 + x3) = 125 * S^2 */
        for (size_t i = 0; i < 4; i++)
            CHK_CLOSE(g[i], 250.0 * 10.0, 1e-12, 0);
        dr_tape_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_calls),
        cmocka_unit_test(test_same_as_calls_order2),
        cmocka_unit_test(test_order2_hvp),
        cmocka_unit_test(test_order2_replay),
        cmocka_unit_test(test_order2_given),
        cmocka_unit_test(test_dot_product),
        cmocka_unit_test(test_open_recorder),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
        cmocka_unit_test(test_in_child_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
