/* gd.h - the gradient descent of the evals "saddle" and "particle", as
   GradBench specifies it (README.md): steps of eta times the gradient, eta
   doubled after 10 accepted steps in a row and halved on a step that does
   not decrease the objective, until the gradient or the step is no longer
   than 1e-5 */
#ifndef GD_H
#define GD_H

#include <stddef.h>

#define GD_MAXDIM 4

typedef struct gd_problem {
    size_t n; /* at most GD_MAXDIM */
    /* the objective at x into *f, the gradient into g: 0, or -1 (err) */
    int (*objective)(void *ctx, const double *x, double *f, char *err);
    int (*gradient)(void *ctx, const double *x, double *g, char *err);
    void *ctx;
} gd_problem;

/* the argmin (sign 1) or argmax (sign -1) of p from x0 into x: 0, or -1 */
int gd_optimise(const gd_problem *p, double sign, const double *x0, double *x,
                char *err);

#endif
