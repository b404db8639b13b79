/*
 * array_linalg.c - dense linear algebra through OpenBLAS: dot, matrix-vector
 * and vector-matrix products, matrix-matrix products with transpose flags,
 * outer product, transpose, and a x + y (axpy).  Each reverse rule is the transposed product,
 * one BLAS call per operand, accumulating into the operand's adjoint (beta = 0
 * when the adjoint buffer is fresh in this sweep, else 1).  Each forward
 * rule is the product rule, one BLAS call per operand and direction (beta
 * = 0 for the first term written, 1 for the second); the k tangents of a
 * node are stacked direction-major, so a tangent to the left of a product
 * serves all k directions in one call where the shapes allow.
 */
#include "arrays/array.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>

static double adj_beta(bool fresh)
{
    return fresh ? 0.0 : 1.0;
}

/* ------------------------------------------------------------------ dot */

static void dot_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    dr_arr_node *a = y->x[0], *b = y->x[1];
    int n = (int)a->n;
    if (n == 0)
        return;
    /* (bilinear: the values as the second-order pass reads them) */
    const double *av = dr__arr_val(s, a), *bv = dr__arr_val(s, b);
    double *A = dr__arr_tzero(s, b) ? NULL : dr__arr_adj_for(s, a);
    if (A)
        cblas_daxpy(n, g, bv, 1, A, 1);
    double *B = dr__arr_tzero(s, a) ? NULL : dr__arr_adj_for(s, b);
    if (B)
        cblas_daxpy(n, g, av, 1, B, 1);
}

/* dy_d = <da_d, b> + <a, db_d>: the k tangents of an operand are the rows
   of a k x n matrix, so each term is one dgemv into the k scalar tangents */
static void dot_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *a = y->x[0], *b = y->x[1];
    const double *Ta = dr__arr_tan(a), *Tb = dr__arr_tan(b);
    int n = (int)a->n, k = (int)f->k;
    double *ty = f->tan + (size_t)y->hdr.id * f->k; /* zeroed by the entry */
    if (n == 0)
        return;
    if (Ta)
        cblas_dgemv(CblasRowMajor, CblasNoTrans, k, n, 1.0, Ta, n, b->val, 1,
                    1.0, ty, 1);
    if (Tb)
        cblas_dgemv(CblasRowMajor, CblasNoTrans, k, n, 1.0, Tb, n, a->val, 1,
                    1.0, ty, 1);
}

static double dot_value(const dr_arr_node *a, const dr_arr_node *b)
{
    return a->n ? cblas_ddot((int)a->n, a->val, 1, b->val, 1) : 0.0;
}

static double dot_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    return dot_value(y->x[0], y->x[1]);
}

static dr_real dot(dr_tape *t, dr_idx ia, dr_idx ib)
{
    dr_real r = {NAN, DR_NONE};
    if (!t)
        return r;
    dr_arr_node *a = dr__arr_get(t, ia), *b = a ? dr__arr_get(t, ib) : NULL;
    if (!a || !b)
        return r;
    if (a->rank != b->rank || a->rows != b->rows || a->cols != b->cols) {
        dr__fail(t, DR_ESHAPE);
        return r;
    }
    r.val = dot_value(a, b);
    if (!dr__arr_any_active(a, b))
        return r;
    dr_arr_node *y = dr__arr_snew(t);
    if (!y)
        return r;
    y->x[0] = a;
    y->x[1] = b;
    y->rev = dot_rev;
    y->kind = DR_ARR_K_DOT;
    y->so = DR_ARR_SO_BILINEAR;
    y->fwd = dot_fwd;
    y->prim = dot_prim;
    r.idx = dr__arr_spush(t, y, r.val);
    return r;
}

DR_ARR_FORMS_dot(dot)
/* --------------------------------------------------- matvec and vecmat */

/* ip[0] = 0: y = m v (x[0] = m, x[1] = v); 1: y = v^T m (x[0] = m, x[1] = v) */
static void mv_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *m = y->x[0], *v = y->x[1];
    int r = (int)m->rows, c = (int)m->cols;
    bool vecmat = y->ip[0] != 0;
    if (r == 0 || c == 0)
        return;
    const double *Y = dr__arr_adj_in(s, y);
    const double *mv = dr__arr_val(s, m), *vv = dr__arr_val(s, v);
    bool fresh = false;
    double *M = dr__arr_tzero(s, v) ? NULL : dr__arr_adj_for_raw(s, m, &fresh);
    if (M) {
        /* m_bar += u (x) w: u = y_bar, w = v (matvec) or u = v, w = y_bar */
        const double *u = vecmat ? vv : Y, *w = vecmat ? Y : vv;
        if (fresh) /* one pass instead of zeroing and dger */
            for (int i = 0; i < r; i++) {
                double ui = u[i];
                double *Mi = M + (size_t)i * (size_t)c;
                for (int j = 0; j < c; j++)
                    Mi[j] = ui * w[j];
            }
        else
            cblas_dger(CblasRowMajor, r, c, 1.0, u, 1, w, 1, M, c);
    }
    double *V = dr__arr_tzero(s, m) ? NULL : dr__arr_adj_for_raw(s, v, &fresh);
    if (V) /* v_bar += m^T y_bar (matvec) or m y_bar (vecmat) */
        cblas_dgemv(CblasRowMajor, vecmat ? CblasNoTrans : CblasTrans, r, c,
                    1.0, mv, c, Y, 1, adj_beta(fresh), V, 1);
}

/* dy = dm v + m dv (matvec), dy = dm^T v + m^T dv (vecmat), per direction */
static void mv_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *m = y->x[0], *v = y->x[1];
    const double *Tm = dr__arr_tan(m), *Tv = dr__arr_tan(v);
    int r = (int)m->rows, c = (int)m->cols;
    if ((!Tm && !Tv) || r == 0 || c == 0) /* an empty product is zero */
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    CBLAS_TRANSPOSE op = y->ip[0] ? CblasTrans : CblasNoTrans;
    size_t nm = (size_t)m->n, nv = (size_t)v->n, ny = (size_t)y->n;
    for (size_t d = 0; d < f->k; d++) {
        double beta = 0.0;
        if (Tm) {
            cblas_dgemv(CblasRowMajor, op, r, c, 1.0, Tm + d * nm, c, v->val,
                        1, 0.0, T + d * ny, 1);
            beta = 1.0;
        }
        if (Tv)
            cblas_dgemv(CblasRowMajor, op, r, c, 1.0, m->val, c, Tv + d * nv,
                        1, beta, T + d * ny, 1);
    }
}

static double mv_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *m = y->x[0], *v = y->x[1];
    int r = (int)m->rows, c = (int)m->cols;
    if (r > 0 && c > 0)
        cblas_dgemv(CblasRowMajor, y->ip[0] ? CblasTrans : CblasNoTrans, r, c,
                    1.0, m->val, c, v->val, 1, 0.0, y->val, 1);
    else if (y->n)
        memset(y->val, 0, (size_t)y->n * sizeof(double));
    return 0.0;
}

static dr_arr_node *mv(dr_tape *t, dr_idx im, dr_idx iv, bool vecmat)
{
    if (!t)
        return NULL;
    dr_arr_node *m = dr__arr_get(t, im), *v = m ? dr__arr_get(t, iv) : NULL;
    if (!m || !v)
        return NULL;
    int64_t inner = vecmat ? m->rows : m->cols;
    int64_t outer = vecmat ? m->cols : m->rows;
    if (m->rank != 2 || v->rank != 1 || v->rows != inner) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, 1, outer, 1);
    if (!y)
        return NULL;
    y->x[0] = m;
    y->x[1] = v;
    y->ip[0] = vecmat;
    y->rev = mv_rev;
    y->kind = DR_ARR_K_MV;
    y->so = DR_ARR_SO_BILINEAR;
    y->fwd = mv_fwd;
    y->prim = mv_prim;
    y->active = dr__arr_any_active(m, v);
    mv_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static dr_arr_node *matvec(dr_tape *t, dr_idx m, dr_idx v)
{
    return mv(t, m, v, false);
}
DR_ARR_FORMS_matvec(matvec)

static dr_arr_node *vecmat(dr_tape *t, dr_idx v, dr_idx m)
{
    return mv(t, m, v, true);
}
DR_ARR_FORMS_vecmat(vecmat)
/* --------------------------------------------------------------- matmul */

/* C = op(A) op(B); ip = {trans_a, trans_b, m, n}, k in naux */
static void mm_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *a = y->x[0], *b = y->x[1];
    bool ta = y->ip[0], tb = y->ip[1];
    int m = (int)y->ip[2], n = (int)y->ip[3], k = (int)y->naux;
    if (m == 0 || n == 0 || k == 0)
        return;
    int lda = (int)a->cols, ldb = (int)b->cols;
    const double *Cb = dr__arr_adj_in(s, y);
    const double *av = dr__arr_val(s, a), *bv = dr__arr_val(s, b);
    bool fresh = false;
    double *A = dr__arr_tzero(s, b) ? NULL : dr__arr_adj_for_raw(s, a, &fresh);
    if (A) {
        if (!ta) /* A_bar (m x k) += C_bar op(B)^T */
            cblas_dgemm(CblasRowMajor, CblasNoTrans,
                        tb ? CblasNoTrans : CblasTrans, m, k, n, 1.0, Cb, n,
                        bv, ldb, adj_beta(fresh), A, k);
        else     /* A_bar (k x m) += op(B) C_bar^T */
            cblas_dgemm(CblasRowMajor, tb ? CblasTrans : CblasNoTrans,
                        CblasTrans, k, m, n, 1.0, bv, ldb, Cb, n,
                        adj_beta(fresh), A, m);
    }
    double *B = dr__arr_tzero(s, a) ? NULL : dr__arr_adj_for_raw(s, b, &fresh);
    if (B) {
        if (!tb) /* B_bar (k x n) += op(A)^T C_bar */
            cblas_dgemm(CblasRowMajor, ta ? CblasNoTrans : CblasTrans,
                        CblasNoTrans, k, n, m, 1.0, av, lda, Cb, n,
                        adj_beta(fresh), B, n);
        else     /* B_bar (n x k) += C_bar^T op(A) */
            cblas_dgemm(CblasRowMajor, CblasTrans,
                        ta ? CblasTrans : CblasNoTrans, n, k, m, 1.0, Cb, n,
                        av, lda, adj_beta(fresh), B, k);
    }
}

/* dC = op(dA) op(B) + op(A) op(dB).  Without trans_a the k tangents of A
   stacked are one (k m) x K matrix whose product with op(B) is the k
   tangents of C stacked: one dgemm for the first term. */
static void mm_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *a = y->x[0], *b = y->x[1];
    const double *Ta = dr__arr_tan(a), *Tb = dr__arr_tan(b);
    bool ta = y->ip[0], tb = y->ip[1];
    int m = (int)y->ip[2], n = (int)y->ip[3], K = (int)y->naux;
    if ((!Ta && !Tb) || m == 0 || n == 0 || K == 0)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    int lda = (int)a->cols, ldb = (int)b->cols;
    CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans;
    CBLAS_TRANSPOSE opb = tb ? CblasTrans : CblasNoTrans;
    size_t na = (size_t)a->n, nb = (size_t)b->n, nc = (size_t)y->n;
    size_t nd = f->k;
    if (Ta && !ta && (size_t)m * nd <= INT_MAX)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, opb, (int)((size_t)m * nd),
                    n, K, 1.0, Ta, lda, b->val, ldb, 0.0, T, n);
    else if (Ta)
        for (size_t d = 0; d < nd; d++)
            cblas_dgemm(CblasRowMajor, opa, opb, m, n, K, 1.0, Ta + d * na,
                        lda, b->val, ldb, 0.0, T + d * nc, n);
    if (Tb)
        for (size_t d = 0; d < nd; d++)
            cblas_dgemm(CblasRowMajor, opa, opb, m, n, K, 1.0, a->val, lda,
                        Tb + d * nb, ldb, Ta ? 1.0 : 0.0, T + d * nc, n);
}

static double mm_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *a = y->x[0], *b = y->x[1];
    int64_t m = y->ip[2], n = y->ip[3], k = y->naux;
    if (m > 0 && n > 0 && k > 0)
        cblas_dgemm(CblasRowMajor, y->ip[0] ? CblasTrans : CblasNoTrans,
                    y->ip[1] ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, 1.0, a->val, (int)a->cols, b->val, (int)b->cols,
                    0.0, y->val, (int)n);
    else if (y->n)
        memset(y->val, 0, (size_t)y->n * sizeof(double));
    return 0.0;
}

static dr_arr_node *matmul(dr_tape *t, dr_idx ia, int ta, dr_idx ib, int tb)
{
    if (!t)
        return NULL;
    dr_arr_node *a = dr__arr_get(t, ia), *b = a ? dr__arr_get(t, ib) : NULL;
    if (!a || !b)
        return NULL;
    if (a->rank != 2 || b->rank != 2) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    int64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols;
    int64_t k2 = tb ? b->cols : b->rows, n = tb ? b->rows : b->cols;
    if (k != k2) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, 2, m, n);
    if (!y)
        return NULL;
    y->x[0] = a;
    y->x[1] = b;
    y->ip[0] = ta != 0;
    y->ip[1] = tb != 0;
    y->ip[2] = m;
    y->ip[3] = n;
    y->naux = k;
    y->rev = mm_rev;
    y->kind = DR_ARR_K_MM;
    y->so = DR_ARR_SO_BILINEAR;
    y->fwd = mm_fwd;
    y->prim = mm_prim;
    y->active = dr__arr_any_active(a, b);
    mm_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_matmul(matmul)
/* ---------------------------------------------------------------- outer */

static void outer_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *u = y->x[0], *v = y->x[1];
    int m = (int)y->rows, n = (int)y->cols;
    if (m == 0 || n == 0)
        return;
    const double *Y = dr__arr_adj_in(s, y);
    const double *uv = dr__arr_val(s, u), *vv = dr__arr_val(s, v);
    bool fresh = false;
    double *U = dr__arr_tzero(s, v) ? NULL : dr__arr_adj_for_raw(s, u, &fresh);
    if (U) /* u_bar += Y v */
        cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, Y, n, vv, 1,
                    adj_beta(fresh), U, 1);
    double *V = dr__arr_tzero(s, u) ? NULL : dr__arr_adj_for_raw(s, v, &fresh);
    if (V) /* v_bar += Y^T u */
        cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, Y, n, uv, 1,
                    adj_beta(fresh), V, 1);
}

/* dY = du v^T + u dv^T, per direction */
static void outer_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *u = y->x[0], *v = y->x[1];
    const double *Tu = dr__arr_tan(u), *Tv = dr__arr_tan(v);
    int m = (int)y->rows, n = (int)y->cols;
    if ((!Tu && !Tv) || m == 0 || n == 0)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    memset(T, 0, f->k * (size_t)y->n * sizeof(double));
    for (size_t d = 0; d < f->k; d++) {
        double *Td = T + d * (size_t)y->n;
        if (Tu)
            cblas_dger(CblasRowMajor, m, n, 1.0, Tu + d * (size_t)m, 1,
                       v->val, 1, Td, n);
        if (Tv)
            cblas_dger(CblasRowMajor, m, n, 1.0, u->val, 1,
                       Tv + d * (size_t)n, 1, Td, n);
    }
}

static double outer_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const double *u = y->x[0]->val, *v = y->x[1]->val;
    int64_t m = y->rows, n = y->cols;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            y->val[i * n + j] = u[i] * v[j];
    return 0.0;
}

static dr_arr_node *outer(dr_tape *t, dr_idx iu, dr_idx iv)
{
    if (!t)
        return NULL;
    dr_arr_node *u = dr__arr_get(t, iu), *v = u ? dr__arr_get(t, iv) : NULL;
    if (!u || !v)
        return NULL;
    if (u->rank != 1 || v->rank != 1) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, 2, u->rows, v->rows);
    if (!y)
        return NULL;
    y->x[0] = u;
    y->x[1] = v;
    y->rev = outer_rev;
    y->kind = DR_ARR_K_OUTER;
    y->so = DR_ARR_SO_BILINEAR;
    y->fwd = outer_fwd;
    y->prim = outer_prim;
    y->active = dr__arr_any_active(u, v);
    outer_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_outer(outer)
/* ----------------------------------------------------------------- axpy */

/* z = a x + b: x[0] = x, x[1] = b, the scalar a in sx / sv */

/* bilinear in (a, x), linear in b: on tangents (array.h, "second order")
   only the product's terms, and b's share, which no value changes, is
   left out */
static void axpy_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0], *b = y->x[1];
    bool on_tangents = s->h && s->h->tval >= 0;
    const double *Z = dr__arr_adj_in(s, y), *xv = dr__arr_val(s, x);
    double a = dr__arr_sval(s, y), acc = 0.0;
    double *X = on_tangents && a == 0.0 ? NULL : dr__arr_adj_for(s, x);
    double *B = on_tangents ? NULL : dr__arr_adj_for(s, b);
    bool xz = dr__arr_tzero(s, x);
    for (int64_t i = 0; i < y->n; i++) {
        double gi = Z[i];
        if (gi == 0.0)
            continue;
        if (X)
            X[i] += a * gi;
        if (B)
            B[i] += gi;
        acc += gi * xv[i];
    }
    if (y->sx >= 0 && acc != 0.0 && !xz)
        dr__arr_sacc(s, y->sx, acc);
}

/* dz = a dx + da x + db, per direction */
static void axpy_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0], *b = y->x[1];
    const double *Tx = dr__arr_tan(x), *Tb = dr__arr_tan(b);
    bool da_any = false;
    for (size_t d = 0; d < f->k; d++)
        da_any |= dr__arr_stan(f, y->sx, d) != 0.0;
    if (!Tx && !Tb && !da_any)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    size_t n = (size_t)y->n;
    for (size_t d = 0; d < f->k; d++) {
        double da = dr__arr_stan(f, y->sx, d);
        const double *tx = Tx ? Tx + d * n : NULL, *tb = Tb ? Tb + d * n : NULL;
        double *Td = T + d * n;
        for (size_t i = 0; i < n; i++)
            Td[i] = (tx ? y->sv * tx[i] : 0.0) + (da != 0.0 ? da * x->val[i] : 0.0) +
                    (tb ? tb[i] : 0.0);
    }
}

static double axpy_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const double *xv = y->x[0]->val, *bv = y->x[1]->val;
    double a = y->sv;
    for (int64_t i = 0; i < y->n; i++)
        y->val[i] = a * xv[i] + bv[i];
    return 0.0;
}

/* the recorded passes (node/node.h's dr_rpass), with the array ops of this
   file and scale and add: the tangent a' x + a x' + b' */
static dr_real axpy_tangent_record(dr_ext *e, dr_rpass *p)
{
    dr_arr_node *y = (dr_arr_node *)e, *x = y->x[0], *b = y->x[1];
    dr_tape *t = p->t;
    dr_real z = {0.0, DR_NONE};
    if (!y->active)
        return z;
    dr_real a = {y->sv, y->sx >= 0 ? t->base + y->sx : DR_NONE};
    dr_real ta = y->sx >= 0 ? p->get(p, y->sx) : z;
    dr_idx tx = x->active ? p->get(p, x->hdr.id).idx : DR_NONE;
    z.idx = b->active ? p->get(p, b->hdr.id).idx : DR_NONE;
    if (tx != DR_NONE)
        z.idx = z.idx == DR_NONE ? dr_arr_scale_id(t, a.val, a.idx, tx)
                                 : dr_arr_axpy_id(t, a.val, a.idx, tx, z.idx);
    if (ta.idx != DR_NONE || ta.val != 0.0)
        z.idx = z.idx == DR_NONE ? dr_arr_scale_id(t, ta.val, ta.idx, x->pub)
                                 : dr_arr_axpy_id(t, ta.val, ta.idx, x->pub, z.idx);
    return z;
}

/* ... and the adjoint: x_bar += a g, b_bar += g, a_bar += <g, x> */
static void axpy_adjoint_record(dr_ext *e, dr_rpass *p, dr_real g)
{
    dr_arr_node *y = (dr_arr_node *)e, *x = y->x[0], *b = y->x[1];
    dr_tape *t = p->t;
    if (!y->active || g.idx == DR_NONE)
        return;
    dr_real a = {y->sv, y->sx >= 0 ? t->base + y->sx : DR_NONE};
    if (x->active && p->wanted(p, x->hdr.id)) {
        dr_real v = p->get(p, x->hdr.id);
        v.idx = v.idx == DR_NONE ? dr_arr_scale_id(t, a.val, a.idx, g.idx)
                                 : dr_arr_axpy_id(t, a.val, a.idx, g.idx, v.idx);
        p->set(p, x->hdr.id, v);
    }
    if (b->active && p->wanted(p, b->hdr.id)) {
        dr_real v = p->get(p, b->hdr.id);
        v.idx = v.idx == DR_NONE ? g.idx : dr_arr_add_id(t, v.idx, g.idx);
        p->set(p, b->hdr.id, v);
    }
    if (y->sx >= 0 && p->wanted(p, y->sx)) {
        dr_real d = {0.0, DR_NONE}, v = p->get(p, y->sx);
        d.idx = dr_arr_dot_id(t, g.idx, x->pub, &d.val);
        p->set(p, y->sx, v.idx == DR_NONE && v.val == 0.0 ? d : dr_add(t, v, d));
    }
}

static dr_arr_node *axpy(dr_tape *t, double a_val, dr_idx a_id, dr_idx ix,
                         dr_idx ib)
{
    if (!t)
        return NULL;
    int64_t ra;
    if (!dr__rel_arg(t, a_id, &ra)) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    dr_arr_node *x = dr__arr_get(t, ix), *b = x ? dr__arr_get(t, ib) : NULL;
    if (!x || !b)
        return NULL;
    if (x->rank != b->rank || x->rows != b->rows || x->cols != b->cols) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, x->rank, x->rows, x->cols);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->x[1] = b;
    y->sx = ra;
    y->sv = a_val;
    y->rev = axpy_rev;
    y->kind = DR_ARR_K_OWN;
    y->so = DR_ARR_SO_BILINEAR;
    y->fwd = axpy_fwd;
    y->prim = axpy_prim;
    y->hdr.tangent_record = axpy_tangent_record;
    y->hdr.adjoint_record = axpy_adjoint_record;
    y->active = dr__arr_any_active(x, b) || ra >= 0;
    /* a scalar given a value other than its node's: no replay (record.h) */
    if (dr__order2(t) && !dr__logged_as(t, ra, a_val))
        y->hdr.replay = NULL;
    axpy_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}
DR_ARR_FORMS_axpy(axpy)

/* ------------------------------------------------------------ transpose */

#define TB 32 /* tile for cache-friendly transposition */

/* dst (c x r) = src^T (src r x c), added when add is set */
static void transpose_into(double *dst, const double *src, int64_t r,
                           int64_t c, bool add)
{
    for (int64_t i0 = 0; i0 < r; i0 += TB)
        for (int64_t j0 = 0; j0 < c; j0 += TB) {
            int64_t i1 = i0 + TB < r ? i0 + TB : r;
            int64_t j1 = j0 + TB < c ? j0 + TB : c;
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++) {
                    if (add)
                        dst[j * r + i] += src[i * c + j];
                    else
                        dst[j * r + i] = src[i * c + j];
                }
        }
}

static void transpose_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    bool fresh;
    double *X = dr__arr_adj_for_raw(s, x, &fresh);
    if (X) /* y is c x r: x_bar (r x c) += y_bar^T */
        transpose_into(X, dr__arr_adj_in(s, y), y->rows, y->cols, !fresh);
}

/* the transposed tangent, per direction */
static void transpose_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    for (size_t d = 0; d < f->k; d++)
        transpose_into(T + d * (size_t)y->n, Tx + d * (size_t)x->n, x->rows,
                       x->cols, false);
}

static double transpose_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *x = y->x[0];
    transpose_into(y->val, x->val, x->rows, x->cols, false);
    return 0.0;
}

static dr_arr_node *transpose(dr_tape *t, dr_idx ix)
{
    if (!t)
        return NULL;
    dr_arr_node *x = dr__arr_get_mat(t, ix);
    if (!x)
        return NULL;
    dr_arr_node *y = dr__arr_new(t, 2, x->cols, x->rows);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->rev = transpose_rev;
    y->kind = DR_ARR_K_TRANSPOSE;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = transpose_fwd;
    y->prim = transpose_prim;
    y->active = x->active;
    transpose_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_transpose(transpose)
