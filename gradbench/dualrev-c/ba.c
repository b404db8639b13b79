/* ba.c - the eval "ba": bundle adjustment as in ADBench.  n cameras of 11
   parameters (an angle-axis rotation, the centre, the focal length, the
   principal point, two radial distortion coefficients), m points, and p
   observations of point i mod m by camera i mod n with a weight w_i and a
   feature f_i; the residuals are w_i (project(cam, X) - f_i) (two per
   observation) and 1 - w_i^2 (one each).  The input gives one camera,
   point, weight and feature, which are copied n, m and p times here (and
   every copy is computed).  The objective is plain arithmetic.

   The Jacobian is sparse: a residual of observation i depends on its
   camera's 11 parameters, its point's 3 and its weight.  Observations
   are recorded BATCH at a time, each with 15 inputs of its own, on one
   tape (cleared and reused: it allocates only the first time), through a
   recorder in nodes of at most two arguments.  As no two observations
   of a batch share an input, one reverse sweep of three directions
   (dr_vjp_vec), direction d seeding every observation's residual d,
   gives every 3 x 15 block of the batch; the blocks are written into
   the rows of a compressed sparse row matrix.
   The eval asks for the first 30 entries of its rows, columns and values
   lists and the last. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evals.h"

#define NCAM 11
#define NBLK (NCAM + 3 + 1) /* the parameters one observation depends on */
#define SHOWN 30            /* the entries of each list the eval checks, and the last */
#define BATCH 256           /* observations on the tape at a time */

typedef struct {
    size_t n, m, p;
    double *cams, *X, *w, *feats; /* 11 n, 3 m, p, 2 p */
    int32_t *obs;                 /* 2 p: camera, point */
    double *err, *werr;           /* 2 p, p */
    int32_t *rows, *cols;         /* 3 p + 1, 31 p */
    double *vals;                 /* 31 p */
    double *v, *Ybar, *Xbar;      /* a batch's parameters, seeds (3 x 3 BATCH), derivatives */
    dr_real *q, *e;               /* a batch's parameters and residuals on the tape */
    dr_tape *t;
} ba;

/* a statement of one term: f(a) with value v and derivative d */
static dr_real fn(dr_rec *r, dr_real a, double v, double d)
{
    return dr_rec_stmt(r, dr_ex_fn(dr_ex(a), v, d));
}

/* a b - c d, in three nodes of two arguments */
static dr_real cross1(dr_rec *r, dr_real a, dr_real b, dr_real c, dr_real d)
{
    return dr_rec_sub(r, dr_rec_mul(r, a, b), dr_rec_mul(r, c, d));
}

/* a^2 + b^2, one statement of two arguments */
static dr_real sumsq(dr_rec *r, dr_real a, dr_real b)
{
    return dr_rec_stmt(r, dr_ex_add(dr_ex_mul(dr_ex(a), dr_ex(a)), dr_ex_mul(dr_ex(b), dr_ex(b))));
}

/* the residuals of one observation into e[0], e[1] (the reprojection
   error) and e[2] (the weight's), from the 15 parameters q: the camera,
   the point, the weight.  Every node has at most two arguments (the
   recorder's inline nodes; statements of more would be n-ary nodes,
   recorded and swept out of line). */
static void residuals(dr_rec *r, const dr_real *q, const double *feat, dr_real *e)
{
    const dr_real *rot = q, *C = q + 3, *f = q + 6, *u = q + 7, *k = q + 9,
                  *X = q + NCAM, *w = q + NCAM + 3;
    dr_real p[3], xc[3];
    for (int i = 0; i < 3; i++)
        p[i] = dr_rec_sub(r, X[i], C[i]);
    dr_real sq = dr_rec_stmt(r, dr_ex_add(dr_ex(sumsq(r, rot[0], rot[1])),
                                          dr_ex_mul(dr_ex(rot[2]), dr_ex(rot[2]))));
    if (sq.val != 0) {
        /* Rodrigues: p cos t + (a x p) sin t + a (a . p)(1 - cos t), a the unit axis */
        double th = sqrt(sq.val);
        dr_real theta = fn(r, sq, th, 0.5 / th);
        dr_real c = fn(r, theta, cos(th), -sin(th)), s = fn(r, theta, sin(th), cos(th));
        dr_real a[3];
        for (int i = 0; i < 3; i++)
            a[i] = dr_rec_div(r, rot[i], theta);
        dr_real dot = dr_rec_add(r, dr_rec_add(r, dr_rec_mul(r, a[0], p[0]), dr_rec_mul(r, a[1], p[1])),
                                 dr_rec_mul(r, a[2], p[2]));
        dr_real tmp = dr_rec_stmt(r, dr_ex_mul(dr_ex(dot), dr_ex_sub(dr_ex_const(1.0), dr_ex(c))));
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, l = (i + 2) % 3;
            dr_real cr = cross1(r, a[j], p[l], a[l], p[j]);
            xc[i] = dr_rec_add(r, dr_rec_add(r, dr_rec_mul(r, p[i], c), dr_rec_mul(r, cr, s)),
                               dr_rec_mul(r, a[i], tmp));
        }
    } else {
        /* no rotation: the first-order term p + rot x p */
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, l = (i + 2) % 3;
            xc[i] = dr_rec_add(r, p[i], cross1(r, rot[j], p[l], rot[l], p[j]));
        }
    }
    dr_real pr[2];
    for (int i = 0; i < 2; i++)
        pr[i] = dr_rec_div(r, xc[i], xc[2]);
    dr_real rsq = sumsq(r, pr[0], pr[1]);
    /* L = 1 + k0 rsq + k1 rsq^2 */
    dr_real L = dr_rec_add(r, dr_rec_stmt(r, dr_ex_add(dr_ex_const(1.0), dr_ex_mul(dr_ex(k[0]), dr_ex(rsq)))),
                           dr_rec_stmt(r, dr_ex_mul(dr_ex_mul(dr_ex(k[1]), dr_ex(rsq)), dr_ex(rsq))));
    for (int i = 0; i < 2; i++) {
        dr_real proj = dr_rec_add(r, dr_rec_mul(r, dr_rec_mul(r, pr[i], L), *f), u[i]);
        e[i] = dr_rec_stmt(r, dr_ex_mul(dr_ex(*w), dr_ex_sub(dr_ex(proj), dr_ex_const(feat[i]))));
    }
    e[2] = dr_rec_stmt(r, dr_ex_sub(dr_ex_const(1.0), dr_ex_mul(dr_ex(*w), dr_ex(*w))));
}

/* the 15 parameters of observation i */
static void params(const ba *b, size_t i, double *q)
{
    const double *cam = b->cams + NCAM * (size_t)b->obs[2 * i], *X = b->X + 3 * (size_t)b->obs[2 * i + 1];
    for (int j = 0; j < NCAM; j++)
        q[j] = cam[j];
    for (int j = 0; j < 3; j++)
        q[NCAM + j] = X[j];
    q[NCAM + 3] = b->w[i];
}

/* the residuals of one observation in plain arithmetic (the objective):
   what residuals computes, from camera cam, point X and weight w */
static void residuals_val(const double *cam, const double *X, double w, const double *feat,
                          double *e)
{
    const double *rot = cam, *C = cam + 3, *k = cam + 9;
    double p[3], xc[3];
    for (int i = 0; i < 3; i++)
        p[i] = X[i] - C[i];
    double sq = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
    if (sq != 0) {
        double th = sqrt(sq), c = cos(th), s = sin(th), a[3];
        for (int i = 0; i < 3; i++)
            a[i] = rot[i] / th;
        double tmp = (a[0] * p[0] + a[1] * p[1] + a[2] * p[2]) * (1.0 - c);
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, l = (i + 2) % 3;
            xc[i] = p[i] * c + (a[j] * p[l] - a[l] * p[j]) * s + a[i] * tmp;
        }
    } else {
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, l = (i + 2) % 3;
            xc[i] = p[i] + (rot[j] * p[l] - rot[l] * p[j]);
        }
    }
    double pr0 = xc[0] / xc[2], pr1 = xc[1] / xc[2], rsq = pr0 * pr0 + pr1 * pr1;
    double L = 1.0 + k[0] * rsq + k[1] * rsq * rsq;
    e[0] = w * (pr0 * L * cam[6] + cam[7] - feat[0]);
    e[1] = w * (pr1 * L * cam[6] + cam[8] - feat[1]);
    e[2] = 1.0 - w * w;
}

static int objective(void *st, char *err)
{
    (void)err;
    ba *b = st;
    for (size_t i = 0; i < b->p; i++) {
        double e[3];
        residuals_val(b->cams + NCAM * (size_t)b->obs[2 * i], b->X + 3 * (size_t)b->obs[2 * i + 1],
                      b->w[i], b->feats + 2 * i, e);
        b->err[2 * i] = e[0];
        b->err[2 * i + 1] = e[1];
        b->werr[i] = e[2];
    }
    return 0;
}

static int jacobian(void *st, char *err)
{
    ba *b = st;
    dr_tape *t = b->t;
    size_t p = b->p;
    int32_t pt0 = (int32_t)(NCAM * b->n), w0 = (int32_t)(NCAM * b->n + 3 * b->m);
    b->rows[0] = 0;
    for (size_t i0 = 0; i0 < p; i0 += BATCH) {
        size_t k = p - i0 < BATCH ? p - i0 : BATCH;
        dr_rec r;
        for (size_t i = 0; i < k; i++)
            params(b, i0 + i, b->v + NBLK * i);
        dr_status rc = dr_tape_clear(t);
        if (rc == DR_OK)
            rc = dr_inputs(t, NBLK * k, b->v, b->q);
        if (rc == DR_OK)
            rc = dr_rec_begin(t, &r);
        if (rc != DR_OK)
            return gb_fail(err, "ba", rc);
        for (size_t i = 0; i < k; i++)
            residuals(&r, b->q + NBLK * i, b->feats + 2 * (i0 + i), b->e + 3 * i);
        rc = dr_rec_end(&r);
        /* direction d seeds residual d of every observation of the batch:
           they share no parameter, so each parameter's adjoint is the
           derivative of its own observation's residual d (Ybar is 3 x 3 k) */
        memset(b->Ybar, 0, 9 * k * sizeof *b->Ybar);
        for (size_t i = 0; i < k; i++)
            for (size_t d = 0; d < 3; d++)
                b->Ybar[3 * k * d + 3 * i + d] = 1.0;
        if (rc == DR_OK)
            rc = dr_vjp_vec(t, 3 * k, b->e, 3, b->Ybar, NBLK * k, b->q, b->Xbar);
        if (rc != DR_OK)
            return gb_fail(err, "ba", rc);
        for (size_t ii = 0; ii < k; ii++) {
            size_t i = i0 + ii;
            const double *J0 = b->Xbar + NBLK * ii, *J2 = J0 + 2 * NBLK * k;
            /* rows 2i and 2i + 1: the camera's columns, the point's, the weight's */
            int32_t cam = NCAM * b->obs[2 * i], pt = pt0 + 3 * b->obs[2 * i + 1];
            for (size_t row = 0; row < 2; row++) {
                size_t at = NBLK * (2 * i + row);
                const double *Jr = J0 + row * NBLK * k;
                b->rows[2 * i + row + 1] = (int32_t)(at + NBLK);
                for (int j = 0; j < NCAM; j++)
                    b->cols[at + (size_t)j] = cam + j;
                for (int j = 0; j < 3; j++)
                    b->cols[at + NCAM + (size_t)j] = pt + j;
                b->cols[at + NBLK - 1] = w0 + (int32_t)i;
                for (int j = 0; j < NBLK; j++)
                    b->vals[at + (size_t)j] = Jr[j];
            }
            /* row 2p + i: the weight's residual, after all the reprojection rows */
            size_t at = 2 * NBLK * p + i;
            b->rows[2 * p + i + 1] = (int32_t)(at + 1);
            b->cols[at] = w0 + (int32_t)i;
            b->vals[at] = J2[NBLK - 1];
        }
    }
    return 0;
}

static void release(void *st)
{
    ba *b = st;
    if (!b)
        return;
    dr_tape_free(b->t);
    free(b->cams);
    free(b->X);
    free(b->w);
    free(b->feats);
    free(b->obs);
    free(b->err);
    free(b->werr);
    free(b->rows);
    free(b->cols);
    free(b->vals);
    free(b->v);
    free(b->Ybar);
    free(b->Xbar);
    free(b->q);
    free(b->e);
    free(b);
}

/* field key of input, an array of exactly n numbers, into v */
static int fixed(const json_t *input, const char *key, size_t n, double *v, char *err)
{
    size_t k;
    double *x = gb_get_vector(input, key, &k, err);
    if (!x)
        return -1;
    if (k != n) {
        snprintf(err, GB_ERRLEN, "ba: \"%s\" must hold %zu numbers", key, n);
        free(x);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = x[i];
    free(x);
    return 0;
}

static void *prepare(const json_t *input, char *err)
{
    ba *b = calloc(1, sizeof *b);
    double cam[NCAM], X[3], feat[2], w;
    if (!b) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (gb_get_size(input, "n", &b->n, err) || gb_get_size(input, "m", &b->m, err) ||
        gb_get_size(input, "p", &b->p, err) || gb_get_number(input, "w", &w, err) ||
        fixed(input, "cam", NCAM, cam, err) || fixed(input, "x", 3, X, err) ||
        fixed(input, "feat", 2, feat, err))
        goto fail;
    size_t n = b->n, m = b->m, p = b->p;
    if (n == 0 || m == 0 || p == 0 || n > INT32_MAX / 32 || m > INT32_MAX / 32 ||
        p > INT32_MAX / 32 || NCAM * n + 3 * m + p > INT32_MAX) {
        snprintf(err, GB_ERRLEN, "ba: \"n\", \"m\" and \"p\" must be positive and below 2^26");
        goto fail;
    }
    b->t = dr_tape_new();
    b->cams = malloc(NCAM * n * sizeof *b->cams);
    b->X = malloc(3 * m * sizeof *b->X);
    b->w = malloc(p * sizeof *b->w);
    b->feats = malloc(2 * p * sizeof *b->feats);
    b->obs = malloc(2 * p * sizeof *b->obs);
    b->err = malloc(2 * p * sizeof *b->err);
    b->werr = malloc(p * sizeof *b->werr);
    b->rows = malloc((3 * p + 1) * sizeof *b->rows);
    b->cols = malloc((2 * NBLK + 1) * p * sizeof *b->cols);
    b->vals = malloc((2 * NBLK + 1) * p * sizeof *b->vals);
    size_t k = p < BATCH ? p : BATCH;
    b->v = malloc(NBLK * k * sizeof *b->v);
    b->Ybar = calloc(3 * 3 * k, sizeof *b->Ybar);
    b->Xbar = malloc(3 * NBLK * k * sizeof *b->Xbar);
    b->q = malloc(NBLK * k * sizeof *b->q);
    b->e = malloc(3 * k * sizeof *b->e);
    if (!b->t || !b->cams || !b->X || !b->w || !b->feats || !b->obs || !b->err ||
        !b->werr || !b->rows || !b->cols || !b->vals || !b->v || !b->Ybar || !b->Xbar ||
        !b->q || !b->e) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n * NCAM; i++)
        b->cams[i] = cam[i % NCAM];
    for (size_t i = 0; i < 3 * m; i++)
        b->X[i] = X[i % 3];
    for (size_t i = 0; i < p; i++) {
        b->w[i] = w;
        b->feats[2 * i] = feat[0];
        b->feats[2 * i + 1] = feat[1];
        b->obs[2 * i] = (int32_t)(i % n);
        b->obs[2 * i + 1] = (int32_t)(i % m);
    }
    return b;
fail:
    release(b);
    return NULL;
}

static json_t *out_objective(void *st, char *err)
{
    ba *b = st;
    json_t *e = gb_json_vector(b->err, 2, err);
    json_t *w = e ? gb_json_number(b->werr[0], err) : NULL;
    if (!w) {
        json_decref(e);
        return NULL;
    }
    json_t *o = json_pack("{s:{s:o, s:I}, s:{s:o, s:I}}", "reproj_error", "elements", e,
                          "repeated", (json_int_t)b->p, "w_err", "element", w, "repeated",
                          (json_int_t)b->p);
    if (!o)
        snprintf(err, GB_ERRLEN, "out of memory");
    return o;
}

/* the first SHOWN entries of a list of n integers and the last */
static json_t *shown_ints(const int32_t *x, size_t n)
{
    json_t *a = json_array();
    size_t k = n < SHOWN ? n : SHOWN;
    for (size_t i = 0; a && i < k; i++)
        json_array_append_new(a, json_integer(x[i]));
    if (a)
        json_array_append_new(a, json_integer(x[n - 1]));
    return a;
}

static json_t *out_jacobian(void *st, char *err)
{
    ba *b = st;
    size_t nnz = (2 * NBLK + 1) * b->p, k = nnz < SHOWN ? nnz : SHOWN;
    double v[SHOWN + 1];
    for (size_t i = 0; i < k; i++)
        v[i] = b->vals[i];
    v[k] = b->vals[nnz - 1];
    json_t *vals = gb_json_vector(v, k + 1, err);
    if (!vals)
        return NULL;
    json_t *o = json_pack("{s:o, s:o, s:o}", "rows", shown_ints(b->rows, 3 * b->p + 1), "cols",
                          shown_ints(b->cols, nnz), "vals", vals);
    if (!o)
        snprintf(err, GB_ERRLEN, "out of memory");
    return o;
}

const gb_function gb_ba_objective = {"ba", "objective", prepare, objective, out_objective, release};
const gb_function gb_ba_jacobian = {"ba", "jacobian", prepare, jacobian, out_jacobian, release};
