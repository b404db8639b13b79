/*
 * test_array_nn.c - the same programs written with scalar operations and
 * with array operations give the same gradient (relative difference below
 * 1e-10):
 *   - fneural's network shape (relu layers, safe softmax) at a small size,
 *     with a weighted sum of the softmax outputs as the loss (the plain sum
 *     is identically 1, see benchmarks.md);
 *   - a batched two-layer network with softmax cross-entropy through
 *     matrix-matrix products (the 784-300-100-10 benchmark's structure);
 *   - repeated record / sweep / clear cycles give identical gradients.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REL 1e-10

static void check_same_grad(const double *a, const double *s, size_t n,
                            const char *what)
{
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(s[i]) > scale)
            scale = fabs(s[i]);
    for (size_t i = 0; i < n; i++) {
        chk_context("%s [%zu]", what, i);
        CHK_CLOSE(a[i], s[i], REL, REL * scale);
    }
    chk_context(NULL);
}

/* ------------------------------------------------ fneural-shaped network */

#define NL 3 /* layers */
static const int dims[NL + 1] = {7, 6, 5, 4};

typedef struct net {
    double *W[NL], *b[NL], x[16], w_out[16];
} net;

static void net_init(net *n, chk_rng *r)
{
    for (int l = 0; l < NL; l++) {
        n->W[l] = malloc(sizeof(double) * (size_t)(dims[l + 1] * dims[l]));
        n->b[l] = malloc(sizeof(double) * (size_t)dims[l + 1]);
        for (int i = 0; i < dims[l + 1] * dims[l]; i++)
            n->W[l][i] = chk_rng_uniform(r, -0.8, 0.8);
        for (int i = 0; i < dims[l + 1]; i++)
            n->b[l][i] = chk_rng_uniform(r, -0.3, 0.5);
    }
    for (int i = 0; i < dims[0]; i++)
        n->x[i] = chk_rng_uniform(r, -1, 1);
    for (int i = 0; i < dims[NL]; i++)
        n->w_out[i] = chk_rng_uniform(r, -1, 1);
}

static void net_free(net *n)
{
    for (int l = 0; l < NL; l++) {
        free(n->W[l]);
        free(n->b[l]);
    }
}

static size_t net_nparams(void)
{
    size_t k = (size_t)dims[0];
    for (int l = 0; l < NL; l++)
        k += (size_t)(dims[l + 1] * dims[l] + dims[l + 1]);
    return k;
}

/* scalar version: gradient w.r.t. input, every W and b, in that order */
static void grad_scalar(const net *n, double *g)
{
    dr_tape *t = chk_tape_new();
    size_t np = net_nparams(), k = 0;
    dr_real *vars = malloc(np * sizeof *vars);
    dr_real h[16], h2[16];
    for (int i = 0; i < dims[0]; i++)
        h[i] = vars[k++] = dr_input(t, n->x[i]);
    dr_real *Wv[NL], *bv[NL];
    for (int l = 0; l < NL; l++) {
        Wv[l] = vars + k;
        for (int i = 0; i < dims[l + 1] * dims[l]; i++)
            vars[k++] = dr_input(t, n->W[l][i]);
        bv[l] = vars + k;
        for (int i = 0; i < dims[l + 1]; i++)
            vars[k++] = dr_input(t, n->b[l][i]);
    }
    for (int l = 0; l < NL; l++) {
        for (int i = 0; i < dims[l + 1]; i++) {
            dr_real acc = dr_mul(t, Wv[l][i * dims[l]], h[0]);
            for (int j = 1; j < dims[l]; j++)
                acc = dr_add(t, acc, dr_mul(t, Wv[l][i * dims[l] + j], h[j]));
            acc = dr_add(t, acc, bv[l][i]);
            h2[i] = l < NL - 1 ? dr_relu(t, acc) : acc;
        }
        memcpy(h, h2, sizeof h);
    }
    /* safe softmax, then a weighted sum */
    int no = dims[NL];
    dr_real m = h[0];
    for (int i = 1; i < no; i++)
        m = dr_max(t, m, h[i]);
    dr_real e[16], s = dr_const(0.0);
    for (int i = 0; i < no; i++) {
        e[i] = dr_exp(t, dr_sub(t, h[i], m));
        s = dr_add(t, s, e[i]);
    }
    dr_real loss = dr_const(0.0);
    for (int i = 0; i < no; i++)
        loss = dr_add(t, loss, dr_mul(t, dr_const(n->w_out[i]),
                                      dr_div(t, e[i], s)));
    CHK_STATUS(dr_gradient(t, loss, np, vars, g), DR_OK);
    free(vars);
    dr_tape_free(t);
}

/* array version on tape t (recorded anew each call) */
static void grad_array(dr_tape *t, const net *n, double *g, bool by_id)
{
    dr_arr W[NL], b[NL];
    dr_arr x = dr_arr_input(t, 1, dims[0], 1, n->x);
    for (int l = 0; l < NL; l++) {
        if (by_id) { /* borrowed weights */
            W[l] = dr_arr_get(t, dr_arr_input_ref_id(t, 2, dims[l + 1],
                                                     dims[l], n->W[l]));
            assert_ptr_equal(W[l].val, n->W[l]);
        } else {
            W[l] = dr_arr_input(t, 2, dims[l + 1], dims[l], n->W[l]);
        }
        b[l] = dr_arr_input(t, 1, dims[l + 1], 1, n->b[l]);
    }
    dr_arr h = x;
    for (int l = 0; l < NL; l++) {
        if (by_id) {
            dr_idx z = dr_arr_add_id(t, dr_arr_matvec_id(t, W[l].idx, h.idx),
                                     b[l].idx);
            if (l < NL - 1)
                z = dr_arr_map_id(t, DR_FN_RELU, z);
            h = dr_arr_get(t, z);
        } else {
            h = dr_arr_add(t, dr_arr_matvec(t, W[l], h), b[l]);
            if (l < NL - 1)
                h = dr_arr_map(t, DR_FN_RELU, h);
        }
    }
    dr_arr sm = dr_arr_softmax(t, h);
    dr_arr wo = dr_arr_const(t, 1, dims[NL], 1, n->w_out);
    dr_real loss = dr_arr_dot(t, sm, wo);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, loss.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double *q = g;
    CHK_STATUS(dr_arr_adjoint(t, x.idx, q), DR_OK);
    q += dims[0];
    for (int l = 0; l < NL; l++) {
        CHK_STATUS(dr_arr_adjoint(t, W[l].idx, q), DR_OK);
        q += dims[l + 1] * dims[l];
        CHK_STATUS(dr_arr_adjoint(t, b[l].idx, q), DR_OK);
        q += dims[l + 1];
    }
}

static void test_fneural_small(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 42);
    size_t np = net_nparams();
    double *gs = malloc(np * sizeof *gs), *ga = malloc(np * sizeof *ga);
    double *gb = malloc(np * sizeof *gb);
    for (int rep = 0; rep < 5; rep++) {
        net n;
        net_init(&n, &r);
        grad_scalar(&n, gs);
        dr_tape *t = chk_tape_new();
        grad_array(t, &n, ga, false);
        check_same_grad(ga, gs, np, "fneural array vs scalar");
        /* record again on the cleared tape, by id and with borrowed
           weights: bit-identical */
        for (int k = 0; k < 3; k++) {
            CHK_STATUS(dr_tape_clear(t), DR_OK);
            size_t bytes = dr_tape_bytes(t);
            grad_array(t, &n, gb, true);
            assert_int_equal(dr_tape_bytes(t), bytes); /* no new memory */
            for (size_t i = 0; i < np; i++)
                CHK_SAME(gb[i], ga[i]);
        }
        dr_tape_free(t);
        net_free(&n);
    }
    free(gs);
    free(ga);
    free(gb);
}

/* ----------------------------------- batched network, cross-entropy */

enum { BATCH = 5, NIN = 6, NH = 4, NOUT = 3 };

typedef struct bnet {
    double X[BATCH * NIN], W1[NIN * NH], b1[NH], W2[NH * NOUT], b2[NOUT];
    double Y[BATCH * NOUT]; /* one-hot labels */
} bnet;

#define NPB (NIN * NH + NH + NH * NOUT + NOUT)

/* loss = -(1/B) sum_b log_softmax(relu(x_b W1 + b1) W2 + b2)[label_b] */
static void bgrad_scalar(const bnet *n, double *g)
{
    dr_tape *t = chk_tape_new();
    dr_real p[NPB];
    int k = 0;
    for (int i = 0; i < NIN * NH; i++)
        p[k++] = dr_input(t, n->W1[i]);
    for (int i = 0; i < NH; i++)
        p[k++] = dr_input(t, n->b1[i]);
    for (int i = 0; i < NH * NOUT; i++)
        p[k++] = dr_input(t, n->W2[i]);
    for (int i = 0; i < NOUT; i++)
        p[k++] = dr_input(t, n->b2[i]);
    dr_real *W1 = p, *b1 = p + NIN * NH, *W2 = b1 + NH, *b2 = W2 + NH * NOUT;
    dr_real loss = dr_const(0.0);
    for (int b = 0; b < BATCH; b++) {
        dr_real h[NH], o[NOUT];
        for (int j = 0; j < NH; j++) {
            dr_real acc = b1[j];
            for (int i = 0; i < NIN; i++)
                acc = dr_add(t, acc, dr_mul(t, dr_const(n->X[b * NIN + i]),
                                            W1[i * NH + j]));
            h[j] = dr_relu(t, acc);
        }
        for (int j = 0; j < NOUT; j++) {
            dr_real acc = b2[j];
            for (int i = 0; i < NH; i++)
                acc = dr_add(t, acc, dr_mul(t, h[i], W2[i * NOUT + j]));
            o[j] = acc;
        }
        dr_real m = o[0];
        for (int j = 1; j < NOUT; j++)
            m = dr_max(t, m, o[j]);
        dr_real s = dr_const(0.0);
        for (int j = 0; j < NOUT; j++)
            s = dr_add(t, s, dr_exp(t, dr_sub(t, o[j], m)));
        dr_real lse = dr_add(t, m, dr_log(t, s));
        for (int j = 0; j < NOUT; j++)
            if (n->Y[b * NOUT + j] != 0.0)
                loss = dr_sub(t, loss, dr_sub(t, o[j], lse));
    }
    loss = dr_mul(t, loss, dr_const(1.0 / BATCH));
    CHK_STATUS(dr_gradient(t, loss, NPB, p, g), DR_OK);
    dr_tape_free(t);
}

static void bgrad_array(const bnet *n, double *g, bool with_lse_rows)
{
    dr_tape *t = chk_tape_new();
    dr_arr X = dr_arr_const(t, 2, BATCH, NIN, n->X);
    dr_arr Y = dr_arr_const(t, 2, BATCH, NOUT, n->Y);
    dr_arr W1 = dr_arr_input(t, 2, NIN, NH, n->W1);
    dr_arr b1 = dr_arr_input(t, 1, NH, 1, n->b1);
    dr_arr W2 = dr_arr_input(t, 2, NH, NOUT, n->W2);
    dr_arr b2 = dr_arr_input(t, 1, NOUT, 1, n->b2);
    dr_arr h = dr_arr_map(t, DR_FN_RELU,
                          dr_arr_add_rowvec(t, dr_arr_matmul(t, X, 0, W1, 0),
                                            b1));
    dr_arr o = dr_arr_add_rowvec(t, dr_arr_matmul(t, h, 0, W2, 0), b2);
    dr_real loss;
    if (with_lse_rows) {
        /* sum_b lse_b - sum <Y, o> */
        dr_real a = dr_arr_sum(t, dr_arr_logsumexp_rows(t, o));
        loss = dr_sub(t, a, dr_arr_dot(t, Y, o));
    } else {
        loss = dr_neg(t, dr_arr_sum(t, dr_arr_mul(t, Y,
                                                  dr_arr_log_softmax(t, o))));
    }
    loss = dr_mul(t, loss, dr_const(1.0 / BATCH));
    CHK_STATUS(dr_seed(t, loss.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    double *q = g;
    CHK_STATUS(dr_arr_adjoint(t, W1.idx, q), DR_OK);
    q += NIN * NH;
    CHK_STATUS(dr_arr_adjoint(t, b1.idx, q), DR_OK);
    q += NH;
    CHK_STATUS(dr_arr_adjoint(t, W2.idx, q), DR_OK);
    q += NH * NOUT;
    CHK_STATUS(dr_arr_adjoint(t, b2.idx, q), DR_OK);
    /* the constants got nothing */
    assert_null(dr_arr_adjoint_ptr(t, X.idx));
    dr_tape_free(t);
}

static void test_batched_xent(void **state)
{
    (void)state;
    chk_rng r;
    chk_rng_seed(&r, 7);
    for (int rep = 0; rep < 5; rep++) {
        bnet n;
        for (int i = 0; i < BATCH * NIN; i++)
            n.X[i] = chk_rng_uniform(&r, -1, 1);
        for (int i = 0; i < NIN * NH; i++)
            n.W1[i] = chk_rng_uniform(&r, -1, 1);
        for (int i = 0; i < NH; i++)
            n.b1[i] = chk_rng_uniform(&r, -0.2, 0.5);
        for (int i = 0; i < NH * NOUT; i++)
            n.W2[i] = chk_rng_uniform(&r, -1, 1);
        for (int i = 0; i < NOUT; i++)
            n.b2[i] = chk_rng_uniform(&r, -0.5, 0.5);
        memset(n.Y, 0, sizeof n.Y);
        for (int b = 0; b < BATCH; b++)
            n.Y[b * NOUT + chk_rng_below(&r, NOUT)] = 1.0;
        double gs[NPB], ga[NPB], gl[NPB];
        bgrad_scalar(&n, gs);
        bgrad_array(&n, ga, false);
        bgrad_array(&n, gl, true);
        check_same_grad(ga, gs, NPB, "batched log_softmax vs scalar");
        check_same_grad(gl, gs, NPB, "batched logsumexp_rows vs scalar");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fneural_small),
        cmocka_unit_test(test_batched_xent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
