/*
 * fuzz_statements.c - statements and n-ary sums on the main tape
 * (tests/fuzz/README.md, "Statements"): dr_ex, dr_ex_const, dr_ex_add,
 * dr_ex_sub, dr_ex_mul, dr_ex_div, dr_ex_neg, dr_ex_scale, dr_ex_fn and
 * dr_rec_stmt; dr_sum_init, dr_sum_add, dr_sum_mul and dr_rec_sum;
 * dr_sumn, dr_sumn_id at first order (at second order:
 * fuzz_second_order.c; replayed: fuzz_replay.c); and statements with
 * programs, dr_fe_prog, at order 1 and 2 (their programs' decoder and
 * evaluation by plain arithmetic are shared with those two files); sums
 * of products, dr_fe_dot_rec, at order 1 and 2, programs on and off, on
 * the main tape and, replayed, on tapes of their own (the end of the
 * file).
 *
 * A statement is a fuzzed expression over the program's values (slots),
 * constants and sometimes ids not on the tape, built by a small stack
 * machine and recorded as one node through the recorder that is open, or
 * one opened for it.  Beside it the harness builds the same expression
 * from the reference's duals, one operation at a time by the chain rule,
 * so the node's partials (which the library multiplies through as the
 * expression is built, and merges for a repeated argument) are checked
 * by every later gradient and sweep as any other value's.  The value is
 * the same arithmetic in the same order: bit for bit.  Too many terms
 * (DR_EXPR_MAX for an expression, the capacity for a sum) give DR_ERANGE
 * and the constant value; an id not on the tape DR_EINVAL and a constant.
 * A recorder opens on a handle of order 2 too (its statements are nodes of
 * given partials there, linear to second order).
 */
#include "fuzz_model.h"
#include "frontend/frontend.h" /* dr_fe_prog */

#include <stdlib.h>
#include <string.h>

/* a partial the library multiplies through at record time (0 * inf =
   NaN, where the sweep skips): the directions reached through a zero
   partial and an infinite one are not comparable, as for a tangent
   recorded as operations */
static void as_product(dual *d)
{
    d->w |= d->z;
}

/* --------------------------------------------------- expressions */

#define XSTACK 4
#define XLEAVES 16

typedef struct xv {
    dr_real r; /* a leaf's operand */
    dr_expr e;
    double v;  /* the value, computed here */
    int terms; /* as the header counts them (DR_EXPR_MAX + 1: too many) */
    dual d;
} xv;

typedef struct xctx {
    xv st[XSTACK];
    int n;
    opnd leaves[XLEAVES];
    dual lbuf[XLEAVES];
    int nleaves;
    bool bad_ids; /* operands may be ids not on the tape */
} xctx;

static int add_terms(int a, int b)
{
    return a + b > DR_EXPR_MAX ? DR_EXPR_MAX + 1 : a + b;
}

/* push dr_ex of an operand (beyond XLEAVES: of a constant) */
static void x_leaf(rd *r, xctx *X, unsigned b)
{
    xv *x = &X->st[X->n++];
    if (X->nleaves == XLEAVES) {
        x->r = dr_const(rdv(r));
        dual_const(&x->d, x->r.val);
    } else {
        dual *cb = &X->lbuf[X->nleaves];
        opnd o = X->bad_ids && (b & 0x80) ? bad_operand(r, cb)
                                          : operand(r, cb);
        if (o.kind < 0) { /* an array id: a constant instead */
            dual_const(cb, o.r.val);
            o = (opnd){dr_const(o.r.val), cb, V_CONST};
        }
        X->leaves[X->nleaves++] = o;
        x->r = o.r;
        x->d = *o.d;
    }
    x->e = dr_ex(x->r);
    x->v = x->r.val;
    x->terms = 1;
}

static void x_binary(xctx *X, int op)
{
    xv *a = &X->st[X->n - 2], *b = &X->st[X->n - 1];
    static xv o;
    double av = a->v, bv = b->v, q;
    switch (op) {
    case 0:
        o.e = dr_ex_add(a->e, b->e);
        o.v = av + bv;
        lin2(&o.d, o.v, &a->d, 1.0, 0.0, &b->d, 1.0, 0.0);
        break;
    case 1:
        o.e = dr_ex_sub(a->e, b->e);
        o.v = av - bv;
        lin2(&o.d, o.v, &a->d, 1.0, 0.0, &b->d, -1.0, 0.0);
        break;
    case 2:
        o.e = dr_ex_mul(a->e, b->e);
        o.v = av * bv;
        lin2(&o.d, o.v, &a->d, bv, 0.0, &b->d, av, 0.0);
        break;
    default:
        o.e = dr_ex_div(a->e, b->e);
        q = av / bv;
        o.v = q;
        lin2(&o.d, o.v, &a->d, 1.0 / bv, 0.0, &b->d, -q / bv, 0.0);
        break;
    }
    o.terms = add_terms(a->terms, b->terms);
    X->n -= 2;
    X->st[X->n++] = o;
}

static void x_unary(rd *r, xctx *X, int op)
{
    xv *a = &X->st[X->n - 1];
    static xv o;
    if (op == 0) {
        o.e = dr_ex_neg(a->e);
        o.v = -a->v;
        lin1(&o.d, o.v, &a->d, -1.0, 0.0);
    } else if (op == 1) {
        double c = rdv(r);
        o.e = dr_ex_scale(c, a->e);
        o.v = c * a->v;
        lin1(&o.d, o.v, &a->d, c, 0.0);
    } else {
        int f = (int)(u8(r) % N_UNARY);
        double y, p, dp;
        ref_unary(f, a->v, &y, &p, &dp);
        o.e = dr_ex_fn(a->e, y, p);
        o.v = y;
        lin1(&o.d, o.v, &a->d, p, dp);
    }
    o.terms = a->terms > DR_EXPR_MAX ? DR_EXPR_MAX + 1 : a->terms;
    X->st[X->n - 1] = o;
}

/* an expression of up to nsteps steps, folded into one */
static void x_build(rd *r, xctx *X, int nsteps)
{
    X->n = 0;
    for (int i = 0; i < nsteps && !eof(r); i++) {
        unsigned b = u8(r);
        unsigned op = b % 9;
        if (op >= 2 && op <= 5 && X->n < 2)
            op = 0;
        if (op >= 6 && X->n < 1)
            op = 0;
        if (op <= 1 && X->n == XSTACK)
            x_binary(X, 0);
        switch (op) {
        case 0: x_leaf(r, X, b); break;
        case 1: {
            double v = rdv(r);
            xv *x = &X->st[X->n++];
            x->e = dr_ex_const(v);
            x->v = v;
            x->terms = 0;
            dual_const(&x->d, v);
            break;
        }
        case 2: case 3: case 4: case 5: x_binary(X, (int)op - 2); break;
        default: x_unary(r, X, (int)op - 6); break;
        }
    }
    if (X->n == 0) {
        xv *x = &X->st[X->n++];
        x->e = dr_ex_const(0.5);
        x->v = 0.5;
        x->terms = 0;
        dual_const(&x->d, 0.5);
    }
    while (X->n > 1)
        x_binary(X, 0);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* the common tail of a statement or a sum recorded through a recorder
   that records (live) or not; over: too many terms */
static void stmt_finish(const char *what, xctx *X, dr_real res, double v,
                        dual *ref, bool live, bool over, int dst)
{
    level *lv = top();
    CHECK(same_bits(res.val, v), "%s: value %.17g, expected %.17g (the "
          "same arithmetic)", what, res.val, v);
    dual out;
    if (!live || over) {
        CHECK(res.idx == DR_NONE, "%s (%s) gave id %lld", what,
              live ? "too many terms" : "a recorder refused",
              (long long)res.idx);
        if (live)
            stick(&lv->hs, DR_ERANGE);
        check_sticky(what, lv->h, &lv->hs);
        dual_const(&out, res.val);
    } else {
        as_product(ref);
        ref->v = v;
        sctx c = main_ctx();
        if (X->nleaves == 0) {
            CHECK(res.idx == DR_NONE, "%s of no argument gave id %lld",
                  what, (long long)res.idx);
            check_sticky(what, lv->h, &lv->hs);
            dual_const(&out, res.val);
        } else {
            finish_scalar(&c, what, res, ref, X->nleaves, X->leaves, 0.0,
                          false, &out);
        }
    }
    put_s(dst % NS, res, &out, -1);
}

static void stmt_expr(rd *r, xctx *X, dr_rec *rec, bool live, unsigned s)
{
    X->nleaves = 0;
    x_build(r, X, 1 + (int)((s >> 1) % 16));
    xv *x = &X->st[0];
    CHECK(same_bits(x->e.val, x->v), "dr_expr value %.17g, expected %.17g",
          x->e.val, x->v);
    dr_real res = dr_rec_stmt(rec, x->e);
    TRACE("  dr_rec_stmt(%d terms) -> %lld\n", x->terms,
          (long long)res.idx);
    stmt_finish("dr_rec_stmt", X, res, x->v, &x->d, live,
                x->terms > DR_EXPR_MAX, (int)u8(r));
}

/* a long sum: expressions and products */
#define SCAP 16
static void stmt_sum(rd *r, xctx *X, dr_rec *rec, bool live, unsigned s)
{
    size_t cap = (s >> 1) % (SCAP + 1);
    dr_idx ids[SCAP];
    double parts[SCAP];
    dr_sum sum;
    dr_sum_init(&sum, cap, ids, parts);
    int nt = 1 + (int)(u8(r) % 5);
    static dual td[10];
    term tm[10];
    int ntm = 0, terms = 0;
    double v = 0.0;
    X->nleaves = 0;
    for (int i = 0; i < nt && !eof(r); i++) {
        unsigned t = u8(r);
        if (t & 1) { /* a product of two operands */
            X->n = 0;
            x_leaf(r, X, t);
            x_leaf(r, X, t >> 1);
            const xv *a = &X->st[0], *b = &X->st[1];
            dr_sum_mul(&sum, a->r, b->r);
            v += a->v * b->v;
            td[ntm] = a->d;
            tm[ntm] = (term){&td[ntm], b->v, 0.0};
            ntm++;
            td[ntm] = b->d;
            tm[ntm] = (term){&td[ntm], a->v, 0.0};
            ntm++;
            terms += 2;
        } else { /* an expression */
            x_build(r, X, 1 + (int)((t >> 1) % 8));
            const xv *x = &X->st[0];
            dr_sum_add(&sum, x->e);
            v += x->v;
            td[ntm] = x->d;
            tm[ntm] = (term){&td[ntm], 1.0, 0.0};
            ntm++;
            terms = x->terms > DR_EXPR_MAX ? (int)SCAP + 99 : terms + x->terms;
        }
    }
    dual ref;
    lin(&ref, v, ntm, tm);
    dr_real res = dr_rec_sum(rec, &sum);
    TRACE("  dr_rec_sum(%d terms, cap %zu) -> %lld\n", terms, cap,
          (long long)res.idx);
    stmt_finish("dr_rec_sum", X, res, v, &ref, live, terms > (int)cap,
                (int)u8(r));
}

void op_statement(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    static xctx X;
    X.bad_ids = k & 0x80;
    dr_rec local, *rec = &S.rec;
    bool own = !S.rec_open, live = true;
    if (own) { /* a recorder of its own (at order 2 too) */
        rec = &local;
        dr_status st = dr_rec_begin(lv->h, rec);
        CHECK(st == DR_OK, "dr_rec_begin for statements (order %d): %s",
              lv->order, sn(st));
    }
    int nst = 1 + (int)(k % 3);
    for (int i = 0; i < nst && !eof(r); i++) {
        unsigned s = u8(r);
        if (s & 1)
            stmt_sum(r, &X, rec, live, s);
        else
            stmt_expr(r, &X, rec, live, s);
    }
    if (own) {
        dr_status st = dr_rec_end(rec);
        CHECK(st == (live ? lv->hs.st : DR_EINVAL), "dr_rec_end after "
              "statements: %s, model %s", sn(st), sn(lv->hs.st));
        check_sticky("dr_rec_end after statements", lv->h, &lv->hs);
    }
}

/* -------------------------------------------------- n-ary sums */

/* a sum of products (dr_fe_dot_rec, below): a pattern of the n-ary sums'
   parameter byte that no seed written before it has (bits the sums do
   not read: 0x80 without 0x40, and 0x20) */
#define DOT_MASK 0xe0
#define DOT_FLAGS 0xa0
static void op_dot(rd *r, unsigned k);

void op_sumn(rd *r)
{
    unsigned k = u8(r);
    if ((k & DOT_MASK) == DOT_FLAGS) {
        op_dot(r, k);
        return;
    }
    level *lv = top();
    int n = (int)((k & 7) % 7);
    opnd ops[6];
    dual cb[6];
    dr_real xs[6];
    double vals[6] = {0};
    dr_idx ids[6] = {0};
    term tm[6];
    double s = 0.0, scale = 0.0;
    bool nan_args = false;
    for (int i = 0; i < n; i++) {
        unsigned b = u8(r);
        ops[i] = (b & 0x3f) == 0x3f ? bad_operand(r, &cb[i])
                                    : operand(r, &cb[i]);
        if (ops[i].kind < 0)
            return;
        xs[i] = ops[i].r;
        vals[i] = xs[i].val;
        ids[i] = xs[i].idx;
        tm[i] = (term){ops[i].d, 1.0, 0.0};
        s += xs[i].val;
        scale += fabs(xs[i].val);
        nan_args |= isnan(xs[i].val);
    }
    int j = (int)(u8(r) % NS);
    dr_real res;
    if ((k & 0xc0) == 0xc0) { /* NULL arrays */
        size_t m = n ? (size_t)n : 1;
        double v = 0;
        switch (u8(r) % 3) {
        case 0: res = dr_sumn(lv->h, m, NULL); break;
        case 1: res.idx = dr_sumn_id(lv->h, m, NULL, ids, &v); res.val = v;
                break;
        default: res.idx = dr_sumn_id(lv->h, m, vals, NULL, &v); res.val = v;
                 break;
        }
        CHECK(res.idx == DR_NONE && isnan(res.val), "dr_sumn with NULL "
              "terms: id %lld value %.17g", (long long)res.idx, res.val);
        stick(&lv->hs, DR_EINVAL);
        check_sticky("dr_sumn with NULL terms", lv->h, &lv->hs);
        dual d;
        dual_const(&d, res.val);
        put_s(j, res, &d, -1);
        return;
    }
    if (k & 8) {
        double v = -77.0;
        res.idx = dr_sumn_id(lv->h, (size_t)n, n ? vals : NULL,
                             n ? ids : NULL, (k & 0x10) ? NULL : &v);
        res.val = (k & 0x10) ? s : v;
    } else {
        res = dr_sumn(lv->h, (size_t)n, n ? xs : NULL);
    }
    TRACE("  dr_sumn(%d terms) -> %lld %.17g\n", n, (long long)res.idx,
          res.val);
    /* 0 + x0 + x1 + ..., left to right */
    CHECK(same_bits(res.val, s), "dr_sumn of %d terms: %.17g, expected "
          "%.17g", n, res.val, s);
    dual ref, out;
    lin(&ref, s, n, tm);
    if (n == 0) {
        CHECK(res.idx == DR_NONE && res.val == 0.0, "dr_sumn of no terms");
        check_sticky("dr_sumn", lv->h, &lv->hs);
        dual_const(&out, res.val);
    } else {
        sctx c = main_ctx();
        finish_scalar(&c, "dr_sumn", res, &ref, n, ops, scale, nan_args,
                      &out);
    }
    put_s(j, res, &out, -1);
}

/* ------------------------------------- statements with programs
 * dr_fe_prog (cbits/frontend/frontend.h): a program of the byte format
 * of cbits/record/program.h over leaves that are the program's values,
 * constants and sometimes ids not on the tape, recorded as one node.
 * Beside it the harness evaluates the same program one instruction at a
 * time with the reference's rules, which gives the value the front end
 * passes (bit for bit the program's: the same IEEE operations in the same
 * order) and the node's partials, checked by every later sweep.  A value
 * other than the program's is refused (DR_FE_STMT_BY_OPS, nothing
 * recorded), and the front end records the operations one by one; a
 * program that is not one, or a leaf not on the tape, sets DR_EINVAL. */

/* where the constants begin: after the header and the pairs */
static unsigned prog_consts_at(const fprog *p)
{
    return FP_HEAD + 2 * p->q;
}

double prog_const(const fprog *p, unsigned j)
{
    uint64_t u = 0;
    for (int k = 7; k >= 0; k--)
        u = u << 8 | p->code[prog_consts_at(p) + 8 * j + (unsigned)k];
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void prog_put_const(fprog *p, unsigned j, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (unsigned k = 0; k < 8; k++)
        p->code[prog_consts_at(p) + 8 * j + k] = (unsigned char)(u >> (8 * k));
}

const unsigned char *prog_insn(const fprog *p, unsigned i)
{
    return p->code + prog_consts_at(p) + 8 * p->c + 3 * i;
}

/* an operand register from a byte: with the high bit a leaf or an earlier
   result (random registers of a wide program are mostly constants) */
static unsigned prog_reg(const fprog *p, unsigned i, unsigned b)
{
    if (b & 0x80) {
        unsigned k = (b & 0x7f) % (p->n + i);
        return k < p->n ? k : p->c + k;
    }
    return b % (p->n + p->c + i);
}

/* the leaves each register depends on (bit per leaf), into set */
static void prog_leafsets(const fprog *p, unsigned *set)
{
    for (unsigned i = 0; i < p->n + p->c; i++)
        set[i] = i < p->n ? 1u << i : 0;
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        set[p->n + p->c + i] = set[s[1]] | (s[0] == FP_NEG ? 0 : set[s[2]]);
    }
}

/* the program's own pairs, as a front end writes them (program.h): for
   each product of two factors over leaves, the leaves of each; for each
   quotient by a divisor over leaves, 0 and the divisor's (a factor over
   no leaf: no pair, as 0 would mean any) */
static unsigned prog_own_pairs(const fprog *p, unsigned char (*pr)[2])
{
    static unsigned set[FP_REGS + 1];
    prog_leafsets(p, set);
    unsigned q = 0;
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        if (s[0] == FP_MUL && set[s[1]] && set[s[2]]) {
            pr[q][0] = (unsigned char)set[s[1]];
            pr[q++][1] = (unsigned char)set[s[2]];
        } else if (s[0] == FP_DIV && set[s[2]]) {
            pr[q][0] = 0;
            pr[q++][1] = (unsigned char)set[s[2]];
        }
    }
    return q;
}

void prog_decode(rd *r, fprog *p, unsigned n, bool wide)
{
    unsigned b = u8(r);
    p->n = n;
    p->m = 1 + (b >> 2) % FP_STEPS;
    p->c = wide ? FP_REGS - n - p->m : b & 3;
    p->q = 0;
    p->off = (b >> 5) == 7;
    p->code[0] = (unsigned char)p->n;
    p->code[1] = (unsigned char)p->c;
    p->code[2] = (unsigned char)p->m;
    p->code[3] = 0;
    /* (a wide program's constants past the first three: a few values, so
       that an input stays short) */
    for (unsigned j = 0; j < p->c; j++)
        prog_put_const(p, j, j < 3 ? rdv(r)
                                   : (double)((int)(j % 9) - 4) / 4.0);
    for (unsigned i = 0; i < p->m; i++) {
        unsigned char *s = p->code + FP_HEAD + 8 * p->c + 3 * i;
        unsigned op = 1 + u8(r) % 5, a = u8(r), bb = u8(r);
        s[0] = (unsigned char)op;
        s[1] = (unsigned char)prog_reg(p, i, a);
        /* NEG ignores b, which may then name any register, even one
           past the program's or past the format's */
        s[2] = (unsigned char)(op == FP_NEG ? bb : prog_reg(p, i, bb));
    }
    /* the pairs (b's top bits): 0, 1, 6 none; 2 the program's own; 3
       its own with some dropped (too little: the engine must look at
       the instructions); 4 fuzzed masks (too much or too little); 5 its
       own and fuzzed ones; 7 none, and programs off */
    unsigned char pr[FP_PAIRS][2];
    unsigned q = 0, how = b >> 5;
    if (how == 2 || how == 3 || how == 5)
        q = prog_own_pairs(p, pr);
    if (how == 3 && q) {
        unsigned drop = u8(r), k = 0;
        for (unsigned i = 0; i < q; i++)
            if (!(drop >> (i & 7) & 1)) {
                pr[k][0] = pr[i][0];
                pr[k][1] = pr[i][1];
                k++;
            }
        q = k;
    }
    if (how == 4 || how == 5) {
        unsigned extra = 1 + u8(r) % 3;
        for (unsigned i = 0; i < extra && q < FP_PAIRS; i++, q++) {
            pr[q][0] = (unsigned char)u8(r);
            pr[q][1] = (unsigned char)u8(r);
        }
    }
    if (q) { /* the constants and instructions move up past the pairs */
        size_t body = 8 * (size_t)p->c + 3 * (size_t)p->m;
        memmove(p->code + FP_HEAD + 2 * q, p->code + FP_HEAD, body);
        for (unsigned i = 0; i < q; i++) {
            p->code[FP_HEAD + 2 * i] = pr[i][0];
            p->code[FP_HEAD + 2 * i + 1] = pr[i][1];
        }
        p->q = q;
        p->code[3] = (unsigned char)q;
    }
}

bool prog_nonlinear(const fprog *p, unsigned act)
{
    static unsigned set[FP_REGS + 1];
    prog_leafsets(p, set);
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        if (s[0] == FP_MUL && (set[s[1]] & act) && (set[s[2]] & act))
            return true;
        if (s[0] == FP_DIV && (set[s[2]] & act))
            return true;
    }
    return false;
}

bool prog_pairs_refuse(const unsigned char *code, unsigned act)
{
    if (!code)
        return false;
    for (unsigned i = 0; i < code[3]; i++) {
        unsigned a = code[FP_HEAD + 2 * i], b = code[FP_HEAD + 2 * i + 1];
        if ((a == 0 || (a & act)) && (b & act))
            return true;
    }
    return false;
}

unsigned prog_active(const dr_real *leaf, unsigned n)
{
    unsigned act = 0;
    for (unsigned i = 0; i < n; i++)
        act |= (unsigned)(leaf[i].idx != DR_NONE) << i;
    return act;
}

unsigned prog_reached(const fprog *p)
{
    static bool need[FP_REGS + 1];
    unsigned top = p->n + p->c + p->m;
    memset(need, 0, top * sizeof need[0]);
    need[top - 1] = true;
    for (unsigned i = p->m; i-- > 0;) {
        const unsigned char *s = prog_insn(p, i);
        if (!need[p->n + p->c + i])
            continue;
        need[s[1]] = true;
        if (s[0] != FP_NEG)
            need[s[2]] = true;
    }
    unsigned mask = 0;
    for (unsigned i = 0; i < p->n; i++)
        mask |= (unsigned)need[i] << i;
    return mask;
}

double prog_value(const fprog *p, const double *x)
{
    static double reg[FP_REGS];
    for (unsigned i = 0; i < p->n; i++)
        reg[i] = x[i];
    for (unsigned j = 0; j < p->c; j++)
        reg[p->n + j] = prog_const(p, j);
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        double a = reg[s[1]], b = s[0] == FP_NEG ? 0.0 : reg[s[2]], v;
        switch (s[0]) {
        case FP_ADD: v = a + b; break;
        case FP_SUB: v = a - b; break;
        case FP_MUL: v = a * b; break;
        case FP_DIV: v = a / b; break;
        default: v = -a; break;
        }
        reg[p->n + p->c + i] = v;
    }
    return reg[p->n + p->c + p->m - 1];
}

/* (a list: an input may record up to MAXOPS programs, wide ones too) */
typedef struct kept {
    struct kept *next;
    unsigned char code[];
} kept;
static kept *g_kept;
/* whether the main tape's root records programs (dr_fe_programs; off
   for a new tape): op_prog sets it on the root, its children follow */
static bool g_progs_on;

const unsigned char *prog_keep(const fprog *p)
{
    size_t len = FP_HEAD + 2 * (size_t)p->q + 8 * (size_t)p->c +
                 3 * (size_t)p->m;
    kept *k = malloc(sizeof *k + len);
    CHECK(k != NULL, "harness: out of memory");
    memcpy(k->code, p->code, len);
    k->next = g_kept;
    g_kept = k;
    return k->code;
}

void progs_end(void)
{
    g_progs_on = false; /* (a new main tape: off) */
    while (g_kept) {
        kept *k = g_kept;
        g_kept = k->next;
        free(k);
    }
}

dr_idx prog_record(dr_tape *t, dr_tape *root, bool on,
                   const unsigned char *code, double v, const dr_real *leaf,
                   unsigned n)
{
    if (root) {
        dr_status st = dr_fe_programs(root, on);
        CHECK(st == DR_OK, "dr_fe_programs(root, %d): %s", (int)on, sn(st));
    }
    dr_idx a[FP_LEAVES];
    double x[FP_LEAVES];
    /* (the leaves past n are ignored: junk there must not matter) */
    for (unsigned i = 0; i < FP_LEAVES; i++) {
        a[i] = i < n ? leaf[i].idx : (dr_idx)i - 7;
        x[i] = i < n ? leaf[i].val : NAN;
    }
    return dr_fe_prog(t, code, v, a[0], x[0], a[1], x[1], a[2], x[2], a[3],
                      x[3], a[4], x[4], a[5], x[5]);
}

dr_real prog_by_ops(dr_tape *t, const fprog *p, const dr_real *leaf)
{
    static dr_real reg[FP_REGS];
    for (unsigned i = 0; i < p->n; i++)
        reg[i] = leaf[i];
    for (unsigned j = 0; j < p->c; j++)
        reg[p->n + j] = dr_const(prog_const(p, j));
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        dr_real a = reg[s[1]];
        reg[p->n + p->c + i] =
            s[0] == FP_NEG ? dr_neg(t, a)
                           : eng_binary(t, (int)s[0] - FP_ADD, a, reg[s[2]]);
    }
    return reg[p->n + p->c + p->m - 1];
}

/* the reference of a program over leaves of duals d: one instruction at
   a time by the rules of fuzz_ref.c, then the leaves no path reaches
   joined with a zero partial (the node has them as arguments, of
   partial 0); its value into *v */
static void prog_dual(const fprog *p, const dual *const *d, dual *out)
{
    static dual reg[FP_REGS];
    unsigned base = p->n + p->c;
    for (unsigned i = 0; i < p->n; i++)
        reg[i] = *d[i];
    for (unsigned j = 0; j < p->c; j++)
        dual_const(&reg[p->n + j], prog_const(p, j));
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        const dual *a = &reg[s[1]];
        double y, pa, dpa, pb, dpb;
        if (s[0] == FP_NEG) {
            ref_unary(U_NEG, a->v, &y, &pa, &dpa);
            lin1(&reg[base + i], y, a, pa, dpa);
        } else {
            const dual *b = &reg[s[2]];
            ref_binary((int)s[0] - FP_ADD, a->v, b->v, &y, &pa, &dpa, &pb,
                       &dpb);
            lin2(&reg[base + i], y, a, pa, dpa, b, pb, dpb);
        }
    }
    const dual *res = &reg[base + p->m - 1];
    term tm[1 + FP_LEAVES];
    int nt = 0;
    tm[nt++] = (term){res, 1.0, 0.0};
    unsigned reached = prog_reached(p);
    for (unsigned i = 0; i < p->n; i++)
        if (!(reached >> i & 1))
            tm[nt++] = (term){d[i], 0.0, 0.0};
    lin(out, res->v, nt, tm);
    /* the partials are products taken at record time (0 * inf = NaN
       inside the program, where a sweep would skip) */
    as_product(out);
}

/* a program that is not one (or none at all): what breaks it, by k */
static const unsigned char *prog_break(fprog *p, unsigned k, rd *r)
{
    unsigned char *s = (unsigned char *)prog_insn(p, u8(r) % p->m);
    switch (k % 8) {
    case 0: p->code[0] = 0; break;                      /* no leaves   */
    case 1: p->code[0] = (unsigned char)(7 + u8(r) % 3); break; /* > 6 */
    case 2: p->code[2] = 0; break;                   /* no instruction */
    case 3: {                                          /* no such op  */
        static const unsigned char bad[] = {0, 6, 7, 0x81, 0xff};
        s[0] = bad[u8(r) % 5];
        break;
    }
    case 4: {        /* an operand at or past the instruction's register */
        unsigned below = (unsigned)(s - prog_insn(p, 0)) / 3 + p->n + p->c;
        unsigned w = below + u8(r) % (256 - below);
        if (s[0] == FP_NEG || (u8(r) & 1))
            s[1] = (unsigned char)w;
        else
            s[2] = (unsigned char)w;
        break;
    }
    case 5: return NULL;
    default: /* more registers than the format has: c one too many */
        p->c = FP_REGS + 1 - p->n - p->m;
        p->code[1] = (unsigned char)p->c;
        memset(p->code + FP_HEAD + 2 * p->q, 0, 8 * p->c);
        for (unsigned i = 0; i < p->m; i++) {
            unsigned char *q = (unsigned char *)prog_insn(p, i);
            q[0] = FP_ADD;
            q[1] = q[2] = 0;
        }
        break;
    }
    return p->code;
}

/* a value the program does not compute, bit for bit */
static double prog_other(double v, unsigned b)
{
    if (isnan(v))
        return (b & 1) ? 0.5 : INFINITY;
    double w = (b & 1) ? -v : nextafter(v, (b & 2) ? INFINITY : -INFINITY);
    return same_bits(w, v) ? -v : w;
}

/* the program by operations, each checked as op_binary checks it
   (leaves: operands of the program's slots; none invalid) */
static void prog_ops_checked(const fprog *p, const opnd *leaf, dual *out,
                             dr_real *rout)
{
    static dual d[FP_REGS];
    static opnd reg[FP_REGS];
    unsigned base = p->n + p->c;
    for (unsigned i = 0; i < p->n; i++)
        reg[i] = leaf[i];
    for (unsigned j = 0; j < p->c; j++) {
        double c = prog_const(p, j);
        dual_const(&d[p->n + j], c);
        reg[p->n + j] = (opnd){dr_const(c), &d[p->n + j], V_CONST};
    }
    sctx c = main_ctx();
    dr_real y = {0.0, DR_NONE};
    for (unsigned i = 0; i < p->m; i++) {
        const unsigned char *s = prog_insn(p, i);
        dual *o = &d[base + i];
        if (s[0] == FP_NEG)
            do_unary(&c, U_NEG, reg[s[1]], o, &y);
        else
            do_binary(&c, (int)s[0] - FP_ADD, reg[s[1]], reg[s[2]], o, &y);
        reg[base + i] = (opnd){y, o, y.idx == DR_NONE ? V_CONST : V_VALID};
    }
    *out = d[base + p->m - 1];
    *rout = y;
}

void op_prog(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    unsigned n = 1 + (k & 7) % FP_LEAVES;
    static fprog P;
    opnd ops[FP_LEAVES];
    dual cb[FP_LEAVES];
    const dual *ld[FP_LEAVES];
    dr_real x[FP_LEAVES];
    double xval[FP_LEAVES];
    unsigned badm = (k & 8) ? u8(r) : 0;
    int invalid = 0, unknown = 0;
    for (unsigned i = 0; i < n; i++) {
        ops[i] = (badm >> i & 1) ? bad_operand(r, &cb[i])
                                 : operand(r, &cb[i]);
        if (ops[i].kind < 0) { /* an array id: a constant instead */
            dual_const(&cb[i], ops[i].r.val);
            ops[i] = (opnd){dr_const(ops[i].r.val), &cb[i], V_CONST};
        }
        x[i] = ops[i].r;
        xval[i] = x[i].val;
        ld[i] = ops[i].d;
        invalid += ops[i].kind == V_INVALID;
        unknown += ops[i].kind == V_UNKNOWN;
    }
    prog_decode(r, &P, n, k & 0x40);
    unsigned mode = k >> 4 & 3;
    int dst = (int)(u8(r) % NS);
    double v = prog_value(&P, xval);
    dr_tape *h = lv->h;
    dr_idx mark = dr_tape_mark(h);
    /* programs on or off: set on the root (a child handle records as its
       root says, and may not set it) */
    dr_tape *root = NULL; /* (set here, not by prog_record) */
    if (S.depth == 0) {
        g_progs_on = !P.off;
        dr_status pst = dr_fe_programs(S.T, g_progs_on);
        CHECK(pst == DR_OK, "dr_fe_programs of the root: %s", sn(pst));
    }
    bool on = g_progs_on;
    /* the leaves that move (ids not DR_NONE, valid or not), and what the
       engine refuses on them: a program not linear there (program.h), or
       (allowed, not required) one its pairs say moves */
    unsigned act = prog_active(x, n);
    bool nonlin = prog_nonlinear(&P, act),
         pairs = prog_pairs_refuse(P.code, act);
    /* (with a recorder open the tape's cursor may be the recorder's: a
       call that records nothing may still take it back) */
    bool marks = !S.rec_open;
    TRACE("  dr_fe_prog(%u leaves, %u constants, %u instructions, %u pairs,"
          " mode %u, programs %s, %s%s) = %.17g\n", P.n, P.c, P.m, P.q, mode,
          on ? "on" : "off", nonlin ? "nonlinear" : "linear",
          pairs ? ", pairs refuse" : "", v);
    if (mode == 3) { /* not a program, or no tape */
        unsigned how = u8(r);
        if (how % 8 == 7) {
            dr_idx id = prog_record(NULL, NULL, on, P.code, v, x, n);
            CHECK(id == DR_NONE, "dr_fe_prog without a tape gave %lld",
                  (long long)id);
            /* dr_fe_programs of no tape, or of a child handle */
            dr_status st = dr_fe_programs(NULL, 1);
            CHECK(st == DR_EINVAL, "dr_fe_programs(NULL): %s", sn(st));
            if (S.depth > 0) {
                st = dr_fe_programs(h, !on);
                CHECK(st == DR_EINVAL, "dr_fe_programs of a child handle: "
                      "%s", sn(st));
            }
            check_sticky("dr_fe_programs misused", h, &lv->hs);
            return;
        }
        const unsigned char *code = prog_break(&P, how, r);
        dr_idx id = prog_record(h, root, on, code, v, x, n);
        TRACE("  dr_fe_prog of a malformed program (%u) -> %lld\n", how % 8,
              (long long)id);
        /* no program, or programs off: the operations one by one; more
           leaves than the front end's: DR_EINVAL; pairs that refuse
           (before the instructions are read): either */
        bool none = !code || !on,
             many = code && code[0] > FP_LEAVES,
             pref = code && code[0] >= 1 && !many &&
                    prog_pairs_refuse(code, act);
        if (none || (pref && id == DR_FE_STMT_BY_OPS)) {
            CHECK(id == DR_FE_STMT_BY_OPS, "dr_fe_prog of %s gave %lld, "
                  "expected DR_FE_STMT_BY_OPS", code ? "programs off"
                  : "no program", (long long)id);
        } else {
            CHECK(id == DR_NONE, "dr_fe_prog of a malformed program (%u) "
                  "gave %lld", how % 8, (long long)id);
            stick(&lv->hs, DR_EINVAL);
        }
        check_sticky("dr_fe_prog of a malformed program", h, &lv->hs);
        CHECK(!marks || dr_tape_mark(h) == mark, "dr_fe_prog of a malformed "
              "program recorded nodes (%lld ids)",
              (long long)(dr_tape_mark(h) - mark));
        dual d;
        dual_const(&d, v);
        put_s(dst, (dr_real){v, DR_NONE}, &d, -1);
        return;
    }
    if (mode == 2) { /* a value the program does not compute */
        double w = prog_other(v, u8(r));
        dr_idx id = prog_record(h, root, on, prog_keep(&P), w, x, n);
        TRACE("  dr_fe_prog of %.17g -> %lld\n", w, (long long)id);
        if (!on || (pairs && id == DR_FE_STMT_BY_OPS)) {
            CHECK(id == DR_FE_STMT_BY_OPS, "dr_fe_prog with programs off "
                  "gave %lld", (long long)id);
        } else if (invalid || (unknown && id == DR_NONE)) {
            CHECK(id == DR_NONE, "dr_fe_prog with an invalid id and another"
                  " value gave %lld", (long long)id);
            stick(&lv->hs, DR_EINVAL);
        } else {
            CHECK(id == DR_FE_STMT_BY_OPS, "dr_fe_prog of %.17g, where the "
                  "program computes %.17g: %lld, expected DR_FE_STMT_BY_OPS",
                  w, v, (long long)id);
        }
        check_sticky("dr_fe_prog of another value", h, &lv->hs);
        CHECK(!marks || dr_tape_mark(h) == mark, "a refused dr_fe_prog "
              "recorded nodes (%lld ids)",
              (long long)(dr_tape_mark(h) - mark));
        if (id == DR_NONE)
            return;
    }
    bool byops = mode == 2 && (k & 0x80);
    dr_idx id = byops ? DR_FE_STMT_BY_OPS
                      : prog_record(h, root, on, prog_keep(&P), v, x, n);
    dr_real res = {v, id};
    dual out;
    if (id == DR_FE_STMT_BY_OPS) {
        /* the front end records the operations one by one: after a value
           refused, with programs off, for a program not linear in its
           active leaves (or its pairs say so), or where the program
           computes another NaN than the harness (a NaN's sign and payload
           follow the operands' order, which a compiler may swap) */
        CHECK(byops || !on || pairs || isnan(v) ||
              (nonlin && !invalid), "dr_fe_prog refused the "
              "program's own value %.17g (%s in its active leaves)", v,
              nonlin ? "nonlinear" : "linear");
        CHECK(!marks || dr_tape_mark(h) == mark, "a refused dr_fe_prog "
              "recorded nodes (%lld ids)",
              (long long)(dr_tape_mark(h) - mark));
        check_sticky("a refused dr_fe_prog", h, &lv->hs);
        prog_ops_checked(&P, ops, &out, &res);
        CHECK(same_bits(res.val, v), "dr_fe_prog's program by operations: "
              "%.17g, expected %.17g", res.val, v);
        put_s(dst, res, &out, -1);
        return;
    }
    /* recorded (or failed on an id): never with programs off, never a
       program whose partials move (but for an id not on the tape, which
       fails first) */
    CHECK(on, "dr_fe_prog with programs off gave %lld", (long long)id);
    CHECK(!nonlin || (id == DR_NONE && (invalid || unknown)),
          "dr_fe_prog recorded a program not linear in its active leaves "
          "(id %lld)", (long long)id);
    dual ref;
    prog_dual(&P, ld, &ref);
    sctx c = main_ctx();
    finish_scalar(&c, "dr_fe_prog", res, &ref, (int)n, ops, 0.0, false,
                  &out);
    /* at order 2 the node holds the program's value (replay starts
       there) */
    if (id != DR_NONE && !unknown && lv->order == 2 && S.depth == 0) {
        double got = -1234.5;
        dr_status st = dr_value(h, id, &got);
        CHECK(st == DR_OK && same_bits(got, v), "dr_value of a program's "
              "node (order 2): %s, %.17g, expected %.17g", sn(st), got, v);
    }
    put_s(dst, res, &out, -1);
}

/* ---------------------------------------------- sums of products
 * dr_fe_dot_rec (cbits/frontend/frontend.h): s + xa[0] xb[0] + ... +
 * xa[n-1] xb[n-1] over the sum so far (acc, of value s; DR_NONE: a
 * constant) and n pairs of factors (an id DR_NONE: a constant factor),
 * recorded in batches of DR_FE_DOT_CHUNK pairs: at order 1 an n-ary node
 * a batch, at order 2 the products and additions one by one (logged), and
 * where the root keeps programs (dr_fe_programs: a tape kept for replay)
 * one statement a batch (dr_record_statement), which replays and has no
 * second-order rule.  1 to 300 pairs (some calls span several batches)
 * over a pool of up to 8 operands (slots or constants; an entry in
 * several pairs, or both factors of one); acc a slot or DR_NONE with a
 * constant s.
 *
 * On the main tape: the node's partials (1 for the sum so far, xb for xa,
 * xa for xb) against the reference by every later sweep; the sum so far
 * itself where no factor moves at order 1; at order 2 the node's value
 * (dr_value) the left fold from s, bit for bit, and, with programs on,
 * its statements nodes without a second-order rule for the main tape's
 * Hessians and recorded tangents (fuzz_second_order.c), which work
 * through it with programs off.  On tapes of their own, the same sum over
 * inputs at order 2 with programs on: the value bits, one statement a
 * batch that holds an active leaf (and every one after), the gradient
 * that of order 1, bit for bit; dr_replay (or dr_replay_range) at a
 * second point against a fresh recording there (value and gradient, bit
 * for bit), and back to the first point; dr_hvp, dr_hessian, the sparse
 * Hessian and its plan, dr_tangent_record and dr_adjoint_record refused
 * (DR_ENOTSUP, nothing recorded, the status and the value kept).  At
 * order 2 with programs off: the Hessian is the number of pairs of each
 * two inputs (2 a square), exactly, and so are H v and the sparse Hessian
 * (where the values are finite and moderate).  The gradients against the
 * formula besides.
 */
#define DOT_POOL 8
#define DOT_SEL 16
#define DOT_MAX 300
#define DOT_IN (DOT_POOL + 1)

typedef struct dotp {
    int n, m;                       /* pairs, pool entries                 */
    int nin;                        /* inputs of the tapes of its own      */
    int cin[DOT_IN];                /* a leaf (0: acc, 1 + j: pool entry
                                       j): its input, -1 a constant        */
    double cv[DOT_IN];              /* its value at the first point        */
    uint8_t a[DOT_MAX], b[DOT_MAX]; /* each pair's pool entries            */
    double x0[DOT_IN], x1[DOT_IN];  /* the inputs at the two points        */
    bool given[DOT_IN];             /* an input given to dr_replay         */
    bool range;                     /* dr_replay_range of every input      */
    bool back;                      /* replayed back to the first point    */
} dotp;

/* n from a byte: mostly 1 to 24 pairs, else a batch's edges or more */
static int dot_pairs(unsigned b)
{
    static const int edge[] = {127, 128, 129, 255, 256, 257, 299, 300};
    if (b < 0xc0)
        return 1 + (int)(b % 24);
    b -= 0xc0;
    return b < 8 ? edge[b] : 25 + 5 * ((int)b - 8);
}

static double dot_leaf(const dotp *P, int c, const double *x)
{
    return P->cin[c] >= 0 ? x[P->cin[c]] : P->cv[c];
}

/* s + xa[0] xb[0] + ..., left to right, as a front end adds it up */
static double dot_fold(const dotp *P, const double *x)
{
    double s = dot_leaf(P, 0, x);
    for (int i = 0; i < P->n; i++) {
        double p = dot_leaf(P, 1 + P->a[i], x) * dot_leaf(P, 1 + P->b[i], x);
        s = s + p;
    }
    return s;
}

/* a factor of the sum moves */
static bool dot_factor_active(const dotp *P)
{
    for (int i = 0; i < P->n; i++)
        if (P->cin[1 + P->a[i]] >= 0 || P->cin[1 + P->b[i]] >= 0)
            return true;
    return false;
}

/* the statements of a tape kept for replay: one a batch from the first
   that holds an active leaf (the sum so far moves after it) */
static dr_idx dot_batches(const dotp *P)
{
    dr_idx nst = 0;
    bool act = P->cin[0] >= 0;
    for (int lo = 0; lo < P->n; lo += DR_FE_DOT_CHUNK) {
        for (int i = lo; i < P->n && i < lo + DR_FE_DOT_CHUNK; i++)
            act |= P->cin[1 + P->a[i]] >= 0 || P->cin[1 + P->b[i]] >= 0;
        nst += act;
    }
    return nst;
}

/* every leaf finite and moderate: second derivatives are exact counts */
static bool dot_tame(const dotp *P, const double *x)
{
    for (int c = 0; c <= P->m; c++)
        if (!(fabs(dot_leaf(P, c, x)) <= 1e100))
            return false;
    return true;
}

enum { DOT_O1, DOT_LOGGED, DOT_PROGS };

/* dr_value of node y at order 2 is want, bit for bit */
static void dot_value_is(const char *what, dr_tape *t, dr_idx y, double want)
{
    double got = -1234.5;
    dr_status st = dr_value(t, y, &got);
    CHECK(st == DR_OK && same_bits(got, want), "%s: dr_value %s, %.17g, "
          "expected %.17g", what, sn(st), got, want);
}

/* the sum recorded on a tape of its own (DOT_O1: order 1; DOT_LOGGED:
   order 2; DOT_PROGS: order 2, programs on) at the inputs x, their nodes
   into in; the id checked, and at order 2 the value (dr_value) */
static dr_real dot_record(const dotp *P, dr_tape *t, int kind,
                          const double *x, dr_real *in, const char *what)
{
    static dr_idx ia[DOT_MAX], ib[DOT_MAX];
    static double xa[DOT_MAX], xb[DOT_MAX];
    dr_status st = dr_inputs(t, (size_t)P->nin, x, in);
    CHECK(st == DR_OK, "%s: dr_inputs: %s", what, sn(st));
    dr_idx id[DOT_IN];
    for (int c = 0; c <= P->m; c++)
        id[c] = P->cin[c] >= 0 ? in[P->cin[c]].idx : DR_NONE;
    for (int i = 0; i < P->n; i++) {
        ia[i] = id[1 + P->a[i]];
        xa[i] = dot_leaf(P, 1 + P->a[i], x);
        ib[i] = id[1 + P->b[i]];
        xb[i] = dot_leaf(P, 1 + P->b[i], x);
    }
    dr_idx mark = dr_tape_mark(t);
    dr_idx y = dr_fe_dot_rec(t, id[0], dot_leaf(P, 0, x), (size_t)P->n, ia,
                             xa, ib, xb);
    double v = dot_fold(P, x);
    st = dr_tape_status(t);
    CHECK(st == DR_OK, "%s: dr_fe_dot_rec of %d pairs: %s", what, P->n,
          sn(st));
    bool fact = dot_factor_active(P);
    if (!fact && id[0] == DR_NONE)
        CHECK(y == DR_NONE, "%s: dr_fe_dot_rec of constants gave %lld", what,
              (long long)y);
    else if (kind == DOT_O1 && !fact)
        CHECK(y == id[0], "%s: dr_fe_dot_rec of constant factors at order "
              "1 gave %lld, expected the sum so far %lld", what,
              (long long)y, (long long)id[0]);
    else
        CHECK(y >= mark && y < dr_tape_mark(t), "%s: dr_fe_dot_rec gave "
              "%lld (ids %lld to %lld recorded)", what, (long long)y,
              (long long)mark, (long long)dr_tape_mark(t));
    if (kind == DOT_PROGS)
        CHECK(dr_tape_mark(t) - mark == dot_batches(P), "%s: dr_fe_dot_rec "
              "of %d pairs recorded %lld nodes, expected %lld statements",
              what, P->n, (long long)(dr_tape_mark(t) - mark),
              (long long)dot_batches(P));
    if (kind != DOT_O1 && y != DR_NONE)
        dot_value_is(what, t, y, v); /* the left fold */
    return (dr_real){v, y};
}

static void dot_gradient(const char *what, dr_tape *t, dr_real y,
                         const dotp *P, const dr_real *in, double *g)
{
    dr_status st = dr_gradient(t, y, (size_t)P->nin, in, g);
    CHECK(st == DR_OK, "%s: dr_gradient: %s", what, sn(st));
}

/* two gradients the same bits */
static void dot_same(const char *what, const dotp *P, const double *g,
                     const double *want)
{
    for (int i = 0; i < P->nin; i++)
        CHECK(same_bits(g[i], want[i]), "%s: gradient[%d] %.17g, expected "
              "%.17g", what, i, g[i], want[i]);
}

/* the gradient at x against the formula: an input gets 1 where it is the
   sum so far, xb where it is a pair's xa and xa where its xb (to rounding:
   the sweep adds them in an order of its own); exactly 0 where it is
   none */
static void dot_formula(const char *what, const dotp *P, const double *x,
                        const double *g)
{
    for (int j = 0; j < P->nin; j++) {
        double e = 0.0, bound = 0.0;
        bool reached = false;
        if (P->cin[0] == j) {
            e += 1.0;
            bound += 1.0;
            reached = true;
        }
        for (int i = 0; i < P->n; i++) {
            double va = dot_leaf(P, 1 + P->a[i], x),
                   vb = dot_leaf(P, 1 + P->b[i], x);
            if (P->cin[1 + P->a[i]] == j) {
                e += vb;
                bound += fabs(vb);
                reached = true;
            }
            if (P->cin[1 + P->b[i]] == j) {
                e += va;
                bound += fabs(va);
                reached = true;
            }
        }
        if (!reached)
            CHECK(g[j] == 0.0, "%s: gradient[%d] %.17g of an input no "
                  "pair holds", what, j, g[j]);
        else if (bound <= 1e150)
            CHECK(fabs(g[j] - e) <= 1e-9 * bound + 1e-290, "%s: gradient[%d]"
                  " %.17g, expected %.17g", what, j, g[j], e);
    }
}

/* second order through the statements: refused, nothing recorded, the
   status and the value kept */
static void dot_refusals(const char *when, dr_tape *t, dr_real y,
                         const dotp *P, const dr_real *in, dr_idx from)
{
    size_t n = (size_t)P->nin, len = dr_tape_len(t);
    dr_idx mark = dr_tape_mark(t);
    double v0 = -1234.5, v1 = -1234.5;
    dr_status st = dr_value(t, y.idx, &v0);
    CHECK(st == DR_OK, "%s: dr_value: %s", when, sn(st));
    static double H[DOT_IN * DOT_IN];
    double w[DOT_IN], hv[DOT_IN];
    dr_idx ids[DOT_IN];
    dr_real seeds[DOT_IN], outs[DOT_IN], out;
    for (size_t i = 0; i < n; i++) {
        w[i] = 1.0 + 0.5 * (double)i;
        ids[i] = in[i].idx;
        seeds[i] = dr_const(w[i]);
    }
    st = dr_hvp(t, y, n, in, w, hv);
    CHECK(st == DR_ENOTSUP, "%s: dr_hvp through a sum of products' "
          "statement: %s", when, sn(st));
    st = dr_hessian(t, y, n, in, H);
    CHECK(st == DR_ENOTSUP, "%s: dr_hessian through a sum of products' "
          "statement: %s", when, sn(st));
    dr_sparse Hs;
    memset(&Hs, 0, sizeof Hs);
    st = dr_sparse_hessian(t, y, n, in, &Hs);
    CHECK(st == DR_ENOTSUP, "%s: dr_sparse_hessian through a sum of "
          "products' statement: %s", when, sn(st));
    dr_sparse_free(&Hs);
    dr_sparse_plan *plan = NULL;
    st = dr_sparse_hessian_plan(t, y, n, in, &plan);
    CHECK(st == DR_ENOTSUP && plan == NULL, "%s: dr_sparse_hessian_plan "
          "through a sum of products' statement: %s", when, sn(st));
    dr_sparse_plan_free(plan);
    st = dr_tangent_record(t, from, n, ids, seeds, y, &out);
    CHECK(st == DR_ENOTSUP, "%s: dr_tangent_record through a sum of "
          "products' statement: %s", when, sn(st));
    st = dr_adjoint_record(t, from, y, n, ids, outs);
    CHECK(st == DR_ENOTSUP, "%s: dr_adjoint_record through a sum of "
          "products' statement: %s", when, sn(st));
    st = dr_value(t, y.idx, &v1);
    CHECK(dr_tape_len(t) == len && dr_tape_mark(t) == mark &&
              dr_tape_status(t) == DR_OK && st == DR_OK &&
              same_bits(v0, v1),
          "%s: the second-order drivers refused a sum of products and left "
          "%zu nodes (%zu before), the status %s, the value %.17g (%.17g "
          "before)", when, dr_tape_len(t), len, sn(dr_tape_status(t)), v1,
          v0);
}

/* programs off at order 2: second order works; the Hessian is the number
   of pairs of each two inputs (a square: 2), exactly where the values are
   moderate (the passes multiply by them), and so are H v and the sparse
   Hessian */
static void dot_second(const dotp *P, dr_tape *t, dr_real y,
                       const dr_real *in)
{
    size_t n = (size_t)P->nin;
    static double H[DOT_IN * DOT_IN], want[DOT_IN * DOT_IN],
        dense[DOT_IN * DOT_IN];
    memset(want, 0, sizeof want);
    for (int q = 0; q < P->n; q++) {
        int i = P->cin[1 + P->a[q]], j = P->cin[1 + P->b[q]];
        if (i >= 0 && j >= 0) {
            want[(size_t)i * n + (size_t)j] += 1.0;
            want[(size_t)j * n + (size_t)i] += 1.0;
        }
    }
    bool tame = dot_tame(P, P->x0);
    dr_status st = dr_hessian(t, y, n, in, H);
    CHECK(st == DR_OK, "dr_hessian of a sum of products, programs off: %s",
          sn(st));
    for (size_t e = 0; tame && e < n * n; e++)
        CHECK(H[e] == want[e], "dr_hessian of a sum of products, programs "
              "off [%zu]: %.17g, expected %.17g", e, H[e], want[e]);
    double w[DOT_IN], hv[DOT_IN];
    for (size_t i = 0; i < n; i++)
        w[i] = 1.0 + 0.5 * (double)i;
    st = dr_hvp(t, y, n, in, w, hv);
    CHECK(st == DR_OK, "dr_hvp of a sum of products, programs off: %s",
          sn(st));
    for (size_t i = 0; tame && i < n; i++) {
        double e = 0.0;
        for (size_t j = 0; j < n; j++)
            e += want[i * n + j] * w[j];
        CHECK(hv[i] == e, "dr_hvp of a sum of products, programs off [%zu]: "
              "%.17g, expected %.17g", i, hv[i], e);
    }
    dr_sparse Hs;
    memset(&Hs, 0, sizeof Hs);
    st = dr_sparse_hessian(t, y, n, in, &Hs);
    CHECK(st == DR_OK && Hs.rows == n && Hs.cols == n, "dr_sparse_hessian "
          "of a sum of products, programs off: %s (%zu x %zu)", sn(st),
          Hs.rows, Hs.cols);
    memset(dense, 0, sizeof dense);
    for (size_t i = 0; i < n; i++)
        for (size_t q = Hs.rowptr[i]; q < Hs.rowptr[i + 1]; q++)
            dense[i * n + Hs.colind[q]] = Hs.val[q];
    dr_sparse_free(&Hs);
    for (size_t e = 0; tame && e < n * n; e++)
        CHECK(dense[e] == want[e], "dr_sparse_hessian of a sum of products, "
              "programs off [%zu]: %.17g, expected %.17g", e, dense[e],
              want[e]);
}

/* the sum on tapes of its own (above) */
static void dot_tapes(const dotp *P)
{
    if (P->nin == 0)
        return;
    dr_tape *t = dr_tape_new(), *f = dr_tape_new(), *o1 = dr_tape_new(),
            *off = dr_tape_new();
    if (!t || !f || !o1 || !off) {
        dr_tape_free(t);
        dr_tape_free(f);
        dr_tape_free(o1);
        dr_tape_free(off);
        return;
    }
    CHECK(dr_tape_set_order(t, 2) == DR_OK && dr_fe_programs(t, 1) == DR_OK &&
              dr_tape_set_order(f, 2) == DR_OK &&
              dr_fe_programs(f, 1) == DR_OK &&
              dr_tape_set_order(off, 2) == DR_OK,
          "a sum of products: tapes of order 2");
    static dr_real in[DOT_IN], fin[DOT_IN], in1[DOT_IN], inoff[DOT_IN];
    static double g[DOT_IN], g1[DOT_IN], gf[DOT_IN], gt[DOT_IN];
    const char *wk = "a sum of products kept for replay";
    dr_idx from = dr_tape_mark(t);
    dr_real y = dot_record(P, t, DOT_PROGS, P->x0, in, wk);
    dot_gradient(wk, t, y, P, in, g);
    dot_formula(wk, P, P->x0, g);
    /* order 1: a node of the same partials a batch, the same bits */
    const char *w1 = "a sum of products at order 1";
    dr_real y1 = dot_record(P, o1, DOT_O1, P->x0, in1, w1);
    dot_gradient(w1, o1, y1, P, in1, g1);
    dot_same("a sum of products at order 1 against order 2 (programs on)",
             P, g1, g);
    /* programs off: second order works */
    const char *wo = "a sum of products at order 2, programs off";
    dr_real yo = dot_record(P, off, DOT_LOGGED, P->x0, inoff, wo);
    dot_gradient(wo, off, yo, P, inoff, gt);
    dot_formula(wo, P, P->x0, gt);
    if (yo.idx != DR_NONE)
        dot_second(P, off, yo, inoff);
    if (y.idx != DR_NONE)
        dot_refusals(wk, t, y, P, in, from);
    /* replay at the second point against a fresh recording there */
    dr_real rx[DOT_IN];
    double rv[DOT_IN];
    size_t nr = 0;
    dr_status st;
    if (P->range) {
        st = dr_replay_range(t, in[0].idx, (size_t)P->nin, P->x1);
    } else {
        for (int i = 0; i < P->nin; i++)
            if (P->given[i]) {
                rx[nr] = in[i];
                rv[nr++] = P->x1[i];
            }
        st = dr_replay(t, nr, rx, rv);
    }
    TRACE("  a sum of products replayed (%s, %zu inputs): %s\n",
          P->range ? "dr_replay_range" : "dr_replay",
          P->range ? (size_t)P->nin : nr, sn(st));
    CHECK(st == DR_OK, "dr_replay of a sum of products: %s", sn(st));
    const char *wf = "a sum of products recorded afresh at the second point";
    dr_real yf = dot_record(P, f, DOT_PROGS, P->x1, fin, wf);
    CHECK((yf.idx == DR_NONE) == (y.idx == DR_NONE), "%s: id %lld where "
          "the replayed tape's is %lld", wf, (long long)yf.idx,
          (long long)y.idx);
    if (y.idx != DR_NONE) {
        dot_value_is("dr_replay of a sum of products against a fresh "
                     "recording", t, y.idx, yf.val);
        dot_refusals("a sum of products replayed", t, y, P, in, from);
    }
    dot_gradient("a sum of products replayed", t, y, P, in, gt);
    dot_gradient(wf, f, yf, P, fin, gf);
    dot_same("dr_replay of a sum of products against a fresh recording", P,
             gt, gf);
    dot_formula(wf, P, P->x1, gf);
    if (P->back) { /* back to the first point: the first bits again */
        for (int i = 0; i < P->nin; i++)
            rv[i] = P->x0[i];
        st = dr_replay(t, (size_t)P->nin, in, rv);
        CHECK(st == DR_OK, "dr_replay of a sum of products back to the first "
              "point: %s", sn(st));
        if (y.idx != DR_NONE) {
            dot_value_is("dr_replay of a sum of products back to the "
                         "first point", t, y.idx, y.val);
        }
        dot_gradient("a sum of products replayed back", t, y, P, in, gt);
        dot_same("dr_replay of a sum of products back to the first point", P,
                 gt, g);
    }
    tape_free_counted(t, false, "a sum of products kept for replay");
    tape_free_counted(f, false, "a sum of products recorded afresh");
    tape_free_counted(o1, false, "a sum of products at order 1");
    tape_free_counted(off, false, "a sum of products, programs off");
}

/* k: DOT_FLAGS and 0x01 acc DR_NONE (s: the operand's value), 0x02
   dr_replay_range, 0x04 replayed back, 0x10 programs set on the root
   (at depth 0) to 0x08 */
static void op_dot(rd *r, unsigned k)
{
    level *lv = top();
    dr_tape *h = lv->h;
    static dotp P;
    static opnd pool[DOT_POOL];
    static dual cb[DOT_IN];
    P.n = dot_pairs(u8(r));
    opnd acc = operand(r, &cb[DOT_POOL]);
    if (k & 1) { /* DR_NONE, its value a constant */
        double s = acc.r.val;
        dual_const(&cb[DOT_POOL], s);
        acc = (opnd){dr_const(s), &cb[DOT_POOL], V_CONST};
    }
    P.m = 1 + (int)(u8(r) % DOT_POOL);
    for (int j = 0; j < P.m; j++)
        pool[j] = operand(r, &cb[j]);
    /* the pairs: a byte each for the first 16, then those bytes again,
       plus a step (a byte) a round: a step of 2 with an operand that
       moves in the high bits' 7 only makes a batch of constants followed
       by one that moves */
    unsigned sel[DOT_SEL];
    int nsel = P.n < DOT_SEL ? P.n : DOT_SEL;
    for (int i = 0; i < nsel; i++)
        sel[i] = u8(r);
    unsigned step = P.n > DOT_SEL ? u8(r) : 0;
    for (int i = 0; i < P.n; i++) {
        unsigned b = (sel[i % nsel] + step * (unsigned)(i / nsel)) & 0xff;
        P.a[i] = (uint8_t)((b & 7) % (unsigned)P.m);
        P.b[i] = (uint8_t)((b >> 3 & 7) % (unsigned)P.m);
    }
    int dst = (int)(u8(r) % NS);
    /* the inputs of the tapes of its own: the leaves that move, one for
       each id; at the second point some (all, for dr_replay_range) new */
    const opnd *leaf[DOT_IN];
    int firstc[DOT_IN];
    leaf[0] = &acc;
    for (int j = 0; j < P.m; j++)
        leaf[1 + j] = &pool[j];
    P.nin = 0;
    for (int c = 0; c <= P.m; c++) {
        P.cv[c] = leaf[c]->r.val;
        P.cin[c] = -1;
        if (leaf[c]->kind != V_VALID)
            continue;
        for (int e = 0; e < c && P.cin[c] < 0; e++)
            if (P.cin[e] >= 0 && leaf[e]->r.idx == leaf[c]->r.idx)
                P.cin[c] = P.cin[e];
        if (P.cin[c] < 0) {
            firstc[P.nin] = c;
            P.cin[c] = P.nin;
            P.x0[P.nin++] = P.cv[c];
        }
    }
    P.range = k & 2;
    P.back = k & 4;
    unsigned mask = u8(r);
    double nv[DOT_IN];
    for (int c = 0; c <= P.m; c++)
        nv[c] = rdv(r);
    for (int i = 0; i < P.nin; i++) {
        P.given[i] = P.range || (mask >> (firstc[i] & 7) & 1);
        P.x1[i] = P.given[i] ? nv[firstc[i]] : P.x0[i];
    }
    if ((k & 0x10) && S.depth == 0) {
        g_progs_on = (k & 0x08) != 0;
        dr_status pst = dr_fe_programs(S.T, g_progs_on);
        CHECK(pst == DR_OK, "dr_fe_programs of the root: %s", sn(pst));
    }
    /* the main tape */
    static dr_idx ia[DOT_MAX], ib[DOT_MAX];
    static double xa[DOT_MAX], xb[DOT_MAX];
    static term tm[1 + 2 * DOT_MAX];
    bool used[DOT_POOL] = {false}, fact = false;
    double v = acc.r.val;
    int nt = 0;
    tm[nt++] = (term){acc.d, 1.0, 0.0};
    for (int i = 0; i < P.n; i++) {
        const opnd *pa = &pool[P.a[i]], *pb = &pool[P.b[i]];
        ia[i] = pa->r.idx;
        xa[i] = pa->r.val;
        ib[i] = pb->r.idx;
        xb[i] = pb->r.val;
        double p = xa[i] * xb[i];
        v = v + p;
        tm[nt++] = (term){pa->d, xb[i], 0.0};
        tm[nt++] = (term){pb->d, xa[i], 0.0};
        used[P.a[i]] = used[P.b[i]] = true;
        fact |= pa->kind == V_VALID || pb->kind == V_VALID;
    }
    dr_idx mark = dr_tape_mark(h);
    dr_idx id = dr_fe_dot_rec(h, acc.r.idx, acc.r.val, (size_t)P.n, ia, xa,
                              ib, xb);
    TRACE("  dr_fe_dot_rec(acc %lld, %d pairs over %d operands, order %d, "
          "programs %s) -> %lld %.17g\n", (long long)acc.r.idx, P.n, P.m,
          lv->order, g_progs_on ? "on" : "off", (long long)id, v);
    dual ref, out;
    lin(&ref, v, nt, tm);
    dr_real res = {v, id};
    if (lv->order == 1 && !fact && acc.kind == V_VALID) {
        /* the value changed, the derivative did not: the sum so far */
        CHECK(id == acc.r.idx, "dr_fe_dot_rec of constant factors at order "
              "1 gave %lld, expected the sum so far %lld", (long long)id,
              (long long)acc.r.idx);
        check_sticky("dr_fe_dot_rec", h, &lv->hs);
        out = ref;
    } else {
        opnd ops[DOT_IN];
        int nops = 0;
        ops[nops++] = acc;
        for (int j = 0; j < P.m; j++)
            if (used[j])
                ops[nops++] = pool[j];
        sctx c = main_ctx();
        finish_scalar(&c, "dr_fe_dot_rec", res, &ref, nops, ops, 0.0, false,
                      &out);
    }
    if (lv->order == 2 && id != DR_NONE) {
        /* with programs on, statements: no second-order rule */
        if (g_progs_on) {
            dr_idx hi = dr_tape_mark(h);
            bad_add(&lv->bad, mark, hi > id ? hi : id + 1);
        }
        if (S.depth == 0) {
            double got = -1234.5;
            dr_status st = dr_value(h, id, &got);
            CHECK(st == DR_OK && same_bits(got, v), "dr_value of a sum of %d "
                  "products (order 2, programs %s): %s, %.17g, expected "
                  "%.17g (the left fold)", P.n, g_progs_on ? "on" : "off",
                  sn(st), got, v);
        }
    }
    put_s(dst, res, &out, -1);
    dot_tapes(&P);
}
