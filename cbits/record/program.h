/*
 * program.h - statements that replay: an arithmetic expression recorded as
 * one node together with the expression itself, a small program over its
 * leaves, so that replay can evaluate it again at new leaf values and the
 * second-order passes can differentiate it twice (record/program.c records
 * it; sweep/replay.c, sweep/hvp.c, sweep/edge_push.c, recorded/ and
 * drivers/sparse.c read it from its log entry, DR_OPC_PROG).
 *
 * A front end that knows an expression when it is compiled (the Haskell
 * splices) writes its program once, as static bytes, and hands the same
 * bytes with the leaves' ids and values at every evaluation.  The bytes:
 *
 *     [0]  n   leaves (1 .. DR_PROG_LEAVES): registers 0 .. n-1
 *     [1]  c   constants: registers n .. n+c-1
 *     [2]  m   instructions (1 ..): instruction i writes register n+c+i
 *     [3 .. 3+8c)    the constants, 8 bytes each, the IEEE bits least
 *                    significant byte first
 *     then m triples (op, a, b): op one of enum dr_prog_op, a and b
 *                    registers written before (b ignored by DR_PROG_NEG)
 *
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
   its address): the program, its leaves and where each adds in; n leaf
   ids, n leaf values (dr__prog_xs) and, for a program linear in its
   active leaves, its n partials (dr__prog_ps) follow it, so that a
   statement of two leaves takes one cache line or two */
typedef struct dr_prog {
    const unsigned char *code;
    uint8_t n;                     /* leaves                              */
    uint8_t nargs;                 /* the node's arguments: its distinct
                                      active leaves, in order of first use */
    uint8_t linear;                /* its partials are constants: they
                                      depend on no active leaf (replay
                                      computes its value alone, and it has
                                      no second derivatives)               */
    uint8_t slot[DR_PROG_LEAVES];  /* the argument leaf i adds into, or
                                      0xff for a constant leaf             */
    int64_t leaf[];                /* relative ids, -1: a constant        */
} dr_prog;

/* the leaves' values at the last recording or replay */
static inline double *dr__prog_xs(const dr_prog *g)
{
    return (double *)(void *)((int64_t *)g->leaf + g->n);
}
/* a linear program's partials by leaf */
static inline double *dr__prog_ps(const dr_prog *g)
{
    return dr__prog_xs(g) + g->n;
}

/* on GCC, loops kept as loops of scalars: a program is a few registers,
   for which the block copy and fill GCC makes of a loop over them (rep
   movs, rep stos) cost more to start than the loop does in all, and a
   vector load of values stored one by one just before waits for the
   stores to retire */
#if defined(__GNUC__) && !defined(__clang__)
#define DR__PROG_LOOPS                                                       \
    __attribute__((optimize("no-tree-loop-distribute-patterns",             \
                            "no-tree-vectorize")))
#else
#define DR__PROG_LOOPS
#endif

/* the parts of a program's bytes */
static inline unsigned dr__prog_leaves(const unsigned char *code)
{
    return code[0];
}
static inline unsigned dr__prog_consts(const unsigned char *code)
{
    return code[1];
}
static inline unsigned dr__prog_steps(const unsigned char *code)
{
    return code[2];
}
static inline const unsigned char *dr__prog_insn(const unsigned char *code,
                                                 unsigned i)
{
    return code + 3 + 8 * (size_t)code[1] + 3 * (size_t)i;
}
static inline double dr__prog_const(const unsigned char *code, unsigned j)
{
    const unsigned char *b = code + 3 + 8 * (size_t)j;
    uint64_t u;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&u, b, sizeof u); /* (the bytes' own order: one load) */
#else
    u = 0;
    for (int k = 7; k >= 0; k--)
        u = u << 8 | b[k];
#endif
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* the log operation of a program's operation (DR_OPC_GAP: none) */
static inline int dr__prog_opc(unsigned op)
{
    switch (op) {
    case DR_PROG_ADD: return DR_OPC_add;
    case DR_PROG_SUB: return DR_OPC_sub;
    case DR_PROG_MUL: return DR_OPC_mul;
    case DR_PROG_DIV: return DR_OPC_div;
    case DR_PROG_NEG: return DR_OPC_neg;
    default: return DR_OPC_GAP;
    }
}

/* is code a well-formed program (the layout above)? */
static inline bool dr__prog_valid(const unsigned char *code)
{
    if (!code)
        return false;
    unsigned n = code[0], c = code[1], m = code[2];
    if (n < 1 || n > DR_PROG_LEAVES || m < 1 || n + c + m > DR_PROG_REGS)
        return false;
    for (unsigned i = 0; i < m; i++) {
        const unsigned char *s = dr__prog_insn(code, i);
        unsigned below = n + c + i;
        if (dr__prog_opc(s[0]) == DR_OPC_GAP || s[1] >= below ||
            (s[0] != DR_PROG_NEG && s[2] >= below))
            return false;
    }
    return true;
}

/* one instruction: its value and partials by the scalar rules */
static inline double dr__prog_rule(unsigned op, double x, double y,
                                   double *pa, double *pb)
{
    double v;
    dr_rule_d2 d;
    switch (op) {
    case DR_PROG_ADD:
        v = dr_rule_add(x, y);
        d = dr_rule_add_d(x, y, v);
        break;
    case DR_PROG_SUB:
        v = dr_rule_sub(x, y);
        d = dr_rule_sub_d(x, y, v);
        break;
    case DR_PROG_MUL:
        v = dr_rule_mul(x, y);
        d = dr_rule_mul_d(x, y, v);
        break;
    case DR_PROG_DIV:
        v = dr_rule_div(x, y);
        d = dr_rule_div_d(x, y, v);
        break;
    default: /* DR_PROG_NEG (dr__prog_valid) */
        v = dr_rule_neg(x);
        d.a = dr_rule_neg_d(x, v);
        d.b = 0.0;
        break;
    }
    *pa = d.a;
    *pb = d.b;
    return v;
}

/*
 * Evaluate a valid program at leaf values x: every register's value into
 * reg (DR_PROG_REGS of them), each instruction's partials into pa, pb (by
 * instruction), and the value returned; adj (DR_PROG_REGS, or NULL) zeroed
 * where the program has registers, for dr__prog_reverse.
 */
static inline double dr__prog_forward(const unsigned char *code,
                                      const double *x, double *reg,
                                      double *pa, double *pb, double *adj)
{
    unsigned n = code[0], c = code[1], m = code[2];
    for (unsigned i = 0; i < n; i++) {
        reg[i] = x[i];
        if (adj)
            adj[i] = 0.0;
    }
    for (unsigned j = 0; j < c; j++) {
        reg[n + j] = dr__prog_const(code, j);
        if (adj)
            adj[n + j] = 0.0;
    }
    const unsigned char *s = dr__prog_insn(code, 0);
    for (unsigned i = 0; i < m; i++, s += 3) {
        double y = s[0] == DR_PROG_NEG ? 0.0 : reg[s[2]];
        reg[n + c + i] = dr__prog_rule(s[0], reg[s[1]], y, &pa[i], &pb[i]);
        if (adj)
            adj[n + c + i] = 0.0;
    }
    return reg[n + c + m - 1];
}

/* the partials of the value by each register into adj (zeroed by
   dr__prog_forward), from the instructions' partials: the leaves' in
   adj[0 .. n-1] */
static inline void dr__prog_reverse(const unsigned char *code,
                                    const double *pa, const double *pb,
                                    double *adj)
{
    unsigned n = code[0], c = code[1], m = code[2];
    adj[n + c + m - 1] = 1.0;
    const unsigned char *s = dr__prog_insn(code, m);
    for (unsigned i = m; i-- > 0;) {
        s -= 3;
        double g = adj[n + c + i];
        if (g == 0.0)
            continue;
        adj[s[1]] += g * pa[i];
        if (s[0] != DR_PROG_NEG)
            adj[s[2]] += g * pb[i];
    }
}

/* the value alone of a valid program at leaf values x (reg: the
   registers' values, DR_PROG_REGS) */
static inline double dr__prog_value(const unsigned char *code,
                                    const double *x, double *reg)
{
    unsigned n = code[0], c = code[1], m = code[2];
    for (unsigned i = 0; i < n; i++)
        reg[i] = x[i];
    for (unsigned j = 0; j < c; j++)
        reg[n + j] = dr__prog_const(code, j);
    const unsigned char *s = dr__prog_insn(code, 0);
    double v = 0.0;
    for (unsigned i = 0; i < m; i++, s += 3) {
        double a = reg[s[1]], b = reg[s[2]];
        switch (s[0]) {
        case DR_PROG_ADD: v = dr_rule_add(a, b); break;
        case DR_PROG_SUB: v = dr_rule_sub(a, b); break;
        case DR_PROG_MUL: v = dr_rule_mul(a, b); break;
        case DR_PROG_DIV: v = dr_rule_div(a, b); break;
        default: v = dr_rule_neg(a); break;
        }
        reg[n + c + i] = v;
    }
    return v;
}

/* are a valid program's partials constants where the leaves of mask
   (bit i: leaf i) move: no product of two values that move, no quotient
   by one (their partials would move with them) */
static inline bool dr__prog_is_linear(const unsigned char *code,
                                      unsigned mask)
{
    unsigned n = code[0], c = code[1], m = code[2];
    bool moves[DR_PROG_REGS];
    for (unsigned i = 0; i < n + c; i++)
        moves[i] = i < n && (mask >> i & 1);
    const unsigned char *s = dr__prog_insn(code, 0);
    for (unsigned i = 0; i < m; i++, s += 3) {
        bool a = moves[s[1]], b = s[0] != DR_PROG_NEG && moves[s[2]];
        if ((s[0] == DR_PROG_MUL && a && b) || (s[0] == DR_PROG_DIV && b))
            return false;
        moves[n + c + i] = a || b;
    }
    return true;
}

/* program.c: the value and the partials by leaf (p[0 .. n-1]) of a
   valid program at leaf values x, as recording and replay compute them
   (dr__prog_forward, then dr__prog_reverse: the same operations in the
   same order wherever they are asked for) */
DR_HIDDEN double dr__prog_partials(const unsigned char *code, const double *x,
                                   double *p);

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
   want is given and the program's value is not *want bit for bit, it
   records nothing and sets *refused (else clears it).  On a tape of order
   2 it is logged as DR_OPC_PROG (replays, and has second partials).
   Returns the node's id, DR_NONE for a constant (no active leaf) or after
   failing t (DR_EINVAL: a bad program or id). */
DR_HIDDEN dr_idx dr__record_prog(dr_tape *t, const unsigned char *code,
                                 const dr_idx *ids, const double *x,
                                 const double *want, double *v,
                                 bool *refused);
/* program.c: the node of relative id r (its log entry e) evaluated again
   at its leaves' values in the log: value into e->v, partials into the
   node p and the record (replay) */
DR_HIDDEN void dr__prog_replay(dr_oplog *log, dr_oplog *e, dr_node *p);

#endif /* DR_RECORD_PROGRAM_H */
