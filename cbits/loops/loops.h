/*
 * loops.h - loops recorded as one node (cbits/README.md): the binomial
 * checkpointing schedule, and the checkpointed loop built on it
 * (dr_record_checkpointed, checkpoint.c).  Not installed.
 */
#ifndef DR_LOOPS_H
#define DR_LOOPS_H

#include "base/base.h"

/*
 * schedule.c.  A reverse sweep over steps [l, r) holds the state at l and
 * has s free snapshots.  With s >= 1 and r - l >= 2 it advances to
 * m = l + dr__loop_split(r - l, s), stores the state at m, reverses [m, r)
 * with s - 1 snapshots and then [l, m) with s again.  The split is the
 * smallest of the optimal ones (those reaching the fewest recomputed steps,
 * r t - C(s + 1 + r, r - 1) for t steps, r = dr_loop_repeats(t, s)), so
 * that reversing [m, r), which goes first, holds its snapshots for the
 * shortest time.
 */
DR_HIDDEN size_t dr__loop_split(size_t t, size_t s);

#endif /* DR_LOOPS_H */
