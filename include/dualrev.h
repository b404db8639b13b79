/*
 * dualrev.h - the whole public C API of libdualrev, a reverse-mode automatic
 * differentiation engine (dual-numbers reverse AD, optimised into taping).
 *
 * Model
 * -----
 * A tape (dr_tape) records a computation as it runs.  Every active scalar is a
 * dr_real: its value and the id of the tape node that produced it.  Constants
 * have the id DR_NONE and are not on the tape.  Each primitive operation whose
 * arguments are not all constants appends one node holding the ids of its
 * arguments and its partial derivatives with respect to them.  Ids only grow,
 * so their order is a topological order of the computation.
 *
 * The reverse pass seeds cotangents on any set of nodes (dr_seed), sweeps the
 * nodes from the last to the first once (dr_reverse), adding
 * partial * adjoint(node) into each argument's adjoint, and then any adjoint
 * can be read (dr_adjoint).  A recorded tape can be swept any number of times
 * (clear the adjoints in between with dr_adjoints_clear): one sweep per output
 * row gives a Jacobian.
 *
 * Errors
 * ------
 * No function aborts or writes outside its memory on bad input or when memory
 * runs out.  Functions that can fail return a dr_status; operations that
 * return a dr_real instead record the first failure in the tape's sticky
 * status (dr_tape_status) and return a constant (id DR_NONE) carrying the
 * correctly computed value, so a computation can run to its end and be checked
 * once.  Every later dr_reverse/dr_gradient/dr_jacobian on that tape reports
 * the sticky status until dr_tape_clear.
 *
 * Ids
 * ---
 * An id is valid on a tape if that tape returned it since its last
 * dr_tape_clear.  Ids keep growing across clears (they are never reused), so
 * an id from before a clear, an id from another tape's range, or any other
 * number that is not on the tape is rejected with DR_EINVAL; it never touches
 * memory.  (Two tapes have independent id ranges that may overlap: an id of
 * one tape can happen to be valid on another.)
 *
 * Threads
 * -------
 * A tape belongs to one thread at a time; separate tapes on separate threads
 * never interfere.  dr_set_allocator must be called before any tape exists.
 *
 * Semantics at special points (tested in tests/test_semantics.c)
 * ------------------------------------------------------------
 * - abs: d/dx abs(x) at x = 0 is 0 (the subgradient of least norm).
 *   relu: derivative 0 at x = 0.  min/max: at a tie (a == b) the whole
 *   derivative goes to the first argument.  If one argument of min/max is
 *   NaN the result is the other argument (C fmin/fmax) and so is the
 *   derivative.
 * - Values follow IEEE arithmetic exactly as C's libm does: NaN and infinite
 *   values flow through values and partials without any error status.
 * - The reverse pass skips every node whose adjoint is exactly zero (+0 or
 *   -0).  So a node that does not influence the seeded outputs contributes
 *   nothing, even when one of its partials is infinite or NaN (for example
 *   sqrt at 0, log at 0): unreached branches never poison a gradient with
 *   0 * inf = NaN.  A node that is reached with a non-zero adjoint multiplies
 *   it by its partials as IEEE does: an infinite or NaN partial then gives an
 *   infinite or NaN adjoint, which is the honest answer.  A NaN adjoint is not
 *   zero and is propagated.
 * - Sweeps are deterministic: the same tape and seeds give bit-identical
 *   adjoints on every sweep.
 */
#ifndef DUALREV_H
#define DUALREV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DR_API __attribute__((visibility("default")))
#else
#define DR_API
#endif

/* ---------------------------------------------------------------- version */

#define DR_VERSION_MAJOR 0
#define DR_VERSION_MINOR 1
#define DR_VERSION_PATCH 0
/** The version as one number: major * 10000 + minor * 100 + patch. */
#define DR_VERSION_NUMBER \
    (DR_VERSION_MAJOR * 10000 + DR_VERSION_MINOR * 100 + DR_VERSION_PATCH)
#define DR_VERSION_STRING "0.1.0"

/** DR_VERSION_NUMBER of the library linked at run time. */
DR_API unsigned dr_version(void);
/** DR_VERSION_STRING of the library linked at run time. */
DR_API const char *dr_version_string(void);

/* ------------------------------------------------------------------ types */

/** Opaque tape handle. */
typedef struct dr_tape dr_tape;

/** Node id on a tape.  Constants have the id DR_NONE. */
typedef int64_t dr_idx;
#define DR_NONE ((dr_idx)-1)

/** An active scalar: its value and the node that produced it. */
typedef struct dr_real {
    double val;
    dr_idx idx;
} dr_real;

/** Result codes.  DR_OK is 0; every failure is non-zero. */
typedef enum dr_status {
    DR_OK = 0,
    DR_ENOMEM = 1,  /**< an allocation failed; nothing was lost or leaked   */
    DR_EINVAL = 2,  /**< an argument is invalid (id not on the tape, NULL)  */
    DR_ESHAPE = 3,  /**< array shapes do not match                          */
    DR_EBUSY = 4,   /**< the tape has forked jobs that are not joined yet   */
    DR_ERANGE = 5   /**< a size or index is out of range                    */
} dr_status;

/** A static English message for a status (never NULL). */
DR_API const char *dr_strerror(dr_status status);

/* ------------------------------------------------------------- allocation */

typedef void *(*dr_malloc_fn)(size_t size, void *user);
typedef void (*dr_free_fn)(void *ptr, void *user);

/**
 * Replace the allocator the library uses for all its memory (tapes, chunks,
 * adjoints, arrays).  Pass NULL for both to restore malloc/free.  Call it only
 * while no tape exists: memory is returned to the allocator that gave it.
 * Returns DR_EINVAL if exactly one of the functions is NULL.
 * A dr_malloc_fn returns NULL on failure; the library then reports DR_ENOMEM.
 */
DR_API dr_status dr_set_allocator(dr_malloc_fn malloc_fn, dr_free_fn free_fn,
                                  void *user);

/* ------------------------------------------------------------------- tape */

/** A new empty tape, or NULL when out of memory. */
DR_API dr_tape *dr_tape_new(void);
/** Free a tape and all its memory.  NULL is allowed. */
DR_API void dr_tape_free(dr_tape *tape);
/**
 * Forget all nodes and adjoints and reset the sticky status, keeping the
 * memory for reuse: recording and sweeping the same program again allocates
 * nothing.  Ids from before the clear become invalid.
 */
DR_API dr_status dr_tape_clear(dr_tape *tape);
/** Number of nodes recorded since creation or the last clear. */
DR_API size_t dr_tape_len(const dr_tape *tape);
/** Bytes of memory the tape holds (nodes, adjoints, arrays, bookkeeping). */
DR_API size_t dr_tape_bytes(const dr_tape *tape);
/** The first error since creation or the last clear (sticky), or DR_OK. */
DR_API dr_status dr_tape_status(const dr_tape *tape);

/* ----------------------------------------------------------------- values */

/** A new independent variable with value v (one node without arguments). */
DR_API dr_real dr_input(dr_tape *tape, double v);
/** A constant: no node, id DR_NONE. */
DR_API dr_real dr_const(double v);

/* ------------------------------------------------------------- operations
 * Each returns the result of the operation on the values and records one node
 * with the partial derivatives, unless all arguments are constants (then it
 * records nothing and returns a constant).  Domain errors give IEEE results
 * (NaN, inf) as C's libm does, not an error status.
 */
DR_API dr_real dr_add(dr_tape *t, dr_real a, dr_real b);
DR_API dr_real dr_sub(dr_tape *t, dr_real a, dr_real b);
DR_API dr_real dr_mul(dr_tape *t, dr_real a, dr_real b);
DR_API dr_real dr_div(dr_tape *t, dr_real a, dr_real b);
DR_API dr_real dr_neg(dr_tape *t, dr_real a);
DR_API dr_real dr_sqrt(dr_tape *t, dr_real a);
DR_API dr_real dr_cbrt(dr_tape *t, dr_real a);
DR_API dr_real dr_exp(dr_tape *t, dr_real a);
DR_API dr_real dr_expm1(dr_tape *t, dr_real a);
DR_API dr_real dr_log(dr_tape *t, dr_real a);
DR_API dr_real dr_log1p(dr_tape *t, dr_real a);
DR_API dr_real dr_sin(dr_tape *t, dr_real a);
DR_API dr_real dr_cos(dr_tape *t, dr_real a);
DR_API dr_real dr_tan(dr_tape *t, dr_real a);
DR_API dr_real dr_asin(dr_tape *t, dr_real a);
DR_API dr_real dr_acos(dr_tape *t, dr_real a);
DR_API dr_real dr_atan(dr_tape *t, dr_real a);
/** atan2(y, x), the angle of the point (x, y). */
DR_API dr_real dr_atan2(dr_tape *t, dr_real y, dr_real x);
DR_API dr_real dr_sinh(dr_tape *t, dr_real a);
DR_API dr_real dr_cosh(dr_tape *t, dr_real a);
DR_API dr_real dr_tanh(dr_tape *t, dr_real a);
/**
 * a raised to b.  d/da = b a^(b-1); d/db = a^b log a, taken as 0 where
 * a^b == 0 (so pow(0, b) with b > 0 has a finite derivative in b).
 */
DR_API dr_real dr_pow(dr_tape *t, dr_real a, dr_real b);
/** a raised to an integer power n; d/da = n a^(n-1) (0 when n == 0). */
DR_API dr_real dr_powi(dr_tape *t, dr_real a, int n);
/** |a|; derivative sign(a), 0 at a == 0. */
DR_API dr_real dr_abs(dr_tape *t, dr_real a);
/** min(a, b) as C fmin; at a tie the derivative goes to a. */
DR_API dr_real dr_min(dr_tape *t, dr_real a, dr_real b);
/** max(a, b) as C fmax; at a tie the derivative goes to a. */
DR_API dr_real dr_max(dr_tape *t, dr_real a, dr_real b);
/** sqrt(a^2 + b^2) without overflow; partials a/h and b/h (0 when h == 0). */
DR_API dr_real dr_hypot(dr_tape *t, dr_real a, dr_real b);
DR_API dr_real dr_erf(dr_tape *t, dr_real a);
/** 1 / (1 + exp(-a)), computed without overflow. */
DR_API dr_real dr_sigmoid(dr_tape *t, dr_real a);
/** max(a, 0); derivative 1 for a > 0, else 0 (0 at a == 0). */
DR_API dr_real dr_relu(dr_tape *t, dr_real a);

/* ---------------------------------------------------- for code generators
 * Append a node with the given argument ids and partial derivatives and
 * return its id.  An argument may be DR_NONE (it then receives nothing).
 * On an invalid id or a failed allocation these return DR_NONE and set the
 * sticky status (DR_EINVAL / DR_ENOMEM).  dr_record0 appends an input node.
 */
DR_API dr_idx dr_record0(dr_tape *t);
DR_API dr_idx dr_record1(dr_tape *t, dr_idx a, double da);
DR_API dr_idx dr_record2(dr_tape *t, dr_idx a, double da, dr_idx b, double db);
/** n arguments (n may be 0); args and partials must hold n elements. */
DR_API dr_idx dr_recordn(dr_tape *t, size_t n, const dr_idx *args,
                         const double *partials);

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
 * Jacobian of y[0..m-1] with respect to x[0..n-1] into J (row-major m x n):
 * one sweep per row over the same recorded tape.
 */
DR_API dr_status dr_jacobian(dr_tape *t, size_t m, const dr_real *y, size_t n,
                             const dr_real *x, double *J);

/* DR_SECTION_ARRAYS */

/* DR_SECTION_PARALLEL */

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_H */
