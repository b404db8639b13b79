/*
 * hs_taped.c - a taped gradient whose input holds arrays
 * (Numeric.DualRev.Internal.Run.Driver.Taped): the input's n scalars are in
 * the flat buffer `values`, and each Vec or Mat of it is an array input
 * node ids[i] that borrows its memory, whose elements would sit at
 * values[offs[i] ..] (that part of the buffer unused); the other scalars,
 * in the buffer's order, are the input nodes first, first + 1, ...
 * One call replays the tape at the new values, each array borrowing its
 * new elements at ins[i] (dr_replay_arrays: no copy), and writes y's value
 * and the gradient back: a scalar's adjoint into g where values holds the
 * scalar, and each array's elements' adjoints into outs[i].  Bound `safe`:
 * a replay may call a checkpointed loop's step, which is Haskell code.
 * The gradient's reading alone (a recording's first gradient) is
 * drhs_taped_read_arrays; its Hessian-vector products, drhs_taped_hvp_arrays.
 */
#include <dualrev.h>

#include <stdlib.h>

/* the scalars of the buffer outside every array (offs increasing, the
   arrays' lengths lens), as dr_replay_arrays takes them: ids (consecutive
   from first) and values side by side into xs and vs when given; their
   number */
static size_t scalars_outside(dr_idx first, size_t n, const double *values,
                              size_t m, const size_t *offs, const size_t *lens,
                              dr_real *xs, double *vs)
{
    size_t k = 0, from = 0;
    for (size_t a = 0; a <= m; a++) {
        size_t to = a < m ? offs[a] : n;
        for (size_t i = from; i < to; i++, k++)
            if (xs) {
                xs[k].val = values[i];
                xs[k].idx = first + (dr_idx)k;
                vs[k] = values[i];
            }
        if (a < m)
            from = offs[a] + lens[a];
    }
    return k;
}

/* the array input nodes ids[0..m-1] as dr_replay_arrays takes them, with
   their lengths */
static dr_status array_shapes(dr_tape *t, size_t m, const dr_idx *ids,
                              dr_arr *arrs, size_t *lens)
{
    dr_status st = DR_OK;
    for (size_t i = 0; st == DR_OK && i < m; i++) {
        arrs[i].idx = ids[i];
        arrs[i].val = NULL;
        st = dr_arr_shape(t, ids[i], &arrs[i].rank, &arrs[i].rows,
                          &arrs[i].cols);
        lens[i] = (size_t)(arrs[i].rows * arrs[i].cols);
    }
    return st;
}

/* After a sweep from y (DR_NONE: a constant, all zeros): the scalars'
   adjoints into g, laid out as the buffer (a run of consecutive nodes
   between two arrays), and array a's (lens[a] elements) into outs[a] */
DR_API int drhs_taped_read_arrays(dr_tape *t, dr_idx first, size_t n,
                                  size_t m, const dr_idx *ids,
                                  const size_t *offs, const size_t *lens,
                                  double *const *outs, dr_idx yidx, double *g)
{
    dr_status st = DR_OK;
    size_t from = 0, node = 0;
    for (size_t a = 0; st == DR_OK && a <= m; a++) {
        size_t to = a < m ? offs[a] : n;
        if (to > from && yidx != DR_NONE)
            st = dr_adjoints_read(t, first + (dr_idx)node, to - from,
                                  g + from);
        else
            for (size_t i = from; i < to; i++)
                g[i] = 0.0;
        if (st == DR_OK && a < m) {
            if (yidx != DR_NONE)
                st = dr_arr_adjoint(t, ids[a], outs[a]);
            else
                for (size_t i = 0; i < lens[a]; i++)
                    outs[a][i] = 0.0;
            node += offs[a] - from;
            from = offs[a] + lens[a];
        }
    }
    return (int)st;
}

DR_API int drhs_taped_grad_arrays(dr_tape *t, dr_idx first, size_t n,
                                  const double *values, size_t m,
                                  const dr_idx *ids, const size_t *offs,
                                  const double *const *ins,
                                  double *const *outs, dr_idx yidx,
                                  double *yval, double *g)
{
    size_t *lens = malloc((m ? m : 1) * sizeof *lens);
    dr_arr *arrs = malloc((m ? m : 1) * sizeof *arrs);
    dr_real *xs = NULL;
    double *vs = NULL;
    dr_status st =
        lens && arrs ? array_shapes(t, m, ids, arrs, lens) : DR_ENOMEM;
    /* (only the scalars outside the arrays: an allocation the size of the
       whole input faulted its pages in at every call) */
    size_t k = st == DR_OK
                   ? scalars_outside(first, n, values, m, offs, lens, NULL, NULL)
                   : 0;
    if (st == DR_OK && k && (!(xs = malloc(k * sizeof *xs)) ||
                             !(vs = malloc(k * sizeof *vs))))
        st = DR_ENOMEM;
    if (st == DR_OK) {
        scalars_outside(first, n, values, m, offs, lens, xs, vs);
        st = dr_replay_arrays(t, k, xs, vs, m, arrs, ins);
    }
    dr_real y = {0.0, yidx};
    if (st == DR_OK && yidx != DR_NONE) {
        st = dr_value(t, yidx, yval);
        y.val = *yval;
        if (st == DR_OK)
            st = dr_gradient_range(t, y, first, 0, NULL);
    }
    if (st == DR_OK)
        st = drhs_taped_read_arrays(t, first, n, m, ids, offs, lens, outs,
                                    yidx, g);
    free(lens);
    free(arrs);
    free(xs);
    free(vs);
    return (int)st;
}

/*
 * A taped Hessian-vector product whose input holds arrays (tapedHvp): the
 * buffer's layout as above, for the values (NULL: no replay, the tape as
 * recorded, ins unread), the direction v and the product out alike.  A
 * replay as drhs_taped_grad_arrays's; then each array's part of v is its
 * tangent seed and each scalar's its direction, one dr_hvp (y DR_NONE: a
 * constant, all zeros), and each array's product (dr_arr_hvp) and each
 * scalar's written where the buffer holds them.  The seeds are dropped
 * after.  A `safe` call: the replay may run a checkpointed loop's step.
 */
DR_API int drhs_taped_hvp_arrays(dr_tape *t, dr_idx first, size_t n,
                                 const double *values, size_t m,
                                 const dr_idx *ids, const size_t *offs,
                                 const double *const *ins, dr_idx yidx,
                                 const double *v, double *out)
{
    size_t *lens = malloc((m ? m : 1) * sizeof *lens);
    dr_arr *arrs = malloc((m ? m : 1) * sizeof *arrs);
    dr_status st =
        lens && arrs ? array_shapes(t, m, ids, arrs, lens) : DR_ENOMEM;
    size_t k = st == DR_OK
                   ? scalars_outside(first, n, values, m, offs, lens, NULL, NULL)
                   : 0;
    /* the scalars' ids and values, their directions (in the values'
       place: the direction's scalars laid out as the values are) and
       their products */
    dr_real *xs = malloc((k ? k : 1) * sizeof *xs);
    double *vs = malloc((k ? k : 1) * sizeof *vs);
    double *ds = malloc((k ? k : 1) * sizeof *ds);
    double *hs = malloc((k ? k : 1) * sizeof *hs);
    if (st == DR_OK && (!xs || !vs || !ds || !hs))
        st = DR_ENOMEM;
    if (st == DR_OK) {
        scalars_outside(first, n, v, m, offs, lens, xs, ds);
        if (values) {
            scalars_outside(first, n, values, m, offs, lens, xs, vs);
            st = dr_replay_arrays(t, k, xs, vs, m, arrs, ins);
        }
    }
    dr_real y = {0.0, yidx};
    if (st == DR_OK && yidx != DR_NONE)
        st = dr_value(t, yidx, &y.val);
    if (st == DR_OK && yidx != DR_NONE) {
        st = dr_arr_tangents_clear(t);
        for (size_t i = 0; st == DR_OK && i < m; i++)
            if (lens[i])
                st = dr_arr_tangent_seed(t, ids[i], v + offs[i]);
        if (st == DR_OK)
            st = dr_hvp(t, y, k, xs, ds, hs);
        for (size_t i = 0; st == DR_OK && i < m; i++)
            if (lens[i])
                st = dr_arr_hvp(t, ids[i], out + offs[i]);
        dr_status cleared = dr_arr_tangents_clear(t);
        if (st == DR_OK)
            st = cleared;
    } else if (st == DR_OK) {
        for (size_t i = 0; i < n; i++)
            out[i] = 0.0;
    }
    /* the scalars' products where the buffer holds them */
    if (st == DR_OK && yidx != DR_NONE) {
        size_t from = 0, j = 0;
        for (size_t a = 0; a <= m; a++) {
            size_t to = a < m ? offs[a] : n;
            for (size_t i = from; i < to; i++)
                out[i] = hs[j++];
            if (a < m)
                from = offs[a] + lens[a];
        }
    }
    free(lens);
    free(arrs);
    free(xs);
    free(vs);
    free(ds);
    free(hs);
    return (int)st;
}
