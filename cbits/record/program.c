/* program.c - linear statements recorded with their programs (program.h):
   the program's bytes read and checked, its value and partials, the node
   and its log entry at order 2, and its value at new leaf values. */
#include "record/program.h"

#include <math.h>

/* on GCC, loops kept as loops: a program is a few registers, for which
   the block copy and fill GCC makes of a loop over them (rep movs, rep
   stos) cost more to start than the loop does in all */
#if defined(__GNUC__) && !defined(__clang__)
#define SMALL_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define SMALL_LOOPS
#endif

/* ------------------------------------------------------ the bytes */

/* where the constants begin: after the header and the pairs */
static inline size_t consts_at(const unsigned char *code)
{
    return 4 + 2 * (size_t)code[3];
}

static inline const unsigned char *insn(const unsigned char *code, unsigned i)
{
    return code + consts_at(code) + 8 * (size_t)code[1] + 3 * (size_t)i;
}

static inline double constant(const unsigned char *code, unsigned j)
{
    const unsigned char *b = code + consts_at(code) + 8 * (size_t)j;
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

static inline bool known_op(unsigned op)
{
    return op >= DR_PROG_ADD && op <= DR_PROG_NEG;
}

/* is code a well-formed program (program.h), and are its partials
   constants where the leaves of mask (bit i: leaf i) move: no product of
   two values that move, no quotient by one (one pass: most statements a
   front end hands over on a tape of order 2 are refused here) */
enum { PROG_BAD, PROG_MOVES, PROG_LINEAR };
static int kind(const unsigned char *code, unsigned mask)
{
    if (!code)
        return PROG_BAD;
    unsigned n = code[0], c = code[1], m = code[2];
    if (n < 1 || n > DR_PROG_LEAVES || m < 1 || n + c + m > DR_PROG_REGS)
        return PROG_BAD;
    bool moves[DR_PROG_REGS], lin = true;
    for (unsigned i = 0; i < n + c; i++)
        moves[i] = i < n && (mask >> i & 1);
    const unsigned char *s = insn(code, 0);
    for (unsigned i = 0, below = n + c; i < m; i++, below++, s += 3) {
        bool unary = s[0] == DR_PROG_NEG;
        if (!known_op(s[0]) || s[1] >= below || (!unary && s[2] >= below))
            return PROG_BAD;
        bool a = moves[s[1]], b = !unary && moves[s[2]];
        lin &= !((s[0] == DR_PROG_MUL && a && b) || (s[0] == DR_PROG_DIV && b));
        moves[below] = a || b;
    }
    return lin ? PROG_LINEAR : PROG_MOVES;
}

/* ------------------------------------------- values and partials */

/* the two-argument operations of a program and their scalar rules */
#define PROG_BINARY(X) X(ADD, add) X(SUB, sub) X(MUL, mul) X(DIV, div)

/* one instruction's value, and its partials by the scalar rules */
static inline double rule(unsigned op, double x, double y, double *pa,
                          double *pb)
{
    double v;
    dr_rule_d2 d;
    switch (op) {
#define BINARY(OP, op)                                                       \
    case DR_PROG_##OP:                                                       \
        v = dr_rule_##op(x, y);                                              \
        d = dr_rule_##op##_d(x, y, v);                                       \
        break;
        PROG_BINARY(BINARY)
#undef BINARY
    default: /* DR_PROG_NEG (valid) */
        v = dr_rule_neg(x);
        d.a = dr_rule_neg_d(x, v);
        d.b = 0.0;
        break;
    }
    *pa = d.a;
    *pb = d.b;
    return v;
}

/* the value, and the partials by leaf into p (n of them): the
   instructions forward, then their partials back from the last.  Where
   every value is used once (a tree, as a front end compiles an
   expression), back along each path from the root, left before right,
   a leaf's partial the sum of its occurrences' in that order: the
   products and sums a front end's own code makes of the same expression
   (Compile/Statement.hs), so that a statement recorded with its program
   has the partials of one recorded without, bit for bit.  Otherwise back
   through the registers, each adding what reaches it. */
static SMALL_LOOPS double value_partials(const unsigned char *code,
                                         const double *x, double *p)
{
    unsigned n = code[0], c = code[1], m = code[2], top = n + c + m - 1;
    double reg[DR_PROG_REGS], adj[DR_PROG_REGS], pa[DR_PROG_REGS],
        pb[DR_PROG_REGS];
    unsigned char uses[DR_PROG_REGS];
    for (unsigned i = 0; i < n; i++) {
        reg[i] = x[i];
        adj[i] = 0.0;
        uses[i] = 0;
    }
    for (unsigned j = 0; j < c; j++) {
        reg[n + j] = constant(code, j);
        adj[n + j] = 0.0;
        uses[n + j] = 0;
    }
    bool tree = true;
    for (unsigned i = 0; i < m; i++) {
        const unsigned char *s = insn(code, i);
        bool unary = s[0] == DR_PROG_NEG;
        double y = unary ? 0.0 : reg[s[2]];
        reg[n + c + i] = rule(s[0], reg[s[1]], y, &pa[i], &pb[i]);
        adj[n + c + i] = 0.0;
        uses[n + c + i] = 0;
        tree &= s[1] < n + c || uses[s[1]]++ == 0;
        tree &= unary || s[2] < n + c || uses[s[2]]++ == 0;
    }
    if (tree) {
        unsigned stack[2 * DR_PROG_REGS], sp = 0;
        double gs[2 * DR_PROG_REGS];
        bool seen[DR_PROG_LEAVES] = {false};
        stack[sp] = top;
        gs[sp++] = 1.0;
        while (sp) {
            unsigned r = stack[--sp];
            double g = gs[sp];
            if (r < n) { /* a leaf: the first occurrence sets */
                p[r] = seen[r] ? p[r] + g : g;
                seen[r] = true;
            } else if (r >= n + c) {
                const unsigned char *s = insn(code, r - n - c);
                if (s[0] != DR_PROG_NEG) { /* (right after left) */
                    stack[sp] = s[2];
                    gs[sp++] = g * pb[r - n - c];
                }
                stack[sp] = s[1];
                gs[sp++] = g * pa[r - n - c];
            }
        }
        for (unsigned i = 0; i < n; i++)
            if (!seen[i])
                p[i] = 0.0;
        return reg[top];
    }
    adj[top] = 1.0;
    for (unsigned i = m; i-- > 0;) {
        const unsigned char *s = insn(code, i);
        double g = adj[n + c + i];
        if (g == 0.0)
            continue;
        adj[s[1]] += g * pa[i];
        if (s[0] != DR_PROG_NEG)
            adj[s[2]] += g * pb[i];
    }
    for (unsigned i = 0; i < n; i++)
        p[i] = adj[i];
    return reg[top];
}

/* the value alone: what replay computes (the same operations as
   value_partials, in the same order) */
static SMALL_LOOPS double value_only(const unsigned char *code,
                                     const double *x)
{
    unsigned n = code[0], c = code[1], m = code[2];
    double reg[DR_PROG_REGS];
    for (unsigned i = 0; i < n; i++)
        reg[i] = x[i];
    for (unsigned j = 0; j < c; j++)
        reg[n + j] = constant(code, j);
    const unsigned char *s = insn(code, 0);
    double v = 0.0;
    for (unsigned i = 0; i < m; i++, s += 3) {
        /* (a negation's b is no register: never read) */
        double a = reg[s[1]], b = s[0] == DR_PROG_NEG ? 0.0 : reg[s[2]];
        switch (s[0]) {
#define BINARY(OP, op)                                                       \
    case DR_PROG_##OP:                                                       \
        v = dr_rule_##op(a, b);                                              \
        break;
            PROG_BINARY(BINARY)
#undef BINARY
        default:
            v = dr_rule_neg(a);
            break;
        }
        reg[n + c + i] = v;
    }
    return v;
}

/* ------------------------------------------------ recording, replay */

dr_idx dr__record_prog(dr_tape *t, const unsigned char *code,
                       const dr_idx *ids, const double *x, const double *want,
                       double *v, bool *refused)
{
    *v = NAN;
    *refused = false;
    if (!t)
        return DR_NONE;
    unsigned n = code && ids ? code[0] : 0, mask = 0;
    for (unsigned i = 0; i < n && i < DR_PROG_LEAVES; i++)
        mask |= (unsigned)(ids[i] != DR_NONE) << i;
    /* the front end's pairs refuse what moves without a look at the
       instructions (most statements it hands over on a tape of order 2);
       what they let pass is checked whole below */
    if (code && x && n >= 1 && n <= DR_PROG_LEAVES)
        for (unsigned q = 0; q < code[3]; q++) {
            unsigned a = code[4 + 2 * q], b = code[5 + 2 * q];
            if ((a == 0 || (a & mask)) && (b & mask)) {
                *refused = true;
                return DR_NONE;
            }
        }
    int k0 = ids && x ? kind(code, mask) : PROG_BAD;
    if (k0 == PROG_BAD) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    int64_t leaf[DR_PROG_LEAVES];
    for (unsigned i = 0; i < n; i++)
        if (!dr__rel_arg(t, ids[i], &leaf[i])) {
            dr__fail(t, DR_EINVAL);
            return DR_NONE;
        }
    if (k0 == PROG_MOVES) { /* (before the work of the value) */
        *refused = true;
        return DR_NONE;
    }
    double p[DR_PROG_LEAVES];
    *v = value_partials(code, x, p);
    if (want && memcmp(want, v, sizeof *v) != 0) {
        *refused = true;
        return DR_NONE;
    }
    /* the node's arguments: the distinct active leaves in order of first
       use, a repeated leaf's partials added in */
    int64_t args[DR_PROG_LEAVES];
    double d[DR_PROG_LEAVES];
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        if (leaf[i] < 0)
            continue;
        unsigned j = 0;
        while (j < k && args[j] != leaf[i])
            j++;
        if (j == k) {
            args[k++] = leaf[i];
            d[j] = 0.0;
        }
        d[j] += p[i];
    }
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
    dr_prog *g = dr__arena_alloc(t, sizeof *g + 24 * (size_t)n);
    if (!g) { /* (no second-order rule; the tape failed: DR_ENOMEM) */
        dr__oplog(t, id, DR_OPC_NONE, 0.0, 0.0, *v, DR_NONE, DR_NONE);
        return id;
    }
    g->code = code;
    g->n = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        g->leaf[i] = leaf[i];
        dr__prog_xs(g)[i] = x[i];
        dr__prog_ps(g)[i] = leaf[i] >= 0 ? p[i] : 0.0;
    }
    dr_oplog *e = dr__oplog(t, id, DR_OPC_PROG, 0.0, 0.0, *v, DR_NONE,
                            DR_NONE);
    if (e)
        memcpy(&e->x, &g, sizeof g);
    return id;
}

bool dr__prog_terms(const dr_oplog *e, size_t *n, const int64_t **args,
                    const double **partials)
{
    const dr_prog *g = dr__oplog_prog(e);
    *n = g->n;
    *args = g->leaf;
    *partials = dr__prog_ps(g);
    return true;
}

/* two programs' values side by side, lane 0 of leaves x0, lane 1 of x1: the
   same operations as value_only's in each lane (packed IEEE arithmetic
   rounds each lane as the scalar operation does), whose chains of
   dependent operations, each through the register file in memory,
   overlap instead of following one another */
typedef double prog_pair __attribute__((vector_size(16)));
static SMALL_LOOPS void value_only_pair(const unsigned char *code,
                                        const double *x0, const double *x1,
                                        double *v0, double *v1)
{
    unsigned n = code[0], c = code[1], m = code[2];
    prog_pair reg[DR_PROG_REGS];
    for (unsigned i = 0; i < n; i++)
        reg[i] = (prog_pair){x0[i], x1[i]};
    for (unsigned j = 0; j < c; j++) {
        double k = constant(code, j);
        reg[n + j] = (prog_pair){k, k};
    }
    const unsigned char *s = insn(code, 0);
    prog_pair v = {0.0, 0.0};
    for (unsigned i = 0; i < m; i++, s += 3) {
        prog_pair a = reg[s[1]];
        switch (s[0]) {
        case DR_PROG_ADD:
            v = a + reg[s[2]];
            break;
        case DR_PROG_SUB:
            v = a - reg[s[2]];
            break;
        case DR_PROG_MUL:
            v = a * reg[s[2]];
            break;
        case DR_PROG_DIV:
            v = a / reg[s[2]];
            break;
        default:
            v = -a;
            break;
        }
        reg[n + c + i] = v;
    }
    *v0 = v[0];
    *v1 = v[1];
}

/* the leaves' values of g at the new point, from the log */
static inline double *prog_leaves_moved(const dr_oplog *log, dr_prog *g)
{
    double *xs = dr__prog_xs(g);
    for (unsigned i = 0; i < g->n; i++)
        if (g->leaf[i] >= 0)
            xs[i] = log[g->leaf[i]].v;
    return xs;
}

bool dr__prog_replay_pair(const dr_oplog *log, dr_oplog *e, int64_t r)
{
    dr_prog *g0 = dr__oplog_prog(e), *g1 = dr__oplog_prog(e + 1);
    if (g0->code != g1->code)
        return false;
    for (unsigned i = 0; i < g1->n; i++)
        if (g1->leaf[i] == r)
            return false;
    const double *x0 = prog_leaves_moved(log, g0);
    const double *x1 = prog_leaves_moved(log, g1);
    value_only_pair(g0->code, x0, x1, &e[0].v, &e[1].v);
    return true;
}

SMALL_LOOPS void dr__prog_replay(const dr_oplog *log, dr_oplog *e)
{
    dr_prog *g = dr__oplog_prog(e);
    e->v = value_only(g->code, prog_leaves_moved(log, g));
}
