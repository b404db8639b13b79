/*
 * adjoint.c - the reverse pass of part of a tape, recorded as operations
 * on the same tape (dr_adjoint_record): a gradient whose entries are
 * themselves differentiable, in one pass however many variables it has.
 * A derivative taken inside code being differentiated (a gradient in a
 * function whose Hessian is wanted) costs one recorded pass this way, where
 * recorded tangents (tangent.c) cost one pass per variable.  Each node's
 * adjoint is added into its arguments' times its partials, the partials
 * written as operations on the values the node was made from (its entry in
 * the second-order log), as the tangent pass writes them.
 */
#include "recorded/recorded_ops.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct apass {
    dr_rpass rp;       /* for extended nodes' rules (first: a cast)    */
    dr_tape *t;
    int64_t lo, hi;    /* the relative ids swept                      */
    dr_real *adj;      /* adjoints of lo .. hi                        */
    bool *var;         /* ... of which these are variables: kept       */
    size_t nb;         /* variables before lo, by increasing rel       */
    rel_value *before; /* ... with the adjoints added into them        */
} apass;

/* where the adjoint of relative id r is kept (NULL: before the range and
   no variable, or a constant: what reaches it is not wanted) */
static dr_real *adj_at(apass *p, int64_t r)
{
    if (r >= p->lo && r <= p->hi)
        return &p->adj[r - p->lo];
    if (r < 0 || p->nb == 0)
        return NULL;
    rel_value *b = find_rel(p->before, p->nb, r);
    return b ? &b->v : NULL;
}

static dr_real rp_get(dr_rpass *rp, int64_t r)
{
    dr_real *d = adj_at((apass *)(void *)rp, r);
    return d ? *d : ZERO;
}
static bool rp_wanted(dr_rpass *rp, int64_t r)
{
    return adj_at((apass *)(void *)rp, r) != NULL;
}
static void rp_set(dr_rpass *rp, int64_t r, dr_real v)
{
    dr_real *d = adj_at((apass *)(void *)rp, r);
    if (d)
        *d = v;
}

/* adj(r) += pd * g */
static void add_into(apass *p, int64_t r, dr_real pd, dr_real g)
{
    dr_real *d = adj_at(p, r);
    if (d)
        *d = plus(p->t, *d, term(p->t, pd, g));
}

static void sweep_one(apass *p, int64_t r, const dr_oplog *e, dr_real g)
{
    dr_tape *t = p->t;
    switch (e->op) {
    case DR_OPC_GAP:
    case DR_OPC_INPUT:
        return;
    case DR_OPC_EXT: { /* (dr__rules_cover: it has the hook) */
        dr_ext *x = dr__oplog_ext(e);
        x->adjoint_record(x, &p->rp, g);
        return;
    }
    case DR_OPC_LINEAR:
        add_into(p, e->ra, K(e->x), g);
        add_into(p, e->rb, K(e->y), g);
        return;
    case DR_OPC_NARY:
    case DR_OPC_SUMN:
    case DR_OPC_PROG: {
        size_t n;
        const int64_t *args;
        const double *ps;
        if (!dr__oplog_nary(e, &n, &args, &ps))
            return;
        for (size_t i = 0; i < n; i++)
            add_into(p, args[i], K(e->op == DR_OPC_SUMN ? 1.0 : ps[i]), g);
        return;
    }
    case DR_OPC_select: /* the side chosen, with partial 1 */
        add_into(p, e->aux > 0 ? e->ra : e->rb, K(1.0), g);
        return;
    default: {
        /* no partial for an argument nothing is added into (a constant,
           or outside the range): fewer operations recorded */
        bool wa = adj_at(p, e->ra) != NULL, wb = adj_at(p, e->rb) != NULL;
        if (!wa && !wb)
            return;
        dr_real a = value_node(t, e->ra, e->x), b = value_node(t, e->rb, e->y);
        dr_real c = value_node(t, r, e->v), pa, pb;
        partials(t, e->op, a, b, c, &pa, &pb);
        if (wa)
            add_into(p, e->ra, pa, g);
        if (wb)
            add_into(p, e->rb, pb, g);
        return;
    }
    }
}

/* the variables' relative ids, every id checked, and every node from lo
   to hi with a rule (or a variable): nothing is recorded before this */
static dr_status check_pass(const dr_tape *t, int64_t lo, int64_t hi, size_t n,
                            const dr_idx *x, int64_t *rel, bool *var)
{
    for (size_t i = 0; i < n; i++)
        if (!dr__rel(t, x[i], &rel[i]))
            return DR_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (rel[i] >= lo && rel[i] <= hi)
            var[rel[i] - lo] = true;
    return dr__rules_cover(t, lo, hi, var, true);
}

/* the variables before lo into p->before, sorted, each once */
static void place_before(apass *p, size_t n, const int64_t *rel)
{
    size_t nb = 0;
    for (size_t i = 0; i < n; i++)
        if (rel[i] >= 0 && rel[i] < p->lo)
            p->before[nb++] = (rel_value){rel[i], ZERO};
    sort_by_rel(p->before, nb);
    size_t m = 0;
    for (size_t i = 0; i < nb; i++)
        if (m == 0 || p->before[m - 1].rel != p->before[i].rel)
            p->before[m++] = p->before[i];
    p->nb = m;
}

static void sweep(apass *p)
{
    p->adj[p->hi - p->lo] = K(1.0);
    for (int64_t r = p->hi; r >= p->lo; r--) {
        dr_real g = p->adj[r - p->lo];
        /* a variable keeps what reaches it: its own arguments are not
           the gradient's */
        if (is_zero(g) || p->var[r - p->lo])
            continue;
        /* a copy: recording the adjoints may move the log */
        dr_oplog e = *dr__oplog_at(p->t, r);
        sweep_one(p, r, &e, g);
    }
}

dr_status dr__adjoint_record(dr_tape *t, dr_idx from, dr_real y, size_t n,
                            const dr_idx *x, dr_real *out)
{
    if (n && !out)
        return DR_EINVAL;
    for (size_t i = 0; i < n; i++)
        out[i] = ZERO;
    if (!t || (t->state & DR_ST_DEAD) || (n && !x))
        return DR_EINVAL;
    int64_t lo, hi;
    dr_status ready = dr__recorded_range(t, from, y, &lo, &hi);
    if (ready != DR_OK)
        return ready;
    if (n > SIZE_MAX / (sizeof(int64_t) + sizeof(rel_value)))
        return DR_ENOMEM;
    size_t span = hi >= lo ? (size_t)(hi - lo + 1) : 0;
    if (span > SIZE_MAX / (sizeof(dr_real) + sizeof(bool)))
        return DR_ENOMEM;
    pass_arrays a;
    dr_status st = DR_ENOMEM;
    bool got = pass_arrays_get(&a, n, span);
    int64_t *rel = a.rel;
    apass p = {{t, rp_get, rp_wanted, rp_set}, t, lo, hi, a.val, a.mark, 0, a.before};
    if (got)
        st = check_pass(t, lo, hi, n, x, rel, p.var);
    if (st == DR_OK) {
        /* a failure from here on (memory) takes the recorded nodes off
           again on a root handle: a failed call changes nothing (a child
           handle keeps them, as dr_tangent_record's) */
        bool root = t->root == t;
        dr_tape_pos pos;
        if (root)
            dr__tape_save(t, &pos);
        for (size_t r = 0; r < span; r++)
            p.adj[r] = ZERO;
        place_before(&p, n, rel);
        if (hi >= lo)
            sweep(&p);
        for (size_t i = 0; i < n; i++) {
            dr_real *d = adj_at(&p, rel[i]);
            out[i] = d ? *d : ZERO;
            /* y before the range (nothing swept): dy/dy alone is 1 */
            if (hi < lo && rel[i] == hi && hi >= 0)
                out[i] = K(1.0);
        }
        st = t->status;
        if (st != DR_OK) {
            if (root)
                dr__tape_restore(t, &pos);
            t->status = DR_OK;
            for (size_t i = 0; i < n; i++)
                out[i] = ZERO;
        }
    }
    pass_arrays_free(&a);
    return st;
}
