/*
 * record.h - recording (cbits/README.md): what a node means, and the calls
 * that append nodes.  One- and two-argument nodes are the hot path (dr__push,
 * dr__op1, dr__op2, inline here; the inline recorder of dualrev.h is their
 * twin); every other kind of node is an extended node, a record in the
 * arena with its own reverse rule (struct dr_ext).  Not installed.
 */
#ifndef DR_RECORD_H
#define DR_RECORD_H

#include "log/log.h"


/* record.c */
/* push.c: an n-ary node's record (n arguments, relative ids, and their
   partials), for far nodes, dr_recordn and dr_sumn */
typedef struct dr__nary_ext {
    dr_ext hdr;
    size_t n;
    int64_t *args;   /* relative ids */
    double *partials;
} dr__nary_ext;
/* a record for n arguments with room for cap >= n of them, from the arena,
   its rules set (NULL after failing t) */
DR_HIDDEN dr__nary_ext *dr__nary_new(dr_tape *t, size_t n, size_t cap);
/* the n-ary rules set on x (for a record of a larger type that starts
   with one) */
DR_HIDDEN void dr__nary_kind(dr__nary_ext *x);
/* take the cursor back from the open recorder r, counting the nodes it
   appended (recorder.c lends it) */
DR_HIDDEN void dr__rec_give_back(dr_tape *t, dr_rec *r);

/* slow path: room for one node (a new chunk), NULL after failing t */
DR_HIDDEN dr_node *dr__grow(dr_tape *t);
/* room for n consecutive nodes (a new chunk if the current one has less);
   takes the cursor back from an open recorder first, and refuses a forked
   or joined handle */
DR_HIDDEN dr_node *dr__grow_n(dr_tape *t, size_t n);
/* append an extended node for record e (allocated with dr__arena_alloc);
   at order 2 it is logged as DR_OPC_EXT with value v where e->replay or
   e->reverse2 is set, else as DR_OPC_NONE (n-ary kinds log themselves
   over that) */
DR_HIDDEN dr_idx dr__record_ext_v(dr_tape *t, dr_ext *e, double v);
static inline dr_idx dr__record_ext(dr_tape *t, dr_ext *e)
{
    return dr__record_ext_v(t, e, 0.0);
}
/* dr__push when the current chunk is full */
DR_HIDDEN dr_idx dr__push_grow(dr_tape *t, int64_t ra, double da, int64_t rb,
                               double db);

/* external.c: what dr_record_external answers for a tape and inputs
   before looking at the rules (DR_OK: they may be recorded), for callers
   that must do work before they have the outputs' values */
DR_HIDDEN dr_status dr__external_ready(dr_tape *t, size_t n, const dr_real *x);
/* external.c: dr_record_external for rules that can fail: after each call
   of a rule, status(ctx) (NULL: never) is read, and anything but DR_OK
   becomes the sweeping tape's sticky status, which the caller of the sweep
   answers */
DR_HIDDEN dr_status dr__record_external_checked(
    dr_tape *t, const dr_external *f, dr_status (*status)(void *ctx),
    size_t n, const dr_real *x, size_t m, const double *y, dr_real *out);

/* recorder.c: take the cursor back from the handle's open recorder, whose
   next push then takes its slow path and borrows it again */
DR_HIDDEN void dr__rec_reclaim(dr_tape *t);

/* nary.c: one node over the arguments args[0..n-1] that are not DR_NONE
   (a statement's, dr_rec_stmt / dr_rec_sum): none, an input-free constant
   (DR_NONE); one or two, a plain node; more, an n-ary node.  DR_EINVAL
   (sticky) if any id is not on the tape. */
DR_HIDDEN dr_idx dr__record_terms(dr_tape *t, size_t n, const dr_idx *args,
                                  const double *partials);

/* nary.c: a node whose arguments are further back than DR_NEAR_MAX, as an
   extended node holding their relative ids */
DR_HIDDEN dr_idx dr__push_far(dr_tape *t, int64_t ra, double da, int64_t rb,
                              double db);

/* Append a node over relative ids ra, rb (-1: none; a missing argument is
   always rb); returns its public id, or DR_NONE on failure.  The fast path
   is straight-line: growing and far arguments are out of line. */
static inline dr_idx dr__push(dr_tape *t, int64_t ra, double da, int64_t rb,
                              double db)
{
    dr_node *n = t->cur;
    if (DR_UNLIKELY(n == t->end))
        return dr__push_grow(t, ra, da, rb, db);
    int64_t self = t->next;
    uint64_t oa = ra < 0 ? 0 : (uint64_t)(self - ra);
    uint64_t ob = rb < 0 ? 0 : (uint64_t)(self - rb);
    if (DR_UNLIKELY((oa | ob) > (uint64_t)DR_NEAR_MAX))
        return dr__push_far(t, ra, da, rb, db);
    n->da = da;
    n->db = db;
    n->a = (int32_t)oa;
    n->b = (int32_t)ob;
    t->cur = n + 1;
    t->len++;
    t->next = self + 1;
    return t->base + self;
}

/* Record a node over public ids a, b (either may be DR_NONE). */
static inline dr_idx dr__rec2(dr_tape *t, dr_idx a, double da, dr_idx b,
                              double db)
{
    int64_t ra, rb;
    if (DR_UNLIKELY(!dr__rel_arg(t, a, &ra) || !dr__rel_arg(t, b, &rb))) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    /* a missing argument always goes in b, so that a <= 0 marks exactly
       the nodes with nothing to propagate (inputs) and ext nodes: the sweep
       skips them without touching the sink slot */
    if (ra < 0) {
        ra = rb;
        rb = -1;
        da = db;
        db = 0.0;
    }
    return dr__push(t, ra, da, rb, db);
}

/* The result of a scalar operation with value v over a with partial d, as
   every scalar op records it: a constant argument (DR_NONE) or a NULL tape
   records nothing and gives a constant, an id not on the tape sets
   DR_EINVAL.  (A dr_real comes back, not the id, so that the ops can
   tail-call it where GCC keeps it out of line.) */
static inline dr_real dr__op1(dr_tape *t, double v, dr_idx a, double d)
{
    dr_real r = {v, DR_NONE};
    if (a == DR_NONE || DR_UNLIKELY(!t))
        return r;
    int64_t ra;
    if (DR_UNLIKELY(!dr__rel_arg(t, a, &ra))) {
        dr__fail(t, DR_EINVAL);
        return r;
    }
    r.idx = dr__push(t, ra, d, -1, 0.0);
    return r;
}

/* The same over a and b: one constant argument gives a node over the other */
static inline dr_real dr__op2(dr_tape *t, double v, dr_idx a, double da,
                              dr_idx b, double db)
{
    dr_real r = {v, DR_NONE};
    if ((a == DR_NONE && b == DR_NONE) || DR_UNLIKELY(!t))
        return r;
    r.idx = dr__rec2(t, a, da, b, db);
    return r;
}

/* guard.c: at dr_join, kid's guards appended to t's (see log/log.h,
   "Fork-join at order 2"); false when memory runs out */
DR_HIDDEN bool dr__guards_adopt(dr_tape *t, const dr_tape *kid);

/* the scalar operations' results on a tape of order 2 (t not NULL): the
   node and its log entry (x, y the arguments' values) written together,
   each through one out-of-line call that the operation tail-calls, so that
   nothing is kept across a call; a new chunk, far arguments or a log to
   grow take the two steps of order 1 (oplog.c) */
DR_HIDDEN dr_real dr__op1_logged(dr_tape *t, int op, double v, dr_idx a,
                                 double d, double x, double y);
DR_HIDDEN dr_real dr__op2_logged(dr_tape *t, int op, double v, dr_idx a,
                                 double da, double x, dr_idx b, double db,
                                 double y);

/* The guards of guard.c, as recording and replay evaluate them: the
   comparisons of a and b; the roundings, whether a rounds to b (a NaN to
   a NaN); the classes of a (b unused) */
enum dr_cmp {
    DR_CMP_LT, DR_CMP_LE, DR_CMP_GT, DR_CMP_GE, DR_CMP_EQ, DR_CMP_NE,
    DR_CMP_FLOOR, DR_CMP_CEIL, DR_CMP_TRUNC, DR_CMP_RINT,
    DR_CMP_ISNAN, DR_CMP_ISINF, DR_CMP_SIGNBIT
};
/* a comparison or rounding op (DR_CMP_*) of a and b, recorded as a guard
   as dr_lt .. dr_signbit record theirs (guard.c); its outcome */
DR_HIDDEN int dr__guard(dr_tape *t, int op, dr_real a, dr_real b);
/* the same result of a rounding: equal with the same sign (a program may
   divide by a rounded zero), or both NaN */
static inline bool dr__same_or_nan(double r, double b)
{
    return (r == b && signbit(r) == signbit(b)) || (isnan(r) && isnan(b));
}
static inline int dr__cmp(int op, double a, double b)
{
    switch (op) {
    case DR_CMP_LT: return a < b;
    case DR_CMP_LE: return a <= b;
    case DR_CMP_GT: return a > b;
    case DR_CMP_GE: return a >= b;
    case DR_CMP_EQ: return a == b;
    case DR_CMP_NE: return a != b;
    case DR_CMP_FLOOR: return dr__same_or_nan(floor(a), b);
    case DR_CMP_CEIL: return dr__same_or_nan(ceil(a), b);
    case DR_CMP_TRUNC: return dr__same_or_nan(trunc(a), b);
    case DR_CMP_RINT: return dr__same_or_nan(rint(a), b);
    case DR_CMP_ISNAN: return isnan(a) != 0;
    case DR_CMP_ISINF: return isinf(a) != 0;
    default: return signbit(a) != 0;
    }
}
/* dr_select's choice: the first value where the condition is > 0 */
static inline bool dr__select_first(double c)
{
    return c > 0.0;
}

/* nary.c: an n-ary node's arguments (relative ids) and partials, for the
   tangent pass; false if e is not an n-ary node */
DR_HIDDEN bool dr__nary_parts(const dr_ext *e, size_t *n, const int64_t **args,
                              const double **partials);
/* the terms of an n-ary entry of the log (DR_OPC_NARY, DR_OPC_SUMN, and
   a linear statement's, DR_OPC_PROG): its record's arguments and
   partials; false where it has none */
/* program.c: a linear statement's terms (DR_OPC_PROG): its leaves (a
   constant's -1, partial 0) and their partials, which never change */
DR_HIDDEN bool dr__prog_terms(const dr_oplog *e, size_t *n,
                              const int64_t **args, const double **partials);
static inline bool dr__oplog_nary(const dr_oplog *e, size_t *n,
                                  const int64_t **args,
                                  const double **partials)
{
    if (e->op == DR_OPC_PROG)
        return dr__prog_terms(e, n, args, partials);
    const dr_ext *x = dr__oplog_terms_of(e);
    return x && dr__nary_parts(x, n, args, partials);
}
/* nary.c: where a far node (two arguments, record/nary.c) keeps its two
   partials, for replay to write; NULL if e is not an n-ary record */
DR_HIDDEN double *dr__nary_partials(dr_ext *e);

#endif /* DR_RECORD_H */
