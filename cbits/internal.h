/*
 * internal.h - the engine's shared internals: node layout, chunks, the tape
 * structure and the inline recording fast path.  Not installed.
 */
#ifndef DR_INTERNAL_H
#define DR_INTERNAL_H

#include "dualrev.h"

#include <stdbool.h>
#include <string.h>

#define DR_LIKELY(x) __builtin_expect(!!(x), 1)
#define DR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define DR_HIDDEN __attribute__((visibility("hidden")))

/*
 * One tape node: 32 bytes, two arguments.  Argument ids are stored relative to
 * the tape's id base (see dr_tape.base), so the reverse pass indexes the
 * adjoint array with them directly.  A missing argument is -1: the adjoint
 * array has one sink slot in front (adj[-1]) that absorbs its contribution, so
 * the reverse loop has no branch per argument.
 *
 * An extended node (n-ary, array operations, ...) has a == DR_EXT_TAG and
 * b holding a pointer to its dr_ext record.
 */
typedef struct dr_node {
    int64_t a, b;
    double da, db;
} dr_node;

#define DR_EXT_TAG ((int64_t)-2)

/* State of one reverse sweep, handed to extended nodes. */
typedef struct dr_sweep {
    double *adj;     /* adjoint array, indexed by relative id; adj[-1] sink */
    dr_tape *tape;
    bool atomic;     /* foreign writes must be atomic (parallel sweep)     */
    int64_t own_lo;  /* relative ids >= own_lo belong to the running job   */
} dr_sweep;

/*
 * An extended node's record lives in the tape's arena (valid until clear).
 * `reverse` gets the node's own scalar adjoint g (which may be zero for
 * array-valued nodes, whose adjoint lives elsewhere); `clear_adj`, when set,
 * zeroes any adjoint storage the record owns (dr_adjoints_clear).
 */
typedef struct dr_ext dr_ext;
struct dr_ext {
    void (*reverse)(dr_ext *e, dr_sweep *s, double g);
    void (*clear_adj)(dr_ext *e);
    dr_ext *next; /* all ext records of the tape, newest first */
    int64_t id;   /* relative id of the node */
};

/* A chunk of nodes.  Chunks never move; the tape links them in order. */
typedef struct dr_chunk dr_chunk;
struct dr_chunk {
    dr_chunk *prev;   /* previous chunk of the same job (older ids)   */
    dr_chunk *next;   /* next chunk in the free list                  */
    int64_t first;    /* relative id of nodes[0]                       */
    size_t n, cap;    /* nodes used, nodes available                   */
    size_t bytes;     /* allocation size, for dr_tape_bytes            */
    void *raw;        /* pointer to free                               */
    dr_node *nodes;   /* 64-byte aligned                               */
};

/* A block of the bump arena for ext records and array data. */
typedef struct dr_arena_block dr_arena_block;
struct dr_arena_block {
    dr_arena_block *next;
    size_t used, cap, bytes;
    unsigned char *data; /* 64-byte aligned */
    void *raw;
};

#define DR_CHUNK_MIN 256u          /* nodes in a tape's first chunk (8 KiB) */
#define DR_CHUNK_MAX (1u << 17)    /* largest chunk: 4 MiB of nodes         */
#define DR_ARENA_MIN (16u << 10)   /* smallest arena block                  */

struct dr_tape {
    /* recording cursor: the fast path touches only these */
    dr_node *cur, *end;
    int64_t next;    /* relative id of the next node                */
    int64_t base;    /* public id = base + relative id              */
    dr_status status;

    dr_chunk *chunk;   /* current (newest) chunk, NULL before any   */
    dr_chunk *free;    /* chunks kept by clear, in allocation order  */
    size_t nchunks;
    int64_t reserved;  /* relative ids handed out to chunks          */
    size_t len;        /* nodes recorded                             */

    dr_arena_block *arena, *arena_free;
    dr_ext *exts;

    double *adj_raw;    /* adjoint storage: adj_raw[0] is the sink    */
    size_t adj_cap;     /* slots after the sink                       */
    int64_t adj_valid;  /* relative ids < adj_valid have live adjoints */

    size_t bytes;       /* memory held                                */
    void *parallel;     /* fork-join state (cbits/parallel.c), or NULL */
};

/* allocation (alloc.c) */
DR_HIDDEN void *dr__malloc(size_t n);
DR_HIDDEN void dr__free(void *p);
/* n bytes aligned to 64, raw pointer to free returned in *raw */
DR_HIDDEN void *dr__malloc_aligned(size_t n, void **raw);

/* tape internals (tape.c) */
DR_HIDDEN void dr__fail(dr_tape *t, dr_status st);
DR_HIDDEN dr_node *dr__grow(dr_tape *t); /* slow path: room for one node */
DR_HIDDEN void *dr__arena_alloc(dr_tape *t, size_t bytes);
/* append an extended node for record e (allocated with dr__arena_alloc) */
DR_HIDDEN dr_idx dr__record_ext(dr_tape *t, dr_ext *e);
/* relative id of a public id, or false if it is not on the tape (DR_NONE
   maps to -1 and is accepted) */
static inline bool dr__rel(const dr_tape *t, dr_idx id, int64_t *rel)
{
    int64_t r = id - t->base;
    if (DR_LIKELY((uint64_t)r < (uint64_t)t->next)) {
        *rel = r;
        return true;
    }
    if (id == DR_NONE) {
        *rel = -1;
        return true;
    }
    return false;
}

/* reverse.c: make adj_raw cover every relative id handed out so far */
DR_HIDDEN dr_status dr__adj_ensure(dr_tape *t);
DR_HIDDEN void dr__sweep_chunks(dr_chunk *last, dr_sweep *s);

/* Append a node; returns its public id, or DR_NONE on failure. */
static inline dr_idx dr__push(dr_tape *t, int64_t a, double da, int64_t b,
                              double db)
{
    dr_node *n = t->cur;
    if (DR_UNLIKELY(n == t->end)) {
        n = dr__grow(t);
        if (!n)
            return DR_NONE;
    }
    n->a = a;
    n->b = b;
    n->da = da;
    n->db = db;
    t->cur = n + 1;
    t->len++;
    return t->base + t->next++;
}

/* Record a node over public ids a, b (either may be DR_NONE). */
static inline dr_idx dr__rec2(dr_tape *t, dr_idx a, double da, dr_idx b,
                              double db)
{
    int64_t ra, rb;
    if (DR_UNLIKELY(!dr__rel(t, a, &ra) || !dr__rel(t, b, &rb))) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    return dr__push(t, ra, da, rb, db);
}

#endif /* DR_INTERNAL_H */
