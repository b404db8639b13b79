/*
 * record.h - recording (cbits/README.md): what a node means, and the calls
 * that append nodes.  One- and two-argument nodes are the hot path (dr__push,
 * dr__op1, dr__op2, inline here; the inline recorder of dualrev.h is their
 * twin); every other kind of node is an extended node, a record in the
 * arena with its own reverse rule (struct dr_ext).  Not installed.
 */
#ifndef DR_RECORD_H
#define DR_RECORD_H

#include "node/node.h"
#include "record/scalar_rules.h"

/* relative id of a public id, or false if it is not on the tape (DR_NONE
   maps to -1 and is accepted) */
static inline bool dr__rel(const dr_tape *t, dr_idx id, int64_t *rel)
{
    /* unsigned: id - base must not overflow (UB) for ids like INT64_MIN */
    uint64_t r = (uint64_t)id - (uint64_t)t->base;
    if (DR_LIKELY(r < (uint64_t)t->next)) {
        *rel = (int64_t)r;
        return true;
    }
    if (id == DR_NONE) {
        *rel = -1;
        return true;
    }
    return false;
}

/* the relative id of an id already checked with dr__rel (-1: DR_NONE) */
static inline int64_t dr__rel_of(const dr_tape *t, dr_idx id)
{
    int64_t r = -1;
    dr__rel(t, id, &r);
    return r;
}

/* the relative ids below this may be a new node's arguments: those under
   t->next, and those an open recorder handed out past it */
static inline uint64_t dr__arg_limit(const dr_tape *t)
{
    uint64_t lim = (uint64_t)t->next;
    if ((t->state & DR_ST_REC) && (uint64_t)t->rec->next_ > lim)
        lim = (uint64_t)t->rec->next_;
    return lim;
}

/* dr__rel for the arguments of a node being recorded: also the ids an open
   recorder handed out since it last took the cursor (t->next is behind
   them until it gives it back); kept out of dr__rel, whose loops over many
   ids in the gradient calls it would slow */
static inline bool dr__rel_arg(const dr_tape *t, dr_idx id, int64_t *rel)
{
    if (DR_LIKELY(dr__rel(t, id, rel)))
        return true;
    uint64_t r = (uint64_t)id - (uint64_t)t->base;
    if (r < dr__arg_limit(t)) {
        *rel = (int64_t)r;
        return true;
    }
    return false;
}

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

/*
 * Second order (dualrev.h, "second order").  While t->order is 2, every
 * node recorded gets an entry in the root's log, by relative id: which
 * operation made it and the values it was made from, so that its tangent
 * can be recorded as operations later (recorded/tangent.c).  Ids no node took
 * (the unused end of a chunk) are DR_OPC_GAP; nodes of a kind with no
 * second-order rule (array operations) are DR_OPC_NONE.  A tape of order 1
 * writes no entries: the scalar operations test t->order once, before
 * their usual tail call.
 */
#define DR_OPC_ENUM(op) DR_OPC_##op,
enum dr_opc {
    DR_OPC_GAP = 0,
    DR_OPC_NONE,   /* no second-order rule                                */
    DR_OPC_INPUT,  /* no arguments                                        */
    DR_OPC_LINEAR, /* given partials x, y of arguments ra, rb (constants) */
    DR_OPC_NARY,   /* given partials in the node's n-ary record           */
    DR_OPC_EXT,    /* an extended node that replays through its record's
                      replay hook or has a second-order rule (reverse2),
                      or both; v: its value (scalar-valued kinds); x:
                      its record (dr__oplog_ext)                          */
    DR_OPC_EXTOUT, /* an output of an external call (the ext node before
                      it, whose replay sets v); no second-order rule     */
    DR_OPC_SUMN,   /* 0 + a0 + a1 + ... of an n-ary sum record (dr_sumn):
                      partials 1, replayed through its hook               */
    DR_OPC_PROG,   /* a statement with its program (record/program.h): x
                      holds its record, v its value                      */
    DR_OPC_powi,   /* x^n: x the argument's value, y = n                  */
    DR_OPC_select, /* ra where the node |aux| back is > 0, else rb     */
    DR_RULES_UNARY(DR_OPC_ENUM) DR_RULES_UNARY_FUSED(DR_OPC_ENUM)
    DR_RULES_BINARY(DR_OPC_ENUM)
    DR_OPC_COUNT
};
#undef DR_OPC_ENUM

typedef struct dr_oplog {
    double x, y;   /* argument values (LINEAR: the partials; INPUT: x is
                      1 where v is the input's value, 0 where the
                      library was not given it; NARY, SUMN: x holds
                      the record, dr__oplog_terms)                     */
    double v;      /* the node's value                                */
    int64_t ra, rb; /* relative ids of the arguments, -1: a constant  */
    int32_t op;    /* enum dr_opc                                     */
    int32_t aux;   /* select: how far back its condition is, negated
                      where it chose the second value; else 0         */
} dr_oplog;

static inline bool dr__order2(const dr_tape *t)
{
    return t && DR_UNLIKELY(t->order > 1);
}
/* log the node id (public) made by op from arguments a, b (public ids,
   DR_NONE: constant) of values x, y with value v; a failure to grow the
   log fails the tape (DR_ENOMEM) */
DR_HIDDEN dr_oplog *dr__oplog(dr_tape *t, dr_idx id, int op, double x,
                              double y, double v, dr_idx a, dr_idx b);
/* what a child's log holds for the ids between where it began to log and
   its first entry (siblings' ids): a gap */
DR_HIDDEN extern const dr_oplog dr__gap_entry;
/* the entry of relative id r in the handle's log (NULL: none) */
static inline const dr_oplog *dr__oplog_at(const dr_tape *t, int64_t r)
{
    int64_t i = r - t->oplog_lo;
    if (r >= 0 && i >= 0 && i < t->oplog_n)
        return &t->oplog[i];
    return r >= t->oplog_start && i < 0 ? &dr__gap_entry : NULL;
}
/* Is v, a value given for the argument of relative id r, the one the log
   holds for r?  Bit for bit, as replay (which reads arguments' values from
   the log) needs.  An input recorded without its value (dr_input_range,
   dr_record0) takes it from the first use that tells it, here or when
   replay first checks a tape (sweep/replay.c), so that a replay that
   fails can set it back.  True where the log cannot tell: no entry (a
   constant, a node of an ancestor job). */
static inline bool dr__same_logged(dr_oplog *log, int64_t i, double v)
{
    dr_oplog *e = &log[i];
    if (e->op == DR_OPC_INPUT && e->x == 0.0) {
        e->v = v;
        e->x = 1.0;
        return true;
    }
    return memcmp(&e->v, &v, sizeof v) == 0;
}
/* the same for an extended node's argument at recording: a kind whose
   arguments fail it is recorded without its replay hook (no replay) */
static inline bool dr__logged_as(dr_tape *t, int64_t r, double v)
{
    int64_t i = r - t->oplog_lo;
    if (r < 0 || i < 0 || i >= t->oplog_n)
        return true;
    return dr__same_logged(t->oplog, i, v);
}
/* An n-ary node's entry (DR_OPC_NARY, DR_OPC_SUMN) keeps its record's
   address in the bytes of x, as a node keeps an ext record's: the tangent
   pass reads its terms there, wherever in the job graph its node lies */
static inline void dr__oplog_terms(dr_oplog *e, dr_ext *x)
{
    if (e)
        memcpy(&e->x, &x, sizeof x);
}
static inline dr_ext *dr__oplog_terms_of(const dr_oplog *e)
{
    dr_ext *x;
    memcpy(&x, &e->x, sizeof x);
    return x;
}
/* log n inputs from relative id r on (values NULL: not given) */
DR_HIDDEN void dr__oplog_inputs(dr_tape *t, int64_t r, size_t n,
                                const double *values);
/* the memory of logs and guards: from any thread while the tape is
   shared, so under its lock (a user's allocator is never entered by two
   threads of one tape at once) */
DR_HIDDEN void *dr__log_alloc(dr_tape *t, size_t bytes);
DR_HIDDEN void dr__log_free(dr_tape *t, void *p);
/* free a child handle's log and guards when the handle goes (its join) */
DR_HIDDEN void dr__logs_free(dr_tape *t);
/*
 * Fork-join at order 2.  A child handle starts at the order of the handle
 * that forked (dr__oplog_child, its log beginning at the fork's mark), and
 * at dr_join a parent of order 2 takes its children's entries into its own
 * log: dr__oplog_cover makes the log hold relative ids lo .. end-1 (lo the
 * fork's mark, end the id counter after the join), then dr__oplog_adopt
 * copies kid's entries of the nodes first .. first+n-1 (a chunk's), those
 * the child recorded at order 1 as DR_OPC_NONE, and dr__guards_adopt
 * appends kid's guards.  The root's log so holds every node of the job
 * graph by relative id, the order in which a node's arguments always come
 * before it.  false when memory runs out.
 */
DR_HIDDEN void dr__oplog_child(dr_tape *kid, unsigned order, int64_t mark);
DR_HIDDEN bool dr__oplog_cover(dr_tape *t, int64_t lo, int64_t end);
DR_HIDDEN bool dr__oplog_adopt(dr_tape *t, const dr_tape *kid, int64_t first,
                               size_t n);
DR_HIDDEN bool dr__guards_adopt(dr_tape *t, const dr_tape *kid);

/* dr__oplog for the node just recorded, whose arguments were checked when
   it was: the log's next entry written in line; a skip over ids no node
   took, or a log to grow, out of line */
static inline void dr__oplog_last(dr_tape *t, dr_idx id, int op, double x,
                                  double y, double v, dr_idx a, dr_idx b)
{
    int64_t i = (id - t->base) - t->oplog_lo;
    if (DR_LIKELY(i == t->oplog_n && (uint64_t)i < t->oplog_cap)) {
        dr_oplog *e = &t->oplog[i];
        e->x = x;
        e->y = y;
        e->v = v;
        e->ra = a == DR_NONE ? -1 : a - t->base;
        e->rb = b == DR_NONE ? -1 : b - t->base;
        e->op = op;
        e->aux = 0;
        t->oplog_n = i + 1;
        return;
    }
    dr__oplog(t, id, op, x, y, v, a, b);
}

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
/* a DR_OPC_EXT entry keeps its record's address in the bytes of x (as a
   node keeps it in da): the numeric Hessian-vector products run the
   record's second-order rule from the log (sweep/hvp.c) */
static inline void dr__oplog_set_ext(dr_oplog *e, dr_ext *x)
{
    memcpy(&e->x, &x, sizeof x);
}
static inline dr_ext *dr__oplog_ext(const dr_oplog *e)
{
    dr_ext *x;
    memcpy(&x, &e->x, sizeof x);
    return x;
}
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
