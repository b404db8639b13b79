/*
 * array_index.c - structure: indexing a scalar out of an array, building a
 * vector from scalars, slices (blocks), concatenation, gather and
 * scatter-add with index arrays, and reshape.
 *
 * Internally a vector of length n is an n x 1 matrix, so one block / row
 * kernel serves both ranks.
 */
#include "arrays/array.h"

#include <math.h>

/* ---------------------------------------------------------------- index */

static void index_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    double *X = dr__arr_adj_for(s, y->x[0]);
    if (X)
        X[y->ip[0]] += g;
}

/* the scalar's tangent is the element's */
static void index_fwd(dr_arr_node *y, dr_fsweep *f)
{
    const double *Tx = dr__arr_tan(y->x[0]);
    if (!Tx)
        return;
    double *ty = f->tan + (size_t)y->hdr.id * f->k;
    for (size_t d = 0; d < f->k; d++)
        ty[d] = Tx[d * (size_t)y->x[0]->n + (size_t)y->ip[0]];
}

static double index_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    return y->x[0]->val[y->ip[0]];
}

static dr_real index_flat(dr_tape *t, dr_arr_node *x, int64_t i)
{
    dr_real r = {x->val[i], DR_NONE};
    if (!x->active)
        return r;
    dr_arr_node *y = dr__arr_snew(t);
    if (!y)
        return r;
    y->x[0] = x;
    y->ip[0] = i;
    y->rev = index_rev;
    y->kind = DR_ARR_K_INDEX;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = index_fwd;
    y->prim = index_prim;
    r.idx = dr__arr_spush(t, y, r.val);
    return r;
}

static dr_real index1(dr_tape *t, dr_idx ix, int64_t i)
{
    dr_real r = {NAN, DR_NONE};
    if (!t)
        return r;
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return r;
    if (i < 0 || i >= x->n) {
        dr__fail(t, DR_ERANGE);
        return r;
    }
    return index_flat(t, x, i);
}

static dr_real index2(dr_tape *t, dr_idx ix, int64_t i, int64_t j)
{
    dr_real r = {NAN, DR_NONE};
    if (!t)
        return r;
    dr_arr_node *x = dr__arr_get_mat(t, ix);
    if (!x)
        return r;
    if (i < 0 || i >= x->rows || j < 0 || j >= x->cols) {
        dr__fail(t, DR_ERANGE);
        return r;
    }
    return index_flat(t, x, i * x->cols + j);
}

DR_ARR_FORMS_index(index1)
DR_ARR_FORMS_index2(index2)
/* ---------------------------------------------------- from scalars */

static void build_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    const int64_t *rel = y->aux;
    const double *Y = dr__arr_adj_in(s, y);
    for (int64_t i = 0; i < y->n; i++)
        if (rel[i] >= 0 && Y[i] != 0.0)
            dr__arr_sacc(s, rel[i], Y[i]);
}

/* element i's tangent is scalar rel[i]'s */
static void build_fwd(dr_arr_node *y, dr_fsweep *f)
{
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    const int64_t *rel = y->aux;
    for (size_t d = 0; d < f->k; d++, T += y->n)
        for (int64_t i = 0; i < y->n; i++)
            T[i] = dr__arr_stan(f, rel[i], d);
}

/* at replay, the active elements' new values (a constant keeps its own);
   recording wrote them all from the scalars given */
static double build_prim(dr_arr_node *y, const dr_oplog *lg)
{
    const int64_t *rel = y->aux;
    if (lg)
        for (int64_t i = 0; i < y->n; i++)
            if (rel[i] >= 0)
                y->val[i] = lg[rel[i]].v;
    return 0.0;
}

static dr_arr_node *build(dr_tape *t, size_t n, const double *vals,
                          const dr_idx *ids, const dr_real *xs)
{
    if (!t)
        return NULL;
    if (n && ((!xs && (!vals || !ids)))) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    if (n > (size_t)INT32_MAX) {
        dr__fail(t, DR_ERANGE);
        return NULL;
    }
    bool active = false;
    for (size_t i = 0; i < n; i++) {
        int64_t r;
        if (!dr__rel_arg(t, xs ? xs[i].idx : ids[i], &r)) {
            dr__fail(t, DR_EINVAL);
            return NULL;
        }
        active |= r >= 0;
    }
    int64_t *rel = NULL;
    if (active) {
        rel = dr__arena_alloc(t, n * sizeof *rel);
        if (!rel)
            return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, 1, (int64_t)n, 1);
    if (!y)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        y->val[i] = xs ? xs[i].val : vals[i];
        if (rel)
            dr__rel_arg(t, xs ? xs[i].idx : ids[i], &rel[i]);
        /* a scalar given a value other than its node's: no replay
           (record.h) */
        if (rel && dr__order2(t) && !dr__logged_as(t, rel[i], y->val[i]))
            y->hdr.replay = NULL;
    }
    y->aux = rel;
    y->naux = (int64_t)n;
    y->rev = build_rev;
    y->kind = DR_ARR_K_BUILD;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = build_fwd;
    y->prim = build_prim;
    y->active = active;
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_from_reals(build)
/* --------------------------------------------------------------- blocks */

/* y = x[r0 .. r0+nr, c0 .. c0+nc] with x seen as rows x cols */
static void block_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    int64_t r0 = y->ip[0], c0 = y->ip[1], C = x->cols;
    const double *Y = dr__arr_adj_in(s, y);
    for (int64_t i = 0; i < y->rows; i++) {
        double *Xi = X + (r0 + i) * C + c0;
        const double *Yi = Y + i * y->cols;
        for (int64_t j = 0; j < y->cols; j++)
            Xi[j] += Yi[j];
    }
}

/* the block of x's tangent, per direction */
static void block_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    int64_t r0 = y->ip[0], c0 = y->ip[1], C = x->cols, nc = y->cols;
    for (size_t d = 0; d < f->k; d++, T += y->n, Tx += x->n)
        for (int64_t i = 0; i < y->rows; i++)
            dr__copy_doubles(T + i * nc, Tx + (r0 + i) * C + c0, (size_t)nc);
}

static double block_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *x = y->x[0];
    int64_t r0 = y->ip[0], c0 = y->ip[1], nc = y->cols;
    for (int64_t i = 0; i < y->rows; i++)
        if (nc)
            dr__copy_doubles(y->val + i * nc, x->val + (r0 + i) * x->cols + c0,
                             (size_t)nc);
    return 0.0;
}

static dr_arr_node *block(dr_tape *t, dr_idx ix, bool two_d, int64_t r0,
                          int64_t nr, int64_t c0, int64_t nc)
{
    if (!t)
        return NULL;
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return NULL;
    if (two_d && x->rank != 2) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    if (!two_d) {
        c0 = 0;
        nc = x->cols;
    }
    if (r0 < 0 || nr < 0 || r0 > x->rows || nr > x->rows - r0 || c0 < 0 ||
        nc < 0 || c0 > x->cols || nc > x->cols - c0) {
        dr__fail(t, DR_ERANGE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, x->rank, nr, nc);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->ip[0] = r0;
    y->ip[1] = c0;
    y->rev = block_rev;
    y->kind = DR_ARR_K_BLOCK;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = block_fwd;
    y->prim = block_prim;
    y->active = x->active;
    block_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static dr_arr_node *slice(dr_tape *t, dr_idx x, int64_t start, int64_t len)
{
    return block(t, x, false, start, len, 0, 0);
}
DR_ARR_FORMS_slice(slice)

static dr_arr_node *slice2(dr_tape *t, dr_idx m, int64_t r0, int64_t nr,
                           int64_t c0, int64_t nc)
{
    return block(t, m, true, r0, nr, c0, nc);
}
DR_ARR_FORMS_slice2(slice2)
/* --------------------------------------------------------------- concat */

/* aux: the n operand records; ip[0] = axis.  Axis 0 is plain concatenation
   of the row-major element sequences; axis 1 interleaves rows. */
static void concat_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node **xs = y->aux;
    const double *Y = dr__arr_adj_in(s, y);
    int64_t off = 0;
    for (int64_t k = 0; k < y->naux; k++) {
        dr_arr_node *x = xs[k];
        double *X = dr__arr_adj_for(s, x);
        if (X) {
            if (y->ip[0] == 0) {
                for (int64_t i = 0; i < x->n; i++)
                    X[i] += Y[off + i];
            } else {
                for (int64_t i = 0; i < x->rows; i++)
                    for (int64_t j = 0; j < x->cols; j++)
                        X[i * x->cols + j] += Y[i * y->cols + off + j];
            }
        }
        off += y->ip[0] == 0 ? x->n : x->cols;
    }
}

/* the operands' tangents side by side, as their values (zero for an
   operand without one) */
static void concat_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node **xs = y->aux;
    bool any = false;
    for (int64_t q = 0; q < y->naux; q++)
        any |= dr__arr_tan(xs[q]) != NULL;
    if (!any)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    for (size_t d = 0; d < f->k; d++) {
        double *Td = T + d * (size_t)y->n;
        int64_t off = 0;
        for (int64_t q = 0; q < y->naux; q++) {
            dr_arr_node *x = xs[q];
            const double *tx = dr__arr_tan(x);
            if (tx)
                tx += d * (size_t)x->n;
            if (y->ip[0] == 0) {
                if (x->n && tx)
                    dr__copy_doubles(Td + off, tx, (size_t)x->n);
                else if (x->n)
                    memset(Td + off, 0, (size_t)x->n * sizeof(double));
            } else {
                for (int64_t i = 0; i < x->rows; i++)
                    for (int64_t j = 0; j < x->cols; j++)
                        Td[i * y->cols + off + j] =
                            tx ? tx[i * x->cols + j] : 0.0;
            }
            off += y->ip[0] == 0 ? x->n : x->cols;
        }
    }
}

static double concat_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    dr_arr_node **xs = y->aux;
    int64_t off = 0, cols = y->cols;
    for (int64_t k = 0; k < y->naux; k++) {
        const dr_arr_node *x = xs[k];
        if (y->ip[0] == 0) {
            if (x->n)
                dr__copy_doubles(y->val + off, x->val, (size_t)x->n);
            off += x->n;
        } else {
            for (int64_t i = 0; i < x->rows; i++)
                if (x->cols)
                    dr__copy_doubles(y->val + i * cols + off,
                                     x->val + i * x->cols, (size_t)x->cols);
            off += x->cols;
        }
    }
    return 0.0;
}

static dr_arr_node *concat(dr_tape *t, int axis, size_t n, const dr_idx *ids,
                           const dr_arr *hs)
{
    if (!t)
        return NULL;
    if (n == 0 || (!ids && !hs) || (axis != 0 && axis != 1) ||
        n > (size_t)INT32_MAX) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    dr_arr_node **xs = dr__arena_alloc(t, n * sizeof *xs);
    if (!xs)
        return NULL;
    int64_t rows = 0, cols = 0;
    bool active = false;
    for (size_t k = 0; k < n; k++) {
        dr_arr_node *x = dr__arr_get(t, ids ? ids[k] : hs[k].idx);
        if (!x)
            return NULL;
        xs[k] = x;
        active |= x->active;
        if (x->rank != xs[0]->rank || (axis == 1 && x->rank != 2) ||
            (axis == 0 && x->cols != xs[0]->cols) ||
            (axis == 1 && x->rows != xs[0]->rows)) {
            dr__fail(t, DR_ESHAPE);
            return NULL;
        }
        if (axis == 0) {
            rows += x->rows;
            cols = x->cols;
        } else {
            rows = x->rows;
            cols += x->cols;
        }
        if (rows > INT32_MAX || cols > INT32_MAX) {
            dr__fail(t, DR_ERANGE);
            return NULL;
        }
    }
    dr_arr_node *y = dr__arr_new(t, xs[0]->rank, rows, cols);
    if (!y)
        return NULL;
    y->aux = xs;
    y->naux = (int64_t)n;
    y->pargs = dr__arena_alloc(t, n * sizeof *y->pargs);
    for (size_t k = 0; y->pargs && k < n; k++)
        y->pargs[k] = xs[k]->hdr.id;
    y->ip[0] = axis;
    y->rev = concat_rev;
    y->kind = DR_ARR_K_CONCAT;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = concat_fwd;
    y->prim = concat_prim;
    y->active = active;
    concat_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_concat(concat)
/* ------------------------------------------------------ gather, scatter */

/* Rows of length C = x->cols (1 for a vector).  aux: the copied indices.
   ip[0] = 0: gather, y row k = x row idx[k]; 1: scatter-add, y row idx[k]
   += x row k. */
static void gs_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    const int64_t *idx = y->aux;
    const double *Y = dr__arr_adj_in(s, y);
    int64_t C = x->cols;
    for (int64_t k = 0; k < y->naux; k++) {
        double *Xr = y->ip[0] ? X + k * C : X + idx[k] * C;
        const double *Yr = y->ip[0] ? Y + idx[k] * C : Y + k * C;
        for (int64_t j = 0; j < C; j++)
            Xr[j] += Yr[j];
    }
}

/* the same gather or scatter-add of x's tangent rows */
static void gs_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    const int64_t *idx = y->aux;
    int64_t C = x->cols;
    for (size_t d = 0; d < f->k; d++, T += y->n, Tx += x->n) {
        if (y->ip[0]) { /* scatter-add */
            memset(T, 0, (size_t)y->n * sizeof(double));
            for (int64_t q = 0; q < y->naux; q++)
                for (int64_t j = 0; j < C; j++)
                    T[idx[q] * C + j] += Tx[q * C + j];
        } else {
            for (int64_t q = 0; q < y->naux; q++)
                if (C)
                    dr__copy_doubles(T + q * C, Tx + idx[q] * C, (size_t)C);
        }
    }
}

static double gs_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *x = y->x[0];
    const int64_t *cp = y->aux;
    int64_t C = x->cols, nidx = y->naux;
    if (y->ip[0]) {
        if (y->n)
            memset(y->val, 0, (size_t)y->n * sizeof(double));
        for (int64_t k = 0; k < nidx; k++)
            for (int64_t j = 0; j < C; j++)
                y->val[cp[k] * C + j] += x->val[k * C + j];
    } else {
        for (int64_t k = 0; k < nidx; k++)
            if (C)
                dr__copy_doubles(y->val + k * C, x->val + cp[k] * C,
                                 (size_t)C);
    }
    return 0.0;
}

static dr_arr_node *gather_scatter(dr_tape *t, dr_idx ix, bool scatter,
                                   int64_t count, const int64_t *idx)
{
    if (!t)
        return NULL;
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return NULL;
    /* gather: count indices into x's rows; scatter: x's rows indices into
       count output rows */
    int64_t nidx = scatter ? x->rows : count;
    int64_t bound = scatter ? count : x->rows;
    if (count < 0 || count > INT32_MAX) {
        dr__fail(t, DR_ERANGE);
        return NULL;
    }
    if (nidx && !idx) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    for (int64_t k = 0; k < nidx; k++)
        if (idx[k] < 0 || idx[k] >= bound) {
            dr__fail(t, DR_ERANGE);
            return NULL;
        }
    int64_t *cp = dr__arena_alloc(t, (size_t)nidx * sizeof *cp);
    if (!cp)
        return NULL;
    if (nidx)
        memcpy(cp, idx, (size_t)nidx * sizeof *cp);
    dr_arr_node *y = dr__arr_new(t, x->rank, count, x->cols);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->aux = cp;
    y->naux = nidx;
    y->ip[0] = scatter;
    y->rev = gs_rev;
    y->kind = DR_ARR_K_GATHER_SCATTER;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = gs_fwd;
    y->prim = gs_prim;
    y->active = x->active;
    gs_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static dr_arr_node *gather(dr_tape *t, dr_idx x, size_t n,
                           const int64_t *idx)
{
    int64_t cnt = n > (size_t)INT64_MAX ? -1 : (int64_t)n;
    return gather_scatter(t, x, false, cnt, idx);
}
DR_ARR_FORMS_gather(gather)

static dr_arr_node *scatter(dr_tape *t, dr_idx x, int64_t out_len,
                            const int64_t *idx)
{
    return gather_scatter(t, x, true, out_len, idx);
}
DR_ARR_FORMS_scatter(scatter)
/* -------------------------------------------------------------- reshape */

static void reshape_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    double *X = dr__arr_adj_for(s, y->x[0]);
    const double *Y = dr__arr_adj_in(s, y);
    if (X)
        for (int64_t i = 0; i < y->n; i++)
            X[i] += Y[i];
}

/* the same numbers in another shape: share x's tangent (valid for this
   sweep, as x's values are shared for the tape's life) */
static void reshape_fwd(dr_arr_node *y, dr_fsweep *f)
{
    (void)f;
    y->tcur = dr__arr_tan(y->x[0]);
}

/* the operand's values themselves (a borrowed input's memory may have
   changed places at a replay) */
static double reshape_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    y->val = y->x[0]->val;
    return 0.0;
}

static dr_arr_node *reshape(dr_tape *t, dr_idx ix, int rank, int64_t rows,
                            int64_t cols)
{
    if (!t)
        return NULL;
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return NULL;
    if ((rank != 1 && rank != 2) || (rank == 1 && cols != 1)) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    if (!dr__arr_dims_ok(rows, cols)) {
        dr__fail(t, DR_ERANGE);
        return NULL;
    }
    if (rows * cols != x->n) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, rank, 0, 0); /* values are shared */
    if (!y)
        return NULL;
    y->rows = rows;
    y->cols = cols;
    y->n = x->n;
    y->x[0] = x;
    y->rev = reshape_rev;
    y->kind = DR_ARR_K_RESHAPE;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = reshape_fwd;
    y->prim = reshape_prim;
    y->active = x->active;
    reshape_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_reshape(reshape)
