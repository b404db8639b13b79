/*
 * sweep.h - the reverse sweep (cbits/README.md): adjoint storage, seeding,
 * and the loops that walk a job's chunks from the newest node to the
 * oldest.  A job graph (forks) is swept by the jobs layer through the
 * sweep_history hook (tape/tape.h).  Not installed.
 */
#ifndef DR_SWEEP_H
#define DR_SWEEP_H

#include "record/record.h"

/* make adj_raw cover every relative id handed out so far */
DR_HIDDEN dr_status dr__adj_ensure(dr_tape *t);
/* sweep one job's chunks, newest first; plain adds (no sibling runs) */
DR_HIDDEN void dr__sweep_chunks(dr_chunk *last, dr_sweep *s);
/* the same where s->atomic: adds into ids < s->own_lo are atomic */
DR_HIDDEN void dr__sweep_chunks_atomic(dr_chunk *last, dr_sweep *s);

/* the root's relative id of first, if first .. first+n-1 are all on t */
DR_HIDDEN bool dr__adj_range(const dr_tape *t, dr_idx first, size_t n,
                             int64_t *rel);
/* the adjoints of relative ids r .. r+n-1 into out (0 where not live) */
DR_HIDDEN void dr__adj_read(const dr_tape *t, int64_t r, size_t n,
                            double *out);

#endif /* DR_SWEEP_H */
