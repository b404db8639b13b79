/*
 * array_rules.c - the rules of the array operations for the passes
 * recorded as operations (node/node.h's dr_rpass: dr_tangent_record,
 * dr_adjoint_record), written with the array operations themselves on the
 * same tape: a tangent or an adjoint of an array is an array node, so it
 * can be differentiated again (nested derivatives, derivatives of any
 * order).  They use every array op, so they stand above the arrays layer
 * and register themselves with it (dr__arr_register_recorded) before a
 * pass (recorded_api.c).  Each op's tangent is its forward rule and its adjoint its
 * reverse rule (the kernels' comments say which), recorded; a zero tangent
 * or adjoint (DR_NONE) records nothing.  The op and its parameters come
 * from the node (kind, ip, aux: array.h and each op's file).
 */
#include "nested/nested.h"

#include <stdint.h>
#include <stdlib.h>

enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV };          /* array_elementwise.c */
enum { SM_SOFTMAX, SM_LOGSOFTMAX, SM_LSE_ROWS };       /* array_reduce.c      */

/* ---------------------------------------------------------------- values */

static dr_real arr_value(dr_idx id)
{
    dr_real r = {0.0, id};
    return r;
}

static bool zero(dr_real v)
{
    return v.idx == DR_NONE && v.val == 0.0;
}

/* the tangent (or adjoint) of array operand x: an array id, DR_NONE */
static dr_idx arr_of(dr_rpass *p, const dr_arr_node *x)
{
    if (!x || !x->active)
        return DR_NONE;
    return p->get(p, x->hdr.id).idx;
}

/* ... of the scalar of relative id r */
static dr_real scal_of(dr_rpass *p, int64_t r)
{
    dr_real z = {0.0, DR_NONE};
    return r < 0 ? z : p->get(p, r);
}

static dr_idx add(dr_tape *t, dr_idx a, dr_idx b)
{
    return a == DR_NONE ? b : b == DR_NONE ? a : dr_arr_add_id(t, a, b);
}

static dr_idx sub(dr_tape *t, dr_idx a, dr_idx b)
{
    if (b == DR_NONE)
        return a;
    return a == DR_NONE ? dr_arr_map_id(t, DR_FN_NEG, b) : dr_arr_sub_id(t, a, b);
}

static dr_idx mul(dr_tape *t, dr_idx a, dr_idx b)
{
    return a == DR_NONE || b == DR_NONE ? DR_NONE : dr_arr_mul_id(t, a, b);
}

/* s * x for a scalar s (a constant, a node) */
static dr_idx scale(dr_tape *t, dr_real s, dr_idx x)
{
    return zero(s) || x == DR_NONE ? DR_NONE : dr_arr_scale_id(t, s.val, s.idx, x);
}

static dr_real scal_add(dr_tape *t, dr_real a, dr_real b)
{
    return zero(a) ? b : zero(b) ? a : dr_add(t, a, b);
}

static dr_real dot(dr_tape *t, dr_idx a, dr_idx b)
{
    dr_real r = {0.0, DR_NONE};
    if (a != DR_NONE && b != DR_NONE)
        r.idx = dr_arr_dot_id(t, a, b, &r.val);
    return r;
}

static dr_real sum_all(dr_tape *t, dr_idx a)
{
    dr_real r = {0.0, DR_NONE};
    if (a != DR_NONE)
        r.idx = dr_arr_sum_id(t, a, &r.val);
    return r;
}

/* a constant array of the shape with values v (NULL: every one c) */
static dr_idx constant(dr_tape *t, int rank, int64_t rows, int64_t cols,
                       const double *v, double c)
{
    size_t n = (size_t)rows * (size_t)cols;
    double *f = NULL;
    if (!v) {
        f = malloc((n + 1) * sizeof *f);
        if (!f) {
            dr__fail(t, DR_ENOMEM);
            return DR_NONE;
        }
        for (size_t i = 0; i < n; i++)
            f[i] = c;
    }
    dr_idx id = dr_arr_const_id(t, rank, rows, cols, v ? v : f);
    free(f);
    return id;
}
static dr_idx zeros(dr_tape *t, int rank, int64_t rows, int64_t cols)
{
    return constant(t, rank, rows, cols, NULL, 0.0);
}
static dr_idx ones(dr_tape *t, const dr_arr_node *x)
{
    return constant(t, x->rank, x->rows, x->cols, NULL, 1.0);
}

/* a constant of x's shape, one at flat index i (zeros elsewhere) */
static dr_idx unit(dr_tape *t, const dr_arr_node *x, int64_t i)
{
    double *e = calloc((size_t)x->n + 1, sizeof *e);
    if (!e) {
        dr__fail(t, DR_ENOMEM);
        return DR_NONE;
    }
    e[i] = 1.0;
    dr_idx id = constant(t, x->rank, x->rows, x->cols, e, 0.0);
    free(e);
    return id;
}

/* element i (flat) of array a of x's shape, as a scalar */
static dr_real element(dr_tape *t, const dr_arr_node *x, dr_idx a, int64_t i)
{
    dr_real r = {0.0, DR_NONE};
    if (a == DR_NONE)
        return r;
    if (x->rank == 1)
        r.idx = dr_arr_index_id(t, a, i, &r.val);
    else
        r.idx = dr_arr_index2_id(t, a, i / x->cols, i % x->cols, &r.val);
    return r;
}

/* the sums of a's rows (a vector: its sum), spread over each row again */
static dr_idx row_sums_spread(dr_tape *t, const dr_arr_node *y, dr_idx a)
{
    if (y->rank == 1)
        return scale(t, sum_all(t, a), ones(t, y));
    return dr_arr_replicate_cols_id(t, dr_arr_sum_rows_id(t, a), y->cols);
}

/* J v for y = softmax(x) by rows, J = diag(y) - y y^T per row: its own
   transpose, so the tangent's rule and the adjoint's */
static dr_idx softmax_jac(dr_tape *t, const dr_arr_node *y, dr_idx v)
{
    dr_idx q = mul(t, y->pub, v);
    return sub(t, q, y->rank == 1 ? scale(t, sum_all(t, q), y->pub)
                                  : mul(t, y->pub, row_sums_spread(t, y, q)));
}

/* the softmax of all of x's elements (a matrix's, not row by row) */
static dr_idx softmax_all(dr_tape *t, const dr_arr_node *x)
{
    if (x->rank == 1)
        return dr_arr_softmax_id(t, x->pub);
    dr_idx v = dr_arr_reshape_id(t, x->pub, 1, x->n, 1);
    return dr_arr_reshape_id(t, dr_arr_softmax_id(t, v), 2, x->rows, x->cols);
}

/* f'(x) * v for y = f(x) (array_elementwise.c's map rules) */
static dr_idx map_deriv_times(dr_tape *t, const dr_arr_node *y, dr_idx v)
{
    const dr_arr_node *x = y->x[0];
    dr_idx xi = x->pub, yi = y->pub;
    switch ((dr_arr_fn)y->ip[0]) {
    case DR_FN_NEG:
        return dr_arr_map_id(t, DR_FN_NEG, v);
    case DR_FN_ABS:
    case DR_FN_RELU: { /* a constant mask: sign x (0 at 0), or x > 0 */
        double *m = malloc(((size_t)x->n + 1) * sizeof *m);
        if (!m) {
            dr__fail(t, DR_ENOMEM);
            return DR_NONE;
        }
        bool abs = y->ip[0] == DR_FN_ABS;
        for (int64_t i = 0; i < x->n; i++)
            m[i] = abs ? (x->val[i] > 0 ? 1.0 : x->val[i] < 0 ? -1.0 : 0.0)
                       : (x->val[i] > 0 ? 1.0 : 0.0);
        dr_idx c = constant(t, x->rank, x->rows, x->cols, m, 0.0);
        free(m);
        return mul(t, c, v);
    }
    case DR_FN_SQUARE:
        return mul(t, dr_arr_scale_id(t, 2.0, DR_NONE, xi), v);
    case DR_FN_SQRT:
        return dr_arr_div_id(t, v, dr_arr_scale_id(t, 2.0, DR_NONE, yi));
    case DR_FN_EXP:
        return mul(t, yi, v);
    case DR_FN_LOG:
        return dr_arr_div_id(t, v, xi);
    case DR_FN_SIN:
        return mul(t, dr_arr_map_id(t, DR_FN_COS, xi), v);
    case DR_FN_COS:
        return dr_arr_map_id(t, DR_FN_NEG,
                             mul(t, dr_arr_map_id(t, DR_FN_SIN, xi), v));
    case DR_FN_TANH: /* (1 - y^2) v */
        return sub(t, v, mul(t, mul(t, yi, yi), v));
    case DR_FN_SIGMOID: /* y (1 - y) v */
        return sub(t, mul(t, yi, v), mul(t, mul(t, yi, yi), v));
    }
    return DR_NONE;
}

/* ---------------------------------------------------------- the tangents */

static dr_real tangent(dr_arr_node *y, dr_rpass *p)
{
    dr_tape *t = p->t;
    dr_arr_node *a = y->x[0], *b = y->x[1];
    dr_idx ta = arr_of(p, a), tb = arr_of(p, b);
    dr_real none = {0.0, DR_NONE};
    switch (y->kind) {
    case DR_ARR_K_BIN:
        switch (y->ip[0]) {
        case BIN_ADD:
            return arr_value(add(t, ta, tb));
        case BIN_SUB:
            return arr_value(sub(t, ta, tb));
        case BIN_MUL:
            return arr_value(add(t, mul(t, ta, b->pub), mul(t, a->pub, tb)));
        default: { /* (ta - y tb) / b */
            dr_idx n = sub(t, ta, mul(t, y->pub, tb));
            return arr_value(n == DR_NONE ? DR_NONE : dr_arr_div_id(t, n, b->pub));
        }
        }
    case DR_ARR_K_SCALE: {
        dr_real s = {y->sv, y->sx >= 0 ? t->base + y->sx : DR_NONE};
        return arr_value(add(t, scale(t, s, ta), scale(t, scal_of(p, y->sx), a->pub)));
    }
    case DR_ARR_K_MAP:
        return arr_value(ta == DR_NONE ? DR_NONE : map_deriv_times(t, y, ta));
    case DR_ARR_K_BCAST: { /* b along rows (ip[0] 0) or columns */
        dr_idx v = tb == DR_NONE ? DR_NONE
                   : y->ip[0] == 0 ? dr_arr_replicate_rows_id(t, tb, y->rows)
                                   : dr_arr_replicate_cols_id(t, tb, y->cols);
        return arr_value(add(t, ta, v));
    }
    case DR_ARR_K_INDEX:
    case DR_ARR_K_MAX:
        return element(t, a, ta, y->ip[0]);
    case DR_ARR_K_BUILD: {
        const int64_t *rel = y->aux;
        size_t n = (size_t)y->n;
        double *vals = malloc((n + 1) * sizeof *vals);
        dr_idx *ids = malloc((n + 1) * sizeof *ids);
        bool any = false;
        for (size_t i = 0; vals && ids && i < n; i++) {
            dr_real d = scal_of(p, rel ? rel[i] : -1);
            vals[i] = d.val;
            ids[i] = d.idx;
            any |= !zero(d);
        }
        dr_idx r = DR_NONE;
        if (!vals || !ids)
            dr__fail(t, DR_ENOMEM);
        else if (any)
            r = dr_arr_from_reals_id(t, n, vals, ids);
        free(vals);
        free(ids);
        return arr_value(r);
    }
    case DR_ARR_K_BLOCK:
        if (ta == DR_NONE)
            return none;
        return arr_value(y->rank == 1 ? dr_arr_slice_id(t, ta, y->ip[0], y->rows)
                                      : dr_arr_slice2_id(t, ta, y->ip[0], y->rows,
                                                         y->ip[1], y->cols));
    case DR_ARR_K_CONCAT: {
        dr_arr_node **xs = y->aux;
        size_t n = (size_t)y->naux;
        dr_idx *ids = malloc((n + 1) * sizeof *ids);
        if (!ids) {
            dr__fail(t, DR_ENOMEM);
            return none;
        }
        bool any = false;
        for (size_t k = 0; k < n; k++)
            any |= (ids[k] = arr_of(p, xs[k])) != DR_NONE;
        for (size_t k = 0; any && k < n; k++)
            if (ids[k] == DR_NONE)
                ids[k] = zeros(t, xs[k]->rank, xs[k]->rows, xs[k]->cols);
        dr_idx r = any ? dr_arr_concat_id(t, (int)y->ip[0], n, ids) : DR_NONE;
        free(ids);
        return arr_value(r);
    }
    case DR_ARR_K_GATHER_SCATTER:
        if (ta == DR_NONE)
            return none;
        return arr_value(y->ip[0] ? dr_arr_scatter_id(t, ta, y->rows, y->aux)
                                  : dr_arr_gather_id(t, ta, (size_t)y->naux, y->aux));
    case DR_ARR_K_RESHAPE:
        return arr_value(ta == DR_NONE ? DR_NONE
                         : dr_arr_reshape_id(t, ta, y->rank, y->rows, y->cols));
    case DR_ARR_K_DOT:
        return scal_add(t, dot(t, ta, b->pub), dot(t, a->pub, tb));
    case DR_ARR_K_MV: { /* x[0] = m, x[1] = v */
        bool vm = y->ip[0] != 0;
        dr_idx t1 = ta == DR_NONE ? DR_NONE
                    : vm ? dr_arr_vecmat_id(t, b->pub, ta) : dr_arr_matvec_id(t, ta, b->pub);
        dr_idx t2 = tb == DR_NONE ? DR_NONE
                    : vm ? dr_arr_vecmat_id(t, tb, a->pub) : dr_arr_matvec_id(t, a->pub, tb);
        return arr_value(add(t, t1, t2));
    }
    case DR_ARR_K_MM: {
        int A = (int)y->ip[0], Bt = (int)y->ip[1];
        dr_idx t1 = ta == DR_NONE ? DR_NONE : dr_arr_matmul_id(t, ta, A, b->pub, Bt);
        dr_idx t2 = tb == DR_NONE ? DR_NONE : dr_arr_matmul_id(t, a->pub, A, tb, Bt);
        return arr_value(add(t, t1, t2));
    }
    case DR_ARR_K_OUTER:
        return arr_value(add(t, ta == DR_NONE ? DR_NONE : dr_arr_outer_id(t, ta, b->pub),
                             tb == DR_NONE ? DR_NONE : dr_arr_outer_id(t, a->pub, tb)));
    case DR_ARR_K_TRANSPOSE:
        return arr_value(ta == DR_NONE ? DR_NONE : dr_arr_transpose_id(t, ta));
    case DR_ARR_K_SUM:
        return sum_all(t, ta);
    case DR_ARR_K_SUM_AXIS:
        return arr_value(ta == DR_NONE ? DR_NONE
                         : y->ip[0] ? dr_arr_sum_cols_id(t, ta) : dr_arr_sum_rows_id(t, ta));
    case DR_ARR_K_SOFTMAX: {
        if (ta == DR_NONE)
            return none;
        switch (y->ip[0]) {
        case SM_SOFTMAX: /* y dx - y <y, dx> per row */
            return arr_value(softmax_jac(t, y, ta));
        case SM_LOGSOFTMAX: { /* dx - <exp y, dx> per row */
            dr_idx q = mul(t, dr_arr_map_id(t, DR_FN_EXP, y->pub), ta);
            return arr_value(sub(t, ta, row_sums_spread(t, y, q)));
        }
        default: /* logsumexp per row: <softmax row, dx row> */
            return arr_value(dr_arr_sum_rows_id(t, mul(t, dr_arr_softmax_id(t, a->pub), ta)));
        }
    }
    case DR_ARR_K_LSE:
        return dot(t, softmax_all(t, a), ta);
    default: /* a kind without rules here (its node should carry its own):
                no derivative rather than a wrong one */
        dr__fail(t, DR_ENOTSUP);
        return none;
    }
}

/* --------------------------------------------------------- the adjoints */

/* does anything read x's adjoint? */
static bool wanted(dr_rpass *p, const dr_arr_node *x)
{
    return x && x->active && p->wanted(p, x->hdr.id);
}

/* x's adjoint += v (an array id) */
static void acc(dr_rpass *p, const dr_arr_node *x, dr_idx v)
{
    if (v == DR_NONE || !wanted(p, x))
        return;
    p->set(p, x->hdr.id, arr_value(add(p->t, arr_of(p, x), v)));
}

/* the scalar of relative id r's adjoint += v */
static void acc_scalar(dr_rpass *p, int64_t r, dr_real v)
{
    if (r < 0 || zero(v) || !p->wanted(p, r))
        return;
    p->set(p, r, scal_add(p->t, p->get(p, r), v));
}

/* g (of y's block's shape) placed in zeros of x's shape at y's block */
static dr_idx embed(dr_tape *t, const dr_arr_node *y, const dr_arr_node *x,
                    dr_idx g)
{
    int64_t r0 = y->ip[0], c0 = y->ip[1], nr = y->rows, nc = y->cols;
    int64_t R = x->rows, C = x->cols;
    dr_idx parts[3];
    size_t k = 0;
    if (c0 > 0 || c0 + nc < C) { /* (a matrix: columns first) */
        if (c0 > 0)
            parts[k++] = zeros(t, 2, nr, c0);
        parts[k++] = g;
        if (c0 + nc < C)
            parts[k++] = zeros(t, 2, nr, C - c0 - nc);
        g = dr_arr_concat_id(t, 1, k, parts);
        k = 0;
    }
    if (r0 > 0)
        parts[k++] = zeros(t, x->rank, r0, C);
    parts[k++] = g;
    if (r0 + nr < R)
        parts[k++] = zeros(t, x->rank, R - r0 - nr, C);
    return k == 1 ? g : dr_arr_concat_id(t, 0, k, parts);
}

static void adjoint(dr_arr_node *y, dr_rpass *p, dr_real gr)
{
    dr_tape *t = p->t;
    dr_arr_node *a = y->x[0], *b = y->x[1];
    dr_idx g = gr.idx; /* (an array-valued node's adjoint) */
    switch (y->kind) {
    case DR_ARR_K_BIN:
        switch (y->ip[0]) {
        case BIN_ADD:
            acc(p, a, g);
            acc(p, b, g);
            return;
        case BIN_SUB:
            acc(p, a, g);
            if (wanted(p, b))
                acc(p, b, dr_arr_map_id(t, DR_FN_NEG, g));
            return;
        case BIN_MUL:
            if (wanted(p, a))
                acc(p, a, mul(t, g, b->pub));
            if (wanted(p, b))
                acc(p, b, mul(t, g, a->pub));
            return;
        default: /* a_bar += g / b, b_bar -= g y / b */
            if (wanted(p, a))
                acc(p, a, dr_arr_div_id(t, g, b->pub));
            if (wanted(p, b))
                acc(p, b, dr_arr_map_id(t, DR_FN_NEG,
                                        dr_arr_div_id(t, mul(t, g, y->pub), b->pub)));
            return;
        }
    case DR_ARR_K_SCALE: {
        dr_real s = {y->sv, y->sx >= 0 ? t->base + y->sx : DR_NONE};
        if (wanted(p, a))
            acc(p, a, scale(t, s, g));
        if (y->sx >= 0 && p->wanted(p, y->sx))
            acc_scalar(p, y->sx, dot(t, g, a->pub));
        return;
    }
    case DR_ARR_K_MAP:
        if (wanted(p, a))
            acc(p, a, map_deriv_times(t, y, g));
        return;
    case DR_ARR_K_BCAST:
        acc(p, a, g);
        if (wanted(p, b))
            acc(p, b, y->ip[0] == 0 ? dr_arr_sum_cols_id(t, g) : dr_arr_sum_rows_id(t, g));
        return;
    case DR_ARR_K_INDEX:
    case DR_ARR_K_MAX:
        if (wanted(p, a))
            acc(p, a, scale(t, gr, unit(t, a, y->ip[0])));
        return;
    case DR_ARR_K_BUILD: {
        const int64_t *rel = y->aux;
        for (int64_t i = 0; rel && i < y->n; i++)
            if (rel[i] >= 0 && p->wanted(p, rel[i]))
                acc_scalar(p, rel[i], element(t, y, g, i));
        return;
    }
    case DR_ARR_K_BLOCK:
        if (wanted(p, a))
            acc(p, a, embed(t, y, a, g));
        return;
    case DR_ARR_K_CONCAT: {
        dr_arr_node **xs = y->aux;
        int64_t off = 0;
        for (int64_t k = 0; k < y->naux; k++) {
            dr_arr_node *x = xs[k];
            if (wanted(p, x))
                acc(p, x, y->ip[0] == 1 ? dr_arr_slice2_id(t, g, 0, x->rows, off, x->cols)
                          : x->rank == 1 ? dr_arr_slice_id(t, g, off, x->rows)
                                         : dr_arr_slice2_id(t, g, off, x->rows, 0, x->cols));
            off += y->ip[0] == 1 ? x->cols : x->rows;
        }
        return;
    }
    case DR_ARR_K_GATHER_SCATTER:
        if (wanted(p, a))
            acc(p, a, y->ip[0] ? dr_arr_gather_id(t, g, (size_t)y->naux, y->aux)
                               : dr_arr_scatter_id(t, g, a->rows, y->aux));
        return;
    case DR_ARR_K_RESHAPE:
        if (wanted(p, a))
            acc(p, a, dr_arr_reshape_id(t, g, a->rank, a->rows, a->cols));
        return;
    case DR_ARR_K_DOT:
        if (wanted(p, a))
            acc(p, a, scale(t, gr, b->pub));
        if (wanted(p, b))
            acc(p, b, scale(t, gr, a->pub));
        return;
    case DR_ARR_K_MV: /* x[0] = m, x[1] = v */
        if (y->ip[0] == 0) { /* y = m v */
            if (wanted(p, a))
                acc(p, a, dr_arr_outer_id(t, g, b->pub));
            if (wanted(p, b))
                acc(p, b, dr_arr_vecmat_id(t, g, a->pub));
        } else { /* y = v^T m */
            if (wanted(p, a))
                acc(p, a, dr_arr_outer_id(t, b->pub, g));
            if (wanted(p, b))
                acc(p, b, dr_arr_matvec_id(t, a->pub, g));
        }
        return;
    case DR_ARR_K_MM: { /* C = op(A) op(B) */
        int ta = (int)y->ip[0], tb = (int)y->ip[1];
        if (wanted(p, a))
            acc(p, a, !ta ? dr_arr_matmul_id(t, g, 0, b->pub, !tb)    /* C_bar op(B)^T */
                          : dr_arr_matmul_id(t, b->pub, tb, g, 1));  /* op(B) C_bar^T */
        if (wanted(p, b))
            acc(p, b, !tb ? dr_arr_matmul_id(t, a->pub, !ta, g, 0)    /* op(A)^T C_bar */
                          : dr_arr_matmul_id(t, g, 1, a->pub, ta));  /* C_bar^T op(A) */
        return;
    }
    case DR_ARR_K_OUTER:
        if (wanted(p, a))
            acc(p, a, dr_arr_matvec_id(t, g, b->pub));
        if (wanted(p, b))
            acc(p, b, dr_arr_vecmat_id(t, a->pub, g));
        return;
    case DR_ARR_K_TRANSPOSE:
        if (wanted(p, a))
            acc(p, a, dr_arr_transpose_id(t, g));
        return;
    case DR_ARR_K_SUM:
        if (wanted(p, a))
            acc(p, a, scale(t, gr, ones(t, a)));
        return;
    case DR_ARR_K_SUM_AXIS:
        if (wanted(p, a))
            acc(p, a, y->ip[0] ? dr_arr_replicate_rows_id(t, g, a->rows)
                               : dr_arr_replicate_cols_id(t, g, a->cols));
        return;
    case DR_ARR_K_SOFTMAX: {
        if (!wanted(p, a))
            return;
        switch (y->ip[0]) {
        case SM_SOFTMAX: /* y g - y <y, g> per row */
            acc(p, a, softmax_jac(t, y, g));
            return;
        case SM_LOGSOFTMAX: /* g - exp(y) sum(g) per row */
            acc(p, a, sub(t, g, mul(t, dr_arr_map_id(t, DR_FN_EXP, y->pub),
                                    row_sums_spread(t, y, g))));
            return;
        default: /* logsumexp per row: softmax row * g_i */
            acc(p, a, mul(t, dr_arr_softmax_id(t, a->pub),
                          dr_arr_replicate_cols_id(t, g, a->cols)));
            return;
        }
    }
    case DR_ARR_K_LSE:
        if (wanted(p, a))
            acc(p, a, scale(t, gr, softmax_all(t, a)));
        return;
    default: /* (as in tangent) */
        dr__fail(t, DR_ENOTSUP);
        return;
    }
}

/* ------------------------------------------------------------ the hooks */

static dr_real rule_tangent(dr_arr_node *y, dr_rpass *p)
{
    dr_real none = {0.0, DR_NONE};
    if (!y->active || y->kind == DR_ARR_K_LEAF)
        return none; /* an input's tangent is a seed: arrays take none */
    return tangent(y, p);
}

static void rule_adjoint(dr_arr_node *y, dr_rpass *p, dr_real g)
{
    if (!y->active || y->kind == DR_ARR_K_LEAF || zero(g))
        return;
    adjoint(y, p, g);
}

void dr__nested_register(void)
{
    dr__arr_register_recorded(rule_tangent, rule_adjoint);
}
