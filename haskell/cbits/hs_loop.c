/*
 * hs_loop.c - dr_record_checkpointed for the Haskell front end
 * (Numeric.DualRev.Internal.Run.Checkpoint), and what it rules out.
 *
 * The step is a Haskell function pointer (foreign import "wrapper"); it is
 * also the loop's context, so the node frees it when it goes, and so does a
 * failed call.  A sweep over such a node calls back into Haskell, which an
 * `unsafe` foreign call must never do; a `safe` call costs a fixed 30-40 ns
 * (the capability is released and taken back), most of a small gradient.
 * So the steps alive in the process are counted, and the *_quick entry
 * points below run the engine in an unsafe call when none is alive and the
 * tape is short, and otherwise return DRHS_CALL_SAFE for the caller to make
 * the safe call instead.  A step alive on another tape only costs that
 * fast path; one on t was counted before t's sweep and stays counted until
 * t is cleared.
 */
#include <dualrev.h>

#include <HsFFI.h>
#include <stdatomic.h>

#include "hs_quick.h"

typedef dr_status (*drhs_step_fn)(void *ctx, dr_tape *t, size_t k, size_t n,
                                  const dr_real *x, dr_real *y);

/* Longer or larger tapes sweep in a safe call: an unsafe call holds its
 * capability, so a garbage collection on another thread would wait for the
 * whole sweep, and against such a sweep the safe call's cost is noise.  A
 * node takes a few nanoseconds; the bytes bound catches array nodes, whose
 * rules run over all their data (a small gradient's tape holds a few KB; the
 * bound is the memory the tape keeps, so one that grew large earlier stays
 * on the safe path). */
#define DRHS_QUICK_NODES 8192
#define DRHS_QUICK_BYTES (512u << 10)

static atomic_size_t live_steps;

static void free_step(void *ctx)
{
    hs_free_fun_ptr((HsFunPtr)ctx);
    atomic_fetch_sub_explicit(&live_steps, 1, memory_order_release);
}

dr_status drhs_record_checkpointed(dr_tape *t, drhs_step_fn step,
                                   size_t nsteps, size_t n, const dr_real *x0,
                                   size_t snapshots, dr_real *out)
{
    atomic_fetch_add_explicit(&live_steps, 1, memory_order_relaxed);
    dr_loop loop = {(void *)step, step, free_step, 0};
    dr_status st = dr_record_checkpointed(t, &loop, nsteps, n, x0, snapshots, out);
    if (st != DR_OK)
        free_step((void *)step);
    return st;
}

int drhs_quick_ok(dr_tape *t)
{
    return atomic_load_explicit(&live_steps, memory_order_acquire) == 0
        && dr_tape_len(t) <= DRHS_QUICK_NODES
        && dr_tape_bytes(t) <= DRHS_QUICK_BYTES;
}

int drhs_reverse_quick(dr_tape *t)
{
    return drhs_quick_ok(t) ? (int)dr_reverse(t) : DRHS_CALL_SAFE;
}
