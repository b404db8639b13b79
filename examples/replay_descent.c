/*
 * replay_descent.c - fit y = a * sin(w x) + b by gradient descent with a
 * Huber loss (quadratic for small errors, linear for large ones: a branch
 * on each error), recording the loss once and replaying the tape at each
 * new point (dr_replay) instead of running this code again.  Where an
 * error crosses the Huber threshold, a guard flips, dr_replay answers
 * DR_ERETAPE, and the loss is recorded again.  Every gradient is checked
 * against a fresh recording at the same point: the exit status says
 * whether they all agreed, bit for bit.
 */
#include <dualrev.h>

#include <math.h>
#include <stdio.h>

#define NPTS 32
#define DELTA 0.5 /* the Huber threshold */

static double xs[NPTS], ys[NPTS];

/* the mean Huber loss of the model with parameters p on the samples */
static dr_real loss(dr_tape *t, const dr_real *p)
{
    dr_real sum = dr_const(0.0);
    for (int i = 0; i < NPTS; i++) {
        dr_real x = dr_const(xs[i]);
        dr_real pred = dr_add(t, dr_mul(t, p[0], dr_sin(t, dr_mul(t, p[1], x))), p[2]);
        dr_real e = dr_sub(t, pred, dr_const(ys[i]));
        dr_real a = dr_abs(t, e), term;
        if (dr_le(t, a, dr_const(DELTA))) /* recorded as a guard */
            term = dr_mul(t, dr_const(0.5), dr_mul(t, e, e));
        else
            term = dr_mul(t, dr_const(DELTA), dr_sub(t, a, dr_const(0.5 * DELTA)));
        sum = dr_add(t, sum, term);
    }
    return dr_div(t, sum, dr_const(NPTS));
}

int main(void)
{
    for (int i = 0; i < NPTS; i++) {
        xs[i] = -2.0 + 4.0 * i / (NPTS - 1);
        ys[i] = 1.5 * sin(1.3 * xs[i]) + 0.25;
    }
    double theta[3] = {0.5, 1.0, -1.0}; /* a, w, b */
    dr_tape *t = dr_tape_new(), *fresh = dr_tape_new();
    if (!t || !fresh || dr_tape_set_order(t, 2) != DR_OK) /* order 2: replayable */
        return 1;
    dr_real p[3], l = dr_const(0.0);
    int records = 0, mismatches = 0;
    for (int step = 0; step <= 300; step++) {
        dr_status st = step ? dr_replay(t, 3, p, theta) : DR_ERETAPE;
        if (st == DR_ERETAPE) { /* the first step, or a guard flipped */
            dr_tape_clear(t);
            dr_inputs(t, 3, theta, p);
            l = loss(t, p);
            records++;
        } else if (st != DR_OK) {
            fprintf(stderr, "replay failed: %s\n", dr_strerror(st));
            return 1;
        }
        double g[3], value;
        if (dr_gradient(t, l, 3, p, g) != DR_OK || dr_value(t, l.idx, &value) != DR_OK)
            return 1;

        /* the same gradient recorded afresh, to compare */
        dr_real q[3];
        double gfv[3];
        dr_tape_clear(fresh);
        dr_inputs(fresh, 3, theta, q);
        dr_real lf = loss(fresh, q);
        if (dr_gradient(fresh, lf, 3, q, gfv) != DR_OK)
            return 1;
        for (int k = 0; k < 3; k++)
            mismatches += g[k] != gfv[k];
        mismatches += value != lf.val;

        if (step % 50 == 0)
            printf("step %3d  loss %.3e\n", step, value);
        for (int k = 0; k < 3; k++)
            theta[k] -= 0.3 * g[k];
    }
    printf("a = %.4f, w = %.4f, b = %.4f (data: 1.5, 1.3, 0.25)\n", theta[0],
           theta[1], theta[2]);
    printf("301 gradients, %d recordings, the others replayed; %d differ from "
           "a fresh recording\n", records, mismatches);
    dr_tape_free(fresh);
    dr_tape_free(t);
    int fitted = fabs(theta[0] - 1.5) < 1e-3 && fabs(theta[1] - 1.3) < 1e-3 &&
                 fabs(theta[2] - 0.25) < 1e-3;
    return mismatches == 0 && fitted && records < 301 ? 0 : 1;
}
