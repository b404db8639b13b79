/*
 * recorder.c - dr_rec: the tape's recording cursor lent to inline code
 * (dualrev.h, "inline recording").  While lent, the tape's own end pointer
 * equals its cursor, so any other push on the handle takes the slow path,
 * which refuses with DR_EBUSY; the whole-tape calls refuse on the state bit.
 */
#include "internal.h"

/* lend the cursor to r */
static void take(dr_tape *t, dr_rec *r)
{
    r->cur_ = t->cur;
    r->end_ = t->end;
    r->next_ = t->next;
    r->base_ = t->base;
    r->tape_ = t;
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

dr_status dr_rec_begin(dr_tape *t, dr_rec *r)
{
    if (!r)
        return DR_EINVAL;
    closed(r);
    if (!t || (t->state & DR_ST_DEAD))
        return DR_EINVAL;
    if (t->state & (DR_ST_FORKED | DR_ST_PSWEEP | DR_ST_REC))
        return DR_EBUSY;
    take(t, r);
    return DR_OK;
}

dr_status dr_rec_end(dr_rec *r)
{
    if (!r || !r->tape_)
        return DR_EINVAL;
    dr_tape *t = r->tape_;
    give_back(t, r);
    closed(r);
    return t->status;
}

dr_idx dr__rec_slow(dr_rec *r, dr_idx a, double da, dr_idx b, double db)
{
    dr_tape *t = r ? r->tape_ : NULL;
    if (!t)
        return DR_NONE;
    /* the tape's own push does the rest: grow, far arguments, errors */
    give_back(t, r);
    dr_idx id = dr__rec2(t, a, da, b, db);
    take(t, r);
    return id;
}
