/*
 * tape.c - the tape: chunked node storage that never moves, the bump arena
 * for extended nodes, and the recording entry points.
 *
 * Storage is shared by the root handle and the child handles of fork-join
 * parallelism (cbits/parallel.c): every chunk and arena block is registered
 * in the root's lists (`chunks`, `blocks`) and recycled from its free lists.
 * The lists are taken under the root's lock only while other threads may
 * use them (dr__shared); a tape that never forks never locks.
 */
#include "tape/tape.h"

#include <stdint.h>

void dr__fail(dr_tape *t, dr_status st)
{
    dr_status ok = DR_OK;
    __atomic_compare_exchange(&t->status, &ok, &st, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

dr_tape *dr_tape_new(void)
{
    dr_tape *t = dr__malloc(sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->root = t;
    t->threads = 1;
    t->bytes = sizeof *t;
    return t;
}

void dr_tape_free(dr_tape *t)
{
    if (!t || t->root != t)
        return; /* child handles belong to the root */
    dr__par_free(t); /* stops the workers, frees child handles */
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
    for (dr_scratch *b = t->scratch; b;) {
        dr_scratch *nx = b->next;
        dr__free(b->raw);
        dr__free(b);
        b = nx;
    }
    dr__free(t->adj_raw);
    dr__free(t);
}

/* (new buffers too are allocated under the lock, as all allocation while
   other threads may use the tape: the user's allocator need not be
   thread-safe) */
dr_scratch *dr__scratch_take(dr_tape *R, size_t n)
{
    dr__lock(R);
    dr_scratch **pp = &R->scratch;
    while (*pp && (*pp)->cap < n)
        pp = &(*pp)->next;
    dr_scratch *b = *pp;
    if (b) {
        *pp = b->next;
    } else if (n <= SIZE_MAX / sizeof(double) - 64 &&
               (b = dr__malloc(sizeof *b)) != NULL) {
        b->data = dr__malloc_aligned((n ? n : 1) * sizeof(double), &b->raw);
        if (b->data) {
            b->cap = n;
            dr__bytes_add(R, (ptrdiff_t)(sizeof *b + n * sizeof(double)));
        } else {
            dr__free(b);
            b = NULL;
        }
    }
    dr__unlock(R);
    return b;
}

void dr__scratch_give(dr_tape *R, dr_scratch *b)
{
    dr__lock(R);
    b->owner = NULL;
    b->next = R->scratch;
    R->scratch = b;
    dr__unlock(R);
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
    if (t->parallel)
        dr__par_recycle_begin(t);
    for (dr_chunk *c = t->chunks; c; c = c->all) { /* newest first */
        unsigned k = chunk_class(c->cap);
        c->prev = NULL;
        c->n = 0;
        c->lead = 0;
        if (c->slot && t->parallel && dr__par_keep_chunk(t, c, k))
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

dr_status dr_tape_clear(dr_tape *t)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    /* a small sequential tape (one chunk, no arena, no forks: a gradient of
       a few operations in a loop) keeps its chunk armed, so the next
       recording starts on the fast path instead of taking it back from the
       free lists */
    dr_chunk *keep = t->chunks;
    if (keep && (keep->all || t->blocks || t->hist))
        keep = NULL;
    if (!keep)
        recycle(t);
    /* ids keep growing across clears, so stale ids are recognisably stale */
    int64_t used = __atomic_load_n(&t->reserved, __ATOMIC_RELAXED);
    if (used < t->next)
        used = t->next;
    t->base += used;
    __atomic_store_n(&t->reserved, keep ? (int64_t)keep->cap : 0,
                     __ATOMIC_RELAXED);
    t->next = 0;
    t->len = 0;
    t->cur = t->end = NULL;
    if (keep) {
        keep->prev = NULL;
        keep->n = 0;
        keep->lead = 0;
        keep->first = 0;
        t->chunk = keep;
        t->cur = keep->nodes;
        t->end = keep->nodes + keep->cap;
    }
    t->hist = NULL;
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
    unsigned slot = R->parallel ? dr__par_slot(R) : 0;
    dr_chunk *c = slot ? dr__par_take_chunk(R, k, slot, cap) : NULL;
    if (!c)
        c = dr__pop_fit(&R->free[k], cap);
    if (!c && R->parallel)
        c = dr__par_take_chunk(R, k, 0, cap); /* any pool thread's spare */
    if (!c)
        c = new_chunk(R, cap);
    if (c)
        c->slot = slot;
    if (shared)
        dr__unlock(R);
    return c;
}

dr_node *dr__grow_n(dr_tape *t, size_t need)
{
    if (t->state & DR_ST_REC) {
        /* a tape call while a recorder holds the cursor: take it back;
           the room at the cursor may already do */
        dr__rec_reclaim(t);
        if ((size_t)(t->end - t->cur) >= need)
            return t->cur;
    }
    if (DR_UNLIKELY(t->state & (DR_ST_FORKED | DR_ST_DEAD))) {
        /* a forked parent (or a joined child) records nothing */
        dr__fail(t, (t->state & DR_ST_DEAD) ? DR_EINVAL : DR_EBUSY);
        return NULL;
    }
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
    /* the id range comes from the counter shared by all jobs of the tape */
    c->first = __atomic_fetch_add(&t->root->reserved, (int64_t)c->cap,
                                  __ATOMIC_RELAXED);
    t->next = c->first;
    t->chunk = c;
    t->cur = c->nodes;
    t->end = c->nodes + c->cap;
    return t->cur;
}

dr_node *dr__grow(dr_tape *t)
{
    return dr__grow_n(t, 1);
}

dr_idx dr__push_grow(dr_tape *t, int64_t ra, double da, int64_t rb,
                     double db)
{
    if (!dr__grow(t))
        return DR_NONE;
    return dr__push(t, ra, da, rb, db);
}

/* ------------------------------------------------------------------ arena */

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

dr_idx dr__record_ext(dr_tape *t, dr_ext *e)
{
    e->id = t->next;
    if (e->clear_adj) {
        e->next = t->exts;
        t->exts = e;
    } else {
        e->next = NULL;
    }
    dr_node *n = t->cur;
    if (n == t->end && !(n = dr__grow(t))) {
        if (e->clear_adj)
            t->exts = e->next;
        return DR_NONE;
    }
    e->id = t->next; /* a new chunk may have moved t->next */
    dr__node_set_ext(n, e);
    n->db = 0.0;
    n->a = DR_EXT_TAG;
    n->b = 0;
    t->cur = n + 1;
    t->len++;
    return t->base + t->next++;
}

/* ------------------------------------------------------------- recording */

dr_real dr_input(dr_tape *t, double v)
{
    dr_real r = {v, DR_NONE};
    if (t)
        r.idx = dr__push(t, -1, 0.0, -1, 0.0);
    return r;
}

dr_status dr_input_range(dr_tape *t, size_t n, dr_idx *first)
{
    if (!t || !first)
        return DR_EINVAL;
    *first = DR_NONE;
    if (n == 0)
        return DR_OK;
    /* consecutive ids need one chunk: a new one if this one has less room */
    if ((size_t)(t->end - t->cur) < n && !dr__grow_n(t, n))
        return dr_tape_status(t);
    dr_node *p = t->cur;
    dr_chunk *c = t->chunk;
    if ((size_t)(p - c->nodes) == c->lead) {
        /* inputs at the start of a chunk: the sweep never visits them and
           lookups answer for them (dr__find_node), so their records are
           not even written; on a large tape that is half the recording
           traffic of a dot product */
        c->lead += n;
    } else {
        for (size_t i = 0; i < n; i++) {
            p[i].da = 0.0;
            p[i].db = 0.0;
            p[i].a = 0;
            p[i].b = 0;
        }
    }
    *first = t->base + t->next;
    t->cur = p + n;
    t->next += (int64_t)n;
    t->len += n;
    return DR_OK;
}

dr_status dr_inputs(dr_tape *t, size_t n, const double *values, dr_real *out)
{
    if (!t || (n && (!values || !out)))
        return DR_EINVAL;
    dr_idx first;
    dr_status st = dr_input_range(t, n, &first);
    for (size_t i = 0; i < n; i++) {
        out[i].val = values[i];
        out[i].idx = st == DR_OK ? first + (dr_idx)i : DR_NONE;
    }
    return st;
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
