/*
 * array_elementwise.c - elementwise array operations: add sub mul div, scale
 * by a scalar, map of a unary function, and broadcasting a vector across the
 * rows or columns of a matrix.  Reverse rules skip elements whose output
 * adjoint is zero (like the scalar sweep skips nodes).
 */
#include "arrays/array.h"

#include <math.h>

enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV };

static bool same_shape(const dr_arr_node *a, const dr_arr_node *b)
{
    return a->rank == b->rank && a->rows == b->rows && a->cols == b->cols;
}

/* ------------------------------------------------------- binary ops */

static void bin_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *a = y->x[0], *b = y->x[1];
    /* (a product is bilinear: its values as the second-order pass reads
       them) */
    const double *Y = dr__arr_adj_in(s, y), *av = dr__arr_val(s, a),
                 *bv = dr__arr_val(s, b), *yv = y->val;
    double *A = dr__arr_tzero(s, b) ? NULL : dr__arr_adj_for(s, a);
    double *B = dr__arr_tzero(s, a) ? NULL : dr__arr_adj_for(s, b);
    int64_t n = y->n;
    switch (y->ip[0]) {
    case BIN_ADD:
        if (A)
            for (int64_t i = 0; i < n; i++)
                A[i] += Y[i];
        if (B)
            for (int64_t i = 0; i < n; i++)
                B[i] += Y[i];
        break;
    case BIN_SUB:
        if (A)
            for (int64_t i = 0; i < n; i++)
                A[i] += Y[i];
        if (B)
            for (int64_t i = 0; i < n; i++)
                B[i] -= Y[i];
        break;
    case BIN_MUL:
        for (int64_t i = 0; i < n; i++) {
            double gi = Y[i];
            if (gi == 0.0)
                continue;
            if (A)
                A[i] += gi * bv[i];
            if (B)
                B[i] += gi * av[i];
        }
        break;
    case BIN_DIV:
        for (int64_t i = 0; i < n; i++) {
            double gi = Y[i];
            if (gi == 0.0)
                continue;
            double q = gi / bv[i];
            if (A)
                A[i] += q;
            if (B)
                B[i] -= q * yv[i];
        }
        break;
    }
}

/* the partials of y = a op b at one element, for the forward kernel (the
   reverse kernel above applies the same ones, written out per op) */
static inline void bin_partials(int kind, double a, double b, double y,
                                double *pa, double *pb)
{
    switch (kind) {
    case BIN_ADD:
        *pa = 1.0, *pb = 1.0;
        break;
    case BIN_SUB:
        *pa = 1.0, *pb = -1.0;
        break;
    case BIN_MUL:
        *pa = b, *pb = a;
        break;
    default: /* y = a / b */
        *pa = 1.0 / b, *pb = -y / b;
        break;
    }
}

/* dy = pa da + pb db; a zero tangent contributes nothing, even where its
   partial is infinite (as the reverse kernel skips zero adjoints) */
static void bin_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *a = y->x[0], *b = y->x[1];
    const double *Ta = dr__arr_tan(a), *Tb = dr__arr_tan(b);
    if (!Ta && !Tb)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    const double *av = a->val, *bv = b->val, *yv = y->val;
    int64_t n = y->n;
    int kind = (int)y->ip[0];
    for (size_t d = 0; d < f->k; d++) {
        const double *ta = Ta ? Ta + d * (size_t)n : NULL;
        const double *tb = Tb ? Tb + d * (size_t)n : NULL;
        double *Td = T + d * (size_t)n;
        for (int64_t i = 0; i < n; i++) {
            double da = ta ? ta[i] : 0.0, db = tb ? tb[i] : 0.0, pa, pb;
            bin_partials(kind, av[i], bv[i], yv[i], &pa, &pb);
            Td[i] = (da != 0.0 ? pa * da : 0.0) + (db != 0.0 ? pb * db : 0.0);
        }
    }
}

static double bin_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const double *av = y->x[0]->val, *bv = y->x[1]->val;
    double *yv = y->val;
    int64_t n = y->n;
    switch (y->ip[0]) {
    case BIN_ADD:
        for (int64_t i = 0; i < n; i++)
            yv[i] = av[i] + bv[i];
        break;
    case BIN_SUB:
        for (int64_t i = 0; i < n; i++)
            yv[i] = av[i] - bv[i];
        break;
    case BIN_MUL:
        for (int64_t i = 0; i < n; i++)
            yv[i] = av[i] * bv[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            yv[i] = av[i] / bv[i];
        break;
    }
    return 0.0;
}

/* a quotient's second-order terms (array.h, "second order"): with
   a_bar += y_bar / b and b_bar -= y_bar y / b, along tangents ta, tb,
   a_bar' = -y_bar tb / b^2 and b_bar' = y_bar (2 y tb - ta) / b^2 */
static void div_rev2(dr_arr_node *y, dr_sweep *s, double g, size_t d)
{
    (void)g;
    dr_arr_node *a = y->x[0], *b = y->x[1];
    const double *ta = dr__arr_tan_dir(a, d), *tb = dr__arr_tan_dir(b, d);
    if (!ta && !tb)
        return;
    const double *Y = dr__arr_adj0(s, y), *bv = b->val, *yv = y->val;
    double *A = tb ? dr__arr_adj_for(s, a) : NULL;
    double *B = dr__arr_adj_for(s, b);
    for (int64_t i = 0; i < y->n; i++) {
        double gi = Y[i], tai = ta ? ta[i] : 0.0, tbi = tb ? tb[i] : 0.0;
        if (gi == 0.0 || (tai == 0.0 && tbi == 0.0))
            continue;
        double q = gi / (bv[i] * bv[i]);
        if (A && tbi != 0.0)
            A[i] -= q * tbi;
        if (B)
            B[i] += q * (2.0 * yv[i] * tbi - tai);
    }
}

static dr_arr_node *binop(dr_tape *t, dr_idx ia, dr_idx ib, int kind)
{
    if (!t)
        return NULL;
    dr_arr_node *a = dr__arr_get(t, ia), *b = a ? dr__arr_get(t, ib) : NULL;
    if (!a || !b)
        return NULL;
    if (!same_shape(a, b)) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, a->rank, a->rows, a->cols);
    if (!y)
        return NULL;
    y->x[0] = a;
    y->x[1] = b;
    y->ip[0] = kind;
    y->rev = bin_rev;
    y->kind = DR_ARR_K_BIN;
    y->so = kind == BIN_MUL   ? DR_ARR_SO_BILINEAR
            : kind == BIN_DIV ? DR_ARR_SO_OWN
                              : DR_ARR_SO_LINEAR;
    y->rev2 = div_rev2;
    y->fwd = bin_fwd;
    y->prim = bin_prim;
    y->active = dr__arr_any_active(a, b);
    bin_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

/* each binary op records through binop */
#define BIN_FORMS(name, kind)                                                 \
    static dr_arr_node *bin_##name(dr_tape *t, dr_idx a, dr_idx b)            \
    {                                                                         \
        return binop(t, a, b, kind);                                          \
    }                                                                         \
    DR_ARR_FORMS_##name(bin_##name)

BIN_FORMS(add, BIN_ADD)
BIN_FORMS(sub, BIN_SUB)
BIN_FORMS(mul, BIN_MUL)
BIN_FORMS(div, BIN_DIV)

/* ------------------------------------------------------------- scale */

static void scale_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    /* (bilinear: the values as the second-order pass reads them) */
    const double *Y = dr__arr_adj_in(s, y), *xv = dr__arr_val(s, x);
    double sv = dr__arr_sval(s, y), acc = 0.0;
    /* (on tangents: a zero one adds nothing to the other operand) */
    double *X = s->h && s->h->tval >= 0 && sv == 0.0 ? NULL
                                                     : dr__arr_adj_for(s, x);
    bool xz = dr__arr_tzero(s, x);
    for (int64_t i = 0; i < y->n; i++) {
        double gi = Y[i];
        if (gi == 0.0)
            continue;
        if (X)
            X[i] += sv * gi;
        acc += gi * xv[i];
    }
    if (y->sx >= 0 && acc != 0.0 && !xz)
        dr__arr_sacc(s, y->sx, acc);
}

/* dy = s dx + ds x */
static void scale_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    bool ds_any = false;
    for (size_t d = 0; d < f->k; d++)
        ds_any |= dr__arr_stan(f, y->sx, d) != 0.0;
    if (!Tx && !ds_any)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    const double *xv = x->val;
    double sv = y->sv;
    int64_t n = y->n;
    for (size_t d = 0; d < f->k; d++) {
        double ds = dr__arr_stan(f, y->sx, d);
        const double *tx = Tx ? Tx + d * (size_t)n : NULL;
        double *Td = T + d * (size_t)n;
        for (int64_t i = 0; i < n; i++)
            Td[i] = (tx ? sv * tx[i] : 0.0) + (ds != 0.0 ? ds * xv[i] : 0.0);
    }
}

static double scale_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const double *xv = y->x[0]->val;
    double sv = y->sv;
    for (int64_t i = 0; i < y->n; i++)
        y->val[i] = sv * xv[i];
    return 0.0;
}

static dr_arr_node *scale(dr_tape *t, double sv, dr_idx sid, dr_idx ix)
{
    if (!t)
        return NULL;
    int64_t rs;
    if (!dr__rel_arg(t, sid, &rs)) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return NULL;
    dr_arr_node *y = dr__arr_new(t, x->rank, x->rows, x->cols);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->sx = rs;
    y->sv = sv;
    y->rev = scale_rev;
    y->kind = DR_ARR_K_SCALE;
    y->so = DR_ARR_SO_BILINEAR;
    y->fwd = scale_fwd;
    y->prim = scale_prim;
    y->active = x->active || rs >= 0;
    /* a scalar given a value other than its node's: no replay (record.h) */
    if (dr__order2(t) && !dr__logged_as(t, rs, sv))
        y->hdr.replay = NULL;
    scale_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

DR_ARR_FORMS_scale(scale)
/* --------------------------------------------------------------- map */

/*
 * Each map function is a scalar operation of rules/scalar_rules.h, value
 * and derivative (the same numerics as dr_OP: tanh' as 1 / cosh^2 and
 * sigmoid' from exp(-|x|), without the cancellation of 1 - y^2 and
 * y (1 - y)).  The square is x * x with derivative 2 x, dr_mul's rule for
 * equal arguments.  P(fn, value, derivative), in terms of xe = xv[i] and,
 * in the derivative, ve = yv[i].
 */
#define MAP_RULE(fn, op) P(fn, dr_rule_##op(xe), dr_rule_##op##_d(xe, ve))
#define MAP_RULES(P)                                                          \
    MAP_RULE(DR_FN_ABS, abs) MAP_RULE(DR_FN_SQRT, sqrt)                       \
    MAP_RULE(DR_FN_EXP, exp) MAP_RULE(DR_FN_LOG, log)                         \
    MAP_RULE(DR_FN_SIN, sin) MAP_RULE(DR_FN_COS, cos)                         \
    MAP_RULE(DR_FN_TANH, tanh) MAP_RULE(DR_FN_SIGMOID, sigmoid)               \
    P(DR_FN_SQUARE, xe * xe, 2.0 * xe)
/* negation (-1) and relu (1 where x > 0, else 0, dr_rule_relu_d) need no
   multiplication: the kernels have plain loops for them */

static void map_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    const double *Y = dr__arr_adj_in(s, y), *xv = x->val, *yv = y->val;
    int64_t n = y->n;
    switch ((dr_arr_fn)y->ip[0]) {
    case DR_FN_NEG:
        for (int64_t i = 0; i < n; i++)
            X[i] -= Y[i];
        break;
    case DR_FN_RELU:
        for (int64_t i = 0; i < n; i++)
            if (xv[i] > 0)
                X[i] += Y[i];
        break;
#define P(fn, val, der)                                                       \
    case fn:                                                                  \
        for (int64_t i = 0; i < n; i++) {                                     \
            double gi = Y[i], xe = xv[i], ve = yv[i];                         \
            (void)ve;                                                         \
            if (gi != 0.0)                                                    \
                X[i] += gi * (der);                                           \
        }                                                                     \
        break;
    MAP_RULES(P)
#undef P
    }
}

/* second-order terms of a map: x_bar' = y_bar f''(x) tx (negation, |x|
   and relu are linear where they have a derivative: none) */
#define MAP_SECOND(P)                                                         \
    P(DR_FN_SQRT, sqrt) P(DR_FN_EXP, exp) P(DR_FN_LOG, log)                   \
    P(DR_FN_SIN, sin) P(DR_FN_COS, cos) P(DR_FN_TANH, tanh)                   \
    P(DR_FN_SIGMOID, sigmoid)

static void map_rev2(dr_arr_node *y, dr_sweep *s, double g, size_t d)
{
    (void)g;
    dr_arr_node *x = y->x[0];
    const double *tx = dr__arr_tan_dir(x, d);
    dr_arr_fn fn = (dr_arr_fn)y->ip[0];
    if (!tx || fn == DR_FN_NEG || fn == DR_FN_ABS || fn == DR_FN_RELU)
        return;
    double *X = dr__arr_adj_for(s, x);
    if (!X)
        return;
    const double *Y = dr__arr_adj0(s, y), *xv = x->val, *yv = y->val;
    int64_t n = y->n;
    switch (fn) {
    case DR_FN_SQUARE:
        for (int64_t i = 0; i < n; i++)
            if (Y[i] != 0.0 && tx[i] != 0.0)
                X[i] += Y[i] * 2.0 * tx[i];
        break;
#define P(fn, op)                                                             \
    case fn:                                                                  \
        for (int64_t i = 0; i < n; i++) {                                     \
            double gi = Y[i], ti = tx[i], xe = xv[i], ve = yv[i];             \
            if (gi == 0.0 || ti == 0.0)                                       \
                continue;                                                     \
            dr_rule_so1_t u = dr_rule_so1(op, xe, ve, dr_rule_##op##_d(xe, ve)); \
            X[i] += gi * u.dd * ti;                                           \
        }                                                                     \
        break;
        MAP_SECOND(P)
#undef P
    default:
        break;
    }
}

/* dy = f'(x) dx per direction; elements with a zero tangent get zero (as
   the reverse kernel skips zero adjoints: an infinite partial of an
   unperturbed element makes no NaN) */
static void map_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *x = y->x[0];
    const double *Tx = dr__arr_tan(x);
    if (!Tx)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    const double *xv = x->val, *yv = y->val;
    int64_t n = y->n;
    for (size_t d = 0; d < f->k; d++, T += n, Tx += n) {
        switch ((dr_arr_fn)y->ip[0]) {
        case DR_FN_NEG:
            for (int64_t i = 0; i < n; i++)
                T[i] = -Tx[i];
            break;
        case DR_FN_RELU:
            for (int64_t i = 0; i < n; i++)
                T[i] = xv[i] > 0 ? Tx[i] : 0.0;
            break;
#define P(fn, val, der)                                                       \
    case fn:                                                                  \
        for (int64_t i = 0; i < n; i++) {                                     \
            double xe = xv[i], ve = yv[i];                                    \
            (void)ve;                                                         \
            T[i] = Tx[i] != 0.0 ? Tx[i] * (der) : 0.0;                        \
        }                                                                     \
        break;
        MAP_RULES(P)
#undef P
        }
    }
}

static double map_prim(dr_arr_node *y, const dr_oplog *lg);

static dr_arr_node *map(dr_tape *t, int f, dr_idx ix)
{
    if (!t)
        return NULL;
    if (f < DR_FN_NEG || f > DR_FN_SQUARE) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    dr_arr_node *x = dr__arr_get(t, ix);
    if (!x)
        return NULL;
    dr_arr_node *y = dr__arr_new(t, x->rank, x->rows, x->cols);
    if (!y)
        return NULL;
    y->x[0] = x;
    y->ip[0] = f;
    y->rev = map_rev;
    y->kind = DR_ARR_K_MAP;
    y->so = DR_ARR_SO_OWN;
    y->rev2 = map_rev2;
    y->fwd = map_fwd;
    y->prim = map_prim;
    y->active = x->active;
    map_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static double map_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const double *xv = y->x[0]->val;
    double *yv = y->val;
    int64_t n = y->n;
    switch ((dr_arr_fn)y->ip[0]) {
    case DR_FN_NEG:
        for (int64_t i = 0; i < n; i++)
            yv[i] = dr_rule_neg(xv[i]);
        break;
    case DR_FN_RELU:
        for (int64_t i = 0; i < n; i++)
            yv[i] = dr_rule_relu(xv[i]);
        break;
#define P(fn, val, der)                                                       \
    case fn:                                                                  \
        for (int64_t i = 0; i < n; i++) {                                     \
            double xe = xv[i];                                                \
            yv[i] = (val);                                                    \
        }                                                                     \
        break;
        MAP_RULES(P)
#undef P
    }
    return 0.0;
}

DR_ARR_FORMS_map(map)
/* ------------------------------------------------------ broadcasting */

/* ip[0]: 0 = vector along rows (length cols), 1 = along columns (length rows)
   ip[1]: 1 when the node adds the vector to the matrix x[0], 0 when it only
   replicates the vector x[1] */
static void bcast_rev(dr_arr_node *y, dr_sweep *s, double g)
{
    (void)g;
    dr_arr_node *m = y->x[0], *v = y->x[1];
    const double *Y = dr__arr_adj_in(s, y);
    int64_t r = y->rows, c = y->cols;
    if (m) {
        double *M = dr__arr_adj_for(s, m);
        if (M)
            for (int64_t i = 0; i < y->n; i++)
                M[i] += Y[i];
    }
    double *V = dr__arr_adj_for(s, v);
    if (!V)
        return;
    if (y->ip[0] == 0) {
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++)
                V[j] += Y[i * c + j];
    } else {
        for (int64_t i = 0; i < r; i++) {
            double acc = 0.0;
            for (int64_t j = 0; j < c; j++)
                acc += Y[i * c + j];
            V[i] += acc;
        }
    }
}

/* dy = dm + v's tangent broadcast like v */
static void bcast_fwd(dr_arr_node *y, dr_fsweep *f)
{
    dr_arr_node *m = y->x[0], *v = y->x[1];
    const double *Tm = dr__arr_tan(m), *Tv = dr__arr_tan(v);
    if (!Tm && !Tv)
        return;
    double *T = dr__arr_tan_out(f, y);
    if (!T)
        return;
    int64_t r = y->rows, c = y->cols, n = y->n, nv = v->n;
    for (size_t d = 0; d < f->k; d++) {
        double *Td = T + d * (size_t)n;
        const double *tv = Tv ? Tv + d * (size_t)nv : NULL;
        if (Tm)
            dr__copy_doubles(Td, Tm + d * (size_t)n, (size_t)n);
        else
            memset(Td, 0, (size_t)n * sizeof(double));
        if (!tv)
            continue;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++)
                Td[i * c + j] += y->ip[0] ? tv[i] : tv[j];
    }
}

static double bcast_prim(dr_arr_node *y, const dr_oplog *lg)
{
    (void)lg;
    const dr_arr_node *m = y->x[0];
    const double *vv = y->x[1]->val;
    double *yv = y->val;
    int64_t r = y->rows, c = y->cols;
    for (int64_t i = 0; i < r; i++) {
        const double *mrow = m ? m->val + i * c : NULL;
        double *yrow = yv + i * c;
        if (y->ip[0]) {
            double vi = vv[i];
            for (int64_t j = 0; j < c; j++)
                yrow[j] = (mrow ? mrow[j] : 0.0) + vi;
        } else {
            for (int64_t j = 0; j < c; j++)
                yrow[j] = (mrow ? mrow[j] : 0.0) + vv[j];
        }
    }
    return 0.0;
}

/* has_m: add v to the matrix im; else replicate v count times */
static dr_arr_node *bcast(dr_tape *t, bool has_m, dr_idx im, dr_idx iv,
                          int64_t count, int along_cols)
{
    if (!t)
        return NULL;
    dr_arr_node *m = NULL, *v;
    if (has_m) {
        m = dr__arr_get(t, im);
        if (!m)
            return NULL;
    }
    v = dr__arr_get(t, iv);
    if (!v)
        return NULL;
    if (v->rank != 1 || (m && m->rank != 2)) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    int64_t r, c;
    if (m) {
        r = m->rows;
        c = m->cols;
        if ((along_cols ? r : c) != v->rows) {
            dr__fail(t, DR_ESHAPE);
            return NULL;
        }
    } else {
        if (count < 0) {
            dr__fail(t, DR_ERANGE);
            return NULL;
        }
        r = along_cols ? v->rows : count;
        c = along_cols ? count : v->rows;
    }
    dr_arr_node *y = dr__arr_new(t, 2, r, c);
    if (!y)
        return NULL;
    y->x[0] = m;
    y->x[1] = v;
    y->ip[0] = along_cols;
    y->ip[1] = m != NULL;
    y->rev = bcast_rev;
    y->kind = DR_ARR_K_BCAST;
    y->so = DR_ARR_SO_LINEAR;
    y->fwd = bcast_fwd;
    y->prim = bcast_prim;
    y->active = dr__arr_any_active(m, v);
    bcast_prim(y, NULL);
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static dr_arr_node *add_rowvec(dr_tape *t, dr_idx m, dr_idx v)
{
    return bcast(t, true, m, v, 0, 0);
}
DR_ARR_FORMS_add_rowvec(add_rowvec)

static dr_arr_node *add_colvec(dr_tape *t, dr_idx m, dr_idx v)
{
    return bcast(t, true, m, v, 0, 1);
}
DR_ARR_FORMS_add_colvec(add_colvec)

static dr_arr_node *replicate_rows(dr_tape *t, dr_idx v, int64_t r)
{
    return bcast(t, false, DR_NONE, v, r, 0);
}
DR_ARR_FORMS_replicate_rows(replicate_rows)

static dr_arr_node *replicate_cols(dr_tape *t, dr_idx v, int64_t c)
{
    return bcast(t, false, DR_NONE, v, c, 1);
}
DR_ARR_FORMS_replicate_cols(replicate_cols)
