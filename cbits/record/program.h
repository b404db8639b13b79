/*
 * program.h - linear statements that replay: an arithmetic expression
 * recorded as one node together with the expression itself, a small
 * program over its leaves, so that replay can evaluate its value again at
 * new leaf values (record/program.c records it; sweep/replay.c replays
 * it).  Only a program whose partials are constants is recorded so: one
 * that multiplies a value that moves only by values that do not, and
 * divides only by those (p + dt * v, a weighted sum, an affine map).  Its
 * partials are those of its recording at every point, so replay computes
 * its value alone and writes nothing into its node, and to second order
 * it is a linear n-ary node of those partials: its log entry,
 * DR_OPC_PROG, answers dr__oplog_nary (record.h) as DR_OPC_NARY's does,
 * and the passes that read the log take the two alike.
 * A front end records any other statement operation by operation on a
 * tape of order 2: replaying those is as fast as interpreting a program,
 * and their second partials are at hand in the log.
 *
 * A front end that knows an expression when it is compiled (the Haskell
 * splices) writes its program once, as static bytes, and hands the same
 * bytes with the leaves' ids and values at every evaluation.  The bytes:
 *
 *     [0]  n   leaves (1 .. DR_PROG_LEAVES): registers 0 .. n-1
 *     [1]  c   constants: registers n .. n+c-1
 *     [2]  m   instructions (1 ..): instruction i writes register n+c+i
 *     [3]  q   pairs
 *     [4 .. 4+2q)    the pairs (a, b), masks of leaves (bit i: leaf i):
 *                    the statement's partials move where a leaf of b and
 *                    one of a (or, a = 0, any) are active - for each
 *                    product, the leaves of its two factors; for each
 *                    quotient, 0 and the leaves of the divisor
 *     then 8c bytes  the constants, 8 bytes each, the IEEE bits least
 *                    significant byte first
 *     then m triples (op, a, b): op one of enum dr_prog_op, a and b
 *                    registers written before (b ignored by DR_PROG_NEG)
 *
 * The pairs let the engine refuse a statement whose partials move, the
 * common case, without reading its instructions; one they let pass is
 * checked against the instructions, so pairs that say too little cost a
 * look and never a wrong node.
 * n + c + m <= DR_PROG_REGS; the value is the last instruction's.  Each
 * instruction is the scalar rule of its operation (scalar_rules.h), so the
 * value is bit for bit what the operations one by one compute, and the
 * partials are the product of the rules' partials along each path from
 * the root (a reverse pass over the instructions).  Not installed.
 */
#ifndef DR_RECORD_PROGRAM_H
#define DR_RECORD_PROGRAM_H

#include "record/record.h"

#include <stdint.h>
#include <string.h>

#define DR_PROG_LEAVES 8
#define DR_PROG_REGS 255

/* the operations of a program (codes fixed: front ends write them) */
enum dr_prog_op {
    DR_PROG_ADD = 1,
    DR_PROG_SUB = 2,
    DR_PROG_MUL = 3,
    DR_PROG_DIV = 4,
    DR_PROG_NEG = 5
};

/* the record of a statement node (in the arena; its log entry's x holds
   its address): the program and its leaves; n leaf ids, then n leaf
   values (dr__prog_xs), then the n partials by leaf (dr__prog_ps) follow
   it, so that a statement of two leaves takes one cache line */
typedef struct dr_prog {
    const unsigned char *code;
    uint8_t n;                     /* leaves                              */
    int64_t leaf[];                /* relative ids, -1: a constant        */
} dr_prog;

/* the leaves' values at the last recording or replay (a constant leaf's
   for good) */
static inline double *dr__prog_xs(const dr_prog *g)
{
    return (double *)(void *)((int64_t *)g->leaf + g->n);
}
/* the partials by leaf (0 for a constant leaf), constants of the node:
   to second order it is a linear n-ary node of these (dr__prog_terms) */
static inline double *dr__prog_ps(const dr_prog *g)
{
    return dr__prog_xs(g) + g->n;
}

/* the record of a log entry of DR_OPC_PROG (its x holds the address) */
static inline dr_prog *dr__oplog_prog(const dr_oplog *e)
{
    dr_prog *x;
    memcpy(&x, &e->x, sizeof x);
    return x;
}

/* program.c: record the statement of program code (valid or not: checked)
   over leaves ids[0 .. n-1] of values x, n the program's leaf count, as
   one node whose value the program computes; its value into *v.  Where
   the program's partials are not constants (program.h), or want is given
   and the program's value is not *want bit for bit, it records nothing
   and sets *refused (else clears it).  On a tape of order 2 the node is
   logged as DR_OPC_PROG.  Returns the node's id, DR_NONE for a constant
   (no active leaf) or after failing t (DR_EINVAL: a bad program or id). */
DR_HIDDEN dr_idx dr__record_prog(dr_tape *t, const unsigned char *code,
                                 const dr_idx *ids, const double *x,
                                 const double *want, double *v,
                                 bool *refused);
/* program.c: the statement of log entry e evaluated again at its leaves'
   values in the log: its value into e->v (replay) */
DR_HIDDEN void dr__prog_replay(const dr_oplog *log, dr_oplog *e);
/* program.c: e and the entry after it, both DR_OPC_PROG, r the relative
   id of e: where they run the same program and the second does not read
   the first (the x and y of a vector's update), both evaluated again side
   by side, bit for bit as one at a time, and true; else false, nothing
   done */
DR_HIDDEN bool dr__prog_replay_pair(const dr_oplog *log, dr_oplog *e,
                                    int64_t r);

#endif /* DR_RECORD_PROGRAM_H */
