/*
 * test_program.c - linear statements recorded with their programs
 * (dr_fe_prog, cbits/record/program.h), on random programs: a program
 * whose partials move with its leaves is refused (DR_FE_STMT_BY_OPS,
 * nothing recorded) and recorded by operations instead, as a front end
 * does; any other is one node whose value is bit for bit the operations'
 * one by one, and whose gradient is theirs to rounding.  On a tape of
 * order 2 it replays bit for bit as a fresh recording at the new point,
 * (runs of one program's statements back to back too, two of them
 * evaluated side by side), and every second-order driver (products, dense Hessians by both methods,
 * sparse Hessians, the recorded tangent and adjoint passes) agrees with the
 * same function recorded operation by operation, and with finite
 * differences.  Bad programs, ids and values are refused as documented.
 */
#include "check.h"
#include "frontend/frontend.h"

#include <math.h>
#include <string.h>

enum { ADD = 1, SUB, MUL, DIV, NEG };

/* a program's bytes (cbits/record/program.h) */
typedef struct prog {
    unsigned char code[4 + 8 * 4 + 3 * 40]; /* (no pairs: code[3] 0) */
    unsigned n, c, m;
} prog;

static void put_const(prog *p, unsigned j, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int k = 0; k < 8; k++)
        p->code[4 + 8 * j + (unsigned)k] = (unsigned char)(u >> (8 * k));
}

static unsigned char *insn(prog *p, unsigned i)
{
    return p->code + 4 + 8 * p->c + 3 * i;
}

/* a tape that records statements with their programs */
static dr_tape *prog_tape(void)
{
    dr_tape *t = dr_tape_new();
    CHK_STATUS(dr_fe_programs(t, 1), DR_OK);
    return t;
}

/* a random program of n leaves: constants in [0.5, 2], a divisor always a
   leaf or a constant (the leaves stay in [0.5, 2] below, so no quotient
   blows up), every leaf used; mostly linear ones (a product's second
   factor and every divisor a constant) */
static void random_prog(chk_rng *r, unsigned n, prog *p)
{
    bool lin = chk_rng_below(r, 4) != 0;
    p->n = n;
    p->c = 1 + (unsigned)chk_rng_below(r, 3);
    p->m = n + (unsigned)chk_rng_below(r, 6);
    p->code[0] = (unsigned char)n;
    p->code[1] = (unsigned char)p->c;
    p->code[2] = (unsigned char)p->m;
    p->code[3] = 0;
    for (unsigned j = 0; j < p->c; j++)
        put_const(p, j, chk_rng_uniform(r, 0.5, 2.0));
    unsigned base = n + p->c;
    for (unsigned i = 0; i < p->m; i++) {
        unsigned char *s = insn(p, i);
        unsigned below = base + i;
        unsigned op = 1 + (unsigned)chk_rng_below(r, 5);
        /* the first instructions take the leaves in turn, so every leaf
           is used; later ones the last result */
        unsigned a = i < n ? i : below - 1;
        unsigned b = (unsigned)chk_rng_below(r, below);
        if (op == DIV || (lin && op == MUL))
            b = lin ? n + (unsigned)chk_rng_below(r, p->c)
                    : (unsigned)chk_rng_below(r, base);
        if (lin && op != MUL && op != DIV && i >= n &&
            chk_rng_below(r, 2) == 0)
            b = (unsigned)chk_rng_below(r, n); /* (a leaf again) */
        s[0] = (unsigned char)op;
        s[1] = (unsigned char)a;
        s[2] = (unsigned char)b;
    }
}

/* are the program's partials constants when the leaves of mask move (the
   rule of program.h, written again here) */
static bool is_linear(const prog *p, unsigned mask)
{
    bool moves[64];
    for (unsigned i = 0; i < p->n + p->c; i++)
        moves[i] = i < p->n && (mask >> i & 1);
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = p->code + 4 + 8 * p->c + 3 * i;
        bool a = moves[s[1]], b = s[0] != NEG && moves[s[2]];
        if ((s[0] == MUL && a && b) || (s[0] == DIV && b))
            return false;
        moves[p->n + p->c + i] = a || b;
    }
    return true;
}

/* the same program by operations, over leaves of the tape */
static dr_real by_ops(dr_tape *t, const prog *p, const dr_real *leaf)
{
    dr_real reg[64];
    for (unsigned i = 0; i < p->n; i++)
        reg[i] = leaf[i];
    for (unsigned j = 0; j < p->c; j++) {
        uint64_t u = 0;
        for (int k = 7; k >= 0; k--)
            u = u << 8 | p->code[4 + 8 * j + (unsigned)k];
        double v;
        memcpy(&v, &u, sizeof v);
        reg[p->n + j] = dr_const(v);
    }
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = p->code + 4 + 8 * p->c + 3 * i;
        dr_real a = reg[s[1]], b = reg[s[2]], y;
        switch (s[0]) {
        case ADD: y = dr_add(t, a, b); break;
        case SUB: y = dr_sub(t, a, b); break;
        case MUL: y = dr_mul(t, a, b); break;
        case DIV: y = dr_div(t, a, b); break;
        default: y = dr_neg(t, a); break;
        }
        reg[p->n + p->c + i] = y;
    }
    return reg[p->n + p->c + p->m - 1];
}

/* dr_fe_prog of the program over leaves of the tape, value v */
static dr_idx fe_prog(dr_tape *t, const prog *p, const dr_real *leaf,
                      double v)
{
    dr_idx a[6];
    double x[6];
    for (unsigned i = 0; i < 6; i++) {
        a[i] = i < p->n ? leaf[i].idx : DR_NONE;
        x[i] = i < p->n ? leaf[i].val : 0.0;
    }
    return dr_fe_prog(t, p->code, v, a[0], x[0], a[1], x[1], a[2], x[2], a[3],
                      x[3], a[4], x[4], a[5], x[5]);
}

/* the statement through dr_fe_prog, or where it is refused (partials
   that move), by operations, as a front end records it */
static dr_real by_prog(dr_tape *t, const prog *p, const dr_real *leaf,
                       double v)
{
    dr_real y = {v, fe_prog(t, p, leaf, v)};
    return y.idx == DR_FE_STMT_BY_OPS ? by_ops(t, p, leaf) : y;
}

/* ---------------------------------------------------------- a function
 * NX inputs in [0.5, 2]; NS statements, each over leaves drawn from the
 * inputs, constants and (squashed back into [0.5, 2] by an operation of
 * the tape) earlier statements; the output sums them.  Written once,
 * recorded either with programs or by operations. */
#define NX 20
#define NS 12

typedef struct fn {
    prog p[NS];
    int pick[NS][6]; /* >= 0: input; -1: a constant; -2 - k: statement k */
    double kval[NS][6];
} fn;

static void random_fn(uint64_t seed, fn *f)
{
    chk_rng r;
    chk_rng_seed(&r, seed);
    for (int s = 0; s < NS; s++) {
        random_prog(&r, 1 + (unsigned)chk_rng_below(&r, 6), &f->p[s]);
        for (unsigned i = 0; i < f->p[s].n; i++) {
            uint64_t u = chk_rng_below(&r, 10);
            f->pick[s][i] = u == 0   ? -1
                            : u < 3 && s > 0
                                ? -2 - (int)chk_rng_below(&r, (uint64_t)s)
                                : (int)chk_rng_below(&r, NX);
            /* a repeated leaf now and then */
            if (i > 0 && chk_rng_below(&r, 6) == 0)
                f->pick[s][i] = f->pick[s][i - 1];
            f->kval[s][i] = chk_rng_uniform(&r, 0.5, 2.0);
        }
    }
}

/* y = f(x) recorded on t (programs or operations); the inputs into xs */
static dr_real record_fn(dr_tape *t, const fn *f, const double *x,
                         bool programs, dr_real *xs)
{
    for (int i = 0; i < NX; i++)
        xs[i] = dr_input(t, x[i]);
    dr_real st[NS], sq[NS], y = dr_const(0.0);
    for (int s = 0; s < NS; s++) {
        dr_real leaf[6];
        for (unsigned i = 0; i < f->p[s].n; i++) {
            int k = f->pick[s][i];
            leaf[i] = k >= 0 ? xs[k] : k == -1 ? dr_const(f->kval[s][i])
                                               : sq[-2 - k];
        }
        dr_real ops = programs ? dr_const(0.0) : by_ops(t, &f->p[s], leaf);
        if (programs) {
            /* the value by the operations on no tape */
            double v = by_ops(NULL, &f->p[s], leaf).val;
            st[s] = by_prog(t, &f->p[s], leaf, v);
        } else {
            st[s] = ops;
        }
        /* 1 + 1/(1 + s^2) lies in (1, 2] */
        sq[s] = dr_add(t, dr_const(1.0),
                       dr_div(t, dr_const(1.0),
                              dr_add(t, dr_const(1.0), dr_mul(t, st[s], st[s]))));
        y = dr_add(t, y, dr_mul(t, st[s], sq[s]));
    }
    return y;
}

static void random_point(chk_rng *r, double *x)
{
    for (int i = 0; i < NX; i++)
        x[i] = chk_rng_uniform(r, 0.5, 2.0);
}

/* ---------------------------------------------------------------- tests */

/* value bit for bit, gradient to rounding, at orders 1 and 2; one node a
   statement */
static void test_value_and_gradient(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 17);
    int linear = 0;
    for (int trial = 0; trial < 300; trial++) {
        prog p;
        unsigned n = 1 + (unsigned)chk_rng_below(&r, 6);
        random_prog(&r, n, &p);
        for (unsigned order = 1; order <= 2; order++) {
            dr_tape *t = prog_tape();
            CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
            dr_real x[6], leaf[6];
            for (unsigned i = 0; i < 6; i++)
                x[i] = dr_input(t, chk_rng_uniform(&r, 0.5, 2.0));
            for (unsigned i = 0; i < n; i++)
                leaf[i] = i > 0 && chk_rng_below(&r, 5) == 0 ? leaf[i - 1]
                          : chk_rng_below(&r, 8) == 0
                              ? dr_const(chk_rng_uniform(&r, 0.5, 2.0))
                              : x[chk_rng_below(&r, 6)];
            dr_real yo = by_ops(t, &p, leaf);
            size_t len = dr_tape_len(t);
            unsigned mask = 0;
            for (unsigned i = 0; i < n; i++)
                mask |= (unsigned)(leaf[i].idx != DR_NONE) << i;
            dr_idx id = fe_prog(t, &p, leaf, yo.val);
            CHK_STATUS(dr_tape_status(t), DR_OK);
            if (!is_linear(&p, mask)) { /* refused, nothing recorded */
                assert_int_equal(id, DR_FE_STMT_BY_OPS);
                assert_int_equal(dr_tape_len(t), len);
                dr_tape_free(t);
                continue;
            }
            linear++;
            dr_real yp = {yo.val, id};
            assert_true(dr_tape_len(t) - len <= 1);
            double go[6], gp[6];
            CHK_STATUS(dr_gradient(t, yo, 6, x, go), DR_OK);
            if (yp.idx == DR_NONE) { /* every leaf constant */
                for (unsigned i = 0; i < 6; i++)
                    CHK_SAME(go[i], 0.0);
            } else {
                CHK_STATUS(dr_gradient(t, yp, 6, x, gp), DR_OK);
                for (unsigned i = 0; i < 6; i++)
                    CHK_CLOSE(gp[i], go[i], 1e-13, 1e-13);
            }
            if (order == 2 && yp.idx != DR_NONE) {
                double v = -1.0;
                CHK_STATUS(dr_value(t, yp.idx, &v), DR_OK);
                CHK_SAME(v, yo.val);
            }
            dr_tape_free(t);
        }
    }
    assert_true(linear > 200 && linear < 560); /* both kinds were met */
}

/* replay at new points: bit for bit a fresh recording's value and
   gradient */
static void test_replay(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 5);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        fn f;
        random_fn(seed, &f);
        double x0[NX];
        random_point(&r, x0);
        dr_tape *t = prog_tape();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real xs[NX];
        dr_real y = record_fn(t, &f, x0, true, xs);
        for (int k = 0; k < 8; k++) {
            double x[NX];
            random_point(&r, x);
            CHK_STATUS(dr_replay(t, NX, xs, x), DR_OK);
            double v;
            CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
            dr_tape *u = prog_tape();
            CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
            dr_real us[NX];
            dr_real yu = record_fn(u, &f, x, true, us);
            CHK_SAME(v, yu.val);
            CHK_SAME_GRADIENT(t, y, xs, u, yu, us, NX);
            dr_tape_free(u);
        }
        dr_tape_free(t);
    }
}

static double fn_value(const double *x, size_t n, void *ctx)
{
    (void)n;
    dr_tape *t = prog_tape();
    dr_real xs[NX];
    double v = record_fn(t, ctx, x, false, xs).val;
    dr_tape_free(t);
    return v;
}

static void test_gradient_fd(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 9);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        fn f;
        random_fn(seed, &f);
        double x[NX], g[NX];
        random_point(&r, x);
        dr_tape *t = prog_tape();
        dr_real xs[NX];
        dr_real y = record_fn(t, &f, x, true, xs);
        CHK_STATUS(dr_gradient(t, y, NX, xs, g), DR_OK);
        for (size_t i = 0; i < NX; i++)
            CHK_DERIV(g[i], chk_fd_partial(fn_value, &f, NX, x, i, 0), 1e-8);
        dr_tape_free(t);
    }
}

/* two tapes of order 2 of the same function at x: with programs and by
   operations */
typedef struct pair {
    dr_tape *t[2];
    dr_real xs[2][NX], y[2];
} pair;

static void record_pair(const fn *f, const double *x, pair *p)
{
    for (int k = 0; k < 2; k++) {
        p->t[k] = prog_tape();
        CHK_STATUS(dr_tape_set_order(p->t[k], 2), DR_OK);
        p->y[k] = record_fn(p->t[k], f, x, k == 0, p->xs[k]);
    }
}

static void free_pair(pair *p)
{
    dr_tape_free(p->t[0]);
    dr_tape_free(p->t[1]);
}

static void test_second_order(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 23);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        fn f;
        random_fn(seed, &f);
        double x[NX];
        random_point(&r, x);
        pair p;
        record_pair(&f, x, &p);
        /* after a replay too: the programs' second partials at the new
           point */
        if (seed % 2 == 0) {
            random_point(&r, x);
            for (int k = 0; k < 2; k++)
                CHK_STATUS(dr_replay(p.t[k], NX, p.xs[k], x), DR_OK);
        }
        double v[NX], hv[2][NX];
        for (int i = 0; i < NX; i++)
            v[i] = chk_rng_uniform(&r, -1.0, 1.0);
        for (int k = 0; k < 2; k++)
            CHK_STATUS(dr_hvp(p.t[k], p.y[k], NX, p.xs[k], v, hv[k]), DR_OK);
        for (int i = 0; i < NX; i++)
            CHK_CLOSE(hv[0][i], hv[1][i], 1e-11, 1e-11);
        /* dense Hessians (more than 16 inputs: edge pushing first) */
        static double H[2][NX * NX];
        for (int k = 0; k < 2; k++)
            CHK_STATUS(dr_hessian(p.t[k], p.y[k], NX, p.xs[k], H[k]), DR_OK);
        for (int i = 0; i < NX * NX; i++)
            CHK_CLOSE(H[0][i], H[1][i], 1e-11, 1e-11);
        /* few inputs: the products' dense passes, with flags */
        static double H5[2][25];
        for (int k = 0; k < 2; k++)
            CHK_STATUS(dr_hessian(p.t[k], p.y[k], 5, p.xs[k], H5[k]), DR_OK);
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                CHK_CLOSE(H5[0][i * 5 + j], H[1][i * NX + j], 1e-11, 1e-11);
        /* sparse: the pattern holds every nonzero of the dense one */
        dr_sparse S = {0};
        CHK_STATUS(dr_sparse_hessian(p.t[0], p.y[0], NX, p.xs[0], &S), DR_OK);
        static double D[NX * NX];
        memset(D, 0, sizeof D);
        for (size_t i = 0; i < NX; i++)
            for (size_t e = S.rowptr[i]; e < S.rowptr[i + 1]; e++)
                D[i * NX + S.colind[e]] = S.val[e];
        for (int i = 0; i < NX * NX; i++)
            CHK_CLOSE(D[i], H[1][i], 1e-11, 1e-11);
        dr_sparse_free(&S);
        /* the recorded passes: the tangent along v, then its gradient, is
           H v; the recorded gradient's entries are the gradient */
        for (int k = 0; k < 2; k++) {
            dr_tape *t = p.t[k];
            dr_idx ids[NX];
            dr_real seeds[NX], tan, gr[NX];
            for (int i = 0; i < NX; i++) {
                ids[i] = p.xs[k][i].idx;
                seeds[i] = dr_const(v[i]);
            }
            dr_idx from = p.xs[k][NX - 1].idx + 1;
            CHK_STATUS(dr_tangent_record(t, from, NX, ids, seeds, p.y[k], &tan),
                       DR_OK);
            double g[NX];
            CHK_STATUS(dr_gradient(t, tan, NX, p.xs[k], g), DR_OK);
            for (int i = 0; i < NX; i++)
                CHK_CLOSE(g[i], hv[1][i], 1e-10, 1e-10);
            CHK_STATUS(dr_adjoint_record(t, from, p.y[k], NX, ids, gr), DR_OK);
            double g1[NX];
            CHK_STATUS(dr_gradient(t, p.y[k], NX, p.xs[k], g1), DR_OK);
            for (int i = 0; i < NX; i++)
                CHK_CLOSE(gr[i].val, g1[i], 1e-12, 1e-12);
            /* and its derivative along v is H v again */
            dr_real s = dr_const(0.0);
            for (int i = 0; i < NX; i++)
                s = dr_add(t, s, dr_mul(t, gr[i], dr_const(v[i])));
            CHK_STATUS(dr_gradient(t, s, NX, p.xs[k], g), DR_OK);
            for (int i = 0; i < NX; i++)
                CHK_CLOSE(g[i], hv[1][i], 1e-10, 1e-10);
        }
        free_pair(&p);
    }
}

/* one statement alone: its sparse Hessian's pattern comes from the
   program's instructions only */
static void test_sparse_alone(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 41);
    for (int trial = 0; trial < 100; trial++) {
        prog p;
        unsigned n = 1 + (unsigned)chk_rng_below(&r, 6);
        random_prog(&r, n, &p);
        dr_tape *t = prog_tape();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[6];
        for (unsigned i = 0; i < 6; i++)
            x[i] = dr_input(t, chk_rng_uniform(&r, 0.5, 2.0));
        dr_real y = by_prog(t, &p, x, by_ops(NULL, &p, x).val);
        double H[36], D[36] = {0};
        CHK_STATUS(dr_hessian(t, y, 6, x, H), DR_OK);
        dr_sparse S = {0};
        CHK_STATUS(dr_sparse_hessian(t, y, 6, x, &S), DR_OK);
        for (size_t i = 0; i < 6; i++)
            for (size_t e = S.rowptr[i]; e < S.rowptr[i + 1]; e++)
                D[i * 6 + S.colind[e]] = S.val[e];
        for (int i = 0; i < 36; i++)
            CHK_CLOSE(D[i], H[i], 1e-12, 1e-12);
        dr_sparse_free(&S);
        dr_tape_free(t);
    }
}

/* a product of two leaves that move, or a quotient by one, is refused (its
   partials would move); the same over a constant leaf is linear, with no
   second derivatives: an empty sparse Hessian */
static void test_linear_only(void **state)
{
    (void)state;
    /* x y + z z z; x / y */
    unsigned char cubic[] = {3, 0, 4, 0, MUL, 0, 1, MUL, 2, 2, MUL, 4, 2,
                             ADD, 3, 5};
    unsigned char quot[] = {2, 0, 1, 0, DIV, 0, 1};
    dr_tape *t = prog_tape();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[3] = {dr_input(t, 2.0), dr_input(t, 3.0), dr_input(t, 5.0)};
    size_t len = dr_tape_len(t);
    assert_int_equal(dr_fe_prog(t, cubic, 131.0, x[0].idx, 2.0, x[1].idx, 3.0,
                                x[2].idx, 5.0, DR_NONE, 0, DR_NONE, 0,
                                DR_NONE, 0),
                     DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_fe_prog(t, quot, 2.0 / 3.0, x[0].idx, 2.0, x[1].idx,
                                3.0, DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                                DR_NONE, 0),
                     DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_tape_len(t), len);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    /* y constant, z constant: x * 3 + 125, and 2 / 3 over a constant x */
    dr_real y = {0, dr_fe_prog(t, cubic, 131.0, x[0].idx, 2.0, DR_NONE, 3.0,
                               DR_NONE, 5.0, DR_NONE, 0, DR_NONE, 0,
                               DR_NONE, 0)};
    dr_real q = {0, dr_fe_prog(t, quot, 2.0 / 3.0, DR_NONE, 2.0, x[1].idx,
                               3.0, DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                               DR_NONE, 0)};
    assert_true(y.idx >= 0 && q.idx == DR_FE_STMT_BY_OPS);
    double g[3];
    CHK_STATUS(dr_gradient(t, y, 3, x, g), DR_OK);
    CHK_SAME(g[0], 3.0);
    CHK_SAME(g[1], 0.0);
    dr_sparse S = {0};
    CHK_STATUS(dr_sparse_hessian(t, y, 3, x, &S), DR_OK);
    assert_int_equal(S.nnz, 0);
    dr_sparse_free(&S);
    dr_tape_free(t);
}

/* the Hessian against finite differences of the gradient */
static void test_hessian_fd(void **state)
{
    (void)state;
    fn f;
    random_fn(3, &f);
    chk_rng r;
    chk_rng_seed(&r, 31);
    double x[NX];
    random_point(&r, x);
    dr_tape *t = prog_tape();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real xs[NX];
    dr_real y = record_fn(t, &f, x, true, xs);
    static double H[NX * NX];
    CHK_STATUS(dr_hessian(t, y, NX, xs, H), DR_OK);
    for (int j = 0; j < NX; j++) {
        double h = 1e-5, xp[NX], xm[NX], gp[NX], gm[NX];
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[j] += h;
        xm[j] -= h;
        CHK_STATUS(dr_replay(t, NX, xs, xp), DR_OK);
        CHK_STATUS(dr_gradient(t, y, NX, xs, gp), DR_OK);
        CHK_STATUS(dr_replay(t, NX, xs, xm), DR_OK);
        CHK_STATUS(dr_gradient(t, y, NX, xs, gm), DR_OK);
        for (int i = 0; i < NX; i++)
            CHK_CLOSE(H[i * NX + j], (gp[i] - gm[i]) / (2 * h), 1e-5, 1e-6);
    }
    dr_tape_free(t);
}

/* bad programs, ids and values: a status, and nothing recorded */
static void test_refused(void **state)
{
    (void)state;
    /* x0 + x1 */
    unsigned char good[] = {2, 0, 1, 0, ADD, 0, 1};
    unsigned char *bad[] = {
        (unsigned char[]){0, 0, 1, 0, ADD, 0, 0}, /* no leaves       */
        (unsigned char[]){7, 0, 1, 0, ADD, 0, 1}, /* more than six   */
        (unsigned char[]){2, 0, 0, 0},            /* no instruction  */
        (unsigned char[]){2, 0, 1, 0, 9, 0, 1},   /* no such operation */
        (unsigned char[]){2, 0, 1, 0, ADD, 0, 2}, /* a register ahead */
        (unsigned char[]){2, 0, 2, 0, ADD, 0, 1, ADD, 3, 0}, /* itself */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        dr_tape *t = prog_tape();
        dr_real a = dr_input(t, 2.0), b = dr_input(t, 3.0);
        size_t len = dr_tape_len(t);
        CHK_SAME((double)dr_fe_prog(t, bad[k], 6.0, a.idx, 2.0, b.idx, 3.0,
                                    DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                                    DR_NONE, 0),
                 (double)DR_NONE);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        assert_int_equal(dr_tape_len(t), len);
        dr_tape_free(t);
    }
    for (unsigned order = 1; order <= 2; order++) {
        dr_tape *t = prog_tape();
        CHK_STATUS(dr_tape_set_order(t, order), DR_OK);
        dr_real a = dr_input(t, 2.0), b = dr_input(t, 3.0);
        size_t len = dr_tape_len(t);
        /* another value than the program's: by operations instead */
        assert_int_equal(dr_fe_prog(t, good, 5.5, a.idx, 2.0, b.idx, 3.0,
                                    DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                                    DR_NONE, 0),
                         DR_FE_STMT_BY_OPS);
        assert_int_equal(dr_tape_len(t), len);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        /* an id not on the tape */
        assert_int_equal(dr_fe_prog(t, good, 5.0, a.idx, 2.0, b.idx + 99, 3.0,
                                    DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                                    DR_NONE, 0),
                         DR_NONE);
        CHK_STATUS(dr_tape_status(t), DR_EINVAL);
        assert_int_equal(dr_tape_len(t), len);
        dr_tape_free(t);
    }
    /* the pairs refuse without a look at the instructions: x0 + x1 with
       a pair (x0, x1) is taken for a product (refused where both are
       active, taken where one is); pairs that miss a product do not make
       it taken */
    unsigned char paired[] = {2, 0, 1, 1, 1, 2, ADD, 0, 1};
    unsigned char unpaired[] = {2, 0, 1, 0, MUL, 0, 1};
    dr_tape *w = prog_tape();
    CHK_STATUS(dr_tape_set_order(w, 2), DR_OK);
    dr_real wa = dr_input(w, 2.0), wb = dr_input(w, 3.0);
    assert_int_equal(dr_fe_prog(w, paired, 5.0, wa.idx, 2.0, wb.idx, 3.0,
                                DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                                0),
                     DR_FE_STMT_BY_OPS);
    assert_true(dr_fe_prog(w, paired, 5.0, wa.idx, 2.0, DR_NONE, 3.0,
                           DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                           0) >= 0);
    assert_int_equal(dr_fe_prog(w, unpaired, 6.0, wa.idx, 2.0, wb.idx, 3.0,
                                DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                                0),
                     DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_tape_len(w), 3);
    CHK_STATUS(dr_tape_status(w), DR_OK);
    dr_tape_free(w);
    /* no program (a statement the front end wrote none for): by
       operations, nothing recorded, no error */
    dr_tape *u = prog_tape();
    dr_real ua = dr_input(u, 2.0);
    assert_int_equal(dr_fe_prog(u, NULL, 2.0, ua.idx, 2.0, DR_NONE, 0,
                                DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                                0),
                     DR_FE_STMT_BY_OPS);
    assert_int_equal(dr_tape_len(u), 1);
    CHK_STATUS(dr_tape_status(u), DR_OK);
    dr_tape_free(u);
    /* a tape not kept for replay (the default; and turned off): by
       operations; only a root handle takes the setting */
    for (int off = 0; off < 2; off++) {
        dr_tape *w2 = off ? prog_tape() : dr_tape_new();
        if (off)
            CHK_STATUS(dr_fe_programs(w2, 0), DR_OK);
        CHK_STATUS(dr_tape_set_order(w2, 2), DR_OK);
        dr_real wa2 = dr_input(w2, 2.0), wb2 = dr_input(w2, 3.0);
        assert_int_equal(dr_fe_prog(w2, good, 5.0, wa2.idx, 2.0, wb2.idx,
                                    3.0, DR_NONE, 0, DR_NONE, 0, DR_NONE, 0,
                                    DR_NONE, 0),
                         DR_FE_STMT_BY_OPS);
        assert_int_equal(dr_tape_len(w2), 2);
        dr_tape_free(w2);
    }
    CHK_STATUS(dr_fe_programs(NULL, 1), DR_EINVAL);
    /* a child handle takes its root's setting, and no setting of its own */
    dr_tape *root = prog_tape(), *kid[1];
    CHK_STATUS(dr_tape_set_order(root, 2), DR_OK);
    dr_real ra = dr_input(root, 2.0), rb = dr_input(root, 3.0);
    CHK_STATUS(dr_fork(root, 1, kid), DR_OK);
    CHK_STATUS(dr_fe_programs(kid[0], 0), DR_EINVAL);
    assert_true(dr_fe_prog(kid[0], good, 5.0, ra.idx, 2.0, rb.idx, 3.0,
                           DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                           0) >= 0);
    CHK_STATUS(dr_join(root), DR_OK);
    dr_tape_free(root);
    /* no tape; constant leaves only */
    assert_int_equal(dr_fe_prog(NULL, good, 5.0, DR_NONE, 2.0, DR_NONE, 3.0,
                                DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                                0),
                     DR_NONE);
    dr_tape *t = prog_tape();
    assert_int_equal(dr_fe_prog(t, good, 5.0, DR_NONE, 2.0, DR_NONE, 3.0,
                                DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                                0),
                     DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    dr_tape_free(t);
}

/* a negation's second operand is no register, whatever its byte says
   (255, past every register): recorded, replayed, never read (ASan) */
static void test_negation_operand(void **state)
{
    (void)state;
    unsigned char code[] = {1, 0, 2, 0, NEG, 0, 255, NEG, 1, 255};
    dr_tape *t = prog_tape();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x = dr_input(t, 2.0);
    dr_real y = {2.0, dr_fe_prog(t, code, 2.0, x.idx, 2.0, DR_NONE, 0,
                                 DR_NONE, 0, DR_NONE, 0, DR_NONE, 0, DR_NONE,
                                 0)};
    assert_true(y.idx >= 0);
    double at = -3.0, v = 0.0, g = 0.0;
    CHK_STATUS(dr_replay(t, 1, &x, &at), DR_OK);
    CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
    CHK_SAME(v, -3.0);
    CHK_STATUS(dr_gradient(t, y, 1, &x, &g), DR_OK);
    CHK_SAME(g, 1.0);
    dr_tape_free(t);
}

/* ------------------------------------------------ runs of one program
 * Statements of the same program back to back, as a vector's components
 * are updated (x + dt v, then y + dt w): replay evaluates two such
 * neighbours side by side where the second does not read the first.  A
 * run of RUNLEN statements: each over inputs and constants, or (dep set)
 * over the statement just before it as its first leaf, which must not
 * be evaluated beside it. */
#define RUNS 10
#define RUNLEN 4

typedef struct runs {
    prog p[3];
    int which[RUNS];                 /* the run's program               */
    int len[RUNS];                   /* its statements, 1 .. RUNLEN     */
    int pick[RUNS][RUNLEN][6];       /* >= 0: input; -1: a constant;
                                        -2: the statement before it     */
    double kval[RUNS][RUNLEN][6];
} runs;

/* programs that are linear whichever leaves move (so that every
   statement is one node of its program), each with a division and a
   negation where the draw allows */
static void random_runs(chk_rng *r, runs *f)
{
    for (int k = 0; k < 3; k++)
        do
            random_prog(r, 1 + (unsigned)chk_rng_below(r, 6), &f->p[k]);
        while (!is_linear(&f->p[k], 0x3f));
    for (int q = 0; q < RUNS; q++) {
        f->which[q] = (int)chk_rng_below(r, 3);
        f->len[q] = 1 + (int)chk_rng_below(r, RUNLEN);
        for (int s = 0; s < f->len[q]; s++)
            for (unsigned i = 0; i < 6; i++) {
                uint64_t u = chk_rng_below(r, 8);
                f->pick[q][s][i] = u == 0 ? -1
                                   : u == 1 && i == 0 && (s > 0 || q > 0)
                                       ? -2
                                       : (int)chk_rng_below(r, NX);
                f->kval[q][s][i] = chk_rng_uniform(r, 0.5, 2.0);
            }
    }
}

/* the runs' statements recorded one after another at x (every one a
   program's node, checked), then their sum: its value; the statements
   into st */
static dr_real record_runs(dr_tape *t, const runs *f, const double *x,
                           dr_real *xs, dr_real *st, size_t *nst)
{
    for (int i = 0; i < NX; i++)
        xs[i] = dr_input(t, x[i]);
    dr_real prev = xs[0];
    size_t k = 0;
    for (int q = 0; q < RUNS; q++)
        for (int s = 0; s < f->len[q]; s++) {
            const prog *p = &f->p[f->which[q]];
            dr_real leaf[6];
            for (unsigned i = 0; i < p->n; i++) {
                int w = f->pick[q][s][i];
                leaf[i] = w >= 0 ? xs[w]
                          : w == -1 ? dr_const(f->kval[q][s][i])
                                    : prev;
            }
            double v = by_ops(NULL, p, leaf).val;
            st[k] = by_prog(t, p, leaf, v);
            prev = st[k++];
        }
    *nst = k;
    dr_real y = dr_const(0.0);
    for (size_t i = 0; i < k; i++)
        y = dr_add(t, y, st[i]);
    return y;
}

/* replayed at new points: every statement's value, the sum and its
   gradient bit for bit a fresh recording's */
static void test_replay_runs(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 23);
    int dependent = 0, pairs = 0;
    for (int trial = 0; trial < 40; trial++) {
        runs f;
        random_runs(&r, &f);
        for (int q = 0; q < RUNS; q++)
            for (int s = 1; s < f.len[q]; s++) {
                pairs++;
                for (unsigned i = 0; i < f.p[f.which[q]].n; i++)
                    dependent += f.pick[q][s][i] == -2;
            }
        double x0[NX];
        random_point(&r, x0);
        dr_tape *t = prog_tape();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real xs[NX], st[RUNS * RUNLEN];
        size_t nst;
        dr_real y = record_runs(t, &f, x0, xs, st, &nst);
        /* one node a statement: nothing recorded by operations */
        size_t nodes = 0;
        for (size_t i = 0; i < nst; i++)
            nodes += st[i].idx != DR_NONE;
        assert_true(dr_tape_len(t) <= NX + nodes + nst);
        for (int k = 0; k < 4; k++) {
            double x[NX];
            random_point(&r, x);
            CHK_STATUS(dr_replay(t, NX, xs, x), DR_OK);
            dr_tape *u = prog_tape();
            CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
            dr_real us[NX], su[RUNS * RUNLEN];
            size_t nu;
            dr_real yu = record_runs(u, &f, x, us, su, &nu);
            for (size_t i = 0; i < nst; i++) {
                double v = st[i].val; /* (every leaf a constant: no node) */
                if (st[i].idx != DR_NONE)
                    CHK_STATUS(dr_value(t, st[i].idx, &v), DR_OK);
                CHK_SAME(v, su[i].val);
            }
            double v;
            CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
            CHK_SAME(v, yu.val);
            CHK_SAME_GRADIENT(t, y, xs, u, yu, us, NX);
            dr_tape_free(u);
        }
        dr_tape_free(t);
    }
    /* neighbours of one program were met, some reading the one before */
    assert_true(pairs > 200 && dependent > 20);
}

/* a leaf given another value than its node's (a front end's copy of a
   value, dr_record1): the node is right, the tape does not replay */
static void test_leaf_value_differs(void **state)
{
    (void)state;
    /* a + 3 b */
    prog p = {{2, 1, 2, 0}, 2, 1, 2};
    put_const(&p, 0, 3.0);
    unsigned char *s = insn(&p, 0);
    s[0] = MUL, s[1] = 1, s[2] = 2, s[3] = ADD, s[4] = 0, s[5] = 3;
    dr_tape *t = prog_tape();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real a = dr_input(t, 2.0), b = dr_input(t, 3.0);
    dr_real x[2] = {a, b};
    dr_idx y = dr_fe_prog(t, p.code, 11.5, a.idx, 2.5, b.idx, 3.0, DR_NONE, 0,
                          DR_NONE, 0, DR_NONE, 0, DR_NONE, 0);
    assert_true(y >= 0);
    double g[2];
    dr_real yr = {11.5, y};
    CHK_STATUS(dr_gradient(t, yr, 2, x, g), DR_OK);
    CHK_SAME(g[0], 1.0);
    CHK_SAME(g[1], 3.0);
    double v[2] = {1.0, 0.0}, hv[2];
    CHK_STATUS(dr_hvp(t, yr, 2, x, v, hv), DR_OK);
    CHK_SAME(hv[0], 0.0);
    CHK_SAME(hv[1], 0.0);
    dr_idx ids[2] = {a.idx, b.idx};
    dr_real gr[2];
    CHK_STATUS(dr_adjoint_record(t, y, yr, 2, ids, gr), DR_OK);
    CHK_SAME(gr[1].val, 3.0);
    double at[2] = {1.0, 1.0};
    CHK_STATUS(dr_replay(t, 2, x, at), DR_ENOTSUP);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_and_gradient),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_replay_runs),
        cmocka_unit_test(test_gradient_fd),
        cmocka_unit_test(test_second_order),
        cmocka_unit_test(test_sparse_alone),
        cmocka_unit_test(test_linear_only),
        cmocka_unit_test(test_hessian_fd),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_negation_operand),
        cmocka_unit_test(test_leaf_value_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
