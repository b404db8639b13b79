/*
 * arena.c - the bump arena that holds extended nodes' records and array
 * data (valid until clear), and the root's spare scratch buffers.
 */
#include "tape/tape.h"

#include <stdint.h>

static dr_arena_block *new_block(dr_tape *R, size_t cap)
{
    dr_arena_block *b = dr__malloc(sizeof *b);
    if (!b)
        return NULL;
    void *raw;
    unsigned char *data = dr__malloc_aligned(cap, &raw);
    if (!data) {
        dr__free(b);
        return NULL;
    }
    b->next = NULL;
    b->used = 0;
    b->cap = cap;
    b->data = data;
    b->raw = raw;
    b->bytes = cap + 64 + sizeof *b;
    b->all = R->blocks;
    R->blocks = b;
    dr__bytes_add(R, (ptrdiff_t)b->bytes);
    return b;
}

static void *arena_alloc(dr_tape *t, size_t need)
{
    dr_arena_block *b = t->arena;
    if (!b || b->cap - b->used < need) {
        if (t->state & DR_ST_DEAD)
            return NULL;
        dr_tape *R = t->root;
        bool shared = dr__shared(t) && !(t->state & DR_ST_PSWEEP);
        if (shared)
            dr__lock(R);
        /* first fit among the free blocks */
        dr_arena_block **pp = &R->arena_free;
        while (*pp && (*pp)->cap < need)
            pp = &(*pp)->next;
        if (*pp) {
            b = *pp;
            *pp = b->next;
        } else {
            size_t cap = DR_ARENA_MIN;
            if (t->arena && t->arena->cap <= SIZE_MAX / 4)
                cap = t->arena->cap * 2;
            if (cap < need)
                cap = need;
            b = new_block(R, cap);
        }
        if (shared)
            dr__unlock(R);
        if (!b)
            return NULL;
        b->used = 0;
        b->next = NULL;
        t->arena = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    return p;
}

void *dr__arena_alloc(dr_tape *t, size_t bytes)
{
    if (bytes > SIZE_MAX / 2) {
        dr__fail(t, DR_ENOMEM);
        return NULL;
    }
    size_t need = (bytes + 63) & ~(size_t)63;
    if (need == 0)
        need = 64;
    void *p;
    if (DR_UNLIKELY(t->state & DR_ST_PSWEEP)) {
        /* ext reverse rules allocating during a parallel sweep */
        dr__lock(t->root);
        p = arena_alloc(t, need);
        dr__unlock(t->root);
    } else {
        p = arena_alloc(t, need);
    }
    if (!p)
        dr__fail(t, (t->state & DR_ST_DEAD) ? DR_EINVAL : DR_ENOMEM);
    return p;
}


/* a new buffer of n doubles; NULL when out of memory.  Called under the
   lock, as all allocation while other threads may use the tape: the user's
   allocator need not be thread-safe. */
static dr_scratch *scratch_new(dr_tape *R, size_t n)
{
    if (n > SIZE_MAX / sizeof(double) - 64)
        return NULL;
    dr_scratch *b = dr__malloc(sizeof *b);
    if (!b)
        return NULL;
    b->data = dr__malloc_aligned((n ? n : 1) * sizeof(double), &b->raw);
    if (!b->data) {
        dr__free(b);
        return NULL;
    }
    b->cap = n;
    /* what was allocated: the record, the data and the slack that aligns it
       (dr__malloc_aligned), so that dr_tape_bytes is what freeing gives back */
    dr__bytes_add(R, (ptrdiff_t)(sizeof *b + (n ? n : 1) * sizeof(double) +
                              DR_ALIGN_SLACK));
    return b;
}

dr_scratch *dr__scratch_take(dr_tape *R, size_t n)
{
    dr__lock(R);
    dr_scratch **pp = &R->scratch;
    while (*pp && (*pp)->cap < n)
        pp = &(*pp)->next;
    dr_scratch *b = *pp;
    if (b)
        *pp = b->next;
    else
        b = scratch_new(R, n);
    dr__unlock(R);
    return b;
}

dr_scratch *dr__block_take(dr_tape *R, unsigned cls)
{
    dr__lock(R);
    dr_scratch *b = R->block_spare[cls];
    if (b)
        R->block_spare[cls] = b->next;
    else
        b = scratch_new(R, (size_t)DR_SCRATCH_BLOCK << cls);
    dr__unlock(R);
    if (b)
        b->next = NULL;
    return b;
}

void dr__blocks_give(dr_tape *R, dr_scratch *first, dr_scratch *last)
{
    last->next = NULL;
    dr__lock(R);
    for (dr_scratch *b = first, *nx; b; b = nx) {
        nx = b->next;
        unsigned cls = 0;
        while ((size_t)DR_SCRATCH_BLOCK << cls < b->cap)
            cls++;
        b->next = R->block_spare[cls];
        R->block_spare[cls] = b;
    }
    dr__unlock(R);
}

void dr__scratch_give(dr_tape *R, dr_scratch *b)
{
    dr__lock(R);
    b->owner = NULL;
    b->next = R->scratch;
    R->scratch = b;
    dr__unlock(R);
}

static void free_list(dr_scratch *b)
{
    while (b) {
        dr_scratch *nx = b->next;
        dr__free(b->raw);
        dr__free(b);
        b = nx;
    }
}

void dr__scratch_free(dr_tape *R)
{
    free_list(R->scratch);
    R->scratch = NULL;
    for (unsigned c = 0; c < DR_BLOCK_CLASSES; c++) {
        free_list(R->block_spare[c]);
        R->block_spare[c] = NULL;
    }
}
