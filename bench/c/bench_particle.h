/*
 * bench_particle.h - one fparticles particle recorded on a dualrev tape,
 * shared by dualrev_bench.c (sequential) and fparticles_par.c (one job per
 * particle), so both record the same operations in the same order.
 */
#ifndef BENCH_PARTICLE_H
#define BENCH_PARTICLE_H

#include "bench_common.h"

#include <dualrev.h>

/* One particle for PT_STEPS steps, in place: s = px py vx vy. */
static inline void particle(dr_tape *T, dr_real *s)
{
    dr_real px = s[0], py = s[1], vx = s[2], vy = s[3];
    dr_real c05 = dr_const(-0.5), c02 = dr_const(-0.2), dt = dr_const(PT_DT);
    for (int k = 0; k < PT_STEPS; k++) {
        /* a = (-0.5 p) + (-0.2 v)  (mass 1) */
        dr_real ax = dr_add(T, dr_mul(T, c05, px), dr_mul(T, c02, vx));
        dr_real ay = dr_add(T, dr_mul(T, c05, py), dr_mul(T, c02, vy));
        /* p' = p + dt v, v' = v + dt a */
        dr_real npx = dr_add(T, px, dr_mul(T, dt, vx));
        dr_real npy = dr_add(T, py, dr_mul(T, dt, vy));
        vx = dr_add(T, vx, dr_mul(T, dt, ax));
        vy = dr_add(T, vy, dr_mul(T, dt, ay));
        px = npx;
        py = npy;
    }
    s[0] = px;
    s[1] = py;
    s[2] = vx;
    s[3] = vy;
}

#endif /* BENCH_PARTICLE_H */
