/* ode.c - the eval "ode": s steps of fourth-order Runge-Kutta on
   y_0' = x_0, y_i' = x_i y_{i-1} from y(0) = 0 to t = 2, and the gradient
   of the last y_{n-1} with respect to x.  A step is recorded through the
   inline recorder, a node per product and per two-term sum (given
   partials, dr_rec_record2), an entry at a time; a long run of steps is
   recorded as a checkpointed loop (dr_record_checkpointed), whose state
   is y and x. */
#include <stdlib.h>

#include "evals.h"

/* a run of at most gb_ode_tape_max values n * s is recorded whole, a
   longer one checkpointed with ODE_SNAPSHOTS stored states */
size_t gb_ode_tape_max = (size_t)1 << 21;
#define ODE_SNAPSHOTS 16

typedef struct {
    size_t n, s;
    double *x, *y, *grad, *k; /* k: 5 n scratch values of the primal */
    dr_real *state, *out; /* 2n each */
    dr_tape *t;
} ode;

/* z = f(y): z_0 = x_0, z_i = x_i y_{i-1} */
static void f_val(size_t n, const double *x, const double *y, double *z)
{
    z[0] = x[0];
    for (size_t i = 1; i < n; i++)
        z[i] = x[i] * y[i - 1];
}

static void rk4(ode *o)
{
    size_t n = o->n;
    double h = 2.0 / (double)o->s;
    double *k1 = o->k, *k2 = k1 + n, *k3 = k2 + n, *k4 = k3 + n, *yt = k4 + n;
    double *y = o->y;
    for (size_t i = 0; i < n; i++)
        y[i] = 0;
    for (size_t step = 0; step < o->s; step++) {
        f_val(n, o->x, y, k1);
        for (size_t i = 0; i < n; i++)
            yt[i] = y[i] + h * k1[i] / 2;
        f_val(n, o->x, yt, k2);
        for (size_t i = 0; i < n; i++)
            yt[i] = y[i] + h * k2[i] / 2;
        f_val(n, o->x, yt, k3);
        for (size_t i = 0; i < n; i++)
            yt[i] = y[i] + h * k3[i];
        f_val(n, o->x, yt, k4);
        for (size_t i = 0; i < n; i++)
            y[i] += h * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) / 6;
    }
}

/* one Runge-Kutta step from state (y, x) to (y', x) (x copied through),
   recorded in one pass over the entries: k_j[i] = x_i yt_(j-1)[i-1] needs
   only entry i-1 of the stage before, so each entry's four stages, three
   intermediate states and new value are recorded together and the stages
   of entry i-1 wait in registers (a pass per stage would store each stage
   of every entry and read it back: n 16-byte values, seven times a step) */
static dr_status step(void *ctx, dr_tape *t, size_t k, size_t n2,
                      const dr_real *in, dr_real *out)
{
    (void)k;
    ode *o = ctx;
    size_t n = n2 / 2;
    double h = 2.0 / (double)o->s, h2 = h / 2, h6 = h / 6;
    const dr_real *y = in, *x = in + n;
    dr_rec r;
    dr_status st = dr_rec_begin(t, &r);
    if (st != DR_OK)
        return st;
    /* entry 0: every stage is x_0 itself, and the new value
       y_0 + h (x_0 + 2 x_0 + 2 x_0 + x_0) / 6 is y_0 + h x_0 */
    dr_real y1 = dr_rec_record2(&r, y[0].val + h2 * x[0].val, y[0], 1.0, x[0], h2);
    dr_real y2 = y1;
    dr_real y3 = dr_rec_record2(&r, y[0].val + h * x[0].val, y[0], 1.0, x[0], h);
    out[0] = dr_rec_record2(&r, y[0].val + h * x[0].val, y[0], 1.0, x[0], h);
    for (size_t i = 1; i < n; i++) {
        dr_real yi = y[i];
        dr_real k1 = dr_rec_mul(&r, x[i], y[i - 1]);
        dr_real t1 = dr_rec_record2(&r, yi.val + h2 * k1.val, yi, 1.0, k1, h2);
        dr_real k2 = dr_rec_mul(&r, x[i], y1);
        dr_real t2 = dr_rec_record2(&r, yi.val + h2 * k2.val, yi, 1.0, k2, h2);
        dr_real k3 = dr_rec_mul(&r, x[i], y2);
        dr_real t3 = dr_rec_record2(&r, yi.val + h * k3.val, yi, 1.0, k3, h);
        dr_real k4 = dr_rec_mul(&r, x[i], y3);
        /* y + h (k1 + 2 k2 + 2 k3 + k4) / 6 as a chain of two-argument
           nodes */
        dr_real a = dr_rec_record2(&r, k1.val + 2 * k2.val, k1, 1.0, k2, 2.0);
        dr_real b = dr_rec_record2(&r, a.val + 2 * k3.val, a, 1.0, k3, 2.0);
        dr_real c = dr_rec_add(&r, b, k4);
        out[i] = dr_rec_record2(&r, yi.val + h6 * c.val, yi, 1.0, c, h6);
        y1 = t1;
        y2 = t2;
        y3 = t3;
    }
    for (size_t i = 0; i < n; i++)
        out[n + i] = x[i];
    return dr_rec_end(&r);
}

static void release(void *s)
{
    ode *o = s;
    if (!o)
        return;
    dr_tape_free(o->t);
    free(o->x);
    free(o->y);
    free(o->grad);
    free(o->k);
    free(o->state);
    free(o->out);
    free(o);
}

static void *prepare(const json_t *input, char *err)
{
    ode *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (gb_get_size(input, "s", &o->s, err) ||
        !(o->x = gb_get_vector(input, "x", &o->n, err)))
        goto fail;
    size_t n = o->n;
    if (n == 0 || o->s == 0 || n > ((size_t)1 << 31) || o->s > ((size_t)1 << 31)) {
        snprintf(err, GB_ERRLEN, "ode: \"x\" must hold 1 to 2^31 numbers and \"s\" be 1 to 2^31");
        goto fail;
    }
    o->t = dr_tape_new();
    o->y = malloc(n * sizeof *o->y);
    o->grad = malloc(n * sizeof *o->grad);
    o->k = malloc(5 * n * sizeof *o->k);
    o->state = malloc(2 * n * sizeof *o->state);
    o->out = malloc(2 * n * sizeof *o->out);
    if (!o->t || !o->y || !o->grad || !o->k || !o->state || !o->out) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    return o;
fail:
    release(o);
    return NULL;
}

static int primal(void *s, char *err)
{
    (void)err;
    rk4(s);
    return 0;
}

static int gradient(void *s, char *err)
{
    ode *o = s;
    size_t n = o->n;
    dr_tape *t = o->t;
    dr_status st = dr_tape_clear(t);
    if (st == DR_OK)
        st = dr_inputs(t, n, o->x, o->state + n);
    if (st != DR_OK)
        return gb_fail(err, "ode", st);
    for (size_t i = 0; i < n; i++)
        o->state[i] = dr_const(0.0);
    if (n * o->s <= gb_ode_tape_max) {
        /* the whole run on the tape: two state buffers, swapped */
        dr_real *a = o->state, *b = o->out;
        for (size_t k = 0; k < o->s && st == DR_OK; k++) {
            st = step(o, t, k, 2 * n, a, b);
            dr_real *c = a;
            a = b;
            b = c;
        }
        if (a != o->out)
            for (size_t i = 0; i < 2 * n; i++)
                o->out[i] = a[i];
    } else {
        dr_loop loop = {o, step, NULL, 0};
        st = dr_record_checkpointed(t, &loop, o->s, 2 * n, o->state,
                                    ODE_SNAPSHOTS, o->out);
    }
    if (st == DR_OK)
        st = dr_gradient_range(t, o->out[n - 1], o->state[n].idx, n, o->grad);
    for (size_t i = 0; i < n; i++)
        o->y[i] = o->out[i].val;
    return st == DR_OK ? 0 : gb_fail(err, "ode", st);
}

static json_t *out_primal(void *s, char *err)
{
    ode *o = s;
    return gb_json_vector(o->y, o->n, err);
}

static json_t *out_gradient(void *s, char *err)
{
    ode *o = s;
    return gb_json_vector(o->grad, o->n, err);
}

const gb_function gb_ode_primal = {"ode", "primal", prepare, primal, out_primal, release};
const gb_function gb_ode_gradient = {"ode", "gradient", prepare, gradient, out_gradient, release};
