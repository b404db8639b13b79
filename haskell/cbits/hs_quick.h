/*
 * hs_quick.h - what the Haskell front end's shims share about `unsafe`
 * foreign calls (hs_quick.c, hs_loop.c, hs_scalar_args.c).
 */
#ifndef DRHS_QUICK_H
#define DRHS_QUICK_H

#include <dualrev.h>

/* Not a dr_status: "make the safe call instead". */
#define DRHS_CALL_SAFE (-1)

/* The checkpointed loops' Haskell steps alive in the process (hs_loop.c). */
size_t drhs_steps_alive(void);

/* dr_jacobian on the inputs first .. first+n-1 (hs_scalar_args.c). */
DR_API dr_status drhs_jacobian_range(dr_tape *t, size_t m, const dr_real *y,
                                     dr_idx first, size_t n, double *J);

/* dr_hvp_inputs of y given as its value and id (hs_scalar_args.c). */
DR_API dr_status drhs_hvp_inputs(dr_tape *t, double yval, dr_idx yidx);

/* a taped function's replay and Hessian-vector product (hs_scalar_args.c) */
DR_API dr_status drhs_taped_hvp(dr_tape *t, dr_idx first, size_t n,
                                const double *values, dr_idx yidx,
                                const double *v, double *out);

#endif
