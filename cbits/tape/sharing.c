/*
 * sharing.c - what a tape needs once several threads record on it (made at
 * its first fork): the lock over the root's shared lists, and one free list
 * per pool thread for chunk affinity (tape.h).
 */
#include "tape/tape.h"

struct dr_sharing {
    pthread_mutex_t lock;
    unsigned started;      /* slots handed out (atomic)                  */
    unsigned epoch;        /* generation: slots of older ones are void;
                              unique in the process (next_epoch)         */
    unsigned nslots;       /* 1 + slots in sfree (0: none allocated)     */
    dr_chunk **sfree;      /* [slot * DR_CHUNK_CLASSES + class]: free
                              chunks last recorded by the thread of slot */
};

/* Epochs come from one counter for the whole process: a thread's cached
   slot names its tape's sharing by address and epoch, and a tape freed and
   another made at the same address must not look like the same
   generation (the thread would keep a slot that a new thread is also
   handed; a parallel sweep's per-slot buffers rely on slots being one
   thread's each). */
static unsigned next_epoch(void)
{
    static unsigned epochs;
    return __atomic_add_fetch(&epochs, 1, __ATOMIC_RELAXED);
}

bool dr__sharing_start(dr_tape *R)
{
    if (R->sharing)
        return true;
    struct dr_sharing *S = dr__malloc(sizeof *S);
    if (!S)
        return false;
    memset(S, 0, sizeof *S);
    S->epoch = next_epoch();
    if (pthread_mutex_init(&S->lock, NULL) != 0) {
        dr__free(S);
        return false;
    }
    R->sharing = S;
    dr__bytes_add(R, (ptrdiff_t)sizeof *S);
    return true;
}

void dr__sharing_free(dr_tape *R)
{
    struct dr_sharing *S = R->sharing;
    if (!S)
        return;
    dr__free(S->sfree);
    pthread_mutex_destroy(&S->lock);
    dr__free(S);
    R->sharing = NULL;
}

void dr__lock(dr_tape *R)
{
    if (R->sharing)
        pthread_mutex_lock(&R->sharing->lock);
}

void dr__unlock(dr_tape *R)
{
    if (R->sharing)
        pthread_mutex_unlock(&R->sharing->lock);
}

pthread_mutex_t *dr__lock_mutex(dr_tape *R)
{
    return &R->sharing->lock;
}

/* ------------------------------------------------------- chunk affinity */

/* the size of the per-slot free lists of nslots slots */
static size_t slot_lists_bytes(unsigned nslots)
{
    return (size_t)nslots * DR_CHUNK_CLASSES * sizeof(dr_chunk *);
}

/* Which thread this is: a slot number 1.. handed out on a thread's first
   use of the tape's slots (the pool's workers at their start; the threads
   that call dr_fork_run or record on child handles, such as the Haskell
   front end's capabilities, when they first take a chunk); 0 when the
   slots have run out.  One tape at a time per thread: a thread that
   alternates between tapes only loses the affinity. */
static __thread struct dr_sharing *tls_sharing;
static __thread unsigned tls_epoch, tls_slot;

unsigned dr__slot(dr_tape *R)
{
    struct dr_sharing *S = R->sharing;
    if (tls_sharing == S && tls_epoch == S->epoch)
        return tls_slot;
    if (!S->sfree)
        return 0;
    unsigned s = __atomic_add_fetch(&S->started, 1, __ATOMIC_RELAXED);
    tls_sharing = S;
    tls_epoch = S->epoch;
    tls_slot = s < S->nslots ? s : 0;
    return tls_slot;
}

bool dr__slots_open(dr_tape *R, unsigned nslots)
{
    struct dr_sharing *S = R->sharing;
    S->sfree = dr__malloc(slot_lists_bytes(nslots));
    if (!S->sfree)
        return false;
    S->nslots = nslots;
    memset(S->sfree, 0, slot_lists_bytes(nslots));
    dr__bytes_add(R, (ptrdiff_t)slot_lists_bytes(nslots));
    return true;
}

void dr__slots_close(dr_tape *R)
{
    struct dr_sharing *S = R->sharing;
    S->started = 0;
    S->epoch = next_epoch();
    if (!S->sfree)
        return;
    for (unsigned s = 1; s < S->nslots; s++)
        for (unsigned k = 0; k < DR_CHUNK_CLASSES; k++)
            for (dr_chunk *c = S->sfree[s * DR_CHUNK_CLASSES + k]; c;) {
                dr_chunk *nx = c->next;
                c->slot = 0;
                c->next = R->free[k];
                R->free[k] = c;
                c = nx;
            }
    dr__bytes_add(R, -(ptrdiff_t)slot_lists_bytes(S->nslots));
    dr__free(S->sfree);
    S->sfree = NULL;
    S->nslots = 0;
}

dr_chunk *dr__slot_take_chunk(dr_tape *R, unsigned cls, unsigned slot,
                              size_t cap)
{
    struct dr_sharing *S = R->sharing;
    if (!S->sfree)
        return NULL;
    unsigned lo = slot ? slot : 1, hi = slot ? slot + 1 : S->nslots;
    for (unsigned s = lo; s < hi && s < S->nslots; s++) {
        dr_chunk *c = dr__pop_fit(&S->sfree[s * DR_CHUNK_CLASSES + cls], cap);
        if (c)
            return c;
    }
    return NULL;
}

void dr__slots_recycle_begin(dr_tape *R)
{
    struct dr_sharing *S = R->sharing;
    if (S->sfree)
        memset(S->sfree, 0, slot_lists_bytes(S->nslots));
}

bool dr__slot_keep_chunk(dr_tape *R, dr_chunk *c, unsigned cls)
{
    struct dr_sharing *S = R->sharing;
    if (!S->sfree || c->slot >= S->nslots)
        return false;
    dr_chunk **head = &S->sfree[c->slot * DR_CHUNK_CLASSES + cls];
    c->next = *head;
    *head = c;
    return true;
}
