/*
 * test_sparse.c - sparse Jacobians and Hessians (dr_sparse_jacobian,
 * dr_sparse_hessian and their plans) against the dense ones (dr_jacobian,
 * dr_hessian) of the same tape: banded, arrowhead and random programs,
 * every operation and node kind; the pattern is exactly the structural
 * nonzeros (a superset of the dense nonzeros, equal to them where no value
 * can cancel); plans reused at new points (after dr_replay, after
 * recording again) and refused on a tape of another shape; the errors,
 * and running out of memory at every allocation.
 */
#include "check.h"
#include "record/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 64

static dr_real sqr_(dr_tape *t, dr_real a)
{
    return dr_mul(t, a, a);
}

/* ----------------------------------------------------------- helpers */

/* the dense matrix of a sparse one (rows x cols, zeros elsewhere); false
   if the pattern is not sorted, repeats an entry or is out of range */
static bool expand(size_t rows, size_t cols, size_t nnz, const size_t *rp,
                   const size_t *ci, const double *val, double *D)
{
    memset(D, 0, rows * cols * sizeof *D);
    if (rp[0] != 0 || rp[rows] != nnz)
        return false;
    for (size_t i = 0; i < rows; i++)
        for (size_t e = rp[i]; e < rp[i + 1]; e++) {
            if (ci[e] >= cols || (e > rp[i] && ci[e] <= ci[e - 1]))
                return false;
            D[i * cols + ci[e]] = val ? val[e] : 1.0;
        }
    return true;
}

/* S (the sparse result) equals the dense A: the same values to rounding
   in the pattern, exact zeros outside it; exact: the pattern is exactly
   A's nonzeros */
static void check_sparse(const dr_sparse *S, size_t rows, size_t cols,
                         const double *A, bool exact)
{
    static double D[MAXN * MAXN], P[MAXN * MAXN];
    assert_int_equal(S->rows, rows);
    assert_int_equal(S->cols, cols);
    assert_true(expand(rows, cols, S->nnz, S->rowptr, S->colind, S->val, D));
    assert_true(expand(rows, cols, S->nnz, S->rowptr, S->colind, NULL, P));
    double s = 1e-300;
    for (size_t i = 0; i < rows * cols; i++)
        s = fmax(s, fabs(A[i]));
    for (size_t i = 0; i < rows * cols; i++) {
        if (P[i] == 0.0)
            assert_true(A[i] == 0.0); /* a nonzero outside the pattern */
        else if (exact)
            assert_true(A[i] != 0.0); /* the pattern is more than needed */
        CHK_CLOSE(D[i], A[i], 1e-12, 1e-13 * s);
    }
}

static void jac_against_dense(dr_tape *t, size_t m, const dr_real *y,
                              size_t n, const dr_real *x, bool exact)
{
    static double J[MAXN * MAXN];
    dr_sparse S;
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_sparse_jacobian(t, m, y, n, x, &S), DR_OK);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_jacobian(t, m, y, n, x, J), DR_OK);
    check_sparse(&S, m, n, J, exact);
    dr_sparse_free(&S);
    assert_null(S.val);
}

static void hess_against_dense(dr_tape *t, dr_real y, size_t n,
                               const dr_real *x, bool exact)
{
    static double H[MAXN * MAXN];
    dr_sparse S;
    size_t len = dr_tape_len(t);
    CHK_STATUS(dr_sparse_hessian(t, y, n, x, &S), DR_OK);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_hessian(t, y, n, x, H), DR_OK);
    check_sparse(&S, n, n, H, exact);
    dr_sparse_free(&S);
}

/* ------------------------------------------------- random programs
 * A program is a list of steps over a growing list of values (the inputs
 * first), each made once from a seed so that it can be recorded again at
 * other inputs with the same graph. */

enum {
    S_ADD, S_MUL, S_DIV, S_SIN, S_EXP, S_TANH, /* generic: no cancelling */
    S_SUB, S_NEG, S_UNARY, S_BINARY, S_MINMAX, S_SELECT, S_SUMN, S_REC2,
    S_COUNT
};
#define GENERIC (S_TANH + 1)

typedef struct step {
    int kind, which;
    size_t a, b, c;
} step;

typedef struct prog {
    size_t n, len, m;
    step s[200];
    size_t out[MAXN];
} prog;

/* args from the last few values, or an input now and then: sparse */
static size_t pick(chk_rng *r, size_t have, size_t n)
{
    if (chk_rng_below(r, 4) == 0)
        return chk_rng_below(r, n);
    size_t w = have < 5 ? have : 5;
    return have - 1 - chk_rng_below(r, w);
}

static void prog_make(prog *P, uint64_t seed, size_t n, size_t len, size_t m,
                      int kinds)
{
    chk_rng r;
    chk_rng_seed(&r, seed);
    P->n = n;
    P->len = len;
    P->m = m;
    for (size_t i = 0; i < len; i++) {
        step *s = &P->s[i];
        size_t have = n + i;
        s->kind = (int)chk_rng_below(&r, (uint64_t)kinds);
        s->which = (int)chk_rng_below(&r, 64);
        s->a = pick(&r, have, n);
        s->b = pick(&r, have, n);
        s->c = pick(&r, have, n);
        if (s->kind == S_SUB && s->a == s->b)
            s->b = s->a == 0 ? 1 : s->a - 1;
        /* a node of given partials has no value the log knows: no
           condition of a select (which would have no rule) */
        if (s->kind == S_SELECT && s->c >= n && P->s[s->c - n].kind == S_REC2)
            s->c = chk_rng_below(&r, n);
    }
    for (size_t i = 0; i < m; i++)
        P->out[i] = n + len - 1 - chk_rng_below(&r, len < 12 ? len : 12);
}

#define UNARY_CALL(op) dr_##op,
static dr_real (*const unary_ops[])(dr_tape *, dr_real) = {
    DR_RULES_UNARY(UNARY_CALL) DR_RULES_UNARY_FUSED(UNARY_CALL)};
static const char *const unary_names[] = {
#define UNARY_NAME(op) #op,
    DR_RULES_UNARY(UNARY_NAME) DR_RULES_UNARY_FUSED(UNARY_NAME)};
#define NUNARY (sizeof unary_ops / sizeof *unary_ops)
#define BINARY_CALL(op) dr_##op,
static dr_real (*const binary_ops[])(dr_tape *, dr_real, dr_real) = {
    DR_RULES_BINARY(BINARY_CALL)};
static const char *const binary_names[] = {
#define BINARY_NAME(op) #op,
    DR_RULES_BINARY(BINARY_NAME)};
#define NBINARY (sizeof binary_ops / sizeof *binary_ops)

/* a value in (lo, hi) made from any value v (its graph: v's, plus a
   sigmoid) */
static dr_real into(dr_tape *t, dr_real v, double lo, double hi)
{
    dr_real s = dr_sigmoid(t, v);
    return dr_add(t, dr_mul(t, s, dr_const(hi - lo)), dr_const(lo));
}

/* op's argument in its domain */
static dr_real unary_arg(dr_tape *t, const char *op, dr_real v)
{
    if (!strcmp(op, "asin") || !strcmp(op, "acos") || !strcmp(op, "atanh"))
        return into(t, v, -0.9, 0.9);
    if (!strcmp(op, "sqrt") || !strcmp(op, "log") || !strcmp(op, "log1p") ||
        !strcmp(op, "cbrt"))
        return into(t, v, 0.5, 2.0);
    if (!strcmp(op, "acosh"))
        return into(t, v, 1.5, 3.0);
    if (!strcmp(op, "tan"))
        return into(t, v, -1.0, 1.0);
    return v;
}

static dr_real binary_of(dr_tape *t, size_t k, dr_real a, dr_real b)
{
    const char *op = binary_names[k];
    if (!strcmp(op, "pow"))
        return dr_pow(t, into(t, a, 0.5, 2.0), b);
    if (!strcmp(op, "logbase"))
        return dr_logbase(t, into(t, a, 1.5, 3.0), into(t, b, 0.5, 2.0));
    if (!strcmp(op, "div"))
        return dr_div(t, a, into(t, b, 1.0, 2.0));
    return binary_ops[k](t, a, b);
}

/* record P at inputs xv: x its inputs, y its outputs */
static void prog_record(dr_tape *t, const prog *P, const double *xv,
                        dr_real *x, dr_real *y)
{
    static dr_real v[MAXN + 200];
    CHK_STATUS(dr_inputs(t, P->n, xv, x), DR_OK);
    for (size_t i = 0; i < P->n; i++)
        v[i] = x[i];
    for (size_t i = 0; i < P->len; i++) {
        const step *s = &P->s[i];
        dr_real a = v[s->a], b = v[s->b], c = v[s->c], r;
        switch (s->kind) {
        case S_ADD: r = dr_add(t, a, b); break;
        case S_MUL: r = dr_tanh(t, dr_mul(t, a, b)); break;
        case S_DIV: r = dr_div(t, a, into(t, b, 1.0, 2.0)); break;
        case S_SIN: r = dr_sin(t, a); break;
        case S_EXP: r = dr_exp(t, dr_tanh(t, a)); break;
        case S_TANH: r = dr_tanh(t, dr_add(t, a, b)); break;
        case S_SUB: r = dr_sub(t, a, b); break;
        case S_NEG: r = dr_neg(t, a); break;
        case S_UNARY: {
            size_t k = (size_t)s->which % NUNARY;
            r = unary_ops[k](t, unary_arg(t, unary_names[k], a));
            if (!strcmp(unary_names[k], "exp") ||
                !strcmp(unary_names[k], "sinh") ||
                !strcmp(unary_names[k], "cosh"))
                r = dr_tanh(t, r);
            break;
        }
        case S_BINARY:
            r = dr_tanh(t, binary_of(t, (size_t)s->which % NBINARY, a, b));
            break;
        case S_MINMAX:
            r = s->which & 1 ? dr_min(t, a, b) : dr_max(t, a, b);
            break;
        case S_SELECT: r = dr_select(t, c, a, b); break;
        case S_SUMN: {
            dr_real terms[3] = {a, b, c};
            r = dr_sumn(t, 3, terms);
            break;
        }
        default: { /* given partials (linear) */
            dr_idx id = dr_record2(t, a.idx, 0.5, b.idx, -2.0);
            r = (dr_real){0.5 * a.val - 2.0 * b.val, id};
            break;
        }
        }
        v[P->n + i] = r;
    }
    for (size_t i = 0; i < P->m; i++)
        y[i] = v[P->out[i]];
    CHK_STATUS(dr_tape_status(t), DR_OK);
}

static void random_inputs(chk_rng *r, size_t n, double *xv)
{
    for (size_t i = 0; i < n; i++)
        xv[i] = chk_rng_uniform(r, -1.5, 1.5);
}

/* ------------------------------------------------------------ Jacobians */

/* y_i = sin(x_{i-1} x_i) + x_{i+1}^2 (band of width 3) */
static void banded_jac(dr_tape *t, size_t n, dr_real *x, dr_real *y)
{
    for (size_t i = 0; i < n; i++) {
        dr_real r = sqr_(t, i + 1 < n ? x[i + 1] : dr_const(1.0));
        if (i > 0)
            r = dr_add(t, r, dr_sin(t, dr_mul(t, x[i - 1], x[i])));
        else
            r = dr_add(t, r, dr_exp(t, x[0]));
        y[i] = r;
    }
}

static void test_jacobian_banded(void **state)
{
    (void)state;
    for (int order = 1; order <= 2; order++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        double xv[40];
        dr_real x[40], y[40];
        for (size_t i = 0; i < 40; i++)
            xv[i] = 0.1 * (double)i - 1.33;
        CHK_STATUS(dr_inputs(t, 40, xv, x), DR_OK);
        banded_jac(t, 40, x, y);
        jac_against_dense(t, 40, y, 40, x, true);
        dr_sparse_plan *p;
        CHK_STATUS(dr_sparse_jacobian_plan(t, 40, y, 40, x, &p), DR_OK);
        size_t nnz;
        CHK_STATUS(dr_sparse_plan_pattern(p, NULL, NULL, &nnz, NULL, NULL),
                   DR_OK);
        assert_int_equal(nnz, 3 * 40 - 2);
        assert_int_equal(dr_sparse_plan_colors(p), 3);
        dr_sparse_plan_free(p);
        dr_tape_free(t);
    }
}

/* one dense row and one dense column */
static void test_jacobian_arrowhead(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    double xv[20];
    dr_real x[20], y[20];
    for (size_t i = 0; i < 20; i++)
        xv[i] = 0.3 + 0.05 * (double)i;
    CHK_STATUS(dr_inputs(t, 20, xv, x), DR_OK);
    y[0] = dr_sumn(t, 20, x);
    for (size_t i = 1; i < 20; i++)
        y[i] = dr_mul(t, x[0], dr_cos(t, x[i]));
    jac_against_dense(t, 20, y, 20, x, true);
    /* taller and wider */
    jac_against_dense(t, 7, y, 20, x, true);
    jac_against_dense(t, 20, y, 5, x, true);
    dr_tape_free(t);
}

static void test_jacobian_random(void **state)
{
    (void)state;
    static prog P;
    chk_rng r;
    chk_rng_seed(&r, 17);
    for (int k = 0; k < 60; k++) {
        int order = 1 + k % 2;
        bool generic = k % 3 == 0;
        size_t n = 4 + chk_rng_below(&r, 16), m = 1 + chk_rng_below(&r, 20);
        chk_context("jacobian program %d (order %d)", k, order);
        prog_make(&P, 1000 + (uint64_t)k, n, 30 + chk_rng_below(&r, 120), m,
                  generic ? GENERIC : S_COUNT);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        double xv[MAXN];
        dr_real x[MAXN], y[MAXN];
        random_inputs(&r, n, xv);
        prog_record(t, &P, xv, x, y);
        jac_against_dense(t, m, y, n, x, generic);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* sums by dr_add in every order: index order and backwards (each extends
   the run written last, upwards or downwards), from both ends at once,
   turning back midway, two chains built side by side, and such sums
   joined and squared (the Hessian reads their sets) */
static dr_real chain(dr_tape *t, const dr_real *x, size_t k, const size_t *idx)
{
    dr_real s = x[idx[0]];
    for (size_t i = 1; i < k; i++)
        s = dr_add(t, s, x[idx[i]]);
    return s;
}

static void test_sums_any_order(void **state)
{
    (void)state;
    enum { N = 24 };
    size_t up[N], down[N], ends[N], turn[12];
    for (size_t i = 0; i < N; i++) {
        up[i] = i;
        down[i] = N - 1 - i;
        ends[i] = i % 2 ? N - 1 - i / 2 : i / 2;
    }
    for (size_t i = 0; i < 6; i++) {
        turn[i] = 10 - i;      /* 10, 9, .., 5: downwards */
        turn[6 + i] = 15 + i;  /* then 15, .., 20: upwards again */
    }
    for (int order = 1; order <= 2; order++) {
        chk_context("order %d", order);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        double xv[N];
        dr_real x[N], y[8];
        for (size_t i = 0; i < N; i++)
            xv[i] = 0.2 + 0.07 * (double)i;
        CHK_STATUS(dr_inputs(t, N, xv, x), DR_OK);
        y[0] = chain(t, x, N, up);
        y[1] = chain(t, x, N, down);
        y[2] = chain(t, x, N, ends);
        y[3] = chain(t, x, 12, turn);
        /* two chains side by side: neither is the run written last */
        dr_real a = x[N - 1], b = x[0];
        for (size_t i = 1; i < N / 2; i++) {
            a = dr_add(t, a, x[N - 1 - i]);
            b = dr_add(t, b, x[i]);
        }
        y[4] = a;
        y[5] = b;
        /* a backwards sum of the upper half joined with a forward one of
           the lower, and a backwards sum under a square */
        y[6] = dr_add(t, chain(t, x, N / 2, down), chain(t, x, N / 2, up));
        y[7] = dr_mul(t, y[1], dr_sin(t, y[3]));
        jac_against_dense(t, 8, y, N, x, true);
        /* one dense row: one colour, by rows (the columns' colouring,
           which would need N, is not made) */
        dr_sparse_plan *p;
        CHK_STATUS(dr_sparse_jacobian_plan(t, 1, &y[1], N, x, &p), DR_OK);
        assert_int_equal(dr_sparse_plan_colors(p), 1);
        dr_sparse_plan_free(p);
        jac_against_dense(t, 1, &y[1], N, x, true);
        if (order == 2) {
            hess_against_dense(t, y[7], N, x, true);
            hess_against_dense(t, dr_mul(t, y[6], y[6]), N, x, true);
        }
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* x naming intermediate nodes, twice, and constants; y constants */
static void test_jacobian_places(void **state)
{
    (void)state;
    for (int order = 1; order <= 2; order++) {
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        dr_real a = dr_input(t, 0.7), b = dr_input(t, -0.4);
        dr_real u = dr_mul(t, a, b), v = dr_sin(t, u);
        dr_real y[4] = {dr_add(t, v, a), dr_const(2.0), dr_exp(t, b), u};
        dr_real x[5] = {u, a, dr_const(1.0), b, u};
        jac_against_dense(t, 4, y, 5, x, false);
        dr_tape_free(t);
    }
}

/* ------------------------------------------------------------ Hessians */

/* f = sum (x_{i-1} x_i)^2 + sin x_i + exp(x_i + x_{i+2}) / 2 */
static dr_real banded_hess(dr_tape *t, size_t n, const dr_real *x)
{
    dr_real f = dr_const(0.0);
    for (size_t i = 0; i < n; i++) {
        f = dr_add(t, f, dr_sin(t, x[i]));
        if (i > 0)
            f = dr_add(t, f, sqr_(t, dr_mul(t, x[i - 1], x[i])));
        if (i + 2 < n)
            f = dr_add(t, f, dr_mul(t, dr_const(0.5),
                                    dr_exp(t, dr_add(t, x[i], x[i + 2]))));
    }
    return f;
}

static void test_hessian_banded(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    double xv[50];
    dr_real x[50];
    for (size_t i = 0; i < 50; i++)
        xv[i] = 0.02 * (double)i - 0.613;
    CHK_STATUS(dr_inputs(t, 50, xv, x), DR_OK);
    dr_real f = banded_hess(t, 50, x);
    hess_against_dense(t, f, 50, x, true);
    dr_sparse_plan *p;
    CHK_STATUS(dr_sparse_hessian_plan(t, f, 50, x, &p), DR_OK);
    size_t nnz, rows, cols;
    CHK_STATUS(dr_sparse_plan_pattern(p, &rows, &cols, &nnz, NULL, NULL),
               DR_OK);
    assert_int_equal(rows, 50);
    assert_int_equal(cols, 50);
    assert_int_equal(nnz, 50 + 2 * 49 + 2 * 48); /* bandwidth 2 */
    /* a star colouring of a band of half-width 2 needs at most 5 */
    assert_true(dr_sparse_plan_colors(p) <= 5);
    dr_sparse_plan_free(p);
    dr_tape_free(t);
}

static void test_hessian_arrowhead(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    double xv[30];
    dr_real x[30];
    for (size_t i = 0; i < 30; i++)
        xv[i] = 0.3 - 0.02 * (double)i;
    CHK_STATUS(dr_inputs(t, 30, xv, x), DR_OK);
    dr_real terms[30];
    terms[0] = sqr_(t, x[0]);
    for (size_t i = 1; i < 30; i++)
        terms[i] = dr_mul(t, x[0], dr_exp(t, x[i]));
    dr_real f = dr_sumn(t, 30, terms);
    hess_against_dense(t, f, 30, x, true);
    dr_sparse_plan *p;
    CHK_STATUS(dr_sparse_hessian_plan(t, f, 30, x, &p), DR_OK);
    /* the hub one colour, every other variable another */
    assert_int_equal(dr_sparse_plan_colors(p), 2);
    dr_sparse_plan_free(p);
    dr_tape_free(t);
}

static void test_hessian_random(void **state)
{
    (void)state;
    static prog P;
    chk_rng r;
    chk_rng_seed(&r, 29);
    for (int k = 0; k < 60; k++) {
        bool generic = k % 3 == 0;
        size_t n = 3 + chk_rng_below(&r, 20);
        chk_context("hessian program %d", k);
        prog_make(&P, 5000 + (uint64_t)k, n, 20 + chk_rng_below(&r, 100), 4,
                  generic ? GENERIC : S_COUNT);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        double xv[MAXN];
        dr_real x[MAXN], y[MAXN];
        random_inputs(&r, n, xv);
        prog_record(t, &P, xv, x, y);
        /* a sum of the outputs, and one output alone */
        dr_real f = dr_sumn(t, P.m, y);
        hess_against_dense(t, f, n, x, generic);
        hess_against_dense(t, y[0], n, x, generic);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* every operation: f = op(u) * x2 + op2(u, v) with u, v from x0, x1 */
static void test_hessian_every_operation(void **state)
{
    (void)state;
    for (size_t k = 0; k < NUNARY + NBINARY; k++) {
        chk_context("operation %s", k < NUNARY ? unary_names[k]
                                               : binary_names[k - NUNARY]);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        double xv[4] = {0.3, -0.7, 0.45, 1.1};
        dr_real x[4];
        CHK_STATUS(dr_inputs(t, 4, xv, x), DR_OK);
        dr_real f;
        if (k < NUNARY)
            f = dr_add(t, unary_ops[k](t, unary_arg(t, unary_names[k], x[0])),
                       dr_mul(t, x[2], x[3]));
        else
            f = dr_add(t, binary_of(t, k - NUNARY, x[0], x[1]),
                       dr_sin(t, x[3]));
        /* exact where the operation has second partials and they are
           nonzero here (abs, relu, min, max, neg, add, sub: none) */
        hess_against_dense(t, f, 4, x, false);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* no second derivatives: an empty pattern, no colour, no sweep */
static void test_hessian_linear(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[3] = {dr_input(t, 1.0), dr_input(t, 2.0), dr_input(t, -3.0)};
    dr_real f = dr_sub(t, dr_add(t, x[0], dr_neg(t, x[1])),
                       dr_max(t, x[2], dr_abs(t, x[0])));
    dr_sparse H;
    CHK_STATUS(dr_sparse_hessian(t, f, 3, x, &H), DR_OK);
    assert_int_equal(H.nnz, 0);
    assert_int_equal(H.rows, 3);
    for (size_t i = 0; i <= 3; i++)
        assert_int_equal(H.rowptr[i], 0);
    dr_sparse_free(&H);
    dr_sparse_plan *p;
    CHK_STATUS(dr_sparse_hessian_plan(t, f, 3, x, &p), DR_OK);
    assert_int_equal(dr_sparse_plan_colors(p), 0);
    CHK_STATUS(dr_sparse_hessian_eval(t, p, f, 3, x, NULL), DR_OK);
    dr_sparse_plan_free(p);
    /* a constant */
    CHK_STATUS(dr_sparse_hessian(t, dr_const(1.0), 3, x, &H), DR_OK);
    assert_int_equal(H.nnz, 0);
    dr_sparse_free(&H);
    /* x naming an intermediate node, twice, and a constant (cut: the
       variables' own dependencies do not count) */
    dr_real u = dr_mul(t, x[0], x[1]);
    dr_real g = dr_add(t, sqr_(t, u), dr_mul(t, u, x[2]));
    dr_real xs[5] = {u, x[2], dr_const(1.0), u, x[0]};
    hess_against_dense(t, g, 5, xs, false);
    dr_tape_free(t);
}

/* ------------------------------------------------------------- reuse */

static void test_plan_reuse(void **state)
{
    (void)state;
    static prog P;
    chk_rng r;
    chk_rng_seed(&r, 41);
    for (int k = 0; k < 12; k++) {
        size_t n = 5 + chk_rng_below(&r, 12);
        chk_context("reuse program %d", k);
        /* no select: a fresh recording follows the same graph anyway,
           but min and max at order 2 are one node whatever they pick */
        prog_make(&P, 7000 + (uint64_t)k, n, 60, 6, S_SELECT);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        double xv[MAXN], xw[MAXN];
        static double Jd[MAXN * MAXN], Hd[MAXN * MAXN], D[MAXN * MAXN];
        static double val[MAXN * MAXN];
        dr_real x[MAXN], y[MAXN];
        random_inputs(&r, n, xv);
        prog_record(t, &P, xv, x, y);
        dr_real f = dr_sumn(t, P.m, y);
        dr_sparse_plan *pj, *ph;
        CHK_STATUS(dr_sparse_jacobian_plan(t, P.m, y, n, x, &pj), DR_OK);
        CHK_STATUS(dr_sparse_hessian_plan(t, f, n, x, &ph), DR_OK);
        size_t nj, nh;
        const size_t *rpj, *cij, *rph, *cih;
        dr_sparse_plan_pattern(pj, NULL, NULL, &nj, &rpj, &cij);
        dr_sparse_plan_pattern(ph, NULL, NULL, &nh, &rph, &cih);
        /* a new point by replay */
        random_inputs(&r, n, xw);
        CHK_STATUS(dr_replay(t, n, x, xw), DR_OK);
        CHK_STATUS(dr_sparse_jacobian_eval(t, pj, P.m, y, n, x, val), DR_OK);
        CHK_STATUS(dr_jacobian(t, P.m, y, n, x, Jd), DR_OK);
        assert_true(expand(P.m, n, nj, rpj, cij, val, D));
        for (size_t i = 0; i < P.m * n; i++)
            CHK_CLOSE(D[i], Jd[i], 1e-12, 1e-12);
        CHK_STATUS(dr_sparse_hessian_eval(t, ph, f, n, x, val), DR_OK);
        CHK_STATUS(dr_hessian(t, f, n, x, Hd), DR_OK);
        assert_true(expand(n, n, nh, rph, cih, val, D));
        for (size_t i = 0; i < n * n; i++)
            CHK_CLOSE(D[i], Hd[i], 1e-12, 1e-12);
        /* recorded again: on the cleared tape, and on a new one */
        for (int fresh = 0; fresh < 2; fresh++) {
            dr_tape *u = t;
            if (fresh)
                u = chk_tape_new();
            else
                CHK_STATUS(dr_tape_clear(u), DR_OK);
            CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
            random_inputs(&r, n, xw);
            prog_record(u, &P, xw, x, y);
            f = dr_sumn(u, P.m, y);
            CHK_STATUS(dr_sparse_jacobian_eval(u, pj, P.m, y, n, x, val),
                       DR_OK);
            CHK_STATUS(dr_jacobian(u, P.m, y, n, x, Jd), DR_OK);
            assert_true(expand(P.m, n, nj, rpj, cij, val, D));
            for (size_t i = 0; i < P.m * n; i++)
                CHK_CLOSE(D[i], Jd[i], 1e-12, 1e-12);
            CHK_STATUS(dr_sparse_hessian_eval(u, ph, f, n, x, val), DR_OK);
            CHK_STATUS(dr_hessian(u, f, n, x, Hd), DR_OK);
            assert_true(expand(n, n, nh, rph, cih, val, D));
            for (size_t i = 0; i < n * n; i++)
                CHK_CLOSE(D[i], Hd[i], 1e-12, 1e-12);
            if (fresh)
                dr_tape_free(u);
        }
        dr_sparse_plan_free(pj);
        dr_sparse_plan_free(ph);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* a plan on a tape of another shape: refused, and the tape works on */
static void test_plan_other_shape(void **state)
{
    (void)state;
    static prog P, Q;
    prog_make(&P, 11, 8, 50, 5, S_SELECT);
    prog_make(&Q, 12, 8, 50, 5, S_SELECT);
    double xv[8] = {0.1, -0.2, 0.3, 0.5, -0.7, 0.9, 1.1, -1.2};
    dr_real x[8], y[8];
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    prog_record(t, &P, xv, x, y);
    dr_real f = dr_sumn(t, 5, y);
    dr_sparse_plan *pj, *ph;
    CHK_STATUS(dr_sparse_jacobian_plan(t, 5, y, 8, x, &pj), DR_OK);
    CHK_STATUS(dr_sparse_hessian_plan(t, f, 8, x, &ph), DR_OK);
    static double val[64 * 64];
    /* another kind, other sizes, other places */
    CHK_STATUS(dr_sparse_hessian_eval(t, pj, f, 8, x, val), DR_ESHAPE);
    CHK_STATUS(dr_sparse_jacobian_eval(t, ph, 1, &f, 8, x, val), DR_ESHAPE);
    CHK_STATUS(dr_sparse_jacobian_eval(t, pj, 4, y, 8, x, val), DR_ESHAPE);
    CHK_STATUS(dr_sparse_hessian_eval(t, ph, f, 7, x, val), DR_ESHAPE);
    CHK_STATUS(dr_sparse_hessian_eval(t, ph, y[0], 8, x, val), DR_ESHAPE);
    dr_real xr[8];
    for (size_t i = 0; i < 8; i++)
        xr[i] = x[7 - i];
    CHK_STATUS(dr_sparse_jacobian_eval(t, pj, 5, y, 8, xr, val), DR_ESHAPE);
    /* another program with the same places */
    dr_tape *u = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
    prog_record(u, &Q, xv, x, y);
    dr_real g = dr_sumn(u, 5, y);
    CHK_STATUS(dr_sparse_jacobian_eval(u, pj, 5, y, 8, x, val), DR_ESHAPE);
    CHK_STATUS(dr_sparse_hessian_eval(u, ph, g, 8, x, val), DR_ESHAPE);
    /* the same program but one operation: the same node count and ids */
    dr_tape *v = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(v, 2), DR_OK);
    Q = P;
    for (size_t i = 0; i < Q.len; i++)
        if (Q.s[i].kind == S_SIN) {
            Q.s[i].kind = S_NEG;
            break;
        }
    dr_real xq[8], yq[8];
    prog_record(v, &Q, xv, xq, yq);
    dr_real h = dr_sumn(v, 5, yq);
    CHK_STATUS(dr_sparse_hessian_eval(v, ph, h, 8, xq, val), DR_ESHAPE);
    /* the tapes are as they were */
    static double H[64];
    CHK_STATUS(dr_hessian(u, g, 8, x, H), DR_OK);
    CHK_STATUS(dr_tape_status(u), DR_OK);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_sparse_plan_free(pj);
    dr_sparse_plan_free(ph);
    dr_tape_free(t);
    dr_tape_free(u);
    dr_tape_free(v);
}

/* ------------------------------------------------------------- forks */

typedef struct forkprog {
    dr_real x[6];
    dr_real out[5];
} forkprog;

/* job i: out[i] from x[i] and x[i + 1] */
static void fork_job(dr_tape *h, size_t i, void *ctx)
{
    forkprog *P = ctx;
    dr_real a = P->x[i], b = P->x[i + 1];
    for (int s = 0; s < 40; s++) {
        a = dr_add(h, dr_mul(h, a, dr_const(0.9)), dr_sin(h, dr_mul(h, a, b)));
        b = dr_tanh(h, dr_sub(h, b, dr_mul(h, dr_const(0.1), a)));
    }
    P->out[i] = dr_mul(h, a, b);
}

/* a job graph: a Jacobian off the log at order 2 (none at order 1), a
   Hessian; both again after a replay */
static void test_forked(void **state)
{
    (void)state;
    for (unsigned th = 1; th <= 2; th++) {
        chk_context("%u threads", th);
        for (int order = 1; order <= 2; order++) {
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_set_threads(t, th), DR_OK);
            CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
            forkprog P;
            double xv[6] = {0.3, -0.4, 0.8, 0.1, 0.6, -0.2};
            CHK_STATUS(dr_inputs(t, 6, xv, P.x), DR_OK);
            CHK_STATUS(dr_fork_run(t, 5, fork_job, &P), DR_OK);
            dr_real f = dr_sumn(t, 5, P.out);
            dr_sparse S;
            if (order == 1) {
                CHK_STATUS(dr_sparse_jacobian(t, 5, P.out, 6, P.x, &S),
                           DR_ENOTSUP);
                dr_tape_free(t);
                continue;
            }
            jac_against_dense(t, 5, P.out, 6, P.x, true);
            hess_against_dense(t, f, 6, P.x, true);
            dr_sparse_plan *pj, *ph;
            CHK_STATUS(dr_sparse_jacobian_plan(t, 5, P.out, 6, P.x, &pj),
                       DR_OK);
            CHK_STATUS(dr_sparse_hessian_plan(t, f, 6, P.x, &ph), DR_OK);
            assert_int_equal(dr_sparse_plan_colors(pj), 2);
            assert_int_equal(dr_sparse_plan_colors(ph), 3);
            for (size_t i = 0; i < 6; i++)
                xv[i] = -0.5 * xv[i] + 0.05;
            CHK_STATUS(dr_replay(t, 6, P.x, xv), DR_OK);
            double val[64], D[64], A[64];
            size_t nnz;
            const size_t *rp, *ci;
            CHK_STATUS(dr_sparse_jacobian_eval(t, pj, 5, P.out, 6, P.x, val),
                       DR_OK);
            CHK_STATUS(dr_jacobian(t, 5, P.out, 6, P.x, A), DR_OK);
            dr_sparse_plan_pattern(pj, NULL, NULL, &nnz, &rp, &ci);
            assert_true(expand(5, 6, nnz, rp, ci, val, D));
            for (size_t i = 0; i < 30; i++)
                CHK_CLOSE(D[i], A[i], 1e-12, 1e-14);
            CHK_STATUS(dr_sparse_hessian_eval(t, ph, f, 6, P.x, val), DR_OK);
            CHK_STATUS(dr_hessian(t, f, 6, P.x, A), DR_OK);
            dr_sparse_plan_pattern(ph, NULL, NULL, &nnz, &rp, &ci);
            assert_true(expand(6, 6, nnz, rp, ci, val, D));
            for (size_t i = 0; i < 36; i++)
                CHK_CLOSE(D[i], A[i], 1e-12, 1e-14);
            dr_sparse_plan_free(pj);
            dr_sparse_plan_free(ph);
            dr_tape_free(t);
        }
    }
    chk_context(NULL);
}

/* ------------------------------------------------------------- errors */

static void test_errors(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new(), *o = chk_tape_new();
    dr_real x[2] = {dr_input(t, 1.0), dr_input(t, 2.0)};
    dr_real y = dr_mul(t, x[0], dr_sin(t, x[1]));
    dr_real other = dr_input(o, 1.0);
    dr_sparse S;
    dr_sparse_plan *p = (dr_sparse_plan *)&S;
    CHK_STATUS(dr_sparse_jacobian(NULL, 1, &y, 2, x, &S), DR_EINVAL);
    assert_null(S.rowptr);
    CHK_STATUS(dr_sparse_jacobian(t, 1, &y, 2, x, NULL), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian(t, 1, NULL, 2, x, &S), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian(t, 1, &y, 2, NULL, &S), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian(t, 1, &other, 2, x, &S), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian_plan(t, 1, &y, 1, &other, &p), DR_EINVAL);
    assert_null(p);
    CHK_STATUS(dr_sparse_jacobian_plan(t, 1, &y, 1, x, NULL), DR_EINVAL);
    CHK_STATUS(dr_sparse_hessian_plan(t, y, 1, NULL, &p), DR_EINVAL);
    CHK_STATUS(dr_sparse_hessian(t, other, 2, x, &S), DR_EINVAL);
    CHK_STATUS(dr_sparse_plan_pattern(NULL, NULL, NULL, NULL, NULL, NULL),
               DR_EINVAL);
    assert_int_equal(dr_sparse_plan_colors(NULL), 0);
    dr_sparse_plan_free(NULL);
    dr_sparse_free(NULL);
    /* order 1: a Jacobian, no Hessian */
    CHK_STATUS(dr_sparse_hessian(t, y, 2, x, &S), DR_ENOTSUP);
    CHK_STATUS(dr_sparse_jacobian(t, 1, &y, 2, x, &S), DR_OK);
    assert_int_equal(S.nnz, 2);
    dr_sparse_free(&S);
    /* eval: NULL, bad ids */
    CHK_STATUS(dr_sparse_jacobian_plan(t, 1, &y, 2, x, &p), DR_OK);
    double val[4];
    CHK_STATUS(dr_sparse_jacobian_eval(t, p, 1, &y, 2, x, NULL), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian_eval(t, NULL, 1, &y, 2, x, val), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian_eval(NULL, p, 1, &y, 2, x, val), DR_EINVAL);
    CHK_STATUS(dr_sparse_jacobian_eval(t, p, 1, &other, 2, x, val),
               DR_EINVAL);
    /* a plan of t on o: other places */
    CHK_STATUS(dr_sparse_jacobian_eval(o, p, 1, &other, 1, &other, val),
               DR_ESHAPE);
    CHK_STATUS(dr_sparse_jacobian_eval(t, p, 1, &y, 2, x, val), DR_OK);
    CHK_CLOSE(val[0], sin(2.0), 1e-15, 0.0);
    CHK_CLOSE(val[1], cos(2.0), 1e-15, 0.0);
    /* a node recorded after the plan changes nothing: the graph up to y */
    dr_real z = dr_cos(t, y);
    CHK_STATUS(dr_sparse_jacobian_eval(t, p, 1, &y, 2, x, val), DR_OK);
    /* through an array node too (tests/test_array_recorded.c): the
       dense Jacobian's entries */
    dr_sparse_plan_free(p);
    double a3[3] = {1.0, 2.0, 3.0};
    dr_arr A = dr_arr_input(t, 1, 3, 1, a3);
    dr_real s = dr_mul(t, z, dr_arr_sum(t, A));
    double Jd[2];
    CHK_STATUS(dr_jacobian(t, 1, &s, 2, x, Jd), DR_OK);
    CHK_STATUS(dr_sparse_jacobian(t, 1, &s, 2, x, &S), DR_OK);
    for (size_t k = 0; k < S.nnz; k++)
        CHK_CLOSE(S.val[k], Jd[S.colind[k]], 1e-14, 1e-300);
    dr_sparse_free(&S);
    CHK_STATUS(dr_sparse_jacobian(t, 1, &z, 2, x, &S), DR_OK);
    dr_sparse_free(&S);
    dr_tape_free(t);
    dr_tape_free(o);
}

/* out of memory at every allocation of the calls: a status, no leak, and
   the tape works on */
static void test_out_of_memory(void **state)
{
    chk_alloc *a = *state;
    static prog P;
    prog_make(&P, 99, 10, 80, 6, S_COUNT);
    double xv[10] = {0.1, -0.2, 0.3, 0.5, -0.7, 0.9, 1.1, -1.2, 0.4, 0.6};
    for (int which = 0; which < 4; which++) {
        bool done = false;
        for (size_t k = 1; !done && k < 200; k++) {
            chk_alloc_install(a);
            dr_tape *t = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(t, which < 2 ? 2 : 1), DR_OK);
            dr_real x[10], y[10];
            prog_record(t, &P, xv, x, y);
            dr_real f = dr_sumn(t, 6, y);
            dr_sparse S;
            dr_sparse_plan *p = NULL;
            chk_alloc_fail_in(a, k, which & 1);
            dr_status st;
            if (which == 0)
                st = dr_sparse_hessian(t, f, 10, x, &S);
            else if (which == 1) {
                st = dr_sparse_hessian_plan(t, f, 10, x, &p);
                assert_true(st == DR_OK || p == NULL);
            } else
                st = dr_sparse_jacobian(t, 6, y, 10, x, &S);
            chk_alloc_fail_in(a, 0, false);
            if (st == DR_OK) {
                done = a->fails == 0;
                if (which != 1)
                    dr_sparse_free(&S);
            } else {
                CHK_STATUS(st, DR_ENOMEM);
            }
            dr_sparse_plan_free(p);
            /* the tape is usable */
            if (which < 2)
                hess_against_dense(t, f, 10, x, false);
            jac_against_dense(t, 6, y, 10, x, false);
            dr_tape_free(t);
            assert_int_equal(a->live, 0);
            chk_alloc_uninstall();
        }
        assert_true(done);
    }
}

int main(void)
{
    static chk_alloc alloc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jacobian_banded),
        cmocka_unit_test(test_jacobian_arrowhead),
        cmocka_unit_test(test_jacobian_random),
        cmocka_unit_test(test_jacobian_places),
        cmocka_unit_test(test_sums_any_order),
        cmocka_unit_test(test_hessian_banded),
        cmocka_unit_test(test_hessian_arrowhead),
        cmocka_unit_test(test_hessian_random),
        cmocka_unit_test(test_hessian_every_operation),
        cmocka_unit_test(test_hessian_linear),
        cmocka_unit_test(test_plan_reuse),
        cmocka_unit_test(test_plan_other_shape),
        cmocka_unit_test(test_forked),
        cmocka_unit_test(test_errors),
        cmocka_unit_test_prestate_setup_teardown(test_out_of_memory, NULL,
                                                 chk_alloc_teardown, &alloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
