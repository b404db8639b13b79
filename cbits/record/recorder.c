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
}

/* take the cursor back from r, counting the nodes it appended */
static void give_back(dr_tape *t, dr_rec *r)
{
    t->len += (size_t)(r->cur_ - t->cur);
    t->cur = r->cur_;
    t->next = r->next_;
    t->end = t->chunk ? t->chunk->nodes + t->chunk->cap : NULL;
    t->state &= ~DR_ST_REC;
}

/* a recorder that is not open: every push goes to dr__rec_slow, which
   returns a constant */
static void closed(dr_rec *r)
{
    r->cur_ = r->end_ = NULL;
    r->next_ = r->base_ = 0;
    r->tape_ = NULL;
}

void dr__rec_reclaim(dr_tape *t)
{
    dr_rec *r = t->rec;
    give_back(t, r);
    r->end_ = r->cur_;
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
    if (t->order > 1)
        return DR_EINVAL; /* inline code logs nothing for second order */
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
        give_back(t, r);
    t->state &= ~DR_ST_RECOPEN;
    t->rec = NULL;
    closed(r);
    return t->status;
}

dr_idx dr__rec_slow(dr_rec *r, dr_idx a, double da, dr_idx b, double db)
{
    dr_tape *t = r ? r->tape_ : NULL;
    if (!t)
        return DR_NONE;
    /* the tape's own push does the rest: grow, far arguments, errors */
    if (t->state & DR_ST_REC)
        give_back(t, r);
    dr_idx id = dr__rec2(t, a, da, b, db);
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
        give_back(t, r);
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
