/*
 * test_replay_fork.c - replay of a tape that forked (dualrev.h, "replay"
 * and "fork-join parallelism"): a program with several children, one of
 * them forking again, one taking a branch on a guard, one reading an
 * array, children with inputs of their own, and a second fork recorded by
 * hand, replayed at many random points against a fresh recording at each,
 * bit for bit (every value, the gradient, a forward product, a
 * Hessian-vector product), at one and two threads; a guard in a child that
 * flips answers DR_ERETAPE and leaves the tape as it was; the refusals
 * (forked, a child handle, bad inputs, a child at order 1) change nothing.
 */
#include "check.h"

#include <math.h>
#include <string.h>

#define NX 4     /* the root's inputs                         */
#define NKID 3   /* children of the first fork                */
#define KOPS 90  /* operations of a child: several chunks     */
#define NOPS 12  /* ... of a nested child                     */
#define NA 5     /* elements of the array read by child 0     */
#define NIN (NX + NKID + 1) /* every scalar input             */

/* what one recording made, by place in the program (ids differ between
   recordings: the children take their ids as they run) */
typedef struct prog {
    const double *xv;        /* the point: NIN values            */
    dr_real x[NX];
    dr_real pre[3];          /* before the fork                  */
    dr_arr arr;
    dr_real kin[NKID];       /* each child's own input           */
    dr_real kv[NKID][KOPS];
    dr_real nested[2][NOPS]; /* child 1's children               */
    dr_real late_in;         /* an input of the second fork      */
    dr_real tail[4];
    int branch;              /* child 2's guard: which side      */
    bool lower;              /* child 0 records at order 1       */
    bool arrays;             /* child 0 reads the array          */
} prog;

/* a step of a child's chain: the choices depend on the place alone */
static dr_real step(dr_tape *h, unsigned k, dr_real a, dr_real b)
{
    switch (k % 6) {
    case 0: return dr_add(h, dr_mul(h, a, b), dr_const(0.25));
    case 1: return dr_sin(h, dr_add(h, a, b));
    case 2: return dr_div(h, a, dr_add(h, dr_mul(h, b, b), dr_const(1.0)));
    case 3: return dr_tanh(h, dr_sub(h, a, dr_mul(h, dr_const(0.5), b)));
    case 4: return dr_mul(h, dr_cos(h, a), b);
    default: return dr_atan(h, dr_add(h, a, dr_exp(h, dr_mul(h, b, dr_const(-0.3)))));
    }
}

static void nested_job(dr_tape *h, size_t j, void *ctx)
{
    prog *P = ctx;
    dr_real a = P->kv[1][10 + j], b = P->pre[j];
    for (unsigned k = 0; k < NOPS; k++) {
        a = step(h, k + 3 * (unsigned)j, a, b);
        P->nested[j][k] = a;
        b = k % 2 ? P->pre[2] : a;
    }
}

static void kid_job(dr_tape *h, size_t i, void *ctx)
{
    prog *P = ctx;
    if (i == 0 && P->lower)
        assert_int_equal(dr_tape_set_order(h, 1), DR_OK);
    P->kin[i] = dr_input(h, P->xv[NX + i]);
    dr_real a = P->pre[i], b = P->kin[i];
    for (unsigned k = 0; k < KOPS; k++) {
        if (i == 0 && k == 30 && P->arrays) {
            /* an array recorded before the fork, scaled by a value */
            dr_arr s = dr_arr_scale(h, a, P->arr);
            a = dr_arr_dot(h, s, P->arr);
        } else if (i == 1 && k == 40) {
            /* a nested fork, on the pool when it runs */
            assert_int_equal(dr_fork_run(h, 2, nested_job, P), DR_OK);
            a = dr_add(h, P->nested[0][NOPS - 1], P->nested[1][NOPS - 1]);
        } else if (i == 2 && k == 20) {
            /* a branch on a value: its guard belongs to this child */
            P->branch = dr_gt(h, a, dr_const(0.2));
            a = P->branch ? dr_sin(h, a) : dr_exp(h, dr_mul(h, a, a));
        } else {
            a = step(h, k + (unsigned)i, a, b);
        }
        P->kv[i][k] = a;
        b = k % 3 ? P->kv[i][k / 2] : P->x[k % NX];
    }
}

/* child i of the second fork, recorded by hand on the calling thread */
static void late_job(dr_tape *h, size_t i, prog *P, dr_real y)
{
    if (i == 0) {
        P->tail[0] = dr_mul(h, dr_sin(h, y), P->x[0]);
    } else {
        P->late_in = dr_input(h, P->xv[NIN - 1]);
        P->tail[1] = dr_hypot(h, y, P->late_in);
    }
}

/* the program at the point xv, on a cleared tape of order 2 */
static dr_real record(dr_tape *t, prog *P, const double *xv)
{
    P->xv = xv;
    CHK_STATUS(dr_inputs(t, NX, xv, P->x), DR_OK);
    double av[NA] = {0.5, -1.0, 0.25, 2.0, -0.75};
    if (P->arrays)
        P->arr = dr_arr_input(t, 1, NA, 1, av);
    P->pre[0] = dr_sin(t, dr_mul(t, P->x[0], P->x[1]));
    P->pre[1] = dr_exp(t, dr_mul(t, P->x[2], dr_const(0.5)));
    P->pre[2] = dr_div(t, P->x[3], dr_add(t, P->pre[1], dr_const(1.0)));
    CHK_STATUS(dr_fork_run(t, NKID, kid_job, P), DR_OK);
    dr_real y = P->pre[2];
    for (int i = 0; i < NKID; i++)
        y = dr_add(t, y, P->kv[i][KOPS - 1]);
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    late_job(kids[1], 1, P, y);
    late_job(kids[0], 0, P, y);
    CHK_STATUS(dr_join(t), DR_OK);
    P->tail[2] = dr_add(t, P->tail[0], P->tail[1]);
    P->tail[3] = dr_mul(t, P->tail[2], y);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    return P->tail[3];
}

static size_t inputs_of(const prog *P, dr_real *in)
{
    size_t n = 0;
    for (int i = 0; i < NX; i++)
        in[n++] = P->x[i];
    for (int i = 0; i < NKID; i++)
        in[n++] = P->kin[i];
    in[n++] = P->late_in;
    return n;
}

/* every value recorded, by place, into v (dr_value) */
static size_t values_of(dr_tape *t, const prog *P, double *v)
{
    size_t n = 0;
    const dr_real *all[] = {P->pre, P->kin, P->tail};
    const size_t lens[] = {3, NKID, 4};
    for (int g = 0; g < 3; g++)
        for (size_t i = 0; i < lens[g]; i++)
            CHK_STATUS(dr_value(t, all[g][i].idx, &v[n++]), DR_OK);
    for (int i = 0; i < NKID; i++)
        for (int k = 0; k < KOPS; k++)
            CHK_STATUS(dr_value(t, P->kv[i][k].idx, &v[n++]), DR_OK);
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < NOPS; k++)
            CHK_STATUS(dr_value(t, P->nested[j][k].idx, &v[n++]), DR_OK);
    return n;
}

#define NVAL (3 + NKID + 4 + NKID * KOPS + 2 * NOPS)

/* what the drivers say at the tape's point */
typedef struct seen {
    double v[NVAL], g[NIN], jv, hv[NIN];
    dr_status hst;
} seen;

static void look(dr_tape *t, const prog *P, dr_real y, seen *s)
{
    dr_real in[NIN];
    size_t n = inputs_of(P, in);
    assert_int_equal(values_of(t, P, s->v), NVAL);
    CHK_STATUS(dr_gradient(t, y, n, in, s->g), DR_OK);
    double dir[NIN];
    for (size_t i = 0; i < n; i++)
        dir[i] = 0.5 - 0.125 * (double)i;
    CHK_STATUS(dr_jvp(t, 1, &y, n, in, dir, &s->jv), DR_OK);
    s->hst = dr_hvp(t, y, n, in, dir, s->hv);
}

/* the same bits, but for a Hessian-vector product across forks recorded
   at more than one thread (exact false): the tangent pass takes the nodes
   by id, and where children ran at once their ids interleave as they ran,
   so the sums into shared adjoints come in another order */
static void same_as(const seen *a, const seen *b, bool exact)
{
    for (size_t i = 0; i < NVAL; i++)
        CHK_SAME(a->v[i], b->v[i]);
    for (size_t i = 0; i < NIN; i++)
        CHK_SAME(a->g[i], b->g[i]);
    CHK_SAME(a->jv, b->jv);
    CHK_STATUS(a->hst, b->hst);
    for (size_t i = 0; a->hst == DR_OK && i < NIN; i++)
        if (exact)
            CHK_SAME(a->hv[i], b->hv[i]);
        else
            CHK_CLOSE(a->hv[i], b->hv[i], 1e-12, 1e-14);
}

static void same(const seen *a, const seen *b)
{
    same_as(a, b, true);
}

/* H v at x0 against central differences of gradients (replays) */
static void hvp_by_differences(dr_tape *t, const prog *P, dr_real y,
                               const double *x0, const seen *s)
{
    dr_real in[NIN];
    size_t n = inputs_of(P, in);
    double h = 1e-6, gp[NIN], gm[NIN], xv[NIN];
    for (int side = 0; side < 2; side++) {
        for (size_t i = 0; i < n; i++)
            xv[i] = x0[i] + (side ? -h : h) * (0.5 - 0.125 * (double)i);
        CHK_STATUS(dr_replay(t, n, in, xv), DR_OK);
        CHK_STATUS(dr_gradient(t, y, n, in, side ? gm : gp), DR_OK);
    }
    for (size_t i = 0; i < n; i++)
        CHK_CLOSE(s->hv[i], (gp[i] - gm[i]) / (2 * h), 1e-5, 1e-6);
    CHK_STATUS(dr_replay(t, n, in, x0), DR_OK);
}

static dr_tape *order2_tape(unsigned threads)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_set_threads(t, threads), DR_OK);
    return t;
}

static void random_point(chk_rng *r, double *xv)
{
    for (int i = 0; i < NIN; i++)
        xv[i] = chk_rng_uniform(r, -1.5, 1.5);
}

/* replay at many points = a fresh recording there, bit for bit; where
   the child's guard flips, DR_ERETAPE and the tape as it was */
static void replay_points(unsigned threads, bool arrays)
{
    chk_rng r;
    chk_rng_seed(&r, 0x5eed + threads);
    double x0[NIN];
    random_point(&r, x0);
    dr_tape *t = order2_tape(threads), *f = order2_tape(threads);
    static prog P, Q;
    memset(&P, 0, sizeof P);
    P.arrays = arrays;
    dr_real y = record(t, &P, x0);
    static seen a, b, before;
    look(t, &P, y, &before);
    /* second order through the forks, array operations included */
    CHK_STATUS(before.hst, DR_OK);
    hvp_by_differences(t, &P, y, x0, &before);
    dr_real in[NIN];
    size_t n = inputs_of(&P, in);
    int replayed = 0, flipped = 0;
    for (int it = 0; it < 60; it++) {
        double xv[NIN];
        random_point(&r, xv);
        dr_status st = dr_replay(t, n, in, xv);
        CHK_STATUS(dr_tape_clear(f), DR_OK);
        memset(&Q, 0, sizeof Q);
        Q.arrays = arrays;
        dr_real yf = record(f, &Q, xv);
        if (Q.branch != P.branch) {
            /* the path differs there: refused, and nothing changed */
            CHK_STATUS(st, DR_ERETAPE);
            look(t, &P, y, &a);
            same(&a, &before);
            flipped++;
            continue;
        }
        CHK_STATUS(st, DR_OK);
        look(t, &P, y, &a);
        look(f, &Q, yf, &b);
        same_as(&a, &b, threads == 1);
        before = a;
        replayed++;
    }
    /* both kinds of point were met */
    assert_true(replayed > 10 && flipped > 2);
    dr_tape_free(f);
    dr_tape_free(t);
}

static void test_replay_one_thread(void **state)
{
    (void)state;
    replay_points(1, false);
    replay_points(1, true);
}

static void test_replay_two_threads(void **state)
{
    (void)state;
    replay_points(2, false);
    replay_points(2, true);
}

/* a tape recorded at one thread count replays at another: the values are
   the same (the scalar rules do not depend on threads) */
static void test_threads_changed(void **state)
{
    (void)state;
    double x0[NIN] = {0.3, -0.2, 0.9, 0.4, 0.1, 0.7, -0.6, 0.2};
    double x1[NIN] = {0.35, -0.25, 0.8, 0.45, 0.15, 0.65, -0.5, 0.3};
    dr_tape *t = order2_tape(1), *f = order2_tape(2);
    static prog P, Q;
    memset(&P, 0, sizeof P);
    memset(&Q, 0, sizeof Q);
    P.arrays = Q.arrays = true;
    dr_real y = record(t, &P, x0);
    dr_real yf = record(f, &Q, x1);
    assert_int_equal(P.branch, Q.branch);
    CHK_STATUS(dr_set_threads(t, 2), DR_OK);
    dr_real in[NIN];
    size_t n = inputs_of(&P, in);
    CHK_STATUS(dr_replay(t, n, in, x1), DR_OK);
    static seen a, b;
    look(t, &P, y, &a);
    look(f, &Q, yf, &b);
    same_as(&a, &b, false);
    dr_tape_free(f);
    dr_tape_free(t);
}

/* a point where child 2's guard flips: DR_ERETAPE and every value and
   derivative as before, and the tape replays on afterwards */
static void test_guard_in_child(void **state)
{
    (void)state;
    for (unsigned th = 1; th <= 2; th++) {
        dr_tape *t = order2_tape(th);
        static prog P;
        memset(&P, 0, sizeof P);
        double x0[NIN] = {0.3, -0.2, 0.9, 0.4, 0.1, 0.7, -0.6, 0.2};
        dr_real y = record(t, &P, x0);
        static seen before, after;
        look(t, &P, y, &before);
        dr_real in[NIN];
        size_t n = inputs_of(&P, in);
        /* find a point on the other side */
        chk_rng r;
        chk_rng_seed(&r, 99);
        dr_tape *f = order2_tape(th);
        static prog Q;
        double xv[NIN];
        for (;;) {
            random_point(&r, xv);
            CHK_STATUS(dr_tape_clear(f), DR_OK);
            memset(&Q, 0, sizeof Q);
            record(f, &Q, xv);
            if (Q.branch != P.branch)
                break;
        }
        dr_tape_free(f);
        CHK_STATUS(dr_replay(t, n, in, xv), DR_ERETAPE);
        look(t, &P, y, &after);
        same(&after, &before);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        /* and the recorded point itself replays to the same bits */
        CHK_STATUS(dr_replay(t, n, in, x0), DR_OK);
        look(t, &P, y, &after);
        same(&after, &before);
        dr_tape_free(t);
    }
}

/* the refusals: nothing changes, and the tape replays afterwards */
static void test_refused(void **state)
{
    (void)state;
    dr_tape *t = order2_tape(2);
    static prog P;
    memset(&P, 0, sizeof P);
    double x0[NIN] = {0.3, -0.2, 0.9, 0.4, 0.1, 0.7, -0.6, 0.2};
    double x1[NIN] = {0.35, -0.25, 0.8, 0.45, 0.15, 0.65, -0.5, 0.3};
    dr_real y = record(t, &P, x0);
    static seen before, after;
    look(t, &P, y, &before);
    dr_real in[NIN];
    size_t n = inputs_of(&P, in);
    /* forked (not joined): busy, and a child handle is no root */
    dr_tape *kids[2];
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    CHK_STATUS(dr_replay(t, n, in, x1), DR_EBUSY);
    CHK_STATUS(dr_replay(kids[0], n, in, x1), DR_EINVAL);
    CHK_STATUS(dr_replay_range(kids[1], in[0].idx, 1, x1), DR_EINVAL);
    CHK_STATUS(dr_join(t), DR_OK); /* (two empty children) */
    look(t, &P, y, &after);
    same(&after, &before);
    /* not inputs, or one twice: a child's computed value, the root's */
    dr_real bad[2] = {in[0], P.kv[1][5]};
    CHK_STATUS(dr_replay(t, 2, bad, x1), DR_EINVAL);
    bad[1] = P.tail[2];
    CHK_STATUS(dr_replay(t, 2, bad, x1), DR_EINVAL);
    bad[1] = in[0];
    CHK_STATUS(dr_replay(t, 2, bad, x1), DR_EINVAL);
    bad[0] = bad[1] = in[NX + 1]; /* a child's input twice */
    CHK_STATUS(dr_replay(t, 2, bad, x1), DR_EINVAL);
    look(t, &P, y, &after);
    same(&after, &before);
    /* the empty fork changed nothing that replays */
    CHK_STATUS(dr_replay(t, n, in, x1), DR_OK);
    dr_tape *f = order2_tape(2);
    static prog Q;
    memset(&Q, 0, sizeof Q);
    dr_real yf = record(f, &Q, x1);
    static seen fresh;
    look(t, &P, y, &after);
    look(f, &Q, yf, &fresh);
    same_as(&after, &fresh, false);
    dr_tape_free(f);
    dr_tape_free(t);
}

/* a child that recorded at order 1: its nodes have no entry, so the tape
   does not replay (DR_ENOTSUP, nothing changed), nor take a Hessian */
static void test_child_order1(void **state)
{
    (void)state;
    for (unsigned th = 1; th <= 2; th++) {
        dr_tape *t = order2_tape(th);
        static prog P;
        memset(&P, 0, sizeof P);
        P.lower = true;
        double x0[NIN] = {0.3, -0.2, 0.9, 0.4, 0.1, 0.7, -0.6, 0.2};
        double x1[NIN] = {0.35, -0.25, 0.8, 0.45, 0.15, 0.65, -0.5, 0.3};
        dr_real y = record(t, &P, x0);
        dr_real in[NIN];
        size_t n = inputs_of(&P, in);
        double g0[NIN], g1[NIN], v;
        CHK_STATUS(dr_gradient(t, y, n, in, g0), DR_OK);
        /* (the child's input is no input of the log: the root's only) */
        CHK_STATUS(dr_replay(t, n, in, x1), DR_EINVAL);
        CHK_STATUS(dr_replay(t, NX, in, x1), DR_ENOTSUP);
        CHK_STATUS(dr_value(t, P.kv[0][3].idx, &v), DR_ENOTSUP);
        CHK_STATUS(dr_value(t, P.kv[1][3].idx, &v), DR_OK);
        CHK_SAME(v, P.kv[1][3].val);
        double dir[NIN] = {1}, hv[NIN];
        CHK_STATUS(dr_hvp(t, y, n, in, dir, hv), DR_ENOTSUP);
        CHK_STATUS(dr_gradient(t, y, n, in, g1), DR_OK);
        for (size_t i = 0; i < n; i++)
            CHK_SAME(g1[i], g0[i]);
        dr_tape_free(t);
    }
}

/* the orders of child handles: a child starts at its parent's order */
static void test_child_orders(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_tape *kids[2], *grand[1];
    CHK_STATUS(dr_fork(t, 1, kids), DR_OK);
    assert_int_equal(dr_tape_order(kids[0]), 1);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_fork(t, 2, kids), DR_OK);
    assert_int_equal(dr_tape_order(kids[0]), 2);
    CHK_STATUS(dr_tape_set_order(kids[1], 1), DR_OK);
    CHK_STATUS(dr_fork(kids[1], 1, grand), DR_OK);
    assert_int_equal(dr_tape_order(grand[0]), 1);
    CHK_STATUS(dr_join(kids[1]), DR_OK);
    CHK_STATUS(dr_fork(kids[0], 1, grand), DR_OK);
    assert_int_equal(dr_tape_order(grand[0]), 2);
    CHK_STATUS(dr_tape_set_order(kids[0], 2), DR_EBUSY); /* forked */
    CHK_STATUS(dr_join(kids[0]), DR_OK);
    CHK_STATUS(dr_join(t), DR_OK);
    assert_int_equal(dr_tape_order(t), 2);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_one_thread),
        cmocka_unit_test(test_replay_two_threads),
        cmocka_unit_test(test_threads_changed),
        cmocka_unit_test(test_guard_in_child),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_child_order1),
        cmocka_unit_test(test_child_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
