/*
 * dualrev/core.h - the core of the public C API of libdualrev: the version,
 * the types and status codes, allocation, tapes, values, the scalar
 * operations and the entry points for code generators.  Every other
 * header of include/dualrev/ includes it; the model, errors, ids, threads
 * and semantics at special points are described in dualrev.h.
 */
#ifndef DUALREV_CORE_H
#define DUALREV_CORE_H

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

/* The Haskell package's version (dualrev.cabal) is the same; its test suite
 * checks that the two agree. */
#define DR_VERSION_MAJOR 0
#define DR_VERSION_MINOR 1
#define DR_VERSION_PATCH 0
/** The version as one number: major * 10000 + minor * 100 + patch. */
#define DR_VERSION_NUMBER \
    (DR_VERSION_MAJOR * 10000 + DR_VERSION_MINOR * 100 + DR_VERSION_PATCH)
/** The version as "major.minor.patch". */
#define DR_VERSION_STRING                                                    \
    DR__VERSION_STR(DR_VERSION_MAJOR) "." DR__VERSION_STR(DR_VERSION_MINOR)  \
    "." DR__VERSION_STR(DR_VERSION_PATCH)
#define DR__VERSION_STR(n) DR__VERSION_STR_(n)
#define DR__VERSION_STR_(n) #n

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
    DR_EBUSY = 4,   /**< the tape has forked jobs that are not joined yet,
                         or a recorder (dr_rec_begin) is open on it        */
    DR_ERANGE = 5,  /**< a size or index is out of range                    */
    DR_ENOTSUP = 6, /**< the tape holds a node with no rule for what was
                         asked (second order through a node recorded
                         without one, see "second order")               */
    DR_ERETAPE = 7  /**< replay: a comparison the recorded path depended
                         on comes out otherwise at the new inputs; record
                         again (see "replay")                            */
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
/**
 * n new independent variables with values[0..n-1], in one call: out[i] is
 * what dr_input(tape, values[i]) would return, and the ids are consecutive
 * (out[i].idx == out[0].idx + i), so their gradient can be read with
 * dr_adjoints_read or dr_gradient_range without passing the ids again.
 * Faster than n calls of dr_input (one loop, no call per input).  On failure
 * (DR_ENOMEM, or DR_EBUSY on a forked handle; also the tape's sticky status)
 * every out[i] is the constant values[i].  DR_EINVAL for a NULL tape, or
 * NULL arrays with n > 0.
 */
DR_API dr_status dr_inputs(dr_tape *tape, size_t n, const double *values,
                           dr_real *out);
/**
 * dr_inputs without the values (the tape stores none): n input nodes with
 * the consecutive ids *first .. *first+n-1; pair them with their values
 * yourself: (dr_real){values[i], *first + i}.  *first is DR_NONE for
 * n == 0 and on failure (as dr_inputs).  For callers that keep values in
 * plain arrays (no dr_real array to fill and read back) and for front ends
 * that keep values and ids apart, as the Haskell one does.
 */
DR_API dr_status dr_input_range(dr_tape *tape, size_t n, dr_idx *first);
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
/** The inverse hyperbolic sine; derivative 1 / sqrt(a^2 + 1). */
DR_API dr_real dr_asinh(dr_tape *t, dr_real a);
/** The inverse hyperbolic cosine (a >= 1); derivative 1 / sqrt(a^2 - 1). */
DR_API dr_real dr_acosh(dr_tape *t, dr_real a);
/** The inverse hyperbolic tangent (|a| < 1); derivative 1 / (1 - a^2). */
DR_API dr_real dr_atanh(dr_tape *t, dr_real a);
/**
 * a raised to b.  d/da = b a^(b-1), taken as 0 where b == 0 (a^0 is the
 * constant 1, also at a == 0); d/db = a^b log a, taken as 0 where a^b == 0
 * (so pow(0, b) with b > 0 has a finite derivative in b).
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
/**
 * The logarithm of x in base b, log x / log b (Haskell's logBase b x);
 * partials -log_b(x) / (b log b) in b and 1 / (x log b) in x.
 */
DR_API dr_real dr_logbase(dr_tape *t, dr_real b, dr_real x);
/** 1 / (1 + exp(-a)), computed without overflow. */
DR_API dr_real dr_sigmoid(dr_tape *t, dr_real a);
/** max(a, 0); derivative 1 for a > 0, else 0 (0 at a == 0). */
DR_API dr_real dr_relu(dr_tape *t, dr_real a);
/**
 * log(1 + exp(a)), computed without overflow (a for large a); derivative
 * the sigmoid of a.
 */
DR_API dr_real dr_softplus(dr_tape *t, dr_real a);

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

/**
 * The sum 0 + x[0] + x[1] + ... + x[n-1], added left to right, as ONE node
 * over its active terms, each with partial 1: a front end's sum of a list
 * in one node instead of n - 1 additions.  Unlike a node of given partials
 * (dr_recordn), the library knows its value and its rule, so it replays
 * (see "replay") and has a second-order rule (it is linear).  A constant
 * term takes part in the value at its place and records nothing; a term
 * given twice counts twice.  No active term gives the constant sum (0 for
 * n == 0).  NULL x with n > 0: DR_EINVAL (sticky) and a constant NaN; an
 * id not on the tape: DR_EINVAL (sticky) and the constant sum.
 */
DR_API dr_real dr_sumn(dr_tape *t, size_t n, const dr_real *x);
/** dr_sumn with the terms as values vals[i] and ids ids[i] (DR_NONE: a
 *  constant), for front ends that keep them apart: returns the node's id
 *  (DR_NONE for a constant result) and its value into *val (NULL: not
 *  wanted). */
DR_API dr_idx dr_sumn_id(dr_tape *t, size_t n, const double *vals,
                         const dr_idx *ids, double *val);

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_CORE_H */
