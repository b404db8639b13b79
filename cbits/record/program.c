/* program.c - statements recorded with their programs (program.h): the
   value and partials of a program, the node and its log entry at order 2,
   and its replay at new leaf values. */
#include "record/program.h"

#include <math.h>

static DR__PROG_LOOPS double eval(const unsigned char *code, const double *x,
                                  double *p)
{
    double reg[DR_PROG_REGS], adj[DR_PROG_REGS], pa[DR_PROG_REGS],
        pb[DR_PROG_REGS];
    double v = dr__prog_forward(code, x, reg, pa, pb, adj);
    dr__prog_reverse(code, pa, pb, adj);
    for (unsigned i = 0; i < code[0]; i++)
        p[i] = adj[i];
    return v;
}

static DR__PROG_LOOPS double value(const unsigned char *code, const double *x)
{
    double reg[DR_PROG_REGS];
    return dr__prog_value(code, x, reg);
}

double dr__prog_partials(const unsigned char *code, const double *x, double *p)
{
    return eval(code, x, p);
}

/* the node's partials by argument from the partials by leaf (the same
   additions, in the same order, at recording and replay) */
static inline DR__PROG_LOOPS void by_argument(const dr_prog *g, const double *p,
                                       double *d)
{
    for (unsigned j = 0; j < g->nargs; j++)
        d[j] = 0.0;
    for (unsigned i = 0; i < g->n; i++)
        if (g->slot[i] != 0xff)
            d[g->slot[i]] += p[i];
}

/* the node's arguments from its leaves (g->leaf): distinct active ones,
   in order of first use */
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
    /* the record built here, copied to the arena at order 2 */
    union {
        dr_prog g;
        unsigned char bytes[sizeof(dr_prog) + 24 * DR_PROG_LEAVES];
    } u;
    dr_prog *g = &u.g;
    g->code = code;
    g->n = (uint8_t)dr__prog_leaves(code);
    double *xs = dr__prog_xs(g);
    for (unsigned i = 0; i < g->n; i++) {
        if (!dr__rel_arg(t, ids[i], &g->leaf[i])) {
            dr__fail(t, DR_EINVAL);
            return DR_NONE;
        }
        xs[i] = x[i];
    }
    double p[DR_PROG_LEAVES];
    *v = eval(code, xs, p);
    if (want && memcmp(want, v, sizeof *v) != 0) {
        *refused = true;
        return DR_NONE;
    }
    int64_t args[DR_PROG_LEAVES];
    double d[DR_PROG_LEAVES];
    arguments(g, args);
    unsigned mask = 0;
    for (unsigned i = 0; i < g->n; i++)
        mask |= (unsigned)(g->leaf[i] >= 0) << i;
    g->linear = dr__prog_is_linear(code, mask);
    by_argument(g, p, d);
    unsigned k = g->nargs;
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
    size_t bytes = sizeof(dr_prog) + (g->linear ? 24 : 16) * (size_t)g->n;
    if (g->linear)
        memcpy(dr__prog_ps(g), p, g->n * sizeof *p);
    dr_prog *rec = dr__arena_alloc(t, bytes);
    if (!rec) { /* (no second-order rule; the tape failed: DR_ENOMEM) */
        dr__oplog(t, id, DR_OPC_NONE, 0.0, 0.0, *v, DR_NONE, DR_NONE);
        return id;
    }
    memcpy(rec, g, bytes);
    dr_oplog *e = dr__oplog(t, id, DR_OPC_PROG, 0.0, 0.0, *v, DR_NONE,
                            DR_NONE);
    if (e)
        memcpy(&e->x, &rec, sizeof rec);
    return id;
}

DR__PROG_LOOPS void dr__prog_replay(dr_oplog *log, dr_oplog *e, dr_node *p)
{
    dr_prog *g = dr__oplog_prog(e);
    double *xs = dr__prog_xs(g);
    for (unsigned i = 0; i < g->n; i++)
        if (g->leaf[i] >= 0)
            xs[i] = log[g->leaf[i]].v;
    if (g->linear) { /* the partials stay what they are */
        e->v = value(g->code, xs);
        return;
    }
    double pl[DR_PROG_LEAVES], d[DR_PROG_LEAVES] = {0.0};
    e->v = eval(g->code, xs, pl);
    by_argument(g, pl, d);
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
