/* evals.h - the functions of every eval dualrev-c implements (evals.c
   lists them for the protocol), and the parts the tests call directly */
#ifndef EVALS_H
#define EVALS_H

#include "gb.h"

extern const gb_function gb_hello_square, gb_hello_double;
extern const gb_function gb_det_primal, gb_det_gradient;
extern const gb_function gb_lse_primal, gb_lse_gradient;
extern const gb_function gb_llsq_primal, gb_llsq_gradient;
extern const gb_function gb_ode_primal, gb_ode_gradient;
extern const gb_function gb_kmeans_cost, gb_kmeans_dir;
extern const gb_function gb_gmm_objective, gb_gmm_jacobian;
extern const gb_function gb_lstm_objective, gb_lstm_jacobian;
extern const gb_function gb_ba_objective, gb_ba_jacobian;
extern const gb_function gb_ht_objective, gb_ht_jacobian;
extern const gb_function gb_saddle_rr, gb_saddle_rf, gb_saddle_fr, gb_saddle_ff;
extern const gb_function gb_particle_rr, gb_particle_rf, gb_particle_fr,
    gb_particle_ff;

/* the outer objective of saddle, max_y f(x, y) by the inner ascent from
   start, at x into *val, and its gradient into grad (NULL: none), with the
   outer and inner derivatives forward (1) or reverse (0): 0, or -1 (err) */
int saddle_outer(int outer_fwd, int inner_fwd, const double start[2],
                 const double x[2], double *val, double grad[2], char *err);
/* the objective of particle at w (the square of where the trajectory
   crosses the axis) and its derivative, as saddle_outer */
int particle_outer(int outer_fwd, int inner_fwd, double w, double *val,
                   double *grad, char *err);

/* ode: the largest n * s recorded whole (longer runs are checkpointed) */
extern size_t gb_ode_tape_max;

#endif
