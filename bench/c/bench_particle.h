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
   handle T through a recorder (dr_rec, inline recording). */
static inline void particle(dr_tape *T, dr_real *s)
{
    dr_rec rec, *R = &rec;
    if (dr_rec_begin(T, R) != DR_OK) {
        fprintf(stderr, "particle: dr_rec_begin failed\n");
        exit(4);
    }
    dr_real px = s[0], py = s[1], vx = s[2], vy = s[3];
    dr_real c05 = dr_const(-0.5), c02 = dr_const(-0.2), dt = dr_const(PT_DT);
    for (int k = 0; k < PT_STEPS; k++) {
        /* a = (-0.5 p) + (-0.2 v)  (mass 1) */
        dr_real ax = dr_rec_add(R, dr_rec_mul(R, c05, px), dr_rec_mul(R, c02, vx));
        dr_real ay = dr_rec_add(R, dr_rec_mul(R, c05, py), dr_rec_mul(R, c02, vy));
        /* p' = p + dt v, v' = v + dt a */
        dr_real npx = dr_rec_add(R, px, dr_rec_mul(R, dt, vx));
        dr_real npy = dr_rec_add(R, py, dr_rec_mul(R, dt, vy));
        vx = dr_rec_add(R, vx, dr_rec_mul(R, dt, ax));
        vy = dr_rec_add(R, vy, dr_rec_mul(R, dt, ay));
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
