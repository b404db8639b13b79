/*
 * tape.h - tape storage (cbits/README.md): the node layout, chunks that
 * never move, the bump arena, scratch buffers, the tape handle, and the lock
 * and per-thread chunk lists that let several threads record on one tape.
 * What the nodes mean is the recording layer's business.  Not installed.
 */
#ifndef DR_TAPE_H
#define DR_TAPE_H

#include "base/base.h"

#include <pthread.h>
#include <stdint.h>

/* an extended node's record (node/node.h): storage only holds a pointer */
typedef struct dr_ext dr_ext;

/*
 * One tape node (struct dr__node in dualrev/internal/recorder_impl.h): 24
 * bytes, two arguments.
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
typedef struct dr__node dr_node; /* dualrev/internal/recorder_impl.h */

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
/* DR_NEAR_MAX (dualrev/internal/recorder_impl.h): make test-far builds the library with a small one */

/*
 * A scratch buffer of doubles.  The root keeps spare ones for reuse across
 * sweeps (dr__scratch_take / dr__scratch_give) and frees them with the
 * tape; a parallel sweep's array rules accumulate into them (arrays/array.c).
 */
typedef struct dr_scratch dr_scratch;
#define DR_SCRATCH_BLOCK 112 /* doubles in a block of class 0 (arena.c) */
#define DR_BLOCK_CLASSES 8
struct dr_scratch {
    dr_scratch *next;  /* in the spare list, or in a sweep's pending list */
    void *owner;       /* what the data is for, while in use             */
    size_t cap;        /* doubles                                        */
    double *data;      /* 64-byte aligned                                */
    void *raw;
};

/*
 * A chunk of nodes.  Chunks never move.  A chunk belongs to one job (a
 * sequential stretch of recording, jobs/jobs.h) and reserves the contiguous
 * range of relative ids first .. first+cap-1 from the tape's shared counter
 * (dr_tape.reserved), so the ids of different jobs never overlap.
 * Capacities are DR_JOB_CHUNK_MIN << k; free chunks are kept in one list per
 * capacity (size class).
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
    bool ext;         /* it may hold an ext node (set when one is
                         recorded, cleared with n): the sweep skips a run
                         of zero adjoints only where none is, since an
                         array node's adjoints are not in those slots     */
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

/* a job's history: a fork record of the jobs layer (jobs/jobs.h); below it
   only whether a handle has one matters (then the tape has forked) */
typedef struct dr_hist dr_hist;

/* dr_tape.state: one word for every layer's flags, so that the recording
   fast path and the calls that need a whole tape test them all at once */
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

/*
 * What a higher layer hangs on a root tape so that the layers below can
 * reach it without calling up (cbits/README.md, "hooks").  The jobs layer
 * sets them at a tape's first fork; NULL before, when there is nothing
 * above to reach.  All are cold: once per tape, once per sweep or replay.
 */
/* slots zeroed at once from which the zero hook is worth its hand-offs */
#define DR_ZERO_SPLIT ((size_t)1 << 17)
typedef struct dr_tape_hooks {
    /* dr_tape_free, before the storage goes: stop the workers, free the
       child handles and everything else the layer keeps */
    void (*release)(dr_tape *root);
    /* dr_reverse, after sweeping the root's current job into adj (relative
       ids; adj[-1] the sink): the jobs before its last join */
    dr_status (*sweep_history)(dr_tape *root, double *adj);
    /* dr_forward and the vector sweeps (sweep/forward.c): the jobs before
       the root's last join, oldest first, each after every job it may read
       (ctx is the sweep layer's dr_fsweep); DR_ENOTSUP if a node had no
       forward rule */
    dr_status (*forward_history)(dr_tape *root, void *ctx);
    /* dr_replay (sweep/replay.c): the jobs before the root's last join,
       each after every job it may read, each through dr__replay_job (pass
       is the sweep layer's dr_replay_pass); where `parallel`, the children
       of a fork at once on the pool if it runs.  The first failure of a
       job (in the order a sequential replay meets them) */
    dr_status (*replay_history)(dr_tape *root, void *pass, bool parallel);
    /* adjoint and tangent storage (sweep/reverse.c): n doubles at p set to
       zero, a large range on the pool's threads (the zeroing of every id's
       slot before a sweep is otherwise one thread's serial work) */
    void (*zero)(dr_tape *root, double *p, size_t n);
} dr_tape_hooks;

/*
 * Something a node holds that must be let go when the node goes (a user's
 * context of an external function, record/external.c): the tape layer
 * keeps them in a list per handle, newest first, and calls release when the
 * tape is cleared or freed, or when a restore drops the node.  A child
 * handle's list joins its parent's at dr_join, as the ext records do.
 */
typedef struct dr_owned dr_owned;
struct dr_owned {
    dr_owned *next;
    void (*release)(dr_owned *o);
};
/* release o and every one after it, up to (without) until */
DR_HIDDEN void dr__owned_release(dr_owned *o, const dr_owned *until);
/* Spares: what a node's kind let go of when the node went but keeps for
   the next recording of the same program (a checkpointed loop's context,
   loops/checkpoint.c), so that recording it again after dr_tape_clear
   allocates nothing.  The root keeps them, newest first, in the memory
   dr_tape_bytes counts, until it is freed; at a clear after a recording
   that asked for spares, those it did not take back are released (the
   program changed: its loops are others), so that spares do not pile up
   across clears.  Safe from any handle of the tape (the root's lock while
   it is shared). */
DR_HIDDEN void dr__spare_keep(dr_tape *t, dr_owned *o);
/* the newest spare for which fits(o, want) holds, out of the list; NULL
   for none */
DR_HIDDEN dr_owned *dr__spare_take(dr_tape *t,
                                   bool (*fits)(const dr_owned *o,
                                                const void *want),
                                   const void *want);

/* a comparison recorded on a tape of order 2 (record/guard.c): replay
   checks that it comes out the same at new inputs */
typedef struct dr_guard {
    int64_t ra, rb;  /* relative ids of the compared values, -1: constant */
    double x, y;     /* their values when recorded                        */
    int32_t op;      /* enum dr_cmp (record/record.h)                     */
    int32_t outcome; /* 1 or 0                                            */
} dr_guard;

/* an input range noted for a front end (record/frontend.c) */
typedef struct dr_fe_range {
    int64_t first; /* its first public id */
    size_t n;
} dr_fe_range;

struct dr_par;     /* the jobs layer's state (jobs/jobs.h)              */
struct dr_sharing; /* the lock and per-thread chunk lists (sharing.c)   */

/*
 * A tape handle.  The root handle (dr_tape_new) owns the tape; dr_fork makes
 * child handles that share the root's storage.  The first block of fields is
 * the recording cursor of the handle's current job.  Fields marked [root]
 * are used only in the root handle (reach them through t->root).  The
 * fields of higher layers are here so that one allocation holds a handle;
 * the layer that owns each is named beside it.
 */
struct dr_tape {
    /* recording cursor: the fast path touches only these */
    dr_node *cur, *end;
    int64_t next;    /* relative id of the next node; ids < next are valid
                        arguments (from this job or an earlier one)      */
    int64_t base;    /* public id = base + relative id (same in all handles) */
    int64_t id_end;  /* [root] the end of the tape's id range (tape.c)   */
    size_t len;      /* nodes recorded by this handle (and joined children) */
    dr_status status;
    unsigned state;  /* DR_ST_* flags                                    */
    unsigned order;  /* record: 2 while second-order information is
                        recorded (dr_tape_set_order), else 1 or 0      */
    uint32_t fe_paused; /* frontend: 1 while this handle's scalar
                           operations record nothing (dr_fe_pause); right
                           after order, so that one 8-byte load tests
                           both (frontend.c)                        */

    dr_tape *root;     /* the root handle (itself for the root)          */
    dr_chunk *chunk;   /* newest chunk of the current job, NULL before any */
    dr_hist *hist;     /* jobs: history of the current job (NULL: Start) */
    dr_hist *fork;     /* jobs: while forked, the open fork record       */
    dr_hist *up;       /* jobs: a child's parent's fork record (ancestry) */
    dr_tape *hnext;    /* jobs: child handles, link in the free list     */
    dr_tape *hall;     /* jobs: child handles, link in the list of all   */
    dr_arena_block *arena; /* the block this handle bump-allocates from  */
    dr_ext *exts;      /* record: ext records with clear_adj recorded here */
    dr_owned *owned;   /* what nodes recorded here hold (dr_owned)        */
    dr_owned *spares;  /* root: kept for reuse across clears (dr_owned)   */
    bool spares_asked; /* root: dr__spare_take called since the last clear */
    dr_rec *rec;       /* record: the open recorder (DR_ST_RECOPEN), else NULL */
    struct dr_oplog *oplog; /* record: what second derivatives need of
                               the nodes this handle recorded at order
                               2, by relative id (log/oplog.c)        */
    size_t oplog_cap;  /* record: entries allocated                       */
    int64_t oplog_lo;  /* record: the relative id of entry 0              */
    int64_t oplog_start; /* record: where the handle began to log; a child's
                            log holds entries from its first one on
                            (oplog_lo), and the ids between are no node of
                            its (siblings')                              */
    int64_t oplog_n;   /* record: relative ids oplog_lo .. oplog_lo +
                          oplog_n - 1 have an entry                       */
    dr_fe_range *fe_ranges; /* record: [root] the input ranges of
                               dr_fe_input_range, by increasing first id */
    size_t fe_ranges_n, fe_ranges_cap; /* record: entries noted; allocated */
    size_t fe_cursor;  /* record: the entry the next look-up likely asks for */
    dr_guard *guards;  /* record: comparisons recorded at order 2, oldest
                          first (record/guard.c)                          */
    size_t guards_n, guards_cap; /* record: entries; allocated            */
    dr_chunk **replay_chunks; /* sweep: [root] the chunks oldest first, as
                                 replay last found them (sweep/replay.c) */
    size_t replay_nchunks, replay_cap; /* sweep: entries; allocated      */
    int64_t replay_ok; /* sweep: [root] t->next when replay last found
                          every node replayable and every input's value
                          known; -1: not since the last clear or restore */
    int64_t replay_in_ok; /* sweep: [root] t->next when the inputs below
                             were last found each an input node, once, with
                             its value known; -1 as replay_ok */
    dr_idx *replay_in_ids; /* sweep: [root] those inputs' ids (x given) */
    size_t replay_in_n, replay_in_cap; /* sweep: how many; allocated     */
    dr_idx replay_in_first; /* sweep: [root] their first id (a range), or
                               DR_NONE where replay_in_ids holds them    */
    double *replay_old; /* sweep: [root] the inputs' values before a replay,
                           to undo it; replay_in_cap of them           */
    bool fe_programs;  /* frontend: [root] statements are recorded with
                          their programs at order 2 (dr_fe_programs: a
                          tape kept for replay)                         */
    bool arr_seeded;   /* arrays: [root] an array input was seeded with
                          tangents since the last dr_arr_tangents_clear
                          or clear (a Hessian-vector product of no scalar
                          inputs then has directions to take)         */
    uint64_t hvp_pass; /* sweep: [root] the number of the last pass of a
                          Hessian-vector product (sweep/hvp.c), whose
                          array results dr_arr_hvp_vec reads; 0: none */

    /* [root] shared storage */
    int64_t reserved;  /* relative ids handed out to chunks (atomic)      */
    dr_chunk *free[DR_CHUNK_CLASSES]; /* free chunks by size class        */
    dr_chunk *chunks;  /* every chunk (linked by all)                    */
    dr_arena_block *arena_free, *blocks; /* free blocks; every block     */

    dr_scratch *scratch; /* spare scratch buffers                     */
    dr_scratch *block_spare[DR_BLOCK_CLASSES]; /* spare scratch blocks
                                  per class (dr__block_take)          */
    double *adj_raw;    /* sweep: adjoint storage, adj_raw[0] the sink */
    size_t adj_cap;     /* sweep: slots after the sink                */
    int64_t adj_valid;  /* sweep: relative ids < adj_valid have live
                           adjoints                                   */
    double *tan_raw;    /* sweep: tangent storage (forward.c), as adj_raw:
                           tan_raw[0] a slot that stays zero          */
    size_t tan_cap;     /* sweep: slots after it                      */
    int64_t tan_valid;  /* sweep: relative ids < tan_valid have live
                           tangents (or seeds)                        */

    size_t bytes;       /* memory held (atomic)                       */
    unsigned threads;   /* jobs: workers for parallel work (dr_set_threads) */
    struct dr_par *parallel; /* jobs: fork-join state, NULL before a fork */
    struct dr_sharing *sharing; /* NULL before the first fork          */
    const dr_tape_hooks *hooks; /* NULL before the first fork          */
};

/* record the first failure in t's sticky status (atomic: safe from any
   thread, for example from an ext node's reverse during a parallel sweep) */
static inline void dr__fail(dr_tape *t, dr_status st)
{
    dr_status ok = DR_OK;
    __atomic_compare_exchange(&t->status, &ok, &st, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

/* tape.c */
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
/* Continue t's current job on a new chunk with room for need nodes (the
   current one, if any, is full or has less); the cursor then points at its
   first node.  NULL after failing t with DR_ENOMEM. */
DR_HIDDEN dr_node *dr__chunk_open(dr_tape *t, size_t need);
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

/*
 * A position on a root handle that is not forked, to come back to: what was
 * recorded after dr__tape_save is dropped by dr__tape_restore (its chunks
 * go back to the free lists; arena space is kept until clear).  Used by
 * calls that record temporary nodes (dr_hvp records a tangent pass, sweeps
 * it and drops it).  The ids of dropped nodes are handed out again.
 */
typedef struct dr_tape_pos {
    dr_chunk *chunk;
    size_t n;          /* nodes in chunk at the time */
    int64_t next;
    size_t len;
    dr_ext *exts;
    dr_owned *owned;
    int64_t reserved;  /* the root's ids handed out to chunks            */
    dr_arena_block *arena;
    size_t arena_used;
    size_t guards_n;   /* comparisons recorded                           */
} dr_tape_pos;
DR_HIDDEN void dr__tape_save(dr_tape *t, dr_tape_pos *pos);
DR_HIDDEN void dr__tape_restore(dr_tape *t, const dr_tape_pos *pos);

/* arena.c */
/* bytes in the arena (64-byte aligned, valid until clear), NULL after
   failing t */
DR_HIDDEN void *dr__arena_alloc(dr_tape *t, size_t bytes);
/* a scratch buffer of at least n doubles (contents undefined) from the
   root's spares or new, NULL when memory runs out; and back for reuse.
   Safe from any thread: they take the shared-storage lock. */
DR_HIDDEN dr_scratch *dr__scratch_take(dr_tape *root, size_t n);
DR_HIDDEN void dr__scratch_give(dr_tape *root, dr_scratch *b);
/* a scratch block of class cls < DR_BLOCK_CLASSES, DR_SCRATCH_BLOCK << cls
   doubles, from a list of its own per class (taking one is O(1): a
   parallel sweep's logs take many, chained by next, which this sets to
   NULL), or NULL when memory runs out; and a chain of them (first .. last,
   linked by next, of any classes) back.  Under the lock, as above. */
DR_HIDDEN dr_scratch *dr__block_take(dr_tape *root, unsigned cls);
DR_HIDDEN void dr__blocks_give(dr_tape *root, dr_scratch *first,
                               dr_scratch *last);
/* the root's spare scratch buffers and blocks, for dr_tape_free */
DR_HIDDEN void dr__scratch_free(dr_tape *root);

/* sharing.c: what a tape needs once several threads use it, made at its
   first fork */
/* make root->sharing; false when out of memory */
DR_HIDDEN bool dr__sharing_start(dr_tape *root);
DR_HIDDEN void dr__sharing_free(dr_tape *root);
/* the shared-storage lock (no-op before the first fork).  Every allocation
   while other threads may use the tape is made under it, so the user's
   allocator is never entered by two threads of one tape at once. */
DR_HIDDEN void dr__lock(dr_tape *root);
DR_HIDDEN void dr__unlock(dr_tape *root);
/* the lock itself, for a condition variable that waits under it (the
   worker pool's); only after dr__sharing_start */
DR_HIDDEN pthread_mutex_t *dr__lock_mutex(dr_tape *root);
/*
 * Chunk affinity: a chunk recorded by a pool thread goes back to that
 * thread's free list on clear, and that thread takes from it first, so a
 * repeated parallel program records into memory its own core last touched
 * (the cross-core transfers otherwise made recording 5x slower).  A thread
 * gets a slot number 1.. on its first use of the tape's slots; 0 when there
 * are none or they have run out.  The calls below that touch the lists are
 * made with the lock held, or on a whole tape.
 */
DR_HIDDEN unsigned dr__slot(dr_tape *root);
/* the per-thread lists for nslots - 1 threads (the worker pool's start);
   false when out of memory (the pool then works without affinity) */
DR_HIDDEN bool dr__slots_open(dr_tape *root, unsigned nslots);
/* their chunks back to the root's free lists (the pool stops; a new one
   numbers its threads afresh) */
DR_HIDDEN void dr__slots_close(dr_tape *root);
/* a free chunk of class cls from thread slot's list (slot 0: from any
   thread's list), or NULL */
DR_HIDDEN dr_chunk *dr__slot_take_chunk(dr_tape *root, unsigned cls,
                                        unsigned slot, size_t cap);
/* dr_tape_clear: empty the lists, then keep each chunk a pool thread
   recorded in its thread's list (false: it goes to the root's) */
DR_HIDDEN void dr__slots_recycle_begin(dr_tape *root);
DR_HIDDEN bool dr__slot_keep_chunk(dr_tape *root, dr_chunk *c, unsigned cls);

/* ---------------------------------------------------------------- ids */

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

/* the relative id of an id already checked with dr__rel (-1: DR_NONE) */
static inline int64_t dr__rel_of(const dr_tape *t, dr_idx id)
{
    int64_t r = -1;
    dr__rel(t, id, &r);
    return r;
}

/* the relative ids below this may be a new node's arguments: those under
   t->next, and those an open recorder handed out past it */
static inline uint64_t dr__arg_limit(const dr_tape *t)
{
    uint64_t lim = (uint64_t)t->next;
    if ((t->state & DR_ST_REC) && (uint64_t)t->rec->next_ > lim)
        lim = (uint64_t)t->rec->next_;
    return lim;
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
    if (r < dr__arg_limit(t)) {
        *rel = (int64_t)r;
        return true;
    }
    return false;
}

#endif /* DR_TAPE_H */
