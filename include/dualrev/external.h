/*
 * dualrev/external.h - external functions (nodes whose reverse pass the
 * caller supplies), statements whose value and partials the caller's code
 * computes (they replay), and checkpointed loops.
 */
#ifndef DUALREV_EXTERNAL_H
#define DUALREV_EXTERNAL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* ------------------------------------------------- statements that replay
 * A scalar expression whose value and partials the caller's own code
 * computes, recorded as one node that dr_replay can evaluate again (see
 * "replay"): the replayable form of a statement (dr_rec_stmt and dr_rec_sum
 * record given partials, which do not replay).
 *     // v' = v + dt * (-0.5 p - 0.2 v), over x = {v, p}, ctx = &dt
 *     static double step_v(const void *ctx, size_t n, const double *x,
 *                          double *d)
 *     {   double dt = *(const double *)ctx;
 *         d[0] = 1.0 - 0.2 * dt;
 *         d[1] = -0.5 * dt;
 *         return x[0] + dt * (-0.5 * x[1] - 0.2 * x[0]);
 *     }
 *     v = dr_record_statement(t, step_v, &dt, 2, (dr_real[]){v, p});
 * f gets the n leaves' values x[0..n-1] (constants included) and returns
 * the value, with its partial with respect to x[i] in d[i].  It computes
 * in doubles only (it must not call the library), cannot fail, may run on
 * any of the tape's threads (a forked tape replays its jobs on its pool),
 * and must give the same bits for the same x every time: replay calls it again at
 * the leaves' new values, constants at theirs, and the node is then what a
 * fresh recording would hold.  ctx is the caller's and must stay valid
 * while the tape may replay (until dr_tape_clear or dr_tape_free).  The
 * node's arguments are the active leaves in order, each with its partial
 * (a leaf given twice is an argument twice, its partials added by the
 * sweeps); constant leaves are none; with no active leaf nothing is
 * recorded and the result is the constant f(x).  Its gradient is that of
 * its partials, as dr_recordn's, and forward and vector modes work
 * through it.  Replay needs a tape of order 2 (see "second order") and
 * refuses (DR_ENOTSUP) where a leaf's value x[i].val was not its node's.
 * On a tape of order 2 the node keeps its leaves, 24 bytes each and a
 * 24-byte header, until the tape is cleared.  It has no second-order rule: dr_hvp, dr_hessian,
 * the sparse drivers and dr_tangent_record through it answer DR_ENOTSUP
 * (record the expression's operations for second order).
 * Errors are sticky on t, as for the scalar operations: DR_EINVAL for f
 * NULL, x NULL with n > 0, or an id of x not on the tape (nothing
 * recorded; the result a constant, NaN where f was not called); DR_ENOMEM.
 * Works on child handles inside forked jobs and with an open recorder on
 * t, as the other recording calls.
 */
/** A statement's code: the value at x[0..n-1], d[i] its partial in x[i]. */
typedef double (*dr_statement_fn)(const void *ctx, size_t n, const double *x,
                                  double *d);
/** Record f at the leaves x[0..n-1] as one node that replays (above). */
DR_API dr_real dr_record_statement(dr_tape *t, dr_statement_fn f,
                                   const void *ctx, size_t n,
                                   const dr_real *x);

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
 * cleared or freed); the tape owns ctx from a successful call on.  A clear
 * keeps the loop's own memory (state, snapshots, its tape) for the next
 * recording: a loop of as many values recorded after it allocates none of
 * that again (a clear after a recording whose loops did not take it back
 * lets it go).
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

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_EXTERNAL_H */
