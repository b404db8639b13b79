/*
 * scalar_ops.c - the scalar operations of the C API (dr_sin, ...): each
 * records its rule (scalar_rules.h) as one node.
 */
#include "record/record.h"
#include "rules/scalar_rules.h"

#define DR_OP_UNARY(op)                                                      \
    dr_real dr_##op(dr_tape *t, dr_real a)                                   \
    {                                                                        \
        double v = dr_rule_##op(a.val);                                      \
        double d = dr_rule_##op##_d(a.val, v);                               \
        if (dr__order2(t))                                                   \
            return dr__op1_logged(t, DR_OPC_##op, v, a.idx, d, a.val, 0.0);  \
        return dr__op1(t, v, a.idx, d);                                      \
    }
DR_RULES_UNARY(DR_OP_UNARY)

#define DR_OP_UNARY_FUSED(op)                                                \
    dr_real dr_##op(dr_tape *t, dr_real a)                                   \
    {                                                                        \
        double d, v = dr_rule_##op##_vd(a.val, &d);                          \
        if (dr__order2(t))                                                   \
            return dr__op1_logged(t, DR_OPC_##op, v, a.idx, d, a.val, 0.0);  \
        return dr__op1(t, v, a.idx, d);                                      \
    }
DR_RULES_UNARY_FUSED(DR_OP_UNARY_FUSED)

#define DR_OP_BINARY(op)                                                     \
    dr_real dr_##op(dr_tape *t, dr_real a, dr_real b)                        \
    {                                                                        \
        double v = dr_rule_##op(a.val, b.val);                               \
        dr_rule_d2 d = dr_rule_##op##_d(a.val, b.val, v);                    \
        if (dr__order2(t))                                                   \
            return dr__op2_logged(t, DR_OPC_##op, v, a.idx, d.a, a.val,      \
                                  b.idx, d.b, b.val);                        \
        return dr__op2(t, v, a.idx, d.a, b.idx, d.b);                        \
    }
DR_RULES_BINARY(DR_OP_BINARY)

dr_real dr_powi(dr_tape *t, dr_real a, int n)
{
    double v = dr_rule_powi(a.val, (double)n);
    double d = dr_rule_powi_d(a.val, (double)n, v);
    if (dr__order2(t))
        return dr__op1_logged(t, DR_OPC_powi, v, a.idx, d, a.val, (double)n);
    return dr__op1(t, v, a.idx, d);
}
