/*
 * coloring.c - the colourings of the sparse Jacobians and Hessians
 * (sparse.c), by hand: greedy, in index order.  ColPack (C++) does the
 * same and more; these few functions keep the library a C library with no
 * dependency beyond OpenBLAS.
 *
 * Jacobian: columns that share no row may be seeded together (their sums
 * are read back entry by entry), so columns are coloured such that any two
 * that share a row differ.  Hessian: symmetry lets an entry be read from
 * either its row or its column, so fewer colours do: a star colouring
 * (every path on four vertices uses at least three colours) leaves every
 * entry H_ij readable, either off row i (no other column of row i has
 * the colour of j) or off row j (none of row j has the colour of i).
 */
#include "drivers/coloring.h"

#include <string.h>

#define NONE UINT32_MAX

/* the least colour c with forb[c] != stamp */
static uint32_t least_free(const size_t *forb, size_t stamp)
{
    uint32_t c = 0;
    while (forb[c] == stamp)
        c++;
    return c;
}

dr_status dr__color_columns(size_t rows, size_t cols, const size_t *rp,
                            const size_t *ri, const size_t *cp,
                            const size_t *ci, uint32_t *color, size_t *ncolors)
{
    (void)rows;
    *ncolors = 0;
    if (cols == 0)
        return DR_OK;
    /* forb[c] == j + 1: colour c is taken by a column sharing a row with j */
    size_t *forb = dr__malloc((cols + 1) * sizeof *forb);
    if (!forb)
        return DR_ENOMEM;
    memset(forb, 0, (cols + 1) * sizeof *forb);
    for (size_t j = 0; j < cols; j++)
        color[j] = NONE;
    size_t nc = 0;
    for (size_t j = 0; j < cols; j++) {
        for (size_t e = cp[j]; e < cp[j + 1]; e++) {
            size_t i = ci[e];
            for (size_t f = rp[i]; f < rp[i + 1]; f++)
                if (color[ri[f]] != NONE)
                    forb[color[ri[f]]] = j + 1;
        }
        color[j] = least_free(forb, j + 1);
        if (color[j] + 1 > nc)
            nc = color[j] + 1;
    }
    dr__free(forb);
    *ncolors = nc;
    return DR_OK;
}

/* the greedy star colouring of the graph of a symmetric pattern (the
   diagonal is no edge) */
static void star(size_t n, const size_t *ptr, const size_t *ind,
                 uint32_t *color, size_t *forb)
{
    for (size_t v = 0; v < n; v++)
        color[v] = NONE;
    for (size_t v = 0; v < n; v++) {
        size_t s = v + 1;
        for (size_t e = ptr[v]; e < ptr[v + 1]; e++) {
            size_t w = ind[e];
            if (w != v && color[w] != NONE)
                forb[color[w]] = s;
        }
        for (size_t e = ptr[v]; e < ptr[v + 1]; e++) {
            size_t w = ind[e];
            if (w == v)
                continue;
            for (size_t f = ptr[w]; f < ptr[w + 1]; f++) {
                size_t x = ind[f];
                if (x == v || x == w || color[x] == NONE)
                    continue;
                if (color[w] == NONE) {
                    /* v - w - x, w not coloured yet: v and x differ */
                    forb[color[x]] = s;
                    continue;
                }
                /* v - w - x - y with y of w's colour: v must not take
                   x's colour (the path would be two-coloured) */
                for (size_t g = ptr[x]; g < ptr[x + 1]; g++) {
                    size_t y = ind[g];
                    if (y != w && y != x && color[y] == color[w]) {
                        forb[color[x]] = s;
                        break;
                    }
                }
            }
        }
        color[v] = least_free(forb, s);
    }
}

/* where each entry is read (src); false if an entry cannot be read
   directly.  cnt: n + 1 counters by colour, stamp: their row */
static bool recovery(size_t n, const size_t *ptr, const size_t *ind,
                     const uint32_t *color, size_t *cnt, size_t *stamp,
                     size_t *src)
{
    size_t nnz = ptr[n];
    for (size_t e = 0; e < nnz; e++)
        src[e] = SIZE_MAX;
    for (size_t r = 0; r < n; r++) {
        for (size_t e = ptr[r]; e < ptr[r + 1]; e++) {
            uint32_t c = color[ind[e]];
            if (stamp[c] != r + 1) {
                stamp[c] = r + 1;
                cnt[c] = 0;
            }
            cnt[c]++;
        }
        for (size_t e = ptr[r]; e < ptr[r + 1]; e++) {
            size_t l = ind[e];
            uint32_t c = color[l];
            if (cnt[c] != 1)
                continue;
            /* no other column of row r has l's colour: H_rl, and H_lr,
               are entry r of the product with colour c */
            size_t at = (size_t)c * n + r;
            src[e] = at;
            /* the mirror entry (l, r): row l is increasing */
            size_t lo = ptr[l], hi = ptr[l + 1];
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ind[mid] < r)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < ptr[l + 1] && ind[lo] == r && src[lo] == SIZE_MAX)
                src[lo] = at;
        }
    }
    for (size_t e = 0; e < nnz; e++)
        if (src[e] == SIZE_MAX)
            return false;
    return true;
}

dr_status dr__color_symmetric(size_t n, const size_t *ptr, const size_t *ind,
                              uint32_t *color, size_t *ncolors, size_t *src)
{
    *ncolors = 0;
    if (n == 0)
        return DR_OK;
    size_t *w = dr__malloc(3 * (n + 1) * sizeof *w);
    if (!w)
        return DR_ENOMEM;
    size_t *forb = w, *cnt = w + n + 1, *stamp = w + 2 * (n + 1);
    memset(w, 0, 3 * (n + 1) * sizeof *w);
    star(n, ptr, ind, color, forb);
    dr_status st = DR_OK;
    if (!recovery(n, ptr, ind, color, cnt, stamp, src)) {
        /* the distance-2 colouring reads every entry off its own row
           (the pattern is its own transpose) */
        st = dr__color_columns(n, n, ptr, ind, ptr, ind, color, ncolors);
        memset(stamp, 0, (n + 1) * sizeof *stamp);
        if (st == DR_OK && !recovery(n, ptr, ind, color, cnt, stamp, src))
            st = DR_EINVAL; /* cannot happen */
    }
    if (st == DR_OK) {
        size_t nc = 0;
        for (size_t v = 0; v < n; v++)
            if (color[v] + (size_t)1 > nc)
                nc = color[v] + (size_t)1;
        *ncolors = nc;
    }
    dr__free(w);
    return st;
}
