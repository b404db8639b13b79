/*
 * hs_quick.c - the engine's sweeps as `unsafe` foreign calls where they may
 * be, for the Haskell front end (Numeric.DualRev.Internal.Engine.FFI,
 * quickOrSafe).
 *
 * A `safe` call costs a fixed 30-40 ns (the capability is released and
 * taken back), most of a small gradient; an unsafe one costs a plain
 * function call, but must not call back into Haskell, as a sweep over a
 * checkpointed loop does (its step is Haskell code, hs_loop.c).  So the
 * *_quick shims run the engine when no step is alive in the process and
 * the tape is small, and otherwise return DRHS_CALL_SAFE for the caller to
 * make the safe call instead.  A step alive on another tape only costs the
 * fast path; one on t was counted before t's sweep and stays counted until
 * t is cleared.
 */
#include <dualrev.h>

#include "hs_quick.h"

/* Longer or larger tapes sweep in a safe call: an unsafe call holds its
 * capability, so a garbage collection on another thread would wait for the
 * whole sweep, and against such a sweep the safe call's cost is noise.  A
 * node takes a few nanoseconds; the bytes bound catches array nodes, whose
 * rules run over all their data (a small gradient's tape holds a few KB; the
 * bound is the memory the tape keeps, so one that grew large earlier stays
 * on the safe path). */
#define DRHS_QUICK_NODES 8192
#define DRHS_QUICK_BYTES (512u << 10)

int drhs_quick_ok(dr_tape *t)
{
    return drhs_steps_alive() == 0
        && dr_tape_len(t) <= DRHS_QUICK_NODES
        && dr_tape_bytes(t) <= DRHS_QUICK_BYTES;
}

DR_API int drhs_reverse_quick(dr_tape *t)
{
    return drhs_quick_ok(t) ? (int)dr_reverse(t) : DRHS_CALL_SAFE;
}

/* y's gradient sweep (the adjoints stay for dr_adjoint to read): dr_gradient
   with no inputs to read, whose path for a small sequential tape zeroes,
   seeds and sweeps in one call, where dr_seed and dr_reverse each check and
   prepare the adjoints again. */
DR_API int drhs_gradient_quick(dr_tape *t, double yval, dr_idx yidx)
{
    dr_real y = {yval, yidx};
    return drhs_quick_ok(t) ? (int)dr_gradient(t, y, 0, NULL, NULL)
                            : DRHS_CALL_SAFE;
}

DR_API int drhs_jvp_quick(dr_tape *t, size_t m, const dr_real *y, size_t n,
                          const dr_real *x, const double *xdot, double *ydot)
{
    return drhs_quick_ok(t) ? (int)dr_jvp(t, m, y, n, x, xdot, ydot)
                            : DRHS_CALL_SAFE;
}

DR_API int drhs_jvp_vec_quick(dr_tape *t, size_t m, const dr_real *y,
                              size_t n, const dr_real *x, size_t k,
                              const double *Xdot, double *Ydot)
{
    return drhs_quick_ok(t) ? (int)dr_jvp_vec(t, m, y, n, x, k, Xdot, Ydot)
                            : DRHS_CALL_SAFE;
}

DR_API int drhs_jacobian_range_quick(dr_tape *t, size_t m, const dr_real *y,
                                     dr_idx first, size_t n, double *J)
{
    return drhs_quick_ok(t) ? (int)drhs_jacobian_range(t, m, y, first, n, J)
                            : DRHS_CALL_SAFE;
}

/* y's Hessian-vector product along the seeds (dr_hvp_inputs through
   hs_scalar_args.c), on a small tape of scalars */
DR_API int drhs_hvp_inputs_quick(dr_tape *t, double yval, dr_idx yidx)
{
    return drhs_quick_ok(t) ? (int)drhs_hvp_inputs(t, yval, yidx)
                            : DRHS_CALL_SAFE;
}

/* a taped Hessian-vector product, replay included (drhs_taped_hvp), on a
   small tape when no step is alive: a replay may call a checkpointed
   loop's step back */
DR_API int drhs_taped_hvp_quick(dr_tape *t, dr_idx first, size_t n,
                                const double *values, dr_idx yidx,
                                const double *v, double *out)
{
    return drhs_quick_ok(t)
               ? (int)drhs_taped_hvp(t, first, n, values, yidx, v, out)
               : DRHS_CALL_SAFE;
}
