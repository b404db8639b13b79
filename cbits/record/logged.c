/*
 * logged.c - scalar operations recorded at order 2 (record.h,
 * dr__op1_logged and dr__op2_logged): the node and its log entry written
 * together, on the fast path; the log itself is log/oplog.c's.
 */
#include "record/record.h"

#include <stdint.h>

/* two adjacent int32_t fields (p the first), the low and high halves of
   lo_hi, in one store, not two (an entry's op and aux: 2% of fdotprod's
   and fneural's recording at order 2) */
static inline void put_pair(int32_t *p, uint64_t lo_hi)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &lo_hi, sizeof lo_hi);
#else
    p[0] = (int32_t)(uint32_t)lo_hi;
    p[1] = (int32_t)(uint32_t)(lo_hi >> 32);
#endif
}
_Static_assert(offsetof(dr_oplog, aux) == offsetof(dr_oplog, op) + 4,
               "put_pair: op and aux side by side");

/* The node of a scalar operation and its entry, both at their next slot,
   over relative ids ra, rb (-1: a constant): true where the chunk has
   room, the arguments are near and the log's next entry is this node's.
   The node holds its active arguments in order (a constant first argument
   left out, record.h dr__rec2). */
static inline bool push_logged(dr_tape *t, int op, double v, int64_t ra,
                               double da, double x, int64_t rb, double db,
                               double y, dr_idx *id)
{
    dr_node *n = t->cur;
    int64_t self = t->next;
    uint64_t i = (uint64_t)(self - t->oplog_lo);
    uint64_t oa = ra < 0 ? 0 : (uint64_t)(self - ra);
    uint64_t ob = rb < 0 ? 0 : (uint64_t)(self - rb);
    if (DR_UNLIKELY(n == t->end || (oa | ob) > (uint64_t)DR_NEAR_MAX ||
                    i != (uint64_t)t->oplog_n || i >= t->oplog_cap))
        return false;
    dr_oplog *e = &t->oplog[i];
    e->x = x;
    e->y = y;
    e->v = v;
    e->ra = ra;
    e->rb = rb;
    put_pair(&e->op, (uint32_t)op); /* (aux 0) */
    t->oplog_n = (int64_t)i + 1;
    bool first = ra >= 0;
    n->da = first ? da : db;
    n->db = first ? db : 0.0;
    n->a = (int32_t)(first ? oa : ob);
    n->b = (int32_t)(first ? ob : 0);
    t->cur = n + 1;
    t->len++;
    t->next = self + 1;
    *id = t->base + self;
    return true;
}

/* the two steps of order 1 where push_logged cannot: a new chunk, far
   arguments, a log to grow or a gap to skip; kept out of the operations'
   path so that it saves no registers */
static __attribute__((noinline, cold)) dr_real
logged_slow(dr_tape *t, int op, double v, dr_idx a, dr_idx b, int64_t na,
            double da, int64_t nb, double db, double x, double y)
{
    dr_real r = {v, dr__push(t, na, da, nb, db)};
    if (r.idx != DR_NONE)
        dr__oplog_last(t, r.idx, op, x, y, v, a, b);
    return r;
}

static __attribute__((noinline, cold)) dr_real bad_arg(dr_tape *t, double v)
{
    dr_real r = {v, DR_NONE};
    dr__fail(t, DR_EINVAL);
    return r;
}

dr_real dr__op1_logged(dr_tape *t, int op, double v, dr_idx a, double d,
                       double x, double y)
{
    dr_real r = {v, DR_NONE};
    if (a == DR_NONE)
        return r;
    int64_t ra;
    if (DR_UNLIKELY(!dr__rel_arg(t, a, &ra)))
        return bad_arg(t, v);
    if (DR_LIKELY(push_logged(t, op, v, ra, d, x, -1, 0.0, y, &r.idx)))
        return r;
    return logged_slow(t, op, v, a, DR_NONE, ra, d, -1, 0.0, x, y);
}

dr_real dr__op2_logged(dr_tape *t, int op, double v, dr_idx a, double da,
                       double x, dr_idx b, double db, double y)
{
    dr_real r = {v, DR_NONE};
    if (a == DR_NONE && b == DR_NONE)
        return r;
    int64_t ra, rb;
    if (DR_UNLIKELY(!dr__rel_arg(t, a, &ra) || !dr__rel_arg(t, b, &rb)))
        return bad_arg(t, v);
    if (DR_LIKELY(push_logged(t, op, v, ra, da, x, rb, db, y, &r.idx)))
        return r;
    if (ra < 0) /* (the node's first argument is the second) */
        return logged_slow(t, op, v, a, b, rb, db, -1, 0.0, x, y);
    return logged_slow(t, op, v, a, b, ra, da, rb, db, x, y);
}
