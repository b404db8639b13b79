/*
 * guard.c - what a recorded path depends on (dualrev.h, "replay"): the
 * comparisons dr_lt ... dr_ne, recorded as guards on a tape of order 2,
 * and dr_select, a choice between two values that replays to either side.
 */
#include "record/record.h"


#include <limits.h>
#include <math.h>
#include <stdint.h>

/* room for k more guards on t; false when memory runs out */
static bool guards_room(dr_tape *t, size_t k)
{
    if (k <= t->guards_cap - t->guards_n)
        return true;
    size_t cap = t->guards_cap ? 2 * t->guards_cap : 64;
    while (cap - t->guards_n < k) {
        if (cap > SIZE_MAX / sizeof(dr_guard) / 2)
            return false;
        cap *= 2;
    }
    if (cap > SIZE_MAX / sizeof(dr_guard))
        return false;
    dr_guard *p = dr__log_alloc(t, cap * sizeof *p);
    if (!p)
        return false;
    if (t->guards_n)
        memcpy(p, t->guards, t->guards_n * sizeof *p);
    dr__log_free(t, t->guards);
    dr__bytes_add(t, (ptrdiff_t)((cap - t->guards_cap) * sizeof *p));
    t->guards = p;
    t->guards_cap = cap;
    return true;
}

/* room for one more guard on t; false (and t failed) when memory runs out */
static bool guard_room(dr_tape *t)
{
    if (guards_room(t, 1))
        return true;
    dr__fail(t, DR_ENOMEM);
    return false;
}

bool dr__guards_adopt(dr_tape *t, const dr_tape *kid)
{
    if (!guards_room(t, kid->guards_n))
        return false;
    if (kid->guards_n)
        memcpy(t->guards + t->guards_n, kid->guards,
               kid->guards_n * sizeof *kid->guards);
    t->guards_n += kid->guards_n;
    return true;
}

static int compare(dr_tape *t, int op, dr_real a, dr_real b)
{
    int out = dr__cmp(op, a.val, b.val);
    if (!t || (a.idx == DR_NONE && b.idx == DR_NONE))
        return out;
    int64_t ra, rb;
    if (!dr__rel_arg(t, a.idx, &ra) || !dr__rel_arg(t, b.idx, &rb)) {
        dr__fail(t, DR_EINVAL);
        return out;
    }
    if (dr__order2(t) && guard_room(t))
        t->guards[t->guards_n++] = (dr_guard){ra, rb, a.val, b.val, op, out};
    return out;
}

/* a rounding of a (a guard that a rounds to the same), or a class */
static double rounding(dr_tape *t, int op, dr_real a, double r)
{
    compare(t, op, a, dr_const(r));
    return r;
}

int dr_lt(dr_tape *t, dr_real a, dr_real b) { return compare(t, DR_CMP_LT, a, b); }
int dr_le(dr_tape *t, dr_real a, dr_real b) { return compare(t, DR_CMP_LE, a, b); }
int dr_gt(dr_tape *t, dr_real a, dr_real b) { return compare(t, DR_CMP_GT, a, b); }
int dr_ge(dr_tape *t, dr_real a, dr_real b) { return compare(t, DR_CMP_GE, a, b); }
int dr_eq(dr_tape *t, dr_real a, dr_real b) { return compare(t, DR_CMP_EQ, a, b); }
int dr_ne(dr_tape *t, dr_real a, dr_real b) { return compare(t, DR_CMP_NE, a, b); }
double dr_floor(dr_tape *t, dr_real a) { return rounding(t, DR_CMP_FLOOR, a, floor(a.val)); }
double dr_ceil(dr_tape *t, dr_real a) { return rounding(t, DR_CMP_CEIL, a, ceil(a.val)); }
double dr_trunc(dr_tape *t, dr_real a) { return rounding(t, DR_CMP_TRUNC, a, trunc(a.val)); }
double dr_rint(dr_tape *t, dr_real a) { return rounding(t, DR_CMP_RINT, a, rint(a.val)); }
int dr_isnan(dr_tape *t, dr_real a) { return compare(t, DR_CMP_ISNAN, a, dr_const(0.0)); }
int dr_isinf(dr_tape *t, dr_real a) { return compare(t, DR_CMP_ISINF, a, dr_const(0.0)); }
int dr_signbit(dr_tape *t, dr_real a) { return compare(t, DR_CMP_SIGNBIT, a, dr_const(0.0)); }

int dr__guard(dr_tape *t, int op, dr_real a, dr_real b)
{
    return compare(t, op, a, b);
}

dr_real dr_select(dr_tape *t, dr_real c, dr_real a, dr_real b)
{
    bool first = dr__select_first(c.val);
    dr_real pick = first ? a : b;
    if (!t)
        return pick;
    int64_t rc, ra, rb;
    if (!dr__rel_arg(t, c.idx, &rc) || !dr__rel_arg(t, a.idx, &ra) ||
        !dr__rel_arg(t, b.idx, &rb)) {
        dr__fail(t, DR_EINVAL);
        return dr_const(pick.val);
    }
    /* a constant condition chooses once and for all; at order 1 nothing
       replays, so the chosen value itself will do */
    if (c.idx == DR_NONE || !dr__order2(t))
        return pick;
    /* a node over both sides (even over none: its value still follows the
       condition), logged with the distance back to the condition */
    dr_real r = {pick.val, DR_NONE};
    if (a.idx == DR_NONE && b.idx == DR_NONE)
        r.idx = dr__push(t, -1, 0.0, -1, 0.0);
    else
        r.idx = dr__rec2(t, a.idx, first ? 1.0 : 0.0, b.idx, first ? 0.0 : 1.0);
    if (r.idx == DR_NONE)
        return r;
    /* replay reads the condition's value from the log: it must be the
       one given (an input recorded without one takes it here) */
    int64_t back = (r.idx - t->base) - rc;
    bool replays = back <= INT32_MAX && dr__logged_as(t, rc, c.val);
    dr_oplog *e = dr__oplog(t, r.idx, replays ? DR_OPC_select : DR_OPC_NONE,
                            a.val, b.val, pick.val, a.idx, b.idx);
    if (e && replays)
        e->aux = first ? (int32_t)back : -(int32_t)back;
    return r;
}
