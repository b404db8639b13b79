/*
 * test_stmt.c - statements (dualrev.h, "statements"): whole expressions
 * recorded as one node through a recorder (dr_expr, dr_rec_stmt) and long
 * sums (dr_sum, dr_rec_sum).  Random programs of statements are checked
 * against central finite differences and against the same program
 * recorded operation by operation (gradients equal to rounding), across
 * chunk boundaries; repeated and constant arguments; every error path (too
 * many terms, ids not on the tape, a tape already in error, a recorder that
 * failed to open).
 */
#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ random programs
 * A program is drawn from a seed: each statement is a random expression
 * tree of at most DR_EXPR_MAX leaves over earlier values (inputs and the
 * results of earlier statements) and constants.  It runs three ways from
 * the same seed: as statements, as recorder operations (one node per
 * operation), and on plain doubles (for finite differences).
 */
enum { NIN = 4, NSTMT = 12, POOL = NIN + NSTMT };

typedef enum { AS_STMT, AS_OPS, AS_PLAIN } mode;

typedef struct run {
    mode m;
    dr_rec *r;
    chk_rng rng;
    dr_real pool[POOL]; /* AS_STMT, AS_OPS */
    double v[POOL];     /* AS_PLAIN */
    size_t n;
} run;

/* one node value of a tree in the three forms */
typedef struct tv {
    dr_expr e;
    dr_real r;
    double v;
} tv;

static tv leaf(run *u)
{
    tv t;
    if (chk_rng_below(&u->rng, 6) == 0) {
        double c = chk_rng_uniform(&u->rng, 0.5, 1.5);
        t.e = dr_ex_const(c);
        t.r = dr_const(c);
        t.v = c;
        return t;
    }
    size_t i = chk_rng_below(&u->rng, u->n);
    if (u->m == AS_PLAIN) { /* (its expression only has to be defined) */
        t.v = u->v[i];
        t.e = dr_ex_const(t.v);
        t.r = dr_const(t.v);
        return t;
    }
    t.r = u->pool[i];
    t.e = dr_ex(t.r);
    t.v = t.r.val;
    return t;
}

/* a tree of exactly `leaves` leaves (the terms of a dr_expr) */
static tv tree(run *u, int leaves)
{
    if (leaves == 1) {
        tv t = leaf(u);
        switch (chk_rng_below(&u->rng, 4)) {
        case 0: { /* a function of one argument: sin */
            double v = sin(t.v), d = cos(t.v);
            t.e = dr_ex_fn(t.e, v, d);
            if (u->m == AS_OPS)
                t.r = dr_rec_record1(u->r, v, t.r, d);
            t.v = v;
            break;
        }
        case 1:
            t.e = dr_ex_neg(t.e);
            if (u->m == AS_OPS)
                t.r = dr_rec_neg(u->r, t.r);
            t.v = -t.v;
            break;
        case 2: {
            double c = chk_rng_uniform(&u->rng, -2.0, 2.0);
            t.e = dr_ex_scale(c, t.e);
            if (u->m == AS_OPS)
                t.r = dr_rec_mul(u->r, dr_const(c), t.r);
            t.v = c * t.v;
            break;
        }
        default:
            break;
        }
        return t;
    }
    int left = 1 + (int)chk_rng_below(&u->rng, (uint64_t)leaves - 1);
    tv a = tree(u, left), b = tree(u, leaves - left), t = a;
    switch (chk_rng_below(&u->rng, 4)) {
    case 0:
        t.e = dr_ex_add(a.e, b.e);
        if (u->m == AS_OPS)
            t.r = dr_rec_add(u->r, a.r, b.r);
        t.v = a.v + b.v;
        break;
    case 1:
        t.e = dr_ex_sub(a.e, b.e);
        if (u->m == AS_OPS)
            t.r = dr_rec_sub(u->r, a.r, b.r);
        t.v = a.v - b.v;
        break;
    case 2:
        t.e = dr_ex_mul(a.e, b.e);
        if (u->m == AS_OPS)
            t.r = dr_rec_mul(u->r, a.r, b.r);
        t.v = a.v * b.v;
        break;
    default: { /* a divisor kept away from 0: 1.5 + sin b */
        double v = 1.5 + sin(b.v), d = cos(b.v);
        b.e = dr_ex_fn(b.e, v, d);
        if (u->m == AS_OPS)
            b.r = dr_rec_record1(u->r, v, b.r, d);
        b.v = v;
        t.e = dr_ex_div(a.e, b.e);
        if (u->m == AS_OPS)
            t.r = dr_rec_div(u->r, a.r, b.r);
        t.v = a.v / b.v;
        break;
    }
    }
    return t;
}

/* the program of seed on inputs x; AS_STMT and AS_OPS record on tape (whose
   inputs are in[]) and return the last statement */
static dr_real program(mode m, uint64_t seed, dr_tape *tape, const dr_real *in,
                       const double *x, double *plain)
{
    run u;
    memset(&u, 0, sizeof u);
    u.m = m;
    chk_rng_seed(&u.rng, seed);
    dr_rec rec;
    if (m != AS_PLAIN) {
        CHK_STATUS(dr_rec_begin(tape, &rec), DR_OK);
        u.r = &rec;
        memcpy(u.pool, in, NIN * sizeof *in);
    } else {
        memcpy(u.v, x, NIN * sizeof *x);
    }
    u.n = NIN;
    dr_real y = dr_const(0.0);
    for (int s = 0; s < NSTMT; s++) {
        int leaves = 1 + (int)chk_rng_below(&u.rng, DR_EXPR_MAX);
        tv t = tree(&u, leaves);
        if (m == AS_STMT)
            y = dr_rec_stmt(&rec, t.e);
        else if (m == AS_OPS)
            y = t.r;
        if (m == AS_PLAIN)
            u.v[u.n] = t.v;
        else
            u.pool[u.n] = y;
        u.n++;
        if (plain)
            *plain = t.v;
    }
    if (m != AS_PLAIN)
        CHK_STATUS(dr_rec_end(&rec), DR_OK);
    return y;
}

static double plain_fn(const double *x, size_t n, void *ctx)
{
    (void)n;
    double y;
    program(AS_PLAIN, *(uint64_t *)ctx, NULL, NULL, x, &y);
    return y;
}

/* statements against operations and finite differences; the tapes are
   reused (cleared) so that programs cross chunk boundaries at random
   places */
static void test_random_programs(void **state)
{
    (void)state;
    dr_tape *ts = chk_tape_new(), *to = chk_tape_new();
    chk_rng rng;
    chk_rng_seed(&rng, 5);
    int live = 0, checked = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        chk_context("seed %llu", (unsigned long long)seed);
        if (seed % 50 == 1) {
            CHK_STATUS(dr_tape_clear(ts), DR_OK);
            CHK_STATUS(dr_tape_clear(to), DR_OK);
        }
        double x[NIN];
        dr_real xs[NIN], xo[NIN];
        for (int i = 0; i < NIN; i++)
            x[i] = chk_rng_uniform(&rng, 0.5, 1.5);
        CHK_STATUS(dr_inputs(ts, NIN, x, xs), DR_OK);
        CHK_STATUS(dr_inputs(to, NIN, x, xo), DR_OK);
        size_t len0 = dr_tape_len(ts);
        dr_real ys = program(AS_STMT, seed, ts, xs, NULL, NULL);
        dr_real yo = program(AS_OPS, seed, to, xo, NULL, NULL);
        double yp;
        program(AS_PLAIN, seed, NULL, NULL, x, &yp);
        /* at most one node per statement of one or two arguments, k - 1
           for k more (NIN inputs, at most NIN + NSTMT - 1 distinct ones) */
        assert_true(dr_tape_len(ts) - len0 <= NSTMT * (DR_EXPR_MAX - 1));
        CHK_REL(ys.val, yo.val, 1e-14);
        CHK_SAME(ys.val, yp);
        double gs[NIN], go[NIN];
        CHK_STATUS(dr_gradient(ts, ys, NIN, xs, gs), DR_OK);
        CHK_STATUS(dr_gradient(to, yo, NIN, xo, go), DR_OK);
        double mag = 0.0;
        for (int i = 0; i < NIN; i++)
            mag += fabs(go[i]);
        for (int i = 0; i < NIN; i++) {
            CHK_ABS(gs[i], go[i], 1e-13 * (1.0 + mag));
            /* (a program whose gradient has grown large is too curved for
               differences at the default step; the operations' gradient
               above still checks it) */
            if (mag > 100.0)
                continue;
            chk_deriv fd = chk_fd_partial(plain_fn, &seed, NIN, x, (size_t)i,
                                          0.0);
            CHK_DERIV(gs[i], fd, 1e-8);
            checked++;
        }
        live += mag > 1e-3;
    }
    chk_context(NULL);
    assert_true(live > 200);
    assert_true(checked > 1000);
    dr_tape_free(ts);
    dr_tape_free(to);
}

/* repeated arguments are merged, constants dropped: node shapes */
static void test_shapes(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real a = dr_input(t, 2.0), b = dr_input(t, 3.0), c = dr_input(t, 5.0);
    dr_rec r;
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    /* no argument left: a constant, no node */
    dr_real k = dr_rec_stmt(&r, dr_ex_mul(dr_ex_const(2.0), dr_ex(dr_const(4.0))));
    assert_true(k.idx == DR_NONE);
    CHK_SAME(k.val, 8.0);
    /* a * a + a: one argument, partial 2a + 1 */
    dr_real y1 = dr_rec_stmt(&r, dr_ex_add(dr_ex_mul(dr_ex(a), dr_ex(a)), dr_ex(a)));
    /* a + b - a: two ids, a's partial 0 */
    dr_real y2 = dr_rec_stmt(&r, dr_ex_sub(dr_ex_add(dr_ex(a), dr_ex(b)), dr_ex(a)));
    /* (a + b) * (c + a) * b / c: three arguments, a chain of two nodes */
    dr_expr e = dr_ex_div(dr_ex_mul(dr_ex_mul(dr_ex_add(dr_ex(a), dr_ex(b)),
                                              dr_ex_add(dr_ex(c), dr_ex(a))),
                                    dr_ex(b)),
                          dr_ex(c));
    dr_real y3 = dr_rec_stmt(&r, e);
    /* exactly DR_EXPR_MAX terms, all the same argument */
    dr_expr m = dr_ex(b);
    for (int i = 1; i < DR_EXPR_MAX; i++)
        m = dr_ex_add(m, dr_ex(b));
    dr_real y4 = dr_rec_stmt(&r, m);
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    /* (y3's chain reaches 6 back: make test-far's DR_NEAR_MAX of 5 makes
       it one n-ary node) */
    assert_int_equal(dr_tape_len(t), DR_NEAR_MAX >= 6 ? 3 + 5 : 3 + 4);
    double g[3];
    dr_real x[3] = {a, b, c};
    CHK_STATUS(dr_gradient(t, y1, 3, x, g), DR_OK);
    CHK_SAME(g[0], 5.0);
    CHK_SAME(g[1], 0.0);
    CHK_STATUS(dr_gradient(t, y2, 3, x, g), DR_OK);
    CHK_SAME(g[0], 0.0);
    CHK_SAME(g[1], 1.0);
    CHK_SAME(y2.val, 3.0);
    CHK_STATUS(dr_gradient(t, y3, 3, x, g), DR_OK);
    /* y3 = (a + b)(c + a) b / c at (2, 3, 5) */
    CHK_REL(y3.val, 5.0 * 7.0 * 3.0 / 5.0, 1e-15);
    CHK_REL(g[0], (7.0 + 5.0) * 3.0 / 5.0, 1e-15);
    CHK_REL(g[1], (7.0 * 3.0 + 5.0 * 7.0) / 5.0, 1e-15);
    CHK_REL(g[2], 5.0 * 3.0 * (1.0 / 5.0 - 7.0 / 25.0), 1e-15);
    CHK_STATUS(dr_gradient(t, y4, 3, x, g), DR_OK);
    CHK_SAME(g[1], (double)DR_EXPR_MAX);
    CHK_SAME(y4.val, 3.0 * DR_EXPR_MAX);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* statements of 3 .. DR_EXPR_MAX arguments: a chain of k - 1 nodes whose
   gradient is the n-ary node's (dr_recordn, the same partials) to the bit;
   across chunks (where a chain would not fit, one n-ary node) and, in
   make test-far, past DR_NEAR_MAX */
static void test_chains(void **state)
{
    (void)state;
    enum { NV = DR_EXPR_MAX, NS = 6000 };
    dr_tape *tc = chk_tape_new(), *tn = chk_tape_new();
    double xv[NV];
    for (int i = 0; i < NV; i++)
        xv[i] = 0.5 + 0.125 * i;
    dr_real xc[NV], xn[NV];
    CHK_STATUS(dr_inputs(tc, NV, xv, xc), DR_OK);
    CHK_STATUS(dr_inputs(tn, NV, xv, xn), DR_OK);
    dr_real ac = xc[0], an = xn[0];
    dr_rec r;
    CHK_STATUS(dr_rec_begin(tc, &r), DR_OK);
    for (int s = 0; s < NS; s++) {
        int k = 3 + s % (DR_EXPR_MAX - 2); /* 3 .. DR_EXPR_MAX arguments */
        /* a (the running value) times c, plus k - 1 inputs, each scaled */
        double c = 1.0 / (1 + s % 7);
        dr_expr e = dr_ex_scale(c, dr_ex(ac));
        dr_idx ids[DR_EXPR_MAX];
        double ps[DR_EXPR_MAX];
        ids[0] = an.idx;
        ps[0] = c;
        double vn = c * an.val;
        for (int j = 1; j < k; j++) {
            double w = (j % 2 ? 1.0 : -1.0) / (1 + j + s % 3);
            e = dr_ex_add(e, dr_ex_scale(w, dr_ex(xc[(s + j) % NV])));
            ids[j] = xn[(s + j) % NV].idx;
            ps[j] = w;
            vn = vn + w * xn[(s + j) % NV].val;
        }
        ac = dr_rec_stmt(&r, e);
        an = (dr_real){vn, dr_recordn(tn, (size_t)k, ids, ps)};
        CHK_SAME(ac.val, an.val);
    }
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    /* the chains' nodes (a statement of k arguments, k - 1 of them, or one
       where it did not fit its chunk; make test-far's arguments are mostly
       too far back for a chain) */
    if (DR_NEAR_MAX > 100)
        assert_true(dr_tape_len(tc) > dr_tape_len(tn) + NS);
    CHK_SAME_GRADIENT(tc, ac, xc, tn, an, xn, NV);
    dr_tape_free(tc);
    dr_tape_free(tn);
}

/* a long sum against the same sum by operations, across chunks */
static void test_sum(void **state)
{
    (void)state;
    enum { N = 3000 };
    dr_tape *ts = chk_tape_new(), *to = chk_tape_new();
    static double x[2 * N], gs[2 * N], go[2 * N];
    static dr_idx ids[2 * N + 2];
    static double parts[2 * N + 2];
    chk_rng rng;
    chk_rng_seed(&rng, 8);
    for (int i = 0; i < 2 * N; i++)
        x[i] = chk_rng_uniform(&rng, -1.0, 1.0);
    for (int rep = 0; rep < 3; rep++) {
        CHK_STATUS(dr_tape_clear(ts), DR_OK);
        CHK_STATUS(dr_tape_clear(to), DR_OK);
        dr_idx fs, fo;
        CHK_STATUS(dr_input_range(ts, 2 * N, &fs), DR_OK);
        CHK_STATUS(dr_input_range(to, 2 * N, &fo), DR_OK);
        dr_rec rs, ro;
        CHK_STATUS(dr_rec_begin(ts, &rs), DR_OK);
        CHK_STATUS(dr_rec_begin(to, &ro), DR_OK);
        /* sum of x_i * y_i + 2 x_0 + a constant; x_0 repeated */
        dr_sum s;
        dr_sum_init(&s, 2 * N + 2, ids, parts);
        dr_real acc = dr_const(0.0);
        for (int i = 0; i < N; i++) {
            dr_real a = {x[i], fs + i}, b = {x[N + i], fs + N + i};
            dr_real ao = {x[i], fo + i}, bo = {x[N + i], fo + N + i};
            dr_sum_mul(&s, a, b);
            acc = dr_rec_add(&ro, acc, dr_rec_mul(&ro, ao, bo));
        }
        dr_real x0 = {x[0], fs}, x0o = {x[0], fo};
        dr_sum_add(&s, dr_ex_add(dr_ex_scale(2.0, dr_ex(x0)), dr_ex_const(0.5)));
        acc = dr_rec_add(&ro, acc, dr_rec_add(&ro, dr_rec_mul(&ro, dr_const(2.0), x0o),
                                              dr_const(0.5)));
        dr_real ys = dr_rec_sum(&rs, &s);
        CHK_STATUS(dr_rec_end(&rs), DR_OK);
        CHK_STATUS(dr_rec_end(&ro), DR_OK);
        assert_int_equal(dr_tape_len(ts), 2 * N + 1);
        CHK_REL(ys.val, acc.val, 1e-12);
        CHK_STATUS(dr_gradient_range(ts, ys, fs, 2 * N, gs), DR_OK);
        CHK_STATUS(dr_gradient_range(to, acc, fo, 2 * N, go), DR_OK);
        for (int i = 0; i < 2 * N; i++)
            CHK_ABS(gs[i], go[i], 1e-14);
        /* one- and two-argument sums are plain nodes; an empty one is a
           constant */
        CHK_STATUS(dr_rec_begin(ts, &rs), DR_OK);
        dr_sum_init(&s, 4, ids, parts);
        dr_real e = dr_rec_sum(&rs, &s);
        assert_true(e.idx == DR_NONE);
        CHK_SAME(e.val, 0.0);
        dr_sum_mul(&s, x0, dr_const(3.0));
        dr_real one = dr_rec_sum(&rs, &s);
        CHK_STATUS(dr_rec_end(&rs), DR_OK);
        assert_true(one.idx != DR_NONE);
        assert_int_equal(dr_tape_len(ts), 2 * N + 2);
        CHK_STATUS(dr_gradient_range(ts, one, fs, 1, gs), DR_OK);
        CHK_SAME(gs[0], 3.0);
    }
    dr_tape_free(ts);
    dr_tape_free(to);
}

/* every error: a constant result carrying the value, the sticky status,
   nothing recorded */
static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real a = dr_input(t, 2.0);
    dr_rec r;
    /* too many terms */
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    dr_expr m = dr_ex(a);
    for (int i = 0; i < DR_EXPR_MAX; i++)
        m = dr_ex_add(m, dr_ex(a));
    dr_real y = dr_rec_stmt(&r, m);
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 2.0 * (DR_EXPR_MAX + 1));
    /* the overflow survives further combination */
    y = dr_rec_stmt(&r, dr_ex_mul(dr_ex_neg(m), dr_ex_const(1.0)));
    assert_true(y.idx == DR_NONE);
    CHK_STATUS(dr_rec_end(&r), DR_ERANGE);
    assert_int_equal(dr_tape_len(t), 1);
    CHK_STATUS(dr_tape_status(t), DR_ERANGE);
    CHK_STATUS(dr_reverse(t), DR_ERANGE);

    /* a sum over its capacity, through dr_sum_mul and dr_sum_add */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    a = dr_input(t, 2.0);
    dr_idx ids[3], ids4[4];
    double parts[3], parts4[4];
    dr_sum s;
    dr_sum_init(&s, 3, ids, parts);
    dr_sum_mul(&s, a, a);
    dr_sum_mul(&s, a, a);
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    y = dr_rec_sum(&r, &s);
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 8.0);
    CHK_STATUS(dr_rec_end(&r), DR_ERANGE);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    a = dr_input(t, 2.0);
    dr_sum_init(&s, 3, ids, parts);
    dr_sum_mul(&s, a, a);
    dr_sum_add(&s, dr_ex_add(dr_ex(a), dr_ex(a)));
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    y = dr_rec_sum(&r, &s);
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 8.0);
    /* a NULL sum */
    CHK_STATUS(dr_rec_end(&r), DR_ERANGE);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    y = dr_rec_sum(&r, NULL);
    assert_true(y.idx == DR_NONE);
    CHK_STATUS(dr_rec_end(&r), DR_EINVAL);

    /* ids not on the tape: stale (before a clear), and far beyond */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real stale = a;
    a = dr_input(t, 2.0);
    dr_real bogus = {1.0, a.idx + 1000};
    dr_expr bad[3] = {
        dr_ex_mul(dr_ex(stale), dr_ex(a)),
        dr_ex_add(dr_ex(a), dr_ex(bogus)),
        dr_ex_add(dr_ex_add(dr_ex(a), dr_ex(bogus)), dr_ex_mul(dr_ex(a), dr_ex(a))),
    };
    dr_idx before = dr_tape_mark(t);
    for (int i = 0; i < 3; i++) {
        chk_context("bad id %d", i);
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        a = dr_input(t, 2.0);
        bad[0] = dr_ex_mul(dr_ex(stale), dr_ex(a));
        before = dr_tape_mark(t);
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
        dr_expr e = bad[i];
        if (i == 2) /* three distinct ids: the n-ary path */
            e = dr_ex_add(dr_ex_add(dr_ex(a), dr_ex(bogus)), dr_ex(stale));
        y = dr_rec_stmt(&r, e);
        assert_true(y.idx == DR_NONE);
        CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
        assert_true(dr_tape_mark(t) == before);
        /* a sum with a bad id */
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        a = dr_input(t, 2.0);
        dr_sum_init(&s, 4, ids4, parts4);
        dr_sum_add(&s, dr_ex_add(dr_ex(a), dr_ex(bogus)));
        dr_sum_mul(&s, a, dr_const(1.0));
        CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
        y = dr_rec_sum(&r, &s);
        assert_true(y.idx == DR_NONE);
        CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
    }
    chk_context(NULL);

    /* a tape already in error keeps its first status; statements still
       record, as the recorder's operations do */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    a = dr_input(t, 2.0);
    (void)dr_add(t, a, bogus);
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    y = dr_rec_stmt(&r, dr_ex_mul(dr_ex(a), dr_ex(a)));
    assert_true(y.idx != DR_NONE);
    m = dr_ex(a);
    for (int i = 0; i < DR_EXPR_MAX; i++)
        m = dr_ex_add(m, dr_ex(a));
    (void)dr_rec_stmt(&r, m);
    CHK_STATUS(dr_rec_end(&r), DR_EINVAL);
    double g;
    CHK_STATUS(dr_gradient(t, y, 1, &a, &g), DR_EINVAL);

    /* a recorder that failed to open: constants, no status */
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    a = dr_input(t, 2.0);
    dr_rec r2;
    CHK_STATUS(dr_rec_begin(t, &r), DR_OK);
    CHK_STATUS(dr_rec_begin(t, &r2), DR_EBUSY);
    y = dr_rec_stmt(&r2, dr_ex_mul(dr_ex(a), dr_ex(a)));
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 4.0);
    y = dr_rec_stmt(&r2, dr_ex_add(dr_ex_add(dr_ex(a), dr_ex_const(1.0)), m));
    assert_true(y.idx == DR_NONE);
    dr_sum_init(&s, 3, ids, parts);
    dr_sum_mul(&s, a, a);
    y = dr_rec_sum(&r2, &s);
    assert_true(y.idx == DR_NONE);
    CHK_SAME(y.val, 4.0);
    CHK_STATUS(dr_rec_end(&r), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    y = dr_rec_sum(NULL, &s);
    assert_true(y.idx == DR_NONE);
    dr_tape_free(t);
}

/* out of memory in an n-ary statement: the sticky status, no leak */
static void test_oom(void **state)
{
    (void)state;
    chk_alloc al;
    for (size_t k = 1; k < 40; k++) {
        dr_tape *t = chk_oom_tape(&al, k);
        if (!t)
            continue;
        dr_real a = dr_input(t, 1.0), b = dr_input(t, 2.0), c = dr_input(t, 3.0);
        dr_rec r;
        dr_status st = dr_rec_begin(t, &r);
        for (int i = 0; i < 300; i++)
            a = dr_rec_stmt(&r, dr_ex_add(dr_ex_mul(dr_ex(a), dr_ex_const(0.5)),
                                          dr_ex_add(dr_ex(b), dr_ex(c))));
        if (st == DR_OK) {
            st = dr_rec_end(&r);
            assert_true(st == DR_OK || st == DR_ENOMEM);
        }
        dr_tape_free(t);
        chk_alloc_uninstall();
        assert_int_equal(al.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_programs),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_chains),
        cmocka_unit_test(test_sum),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
