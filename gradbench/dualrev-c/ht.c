/* ht.c - the eval "ht": hand tracking as in ADBench.  A skinned hand model
   (bones with parents, base transforms, vertices with per-bone weights)
   is posed by 26 parameters theta (a global rotation and translation, and
   the angles of the five fingers' joints); the residuals are the
   differences between measured points and the posed model's points: a
   vertex each ("simple"), or a point of a triangle given by barycentric
   coordinates us ("complicated", us not empty).  The Jacobian has a row
   per residual and a column per theta, after two columns (complicated)
   for the derivatives in the point's own two coordinates us.

   One routine computes the residuals on dr_real values through a
   recorder: every transform entry, posed vertex coordinate (one n-ary
   node over its bones' transform entries, the global rotation folded
   into those) and residual is one statement.
   With theta constant it records nothing and is the primal.  For the
   Jacobian theta is 26 tape inputs, and two more inputs d0 = d1 = 0 are
   added to every point's u0 and u1: a residual depends on its own point's
   u alone, so its derivative in d0 (d1) is its derivative in its u0 (u1),
   and the Jacobian is 28 (26) columns wide whatever the number of points;
   dr_jacobian takes it in forward sweeps of ten directions over the
   tape. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evals.h"

#define NTHETA 26
#define MIN_BONES 22 /* the pose puts the fingers' angles on bones up to 21 */

typedef struct {
    size_t nb, nv, npts, ntri, ncols;
    int complicated, mirrored;
    int *parents, *corr, *tri;            /* nb, npts, 3 ntri */
    double *base_rel, *inv_abs;           /* 16 nb each, row-major 4 x 4 */
    double *pos, *weights;                /* 4 nv, nv nb */
    double *points, *us;                  /* 3 npts, 2 npts */
    double theta[NTHETA];
    double *err, *J;                      /* 3 npts, 3 npts x ncols */
    dr_real *x;                           /* the inputs: d0, d1, theta */
    dr_real *rel, *absl, *tf;             /* 16 nb each */
    dr_real *verts, *res;                 /* 3 nv, 3 npts */
    dr_idx *sid;                          /* a vertex's sum: 4 nb + 1 terms */
    double *sd;
    dr_tape *t;
} ht;

static dr_real fn(dr_rec *r, dr_real a, double v, double d)
{
    return dr_rec_stmt(r, dr_ex_fn(dr_ex(a), v, d));
}

/* c = a b for 4 x 4 matrices of dr_real (row-major); a or b may be a
   constant matrix (ka, kb non-NULL: its values), one statement an entry */
static void mat4(dr_rec *r, const dr_real *a, const double *ka, const dr_real *b,
                 const double *kb, dr_real *c)
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            dr_expr e = dr_ex_const(0.0);
            for (int k = 0; k < 4; k++) {
                dr_expr x = ka ? dr_ex_const(ka[4 * i + k]) : dr_ex(a[4 * i + k]);
                dr_expr y = kb ? dr_ex_const(kb[4 * k + j]) : dr_ex(b[4 * k + j]);
                e = dr_ex_add(e, dr_ex_mul(x, y));
            }
            c[4 * i + j] = dr_rec_stmt(r, e);
        }
}

/* m (3 x 3, row-major) = Rz(a[1]) Ry(a[2]) Rx(a[0]), the rotation of a
   joint's Euler angles (x, z, y) */
static void euler(dr_rec *r, const dr_real *a, dr_real *m)
{
    dr_real cx = fn(r, a[0], cos(a[0].val), -sin(a[0].val)),
            sx = fn(r, a[0], sin(a[0].val), cos(a[0].val)),
            cz = fn(r, a[1], cos(a[1].val), -sin(a[1].val)),
            sz = fn(r, a[1], sin(a[1].val), cos(a[1].val)),
            cy = fn(r, a[2], cos(a[2].val), -sin(a[2].val)),
            sy = fn(r, a[2], sin(a[2].val), cos(a[2].val));
    /* Rz Ry = [[cz cy, -sz, cz sy], [sz cy, cz, sz sy], [-sy, 0, cy]], then
       times Rx = [[1, 0, 0], [0, cx, -sx], [0, sx, cx]] */
    dr_expr zy[9] = {
        dr_ex_mul(dr_ex(cz), dr_ex(cy)), dr_ex_neg(dr_ex(sz)), dr_ex_mul(dr_ex(cz), dr_ex(sy)),
        dr_ex_mul(dr_ex(sz), dr_ex(cy)), dr_ex(cz),            dr_ex_mul(dr_ex(sz), dr_ex(sy)),
        dr_ex_neg(dr_ex(sy)),            dr_ex_const(0.0),     dr_ex(cy)};
    for (int i = 0; i < 3; i++) {
        m[3 * i] = dr_rec_stmt(r, zy[3 * i]);
        m[3 * i + 1] = dr_rec_stmt(r, dr_ex_add(dr_ex_mul(zy[3 * i + 1], dr_ex(cx)),
                                                dr_ex_mul(zy[3 * i + 2], dr_ex(sx))));
        m[3 * i + 2] = dr_rec_stmt(r, dr_ex_sub(dr_ex_mul(zy[3 * i + 2], dr_ex(cx)),
                                                dr_ex_mul(zy[3 * i + 1], dr_ex(sx))));
    }
}

/* m (3 x 3, row-major) = the rotation of the angle-axis vector a
   (identity below a norm of 1e-4) */
static void angle_axis(dr_rec *r, const dr_real *a, dr_real *m)
{
    double sqn = a[0].val * a[0].val + a[1].val * a[1].val + a[2].val * a[2].val;
    if (sqrt(sqn) < 1e-4) {
        for (int i = 0; i < 9; i++)
            m[i] = dr_const(i % 4 == 0 ? 1.0 : 0.0);
        return;
    }
    dr_real sq = dr_rec_stmt(r, dr_ex_add(dr_ex_add(dr_ex_mul(dr_ex(a[0]), dr_ex(a[0])),
                                                    dr_ex_mul(dr_ex(a[1]), dr_ex(a[1]))),
                                          dr_ex_mul(dr_ex(a[2]), dr_ex(a[2]))));
    double nv = sqrt(sq.val);
    dr_real norm = fn(r, sq, nv, 0.5 / nv);
    dr_real c = fn(r, norm, cos(nv), -sin(nv)), s = fn(r, norm, sin(nv), cos(nv));
    dr_real u[3];
    for (int i = 0; i < 3; i++)
        u[i] = dr_rec_stmt(r, dr_ex_div(dr_ex(a[i]), dr_ex(norm)));
    dr_expr omc = dr_ex_sub(dr_ex_const(1.0), dr_ex(c));
    /* m = c I + (1 - c) u u^T + s [u]x */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            dr_expr e = dr_ex_mul(dr_ex_mul(dr_ex(u[i]), dr_ex(u[j])), omc);
            if (i == j)
                e = dr_ex_add(e, dr_ex(c));
            else {
                int k = 3 - i - j; /* the third axis */
                /* [u]x (i, j) = -eps(i, j, k) u_k */
                double sign = ((j - i + 3) % 3 == 1) ? -1.0 : 1.0;
                e = dr_ex_add(e, dr_ex_scale(sign, dr_ex_mul(dr_ex(u[k]), dr_ex(s))));
            }
            m[3 * i + j] = dr_rec_stmt(r, e);
        }
}

/* the residuals into h->res from the inputs h->x (d0, d1, theta; constants
   or tape inputs) through recorder r */
static void residuals(ht *h, dr_rec *r)
{
    size_t nb = h->nb, nv = h->nv;
    const dr_real *d = h->x, *th = h->x + 2;
    dr_real zero = dr_const(0.0);
    /* the pose: bone i's Euler angles (x, z, y) */
    for (size_t i = 0; i < nb; i++) {
        dr_real ang[3] = {zero, zero, zero}, R[9], tr[16];
        /* finger f (0..4) has bones 1 + 4 f + 1 .. 3 (the first with two
           angles), the wrist and the fingers' first bones none */
        if (i >= 2 && i < 22 && (i - 2) % 4 != 3) {
            size_t f = (i - 2) / 4, k = (i - 2) % 4;
            size_t at = 6 + 4 * f + (k == 0 ? 0 : k + 1);
            ang[0] = th[at];
            if (k == 0)
                ang[1] = th[at + 1];
        }
        euler(r, ang, R);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                tr[4 * a + b] = a < 3 && b < 3 ? R[3 * a + b] : dr_const(a == b ? 1.0 : 0.0);
        dr_real *rel = h->rel + 16 * i, *ab = h->absl + 16 * i;
        mat4(r, NULL, h->base_rel + 16 * i, tr, NULL, rel);
        if (h->parents[i] < 0)
            memcpy(ab, rel, 16 * sizeof *ab);
        else
            mat4(r, h->absl + 16 * (size_t)h->parents[i], NULL, rel, NULL, ab);
        mat4(r, ab, NULL, NULL, h->inv_abs + 16 * i, h->tf + 16 * i);
    }
    /* the global rotation G (and the mirror M, x negated) folded into
       every bone's transform: G M T_b (its top 3 rows), so that a posed
       vertex, G M sum_b w_b T_b p + t = sum_b w_b (G M T_b) p + t, is one
       node a coordinate */
    dr_real G[9];
    angle_axis(r, th, G);
    for (size_t b = 0; b < nb; b++) {
        const dr_real *T = h->tf + 16 * b;
        dr_real *GT = h->rel + 16 * b; /* (the relatives are no longer needed) */
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) {
                double m = h->mirrored ? -1.0 : 1.0;
                dr_expr e = dr_ex_add(dr_ex_add(dr_ex_scale(m, dr_ex_mul(dr_ex(G[3 * j]), dr_ex(T[k]))),
                                                dr_ex_mul(dr_ex(G[3 * j + 1]), dr_ex(T[4 + k]))),
                                      dr_ex_mul(dr_ex(G[3 * j + 2]), dr_ex(T[8 + k])));
                GT[4 * j + k] = dr_rec_stmt(r, e);
            }
    }
    /* every vertex: the translation plus the sum over its bones of weight
       times transform times base position, one node a coordinate */
    for (size_t v = 0; v < nv; v++) {
        const double *p = h->pos + 4 * v, *w = h->weights + nb * v;
        for (int j = 0; j < 3; j++) {
            dr_sum s;
            dr_sum_init(&s, 4 * nb + 1, h->sid, h->sd);
            dr_sum_add(&s, dr_ex(th[3 + j]));
            for (size_t b = 0; b < nb; b++) {
                if (w[b] == 0)
                    continue;
                const dr_real *T = h->rel + 16 * b + 4 * j;
                for (int k = 0; k < 4; k++)
                    dr_sum_add(&s, dr_ex_scale(w[b] * p[k], dr_ex(T[k])));
            }
            h->verts[3 * v + (size_t)j] = dr_rec_sum(r, &s);
        }
    }
    /* the residuals */
    for (size_t i = 0; i < h->npts; i++) {
        const double *pt = h->points + 3 * i;
        if (!h->complicated) {
            const dr_real *q = h->verts + 3 * (size_t)h->corr[i];
            for (int j = 0; j < 3; j++)
                h->res[3 * i + (size_t)j] = dr_rec_stmt(r, dr_ex_sub(dr_ex_const(pt[j]), dr_ex(q[j])));
            continue;
        }
        const int *tv = h->tri + 3 * (size_t)h->corr[i];
        const dr_real *a = h->verts + 3 * (size_t)tv[0], *b = h->verts + 3 * (size_t)tv[1],
                      *c = h->verts + 3 * (size_t)tv[2];
        dr_expr u0 = dr_ex_add(dr_ex_const(h->us[2 * i]), dr_ex(d[0]));
        dr_expr u1 = dr_ex_add(dr_ex_const(h->us[2 * i + 1]), dr_ex(d[1]));
        for (int j = 0; j < 3; j++) {
            /* u0 a + u1 b + (1 - u0 - u1) c = c + u0 (a - c) + u1 (b - c) */
            dr_expr hp = dr_ex_add(dr_ex_add(dr_ex_mul(u0, dr_ex_sub(dr_ex(a[j]), dr_ex(c[j]))),
                                             dr_ex_mul(u1, dr_ex_sub(dr_ex(b[j]), dr_ex(c[j])))),
                                   dr_ex(c[j]));
            h->res[3 * i + (size_t)j] = dr_rec_stmt(r, dr_ex_sub(dr_ex_const(pt[j]), hp));
        }
    }
}

/* the residuals at theta, the inputs active (tape inputs) or not */
static int run(ht *h, int active, char *err)
{
    double x0[2 + NTHETA] = {0.0, 0.0};
    memcpy(x0 + 2, h->theta, sizeof h->theta);
    dr_rec r;
    dr_status rc = dr_tape_clear(h->t);
    if (rc != DR_OK)
        return gb_fail(err, "ht", rc);
    if (active) {
        /* d0, d1 only where there are us (else they are constants 0) */
        size_t first = h->complicated ? 0 : 2;
        h->x[0] = h->x[1] = dr_const(0.0);
        rc = dr_inputs(h->t, 2 + NTHETA - first, x0 + first, h->x + first);
    } else {
        for (size_t i = 0; i < 2 + NTHETA; i++)
            h->x[i] = dr_const(x0[i]);
    }
    if (rc == DR_OK)
        rc = dr_rec_begin(h->t, &r);
    if (rc != DR_OK)
        return gb_fail(err, "ht", rc);
    residuals(h, &r);
    rc = dr_rec_end(&r);
    for (size_t i = 0; i < 3 * h->npts; i++)
        h->err[i] = h->res[i].val;
    return rc == DR_OK ? 0 : gb_fail(err, "ht", rc);
}

static int objective(void *st, char *err)
{
    return run(st, 0, err);
}

static int jacobian(void *st, char *err)
{
    ht *h = st;
    if (run(h, 1, err))
        return -1;
    size_t first = h->complicated ? 0 : 2;
    dr_status rc = dr_jacobian(h->t, 3 * h->npts, h->res, h->ncols, h->x + first, h->J);
    return rc == DR_OK ? 0 : gb_fail(err, "ht", rc);
}

static void release(void *st)
{
    ht *h = st;
    if (!h)
        return;
    dr_tape_free(h->t);
    free(h->parents);
    free(h->corr);
    free(h->tri);
    free(h->base_rel);
    free(h->inv_abs);
    free(h->pos);
    free(h->weights);
    free(h->points);
    free(h->us);
    free(h->err);
    free(h->J);
    free(h->x);
    free(h->rel);
    free(h->absl);
    free(h->tf);
    free(h->verts);
    free(h->res);
    free(h->sid);
    free(h->sd);
    free(h);
}

/* an array of integers (field key of obj) into a new array of *n ints:
   or NULL with a message */
static int *get_ints(const json_t *obj, const char *key, size_t *n, char *err)
{
    json_t *a = json_object_get(obj, key);
    if (!json_is_array(a)) {
        snprintf(err, GB_ERRLEN, "ht: input field \"%s\": an array is required", key);
        return NULL;
    }
    *n = json_array_size(a);
    int *v = malloc((*n ? *n : 1) * sizeof *v);
    if (!v) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) {
        json_t *x = json_array_get(a, i);
        if (!json_is_integer(x) || json_integer_value(x) < INT32_MIN ||
            json_integer_value(x) > INT32_MAX) {
            snprintf(err, GB_ERRLEN, "ht: input field \"%s\": element %zu is not an integer", key, i);
            free(v);
            return NULL;
        }
        v[i] = (int)json_integer_value(x);
    }
    return v;
}

/* a matrix of exactly rows x cols numbers (rows = 0: any number of rows,
   into *got) */
static double *get_mat(const json_t *obj, const char *key, size_t rows, size_t cols,
                       size_t *got, char *err)
{
    size_t r, c;
    double *m = gb_get_matrix(obj, key, &r, &c, err);
    if (!m)
        return NULL;
    if ((rows && r != rows) || c != cols) {
        snprintf(err, GB_ERRLEN, "ht: \"%s\" must have %zu rows of %zu numbers", key,
                 rows ? rows : r, cols);
        free(m);
        return NULL;
    }
    if (got)
        *got = r;
    return m;
}

/* n 4 x 4 matrices (field key of obj) into 16 n numbers, row-major */
static double *get_mats4(const json_t *obj, const char *key, size_t n, char *err)
{
    json_t *a = json_object_get(obj, key);
    if (!json_is_array(a) || json_array_size(a) != n) {
        snprintf(err, GB_ERRLEN, "ht: \"%s\" must hold %zu 4 x 4 matrices", key, n);
        return NULL;
    }
    double *v = malloc(16 * n * sizeof *v);
    if (!v) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *wrap = json_pack("{s:O}", key, json_array_get(a, i));
        double *m = wrap ? get_mat(wrap, key, 4, 4, NULL, err) : NULL;
        json_decref(wrap);
        if (!m) {
            snprintf(err, GB_ERRLEN, "ht: \"%s\" must hold %zu 4 x 4 matrices", key, n);
            free(v);
            return NULL;
        }
        memcpy(v + 16 * i, m, 16 * sizeof *m);
        free(m);
    }
    return v;
}

static void *prepare(const json_t *input, char *err)
{
    ht *h = calloc(1, sizeof *h);
    size_t n, k;
    if (!h) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    const json_t *data = json_object_get(input, "data");
    const json_t *model = json_object_get(data, "model");
    if (!json_is_object(data) || !json_is_object(model)) {
        snprintf(err, GB_ERRLEN, "ht: the input needs \"data\" with a \"model\"");
        goto fail;
    }
    double *theta = gb_get_vector(input, "theta", &n, err);
    if (!theta)
        goto fail;
    if (n != NTHETA) {
        snprintf(err, GB_ERRLEN, "ht: \"theta\" must hold %d numbers", NTHETA);
        free(theta);
        goto fail;
    }
    memcpy(h->theta, theta, sizeof h->theta);
    free(theta);
    if (!(h->parents = get_ints(model, "parents", &h->nb, err)))
        goto fail;
    size_t nb = h->nb;
    if (nb < MIN_BONES || nb > 4096) {
        snprintf(err, GB_ERRLEN, "ht: the model needs %d to 4096 bones", MIN_BONES);
        goto fail;
    }
    for (size_t i = 0; i < nb; i++)
        if (h->parents[i] < -1 || h->parents[i] >= (int)i) {
            snprintf(err, GB_ERRLEN, "ht: bone %zu's parent must be -1 or an earlier bone", i);
            goto fail;
        }
    json_t *mir = json_object_get(model, "is_mirrored");
    if (!json_is_boolean(mir)) {
        snprintf(err, GB_ERRLEN, "ht: \"is_mirrored\" must be true or false");
        goto fail;
    }
    h->mirrored = json_is_true(mir);
    if (!(h->base_rel = get_mats4(model, "base_relatives", nb, err)) ||
        !(h->inv_abs = get_mats4(model, "inverse_base_absolutes", nb, err)) ||
        !(h->pos = get_mat(model, "base_positions", 0, 4, &h->nv, err)) ||
        !(h->weights = get_mat(model, "weights", h->nv, nb, NULL, err)) ||
        !(h->corr = get_ints(data, "correspondences", &h->npts, err)) ||
        !(h->points = get_mat(data, "points", h->npts, 3, NULL, err)))
        goto fail;
    if (h->nv > INT32_MAX / 4 || h->npts == 0 || h->npts > INT32_MAX / 64) {
        snprintf(err, GB_ERRLEN, "ht: too many vertices, or no points");
        goto fail;
    }
    json_t *us = json_object_get(input, "us");
    if (!json_is_array(us)) {
        snprintf(err, GB_ERRLEN, "ht: \"us\" must be an array");
        goto fail;
    }
    h->complicated = json_array_size(us) > 0;
    size_t limit = h->nv;
    if (h->complicated) {
        /* triangles: rows of three vertices */
        json_t *ta = json_object_get(model, "triangles");
        k = json_is_array(ta) ? json_array_size(ta) : 0;
        if (!json_is_array(ta) || !(h->tri = malloc((3 * k + 1) * sizeof *h->tri))) {
            snprintf(err, GB_ERRLEN, "ht: \"triangles\" must be rows of 3 vertices");
            goto fail;
        }
        for (size_t i = 0; i < k; i++) {
            json_t *row = json_array_get(ta, i);
            if (!json_is_array(row) || json_array_size(row) != 3) {
                snprintf(err, GB_ERRLEN, "ht: \"triangles\" must be rows of 3 vertices");
                goto fail;
            }
            for (size_t j = 0; j < 3; j++) {
                json_t *x = json_array_get(row, j);
                if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                    json_integer_value(x) >= (json_int_t)h->nv) {
                    snprintf(err, GB_ERRLEN, "ht: triangle %zu: not 3 vertices of the model", i);
                    goto fail;
                }
                h->tri[3 * i + j] = (int)json_integer_value(x);
            }
        }
        h->ntri = k;
        limit = k;
        if (!(h->us = get_mat(input, "us", h->npts, 2, NULL, err)))
            goto fail;
    }
    for (size_t i = 0; i < h->npts; i++)
        if (h->corr[i] < 0 || (size_t)h->corr[i] >= limit) {
            snprintf(err, GB_ERRLEN, "ht: correspondence %zu is not a %s of the model", i,
                     h->complicated ? "triangle" : "vertex");
            goto fail;
        }
    size_t npts = h->npts;
    h->ncols = NTHETA + (h->complicated ? 2 : 0);
    h->t = dr_tape_new();
    h->err = malloc(3 * npts * sizeof *h->err);
    h->J = malloc(3 * npts * h->ncols * sizeof *h->J);
    h->x = malloc((2 + NTHETA) * sizeof *h->x);
    h->rel = malloc(16 * nb * sizeof *h->rel);
    h->absl = malloc(16 * nb * sizeof *h->absl);
    h->tf = malloc(16 * nb * sizeof *h->tf);
    h->verts = malloc((3 * h->nv + 1) * sizeof *h->verts);
    h->res = malloc(3 * npts * sizeof *h->res);
    h->sid = malloc((4 * nb + 1) * sizeof *h->sid);
    h->sd = malloc((4 * nb + 1) * sizeof *h->sd);
    if (!h->t || !h->err || !h->J || !h->x || !h->rel || !h->absl || !h->tf || !h->verts ||
        !h->res || !h->sid || !h->sd) {
        snprintf(err, GB_ERRLEN, "out of memory");
        goto fail;
    }
    return h;
fail:
    release(h);
    return NULL;
}

static json_t *out_objective(void *st, char *err)
{
    ht *h = st;
    return gb_json_vector(h->err, 3 * h->npts, err);
}

static json_t *out_jacobian(void *st, char *err)
{
    ht *h = st;
    return gb_json_matrix(h->J, 3 * h->npts, h->ncols, err);
}

const gb_function gb_ht_objective = {"ht", "objective", prepare, objective, out_objective, release};
const gb_function gb_ht_jacobian = {"ht", "jacobian", prepare, jacobian, out_jacobian, release};
