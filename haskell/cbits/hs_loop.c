/*
 * hs_loop.c - dr_record_checkpointed for the Haskell front end
 * (Numeric.DualRev.Internal.Run.Checkpoint).  The step is a Haskell
 * function pointer (foreign import "wrapper"); it is also the loop's
 * context, so the node frees it when it goes, and so does a failed call.
 */
#include <dualrev.h>

#include <HsFFI.h>

typedef dr_status (*drhs_step_fn)(void *ctx, dr_tape *t, size_t k, size_t n,
                                  const dr_real *x, dr_real *y);

static void free_step(void *ctx)
{
    hs_free_fun_ptr((HsFunPtr)ctx);
}

dr_status drhs_record_checkpointed(dr_tape *t, drhs_step_fn step,
                                   size_t nsteps, size_t n, const dr_real *x0,
                                   size_t snapshots, dr_real *out)
{
    dr_loop loop = {(void *)step, step, free_step, 0};
    dr_status st = dr_record_checkpointed(t, &loop, nsteps, n, x0, snapshots, out);
    if (st != DR_OK)
        free_step((void *)step);
    return st;
}
