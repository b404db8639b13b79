/*
 * recorded_ops.h - what the passes recorded as operations share: the
 * partials of every scalar operation as values
 * recorded on the tape (rule_partials.h over recorded operations), and
 * the small arithmetic the recorded passes make of them: the tangent pass
 * (tangent.c) and the adjoint pass (adjoint.c), which record a derivative
 * as operations so that it can be differentiated in turn.  Terms known to
 * be zero or one are skipped, so a pass records only what it needs.
 * Included by those two files only.
 */
#ifndef DR_RECORDED_OPS_H
#define DR_RECORDED_OPS_H

#include "recorded/recorded.h"
#include "record/program.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const dr_real ZERO = {0.0, DR_NONE};

static inline bool is_zero(dr_real d)
{
    return d.idx == DR_NONE && d.val == 0.0;
}

/* a constant, built in place: dr_const is a call into another file, and
   the stores of its result, read back as one, stalled the recorded passes
   (a fifth of a nested forward derivative's time in `perf annotate`) */
static inline dr_real K(double v)
{
    dr_real r = {v, DR_NONE};
    return r;
}

/* p * d, skipping what is known to be zero or one */
static inline dr_real term(dr_tape *t, dr_real p, dr_real d)
{
    if (is_zero(d) || is_zero(p))
        return ZERO;
    if (p.idx == DR_NONE && p.val == 1.0)
        return d;
    if (p.idx == DR_NONE && p.val == -1.0)
        return dr_neg(t, d);
    return dr_mul(t, p, d);
}

static inline dr_real plus(dr_tape *t, dr_real a, dr_real b)
{
    if (is_zero(a))
        return b;
    if (is_zero(b))
        return a;
    return dr_add(t, a, b);
}

/* x to the integral power m, recorded: m - 1 of powi(x, INT_MIN) is no
   int, a power with a constant exponent then */
static inline dr_real powi_rec(dr_tape *t, dr_real x, double m)
{
    return m >= (double)INT_MIN ? dr_powi(t, x, (int)m)
                                : dr_pow(t, x, K(m));
}

/* the partials of a two-argument operation as recorded values */
typedef struct {
    dr_real a, b;
} rec_d2;

/* the rules of rule_partials.h over recorded operations on t: the
   partials of a scalar operation as values on the tape, which can be
   differentiated in turn */
#define RT dr_real
#define RD2 rec_d2
#define RULE_FN(op) dr_tangent_##op##_d
#define RULE_TAPE dr_tape *t,
#define RULE_ARGS t,
#define RULE_BEGIN (void)t
#define RULE_LIKELY(c) (c)
#define K(c) ((dr_real){(c), DR_NONE})
#define RV(r) ((r).val)
#define KZERO(r) ((r).idx == DR_NONE && (r).val == 0.0)
#define ADD(a, b) dr_add(t, a, b)
#define SUB(a, b) dr_sub(t, a, b)
#define MUL(a, b) dr_mul(t, a, b)
#define DIV(a, b) dr_div(t, a, b)
#define NEG(a) dr_neg(t, a)
#define ABS(a) dr_abs(t, a)
#define SQRT(a) dr_sqrt(t, a)
#define EXP(a) dr_exp(t, a)
#define LOG(a) dr_log(t, a)
#define SIN(a) dr_sin(t, a)
#define COS(a) dr_cos(t, a)
#define SINH(a) dr_sinh(t, a)
#define COSH(a) dr_cosh(t, a)
#define HYPOT(a, b) dr_hypot(t, a, b)
#define POW(a, b) dr_pow(t, a, b)
#define POWI(a, m) powi_rec(t, a, m)
#define SIGMOID(a) dr_sigmoid(t, a)
#include "rules/rule_partials.h"

/*
 * The partials of a scalar operation op at its arguments a (and b) and
 * its value c, as recorded values.  b of powi is its exponent, a constant.
 */
static inline void partials(dr_tape *t, int op, dr_real a, dr_real b, dr_real c,
                     dr_real *pa, dr_real *pb)
{
    *pa = *pb = ZERO;
    switch (op) {
#define UNARY(o)                                                                 case DR_OPC_##o:                                                                 *pa = dr_tangent_##o##_d(t, a, c);                                           break;
        DR_RULES_UNARY(UNARY)
        DR_RULES_UNARY_FUSED(UNARY)
#undef UNARY
#define BINARY(o)                                                                case DR_OPC_##o: {                                                               rec_d2 d = dr_tangent_##o##_d(t, a, b, c);                                   *pa = d.a;                                                                   *pb = d.b;                                                                   break;                                                                   }
        DR_RULES_BINARY(BINARY)
#undef BINARY
    case DR_OPC_powi:
        *pa = dr_tangent_powi_d(t, a, b.val, c);
        break;
    default: /* no scalar rule: check_pass refused it */
        break;
    }
}

static inline dr_real value_node(const dr_tape *t, int64_t r, double v)
{
    dr_real a = {v, r < 0 ? DR_NONE : t->base + r};
    return a;
}





/* What both recorded passes check before anything else, so that a bad call
   changes nothing: a live handle that is not forked and has no open
   recorder, no sticky status, y on the tape (its relative id into *hi),
   and `from` on it or the next id (into *lo). */
static inline dr_status dr__recorded_range(const dr_tape *t, dr_idx from,
                                           dr_real y, int64_t *lo,
                                           int64_t *hi)
{
    if (t->state & (DR_ST_FORKED | DR_ST_RECOPEN))
        return DR_EBUSY;
    if (t->status != DR_OK)
        return t->status;
    if (!dr__rel(t, y.idx, hi))
        return DR_EINVAL;
    if (from == t->base + t->next)
        *lo = t->next;
    else if (!dr__rel(t, from, lo) || *lo < 0)
        return DR_EINVAL;
    return DR_OK;
}

/* every node from lo to hi has a rule for the pass (the adjoint pass's,
   or the tangent pass's: an extended node's hook), or is one the pass
   takes as given (marked[r - lo]: a seed, a variable) */
static inline dr_status dr__rules_cover(const dr_tape *t, int64_t lo,
                                        int64_t hi, const bool *marked,
                                        bool adjoint)
{
    for (int64_t r = lo; r <= hi; r++) {
        const dr_oplog *e = dr__oplog_at(t, r);
        if (marked[r - lo])
            continue;
        if (e && e->op == DR_OPC_EXT) {
            const dr_ext *x = dr__oplog_ext(e);
            if (adjoint ? !x->adjoint_record : !x->tangent_record)
                return DR_ENOTSUP;
        } else if (!e || e->op == DR_OPC_NONE || e->op == DR_OPC_EXTOUT) {
            return DR_ENOTSUP;
        }
    }
    return DR_OK;
}

/* A node before a pass's range that the pass keeps a value for (a variable
   of the adjoint pass, a seed of the tangent pass): its relative id and
   the value, in an array sorted by id. */
typedef struct rel_value {
    int64_t rel;
    dr_real v;
} rel_value;

static int by_rel(const void *x, const void *y)
{
    int64_t a = ((const rel_value *)x)->rel, b = ((const rel_value *)y)->rel;
    return (a > b) - (a < b);
}

/* A pass over at most SMALL_SPAN nodes with at most SMALL_N variables or
   seeds keeps its arrays on the stack: a derivative taken inside an inner
   loop (an optimisation's gradient at every step) is a pass over a few
   dozen nodes, and four allocations and frees were a sixth of it. */
enum { SMALL_SPAN = 128, SMALL_N = 16 };

typedef struct pass_arrays {
    int64_t *rel;       /* the n variables' or seeds' relative ids     */
    rel_value *before;  /* those before the range (n of room)          */
    dr_real *val;       /* a value for each node of the range          */
    bool *mark;         /* ... and a mark (a variable, a seed)         */
    int64_t rel_s[SMALL_N];
    rel_value before_s[SMALL_N];
    dr_real val_s[SMALL_SPAN];
    bool mark_s[SMALL_SPAN];
} pass_arrays;

/* the arrays for n ids and a range of span nodes, the marks cleared;
   false: out of memory (pass_arrays_free still to be called) */
static inline bool pass_arrays_get(pass_arrays *a, size_t n, size_t span)
{
    if (n <= SMALL_N) {
        a->rel = a->rel_s;
        a->before = a->before_s;
    } else {
        a->rel = dr__malloc(n * sizeof *a->rel);
        a->before = dr__malloc(n * sizeof *a->before);
    }
    if (span <= SMALL_SPAN) {
        a->val = a->val_s;
        a->mark = a->mark_s;
    } else {
        a->val = dr__malloc(span * sizeof *a->val);
        a->mark = dr__malloc(span * sizeof *a->mark);
    }
    if (!a->rel || !a->before || !a->val || !a->mark)
        return false;
    memset(a->mark, 0, span * sizeof *a->mark);
    return true;
}

static inline void pass_arrays_free(pass_arrays *a)
{
    if (a->rel != a->rel_s) {
        dr__free(a->rel);
        dr__free(a->before);
    }
    if (a->val != a->val_s) {
        dr__free(a->val);
        dr__free(a->mark);
    }
}

/* b[0..nb) sorted by id (a few: by insertion, no call per comparison) */
static inline void sort_by_rel(rel_value *b, size_t nb)
{
    if (nb > SMALL_N) {
        qsort(b, nb, sizeof *b, by_rel);
        return;
    }
    for (size_t i = 1; i < nb; i++) {
        rel_value v = b[i];
        size_t j = i;
        for (; j > 0 && b[j - 1].rel > v.rel; j--)
            b[j] = b[j - 1];
        b[j] = v;
    }
}

/* the entry of id r in b[0..nb), sorted; NULL: none */
static inline rel_value *find_rel(rel_value *b, size_t nb, int64_t r)
{
    size_t lo = 0, hi = nb;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (b[m].rel < r)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < nb && b[lo].rel == r ? &b[lo] : NULL;
}

#endif /* DR_RECORDED_OPS_H */
