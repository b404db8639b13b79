/*
 * frontend.c - the scalar operations for foreign-function front ends
 * (frontend.h): the rules of scalar_rules.h behind plain-double entry points,
 * recorded as scalar_ops.c records them.
 */
#include "record/frontend.h"
#include "record/record.h"

#define DR_FE_UNARY(op)                                                      \
    double dr_fe_##op(double x) { return dr_rule_##op(x); }                  \
    dr_idx dr_fe_##op##_rec(dr_tape *t, dr_idx a, double x, double v)        \
    {                                                                        \
        double d = dr_rule_##op##_d(x, v);                                   \
        if (dr__order2(t))                                                   \
            return dr__op1_logged(t, DR_OPC_##op, v, a, d, x, 0.0).idx;      \
        return dr__op1(t, v, a, d).idx;                                      \
    }
DR_RULES_UNARY(DR_FE_UNARY)
DR_RULES_UNARY_FUSED(DR_FE_UNARY)

#define DR_FE_BINARY(op)                                                     \
    double dr_fe_##op(double x, double y) { return dr_rule_##op(x, y); }     \
    dr_idx dr_fe_##op##_rec(dr_tape *t, dr_idx a, dr_idx b, double x,        \
                            double y, double v)                              \
    {                                                                        \
        dr_rule_d2 d = dr_rule_##op##_d(x, y, v);                            \
        if (dr__order2(t))                                                   \
            return dr__op2_logged(t, DR_OPC_##op, v, a, d.a, x, b, d.b, y)   \
                .idx;                                                        \
        return dr__op2(t, v, a, d.a, b, d.b).idx;                            \
    }
DR_RULES_BINARY(DR_FE_BINARY)

double dr_fe_powi(double x, double n) { return dr_rule_powi(x, n); }

dr_idx dr_fe_powi_rec(dr_tape *t, dr_idx a, double x, double n, double v)
{
    double d = dr_rule_powi_d(x, n, v);
    if (dr__order2(t))
        return dr__op1_logged(t, DR_OPC_powi, v, a, d, x, n).idx;
    return dr__op1(t, v, a, d).idx;
}

dr_status dr_fe_tangent_record(dr_tape *t, dr_idx from, size_t k,
                               const dr_idx *seed_ids, const dr_real *seeds,
                               double yv, dr_idx yi, dr_real *out)
{
    dr_real y = {yv, yi};
    return dr_tangent_record(t, from, k, seed_ids, seeds, y, out);
}
