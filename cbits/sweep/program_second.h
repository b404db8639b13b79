/*
 * program_second.h - the second derivatives of a statement's program
 * (record/program.h) at its leaves, for the passes that read the log in
 * numbers: the products (hvp.c) and the edge-pushing Hessian
 * (edge_push.c).  Each instruction's second partials are the rules of
 * record/rule_second.h (entry_rules.h); the program is differentiated
 * forward over reverse, one direction of its leaves at a time.  Not
 * installed.
 */
#ifndef DR_SWEEP_PROGRAM_SECOND_H
#define DR_SWEEP_PROGRAM_SECOND_H

#include "record/program.h"
#include "sweep/entry_rules.h"

/* p times t, zero where t is (as hvp.c's zm: an infinite partial times a
   direction that does not move is no NaN) */
static inline double prog_zm(double p, double t)
{
    return t == 0.0 ? 0.0 : p * t;
}

/* a statement's program at its leaves (record/program.h), taken apart
   for its second derivatives: every register's value, each
   instruction's first and second partials, and the first-order adjoint
   of every register (the partials of the value by it) */
typedef struct prog_parts {
    const unsigned char *code;
    unsigned n, regs;
    double reg[DR_PROG_REGS], adj[DR_PROG_REGS];
    dr_rule_so2_t h[DR_PROG_REGS]; /* by instruction */
} prog_parts;

static inline void prog_apart(const dr_prog *g, prog_parts *q)
{
    const unsigned char *code = g->code;
    unsigned n = dr__prog_leaves(code), c = dr__prog_consts(code),
             m = dr__prog_steps(code);
    double pa[DR_PROG_REGS], pb[DR_PROG_REGS];
    q->code = code;
    q->n = n;
    q->regs = n + c + m;
    dr__prog_forward(code, dr__prog_xs(g), q->reg, pa, pb, q->adj);
    for (unsigned i = 0; i < m; i++) {
        const unsigned char *s = dr__prog_insn(code, i);
        dr_oplog e = {0};
        e.x = q->reg[s[1]];
        e.y = s[0] == DR_PROG_NEG ? 0.0 : q->reg[s[2]];
        e.v = q->reg[n + c + i];
        e.op = dr__prog_opc(s[0]);
        q->h[i] = second_partials(&e);
    }
    dr__prog_reverse(code, pa, pb, q->adj);
}

/* the Hessian of the program's value by its leaves times the leaves'
   tangents t (n of them), into ht: a tangent pass over the instructions
   and a reverse pass of the adjoints' tangents (forward over reverse) */
static inline void prog_hess_times(const prog_parts *q, const double *t, double *ht)
{
    const unsigned char *code = q->code;
    unsigned n = q->n, c = dr__prog_consts(code), m = dr__prog_steps(code);
    double td[DR_PROG_REGS], ad[DR_PROG_REGS];
    for (unsigned r = 0; r < q->regs; r++) {
        td[r] = r < n ? t[r] : 0.0;
        ad[r] = 0.0;
    }
    for (unsigned i = 0; i < m; i++) {
        const unsigned char *s = dr__prog_insn(code, i);
        const dr_rule_so2_t *h = &q->h[i];
        double tb = s[0] == DR_PROG_NEG ? 0.0 : td[s[2]];
        td[n + c + i] = prog_zm(h->pa, td[s[1]]) + prog_zm(h->pb, tb);
    }
    for (unsigned i = m; i-- > 0;) {
        const unsigned char *s = dr__prog_insn(code, i);
        const dr_rule_so2_t *h = &q->h[i];
        unsigned r = n + c + i;
        double g = q->adj[r], gd = ad[r];
        double ta = td[s[1]], tb = s[0] == DR_PROG_NEG ? 0.0 : td[s[2]];
        ad[s[1]] += prog_zm(h->pa, gd) + prog_zm(g, prog_zm(h->haa, ta) + prog_zm(h->hab, tb));
        if (s[0] != DR_PROG_NEG)
            ad[s[2]] += prog_zm(h->pb, gd) + prog_zm(g, prog_zm(h->hab, ta) + prog_zm(h->hbb, tb));
    }
    for (unsigned i = 0; i < n; i++)
        ht[i] = ad[i];
}

#endif /* DR_SWEEP_PROGRAM_SECOND_H */
