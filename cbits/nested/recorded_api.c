/*
 * recorded_api.c - dr_tangent_record and dr_adjoint_record (dualrev/modes.h):
 * the passes of the recorded layer, with the rules of the node kinds that
 * stand above it (array operations) registered first.
 */
#include "nested/nested.h"

dr_status dr_tangent_record(dr_tape *t, dr_idx from, size_t k,
                            const dr_idx *seed_ids, const dr_real *seeds,
                            dr_real y, dr_real *out)
{
    dr__nested_register();
    return dr__tangent_record(t, from, k, seed_ids, seeds, y, out);
}

dr_status dr_adjoint_record(dr_tape *t, dr_idx from, dr_real y, size_t n,
                            const dr_idx *x, dr_real *out)
{
    dr__nested_register();
    return dr__adjoint_record(t, from, y, n, x, out);
}
