/*
 * array_replay.c - a replay with new values of array inputs too
 * (dr_replay_arrays, dualrev.h "replay"): the arrays' part of the checks,
 * and their values set and, should the replay fail, set back, through the
 * sweep layer's dr__replay.  An input the tape copied takes the new values
 * into its own buffer (its old ones saved first); a borrowed one (the _ref
 * creators) borrows the new memory instead, and its old memory again on
 * failure.
 */
#include "arrays/array.h"

#include <stdint.h>

/* the inputs given and where their old values go */
typedef struct arr_inputs {
    size_t m;
    dr_arr_node **xs;           /* the nodes, in the caller's order       */
    const double *const *vals;  /* their new values                       */
    const double **borrowed;    /* a borrowed input's old memory, by i    */
    double *old;                /* a copied input's old values, in order  */
} arr_inputs;

static void set_new(void *ctx)
{
    arr_inputs *a = ctx;
    double *old = a->old;
    for (size_t i = 0; i < a->m; i++) {
        dr_arr_node *x = a->xs[i];
        if (x->borrowed) {
            a->borrowed[i] = x->val;
            x->val = (double *)(uintptr_t)a->vals[i];
        } else if (x->n) {
            dr__copy_doubles(old, x->val, (size_t)x->n);
            dr__copy_doubles(x->val, a->vals[i], (size_t)x->n);
            old += x->n;
        }
    }
}

static void set_old(void *ctx)
{
    arr_inputs *a = ctx;
    const double *old = a->old;
    for (size_t i = 0; i < a->m; i++) {
        dr_arr_node *x = a->xs[i];
        if (x->borrowed) {
            x->val = (double *)(uintptr_t)a->borrowed[i];
        } else if (x->n) {
            dr__copy_doubles(x->val, old, (size_t)x->n);
            old += x->n;
        }
    }
}

/* the array inputs given, checked (marked while checked, each once): the
   nodes into xs and the doubles their old values take into *copied */
static dr_status check_arrays(const dr_tape *t, size_t m, const dr_arr *arrs,
                              const double *const *avalues, dr_arr_node **xs,
                              size_t *copied)
{
    dr_status st = DR_OK;
    size_t i = 0;
    *copied = 0;
    for (; i < m; i++) {
        dr_arr_node *x = dr__arr_find(t, arrs[i].idx);
        if (!x || !x->input || x->mark || (x->n && !avalues[i])) {
            st = DR_EINVAL;
            break;
        }
        if (arrs[i].rank != x->rank || arrs[i].rows != x->rows ||
            arrs[i].cols != x->cols) {
            st = DR_ESHAPE;
            break;
        }
        x->mark = true;
        xs[i] = x;
        if (!x->borrowed)
            *copied += (size_t)x->n; /* (arena sizes: no overflow) */
    }
    while (i > 0)
        xs[--i]->mark = false;
    return st;
}

dr_status dr_replay_arrays(dr_tape *t, size_t n, const dr_real *x,
                           const double *values, size_t m,
                           const dr_arr *arrs, const double *const *avalues)
{
    if (m == 0)
        return dr__replay(t, n, x, values, NULL);
    if (!t || !arrs || !avalues || t->root != t)
        return DR_EINVAL;
    /* what dr__replay answers first, before the arrays are looked up */
    if (t->state & (DR_ST_FORKED | DR_ST_RECOPEN | DR_ST_REC))
        return DR_EBUSY;
    if (t->status != DR_OK)
        return t->status;
    if (m > SIZE_MAX / 4 / (sizeof(dr_arr_node *) + sizeof(double *)))
        return DR_ENOMEM;
    /* the nodes and borrowed memory by i, then the copied values */
    size_t head = m * (sizeof(dr_arr_node *) + sizeof(double *)), copied;
    dr_arr_node **xs = dr__malloc(head);
    if (!xs)
        return DR_ENOMEM;
    dr_status st = check_arrays(t, m, arrs, avalues, xs, &copied);
    arr_inputs a = {m, xs, avalues, (const double **)(xs + m), NULL};
    if (st == DR_OK && copied &&
        !(a.old = dr__malloc(copied * sizeof(double))))
        st = DR_ENOMEM;
    if (st == DR_OK) {
        dr_replay_more more = {set_new, set_old, &a};
        st = dr__replay(t, n, x, values, &more);
    }
    dr__free(a.old);
    dr__free(xs);
    return st;
}
