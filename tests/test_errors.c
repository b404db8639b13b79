/*
 * test_errors.c - every error path: out-of-memory injected at each allocation
 * (recording, n-ary nodes, adjoint storage), invalid ids (out of range,
 * negative, stale after a clear), NULL tapes and pointers, the sticky status,
 * dr_set_allocator misuse, dr_strerror and the version.
 */
#include "check.h"
#include "tape/tape.h" /* the id range, test_id_range_renewed */

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------- a small program */

enum { PROG_VALS = 8 };

/* About 1500 nodes (several chunks) and two n-ary nodes (arena blocks, one
   larger than the smallest block).  Records every value it computes in
   vals[] and the ids in ids[]; returns the output. */
static dr_real small_program(dr_tape *t, dr_real *x, double *vals,
                             dr_idx *ids)
{
    static dr_idx args[3000];
    static double parts[3000];
    x[0] = dr_input(t, 0.5);
    x[1] = dr_input(t, 1.25);
    dr_real s = dr_const(0.0);
    for (int i = 0; i < 700; i++)
        s = dr_add(t, s, dr_mul(t, x[i & 1], dr_const(0.001 * i)));
    vals[0] = s.val;
    ids[0] = s.idx;
    dr_real u = dr_sin(t, dr_mul(t, x[0], x[1]));
    vals[1] = u.val;
    ids[1] = u.idx;
    dr_idx a3[3] = {x[0].idx, u.idx, x[1].idx};
    double p3[3] = {1.0, 2.0, 3.0};
    dr_real n3 = {x[0].val + 2 * u.val + 3 * x[1].val,
                  dr_recordn(t, 3, a3, p3)};
    vals[2] = n3.val;
    ids[2] = n3.idx;
    for (int i = 0; i < 3000; i++) {
        args[i] = x[i % 2].idx;
        parts[i] = 0.5;
    }
    dr_real big = {1500 * 0.5 * (x[0].val + x[1].val),
                   dr_recordn(t, 3000, args, parts)};
    vals[3] = big.val;
    ids[3] = big.idx;
    dr_real e = dr_exp(t, dr_neg(t, x[1]));
    vals[4] = e.val;
    ids[4] = e.idx;
    dr_real y = dr_add(t, dr_add(t, s, n3), dr_mul(t, big, e));
    for (int i = 0; i < 200; i++)
        y = dr_mul(t, y, dr_const(1.0));
    vals[5] = y.val;
    ids[5] = y.idx;
    vals[6] = x[0].val;
    ids[6] = x[0].idx;
    vals[7] = x[1].val;
    ids[7] = x[1].idx;
    return y;
}

typedef struct ref_run {
    double vals[PROG_VALS];
    double g[2];
    size_t calls; /* allocations of the whole run */
} ref_run;

static void reference_run(ref_run *ref)
{
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    dr_real x[2];
    dr_idx ids[PROG_VALS];
    dr_real y = small_program(t, x, ref->vals, ids);
    for (int i = 0; i < PROG_VALS; i++)
        assert_true(ids[i] != DR_NONE);
    CHK_STATUS(dr_gradient(t, y, 2, x, ref->g), DR_OK);
    ref->calls = al.calls;
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
    /* enough allocations to make the injection loop meaningful */
    assert_true(ref->calls >= 8);
}

/* Fail the k-th allocation (and every later one if rest), k = 1, 2, ...
   until the program and its gradient complete without a failure. */
static void oom_loop(bool rest)
{
    ref_run ref;
    reference_run(&ref);
    size_t k;
    for (k = 1; k < 1000; k++) {
        chk_context("allocation %zu fails%s", k, rest ? " (and all later)" : "");
        chk_alloc al;
        chk_alloc_install(&al);
        chk_alloc_fail_in(&al, k, rest);
        dr_tape *t = dr_tape_new();
        if (!t) {
            assert_int_equal(k, 1); /* only the tape's own allocation */
            assert_int_equal(al.fails, 1);
            assert_int_equal(al.live, 0);
            chk_alloc_uninstall();
            continue;
        }
        dr_real x[2];
        double vals[PROG_VALS];
        dr_idx ids[PROG_VALS];
        dr_real y = small_program(t, x, vals, ids);
        /* values are right whatever happened */
        for (int i = 0; i < PROG_VALS; i++)
            CHK_SAME(vals[i], ref.vals[i]);
        size_t fails_recording = al.fails;
        dr_status st = dr_tape_status(t);
        if (fails_recording) {
            CHK_STATUS(st, DR_ENOMEM);
        }
        if (fails_recording && rest) {
            /* some node was lost: an id came back as DR_NONE */
            bool lost = false;
            for (int i = 0; i < PROG_VALS; i++)
                lost |= ids[i] == DR_NONE;
            assert_true(lost);
        }
        if (!fails_recording)
            CHK_STATUS(st, DR_OK);
        double g[2] = {-7.0, -7.0};
        dr_status gs = dr_gradient(t, y, 2, x, g);
        if (fails_recording) {
            /* sticky: the sweep reports it and leaves g alone */
            CHK_STATUS(gs, DR_ENOMEM);
            CHK_SAME(g[0], -7.0);
            CHK_STATUS(dr_reverse(t), DR_ENOMEM);
            CHK_STATUS(dr_jacobian(t, 1, &y, 2, x, g), DR_ENOMEM);
            /* more recording does not reset it, even when it succeeds */
            chk_alloc_fail_in(&al, 0, false);
            dr_real z = dr_input(t, 1.0);
            z = dr_mul(t, z, z);
            CHK_SAME(z.val, 1.0);
            CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
            CHK_STATUS(dr_reverse(t), DR_ENOMEM);
        } else if (al.fails) {
            /* the adjoint storage could not be allocated */
            CHK_STATUS(gs, DR_ENOMEM);
            CHK_SAME(g[0], -7.0);
        } else {
            CHK_STATUS(gs, DR_OK);
            CHK_SAME(g[0], ref.g[0]);
            CHK_SAME(g[1], ref.g[1]);
        }
        bool clean = al.fails == 0;
        /* clear resets the status; with memory back the tape works again */
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        chk_alloc_fail_in(&al, 0, false);
        y = small_program(t, x, vals, ids);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        CHK_STATUS(dr_gradient(t, y, 2, x, g), DR_OK);
        CHK_SAME(g[0], ref.g[0]);
        CHK_SAME(g[1], ref.g[1]);
        dr_tape_free(t);
        /* no leak, no foreign free, whatever failed */
        assert_int_equal(al.live, 0);
        assert_int_equal(al.live_bytes, 0);
        assert_int_equal(al.bad_frees, 0);
        chk_alloc_uninstall();
        if (clean)
            break;
    }
    chk_context(NULL);
    /* the loop reached a run without failure after trying every allocation */
    assert_true(k > ref.calls);
    assert_true(k < 1000);
}

static void test_oom_each_allocation(void **state)
{
    (void)state;
    oom_loop(false);
}

static void test_oom_from_each_allocation_on(void **state)
{
    (void)state;
    oom_loop(true);
}

/* The adjoint storage of dr_seed / dr_reverse cannot be allocated. */
static void test_oom_adjoints(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 3.0);
    dr_real y = dr_mul(t, x, x);
    /* dr_seed allocates the adjoints first */
    chk_alloc_fail_in(&al, 1, true);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_ENOMEM);
    CHK_STATUS(dr_reverse(t), DR_ENOMEM);
    double g = -1.0;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_ENOMEM);
    CHK_SAME(g, -1.0);
    double j = -1.0;
    CHK_STATUS(dr_jacobian(t, 1, &y, 1, &x, &j), DR_ENOMEM);
    CHK_SAME(j, -1.0);
    /* reading adjoints needs no memory: nothing reached yet */
    CHK_SAME(dr_adjoint(t, x.idx), 0.0);
    /* seeding a constant needs no memory either */
    CHK_STATUS(dr_seed(t, DR_NONE, 1.0), DR_OK);
    assert_true(al.fails >= 3);
    /* the recording is intact: with memory back, everything works */
    CHK_STATUS(dr_tape_status(t), DR_OK);
    chk_alloc_fail_in(&al, 0, false);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 6.0);

    /* the tape grows past the adjoint array: the bigger one fails */
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, y.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_SAME(dr_adjoint(t, x.idx), 6.0);
    dr_real z = y;
    for (int i = 0; i < 5000; i++)
        z = dr_add(t, z, dr_const(1.0));
    chk_alloc_fail_in(&al, 1, true);
    CHK_STATUS(dr_seed(t, z.idx, 1.0), DR_ENOMEM);
    CHK_STATUS(dr_reverse(t), DR_ENOMEM);
    /* the adjoints from before are still there */
    CHK_SAME(dr_adjoint(t, x.idx), 6.0);
    CHK_SAME(dr_adjoint(t, y.idx), 1.0);
    CHK_STATUS(dr_gradient(t, z, 1, &x, &g), DR_ENOMEM);
    chk_alloc_fail_in(&al, 0, false);
    CHK_STATUS(dr_gradient(t, z, 1, &x, &g), DR_OK);
    CHK_SAME(g, 6.0);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
}

/* An n-ary node whose record cannot be allocated, and a huge n. */
static void test_oom_recordn(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0);
    dr_idx args[4] = {x.idx, x.idx, DR_NONE, x.idx};
    double p[4] = {1, 2, 3, 4};
    chk_alloc_fail_in(&al, 1, true);
    assert_int_equal(dr_recordn(t, 4, args, p), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
    chk_alloc_fail_in(&al, 0, false);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    /* a size whose record would not fit in memory at all: refused before
       the arrays are read */
    x = dr_input(t, 1.0);
    args[0] = x.idx;
    args[1] = x.idx;
    args[3] = x.idx;
    assert_int_equal(dr_recordn(t, SIZE_MAX, args, p), DR_NONE);
    assert_true(dr_tape_status(t) != DR_OK);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
}

/* ---------------------------------------------------------- invalid ids */

/* Ids that are not on tape t (which has recorded `len` nodes, ids in
   [lo, lo + len)), plus stale ones. */
static size_t bad_ids(dr_idx lo, size_t len, const dr_idx *stale,
                      size_t nstale, dr_idx *out)
{
    size_t n = 0;
    out[n++] = lo + (dr_idx)len;     /* one past the last            */
    out[n++] = lo + (dr_idx)len + 1;
    out[n++] = lo + (dr_idx)len + 1000000;
    out[n++] = INT64_MAX;
    out[n++] = INT64_MAX - 1;
    out[n++] = DR_NONE - 1;          /* negative, not DR_NONE        */
    out[n++] = -1000;
    out[n++] = INT64_MIN;
    out[n++] = INT64_MIN + 1;
    if (lo > 0)
        out[n++] = lo - 1;           /* just before this tape's range */
    for (size_t i = 0; i < nstale; i++)
        out[n++] = stale[i];
    return n;
}

/* Every entry point given one bad id, on a fresh copy of the program so the
   sticky status of each check starts clean. */
static void check_bad_id(dr_tape *t, dr_idx bad, dr_real good)
{
    chk_context("bad id %lld", (long long)bad);
    dr_real b = {0.5, bad};
    double out = -3.0;
    /* queries: DR_EINVAL, nothing written, the tape's status unchanged */
    CHK_STATUS(dr_seed(t, bad, 1.0), DR_EINVAL);
    CHK_STATUS(dr_adjoint_get(t, bad, &out), DR_EINVAL);
    CHK_SAME(out, -3.0);
    assert_true(isnan(dr_adjoint(t, bad)));
    double g[2] = {-3.0, -3.0};
    dr_real xs[2] = {good, b};
    CHK_STATUS(dr_gradient(t, good, 2, xs, g), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, b, 1, &good, g), DR_EINVAL);
    dr_real ys[2] = {good, b};
    CHK_STATUS(dr_jacobian(t, 2, ys, 1, &good, g), DR_EINVAL);
    CHK_STATUS(dr_jacobian(t, 1, &good, 2, xs, g), DR_EINVAL);
    CHK_SAME(g[0], -3.0);
    CHK_SAME(g[1], -3.0);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* a good gradient still works after the refused calls */
    CHK_STATUS(dr_gradient(t, good, 1, &good, g), DR_OK);
    CHK_SAME(g[0], 1.0);

    size_t len = dr_tape_len(t);
    /* recording with a bad id: DR_NONE, sticky DR_EINVAL, nothing recorded */
    assert_int_equal(dr_record1(t, bad, 1.0), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    assert_int_equal(dr_tape_len(t), len);
    /* later calls keep reporting it */
    CHK_STATUS(dr_reverse(t), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, good, 1, &good, g), DR_EINVAL);
    CHK_STATUS(dr_jacobian(t, 1, &good, 1, &good, g), DR_EINVAL);
    CHK_SAME(g[0], 1.0);
    /* good recording goes on (values right) but the status stays */
    dr_real ok = dr_sin(t, good);
    CHK_SAME(ok.val, sin(good.val));
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
}

/* Each recording entry point with a bad id, each on a clean tape. */
typedef enum rec_kind {
    REC1, REC2_A, REC2_B, RECN3, RECN2, UN_OP, BIN_A, BIN_B, POWI, REC_KINDS
} rec_kind;

static void check_bad_record(dr_idx bad, rec_kind kind, bool after_clear)
{
    chk_context("bad id %lld, recording kind %d%s", (long long)bad, (int)kind,
                after_clear ? " (after a clear)" : "");
    dr_tape *t = chk_tape_new();
    if (after_clear) {
        for (int i = 0; i < 300; i++)
            dr_input(t, 1.0);
        CHK_STATUS(dr_tape_clear(t), DR_OK);
    }
    dr_real g = dr_input(t, 2.0);
    dr_real b = {0.25, bad};
    size_t len = dr_tape_len(t);
    dr_idx id = 0;
    dr_real r = {0, 0};
    dr_idx args[3] = {g.idx, bad, g.idx};
    double p[3] = {1, 1, 1};
    switch (kind) {
    case REC1: id = dr_record1(t, bad, 1.0); break;
    case REC2_A: id = dr_record2(t, bad, 1.0, g.idx, 1.0); break;
    case REC2_B: id = dr_record2(t, g.idx, 1.0, bad, 1.0); break;
    case RECN3: id = dr_recordn(t, 3, args, p); break;
    case RECN2: id = dr_recordn(t, 2, args + 1, p); break;
    case UN_OP:
        r = dr_sqrt(t, b);
        CHK_SAME(r.val, 0.5);
        id = r.idx;
        break;
    case BIN_A:
        r = dr_mul(t, b, g);
        CHK_SAME(r.val, 0.5);
        id = r.idx;
        break;
    case BIN_B:
        r = dr_pow(t, g, b);
        CHK_SAME(r.val, pow(2.0, 0.25));
        id = r.idx;
        break;
    case POWI:
        r = dr_powi(t, b, 3);
        CHK_SAME(r.val, 0.25 * 0.25 * 0.25);
        id = r.idx;
        break;
    case REC_KINDS: break;
    }
    assert_int_equal(id, DR_NONE);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_reverse(t), DR_EINVAL);
    double gr;
    CHK_STATUS(dr_gradient(t, g, 1, &g, &gr), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

static void test_invalid_ids(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_idx bad[32];
    /* a fresh tape with a few nodes */
    dr_real x = dr_input(t, 0.5);
    dr_real y = dr_exp(t, x);
    size_t nb = bad_ids(x.idx, dr_tape_len(t), NULL, 0, bad);
    for (size_t i = 0; i < nb; i++) {
        check_bad_id(t, bad[i], y);
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        x = dr_input(t, 0.5);
        y = dr_exp(t, x);
    }
    /* after clears: the ids of before are stale */
    dr_idx stale[4];
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real a = dr_input(t, 1.0);
    dr_real c = dr_input(t, 2.0);
    stale[0] = a.idx;
    stale[1] = c.idx;
    for (int i = 0; i < 1000; i++) /* a few chunks' worth */
        c = dr_add(t, c, a);
    stale[2] = c.idx;
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_real x2 = dr_input(t, 0.5);
    dr_real y2 = dr_exp(t, x2);
    stale[3] = x2.idx + 2; /* the next id, not recorded yet */
    nb = bad_ids(x2.idx, dr_tape_len(t), stale, 3, bad);
    for (size_t i = 0; i < nb; i++) {
        check_bad_id(t, bad[i], y2);
        /* rebuild: clear makes the ids above stale too */
        dr_idx prev = y2.idx;
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        x2 = dr_input(t, 0.5);
        y2 = dr_exp(t, x2);
        assert_true(x2.idx > prev);
        /* the old ids are refused, not reinterpreted */
        CHK_STATUS(dr_seed(t, prev, 1.0), DR_EINVAL);
    }
    /* an id from another tape's range */
    dr_tape *t2 = chk_tape_new();
    dr_real o = dr_input(t2, 1.0);
    for (int i = 0; i < 10; i++)
        o = dr_sin(t2, o);
    dr_tape *t3 = chk_tape_new();
    dr_real s = dr_input(t3, 1.0);
    check_bad_id(t3, o.idx, s); /* id 10 on a 1-node tape */
    dr_tape_free(t3);
    dr_tape_free(t2);
    dr_tape_free(t);

    /* each recording entry point, fresh tape and after a clear */
    const dr_idx recbad[] = {1, 5, -2, INT64_MIN, INT64_MAX, 1000000};
    for (size_t i = 0; i < sizeof recbad / sizeof recbad[0]; i++)
        for (int k = 0; k < REC_KINDS; k++) {
            check_bad_record(recbad[i], (rec_kind)k, false);
            check_bad_record(recbad[i], (rec_kind)k, true);
        }
    /* an id from before the clear, per kind */
    for (int k = 0; k < REC_KINDS; k++)
        check_bad_record(0, (rec_kind)k, true);
    chk_context(NULL);
}

/* Ids of another tape, both tapes fresh and of the same length (so the
   relative ids coincide): every kind of call refuses them instead of
   reading this tape's node of the same number. */
static void test_ids_of_another_tape(void **state)
{
    (void)state;
    dr_tape *a = chk_tape_new(), *b = chk_tape_new();
    dr_real xa = dr_input(a, 2.0), xb = dr_input(b, 3.0);
    assert_true(xa.idx != xb.idx);
    /* an operation: the right value, a constant, sticky DR_EINVAL */
    dr_real y = dr_mul(b, xb, xa);
    CHK_SAME(y.val, 6.0);
    assert_int_equal(y.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(b), DR_EINVAL);
    CHK_STATUS(dr_tape_status(a), DR_OK);
    CHK_STATUS(dr_tape_clear(b), DR_OK);
    xb = dr_input(b, 3.0);
    assert_int_equal(dr_record1(b, xa.idx, 1.0), DR_NONE);
    CHK_STATUS(dr_tape_status(b), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(b), DR_OK);
    /* drivers and queries */
    xb = dr_input(b, 3.0);
    y = dr_mul(b, xb, xb);
    double g[2] = {-1.0, -1.0};
    CHK_STATUS(dr_gradient(b, y, 1, &xa, g), DR_EINVAL);
    CHK_STATUS(dr_gradient(b, xa, 1, &xb, g), DR_EINVAL);
    CHK_STATUS(dr_seed(b, xa.idx, 1.0), DR_EINVAL);
    CHK_STATUS(dr_adjoint_get(b, xa.idx, g), DR_EINVAL);
    CHK_SAME(g[0], -1.0);
    CHK_STATUS(dr_tape_status(b), DR_OK);
    CHK_STATUS(dr_gradient(b, y, 1, &xb, g), DR_OK);
    CHK_SAME(g[0], 6.0);
    /* arrays: an array of the other tape is not an array of this one */
    double v[2] = {1.0, 2.0};
    dr_arr va = dr_arr_input(a, 1, 2, 1, v), vb = dr_arr_input(b, 1, 2, 1, v);
    assert_true(va.idx != vb.idx);
    dr_real d = dr_arr_dot(b, vb, va);
    assert_int_equal(d.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(b), DR_EINVAL);
    dr_tape_free(a);
    dr_tape_free(b);
}

/* A tape cleared often enough to use up half of its id range takes a new
   range: ids stay distinct from the old ones, and old ids stay refused. */
static void test_id_range_renewed(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0);
    dr_idx old = x.idx;
    for (int i = 0; i < 8; i++)
        x = dr_sin(t, x);
    dr_idx last = x.idx;
    CHK_STATUS(dr_tape_clear(t), DR_OK); /* the range still holds */
    x = dr_input(t, 1.0);
    assert_true(x.idx > last && x.idx < t->id_end);
    last = x.idx;
    /* as if all but 2^39 + 1 ids of the range had been used already */
    t->id_end = t->base + ((int64_t)1 << 39) + 1;
    CHK_STATUS(dr_tape_clear(t), DR_OK); /* a new range */
    x = dr_input(t, 1.0);
    assert_true(x.idx < last || x.idx >= last + ((int64_t)1 << 39));
    assert_true(x.idx >= 0 && x.idx < ((int64_t)1 << 61));
    CHK_STATUS(dr_seed(t, old, 1.0), DR_EINVAL);
    CHK_STATUS(dr_seed(t, last, 1.0), DR_EINVAL);
    dr_real y = dr_exp(t, x);
    double g;
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, exp(1.0));
    dr_tape_free(t);
}

/* The first error sticks: EINVAL then ENOMEM stays EINVAL, and the other
   way round. */
static void test_first_error_sticks(void **state)
{
    (void)state;
    chk_alloc al;
    chk_alloc_install(&al);
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.0);
    assert_int_equal(dr_record1(t, 12345, 1.0), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    chk_alloc_fail_in(&al, 1, true);
    for (int i = 0; i < 1000; i++) /* needs a new chunk: fails */
        x = dr_add(t, x, x);
    assert_true(al.fails > 0);
    assert_int_equal(x.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    chk_alloc_fail_in(&al, 0, false);
    CHK_STATUS(dr_tape_clear(t), DR_OK);

    x = dr_input(t, 1.0);
    chk_alloc_fail_in(&al, 1, true);
    for (int i = 0; i < 1000; i++)
        x = dr_add(t, x, x);
    CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
    chk_alloc_fail_in(&al, 0, false);
    assert_int_equal(dr_record1(t, 12345, 1.0), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_ENOMEM);
    CHK_STATUS(dr_reverse(t), DR_ENOMEM);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();
}

/* ------------------------------------------------------ NULL everywhere */

static void test_null_tape_and_pointers(void **state)
{
    (void)state;
    dr_tape_free(NULL);
    CHK_STATUS(dr_tape_clear(NULL), DR_EINVAL);
    assert_int_equal(dr_tape_len(NULL), 0);
    assert_int_equal(dr_tape_bytes(NULL), 0);
    CHK_STATUS(dr_tape_status(NULL), DR_EINVAL);

    dr_real in = dr_input(NULL, 2.0);
    CHK_SAME(in.val, 2.0);
    assert_int_equal(in.idx, DR_NONE);
    assert_int_equal(dr_record0(NULL), DR_NONE);
    assert_int_equal(dr_record1(NULL, 0, 1.0), DR_NONE);
    assert_int_equal(dr_record2(NULL, 0, 1.0, 0, 1.0), DR_NONE);
    dr_idx a0[1] = {0};
    double p0[1] = {1};
    assert_int_equal(dr_recordn(NULL, 1, a0, p0), DR_NONE);
    assert_int_equal(dr_recordn(NULL, 5, NULL, NULL), DR_NONE);

    /* operations on a NULL tape: values right, nothing recorded */
    dr_real v = {0.5, 3};
    dr_real r = dr_sin(NULL, v);
    CHK_SAME(r.val, sin(0.5));
    assert_int_equal(r.idx, DR_NONE);
    r = dr_atan2(NULL, v, v);
    CHK_SAME(r.val, atan2(0.5, 0.5));
    assert_int_equal(r.idx, DR_NONE);
    r = dr_powi(NULL, v, 2);
    CHK_SAME(r.val, 0.25);
    assert_int_equal(r.idx, DR_NONE);

    CHK_STATUS(dr_seed(NULL, 0, 1.0), DR_EINVAL);
    CHK_STATUS(dr_reverse(NULL), DR_EINVAL);
    CHK_STATUS(dr_adjoints_clear(NULL), DR_EINVAL);
    assert_true(isnan(dr_adjoint(NULL, 0)));
    assert_true(isnan(dr_adjoint(NULL, DR_NONE)));
    double out = -1;
    CHK_STATUS(dr_adjoint_get(NULL, 0, &out), DR_EINVAL);
    CHK_SAME(out, -1.0);
    double g[2];
    CHK_STATUS(dr_gradient(NULL, v, 1, &v, g), DR_EINVAL);
    CHK_STATUS(dr_jacobian(NULL, 1, &v, 1, &v, g), DR_EINVAL);

    /* NULL pointers with a real tape */
    dr_tape *t = chk_tape_new();
    dr_real x = dr_input(t, 1.5);
    dr_real y = dr_mul(t, x, x);
    CHK_STATUS(dr_adjoint_get(t, x.idx, NULL), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, y, 1, NULL, g), DR_EINVAL);
    CHK_STATUS(dr_gradient(t, y, 1, &x, NULL), DR_EINVAL);
    CHK_STATUS(dr_jacobian(t, 1, NULL, 1, &x, g), DR_EINVAL);
    CHK_STATUS(dr_jacobian(t, 1, &y, 1, NULL, g), DR_EINVAL);
    CHK_STATUS(dr_jacobian(t, 1, &y, 1, &x, NULL), DR_EINVAL);
    /* m * n overflows size_t: refused before anything is read */
    CHK_STATUS(dr_jacobian(t, SIZE_MAX / 2 + 1, &y, 2, &x, g), DR_EINVAL);
    /* those were refused without touching the status */
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* n = 0 / m = 0 with NULL arrays is an empty, valid request */
    CHK_STATUS(dr_gradient(t, y, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_jacobian(t, 0, NULL, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_jacobian(t, 0, NULL, 1, &x, g), DR_OK);
    /* dr_recordn with NULL arrays and n > 0: sticky DR_EINVAL */
    assert_int_equal(dr_recordn(t, 3, NULL, p0), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    dr_idx a3[3] = {DR_NONE, DR_NONE, DR_NONE};
    assert_int_equal(dr_recordn(t, 3, a3, NULL), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    CHK_STATUS(dr_tape_clear(t), DR_OK);
    assert_int_equal(dr_recordn(t, 1, NULL, NULL), DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape_free(t);
}

/* Calls that are valid on an empty tape (nothing recorded yet, or nothing
   since a clear) do nothing and succeed. */
static void test_empty_tape(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        chk_context("empty tape, round %d", round);
        dr_tape *t = chk_tape_new();
        if (round == 1) { /* recorded, never swept, cleared */
            dr_input(t, 1.0);
            CHK_STATUS(dr_tape_clear(t), DR_OK);
        } else if (round == 2) { /* recorded, swept, cleared */
            dr_real x = dr_input(t, 1.0);
            double g;
            CHK_STATUS(dr_gradient(t, x, 1, &x, &g), DR_OK);
            CHK_STATUS(dr_tape_clear(t), DR_OK);
        }
        assert_int_equal(dr_tape_len(t), 0);
        CHK_STATUS(dr_reverse(t), DR_OK);
        CHK_STATUS(dr_adjoints_clear(t), DR_OK);
        CHK_STATUS(dr_seed(t, DR_NONE, 1.0), DR_OK);
        CHK_STATUS(dr_reverse(t), DR_OK);
        CHK_SAME(dr_adjoint(t, DR_NONE), 0.0);
        double out = -1;
        CHK_STATUS(dr_adjoint_get(t, DR_NONE, &out), DR_OK);
        CHK_SAME(out, 0.0);
        dr_real c = dr_const(4.0);
        double g = -1;
        CHK_STATUS(dr_gradient(t, c, 1, &c, &g), DR_OK);
        CHK_SAME(g, 0.0);
        CHK_STATUS(dr_jacobian(t, 1, &c, 1, &c, &g), DR_OK);
        CHK_SAME(g, 0.0);
        CHK_STATUS(dr_seed(t, 0, 1.0), DR_EINVAL);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        CHK_STATUS(dr_tape_clear(t), DR_OK);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* ----------------------------------------------- allocator, messages ... */

static void *never_malloc(size_t n, void *u)
{
    (void)n;
    (void)u;
    return NULL;
}

static void never_free(void *p, void *u)
{
    (void)p;
    (void)u;
}

static void test_set_allocator(void **state)
{
    (void)state;
    CHK_STATUS(dr_set_allocator(never_malloc, NULL, NULL), DR_EINVAL);
    CHK_STATUS(dr_set_allocator(NULL, never_free, NULL), DR_EINVAL);
    /* a refused call changes nothing: the default allocator still works */
    dr_tape *t = dr_tape_new();
    assert_non_null(t);
    dr_tape_free(t);

    chk_alloc al;
    chk_alloc_install(&al);
    CHK_STATUS(dr_set_allocator(never_malloc, NULL, NULL), DR_EINVAL);
    CHK_STATUS(dr_set_allocator(NULL, never_free, &al), DR_EINVAL);
    t = dr_tape_new();
    assert_non_null(t);
    assert_true(al.calls >= 1); /* still the counting allocator */
    assert_true(al.live >= 1);
    dr_tape_free(t);
    assert_int_equal(al.live, 0);
    chk_alloc_uninstall();

    /* an allocator that always fails: no tape */
    CHK_STATUS(dr_set_allocator(never_malloc, never_free, NULL), DR_OK);
    assert_null(dr_tape_new());
    CHK_STATUS(dr_set_allocator(NULL, NULL, NULL), DR_OK);
    t = dr_tape_new();
    assert_non_null(t);
    dr_tape_free(t);
}

static void test_strerror(void **state)
{
    (void)state;
    const dr_status codes[] = {DR_OK, DR_ENOMEM, DR_EINVAL,
                               DR_ESHAPE, DR_EBUSY, DR_ERANGE};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        const char *m = dr_strerror(codes[i]);
        assert_non_null(m);
        assert_true(strlen(m) > 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, dr_strerror(codes[j]));
    }
    assert_int_equal(DR_OK, 0);
    for (size_t i = 1; i < n; i++)
        assert_true(codes[i] != DR_OK);
    const int unknown[] = {-1, 6, 99, 1 << 20};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *m = dr_strerror((dr_status)unknown[i]);
        assert_non_null(m);
        assert_true(strlen(m) > 0);
        for (size_t j = 0; j < n; j++)
            assert_string_not_equal(m, dr_strerror(codes[j]));
    }
}

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(dr_version(), DR_VERSION_NUMBER);
    assert_int_equal(DR_VERSION_NUMBER, DR_VERSION_MAJOR * 10000 +
                                            DR_VERSION_MINOR * 100 +
                                            DR_VERSION_PATCH);
    assert_string_equal(dr_version_string(), DR_VERSION_STRING);
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", DR_VERSION_MAJOR, DR_VERSION_MINOR,
             DR_VERSION_PATCH);
    assert_string_equal(buf, DR_VERSION_STRING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_oom_each_allocation, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_oom_from_each_allocation_on, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_oom_adjoints, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_oom_recordn, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_invalid_ids, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_ids_of_another_tape, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_id_range_renewed, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_first_error_sticks, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_null_tape_and_pointers, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_empty_tape, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_set_allocator, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_strerror, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_version, chk_alloc_teardown),
    };
    return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
