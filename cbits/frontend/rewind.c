/*
 * rewind.c - taking back what a front end recorded for a value it then
 * dropped (the Haskell front end's minimum and maximum over computed
 * elements keep one of them; the nodes of each element that does not win
 * are dead, and left on the tape they cost their memory and a visit in
 * every sweep).
 *
 * The tape's own save and restore (tape/tape.h) serve a plain root handle:
 * anything that makes a saved position meaningless afterwards (a fork, an
 * open recorder, a failed status, a clear) makes the save refuse or the
 * restore do nothing, which only keeps dead nodes.
 */
#include "frontend/frontend.h"
#include "tape/tape.h"

typedef struct dr_fe_mark {
    dr_tape_pos pos;
    dr_hist *hist;
} dr_fe_mark;

size_t dr_fe_mark_bytes(void)
{
    return sizeof(dr_fe_mark);
}

static bool rewindable(const dr_tape *t)
{
    return t && t->root == t && t->state == 0 && t->rec == NULL &&
           t->parallel == NULL && t->status == DR_OK;
}

int64_t dr_fe_mark_save(dr_tape *t, void *mark)
{
    dr_fe_mark *m = mark;
    if (!rewindable(t))
        return -2;
    dr__tape_save(t, &m->pos);
    m->hist = t->hist;
    return t->base + t->next;
}

int dr_fe_mark_restore(dr_tape *t, const void *mark)
{
    const dr_fe_mark *m = mark;
    if (!rewindable(t) || t->hist != m->hist || t->next < m->pos.next)
        return 0;
    dr__tape_restore(t, &m->pos);
    return 1;
}
