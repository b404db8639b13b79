/* saddle.c - the eval "saddle": min over x of max over y of
   f(x, y) = (x1^2 + x2^2) - (y1^2 + y2^2) (GradBench's (x1^2 + y1^2) -
   (x2^2 + y2^2) with its points (x1, y1) and (x2, y2) named x and y), both by gradient descent (gd.h)
   from the same start, with nested derivatives: the objective of the outer
   descent, max_y f(x, y), runs the inner descent, and its gradient is the
   derivative of that whole run, inner gradients included.  The whole run is
   recorded on a tape of order 2 with x as inputs; each inner gradient is
   recorded as operations on it (reverse: dr_adjoint_record; forward: one
   dr_tangent_record per coordinate), and the outer gradient is one reverse
   sweep (dr_gradient) or one forward sweep per coordinate (dr_jvp). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evals.h"
#include "gd.h"

typedef struct {
    int outer_fwd, inner_fwd;
    double start[2], out[4];
    dr_tape *t;       /* the outer objective's recording (order 2) */
    dr_tape *scratch; /* the plain gradients of the final ascent */
    double at[2];     /* where t was recorded, and what it holds */
    int recorded;
    dr_real xin[2], val;
    double yx[2];     /* x of the final ascent */
} saddle;

static dr_real f_rec(dr_tape *t, const dr_real *x, const dr_real *y)
{
    dr_real a = dr_add(t, dr_mul(t, x[0], x[0]), dr_mul(t, x[1], x[1]));
    dr_real b = dr_add(t, dr_mul(t, y[0], y[0]), dr_mul(t, y[1], y[1]));
    return dr_sub(t, a, b);
}

/* the gradient of fy (recorded from mark on) with respect to y, recorded */
static dr_status grad_rec(dr_tape *t, int fwd, dr_idx mark, dr_real fy,
                          const dr_real *y, dr_real *g)
{
    if (!fwd) {
        dr_idx ids[2] = {y[0].idx, y[1].idx};
        return dr_adjoint_record(t, mark, fy, 2, ids, g);
    }
    dr_real one = dr_const(1.0);
    dr_status st = DR_OK;
    for (int c = 0; c < 2 && st == DR_OK; c++)
        st = dr_tangent_record(t, mark, 1, &y[c].idx, &one, fy, &g[c]);
    return st;
}

/* max over y of f(x, y) on the tape, by the descent of gd.c with every
   step recorded (the same rules, on the values of active points) */
static int inner_max(saddle *s, const dr_real *x, dr_real *fmax, char *err)
{
    dr_tape *t = s->t;
    dr_real y[2], g[2], yn[2], fy, fn;
    double eta = 1e-5;
    int accepted = 0;
    dr_status st;
    y[0] = dr_input(t, s->start[0]);
    y[1] = dr_input(t, s->start[1]);
    dr_idx mark = dr_tape_mark(t);
    fy = f_rec(t, x, y);
    if ((st = grad_rec(t, s->inner_fwd, mark, fy, y, g)) != DR_OK)
        return gb_fail(err, "saddle", st);
    for (long evals = 0; evals < 10000000; evals++) {
        if (sqrt(g[0].val * g[0].val + g[1].val * g[1].val) <= 1e-5)
            break;
        if (accepted == 10) {
            eta *= 2;
            accepted = 0;
            continue;
        }
        /* ascent: y + eta g */
        for (int c = 0; c < 2; c++)
            yn[c] = dr_add(t, y[c], dr_mul(t, dr_const(eta), g[c]));
        if (sqrt((yn[0].val - y[0].val) * (yn[0].val - y[0].val) +
                 (yn[1].val - y[1].val) * (yn[1].val - y[1].val)) <= 1e-5)
            break;
        mark = dr_tape_mark(t);
        fn = f_rec(t, x, yn);
        if (-fn.val < -fy.val) {
            y[0] = yn[0];
            y[1] = yn[1];
            fy = fn;
            if ((st = grad_rec(t, s->inner_fwd, mark, fy, y, g)) != DR_OK)
                return gb_fail(err, "saddle", st);
            accepted++;
        } else {
            eta /= 2;
            accepted = 0;
        }
    }
    if ((st = dr_tape_status(t)) != DR_OK)
        return gb_fail(err, "saddle", st);
    *fmax = fy;
    return 0;
}

/* records max_y f(x, y) at x, unless the tape already holds it */
static int record_outer(saddle *s, const double *x, char *err)
{
    if (s->recorded && s->at[0] == x[0] && s->at[1] == x[1])
        return 0;
    s->recorded = 0;
    dr_status st = dr_tape_clear(s->t);
    if (st != DR_OK)
        return gb_fail(err, "saddle", st);
    s->xin[0] = dr_input(s->t, x[0]);
    s->xin[1] = dr_input(s->t, x[1]);
    if (inner_max(s, s->xin, &s->val, err))
        return -1;
    s->at[0] = x[0];
    s->at[1] = x[1];
    s->recorded = 1;
    return 0;
}

static int outer_objective(void *ctx, const double *x, double *f, char *err)
{
    saddle *s = ctx;
    if (record_outer(s, x, err))
        return -1;
    *f = s->val.val;
    return 0;
}

/* the derivative of the recorded run: reverse, or forward per coordinate */
static int outer_gradient(void *ctx, const double *x, double *g, char *err)
{
    saddle *s = ctx;
    if (record_outer(s, x, err))
        return -1;
    dr_status st;
    if (!s->outer_fwd)
        st = dr_gradient(s->t, s->val, 2, s->xin, g);
    else {
        st = DR_OK;
        for (int c = 0; c < 2 && st == DR_OK; c++) {
            double dir[2] = {c == 0, c == 1};
            st = dr_jvp(s->t, 1, &s->val, 2, s->xin, dir, &g[c]);
        }
    }
    return st == DR_OK ? 0 : gb_fail(err, "saddle", st);
}

/* the final ascent over y at the outer optimum: plain first derivatives */
static int final_objective(void *ctx, const double *y, double *f, char *err)
{
    (void)err;
    saddle *s = ctx;
    *f = (s->yx[0] * s->yx[0] + s->yx[1] * s->yx[1]) - (y[0] * y[0] + y[1] * y[1]);
    return 0;
}

static int final_gradient(void *ctx, const double *yv, double *g, char *err)
{
    saddle *s = ctx;
    dr_tape *t = s->scratch;
    dr_status st = dr_tape_clear(t);
    dr_real x[2] = {dr_const(s->yx[0]), dr_const(s->yx[1])};
    dr_real y[2] = {dr_input(t, yv[0]), dr_input(t, yv[1])};
    dr_real f = f_rec(t, x, y);
    if (st == DR_OK && !s->outer_fwd)
        st = dr_gradient(t, f, 2, y, g);
    for (int c = 0; c < 2 && st == DR_OK && s->outer_fwd; c++) {
        double dir[2] = {c == 0, c == 1};
        st = dr_jvp(t, 1, &f, 2, y, dir, &g[c]);
    }
    return st == DR_OK ? 0 : gb_fail(err, "saddle", st);
}

static int saddle_init(saddle *s, int outer_fwd, int inner_fwd, char *err)
{
    s->outer_fwd = outer_fwd;
    s->inner_fwd = inner_fwd;
    s->t = dr_tape_new();
    s->scratch = dr_tape_new();
    if (!s->t || !s->scratch) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return -1;
    }
    dr_status st = dr_tape_set_order(s->t, 2);
    return st == DR_OK ? 0 : gb_fail(err, "saddle", st);
}

static void saddle_fini(saddle *s)
{
    dr_tape_free(s->t);
    dr_tape_free(s->scratch);
}

int saddle_outer(int outer_fwd, int inner_fwd, const double start[2],
                 const double x[2], double *val, double grad[2], char *err)
{
    saddle s;
    memset(&s, 0, sizeof s);
    s.start[0] = start[0];
    s.start[1] = start[1];
    int rc = saddle_init(&s, outer_fwd, inner_fwd, err);
    if (!rc)
        rc = outer_objective(&s, x, val, err);
    if (!rc && grad)
        rc = outer_gradient(&s, x, grad, err);
    saddle_fini(&s);
    return rc;
}

static void release(void *p)
{
    if (p) {
        saddle_fini(p);
        free(p);
    }
}

static void *prepare(const json_t *input, const char *fn, char *err)
{
    json_t *start = json_object_get(input, "start");
    if (!json_is_array(start) || json_array_size(start) != 2 ||
        !json_is_number(json_array_get(start, 0)) ||
        !json_is_number(json_array_get(start, 1))) {
        snprintf(err, GB_ERRLEN, "saddle: \"start\" must be an array of 2 numbers");
        return NULL;
    }
    saddle *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    for (int c = 0; c < 2; c++)
        s->start[c] = json_number_value(json_array_get(start, c));
    if (saddle_init(s, fn[0] == 'f', fn[1] == 'f', err)) {
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
    saddle *s = p;
    gd_problem outer = {2, outer_objective, outer_gradient, s};
    gd_problem final = {2, final_objective, final_gradient, s};
    s->recorded = 0;
    if (gd_optimise(&outer, 1.0, s->start, s->yx, err) ||
        gd_optimise(&final, -1.0, s->start, s->out + 2, err))
        return -1;
    s->out[0] = s->yx[0];
    s->out[1] = s->yx[1];
    return 0;
}

static json_t *output(void *p, char *err)
{
    return gb_json_vector(((saddle *)p)->out, 4, err);
}

const gb_function gb_saddle_rr = {"saddle", "rr", prepare_rr, run, output, release};
const gb_function gb_saddle_rf = {"saddle", "rf", prepare_rf, run, output, release};
const gb_function gb_saddle_fr = {"saddle", "fr", prepare_fr, run, output, release};
const gb_function gb_saddle_ff = {"saddle", "ff", prepare_ff, run, output, release};
