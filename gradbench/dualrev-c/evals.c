/* evals.c - the functions dualrev-c answers, by eval */
#include "evals.h"

const gb_function *const gb_functions[] = {
    &gb_hello_square, &gb_hello_double,
    &gb_det_primal, &gb_det_gradient,
    &gb_lse_primal, &gb_lse_gradient,
    &gb_llsq_primal, &gb_llsq_gradient,
    &gb_ode_primal, &gb_ode_gradient,
    &gb_kmeans_cost, &gb_kmeans_dir,
    &gb_gmm_objective, &gb_gmm_jacobian,
    &gb_lstm_objective, &gb_lstm_jacobian,
    &gb_ba_objective, &gb_ba_jacobian,
    &gb_ht_objective, &gb_ht_jacobian,
    &gb_saddle_rr, &gb_saddle_rf, &gb_saddle_fr, &gb_saddle_ff,
    &gb_particle_rr, &gb_particle_rf, &gb_particle_fr, &gb_particle_ff,
    NULL,
};
