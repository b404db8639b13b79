/*
 * node.h - what a node kind is and what its rules get (cbits/README.md):
 * the extended node's record and its hooks (struct dr_ext), the states of
 * the reverse, forward and k-wide sweeps that the rules receive, and how a
 * rule adds into adjoints (dr__acc; in a parallel sweep, adds into
 * ancestor jobs go to the running task's log, ancestor_log.c).  Recording
 * (record/) makes nodes, the sweeps (sweep/, jobs/) run their rules; both
 * stand on this.  Not installed.
 */
#ifndef DR_NODE_H
#define DR_NODE_H

#include "tape/tape.h"

/*
 * What one task of a parallel sweep adds into its ancestor jobs' scalar
 * adjoints, in the order it adds them: (relative id, value) pairs, two
 * doubles an entry (an id is far below 2^53, so exact), in scratch blocks
 * (dr__block_take) chained oldest first, each of the next larger class
 * than the one before up to the largest (a task that logs one add takes
 * one small block, one that logs millions a few large ones: few trips to
 * the shared lock).  The task that forked adds its children's logs in once
 * all of them are done (jobs/parallel_sweep.c), child by child in the
 * order a sequential sweep takes them, so every adjoint receives the same
 * additions in the same order at any thread count.
 *
 * What the task adds into storage of ancestors' extended nodes (the
 * adjoint of an array recorded before the fork, which the task's siblings
 * add into too) goes to a buffer per such node (owner: the dr_ext), used
 * as the node's adjoint would be: one of the thread's for the fork's
 * children (*bufs_at, so that a thread that runs several children adds
 * them up in one buffer as a sequential sweep would, and the forking task
 * adds in one buffer a thread), else one of the task's own (bufs); on the
 * forking task's own thread, the storage the forking task itself adds into
 * (direct: one buffer fewer to fill and add in).  The
 * forking task adds the buffers in in parallel over the elements
 * (jobs/parallel_sweep.c): no locks while the children run.  These sums
 * come in an order that depends on which thread ran which child: they
 * agree with one thread's to rounding.
 */
typedef struct dr_anc_log {
    dr_scratch *first, *last; /* NULL until the first add               */
    size_t n;                 /* entries in the last block              */
    size_t cap;               /* entries the last block holds           */
    dr_scratch *bufs;         /* per ancestor ext node, most recent first */
    dr_scratch **bufs_at;     /* the list in use: NULL for bufs           */
    struct dr_sweep *direct;  /* on the forking task's own thread: its
                                 sweep, whose storage this task adds into
                                 directly (no other thread writes it until
                                 the children are done)                   */
} dr_anc_log;
/* the entries of block b of log L */
static inline size_t dr__log_entries(const dr_anc_log *L, const dr_scratch *b)
{
    return b == L->last ? L->n : b->cap / 2;
}

/*
 * State of one reverse sweep, as an extended node's reverse rule gets it.
 * The sweep layer fills it in and drives the rules; it is declared here,
 * below both, because a node kind is its record plus its rule: the node
 * kinds of the recording layer (n-ary nodes) must not reach up for it.
 */
typedef struct dr_hsweep dr_hsweep;
typedef struct dr_sweep {
    double *adj;     /* adjoint array, indexed by relative id; adj[-1] sink */
    dr_tape *tape;
    bool atomic;     /* siblings run beside this job (parallel sweep)      */
    int64_t own_lo;  /* relative ids >= own_lo belong to the running job   */
    dr_anc_log *log;     /* where adds into ids < own_lo go while atomic */
    dr_hsweep *h;    /* NULL, but in the reverse pass of a Hessian-vector
                        product (dr_hsweep)                               */
} dr_sweep;

/*
 * The reverse pass of Hessian-vector products (sweep/hvp.c) runs the
 * reverse rules of extended nodes through dr_ext.reverse2, on "planes":
 * plane 0 is the adjoints, plane j >= 1 the tangents of the adjoints in
 * direction j - 1.  A rule's first-order part is linear in the adjoints,
 * so the same reverse rule serves every plane (J^T of plane j of the
 * node's adjoint into plane j of its arguments'); what is left of the
 * tangent of J^T ybar is the derivative of J itself along the direction,
 * which for a bilinear operation is the same rule run on plane j with
 * its operands' values read as their tangents (tval) and the node's
 * adjoint of plane 0.  While s->h is set, s->adj is the base of the
 * current plane of the scalar adjoints, whose slots lie `stride` doubles
 * apart (dr__hacc).
 */
struct dr_hsweep {
    uint64_t pass;      /* this pass's number (process-wide): storage a
                           rule keeps with another number is stale      */
    size_t k;           /* directions                                   */
    size_t plane;       /* the plane the rules run on now (0 .. k)      */
    int64_t tval;       /* -1; d >= 0: operands' values read as their
                           tangents of direction d, the node's adjoint
                           as its plane 0 (bilinear second-order terms) */
    double *acc0;       /* scalar adjoints, plane 0, of relative id 0:
                           plane j of id r at acc0[r * stride + j]      */
    size_t stride;      /* k + 1                                        */
    const double *tan0; /* scalar tangents: direction d of id r at
                           tan0[r * k + d] (r = -1: zeros)              */
    double *zeros;      /* zeros (a zero array tangent read as values),
                           nzeros of them; the pass frees them          */
    size_t nzeros;
};
/* run the rules on plane j from now on */
static inline void dr__hplane(dr_sweep *s, size_t j)
{
    s->h->plane = j;
    s->adj = s->h->acc0 + j;
}
/* add v into plane s->h->plane of scalar rel's adjoint (rel = -1: a sink) */
static inline void dr__hacc(dr_sweep *s, int64_t rel, double v)
{
    s->adj[rel * (int64_t)s->h->stride] += v;
}
/* the tangent of direction d of scalar rel (0 for a constant, rel < 0) */
static inline double dr__htan(const dr_hsweep *h, int64_t rel, size_t d)
{
    return rel >= 0 ? h->tan0[(size_t)rel * h->k + d] : 0.0;
}

/*
 * State of one forward (tangent) sweep, as an extended node's forward rule
 * gets it: k tangents per node, side by side (k == 1: plain forward mode;
 * k > 1: vector mode).  Scalar tangents by relative id; an ext record with
 * array values keeps its own tangent storage, as it does its adjoints.
 */
/* what array inputs' tangents are in a forward sweep (dr_fsweep) */
enum {
    DR_ARR_SEEDS_NONE,    /* zero: a driver that seeds its own directions
                             (Jacobian, dense Hessian)                  */
    DR_ARR_SEEDS_TANGENT, /* their tangent seeds (dr_arr_tangent_seed):
                             dr_forward, dr_jvp, dr_jvp_vec, dr_hvp      */
    DR_ARR_SEEDS_ADJOINT  /* their adjoints (k == 1): dr_hvp_inputs      */
};
typedef struct dr_fsweep {
    double *tan;     /* tan[id * k + j]: tangent j of relative id      */
    size_t k;        /* directions                                      */
    dr_tape *tape;
    int arr_seeds;   /* DR_ARR_SEEDS_*                                  */
} dr_fsweep;

/*
 * State of one k-wide reverse sweep (vector mode), as an extended node's
 * reverse_vec rule gets it: k adjoints per node side by side, adj[id * k + j]
 * (adj[-k .. -1] a sink).  Always sequential: a tape that forked is swept
 * one direction at a time instead (drivers).
 */
typedef struct dr_vsweep {
    double *adj;
    size_t k;
    dr_tape *tape;
} dr_vsweep;

/*
 * The passes recorded as operations (recorded/: dr_tangent_record,
 * dr_adjoint_record) run an extended node's rule through its hooks
 * tangent_record and adjoint_record, which record the node's tangent, or
 * pass its adjoint on to its arguments, with operations on the same tape.
 * A value of the pass (a tangent or an adjoint) is a dr_real: a constant
 * (id DR_NONE; {0, DR_NONE} is zero), a scalar node, or an array node
 * (its id; the value unused).
 */
typedef struct dr_rpass dr_rpass;
struct dr_rpass {
    dr_tape *t;
    /* the pass's value of relative id r (zero for a constant, r < 0) */
    dr_real (*get)(dr_rpass *p, int64_t r);
    /* the adjoint pass: whether r's adjoint is read (a variable, or a node
       between it and y), and its new value */
    bool (*wanted)(dr_rpass *p, int64_t r);
    void (*set)(dr_rpass *p, int64_t r, dr_real v);
};

/*
 * An extended node's record lives in the tape's arena (valid until clear).
 * `reverse` gets the node's own scalar adjoint g (which may be zero for
 * array-valued nodes, whose adjoint lives elsewhere); `clear_adj`, when set,
 * zeroes any adjoint storage the record owns (dr_adjoints_clear).  Both are
 * set by whoever records the node: the hook through which a layer above
 * the sweeps (arrays) gets its rules run by them.
 */
struct dr_ext {
    void (*reverse)(dr_ext *e, dr_sweep *s, double g);
    void (*clear_adj)(dr_ext *e);
    /* the node's tangents from its arguments' in a forward sweep (NULL: the
       kind has no forward rule, and dr_forward answers DR_ENOTSUP) */
    void (*forward)(dr_ext *e, dr_fsweep *f);
    /* the k-wide reverse rule, g the node's k adjoints (NULL: the kind has
       none, and the vector drivers sweep one direction at a time) */
    void (*reverse_vec)(dr_ext *e, dr_vsweep *s, const double *g);
    /* replay (sweep/replay.c): the node's values recomputed from its
       arguments' values at the new point, and anything its rules read
       (log: the log by relative id, an argument's value log[r].v).  DR_OK
       and, for a scalar-valued kind, its value in *v (which replay writes
       into its entry); a kind whose results are nodes of their own
       (external calls) writes their entries' v itself.  Any other status
       fails the replay, which then undoes itself.  NULL: the kind does
       not replay (dr_replay answers DR_ENOTSUP); a kind that sets it or
       reverse2 is logged as DR_OPC_EXT (dr__record_ext) */
    dr_status (*replay)(dr_ext *e, struct dr_oplog *log, double *v);
    /* after a replay that succeeded, for records on the exts list: drop
       what sweeps at the old point left beside the adjoints (which
       clear_adj drops), such as tangents; NULL: nothing */
    void (*replayed)(dr_ext *e);
    /* the storage a reverse rule adds into for this node's adjoint as
       seen from sweep s (an array's own adjoint, or for an array of an
       ancestor job in a parallel sweep the task's buffer for it), its
       length in *n, *fresh when its contents are undefined (to be
       overwritten, not added to); NULL: nothing to add into (an inactive
       node, or memory ran out and the tape failed).  NULL for kinds
       without adjoint storage of their own. */
    double *(*acc_into)(dr_ext *e, dr_sweep *s, bool *fresh, size_t *n);
    /* second order (sweep/hvp.c): the reverse rule of a Hessian-vector
       product's pass (dr_hsweep, s->h set), g the node's scalar adjoint
       and its k tangents (g[0 .. k]; array-valued kinds keep theirs); the
       forward hook gives its tangents there.  NULL: the kind has no
       second-order rule (dr_hvp answers DR_ENOTSUP) */
    void (*reverse2)(dr_ext *e, dr_sweep *s, const double *g);
    /* after dr_hvp_inputs' pass of number `pass`, the adjoints cleared:
       make the node's adjoint its part of the product, where it is an
       input (drivers/hessian.c); NULL: nothing of its own */
    void (*hvp_result)(dr_ext *e, dr_tape *t, uint64_t pass);
    /* sparsity patterns (drivers/sparse.c): the node's arguments
       (relative ids, -1 for none, in *args, n of them) and whether it
       has second partials (*nonlinear; taken as coupling every pair of
       its arguments' variables: a pattern that may hold more than the
       nonzeros, never fewer).  false or NULL: no rule (DR_ENOTSUP) */
    bool (*pattern)(dr_ext *e, size_t *n, const int64_t **args,
                    bool *nonlinear);
    /* the recorded passes (dr_rpass above): the node's tangent from its
       arguments', recorded; its adjoint g added into its arguments',
       recorded.  NULL: no rule (DR_ENOTSUP) */
    dr_real (*tangent_record)(dr_ext *e, dr_rpass *p);
    void (*adjoint_record)(dr_ext *e, dr_rpass *p, dr_real g);
    dr_ext *next; /* all ext records of the tape, newest first */
    int64_t id;   /* relative id of the node */
};

/*
 * Accumulation into the scalar adjoint array during a sweep.  In a parallel
 * sweep (s->atomic) several sibling jobs run at once and may add into the
 * same adjoint of an ancestor job: ids below s->own_lo are such "foreign"
 * ids, and their adds go to the task's log (dr_anc_log), added in by the
 * forking task in a fixed order; a job's own ids (>= own_lo) are only
 * touched by the job's own task and use plain adds.  The sink adj[-1]
 * (missing arguments) is skipped in parallel sweeps (it is shared).
 * Without memory for its log a task cannot add into its ancestors at all
 * (the forking task adds the logs of finished siblings into the same
 * adjoints while it runs): the sweep fails with DR_ENOMEM, as it does
 * when any other of its allocations fails.
 */
/* the log's out-of-line part: a new block, or (no log, out of memory) the
   tape failed with DR_ENOMEM and the add dropped (ancestor_log.c) */
DR_HIDDEN void dr__anc_add_slow(dr_sweep *s, int64_t rel, double v);
/* the running task's buffer for ancestor ext node e's storage of n doubles
   (dr_anc_log's bufs), made on first use with *fresh set (its contents
   undefined); NULL after failing the tape (out of memory, or no log) */
DR_HIDDEN double *dr__anc_buf(dr_sweep *s, dr_ext *e, size_t n, bool *fresh);
/* add v into ancestor id rel (< s->own_lo, >= 0) in a parallel sweep */
static inline void dr__anc_add(dr_sweep *s, int64_t rel, double v)
{
    dr_anc_log *L = s->log;
    if (DR_LIKELY(L && L->n < L->cap)) {
        double *e = L->last->data + 2 * L->n;
        e[0] = (double)rel;
        e[1] = v;
        L->n++;
    } else {
        dr__anc_add_slow(s, rel, v);
    }
}
static inline void dr__acc(dr_sweep *s, int64_t rel, double v)
{
    if (DR_LIKELY(!s->atomic) || rel >= s->own_lo)
        s->adj[rel] += v;
    else if (rel >= 0)
        dr__anc_add(s, rel, v);
}
/* for adjoint storage owned by an ext record (arrays): true if the record
   with relative id rel may be written by sibling jobs at the same time, so
   adds into its storage go to the running task's buffer for it
   (dr__anc_buf) */
static inline bool dr__foreign(const dr_sweep *s, int64_t rel)
{
    return s->atomic && rel < s->own_lo;
}

#endif /* DR_NODE_H */
