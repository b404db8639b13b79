/*
 * log.h - the second-order log (cbits/README.md): beside the nodes a
 * handle records at order 2, an entry per node by relative id saying which
 * operation made it and from which values, which second order and replay
 * read; its storage (oplog.c), the entries' kinds, and how a child's log
 * joins its parent's.  Recording writes the entries (record/); the passes
 * read them (sweep/, recorded/, drivers/).  Not installed.
 */
#ifndef DR_LOG_H
#define DR_LOG_H

#include "node/node.h"
#include "rules/scalar_rules.h"

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
 * the child recorded at order 1 as DR_OPC_NONE (and record/guard.c's
 * dr__guards_adopt appends kid's guards).  The root's log so holds every node of the job
 * graph by relative id, the order in which a node's arguments always come
 * before it.  false when memory runs out.
 */
DR_HIDDEN void dr__oplog_child(dr_tape *kid, unsigned order, int64_t mark);
DR_HIDDEN bool dr__oplog_cover(dr_tape *t, int64_t lo, int64_t end);
DR_HIDDEN bool dr__oplog_adopt(dr_tape *t, const dr_tape *kid, int64_t first,
                               size_t n);

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
#endif /* DR_LOG_H */
