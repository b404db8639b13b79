/*
 * dualrev/internal/statements_impl.h - private: the implementation detail of
 * statements (dualrev/recorder.h, which alone includes this header): the
 * inlining and unrolling macros, the out-of-line part of dr_rec_stmt and
 * dr_rec_sum and the combination of two expressions.  Not part of the API;
 * its names (dr__*, DR__*) may change in any version.
 */
#ifndef DUALREV_INTERNAL_STATEMENTS_IMPL_H
#define DUALREV_INTERNAL_STATEMENTS_IMPL_H

#ifndef DUALREV_RECORDER_H
#error "dualrev/internal/ is private: include <dualrev/recorder.h> or <dualrev.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* (expressions are values the compiler must see through, inlined, to keep
   their terms in registers; a call would copy them through memory) */
#if defined(__GNUC__)
#define DR__INLINE static inline __attribute__((always_inline))
#else
#define DR__INLINE static inline
#endif
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define DR__UNROLL _Pragma("GCC unroll 8")
#else
#define DR__UNROLL
#endif

/* Terms past n are never read, and are left unwritten where expressions
   are made on the hot path: zeroing them costs a recorded statement more
   than the rest of its recording (the compiler does not drop the stores).
   Copying an expression copies them; the warning that this may copy
   indeterminate values is turned off for these functions. */
#define DR__EXPR_ZERO {0.0, 0, {0}, {0.0}}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

/* the out-of-line part of dr_rec_stmt and dr_rec_sum: more than two
   arguments (an n-ary node), or a failure to record (st: the sticky
   status to set, n ignored) */
DR_API DR__COLD dr_idx dr__rec_nary(dr_rec *r, size_t n, const dr_idx *ids,
                                    const double *partials, dr_status st);

/* A statement of k > 2 arguments (the terms of e whose id is not DR_NONE,
   merged by dr_rec_stmt) as a chain of k - 1 two-argument nodes: the first
   over the first two arguments, each next one over the node before it
   (partial 1) and the next argument.  The sweep adds each argument's
   partial times the adjoint, as an n-ary node's would, in line: an n-ary
   node costs an arena record and a call in the sweep, more than the nodes
   it saves.  Every check of a push is made for the whole chain first;
   where one fails (an id not on the tape or too far back, a chunk without
   room for the chain, a tape of order 2) the statement goes out of line as
   an n-ary node, which records nothing on an error. */
DR__INLINE dr_idx dr__rec_chain(dr_rec *r, const dr_expr *e, int k)
{
    uint64_t self = (uint64_t)r->next_;
    int slow = r->end_ - r->cur_ < (ptrdiff_t)(k - 1);
    DR__UNROLL
    for (int i = 0; i < e->n; i++)
        if (e->id[i] != DR_NONE) {
            uint64_t o = self - ((uint64_t)e->id[i] - (uint64_t)r->base_);
            /* (o grows by one a node along the chain) */
            slow |= o - 1 >= self || o + (uint64_t)k - 2 > (uint64_t)DR_NEAR_MAX;
        }
    if (DR__UNLIKELY(slow))
        return dr__rec_nary(r, (size_t)e->n, e->id, e->d, DR_OK);
    struct dr__node *n = r->cur_;
    int j = -1; /* the chain's nodes so far, less one */
    DR__UNROLL
    for (int i = 0; i < e->n; i++) {
        if (e->id[i] == DR_NONE)
            continue;
        uint64_t o = self + (uint64_t)(j < 0 ? 0 : j) -
                     ((uint64_t)e->id[i] - (uint64_t)r->base_);
        if (j < 0) { /* the first argument: the first node's a */
            n->da = e->d[i];
            n->a = (int32_t)o;
            j = 0;
        } else {
            if (j > 0) { /* a node over the one before */
                n++;
                n->da = 1.0;
                n->a = 1;
            }
            n->db = e->d[i];
            n->b = (int32_t)o;
            j++;
        }
    }
    r->cur_ = n + 1;
    r->next_ = (int64_t)self + k - 1;
    return r->base_ + (int64_t)self + k - 2;
}

/* e with value v and the terms of a times ca followed by those of b times
   cb (b may be NULL) */
DR__INLINE dr_expr dr__ex_comb(double v, const dr_expr *a, double ca,
                                  const dr_expr *b, double cb)
{
    dr_expr e;
    int nb = b ? b->n : 0;
    e.val = v;
    e.n = a->n + nb;
    if (DR__UNLIKELY(e.n > DR_EXPR_MAX)) {
        dr_expr over = DR__EXPR_ZERO;
        over.val = v;
        over.n = DR_EXPR_MAX + 1;
        return over;
    }
    for (int i = 0; i < a->n; i++) {
        e.id[i] = a->id[i];
        e.d[i] = a->d[i] * ca;
    }
    for (int i = 0; i < nb; i++) {
        e.id[a->n + i] = b->id[i];
        e.d[a->n + i] = b->d[i] * cb;
    }
    return e;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_INTERNAL_STATEMENTS_IMPL_H */
