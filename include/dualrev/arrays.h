/*
 * dualrev/arrays.h - array nodes: whole vectors and matrices as single
 * tape nodes, and the array primitives.
 */
#ifndef DUALREV_ARRAYS_H
#define DUALREV_ARRAYS_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- arrays
 * Arrays of doubles of rank 1 (vectors) and rank 2 (row-major matrices) are
 * values on the tape: every array operation appends ONE node, whose forward
 * kernel computes all the values and whose reverse rule is the transpose of
 * the operation's derivative (a BLAS call for the linear-algebra ops).
 * Scalars and arrays mix freely on one tape: a scalar (dr_real) can scale an
 * array or be collected into a vector, and dot/sum/max/logsumexp/index give
 * ordinary scalar nodes.
 *
 * Storage.  The tape copies the caller's data when an array is created
 * (except with the _ref creators, which borrow it) and owns every array's
 * values (in its arena): value pointers stay valid until dr_tape_clear or
 * dr_tape_free and must not be written through.  An array's adjoint buffer
 * is allocated (from the same arena) only when a sweep or dr_arr_seed first
 * adds into it, and accumulated in place; dr_adjoints_clear keeps it, so
 * sweeping one tape again allocates nothing.
 *
 * Shapes.  A vector of length n has rank 1, rows = n and cols = 1; a matrix
 * has rank 2, rows x cols, element (i, j) at i * cols + j.  Either may be
 * empty (0 elements).  Dimensions must be below 2^31 (BLAS ints), else
 * DR_ERANGE.  Shapes are checked on every operation: a mismatch is DR_ESHAPE.
 *
 * Constant arrays.  Unlike constant scalars, a constant array is a node too
 * (so that it has an id), but an inactive one: nothing flows into or out of
 * it.  An operation whose array and scalar arguments are all inactive gives
 * an inactive result with no reverse work.  Seeding an inactive array does
 * nothing; its adjoint reads as zeros.
 *
 * Errors.  Operations that return an array record the first failure in the
 * tape's sticky status (as the scalar operations do) and return the failed
 * handle: idx DR_NONE, rank 0, no values.  A failed handle (or any id that is
 * not an array node of this tape) given to a later operation is DR_EINVAL;
 * the sticky status keeps the first error.  Scalar-valued operations return a
 * constant NaN on failure.  Nothing aborts or reads out of bounds.
 *
 * Ids.  The id of an array-valued node lies in a range of its own, apart
 * from scalar ids: given as a scalar argument (the idx of a dr_real), it is
 * refused like any id that is not on the tape (the operation gives a
 * constant and sets the sticky status to DR_EINVAL; dr_seed, dr_adjoint_get
 * and dr_gradient return DR_EINVAL).  Array ids are opaque: they are not
 * consecutive with the scalar ids recorded around them.
 *
 * Two forms.  Every operation exists taking and returning dr_arr handles,
 * and, for foreign-function interfaces that cannot pass structs (Haskell),
 * as a "_id" function taking and returning plain node ids: dr_arr_NAME_id
 * for every function here that takes a dr_tape * and returns a dr_arr or a
 * dr_real (dualrev/arrays_id.h, included at the end; generated from this
 * header).  A scalar argument s is then passed as its value and id (s_val,
 * s_id), an array of handles as an array of ids (an array of scalars as
 * arrays of values and ids), and a scalar result's value comes back through
 * a double pointer val (which may be NULL).  An array's shape and values
 * are read by id with dr_arr_shape / dr_arr_values / dr_arr_read.  The fields
 * of a dr_arr other than idx are informational: operations use only idx.
 *
 * Haskell.  The comment "Haskell:" after an operation names the functions
 * of Numeric.DualRev.Array that are that operation, with its parameters in
 * their order where it differs.
 *
 * Reverse pass.  Seed arrays with dr_arr_seed (scalars with dr_seed), sweep
 * with dr_reverse, read with dr_arr_adjoint (scalars with dr_adjoint);
 * dr_adjoints_clear clears array adjoints too.  Elementwise reverse rules skip
 * elements whose output adjoint is zero (as the scalar sweep skips nodes), so
 * an infinite partial of an unreached element never makes a NaN; the BLAS
 * rules (products, dot) use plain IEEE arithmetic.  If memory for an adjoint
 * runs out during a sweep, dr_reverse returns DR_ENOMEM (sticky).
 *
 * Fork-join.  Array operations record on child handles like any operation
 * and may take arrays of the parent's job.  In a parallel sweep sibling
 * jobs' array reverse rules run at once; what they add into the adjoint of
 * an array of an ancestor job (a weight matrix shared by the jobs of a
 * split batch) is summed, without locks, in a buffer per thread (each
 * thread's jobs one after the other, as a sequential sweep adds them), and
 * the buffers are added in when the sibling jobs are done, in parallel
 * over the elements.  Which thread runs which job varies, so such
 * adjoints agree with the sequential sweep to rounding.
 */

/** A handle to an array on a tape (a small value, returned by value). */
typedef struct dr_arr {
    dr_idx idx;          /**< node id; DR_NONE for a failed operation    */
    int32_t rank;        /**< 1 or 2; 0 for a failed operation           */
    int64_t rows, cols;  /**< rank 1: rows = length, cols = 1            */
    const double *val;   /**< rows * cols values owned by the tape       */
} dr_arr;

/** Elementwise functions for dr_arr_map (derivative in brackets): each
 *  element's value and derivative are bit for bit those of the scalar
 *  operation (dr_neg ... dr_relu; the square: dr_mul(x, x)). */
typedef enum dr_arr_fn {
    DR_FN_NEG = 0,     /**< -x        [-1]                               */
    DR_FN_ABS = 1,     /**< |x|       [sign x, 0 at 0]                   */
    DR_FN_SQRT = 2,    /**< sqrt x    [1 / (2 sqrt x)]                   */
    DR_FN_EXP = 3,     /**< exp x     [exp x]                            */
    DR_FN_LOG = 4,     /**< log x     [1 / x]                            */
    DR_FN_SIN = 5,     /**< sin x     [cos x]                            */
    DR_FN_COS = 6,     /**< cos x     [-sin x]                           */
    DR_FN_TANH = 7,    /**< tanh x    [1 / cosh^2 x]                     */
    DR_FN_SIGMOID = 8, /**< 1/(1+e^-x) [s (1 - s)], without overflow or
                            cancellation (from e^-|x|)                    */
    DR_FN_RELU = 9,    /**< x if x > 0 (or NaN), else 0 [1 if x > 0,
                            else 0]                                       */
    DR_FN_SQUARE = 10  /**< x * x     [2 x]                              */
} dr_arr_fn;

/* ---- creation and access ---- */

/**
 * A new independent array variable (an input node) holding a copy of
 * data[0 .. rows*cols-1] (data may be NULL only when that is 0).  rank 1
 * needs cols == 1, else DR_ESHAPE; rank other than 1 or 2 is DR_ESHAPE;
 * negative or too large dimensions are DR_ERANGE.
 */
DR_API dr_arr dr_arr_input(dr_tape *t, int rank, int64_t rows, int64_t cols,
                           const double *data);
/** A constant (inactive) array holding a copy of data; rules as dr_arr_input. */
DR_API dr_arr dr_arr_const(dr_tape *t, int rank, int64_t rows, int64_t cols,
                           const double *data);
/**
 * As dr_arr_input / dr_arr_const, but the tape does NOT copy: it keeps the
 * pointer data, and the caller promises that the rows*cols doubles stay
 * valid and unchanged until dr_tape_clear or dr_tape_free (the library
 * never writes through it).  Saves a copy per recording for large weights.
 * An input's memory may change right before a dr_replay, which reads it
 * where it lies, or be replaced by other memory through dr_replay_arrays
 * (see "replay").
 */
DR_API dr_arr dr_arr_input_ref(dr_tape *t, int rank, int64_t rows,
                               int64_t cols, const double *data);
DR_API dr_arr dr_arr_const_ref(dr_tape *t, int rank, int64_t rows,
                               int64_t cols, const double *data);
/**
 * The handle of array node id (a failed handle if id is not an array node of
 * this tape; the sticky status is not touched).
 */
DR_API dr_arr dr_arr_get(const dr_tape *t, dr_idx id);
/**
 * Shape of array node id: rank (1 or 2), rows and cols (vectors: rows =
 * length, cols = 1); any output pointer may be NULL.  DR_EINVAL if id is not
 * an array node of this tape.
 */
DR_API dr_status dr_arr_shape(const dr_tape *t, dr_idx id, int *rank,
                              int64_t *rows, int64_t *cols);
/** Number of elements of array node id, or -1 if it is not one. */
DR_API int64_t dr_arr_size(const dr_tape *t, dr_idx id);
/** 1 if array node id is active (depends on an input), 0 if not, -1 if it is
    not an array node. */
DR_API int dr_arr_active(const dr_tape *t, dr_idx id);
/**
 * The values of array node id (rows*cols doubles, row-major, read-only, valid
 * until dr_tape_clear), or NULL if id is not an array node of this tape.
 */
DR_API const double *dr_arr_values(const dr_tape *t, dr_idx id);
/** Copy the values of array node id into out[0 .. size-1].  DR_EINVAL if id
    is not an array node or out is NULL (with size > 0). */
DR_API dr_status dr_arr_read(const dr_tape *t, dr_idx id, double *out);
/**
 * Add cot[0 .. size-1] to the adjoint of array node id (before dr_reverse).
 * Nothing happens for an inactive array.  DR_EINVAL for a bad id or NULL cot,
 * DR_ENOMEM if the adjoint buffer cannot be allocated.
 */
DR_API dr_status dr_arr_seed(dr_tape *t, dr_idx id, const double *cot);
/**
 * Copy the adjoint of array node id into out[0 .. size-1] (zeros if the
 * sweep did not reach it).  DR_EINVAL for a bad id or NULL out.
 */
DR_API dr_status dr_arr_adjoint(const dr_tape *t, dr_idx id, double *out);
/** The adjoint buffer of array node id (read-only, valid until the next
    dr_adjoints_clear), or NULL if the sweep did not reach it or id is bad. */
DR_API const double *dr_arr_adjoint_ptr(const dr_tape *t, dr_idx id);
/**
 * Forward mode.  Every array primitive has a forward (tangent) rule, run by
 * dr_forward; an array's tangent has its shape.  Seed input arrays with
 * dr_arr_tangent_seed (scalars with dr_tangent_seed), sweep with dr_forward,
 * read with dr_arr_tangent (scalar results with dr_tangent).
 *
 * Add tangent[0 .. size-1] to the tangent seed of array node id, for the
 * forward sweeps that follow (k == 1), until dr_arr_tangents_clear.  Only
 * an input's seed is read (a computed array's tangent comes from its
 * operands); nothing happens for an inactive array, whose tangent is zero.
 * DR_EINVAL for a bad id or NULL tangent, DR_ENOMEM if the seed buffer
 * cannot be allocated.
 */
DR_API dr_status dr_arr_tangent_seed(dr_tape *t, dr_idx id,
                                     const double *tangent);
/**
 * The tangent of array node id after dr_forward (k == 1) into
 * out[0 .. size-1]: zeros if it does not depend on a seeded input or no
 * forward sweep has visited it.  DR_EINVAL for a bad id or NULL out, or
 * if the last forward sweep had k > 1 directions (dr_arr_tangent_vec).
 */
DR_API dr_status dr_arr_tangent(const dr_tape *t, dr_idx id, double *out);
/**
 * Vector mode (k directions in one forward sweep): as dr_arr_tangent_seed
 * and dr_arr_tangent with k blocks of size values, direction-major
 * (direction j at tangents[j * size]).  Seeds are used by the sweeps of the
 * same k; seeding with another k replaces the seeds of the array.
 * dr_arr_tangent_vec answers DR_EINVAL if the last sweep that visited the
 * node had another k.  k == 0 is DR_EINVAL; a k * size too large,
 * DR_ERANGE.
 */
DR_API dr_status dr_arr_tangent_seed_vec(dr_tape *t, dr_idx id, size_t k,
                                         const double *tangents);
DR_API dr_status dr_arr_tangent_vec(const dr_tape *t, dr_idx id, size_t k,
                                    double *out);
/** Drop every array tangent seed (and the tangents of the last sweep).
 *  DR_EINVAL for a child handle, DR_EBUSY while forked. */
DR_API dr_status dr_arr_tangents_clear(dr_tape *t);
/**
 * Second order.  On a tape of order 2 every array primitive has a
 * second-order rule, so dr_hvp, dr_hvp_vec, dr_hvp_inputs, dr_hessian and
 * the recorded passes (dr_tangent_record, dr_adjoint_record: nested
 * derivatives) work through array code (dualrev/modes.h).  Array inputs take part through their tangent seeds:
 * seed the direction of each array input with dr_arr_tangent_seed (k
 * directions: dr_arr_tangent_seed_vec, the same k as the call), give the
 * scalar inputs, if any, to dr_hvp / dr_hvp_vec as usual (n may be 0),
 * and read the products for each array input with dr_arr_hvp (k
 * directions: dr_arr_hvp_vec, direction j at out[j * size]).  The k
 * directions go in one pass.  dr_hessian takes its scalar inputs alone
 * (array seeds are not read).  The
 * products are those of the tape's last Hessian-vector product: zeros for
 * an array it did not reach.  DR_EINVAL for a bad id, NULL out, k == 0 or
 * a k other than the last product's; DR_ERANGE for a k * size too large.
 */
DR_API dr_status dr_arr_hvp(const dr_tape *t, dr_idx id, double *out);
DR_API dr_status dr_arr_hvp_vec(const dr_tape *t, dr_idx id, size_t k,
                                double *out);

/* ---- elementwise ---- */

/** a + b, a - b, a * b, a / b elementwise; a and b of equal rank and shape. */
DR_API dr_arr dr_arr_add(dr_tape *t, dr_arr a, dr_arr b);
/* Haskell: vadd, madd */
DR_API dr_arr dr_arr_sub(dr_tape *t, dr_arr a, dr_arr b);
/* Haskell: vsub, msub */
DR_API dr_arr dr_arr_mul(dr_tape *t, dr_arr a, dr_arr b);
/* Haskell: vmul, mmul */
DR_API dr_arr dr_arr_div(dr_tape *t, dr_arr a, dr_arr b);
/* Haskell: vdiv, mdiv */
/** s * x for a scalar s (active or constant); any shape. */
DR_API dr_arr dr_arr_scale(dr_tape *t, dr_real s, dr_arr x);
/* Haskell: vscale, mscale */
/** f applied to every element; f a dr_arr_fn (else DR_EINVAL). */
DR_API dr_arr dr_arr_map(dr_tape *t, dr_arr_fn f, dr_arr x);

/* ---- broadcasting ---- */

/** m (r x c) plus the vector v (length c) added to every row. */
DR_API dr_arr dr_arr_add_rowvec(dr_tape *t, dr_arr m, dr_arr v);
/* Haskell: addRowVec */
/** m (r x c) plus the vector v (length r) added to every column. */
DR_API dr_arr dr_arr_add_colvec(dr_tape *t, dr_arr m, dr_arr v);
/* Haskell: addColVec */
/** The r x n matrix whose every row is the vector v (length n); r >= 0. */
DR_API dr_arr dr_arr_replicate_rows(dr_tape *t, dr_arr v, int64_t r);
/* Haskell: replicateRows r v */
/** The n x c matrix whose every column is the vector v (length n); c >= 0. */
DR_API dr_arr dr_arr_replicate_cols(dr_tape *t, dr_arr v, int64_t c);
/* Haskell: replicateCols c v */

/* ---- linear algebra (OpenBLAS) ---- */

/** sum_i a[i] * b[i], a scalar node; a and b of equal rank and shape. */
DR_API dr_real dr_arr_dot(dr_tape *t, dr_arr a, dr_arr b);
/* Haskell: vdot */
/** m v: m (r x c), v a vector of length c; a vector of length r. */
DR_API dr_arr dr_arr_matvec(dr_tape *t, dr_arr m, dr_arr v);
/* Haskell: matVec */
/** v^T m: v a vector of length r, m (r x c); a vector of length c. */
DR_API dr_arr dr_arr_vecmat(dr_tape *t, dr_arr v, dr_arr m);
/* Haskell: vecMat */
/**
 * op(a) op(b) where op(x) is x^T when the flag is non-zero: op(a) m x k and
 * op(b) k x n give an m x n matrix (one dgemm; k may be 0).
 */
DR_API dr_arr dr_arr_matmul(dr_tape *t, dr_arr a, int trans_a, dr_arr b,
                            int trans_b);
/* Haskell: matMulT trans_a a trans_b b */
/** u v^T: u of length m, v of length n; an m x n matrix. */
DR_API dr_arr dr_arr_outer(dr_tape *t, dr_arr u, dr_arr v);
/* Haskell: outer */
/**
 * a x + y for a scalar a (active or constant), x and y of equal rank and
 * shape: one node (BLAS's axpy, as in a gradient step w - lr g), where
 * dr_arr_scale and dr_arr_add record two and keep a x.
 */
DR_API dr_arr dr_arr_axpy(dr_tape *t, dr_real a, dr_arr x, dr_arr y);
/* Haskell: vaxpy, maxpy */
/** The transpose of a matrix (a vector is DR_ESHAPE: reshape it instead). */
DR_API dr_arr dr_arr_transpose(dr_tape *t, dr_arr m);
/* Haskell: mtranspose */

/* ---- reductions ---- */

/** Sum of all elements (0 for an empty array), a scalar node. */
DR_API dr_real dr_arr_sum(dr_tape *t, dr_arr x);
/* Haskell: vsum, msumAll */
/** For a matrix r x c: the vector (length r) of the sums of each row. */
DR_API dr_arr dr_arr_sum_rows(dr_tape *t, dr_arr m);
/* Haskell: sumRows */
/** For a matrix r x c: the vector (length c) of the sums of each column. */
DR_API dr_arr dr_arr_sum_cols(dr_tape *t, dr_arr m);
/* Haskell: sumCols */
/**
 * Largest element, a scalar node whose derivative goes to the first maximal
 * element (row-major order).  NaN elements are ignored unless all are NaN.
 * An empty array is DR_ESHAPE.
 */
DR_API dr_real dr_arr_max(dr_tape *t, dr_arr x);
/* Haskell: vmaximum, mmaximum */
/**
 * Softmax exp(x_i - max) / sum_j exp(x_j - max): over a vector, or over each
 * row of a matrix (a batch).  Same shape as x.  Stable for any finite input.
 */
DR_API dr_arr dr_arr_softmax(dr_tape *t, dr_arr x);
/* Haskell: softmax, softmaxRows */
/** log of softmax, x_i - logsumexp(x), vector or row-wise; same shape. */
DR_API dr_arr dr_arr_log_softmax(dr_tape *t, dr_arr x);
/* Haskell: logSoftmax, logSoftmaxRows */
/** log sum_i exp x_i over all elements (stable; -inf if empty), a scalar. */
DR_API dr_real dr_arr_logsumexp(dr_tape *t, dr_arr x);
/* Haskell: logSumExp */
/** For a matrix r x c: the vector (length r) of each row's logsumexp. */
DR_API dr_arr dr_arr_logsumexp_rows(dr_tape *t, dr_arr m);
/* Haskell: logSumExpRows */

/* ---- indexing and structure ---- */

/**
 * Element i (row-major flat index, 0 <= i < size) as a scalar node; its
 * reverse rule adds into that one element of x's adjoint.  DR_ERANGE if i is
 * out of range.
 */
DR_API dr_real dr_arr_index(dr_tape *t, dr_arr x, int64_t i);
/* Haskell: vindex */
/** Element (i, j) of a matrix (DR_ERANGE out of range, DR_ESHAPE for a
    vector). */
DR_API dr_real dr_arr_index2(dr_tape *t, dr_arr m, int64_t i, int64_t j);
/* Haskell: mindex */
/** The vector (x[0], ..., x[n-1]) of n scalars (active or constant); in
    the _id form, their values and ids (DR_NONE for a constant). */
DR_API dr_arr dr_arr_from_reals(dr_tape *t, size_t n, const dr_real *x);
/**
 * Elements [start, start+len) of a vector, or rows [start, start+len) of a
 * matrix (a len x cols matrix).  DR_ERANGE unless 0 <= start <= start+len <=
 * length (rows).
 */
DR_API dr_arr dr_arr_slice(dr_tape *t, dr_arr x, int64_t start, int64_t len);
/* Haskell: vslice start len x, mslice start len x */
/** The nr x nc block of a matrix starting at (r0, c0); DR_ERANGE if it does
    not fit, DR_ESHAPE for a vector. */
DR_API dr_arr dr_arr_slice2(dr_tape *t, dr_arr m, int64_t r0, int64_t nr,
                            int64_t c0, int64_t nc);
/* Haskell: block r0 nr c0 nc m */
/**
 * Concatenation of n >= 1 arrays of one rank.  axis 0: vectors end to end,
 * or matrices stacked vertically (equal cols).  axis 1: matrices side by side
 * (equal rows); vectors with axis 1 are DR_ESHAPE.  n == 0 is DR_EINVAL.
 */
DR_API dr_arr dr_arr_concat(dr_tape *t, int axis, size_t n, const dr_arr *xs);
/**
 * Gather: y[k] = x[idx[k]] for k < n (vector x), or row k of y = row idx[k]
 * of x (matrix x, giving n x cols).  Indices repeat freely; the index array
 * is copied.  DR_ERANGE if an index is outside x.  Reverse: scatter-add.
 */
DR_API dr_arr dr_arr_gather(dr_tape *t, dr_arr x, size_t n,
                            const int64_t *idx);
/* Haskell: gather idx x, gatherRows idx x */
/**
 * Scatter-add: a vector of length out_len (or, for a matrix x, an out_len x
 * cols matrix) of zeros into which x[k] (row k of x) is added at idx[k], for
 * every k < length (rows) of x; collisions add.  idx holds that many
 * indices and is copied.  DR_ERANGE if an index is outside [0, out_len).
 * Reverse: gather.
 */
DR_API dr_arr dr_arr_scatter(dr_tape *t, dr_arr x, int64_t out_len,
                             const int64_t *idx);
/* Haskell: scatter out_len idx x, scatterRows out_len idx x */
/**
 * The same elements in row-major order under a new shape (rank 1: cols must
 * be 1); rows * cols must equal x's size, else DR_ESHAPE.  The values are
 * shared, not copied.
 */
DR_API dr_arr dr_arr_reshape(dr_tape *t, dr_arr x, int rank, int64_t rows,
                             int64_t cols);

/* ---- replay ---- */

/**
 * dr_replay with new values for array inputs too (see "replay"): arrs[i]
 * (i < m, any order, each at most once) is the handle of an array input of
 * the root handle t as dr_arr_input or dr_arr_input_ref returned it: its
 * idx names the node, and its rank, rows and cols must be the node's
 * shape, which says how many values avalues[i] holds (rows * cols, read
 * during the call; a borrowed input borrows avalues[i] itself from then
 * on, see "replay").  m == 0 is dr_replay(t, n, x, values).  Statuses as
 * dr_replay, and nothing changes when it fails; besides: DR_EINVAL for
 * NULL arrs or avalues with m > 0, an avalues[i] NULL for a non-empty
 * array, an id that is not an array input of t (a constant, a computed
 * array, a scalar id, a failed handle, another tape's) or comes twice;
 * DR_ESHAPE for a handle whose shape is not its node's.
 */
DR_API dr_status dr_replay_arrays(dr_tape *t, size_t n, const dr_real *x,
                                  const double *values, size_t m,
                                  const dr_arr *arrs,
                                  const double *const *avalues);

#ifdef __cplusplus
}
#endif

#include "arrays_id.h"

#endif /* DUALREV_ARRAYS_H */
