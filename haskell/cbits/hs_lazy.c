/*
 * hs_lazy.c - what the Haskell front end must know before it takes back
 * the nodes of a value it dropped (Numeric.DualRev.Internal.Run.Library.Lists,
 * minimumConcatMapD, through the engine's dr_fe_mark_save and
 * dr_fe_mark_restore, cbits/frontend/rewind.c): whether anything was
 * recorded lazily meanwhile.
 */
#include <dualrev.h>

#include <stdint.h>

/* Counts the nodes recorded lazily, when a thunk is first demanded (the
   on-demand lists of Numeric.DualRev.Internal.Run.Library.Lazy, the overloaded
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
