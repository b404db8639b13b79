/*
 * tape.c - the tape's storage: handles, chunked node storage that never
 * moves, and clearing for reuse.  What goes into the nodes is the recording
 * layer's (record/record.c); the arena is in arena.c.
 *
 * Storage is shared by the root handle and the child handles of fork-join
 * parallelism (jobs/): every chunk and arena block is registered in the
 * root's lists (`chunks`, `blocks`) and recycled from its free lists.  The
 * lists are taken under the root's lock (sharing.c) only while other
 * threads may use them (dr__shared); a tape that never forks never locks.
 */
#include "tape/tape.h"

#include <stdint.h>


/* Each tape's ids come from a range of its own (2^40 ids, cycling through
   2^21 ranges), so that an id of another tape is not on this one
   (DR_EINVAL) instead of naming one of its nodes: a value captured from the
   caller's tape by a checkpointed loop's step, say.  Ids grow across clears
   inside the range; a clear that leaves less than half of it takes the next
   range, so one recording always has 2^39 ids (more nodes than memory
   holds).  The ranges end at 2^61, far below the array ids' tag bit
   (2^62), which ids must not reach. */
#define DR_ID_RANGE_BITS 40
static int64_t next_id_range(void)
{
    static uint64_t serial;
    uint64_t s = __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);
    return (int64_t)((s % ((uint64_t)1 << (61 - DR_ID_RANGE_BITS))) << DR_ID_RANGE_BITS);
}

dr_tape *dr_tape_new(void)
{
    dr_tape *t = dr__malloc(sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->base = next_id_range();
    t->id_end = t->base + ((int64_t)1 << DR_ID_RANGE_BITS);
    t->replay_ok = -1;
    t->replay_in_ok = -1;
    t->root = t;
    t->threads = 1;
    t->bytes = sizeof *t;
    return t;
}

void dr_tape_free(dr_tape *t)
{
    if (!t || t->root != t)
        return; /* child handles belong to the root */
    dr__owned_release(t->owned, NULL);
    dr__owned_release(t->spares, NULL); /* (after: the owned keep theirs) */
    if (t->hooks)
        t->hooks->release(t); /* the jobs layer: workers, child handles */
    dr__sharing_free(t);
    for (dr_chunk *c = t->chunks; c;) {
        dr_chunk *nx = c->all;
        dr__free(c->raw);
        dr__free(c);
        c = nx;
    }
    for (dr_arena_block *b = t->blocks; b;) {
        dr_arena_block *nx = b->all;
        dr__free(b->raw);
        dr__free(b);
        b = nx;
    }
    dr__scratch_free(t);
    dr__free(t->adj_raw);
    dr__free(t->oplog);
    dr__free(t->fe_ranges);
    dr__free(t->guards);
    dr__free(t->replay_chunks);
    dr__free(t->replay_in_ids);
    dr__free(t->replay_old);
    dr__free(t->tan_raw);
    dr__free(t);
}

static unsigned chunk_class(size_t cap)
{
    unsigned k = 0;
    while (k + 1 < DR_CHUNK_CLASSES && ((size_t)DR_JOB_CHUNK_MIN << k) < cap)
        k++;
    return k;
}

/* Hand every chunk and arena block back to the free lists, oldest first, so
   the next recording of the same program reuses them in the same order. */
static void recycle(dr_tape *t)
{
    for (unsigned k = 0; k < DR_CHUNK_CLASSES; k++)
        t->free[k] = NULL;
    if (t->sharing)
        dr__slots_recycle_begin(t);
    for (dr_chunk *c = t->chunks; c; c = c->all) { /* newest first */
        unsigned k = chunk_class(c->cap);
        c->prev = NULL;
        c->n = 0;
        c->lead = 0;
        c->ext = false;
        if (c->slot && t->sharing && dr__slot_keep_chunk(t, c, k))
            continue;
        c->next = t->free[k];
        t->free[k] = c;
    }
    t->chunk = NULL;

    t->arena_free = NULL;
    for (dr_arena_block *b = t->blocks; b; b = b->all) {
        b->used = 0;
        b->next = t->arena_free;
        t->arena_free = b;
    }
    t->arena = NULL;
}

static dr_status clear_any(dr_tape *t);

/* a cleared tape's counters: ids keep growing across clears, so stale ids
   are recognisably stale; reserved is what the kept chunk holds */
static inline __attribute__((always_inline)) void restart(dr_tape *t,
                                                    int64_t reserved)
{
    int64_t used = __atomic_load_n(&t->reserved, __ATOMIC_RELAXED);
    t->base += used > t->next ? used : t->next;
    if (DR_UNLIKELY(t->id_end - t->base < ((int64_t)1 << (DR_ID_RANGE_BITS - 1)))) {
        t->base = next_id_range();
        t->id_end = t->base + ((int64_t)1 << DR_ID_RANGE_BITS);
    }
    __atomic_store_n(&t->reserved, reserved, __ATOMIC_RELAXED);
    t->next = 0;
    t->len = 0;
    t->exts = NULL;
    t->arr_seeded = false;
    /* the spares a recording that asked for some did not take back go (a
       program that changed), then the nodes' own let go, which may keep
       theirs as spares for the next recording */
    if (t->spares_asked) {
        dr__owned_release(t->spares, NULL);
        t->spares = NULL;
    }
    t->spares_asked = false;
    if (t->owned)
        dr__owned_release(t->owned, NULL);
    t->owned = NULL;
    t->adj_valid = 0;
    t->oplog_n = 0;
    t->oplog_lo = 0;
    t->oplog_start = 0;
    t->guards_n = 0;
    t->fe_ranges_n = 0;
    t->fe_cursor = 0;
    t->fe_paused = 0;
    t->tan_valid = 0;
    t->replay_ok = -1;
    t->replay_in_ok = -1;
    t->status = DR_OK;
}

dr_status dr_tape_clear(dr_tape *t)
{
    /* a small sequential tape (one chunk, no arena, no forks: a gradient of
       a few operations in a loop) keeps its chunk armed, so the next
       recording starts on the fast path instead of taking it back from the
       free lists; this path is most of what such a loop's clear costs, so
       it stays short (clear_any does everything else) */
    dr_chunk *keep;
    if (DR_UNLIKELY(!t || t->root != t || t->state != 0 ||
                    !(keep = t->chunks) || keep->all || t->blocks || t->hist))
        return clear_any(t);
    restart(t, (int64_t)keep->cap);
    keep->prev = NULL;
    keep->n = 0;
    keep->lead = 0;
    keep->ext = false;
    keep->first = 0;
    t->chunk = keep;
    t->cur = keep->nodes;
    t->end = keep->nodes + keep->cap;
    return DR_OK;
}

static dr_status clear_any(dr_tape *t)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    recycle(t);
    restart(t, 0);
    t->cur = t->end = NULL;
    t->hist = NULL;
    return DR_OK;
}

void dr__tape_save(dr_tape *t, dr_tape_pos *pos)
{
    if (t->chunk)
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
    pos->chunk = t->chunk;
    pos->n = t->chunk ? t->chunk->n : 0;
    pos->next = t->next;
    pos->len = t->len;
    pos->exts = t->exts;
    pos->owned = t->owned;
    pos->reserved = __atomic_load_n(&t->root->reserved, __ATOMIC_RELAXED);
    pos->arena = t->arena;
    pos->arena_used = t->arena ? t->arena->used : 0;
    pos->guards_n = t->guards_n;
}

void dr__tape_restore(dr_tape *t, const dr_tape_pos *pos)
{
    /* chunks opened since the save go back to the free lists */
    while (t->chunk && t->chunk != pos->chunk) {
        dr_chunk *c = t->chunk;
        t->chunk = c->prev;
        unsigned k = chunk_class(c->cap);
        c->prev = NULL;
        c->n = 0;
        c->lead = 0;
        c->ext = false;
        c->next = t->free[k];
        t->free[k] = c;
    }
    dr_chunk *c = t->chunk;
    if (c) {
        c->n = pos->n;
        if (c->lead > pos->n)
            c->lead = pos->n;
        t->cur = c->nodes + pos->n;
        t->end = c->nodes + c->cap;
    } else {
        t->cur = t->end = NULL;
    }
    t->next = pos->next;
    t->len = pos->len;
    t->exts = pos->exts;
    dr__owned_release(t->owned, pos->owned); /* the dropped nodes' */
    t->owned = pos->owned;
    /* the ids the dropped chunks took, else every save/restore cycle that
       opens a chunk moves the ids (and the log and adjoints with them) on */
    __atomic_store_n(&t->root->reserved, pos->reserved, __ATOMIC_RELAXED);
    /* the arena: the block in use since the save goes back to the free
       list (blocks filled and left in between stay until the clear) */
    if (t->arena != pos->arena && t->arena) {
        t->arena->used = 0;
        t->arena->next = t->root->arena_free;
        t->root->arena_free = t->arena;
    }
    t->arena = pos->arena;
    if (t->arena)
        t->arena->used = pos->arena_used;
    if (t->oplog_lo + t->oplog_n > pos->next)
        t->oplog_n = pos->next > t->oplog_lo ? pos->next - t->oplog_lo : 0;
    t->replay_ok = -1; /* other nodes may take the same ids */
    t->replay_in_ok = -1;
    /* the comparisons recorded since */
    if (t->guards_n > pos->guards_n)
        t->guards_n = pos->guards_n;
    /* the noted input ranges among the dropped nodes */
    while (t->fe_ranges_n &&
           t->fe_ranges[t->fe_ranges_n - 1].first >= t->base + pos->next)
        t->fe_ranges_n--;
}

void dr__owned_release(dr_owned *o, const dr_owned *until)
{
    while (o && o != until) {
        dr_owned *nx = o->next;
        o->release(o);
        o = nx;
    }
}

void dr__spare_keep(dr_tape *t, dr_owned *o)
{
    dr_tape *R = t->root;
    bool shared = dr__shared(t);
    if (shared)
        dr__lock(R);
    o->next = R->spares;
    R->spares = o;
    if (shared)
        dr__unlock(R);
}

dr_owned *dr__spare_take(dr_tape *t,
                         bool (*fits)(const dr_owned *o, const void *want),
                         const void *want)
{
    dr_tape *R = t->root;
    bool shared = dr__shared(t);
    if (shared)
        dr__lock(R);
    R->spares_asked = true;
    dr_owned **pp = &R->spares;
    while (*pp && !fits(*pp, want))
        pp = &(*pp)->next;
    dr_owned *o = *pp;
    if (o)
        *pp = o->next;
    if (shared)
        dr__unlock(R);
    return o;
}

size_t dr_tape_len(const dr_tape *t)
{
    return t ? t->len : 0;
}

size_t dr_tape_bytes(const dr_tape *t)
{
    return t ? __atomic_load_n(&t->root->bytes, __ATOMIC_RELAXED) : 0;
}

dr_status dr_tape_status(const dr_tape *t)
{
    if (!t)
        return DR_EINVAL;
    dr_status st;
    __atomic_load(&t->status, &st, __ATOMIC_RELAXED);
    return st;
}

static dr_chunk *new_chunk(dr_tape *R, size_t cap)
{
    dr_chunk *c = dr__malloc(sizeof *c);
    if (!c)
        return NULL;
    void *raw;
    dr_node *nodes = dr__malloc_aligned(cap * sizeof(dr_node), &raw);
    if (!nodes) {
        dr__free(c);
        return NULL;
    }
    /* one allocation would be nicer, but the header then shares the nodes'
       first cache line; two keep the nodes 64-byte aligned cheaply */
    memset(c, 0, sizeof *c);
    c->cap = cap;
    c->raw = raw;
    c->nodes = nodes;
    c->bytes = cap * sizeof(dr_node) + 64 + sizeof *c;
    c->all = R->chunks;
    R->chunks = c;
    dr__bytes_add(R, (ptrdiff_t)c->bytes);
    return c;
}

/* a free chunk of at least cap nodes, or a new one; NULL when out of memory */
static dr_chunk *take_chunk(dr_tape *t, size_t cap)
{
    dr_tape *R = t->root;
    bool shared = dr__shared(t);
    if (shared)
        dr__lock(R);
    unsigned k = chunk_class(cap);
    unsigned slot = R->sharing ? dr__slot(R) : 0;
    dr_chunk *c = slot ? dr__slot_take_chunk(R, k, slot, cap) : NULL;
    if (!c)
        c = dr__pop_fit(&R->free[k], cap);
    if (!c && R->sharing)
        c = dr__slot_take_chunk(R, k, 0, cap); /* any pool thread's spare */
    if (!c)
        c = new_chunk(R, cap);
    if (c)
        c->slot = slot;
    if (shared)
        dr__unlock(R);
    return c;
}

dr_node *dr__chunk_open(dr_tape *t, size_t need)
{
    size_t cap = t->root == t ? DR_CHUNK_MIN : DR_JOB_CHUNK_MIN;
    if (t->chunk) {
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
        cap = t->chunk->cap < DR_CHUNK_MAX ? t->chunk->cap * 2 : DR_CHUNK_MAX;
    }
    /* classes below the last are powers of two: round up to one */
    while (cap < need && cap < DR_CHUNK_MAX)
        cap *= 2;
    if (cap < need) {
        if (need > (SIZE_MAX - 64 - sizeof(dr_chunk)) / sizeof(dr_node) ||
            need > (size_t)INT64_MAX / 2) {
            dr__fail(t, DR_ENOMEM);
            return NULL;
        }
        cap = need;
    }
    dr_chunk *c = take_chunk(t, cap);
    if (!c) {
        dr__fail(t, DR_ENOMEM);
        return NULL;
    }
    c->next = NULL;
    c->prev = t->chunk;
    c->n = 0;
    c->lead = 0;
    c->ext = false;
    /* the id range comes from the counter shared by all jobs of the tape */
    c->first = __atomic_fetch_add(&t->root->reserved, (int64_t)c->cap,
                                  __ATOMIC_RELAXED);
    t->next = c->first;
    t->chunk = c;
    t->cur = c->nodes;
    t->end = c->nodes + c->cap;
    return t->cur;
}
