/*
 * dualrev/internal/recorder_impl.h - private: the implementation detail of the
 * inline recorder (dualrev/recorder.h, which alone includes this header):
 * the out-of-line part of a push and the inline pushes of one node.  Not
 * part of the API; its names (dr__*, DR__*) may change in any version.
 */
#ifndef DUALREV_INTERNAL_RECORDER_IMPL_H
#define DUALREV_INTERNAL_RECORDER_IMPL_H

#ifndef DUALREV_RECORDER_H
#error "dualrev/internal/ is private: include <dualrev/recorder.h> or <dualrev.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* one tape node as the library lays it out (24 bytes: the partials with
   respect to the two arguments, and the arguments as offsets back from
   the node); the inline pushes below write it */
struct dr__node {
    double da, db;
    int32_t a, b;
};

#if defined(__GNUC__)
#define DR__COLD __attribute__((cold))
#else
#define DR__COLD
#endif
/* which operation a recorder's push is (private): the out-of-line part
   records a node on a tape of order 2 through the tape's own operation */
enum {
    DR__REC_ADD,
    DR__REC_SUB,
    DR__REC_MUL,
    DR__REC_DIV,
    DR__REC_NEG,
    DR__REC_GIVEN /* given partials: dr_rec_record1/2, statements */
};
/* the out-of-line part of a recorder's push of node (a, da, b, db): a full
   chunk, an argument not on the tape or further back than DR_NEAR_MAX, a
   failed dr_rec_begin, and every push on a tape of order 2, which records
   operation op of the operands x and y as it was written (x a constant
   where the inline code pushed a node over y alone) */
DR_API DR__COLD dr_idx dr__rec_slow(dr_rec *r, dr_idx a, double da,
                                    dr_idx b, double db, int op, dr_real x,
                                    dr_real y);
/* the same for given partials (DR__REC_GIVEN), which need no operands:
   the inline code of statements keeps fewer values for it */
DR_API DR__COLD dr_idx dr__rec_slow_given(dr_rec *r, dr_idx a, double da,
                                          dr_idx b, double db);

#ifndef DR_NEAR_MAX /* (arguments further back are recorded out of line) */
#define DR_NEAR_MAX INT32_MAX
#endif
#if defined(__GNUC__)
#define DR__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DR__UNLIKELY(x) (x)
#endif

/* Append a node over ids a and b (neither DR_NONE; dr__rec_push1: no b,
   its partial db goes to the sweep's sink as with the tape calls).  The
   distance back from the new node to an id that is not on the tape (never
   recorded, from before a clear) falls outside 1 .. next, one further back
   than DR_NEAR_MAX is recorded out of line, and so is a full chunk. */
static inline dr_idx dr__rec_push2(dr_rec *r, dr_idx a, double da, dr_idx b,
                                   double db, int op, dr_real x, dr_real y)
{
    uint64_t self = (uint64_t)r->next_;
    uint64_t oa = self - ((uint64_t)a - (uint64_t)r->base_);
    uint64_t ob = self - ((uint64_t)b - (uint64_t)r->base_);
    if (DR__UNLIKELY(oa - 1 >= self || ob - 1 >= self ||
                     (oa | ob) > (uint64_t)DR_NEAR_MAX || r->cur_ == r->end_))
        return op == DR__REC_GIVEN ? dr__rec_slow_given(r, a, da, b, db)
                                   : dr__rec_slow(r, a, da, b, db, op, x, y);
    struct dr__node *n = r->cur_;
    n->da = da;
    n->db = db;
    n->a = (int32_t)oa;
    n->b = (int32_t)ob;
    r->cur_ = n + 1;
    r->next_ = (int64_t)self + 1;
    return r->base_ + (int64_t)self;
}
static inline dr_idx dr__rec_push1(dr_rec *r, dr_idx a, double da, double db,
                                   int op, dr_real x, dr_real y)
{
    uint64_t self = (uint64_t)r->next_;
    uint64_t oa = self - ((uint64_t)a - (uint64_t)r->base_);
    if (DR__UNLIKELY(oa - 1 >= self || oa > (uint64_t)DR_NEAR_MAX ||
                     r->cur_ == r->end_))
        return op == DR__REC_GIVEN
                   ? dr__rec_slow_given(r, a, da, DR_NONE, db)
                   : dr__rec_slow(r, a, da, DR_NONE, db, op, x, y);
    struct dr__node *n = r->cur_;
    n->da = da;
    n->db = db;
    n->a = (int32_t)oa;
    n->b = 0;
    r->cur_ = n + 1;
    r->next_ = (int64_t)self + 1;
    return r->base_ + (int64_t)self;
}

/* a node over a and b with partials da, db, put as the tape calls put it:
   a constant argument records nothing, two record nothing at all */
static inline dr_real dr__rec_binary(dr_rec *r, int op, double v, dr_real a,
                                     double da, dr_real b, double db)
{
    dr_real y;
    y.val = v;
    if (a.idx != DR_NONE)
        y.idx = b.idx != DR_NONE
                    ? dr__rec_push2(r, a.idx, da, b.idx, db, op, a, b)
                    : dr__rec_push1(r, a.idx, da, db, op, a, b);
    else if (b.idx != DR_NONE)
        y.idx = dr__rec_push1(r, b.idx, db, 0.0, op, a, b);
    else
        y.idx = DR_NONE;
    return y;
}

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_INTERNAL_RECORDER_IMPL_H */
