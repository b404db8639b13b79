/*
 * The engine's calls in the shapes the Haskell front end has at hand: those
 * that take the scalar y by value (dr_hvp, dr_hvp_inputs, dr_hessian,
 * dr_sparse_hessian, dr_gradient_range),
 * with y given as its value and id (Haskell's FFI cannot pass a dr_real by
 * value), dr_input_range with the first id as its result, and dr_jacobian
 * of a range of inputs.
 */
#include "dualrev.h"
#include "hs_quick.h"

#include <stdint.h>
#include <stdlib.h>

/*
 * dr_input_range returning the first id (DR_NONE for n == 0 and on failure,
 * which leaves the tape's sticky status set): no out-parameter, so the
 * caller needs no pinned memory for one integer.
 */
DR_API dr_idx drhs_input_first(dr_tape *t, size_t n)
{
    dr_idx first = DR_NONE;
    (void)dr_input_range(t, n, &first);
    return first;
}

DR_API dr_status drhs_hvp(dr_tape *t, double yval, dr_idx yidx, size_t n,
                          const dr_real *x, const double *v, double *out)
{
    dr_real y = {yval, yidx};
    return dr_hvp(t, y, n, x, v, out);
}

DR_API dr_status drhs_hvp_inputs(dr_tape *t, double yval, dr_idx yidx)
{
    dr_real y = {yval, yidx};
    return dr_hvp_inputs(t, y);
}

DR_API dr_status drhs_hessian(dr_tape *t, double yval, dr_idx yidx, size_t n,
                              const dr_real *x, double *H)
{
    dr_real y = {yval, yidx};
    return dr_hessian(t, y, n, x, H);
}

DR_API dr_status drhs_sparse_hessian(dr_tape *t, double yval, dr_idx yidx,
                                     size_t n, const dr_real *x, dr_sparse *H)
{
    dr_real y = {yval, yidx};
    return dr_sparse_hessian(t, y, n, x, H);
}

DR_API dr_status drhs_gradient_range(dr_tape *t, double yval, dr_idx yidx,
                                     dr_idx first, size_t n, double *g)
{
    dr_real y = {yval, yidx};
    return dr_gradient_range(t, y, first, n, g);
}

/*
 * dr_jacobian with the inputs given as the range first .. first+n-1 (as
 * dr_input_range made them) instead of an array the caller fills: the
 * overloaded mode's inputs are such a range.  dr_jacobian reads only the
 * inputs' ids; the array is built here, on the stack when it is small.
 */
DR_API dr_status drhs_jacobian_range(dr_tape *t, size_t m, const dr_real *y,
                                     dr_idx first, size_t n, double *J)
{
    enum { ON_STACK = 64 };
    if (n == 0)
        return dr_jacobian(t, m, y, 0, NULL, J);
    dr_real small[ON_STACK];
    dr_real *x = small;
    if (n > ON_STACK) {
        if (n > SIZE_MAX / sizeof *x || !(x = malloc(n * sizeof *x)))
            return DR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = (dr_real){0.0, first + (dr_idx)i};
    dr_status st = dr_jacobian(t, m, y, n, x, J);
    if (x != small)
        free(x);
    return st;
}

/*
 * dr_replay of the inputs first .. first+n-1 (every scalar of a taped
 * function's input, as the splices record them) at values[0..n-1].
 * A replay runs the steps of the checkpointed loops on the tape, Haskell
 * code, which an `unsafe` call must not: while any step is alive in the
 * process this answers DRHS_CALL_SAFE, for the caller to make the safe
 * call (drhs_replay_range_any, bound `safe`) instead (hs_quick.c).
 */
DR_API dr_status drhs_replay_range_any(dr_tape *t, dr_idx first, size_t n,
                                       const double *values);

DR_API int drhs_replay_range(dr_tape *t, dr_idx first, size_t n,
                             const double *values)
{
    if (drhs_steps_alive() > 0)
        return DRHS_CALL_SAFE;
    return (int)drhs_replay_range_any(t, first, n, values);
}

DR_API dr_status drhs_replay_range_any(dr_tape *t, dr_idx first, size_t n,
                                       const double *values)
{
    return dr_replay_range(t, first, n, values);
}

/*
 * A taped gradient's replay in one call (Numeric.DualRev.Internal.Run.Driver.Taped):
 * dr_replay of the inputs first .. first+n-1 at values, then the gradient
 * of the output y (id yidx, DR_NONE: a constant) into g[0..n-1] and y's new
 * value into *yval.  Answers DRHS_CALL_SAFE, doing nothing, while a
 * checkpointed loop's step is alive (a replay would call it back: the
 * caller makes its calls one by one, the replay safe).
 */
DR_API int drhs_taped_grad(dr_tape *t, dr_idx first, size_t n, const double *values,
                           dr_idx yidx, double *yval, double *g)
{
    if (drhs_steps_alive() > 0)
        return DRHS_CALL_SAFE;
    dr_status st = drhs_replay_range_any(t, first, n, values);
    if (st != DR_OK)
        return (int)st;
    if (yidx == DR_NONE) {
        for (size_t i = 0; i < n; i++)
            g[i] = 0.0;
        return DR_OK;
    }
    st = dr_value(t, yidx, yval);
    if (st == DR_OK) {
        dr_real y = {*yval, yidx};
        st = dr_gradient_range(t, y, first, n, g);
    }
    return (int)st;
}

/*
 * A taped Hessian-vector product (Numeric.DualRev.Internal.Run.Driver.Taped,
 * tapedHvp): a replay of the inputs first .. first+n-1 at values (NULL:
 * none, the tape as recorded), then the product of the Hessian of y (id
 * yidx, DR_NONE: a constant, whose product is zero) with the direction
 * v[0..n-1] of those inputs into out[0..n-1].
 */
DR_API dr_status drhs_taped_hvp(dr_tape *t, dr_idx first, size_t n,
                                const double *values, dr_idx yidx,
                                const double *v, double *out)
{
    dr_status st = values ? drhs_replay_range_any(t, first, n, values) : DR_OK;
    if (st != DR_OK)
        return st;
    if (yidx == DR_NONE) {
        for (size_t i = 0; i < n; i++)
            out[i] = 0.0;
        return DR_OK;
    }
    dr_real y = {0.0, yidx};
    dr_real *xs = malloc((n ? n : 1) * sizeof *xs);
    if (!xs)
        return DR_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        xs[i].val = 0.0; /* (dr_hvp reads the ids) */
        xs[i].idx = first + (dr_idx)i;
    }
    st = dr_value(t, yidx, &y.val);
    if (st == DR_OK)
        st = dr_hvp(t, y, n, xs, v, out);
    free(xs);
    return st;
}
