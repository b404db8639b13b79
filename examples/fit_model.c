/*
 * fit_model.c - fit y = a * sin(w x) + b to noisy-free samples by gradient
 * descent, recording the loss on one tape that is cleared and reused each step
 * (after the first step nothing is allocated).
 */
#include <dualrev.h>

#include <math.h>
#include <stdio.h>

#define NPTS 32

int main(void)
{
    double xs[NPTS], ys[NPTS];
    for (int i = 0; i < NPTS; i++) {
        xs[i] = -2.0 + 4.0 * i / (NPTS - 1);
        ys[i] = 1.5 * sin(1.3 * xs[i]) + 0.25; /* the model we hope to find */
    }
    double theta[3] = {1.0, 1.0, 0.0}; /* a, w, b */
    dr_tape *t = dr_tape_new();
    if (!t) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    double g[3], loss = 0.0;
    const double rate = 0.05;
    for (int step = 0; step <= 400; step++) {
        dr_tape_clear(t);
        dr_real p[3];
        for (int k = 0; k < 3; k++)
            p[k] = dr_input(t, theta[k]);
        dr_real sum = dr_const(0.0);
        for (int i = 0; i < NPTS; i++) {
            dr_real x = dr_const(xs[i]);
            dr_real pred = dr_add(t, dr_mul(t, p[0], dr_sin(t, dr_mul(t, p[1], x))), p[2]);
            dr_real err = dr_sub(t, pred, dr_const(ys[i]));
            sum = dr_add(t, sum, dr_mul(t, err, err));
        }
        dr_real l = dr_div(t, sum, dr_const(NPTS));
        dr_status st = dr_gradient(t, l, 3, p, g);
        if (st != DR_OK) {
            fprintf(stderr, "gradient failed: %s\n", dr_strerror(st));
            dr_tape_free(t);
            return 1;
        }
        loss = l.val;
        if (step % 50 == 0)
            printf("step %3d  loss %.3e\n", step, loss);
        for (int k = 0; k < 3; k++)
            theta[k] -= rate * g[k];
    }
    printf("fitted a = %.4f, w = %.4f, b = %.4f (true 1.5, 1.3, 0.25)\n",
           theta[0], theta[1], theta[2]);
    printf("final gradient = (%.3e, %.3e, %.3e), tape %zu nodes, %zu bytes\n",
           g[0], g[1], g[2], dr_tape_len(t), dr_tape_bytes(t));
    dr_tape_free(t);
    return loss < 1e-4 ? 0 : 1;
}
