/* program.c - statements recorded with their programs (program.h): the
   node, its log entry at order 2, and its replay at new leaf values. */
#include "record/program.h"

#include <math.h>

/* the node's partials by argument from the partials by leaf (the same
   additions, in the same order, at recording and replay) */
static void by_argument(const dr_prog *g, const double *p, double *d)
{
    for (unsigned j = 0; j < g->nargs; j++)
        d[j] = 0.0;
    for (unsigned i = 0; i < g->n; i++)
        if (g->slot[i] != 0xff)
            d[g->slot[i]] += p[i];
}

/* the node's arguments from its leaves: distinct active ones, in order
   of first use */
static void arguments(dr_prog *g, int64_t *args)
{
    unsigned k = 0;
    for (unsigned i = 0; i < g->n; i++) {
        g->slot[i] = 0xff;
        if (g->leaf[i] < 0)
            continue;
        unsigned j = 0;
        while (j < k && args[j] != g->leaf[i])
            j++;
        if (j == k)
            args[k++] = g->leaf[i];
        g->slot[i] = (uint8_t)j;
    }
    g->nargs = (uint8_t)k;
}

dr_idx dr__record_prog(dr_tape *t, const unsigned char *code,
                       const dr_idx *ids, const double *x, const double *want,
                       double *v, bool *refused)
{
    *v = NAN;
    *refused = false;
    if (!t)
        return DR_NONE;
    if (!dr__prog_valid(code) || !ids || !x) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    dr_prog g;
    g.code = code;
    g.n = (uint8_t)dr__prog_leaves(code);
    for (unsigned i = 0; i < g.n; i++) {
        if (!dr__rel_arg(t, ids[i], &g.leaf[i])) {
            dr__fail(t, DR_EINVAL);
            return DR_NONE;
        }
        g.x[i] = x[i];
    }
    *v = dr__prog_eval(code, g.x, g.p);
    if (want && memcmp(want, v, sizeof *v) != 0) {
        *refused = true;
        return DR_NONE;
    }
    int64_t args[DR_PROG_LEAVES];
    double d[DR_PROG_LEAVES];
    arguments(&g, args);
    by_argument(&g, g.p, d);
    unsigned k = g.nargs;
    if (k == 0)
        return DR_NONE;
    dr_idx id;
    if (k <= 2) {
        id = dr__rec2(t, t->base + args[0], d[0],
                      k > 1 ? t->base + args[1] : DR_NONE, k > 1 ? d[1] : 0.0);
    } else {
        dr__nary_ext *nx = dr__nary_new(t, k, k);
        if (!nx)
            return DR_NONE;
        for (unsigned j = 0; j < k; j++) {
            nx->args[j] = args[j];
            nx->partials[j] = d[j];
        }
        id = dr__record_ext(t, &nx->hdr);
    }
    if (id == DR_NONE || !dr__order2(t))
        return id;
    /* (a leaf given another value than its node's holds makes the tape
       refuse to replay, as an operation's argument does: replay.c) */
    dr_prog *rec = dr__arena_alloc(t, sizeof *rec);
    if (!rec) { /* (no second-order rule; the tape failed: DR_ENOMEM) */
        dr__oplog(t, id, DR_OPC_NONE, 0.0, 0.0, *v, DR_NONE, DR_NONE);
        return id;
    }
    *rec = g;
    dr_oplog *e = dr__oplog(t, id, DR_OPC_PROG, 0.0, 0.0, *v, DR_NONE,
                            DR_NONE);
    if (e)
        memcpy(&e->x, &rec, sizeof rec);
    return id;
}

void dr__prog_replay(dr_oplog *log, dr_oplog *e, dr_node *p)
{
    dr_prog *g = dr__oplog_prog(e);
    for (unsigned i = 0; i < g->n; i++)
        if (g->leaf[i] >= 0)
            g->x[i] = log[g->leaf[i]].v;
    e->v = dr__prog_eval(g->code, g->x, g->p);
    double d[DR_PROG_LEAVES];
    by_argument(g, g->p, d);
    if (p->a == DR_EXT_TAG) { /* more than two arguments, or far ones */
        double *pd = dr__nary_partials(dr__node_ext(p));
        for (unsigned j = 0; j < g->nargs; j++)
            pd[j] = d[j];
    } else {
        p->da = d[0];
        if (g->nargs > 1)
            p->db = d[1];
    }
}
