/*
 * coloring.h - the graph colourings of the sparse drivers (sparse.c),
 * written by hand in coloring.c.  Patterns are CSR: row r holds the column
 * indices ind[ptr[r] .. ptr[r+1]-1], increasing.  Not installed.
 */
#ifndef DR_COLORING_H
#define DR_COLORING_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>

/* Columns that share a row get different colours (a distance-2 colouring
   of the bipartite graph, greedy in column order): color[0 .. cols-1]
   and their number in *ncolors.  (rp, ri) is the pattern by rows, (cp,
   ci) the same by columns.  DR_ENOMEM. */
DR_HIDDEN dr_status dr__color_columns(size_t rows, size_t cols,
                                      const size_t *rp, const size_t *ri,
                                      const size_t *cp, const size_t *ci,
                                      uint32_t *color, size_t *ncolors);

/* A colouring of a symmetric n x n pattern (both triangles, diagonal
   allowed) from which every entry is read directly off the products with
   the colours' sums of unit vectors: a star colouring (greedy, Gebremedhin,
   Manne and Pothen 2005, Algorithm 4.1), or, where that leaves an entry
   that cannot be read directly (never expected), the distance-2
   colouring.  src[e] for each entry e of the pattern: where in B (ncolors
   x n, row c the product with colour c's sum, row-major) its value lies,
   B[src[e]].  DR_ENOMEM. */
DR_HIDDEN dr_status dr__color_symmetric(size_t n, const size_t *ptr,
                                        const size_t *ind, uint32_t *color,
                                        size_t *ncolors, size_t *src);

#endif /* DR_COLORING_H */
