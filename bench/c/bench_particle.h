/*
 * bench_particle.h - one fparticles particle recorded on a dualrev tape,
 * shared by dualrev_bench.c (sequential) and fparticles_par.c (one job per
 * particle), so both record the same operations in the same order.
 */
#ifndef BENCH_PARTICLE_H
#define BENCH_PARTICLE_H

#include "bench_common.h"

#include <dualrev.h>

/* One particle for PT_STEPS steps, in place: s = px py vx vy, recorded on
   handle T through a recorder (dr_rec, inline recording), each assignment
   of a step as one statement (dr_rec_stmt): p' = p + dt v and
   v' = v + dt a, the acceleration a = -0.5 p - 0.2 v (mass 1) a
   sub-expression of v' (recorded in no node of its own).  Four nodes of
   two arguments a step: v' = v (1 - 0.2 dt) + p (-0.5 dt). */
static inline void particle(dr_tape *T, dr_real *s)
{
    dr_rec rec, *R = &rec;
    if (dr_rec_begin(T, R) != DR_OK) {
        fprintf(stderr, "particle: dr_rec_begin failed\n");
        exit(4);
    }
    dr_real px = s[0], py = s[1], vx = s[2], vy = s[3];
    for (int k = 0; k < PT_STEPS; k++) {
        dr_expr ax = dr_ex_add(dr_ex_scale(-0.5, dr_ex(px)),
                               dr_ex_scale(-0.2, dr_ex(vx)));
        dr_expr ay = dr_ex_add(dr_ex_scale(-0.5, dr_ex(py)),
                               dr_ex_scale(-0.2, dr_ex(vy)));
        dr_real npx = dr_rec_stmt(R, dr_ex_add(dr_ex(px), dr_ex_scale(PT_DT, dr_ex(vx))));
        dr_real npy = dr_rec_stmt(R, dr_ex_add(dr_ex(py), dr_ex_scale(PT_DT, dr_ex(vy))));
        vx = dr_rec_stmt(R, dr_ex_add(dr_ex(vx), dr_ex_scale(PT_DT, ax)));
        vy = dr_rec_stmt(R, dr_ex_add(dr_ex(vy), dr_ex_scale(PT_DT, ay)));
        px = npx;
        py = npy;
    }
    if (dr_rec_end(R) != DR_OK) {
        fprintf(stderr, "particle: recording failed\n");
        exit(4);
    }
    s[0] = px;
    s[1] = py;
    s[2] = vx;
    s[3] = vy;
}

#endif /* BENCH_PARTICLE_H */
