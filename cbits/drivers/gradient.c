/*
 * gradient.c - the drivers: a gradient or a Jacobian in one call, each a
 * sequence of what the sweep layer offers (clear the adjoints, seed, sweep,
 * read), one sweep per output row.
 */
#include "sweep/sweep.h"

#include <stdint.h>

/* Check every id before touching anything, so a bad call changes nothing. */
static dr_status check_ids(const dr_tape *t, size_t n, const dr_real *x)
{
    int64_t r;
    for (size_t i = 0; i < n; i++)
        if (!dr__rel(t, x[i].idx, &r))
            return DR_EINVAL;
    return DR_OK;
}

/* A gradient may be taken: a whole root handle with no sticky error. */
static dr_status gradient_ready(const dr_tape *t)
{
    dr_status st = dr__whole(t);
    return st != DR_OK ? st : t->status;
}

/* One gradient's sweep: clear the adjoints, seed y with 1, sweep. */
static dr_status sweep_from(dr_tape *t, dr_idx y)
{
    dr_status st = dr_adjoints_clear(t);
    if (st == DR_OK)
        st = dr_seed(t, y, 1.0);
    if (st == DR_OK)
        st = dr_reverse(t);
    return st;
}

static dr_status sweep_row(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                           double *g)
{
    dr_status st = sweep_from(t, y.idx);
    if (st != DR_OK)
        return st;
    /* the caller checked every id (check_ids): read the adjoints directly
       (an empty tape has no adjoint storage, and then every g is 0) */
    for (size_t i = 0; i < n; i++) {
        int64_t r = -1;
        dr__rel(t, x[i].idx, &r);
        g[i] = (r >= 0 && r < t->adj_valid) ? t->adj_raw[1 + r] : 0.0;
    }
    return DR_OK;
}

dr_status dr_gradient_range(dr_tape *t, dr_real y, dr_idx first, size_t n,
                            double *g)
{
    if (!t || (n && !g))
        return DR_EINVAL;
    dr_status st = gradient_ready(t);
    if (st != DR_OK)
        return st;
    int64_t r = 0, ry;
    if ((n && !dr__adj_range(t, first, n, &r)) || !dr__rel(t, y.idx, &ry))
        return DR_EINVAL;
    st = sweep_from(t, y.idx);
    if (st == DR_OK && n)
        dr__adj_read(t, r, n, g);
    return st;
}

dr_status dr_gradient(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                      double *g)
{
    return dr_jacobian(t, 1, &y, n, x, g);
}

dr_status dr_jacobian(dr_tape *t, size_t m, const dr_real *y, size_t n,
                      const dr_real *x, double *J)
{
    if (!t || (m && !y) || (n && (!x || !J)) || (m && n > SIZE_MAX / m))
        return DR_EINVAL;
    dr_status st = gradient_ready(t);
    if (st == DR_OK)
        st = check_ids(t, m, y);
    if (st == DR_OK)
        st = check_ids(t, n, x);
    /* (no row offset into J when n == 0: J may then be NULL) */
    for (size_t i = 0; st == DR_OK && i < m; i++)
        st = sweep_row(t, y[i], n, x, n ? J + i * n : J);
    return st;
}
