/*
 * hs_rewind.c - taking back what the front end recorded for a value it then
 * dropped (Numeric.DualRev.Internal.Run.Lists, minimumConcatMapD): a
 * minimum or maximum over computed elements keeps one of them, and the
 * nodes of each element that does not win are dead.  Left on the tape they
 * cost their recording's memory and a sweep visit each (every sweep, at
 * order 2 the tangent pass too); kmeans's cost recorded every
 * point-to-centroid distance where only the nearest one matters.
 *
 * The engine's own save and restore (tape/tape.h) are for a plain root
 * handle; anything that makes the position meaningless afterwards (a fork,
 * an open recorder, a failed status, a clear) makes the save refuse or the
 * restore do nothing, which only keeps dead nodes.
 */
#include <dualrev.h>

#include "tape/tape.h"

typedef struct drhs_mark {
    dr_tape_pos pos;
    dr_hist *hist;
} drhs_mark;

DR_API size_t drhs_mark_bytes(void)
{
    return sizeof(drhs_mark);
}

static int rewindable(const dr_tape *t)
{
    return t && t->root == t && t->state == 0 && t->rec == NULL &&
           t->parallel == NULL && t->status == DR_OK;
}

/* The public id the next node will get, with the position saved in m; -2
   where the tape cannot be rewound (nothing saved). */
DR_API int64_t drhs_mark_save(dr_tape *t, drhs_mark *m)
{
    if (!rewindable(t))
        return -2;
    dr__tape_save(t, &m->pos);
    m->hist = t->hist;
    return t->base + t->next;
}

/* Drop every node recorded since the save: 1 if done, 0 if the tape has
   since become one that cannot be rewound (the nodes then stay). */
DR_API int drhs_mark_restore(dr_tape *t, const drhs_mark *m)
{
    if (!rewindable(t) || t->hist != m->hist || t->next < m->pos.next)
        return 0;
    dr__tape_restore(t, &m->pos);
    return 1;
}

/* Counts the nodes recorded lazily, when a thunk is first demanded (the
   on-demand lists of Numeric.DualRev.Internal.Run.Lazy, the overloaded
   arithmetic of code outside any block): such a thunk may be shared by
   code after a rewind, so a stretch of recording during which the count
   moved is kept whole. */
static uint64_t lazy_count;

DR_API void drhs_lazy_note(void)
{
    __atomic_fetch_add(&lazy_count, 1, __ATOMIC_RELAXED);
}

DR_API uint64_t drhs_lazy_count(void)
{
    return __atomic_load_n(&lazy_count, __ATOMIC_RELAXED);
}
