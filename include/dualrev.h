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
 * memory.  Each tape takes its ids from a range of its own (2^40 ids; the
 * ranges repeat only after some two million tapes), so an id of another
 * tape is rejected too.  Array nodes have ids of
 * their own range (see "arrays"), which scalar operations, dr_seed,
 * dr_adjoint and dr_gradient refuse like any id that is not a scalar on the
 * tape.
 *
 * Threads
 * -------
 * A tape handle belongs to one thread at a time; separate tapes on separate
 * threads never interfere.  A tape can fork into child jobs whose handles
 * record at the same time on other threads, and its reverse pass can run
 * sibling jobs in parallel (see "fork-join parallelism" below).
 * dr_set_allocator must be called before any tape exists.
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

/* ----------------------------------------------------- external functions
 * A black box as one step of the tape: a linear solve, an ODE solver, a call
 * into another library.  The caller computes the outputs y = f(x) itself
 * and records them with a reverse rule that, given the outputs' adjoints
 * ybar, adds ybar^T J into the inputs' adjoints xbar (J = df/dx at x).
 *
 *     double y[2];
 *     my_solve(ctx, x_values, y);                 (the primal, any code)
 *     dr_real out[2];
 *     dr_external f = {ctx, my_solve_reverse, NULL, my_ctx_free, NULL};
 *     dr_status st = dr_record_external(t, &f, 3, x, 2, y, out);
 *
 * out[i] is an active value with y[i] as its value, usable like any other.
 * The callbacks get the input values x (constants included) and the output
 * values y as recorded, so a rule needs to keep nothing of its own; ctx is
 * for what it does need (a factorisation, parameters).
 *
 * reverse is called once per reverse sweep that reaches the outputs (none
 * when every ybar is zero), with xbar zeroed: it writes xbar[i] = sum over
 * j of ybar[j] dy_j/dx_i (adding is fine too).  forward, optional, gives
 * the tangents ydot = J xdot (ydot zeroed) for the forward and vector
 * modes; without it those answer DR_ENOTSUP on a tape holding the node, and
 * vector reverse mode calls reverse once per direction.  In a parallel
 * sweep (forked tapes) a rule may run on any of the tape's threads, beside
 * other rules, so it must not touch shared state without a lock.  Rules
 * cannot fail: a rule that can should check its inputs when the node is
 * recorded (before dr_record_external), and keep what it needs in ctx.
 *
 * destroy, optional, is called with ctx once the node is gone: when the tape
 * is cleared or freed.  From a successful call on, the tape owns ctx; a call
 * that fails leaves it with the caller (destroy is not called).
 *
 * primal, optional (the last field, so that an initialiser of the first
 * four leaves it NULL), recomputes the outputs at new input values for
 * dr_replay (see "replay"): y[0..m-1] = f(x), x the inputs' values at the
 * new point (constants as recorded).  It must compute what the caller's
 * own code computes, bit for bit, for a replay to be what a fresh
 * recording would be; the rules then see the new x and y.  It cannot
 * fail (as the rules) and runs on the thread that calls dr_replay.
 * Without it a tape holding the node does not replay (DR_ENOTSUP), and
 * neither does one where an input's value x[i].val is not its node's.
 *
 * On a tape of order 2 the node is recorded (so that it can replay) but
 * has no second-order rule: dr_hvp, dr_hessian and dr_tangent_record
 * through it answer DR_ENOTSUP.
 *
 * DR_EINVAL: t, f, f->reverse NULL, x NULL with n > 0, y or out NULL with
 * m > 0, m == 0, or an id of x not on the tape;
 * DR_EBUSY: t is forked (record on the child handles); DR_ENOMEM.  On
 * failure nothing is recorded, the tape's status is unchanged, and out[i]
 * holds constants with the values y[i].  Works on child handles inside
 * forked jobs and with an open recorder on t, as the other recording calls.
 */
typedef struct dr_external {
    void *ctx;
    /** xbar[0..n-1] (zeroed) += ybar^T J, J the m x n Jacobian at x. */
    void (*reverse)(void *ctx, size_t n, const double *x, size_t m,
                    const double *y, const double *ybar, double *xbar);
    /** ydot[0..m-1] (zeroed) += J xdot; NULL: no forward rule. */
    void (*forward)(void *ctx, size_t n, const double *x, const double *xdot,
                    size_t m, const double *y, double *ydot);
    /** Called once with ctx when the node goes; NULL: nothing to free. */
    void (*destroy)(void *ctx);
    /** y[0..m-1] = f(x) at new input values, for dr_replay (see
     *  "replay"); NULL: the node does not replay. */
    void (*primal)(void *ctx, size_t n, const double *x, size_t m,
                   double *y);
} dr_external;

/** Record y = f(x) as one node with f's own rules (see above). */
DR_API dr_status dr_record_external(dr_tape *t, const dr_external *f,
                                    size_t n, const dr_real *x, size_t m,
                                    const double *y, dr_real *out);

/* ----------------------------------------------------- checkpointed loops
 * A time-stepping loop x_{k+1} = step(k, x_k), k = 0 .. nsteps-1, over a
 * state of n values, recorded as one node that keeps `snapshots` states
 * instead of every operation of every step: its reverse rule recomputes
 * the loop from the nearest snapshot (binomial checkpointing, the schedule
 * of Griewank and Walther's revolve).  Memory is snapshots + 2 states and
 * the tape of one segment of steps, whatever nsteps is; the price is
 * recomputation.
 *
 *     static dr_status step(void *ctx, dr_tape *t, size_t k, size_t n,
 *                           const dr_real *x, dr_real *y)
 *     {   const double *dt = ctx;             (constants come through ctx)
 *         y[0] = dr_add(t, x[0], dr_mul(t, dr_const(*dt), x[1]));
 *         y[1] = x[1];                        (an unchanged entry is fine)
 *         return dr_tape_status(t);
 *     }
 *     dr_loop loop = {&dt, step, NULL, 0};
 *     dr_real xn[2];
 *     dr_status st = dr_record_checkpointed(t, &loop, 1000000, 2, x0, 1000, xn);
 *
 * step records step k on the tape t it is given (the loop's own tape, not
 * the caller's) from x[0..n-1] to y[0..n-1] with the recording calls, and
 * returns DR_OK or a status that stops the loop.  It is called once per
 * step when the loop is recorded and again during reverse sweeps, so it
 * must record the same operations for the same k and x every time, and
 * depend on nothing active but x: a value from the caller's tape (a
 * parameter, say) goes into the state, as an entry the step copies through.
 * y[i] may be x[i] itself or a constant; y never overlaps x.
 *
 * The loop is checkpointed in segments of `segment` consecutive steps,
 * recorded together on the loop's tape: snapshots hold states between
 * segments, and a reverse sweep records each segment at most
 * dr_loop_repeats(segments, snapshots) + 1 times.  Longer segments cost
 * memory for their tape and save recomputation and calls; segment = 0 lets
 * the library choose segments whose tape is about as large as the
 * snapshots (at least 256 KiB), judging from the nodes step 0 records.
 *
 * out[0..n-1] holds x_nsteps.  The gradient is the one of recording the
 * steps without checkpointing, to the last bit when the entries of x0 are
 * distinct and the program uses them after the loop only through out (the
 * same operations in the same order; otherwise the same to rounding).
 * Entries of x0 that are constants stay constants while the steps only
 * combine constants, as without checkpointing, and such outputs are
 * constants.  Forward and vector modes run the steps forward with their
 * tangents (no snapshots needed).  In a parallel sweep (forked tapes) the
 * step may run on any of the tape's threads, beside other rules.  A step
 * that fails when it is run again in a sweep makes its status the tape's
 * sticky status, which the sweep answers (dr_gradient and the others).
 *
 * destroy, optional, is called with ctx when the node goes (the tape is
 * cleared or freed); the tape owns ctx from a successful call on.
 *
 * Replay (see "replay").  On a tape of order 2 the loop replays: dr_replay
 * runs it again, every segment once, from the new initial state (calling
 * step as recording did), which refreshes the snapshots the next reverse
 * sweep starts from, so the outputs and every gradient after it are a
 * fresh recording's, bit for bit.  A step that fails there fails the
 * replay with its status (the tape as it was, the loop run again at the
 * old state); an output that the steps make constant at the new point but
 * not when recorded, or the other way, or a constant output whose value
 * differs from the recorded one (the caller's program holds that value),
 * is another program: DR_ERETAPE.
 * The loop has no second-order rule (dr_hvp through it: DR_ENOTSUP).
 *
 * DR_EINVAL: t, loop, loop->step or x0 NULL, n == 0, out NULL, an id of x0
 * not on the tape; DR_EBUSY: t is forked;
 * DR_ENOMEM; or the status of a step that failed while the loop was
 * recorded.  On failure nothing is recorded, out[i] holds constants with
 * the values of x0, and destroy is not called.
 */
typedef struct dr_loop {
    void *ctx;
    /** Record step k from x[0..n-1] to y[0..n-1] on t. */
    dr_status (*step)(void *ctx, dr_tape *t, size_t k, size_t n,
                      const dr_real *x, dr_real *y);
    /** Called once with ctx when the node goes; NULL: nothing to free. */
    void (*destroy)(void *ctx);
    /** Steps per segment; 0: chosen by the library (see above). */
    size_t segment;
} dr_loop;

/** Record nsteps steps of loop from x0 with `snapshots` stored states. */
DR_API dr_status dr_record_checkpointed(dr_tape *t, const dr_loop *loop,
                                        size_t nsteps, size_t n,
                                        const dr_real *x0, size_t snapshots,
                                        dr_real *out);

/** The most times a reverse sweep of a checkpointed loop of nseg segments
 *  with `snapshots` stored states recomputes one segment before recording
 *  it for its sweep: the least r with
 *  (snapshots + 1 + r)! / ((snapshots + 1)! r!) >= nseg (1 when every state
 *  fits, nseg - 1 with no snapshots). */
DR_API size_t dr_loop_repeats(size_t nseg, size_t snapshots);

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
 * Array operations, external functions and checkpointed loops have none
 * yet: a call that would need one answers DR_ENOTSUP, and nothing
 * changes.  A recorder (dr_rec_begin, "inline recording") works on a
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
 * is recorded and nothing on the tape changes, its adjoints included.  A
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
 *  share each pass (16 a pass), so k products cost much less than k calls
 *  of dr_hvp.  Otherwise as dr_hvp. */
DR_API dr_status dr_hvp_vec(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                            size_t k, const double *V, double *out);
/** The dense Hessian of y with respect to x[0..n-1] into H (n x n,
 *  row-major, symmetric): the products with the unit vectors, in vector
 *  mode (dr_hvp_vec), on a tape of order 2.  A node given twice in x has
 *  equal rows and columns at its places. */
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
 * dr_hessian works through).  Array operations, external functions and
 * checkpointed loops have no pattern (DR_ENOTSUP).
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
 * "arrays"), external functions with a primal (see "external functions")
 * and checkpointed loops (see "checkpointed loops"), and the operations
 * of a recorder (dr_rec_add, dr_rec_sub, dr_rec_mul, dr_rec_div,
 * dr_rec_neg: see "inline recording").  Nodes whose value the library
 * never saw - given partials (dr_record1/2/n, and through a recorder
 * dr_rec_record1/2, dr_rec_stmt and dr_rec_sum), an external function
 * without a primal - make dr_replay answer DR_ENOTSUP, never a wrong
 * value.
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
 * as a "_id" function taking and returning plain node ids; a scalar argument
 * is then passed as its value and id, and a scalar result's value comes back
 * through a double pointer (which may be NULL).  An array's shape and values
 * are read by id with dr_arr_shape / dr_arr_values / dr_arr_read.  The fields
 * of a dr_arr other than idx are informational: operations use only idx.
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
DR_API dr_idx dr_arr_input_id(dr_tape *t, int rank, int64_t rows,
                              int64_t cols, const double *data);
/** A constant (inactive) array holding a copy of data; rules as dr_arr_input. */
DR_API dr_arr dr_arr_const(dr_tape *t, int rank, int64_t rows, int64_t cols,
                           const double *data);
DR_API dr_idx dr_arr_const_id(dr_tape *t, int rank, int64_t rows,
                              int64_t cols, const double *data);
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
DR_API dr_idx dr_arr_input_ref_id(dr_tape *t, int rank, int64_t rows,
                                  int64_t cols, const double *data);
DR_API dr_arr dr_arr_const_ref(dr_tape *t, int rank, int64_t rows,
                               int64_t cols, const double *data);
DR_API dr_idx dr_arr_const_ref_id(dr_tape *t, int rank, int64_t rows,
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

/* ---- elementwise ---- */

/** a + b, a - b, a * b, a / b elementwise; a and b of equal rank and shape. */
DR_API dr_arr dr_arr_add(dr_tape *t, dr_arr a, dr_arr b);
DR_API dr_arr dr_arr_sub(dr_tape *t, dr_arr a, dr_arr b);
DR_API dr_arr dr_arr_mul(dr_tape *t, dr_arr a, dr_arr b);
DR_API dr_arr dr_arr_div(dr_tape *t, dr_arr a, dr_arr b);
DR_API dr_idx dr_arr_add_id(dr_tape *t, dr_idx a, dr_idx b);
DR_API dr_idx dr_arr_sub_id(dr_tape *t, dr_idx a, dr_idx b);
DR_API dr_idx dr_arr_mul_id(dr_tape *t, dr_idx a, dr_idx b);
DR_API dr_idx dr_arr_div_id(dr_tape *t, dr_idx a, dr_idx b);
/** s * x for a scalar s (active or constant); any shape. */
DR_API dr_arr dr_arr_scale(dr_tape *t, dr_real s, dr_arr x);
DR_API dr_idx dr_arr_scale_id(dr_tape *t, double s_val, dr_idx s_id,
                              dr_idx x);
/** f applied to every element; f a dr_arr_fn (else DR_EINVAL). */
DR_API dr_arr dr_arr_map(dr_tape *t, dr_arr_fn f, dr_arr x);
DR_API dr_idx dr_arr_map_id(dr_tape *t, int f, dr_idx x);

/* ---- broadcasting ---- */

/** m (r x c) plus the vector v (length c) added to every row. */
DR_API dr_arr dr_arr_add_rowvec(dr_tape *t, dr_arr m, dr_arr v);
DR_API dr_idx dr_arr_add_rowvec_id(dr_tape *t, dr_idx m, dr_idx v);
/** m (r x c) plus the vector v (length r) added to every column. */
DR_API dr_arr dr_arr_add_colvec(dr_tape *t, dr_arr m, dr_arr v);
DR_API dr_idx dr_arr_add_colvec_id(dr_tape *t, dr_idx m, dr_idx v);
/** The r x n matrix whose every row is the vector v (length n); r >= 0. */
DR_API dr_arr dr_arr_replicate_rows(dr_tape *t, dr_arr v, int64_t r);
DR_API dr_idx dr_arr_replicate_rows_id(dr_tape *t, dr_idx v, int64_t r);
/** The n x c matrix whose every column is the vector v (length n); c >= 0. */
DR_API dr_arr dr_arr_replicate_cols(dr_tape *t, dr_arr v, int64_t c);
DR_API dr_idx dr_arr_replicate_cols_id(dr_tape *t, dr_idx v, int64_t c);

/* ---- linear algebra (OpenBLAS) ---- */

/** sum_i a[i] * b[i], a scalar node; a and b of equal rank and shape. */
DR_API dr_real dr_arr_dot(dr_tape *t, dr_arr a, dr_arr b);
DR_API dr_idx dr_arr_dot_id(dr_tape *t, dr_idx a, dr_idx b, double *val);
/** m v: m (r x c), v a vector of length c; a vector of length r. */
DR_API dr_arr dr_arr_matvec(dr_tape *t, dr_arr m, dr_arr v);
DR_API dr_idx dr_arr_matvec_id(dr_tape *t, dr_idx m, dr_idx v);
/** v^T m: v a vector of length r, m (r x c); a vector of length c. */
DR_API dr_arr dr_arr_vecmat(dr_tape *t, dr_arr v, dr_arr m);
DR_API dr_idx dr_arr_vecmat_id(dr_tape *t, dr_idx v, dr_idx m);
/**
 * op(a) op(b) where op(x) is x^T when the flag is non-zero: op(a) m x k and
 * op(b) k x n give an m x n matrix (one dgemm; k may be 0).
 */
DR_API dr_arr dr_arr_matmul(dr_tape *t, dr_arr a, int trans_a, dr_arr b,
                            int trans_b);
DR_API dr_idx dr_arr_matmul_id(dr_tape *t, dr_idx a, int trans_a, dr_idx b,
                               int trans_b);
/** u v^T: u of length m, v of length n; an m x n matrix. */
DR_API dr_arr dr_arr_outer(dr_tape *t, dr_arr u, dr_arr v);
DR_API dr_idx dr_arr_outer_id(dr_tape *t, dr_idx u, dr_idx v);
/** The transpose of a matrix (a vector is DR_ESHAPE: reshape it instead). */
DR_API dr_arr dr_arr_transpose(dr_tape *t, dr_arr m);
DR_API dr_idx dr_arr_transpose_id(dr_tape *t, dr_idx m);

/* ---- reductions ---- */

/** Sum of all elements (0 for an empty array), a scalar node. */
DR_API dr_real dr_arr_sum(dr_tape *t, dr_arr x);
DR_API dr_idx dr_arr_sum_id(dr_tape *t, dr_idx x, double *val);
/** For a matrix r x c: the vector (length r) of the sums of each row. */
DR_API dr_arr dr_arr_sum_rows(dr_tape *t, dr_arr m);
DR_API dr_idx dr_arr_sum_rows_id(dr_tape *t, dr_idx m);
/** For a matrix r x c: the vector (length c) of the sums of each column. */
DR_API dr_arr dr_arr_sum_cols(dr_tape *t, dr_arr m);
DR_API dr_idx dr_arr_sum_cols_id(dr_tape *t, dr_idx m);
/**
 * Largest element, a scalar node whose derivative goes to the first maximal
 * element (row-major order).  NaN elements are ignored unless all are NaN.
 * An empty array is DR_ESHAPE.
 */
DR_API dr_real dr_arr_max(dr_tape *t, dr_arr x);
DR_API dr_idx dr_arr_max_id(dr_tape *t, dr_idx x, double *val);
/**
 * Softmax exp(x_i - max) / sum_j exp(x_j - max): over a vector, or over each
 * row of a matrix (a batch).  Same shape as x.  Stable for any finite input.
 */
DR_API dr_arr dr_arr_softmax(dr_tape *t, dr_arr x);
DR_API dr_idx dr_arr_softmax_id(dr_tape *t, dr_idx x);
/** log of softmax, x_i - logsumexp(x), vector or row-wise; same shape. */
DR_API dr_arr dr_arr_log_softmax(dr_tape *t, dr_arr x);
DR_API dr_idx dr_arr_log_softmax_id(dr_tape *t, dr_idx x);
/** log sum_i exp x_i over all elements (stable; -inf if empty), a scalar. */
DR_API dr_real dr_arr_logsumexp(dr_tape *t, dr_arr x);
DR_API dr_idx dr_arr_logsumexp_id(dr_tape *t, dr_idx x, double *val);
/** For a matrix r x c: the vector (length r) of each row's logsumexp. */
DR_API dr_arr dr_arr_logsumexp_rows(dr_tape *t, dr_arr m);
DR_API dr_idx dr_arr_logsumexp_rows_id(dr_tape *t, dr_idx m);

/* ---- indexing and structure ---- */

/**
 * Element i (row-major flat index, 0 <= i < size) as a scalar node; its
 * reverse rule adds into that one element of x's adjoint.  DR_ERANGE if i is
 * out of range.
 */
DR_API dr_real dr_arr_index(dr_tape *t, dr_arr x, int64_t i);
DR_API dr_idx dr_arr_index_id(dr_tape *t, dr_idx x, int64_t i, double *val);
/** Element (i, j) of a matrix (DR_ERANGE out of range, DR_ESHAPE for a
    vector). */
DR_API dr_real dr_arr_index2(dr_tape *t, dr_arr m, int64_t i, int64_t j);
DR_API dr_idx dr_arr_index2_id(dr_tape *t, dr_idx m, int64_t i, int64_t j,
                               double *val);
/** The vector (x[0], ..., x[n-1]) of n scalars (active or constant). */
DR_API dr_arr dr_arr_from_reals(dr_tape *t, size_t n, const dr_real *x);
/** As dr_arr_from_reals, the scalars given as values and ids (DR_NONE for a
    constant). */
DR_API dr_idx dr_arr_from_reals_id(dr_tape *t, size_t n, const double *vals,
                                   const dr_idx *ids);
/**
 * Elements [start, start+len) of a vector, or rows [start, start+len) of a
 * matrix (a len x cols matrix).  DR_ERANGE unless 0 <= start <= start+len <=
 * length (rows).
 */
DR_API dr_arr dr_arr_slice(dr_tape *t, dr_arr x, int64_t start, int64_t len);
DR_API dr_idx dr_arr_slice_id(dr_tape *t, dr_idx x, int64_t start,
                              int64_t len);
/** The nr x nc block of a matrix starting at (r0, c0); DR_ERANGE if it does
    not fit, DR_ESHAPE for a vector. */
DR_API dr_arr dr_arr_slice2(dr_tape *t, dr_arr m, int64_t r0, int64_t nr,
                            int64_t c0, int64_t nc);
DR_API dr_idx dr_arr_slice2_id(dr_tape *t, dr_idx m, int64_t r0, int64_t nr,
                               int64_t c0, int64_t nc);
/**
 * Concatenation of n >= 1 arrays of one rank.  axis 0: vectors end to end,
 * or matrices stacked vertically (equal cols).  axis 1: matrices side by side
 * (equal rows); vectors with axis 1 are DR_ESHAPE.  n == 0 is DR_EINVAL.
 */
DR_API dr_arr dr_arr_concat(dr_tape *t, int axis, size_t n, const dr_arr *xs);
DR_API dr_idx dr_arr_concat_id(dr_tape *t, int axis, size_t n,
                               const dr_idx *xs);
/**
 * Gather: y[k] = x[idx[k]] for k < n (vector x), or row k of y = row idx[k]
 * of x (matrix x, giving n x cols).  Indices repeat freely; the index array
 * is copied.  DR_ERANGE if an index is outside x.  Reverse: scatter-add.
 */
DR_API dr_arr dr_arr_gather(dr_tape *t, dr_arr x, size_t n,
                            const int64_t *idx);
DR_API dr_idx dr_arr_gather_id(dr_tape *t, dr_idx x, size_t n,
                               const int64_t *idx);
/**
 * Scatter-add: a vector of length out_len (or, for a matrix x, an out_len x
 * cols matrix) of zeros into which x[k] (row k of x) is added at idx[k], for
 * every k < length (rows) of x; collisions add.  idx holds that many
 * indices and is copied.  DR_ERANGE if an index is outside [0, out_len).
 * Reverse: gather.
 */
DR_API dr_arr dr_arr_scatter(dr_tape *t, dr_arr x, int64_t out_len,
                             const int64_t *idx);
DR_API dr_idx dr_arr_scatter_id(dr_tape *t, dr_idx x, int64_t out_len,
                                const int64_t *idx);
/**
 * The same elements in row-major order under a new shape (rank 1: cols must
 * be 1); rows * cols must equal x's size, else DR_ESHAPE.  The values are
 * shared, not copied.
 */
DR_API dr_arr dr_arr_reshape(dr_tape *t, dr_arr x, int rank, int64_t rows,
                             int64_t cols);
DR_API dr_idx dr_arr_reshape_id(dr_tape *t, dr_idx x, int rank, int64_t rows,
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
/* ------------------------------------------------- fork-join parallelism
 * (thesis section 3.10.)  A computation can fork into child jobs that record
 * at the same time from other threads, each on its own segment of the tape,
 * and join back; the reverse pass then runs sibling jobs concurrently on a
 * pool of worker threads ("forks in the primal become joins in the dual").
 *
 * Handles.  The dr_tape* of dr_tape_new is the root handle.  dr_fork(t, n,
 * kids) gives n child handles, one per child job; each records like a tape
 * (every dr_* recording function, dr_recordn, array operations, and dr_fork /
 * dr_join / dr_fork_run on itself for nested forks, to any depth).  While
 * forked, t records nothing: recording on it returns constants and sets its
 * sticky status to DR_EBUSY; dr_seed, dr_reverse, dr_gradient, dr_jacobian,
 * dr_adjoints_clear, dr_tape_clear and dr_set_threads return DR_EBUSY.
 * dr_join(t) ends the fork: t continues in a new job that follows all the
 * children.  Child handles are valid from dr_fork to that dr_join; afterwards
 * they are recycled by later forks (recording on a joined handle records
 * nothing and sets that handle's status to DR_EINVAL until it is reused).
 * Seeding, sweeping, reading adjoints and clearing take the root handle only
 * (DR_EINVAL on a child handle); dr_tape_free on a child handle does nothing.
 *
 * Ids.  Ids of all jobs come from one counter (each job reserves ranges of
 * ids for its chunks), so they never collide and stay valid across segments.
 * An id may be used as an argument in the job that recorded it, in every job
 * forked from that job afterwards (and their descendants), and, after the
 * join, in the parent's continuation and everything after it.  Using an id
 * of a sibling job (one running at the same time) is a usage error that is
 * not always detected: an id that is beyond what the handle's job could have
 * seen is rejected with DR_EINVAL, but an id a sibling reserved earlier is
 * accepted (so is an id in a range a job reserved for its chunks but no
 * node took: its adjoint reads 0).  It stays memory-safe (the adjoint
 * array covers every reserved id) but the gradient is meaningless and the
 * sweep may race on that adjoint.
 *
 * Threads.  Each handle is used by one thread at a time (any thread; calls
 * on one handle need a happens-before order, as given by a mutex, a thread
 * join, or a Haskell MVar).  Different handles of one tape may record at the
 * same time on different threads.  Call dr_join(t) only after every call on
 * the child handles has returned and is ordered before it (e.g. after
 * pthread_join); children that forked must have joined (else DR_EBUSY).
 *
 * Errors.  A failure in a child (out of memory, an invalid id) sets the child
 * handle's sticky status (dr_tape_status on the child); dr_join copies the
 * first failure, in child order, into the parent's sticky status, so after
 * the last join the root reports it like any other recording failure.
 *
 * Replay.  A tape recorded at order 2 (the children take the order of the
 * handle that forked them) replays after its last join: dr_replay
 * evaluates the job graph again at new inputs, the children of each fork
 * at once on the worker pool with more than one thread (see "replay").
 *
 * Reverse pass.  dr_reverse (and dr_gradient, dr_jacobian) on the root sweeps
 * the job graph backwards: the continuation, then the children of each fork,
 * then the job that forked.  With dr_set_threads(t, 1) (the default) every
 * job runs on the calling thread, children last-to-first: the result is
 * bit-identical to the sequential recording of the same program (children
 * in order 0..n-1), and deterministic.  With more threads, sibling jobs run
 * at once on the tape's worker pool.  What a job adds into the adjoint of a
 * node recorded before its fork is noted in a log of the job's, and the job
 * that forked adds its children's logs in once they are all done, in the
 * order the sequential sweep makes those additions: the adjoints are
 * bit-identical to one thread's, at any thread count.  Two exceptions
 * agree to rounding only: sibling jobs that take an array recorded before
 * their fork sum into its adjoint per thread (see "Fork-join" under
 * arrays), and so into whatever that adjoint flows to;
 * and a sweep that ran out of memory for a log adds atomically from then
 * on.  Each job's own nodes are swept by one thread, in order.
 * The pool is created on first use (threads - 1 workers; the calling thread
 * works too), reused by later sweeps and dr_fork_run calls, and stopped by
 * dr_tape_free or a dr_set_threads with another count.  If a thread cannot
 * be created, the work runs with fewer (or on the calling thread).
 *
 * One thread budget.  OpenBLAS has a thread pool of its own.  While jobs
 * may run at once - from dr_fork to its dr_join, during dr_fork_run on the
 * worker pool, and during a parallel sweep - the library sets OpenBLAS to
 * one thread, so each job's array products run on the job's own thread and
 * the jobs are the parallelism (several jobs each asking OpenBLAS for every
 * core would oversubscribe them, and OpenBLAS serialises concurrent
 * callers).  Outside those times OpenBLAS uses its own thread count
 * (OPENBLAS_NUM_THREADS or openblas_set_num_threads).  OpenBLAS's count is
 * one process-wide setting: the first such hold, of any tape, saves it and
 * the last restores it, so a BLAS call made meanwhile by other code of the
 * process also runs single-threaded.  Linked against another CBLAS, the
 * library leaves threads alone.
 */

/**
 * Fork the current job of handle t (the root or a child handle) into n >= 1
 * child jobs and store their handles in children[0..n-1], each at t's order
 * (dr_tape_order).  DR_EINVAL if n is
 * 0, children is NULL or t is a joined handle; DR_EBUSY if t is already
 * forked; DR_ENOMEM if memory runs out (then nothing is forked and t records
 * on as before: the caller may run the children's work on t in order; the
 * sticky status says DR_ENOMEM, as for any failed allocation).
 */
DR_API dr_status dr_fork(dr_tape *t, size_t n, dr_tape **children);

/**
 * Join the children of t's open fork: their jobs become part of t's job
 * graph, their node counts and failures are added to t (and, where t is of
 * order 2, what they recorded for second order and replay), their handles
 * become invalid, and t records on in a new job.  DR_EINVAL if t has no open fork;
 * DR_EBUSY if a child has an open fork of its own (nothing changes).
 */
DR_API dr_status dr_join(dr_tape *t);

/** The function that dr_fork_run runs for child i on its handle. */
typedef void (*dr_job_fn)(dr_tape *child, size_t i, void *ctx);

/**
 * Fork t into n children, run fn(child_i, i, ctx) for every i, and join:
 * with threads > 1 on the tape's worker pool (the calling thread takes part;
 * fn runs on any of the threads, several at once), else in order i = 0..n-1
 * on the calling thread.  fn may fork its child again (nested dr_fork_run
 * calls share the pool and never deadlock) but must join what it forks and
 * end the recorders it begins.  A job that returns with a fork or a
 * recorder still open on its handle is a usage error that loses nothing
 * but that recording: dr_fork_run closes what was left open (the nodes of
 * such a recorder since it last took the cursor are dropped), joins, sets
 * t's sticky status and returns DR_EBUSY; dr_tape_clear makes the tape
 * usable again.  Otherwise returns the status of dr_fork (then fn never
 * ran) or dr_join.
 */
DR_API dr_status dr_fork_run(dr_tape *t, size_t n, dr_job_fn fn, void *ctx);

/**
 * Number of threads for the parallel work of the tape (root handle): the
 * reverse pass over forked jobs and dr_fork_run.  1 (the default) runs
 * everything on the calling thread; 0 means the number of online CPUs.
 * Not while forked (DR_EBUSY) or on a child handle (DR_EINVAL).
 */
DR_API dr_status dr_set_threads(dr_tape *t, unsigned n);
/** The tape's thread count (any handle); 0 for NULL. */
DR_API unsigned dr_get_threads(const dr_tape *t);

/* ------------------------------------------------------ inline recording
 * A recorder is for hot loops in C.  dr_rec_begin takes the tape's recording
 * cursor into a dr_rec, a local variable of the caller, and the static
 * inline operations below append their nodes through it: a few stores and no
 * call per node, with the cursor in registers.  Recording a dot product this
 * way takes about a third less time than calling dr_add and dr_mul (about 4
 * against 6 ns per element): a call per node costs a round trip of the
 * cursor through memory.  dr_rec_end gives the cursor back.
 *
 *     dr_rec r;
 *     dr_rec_begin(t, &r);
 *     dr_real acc = dr_const(0.0);
 *     for (size_t i = 0; i < n; i++)
 *         acc = dr_rec_add(&r, acc, dr_rec_mul(&r, x[i], y[i]));
 *     dr_status st = dr_rec_end(&r);
 *
 * The nodes, ids and values are exactly those of the same calls of dr_add,
 * dr_sub, dr_mul, dr_div and dr_neg, and errors behave the same: an id that
 * is not on the tape sets the tape's sticky status and gives a constant.
 * dr_rec_record1 / dr_rec_record2 append a node with partials the caller
 * computed (as dr_record1 / dr_record2), for any other operation.
 *
 * While a recorder is open, every other recording call on the same handle
 * still works (dr_sin, dr_input, array operations, ...): it takes the
 * cursor back, and the recorder's next operation borrows it again, so the
 * ids of either are arguments of the other and come out in program order.
 * That costs a call out of line each time the cursor changes hands, so keep
 * the hot loop on the recorder.  What needs the whole tape refuses with
 * DR_EBUSY until dr_rec_end: sweeping, seeding, reading gradients, clearing,
 * forking, and a second recorder.  dr_tape_len does not count the
 * recorder's nodes before dr_rec_end (or the next call on the tape).  A
 * recorder belongs to one tape handle (a root or a child handle) and one
 * thread; end it before dr_tape_free.
 *
 * On a handle of order 2 (see "second order") a recorder works too, but
 * it gains nothing there: each of its operations goes out of line to the
 * tape's own (dr_rec_add to dr_add, ..., dr_rec_record1/2 to dr_record2,
 * statements to dr_recordn's node), which records the same node and logs
 * it for second derivatives and replay as that call does; so nodes a
 * recorder made replay and have second derivatives exactly where the
 * calls' do (given partials: linear, and no replay).  The value it
 * returns is the one computed inline, which is the tape operation's (the
 * same rule in the same arithmetic; a compiler that contracts a * b + c
 * into one rounding where the caller's code was compiled would make them
 * differ, and replay then refuses, DR_ENOTSUP).  Its order cannot be set
 * to 2 while a recorder is open (DR_EBUSY); set to 1, the recorder's
 * next operations are inline again, at order 1.
 *
 * The fields of dr_rec and of struct dr__node are private: they are the
 * library's node layout, so code compiled with these inline functions must
 * run with the library version it was compiled against.
 */

/** A tape node as the library lays it out (private; see dr_rec). */
struct dr__node {
    double da, db;
    int32_t a, b;
};

/** A recorder (fields private). */
typedef struct dr_rec {
    struct dr__node *cur_, *end_;
    int64_t next_, base_;
    dr_tape *tape_;
} dr_rec;

/**
 * Open a recorder r on tape handle t.  DR_EINVAL if r or t is NULL or t is a
 * joined child handle; DR_EBUSY if t is forked or already has a recorder
 * open.  If r itself is the recorder open on t, DR_EBUSY and r stays open
 * and working; otherwise, on failure r is still usable: its operations
 * return constants (without touching any tape's status).  (A recorder open
 * on another tape must be ended before it is begun again.)
 */
DR_API dr_status dr_rec_begin(dr_tape *t, dr_rec *r);
/**
 * Close recorder r and give the cursor back to its tape; returns the tape's
 * sticky status (DR_EINVAL if r is NULL or not open).
 */
DR_API dr_status dr_rec_end(dr_rec *r);
#if defined(__GNUC__)
#define DR__COLD __attribute__((cold))
#else
#define DR__COLD
#endif
/* which operation a recorder's push is (private): the out-of-line part
   records a node on a tape of order 2 through the tape's own operation */
enum {
    DR__REC_ADD,
    DR__REC_SUB,
    DR__REC_MUL,
    DR__REC_DIV,
    DR__REC_NEG,
    DR__REC_GIVEN /* given partials: dr_rec_record1/2, statements */
};
/* the out-of-line part of a recorder's push of node (a, da, b, db): a full
   chunk, an argument not on the tape or further back than DR_NEAR_MAX, a
   failed dr_rec_begin, and every push on a tape of order 2, which records
   operation op of the operands x and y as it was written (x a constant
   where the inline code pushed a node over y alone) */
DR_API DR__COLD dr_idx dr__rec_slow(dr_rec *r, dr_idx a, double da,
                                    dr_idx b, double db, int op, dr_real x,
                                    dr_real y);

#ifndef DR_NEAR_MAX /* (arguments further back are recorded out of line) */
#define DR_NEAR_MAX INT32_MAX
#endif
#if defined(__GNUC__)
#define DR__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DR__UNLIKELY(x) (x)
#endif

/* Append a node over ids a and b (neither DR_NONE; dr__rec_push1: no b,
   its partial db goes to the sweep's sink as with the tape calls).  The
   distance back from the new node to an id that is not on the tape (never
   recorded, from before a clear) falls outside 1 .. next, one further back
   than DR_NEAR_MAX is recorded out of line, and so is a full chunk. */
static inline dr_idx dr__rec_push2(dr_rec *r, dr_idx a, double da, dr_idx b,
                                   double db, int op, dr_real x, dr_real y)
{
    uint64_t self = (uint64_t)r->next_;
    uint64_t oa = self - ((uint64_t)a - (uint64_t)r->base_);
    uint64_t ob = self - ((uint64_t)b - (uint64_t)r->base_);
    if (DR__UNLIKELY(oa - 1 >= self || ob - 1 >= self ||
                     (oa | ob) > (uint64_t)DR_NEAR_MAX || r->cur_ == r->end_))
        return dr__rec_slow(r, a, da, b, db, op, x, y);
    struct dr__node *n = r->cur_;
    n->da = da;
    n->db = db;
    n->a = (int32_t)oa;
    n->b = (int32_t)ob;
    r->cur_ = n + 1;
    r->next_ = (int64_t)self + 1;
    return r->base_ + (int64_t)self;
}
static inline dr_idx dr__rec_push1(dr_rec *r, dr_idx a, double da, double db,
                                   int op, dr_real x, dr_real y)
{
    uint64_t self = (uint64_t)r->next_;
    uint64_t oa = self - ((uint64_t)a - (uint64_t)r->base_);
    if (DR__UNLIKELY(oa - 1 >= self || oa > (uint64_t)DR_NEAR_MAX ||
                     r->cur_ == r->end_))
        return dr__rec_slow(r, a, da, DR_NONE, db, op, x, y);
    struct dr__node *n = r->cur_;
    n->da = da;
    n->db = db;
    n->a = (int32_t)oa;
    n->b = 0;
    r->cur_ = n + 1;
    r->next_ = (int64_t)self + 1;
    return r->base_ + (int64_t)self;
}

/* a node over a and b with partials da, db, put as the tape calls put it:
   a constant argument records nothing, two record nothing at all */
static inline dr_real dr__rec_binary(dr_rec *r, int op, double v, dr_real a,
                                     double da, dr_real b, double db)
{
    dr_real y;
    y.val = v;
    if (a.idx != DR_NONE)
        y.idx = b.idx != DR_NONE
                    ? dr__rec_push2(r, a.idx, da, b.idx, db, op, a, b)
                    : dr__rec_push1(r, a.idx, da, db, op, a, b);
    else if (b.idx != DR_NONE)
        y.idx = dr__rec_push1(r, b.idx, db, 0.0, op, a, b);
    else
        y.idx = DR_NONE;
    return y;
}

/** dr_add through recorder r. */
static inline dr_real dr_rec_add(dr_rec *r, dr_real a, dr_real b)
{
    return dr__rec_binary(r, DR__REC_ADD, a.val + b.val, a, 1.0, b, 1.0);
}
/** dr_sub through recorder r. */
static inline dr_real dr_rec_sub(dr_rec *r, dr_real a, dr_real b)
{
    return dr__rec_binary(r, DR__REC_SUB, a.val - b.val, a, 1.0, b, -1.0);
}
/** dr_mul through recorder r. */
static inline dr_real dr_rec_mul(dr_rec *r, dr_real a, dr_real b)
{
    return dr__rec_binary(r, DR__REC_MUL, a.val * b.val, a, b.val, b, a.val);
}
/** dr_div through recorder r. */
static inline dr_real dr_rec_div(dr_rec *r, dr_real a, dr_real b)
{
    double q = a.val / b.val;
    return dr__rec_binary(r, DR__REC_DIV, q, a, 1.0 / b.val, b, -q / b.val);
}
/** dr_neg through recorder r. */
static inline dr_real dr_rec_neg(dr_rec *r, dr_real a)
{
    dr_real none = {0.0, DR_NONE};
    return dr__rec_binary(r, DR__REC_NEG, -a.val, a, -1.0, none, 0.0);
}
/**
 * A node for a one-argument operation with value v and partial da, through
 * recorder r: dr_record1 with the value carried, except that a constant
 * argument records nothing (as an operation; dr_record1(t, DR_NONE, ...)
 * records a node without arguments) and gives the constant v.
 */
static inline dr_real dr_rec_record1(dr_rec *r, double v, dr_real a,
                                     double da)
{
    dr_real none = {0.0, DR_NONE};
    return dr__rec_binary(r, DR__REC_GIVEN, v, a, da, none, 0.0);
}
/** The same for two arguments (dr_record2 with the value carried). */
static inline dr_real dr_rec_record2(dr_rec *r, double v, dr_real a,
                                     double da, dr_real b, double db)
{
    return dr__rec_binary(r, DR__REC_GIVEN, v, a, da, b, db);
}

/* ------------------------------------------------------------ statements
 * A statement is a whole expression recorded as ONE node: its value and,
 * for each active argument, the partial derivative of the whole expression
 * with respect to it (as CoDiPack's expression templates record an
 * assignment).  A dr_expr is an expression under construction: a value
 * and a short list of terms (argument id, partial).  The dr_ex_*
 * functions below combine expressions and apply the chain rule as they
 * go, so the partials of a nested sub-expression are multiplied through
 * at record time and nothing is recorded until dr_rec_stmt emits the
 * node, through a recorder:
 *
 *     // v' = v + dt * (-0.5 p - 0.2 v): one node over v and p
 *     dr_expr a = dr_ex_add(dr_ex_scale(-0.5, dr_ex(p)),
 *                           dr_ex_scale(-0.2, dr_ex(v)));
 *     v = dr_rec_stmt(&r, dr_ex_add(dr_ex(v), dr_ex_scale(dt, a)));
 *
 * dr_rec_stmt drops constant arguments and merges repeated ones (v above
 * has one argument with partial 1 - 0.2 dt), then appends one node over
 * what is left: nothing for none (the result is a constant), a
 * one- or two-argument node inline, an n-ary node (as dr_recordn) out of
 * line for more.  Fewer nodes make a smaller tape and a shorter sweep; the
 * gradient agrees with recording each operation to rounding.
 *
 * An expression holds at most DR_EXPR_MAX terms: each dr_ex of an active
 * or constant dr_real is one, dr_ex_const none, and a combination has the
 * terms of both sides (a repeated argument counts each time).  One with
 * more does not overflow: it is marked, and dr_rec_stmt then records
 * nothing, sets the tape's sticky status to DR_ERANGE and returns the
 * constant value.  Ids are checked when the node is appended, as the
 * recorder's operations check them (DR_EINVAL, a constant result).  The
 * term count of an expression is known where it is written, so the
 * compiler can keep its terms in registers.
 *
 * Long sums (a dot product and a bias, one statement per neuron) have too
 * many terms for a dr_expr: a dr_sum collects terms into arrays the caller
 * provides, and dr_rec_sum records them as one node (dr_sum_* below).
 */
#define DR_EXPR_MAX 8
/* (expressions are values the compiler must see through, inlined, to keep
   their terms in registers; a call would copy them through memory) */
#if defined(__GNUC__)
#define DR__INLINE static inline __attribute__((always_inline))
#else
#define DR__INLINE static inline
#endif
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define DR__UNROLL _Pragma("GCC unroll 8")
#else
#define DR__UNROLL
#endif

/** An expression under construction (see "statements"; fields private). */
typedef struct dr_expr {
    double val;
    int n; /* terms; DR_EXPR_MAX + 1 once too many were combined */
    dr_idx id[DR_EXPR_MAX];
    double d[DR_EXPR_MAX];
} dr_expr;

/* Terms past n are never read, and are left unwritten where expressions
   are made on the hot path: zeroing them costs a recorded statement more
   than the rest of its recording (the compiler does not drop the stores).
   Copying an expression copies them; the warning that this may copy
   indeterminate values is turned off for these functions. */
#define DR__EXPR_ZERO {0.0, 0, {0}, {0.0}}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

/* the out-of-line part of dr_rec_stmt and dr_rec_sum: more than two
   arguments (an n-ary node), or a failure to record (st: the sticky
   status to set, n ignored) */
DR_API DR__COLD dr_idx dr__rec_nary(dr_rec *r, size_t n, const dr_idx *ids,
                                    const double *partials, dr_status st);

/** The expression a (one term: a itself, partial 1). */
DR__INLINE dr_expr dr_ex(dr_real a)
{
    dr_expr e;
    e.val = a.val;
    e.n = 1;
    e.id[0] = a.idx;
    e.d[0] = 1.0;
    return e;
}
/** The constant expression v (no terms). */
DR__INLINE dr_expr dr_ex_const(double v)
{
    dr_expr e = DR__EXPR_ZERO;
    e.val = v;
    e.n = 0;
    return e;
}
/* e with value v and the terms of a times ca followed by those of b times
   cb (b may be NULL) */
DR__INLINE dr_expr dr__ex_comb(double v, const dr_expr *a, double ca,
                                  const dr_expr *b, double cb)
{
    dr_expr e;
    int nb = b ? b->n : 0;
    e.val = v;
    e.n = a->n + nb;
    if (DR__UNLIKELY(e.n > DR_EXPR_MAX)) {
        dr_expr over = DR__EXPR_ZERO;
        over.val = v;
        over.n = DR_EXPR_MAX + 1;
        return over;
    }
    for (int i = 0; i < a->n; i++) {
        e.id[i] = a->id[i];
        e.d[i] = a->d[i] * ca;
    }
    for (int i = 0; i < nb; i++) {
        e.id[a->n + i] = b->id[i];
        e.d[a->n + i] = b->d[i] * cb;
    }
    return e;
}
/** a + b */
DR__INLINE dr_expr dr_ex_add(dr_expr a, dr_expr b)
{
    return dr__ex_comb(a.val + b.val, &a, 1.0, &b, 1.0);
}
/** a - b */
DR__INLINE dr_expr dr_ex_sub(dr_expr a, dr_expr b)
{
    return dr__ex_comb(a.val - b.val, &a, 1.0, &b, -1.0);
}
/** a * b */
DR__INLINE dr_expr dr_ex_mul(dr_expr a, dr_expr b)
{
    return dr__ex_comb(a.val * b.val, &a, b.val, &b, a.val);
}
/** a / b */
DR__INLINE dr_expr dr_ex_div(dr_expr a, dr_expr b)
{
    double q = a.val / b.val;
    return dr__ex_comb(q, &a, 1.0 / b.val, &b, -q / b.val);
}
/** -a */
DR__INLINE dr_expr dr_ex_neg(dr_expr a)
{
    return dr__ex_comb(-a.val, &a, -1.0, NULL, 0.0);
}
/** c * a for a constant c (no term for c) */
DR__INLINE dr_expr dr_ex_scale(double c, dr_expr a)
{
    return dr__ex_comb(c * a.val, &a, c, NULL, 0.0);
}
/**
 * f(a) for a one-argument function f the caller evaluates: v = f(a.val)
 * and d = f'(a.val) (for example dr_ex_fn(a, sin(a.val), cos(a.val))).
 */
DR__INLINE dr_expr dr_ex_fn(dr_expr a, double v, double d)
{
    return dr__ex_comb(v, &a, d, NULL, 0.0);
}

/**
 * Record expression e as one node through recorder r and return its value
 * and id (see "statements"): constant arguments dropped, repeated ones
 * merged; a constant if no argument is left.  Too many terms: DR_ERANGE
 * (sticky) and the constant value.
 */
DR__INLINE dr_real dr_rec_stmt(dr_rec *r, dr_expr e)
{
    dr_real y;
    y.val = e.val;
    y.idx = DR_NONE;
    if (DR__UNLIKELY(e.n > DR_EXPR_MAX)) {
        dr__rec_nary(r, 0, NULL, NULL, DR_ERANGE);
        return y;
    }
    /* merge each repeated argument into its first occurrence (the later
       ones become constants), then take the first two arguments left; the
       loops have bounds the compiler knows, and unrolled they are
       straight-line code over registers */
    int k = 0;
    dr_idx a = DR_NONE, b = DR_NONE;
    double da = 0.0, db = 0.0;
    DR__UNROLL
    for (int i = 0; i < e.n; i++) {
        DR__UNROLL
        for (int j = 0; j < i; j++)
            if (e.id[i] != DR_NONE && e.id[j] == e.id[i]) {
                e.d[j] += e.d[i];
                e.id[i] = DR_NONE;
            }
    }
    DR__UNROLL
    for (int i = 0; i < e.n; i++)
        if (e.id[i] != DR_NONE) {
            if (k == 0) {
                a = e.id[i];
                da = e.d[i];
            } else if (k == 1) {
                b = e.id[i];
                db = e.d[i];
            }
            k++;
        }
    if (k == 1)
        y.idx = dr__rec_push1(r, a, da, 0.0, DR__REC_GIVEN, y, y);
    else if (k == 2)
        y.idx = dr__rec_push2(r, a, da, b, db, DR__REC_GIVEN, y, y);
    else if (k > 2)
        y.idx = dr__rec_nary(r, (size_t)e.n, e.id, e.d, DR_OK);
    return y;
}

/** A long sum under construction (see "statements"; fields private). */
typedef struct dr_sum {
    double val;
    size_t n, cap;
    dr_idx *id;
    double *d;
} dr_sum;

/**
 * Start an empty sum (value 0) that keeps up to cap terms in the caller's
 * arrays ids[0..cap-1] and partials[0..cap-1], which must stay valid until
 * dr_rec_sum.  A sum given more terms than cap records nothing: dr_rec_sum
 * then sets DR_ERANGE, as for an expression with too many terms.
 */
static inline void dr_sum_init(dr_sum *s, size_t cap, dr_idx *ids,
                               double *partials)
{
    s->val = 0.0;
    s->n = 0;
    s->cap = cap;
    s->id = ids;
    s->d = partials;
}
/** Add the expression e to the sum s. */
DR__INLINE void dr_sum_add(dr_sum *s, dr_expr e)
{
    s->val += e.val;
    if (DR__UNLIKELY(e.n > DR_EXPR_MAX || s->n + (size_t)e.n > s->cap)) {
        s->n = s->cap + 1;
        return;
    }
    for (int i = 0; i < e.n; i++) {
        s->id[s->n + (size_t)i] = e.id[i];
        s->d[s->n + (size_t)i] = e.d[i];
    }
    s->n += (size_t)e.n;
}
/** Add the product a * b to the sum s (two terms). */
DR__INLINE void dr_sum_mul(dr_sum *s, dr_real a, dr_real b)
{
    s->val += a.val * b.val;
    if (DR__UNLIKELY(s->n + 2 > s->cap)) {
        s->n = s->cap + 1;
        return;
    }
    s->id[s->n] = a.idx;
    s->d[s->n] = b.val;
    s->id[s->n + 1] = b.idx;
    s->d[s->n + 1] = a.val;
    s->n += 2;
}
/**
 * Record the sum s as one node through recorder r and return its value and
 * id.  Constant terms are dropped; repeated arguments are kept as they are
 * (an n-ary node adds each term's share).  A sum that got more terms than
 * its capacity: DR_ERANGE (sticky) and the constant value.
 */
DR_API dr_real dr_rec_sum(dr_rec *r, const dr_sum *s);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_H */
