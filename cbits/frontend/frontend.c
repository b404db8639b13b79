/*
 * frontend.c - the scalar operations for foreign-function front ends
 * (frontend.h): the rules of scalar_rules.h behind plain-double entry points,
 * recorded as scalar_ops.c records them.
 */
#include "frontend/frontend.h"
#include "record/record.h"
#include "record/program.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* order 2 or paused: the two slow cases of every entry point below in one
   8-byte load and compare (fe_paused, 0 or 1, is the 32 bits right after
   order, which is 0, 1 or 2) */
_Static_assert(offsetof(dr_tape, fe_paused) == offsetof(dr_tape, order) + 4,
               "fe_paused must follow order");
static inline bool fe_slow(const dr_tape *t)
{
    uint64_t w;
    memcpy(&w, &t->order, sizeof w);
    return DR_UNLIKELY(w > 1);
}

#define DR_FE_UNARY(op)                                                      \
    double dr_fe_##op(double x) { return dr_rule_##op(x); }                  \
    dr_idx dr_fe_##op##_rec(dr_tape *t, dr_idx a, double x, double v)        \
    {                                                                        \
        if (!t)                                                              \
            return DR_NONE;                                                  \
        double d = dr_rule_##op##_d(x, v);                                   \
        if (fe_slow(t))                                                      \
            return t->fe_paused ? DR_NONE                                    \
                                : dr__op1_logged(t, DR_OPC_##op, v, a, d, x, \
                                                 0.0).idx;                   \
        return dr__op1(t, v, a, d).idx;                                      \
    }
DR_RULES_UNARY(DR_FE_UNARY)
DR_RULES_UNARY_FUSED(DR_FE_UNARY)

#define DR_FE_BINARY(op)                                                     \
    double dr_fe_##op(double x, double y) { return dr_rule_##op(x, y); }     \
    dr_idx dr_fe_##op##_rec(dr_tape *t, dr_idx a, dr_idx b, double x,        \
                            double y, double v)                              \
    {                                                                        \
        if (!t)                                                              \
            return DR_NONE;                                                  \
        dr_rule_d2 d = dr_rule_##op##_d(x, y, v);                            \
        if (fe_slow(t))                                                      \
            return t->fe_paused ? DR_NONE                                    \
                                : dr__op2_logged(t, DR_OPC_##op, v, a, d.a,  \
                                                 x, b, d.b, y).idx;          \
        return dr__op2(t, v, a, d.a, b, d.b).idx;                            \
    }
DR_RULES_BINARY(DR_FE_BINARY)

double dr_fe_powi(double x, double n) { return dr_rule_powi(x, n); }

dr_idx dr_fe_powi_rec(dr_tape *t, dr_idx a, double x, double n, double v)
{
    if (!t)
        return DR_NONE;
    double d = dr_rule_powi_d(x, n, v);
    if (fe_slow(t))
        return t->fe_paused ? DR_NONE
                            : dr__op1_logged(t, DR_OPC_powi, v, a, d, x, n).idx;
    return dr__op1(t, v, a, d).idx;
}

/* A batch of a sum of products as one statement (dr_record_statement),
   where the tape is kept for replay (dr_fe_programs) and needs no second
   order: the leaves are the sum so far and the batch's factors, two by
   two; the value adds their products to it in order, as the front end
   adds them up and dot_logged below logs them, so that the bits are the
   same.  Replay calls it again; one node and 24 bytes a leaf, where the
   products and additions one by one are two logged nodes (144 bytes) a
   pair. */
static double dot_statement(const void *ctx, size_t n, const double *x,
                            double *d)
{
    (void)ctx;
    double s = x[0];
    d[0] = 1.0;
    for (size_t k = 1; k + 1 < n; k += 2) {
        double p = x[k] * x[k + 1];
        dr_rule_d2 r = dr_rule_mul_d(x[k], x[k + 1], p);
        d[k] = r.a;
        d[k + 1] = r.b;
        s = s + p;
    }
    return s;
}

static dr_idx dot_replayable(dr_tape *t, dr_idx acc, double s, size_t n,
                             const dr_idx *ia, const double *xa,
                             const dr_idx *ib, const double *xb)
{
    dr_real x[2 * DR_FE_DOT_CHUNK + 1];
    for (size_t lo = 0; lo < n; lo += DR_FE_DOT_CHUNK) {
        size_t hi = n - lo < DR_FE_DOT_CHUNK ? n : lo + DR_FE_DOT_CHUNK;
        size_t m = 0;
        x[m++] = (dr_real){s, acc};
        for (size_t k = lo; k < hi; k++) {
            x[m++] = (dr_real){xa[k], ia[k]};
            x[m++] = (dr_real){xb[k], ib[k]};
        }
        dr_real r = dr_record_statement(t, dot_statement, NULL, m, x);
        s = r.val;
        /* no active leaf: the constant sum goes on as a constant */
        acc = r.idx;
    }
    return acc;
}

/* order 2: the products and additions one by one, each logged, as the
   front end records them op by op.  A constant product added to an active
   sum is a node too, so that every id's logged value is the value it
   stands for (replay computes each node from its arguments' values) */
static dr_idx dot_logged(dr_tape *t, dr_idx acc, double s, size_t n,
                         const dr_idx *ia, const double *xa, const dr_idx *ib,
                         const double *xb)
{
    for (size_t k = 0; k < n; k++) {
        double p = xa[k] * xb[k];
        dr_rule_d2 d = dr_rule_mul_d(xa[k], xb[k], p);
        dr_idx pi = dr__op2_logged(t, DR_OPC_mul, p, ia[k], d.a, xa[k], ib[k],
                                   d.b, xb[k])
                        .idx;
        double v = s + p;
        if (acc != DR_NONE || pi != DR_NONE) {
            dr_rule_d2 e = dr_rule_add_d(s, p, v);
            acc = dr__op2_logged(t, DR_OPC_add, v, acc, e.a, s, pi, e.b, p)
                      .idx;
        }
        s = v;
    }
    return acc;
}

size_t dr_fe_dot_chunk(void)
{
    return DR_FE_DOT_CHUNK;
}

dr_idx dr_fe_dot_rec(dr_tape *t, dr_idx acc, double s, size_t n,
                     const dr_idx *ia, const double *xa, const dr_idx *ib,
                     const double *xb)
{
    if (!t || t->fe_paused)
        return DR_NONE;
    if (dr__order2(t))
        return t->root->fe_programs
                   ? dot_replayable(t, acc, s, n, ia, xa, ib, xb)
                   : dot_logged(t, acc, s, n, ia, xa, ib, xb);
    /* the sum so far, then up to two terms per product; the partials of a
       sum are 1, those of a product the mul rule's */
    dr_idx id[2 * DR_FE_DOT_CHUNK + 1];
    double d[2 * DR_FE_DOT_CHUNK + 1];
    for (size_t lo = 0; lo < n; lo += DR_FE_DOT_CHUNK) {
        size_t hi = n - lo < DR_FE_DOT_CHUNK ? n : lo + DR_FE_DOT_CHUNK;
        size_t m = 0;
        id[m] = acc;
        d[m++] = 1.0;
        for (size_t k = lo; k < hi; k++) {
            dr_rule_d2 p = dr_rule_mul_d(xa[k], xb[k], xa[k] * xb[k]);
            if (ia[k] != DR_NONE) {
                id[m] = ia[k];
                d[m++] = p.a;
            }
            if (ib[k] != DR_NONE) {
                id[m] = ib[k];
                d[m++] = p.b;
            }
        }
        if (m > 1)
            acc = dr__record_terms(t, m, id, d);
    }
    return acc;
}

size_t dr_fe_stmt_max(void) { return DR_FE_STMT_MAX; }

/* one leaf of a statement into its chain (dr_fe_stmt): the first active
   leaf waits in *y, each later one links it to a new node; false once a
   node could not be recorded */
static inline __attribute__((always_inline)) bool
stmt_link(dr_tape *t, size_t *k, dr_idx *y, double *dy, dr_idx a, double d)
{
    if (a == DR_NONE)
        return true;
    if ((*k)++ == 0) {
        *y = a;
        *dy = d;
        return true;
    }
    /* dr__rec2, whose push stays in line here (the call and the
       spills around it were a third of a statement's time) */
    int64_t ry, ra;
    if (DR_UNLIKELY(!dr__rel_arg(t, *y, &ry) || !dr__rel_arg(t, a, &ra))) {
        dr__fail(t, DR_EINVAL);
        *y = DR_NONE;
        return false;
    }
    *y = dr__push(t, ry, *dy, ra, d);
    *dy = 1.0;
    return *y != DR_NONE;
}

int dr_fe_pause(dr_tape *t, int paused)
{
    if (!t)
        return 0;
    int was = t->fe_paused;
    t->fe_paused = paused != 0 ? 1u : 0u;
    return was;
}

dr_status dr_fe_programs(dr_tape *t, int on)
{
    if (!t || t != t->root)
        return DR_EINVAL;
    t->fe_programs = on != 0;
    return DR_OK;
}

dr_idx dr_fe_prog(dr_tape *t, const unsigned char *code, double v,
                  dr_idx a0, double x0, dr_idx a1, double x1, dr_idx a2,
                  double x2, dr_idx a3, double x3, dr_idx a4, double x4,
                  dr_idx a5, double x5)
{
    if (!t || t->fe_paused)
        return DR_NONE;
    /* (a statement the front end wrote no program for, or a tape not
       kept for replay) */
    if (!code || !t->root->fe_programs)
        return DR_FE_STMT_BY_OPS;
    if (code[0] > DR_FE_STMT_MAX) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    const dr_idx ids[DR_FE_STMT_MAX] = {a0, a1, a2, a3, a4, a5};
    const double xs[DR_FE_STMT_MAX] = {x0, x1, x2, x3, x4, x5};
    /* a statement that would not replay to the front end's value is
       recorded by operations instead */
    double w;
    bool refused;
    dr_idx id = dr__record_prog(t, code, ids, xs, &v, &w, &refused);
    return refused ? DR_FE_STMT_BY_OPS : id;
}

/* a statement of n leaves (n a constant where the entry points below
   inline it, so each compiles to straight-line code over its register
   arguments) */
static inline __attribute__((always_inline)) dr_idx
stmt(dr_tape *t, size_t n, dr_idx a0, double d0, dr_idx a1, double d1,
     dr_idx a2, double d2, dr_idx a3, double d3, dr_idx a4, double d4,
     dr_idx a5, double d5)
{
    if (DR_UNLIKELY(!t))
        return DR_NONE;
    if (fe_slow(t))
        return t->fe_paused ? DR_NONE : DR_FE_STMT_BY_OPS;
    /* the active leaves as a chain of two-argument nodes, each over the
       one before it (partial 1) and the next leaf: k - 1 nodes for k > 1
       leaves, recorded in one call, and as cheap to sweep as any; an n-ary
       node would cost an arena record and an indirect call in the sweep,
       more than the few nodes it saves */
    size_t k = 0;
    dr_idx y = DR_NONE;
    double dy = 0.0;
    if (n == 0)
        return DR_NONE;
    if (!(stmt_link(t, &k, &y, &dy, a0, d0) &&
          (n < 2 || stmt_link(t, &k, &y, &dy, a1, d1)) &&
          (n < 3 || stmt_link(t, &k, &y, &dy, a2, d2)) &&
          (n < 4 || stmt_link(t, &k, &y, &dy, a3, d3)) &&
          (n < 5 || stmt_link(t, &k, &y, &dy, a4, d4)) &&
          (n < 6 || stmt_link(t, &k, &y, &dy, a5, d5))))
        return DR_NONE; /* an id not on the tape: the tape's DR_EINVAL */
    if (k == 1) /* one leaf: its node */
        y = dr__rec2(t, y, dy, DR_NONE, 0.0);
    return y;
}

dr_idx dr_fe_stmt(dr_tape *t, size_t n, dr_idx a0, double d0, dr_idx a1,
                  double d1, dr_idx a2, double d2, dr_idx a3, double d3,
                  dr_idx a4, double d4, dr_idx a5, double d5)
{
    return stmt(t, n, a0, d0, a1, d1, a2, d2, a3, d3, a4, d4, a5, d5);
}

dr_idx dr_fe_stmt2(dr_tape *t, dr_idx a0, double d0, dr_idx a1, double d1)
{
    return stmt(t, 2, a0, d0, a1, d1, DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                DR_NONE, 0);
}

dr_idx dr_fe_stmt3(dr_tape *t, dr_idx a0, double d0, dr_idx a1, double d1,
                   dr_idx a2, double d2)
{
    return stmt(t, 3, a0, d0, a1, d1, a2, d2, DR_NONE, 0, DR_NONE, 0,
                DR_NONE, 0);
}

dr_status dr_fe_adjoint_record(dr_tape *t, dr_idx from, double yv, dr_idx yi,
                               size_t n, const dr_idx *x, dr_real *out)
{
    dr_real y = {yv, yi};
    return dr_adjoint_record(t, from, y, n, x, out);
}

dr_status dr_fe_tangent_record(dr_tape *t, dr_idx from, size_t k,
                               const dr_idx *seed_ids, const dr_real *seeds,
                               double yv, dr_idx yi, dr_real *out)
{
    dr_real y = {yv, yi};
    return dr_tangent_record(t, from, k, seed_ids, seeds, y, out);
}

/* keep (first, n) at the end of t's notes; any from first on are dropped
   (a restore drops its own; this keeps the notes sorted, which the look-up's
   binary search needs, whatever order ids come in) */
static void note_range(dr_tape *t, dr_idx first, size_t n)
{
    while (t->fe_ranges_n && t->fe_ranges[t->fe_ranges_n - 1].first >= first)
        t->fe_ranges_n--;
    if (t->fe_ranges_n == t->fe_ranges_cap) {
        size_t cap = t->fe_ranges_cap ? 2 * t->fe_ranges_cap : 64;
        if (cap > SIZE_MAX / sizeof(dr_fe_range))
            return;
        dr_fe_range *p = dr__malloc(cap * sizeof *p);
        if (!p)
            return;
        for (size_t i = 0; i < t->fe_ranges_n; i++)
            p[i] = t->fe_ranges[i];
        dr__free(t->fe_ranges);
        dr__bytes_add(t, (ptrdiff_t)((cap - t->fe_ranges_cap) * sizeof *p));
        t->fe_ranges = p;
        t->fe_ranges_cap = cap;
    }
    t->fe_ranges[t->fe_ranges_n].first = first;
    t->fe_ranges[t->fe_ranges_n].n = n;
    t->fe_ranges_n++;
}

dr_idx dr_fe_input_range(dr_tape *t, size_t n)
{
    dr_idx first = DR_NONE;
    if (dr_input_range(t, n, &first) == DR_OK && first != DR_NONE &&
        t->root == t && t->state == 0)
        note_range(t, first, n);
    return first;
}

size_t dr_fe_input_len(dr_tape *t, dr_idx first)
{
    if (!t || t->root != t)
        return 0;
    const dr_fe_range *r = t->fe_ranges;
    size_t k = t->fe_cursor;
    if (k >= t->fe_ranges_n || r[k].first != first) {
        size_t lo = 0, hi = t->fe_ranges_n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (r[mid].first < first)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == t->fe_ranges_n || r[lo].first != first)
            return 0;
        k = lo;
    }
    t->fe_cursor = k + 1;
    return r[k].n;
}

/* guards and roundings (record/guard.c) */

double dr_fe_round(dr_tape *t, int op, double a, dr_idx ia)
{
    dr_real x = {a, ia};
    switch (op) {
    case DR_CMP_FLOOR: return dr_floor(t, x);
    case DR_CMP_CEIL: return dr_ceil(t, x);
    case DR_CMP_TRUNC: return dr_trunc(t, x);
    case DR_CMP_RINT: return dr_rint(t, x);
    default: return a;
    }
}

int dr_fe_guard(dr_tape *t, int op, double a, dr_idx ia, double b, dr_idx ib)
{
    if (op < DR_CMP_LT || op > DR_CMP_SIGNBIT)
        return 0;
    dr_real x = {a, ia}, y = {b, ib};
    return dr__guard(t, op, x, y);
}
