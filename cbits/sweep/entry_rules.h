/*
 * entry_rules.h - the first and second partials of a second-order log
 * entry of a scalar operation (the rules of rules/rule_second.h, in
 * doubles), for the passes that read the log in numbers: the products
 * (hvp.c) and the edge-pushing Hessian (edge_push.c).  Not installed.
 */
#ifndef DR_SWEEP_ENTRY_RULES_H
#define DR_SWEEP_ENTRY_RULES_H

#include "record/record.h"
#include "rules/rule_second.h"

/* is the entry's operation a scalar one of the rules table (or powi),
   which second_partials below answers for */
static inline bool scalar_rule_op(int op)
{
    return op == DR_OPC_powi || (op > DR_OPC_select && op < DR_OPC_COUNT);
}

/* the first partials of a scalar operation's entry (the rules, in
   doubles); false for an entry that is not a scalar operation's */
static inline bool first_partials(const dr_oplog *e, double *pa, double *pb)
{
    *pb = 0.0;
    switch (e->op) {
#define UNARY(o)                                                             \
    case DR_OPC_##o:                                                         \
        *pa = dr_rule_##o##_d(e->x, e->v);                                   \
        return true;
        DR_RULES_UNARY(UNARY)
        DR_RULES_UNARY_FUSED(UNARY)
#undef UNARY
#define BINARY(o)                                                            \
    case DR_OPC_##o: {                                                       \
        dr_rule_d2 d = dr_rule_##o##_d(e->x, e->y, e->v);                    \
        *pa = d.a;                                                           \
        *pb = d.b;                                                           \
        return true;                                                         \
    }
        DR_RULES_BINARY(BINARY)
#undef BINARY
    case DR_OPC_powi:
        *pa = dr_rule_powi_d(e->x, e->y, e->v);
        return true;
    default:
        return false;
    }
}

/* the first and second partials of a scalar operation's entry */
static inline dr_rule_so2_t second_partials(const dr_oplog *e)
{
    dr_rule_so2_t s = {0.0, 0.0, 0.0, 0.0, 0.0};
    /* the ones a program is mostly made of, linear or bilinear, first */
    if (e->op == DR_OPC_mul) {
        s.pa = e->y;
        s.pb = e->x;
        s.hab = 1.0;
        return s;
    }
    if (e->op == DR_OPC_add) {
        s.pa = s.pb = 1.0;
        return s;
    }
    switch (e->op) {
#define UNARY(o)                                                             \
    case DR_OPC_##o: {                                                       \
        double d = dr_rule_##o##_d(e->x, e->v);                              \
        dr_rule_so1_t u = dr_rule_so1(o, e->x, e->v, d);                     \
        s.pa = u.d;                                                          \
        s.haa = u.dd;                                                        \
        return s;                                                            \
    }
        DR_RULES_UNARY(UNARY)
        DR_RULES_UNARY_FUSED(UNARY)
#undef UNARY
#define BINARY(o)                                                            \
    case DR_OPC_##o: {                                                       \
        dr_rule_d2 p = dr_rule_##o##_d(e->x, e->y, e->v);                    \
        return dr_rule_so2(o, e->x, e->y, e->v, p);                          \
    }
        DR_RULES_BINARY(BINARY)
#undef BINARY
    case DR_OPC_powi: {
        double d = dr_rule_powi_d(e->x, e->y, e->v);
        dr_dual2 q = dr_rule_so_powi_d((dr_dual2){e->x, 1.0, 0.0}, e->y,
                                       (dr_dual2){e->v, d, 0.0});
        s.pa = q.v;
        s.haa = q.a;
        return s;
    }
    default:
        return s;
    }
}

#endif /* DR_SWEEP_ENTRY_RULES_H */
