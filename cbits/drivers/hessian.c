/*
 * hessian.c - second derivatives of a recorded scalar: Hessian-vector
 * products by forward over reverse in numbers (sweep/hvp.c), k directions
 * a pass, and the dense Hessian as products with the unit vectors, a block
 * of them a pass.  Nothing is recorded: the tape is left as it was.
 */
#include "sweep/sweep.h"

#include <stdint.h>

/* Which way dr_hessian goes.  A pass of the products over a node costs
   about 4 + 1.5 kb ns for a block of kb directions (25-35 ns at 16); edge
   pushing 4-20 ns a push or a node visited, the more the longer the rows
   it sums (measured on a quadratic form, where it wins, and on tanh
   layers, a product chain, pairs of products and a rank-one sum, where it
   loses; docs/engine-performance.md "Dense Hessians").  With one pass of products
   (n <= 16) edge pushing could win little, so it runs only for more
   inputs, with a budget of what a third of the products' time buys at
   8 ns a unit, and gives up past that (or once it has spent twice its
   share for the nodes it has visited): where it wins it spends far less
   (the quadratic form of 100 inputs: 60 000 units of a budget of
   166 000, a tenth of the products' time), and where it gives up the
   products run after it, at 1.1-1.5x their own time in those
   measurements. */

/* dr_hessians finished by edge pushing, process-wide (for the tests) */
uint64_t dr__hessians_by_edges;
static uint64_t edge_budget(size_t n, int64_t ry)
{
    uint64_t kb = n < DR_HVP_BLOCK ? n : DR_HVP_BLOCK;
    uint64_t passes = (n + DR_HVP_BLOCK - 1) / DR_HVP_BLOCK;
    uint64_t span = ry < 0 ? 1 : (uint64_t)ry + 1;
    return passes * span * (8 + 3 * kb) / 48;
}

/* the relative ids of x into *rx (a buffer to free), each checked, with
   the tape and y (dr__sweep_ready's checks, in the one loop that reads the
   ids: two loops over thousands of inputs were a tenth of a product's
   time) */
static dr_status rel_ids(const dr_tape *t, dr_real y, size_t n,
                         const dr_real *x, int64_t **rx)
{
    *rx = NULL;
    if (!t || (n && !x))
        return DR_EINVAL;
    /* not the tape's order: what was recorded at order 2 keeps its rules
       after dr_tape_set_order(t, 1); the pass checks every node */
    dr_status st = dr__sweep_ready(t, 1, &y, 0, NULL);
    if (st != DR_OK || n == 0)
        return st;
    if (n > SIZE_MAX / sizeof(int64_t) - 1)
        return DR_ENOMEM;
    int64_t *r = dr__malloc(n * sizeof *r + 1);
    if (!r)
        return DR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (DR_UNLIKELY(!dr__rel(t, x[i].idx, &r[i]))) {
            dr__free(r);
            return DR_EINVAL;
        }
    *rx = r;
    return DR_OK;
}

/* does the tape hold extended nodes with a second-order rule (array
   operations)?  Their inputs' directions are the array seeds of k
   directions, so the k directions go in one pass */
static bool has_arrays(const dr_tape *t)
{
    for (const dr_ext *e = t->exts; e; e = e->next)
        if (e->reverse2)
            return true;
    return false;
}

dr_status dr_hvp_vec(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                     size_t k, const double *V, double *out)
{
    if (n && k && (!V || !out))
        return DR_EINVAL;
    int64_t *rx;
    dr_status st = rel_ids(t, y, n, x, &rx);
    if (st != DR_OK || k == 0) {
        dr__free(rx);
        return st;
    }
    bool arrays = has_arrays(t);
    /* no inputs or no directions: nothing to compute (but the products
       for array inputs seeded with dr_arr_tangent_seed_vec) */
    if (n == 0 && !(arrays && t->root->arr_seeded)) {
        t->hvp_pass = 0; /* (array products read zero, at any k) */
        dr__free(rx);
        return st;
    }
    if (n && k > SIZE_MAX / n) {
        dr__free(rx);
        return DR_EINVAL;
    }
    int64_t ry = dr__rel_of(t, y.idx);
    /* a block of directions a pass, as the dense Hessian takes them */
    size_t block = arrays ? k : DR_HVP_BLOCK;
    for (size_t j = 0; st == DR_OK && j < k; j += block) {
        size_t kk = k - j < block ? k - j : block;
        st = dr__hvp_pass(t, ry, n, rx, kk, V ? V + j * n : NULL,
                          arrays ? DR_ARR_SEEDS_TANGENT : DR_ARR_SEEDS_NONE,
                          out ? out + j * n : NULL, NULL);
    }
    dr__free(rx);
    return st;
}

dr_status dr_hvp(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                 const double *v, double *out)
{
    if (n && (!v || !out))
        return DR_EINVAL;
    return dr_hvp_vec(t, y, n, x, 1, v, out);
}

dr_status dr_hvp_inputs(dr_tape *t, dr_real y)
{
    if (!t)
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, 1, &y, 0, NULL);
    if (st != DR_OK)
        return st;
    int64_t ry = dr__rel_of(t, y.idx);
    size_t n = 0;
    int64_t *rx = NULL;
    double *V = NULL, *out = NULL;
    if (ry >= 0) {
        /* the scalar inputs up to y (their log entries; a node up to y
           without one makes the pass answer DR_ENOTSUP) and their seeds */
        int64_t lo = t->oplog_lo > 0 ? t->oplog_lo : 0;
        int64_t hi = t->oplog_lo + t->oplog_n - 1 < ry
                         ? t->oplog_lo + t->oplog_n - 1 : ry;
        for (int64_t r = lo; r <= hi; r++)
            n += t->oplog[r - t->oplog_lo].op == DR_OPC_INPUT;
        if (n > SIZE_MAX / sizeof(int64_t) / 3)
            return DR_ENOMEM;
        rx = dr__malloc(n * sizeof *rx + 1);
        V = dr__malloc(n * sizeof *V + 1);
        out = dr__malloc(n * sizeof *out + 1);
        if (!rx || !V || !out) {
            st = DR_ENOMEM;
        } else {
            size_t i = 0;
            for (int64_t r = lo; r <= hi; r++)
                if (t->oplog[r - t->oplog_lo].op == DR_OPC_INPUT) {
                    rx[i] = r;
                    /* (dr_adjoint's value, read in place: a call each
                       was a tenth of a Haskell hvp of 2,560 inputs) */
                    V[i++] = r < t->adj_valid ? t->adj_raw[1 + r] : 0.0;
                }
            st = dr__hvp_pass(t, ry, n, rx, 1, V, DR_ARR_SEEDS_ADJOINT, out,
                              NULL);
        }
    }
    /* the products in place of the directions: every other adjoint zero */
    if (st == DR_OK)
        st = dr_adjoints_clear(t);
    if (st == DR_OK && n)
        st = dr__adj_ensure(t);
    for (size_t i = 0; st == DR_OK && i < n; i++) /* (as dr_seed adds) */
        t->adj_raw[1 + rx[i]] += out[i];
    if (st == DR_OK && ry >= 0) {
        for (dr_ext *e = t->exts; e; e = e->next)
            if (e->hvp_result)
                e->hvp_result(e, t, t->hvp_pass);
        st = t->status; /* (an array's adjoint without memory) */
        t->status = DR_OK; /* (nothing recorded: the tape stays usable) */
    }
    dr__free(rx);
    dr__free(V);
    dr__free(out);
    return st;
}

dr_status dr_hessian(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                     double *H)
{
    if (n && !H)
        return DR_EINVAL;
    if (n > SIZE_MAX / (n ? n : 1) / sizeof(double))
        return DR_EINVAL;
    int64_t *rx;
    dr_status st = rel_ids(t, y, n, x, &rx);
    if (st != DR_OK || n == 0) {
        dr__free(rx);
        return st;
    }
    size_t kb = n < DR_HVP_BLOCK ? n : DR_HVP_BLOCK;
    double *E = dr__malloc(kb * n * sizeof *E + 1);
    if (!E) {
        dr__free(rx);
        dr__free(E);
        return DR_ENOMEM;
    }
    int64_t ry = dr__rel_of(t, y.idx);
    /* by edge pushing where it costs less than the products would */
    bool done = false;
    /* (out of memory there, the products may still fit) */
    if (n > DR_HVP_BLOCK && !has_arrays(t))
        (void)dr__hessian_edges(t, ry, n, rx, edge_budget(n, ry), H, &done);
    if (done)
        __atomic_add_fetch(&dr__hessians_by_edges, 1, __ATOMIC_RELAXED);
    /* row i of H is H e_i (H is symmetric): the unit vectors, a block of
       them a pass */
    for (size_t i0 = 0; st == DR_OK && !done && i0 < n; i0 += kb) {
        size_t kk = n - i0 < kb ? n - i0 : kb;
        memset(E, 0, kk * n * sizeof *E);
        for (size_t j = 0; j < kk; j++)
            E[j * n + i0 + j] = 1.0;
        st = dr__hvp_pass(t, ry, n, rx, kk, E, DR_ARR_SEEDS_NONE,
                          H + i0 * n, NULL);
    }
    dr__free(rx);
    dr__free(E);
    return st;
}
