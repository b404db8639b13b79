/*
 * ancestor_log.c - the out-of-line part of a parallel sweep task's log of
 * adds into its ancestor jobs' adjoints (record.h, dr_anc_log): a new
 * block when the last is full, and the fallback when there is no memory
 * for one.
 */
#include "record/record.h"

void dr__anc_add_slow(dr_sweep *s, int64_t rel, double v)
{
    dr_anc_log *L = s->log;
    /* (blocks are taken under the tape's lock: this runs on any thread of
       the sweep) */
    dr_scratch *b = L ? dr__block_take(s->tape->root) : NULL;
    if (b) {
        if (L->last)
            L->last->next = b;
        else
            L->first = b;
        L->last = b;
        b->data[0] = (double)rel;
        b->data[1] = v;
        L->n = 1;
        return;
    }
    /* no log, or no memory for it: added now, in whatever order the
       siblings reach this adjoint (the entries logged so far are added
       later; the sum agrees to rounding) */
    dr__atomic_add(&s->adj[rel], v);
}
