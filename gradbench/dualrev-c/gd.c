/* gd.c - gradient descent (gd.h) */
#include <math.h>
#include <string.h>

#include "gb.h"
#include "gd.h"

/* a descent that runs this many evaluations has failed to converge */
#define GD_MAX_EVALS 10000000

int gd_optimise(const gd_problem *p, double sign, const double *x0, double *x,
                char *err)
{
    size_t n = p->n;
    double g[GD_MAXDIM], xn[GD_MAXDIM], f, fn, eta = 1e-5;
    int accepted = 0;
    if (n > GD_MAXDIM) {
        snprintf(err, GB_ERRLEN, "gradient descent: too many dimensions");
        return -1;
    }
    memcpy(x, x0, n * sizeof *x);
    if (p->objective(p->ctx, x, &f, err) || p->gradient(p->ctx, x, g, err))
        return -1;
    for (long evals = 0; evals < GD_MAX_EVALS; evals++) {
        double norm = 0, step = 0;
        for (size_t i = 0; i < n; i++)
            norm += g[i] * g[i];
        if (sqrt(norm) <= 1e-5)
            return 0;
        if (accepted == 10) {
            eta *= 2;
            accepted = 0;
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            xn[i] = x[i] - eta * sign * g[i];
            step += (x[i] - xn[i]) * (x[i] - xn[i]);
        }
        if (sqrt(step) <= 1e-5)
            return 0;
        if (p->objective(p->ctx, xn, &fn, err))
            return -1;
        if (sign * fn < sign * f) {
            memcpy(x, xn, n * sizeof *x);
            f = fn;
            if (p->gradient(p->ctx, x, g, err))
                return -1;
            accepted++;
        } else {
            eta /= 2;
            accepted = 0;
        }
    }
    snprintf(err, GB_ERRLEN, "gradient descent did not converge");
    return -1;
}
