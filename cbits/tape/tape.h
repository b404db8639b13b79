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

typedef struct dr_ext dr_ext;

/*
 * One tape node (struct dr__node in dualrev.h): 24 bytes, two arguments.
 * An argument is stored as its distance back from the node's own id
 * (argument = id - a), in 32 bits: the
 * arguments of almost every node are recent, and the smaller record is a
 * quarter less traffic in recording and in the sweep, which on a large tape
 * are bound by memory bandwidth.  An argument further back than
 * DR_NEAR_MAX is recorded as a small extended node instead (dr__push_far),
 * so nothing wraps on any tape.
 *
 * a == 0: a node without arguments (an input).  b == 0: no second argument;
 * the sweep then adds into the sink slot adj[-1] (see dr_sweep), which costs
 * less than a branch per node.  a == DR_EXT_TAG: an extended node (n-ary,
 * array operations, far arguments), dr__node_ext gives its dr_ext record.
 */
typedef struct dr__node dr_node; /* declared in dualrev.h for dr_rec */

/* an ext node keeps its record's address in the bytes of da */
static inline dr_ext *dr__node_ext(const dr_node *p)
{
    dr_ext *e;
    memcpy(&e, &p->da, sizeof e);
    return e;
}
static inline void dr__node_set_ext(dr_node *p, dr_ext *e)
{
    memcpy(&p->da, &e, sizeof e);
}

#define DR_EXT_TAG ((int32_t)-1)
/* DR_NEAR_MAX (dualrev.h): make test-far builds the library with a small one */

/*
 * A scratch buffer of doubles.  The root keeps spare ones for reuse across
 * sweeps (dr__scratch_take / dr__scratch_give) and frees them with the
 * tape; a parallel sweep's array rules accumulate into them (array.c).
 */
typedef struct dr_scratch dr_scratch;
struct dr_scratch {
    dr_scratch *next;  /* in the spare list, or in a sweep's pending list */
    void *owner;       /* what the data is for, while in use             */
    size_t cap;        /* doubles                                        */
    double *data;      /* 64-byte aligned                                */
    void *raw;
};

/* State of one reverse sweep, handed to extended nodes. */
typedef struct dr_sweep {
    double *adj;     /* adjoint array, indexed by relative id; adj[-1] sink */
    dr_tape *tape;
    bool atomic;     /* foreign writes must be atomic (parallel sweep)     */
    int64_t own_lo;  /* relative ids >= own_lo belong to the running job   */
    dr_scratch *pending; /* array adjoints of ancestor jobs accumulated by
                            the running rule, added in after it (array.c) */
    void *held[4];       /* locks the running rule holds (array.c)        */
    unsigned nheld;
} dr_sweep;

/*
 * An extended node's record lives in the tape's arena (valid until clear).
 * `reverse` gets the node's own scalar adjoint g (which may be zero for
 * array-valued nodes, whose adjoint lives elsewhere); `clear_adj`, when set,
 * zeroes any adjoint storage the record owns (dr_adjoints_clear).
 */
struct dr_ext {
    void (*reverse)(dr_ext *e, dr_sweep *s, double g);
    void (*clear_adj)(dr_ext *e);
    dr_ext *next; /* all ext records of the tape, newest first */
    int64_t id;   /* relative id of the node */
};

/*
 * A chunk of nodes.  Chunks never move.  A chunk belongs to one job (see
 * "Jobs" below) and reserves the contiguous range of relative ids
 * first .. first+cap-1 from the tape's shared counter (dr_tape.reserved), so
 * the ids of different jobs never overlap.  Capacities are DR_JOB_CHUNK_MIN
 * << k; free chunks are kept in one list per capacity (size class).
 */
typedef struct dr_chunk dr_chunk;
struct dr_chunk {
    dr_chunk *prev;   /* previous chunk of the same job (older ids)   */
    dr_chunk *next;   /* next chunk in a free list                    */
    dr_chunk *all;    /* every chunk of the tape (for clear and free) */
    int64_t first;    /* relative id of nodes[0]                       */
    size_t n, cap;    /* nodes used, nodes available                   */
    size_t lead;      /* nodes[0 .. lead-1] are inputs recorded by
                         dr_inputs: the sweep does not visit them, and
                         their records are never written               */
    size_t bytes;     /* allocation size, for dr_tape_bytes            */
    void *raw;        /* pointer to free                               */
    dr_node *nodes;   /* 64-byte aligned                               */
    unsigned slot;    /* pool thread that last recorded it (0: caller) */
};

/* A block of the bump arena for ext records and array data. */
typedef struct dr_arena_block dr_arena_block;
struct dr_arena_block {
    dr_arena_block *next; /* next in the free list                     */
    dr_arena_block *all;  /* every block of the tape                   */
    size_t used, cap, bytes;
    unsigned char *data; /* 64-byte aligned */
    void *raw;
};

#define DR_CHUNK_MIN 256u          /* nodes in a root job's first chunk     */
#define DR_JOB_CHUNK_MIN 32u       /* ... in a child job's (768 bytes): many
                                      small jobs stay cheap in memory and ids */
#define DR_CHUNK_MAX (1u << 17)    /* largest chunk: 3 MiB of nodes         */
#define DR_CHUNK_CLASSES 13        /* 32 << 0 .. 32 << 12 == DR_CHUNK_MAX   */
#define DR_ARENA_MIN (16u << 10)   /* smallest arena block                  */

/*
 * Jobs (fork-join parallelism, cbits/parallel.c; thesis section 3.10).
 * A job is a sequential stretch of recording: its nodes are the chunks linked
 * by prev from its newest chunk.  A task's jobs are described as in the
 * thesis (Fig. 3.16): the current job of a handle has a history `hist`, NULL
 * for the first job of a task ("Start"), else the fork record of the fork
 * that ended the previous job ("Fork jd0 kids...").  A fork record holds the
 * forking job (its chunks and its own history) and the final job of each
 * child task, and the value of the id counter at the fork (`mark`): every id
 * recorded by the children's tasks is >= mark, every id they may read from
 * an ancestor is < mark.
 */
typedef struct dr_hist dr_hist;
typedef struct dr_kid dr_kid;
struct dr_kid {
    dr_kid *qnext;       /* link in the worker pool's queue              */
    dr_hist *owner;      /* the fork record this kid belongs to          */
    size_t i;            /* its index                                    */
    dr_tape *handle;     /* while forked: the child's recording handle   */
    dr_chunk *chunk;     /* after join: newest chunk of the final job     */
    dr_hist *hist;       /* after join: history of the final job          */
};
struct dr_hist {
    dr_chunk *before_chunk; /* the job that forked: its newest chunk ...  */
    dr_hist *before_hist;   /* ... and its history                        */
    dr_hist *up;            /* the forking handle's own `up` (see dr_tape) */
    int64_t mark;           /* id counter at the fork                     */
    size_t n;               /* number of children                         */
    size_t pending;         /* tasks not finished (worker pool)           */
    void (*fn)(dr_tape *, size_t, void *); /* dr_fork_run's function     */
    void *ctx;
    int mode;               /* what the queued kids run (parallel.c)      */
    bool blas_solo;         /* dr_fork took a BLAS hold; the join gives
                               it back (blas_threads.c)                  */
    dr_kid kids[];
};

/* dr_tape.state */
#define DR_ST_CHILD 1u   /* a child handle made by dr_fork               */
#define DR_ST_FORKED 2u  /* forked and not joined: recording refused     */
#define DR_ST_DEAD 4u    /* a joined child handle: everything refused    */
#define DR_ST_PSWEEP 8u  /* root: a parallel sweep is running (the arena
                            is then shared by the sweeping threads)      */
#define DR_ST_RECOPEN 16u /* a recorder (dr_rec) is open on the handle:
                            sweeping, clearing and forking refuse        */
#define DR_ST_REC 32u    /* ... and holds the cursor now: end is set to
                            cur, so every push of the tape's own calls
                            takes the slow path, which takes the cursor
                            back first (dr__rec_reclaim)                 */

struct dr_par; /* fork-join state shared by all handles (parallel.c) */

/*
 * A tape handle.  The root handle (dr_tape_new) owns the tape; dr_fork makes
 * child handles that share the root's storage.  The first block of fields is
 * the recording cursor of the handle's current job.  Fields marked [root]
 * are used only in the root handle (reach them through t->root).
 */
struct dr_tape {
    /* recording cursor: the fast path touches only these */
    dr_node *cur, *end;
    int64_t next;    /* relative id of the next node; ids < next are valid
                        arguments (from this job or an earlier one)      */
    int64_t base;    /* public id = base + relative id (same in all handles) */
    size_t len;      /* nodes recorded by this handle (and joined children) */
    dr_status status;
    unsigned state;  /* DR_ST_* flags                                    */

    dr_tape *root;     /* the root handle (itself for the root)          */
    dr_chunk *chunk;   /* newest chunk of the current job, NULL before any */
    dr_hist *hist;     /* history of the current job (NULL: Start)       */
    dr_hist *fork;     /* while forked: the open fork record             */
    dr_hist *up;       /* child: the parent's fork record (ancestry)     */
    dr_tape *hnext;    /* child handles: link in the root's free list    */
    dr_tape *hall;     /* child handles: link in the list of all of them */
    dr_arena_block *arena; /* the block this handle bump-allocates from  */
    dr_ext *exts;      /* ext records with clear_adj recorded here       */
    dr_rec *rec;       /* the open recorder (DR_ST_RECOPEN), else NULL   */

    /* [root] shared storage */
    int64_t reserved;  /* relative ids handed out to chunks (atomic)      */
    dr_chunk *free[DR_CHUNK_CLASSES]; /* free chunks by size class        */
    dr_chunk *chunks;  /* every chunk (linked by all)                    */
    dr_arena_block *arena_free, *blocks; /* free blocks; every block     */

    dr_scratch *scratch; /* spare scratch buffers                     */
    double *adj_raw;    /* adjoint storage: adj_raw[0] is the sink    */
    size_t adj_cap;     /* slots after the sink                       */
    int64_t adj_valid;  /* relative ids < adj_valid have live adjoints */

    size_t bytes;       /* memory held (atomic)                       */
    unsigned threads;   /* workers for parallel work (dr_set_threads) */
    struct dr_par *parallel; /* fork-join state, NULL before a fork   */
};

/* allocation (alloc.c) */
DR_HIDDEN void *dr__malloc(size_t n);
DR_HIDDEN void dr__free(void *p);
/* n bytes aligned to 64, raw pointer to free returned in *raw */
DR_HIDDEN void *dr__malloc_aligned(size_t n, void **raw);

/* recorder.c: take the cursor back from the handle's open recorder, whose
   next push then takes its slow path and borrows it again */
DR_HIDDEN void dr__rec_reclaim(dr_tape *t);

/* tape internals (tape.c) */
/* record the first failure in t's sticky status (atomic: safe from any
   thread, for example from an ext node's reverse during a parallel sweep) */
DR_HIDDEN void dr__fail(dr_tape *t, dr_status st);
/* add to the tape's byte count (atomic) */
static inline void dr__bytes_add(dr_tape *t, ptrdiff_t delta)
{
    __atomic_fetch_add(&t->root->bytes, (size_t)delta, __ATOMIC_RELAXED);
}
/* true while other threads may use the shared storage: t is a child handle
   or a forked root (then the shared lists are taken under the lock) */
static inline bool dr__shared(const dr_tape *t)
{
    return t->root != t || t->state != 0;
}
/* DR_OK if t is a root handle that is not forked (the calls that seed,
   sweep, read adjoints or clear need one), DR_EINVAL for a child handle,
   DR_EBUSY while forked */
static inline dr_status dr__whole(const dr_tape *t)
{
    if (DR_UNLIKELY(!t || t->root != t))
        return DR_EINVAL;
    if (DR_UNLIKELY(t->state != 0))
        return DR_EBUSY;
    return DR_OK;
}
DR_HIDDEN dr_node *dr__grow(dr_tape *t); /* slow path: room for one node */
/* room for n consecutive nodes (a new chunk if the current one has less) */
DR_HIDDEN dr_node *dr__grow_n(dr_tape *t, size_t n);
/* unlink and return the first chunk of a free list with at least cap nodes
   (every chunk of a class fits, except in the last class, where chunks made
   for dr_inputs may be larger than DR_CHUNK_MAX) */
static inline dr_chunk *dr__pop_fit(dr_chunk **head, size_t cap)
{
    for (; *head; head = &(*head)->next)
        if ((*head)->cap >= cap) {
            dr_chunk *c = *head;
            *head = c->next;
            return c;
        }
    return NULL;
}
DR_HIDDEN void *dr__arena_alloc(dr_tape *t, size_t bytes);
/* a scratch buffer of at least n doubles (contents undefined) from the
   root's spares or new, NULL when memory runs out; and back for reuse.
   Safe from any thread: they take the shared-storage lock. */
DR_HIDDEN dr_scratch *dr__scratch_take(dr_tape *root, size_t n);
DR_HIDDEN void dr__scratch_give(dr_tape *root, dr_scratch *b);
/* append an extended node for record e (allocated with dr__arena_alloc) */
DR_HIDDEN dr_idx dr__record_ext(dr_tape *t, dr_ext *e);
/* relative id of a public id, or false if it is not on the tape (DR_NONE
   maps to -1 and is accepted) */
static inline bool dr__rel(const dr_tape *t, dr_idx id, int64_t *rel)
{
    /* unsigned: id - base must not overflow (UB) for ids like INT64_MIN */
    uint64_t r = (uint64_t)id - (uint64_t)t->base;
    if (DR_LIKELY(r < (uint64_t)t->next)) {
        *rel = (int64_t)r;
        return true;
    }
    if (id == DR_NONE) {
        *rel = -1;
        return true;
    }
    return false;
}

/* dr__rel for the arguments of a node being recorded: also the ids an open
   recorder handed out since it last took the cursor (t->next is behind
   them until it gives it back); kept out of dr__rel, whose loops over many
   ids in the gradient calls it would slow */
static inline bool dr__rel_arg(const dr_tape *t, dr_idx id, int64_t *rel)
{
    if (DR_LIKELY(dr__rel(t, id, rel)))
        return true;
    uint64_t r = (uint64_t)id - (uint64_t)t->base;
    if ((t->state & DR_ST_REC) && r < (uint64_t)t->rec->next_) {
        *rel = (int64_t)r;
        return true;
    }
    return false;
}

/* reverse.c: make adj_raw cover every relative id handed out so far */
DR_HIDDEN dr_status dr__adj_ensure(dr_tape *t);
/* sweep one job's chunks, newest first; plain adds (no sibling runs) */
DR_HIDDEN void dr__sweep_chunks(dr_chunk *last, dr_sweep *s);
/* the same where s->atomic: adds into ids < s->own_lo are atomic */
DR_HIDDEN void dr__sweep_chunks_atomic(dr_chunk *last, dr_sweep *s);

/* blas_threads.c: while a hold is open (any tape), OpenBLAS runs
   single-threaded; holds nest and are counted process-wide */
DR_HIDDEN void dr__blas_solo_hold(void);
DR_HIDDEN void dr__blas_solo_release(void);

/* parallel.c */
/* the rest of a sweep after the root's current job: the job graph */
DR_HIDDEN dr_status dr__sweep_forks(dr_tape *t, dr_sweep *s);
/* shared-storage lock (no-op before the first fork) */
DR_HIDDEN void dr__lock(dr_tape *root);
DR_HIDDEN void dr__unlock(dr_tape *root);
/* Chunk affinity: a chunk recorded by a pool thread goes back to that
   thread's free list on clear, and that thread takes from it first, so a
   repeated parallel program records into memory its own core last touched
   (the cross-core transfers otherwise made recording 5x slower).  Both are
   called with the shared-storage lock held, or on a whole tape. */
DR_HIDDEN unsigned dr__par_slot(dr_tape *root);
/* a free chunk of class cls from pool thread slot's list (slot 0: from
   any thread's list), or NULL */
DR_HIDDEN dr_chunk *dr__par_take_chunk(dr_tape *root, unsigned cls,
                                       unsigned slot, size_t cap);
DR_HIDDEN void dr__par_recycle_begin(dr_tape *root);
DR_HIDDEN bool dr__par_keep_chunk(dr_tape *root, dr_chunk *c, unsigned cls);
/* memory of the fork-join state, for dr_tape_free */
DR_HIDDEN void dr__par_free(dr_tape *root);
/* the node with relative id rel as seen from handle t: in t's current job,
   its history, or (for a child) the ancestors' jobs before the fork; NULL
   if none (ids of other jobs, gaps) */
DR_HIDDEN const dr_node *dr__find_node(const dr_tape *t, int64_t rel);

/*
 * Accumulation into the scalar adjoint array during a sweep.  In a parallel
 * sweep (s->atomic) several sibling jobs run at once and may add into the
 * same adjoint of an ancestor job: ids below s->own_lo are such "foreign"
 * ids and are added atomically; a job's own ids (>= own_lo) are only touched
 * by the job's own task and use plain adds.  The sink adj[-1] (missing
 * arguments) is skipped in parallel sweeps (it is shared).
 * Atomic adds may change the order of additions between runs, so parallel
 * sweeps agree with sequential ones to rounding, not bit for bit.
 */
static inline void dr__atomic_add(double *p, double v)
{
    double old, nw;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        nw = old + v;
    } while (!__atomic_compare_exchange(p, &old, &nw, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
}
static inline void dr__acc(dr_sweep *s, int64_t rel, double v)
{
    if (DR_LIKELY(!s->atomic) || rel >= s->own_lo)
        s->adj[rel] += v;
    else if (rel >= 0)
        dr__atomic_add(&s->adj[rel], v);
}
/* for adjoint storage owned by an ext record (arrays): true if the record
   with relative id rel may be written by sibling jobs at the same time, so
   adds into its storage must be atomic (or under dr__sweep_lock) */
static inline bool dr__foreign(const dr_sweep *s, int64_t rel)
{
    return s->atomic && rel < s->own_lo;
}
/* a lock for ext reverse rules that must allocate or initialise shared
   state during a parallel sweep (no-op when the sweep is not parallel) */
static inline void dr__sweep_lock(dr_sweep *s)
{
    if (s->atomic)
        dr__lock(s->tape->root);
}
static inline void dr__sweep_unlock(dr_sweep *s)
{
    if (s->atomic)
        dr__unlock(s->tape->root);
}

/* nary.c: a node whose arguments are further back than DR_NEAR_MAX, as an
   extended node holding their relative ids */
DR_HIDDEN dr_idx dr__push_far(dr_tape *t, int64_t ra, double da, int64_t rb,
                              double db);
/* tape.c: dr__push when the current chunk is full */
DR_HIDDEN dr_idx dr__push_grow(dr_tape *t, int64_t ra, double da, int64_t rb,
                               double db);

/* Append a node over relative ids ra, rb (-1: none; a missing argument is
   always rb); returns its public id, or DR_NONE on failure.  The fast path
   is straight-line: growing and far arguments are out of line. */
static inline dr_idx dr__push(dr_tape *t, int64_t ra, double da, int64_t rb,
                              double db)
{
    dr_node *n = t->cur;
    if (DR_UNLIKELY(n == t->end))
        return dr__push_grow(t, ra, da, rb, db);
    int64_t self = t->next;
    uint64_t oa = ra < 0 ? 0 : (uint64_t)(self - ra);
    uint64_t ob = rb < 0 ? 0 : (uint64_t)(self - rb);
    if (DR_UNLIKELY((oa | ob) > (uint64_t)DR_NEAR_MAX))
        return dr__push_far(t, ra, da, rb, db);
    n->da = da;
    n->db = db;
    n->a = (int32_t)oa;
    n->b = (int32_t)ob;
    t->cur = n + 1;
    t->len++;
    t->next = self + 1;
    return t->base + self;
}

/* Record a node over public ids a, b (either may be DR_NONE). */
static inline dr_idx dr__rec2(dr_tape *t, dr_idx a, double da, dr_idx b,
                              double db)
{
    int64_t ra, rb;
    if (DR_UNLIKELY(!dr__rel_arg(t, a, &ra) || !dr__rel_arg(t, b, &rb))) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    /* a missing argument always goes in b, so that a <= 0 marks exactly
       the nodes with nothing to propagate (inputs) and ext nodes: the sweep
       skips them without touching the sink slot */
    if (ra < 0) {
        ra = rb;
        rb = -1;
        da = db;
        db = 0.0;
    }
    return dr__push(t, ra, da, rb, db);
}

/* The result of a scalar operation with value v over a with partial d, as
   every scalar op records it: a constant argument (DR_NONE) or a NULL tape
   records nothing and gives a constant, an id not on the tape sets
   DR_EINVAL.  (A dr_real comes back, not the id, so that the ops can
   tail-call it where GCC keeps it out of line.) */
static inline dr_real dr__op1(dr_tape *t, double v, dr_idx a, double d)
{
    dr_real r = {v, DR_NONE};
    if (a == DR_NONE || DR_UNLIKELY(!t))
        return r;
    int64_t ra;
    if (DR_UNLIKELY(!dr__rel_arg(t, a, &ra))) {
        dr__fail(t, DR_EINVAL);
        return r;
    }
    r.idx = dr__push(t, ra, d, -1, 0.0);
    return r;
}

/* The same over a and b: one constant argument gives a node over the other */
static inline dr_real dr__op2(dr_tape *t, double v, dr_idx a, double da,
                              dr_idx b, double db)
{
    dr_real r = {v, DR_NONE};
    if ((a == DR_NONE && b == DR_NONE) || DR_UNLIKELY(!t))
        return r;
    r.idx = dr__rec2(t, a, da, b, db);
    return r;
}

#endif /* DR_INTERNAL_H */
