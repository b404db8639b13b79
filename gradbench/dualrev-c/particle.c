/* particle.c - the eval "particle": a charged particle from (0, 8) at
   velocity (0.75, 0), pulled by charges at (10, 10 - w) and (10, 0) whose
   potential p(x) = sum 1 / |x - c| gives its acceleration -grad p, moved by
   Euler steps of 0.1 until it crosses the x axis; the control w minimises
   the square of where it crosses, by the gradient descent of gd.h.  Nested
   derivatives: every step's grad p is recorded as operations (reverse:
   dr_adjoint_record; forward: dr_tangent_record per coordinate) on a tape
   of order 2 with w as input, and the descent's derivative in w is one
   reverse sweep (dr_gradient) or one forward sweep (dr_jvp). */
#include <stdlib.h>
#include <string.h>

#include "evals.h"
#include "gd.h"

/* a trajectory that has not crossed the axis after this many steps */
#define PARTICLE_MAX_STEPS 10000000L

typedef struct {
    int outer_fwd, inner_fwd;
    double w0, w;
    dr_tape *t;
    double at;
    int recorded;
    dr_real win, val;
} particle;

/* the potential at x of the charges c[0..1] */
static dr_real potential(dr_tape *t, const dr_real c[2][2], const dr_real *x)
{
    dr_real p = dr_const(0.0);
    for (int k = 0; k < 2; k++) {
        dr_real dx = dr_sub(t, x[0], c[k][0]), dy = dr_sub(t, x[1], c[k][1]);
        dr_real d = dr_sqrt(t, dr_add(t, dr_mul(t, dx, dx), dr_mul(t, dy, dy)));
        p = dr_add(t, p, dr_div(t, dr_const(1.0), d));
    }
    return p;
}

static int record(particle *s, double w, char *err)
{
    if (s->recorded && s->at == w)
        return 0;
    s->recorded = 0;
    dr_tape *t = s->t;
    dr_status st = dr_tape_clear(t);
    if (st != DR_OK)
        return gb_fail(err, "particle", st);
    s->win = dr_input(t, w);
    dr_real c[2][2] = {{dr_const(10.0), dr_sub(t, dr_const(10.0), s->win)},
                       {dr_const(10.0), dr_const(0.0)}};
    /* the position as nodes of their own: the variables of grad p */
    dr_real x[2] = {dr_input(t, 0.0), dr_input(t, 8.0)};
    dr_real v[2] = {dr_const(0.75), dr_const(0.0)}, g[2];
    dr_real dt = dr_const(0.1), one = dr_const(1.0);
    for (long k = 0;; k++) {
        if (k == PARTICLE_MAX_STEPS) {
            snprintf(err, GB_ERRLEN, "particle: the trajectory never crosses the axis");
            return -1;
        }
        dr_idx mark = dr_tape_mark(t);
        dr_real p = potential(t, c, x);
        if (!s->inner_fwd) {
            dr_idx ids[2] = {x[0].idx, x[1].idx};
            st = dr_adjoint_record(t, mark, p, 2, ids, g);
        } else
            for (int i = 0; i < 2 && (st = dr_tangent_record(t, mark, 1, &x[i].idx, &one,
                                                             p, &g[i])) == DR_OK; i++)
                ;
        if (st != DR_OK)
            return gb_fail(err, "particle", st);
        for (int i = 0; i < 2; i++)
            x[i] = dr_add(t, x[i], dr_mul(t, dt, v[i]));
        if (x[1].val <= 0) {
            dr_real dtf = dr_neg(t, dr_div(t, x[1], v[1]));
            dr_real xf = dr_add(t, x[0], dr_mul(t, dtf, v[0]));
            s->val = dr_mul(t, xf, xf);
            break;
        }
        for (int i = 0; i < 2; i++) /* acceleration -g */
            v[i] = dr_sub(t, v[i], dr_mul(t, dt, g[i]));
    }
    if ((st = dr_tape_status(t)) != DR_OK)
        return gb_fail(err, "particle", st);
    s->at = w;
    s->recorded = 1;
    return 0;
}

static int objective(void *ctx, const double *w, double *f, char *err)
{
    particle *s = ctx;
    if (record(s, *w, err))
        return -1;
    *f = s->val.val;
    return 0;
}

static int gradient(void *ctx, const double *w, double *g, char *err)
{
    particle *s = ctx;
    if (record(s, *w, err))
        return -1;
    double one = 1.0;
    dr_status st = s->outer_fwd ? dr_jvp(s->t, 1, &s->val, 1, &s->win, &one, g)
                                : dr_gradient(s->t, s->val, 1, &s->win, g);
    return st == DR_OK ? 0 : gb_fail(err, "particle", st);
}

static int particle_init(particle *s, int outer_fwd, int inner_fwd, char *err)
{
    s->outer_fwd = outer_fwd;
    s->inner_fwd = inner_fwd;
    if (!(s->t = dr_tape_new())) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return -1;
    }
    dr_status st = dr_tape_set_order(s->t, 2);
    return st == DR_OK ? 0 : gb_fail(err, "particle", st);
}

int particle_outer(int outer_fwd, int inner_fwd, double w, double *val,
                   double *grad, char *err)
{
    particle s;
    memset(&s, 0, sizeof s);
    int rc = particle_init(&s, outer_fwd, inner_fwd, err);
    if (!rc)
        rc = objective(&s, &w, val, err);
    if (!rc && grad)
        rc = gradient(&s, &w, grad, err);
    dr_tape_free(s.t);
    return rc;
}

static void release(void *p)
{
    if (p) {
        dr_tape_free(((particle *)p)->t);
        free(p);
    }
}

static void *prepare(const json_t *input, const char *fn, char *err)
{
    double w;
    if (gb_get_number(input, "w", &w, err))
        return NULL;
    particle *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    s->w0 = w;
    if (particle_init(s, fn[0] == 'f', fn[1] == 'f', err)) {
        release(s);
        return NULL;
    }
    return s;
}

static void *prepare_rr(const json_t *i, char *err) { return prepare(i, "rr", err); }
static void *prepare_rf(const json_t *i, char *err) { return prepare(i, "rf", err); }
static void *prepare_fr(const json_t *i, char *err) { return prepare(i, "fr", err); }
static void *prepare_ff(const json_t *i, char *err) { return prepare(i, "ff", err); }

static int run(void *p, char *err)
{
    particle *s = p;
    gd_problem pb = {1, objective, gradient, s};
    s->recorded = 0;
    return gd_optimise(&pb, 1.0, &s->w0, &s->w, err);
}

static json_t *output(void *p, char *err)
{
    return gb_json_number(((particle *)p)->w, err);
}

const gb_function gb_particle_rr = {"particle", "rr", prepare_rr, run, output, release};
const gb_function gb_particle_rf = {"particle", "rf", prepare_rf, run, output, release};
const gb_function gb_particle_fr = {"particle", "fr", prepare_fr, run, output, release};
const gb_function gb_particle_ff = {"particle", "ff", prepare_ff, run, output, release};
