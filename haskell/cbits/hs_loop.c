/*
 * hs_loop.c - dr_record_checkpointed for the Haskell front end
 * (Numeric.DualRev.Internal.Run.Control.Checkpoint), and the count of its steps alive.
 *
 * The step is a Haskell function pointer (foreign import "wrapper"); it is
 * also the loop's context, so the node frees it when it goes, and so does a
 * failed call.  A sweep over such a node calls back into Haskell, which an
 * `unsafe` foreign call must never do, so the steps alive in the process
 * are counted (hs_quick.c makes unsafe calls only while there are none).
 */
#include <dualrev.h>

#include <HsFFI.h>
#include <stdatomic.h>

#include "hs_quick.h"

typedef dr_status (*drhs_step_fn)(void *ctx, dr_tape *t, size_t k, size_t n,
                                  const dr_real *x, dr_real *y);

static atomic_size_t live_steps;

static void free_step(void *ctx)
{
    hs_free_fun_ptr((HsFunPtr)ctx);
    atomic_fetch_sub_explicit(&live_steps, 1, memory_order_release);
}

DR_API dr_status drhs_record_checkpointed(dr_tape *t, drhs_step_fn step,
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

size_t drhs_steps_alive(void)
{
    return atomic_load_explicit(&live_steps, memory_order_acquire);
}
