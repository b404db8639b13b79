/*
 * recorded.h - the passes recorded as operations (cbits/README.md): the
 * tangent pass (tangent.c) and the adjoint pass (adjoint.c) of part of a
 * tape, recorded on the same tape so that a derivative can be
 * differentiated in turn.  The public dr_tangent_record and
 * dr_adjoint_record (nested/) install the rules of the node kinds above
 * this layer (arrays), then run these.
 */
#ifndef DR_RECORDED_H
#define DR_RECORDED_H

#include "record/record.h"

/* dr_tangent_record and dr_adjoint_record (dualrev/modes.h), their node
   kinds' rules as the nodes' hooks hold them */
DR_HIDDEN dr_status dr__tangent_record(dr_tape *t, dr_idx from, size_t k,
                                       const dr_idx *seed_ids,
                                       const dr_real *seeds, dr_real y,
                                       dr_real *out);
DR_HIDDEN dr_status dr__adjoint_record(dr_tape *t, dr_idx from, dr_real y,
                                       size_t n, const dr_idx *x,
                                       dr_real *out);

#endif /* DR_RECORDED_H */
