/*
 * frontend.h - the scalar operations for front ends whose foreign-function
 * interface cannot pass or return a dr_real (the Haskell one): plain doubles
 * and ids in, a double or an id out.  Not part of the documented C API (C
 * code calls dr_sin, ...), but exported from the shared library like it, for
 * front ends that bind to it by name.
 *
 * For every operation OP of scalar_rules.h, with the value and partials of
 * dr_OP (its rule):
 *
 *   double dr_fe_OP(double x)                                  the value
 *   dr_idx dr_fe_OP_rec(dr_tape *t, dr_idx a, double x, double v)
 *   double dr_fe_OP(double a, double b)                        (two arguments)
 *   dr_idx dr_fe_OP_rec(dr_tape *t, dr_idx a, dr_idx b, double x, double y,
 *                       double v)
 *
 * dr_fe_OP_rec records the node dr_OP records for the arguments (a, x)
 * [and (b, y)] whose result has the value v, and returns its id: v must be
 * dr_fe_OP's value at x [, y] (the front end may compute it itself where
 * that is bit-identical, as for + - * /).  Constants (DR_NONE), a NULL tape
 * and ids not on the tape behave exactly as with dr_OP: DR_NONE comes back,
 * for a bad id with the sticky DR_EINVAL.  The integer power takes its
 * exponent n as a double (any integer a double holds):
 *
 *   double dr_fe_powi(double x, double n)
 *   dr_idx dr_fe_powi_rec(dr_tape *t, dr_idx a, double x, double n, double v)
 */
#ifndef DR_FRONTEND_H
#define DR_FRONTEND_H

#include "dualrev.h"
#include "rules/scalar_rules.h"

#define DR_FE_DECLARE_UNARY(op)                                              \
    DR_API double dr_fe_##op(double x);                                      \
    DR_API dr_idx dr_fe_##op##_rec(dr_tape *t, dr_idx a, double x, double v);
DR_RULES_UNARY(DR_FE_DECLARE_UNARY)
DR_RULES_UNARY_FUSED(DR_FE_DECLARE_UNARY)
#undef DR_FE_DECLARE_UNARY

#define DR_FE_DECLARE_BINARY(op)                                             \
    DR_API double dr_fe_##op(double x, double y);                            \
    DR_API dr_idx dr_fe_##op##_rec(dr_tape *t, dr_idx a, dr_idx b, double x, \
                                   double y, double v);
DR_RULES_BINARY(DR_FE_DECLARE_BINARY)
#undef DR_FE_DECLARE_BINARY

DR_API double dr_fe_powi(double x, double n);
DR_API dr_idx dr_fe_powi_rec(dr_tape *t, dr_idx a, double x, double n,
                             double v);

/*
 * A fused sum of products, sum (zipWith (*) as bs) of a front end, as one
 * statement: the node of acc + a[0] * b[0] + ... + a[n-1] * b[n-1] over acc
 * (partial 1) and every active factor (the partials of the mul rule), so
 * that n products cost one node instead of 2n (a node per product and per
 * addition).  acc is the id of the sum so far (DR_NONE: none) and s its
 * value; ia, xa and ib, xb the factors' ids and values.  The front end
 * computes the sum's value itself (the same additions in the same order).
 * Returns the sum's id: acc itself when no factor is active (the value
 * changed, the derivative did not), DR_NONE when nothing is.  Long sums
 * become a chain of nodes of DR_FE_DOT_CHUNK products each.
 *
 * On a tape of order 2 it records what the operations one by one record
 * (a logged product per pair with an active factor, a logged addition per
 * product joining an active sum), since a node of given partials is linear
 * to second order (dualrev.h, "second order"); where the root records
 * programs (dr_fe_programs below: a tape kept for replay), each batch is
 * instead one statement of dr_record_statement over the sum so far and its
 * factors, which replay computes again and second order refuses.
 */
#define DR_FE_DOT_CHUNK 128
/* DR_FE_DOT_CHUNK, for front ends that batch their calls by it */
DR_API size_t dr_fe_dot_chunk(void);
DR_API dr_idx dr_fe_dot_rec(dr_tape *t, dr_idx acc, double s, size_t n,
                            const dr_idx *ia, const double *xa,
                            const dr_idx *ib, const double *xb);

/*
 * An arithmetic expression of a front end as one statement: a node over
 * its leaves a0..a(n-1) (n <= DR_FE_STMT_MAX; the rest ignored) with the
 * partials d0..d(n-1) of the whole expression, which the front end derived
 * when it compiled the expression and evaluated with the value.  A leaf
 * may be DR_NONE (a constant: left out) or repeat another (their partials
 * add).  Returns the node's id, or DR_NONE when no leaf is active.
 *
 * On a tape of order 2 it records nothing and returns DR_FE_STMT_BY_OPS:
 * a node of given partials is linear to second order, so the front end
 * records the statement with its program there (dr_fe_prog, below), or
 * where that is refused, operation by operation.  The leaves are
 * arguments, not an array, so that a call passes them in registers (a
 * program's arguments are a call of their own: at order 1 they would be
 * arguments that spill for nothing).
 */
#define DR_FE_STMT_MAX 6
#define DR_FE_STMT_BY_OPS (-2)
/* DR_FE_STMT_MAX, for front ends to check their bindings against */
DR_API size_t dr_fe_stmt_max(void);
DR_API dr_idx dr_fe_stmt(dr_tape *t, size_t n, dr_idx a0, double d0,
                         dr_idx a1, double d1, dr_idx a2, double d2,
                         dr_idx a3, double d3, dr_idx a4, double d4,
                         dr_idx a5, double d5);
/* dr_fe_stmt of two and of three leaves: the most common statements, in
   calls with fewer arguments (all in registers) and code without the
   checks of n */
DR_API dr_idx dr_fe_stmt2(dr_tape *t, dr_idx a0, double d0, dr_idx a1,
                          double d1);
DR_API dr_idx dr_fe_stmt3(dr_tape *t, dr_idx a0, double d0, dr_idx a1,
                          double d1, dr_idx a2, double d2);

/* Whether dr_fe_prog records programs on root handle t and its children
   (off for a new tape): on for a tape kept for replay, where a statement
   that replays as one node pays; off elsewhere, where recording one costs
   more than its operations (a Hessian-vector product recorded once).
   DR_EINVAL for NULL or a child handle. */
DR_API dr_status dr_fe_programs(dr_tape *t, int on);

/*
 * A statement with its program, on a tape of order 2 where dr_fe_stmt
 * records nothing: code, the bytes of cbits/record/program.h, which the front end wrote when
 * it compiled the expression and keeps for as long as the tape, over the
 * leaves a0..a(n-1) (n = code[0] <= DR_FE_STMT_MAX; the rest ignored) of
 * values x0..x(n-1), as one node that replays (its value computed again
 * from the program) and is linear to second order, as it is: only a
 * statement whose partials are constants is recorded so, one that
 * multiplies a leaf that is active only by constants and divides only by
 * them (p + dt * v, a weighted sum).  Any other, and one whose program
 * computes another value than v (the value the front end computed: an
 * operation its compiler contracted), records nothing and returns
 * DR_FE_STMT_BY_OPS, and the front end records the operations one by one.
 * code NULL (no program), or a tape whose root was not given
 * dr_fe_programs(t, 1), returns DR_FE_STMT_BY_OPS too.  Returns the
 * node's id, DR_NONE when no leaf is active; a code that is not a program,
 * or an id not on the tape, sets DR_EINVAL.  At order 1 it records the
 * node of the same partials (no program kept).
 */
DR_API dr_idx dr_fe_prog(dr_tape *t, const unsigned char *code, double v,
                         dr_idx a0, double x0, dr_idx a1, double x1,
                         dr_idx a2, double x2, dr_idx a3, double x3,
                         dr_idx a4, double x4, dr_idx a5, double x5);

/*
 * Pause recording on handle t (paused != 0) or resume it (0); returns
 * whether it was paused.  While paused, the operations above (dr_fe_OP_rec,
 * dr_fe_powi_rec, dr_fe_dot_rec, dr_fe_stmt*, dr_fe_prog) record nothing
 * and return DR_NONE: their results are constants.  For values a front end
 * needs only as values, such as the operands of a comparison whose outcome
 * no replay will check again (no guards recorded); the front end resumes
 * recording for anything whose derivative it needs (a nested derivative,
 * a value computed when first demanded that other code shares).  A new or
 * cleared handle records.  NULL: 0, nothing done.
 */
DR_API int dr_fe_pause(dr_tape *t, int paused);

/*
 * Inputs a front end holds as linked lists, whose read-out of adjoints
 * needs each list's length: dr_fe_input_range is dr_input_range that
 * returns the first id (DR_NONE for n == 0 and on failure, the tape's
 * status then tells) and, on a root handle that is not forked, notes the
 * range's length; dr_fe_input_len(t, first) answers it (0: no range noted
 * starts at first), so the front end need not walk a list again, cache
 * miss by cache miss, to count it.  The look-ups cost O(1) each when they
 * come in the order the ranges were made, O(log ranges) otherwise.  Notes
 * go with dr_tape_clear and with the nodes a restore drops; one that finds
 * no memory is not kept (its look-up answers 0, the tape is not failed).
 */
DR_API dr_idx dr_fe_input_range(dr_tape *t, size_t n);
DR_API size_t dr_fe_input_len(dr_tape *t, dr_idx first);

/*
 * A guard (dualrev.h, "replay") in one call, for front ends: op is
 *   0 a < b, 1 a <= b, 2 a > b, 3 a >= b, 4 a == b, 5 a != b,
 *   6 floor a == b, 7 ceil a == b, 8 trunc a == b, 9 rint a == b (a NaN
 *     equal to a NaN: the guard that a rounds to the value it did),
 *   10 isnan a, 11 isinf a, 12 signbit a (b unused),
 * with a and b given as values and ids (DR_NONE: a constant); it returns
 * the outcome (0 or 1) and records it as dr_lt ... record theirs.  An op
 * out of range records nothing and returns 0.
 */
DR_API int dr_fe_guard(dr_tape *t, int op, double a, dr_idx ia, double b,
                       dr_idx ib);
/* the rounding op (6-9 above) of a with its guard, as dr_floor ... record
   it; another op records nothing and returns a */
DR_API double dr_fe_round(dr_tape *t, int op, double a, dr_idx ia);

/* dr_adjoint_record with y as its value and id (the same reason) */
DR_API dr_status dr_fe_adjoint_record(dr_tape *t, dr_idx from, double yv,
                                      dr_idx yi, size_t n, const dr_idx *x,
                                      dr_real *out);
/*
 * dr_tangent_record for foreign-function interfaces that cannot pass a
 * dr_real by value: y as its value and id, the tangent into *out.
 */
DR_API dr_status dr_fe_tangent_record(dr_tape *t, dr_idx from, size_t k,
                                      const dr_idx *seed_ids,
                                      const dr_real *seeds, double yv,
                                      dr_idx yi, dr_real *out);

/*
 * Rewinding (rewind.c): dr_fe_mark_save saves the tape's position into
 * mark (dr_fe_mark_bytes() bytes the caller provides) and returns the id
 * the next node will get, or -2 where the tape cannot be rewound (a job's
 * handle, an open recorder, a failed status: nothing saved);
 * dr_fe_mark_restore drops every node recorded since and returns 1, or 0
 * where the tape has since become one that cannot be rewound (the nodes
 * then stay).  For nodes the caller knows nothing reads.
 */
DR_API size_t dr_fe_mark_bytes(void);
DR_API int64_t dr_fe_mark_save(dr_tape *t, void *mark);
DR_API int dr_fe_mark_restore(dr_tape *t, const void *mark);

#endif /* DR_FRONTEND_H */
