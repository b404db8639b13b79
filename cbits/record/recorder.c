/*
 * recorder.c - dr_rec: the tape's recording cursor lent to inline code
 * (dualrev.h, "inline recording").
 *
 * While a recorder holds the cursor (DR_ST_REC), the tape's own end pointer
 * equals its cursor, so a push by any tape call takes the slow path
 * (dr__grow_n), which takes the cursor back (dr__rec_reclaim) and records as
 * usual; the recorder's end pointer is then set to its cursor, so its own
 * next push takes dr__rec_slow, which borrows the cursor again.  Ids the
 * recorder handed out are valid arguments of tape calls meanwhile
 * (dr__rel_arg).  The calls that need the whole tape (sweeps, clearing,
 * forking) refuse while a recorder is open (DR_ST_RECOPEN).
 *
 * On a handle of order 2 the recorder's end pointer is kept at its cursor,
 * so every push of the inline code takes dr__rec_slow, which records the
 * operation the inline code names through the tape's own (dr_add, ...,
 * dr_record2), logged for second order and replay as they log it; the
 * recorder itself then never holds a node.  Its order cannot become 2
 * while it is open (dr_tape_set_order: DR_EBUSY); it may become 1, and
 * the next push takes the cursor at order 1, inline again.
 */
#include "record/record.h"

/* lend the cursor to r */
static void take(dr_tape *t, dr_rec *r)
{
    r->cur_ = t->cur;
    r->end_ = t->end;
    r->next_ = t->next;
    r->base_ = t->base;
    t->end = t->cur;
    t->state |= DR_ST_REC;
    /* at order 2 every push goes out of line, to be logged there */
    if (dr__order2(t))
        r->end_ = r->cur_;
}

/* a recorder that is not open: every push goes to dr__rec_slow, which
   returns a constant */
static void closed(dr_rec *r)
{
    r->cur_ = r->end_ = NULL;
    r->next_ = r->base_ = 0;
    r->tape_ = NULL;
}

dr_status dr_rec_begin(dr_tape *t, dr_rec *r)
{
    if (!r)
        return DR_EINVAL;
    /* r already open on t: refuse before touching r, which holds t's
       cursor (wiping it would lose the cursor and leave t busy for ever) */
    if (t && t->rec == r)
        return DR_EBUSY;
    closed(r);
    if (!t || (t->state & DR_ST_DEAD))
        return DR_EINVAL;
    if (t->state & (DR_ST_FORKED | DR_ST_PSWEEP | DR_ST_RECOPEN))
        return DR_EBUSY;
    r->tape_ = t;
    t->rec = r;
    t->state |= DR_ST_RECOPEN;
    take(t, r);
    return DR_OK;
}

dr_status dr_rec_end(dr_rec *r)
{
    if (!r || !r->tape_)
        return DR_EINVAL;
    dr_tape *t = r->tape_;
    if (t->state & DR_ST_REC)
        dr__rec_give_back(t, r);
    t->state &= ~DR_ST_RECOPEN;
    t->rec = NULL;
    closed(r);
    return t->status;
}

/* a recorder's operation on a tape of order 2: the tape's own, which logs
   it (the values it computes are the inline code's: the same rules) */
static dr_idx logged(dr_tape *t, int op, dr_idx a, double da, dr_idx b,
                     double db, dr_real x, dr_real y)
{
    switch (op) {
    case DR__REC_ADD:
        return dr_add(t, x, y).idx;
    case DR__REC_SUB:
        return dr_sub(t, x, y).idx;
    case DR__REC_MUL:
        return dr_mul(t, x, y).idx;
    case DR__REC_DIV:
        return dr_div(t, x, y).idx;
    case DR__REC_NEG:
        return dr_neg(t, x).idx;
    default: /* DR__REC_GIVEN */
        return dr_record2(t, a, da, b, db);
    }
}

dr_idx dr__rec_slow_given(dr_rec *r, dr_idx a, double da, dr_idx b,
                          double db)
{
    dr_real none = {0.0, DR_NONE}; /* (given partials: no operands read) */
    return dr__rec_slow(r, a, da, b, db, DR__REC_GIVEN, none, none);
}

dr_idx dr__rec_slow(dr_rec *r, dr_idx a, double da, dr_idx b, double db,
                    int op, dr_real x, dr_real y)
{
    dr_tape *t = r ? r->tape_ : NULL;
    if (!t)
        return DR_NONE;
    /* the tape's own push does the rest: grow, far arguments, errors */
    if (t->state & DR_ST_REC)
        dr__rec_give_back(t, r);
    dr_idx id = dr__order2(t) ? logged(t, op, a, da, b, db, x, y)
                              : dr__rec2(t, a, da, b, db);
    take(t, r);
    return id;
}

dr_idx dr__rec_nary(dr_rec *r, size_t n, const dr_idx *ids,
                    const double *partials, dr_status st)
{
    dr_tape *t = r ? r->tape_ : NULL;
    if (!t)
        return DR_NONE;
    if (st != DR_OK) {
        dr__fail(t, st);
        return DR_NONE;
    }
    if (t->state & DR_ST_REC)
        dr__rec_give_back(t, r);
    dr_idx id = dr__record_terms(t, n, ids, partials);
    take(t, r);
    return id;
}

dr_real dr_rec_sum(dr_rec *r, const dr_sum *s)
{
    dr_real y = {s ? s->val : 0.0, DR_NONE};
    if (!s) {
        dr__rec_nary(r, 0, NULL, NULL, DR_EINVAL);
        return y;
    }
    if (s->n > s->cap) {
        dr__rec_nary(r, 0, NULL, NULL, DR_ERANGE);
        return y;
    }
    y.idx = dr__rec_nary(r, s->n, s->id, s->d, DR_OK);
    return y;
}
