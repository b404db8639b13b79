/*
 * sweep.h - the reverse sweep (cbits/README.md): adjoint storage, seeding,
 * and the loops that walk a job's chunks from the newest node to the
 * oldest; tangents (forward mode) and k-wide sweeps (vector mode).  A job
 * graph (forks) is swept by the jobs layer through the sweep_history and
 * forward_history hooks (tape/tape.h).  Not installed.
 */
#ifndef DR_SWEEP_H
#define DR_SWEEP_H

#include "record/record.h"
#include "record/program.h"
#include "record/statement.h"

#include <string.h>

/*
 * Two columns at a time where the compiler has vector types (SSE2 on
 * x86-64, NEON on AArch64), for the k-wide loops (vector.c's reverse,
 * forward.c's forward): a node's update of an even number of columns is
 * half as many multiply-adds, loads and stores.  Each lane still multiplies
 * and then adds, so the results are the scalar loop's to the bit.  Loads
 * and stores go through memcpy: the rows are only 8-byte aligned, and
 * memcpy keeps the access to the doubles' own type.
 */
#if defined(__GNUC__)
#define VEC2 1
typedef double v2d __attribute__((vector_size(16)));
static inline v2d load2(const double *p)
{
    v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void store2(double *p, v2d v)
{
    memcpy(p, &v, sizeof v);
}
#else
#define VEC2 0
#endif

/* Relative ids below this may name nodes (adjoint and tangent storage
   cover them): every id any job reserved, so an id from any job of the
   tape is in range. */
static inline int64_t dr__id_limit(const dr_tape *t)
{
    /* a tape that never forked (since its last clear) has all its nodes
       below next; only forked jobs use ids up to what their chunks reserved */
    if (!t->hist && !t->fork)
        return t->next;
    int64_t r = __atomic_load_n(&t->reserved, __ATOMIC_RELAXED);
    return r > t->next ? r : t->next;
}

/* make a per-node array of doubles (raw[0] a sink slot; raw, cap, valid
   as adj_raw, adj_cap, adj_valid) cover every relative id handed out so
   far, zeroing ids from valid on */
DR_HIDDEN dr_status dr__slots_ensure(dr_tape *t, double **raw, size_t *cap,
                                     int64_t *valid);
/* add v into id's slot of such an array (dr_seed, dr_tangent_seed): on a
   whole tape, DR_NONE does nothing, DR_EINVAL for an id not on it */
DR_HIDDEN dr_status dr__slots_seed(dr_tape *t, double **raw, size_t *cap,
                                   int64_t *valid, dr_idx id, double v);
/* make adj_raw cover every relative id handed out so far */
DR_HIDDEN dr_status dr__adj_ensure(dr_tape *t);
/* sweep one job's chunks, newest first; plain adds (no sibling runs) */
DR_HIDDEN void dr__sweep_chunks(dr_chunk *last, dr_sweep *s);
/* the same beside sibling jobs (s->atomic): adds into ids < s->own_lo go
   to s->log */
DR_HIDDEN void dr__sweep_chunks_par(dr_chunk *last, dr_sweep *s);

/* what every driver checks before touching anything, so that a bad call
   changes nothing: a whole root handle (dr__whole), no sticky status, and
   every id of y[0..m-1] and x[0..n-1] on the tape (DR_EINVAL) */
DR_HIDDEN dr_status dr__sweep_ready(const dr_tape *t, size_t m,
                                    const dr_real *y, size_t n,
                                    const dr_real *x);
/* one gradient's sweep: clear the adjoints, seed y with 1, sweep */
DR_HIDDEN dr_status dr__sweep_from(dr_tape *t, dr_idx y);
/* a whole gradient in the common case, checked by the caller
   (dr__sweep_seq_ok): sweep from relative id ry (-1: a constant) and read
   the adjoints of x[0..n-1] into g (0 for DR_NONE); DR_EINVAL, and nothing
   changed, if an id of x is not on the tape.  One function, so that a
   small gradient makes one call below the public one. */
DR_HIDDEN dr_status dr__sweep_seq(dr_tape *t, int64_t ry, size_t n,
                                  const dr_real *x, double *g);
/* the same, read for the relative ids r .. r+n-1 (dr__adj_range: on the
   tape, checked by the caller) into g */
DR_HIDDEN dr_status dr__sweep_seq_range(dr_tape *t, int64_t ry, int64_t r,
                                        size_t n, double *g);
/* whether dr__sweep_seq may sweep t: a whole root handle that never forked
   (one job, sequential), no sticky status, and no ext record with adjoint
   storage of its own (array nodes, whose rules may allocate) */
static inline bool dr__sweep_seq_ok(const dr_tape *t)
{
    return t->root == t && (t->state | (unsigned)t->status) == 0 &&
           !t->hist && !t->exts;
}

/* the root's relative id of first, if first .. first+n-1 are all on t */
DR_HIDDEN bool dr__adj_range(const dr_tape *t, dr_idx first, size_t n,
                             int64_t *rel);
/* the adjoints of relative ids r .. r+n-1 into out (0 where not live) */
DR_HIDDEN void dr__adj_read(const dr_tape *t, int64_t r, size_t n,
                            double *out);

/* visit(c, ctx) for each chunk of the job whose newest chunk is newest,
   oldest first (chunk_order.c); the first status that is not DR_OK stops
   it and is returned */
DR_HIDDEN dr_status dr__chunks_oldest_first(dr_chunk *newest,
                                            dr_status (*visit)(dr_chunk *,
                                                               void *),
                                            void *ctx);

/* replay.c: what a replay does per job of a job graph (dr_replay, the
   replay_history hook of tape.h): the nodes of the job whose newest chunk
   is newest, oldest first, replayed or checked (pass says which); the
   first hook's failure.  Jobs of a fork's children may run at once. */
typedef struct dr_replay_pass dr_replay_pass;
DR_HIDDEN dr_status dr__replay_job(dr_chunk *newest, dr_replay_pass *p);

/* hvp.c: k Hessian-vector products of the node of relative id ry (-1: a
   constant) by forward over reverse on the second-order log: direction j
   of input i (relative id rx[i], -1: a constant) is V[j * n + i], H v_j
   goes to out[j * n + i] and, where grad is not NULL, the gradient to
   grad[i].  Array inputs take part as arr_seeds says (DR_ARR_SEEDS_*: k
   directions from dr_arr_tangent_seed_vec, or one from their adjoints).  Ids checked by the caller;
   DR_ENOTSUP (nothing written but zeros) where a node up to ry that is
   not an input has no second-order rule.  Nothing on the tape changes
   but what extended nodes keep of the pass (array nodes: their adjoints'
   tangents, for dr_arr_hvp_vec, numbered t->hvp_pass). */
#ifndef DR_HVP_BLOCK
#define DR_HVP_BLOCK 16 /* directions a pass of dr_hvp_vec and dr_hessian:
                           the per-node work (the log read, the rule) is
                           shared by that many, and a pass's tangents stay
                           in cache */
#endif
DR_HIDDEN dr_status dr__hvp_pass(dr_tape *t, int64_t ry, size_t n,
                                 const int64_t *rx, size_t k, const double *V,
                                 int arr_seeds, double *out, double *grad);

/* edge_push.c: the dense Hessian of the node of relative id ry with
   respect to rx[0..n-1] (-1: a constant) into H (n x n), by edge pushing
   over the second-order log, giving up (*done false, H partly written)
   where a node up to ry has no rule it can use or where it would push more
   than budget interactions; DR_ENOMEM (*done false) out of memory.  Ids
   checked by the caller; nothing on the tape changes. */
DR_HIDDEN dr_status dr__hessian_edges(dr_tape *t, int64_t ry, size_t n,
                                      const int64_t *rx, uint64_t budget,
                                      double *H, bool *done);
/* hessian.c: how many dr_hessian calls edge pushing finished (tests) */
DR_HIDDEN extern uint64_t dr__hessians_by_edges;

/* forward.c: tangents, oldest node first (forward and vector mode) */
/* every ext node kind recorded on t has a forward rule (the kinds that may
   lack one, array nodes, are all on t->exts) */
DR_HIDDEN bool dr__forward_ok(const dr_tape *t);
/* one job's chunks, oldest node first, with f; DR_ENOTSUP at an ext node
   without a forward rule (the sweep stops there) */
DR_HIDDEN dr_status dr__forward_job(dr_chunk *newest, dr_fsweep *f);
/* every job of the whole tape t (its history through the forward_history
   hook, then the current job); f->tan covers dr__id_limit(t) ids, every
   slot holds its seed (zero if none), f->tan[-k .. -1] are zero */
DR_HIDDEN dr_status dr__forward_sweep(dr_tape *t, dr_fsweep *f);

/* vector.c: k-wide storage and the k-wide reverse sweep */
/* zeroed scratch for k values per relative id of t and a k-wide sink:
   returns the slot of relative id 0 (the sink is the k before it) and the
   buffer to give back in *sb; NULL when out of memory or too large */
DR_HIDDEN double *dr__vec_take(dr_tape *t, size_t k, dr_scratch **sb);
/* every ext node kind recorded on t has a k-wide reverse rule */
DR_HIDDEN bool dr__reverse_vec_ok(const dr_tape *t);
/* the k-wide reverse sweep of a tape that never forked (the caller checks
   t->hist == NULL); DR_ENOTSUP at an ext node without reverse_vec (s->adj
   is then partly swept: the caller starts over another way) */
DR_HIDDEN dr_status dr__reverse_vec(dr_tape *t, dr_vsweep *s);

/*
 * One k-wide pass, forward or reverse, as the products and the Jacobian
 * make it: seed direction j of id seed[i] with S[i*ss + j*sd] (i < ns),
 * sweep, and read direction j of id read[c] into R[c*rs + j*rd] (c < nr);
 * a forward sweep with arr_seeds adds the seeds array inputs were given
 * (dr_arr_tangent_seed) of the same k.
 * Ids are checked by the caller (dr__sweep_ready), and so is that the
 * sweep can run (dr__forward_ok; reverse: dr__reverse_vec_ok, no forks).
 */
typedef struct dr_pass_io {
    size_t n;           /* ids                                     */
    const dr_real *ids;
    size_t stride_id;   /* between the values of consecutive ids   */
    size_t stride_dir;  /* between directions                      */
} dr_pass_io;
DR_HIDDEN dr_status dr__pass_k(dr_tape *t, bool forward, size_t k,
                               dr_pass_io seed, const double *S,
                               dr_pass_io read, double *R, bool arr_seeds);

/* replay.c: dr_replay with values of more inputs (array inputs, set by
   the arrays layer): once every check has passed and nothing can fail,
   set(ctx) gives them their new values; undo(ctx), when the replay fails
   after that, their old ones back */
typedef struct dr_replay_more {
    void (*set)(void *ctx);
    void (*undo)(void *ctx);
    void *ctx;
} dr_replay_more;
DR_HIDDEN dr_status dr__replay(dr_tape *t, size_t n, const dr_real *x,
                               const double *values,
                               const dr_replay_more *more);

#endif /* DR_SWEEP_H */
