/* lstm.c - the eval "lstm": ADBench's LSTM (l layers of b cells whose
   weights are diagonal, so every gate is a scalar affine map of one input)
   run over a sequence of c one-hot-ish characters, and the mean
   log-likelihood loss of predicting each next character; its gradient
   with respect to main_params (2 l rows: a layer's weights, then its
   biases, each the four gates forget, input, output, change of b) and
   extra_params (the input weights, the output weights and biases).

   The objective is plain arithmetic.  The gradient records the whole run
   through a recorder, with the parameters as tape inputs: one statement
   per gate, cell and hidden value, and one node per step's term of the
   loss; one reverse sweep gives the gradient. */
#include <math.h>
#include <stdlib.h>

#include "evals.h"

typedef struct {
    size_t l, b, c;            /* layers, cells (the character's bits), steps */
    double *main, *extra, *state, *seq;
    double loss, *grad;        /* 8 l b + 3 b */
    dr_real *pm, *pe;          /* the parameters as dr_real */
    dr_real *hid, *cell, *y;   /* l b, l b, b */
    dr_idx *sid;               /* a step's sum: b + 1 terms */
    double *sd;
    dr_tape *t;
} lstm;

/* sigmoid(x w + c) as one statement */
static dr_real gate(dr_rec *r, dr_real x, dr_real w, dr_real c)
{
    dr_expr a = dr_ex_add(dr_ex_mul(dr_ex(x), dr_ex(w)), dr_ex(c));
    double s = 1.0 / (1.0 + exp(-a.val));
    return dr_rec_stmt(r, dr_ex_fn(a, s, s * (1.0 - s)));
}

/* tanh(x w + c) as one statement */
static dr_real tgate(dr_rec *r, dr_real x, dr_real w, dr_real c)
{
    dr_expr a = dr_ex_add(dr_ex_mul(dr_ex(x), dr_ex(w)), dr_ex(c));
    double v = tanh(a.val);
    return dr_rec_stmt(r, dr_ex_fn(a, v, 1.0 - v * v));
}

/* the loss from the parameters pm, pe (tape inputs) recorded through
   recorder r: its value and node */
static dr_real loss(lstm *s, dr_rec *r)
{
    size_t l = s->l, b = s->b;
    dr_real total = dr_const(0.0);
    for (size_t i = 0; i < l * b; i++) {
        size_t layer = i / b, j = i % b;
        s->hid[i] = dr_const(s->state[2 * b * layer + j]);
        s->cell[i] = dr_const(s->state[2 * b * layer + b + j]);
    }
    const dr_real *win = s->pe, *wout = s->pe + b, *bout = s->pe + 2 * b;
    for (size_t step = 0; step + 1 < s->c; step++) {
        const double *x = s->seq + step * b, *gold = x + b;
        /* the first layer's input: the character times the input weights */
        for (size_t j = 0; j < b; j++)
            s->y[j] = dr_rec_stmt(r, dr_ex_scale(x[j], dr_ex(win[j])));
        const dr_real *in = s->y;
        for (size_t layer = 0; layer < l; layer++) {
            const dr_real *w = s->pm + 8 * b * layer, *c = w + 4 * b;
            dr_real *h = s->hid + layer * b, *cl = s->cell + layer * b;
            for (size_t j = 0; j < b; j++) {
                dr_real forget = gate(r, in[j], w[j], c[j]);
                dr_real ingate = gate(r, h[j], w[b + j], c[b + j]);
                dr_real outgate = gate(r, in[j], w[2 * b + j], c[2 * b + j]);
                dr_real change = tgate(r, h[j], w[3 * b + j], c[3 * b + j]);
                cl[j] = dr_rec_stmt(r, dr_ex_add(dr_ex_mul(dr_ex(cl[j]), dr_ex(forget)),
                                                 dr_ex_mul(dr_ex(ingate), dr_ex(change))));
                double tc = tanh(cl[j].val);
                h[j] = dr_rec_stmt(r, dr_ex_mul(dr_ex(outgate),
                                                dr_ex_fn(dr_ex(cl[j]), tc, 1.0 - tc * tc)));
            }
            in = h;
        }
        /* the prediction y, and the step's term sum_j gold_j (y_j - lse(y))
           with lse(y) = log(2 + sum_j exp y_j), added to the total as one
           node: partials gold_j - G exp(y_j) / S in y_j, 1 in the total */
        double S = 2.0, G = 0.0;
        for (size_t j = 0; j < b; j++) {
            s->y[j] = dr_rec_stmt(r, dr_ex_add(dr_ex_mul(dr_ex(in[j]), dr_ex(wout[j])),
                                               dr_ex(bout[j])));
            S += exp(s->y[j].val);
            G += gold[j];
        }
        double lse = log(S);
        dr_sum sum;
        dr_sum_init(&sum, b + 1, s->sid, s->sd);
        dr_sum_add(&sum, dr_ex(total));
        for (size_t j = 0; j < b; j++)
            dr_sum_add(&sum, dr_ex_fn(dr_ex(s->y[j]), gold[j] * s->y[j].val,
                                      gold[j] - G * exp(s->y[j].val) / S));
        dr_sum_add(&sum, dr_ex_const(-G * lse));
        total = dr_rec_sum(r, &sum);
    }
    double count = (double)((s->c - 1) * b);
    return dr_rec_stmt(r, dr_ex_scale(-1.0 / count, dr_ex(total)));
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* the loss in plain arithmetic (the objective): what loss computes */
static int objective(void *st, char *err)
{
    (void)err;
    lstm *s = st;
    size_t l = s->l, b = s->b;
    double *h = s->sd, *cl = h + l * b, *y = cl + l * b, total = 0.0;
    for (size_t i = 0; i < l * b; i++) {
        h[i] = s->state[2 * b * (i / b) + i % b];
        cl[i] = s->state[2 * b * (i / b) + b + i % b];
    }
    const double *win = s->extra, *wout = s->extra + b, *bout = s->extra + 2 * b;
    for (size_t step = 0; step + 1 < s->c; step++) {
        const double *x = s->seq + step * b, *gold = x + b;
        for (size_t j = 0; j < b; j++)
            y[j] = x[j] * win[j];
        const double *in = y;
        for (size_t layer = 0; layer < l; layer++) {
            const double *w = s->main + 8 * b * layer, *c = w + 4 * b;
            double *hl = h + layer * b, *cll = cl + layer * b;
            for (size_t j = 0; j < b; j++) {
                double forget = sigmoid(in[j] * w[j] + c[j]);
                double ingate = sigmoid(hl[j] * w[b + j] + c[b + j]);
                double outgate = sigmoid(in[j] * w[2 * b + j] + c[2 * b + j]);
                double change = tanh(hl[j] * w[3 * b + j] + c[3 * b + j]);
                cll[j] = cll[j] * forget + ingate * change;
                hl[j] = outgate * tanh(cll[j]);
            }
            in = hl;
        }
        double S = 2.0, G = 0.0, dot = 0.0;
        for (size_t j = 0; j < b; j++) {
            y[j] = in[j] * wout[j] + bout[j];
            S += exp(y[j]);
            G += gold[j];
            dot += gold[j] * y[j];
        }
        total += dot - G * log(S);
    }
    s->loss = -total / (double)((s->c - 1) * b);
    return 0;
}

static int jacobian(void *st, char *err)
{
    lstm *s = st;
    size_t np = 8 * s->l * s->b, ne = 3 * s->b;
    dr_tape *t = s->t;
    dr_rec r;
    dr_status rc = dr_tape_clear(t);
    if (rc == DR_OK)
        rc = dr_inputs(t, np, s->main, s->pm);
    if (rc == DR_OK)
        rc = dr_inputs(t, ne, s->extra, s->pe);
    if (rc == DR_OK)
        rc = dr_rec_begin(t, &r);
    if (rc != DR_OK)
        return gb_fail(err, "lstm", rc);
    dr_real y = loss(s, &r);
    rc = dr_rec_end(&r);
    s->loss = y.val;
    if (rc == DR_OK)
        rc = dr_seed(t, y.idx, 1.0);
    if (rc == DR_OK)
        rc = dr_reverse(t);
    if (rc == DR_OK)
        rc = dr_adjoints_read(t, s->pm[0].idx, np, s->grad);
    if (rc == DR_OK)
        rc = dr_adjoints_read(t, s->pe[0].idx, ne, s->grad + np);
    return rc == DR_OK ? 0 : gb_fail(err, "lstm", rc);
}

static void release(void *st)
{
    lstm *s = st;
    if (!s)
        return;
    dr_tape_free(s->t);
    free(s->main);
    free(s->extra);
    free(s->state);
    free(s->seq);
    free(s->grad);
    free(s->pm);
    free(s->pe);
    free(s->hid);
    free(s->cell);
    free(s->y);
    free(s->sid);
    free(s->sd);
    free(s);
}

static void *prepare(const json_t *input, char *err)
{
    lstm *s = calloc(1, sizeof *s);
    size_t r, c, r2, c2;
    if (!s) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (!(s->main = gb_get_matrix(input, "main_params", &r, &c, err)))
        goto fail;
    if (r == 0 || r % 2 || c % 4 || r > 2048 || c > 4 * 4096) {
        snprintf(err, GB_ERRLEN,
                 "lstm: \"main_params\" must have 2 l rows of 4 b numbers");
        goto fail;
    }
    s->l = r / 2;
    s->b = c / 4;
    size_t l = s->l, b = s->b;
    if (!(s->extra = gb_get_matrix(input, "extra_params", &r, &c, err)))
        goto fail;
    if (r != 3 || c != b) {
        snprintf(err, GB_ERRLEN, "lstm: \"extra_params\" must be 3 x %zu", b);
        goto fail;
    }
    if (!(s->state = gb_get_matrix(input, "state", &r, &c, err)))
        goto fail;
    if (r != 2 * l || c != b) {
        snprintf(err, GB_ERRLEN, "lstm: \"state\" must be %zu x %zu", 2 * l, b);
        goto fail;
    }
    if (!(s->seq = gb_get_matrix(input, "sequence", &r2, &c2, err)))
        goto fail;
    if (r2 < 2 || c2 != b) {
        snprintf(err, GB_ERRLEN, "lstm: \"sequence\" must have at least 2 rows of %zu numbers", b);
        goto fail;
    }
    s->c = r2;
    s->t = dr_tape_new();
    s->grad = malloc((8 * l * b + 3 * b) * sizeof *s->grad);
    s->pm = malloc(8 * l * b * sizeof *s->pm);
    s->pe = malloc(3 * b * sizeof *s->pe);
    s->hid = malloc(l * b * sizeof *s->hid);
    s->cell = malloc(l * b * sizeof *s->cell);
    s->y = malloc(b * sizeof *s->y);
    s->sid = malloc((b + 1) * sizeof *s->sid);
    s->sd = malloc((2 * l * b + b + 1) * sizeof *s->sd); /* (the primal's scratch too) */
    if (!s->t || !s->grad || !s->pm || !s->pe || !s->hid || !s->cell || !s->y ||
        !s->sid || !s->sd) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    return s;
fail:
    release(s);
    return NULL;
}

static json_t *out_objective(void *st, char *err)
{
    return gb_json_number(((lstm *)st)->loss, err);
}

static json_t *out_jacobian(void *st, char *err)
{
    lstm *s = st;
    return gb_json_vector(s->grad, 8 * s->l * s->b + 3 * s->b, err);
}

const gb_function gb_lstm_objective = {"lstm", "objective", prepare, objective, out_objective, release};
const gb_function gb_lstm_jacobian = {"lstm", "jacobian", prepare, jacobian, out_jacobian, release};
