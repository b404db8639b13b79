/* statement.c - statements the caller's code evaluates (dr_record_statement,
   dualrev/external.h; the log's part in statement.h): one node whose value
   and partials come from the caller's function of the leaves' values, over
   the active leaves in order.  Recording and replay call the function the
   same way and give the node the partials it returns as they are, so a
   replayed node is a fresh recording's bit for bit. */
#include "record/statement.h"

#include <math.h>
#include <stdint.h>

void dr__stmt_replay(const dr_oplog *log, dr_oplog *e, dr_node *node)
{
    dr_stmt *s = dr__oplog_stmt(e);
    double *xs = dr__stmt_xs(s), *d = dr__stmt_d(s);
    for (size_t i = 0; i < s->n; i++)
        if (s->leaf[i] >= 0)
            xs[i] = log[s->leaf[i]].v;
    e->v = s->f(s->ctx, s->n, xs, d);
    /* the partials where the node keeps them (record.h, dr__rec2: a node
       of two arguments, or a record for far arguments or for more) */
    double *q = node->a == DR_EXT_TAG ? dr__nary_partials(dr__node_ext(node))
                                      : NULL;
    for (size_t i = 0, j = 0; i < s->n; i++) {
        if (s->leaf[i] < 0)
            continue;
        if (q)
            q[j] = d[i];
        else if (j == 0)
            node->da = d[i];
        else
            node->db = d[i];
        j++;
    }
}

/* leaves a call takes on the stack (more: from the arena) */
#define STACK_LEAVES 16

/* (GCC cannot see that the leaves' values are written, i < n, before the
   caller's function reads them) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

dr_real dr_record_statement(dr_tape *t, dr_statement_fn f, const void *ctx,
                            size_t n, const dr_real *x)
{
    dr_real r = {NAN, DR_NONE};
    if (!t)
        return r;
    if (!f || (n && !x)) {
        dr__fail(t, DR_EINVAL);
        return r;
    }
    /* every id checked, and the active leaves counted, before anything is
       recorded */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t rel;
        if (!dr__rel_arg(t, x[i].idx, &rel)) {
            dr__fail(t, DR_EINVAL);
            return r;
        }
        k += rel >= 0;
    }
    bool order2 = dr__order2(t);
    /* the leaves: in the record that replay reads at order 2, else on the
       stack where they fit */
    int64_t leaf_st[STACK_LEAVES];
    double xs_st[STACK_LEAVES], d_st[STACK_LEAVES];
    int64_t *leaf = leaf_st;
    double *xs = xs_st, *d = d_st;
    dr_stmt *s = NULL;
    if (order2 || n > STACK_LEAVES) {
        if (n > (SIZE_MAX - sizeof *s) / 24 || n > UINT32_MAX) {
            dr__fail(t, DR_ENOMEM);
            return r;
        }
        s = dr__arena_alloc(t, sizeof *s + 24 * n);
        if (!s)
            return r;
        s->f = f;
        s->ctx = ctx;
        s->n = (uint32_t)n;
        s->k = (uint32_t)k;
        leaf = s->leaf;
        xs = dr__stmt_xs(s);
        d = dr__stmt_d(s);
    }
    for (size_t i = 0; i < n; i++) {
        dr__rel_arg(t, x[i].idx, &leaf[i]);
        xs[i] = x[i].val;
    }
    r.val = f(ctx, n, xs, d);
    if (k == 0)
        return r;
    if (k <= 2) {
        dr_idx ids[2] = {DR_NONE, DR_NONE};
        double ps[2] = {0.0, 0.0};
        for (size_t i = 0, j = 0; i < n; i++)
            if (leaf[i] >= 0) {
                ids[j] = x[i].idx;
                ps[j++] = d[i];
            }
        r.idx = dr__rec2(t, ids[0], ps[0], ids[1], ps[1]);
    } else {
        dr__nary_ext *nx = dr__nary_new(t, k, k);
        if (!nx)
            return r;
        for (size_t i = 0, j = 0; i < n; i++)
            if (leaf[i] >= 0) {
                nx->args[j] = leaf[i];
                nx->partials[j++] = d[i];
            }
        r.idx = dr__record_ext(t, &nx->hdr);
    }
    if (r.idx == DR_NONE || !order2)
        return r;
    /* no second-order rule; replays (a leaf given a value other than its
       node's makes replay refuse, as an operation's argument does) */
    dr_oplog *e = dr__oplog(t, r.idx, DR_OPC_NONE, 0.0, 0.0, r.val, DR_NONE,
                            DR_NONE);
    if (e) {
        memcpy(&e->x, &s, sizeof s);
        e->aux = DR_AUX_STATEMENT;
    }
    return r;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
