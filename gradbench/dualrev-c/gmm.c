/* gmm.c - the eval "gmm": the log-posterior of a Gaussian mixture (k
   components in d dimensions, n points, a Wishart prior) and its gradient
   with respect to the weights alpha, the means mu, and the inverse
   covariance factors q (log-diagonal) and l (strictly lower triangle).  The
   gradient is recorded with array operations, one component at a time over
   all points: the centred points times the component's triangular factor
   (one dgemm), squared row norms, then a log-sum-exp over the components of
   each point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evals.h"

typedef struct {
    size_t d, k, n, lsz;
    double *alpha, *mu, *q, *l, *x, gamma, m, out;
    double *galpha, *gmu, *gq, *gl;
    double *work;     /* the primal's scratch: 3 d + k */
    int64_t *tri;     /* where (exp q, l) of a component go in its d x d factor */
    dr_arr *terms;    /* k columns n x 1 */
    dr_tape *t;
} gmm;

/* log of the multivariate gamma function Gamma_p(a) */
static double log_gamma_p(double a, size_t p)
{
    double s = 0.25 * (double)p * ((double)p - 1) * log(M_PI);
    for (size_t j = 1; j <= p; j++)
        s += lgamma(a + 0.5 * (1.0 - (double)j));
    return s;
}

/* the constant terms: of the likelihood, and k times the prior's */
static double constants(const gmm *g)
{
    double nn = (double)g->d + g->m + 1, d = (double)g->d;
    double C = nn * d * (log(g->gamma) - 0.5 * log(2.0)) - log_gamma_p(0.5 * nn, g->d);
    return -(double)g->n * d * 0.5 * log(2 * M_PI) + (double)g->k * C;
}

static double lse(size_t n, const double *x)
{
    double m = x[0], s = 0;
    for (size_t i = 1; i < n; i++)
        m = fmax(m, x[i]);
    for (size_t i = 0; i < n; i++)
        s += exp(x[i] - m);
    return log(s) + m;
}

static int objective(void *st, char *err)
{
    (void)err;
    gmm *g = st;
    size_t d = g->d, k = g->k;
    double *xc = g->work, *qx = xc + d, *qd = qx + d, *main_term = qd + d;
    double slse = 0, frob = 0, sumq = 0;
    for (size_t i = 0; i < k * d; i++) {
        frob += exp(2 * g->q[i]);
        sumq += g->q[i];
    }
    for (size_t i = 0; i < k * g->lsz; i++)
        frob += g->l[i] * g->l[i];
    for (size_t ix = 0; ix < g->n; ix++) {
        for (size_t ik = 0; ik < k; ik++) {
            const double *q = g->q + ik * d, *l = g->l + ik * g->lsz;
            double s = 0, sq = 0;
            for (size_t j = 0; j < d; j++) {
                xc[j] = g->x[ix * d + j] - g->mu[ik * d + j];
                qd[j] = exp(q[j]);
                qx[j] = qd[j] * xc[j];
                s += q[j];
            }
            for (size_t i = 0, li = 0; i < d; i++)
                for (size_t j = i + 1; j < d; j++)
                    qx[j] += l[li++] * xc[i];
            for (size_t j = 0; j < d; j++)
                sq += qx[j] * qx[j];
            main_term[ik] = g->alpha[ik] + s - 0.5 * sq;
        }
        slse += lse(k, main_term);
    }
    g->out = constants(g) + slse - (double)g->n * lse(k, g->alpha) -
             (0.5 * g->gamma * g->gamma * frob - g->m * sumq);
    return 0;
}

static int jacobian(void *st, char *err)
{
    gmm *g = st;
    dr_tape *t = g->t;
    int64_t d = (int64_t)g->d, k = (int64_t)g->k, n = (int64_t)g->n,
            lsz = (int64_t)g->lsz;
    dr_status rc = dr_tape_clear(t);
    if (rc != DR_OK)
        return gb_fail(err, "gmm", rc);
    dr_arr alpha = dr_arr_input(t, 1, k, 1, g->alpha);
    dr_arr mu = dr_arr_input(t, 2, k, d, g->mu);
    dr_arr q = dr_arr_input(t, 2, k, d, g->q);
    dr_arr l = dr_arr_input(t, 2, k, lsz, g->l);
    dr_arr X = dr_arr_const_ref(t, 2, n, d, g->x);
    dr_arr Qd = dr_arr_map(t, DR_FN_EXP, q);
    dr_real minus_half = dr_const(-0.5), minus_one = dr_const(-1.0);
    for (int64_t ik = 0; ik < k; ik++) {
        dr_arr mu_k = dr_arr_reshape(t, dr_arr_slice(t, mu, ik, 1), 1, d, 1);
        dr_arr q_k = dr_arr_slice(t, q, ik, 1);
        dr_arr parts[2] = {dr_arr_reshape(t, dr_arr_slice(t, Qd, ik, 1), 1, d, 1),
                           dr_arr_reshape(t, dr_arr_slice(t, l, ik, 1), 1, lsz, 1)};
        /* the factor L (d x d, lower triangular): out = L (x - mu) */
        dr_arr L = dr_arr_reshape(t, dr_arr_scatter(t, dr_arr_concat(t, 0, 2, parts),
                                                    d * d, g->tri),
                                  2, d, d);
        dr_arr xc = dr_arr_add_rowvec(t, X, dr_arr_scale(t, minus_one, mu_k));
        dr_arr z = dr_arr_matmul(t, xc, 0, L, 1);
        dr_arr sq = dr_arr_sum_rows(t, dr_arr_map(t, DR_FN_SQUARE, z));
        dr_real c = dr_add(t, dr_arr_index(t, alpha, ik), dr_arr_sum(t, q_k));
        g->terms[ik] = dr_arr_add_rowvec(t, dr_arr_reshape(t, dr_arr_scale(t, minus_half, sq), 2, n, 1),
                                         dr_arr_from_reals(t, 1, &c));
    }
    dr_real slse = dr_arr_sum(t, dr_arr_logsumexp_rows(t, dr_arr_concat(t, 1, (size_t)k, g->terms)));
    dr_real frob = dr_add(t, dr_arr_dot(t, Qd, Qd), dr_arr_dot(t, l, l));
    dr_real prior = dr_sub(t, dr_mul(t, dr_const(0.5 * g->gamma * g->gamma), frob),
                           dr_mul(t, dr_const(g->m), dr_arr_sum(t, q)));
    dr_real y = dr_sub(t, dr_sub(t, slse, dr_mul(t, dr_const((double)n), dr_arr_logsumexp(t, alpha))),
                       prior);
    if ((rc = dr_tape_status(t)) == DR_OK && (rc = dr_seed(t, y.idx, 1.0)) == DR_OK &&
        (rc = dr_reverse(t)) == DR_OK && (rc = dr_arr_adjoint(t, alpha.idx, g->galpha)) == DR_OK &&
        (rc = dr_arr_adjoint(t, mu.idx, g->gmu)) == DR_OK &&
        (rc = dr_arr_adjoint(t, q.idx, g->gq)) == DR_OK)
        rc = dr_arr_adjoint(t, l.idx, g->gl);
    g->out = y.val + constants(g);
    return rc == DR_OK ? 0 : gb_fail(err, "gmm", rc);
}

static void release(void *st)
{
    gmm *g = st;
    if (!g)
        return;
    dr_tape_free(g->t);
    free(g->alpha);
    free(g->mu);
    free(g->q);
    free(g->l);
    free(g->x);
    free(g->galpha);
    free(g->gmu);
    free(g->gq);
    free(g->gl);
    free(g->work);
    free(g->tri);
    free(g->terms);
    free(g);
}

static void *prepare(const json_t *input, char *err)
{
    gmm *g = calloc(1, sizeof *g);
    size_t d, k, n, r, c;
    if (!g) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (gb_get_size(input, "d", &d, err) || gb_get_size(input, "k", &k, err) ||
        gb_get_size(input, "n", &n, err) || gb_get_number(input, "gamma", &g->gamma, err) ||
        gb_get_number(input, "m", &g->m, err))
        goto fail;
    if (d < 2 || d > 4096 || k == 0 || k > 1000000 || n == 0 || n > INT32_MAX / d) {
        snprintf(err, GB_ERRLEN, "gmm: need d from 2 to 4096, k and n positive");
        goto fail;
    }
    g->d = d;
    g->k = k;
    g->n = n;
    g->lsz = d * (d - 1) / 2;
    const char *keys[4] = {"mu", "q", "l", "x"};
    double **dst[4] = {&g->mu, &g->q, &g->l, &g->x};
    size_t rows[4] = {k, k, k, n}, cols[4] = {d, d, g->lsz, d};
    for (int i = 0; i < 4; i++) {
        if (!(*dst[i] = gb_get_matrix(input, keys[i], &r, &c, err)))
            goto fail;
        if (r != rows[i] || c != cols[i]) {
            snprintf(err, GB_ERRLEN, "gmm: \"%s\" must be %zu x %zu", keys[i], rows[i], cols[i]);
            goto fail;
        }
    }
    if (!(g->alpha = gb_get_vector(input, "alpha", &r, err)))
        goto fail;
    if (r != k) {
        snprintf(err, GB_ERRLEN, "gmm: \"alpha\" must hold k numbers");
        goto fail;
    }
    g->t = dr_tape_new();
    g->galpha = malloc(k * sizeof(double));
    g->gmu = malloc(k * d * sizeof(double));
    g->gq = malloc(k * d * sizeof(double));
    g->gl = malloc(k * g->lsz * sizeof(double));
    g->work = malloc((3 * d + k) * sizeof(double));
    g->tri = malloc((d + g->lsz) * sizeof *g->tri);
    g->terms = malloc(k * sizeof *g->terms);
    if (!g->t || !g->galpha || !g->gmu || !g->gq || !g->gl || !g->work || !g->tri ||
        !g->terms) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    /* (exp q_j at (j, j), then l in the order of the input: column i
       below the diagonal, for i = 0, 1, ...) */
    for (size_t j = 0; j < d; j++)
        g->tri[j] = (int64_t)(j * d + j);
    for (size_t i = 0, li = d; i < d; i++)
        for (size_t j = i + 1; j < d; j++)
            g->tri[li++] = (int64_t)(j * d + i);
    return g;
fail:
    release(g);
    return NULL;
}

static json_t *out_objective(void *st, char *err)
{
    return gb_json_number(((gmm *)st)->out, err);
}

static json_t *out_jacobian(void *st, char *err)
{
    gmm *g = st;
    json_t *a = gb_json_vector(g->galpha, g->k, err);
    json_t *mu = a ? gb_json_matrix(g->gmu, g->k, g->d, err) : NULL;
    json_t *q = mu ? gb_json_matrix(g->gq, g->k, g->d, err) : NULL;
    json_t *l = q ? gb_json_matrix(g->gl, g->k, g->lsz, err) : NULL;
    if (!l) {
        json_decref(a);
        json_decref(mu);
        json_decref(q);
        return NULL;
    }
    json_t *o = json_pack("{s:o, s:o, s:o, s:o}", "alpha", a, "mu", mu, "q", q, "l", l);
    if (!o)
        snprintf(err, GB_ERRLEN, "out of memory");
    return o;
}

const gb_function gb_gmm_objective = {"gmm", "objective", prepare, objective, out_objective, release};
const gb_function gb_gmm_jacobian = {"gmm", "jacobian", prepare, jacobian, out_jacobian, release};
