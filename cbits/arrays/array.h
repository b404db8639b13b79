/*
 * array.h - internals of the bulk array operations (not installed).
 *
 * An array value lives on the tape as an extended node (a == DR_EXT_TAG)
 * whose record is a dr_arr_node.  The record holds the op's reverse kernel,
 * the shape, a pointer to the values (in the tape's arena), pointers to the
 * records of its array operands (resolved and validated when the op is
 * recorded), the relative ids of its scalar operands, and a lazily allocated
 * adjoint buffer.  Every array node, constant or not, has an id, so the
 * id-based API (for FFI callers) can name any array.
 *
 * Array nodes are recognised by their clear_adj hook (dr__arr_clear_adj).
 * Scalar-valued array ops (dot, sum, max, logsumexp, index) use the same
 * record type with clear_adj == NULL: they are scalar nodes whose adjoint is
 * the ordinary scalar adjoint handed to reverse as g.
 *
 * Adjoints: the buffer `adj` is allocated from the arena the first time the
 * sweep (or dr_arr_seed) adds into it, and zeroed then; dr_adjoints_clear
 * only marks it stale (adj_live = false), and the next first write zeroes it
 * again, so repeated sweeps of one tape allocate nothing.  An array node whose
 * adjoint is not live was not reached and its reverse returns at once.
 *
 * Parallel sweeps: scalar-adjoint writes go through dr__arr_sacc (dr__acc:
 * to the running task's log when the id is foreign to the running job);
 * array adjoints of ancestor jobs, which sibling jobs may add into at once,
 * are accumulated in the running thread's buffer for the array and added
 * in by the forking task when the siblings are done (dr__arr_adj_for;
 * node/node.h), so sibling jobs' rules run in parallel without locks.
 *
 * Tangents (forward sweeps, node/node.h's dr_fsweep with k directions): an
 * array node's tangent is k blocks of n doubles, direction-major (direction
 * d at tcur + d*n), so each direction has the array's own shape and one
 * BLAS call can often serve all k (a stack of k matrices is one taller
 * matrix).  The forward sweep calls hdr.forward on every node, oldest
 * first; the entry (array.c) sets tcur to NULL ("zero tangent", so readers
 * skip work) and runs the node's fwd kernel if the node is active.  A
 * kernel that has something to write takes its output buffer with
 * dr__arr_tan_out, which reuses the node's arena buffer when it is big
 * enough (sweeps repeat on one tape, with varying k).  tcur is valid until
 * the next forward sweep; it may point at an operand's buffer (reshape) or
 * at the seed (inputs).  Scalar-valued ops write their k tangents into
 * f->tan[id*k + d] (zeroed by the entry first).  Seeds of array inputs
 * (dr_arr_tangent_seed) live in their own buffer, for sweeps of the k they
 * were given with, until dr_arr_tangents_clear.
 *
 * Replay (sweep/replay.c, through dr_ext.replay): every op's values are
 * computed by one primal kernel (prim), which recording calls once the
 * record is set up and replay calls again, in recording order, for every
 * active node, after reading the node's scalar operand y->sx from the log
 * into y->sv; a scalar-valued op's kernel returns its value, which replay
 * writes into the node's log entry for the scalar nodes after it.  So the
 * values at replay are those a fresh recording computes, bit for bit, and
 * the reverse and forward kernels, which read values, work at the new
 * point.  Inputs are set by dr_replay_arrays (array_replay.c); inactive
 * nodes depend on constants alone and keep their values.
 */
#ifndef DR_ARRAY_H
#define DR_ARRAY_H

#include "jobs/jobs.h"
#include "rules/rule_second.h"

#include <stdint.h>

typedef struct dr_arr_node dr_arr_node;
/* primal kernel (array.h, "replay"): y's values, and whatever its rules
   read that depends on them (max's position), from its operands' values;
   returns a scalar-valued node's value (array-valued: 0).  log: at replay,
   the tape's log by relative id, where scalar operands other than y->sx
   are read; NULL when the node is recorded (they are in y then) */
typedef double (*dr_arr_prim)(dr_arr_node *y, const dr_oplog *lg);
/* reverse kernel: y is the node, g its scalar adjoint (scalar-valued ops) */
typedef void (*dr_arr_rev)(dr_arr_node *y, dr_sweep *s, double g);
/* forward kernel: y's tangent from its operands' (array.h, "tangents");
   called only for active nodes, with y->tcur == NULL on entry */
typedef void (*dr_arr_fwd)(dr_arr_node *y, dr_fsweep *f);
/* second-order kernel of an op of kind DR_ARR_SO_OWN (array.h, "second
   order"): on plane d + 1 of s (the plane set), the derivative along
   direction d of what the reverse kernel adds, with y's adjoint of plane
   0 (g for a scalar-valued op) held fixed */
typedef void (*dr_arr_rev2)(dr_arr_node *y, dr_sweep *s, double g, size_t d);

/*
 * Second order (Hessian-vector products, sweep/hvp.c through
 * dr_ext.reverse2; node/node.h's dr_hsweep).  The forward kernels give
 * the tangents; the reverse pass runs the reverse kernel once a plane
 * (the adjoint and its k tangents: J^T times each), then adds what J's
 * own change along each direction contributes, by the op's kind:
 * LINEAR, nothing (J does not depend on values: sums, copies, indexing,
 * the maximum's chosen element); BILINEAR, the reverse kernel again on
 * plane d + 1 with its operands' values read as their tangents of
 * direction d and y's adjoint of plane 0 (products: each operand's
 * share reads only the other's values, so both terms come out of one
 * run); OWN, the op's rev2 kernel.  NONE (0): the op has no
 * second-order rule, and dr_hvp answers DR_ENOTSUP.  The reverse kernels
 * therefore read y's adjoint with dr__arr_adj_in, and bilinear ones their
 * operands' values with dr__arr_val / dr__arr_sval.  The planes of an
 * array-valued node live in h2, zeroed by the first add of a pass
 * (h2_pass), and stay for dr_arr_hvp_vec until the next pass.
 */
enum { DR_ARR_SO_NONE, DR_ARR_SO_LINEAR, DR_ARR_SO_BILINEAR, DR_ARR_SO_OWN };

/*
 * The op that made a node (its parameters in ip and aux as its file says),
 * for the recorded passes (nested/array_rules.c), which record an op's tangent
 * and adjoint with the array operations themselves.  0: an input or a
 * constant.  OWN: an op that sets the recorded passes' hooks of its node
 * itself (dr_ext.tangent_record, adjoint_record), its rules beside its
 * kernels, written with the ops of its own file and of files that do not
 * use it; so a new op touches no file but its own here (cbits/README.md).
 */
enum {
    DR_ARR_K_LEAF, DR_ARR_K_BIN, DR_ARR_K_SCALE, DR_ARR_K_MAP, DR_ARR_K_BCAST,
    DR_ARR_K_INDEX, DR_ARR_K_BUILD, DR_ARR_K_BLOCK, DR_ARR_K_CONCAT,
    DR_ARR_K_GATHER_SCATTER, DR_ARR_K_RESHAPE, DR_ARR_K_DOT, DR_ARR_K_MV,
    DR_ARR_K_MM, DR_ARR_K_OUTER, DR_ARR_K_TRANSPOSE, DR_ARR_K_SUM,
    DR_ARR_K_SUM_AXIS, DR_ARR_K_MAX, DR_ARR_K_SOFTMAX, DR_ARR_K_LSE, DR_ARR_K_OWN
};

#define DR_ARR_MAXOPS 2

struct dr_arr_node {
    dr_ext hdr;
    dr_idx pub;         /* public id                                        */
    dr_arr_rev rev;     /* NULL for inputs and constants                    */
    dr_arr_prim prim;   /* NULL for inputs, constants and inactive nodes    */
    int rank;           /* 1 or 2 (0 for scalar-valued nodes)               */
    bool active;        /* depends on an input: has a reverse rule to run   */
    bool adj_live;      /* adj holds this sweep's adjoint                   */
    bool input;         /* an input (dr_arr_input, _ref): replay sets it    */
    bool borrowed;      /* val is the caller's memory (the _ref creators)   */
    bool mark;          /* dr_replay_arrays: given once (while it checks)   */
    int64_t rows, cols; /* rank 1: rows = length, cols = 1                  */
    int64_t n;          /* rows * cols                                      */
    double *val;        /* n values, in the arena                           */
    double *adj;        /* n adjoints or NULL, in the arena                 */
    dr_arr_node *x[DR_ARR_MAXOPS]; /* array operands (NULL if unused)       */
    int64_t sx;         /* relative id of a scalar operand (-1: none)       */
    double sv;          /* its value (replay reads it from the log first)   */
    int64_t ip[4];      /* integer parameters (op specific)                 */
    void *aux;          /* op-specific data in the arena                    */
    int64_t naux;
    /* forward mode (see "tangents" above) */
    dr_arr_fwd fwd;     /* NULL for inputs and constants                    */
    const double *tcur; /* this sweep's k*n tangents; NULL: zero            */
    size_t tcur_k;      /* the k of tcur                                    */
    double *tan;        /* the node's own tangent buffer (arena)            */
    size_t tan_cap;     /* its capacity in doubles                          */
    double *tseed;      /* inputs: seeded tangents (arena), seed_k * n      */
    size_t seed_k;      /* directions seeded; 0: none                       */
    size_t seed_cap;    /* capacity of tseed in doubles                     */
    int kind;           /* DR_ARR_K_*: the op                               */
    int64_t pa[3];      /* sparsity patterns: the arguments' relative ids   */
    int64_t *pargs;     /* ... of a concatenation's operands (arena)        */
    /* second order (see "second order" above) */
    int so;             /* DR_ARR_SO_*                                      */
    dr_arr_rev2 rev2;   /* DR_ARR_SO_OWN: its kernel                        */
    double *h2;         /* (h2_k + 1) planes of n: adjoint, its tangents    */
    size_t h2_cap;      /* capacity of h2 in doubles                        */
    size_t h2_k;        /* the k of the pass that wrote h2                  */
    uint64_t h2_pass;   /* that pass's number (dr_hsweep.pass)              */
};

/* ---- array.c ---- */
DR_HIDDEN void dr__arr_clear_adj(dr_ext *e);
/* the array node named by a public id, or NULL after failing the tape with
   DR_EINVAL (not an array node of this tape) */
DR_HIDDEN dr_arr_node *dr__arr_get(dr_tape *t, dr_idx id);
/* the array node named by a public id, or NULL (the tape untouched) */
DR_HIDDEN dr_arr_node *dr__arr_find(const dr_tape *t, dr_idx id);
/* the same for a matrix operand: NULL after DR_ESHAPE if it is a vector */
DR_HIDDEN dr_arr_node *dr__arr_get_mat(dr_tape *t, dr_idx id);
/* a new array node of the given shape with uninitialised values; not yet on
   the tape.  NULL on failure (status set). */
DR_HIDDEN dr_arr_node *dr__arr_new(dr_tape *t, int rank, int64_t rows,
                                   int64_t cols);
/* append a node made by dr__arr_new; returns its id or DR_NONE */
DR_HIDDEN dr_idx dr__arr_push(dr_tape *t, dr_arr_node *y);
/* a scalar-valued node record (not yet on the tape), and its push with
   its value v (logged at order 2) */
DR_HIDDEN dr_arr_node *dr__arr_snew(dr_tape *t);
DR_HIDDEN dr_idx dr__arr_spush(dr_tape *t, dr_arr_node *y, double v);
/* the adjoint buffer of x for accumulation: allocated and zeroed on first use
   in a sweep.  NULL if x is inactive or memory ran out (status set). */
DR_HIDDEN double *dr__arr_adj_acquire(dr_tape *t, dr_arr_node *x);
/* as dr__arr_adj_acquire, but when *fresh comes back true the buffer was not
   zeroed: the caller must overwrite every element instead of adding */
DR_HIDDEN double *dr__arr_adj_acquire_raw(dr_tape *t, dr_arr_node *x,
                                          bool *fresh);
/* what a reverse rule calls for an operand's adjoint: as the two above,
   but for an array of an ancestor job in a parallel sweep, the running
   thread's buffer for it, added into the array's adjoint when the sibling
   jobs are done (array.c, "parallel sweeps") */
DR_HIDDEN double *dr__arr_adj_for(dr_sweep *s, dr_arr_node *x);
DR_HIDDEN double *dr__arr_adj_for_raw(dr_sweep *s, dr_arr_node *x,
                                      bool *fresh);
/* y's tangent output buffer for this sweep (k*n doubles, contents
   undefined: the kernel overwrites all of it), made y->tcur; NULL after
   failing the tape with DR_ENOMEM (y's tangent then stays zero) */
DR_HIDDEN double *dr__arr_tan_out(dr_fsweep *f, dr_arr_node *y);
/* the tangents of a node as a kernel reads them: NULL means zero */
static inline const double *dr__arr_tan(const dr_arr_node *x)
{
    return x ? x->tcur : NULL;
}
/* the tangent of direction d of the scalar with relative id rel (0 for a
   constant, rel < 0) */
static inline double dr__arr_stan(const dr_fsweep *f, int64_t rel, size_t d)
{
    return rel >= 0 ? f->tan[(size_t)rel * f->k + d] : 0.0;
}
/* public handle and id of a node (failed handle for NULL) */
DR_HIDDEN dr_arr dr__arr_handle(const dr_arr_node *y);
/*
 * The public id of an array-valued node is its node id with DR_ARR_TAG set:
 * array ids lie outside the range of scalar ids, so the range check every
 * scalar argument passes anyway (dr__rel) refuses an array id at no extra
 * cost, and dr_gradient refuses one among its inputs.  Scalar-valued array
 * ops (dot, sum, ...) give ordinary scalar ids.
 */
#define DR_ARR_TAG ((int64_t)1 << 62)

static inline dr_idx dr__arr_id(const dr_arr_node *y)
{
    return y ? y->pub : DR_NONE;
}
/* scalar-adjoint accumulation: atomic when the id is foreign in a parallel
   sweep (node/node.h's dr__acc); in a Hessian-vector product's pass, into
   the current plane (dr__hacc) */
static inline void dr__arr_sacc(dr_sweep *s, int64_t rel, double v)
{
    if (DR_UNLIKELY(s->h))
        dr__hacc(s, rel, v);
    else
        dr__acc(s, rel, v);
}
/* the adjoint of array-valued y that its reverse kernel passes on: in a
   Hessian-vector product's pass, the current plane, or plane 0 while
   operands read as tangents ("second order") */
static inline const double *dr__arr_adj_in(const dr_sweep *s,
                                           const dr_arr_node *y)
{
    if (DR_LIKELY(!s->h))
        return y->adj;
    return y->h2 + (s->h->tval >= 0 ? 0 : s->h->plane) * (size_t)y->n;
}
/* operand x's values as a bilinear reverse kernel reads them: its tangent
   of direction s->h->tval there (zeros for none: dr__arr_hzeros made
   enough of them first) */
static inline const double *dr__arr_val(const dr_sweep *s,
                                        const dr_arr_node *x)
{
    if (DR_LIKELY(!s->h || s->h->tval < 0))
        return x->val;
    if (!x->tcur || x->tcur_k != s->h->k)
        return s->h->zeros;
    return x->tcur + (size_t)s->h->tval * (size_t)x->n;
}
/* in a bilinear kernel's run on tangents: x's tangent is zero, so the
   share of the other operand, which reads it, is zero (skipped) */
static inline bool dr__arr_tzero(const dr_sweep *s, const dr_arr_node *x)
{
    return s->h && s->h->tval >= 0 && (!x->tcur || x->tcur_k != s->h->k);
}
/* the same for y's scalar operand (sv, of relative id sx) */
static inline double dr__arr_sval(const dr_sweep *s, const dr_arr_node *y)
{
    if (DR_LIKELY(!s->h || s->h->tval < 0))
        return y->sv;
    return dr__htan(s->h, y->sx, (size_t)s->h->tval);
}
/* at least n zeros in s->h->zeros; false after failing the tape with
   DR_ENOMEM */
DR_HIDDEN bool dr__arr_hzeros(dr_sweep *s, int64_t n);
/* x's tangent of direction d in this sweep (NULL: zero) */
static inline const double *dr__arr_tan_dir(const dr_arr_node *x, size_t d)
{
    return x && x->tcur ? x->tcur + d * (size_t)x->n : NULL;
}
/*
 * The recorded passes (node/node.h's dr_rpass) record an array op's
 * tangent and adjoint with the array operations themselves, so their
 * rules stand above this layer (nested/array_rules.c), which registers
 * them here before a pass (an array node's hooks call through these;
 * NULL: not registered, no rule).
 */
typedef dr_real (*dr_arr_rec_tangent)(dr_arr_node *y, dr_rpass *p);
typedef void (*dr_arr_rec_adjoint)(dr_arr_node *y, dr_rpass *p, dr_real g);
DR_HIDDEN void dr__arr_register_recorded(dr_arr_rec_tangent tangent,
                                         dr_arr_rec_adjoint adjoint);

/* y's adjoint of plane 0 in a Hessian-vector product's pass */
static inline const double *dr__arr_adj0(const dr_sweep *s,
                                         const dr_arr_node *y)
{
    (void)s;
    return y->h2;
}

/* dimension check: 0 <= r, c, r*c fits, dims fit in an int for BLAS */
DR_HIDDEN bool dr__arr_dims_ok(int64_t rows, int64_t cols);
/* true if any of the nodes is active */
static inline bool dr__arr_any_active(dr_arr_node *a, dr_arr_node *b)
{
    return (a && a->active) || (b && b->active);
}

/* the public forms of each primitive over its family file's function
   (generated from the declarations of dualrev/arrays.h) */
#include "arrays/array_forms.h"

#endif /* DR_ARRAY_H */
