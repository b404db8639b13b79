/* kmeans.c - the eval "kmeans": the cost sum_i min_j |C_j - P_i|^2, and
   the Newton direction J / H of the centroids, H the Hessian's diagonal
   (the Hessian is diagonal, so H times a vector of ones is its diagonal:
   one Hessian-vector product on a tape of order 2).  The minimum's
   derivative goes to the nearest centroid alone, so only the distance to it
   is recorded. */
#include <math.h>
#include <stdlib.h>

#include "evals.h"

typedef struct {
    size_t n, k, d;
    double *P, *C, *J, *H, *ones, cost;
    dr_real *c, *sq; /* k d centroids, n d squares */
    dr_tape *t;
} kmeans;

/* the nearest centroid to point p, and the squared distance to it */
static size_t nearest(const kmeans *m, const double *p, double *dist)
{
    size_t best = 0;
    double closest = INFINITY;
    for (size_t j = 0; j < m->k; j++) {
        const double *c = m->C + j * m->d;
        double s = 0;
        for (size_t l = 0; l < m->d; l++)
            s += (p[l] - c[l]) * (p[l] - c[l]);
        if (s < closest) {
            closest = s;
            best = j;
        }
    }
    *dist = closest;
    return best;
}

static void release(void *s)
{
    kmeans *m = s;
    if (!m)
        return;
    dr_tape_free(m->t);
    free(m->P);
    free(m->C);
    free(m->J);
    free(m->H);
    free(m->ones);
    free(m->c);
    free(m->sq);
    free(m);
}

static void *prepare(const json_t *input, char *err)
{
    kmeans *m = calloc(1, sizeof *m);
    size_t d2;
    if (!m) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (!(m->P = gb_get_matrix(input, "points", &m->n, &m->d, err)) ||
        !(m->C = gb_get_matrix(input, "centroids", &m->k, &d2, err)))
        goto fail;
    if (d2 != m->d) {
        snprintf(err, GB_ERRLEN, "kmeans: points and centroids differ in dimension");
        goto fail;
    }
    size_t kd = m->k * m->d, nd = m->n * m->d;
    m->t = dr_tape_new();
    m->J = malloc(kd * sizeof *m->J);
    m->H = malloc(kd * sizeof *m->H);
    m->ones = malloc(kd * sizeof *m->ones);
    m->c = malloc(kd * sizeof *m->c);
    m->sq = malloc(nd * sizeof *m->sq);
    if (!m->t || !m->J || !m->H || !m->ones || !m->c || !m->sq) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    dr_status st = dr_tape_set_order(m->t, 2);
    if (st != DR_OK) {
        gb_fail(err, "kmeans", st);
        goto fail;
    }
    for (size_t i = 0; i < kd; i++)
        m->ones[i] = 1.0;
    return m;
fail:
    release(m);
    return NULL;
}

static int cost(void *s, char *err)
{
    (void)err;
    kmeans *m = s;
    double sum = 0, dist;
    for (size_t i = 0; i < m->n; i++) {
        nearest(m, m->P + i * m->d, &dist);
        sum += dist;
    }
    m->cost = sum;
    return 0;
}

static int dir(void *s, char *err)
{
    kmeans *m = s;
    dr_tape *t = m->t;
    size_t d = m->d, kd = m->k * d;
    double dist;
    dr_status st = dr_tape_clear(t);
    if (st == DR_OK)
        st = dr_inputs(t, kd, m->C, m->c);
    if (st != DR_OK)
        return gb_fail(err, "kmeans", st);
    for (size_t i = 0; i < m->n; i++) {
        const double *p = m->P + i * d;
        const dr_real *c = m->c + nearest(m, p, &dist) * d;
        for (size_t l = 0; l < d; l++) {
            dr_real diff = dr_sub(t, c[l], dr_const(p[l]));
            m->sq[i * d + l] = dr_mul(t, diff, diff);
        }
    }
    dr_real y = dr_sumn(t, m->n * d, m->sq);
    if ((st = dr_gradient_range(t, y, m->c[0].idx, kd, m->J)) == DR_OK)
        st = dr_hvp(t, y, kd, m->c, m->ones, m->H);
    if (st != DR_OK)
        return gb_fail(err, "kmeans", st);
    for (size_t i = 0; i < kd; i++)
        m->J[i] /= m->H[i];
    m->cost = y.val;
    return 0;
}

static json_t *out_cost(void *s, char *err)
{
    return gb_json_number(((kmeans *)s)->cost, err);
}

static json_t *out_dir(void *s, char *err)
{
    kmeans *m = s;
    return gb_json_matrix(m->J, m->k, m->d, err);
}

const gb_function gb_kmeans_cost = {"kmeans", "cost", prepare, cost, out_cost, release};
const gb_function gb_kmeans_dir = {"kmeans", "dir", prepare, dir, out_dir, release};
