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

/* directions per pass: wide enough that the tape's nodes are read once for
   many directions, narrow enough that the k tangents of a node stay in a
   cache line or two (bench/README.md, "forward and vector mode") */
#define BLOCK 8
/* at most this much scratch for a block (a long tape gets fewer columns) */
#define BLOCK_BYTES ((size_t)256 << 20)

/* Check every id before touching anything, so a bad call changes nothing. */
static dr_status check_ids(const dr_tape *t, size_t n, const dr_real *x)
{
    int64_t r;
    for (size_t i = 0; i < n; i++)
        if (!dr__rel(t, x[i].idx, &r))
            return DR_EINVAL;
    return DR_OK;
}

static int64_t rel_of(const dr_tape *t, dr_idx id)
{
    int64_t r = -1;
    dr__rel(t, id, &r); /* checked by check_ids */
    return r;
}

/* the block width for dirs directions */
static size_t block_width(const dr_tape *t, size_t dirs)
{
    size_t fit = BLOCK_BYTES / sizeof(double) / ((size_t)dr__id_limit(t) + 1);
    size_t k = dirs < BLOCK ? dirs : BLOCK;
    return k <= fit ? k : fit ? fit : 1;
}

/* columns of J, kb at a time by forward sweeps */
static dr_status forward_blocks(dr_tape *t, size_t m, const dr_real *y,
                                size_t n, const dr_real *x, double *J)
{
    size_t k = block_width(t, n);
    for (size_t j0 = 0; j0 < n; j0 += k) {
        size_t kb = n - j0 < k ? n - j0 : k;
        dr_scratch *sb;
        double *T = dr__vec_take(t, kb, &sb);
        if (!T)
            return DR_ENOMEM;
        for (size_t j = 0; j < kb; j++) {
            int64_t r = rel_of(t, x[j0 + j].idx);
            if (r >= 0)
                T[r * (int64_t)kb + (int64_t)j] += 1.0;
        }
        dr_fsweep f = {T, kb, t};
        dr_status st = dr__forward_sweep(t, &f);
        for (size_t i = 0; st == DR_OK && i < m; i++) {
            int64_t r = rel_of(t, y[i].idx);
            for (size_t j = 0; j < kb; j++)
                J[i * n + j0 + j] = r >= 0 ? T[r * (int64_t)kb + (int64_t)j] : 0.0;
        }
        dr__scratch_give(t, sb);
        if (st != DR_OK)
            return st;
    }
    return DR_OK;
}

/* rows of J, kb at a time by k-wide reverse sweeps */
static dr_status reverse_blocks(dr_tape *t, size_t m, const dr_real *y,
                                size_t n, const dr_real *x, double *J)
{
    size_t k = block_width(t, m);
    for (size_t i0 = 0; i0 < m; i0 += k) {
        size_t kb = m - i0 < k ? m - i0 : k;
        dr_scratch *sb;
        double *A = dr__vec_take(t, kb, &sb);
        if (!A)
            return DR_ENOMEM;
        for (size_t j = 0; j < kb; j++) {
            int64_t r = rel_of(t, y[i0 + j].idx);
            if (r >= 0)
                A[r * (int64_t)kb + (int64_t)j] += 1.0;
        }
        dr_vsweep s = {A, kb, t};
        dr_status st = dr__reverse_vec(t, &s);
        for (size_t c = 0; st == DR_OK && c < n; c++) {
            int64_t r = rel_of(t, x[c].idx);
            for (size_t j = 0; j < kb; j++)
                J[(i0 + j) * n + c] = r >= 0 ? A[r * (int64_t)kb + (int64_t)j] : 0.0;
        }
        dr__scratch_give(t, sb);
        if (st != DR_OK)
            return st;
    }
    return DR_OK;
}

/* one row by one scalar reverse sweep */
static dr_status sweep_row(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                           double *g)
{
    dr_status st = dr_adjoints_clear(t);
    if (st == DR_OK)
        st = dr_seed(t, y.idx, 1.0);
    if (st == DR_OK)
        st = dr_reverse(t);
    if (st != DR_OK)
        return st;
    /* the caller checked every id (check_ids): read the adjoints directly
       (an empty tape has no adjoint storage, and then every g is 0) */
    for (size_t i = 0; i < n; i++) {
        int64_t r = rel_of(t, x[i].idx);
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
    dr_status st = dr__whole(t);
    if (st == DR_OK)
        st = t->status;
    if (st == DR_OK)
        st = check_ids(t, m, y);
    if (st == DR_OK)
        st = check_ids(t, n, x);
    if (st != DR_OK)
        return st;
    if (m > 1 && n > 0) {
        st = DR_ENOTSUP;
        if (n < m && dr__forward_ok(t))
            st = forward_blocks(t, m, y, n, x, J);
        if (fall_back(st) && !t->hist && dr__reverse_vec_ok(t))
            st = reverse_blocks(t, m, y, n, x, J);
        if (!fall_back(st))
            return st;
        st = DR_OK;
    }
    /* (no row offset into J when n == 0: J may then be NULL) */
    for (size_t i = 0; st == DR_OK && i < m; i++)
        st = sweep_row(t, y[i], n, x, n ? J + i * n : J);
    return st;
}
