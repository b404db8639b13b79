/*
 * hvp.c - Hessian-vector products by forward over reverse, in numbers:
 * one tangent pass over the second-order log (k directions side by side)
 * and one reverse pass that carries each node's adjoint and, beside it,
 * the adjoint's k tangents.  A node with arguments a, b, partials pa, pb
 * and second partials h (rules/rule_second.h) passes on, in reverse,
 *
 *     abar_a += g pa                     (the gradient, as dr_reverse)
 *     adot_a += gdot pa + g (haa ta + hab tb)
 *
 * and the same for b, g and gdot the node's adjoint and its tangent, ta
 * and tb the arguments' tangents.  Nothing is recorded on the tape: the
 * recorded tangents of recorded/tangent.c, which second order used before,
 * cost about twelve gradients a product (the tangent's nodes written, then
 * swept, then dropped); these passes read the log twice.  The recorded
 * tangents stay for what must be differentiated again (nested
 * derivatives, dr_tangent_record).
 *
 * Every node the log has, by relative id, is visited: the root's log holds
 * the whole job graph after its joins, arguments before their nodes, so a
 * tape that forked is one sequence here too.
 */
#include "sweep/sweep.h"
#include "sweep/entry_rules.h"

#include <stdint.h>
#include <stdlib.h>

/* p times a tangent or an adjoint t, zero where t is: a partial that is
   infinite (log at 0) times a direction that does not move is no NaN, as
   in the recorded tangents, which skip a term of zero tangent */
static inline double zm(double p, double t)
{
    return t == 0.0 ? 0.0 : p * t;
}

/*
 * Storage, by relative id r >= -1 (-1: a sink, for a constant argument):
 * the k tangents T(r), and beside each other the adjoint and its k
 * tangents, A(r)[0] and A(r)[1 .. k], so that the reverse pass touches one
 * place per node.
 *
 * Many directions at once (the dense Hessian's unit vectors) leave most
 * tangents zero: a node's tangents are nonzero only where it depends on an
 * input whose direction is.  Those passes keep a flag a node, whether
 * T(r) was written (nzt) and whether A(r)[1 .. k] was (nza), and skip the
 * work on what is zero, writing nothing there.  One product (k == 1)
 * keeps no flags: there the flag costs what it saves.
 */
typedef struct hvp_pass {
    const dr_oplog *log; /* entry of relative id r: log[r - log_lo]    */
    int64_t log_lo;
    int64_t lo, hi;      /* the ids the passes visit, all with entries  */
    size_t k;            /* directions                                  */
    double *tan;         /* T(r) = tan + (r + 1) k                      */
    double *acc;         /* A(r) = acc + (r + 1) (k + 1)                */
    const bool *seeded;  /* by relative id: an input of the product    */
    unsigned char *nzt;  /* the flags, by r >= -1 (k > 1)               */
    unsigned char *nza;
    const double *zeros; /* k zeros: an unwritten T(r) or A(r) + 1      */
    const int64_t *cut;  /* those that are not the tape's inputs,
                            increasing: the passes skip them (their
                            tangents are the seeds; what reaches them
                            stays), where an input has no rule to skip */
    size_t ncut;
    /* extended nodes with a second-order rule (array operations) */
    dr_fsweep *fs;       /* their forward rules' sweep: tangents T(r)  */
    dr_sweep *rs;        /* their reverse2 rules' (rs->h set)           */
    bool *dense;         /* set where one is met with flags kept: their
                            rules read and write every slot, so the
                            passes run again without flags              */
} hvp_pass;

/* ------------------------------------------------------------ the passes
 * Written once over k and whether flags are kept (SP); instanced for one
 * product, for the dense Hessian's block width and for any k. */

#define TAN(r) (p->tan + ((r) + 1) * (int64_t)k)
#define ACC(r) (p->acc + ((r) + 1) * (int64_t)(k + 1))
#define NZT(r) (p->nzt[(r) + 1])
#define NZA(r) (p->nza[(r) + 1])

/* the tangents of r to read: zeros where none were written */
static inline __attribute__((always_inline)) const double *
tan_of(const hvp_pass *p, size_t k, bool SP, int64_t r)
{
    return !SP || NZT(r) ? TAN(r) : p->zeros;
}
static inline __attribute__((always_inline)) bool
tan_nz(const hvp_pass *p, bool SP, int64_t r)
{
    return !SP || NZT(r);
}

/* T(r) = ca T(a) + cb T(b) (cz: partials that may be infinite, times
   the zero test of zm) */
static inline __attribute__((always_inline)) void
tan_lin2(const hvp_pass *p, size_t k, bool SP, int64_t r, double ca,
         int64_t a, double cb, int64_t b, bool cz)
{
    bool fa = tan_nz(p, SP, a), fb = tan_nz(p, SP, b);
    if (SP) {
        NZT(r) = fa | fb;
        if (!(fa | fb))
            return;
    }
    double *tr = TAN(r);
    /* a partial that is zero adds nothing, whatever the tangent (one that
       is not finite included): zeros in its place */
    const double *ta = ca != 0.0 ? tan_of(p, k, SP, a) : p->zeros,
                 *tb = cb != 0.0 ? tan_of(p, k, SP, b) : p->zeros;
    /* a partial that is not finite (a NaN value, log at 0) times a zero
       tangent adds nothing: the test per direction only where one is */
    cz = cz || !(isfinite(ca) && isfinite(cb));
    if (cz)
        for (size_t j = 0; j < k; j++)
            tr[j] = zm(ca, ta[j]) + zm(cb, tb[j]);
    else
        for (size_t j = 0; j < k; j++)
            tr[j] = ca * ta[j] + cb * tb[j];
}

/* false for a node with no second-order rule */
static inline __attribute__((always_inline)) bool
forward_node(const hvp_pass *p, size_t k, bool SP, int64_t r,
             const dr_oplog *e)
{
    /* the ones a program is mostly made of first, out of the switch (a
       branch each, which the processor predicts better than the switch's
       jump), with partials that are values or constants: no zero test, as
       a gradient's sweep has none */
    if (DR_LIKELY(e->op == DR_OPC_mul)) {
        tan_lin2(p, k, SP, r, e->y, e->ra, e->x, e->rb, false);
        return true;
    }
    if (DR_LIKELY(e->op == DR_OPC_add)) {
        tan_lin2(p, k, SP, r, 1.0, e->ra, 1.0, e->rb, false);
        return true;
    }
    switch (e->op) {
    case DR_OPC_sub:
        tan_lin2(p, k, SP, r, 1.0, e->ra, -1.0, e->rb, false);
        return true;
    case DR_OPC_LINEAR:
        tan_lin2(p, k, SP, r, e->x, e->ra, e->y, e->rb, false);
        return true;
    case DR_OPC_select:
        tan_lin2(p, k, SP, r, 1.0, e->aux > 0 ? e->ra : e->rb, 0.0, -1,
                 false);
        return true;
    case DR_OPC_EXT: { /* (array operations): the kind's forward rule */
        dr_ext *x = dr__oplog_ext(e);
        if (!x || !x->reverse2 || !x->forward || x->id != r)
            return false;
        if (SP) {
            *p->dense = true;
            return false;
        }
        x->forward(x, p->fs);
        return true;
    }
    case DR_OPC_GAP:
    case DR_OPC_INPUT: /* an input of the product keeps its seeds */
        if (SP)
            NZT(r) = p->seeded[r];
        else if (!p->seeded[r])
            for (size_t j = 0; j < k; j++)
                TAN(r)[j] = 0.0;
        return true;
    case DR_OPC_NARY:
    case DR_OPC_SUMN:
    case DR_OPC_PROG: {
        double *tr = TAN(r);
        for (size_t j = 0; j < k; j++)
            tr[j] = 0.0;
        if (SP)
            NZT(r) = 1;
        size_t n;
        const int64_t *args;
        const double *ps;
        if (!dr__oplog_nary(e, &n, &args, &ps))
            return true;
        bool ones = e->op == DR_OPC_SUMN;
        for (size_t i = 0; i < n; i++) {
            int64_t a = args[i] < 0 ? -1 : args[i];
            if (!tan_nz(p, SP, a))
                continue;
            const double *ti = TAN(a);
            double pi = ones ? 1.0 : ps[i];
            /* (as in tan_lin2: a partial that is not finite times a zero
               tangent adds nothing) */
            if (isfinite(pi))
                for (size_t j = 0; j < k; j++)
                    tr[j] += pi * ti[j];
            else
                for (size_t j = 0; j < k; j++)
                    tr[j] += zm(pi, ti[j]);
        }
        return true;
    }
    default: {
        double pa, pb;
        if (!first_partials(e, &pa, &pb)) /* a kind with no rule */
            return false;
        tan_lin2(p, k, SP, r, pa, e->ra, pb, e->rb, true);
        return true;
    }
    }
}

/* A(a)[1 + j] += c1 x1[j] + c2 x2[j] + c3 x3[j] for the terms present
   (f1 .. f3; absent ones are zero), zm's zero test where cz; a target
   with nothing written yet (its flag clear) is written, not added to */
static inline __attribute__((always_inline)) void
acc_tan(const hvp_pass *p, size_t k, bool SP, int64_t a, bool cz,
        double c1, const double *x1, bool f1, double c2, const double *x2,
        bool f2, double c3, const double *x3, bool f3)
{
    /* a coefficient that is zero adds nothing, whatever its vector holds
       (a tangent that is not finite included) */
    f1 = f1 && c1 != 0.0;
    f2 = f2 && c2 != 0.0;
    f3 = f3 && c3 != 0.0;
    if (!f1)
        x1 = p->zeros;
    if (!f2)
        x2 = p->zeros;
    if (!f3)
        x3 = p->zeros;
    if (SP && !(f1 | f2 | f3))
        return;
    double *A = ACC(a) + 1;
    bool add = !SP || NZA(a);
    /* (as in tan_lin2: zm's test where a coefficient is not finite) */
    cz = cz || !(isfinite(c1) && isfinite(c2) && isfinite(c3));
    if (SP)
        NZA(a) = 1;
    for (size_t j = 0; j < k; j++) {
        double v = cz ? zm(c1, x1[j]) + zm(c2, x2[j]) + zm(c3, x3[j])
                      : c1 * x1[j] + c2 * x2[j] + c3 * x3[j];
        A[j] = add ? A[j] + v : v;
    }
}

/* a node's adjoint g and its tangents gd (fd: any written) passed on
   with the constant partial c to a (first order only: a linear node) */
static inline __attribute__((always_inline)) void
pass_linear(const hvp_pass *p, size_t k, bool SP, int64_t a, double c,
            double g, const double *gd, bool fd)
{
    ACC(a)[0] += c * g;
    acc_tan(p, k, SP, a, false, c, gd, fd, 0.0, p->zeros, false, 0.0,
            p->zeros, false);
}

static inline __attribute__((always_inline)) void
reverse_node(const hvp_pass *p, size_t k, bool SP, int64_t r,
             const dr_oplog *e, double g, const double *gd, bool fd)
{
    if (DR_LIKELY(e->op == DR_OPC_mul)) {
        /* partials y and x, the mixed second partial 1; x * x (ra == rb)
           adds twice into one slot, and both terms belong */
        int64_t a = e->ra, b = e->rb;
        bool fa = tan_nz(p, SP, a), fb = tan_nz(p, SP, b);
        const double *ta = tan_of(p, k, SP, a), *tb = tan_of(p, k, SP, b);
        ACC(a)[0] += g * e->y;
        ACC(b)[0] += g * e->x;
        acc_tan(p, k, SP, a, false, e->y, gd, fd, g, tb, fb, 0.0, p->zeros,
                false);
        acc_tan(p, k, SP, b, false, e->x, gd, fd, g, ta, fa, 0.0, p->zeros,
                false);
        return;
    }
    if (DR_LIKELY(e->op == DR_OPC_add)) {
        pass_linear(p, k, SP, e->ra, 1.0, g, gd, fd);
        pass_linear(p, k, SP, e->rb, 1.0, g, gd, fd);
        return;
    }
    switch (e->op) {
    case DR_OPC_sub:
        pass_linear(p, k, SP, e->ra, 1.0, g, gd, fd);
        pass_linear(p, k, SP, e->rb, -1.0, g, gd, fd);
        return;
    case DR_OPC_LINEAR:
        pass_linear(p, k, SP, e->ra, e->x, g, gd, fd);
        pass_linear(p, k, SP, e->rb, e->y, g, gd, fd);
        return;
    case DR_OPC_GAP:
    case DR_OPC_INPUT:
        return;
    case DR_OPC_EXT: { /* (no flags: forward_node) */
        dr_ext *x = dr__oplog_ext(e);
        x->reverse2(x, p->rs, ACC(r));
        return;
    }
    case DR_OPC_NARY:
    case DR_OPC_SUMN:
    case DR_OPC_PROG: {
        size_t n;
        const int64_t *args;
        const double *ps;
        if (!dr__oplog_nary(e, &n, &args, &ps))
            return;
        for (size_t i = 0; i < n; i++)
            pass_linear(p, k, SP, args[i] < 0 ? -1 : args[i],
                        e->op == DR_OPC_SUMN ? 1.0 : ps[i], g, gd, fd);
        return;
    }
    case DR_OPC_select:
        pass_linear(p, k, SP, e->aux > 0 ? e->ra : e->rb, 1.0, g, gd, fd);
        return;

    default: {
        if (!scalar_rule_op(e->op))
            return; /* a kind with no rule */
        dr_rule_so2_t s = second_partials(e);
        int64_t a = e->ra, b = e->rb;
        bool fa = tan_nz(p, SP, a), fb = tan_nz(p, SP, b);
        const double *ta = tan_of(p, k, SP, a), *tb = tan_of(p, k, SP, b);
        ACC(a)[0] += zm(s.pa, g);
        ACC(b)[0] += zm(s.pb, g);
        /* the second-order terms g h t: none where g is zero */
        bool live = g != 0.0;
        /* a second partial that is exactly zero is one that does not
           exist (the rule's value does not depend on that argument: the
           numbers of rule_second.h keep such a derivative exactly zero),
           so an adjoint that is not finite does not reach through it */
        double haa = zm(g, s.haa), hab = zm(g, s.hab), hbb = zm(g, s.hbb);
        acc_tan(p, k, SP, a, true, s.pa, gd, fd, haa, ta, fa && live, hab,
                tb, fb && live);
        acc_tan(p, k, SP, b, true, s.pb, gd, fd, hab, ta, fa && live, hbb,
                tb, fb && live);
        return;
    }
    }
}

/* the nodes lo .. hi of the log that are not inputs of the product */
static inline __attribute__((always_inline)) bool
forward_range(const hvp_pass *p, size_t k, bool SP, int64_t lo, int64_t hi)
{
    bool ok = true;
    for (int64_t r = lo; r <= hi; r++) {
        double *A = ACC(r);
        A[0] = 0.0;
        if (SP)
            NZA(r) = 0;
        else
            for (size_t j = 1; j <= k; j++)
                A[j] = 0.0;
        ok &= forward_node(p, k, SP, r, &p->log[r - p->log_lo]);
    }
    return ok;
}

static inline __attribute__((always_inline)) void
reverse_range(const hvp_pass *p, size_t k, bool SP, int64_t lo, int64_t hi)
{
    for (int64_t r = hi; r >= lo; r--) {
        const double *A = ACC(r);
        double g = A[0];
        bool fd = !SP || NZA(r);
        const double *gd = fd ? A + 1 : p->zeros;
        bool live = g != 0.0;
        if (!SP)
            for (size_t j = 0; j < k; j++)
                live |= gd[j] != 0.0;
        else
            live |= fd;
        const dr_oplog *e = &p->log[r - p->log_lo];
        /* (an array-valued node keeps its adjoints itself) */
        if (live || e->op == DR_OPC_EXT)
            reverse_node(p, k, SP, r, e, g, gd, fd);
    }
}

#if VEC2
/* One product (k == 1): the adjoint and its tangent of a node are a pair,
   A(r)[0 .. 1], which a linear or bilinear operation passes on in two-lane
   arithmetic, with no test per term where no term can make a NaN: for a
   product whose values and adjoint are finite and nonzero (a zero or an
   infinite one takes reverse_node's tests).  The same sums in the same
   order as reverse_node's, so the same bits. */
/* t added to the pair of argument a of node r: in the registers that
   carry the pairs of r - 1 and r - 2, or in memory */
static inline __attribute__((always_inline)) void
pass_pair(double *acc, int64_t r, int64_t a, v2d t, v2d *w1, v2d *w2)
{
    if (a == r - 1)
        *w1 += t;
    else if (a == r - 2)
        *w2 += t;
    else
        store2(acc + 2 * a, load2(acc + 2 * a) + t);
}

static void reverse_range1(const hvp_pass *p, int64_t lo, int64_t hi)
{
    double *acc = p->acc + 2;        /* A(r) = acc + 2 r, r >= -1 */
    const double *tan = p->tan + 1;  /* T(r) = tan + r */
    const v2d zero = {0.0, 0.0};
    if (lo > hi)
        return;
    /* The pairs of the two nodes below the one passed on are carried in
       registers, w1 and w2, where a chain of sums (a dot product) adds
       into them: through memory, each link of the chain waited for its
       store.  w2 is loaded as it comes in, with every term of the nodes
       above it added, and takes the terms of the next two in the order
       memory would; a node of the general rule finds them in memory. */
    v2d w0 = load2(acc + 2 * hi);
    v2d w1 = hi >= 0 ? load2(acc + 2 * (hi - 1)) : zero;
    for (int64_t r = hi; r >= lo; r--) {
        v2d w2 = r >= 1 ? load2(acc + 2 * (r - 2)) : zero;
        v2d P = w0;
        double g = P[0];
        const dr_oplog *e = &p->log[r - p->log_lo];
        int op = e->op;
        int64_t a = e->ra, b = e->rb;
        /* a sum or difference passes a zero pair on as zeros, which add
           nothing: no test for a dead node there */
        if (DR_LIKELY(op == DR_OPC_mul)) {
            double y = e->y, x = e->x;
            /* y, x and g finite and nonzero where their product is (one
               that underflows or overflows takes the tests) */
            double q = y * x * g;
            if (DR_LIKELY(q != 0.0 && fabs(q) < INFINITY)) {
                /* (x * x: the two terms add into one pair in turn) */
                const v2d ya = {0.0, g * tan[b]}, xb = {0.0, g * tan[a]};
                pass_pair(acc, r, a, y * P + ya, &w1, &w2);
                pass_pair(acc, r, b, x * P + xb, &w1, &w2);
                w0 = w1;
                w1 = w2;
                continue;
            }
        } else if (DR_LIKELY(op == DR_OPC_add)) {
            pass_pair(acc, r, a, P, &w1, &w2);
            pass_pair(acc, r, b, P, &w1, &w2);
            w0 = w1;
            w1 = w2;
            continue;
        } else if (op == DR_OPC_sub) {
            pass_pair(acc, r, a, P, &w1, &w2);
            pass_pair(acc, r, b, -1.0 * P, &w1, &w2);
            w0 = w1;
            w1 = w2;
            continue;
        }
        /* (in memory: an input's pair is its result, and the general rule
           reads it there) */
        store2(acc + 2 * r, P);
        if ((g != 0.0 || P[1] != 0.0) || op == DR_OPC_EXT) {
            /* the general rule reads and writes memory */
            store2(acc + 2 * (r - 1), w1);
            if (r >= 1)
                store2(acc + 2 * (r - 2), w2);
            reverse_node(p, 1, false, r, e, g, acc + 2 * r + 1, true);
            w1 = load2(acc + 2 * (r - 1));
            w2 = r >= 1 ? load2(acc + 2 * (r - 2)) : zero;
        }
        w0 = w1;
        w1 = w2;
    }
    /* the pairs carried past the range */
    store2(acc + 2 * (lo - 1), w0);
    if (lo >= 1)
        store2(acc + 2 * (lo - 2), w1);
}
#else
static void reverse_range1(const hvp_pass *p, int64_t lo, int64_t hi)
{
    reverse_range(p, 1, false, lo, hi);
}
#endif

/* segment i of the nodes the passes visit: those between the inputs of
   the product (cut, increasing, each in lo .. hi) */
static inline void segment(const hvp_pass *p, size_t i, int64_t *from,
                           int64_t *to)
{
    *from = i == 0 ? p->lo : p->cut[i - 1] + 1;
    *to = i == p->ncut ? p->hi : p->cut[i] - 1;
}

/* false, having swept nothing back, where a node up to y has no rule */
static inline __attribute__((always_inline)) bool
passes(const hvp_pass *p, size_t k, bool SP, int64_t out)
{
    int64_t from, to;
    bool ok = true;
    for (size_t i = 0; i <= p->ncut; i++) {
        segment(p, i, &from, &to);
        ok &= forward_range(p, k, SP, from, to);
    }
    if (!ok)
        return false;
    ACC(out)[0] = 1.0;
    for (size_t i = p->ncut + 1; i-- > 0;) {
        segment(p, i, &from, &to);
        if (k == 1 && !SP)
            reverse_range1(p, from, to);
        else
            reverse_range(p, k, SP, from, to);
    }
    /* what went into the sink (a constant argument) is dropped */
    return true;
}

#undef TAN
#undef ACC
#undef NZT
#undef NZA

static bool passes_1(const hvp_pass *p, int64_t out)
{
    return passes(p, 1, false, out);
}
/* the dense Hessian's block, a width the compiler knows: its loops over
   the directions become vector code */
static bool passes_block(const hvp_pass *p, int64_t out)
{
    return passes(p, DR_HVP_BLOCK, true, out);
}
static bool passes_k(const hvp_pass *p, int64_t out)
{
    return passes(p, p->k, true, out);
}
/* any k without flags: where extended nodes take part */
static bool passes_k_dense(const hvp_pass *p, int64_t out)
{
    return passes(p, p->k, false, out);
}

/* the pass numbers of dr_hsweep, process-wide (0: none) */
static uint64_t hvp_passes;

/* the nodes up to ry that the passes do not visit (those without an
   entry: before the log began, after it ended) are inputs of the product;
   the passes check the others */
static dr_status check_unlogged(const dr_tape *t, int64_t ry,
                                const bool *seeded)
{
    int64_t end = t->oplog_lo + t->oplog_n;
    for (int64_t r = 0; r <= ry && r < t->oplog_start; r++)
        if (!seeded[r])
            return DR_ENOTSUP;
    for (int64_t r = end > 0 ? end : 0; r <= ry; r++)
        if (!seeded[r])
            return DR_ENOTSUP;
    return DR_OK;
}

static int by_id(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

dr_status dr__hvp_pass(dr_tape *t, int64_t ry, size_t n,
                       const int64_t *rx, size_t k, const double *V,
                       int arr_seeds, double *out, double *grad)
{
    for (size_t i = 0; i < k * n; i++)
        out[i] = 0.0;
    for (size_t i = 0; grad && i < n; i++)
        grad[i] = 0.0;
    if (ry < 0 || k == 0)
        return DR_OK; /* a constant: no derivative */
    size_t span = (size_t)ry + 1;
    if (span > (SIZE_MAX / sizeof(double) - 2) / (2 * k + 4) ||
        n > SIZE_MAX / sizeof(int64_t) / 4)
        return DR_ENOMEM;
    /* one block for all of a call's storage (a small product makes no
       other call of the allocator); the doubles first, aligned */
    bool sp = k > 1; /* flags kept (the passes' SP) */
    size_t ntan = (span + 1) * k, nacc = (span + 1) * (k + 1);
    size_t bytes = (ntan + nacc + k) * sizeof(double), more =
        span * sizeof(bool) + (sp ? 2 * (span + 1) : 0);
    if (bytes > SIZE_MAX - more - n * sizeof(int64_t))
        return DR_ENOMEM;
    bytes += more + n * sizeof(int64_t);
    /* the root's spare scratch: a product at every step of a loop takes
       the same memory again, not fresh pages */
    dr_scratch *sb = dr__scratch_take(t, bytes / sizeof(double) + 1);
    if (!sb)
        return DR_ENOMEM;
    char *block = (char *)sb->data;
    double *tan = (double *)(void *)block, *acc = tan + ntan,
           *zeros = acc + nacc;
    int64_t *cut = (int64_t *)(void *)(zeros + k);
    bool *seeded = (bool *)(cut + n);
    unsigned char *flags = sp ? (unsigned char *)(seeded + span) : NULL;
    /* the passes visit the ids with entries up to y (check_unlogged: any
       other up to y is an input of the product), but the inputs */
    int64_t lo = t->oplog_lo > 0 ? t->oplog_lo : 0;
    int64_t hi = t->oplog_lo + t->oplog_n - 1;
    /* a log that begins after y (y an input of the product): nothing
       to visit, and no more than y's ids to set */
    if (lo > ry + 1)
        lo = ry + 1;
    if (hi > ry)
        hi = ry;
    /* the passes write what they visit, the inputs of the product
       but their seeds; the rest starts at zero: the sink, the ids
       before lo, the inputs of the product, the ids after hi (none
       has an entry: inputs of the product) */
    memset(seeded, 0, span * sizeof *seeded);
    memset(tan, 0, ((size_t)lo + 1) * k * sizeof *tan);
    memset(acc, 0, ((size_t)lo + 1) * (k + 1) * sizeof *acc);
    if (hi < ry) {
        memset(tan + ((size_t)hi + 2) * k, 0,
               (size_t)(ry - hi) * k * sizeof *tan);
        memset(acc + ((size_t)hi + 2) * (k + 1), 0,
               (size_t)(ry - hi) * (k + 1) * sizeof *acc);
    }
    if (sp) /* nothing written but the seeds */
        memset(flags, 0, 2 * (span + 1));
    /* Each input of the product in one loop (a loop for each step cost a
       tenth of a product of 2,560 inputs): marked, its tangents the sum of
       its seeds (a node given more than once takes the sum, from 0 as a
       sum does), and one that is not an input of the tape cut, with its
       adjoints zeroed, the passes skipping it */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t r = rx[i];
        if (r < 0 || r > ry)
            continue;
        double *T = tan + ((size_t)r + 1) * k;
        if (seeded[r]) {
            for (size_t j = 0; j < k; j++)
                T[j] += V[j * n + i];
            continue;
        }
        seeded[r] = true;
        for (size_t j = 0; j < k; j++)
            T[j] = 0.0 + V[j * n + i];
        if (sp)
            flags[r + 1] = 1;
        int op = r >= lo && r <= hi ? t->oplog[r - t->oplog_lo].op
                                    : DR_OPC_INPUT;
        if (op != DR_OPC_INPUT && op != DR_OPC_GAP) {
            cut[m++] = r;
            memset(acc + ((size_t)r + 1) * (k + 1), 0,
                   (k + 1) * sizeof *acc);
        }
    }
    if (m > 1)
        qsort(cut, m, sizeof *cut, by_id);
    dr_status st = check_unlogged(t, ry, seeded);
    if (st == DR_OK) {
        bool dense = false;
        dr_fsweep fs = {tan + k, k, t, arr_seeds};
        dr_hsweep hs = {__atomic_add_fetch(&hvp_passes, 1, __ATOMIC_RELAXED),
                        k, 0, -1, acc + k + 1, k + 1, tan + k, NULL, 0};
        dr_sweep rs = {acc + k + 1, t, false, 0, NULL, &hs};
        t->hvp_pass = hs.pass;
        dr_status before = t->status;
        hvp_pass p = {t->oplog, t->oplog_lo, lo, hi,    k,
                      tan,       acc,           seeded, flags,
                      flags ? flags + span + 1 : NULL,  zeros,
                      cut,       m,   &fs, &rs, &dense};
        for (size_t j = 0; j < k; j++)
            zeros[j] = 0.0;
        bool ok = k == 1              ? passes_1(&p, ry)
                  : k == DR_HVP_BLOCK ? passes_block(&p, ry)
                                      : passes_k(&p, ry);
        if (!ok && dense) {
            sp = false; /* (the flags are read no more) */
            ok = passes_k_dense(&p, ry);
        }
        dr__free(hs.zeros);
        if (!ok)
            st = DR_ENOTSUP;
        else if (t->status != before) { /* a rule ran out of memory */
            st = t->status;
            /* nothing was recorded: the tape stays usable (an array's
               storage not made is made by the next pass) */
            t->status = before;
        }
        if (st == DR_OK && k == 1 && !sp && !grad) /* (one product) */
            for (size_t i = 0; i < n; i++) {
                if (rx[i] >= 0 && rx[i] <= ry)
                    out[i] = acc[((size_t)rx[i] + 1) * 2 + 1];
            }
        else if (st == DR_OK)
            for (size_t i = 0; i < n; i++)
                if (rx[i] >= 0 && rx[i] <= ry) {
                    const double *A = acc + ((size_t)rx[i] + 1) * (k + 1);
                    if (!sp || p.nza[rx[i] + 1])
                        for (size_t j = 0; j < k; j++)
                            out[j * n + i] = A[1 + j];
                    if (grad)
                        grad[i] = A[0];
                }
    }
    dr__scratch_give(t, sb);
    return st;
}
