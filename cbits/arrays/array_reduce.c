/*
 * array_reduce.c - reductions: sum over all elements / each row / each
 * column, max over all elements, and the numerically stable softmax,
 * log_softmax and logsumexp (over a vector, or row-wise over a matrix).
 */
#include "arrays/array.h"

#include <math.h>

/* Records a scalar-valued node over x of value val, if x is active. */
static dr_real scalar_node(dr_tape *t, dr_arr_node *x, double val,
                           dr_arr_rev rev, dr_arr_fwd fwd, dr_arr_prim prim,
                           dr_arr_rev2 rev2, int kind, int64_t k, double aux)
{
    dr_real r = {val, DR_NONE};
    if (!x->active)
        return r;
    dr_arr_node *y = dr__arr_snew(t);
    if (!y)
        return r;
    y->x[0] = x;
    y->rev = rev;
    y->kind = kind;
    /* (sum and max are linear: max's element is fixed by the values) */
    y->so = rev2 ? DR_ARR_SO_OWN : DR_ARR_SO_LINEAR;
    y->rev2 = rev2;
    y->fwd = fwd;
    y->prim = prim;
    y->ip[0] = k;
    y->sv = aux;
    r.idx = dr__arr_spush(t, y, val);
    return r;
}

static dr_real nan_real(void)
{
    dr_real r = {NAN, DR_NONE};
    return r;
}

/* the k tangents of scalar-valued node y (zeroed by the entry) */
static double *stan(const dr_arr_node *y, dr_fsweep *f)
{
    return f->tan + (size_t)y->hdr.id * f->k;
}

/* ------------------------------------------------------------- sum all */

static void sum_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    if (X)
        for (int64_t i = 0; i < x->n; i++)
            X[i] += g;
}

static void sum_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *ty = stan(y, f);
    for (size_t d = 0; d < f->k; d++, Tx += x->n)
        ty[d] = dr__sum_doubles(Tx, (size_t)x->n);
}

static double sum_value(const dr_arr_node *x)
{
    return dr__sum_doubles(x->val, (size_t)x->n);
}

static double sum_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    return sum_value(y->x[0]);
}

static dr_real sum(dr_tape *t, dr_idx ix)
{
    if (!t)
        return nan_real();
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return nan_real();
    return scalar_node(t, x, sum_value(x), sum_rev, sum_fwd, sum_prim, NULL, DR_ARR_K_SUM, 0,
                       0.0);
}

DR_ARR_FORMS_sum(sum)
/* ------------------------------------------------- sum rows / columns */

/* ip[0] = 0: y_i = sum_j x_ij (length rows); 1: y_j = sum_i x_ij */
static void sumax_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    const double *Y = dr__arr_adj_in(s, y);
    int64_t r = x->rows, c = x->cols;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            X[i * c + j] += y->ip[0] ? Y[j] : Y[i];
}

/* the same sums of the tangent, per direction */
static void sumax_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    int64_t r = x->rows, c = x->cols;
    for (size_t d = 0; d < f->k; d++, T += y->n, Tx += x->n) {
        memset(T, 0, (size_t)y->n * sizeof(double));
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++)
                T[y->ip[0] ? j : i] += Tx[i * c + j];
    }
}

static double sumax_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *x = y->x[0];
    int64_t r = x->rows, c = x->cols;
    bool cols = y->ip[0] != 0;
    if (y->n)
        memset(y->val, 0, (size_t)y->n * sizeof(double));
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            y->val[cols ? j : i] += x->val[i * c + j];
    return 0.0;
}

static dr_arr_node *sum_axis(dr_tape *t, dr_idx ix, bool cols)
{
    if (!t)
        return NULL;
    dr_arr_node *x = dr__arr_get_mat(t, ix);
    if (!x)
        return NULL;
    int64_t r = x->rows, c = x->cols;
    dr_arr_node *y = dr__arr_new(t, 1, cols ? c : r, 1);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->ip[0] = cols;
    y->rev = sumax_rev;
    y->kind = DR_ARR_K_SUM_AXIS;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = sumax_fwd;
    y->prim = sumax_prim;
    y->active = x->active;
    sumax_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static dr_arr_node *sum_rows(dr_tape *t, dr_idx m)
{
    return sum_axis(t, m, false);
}
DR_ARR_FORMS_sum_rows(sum_rows)

static dr_arr_node *sum_cols(dr_tape *t, dr_idx m)
{
    return sum_axis(t, m, true);
}
DR_ARR_FORMS_sum_cols(sum_cols)
/* ------------------------------------------------------------------ max */

static void max_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    double *X = dr__arr_adj_for(s, y->x[0]);
    if (X)
        X[y->ip[0]] += g;
}

/* the tangent of the element the maximum took */
static void max_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *ty = stan(y, f);
    for (size_t d = 0; d < f->k; d++)
        ty[d] = Tx[d * (size_t)x->n + (size_t)y->ip[0]];
}

/* the position of the first maximal element (x not empty), NaNs skipped
   unless all are */
static int64_t argmax(const dr_arr_node *x)
{
    int64_t k = 0;
    while (k < x->n - 1 && isnan(x->val[k]))
        k++;
    for (int64_t i = k + 1; i < x->n; i++)
        if (x->val[i] > x->val[k])
            k = i;
    return k;
}

/* the maximum, and where the rules find it */
static double max_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    y->ip[0] = argmax(y->x[0]);
    return y->x[0]->val[y->ip[0]];
}

static dr_real amax(dr_tape *t, dr_idx ix)
{
    if (!t)
        return nan_real();
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return nan_real();
    if (x->n == 0) {
        dr__fail(t, DR_ESHAPE);
        return nan_real();
    }
    int64_t k = argmax(x);
    return scalar_node(t, x, x->val[k], max_rev, max_fwd, max_prim, NULL, DR_ARR_K_MAX, k,
                       0.0);
}

DR_ARR_FORMS_max(amax)
/* ------------------------------------------- softmax family, row-wise */

/* log sum exp of x[0..n-1], stable; -inf when n == 0 */
static double lse(const double *x, int64_t n)
{
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > m)
            m = x[i];
    if (isinf(m)) { /* +inf wins; all -inf (or NaN) elements: -inf or NaN */
        if (m > 0)
            return m;
        for (int64_t i = 0; i < n; i++)
            if (isnan(x[i]))
                return x[i];
        return m;
    }
    double acc = 0.0;
    for (int64_t i = 0; i < n; i++)
        acc += exp(x[i] - m);
    return m + log(acc);
}

/* The maximum m of x[0..n-1] and sum_i exp(x_i - m), for the weights
   exp(x_i - m) / sum of logsumexp's reverse rule: exp(x_i - lse) would lose
   the digits of lse below the ulp of x (a factor e^(ulp/2) in every
   weight: 3 where |x| ~ 2e17).  false if m is not finite (the weights are
   then exp(x_i - lse)). */
static bool lse_parts(const double *x, int64_t n, double *m, double *acc)
{
    *m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > *m)
            *m = x[i];
    if (!isfinite(*m))
        return false;
    *acc = 0.0;
    for (int64_t i = 0; i < n; i++)
        *acc += exp(x[i] - *m);
    return true;
}

/* d logsumexp / d x_j: the softmax weight of x_j, from lse_parts' m and acc
   when it succeeded, else exp(x_j - l) with l the logsumexp */
static inline double lse_weight(double xj, bool parts, double m, double acc,
                                double l)
{
    return parts ? exp(xj - m) / acc : exp(xj - l);
}

/* a vector is one row; a matrix has rows rows of cols elements */
static void rows_of(const dr_arr_node *x, int64_t *R, int64_t *L)
{
    if (x->rank == 1) {
        *R = 1;
        *L = x->n;
    } else {
        *R = x->rows;
        *L = x->cols;
    }
}

enum { SM_SOFTMAX, SM_LOGSOFTMAX, SM_LSE_ROWS };

static void sm_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    int64_t R, L;
    rows_of(x, &R, &L);
    const double *Y = dr__arr_adj_in(s, y), *yv = y->val, *xv = x->val;
    for (int64_t i = 0; i < R; i++) {
        double *Xi = X + i * L;
        const double *xi = xv + i * L;
        switch (y->ip[0]) {
        case SM_SOFTMAX: {
            const double *yi = yv + i * L, *gi = Y + i * L;
            double d = 0.0;
            for (int64_t j = 0; j < L; j++)
                d += gi[j] * yi[j];
            for (int64_t j = 0; j < L; j++)
                Xi[j] += yi[j] * (gi[j] - d);
            break;
        }
        case SM_LOGSOFTMAX: {
            const double *yi = yv + i * L, *gi = Y + i * L;
            double sg = 0.0;
            for (int64_t j = 0; j < L; j++)
                sg += gi[j];
            for (int64_t j = 0; j < L; j++)
                Xi[j] += gi[j] - exp(yi[j]) * sg;
            break;
        }
        default: { /* logsumexp per row: y_i */
            double gi = Y[i], m, acc;
            if (gi == 0.0)
                break;
            bool parts = lse_parts(xi, L, &m, &acc);
            for (int64_t j = 0; j < L; j++)
                Xi[j] += gi * lse_weight(xi[j], parts, m, acc, yv[i]);
            break;
        }
        }
    }
}

/*
 * Per row, with s the softmax of the row (the reverse kernel's weights):
 * softmax dy_j = y_j (dx_j - <y, dx>); log_softmax dy_j = dx_j - <s, dx>,
 * s_j = exp(y_j); logsumexp dy = <s, dx>, s_j = lse_weight.
 */
static void sm_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    int64_t R, L;
    rows_of(x, &R, &L);
    const double *yv = y->val, *xv = x->val;
    for (size_t d = 0; d < f->k; d++, T += y->n, Tx += x->n)
        for (int64_t i = 0; i < R; i++) {
            const double *ti = Tx + i * L, *xi = xv + i * L;
            switch (y->ip[0]) {
            case SM_SOFTMAX: {
                const double *yi = yv + i * L;
                double *Ti = T + i * L, dot = 0.0;
                for (int64_t j = 0; j < L; j++)
                    dot += yi[j] * ti[j];
                for (int64_t j = 0; j < L; j++)
                    Ti[j] = yi[j] * (ti[j] - dot);
                break;
            }
            case SM_LOGSOFTMAX: {
                const double *yi = yv + i * L;
                double *Ti = T + i * L, dot = 0.0;
                for (int64_t j = 0; j < L; j++)
                    dot += exp(yi[j]) * ti[j];
                for (int64_t j = 0; j < L; j++)
                    Ti[j] = ti[j] - dot;
                break;
            }
            default: { /* logsumexp per row */
                double m = 0.0, acc = 0.0, dot = 0.0;
                bool parts = lse_parts(xi, L, &m, &acc);
                for (int64_t j = 0; j < L; j++)
                    if (ti[j] != 0.0)
                        dot += ti[j] * lse_weight(xi[j], parts, m, acc, yv[i]);
                T[i] = dot;
                break;
            }
            }
        }
}

static double sm_prim(dr_arr_node *y, const dr_oplog *lg);

/*
 * Second-order terms (array.h, "second order"), per row, y_bar the
 * adjoint of plane 0 held fixed, along direction d: softmax's x_bar =
 * y (y_bar - <y_bar, y>) changes by dy (y_bar - <y_bar, y>) - y <y_bar,
 * dy>; log_softmax's x_bar = y_bar - exp(y) sum(y_bar) by -exp(y) dy
 * sum(y_bar); logsumexp's x_bar = y_bar s (s its weights) by y_bar
 * s (dx - dy).
 */
static void sm_rev2(dr_arr_node *y, dr_sweep *s, double g, size_t d)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    const double *ty = dr__arr_tan_dir(y, d), *tx = dr__arr_tan_dir(x, d);
    if (!ty || !tx)
        return;
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    int64_t R, L;
    rows_of(x, &R, &L);
    const double *Y = dr__arr_adj0(s, y), *yv = y->val, *xv = x->val;
    for (int64_t i = 0; i < R; i++) {
        double *Xi = X + i * L;
        switch (y->ip[0]) {
        case SM_SOFTMAX: {
            const double *yi = yv + i * L, *gi = Y + i * L, *ti = ty + i * L;
            double dg = 0.0, dt = 0.0;
            for (int64_t j = 0; j < L; j++) {
                dg += gi[j] * yi[j];
                dt += gi[j] * ti[j];
            }
            for (int64_t j = 0; j < L; j++)
                Xi[j] += ti[j] * (gi[j] - dg) - yi[j] * dt;
            break;
        }
        case SM_LOGSOFTMAX: {
            const double *yi = yv + i * L, *gi = Y + i * L, *ti = ty + i * L;
            double sg = 0.0;
            for (int64_t j = 0; j < L; j++)
                sg += gi[j];
            if (sg != 0.0)
                for (int64_t j = 0; j < L; j++)
                    Xi[j] -= exp(yi[j]) * ti[j] * sg;
            break;
        }
        default: { /* logsumexp per row: y_i */
            double gi = Y[i], m, acc;
            const double *xi = xv + i * L, *txi = tx + i * L;
            if (gi == 0.0)
                break;
            bool parts = lse_parts(xi, L, &m, &acc);
            for (int64_t j = 0; j < L; j++)
                Xi[j] += gi * lse_weight(xi[j], parts, m, acc, yv[i]) *
                         (txi[j] - ty[i]);
            break;
        }
        }
    }
}

static dr_arr_node *softmax_family(dr_tape *t, dr_idx ix, int kind)
{
    if (!t)
        return NULL;
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return NULL;
    if (kind == SM_LSE_ROWS && x->rank != 2) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    int64_t R, L;
    rows_of(x, &R, &L);
    dr_arr_node *y = kind == SM_LSE_ROWS ? dr__arr_new(t, 1, R, 1)
                                         : dr__arr_new(t, x->rank, x->rows,
                                                       x->cols);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->ip[0] = kind;
    y->rev = sm_rev;
    y->kind = DR_ARR_K_SOFTMAX;
    y->so = DR_ARR_SO_OWN;
    y->rev2 = sm_rev2;
    y->fwd = sm_fwd;
    y->prim = sm_prim;
    y->active = x->active;
    sm_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static double sm_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *x = y->x[0];
    int kind = (int)y->ip[0];
    int64_t R, L;
    rows_of(x, &R, &L);
    for (int64_t i = 0; i < R; i++) {
        const double *xi = x->val + i * L;
        if (kind == SM_LSE_ROWS) {
            y->val[i] = lse(xi, L);
            continue;
        }
        double *yi = y->val + i * L;
        double m = -INFINITY;
        for (int64_t j = 0; j < L; j++)
            if (xi[j] > m)
                m = xi[j];
        if (!isfinite(m)) { /* infinities: the general formula */
            double l = lse(xi, L);
            for (int64_t j = 0; j < L; j++)
                yi[j] = kind == SM_SOFTMAX ? exp(xi[j] - l) : xi[j] - l;
            continue;
        }
        double acc = 0.0;
        for (int64_t j = 0; j < L; j++)
            acc += exp(xi[j] - m);
        if (kind == SM_SOFTMAX) {
            double inv = 1.0 / acc;
            for (int64_t j = 0; j < L; j++)
                yi[j] = exp(xi[j] - m) * inv;
        } else {
            double l = log(acc);
            for (int64_t j = 0; j < L; j++)
                yi[j] = (xi[j] - m) - l;
        }
    }
    return 0.0;
}

static dr_arr_node *softmax(dr_tape *t, dr_idx x)
{
    return softmax_family(t, x, SM_SOFTMAX);
}
DR_ARR_FORMS_softmax(softmax)

static dr_arr_node *log_softmax(dr_tape *t, dr_idx x)
{
    return softmax_family(t, x, SM_LOGSOFTMAX);
}
DR_ARR_FORMS_log_softmax(log_softmax)

static dr_arr_node *logsumexp_rows(dr_tape *t, dr_idx m)
{
    return softmax_family(t, m, SM_LSE_ROWS);
}
DR_ARR_FORMS_logsumexp_rows(logsumexp_rows)
/* ----------------------------------------------- logsumexp, all elements */

static void lse_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    double m, acc;
    if (!X)
        return;
    bool parts = lse_parts(x->val, x->n, &m, &acc);
    for (int64_t i = 0; i < x->n; i++)
        X[i] += g * lse_weight(x->val[i], parts, m, acc, y->sv);
}

/* x_bar = g s changes by g s (dx - dy) along direction d (as sm_rev2) */
static void lse_rev2(dr_arr_node *y, dr_sweep *s, double g, size_t d)
{
    dr_arr_node *x = y->x[0];
    const double *tx = dr__arr_tan_dir(x, d);
    if (!tx)
        return;
    double *X = dr__arr_adj_for(s, x);
    double m, acc, ty = dr__htan(s->h, y->hdr.id, d);
    if (!X)
        return;
    bool parts = lse_parts(x->val, x->n, &m, &acc);
    for (int64_t i = 0; i < x->n; i++)
        X[i] += g * lse_weight(x->val[i], parts, m, acc, y->sv) * (tx[i] - ty);
}

static void lse_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double m = 0.0, acc = 0.0, *ty = stan(y, f);
    bool parts = lse_parts(x->val, x->n, &m, &acc);
    for (size_t d = 0; d < f->k; d++, Tx += x->n) {
        double dot = 0.0;
        for (int64_t i = 0; i < x->n; i++)
            if (Tx[i] != 0.0)
                dot += Tx[i] * lse_weight(x->val[i], parts, m, acc, y->sv);
        ty[d] = dot;
    }
}

/* the logsumexp, kept for the rules too */
static double lse_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    y->sv = lse(y->x[0]->val, y->x[0]->n);
    return y->sv;
}

static dr_real logsumexp(dr_tape *t, dr_idx ix)
{
    if (!t)
        return nan_real();
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return nan_real();
    double l = lse(x->val, x->n);
    if (x->n == 0) {
        dr_real r = {l, DR_NONE};
        return r;
    }
    return scalar_node(t, x, l, lse_rev, lse_fwd, lse_prim, lse_rev2, DR_ARR_K_LSE, 0,
                       l);
}

DR_ARR_FORMS_logsumexp(logsumexp)
