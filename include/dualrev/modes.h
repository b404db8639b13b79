/*
 * dualrev/modes.h - evaluation modes over a recorded tape: the reverse
 * pass, forward mode, vector mode, second order, sparse Jacobians and
 * Hessians, and replay.
 */
#ifndef DUALREV_MODES_H
#define DUALREV_MODES_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------- reverse pass */

/**
 * Add cotangent to the adjoint of node id.  Seeding DR_NONE (a constant) is
 * allowed and does nothing.  DR_EINVAL for an id not on the tape, DR_ENOMEM if
 * the adjoint storage cannot be allocated.
 */
DR_API dr_status dr_seed(dr_tape *t, dr_idx id, double cotangent);
/**
 * One sweep over all nodes, last to first, propagating the current adjoints
 * into the arguments' adjoints.  Adjoints accumulate: sweep again only after
 * dr_adjoints_clear and new seeds.  Returns the sticky status if it is set
 * (and sweeps nothing then).
 */
DR_API dr_status dr_reverse(dr_tape *t);
/**
 * The adjoint of node id after a sweep.  0.0 for DR_NONE and for nodes not
 * reached; NaN for an id not on the tape (use dr_adjoint_get to tell apart).
 */
DR_API double dr_adjoint(const dr_tape *t, dr_idx id);
/** As dr_adjoint, with a status: DR_EINVAL for an id not on the tape. */
DR_API dr_status dr_adjoint_get(const dr_tape *t, dr_idx id, double *out);
/** Set every adjoint (scalar and array) to zero, keeping the nodes. */
DR_API dr_status dr_adjoints_clear(dr_tape *t);

/**
 * Gradient of the scalar y with respect to x[0..n-1] into g[0..n-1]:
 * clears the adjoints, seeds y with 1, sweeps, and reads.  An x that is a
 * constant gets 0.  If y is a constant every g is 0.  The tape is unchanged
 * and can be swept again.
 */
DR_API dr_status dr_gradient(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                             double *g);
/**
 * Adjoints of the n consecutive ids first .. first+n-1 into out[0..n-1] (for
 * inputs made by one dr_inputs call: first = out[0].idx).  DR_EINVAL, with
 * out untouched, if any id of the range is not on the tape, or for a child
 * handle.  A range that covers ids of other nodes reads their adjoints (and
 * 0 for ids no node took, at the end of a chunk).
 */
DR_API dr_status dr_adjoints_read(const dr_tape *t, dr_idx first, size_t n,
                                  double *out);
/**
 * dr_gradient for inputs with consecutive ids (one dr_inputs call): the
 * gradient of y with respect to first .. first+n-1 into g[0..n-1].  Checks
 * the range and y before touching anything (DR_EINVAL).
 */
DR_API dr_status dr_gradient_range(dr_tape *t, dr_real y, dr_idx first,
                                   size_t n, double *g);
/**
 * Jacobian of y[0..m-1] with respect to x[0..n-1] into J (row-major m x n),
 * over the same recorded tape: forward sweeps (one per block of input
 * directions, vector mode) when it is taller than wide (n < m), reverse
 * sweeps (one per block of output rows) otherwise; blocks of up to 10.
 * Where vector mode cannot run (a node without the rule it needs: array
 * operations; reverse on a tape that forked, whose sweep is parallel) it
 * takes one scalar reverse sweep per row, with the same result to
 * rounding.  m == 1 (dr_gradient) is always one scalar reverse sweep.
 * Tangent seeds left on array inputs (dr_arr_tangent_seed, for dr_forward
 * and dr_jvp) play no part, and stay.
 */
DR_API dr_status dr_jacobian(dr_tape *t, size_t m, const dr_real *y, size_t n,
                             const dr_real *x, double *J);

/* ----------------------------------------------------------- forward mode
 * Tangents propagated over a recorded tape, first node to last: each node's
 * tangent is the sum of its partials times its arguments' tangents (for an
 * array node, the derivative of its operation applied to its arguments'
 * tangents).  One forward sweep gives the directional derivative J xdot of
 * every node; one reverse sweep gives a row of J^T.  Tangents live beside
 * the adjoints and do not disturb them.
 */

/** Add tangent to the tangent of node id (normally an input) for the next
 *  dr_forward.  DR_NONE is allowed and does nothing; DR_EINVAL for an id not
 *  on the tape. */
DR_API dr_status dr_tangent_seed(dr_tape *t, dr_idx id, double tangent);
/** One forward sweep over all nodes, oldest first: each node's tangent
 *  becomes its seed plus its partials times its arguments' tangents (a seed
 *  on an intermediate node perturbs it, as a seed of dr_reverse does).
 *  Nodes that are not seeded start from zero.  Like adjoints, tangents
 *  accumulate: clear them before seeding a new direction (dr_jvp does).
 *  A tape that forked is swept job by job in dependency order, on the
 *  calling thread.  Array nodes carry tangents of their own (seeded with
 *  dr_arr_tangent_seed, read with dr_arr_tangent).  Returns the sticky
 *  status if it is set; DR_ENOTSUP, changing nothing, if the tape holds a
 *  node without a forward rule (every node kind of this library has one). */
DR_API dr_status dr_forward(dr_tape *t);
/** The tangent of node id after dr_forward (0.0 for DR_NONE; NaN for an id
 *  not on the tape, as dr_adjoint). */
DR_API double dr_tangent(const dr_tape *t, dr_idx id);
/** Set every scalar tangent (and seed) to zero; array tangent seeds are
 *  cleared by dr_arr_tangents_clear. */
DR_API dr_status dr_tangents_clear(dr_tape *t);
/**
 * Jacobian-vector product: ydot[0..m-1] = J xdot for the outputs y and the
 * inputs x[0..n-1] with directions xdot[0..n-1]; clears the tangents, seeds,
 * sweeps forward once and reads (the tangents of every node stay readable
 * with dr_tangent).  The tape is unchanged.  DR_ENOTSUP, changing nothing,
 * as dr_forward.  Seeds given to array inputs with dr_arr_tangent_seed
 * and not cleared take part (dr_arr_tangents_clear first for a product
 * with respect to x alone).
 */
DR_API dr_status dr_jvp(dr_tape *t, size_t m, const dr_real *y, size_t n,
                        const dr_real *x, const double *xdot, double *ydot);
/**
 * Vector-Jacobian product: xbar[0..n-1] = J^T ybar for cotangents
 * ybar[0..m-1] of the outputs y; clears the adjoints, seeds, one reverse
 * sweep (the adjoints stay readable with dr_adjoint).
 */
DR_API dr_status dr_vjp(dr_tape *t, size_t m, const dr_real *y,
                        const double *ybar, size_t n, const dr_real *x,
                        double *xbar);
/**
 * Gauss-Newton product: out[0..n-1] = J^T J v, J the Jacobian of the
 * outputs y[0..m-1] (residuals) with respect to x[0..n-1]: the curvature
 * of the least-squares objective 0.5 |y|^2 without the residuals' own
 * second derivatives, positive semidefinite.  One forward sweep (dr_jvp)
 * and one reverse sweep (dr_vjp): any order, no second-order rules
 * needed.  Array inputs seeded with dr_arr_tangent_seed take part as in
 * dr_jvp, and their part of J^T J v is then their adjoint
 * (dr_arr_adjoint).  On failure out is unchanged.  Errors as dr_jvp and
 * dr_vjp; DR_ENOMEM for its m + n doubles of scratch.
 */
DR_API dr_status dr_gnvp(dr_tape *t, size_t m, const dr_real *y, size_t n,
                         const dr_real *x, const double *v, double *out);

/* ------------------------------------------------------------ vector mode
 * k directions in one sweep: every node carries k tangents (or k adjoints)
 * side by side, so the tape is read once for all of them.  dr_jacobian uses
 * it, by blocks of directions, forward when the Jacobian is taller than wide
 * (n < m) and reverse otherwise.
 */

/** k Jacobian-vector products in one forward sweep: Ydot (m x k, row-major)
 *  = J Xdot for Xdot (n x k, row-major).  Scratch storage: the tape's own
 *  tangents and adjoints are untouched.  DR_ENOTSUP as dr_jvp; DR_EINVAL if
 *  k * n or k * m overflows; k == 0 does nothing. */
DR_API dr_status dr_jvp_vec(dr_tape *t, size_t m, const dr_real *y, size_t n,
                            const dr_real *x, size_t k, const double *Xdot,
                            double *Ydot);
/** k vector-Jacobian products in one reverse sweep: Xbar (k x n, row-major)
 *  = Ybar J for Ybar (k x m, row-major), in scratch storage.  A tape that
 *  forked, or that holds a node without a k-wide reverse rule (array
 *  operations), is swept k times instead, one dr_vjp per row of Ybar (same result to
 *  rounding; the tape's adjoints are then those of the last row). */
DR_API dr_status dr_vjp_vec(dr_tape *t, size_t m, const dr_real *y, size_t k,
                            const double *Ybar, size_t n, const dr_real *x,
                            double *Xbar);

/* ----------------------------------------------------------- second order
 * A tape of order 2 records, beside each node, what its second derivatives
 * need: which operation made it and the values it was made from.  A tape of
 * order 1, the default, records exactly what it records without this
 * section (no cost when only gradients are wanted).
 *
 * Hessian-vector products and Hessians (dr_hvp, dr_hvp_vec, dr_hessian)
 * are computed in numbers from that record, by forward over reverse.  For
 * derivatives of any order, the forward (tangent) pass of part of the tape
 * can also be recorded as new operations on the same tape
 * (dr_tangent_record): the recorded tangent can be differentiated again,
 * in either mode and to any depth.  That is also how nested derivatives (a derivative taken
 * inside a function being differentiated) are computed without confusing
 * the perturbations of the levels: the inner tangent is seeded on the inner
 * variable only, and every node recorded before the inner part has tangent
 * zero, however the inner part uses it.
 *
 * Which nodes have a second-order rule: every scalar operation (dr_sin,
 * dr_mul, ...), inputs, n-ary sums (dr_sumn), and the nodes of given
 * partials (dr_record0/1/2, dr_recordn), which are taken as linear: their
 * partials are constants to second order (right for sums and other linear
 * combinations; record nonlinear operations with the scalar operations).
 * Every array operation has one: for the Hessian-vector products and
 * Hessians (dr_hvp, dr_hvp_vec, dr_hessian; array inputs take part
 * through their tangent seeds, see "second order" in dualrev/arrays.h),
 * and for the recorded passes (dr_tangent_record, dr_adjoint_record),
 * which record an array's tangent or adjoint as array operations (seeds
 * and variables are scalar nodes: an array input's tangent is zero
 * there), and for the sparse drivers, whose pattern takes an array op's
 * arguments whole (every variable of an array an op reads meets every
 * variable of the others it reads, where the op has second partials: a
 * pattern that may hold zeros, never one that misses a nonzero).
 * External functions and checkpointed loops have none: a call that would
 * need one answers DR_ENOTSUP, and nothing changes.  A recorder (dr_rec_begin, "inline recording") works on a
 * handle of order 2: its operations are recorded by the tape's own
 * (dr_add ... dr_neg; dr_rec_record1/2 and statements as dr_record1/2
 * and dr_recordn), with their rules, out of line.
 *
 * Jobs.  The order and the record belong to a handle: a child handle of
 * fork-join parallelism starts at the order of the handle that forked it
 * and may change its own, so a job can take a derivative of its own nodes
 * with dr_tangent_record (a nested derivative inside a job), at the same
 * time as its siblings; the root may do the same after a dr_join.  At the
 * join, a parent of order 2 takes in what its children recorded for
 * second order (their nodes and guards): the job graph then has its rules
 * for the parent and the root, so dr_hvp, dr_hessian and dr_tangent_record
 * work through forks, and the tape replays (see "replay").  A node a child
 * recorded at order 1 has no rule there (DR_ENOTSUP, as on the root); a
 * parent of order 1 at the join keeps nothing of its children's record, as
 * of its own nodes, though every tangent a job recorded is an ordinary
 * node that the root differentiates through.  The tangent pass takes the
 * nodes by id, and the ids of children that recorded at once interleave
 * as they ran: a Hessian-vector product through such a fork agrees with
 * another recording's to rounding (with one thread, bit for bit).  While
 * a child records at
 * order 2, its record spans the ids its siblings take meanwhile: running
 * side by side, each child's record holds a place for the nodes of the
 * siblings that ran beside it (jobs that run one after the other hold
 * none).
 */

/** Set the handle's order: 2 to record second-order information for the
 *  nodes recorded on it from now on, 1 to stop (the default for a root; a
 *  child handle starts at its parent's order).  Any time on
 *  a root or child handle, but 2 not while the handle is forked or has an
 *  open recorder (DR_EBUSY: neither logs); dr_tape_clear keeps the root's
 *  order.  DR_EINVAL for
 *  another order or a joined handle.  Setting 1 keeps what
 *  was recorded at order 2: dr_hvp, dr_hessian and dr_tangent_record
 *  still work where every node they replay was recorded at order 2 (an
 *  output recorded before the switch), and answer DR_ENOTSUP, recording
 *  nothing, where one was recorded at order 1. */
DR_API dr_status dr_tape_set_order(dr_tape *t, int order);
/** The handle's order (1 or 2); 0 for NULL. */
DR_API int dr_tape_order(const dr_tape *t);
/**
 * Hessian-vector product of the scalar y: out[0..n-1] = H v, H the Hessian
 * of y with respect to x[0..n-1], v[0..n-1] a direction.  Every node up
 * to y must have been recorded at order 2 (else DR_ENOTSUP).  Computed by
 * forward over reverse in numbers: one tangent pass in direction v and one
 * reverse pass carrying each adjoint and its tangent, with the second
 * partials of every operation from the rules that recorded it.  Nothing
 * is recorded and nothing on the tape changes, its adjoints included (but
 * array operations: they keep the products for dr_arr_hvp, and their
 * tangents, as dr_arr_tangent reads them, are this pass's).  A
 * node given more than once in x is one variable: its direction is the
 * sum of its places' (as in dr_jvp), and each of its places reads the
 * same entry.  x names the variables: what y depends on through a node
 * of x counts as a dependence on that node (the node is not looked
 * through to what it was made from).
 */
DR_API dr_status dr_hvp(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                        const double *v, double *out);
/** k Hessian-vector products at once (vector mode): row j of out (k x n,
 *  row-major) is H times row j of V (k x n, row-major).  The directions
 *  share each pass (16 a pass; all k in one where the tape holds array
 *  operations), so k products cost much less than k calls of dr_hvp.
 *  Array inputs seeded with dr_arr_tangent_seed_vec (k directions) take
 *  part, their products read with dr_arr_hvp_vec; n may then be 0.
 *  Otherwise as dr_hvp. */
DR_API dr_status dr_hvp_vec(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                            size_t k, const double *V, double *out);
/**
 * Hessian-vector product with respect to every input of the tape, in the
 * manner of a reverse sweep: the direction is what dr_seed and
 * dr_arr_seed gave the inputs (dr_input, dr_inputs, array inputs; zero
 * where nothing was seeded), and the product H v replaces the adjoints,
 * read with dr_adjoint and dr_arr_adjoint at each input (every other
 * adjoint reads zero; array inputs' tangents too).  Seed again after
 * dr_adjoints_clear for the next product.  Every node up to y must have
 * been recorded at order 2, its inputs included (else DR_ENOTSUP, the
 * adjoints unchanged).  Errors as dr_hvp; out of memory for an array's
 * adjoint at the end, DR_ENOMEM with the adjoints cleared (the direction
 * lost).  A failed call leaves the tape usable.
 */
DR_API dr_status dr_hvp_inputs(dr_tape *t, dr_real y);
/** The dense Hessian of y with respect to x[0..n-1] into H (n x n,
 *  row-major, symmetric) on a tape of order 2.  For more than 16 inputs
 *  of a tape without array operations it first tries edge pushing (one
 *  reverse pass that carries the second-order interactions between nodes,
 *  exactly symmetric), within a budget of about a third of what the
 *  products with the unit vectors would cost; past the budget, or
 *  otherwise, it takes those products, in vector mode (dr_hvp_vec).  Both
 *  give the Hessian to rounding, and repeated calls on one tape the same
 *  bits (at another point the other way may run: zero partials push
 *  nothing).  A node
 *  given twice in x has equal rows and columns at its places. */
DR_API dr_status dr_hessian(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                            double *H);
/**
 * The tangent pass of the nodes with ids from `from` on, recorded as
 * operations on the tape: *out is the tangent of y (its directional
 * derivative) when the nodes seed_ids[0..k-1] have the tangents
 * seeds[0..k-1] (active values: their own dependencies are kept) and every
 * other node before `from` has tangent zero.  `from` is normally
 * dr_tape_mark taken just before the part being differentiated was recorded
 * at order 2, on the same handle (a root handle, or a child handle for a
 * derivative inside a job).  The recorded nodes carry their own second-order information
 * while the tape is of order 2, so *out can be passed to dr_tangent_record
 * again (higher derivatives).  A constant comes back if y does not depend
 * on the seeds.  A seed id given more than once takes the sum of its
 * seeds.  Every argument is checked before anything is recorded: DR_ENOTSUP
 * if a node from `from` to y has no second-order rule or was recorded at
 * order 1; DR_EINVAL for ids not on the tape (y, from, a seed id, or a
 * seed's own id); the sticky status if it is set.  A call that fails
 * changes nothing: the nodes it recorded before running out of memory are
 * taken off again and the tape's status is left as it was.
 */
DR_API dr_status dr_tangent_record(dr_tape *t, dr_idx from, size_t k,
                                   const dr_idx *seed_ids, const dr_real *seeds,
                                   dr_real y, dr_real *out);
/**
 * The reverse pass of the nodes with ids from `from` on, recorded as
 * operations on the tape: out[i] is the derivative of y with respect to
 * the node x[i] (0 as a constant where y does not depend on it), as an
 * active value that can be differentiated again, while every node before
 * `from` is a constant of this derivative (what reaches it is not passed
 * on).  One pass for all of x, where dr_tangent_record takes one pass per
 * variable: a gradient inside code that is differentiated again (a
 * Hessian by nesting) costs one recorded pass.  The nodes of x are the
 * variables: what reaches one stays there, and is not passed on to what
 * it was made from.  Every node from `from` to y must have been recorded
 * at order 2, but the variables (DR_ENOTSUP); ids are checked first
 * (DR_EINVAL, y or a node of x not on the tape; from not on it or the
 * next id); a call that fails records nothing and leaves the status, as
 * dr_tangent_record.  DR_EBUSY while forked or with an open recorder.
 */
DR_API dr_status dr_adjoint_record(dr_tape *t, dr_idx from, dr_real y,
                                   size_t n, const dr_idx *x, dr_real *out);
/** The id the next recorded node will get (a mark for dr_tangent_record). */
DR_API dr_idx dr_tape_mark(const dr_tape *t);

/* ------------------------------------------ sparse Jacobians and Hessians
 * Where most entries of a Jacobian or a Hessian are structurally zero, the
 * library reads which are not off the recorded graph (its sparsity
 * pattern), colours it, and computes every nonzero entry with one sweep
 * per colour instead of one per input: a banded Jacobian or Hessian costs
 * a few sweeps whatever its size.
 *
 * Pattern.  An entry is in the pattern where the graph can make it
 * nonzero: J_ij where output i depends on x[j] through any path of nodes;
 * H_ij where some node y depends on has nonzero second partials by its
 * operation (a product, a division, a nonlinear function of one argument,
 * ...) and x[i], x[j] reach its arguments (Walther's nonlinear
 * interactions, as ADOL-C's hess_pat).  Values play no part: an entry of
 * the pattern may be zero at a point (and is then computed as 0), and
 * the pattern holds at every point the tape replays at.  Both sides of a
 * dr_select, min and max count; abs, relu, min, max are linear to second
 * order.  The Hessian's pattern is symmetric and may have its diagonal.
 * As dr_hessian, x names the variables: a Hessian's node of x is not
 * looked through; a Jacobian's column of a node of x is its adjoint (as
 * dr_jacobian). A node given twice in x has equal columns at its places.
 *
 * Colouring.  Jacobian: columns that share no row take one colour (a
 * forward sweep with their sum as direction), or rows that share no
 * column (a reverse sweep), whichever needs fewer colours.  Hessian: a
 * star colouring, each colour a Hessian-vector product (dr_hvp_vec) from
 * which every entry is read directly.
 *
 * What has a pattern: a Jacobian on a tape that never forked (any order;
 * every scalar operation, given partials, n-ary nodes) or on one recorded
 * at order 2 (forks included); a Hessian on a tape of order 2 (the nodes
 * dr_hessian works through).  An array operation's pattern takes its
 * operands whole: its every element depends on every variable its
 * operands depend on, and where it has second partials (products,
 * quotients, nonlinear maps, softmax, logsumexp) every variable of them
 * meets every other (a pattern as dense as the arrays are, which may hold
 * zeros).  External functions and checkpointed loops have no pattern
 * (DR_ENOTSUP).
 *
 * Matrices are compressed sparse rows (CSR), in memory the library
 * allocates (dr_sparse_free), the column indices of each row
 * increasing.
 */

/** A sparse matrix in compressed rows: row i holds the entries
 *  rowptr[i] .. rowptr[i+1]-1, at columns colind[e] (increasing) with
 *  values val[e]; rowptr has rows + 1 places, colind and val nnz. */
typedef struct dr_sparse {
    size_t rows, cols, nnz;
    size_t *rowptr;
    size_t *colind;
    double *val;
} dr_sparse;
/** Free what the library allocated in *A and zero it (NULL: nothing). */
DR_API void dr_sparse_free(dr_sparse *A);
/**
 * The Jacobian of y[0..m-1] with respect to x[0..n-1] (as dr_jacobian)
 * into *J (m x n; its pattern's entries), in one call: pattern, colouring,
 * sweeps.  On failure *J is zeroed.  Errors as dr_sparse_jacobian_plan
 * and dr_sparse_jacobian_eval.
 */
DR_API dr_status dr_sparse_jacobian(dr_tape *t, size_t m, const dr_real *y,
                                    size_t n, const dr_real *x,
                                    dr_sparse *J);
/** The Hessian of y with respect to x[0..n-1] (as dr_hessian) into *H
 *  (n x n, both triangles of its pattern), in one call. */
DR_API dr_status dr_sparse_hessian(dr_tape *t, dr_real y, size_t n,
                                   const dr_real *x, dr_sparse *H);

/**
 * A plan: the pattern and its colouring, computed once from a tape, for
 * any number of evaluations at other points - after dr_replay, or on a
 * fresh recording of the same program (the same nodes in the same order,
 * on this tape after dr_tape_clear or on another).  A plan keeps the
 * relative places of y and x on the tape and a hash of the graph up to
 * y; an evaluation on a tape whose graph differs (other operations, other
 * arguments, a node the plan did not see) or with other places answers
 * DR_ESHAPE and computes nothing.  A plan is read only by the calls; it
 * may be used from several threads on several tapes at once.
 */
typedef struct dr_sparse_plan dr_sparse_plan;
/**
 * The plan of the Jacobian of y[0..m-1] with respect to x[0..n-1] into
 * *plan (NULL on failure).  DR_EINVAL: NULL t or plan, NULL y or x with
 * m or n > 0, an id not on the tape, a child handle; DR_EBUSY (forked,
 * an open recorder); the sticky status; DR_ERANGE for m or n of 2^32 - 1
 * or more; DR_ENOTSUP where the graph up to y holds a node with no
 * pattern (see above); DR_ENOMEM.  The tape is unchanged.
 */
DR_API dr_status dr_sparse_jacobian_plan(dr_tape *t, size_t m,
                                         const dr_real *y, size_t n,
                                         const dr_real *x,
                                         dr_sparse_plan **plan);
/** The plan of the Hessian of y with respect to x[0..n-1]; errors as
 *  dr_sparse_jacobian_plan, and DR_ENOTSUP where a node up to y was
 *  recorded at order 1 (as dr_hessian). */
DR_API dr_status dr_sparse_hessian_plan(dr_tape *t, dr_real y, size_t n,
                                        const dr_real *x,
                                        dr_sparse_plan **plan);
/** Free a plan (NULL: nothing). */
DR_API void dr_sparse_plan_free(dr_sparse_plan *p);
/** The plan's pattern: its size and compressed rows (arrays the plan
 *  owns, valid until it is freed; any pointer may be NULL).  DR_EINVAL
 *  for a NULL plan. */
DR_API dr_status dr_sparse_plan_pattern(const dr_sparse_plan *p, size_t *rows,
                                        size_t *cols, size_t *nnz,
                                        const size_t **rowptr,
                                        const size_t **colind);
/** The number of colours: the sweeps an evaluation takes (forward or
 *  reverse directions, or Hessian-vector products); 0 for NULL. */
DR_API size_t dr_sparse_plan_colors(const dr_sparse_plan *p);
/**
 * The Jacobian's nonzero entries at the tape's current point into
 * val[0..nnz-1], in the order of the plan's pattern.  y and x as the plan
 * was made with (the same places on t).  DR_EINVAL for NULL arguments or
 * ids not on the tape (as dr_jacobian), DR_ESHAPE for a plan of another
 * kind, size or graph (see above), DR_ENOTSUP, DR_ENOMEM; val is then
 * not fully written, and the tape is usable as before (its own tangents
 * are untouched; a reverse plan on a tape whose nodes have no k-wide
 * rule leaves adjoints, as dr_vjp_vec).
 */
DR_API dr_status dr_sparse_jacobian_eval(dr_tape *t, const dr_sparse_plan *p,
                                         size_t m, const dr_real *y, size_t n,
                                         const dr_real *x, double *val);
/** The Hessian's entries (the plan's pattern, both triangles) at the tape's
 *  current point into val[0..nnz-1]; errors as dr_sparse_jacobian_eval;
 *  nothing on the tape changes. */
DR_API dr_status dr_sparse_hessian_eval(dr_tape *t, const dr_sparse_plan *p,
                                        dr_real y, size_t n, const dr_real *x,
                                        double *val);

/* ----------------------------------------------------------------- replay
 * A tape recorded at order 2 is also a primal-value tape: beside each node
 * it keeps the operation that made it and the values it was made from, so
 * the library can evaluate the recorded program again at new values of its
 * inputs without running the caller's code (dr_replay): every node's value
 * and partials are recomputed in recording order by the same rules that
 * recorded them, bit for bit what a fresh recording at those inputs would
 * hold.  Afterwards every driver works at the new point (dr_gradient,
 * dr_jacobian, dr_jvp, dr_vjp and the vector products, dr_hvp, dr_hessian,
 * dr_tangent_record), and dr_value reads any node's new value.  A loop that
 * asks for the gradient of one function at many points records once and
 * replays, which costs no call back into the caller's program.
 *
 * What replays: inputs (dr_input, dr_inputs, dr_input_range, dr_record0),
 * every scalar operation (dr_sin ... dr_powi, their dr_fe_ forms, far
 * arguments), the sums of products of dr_fe_dot_rec, n-ary sums
 * (dr_sumn), dr_select, the comparisons below, every array operation (see
 * "arrays"), external functions with a primal (see "external functions"),
 * statements of the caller's code (dr_record_statement, see "statements
 * that replay"), checkpointed loops (see "checkpointed loops"), and the
 * operations of a recorder (dr_rec_add, dr_rec_sub, dr_rec_mul,
 * dr_rec_div, dr_rec_neg: see "inline recording").  Nodes whose value the
 * library never saw - given partials (dr_record1/2/n, and through a
 * recorder dr_rec_record1/2, dr_rec_stmt and dr_rec_sum), an external
 * function without a primal - make dr_replay answer DR_ENOTSUP, never a
 * wrong value; dr_record_statement is the form of a statement that
 * replays.
 *
 * Forks.  A tape that forked replays like any other where every job
 * recorded at order 2 (children start at the order of the handle that
 * forked them, see "second order"): its jobs are evaluated again in
 * dependency order, to any depth of nesting - the job that forked, then
 * its children, then the job after the join.  With dr_set_threads(t, n),
 * n > 1, the children of a fork run at once on the tape's worker pool
 * (each job's own nodes on one thread, in order), else one after the
 * other in child order on the calling thread; the values are the same
 * bits either way, those of a fresh recording at the new inputs.  Children
 * that were recorded with OpenBLAS held to one thread (see "One thread
 * budget" under "fork-join parallelism") run so again, so that their
 * array operations give the same bits.  A guard recorded in a child is
 * checked like any other, and an input a child recorded is an input of
 * the root after the join (give its id to dr_replay).  Replaying needs
 * the root handle with every fork joined (DR_EBUSY while forked, DR_EINVAL
 * on a child handle).
 *
 * Arrays.  Each array operation's values are recomputed from its operands'
 * values by the code that recorded them (one kernel per primitive, BLAS
 * included, so a replay and a fresh recording agree bit for bit where the
 * same BLAS runs with the same threads), together with what its rules keep
 * of them (where a maximum was, a logsumexp); a scalar operand (dr_arr_scale,
 * dr_arr_from_reals) is read at its new value, and a scalar-valued result
 * (dr_arr_dot, dr_arr_sum, dr_arr_index ...) gives its new value to the
 * nodes after it.  Array inputs take new values with dr_replay_arrays;
 * those it is not given keep their values.  An input made by
 * dr_arr_input_ref (borrowed memory) is read where it lies: to replay it at
 * other values, either write them into its memory before the replay (the
 * library never keeps a copy; between replays the memory must stay
 * unchanged, as the sweeps read it) or give other memory in
 * dr_replay_arrays, which the node borrows from then on (the old memory is
 * the caller's again once the call has returned DR_OK).  Constant arrays
 * (dr_arr_const, dr_arr_const_ref) and what is computed from constants
 * alone keep their values.  After a replay the array adjoints and tangents
 * of earlier sweeps are gone too; tangent seeds of array inputs stay.
 *
 * Branches.  A program that branches on a value records a different tape
 * for other values.  The comparisons dr_lt ... dr_ne return their outcome
 * and, on a tape of order 2, record it as a guard (so do the discrete
 * results dr_floor ... dr_signbit, below); dr_replay checks every
 * guard at the new inputs, and if one comes out otherwise it answers
 * DR_ERETAPE and leaves the tape exactly as it was: record again.  Use them
 * (not a comparison of .val) wherever the program's path depends on a
 * value.  dr_select chooses between two values without branching, so the
 * tape stays valid on both sides of the condition.  "As it was" is what
 * the library holds: inputs given to the call get their old values back
 * (a borrowed array input its old memory), but borrowed memory the caller
 * wrote into before the call is read where it lies by the undoing replay
 * too; the tape then holds the program evaluated at those contents along
 * the recorded path, whose guard does not hold there: record again (or
 * write the old values back and replay) before using its values or
 * derivatives.
 */

/**
 * Evaluate the recorded program again with the inputs x[0..n-1] (input
 * nodes of the root handle t or of its joined children, any order, each
 * at most once) set to
 * values[0..n-1]; the other inputs keep their values (an input recorded
 * without its value, by dr_input_range or dr_record0, has the one its
 * first use was given).  DR_OK: every node's
 * value and partials are those of a fresh recording at the new inputs, and
 * the adjoints and tangents of earlier sweeps are gone.  Nothing changes
 * when it fails: DR_ERETAPE if a guard's outcome differs at the new inputs;
 * DR_ENOTSUP if the tape holds a node that cannot be replayed (see above)
 * or was not recorded at order 2 (in a child job too), or if an operation
 * or comparison was given a value other than its argument node's (a
 * dr_real whose .val the caller changed: replay computes each node from
 * its arguments' node values, and would compute otherwise); DR_EINVAL for a NULL tape, NULL
 * arrays with n > 0, an id that is not an input node of t or comes twice,
 * or a child handle; DR_EBUSY with an open recorder or fork; the sticky
 * status if it is set; DR_ENOMEM; the status of a checkpointed loop's step
 * that fails at the new inputs (the first in the order a sequential replay
 * meets them).  The primal callbacks of external functions and the steps
 * of checkpointed loops run during the call (again at the old inputs when
 * it fails after them), on the calling thread, or for those of child jobs
 * replayed with more than one thread, on the pool's threads.
 */
DR_API dr_status dr_replay(dr_tape *t, size_t n, const dr_real *x,
                           const double *values);
/** dr_replay of the inputs first .. first+n-1 (as dr_inputs and
 *  dr_input_range make them, with consecutive ids) at values[0..n-1]. */
DR_API dr_status dr_replay_range(dr_tape *t, dr_idx first, size_t n,
                                 const double *values);
/**
 * The value of node id into *v: what it was recorded with, or after a
 * dr_replay the new one; any scalar node of a tape of order 2 (the outputs
 * of array operations, external functions and loops too).  Nodes recorded
 * at order 1, nodes of given partials and inputs recorded without their
 * value (until a replay gives one) have none: DR_ENOTSUP; DR_EINVAL for an
 * id not on the tape (an array's id: read arrays with dr_arr_values) or
 * NULL v.
 */
DR_API dr_status dr_value(const dr_tape *t, dr_idx id, double *v);

/**
 * Comparisons that record the path: a < b, a <= b, a > b, a >= b, a == b,
 * a != b of the values (IEEE: false whenever a NaN takes part, but for
 * dr_ne), returned as 1 or 0.  On a tape of order 2 with an active
 * argument, the outcome is recorded as a guard for dr_replay.  A NULL tape
 * or an id not on the tape records nothing (the latter sets DR_EINVAL).
 */
DR_API int dr_lt(dr_tape *t, dr_real a, dr_real b);
DR_API int dr_le(dr_tape *t, dr_real a, dr_real b);
DR_API int dr_gt(dr_tape *t, dr_real a, dr_real b);
DR_API int dr_ge(dr_tape *t, dr_real a, dr_real b);
DR_API int dr_eq(dr_tape *t, dr_real a, dr_real b);
DR_API int dr_ne(dr_tape *t, dr_real a, dr_real b);
/**
 * Discrete results of a value that record the path the same way: floor,
 * ceil, trunc and rint (rounding to nearest, ties to even, in the default
 * rounding mode) of a.val, each with a guard that a rounds to the same
 * value (a NaN to a NaN); whether a is a NaN, infinite, or has its sign
 * bit set (dr_signbit: -0.0 too), as 1 or 0.
 */
DR_API double dr_floor(dr_tape *t, dr_real a);
DR_API double dr_ceil(dr_tape *t, dr_real a);
DR_API double dr_trunc(dr_tape *t, dr_real a);
DR_API double dr_rint(dr_tape *t, dr_real a);
DR_API int dr_isnan(dr_tape *t, dr_real a);
DR_API int dr_isinf(dr_tape *t, dr_real a);
DR_API int dr_signbit(dr_tape *t, dr_real a);
/**
 * a where c > 0, else b (ADOL-C's condassign), without a branch in the
 * tape: the node depends on a and b (partial 1 to the one chosen, 0 to the
 * other) and replays to the other side when c changes sign.  c's own
 * derivative plays no part.  At order 1 the chosen value itself comes back.
 */
DR_API dr_real dr_select(dr_tape *t, dr_real c, dr_real a, dr_real b);

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_MODES_H */
