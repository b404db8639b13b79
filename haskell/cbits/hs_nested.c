/*
 * hs_nested.c - a nested derivative's start and end on a handle, one call
 * each (Numeric.DualRev.Internal.Run.Control.Nested, nestedOn): the tape's
 * order raised to 2 for the log the inner derivative's recorded pass
 * reads, and the front end's recording resumed where the derivative is
 * taken inside a comparison's operand (dr_fe_pause); both put back at the
 * end.
 */
#include <dualrev.h>

#include "frontend/frontend.h"

/* Returns what drhs_nest_end puts back (bit 1: the order was 2, bit 0:
   recording was paused), or minus the status where the order cannot be
   raised (nothing changed then). */
DR_API int drhs_nest_begin(dr_tape *t)
{
    int order = dr_tape_order(t);
    dr_status st = dr_tape_set_order(t, 2);
    if (st != DR_OK)
        return -(int)st;
    return (order == 2 ? 2 : 0) | (dr_fe_pause(t, 0) ? 1 : 0);
}

DR_API void drhs_nest_end(dr_tape *t, int saved)
{
    (void)dr_tape_set_order(t, saved & 2 ? 2 : 1);
    (void)dr_fe_pause(t, saved & 1);
}
