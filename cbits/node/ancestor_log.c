/*
 * ancestor_log.c - the out-of-line part of a parallel sweep task's log of
 * adds into its ancestor jobs' adjoints (node.h, dr_anc_log): a new
 * block when the last is full, or the tape failed when there is no memory
 * for one; and the task's buffers for ancestors' ext storage.
 */
#include "node/node.h"

void dr__anc_add_slow(dr_sweep *s, int64_t rel, double v)
{
    dr_anc_log *L = s->log;
    /* (blocks are taken under the tape's lock: this runs on any thread of
       the sweep) */
    unsigned cls = 0;
    if (L && L->last)
        while (cls + 1 < DR_BLOCK_CLASSES &&
               (size_t)DR_SCRATCH_BLOCK << cls <= L->last->cap)
            cls++;
    dr_scratch *b = L ? dr__block_take(s->tape->root, cls) : NULL;
    if (b) {
        if (L->last)
            L->last->next = b;
        else
            L->first = b;
        L->last = b;
        b->data[0] = (double)rel;
        b->data[1] = v;
        L->n = 1;
        L->cap = ((size_t)DR_SCRATCH_BLOCK << cls) / 2;
        return;
    }
    /* no log, or no memory for it: the add cannot be made (the adjoint is
       one the forking task may be adding a sibling's log into right now),
       so the sweep fails */
    dr__fail(s->tape, DR_ENOMEM);
}

double *dr__anc_buf(dr_sweep *s, dr_ext *e, size_t n, bool *fresh)
{
    dr_anc_log *L = s->log;
    *fresh = false;
    if (!L) {
        dr__fail(s->tape, DR_EINVAL);
        return NULL;
    }
    /* most recent first, and a hit moves to the front: a rule's operands
       are found at once however many arrays the task reaches */
    if (L->direct && e->acc_into) {
        size_t len;
        return e->acc_into(e, L->direct, fresh, &len);
    }
    dr_scratch **list = L->bufs_at ? L->bufs_at : &L->bufs;
    for (dr_scratch **pp = list; *pp; pp = &(*pp)->next) {
        dr_scratch *b = *pp;
        if (b->owner == e) {
            *pp = b->next;
            b->next = *list;
            *list = b;
            return b->data;
        }
    }
    dr_scratch *b = dr__scratch_take(s->tape->root, n);
    if (!b) {
        dr__fail(s->tape, DR_ENOMEM);
        return NULL;
    }
    b->owner = e;
    b->next = *list;
    *list = b;
    *fresh = true;
    return b->data;
}
