/*
 * fuzz_statements.c - statements and n-ary sums on the main tape
 * (tests/fuzz/README.md, "Statements"): dr_ex, dr_ex_const, dr_ex_add,
 * dr_ex_sub, dr_ex_mul, dr_ex_div, dr_ex_neg, dr_ex_scale, dr_ex_fn and
 * dr_rec_stmt; dr_sum_init, dr_sum_add, dr_sum_mul and dr_rec_sum; and
 * dr_sumn, dr_sumn_id at first order (at second order:
 * fuzz_second_order.c; replayed: fuzz_replay.c).
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

void op_sumn(rd *r)
{
    unsigned k = u8(r);
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
