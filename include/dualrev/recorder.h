/*
 * dualrev/recorder.h - inline recording (dr_rec: static inline operations
 * that append nodes through a recorder for hot loops in C) and statements
 * (dr_expr, dr_sum: a whole expression recorded as one node).  The
 * implementation detail they need is in dualrev/internal/, which only
 * this header includes.
 */
#ifndef DUALREV_RECORDER_H
#define DUALREV_RECORDER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ inline recording
 * A recorder is for hot loops in C.  dr_rec_begin takes the tape's recording
 * cursor into a dr_rec, a local variable of the caller, and the static
 * inline operations below append their nodes through it: a few stores and no
 * call per node, with the cursor in registers.  Recording a dot product this
 * way takes about a third less time than calling dr_add and dr_mul (about 4
 * against 6 ns per element): a call per node costs a round trip of the
 * cursor through memory.  dr_rec_end gives the cursor back.
 *
 *     dr_rec r;
 *     dr_rec_begin(t, &r);
 *     dr_real acc = dr_const(0.0);
 *     for (size_t i = 0; i < n; i++)
 *         acc = dr_rec_add(&r, acc, dr_rec_mul(&r, x[i], y[i]));
 *     dr_status st = dr_rec_end(&r);
 *
 * The nodes, ids and values are exactly those of the same calls of dr_add,
 * dr_sub, dr_mul, dr_div and dr_neg, and errors behave the same: an id that
 * is not on the tape sets the tape's sticky status and gives a constant.
 * dr_rec_record1 / dr_rec_record2 append a node with partials the caller
 * computed (as dr_record1 / dr_record2), for any other operation.
 *
 * While a recorder is open, every other recording call on the same handle
 * still works (dr_sin, dr_input, array operations, ...): it takes the
 * cursor back, and the recorder's next operation borrows it again, so the
 * ids of either are arguments of the other and come out in program order.
 * That costs a call out of line each time the cursor changes hands, so keep
 * the hot loop on the recorder.  What needs the whole tape refuses with
 * DR_EBUSY until dr_rec_end: sweeping, seeding, reading gradients, clearing,
 * forking, and a second recorder.  dr_tape_len does not count the
 * recorder's nodes before dr_rec_end (or the next call on the tape).  A
 * recorder belongs to one tape handle (a root or a child handle) and one
 * thread; end it before dr_tape_free.
 *
 * On a handle of order 2 (see "second order") a recorder works too, but
 * it gains nothing there: each of its operations goes out of line to the
 * tape's own (dr_rec_add to dr_add, ..., dr_rec_record1/2 to dr_record2,
 * statements to dr_recordn's node), which records the same node and logs
 * it for second derivatives and replay as that call does; so nodes a
 * recorder made replay and have second derivatives exactly where the
 * calls' do (given partials: linear, and no replay).  The value it
 * returns is the one computed inline, which is the tape operation's (the
 * same rule in the same arithmetic; a compiler that contracts a * b + c
 * into one rounding where the caller's code was compiled would make them
 * differ, and replay then refuses, DR_ENOTSUP).  Its order cannot be set
 * to 2 while a recorder is open (DR_EBUSY); set to 1, the recorder's
 * next operations are inline again, at order 1.
 *
 * The fields of dr_rec and of struct dr__node are private: they are the
 * library's node layout, so code compiled with these inline functions must
 * run with the library version it was compiled against.
 */

/* a tape node as the library lays it out: private, defined in
   internal/recorder_impl.h */
struct dr__node;

/** A recorder (fields private). */
typedef struct dr_rec {
    struct dr__node *cur_, *end_;
    int64_t next_, base_;
    dr_tape *tape_;
} dr_rec;

/**
 * Open a recorder r on tape handle t.  DR_EINVAL if r or t is NULL or t is a
 * joined child handle; DR_EBUSY if t is forked or already has a recorder
 * open.  If r itself is the recorder open on t, DR_EBUSY and r stays open
 * and working; otherwise, on failure r is still usable: its operations
 * return constants (without touching any tape's status).  (A recorder open
 * on another tape must be ended before it is begun again.)
 */
DR_API dr_status dr_rec_begin(dr_tape *t, dr_rec *r);
/**
 * Close recorder r and give the cursor back to its tape; returns the tape's
 * sticky status (DR_EINVAL if r is NULL or not open).
 */
DR_API dr_status dr_rec_end(dr_rec *r);

/* the private part of the recorder: its pushes, inline and out of line */
#include "internal/recorder_impl.h"

/** dr_add through recorder r. */
static inline dr_real dr_rec_add(dr_rec *r, dr_real a, dr_real b)
{
    return dr__rec_binary(r, DR__REC_ADD, a.val + b.val, a, 1.0, b, 1.0);
}
/** dr_sub through recorder r. */
static inline dr_real dr_rec_sub(dr_rec *r, dr_real a, dr_real b)
{
    return dr__rec_binary(r, DR__REC_SUB, a.val - b.val, a, 1.0, b, -1.0);
}
/** dr_mul through recorder r. */
static inline dr_real dr_rec_mul(dr_rec *r, dr_real a, dr_real b)
{
    return dr__rec_binary(r, DR__REC_MUL, a.val * b.val, a, b.val, b, a.val);
}
/** dr_div through recorder r. */
static inline dr_real dr_rec_div(dr_rec *r, dr_real a, dr_real b)
{
    double q = a.val / b.val;
    return dr__rec_binary(r, DR__REC_DIV, q, a, 1.0 / b.val, b, -q / b.val);
}
/** dr_neg through recorder r. */
static inline dr_real dr_rec_neg(dr_rec *r, dr_real a)
{
    dr_real none = {0.0, DR_NONE};
    return dr__rec_binary(r, DR__REC_NEG, -a.val, a, -1.0, none, 0.0);
}
/**
 * A node for a one-argument operation with value v and partial da, through
 * recorder r: dr_record1 with the value carried, except that a constant
 * argument records nothing (as an operation; dr_record1(t, DR_NONE, ...)
 * records a node without arguments) and gives the constant v.
 */
static inline dr_real dr_rec_record1(dr_rec *r, double v, dr_real a,
                                     double da)
{
    dr_real none = {0.0, DR_NONE};
    return dr__rec_binary(r, DR__REC_GIVEN, v, a, da, none, 0.0);
}
/** The same for two arguments (dr_record2 with the value carried). */
static inline dr_real dr_rec_record2(dr_rec *r, double v, dr_real a,
                                     double da, dr_real b, double db)
{
    return dr__rec_binary(r, DR__REC_GIVEN, v, a, da, b, db);
}

/* ------------------------------------------------------------ statements
 * A statement is a whole expression recorded as ONE node: its value and,
 * for each active argument, the partial derivative of the whole expression
 * with respect to it (as CoDiPack's expression templates record an
 * assignment).  A dr_expr is an expression under construction: a value
 * and a short list of terms (argument id, partial).  The dr_ex_*
 * functions below combine expressions and apply the chain rule as they
 * go, so the partials of a nested sub-expression are multiplied through
 * at record time and nothing is recorded until dr_rec_stmt emits the
 * node, through a recorder:
 *
 *     // v' = v + dt * (-0.5 p - 0.2 v): one node over v and p
 *     dr_expr a = dr_ex_add(dr_ex_scale(-0.5, dr_ex(p)),
 *                           dr_ex_scale(-0.2, dr_ex(v)));
 *     v = dr_rec_stmt(&r, dr_ex_add(dr_ex(v), dr_ex_scale(dt, a)));
 *
 * dr_rec_stmt drops constant arguments and merges repeated ones (v above
 * has one argument with partial 1 - 0.2 dt), then appends nodes over what
 * is left: nothing for none (the result is a constant), one node for one
 * or two arguments, and for k more a chain of k - 1 two-argument nodes
 * (each over the one before and the next argument), all inline; the
 * result is the last node.  Fewer nodes make a smaller tape and a shorter
 * sweep; the gradient agrees with recording each operation to rounding,
 * and with an n-ary node of the same partials (dr_recordn) to the bit.
 * (Where a chain would need a node out of line, a full chunk or an
 * argument too far back, the statement is one n-ary node instead.)
 *
 * An expression holds at most DR_EXPR_MAX terms: each dr_ex of an active
 * or constant dr_real is one, dr_ex_const none, and a combination has the
 * terms of both sides (a repeated argument counts each time).  One with
 * more does not overflow: it is marked, and dr_rec_stmt then records
 * nothing, sets the tape's sticky status to DR_ERANGE and returns the
 * constant value.  Ids are checked when the node is appended, as the
 * recorder's operations check them (DR_EINVAL, a constant result, and no
 * node recorded).  The
 * term count of an expression is known where it is written, so the
 * compiler can keep its terms in registers.
 *
 * Long sums (a dot product and a bias, one statement per neuron) have too
 * many terms for a dr_expr: a dr_sum collects terms into arrays the caller
 * provides, and dr_rec_sum records them as one node (dr_sum_* below).
 */
#define DR_EXPR_MAX 8

/** An expression under construction (see "statements"; fields private). */
typedef struct dr_expr {
    double val;
    int n; /* terms; DR_EXPR_MAX + 1 once too many were combined */
    dr_idx id[DR_EXPR_MAX];
    double d[DR_EXPR_MAX];
} dr_expr;

/* the private part of statements (and why the warnings below are off:
   DR__EXPR_ZERO there) */
#include "internal/statements_impl.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

/** The expression a (one term: a itself, partial 1). */
DR__INLINE dr_expr dr_ex(dr_real a)
{
    dr_expr e;
    e.val = a.val;
    e.n = 1;
    e.id[0] = a.idx;
    e.d[0] = 1.0;
    return e;
}
/** The constant expression v (no terms). */
DR__INLINE dr_expr dr_ex_const(double v)
{
    dr_expr e = DR__EXPR_ZERO;
    e.val = v;
    e.n = 0;
    return e;
}
/** a + b */
DR__INLINE dr_expr dr_ex_add(dr_expr a, dr_expr b)
{
    return dr__ex_comb(a.val + b.val, &a, 1.0, &b, 1.0);
}
/** a - b */
DR__INLINE dr_expr dr_ex_sub(dr_expr a, dr_expr b)
{
    return dr__ex_comb(a.val - b.val, &a, 1.0, &b, -1.0);
}
/** a * b */
DR__INLINE dr_expr dr_ex_mul(dr_expr a, dr_expr b)
{
    return dr__ex_comb(a.val * b.val, &a, b.val, &b, a.val);
}
/** a / b */
DR__INLINE dr_expr dr_ex_div(dr_expr a, dr_expr b)
{
    double q = a.val / b.val;
    return dr__ex_comb(q, &a, 1.0 / b.val, &b, -q / b.val);
}
/** -a */
DR__INLINE dr_expr dr_ex_neg(dr_expr a)
{
    return dr__ex_comb(-a.val, &a, -1.0, NULL, 0.0);
}
/** c * a for a constant c (no term for c) */
DR__INLINE dr_expr dr_ex_scale(double c, dr_expr a)
{
    return dr__ex_comb(c * a.val, &a, c, NULL, 0.0);
}
/**
 * f(a) for a one-argument function f the caller evaluates: v = f(a.val)
 * and d = f'(a.val) (for example dr_ex_fn(a, sin(a.val), cos(a.val))).
 */
DR__INLINE dr_expr dr_ex_fn(dr_expr a, double v, double d)
{
    return dr__ex_comb(v, &a, d, NULL, 0.0);
}

/**
 * Record expression e as one node through recorder r and return its value
 * and id (see "statements"): constant arguments dropped, repeated ones
 * merged; a constant if no argument is left.  Too many terms: DR_ERANGE
 * (sticky) and the constant value.
 */
DR__INLINE dr_real dr_rec_stmt(dr_rec *r, dr_expr e)
{
    dr_real y;
    y.val = e.val;
    y.idx = DR_NONE;
    if (DR__UNLIKELY(e.n > DR_EXPR_MAX)) {
        dr__rec_nary(r, 0, NULL, NULL, DR_ERANGE);
        return y;
    }
    /* merge each repeated argument into its first occurrence (the later
       ones become constants), then take the first two arguments left; the
       loops have bounds the compiler knows, and unrolled they are
       straight-line code over registers */
    int k = 0;
    dr_idx a = DR_NONE, b = DR_NONE;
    double da = 0.0, db = 0.0;
    DR__UNROLL
    for (int i = 0; i < e.n; i++) {
        DR__UNROLL
        for (int j = 0; j < i; j++)
            if (e.id[i] != DR_NONE && e.id[j] == e.id[i]) {
                e.d[j] += e.d[i];
                e.id[i] = DR_NONE;
            }
    }
    DR__UNROLL
    for (int i = 0; i < e.n; i++)
        if (e.id[i] != DR_NONE) {
            if (k == 0) {
                a = e.id[i];
                da = e.d[i];
            } else if (k == 1) {
                b = e.id[i];
                db = e.d[i];
            }
            k++;
        }
    if (k == 1)
        y.idx = dr__rec_push1(r, a, da, 0.0, DR__REC_GIVEN, y, y);
    else if (k == 2)
        y.idx = dr__rec_push2(r, a, da, b, db, DR__REC_GIVEN, y, y);
    else if (k > 2)
        y.idx = dr__rec_chain(r, &e, k);
    return y;
}

/** A long sum under construction (see "statements"; fields private). */
typedef struct dr_sum {
    double val;
    size_t n, cap;
    dr_idx *id;
    double *d;
} dr_sum;

/**
 * Start an empty sum (value 0) that keeps up to cap terms in the caller's
 * arrays ids[0..cap-1] and partials[0..cap-1], which must stay valid until
 * dr_rec_sum.  A sum given more terms than cap records nothing: dr_rec_sum
 * then sets DR_ERANGE, as for an expression with too many terms.
 */
static inline void dr_sum_init(dr_sum *s, size_t cap, dr_idx *ids,
                               double *partials)
{
    s->val = 0.0;
    s->n = 0;
    s->cap = cap;
    s->id = ids;
    s->d = partials;
}
/** Add the expression e to the sum s. */
DR__INLINE void dr_sum_add(dr_sum *s, dr_expr e)
{
    s->val += e.val;
    if (DR__UNLIKELY(e.n > DR_EXPR_MAX || s->n + (size_t)e.n > s->cap)) {
        s->n = s->cap + 1;
        return;
    }
    for (int i = 0; i < e.n; i++) {
        s->id[s->n + (size_t)i] = e.id[i];
        s->d[s->n + (size_t)i] = e.d[i];
    }
    s->n += (size_t)e.n;
}
/** Add the product a * b to the sum s (two terms). */
DR__INLINE void dr_sum_mul(dr_sum *s, dr_real a, dr_real b)
{
    s->val += a.val * b.val;
    if (DR__UNLIKELY(s->n + 2 > s->cap)) {
        s->n = s->cap + 1;
        return;
    }
    s->id[s->n] = a.idx;
    s->d[s->n] = b.val;
    s->id[s->n + 1] = b.idx;
    s->d[s->n + 1] = a.val;
    s->n += 2;
}
/**
 * Record the sum s as one node through recorder r and return its value and
 * id.  Constant terms are dropped; repeated arguments are kept as they are
 * (an n-ary node adds each term's share).  A sum that got more terms than
 * its capacity: DR_ERANGE (sticky) and the constant value.
 */
DR_API dr_real dr_rec_sum(dr_rec *r, const dr_sum *s);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_RECORDER_H */
