/*
 * tape.c - the tape: chunked node storage that never moves, the bump arena
 * for extended nodes, and the recording entry points.
 */
#include "internal.h"

#include <stdint.h>

void dr__fail(dr_tape *t, dr_status st)
{
    if (t->status == DR_OK)
        t->status = st;
}

dr_tape *dr_tape_new(void)
{
    dr_tape *t = dr__malloc(sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->bytes = sizeof *t;
    return t;
}

static void free_chunks(dr_tape *t, dr_chunk *c, bool by_prev)
{
    while (c) {
        dr_chunk *nx = by_prev ? c->prev : c->next;
        t->bytes -= c->bytes;
        dr__free(c->raw);
        c = nx;
    }
}

static void free_blocks(dr_arena_block *b)
{
    while (b) {
        dr_arena_block *nx = b->next;
        dr__free(b->raw);
        b = nx;
    }
}

void dr_tape_free(dr_tape *t)
{
    if (!t)
        return;
    free_chunks(t, t->chunk, true);
    free_chunks(t, t->free, false);
    free_blocks(t->arena);
    free_blocks(t->arena_free);
    dr__free(t->adj_raw);
    dr__free(t);
}

/* Hand every chunk and arena block back to the free lists, oldest first, so
   the next recording of the same program reuses them in the same order. */
static void recycle(dr_tape *t)
{
    dr_chunk *head = t->free;
    for (dr_chunk *c = t->chunk; c;) {
        dr_chunk *p = c->prev;
        c->next = head;
        c->prev = NULL;
        c->n = 0;
        head = c;
        c = p;
    }
    t->free = head;
    t->chunk = NULL;

    dr_arena_block *b = t->arena;
    while (b) {
        dr_arena_block *nx = b->next;
        b->used = 0;
        b->next = t->arena_free;
        t->arena_free = b;
        b = nx;
    }
    t->arena = NULL;
}

dr_status dr_tape_clear(dr_tape *t)
{
    if (!t)
        return DR_EINVAL;
    recycle(t);
    /* ids keep growing across clears, so stale ids are recognisably stale */
    int64_t used = t->reserved > t->next ? t->reserved : t->next;
    t->base += used;
    t->reserved = 0;
    t->next = 0;
    t->len = 0;
    t->cur = t->end = NULL;
    t->exts = NULL;
    t->adj_valid = 0;
    t->status = DR_OK;
    return DR_OK;
}

size_t dr_tape_len(const dr_tape *t)
{
    return t ? t->len : 0;
}

size_t dr_tape_bytes(const dr_tape *t)
{
    return t ? t->bytes : 0;
}

dr_status dr_tape_status(const dr_tape *t)
{
    return t ? t->status : DR_EINVAL;
}

static dr_chunk *new_chunk(dr_tape *t, size_t cap)
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
    t->bytes += c->bytes;
    t->nchunks++;
    return c;
}

dr_node *dr__grow(dr_tape *t)
{
    if (t->chunk)
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
    dr_chunk *c = t->free;
    if (c) {
        t->free = c->next;
    } else {
        size_t cap = DR_CHUNK_MIN;
        if (t->chunk && t->chunk->cap < DR_CHUNK_MAX)
            cap = t->chunk->cap * 2;
        else if (t->chunk)
            cap = DR_CHUNK_MAX;
        c = new_chunk(t, cap);
        if (!c) {
            dr__fail(t, DR_ENOMEM);
            return NULL;
        }
    }
    c->next = NULL;
    c->prev = t->chunk;
    c->n = 0;
    c->first = t->next;
    if (t->reserved < t->next + (int64_t)c->cap)
        t->reserved = t->next + (int64_t)c->cap;
    t->chunk = c;
    t->cur = c->nodes;
    t->end = c->nodes + c->cap;
    return t->cur;
}

/* ------------------------------------------------------------------ arena */

static dr_arena_block *new_block(dr_tape *t, size_t cap)
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
    t->bytes += b->bytes;
    return b;
}

void *dr__arena_alloc(dr_tape *t, size_t bytes)
{
    if (bytes > SIZE_MAX / 2)
        goto oom;
    size_t need = (bytes + 63) & ~(size_t)63;
    if (need == 0)
        need = 64;
    dr_arena_block *b = t->arena;
    if (!b || b->cap - b->used < need) {
        /* first fit among the blocks a clear handed back */
        dr_arena_block **pp = &t->arena_free;
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
            b = new_block(t, cap);
            if (!b)
                goto oom;
        }
        b->used = 0;
        b->next = t->arena;
        t->arena = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    return p;
oom:
    dr__fail(t, DR_ENOMEM);
    return NULL;
}

dr_idx dr__record_ext(dr_tape *t, dr_ext *e)
{
    e->id = t->next;
    if (e->clear_adj) {
        e->next = t->exts;
        t->exts = e;
    } else {
        e->next = NULL;
    }
    dr_idx id = dr__push(t, DR_EXT_TAG, 0.0, (int64_t)(intptr_t)e, 0.0);
    if (id == DR_NONE && e->clear_adj)
        t->exts = e->next;
    return id;
}

/* ------------------------------------------------------------- recording */

dr_real dr_input(dr_tape *t, double v)
{
    dr_real r = {v, DR_NONE};
    if (t)
        r.idx = dr__push(t, -1, 0.0, -1, 0.0);
    return r;
}

dr_real dr_const(double v)
{
    dr_real r = {v, DR_NONE};
    return r;
}

dr_idx dr_record0(dr_tape *t)
{
    return t ? dr__push(t, -1, 0.0, -1, 0.0) : DR_NONE;
}

dr_idx dr_record1(dr_tape *t, dr_idx a, double da)
{
    return t ? dr__rec2(t, a, da, DR_NONE, 0.0) : DR_NONE;
}

dr_idx dr_record2(dr_tape *t, dr_idx a, double da, dr_idx b, double db)
{
    return t ? dr__rec2(t, a, da, b, db) : DR_NONE;
}
