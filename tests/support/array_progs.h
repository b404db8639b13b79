/*
 * array_progs.h - the array primitives of dualrev.h as small random
 * programs, shared by the tests of the reverse rules (test_array_ops.c), of
 * the forward rules (test_array_forward.c) and of the second-order rules
 * (test_array_hvp.c, test_array_recorded.c): input shapes drawn at random
 * (empty arrays, 1 x n and n x 1 included), one program per primitive (and
 * a few compositions), the input values each one needs, and for second
 * order a nonlinear objective of a program's output.
 *
 * Static definitions, included by one test file each (not a library part).
 */
#ifndef DR_TEST_ARRAY_PROGS_H
#define DR_TEST_ARRAY_PROGS_H

#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXIN 3

typedef struct shapes {
    int nin;
    int rank[MAXIN];
    int64_t rows[MAXIN], cols[MAXIN];
    int64_t p[4];      /* op parameters (indices, flags, counts) */
    int64_t ix[64];    /* index arrays for gather / scatter      */
} shapes;

typedef struct prog prog;
struct prog {
    const char *name;
    /* choose shapes and parameters */
    void (*shape)(chk_rng *r, shapes *s);
    /* array-valued program (ys == NULL) or scalar-valued (ya == NULL) */
    dr_arr (*ya)(dr_tape *t, const dr_arr *in, const shapes *s);
    dr_real (*ys)(dr_tape *t, const dr_arr *in, const shapes *s);
    double lo, hi; /* range of input values */
    bool spread;   /* inputs distinct and well separated (max) */
};

static int64_t numel(const shapes *s, int k)
{
    return s->rows[k] * s->cols[k];
}

static int64_t total_in(const shapes *s)
{
    int64_t n = 0;
    for (int k = 0; k < s->nin; k++)
        n += numel(s, k);
    return n;
}

static void fill_inputs(chk_rng *r, const prog *p, double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = chk_rng_uniform(r, p->lo, p->hi);
    if (p->spread) { /* a shuffled grid with small noise: no near ties */
        for (int64_t i = 0; i < n; i++)
            x[i] = 0.25 * (double)i - 0.1 * (double)n + chk_rng_uniform(r, 0, 0.05);
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)chk_rng_below(r, (uint64_t)i + 1);
            double tmp = x[i];
            x[i] = x[j];
            x[j] = tmp;
        }
    }
}

/* ------------------------------------------------------------- shapes */

/* a dimension: mostly 1..5, sometimes 0 */
static int64_t dim(chk_rng *r)
{
    uint64_t u = chk_rng_below(r, 12);
    return u == 0 ? 0 : (int64_t)(1 + u % 5);
}

static int64_t dim1(chk_rng *r) /* at least 1 */
{
    return 1 + (int64_t)chk_rng_below(r, 5);
}

static void set(shapes *s, int k, int rank, int64_t rows, int64_t cols)
{
    if (k + 1 > s->nin)
        s->nin = k + 1;
    s->rank[k] = rank;
    s->rows[k] = rows;
    s->cols[k] = rank == 1 ? 1 : cols;
}

/* one array of any rank, n inputs of that same shape */
static void sh_same(chk_rng *r, shapes *s, int n)
{
    int rank = 1 + (int)chk_rng_below(r, 2);
    int64_t a = dim(r), b = dim(r);
    for (int k = 0; k < n; k++)
        set(s, k, rank, a, b);
}
static void sh_one(chk_rng *r, shapes *s) { sh_same(r, s, 1); }
static void sh_two(chk_rng *r, shapes *s) { sh_same(r, s, 2); }
static void sh_one_nonempty(chk_rng *r, shapes *s)
{
    int rank = 1 + (int)chk_rng_below(r, 2);
    set(s, 0, rank, dim1(r), dim1(r));
}
static void sh_mat(chk_rng *r, shapes *s) { set(s, 0, 2, dim(r), dim(r)); }
/* rows of at least one element (logsumexp of an empty row is -inf) */
static void sh_mat_nonempty_rows(chk_rng *r, shapes *s)
{
    set(s, 0, 2, dim(r), dim1(r));
}
static void sh_mat_vec_cols(chk_rng *r, shapes *s)
{
    int64_t a = dim(r), b = dim(r);
    set(s, 0, 2, a, b);
    set(s, 1, 1, b, 1);
}
static void sh_mat_vec_rows(chk_rng *r, shapes *s)
{
    int64_t a = dim(r), b = dim(r);
    set(s, 0, 2, a, b);
    set(s, 1, 1, a, 1);
}
static void sh_vec_count(chk_rng *r, shapes *s)
{
    set(s, 0, 1, dim(r), 1);
    s->p[0] = dim(r);
}
static void sh_scalar_and_any(chk_rng *r, shapes *s)
{
    set(s, 0, 1, 1, 1);
    int rank = 1 + (int)chk_rng_below(r, 2);
    set(s, 1, rank, dim(r), dim(r));
}
static void sh_scalar_and_two(chk_rng *r, shapes *s)
{
    sh_scalar_and_any(r, s);
    set(s, 2, s->rank[1], s->rows[1], s->cols[1]);
}
static void sh_matmul(chk_rng *r, shapes *s)
{
    int64_t m = dim(r), k = dim(r), n = dim(r);
    int ta = (int)chk_rng_below(r, 2), tb = (int)chk_rng_below(r, 2);
    set(s, 0, 2, ta ? k : m, ta ? m : k);
    set(s, 1, 2, tb ? n : k, tb ? k : n);
    s->p[0] = ta;
    s->p[1] = tb;
}
static void sh_two_vecs(chk_rng *r, shapes *s)
{
    set(s, 0, 1, dim(r), 1);
    set(s, 1, 1, dim(r), 1);
}
static void sh_index(chk_rng *r, shapes *s)
{
    sh_one_nonempty(r, s);
    s->p[0] = (int64_t)chk_rng_below(r, (uint64_t)numel(s, 0));
    s->p[1] = (int64_t)chk_rng_below(r, (uint64_t)numel(s, 0));
}
static void sh_index2(chk_rng *r, shapes *s)
{
    set(s, 0, 2, dim1(r), dim1(r));
    s->p[0] = (int64_t)chk_rng_below(r, (uint64_t)s->rows[0]);
    s->p[1] = (int64_t)chk_rng_below(r, (uint64_t)s->cols[0]);
}
static void sh_scalars(chk_rng *r, shapes *s)
{
    set(s, 0, 1, dim1(r), 1);
    s->p[0] = dim(r); /* length of the built vector */
}
static void sh_slice(chk_rng *r, shapes *s)
{
    sh_one(r, s);
    int64_t R = s->rows[0];
    s->p[0] = (int64_t)chk_rng_below(r, (uint64_t)R + 1);
    s->p[1] = (int64_t)chk_rng_below(r, (uint64_t)(R - s->p[0]) + 1);
}
static void sh_slice2(chk_rng *r, shapes *s)
{
    sh_mat(r, s);
    int64_t R = s->rows[0], C = s->cols[0];
    s->p[0] = (int64_t)chk_rng_below(r, (uint64_t)R + 1);
    s->p[1] = (int64_t)chk_rng_below(r, (uint64_t)(R - s->p[0]) + 1);
    s->p[2] = (int64_t)chk_rng_below(r, (uint64_t)C + 1);
    s->p[3] = (int64_t)chk_rng_below(r, (uint64_t)(C - s->p[2]) + 1);
}
static void sh_concat(chk_rng *r, shapes *s)
{
    int axis = (int)chk_rng_below(r, 2);
    int rank = axis ? 2 : 1 + (int)chk_rng_below(r, 2);
    int64_t fixed = dim(r);
    for (int k = 0; k < 3; k++) {
        if (axis == 0)
            set(s, k, rank, dim(r), fixed);
        else
            set(s, k, 2, fixed, dim(r));
    }
    s->p[0] = axis;
}
static void sh_gather(chk_rng *r, shapes *s)
{
    sh_one_nonempty(r, s);
    s->p[0] = dim(r) * 2; /* count, up to 10 */
    for (int64_t k = 0; k < s->p[0]; k++)
        s->ix[k] = (int64_t)chk_rng_below(r, (uint64_t)s->rows[0]);
}
static void sh_scatter(chk_rng *r, shapes *s)
{
    sh_one(r, s);
    s->p[0] = dim1(r); /* out_len */
    for (int64_t k = 0; k < s->rows[0]; k++)
        s->ix[k] = (int64_t)chk_rng_below(r, (uint64_t)s->p[0]);
}
static void sh_reshape(chk_rng *r, shapes *s)
{
    int64_t a = dim(r), b = dim(r);
    int rank = 1 + (int)chk_rng_below(r, 2);
    set(s, 0, rank, rank == 1 ? a * b : a, b);
    /* target: the transposed dims as a matrix, or a vector */
    s->p[0] = 1 + (int64_t)chk_rng_below(r, 2);
    s->p[1] = s->p[0] == 1 ? a * b : b;
    s->p[2] = s->p[0] == 1 ? 1 : a;
}

/* ------------------------------------------------------------ programs */

#define BIN(nm, fn)                                                           \
    static dr_arr p_##nm(dr_tape *t, const dr_arr *in, const shapes *s)       \
    {                                                                         \
        (void)s;                                                              \
        return fn(t, in[0], in[1]);                                           \
    }
BIN(add, dr_arr_add)
BIN(sub, dr_arr_sub)
BIN(mul, dr_arr_mul)
BIN(div, dr_arr_div)
BIN(add_rowvec, dr_arr_add_rowvec)
BIN(add_colvec, dr_arr_add_colvec)
BIN(matvec, dr_arr_matvec)
BIN(outer, dr_arr_outer)

static dr_arr p_add_id(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s; /* the id API, and the same operand twice */
    dr_idx y = dr_arr_add_id(t, in[0].idx, in[0].idx);
    return dr_arr_get(t, dr_arr_mul_id(t, y, in[1].idx));
}
static dr_arr p_vecmat(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_vecmat(t, in[1], in[0]);
}
/* the matrix used twice: the second reverse rule accumulates (dger) */
static dr_arr p_matvec_twice(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_arr v2 = dr_arr_map(t, DR_FN_SIN, in[1]);
    return dr_arr_add(t, dr_arr_matvec(t, in[0], in[1]),
                      dr_arr_matvec(t, in[0], v2));
}
static dr_arr p_vecmat_twice(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_arr v2 = dr_arr_map(t, DR_FN_COS, in[1]);
    return dr_arr_sub(t, dr_arr_vecmat(t, in[1], in[0]),
                      dr_arr_vecmat(t, v2, in[0]));
}
/* the transposed operands accumulating into adjoints already live */
static dr_arr p_matmul_twice(dr_tape *t, const dr_arr *in, const shapes *s)
{
    dr_arr a = in[0], b = in[1];
    dr_arr p1 = dr_arr_matmul(t, a, (int)s->p[0], b, (int)s->p[1]);
    dr_arr p2 = dr_arr_matmul(t, dr_arr_map(t, DR_FN_SQUARE, a), (int)s->p[0],
                              b, (int)s->p[1]);
    dr_arr p3 = dr_arr_matmul(t, a, (int)s->p[0], dr_arr_map(t, DR_FN_SIN, b),
                              (int)s->p[1]);
    return dr_arr_add(t, dr_arr_add(t, p1, p2), p3);
}
static dr_arr p_outer_twice(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_arr o = dr_arr_outer(t, in[0], in[1]);
    return dr_arr_mul(t, o, dr_arr_outer(t, in[0], in[1]));
}
static dr_arr p_transpose_twice(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    /* the second transpose rule adds into an adjoint the first wrote */
    dr_arr a = dr_arr_transpose(t, in[0]);
    dr_arr b = dr_arr_transpose(t, in[0]);
    return dr_arr_mul(t, dr_arr_map(t, DR_FN_EXP, a), b);
}
static dr_arr p_scale(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_real k = dr_arr_index(t, in[0], 0);
    return dr_arr_scale(t, dr_mul(t, k, k), in[1]);
}
static dr_arr p_scale_id(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    double v;
    dr_idx k = dr_arr_index_id(t, in[0].idx, 0, &v);
    return dr_arr_get(t, dr_arr_scale_id(t, v, k, in[1].idx));
}

static dr_arr p_axpy(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_real k = dr_arr_index(t, in[0], 0);
    return dr_arr_axpy(t, dr_mul(t, k, k), in[1], in[2]);
}
static dr_arr p_axpy_id(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    double v;
    dr_idx k = dr_arr_index_id(t, in[0].idx, 0, &v);
    return dr_arr_get(t, dr_arr_axpy_id(t, v, k, in[1].idx, in[2].idx));
}
/* x and y one array, read again after: each share adds into an adjoint
   that a later node wrote */
static dr_arr p_axpy_self(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_real k = dr_arr_index(t, in[0], 0);
    return dr_arr_mul(t, dr_arr_axpy(t, k, in[1], in[1]), in[1]);
}

#define MAP(fn)                                                               \
    static dr_arr p_map_##fn(dr_tape *t, const dr_arr *in, const shapes *s)   \
    {                                                                         \
        (void)s;                                                              \
        return dr_arr_map(t, DR_FN_##fn, in[0]);                              \
    }
MAP(NEG)
MAP(ABS)
MAP(SQRT)
MAP(EXP)
MAP(LOG)
MAP(SIN)
MAP(COS)
MAP(TANH)
MAP(SIGMOID)
MAP(RELU)
MAP(SQUARE)

static dr_arr p_rep_rows(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_replicate_rows(t, in[0], s->p[0]);
}
static dr_arr p_rep_cols(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_get(t, dr_arr_replicate_cols_id(t, in[0].idx, s->p[0]));
}
static dr_real p_dot(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_dot(t, in[0], in[1]);
}
static dr_real p_dot_self(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    double v;
    dr_real r;
    r.idx = dr_arr_dot_id(t, in[0].idx, in[0].idx, &v);
    r.val = v;
    return r;
}
static dr_arr p_matmul(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_matmul(t, in[0], (int)s->p[0], in[1], (int)s->p[1]);
}
static dr_arr p_matmul_self(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s; /* a a^T: both operands the same node */
    return dr_arr_get(t, dr_arr_matmul_id(t, in[0].idx, 0, in[0].idx, 1));
}
static dr_arr p_transpose(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_transpose(t, in[0]);
}
static dr_real p_sum(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_sum(t, in[0]);
}
static dr_arr p_sum_rows(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_sum_rows(t, in[0]);
}
static dr_arr p_sum_cols(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_sum_cols(t, in[0]);
}
static dr_real p_max(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_max(t, in[0]);
}
static dr_arr p_softmax(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_softmax(t, in[0]);
}
static dr_arr p_log_softmax(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_log_softmax(t, in[0]);
}
static dr_real p_logsumexp(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_logsumexp(t, in[0]);
}
static dr_arr p_lse_rows(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    return dr_arr_logsumexp_rows(t, in[0]);
}
static dr_real p_index(dr_tape *t, const dr_arr *in, const shapes *s)
{
    /* two index nodes into one array, one of them used twice */
    dr_real a = dr_arr_index(t, in[0], s->p[0]);
    dr_real b = dr_arr_index(t, in[0], s->p[1]);
    return dr_add(t, dr_mul(t, a, b), dr_sin(t, a));
}
static dr_real p_index2(dr_tape *t, const dr_arr *in, const shapes *s)
{
    dr_real a = dr_arr_index2(t, in[0], s->p[0], s->p[1]);
    return dr_mul(t, a, a);
}
static dr_arr p_from_reals(dr_tape *t, const dr_arr *in, const shapes *s)
{
    /* scalars taken out of in[0] (some repeated), a constant, and squares */
    dr_real xs[8];
    int64_t n = s->p[0];
    for (int64_t i = 0; i < n; i++) {
        dr_real e = dr_arr_index(t, in[0], i % in[0].rows);
        xs[i] = i == 2 ? dr_const(1.5) : dr_mul(t, e, dr_const((double)i + 1));
    }
    return dr_arr_from_reals(t, (size_t)n, xs);
}
static dr_arr p_from_reals_id(dr_tape *t, const dr_arr *in, const shapes *s)
{
    double v[8];
    dr_idx id[8];
    int64_t n = s->p[0];
    for (int64_t i = 0; i < n; i++)
        id[i] = dr_arr_index_id(t, in[0].idx, (i * 3) % in[0].rows, &v[i]);
    return dr_arr_get(t, dr_arr_from_reals_id(t, (size_t)n, v, id));
}
static dr_arr p_slice(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_slice(t, in[0], s->p[0], s->p[1]);
}
static dr_arr p_slice2(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_slice2(t, in[0], s->p[0], s->p[1], s->p[2], s->p[3]);
}
static dr_arr p_concat(dr_tape *t, const dr_arr *in, const shapes *s)
{
    dr_arr xs[4] = {in[0], in[1], in[0], in[2]};
    return dr_arr_concat(t, (int)s->p[0], 4, xs);
}
static dr_arr p_concat_id(dr_tape *t, const dr_arr *in, const shapes *s)
{
    dr_idx xs[3] = {in[2].idx, in[1].idx, in[0].idx};
    return dr_arr_get(t, dr_arr_concat_id(t, (int)s->p[0], 3, xs));
}
static dr_arr p_gather(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_gather(t, in[0], (size_t)s->p[0], s->ix);
}
static dr_arr p_scatter(dr_tape *t, const dr_arr *in, const shapes *s)
{
    return dr_arr_scatter(t, in[0], s->p[0], s->ix);
}
static dr_arr p_reshape(dr_tape *t, const dr_arr *in, const shapes *s)
{
    /* reshape, then an op on the reshaped array (values are shared) */
    dr_arr y = dr_arr_reshape(t, in[0], (int)s->p[0], s->p[1], s->p[2]);
    return dr_arr_mul(t, y, y);
}

/* a composite: scalars and arrays mixed on one tape */
static dr_real p_mixed(dr_tape *t, const dr_arr *in, const shapes *s)
{
    (void)s;
    dr_arr m = in[0], v = in[1];
    dr_arr h = dr_arr_map(t, DR_FN_TANH, dr_arr_matvec(t, m, v));
    dr_real a = dr_arr_sum(t, h);
    dr_arr g = dr_arr_scale(t, a, v);
    dr_arr sm = dr_arr_softmax(t, g);
    return dr_add(t, dr_arr_dot(t, sm, v), dr_arr_logsumexp(t, h));
}
static void sh_mixed(chk_rng *r, shapes *s)
{
    int64_t n = dim1(r);
    set(s, 0, 2, n, n);
    set(s, 1, 1, n, 1);
}

#define A(nm, sh, lo, hi) {#nm, sh, p_##nm, NULL, lo, hi, false}
#define S(nm, sh, lo, hi) {#nm, sh, NULL, p_##nm, lo, hi, false}

static const prog progs[] = {
    A(add, sh_two, -2, 2),
    A(sub, sh_two, -2, 2),
    A(mul, sh_two, -2, 2),
    A(div, sh_two, 0.5, 2),
    A(add_id, sh_two, -2, 2),
    A(scale, sh_scalar_and_any, -2, 2),
    A(scale_id, sh_scalar_and_any, -2, 2),
    A(axpy, sh_scalar_and_two, -2, 2),
    A(axpy_id, sh_scalar_and_two, -2, 2),
    A(axpy_self, sh_scalar_and_any, -2, 2),
    A(map_NEG, sh_one, -2, 2),
    A(map_ABS, sh_one, -2, 2),
    A(map_SQRT, sh_one, 0.2, 3),
    A(map_EXP, sh_one, -2, 2),
    A(map_LOG, sh_one, 0.2, 3),
    A(map_SIN, sh_one, -2, 2),
    A(map_COS, sh_one, -2, 2),
    A(map_TANH, sh_one, -2, 2),
    A(map_SIGMOID, sh_one, -4, 4),
    A(map_RELU, sh_one, -2, 2),
    A(map_SQUARE, sh_one, -2, 2),
    A(add_rowvec, sh_mat_vec_cols, -2, 2),
    A(add_colvec, sh_mat_vec_rows, -2, 2),
    A(rep_rows, sh_vec_count, -2, 2),
    A(rep_cols, sh_vec_count, -2, 2),
    S(dot, sh_two, -2, 2),
    S(dot_self, sh_one, -2, 2),
    A(matvec, sh_mat_vec_cols, -2, 2),
    A(vecmat, sh_mat_vec_rows, -2, 2),
    A(matmul, sh_matmul, -2, 2),
    A(matmul_self, sh_mat, -2, 2),
    A(matvec_twice, sh_mat_vec_cols, -2, 2),
    A(vecmat_twice, sh_mat_vec_rows, -2, 2),
    A(matmul_twice, sh_matmul, -2, 2),
    A(outer_twice, sh_two_vecs, -2, 2),
    A(outer, sh_two_vecs, -2, 2),
    A(transpose, sh_mat, -2, 2),
    A(transpose_twice, sh_mat, -2, 2),
    S(sum, sh_one, -2, 2),
    A(sum_rows, sh_mat, -2, 2),
    A(sum_cols, sh_mat, -2, 2),
    {"max", sh_one_nonempty, NULL, p_max, 0, 0, true},
    A(softmax, sh_one, -3, 3),
    A(log_softmax, sh_one, -3, 3),
    S(logsumexp, sh_one_nonempty, -3, 3),
    A(lse_rows, sh_mat_nonempty_rows, -3, 3),
    S(index, sh_index, -2, 2),
    S(index2, sh_index2, -2, 2),
    A(from_reals, sh_scalars, -2, 2),
    A(from_reals_id, sh_scalars, -2, 2),
    A(slice, sh_slice, -2, 2),
    A(slice2, sh_slice2, -2, 2),
    A(concat, sh_concat, -2, 2),
    A(concat_id, sh_concat, -2, 2),
    A(gather, sh_gather, -2, 2),
    A(scatter, sh_scatter, -2, 2),
    A(reshape, sh_reshape, -2, 2),
    S(mixed, sh_mixed, -1, 1),
};

#define NPROGS (sizeof progs / sizeof progs[0])

/* ------------------------------------------------- a nonlinear objective
 * Of a program's output, for the second-order tests: 0.5 <w, y * y> +
 * <c, y> for an array, 0.5 y^2 + 0.3 y for a scalar, so that curvature
 * comes from the program and from the objective both.  Weights for
 * outputs of up to OBJ_MAXOUT elements (static storage: 64 KB). */
#define OBJ_MAXOUT 4096
typedef struct objective {
    double w[OBJ_MAXOUT], c[OBJ_MAXOUT];
} objective;

static inline void objective_draw(chk_rng *r, objective *ob)
{
    for (int i = 0; i < OBJ_MAXOUT; i++) {
        ob->w[i] = chk_rng_uniform(r, 0.5, 1.5);
        ob->c[i] = chk_rng_uniform(r, -1, 1);
    }
}

/* the objective of p at the inputs in; the output into *ya (idx DR_NONE
   for a scalar program) or *ys */
static inline dr_real objective_of(dr_tape *t, const prog *p,
                                   const dr_arr *in, const shapes *s,
                                   const objective *ob, dr_arr *ya,
                                   dr_real *ys)
{
    ya->idx = DR_NONE;
    if (p->ya) {
        dr_arr y = p->ya(t, in, s);
        assert_int_not_equal(y.idx, DR_NONE);
        *ya = y;
        dr_arr w = dr_arr_const(t, y.rank, y.rows, y.cols, ob->w);
        dr_arr c = dr_arr_const(t, y.rank, y.rows, y.cols, ob->c);
        dr_real sq = dr_arr_dot(t, w, dr_arr_mul(t, y, y));
        return dr_add(t, dr_mul(t, dr_const(0.5), sq), dr_arr_dot(t, c, y));
    }
    dr_real y = p->ys(t, in, s);
    *ys = y;
    return dr_add(t, dr_mul(t, dr_const(0.5), dr_mul(t, y, y)),
                  dr_mul(t, dr_const(0.3), y));
}

/* a sparse result S against the dense D (rows x cols, row-major): each
   entry to rounding, and every entry of D outside S's pattern zero */
static inline void sparse_is_dense(const dr_sparse *S, const double *D,
                                   size_t rows, size_t cols)
{
    bool *in = calloc(rows * cols + 1, sizeof *in);
    double m = 0.0;
    for (size_t q = 0; q < rows * cols; q++)
        m = fmax(m, fabs(D[q]));
    assert_int_equal(S->rows, rows);
    for (size_t i = 0; i < S->rows; i++)
        for (size_t k = S->rowptr[i]; k < S->rowptr[i + 1]; k++) {
            size_t j = S->colind[k];
            in[i * cols + j] = true;
            CHK_CLOSE(S->val[k], D[i * cols + j], 1e-12, 1e-12 * (1.0 + m));
        }
    for (size_t q = 0; q < rows * cols; q++)
        if (!in[q])
            CHK_SAME(D[q], 0.0);
    free(in);
}

#endif /* DR_TEST_ARRAY_PROGS_H */
