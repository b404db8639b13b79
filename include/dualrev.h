/*
 * dualrev.h - the whole public C API of libdualrev, a reverse-mode automatic
 * differentiation engine (dual-numbers reverse AD, optimised into taping).
 *
 * Headers
 * -------
 * This header includes the others; including it is all a program needs.
 * The API is declared and documented in small headers by concern, each of
 * which compiles on its own (each includes dualrev/core.h):
 *
 *   dualrev/core.h      version, types and status codes, allocation, the
 *                       tape, values, the scalar operations, entry points
 *                       for code generators
 *   dualrev/external.h  external functions, statements that replay
 *                       (dr_record_statement) and checkpointed loops
 *   dualrev/modes.h     the reverse pass, forward mode, vector mode, second
 *                       order, sparse Jacobians and Hessians, replay
 *   dualrev/arrays.h    arrays: vectors and matrices as single nodes
 *   dualrev/parallel.h  fork-join parallelism
 *   dualrev/recorder.h  inline recording (dr_rec) and statements (dr_expr,
 *                       dr_sum), static inline for hot loops in C
 *
 * dualrev/internal/ holds the private implementation detail of the inline
 * recorder and of statements, included by dualrev/recorder.h alone.  The
 * sections named in quotes in the documentation ("arrays", "replay", ...)
 * are the comment rules of these headers.
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

#include "dualrev/core.h"
#include "dualrev/external.h"
#include "dualrev/modes.h"
#include "dualrev/arrays.h"
#include "dualrev/parallel.h"
#include "dualrev/recorder.h"

#endif /* DUALREV_H */
