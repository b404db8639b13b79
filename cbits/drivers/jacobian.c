/*
 * jacobian.c - the dense Jacobian in one call.  A forward sweep gives a
 * column of J, a reverse sweep a row: it takes the fewer sweeps, forward
 * when J is taller than wide (n < m), reverse otherwise, each in vector
 * mode, BLOCK directions per pass over the tape.  Where vector mode cannot
 * run (a node kind without the rule it needs, array nodes; a tape that
 * forked, for reverse, whose parallel sweep is scalar; scratch too large)
 * it sweeps one output row at a time as it always has, with the same
 * result to rounding.  A gradient (m == 1) is always that one scalar sweep.
 */
#include "sweep/sweep.h"

#include <stdint.h>

/* directions per pass: the tape's nodes are read once for many directions,
   but the k-wide scratch outgrows the caches as k grows.  Per direction on
   a 10^5-operation mix, against 885 us for one scalar sweep: 261 us at 4,
   211 at 8, 150 at 10, 277 at 16.  10 also covers a 10-output Jacobian in
   one pass */
#define BLOCK 10
/* at most this much scratch for a block (a long tape gets fewer columns) */
#define BLOCK_BYTES ((size_t)256 << 20)

/* the block width for dirs directions */
static size_t block_width(const dr_tape *t, size_t dirs)
{
    size_t fit = BLOCK_BYTES / sizeof(double) / ((size_t)dr__id_limit(t) + 1);
    size_t k = dirs < BLOCK ? dirs : BLOCK;
    return k <= fit ? k : fit ? fit : 1;
}

/* J by blocks of at most k directions (k <= BLOCK), seeded with the unit
   vectors: columns by forward passes (seeds x, reads y) or rows by reverse
   passes (seeds y, reads x) */
static dr_status blocks(dr_tape *t, bool forward, size_t m, const dr_real *y,
                        size_t n, const dr_real *x, double *J)
{
    size_t dirs = forward ? n : m;
    size_t k = block_width(t, dirs);
    /* only the k x k identity is read: zeroing all of I (800 bytes) was a
       tenth of a small Jacobian's time */
    double I[BLOCK * BLOCK];
    for (size_t j = 0; j < k * k; j++)
        I[j] = 0.0;
    for (size_t j = 0; j < k; j++)
        I[j * k + j] = 1.0;
    for (size_t d0 = 0; d0 < dirs; d0 += k) {
        size_t kb = dirs - d0 < k ? dirs - d0 : k;
        dr_pass_io in = {kb, (forward ? x : y) + d0, k, 1};
        dr_pass_io out = forward ? (dr_pass_io){m, y, n, 1}
                                 : (dr_pass_io){n, x, 1, n};
        dr_status st = dr__pass_k(t, forward, kb, in, I, out,
                                  forward ? J + d0 : J + d0 * n, false);
        if (st != DR_OK)
            return st;
    }
    return DR_OK;
}

/* one row by one scalar reverse sweep */
static dr_status sweep_row(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                           double *g)
{
    dr_status st = dr__sweep_from(t, y.idx);
    if (st != DR_OK)
        return st;
    /* the caller checked every id: read the adjoints directly (an empty
       tape has no adjoint storage, and then every g is 0) */
    for (size_t i = 0; i < n; i++) {
        int64_t r = dr__rel_of(t, x[i].idx);
        g[i] = (r >= 0 && r < t->adj_valid) ? t->adj_raw[1 + r] : 0.0;
    }
    return DR_OK;
}

/* vector mode failed for a reason the scalar rows do not have */
static bool fall_back(dr_status st)
{
    return st == DR_ENOTSUP || st == DR_ENOMEM;
}

dr_status dr_jacobian(dr_tape *t, size_t m, const dr_real *y, size_t n,
                      const dr_real *x, double *J)
{
    if (!t || (m && !y) || (n && (!x || !J)) || (m && n > SIZE_MAX / m))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st != DR_OK)
        return st;
    if (m > 1 && n > 0) {
        st = DR_ENOTSUP;
        if (n < m && dr__forward_ok(t))
            st = blocks(t, true, m, y, n, x, J);
        if (fall_back(st) && !t->hist && dr__reverse_vec_ok(t))
            st = blocks(t, false, m, y, n, x, J);
        if (!fall_back(st))
            return st;
        st = DR_OK;
    }
    /* (no row offset into J when n == 0: J may then be NULL) */
    for (size_t i = 0; st == DR_OK && i < m; i++)
        st = sweep_row(t, y[i], n, x, n ? J + i * n : J);
    return st;
}
