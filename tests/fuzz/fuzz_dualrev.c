/*
 * fuzz_dualrev.c - differential fuzz target for libdualrev.
 *
 * The input bytes are decoded into a program of API calls on one tape
 * (scalar operations, inputs, user-recorded nodes, the inline recorder,
 * small arrays, fork-join, seeds, sweeps, gradients, clears, invalid ids and
 * sizes; and, in the files beside this one, forward and vector modes,
 * second order, checkpointed loops, external functions, a second tape,
 * replay, statements and n-ary sums).
 * Next to the engine the harness runs its own forward-mode reference
 * (fuzz_ref.c): every value it knows carries a tangent vector over up to NT
 * input directions, with derivative rules written from calculus.  Every
 * gradient, Jacobian or adjoint the engine returns with DR_OK is compared
 * with the tangents; every status (returned or sticky) is compared with what
 * the header promises.  A mismatch, like a crash or undefined behaviour, is a
 * finding: the harness prints it and aborts.
 *
 * This file holds the model (fuzz_model.h), the decoder and the operations
 * of the first-order API.  Built two ways (tests/fuzz/fuzz.mk):
 *   - with -fsanitize=fuzzer: LLVMFuzzerTestOneInput is the libFuzzer entry;
 *   - with -DFUZZ_DRIVER: a main() that runs every file named on the command
 *     line (directories: every file in them), for regression runs with gcc.
 */
#include "fuzz_model.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct state S;
bool g_act;

/* ------------------------------------------------------ the input reader */

unsigned u8(rd *r) { return r->i < r->n ? r->p[r->i++] : 0; }
unsigned u16(rd *r) { return u8(r) | u8(r) << 8; }
uint64_t u64(rd *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)u8(r) << (8 * i);
    return v;
}
bool eof(const rd *r) { return r->i >= r->n; }

static const double vtab[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 0.25,
    0.1, -0.7, 1.5, 10.0, -10.0, 100.0, 1e-8, -1e-8, 1e-300, 1e300,
    -1e300, INFINITY, -INFINITY, NAN, 1.5707963267948966, 3.141592653589793,
    700.0, -745.0, 1e16, 0.9999999, -0.99999, 4.9e-324, DBL_MAX, 30.0,
    -30.0, 0.75, 1e-160, 40.0};
#define NVTAB (sizeof vtab / sizeof vtab[0])

/* a double: mostly small multiples of 1/8, sometimes special values, rarely
   raw bits */
double rdv(rd *r)
{
    unsigned b = u8(r);
    if (b < 160)
        return ((double)b - 80.0) / 16.0;
    if (b < 250)
        return vtab[(b - 160) % NVTAB];
    uint64_t bits = u64(r);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* a finite, moderate weight for seeds */
double rdw(rd *r)
{
    static const double w[] = {1.0, -1.0, 0.5, 2.0, -3.0, 0.0, 1e-3, 7.0};
    return w[u8(r) % 8];
}

/* ------------------------------------------------------------- helpers */

level *top(void) { return &S.L[S.depth]; }

int new_job(dmask base)
{
    if (S.njobs >= MAXJOBS)
        return -1;
    int j = S.njobs++;
    S.anc[j] = base | (dmask)1 << j;
    return j;
}

static bool visible_job(int job) { return S.anc[top()->job] >> job & 1; }

bool svisible(const sslot *x)
{
    return x->live && x->epoch == S.epoch && visible_job(x->job);
}
bool avisible(const aslot *x)
{
    return x->live && !x->failed && x->epoch == S.epoch &&
           visible_job(x->job);
}

/* remember an id the engine handed out; ids must never repeat */
void note_id(dr_idx id)
{
    if (id == DR_NONE)
        return;
    for (int i = 0; i < S.nids; i++)
        CHECK(S.ids[i] != id, "id %lld handed out twice", (long long)id);
    if (S.nids < MAXIDS)
        S.ids[S.nids++] = id;
    /* the largest scalar id (array ids live in their own range) */
    if (id > S.max_id && !((uint64_t)id >> 62))
        S.max_id = id;
}

bool known_id(dr_idx id)
{
    for (int i = 0; i < S.nids; i++)
        if (S.ids[i] == id)
            return true;
    return false;
}

/* the model's view of a failure: the first one sticks */
void stick(hstat *h, dr_status st)
{
    if (h->st == DR_OK)
        h->st = st;
}

/* after a call that may fail with one of `allowed` (bit per status, bit 0:
   may also succeed): the handle's sticky status must agree */
void sync_status(const char *what, dr_tape *h, hstat *hs,
                        unsigned allowed)
{
    dr_status now = dr_tape_status(h);
    if (hs->st != DR_OK) {
        CHECK(now == hs->st, "%s: sticky status %s, expected it to stay %s",
              what, sn(now), sn(hs->st));
        return;
    }
    CHECK(allowed >> now & 1, "%s: sticky status %s not among the allowed "
          "(mask %#x)", what, sn(now), allowed);
    hs->st = now;
}

void check_sticky(const char *what, dr_tape *h, const hstat *hs)
{
    dr_status now = dr_tape_status(h);
    CHECK(now == hs->st, "%s: sticky status %s, model %s", what, sn(now),
          sn(hs->st));
}

/* pick a visible scalar slot near index k, or -1 */
int pick_s(unsigned k)
{
    for (int i = 0; i < NS; i++) {
        int j = (int)((k + (unsigned)i) % NS);
        if (svisible(&S.s[j]))
            return j;
    }
    return -1;
}

int pick_a(unsigned k)
{
    for (int i = 0; i < NA; i++) {
        int j = (int)((k + (unsigned)i) % NA);
        if (avisible(&S.a[j]))
            return j;
    }
    return -1;
}

int pick_input(unsigned k)
{
    for (int i = 0; i < NS; i++) {
        int j = (int)((k + (unsigned)i) % NS);
        if (svisible(&S.s[j]) && S.s[j].dim >= 0)
            return j;
    }
    return -1;
}

/* an operand from one byte: a slot (when one is visible) or a constant */
opnd operand(rd *r, dual *cbuf)
{
    unsigned b = u8(r);
    opnd o;
    int j = (b & 0xe0) == 0xe0 ? -1 : pick_s(b);
    if (j < 0) {
        double v = rdv(r);
        dual_const(cbuf, v);
        o.r = dr_const(v);
        o.d = cbuf;
        o.kind = V_CONST;
        return o;
    }
    o.r = S.s[j].r;
    o.d = &S.s[j].d;
    o.kind = S.s[j].r.idx == DR_NONE ? V_CONST : V_VALID;
    return o;
}

/* an operand with a wrong id: one from before a clear, DR_NONE-like
   negatives, random bits, or ids far beyond anything handed out */
opnd bad_operand(rd *r, dual *cbuf)
{
    double v = rdv(r);
    dual_const(cbuf, v);
    opnd o = {{v, DR_NONE}, cbuf, V_INVALID};
    unsigned k = u8(r) % 6;
    switch (k) {
    case 0:
        if (S.nstale) {
            o.r.idx = S.stale[u8(r) % S.nstale];
            break;
        }
        /* fall through */
    case 1: o.r.idx = -2 - (dr_idx)(u8(r)); break;
    case 2: o.r.idx = INT64_MIN + (dr_idx)u8(r); break;
    case 3: o.r.idx = S.max_id + ((dr_idx)1 << 40) + (dr_idx)u16(r); break;
    case 4: o.r.idx = INT64_MAX - (dr_idx)u8(r); break;
    default: {
        dr_idx id = (dr_idx)u64(r);
        o.r.idx = id;
        if (id == DR_NONE) {
            o.kind = V_CONST;
        } else if (id > S.max_id + ((dr_idx)1 << 32) || id < -1) {
            /* (ids a little beyond the last one handed out may be
               reserved by a chunk: those are V_UNKNOWN below) */
            o.kind = V_INVALID;
        } else {
            /* an id in range: valid if the harness knows it as a visible
               scalar, else the engine may accept it (gaps at the end of
               chunks, siblings' ranges) or not */
            o.kind = V_UNKNOWN;
            for (int i = 0; i < NS; i++)
                if (svisible(&S.s[i]) && S.s[i].r.idx == id) {
                    o.kind = V_VALID;
                    o.d = &S.s[i].d;
                    break;
                }
            for (int i = 0; i < S.nstale; i++)
                if (S.stale[i] == id)
                    o.kind = V_INVALID;
        }
        /* an array id as a scalar: op_misuse's business, not here */
        for (int i = 0; i < NA; i++)
            if (S.a[i].live && S.a[i].h.idx == id)
                o.kind = -1;
        for (int i = 0; i < S.nids; i++)
            if (S.ids[i] == id && ((uint64_t)id >> 62))
                o.kind = -1;
        break;
    }
    }
    return o;
}

/* -------------------------------------------------- scalar operations */

/* the engine side of a scalar operation */
dr_real eng_unary(dr_tape *t, int f, dr_real a)
{
    switch (f) {
    case U_NEG: return dr_neg(t, a);
    case U_SQRT: return dr_sqrt(t, a);
    case U_CBRT: return dr_cbrt(t, a);
    case U_EXP: return dr_exp(t, a);
    case U_EXPM1: return dr_expm1(t, a);
    case U_LOG: return dr_log(t, a);
    case U_LOG1P: return dr_log1p(t, a);
    case U_SIN: return dr_sin(t, a);
    case U_COS: return dr_cos(t, a);
    case U_TAN: return dr_tan(t, a);
    case U_ASIN: return dr_asin(t, a);
    case U_ACOS: return dr_acos(t, a);
    case U_ATAN: return dr_atan(t, a);
    case U_SINH: return dr_sinh(t, a);
    case U_COSH: return dr_cosh(t, a);
    case U_TANH: return dr_tanh(t, a);
    case U_ABS: return dr_abs(t, a);
    case U_ERF: return dr_erf(t, a);
    case U_SIGMOID: return dr_sigmoid(t, a);
    case U_RELU: return dr_relu(t, a);
    default: return dr_mul(t, a, a); /* square */
    }
}

dr_real eng_binary(dr_tape *t, int f, dr_real a, dr_real b)
{
    switch (f) {
    case B_ADD: return dr_add(t, a, b);
    case B_SUB: return dr_sub(t, a, b);
    case B_MUL: return dr_mul(t, a, b);
    case B_DIV: return dr_div(t, a, b);
    case B_ATAN2: return dr_atan2(t, a, b);
    case B_POW: return dr_pow(t, a, b);
    case B_MIN: return dr_min(t, a, b);
    default: return dr_hypot(t, a, b);
    case B_MAX: return dr_max(t, a, b);
    }
}

void ctx_note(sctx *c, dr_idx id)
{
    if (!c->ids) {
        note_id(id);
    } else if (id != DR_NONE && *c->nids < c->cap) {
        c->ids[(*c->nids)++] = id;
    }
}

/*
 * The common tail of every scalar-valued operation: the engine returned res;
 * ref is the reference result (value and tangent) computed from the
 * operands' values.  Checks the value, the id and the status, and leaves the
 * model's result in *out (value: the engine's).
 */
void finish_scalar(sctx *c, const char *what, dr_real res,
                          const dual *ref, int n, const opnd *ops,
                          double scale, bool nan_args, dual *out)
{
    int invalid = 0, unknown = 0, active = 0;
    TRACE("  %s(%lld, %lld) -> %lld\n", what, (long long)ops[0].r.idx,
          n > 1 ? (long long)ops[1].r.idx : -9LL, (long long)res.idx);
    for (int i = 0; i < n; i++) {
        invalid += ops[i].kind == V_INVALID;
        unknown += ops[i].kind == V_UNKNOWN;
        active += ops[i].kind == V_VALID;
    }
    cmp_value(what, res.val, ref->v, scale, nan_args);
    if (invalid) {
        CHECK(res.idx == DR_NONE, "%s with an invalid id gave id %lld", what,
              (long long)res.idx);
        stick(c->hs, DR_EINVAL);
        check_sticky(what, c->h, c->hs);
        dual_const(out, res.val);
        return;
    }
    if (unknown) {
        if (res.idx == DR_NONE) {
            stick(c->hs, DR_EINVAL);
            check_sticky(what, c->h, c->hs);
            dual_const(out, res.val);
        } else {
            ctx_note(c, res.idx);
            check_sticky(what, c->h, c->hs);
            dual_unknown(out, res.val);
        }
        return;
    }
    check_sticky(what, c->h, c->hs);
    if (!active) {
        CHECK(res.idx == DR_NONE, "%s of constants gave id %lld", what,
              (long long)res.idx);
        dual_const(out, res.val);
        return;
    }
    CHECK(res.idx != DR_NONE, "%s of active operands gave a constant (status "
          "%s)", what, sn(dr_tape_status(c->h)));
    ctx_note(c, res.idx);
    *out = *ref;
    out->v = res.val;
}

void do_unary(sctx *c, int f, opnd a, dual *out, dr_real *rout)
{
    dr_real res = eng_unary(c->h, f, a.r);
    double y, p, dp;
    ref_unary(f, a.r.val, &y, &p, &dp);
    dual ref;
    lin1(&ref, y, a.d, p, dp);
    finish_scalar(c, unary_name[f], res, &ref, 1, &a, 0.0, isnan(a.r.val),
                  out);
    *rout = res;
}

void do_binary(sctx *c, int f, opnd a, opnd b, dual *out,
                      dr_real *rout)
{
    dr_real res = eng_binary(c->h, f, a.r, b.r);
    double y, pa, dpa, pb, dpb;
    ref_binary(f, a.r.val, b.r.val, &y, &pa, &dpa, &pb, &dpb);
    dual ref;
    /* (the same value twice is two edges: the sweep adds both, and the
       size of each, not of their sum, bounds its rounding) */
    lin2(&ref, y, a.d, pa, dpa, b.d, pb, dpb);
    ref_binary_rec(f, a.r, b.r, a.d, &ref);
    opnd ops[2] = {a, b};
    double scale = (f == B_ADD || f == B_SUB) ? fabs(a.r.val) + fabs(b.r.val)
                                              : 0.0;
    finish_scalar(c, binary_name[f], res, &ref, 2, ops, scale,
                  isnan(a.r.val) || isnan(b.r.val), out);
    *rout = res;
}

void do_powi(sctx *c, opnd a, int n, dual *out, dr_real *rout)
{
    dr_real res = dr_powi(c->h, a.r, n);
    double x = a.r.val;
    double y = pow(x, (double)n);
    double p = n == 0 ? 0.0 : (double)n * pow(x, (double)(n - 1));
    double alt = (n != 0 && x != 0 && isfinite(x)) ? (double)n * y / x : NAN;
    dual ref;
    lin1(&ref, y, a.d, p, disagree(p, alt) + 1e-13 * fabs(p));
    finish_scalar(c, "powi", res, &ref, 1, &a, 0.0, isnan(x), out);
    *rout = res;
}

/* store a scalar result in slot j */
void put_s(int j, dr_real r, const dual *d, int dim)
{
    sslot *x = &S.s[j];
    x->live = true;
    x->epoch = S.epoch;
    x->job = top()->job;
    x->dim = dim;
    x->r = r;
    x->d = *d;
    S.last_slot = j;
    TRACE("  s%d = id %lld val %.17g dim %d s %#llx w %#llx\n", j,
          (long long)r.idx, r.val, dim, (unsigned long long)d->s,
          (unsigned long long)d->w);
    if (g_trace > 0)
        for (int q = 0; q < NT; q++)
            if (d->s >> q & 1)
                TRACE("      d%d: t %.17g a %.3g\n", q, d->t[q], d->a[q]);
}

sctx main_ctx(void)
{
    sctx c = {top()->h, &top()->hs, NULL, NULL, 0};
    return c;
}

int new_dim(void) { return S.ndim < NT ? S.ndim++ : -1; }

void level_start(level *lv, dr_tape *h)
{
    lv->h = h;
    lv->order = 1;
    lv->first = lv->o1_from = dr_tape_mark(h);
    memset(&lv->bad, 0, sizeof lv->bad);
}

/* a child's level: it starts at its parent's order at the fork */
static void child_start(level *lv, dr_tape *h, const level *parent)
{
    level_start(lv, h);
    lv->order = parent->korder;
    if (lv->order == 2)
        lv->o1_from = DR_NONE;
}

/* a child ends: a parent of order 2 takes in its record at the join, so
   the child's nodes without a rule are the parent's.  Where they lie
   among its siblings' ids is not followed: not known from then on */
static void child_end(level *parent, const level *kid)
{
    if (kid->bad.n || kid->bad.lost ||
        (kid->order == 1 && kid->o1_from != DR_NONE))
        parent->bad.lost = true;
}

/* ------------------------------------------------------- op: inputs */

static void op_input(rd *r)
{
    double v = rdv(r);
    int j = (int)(u8(r) % NS);
    dr_real x = dr_input(top()->h, v);
    CHECK(x.val == v || (isnan(x.val) && isnan(v)), "dr_input changed the "
          "value");
    CHECK(x.idx != DR_NONE, "dr_input failed (%s)",
          sn(dr_tape_status(top()->h)));
    note_id(x.idx);
    check_sticky("dr_input", top()->h, &top()->hs);
    dual d;
    int dim = new_dim();
    dual_input(&d, v, dim);
    put_s(j, x, &d, dim);
}

static void op_inputs(rd *r)
{
    unsigned k = u8(r);
    int n = (int)(k % 6);
    double vals[8] = {0};
    dr_real out[8];
    for (int i = 0; i < n; i++)
        vals[i] = rdv(r);
    dr_idx first = DR_NONE;
    dr_status st;
    if (k & 0x40) {
        st = dr_input_range(top()->h, (size_t)n, &first);
        for (int i = 0; i < n; i++)
            out[i] = (dr_real){vals[i], first + i};
    } else {
        st = dr_inputs(top()->h, (size_t)n, vals, out);
        first = n ? out[0].idx : DR_NONE;
        for (int i = 0; i < n; i++)
            CHECK(out[i].val == vals[i] || isnan(vals[i]),
                  "dr_inputs value %d", i);
    }
    CHECK(st == DR_OK, "dr_inputs/dr_input_range(%d): %s", n, sn(st));
    if (n == 0) {
        CHECK(first == DR_NONE || !(k & 0x40), "dr_input_range(0) gave first "
              "%lld", (long long)first);
        return;
    }
    check_sticky("dr_inputs", top()->h, &top()->hs);
    group *g = S.ngrp < 4 ? &S.grp[S.ngrp++] : &S.grp[k % 4];
    g->epoch = S.epoch;
    g->first = first;
    g->n = n;
    for (int i = 0; i < n; i++) {
        CHECK(out[i].idx == first + i, "dr_inputs ids not consecutive");
        note_id(out[i].idx);
        int dim = new_dim();
        g->dim[i] = dim;
        dual d;
        dual_input(&d, vals[i], dim);
        put_s((int)((k + (unsigned)i * 7) % NS), out[i], &d, dim);
    }
}

static void op_const(rd *r)
{
    double v = rdv(r);
    dr_real x = dr_const(v);
    CHECK(x.idx == DR_NONE, "dr_const has an id");
    dual d;
    dual_const(&d, v);
    put_s((int)(u8(r) % NS), x, &d, -1);
}

/* ------------------------------------------------------ op: arithmetic */

static void op_unary(rd *r)
{
    int f = (int)(u8(r) % N_UNARY);
    dual cb, out;
    opnd a = operand(r, &cb);
    int j = (int)(u8(r) % NS);
    sctx c = main_ctx();
    dr_real res;
    do_unary(&c, f, a, &out, &res);
    put_s(j, res, &out, -1);
}

static void op_binary(rd *r)
{
    int f = (int)(u8(r) % N_BINARY);
    dual cb1, cb2, out;
    opnd a = operand(r, &cb1);
    opnd b = operand(r, &cb2);
    int j = (int)(u8(r) % NS);
    sctx c = main_ctx();
    dr_real res;
    do_binary(&c, f, a, b, &out, &res);
    put_s(j, res, &out, -1);
}

static void op_powi(rd *r)
{
    dual cb, out;
    opnd a = operand(r, &cb);
    int n = (int)(int8_t)u8(r) % 12;
    int j = (int)(u8(r) % NS);
    sctx c = main_ctx();
    dr_real res;
    do_powi(&c, a, n, &out, &res);
    put_s(j, res, &out, -1);
}

/* wrong ids: an operation whose operand is not on the tape */
static void op_bad_id(rd *r)
{
    dual cb1, cb2, out;
    opnd a = bad_operand(r, &cb1);
    if (a.kind < 0)
        return; /* an array id as a scalar: see op_arr_as_scalar */
    opnd b = operand(r, &cb2);
    unsigned k = u8(r);
    sctx c = main_ctx();
    dr_real res;
    if (k & 1)
        do_binary(&c, (int)(k >> 1) % N_BINARY, b, a, &out, &res);
    else if (k & 2)
        do_binary(&c, (int)(k >> 2) % N_BINARY, a, b, &out, &res);
    else
        do_unary(&c, (int)(k >> 2) % N_UNARY, a, &out, &res);
    put_s((int)(u8(r) % NS), res, &out, -1);
}

/* --------------------------------------------- op: user-recorded nodes */

static void op_record(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    dr_tape *h = lv->h;
    dual cb[6];
    opnd ops[6];
    double part[6];
    dr_idx args[6];
    int n = 0;
    dr_idx id;
    dual ref;
    unsigned kind = k % 5;
    if (kind == 0) {
        id = dr_record0(h);
        dual_const(&ref, 0.0);
    } else {
        n = kind == 1 ? 1 : kind == 2 ? 2 : (int)(u8(r) % 7);
        if (kind == 4)
            n = 0;
        for (int i = 0; i < n; i++) {
            ops[i] = (u8(r) & 0xf) == 0xf ? bad_operand(r, &cb[i])
                                          : operand(r, &cb[i]);
            if (ops[i].kind < 0)
                return;
            part[i] = rdv(r);
            args[i] = ops[i].r.idx;
        }
        term tm[6] = {{NULL, 0, 0}};
        for (int i = 0; i < n; i++) {
            tm[i].x = ops[i].d;
            tm[i].p = part[i];
            tm[i].dp = 0.0;
        }
        lin(&ref, 0.0, n, tm);
        if (kind == 1)
            id = dr_record1(h, args[0], part[0]);
        else if (kind == 2)
            id = dr_record2(h, args[0], part[0], args[1], part[1]);
        else
            id = dr_recordn(h, (size_t)n, args, part);
    }
    int invalid = 0, unknown = 0;
    for (int i = 0; i < n; i++) {
        invalid += ops[i].kind == V_INVALID;
        unknown += ops[i].kind == V_UNKNOWN;
    }
    dual out;
    if (invalid || (unknown && id == DR_NONE)) {
        CHECK(id == DR_NONE, "dr_record with an invalid id gave an id");
        stick(&lv->hs, DR_EINVAL);
        dual_const(&out, 0.0);
    } else {
        CHECK(id != DR_NONE, "dr_record%s failed: %s",
              kind == 0 ? "0" : "1/2/n", sn(dr_tape_status(h)));
        note_id(id);
        if (unknown)
            dual_unknown(&out, 0.0);
        else
            out = ref;
    }
    check_sticky("dr_record", h, &lv->hs);
    /* the node's value is the caller's business: take a fuzzed one */
    double v = rdv(r);
    out.v = v;
    dr_real x = {v, id};
    put_s((int)(u8(r) % NS), x, &out, -1);
}

/* ------------------------------------------------------- op: recorder */

static void rec_end_check(void)
{
    if (!S.rec_open)
        return;
    dr_status st = dr_rec_end(&S.rec);
    S.rec_open = false;
    CHECK(st == top()->hs.st, "dr_rec_end returned %s, sticky model %s",
          sn(st), sn(top()->hs.st));
    check_sticky("dr_rec_end", top()->h, &top()->hs);
}

static void op_rec(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    unsigned what = k % 8;
    if (what == 0) { /* begin */
        if (S.rec_open) {
            /* the same recorder begun again */
            dr_status st = dr_rec_begin(lv->h, &S.rec);
            CHECK(st == DR_EBUSY, "dr_rec_begin twice on one recorder: %s",
                  sn(st));
            check_sticky("dr_rec_begin twice", lv->h, &lv->hs);
            return;
        }
        /* (at order 2 too: its operations are the tape's, logged) */
        dr_status st = dr_rec_begin(lv->h, &S.rec);
        CHECK(st == DR_OK, "dr_rec_begin (order %d): %s", lv->order, sn(st));
        S.rec_open = true;
        return;
    }
    if (what == 1) {
        rec_end_check();
        return;
    }
    if (what == 2) { /* a second recorder on a busy handle */
        dr_rec r2;
        dr_status st = dr_rec_begin(lv->h, &r2);
        if (!S.rec_open) {
            CHECK(st == DR_OK, "dr_rec_begin (second recorder): %s", sn(st));
            dr_status e = dr_rec_end(&r2);
            CHECK(e == lv->hs.st, "dr_rec_end: %s, model %s", sn(e),
                  sn(lv->hs.st));
            return;
        }
        CHECK(st == DR_EBUSY, "a second recorder on one handle: %s", sn(st));
        /* its operations give constants and touch no status */
        dual cb1, cb2;
        opnd a = operand(r, &cb1), b = operand(r, &cb2);
        dr_real y = dr_rec_mul(&r2, a.r, b.r);
        CHECK(y.idx == DR_NONE, "a failed recorder recorded id %lld",
              (long long)y.idx);
        cmp_value("failed recorder mul", y.val, a.r.val * b.r.val, 0.0,
                  false);
        CHECK(dr_rec_end(&r2) == DR_EINVAL, "dr_rec_end of a failed "
              "recorder");
        check_sticky("second recorder", lv->h, &lv->hs);
        return;
    }
    /* operations through the recorder (or through the tape when none is
       open) */
    dual cb1, cb2, out;
    opnd a = (k & 0x80) ? bad_operand(r, &cb1) : operand(r, &cb1);
    if (a.kind < 0)
        return;
    opnd b = operand(r, &cb2);
    if (k & 0x40) {
        opnd t = a;
        a = b;
        b = t;
    }
    int j = (int)(u8(r) % NS);
    sctx c = main_ctx();
    if (!S.rec_open) {
        dr_real res;
        int f = what == 3 ? B_ADD : what == 4 ? B_SUB : what == 5 ? B_MUL
                                                                    : B_DIV;
        do_binary(&c, f, a, b, &out, &res);
        put_s(j, res, &out, -1);
        return;
    }
    dr_real res;
    dual ref;
    double y = 0, pa = 0, pb = 0, dpa = 0, dpb = 0;
    int nops = 2;
    const char *nm = "rec";
    switch (what) {
    case 3: res = dr_rec_add(&S.rec, a.r, b.r);
        ref_binary(B_ADD, a.r.val, b.r.val, &y, &pa, &dpa, &pb, &dpb);
        nm = "rec_add"; break;
    case 4: res = dr_rec_sub(&S.rec, a.r, b.r);
        ref_binary(B_SUB, a.r.val, b.r.val, &y, &pa, &dpa, &pb, &dpb);
        nm = "rec_sub"; break;
    case 5: res = dr_rec_mul(&S.rec, a.r, b.r);
        ref_binary(B_MUL, a.r.val, b.r.val, &y, &pa, &dpa, &pb, &dpb);
        nm = "rec_mul"; break;
    case 6:
        if (k & 0x20) {
            res = dr_rec_div(&S.rec, a.r, b.r);
            ref_binary(B_DIV, a.r.val, b.r.val, &y, &pa, &dpa, &pb, &dpb);
            nm = "rec_div";
        } else {
            res = dr_rec_neg(&S.rec, a.r);
            y = -a.r.val;
            pa = -1;
            nops = 1;
            nm = "rec_neg";
        }
        break;
    default: { /* user partials */
        double v = rdv(r), p = rdv(r), q = rdv(r);
        if (k & 0x20) {
            res = dr_rec_record1(&S.rec, v, a.r, p);
            nops = 1;
            nm = "rec_record1";
        } else {
            res = dr_rec_record2(&S.rec, v, a.r, p, b.r, q);
            nm = "rec_record2";
        }
        y = v;
        pa = p;
        pb = q;
        break;
    }
    }
    if (nops == 1)
        lin1(&ref, y, a.d, pa, dpa);
    else if (a.d == b.d)
        lin2(&ref, y, a.d, pa, dpa, a.d, pb, dpb);
    else
        lin2(&ref, y, a.d, pa, dpa, b.d, pb, dpb);
    opnd ops[2] = {a, b};
    finish_scalar(&c, nm, res, &ref, nops, ops,
                  fabs(a.r.val) + fabs(b.r.val),
                  isnan(a.r.val) || isnan(b.r.val), &out);
    put_s(j, res, &out, -1);
}

/* ---------------------------------------------------------- op: arrays */

/* store an array result */
aslot *put_a(int j, dr_arr h, int rank, int64_t rows, int64_t cols)
{
    aslot *x = &S.a[j];
    memset(x, 0, sizeof *x);
    x->live = true;
    x->epoch = S.epoch;
    x->job = top()->job;
    x->h = h;
    x->rank = rank;
    x->rows = rows;
    x->cols = cols;
    x->n = rows * cols;
    x->active = g_act;
    TRACE("  a%d = id %lld rank %d %lldx%lld active %d\n", j,
          (long long)h.idx, rank, (long long)rows, (long long)cols,
          (int)g_act);
    for (int i = 0; i < MAXE; i++)
        x->dim[i] = -1;
    return x;
}

void put_failed_a(int j)
{
    aslot *x = put_a(j, (dr_arr){DR_NONE, 0, 0, 0, NULL}, 0, 0, 0);
    x->failed = true;
}

/* an array op the engine must refuse with one of `allowed` */
void arr_expect_fail(const char *what, dr_arr h, unsigned allowed)
{
    CHECK(h.idx == DR_NONE && h.rank == 0 && h.val == NULL,
          "%s: expected a failure, got id %lld rank %d", what,
          (long long)h.idx, (int)h.rank);
    sync_status(what, top()->h, &top()->hs, allowed);
    CHECK(top()->hs.st != DR_OK, "%s failed without a status", what);
}

/* an array op the engine must accept: shape and id; values compared by the
   caller */
static void arr_expect_ok(const char *what, dr_arr h, int rank, int64_t rows,
                          int64_t cols)
{
    CHECK(h.idx != DR_NONE, "%s failed: %s", what,
          sn(dr_tape_status(top()->h)));
    CHECK(h.rank == rank && h.rows == rows && h.cols == cols,
          "%s: shape rank %d %lldx%lld, expected rank %d %lldx%lldx", what,
          (int)h.rank, (long long)h.rows, (long long)h.cols, rank,
          (long long)rows, (long long)cols);
    CHECK(rows * cols == 0 || h.val, "%s: no values", what);
    CHECK(dr_arr_active(top()->h, h.idx) == (g_act ? 1 : 0),
          "%s: dr_arr_active %d, expected %d", what,
          dr_arr_active(top()->h, h.idx), (int)g_act);
    note_id(h.idx);
    check_sticky(what, top()->h, &top()->hs);
}

static bool any_nonfinite(const double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return true;
    return false;
}

/* set the values of result x from the engine after comparing each with the
   reference ref[i] (scale[i] for sums) */
static void arr_take(const char *what, aslot *x, dual *ref, const double *sc,
                     bool nan_in)
{
    for (int64_t i = 0; i < x->n; i++) {
        cmp_value(what, x->h.val[i], ref[i].v, sc ? sc[i] : 0.0, nan_in);
        x->el[i] = ref[i];
        x->el[i].v = x->h.val[i];
        TRACE("    [%lld] %.17g s %#llx w %#llx\n", (long long)i,
              x->el[i].v, (unsigned long long)x->el[i].s,
              (unsigned long long)x->el[i].w);
        if (g_trace > 0)
            for (int q = 0; q < NT; q++)
                if (x->el[i].s >> q & 1)
                    TRACE("      d%d: t %.17g a %.3g\n", q, x->el[i].t[q],
                          x->el[i].a[q]);
    }
    if (any_nonfinite(x->h.val, x->n))
        S.poison = true;
}

static bool arr_nan_in(const aslot *x)
{
    for (int64_t i = 0; i < x->n; i++)
        if (!isfinite(x->el[i].v))
            return true;
    return false;
}

static void op_arr_create(rd *r)
{
    unsigned k = u8(r);
    int j = (int)(u8(r) % NA);
    bool input = k & 1;
    int rank = (k >> 1 & 1) ? 2 : 1;
    int64_t rows = u8(r) % 5, cols = rank == 2 ? u8(r) % 5 : 1;
    if (rank == 1)
        rows = u8(r) % 9;
    double data[MAXE];
    int64_t n = rows * cols;
    for (int64_t i = 0; i < n; i++)
        data[i] = rdv(r);
    unsigned bad = (k >> 2) % 12;
    if (bad == 1 || bad == 2) { /* huge, negative or a wrong rank */
        int64_t big[] = {(int64_t)1 << 31, -1, INT64_MAX, INT64_MIN,
                         (int64_t)INT32_MAX + 5, -((int64_t)1 << 40)};
        int64_t B = big[u8(r) % 6];
        int rk = rank;
        int64_t rr = rows, cc = cols;
        unsigned allowed = ST(DR_ERANGE);
        switch (u8(r) % 4) {
        case 0: rr = B; break;
        case 1: rk = 2; cc = B; break;
        case 2: rk = (int)(u8(r) % 5) + 3; allowed = ST(DR_ESHAPE); break;
        default: rk = 1; cc = 2 + u8(r) % 3; allowed = ST(DR_ESHAPE); break;
        }
        dr_arr h = input ? dr_arr_input(top()->h, rk, rr, cc, data)
                         : dr_arr_const(top()->h, rk, rr, cc, data);
        arr_expect_fail("dr_arr_input (bad shape)", h, allowed);
        put_failed_a(j);
        return;
    }
    dr_arr h;
    if (bad == 3 && n > 0) {
        h = input ? dr_arr_input_ref(top()->h, rank, rows, cols, NULL)
                  : dr_arr_const_ref(top()->h, rank, rows, cols, NULL);
        arr_expect_fail("dr_arr_input (NULL data)", h, ST(DR_EINVAL));
        put_failed_a(j);
        return;
    }
    if (bad == 4) {
        dr_idx id = input ? dr_arr_input_id(top()->h, rank, rows, cols, data)
                          : dr_arr_const_id(top()->h, rank, rows, cols, data);
        h = dr_arr_get(top()->h, id);
    } else {
        h = input ? dr_arr_input(top()->h, rank, rows, cols, data)
                  : dr_arr_const(top()->h, rank, rows, cols, data);
    }
    g_act = input;
    arr_expect_ok("dr_arr_input", h, rank, rows, cols);
    aslot *x = put_a(j, h, rank, rows, cols);
    x->input = input;
    for (int64_t i = 0; i < n; i++) {
        CHECK(h.val[i] == data[i] || (isnan(h.val[i]) && isnan(data[i])),
              "dr_arr_input: value %lld not copied", (long long)i);
        int dim = input ? new_dim() : -1;
        x->dim[i] = dim;
        dual_input(&x->el[i], data[i], dim);
    }
    if (any_nonfinite(h.val, n))
        S.poison = true;
}

/* operand arrays: a slot, or (rarely) a bad one */
enum { AO_OK, AO_BAD };
typedef struct aop {
    int kind;
    aslot *x;
    dr_arr h;
} aop;

static aop arr_operand(rd *r)
{
    unsigned b = u8(r);
    aop o = {AO_OK, NULL, {DR_NONE, 0, 0, 0, NULL}};
    if ((b & 0xf0) == 0xf0) {
        o.kind = AO_BAD;
        switch (b & 3) {
        case 0: break; /* a failed handle */
        case 1: /* a stale array */
            for (int i = 0; i < NA; i++)
                if (S.a[i].live && S.a[i].epoch != S.epoch &&
                    S.a[i].h.idx != DR_NONE) {
                    o.h = S.a[i].h;
                    break;
                }
            break;
        case 2: { /* a scalar's id */
            int j = pick_s(b >> 2);
            if (j >= 0)
                o.h.idx = S.s[j].r.idx;
            break;
        }
        default: o.h.idx = (dr_idx)u64(r); break;
        }
        if (known_id(o.h.idx)) {
            /* a random id that happens to be valid: not bad after all */
            for (int i = 0; i < NA; i++)
                if (avisible(&S.a[i]) && S.a[i].h.idx == o.h.idx) {
                    o.kind = AO_OK;
                    o.x = &S.a[i];
                    g_act |= o.x->active;
                    return o;
                }
            /* an array the harness no longer holds (or a sibling's): a
               failed handle instead */
            if ((uint64_t)o.h.idx >> 62)
                o.h.idx = DR_NONE;
        }
        o.h.rank = 1;
        return o;
    }
    int j = pick_a(b);
    if (j < 0) {
        o.kind = AO_BAD;
        return o;
    }
    o.x = &S.a[j];
    o.h = o.x->h;
    g_act |= o.x->active;
    return o;
}

/* find a visible array satisfying pred, starting at k */
typedef bool (*apred)(const aslot *x, const aslot *ref, int arg);
static aop arr_partner(rd *r, const aslot *ref, apred pred, int arg)
{
    unsigned b = u8(r);
    if ((b & 0x80) || !ref) /* take what comes */
        return arr_operand(r);
    for (int i = 0; i < NA; i++) {
        int j = (int)((b + (unsigned)i) % NA);
        if (avisible(&S.a[j]) && pred(&S.a[j], ref, arg)) {
            aop o = {AO_OK, &S.a[j], S.a[j].h};
            g_act |= o.x->active;
            return o;
        }
    }
    return arr_operand(r);
}

static bool same_shape(const aslot *x, const aslot *y, int arg)
{
    (void)arg;
    return x->rank == y->rank && x->rows == y->rows && x->cols == y->cols;
}
static bool vec_len(const aslot *x, const aslot *y, int arg)
{
    (void)y;
    return x->rank == 1 && x->rows == arg;
}

/* the failure of an op with a bad operand: DR_EINVAL */
static bool bad_args(const char *what, dr_arr h, const aop *a, int n, int j)
{
    for (int i = 0; i < n; i++)
        if (a[i].kind == AO_BAD) {
            arr_expect_fail(what, h, ST(DR_EINVAL));
            put_failed_a(j);
            return true;
        }
    return false;
}

static void op_arr_elementwise(rd *r)
{
    unsigned k = u8(r);
    int j = (int)(u8(r) % NA);
    aop a = arr_operand(r);
    unsigned f = k % 4;
    if (k & 0x10) { /* map */
        int fn = (int)(u8(r) % 11);
        static const int map_to_unary[11] = {
            U_NEG, U_ABS, U_SQRT, U_EXP, U_LOG, U_SIN, U_COS, U_TANH,
            U_SIGMOID, U_RELU, U_SQUARE};
        if (k & 0x20) {
            dr_arr h = dr_arr_map(top()->h, (dr_arr_fn)(11 + (k >> 6)), a.h);
            arr_expect_fail("dr_arr_map (bad fn)", h,
                            a.kind == AO_BAD ? ST(DR_EINVAL)
                                             : ST(DR_EINVAL));
            put_failed_a(j);
            return;
        }
        dr_arr h = dr_arr_map(top()->h, (dr_arr_fn)fn, a.h);
        if (bad_args("dr_arr_map", h, &a, 1, j))
            return;
        aslot *x = a.x;
        arr_expect_ok("dr_arr_map", h, x->rank, x->rows, x->cols);
        dual ref[MAXE];
        bool nan_in = arr_nan_in(x);
        for (int64_t i = 0; i < x->n; i++) {
            double y, p, dp;
            ref_unary(map_to_unary[fn], x->el[i].v, &y, &p, &dp);
            lin1(&ref[i], y, &x->el[i], p, dp);
        }
        aslot *o = put_a(j, h, x->rank, x->rows, x->cols);
        arr_take("dr_arr_map", o, ref, NULL, nan_in);
        return;
    }
    aop b = arr_partner(r, a.x, same_shape, 0);
    static const char *const nm[4] = {"dr_arr_add", "dr_arr_sub",
                                      "dr_arr_mul", "dr_arr_div"};
    dr_arr h;
    if (k & 0x20) {
        dr_idx id;
        switch (f) {
        case 0: id = dr_arr_add_id(top()->h, a.h.idx, b.h.idx); break;
        case 1: id = dr_arr_sub_id(top()->h, a.h.idx, b.h.idx); break;
        case 2: id = dr_arr_mul_id(top()->h, a.h.idx, b.h.idx); break;
        default: id = dr_arr_div_id(top()->h, a.h.idx, b.h.idx); break;
        }
        h = id == DR_NONE ? (dr_arr){DR_NONE, 0, 0, 0, NULL}
                          : dr_arr_get(top()->h, id);
    } else {
        switch (f) {
        case 0: h = dr_arr_add(top()->h, a.h, b.h); break;
        case 1: h = dr_arr_sub(top()->h, a.h, b.h); break;
        case 2: h = dr_arr_mul(top()->h, a.h, b.h); break;
        default: h = dr_arr_div(top()->h, a.h, b.h); break;
        }
    }
    aop ab[2] = {a, b};
    if (bad_args(nm[f], h, ab, 2, j))
        return;
    if (!same_shape(a.x, b.x, 0)) {
        arr_expect_fail(nm[f], h, ST(DR_ESHAPE));
        put_failed_a(j);
        return;
    }
    aslot *x = a.x, *y = b.x;
    arr_expect_ok(nm[f], h, x->rank, x->rows, x->cols);
    dual ref[MAXE];
    double sc[MAXE];
    static const int fb[4] = {B_ADD, B_SUB, B_MUL, B_DIV};
    for (int64_t i = 0; i < x->n; i++) {
        double v, pa, dpa, pb, dpb;
        ref_binary(fb[f], x->el[i].v, y->el[i].v, &v, &pa, &dpa, &pb, &dpb);
        if (x == y)
            lin2(&ref[i], v, &x->el[i], pa, dpa, &x->el[i], pb, dpb);
        else
            lin2(&ref[i], v, &x->el[i], pa, dpa, &y->el[i], pb, dpb);
        sc[i] = fabs(x->el[i].v) + fabs(y->el[i].v);
    }
    bool nan_in = arr_nan_in(x) || arr_nan_in(y);
    aslot *o = put_a(j, h, x->rank, x->rows, x->cols);
    arr_take(nm[f], o, ref, sc, nan_in);
}

static void op_arr_scale(rd *r)
{
    int j = (int)(u8(r) % NA);
    dual cb;
    opnd s = operand(r, &cb);
    aop a = arr_operand(r);
    g_act |= s.kind == V_VALID;
    dr_arr h = dr_arr_scale(top()->h, s.r, a.h);
    if (bad_args("dr_arr_scale", h, &a, 1, j))
        return;
    aslot *x = a.x;
    arr_expect_ok("dr_arr_scale", h, x->rank, x->rows, x->cols);
    dual ref[MAXE];
    for (int64_t i = 0; i < x->n; i++)
        lin2(&ref[i], s.r.val * x->el[i].v, s.d, x->el[i].v, 0.0, &x->el[i],
             s.r.val, 0.0);
    if (!isfinite(s.r.val))
        S.poison = true;
    aslot *o = put_a(j, h, x->rank, x->rows, x->cols);
    arr_take("dr_arr_scale", o, ref, NULL, arr_nan_in(x) || isnan(s.r.val));
}

static void op_arr_bcast(rd *r)
{
    unsigned k = u8(r);
    int j = (int)(u8(r) % NA);
    aop m = arr_operand(r);
    dr_arr h;
    dual ref[MAXE];
    switch (k % 4) {
    case 0:
    case 1: { /* add_rowvec / add_colvec */
        bool row = k % 4 == 0;
        int need = m.x ? (int)(row ? m.x->cols : m.x->rows) : 0;
        aop v = arr_partner(r, m.x, vec_len, need);
        h = row ? dr_arr_add_rowvec(top()->h, m.h, v.h)
                : dr_arr_add_colvec(top()->h, m.h, v.h);
        const char *nm = row ? "dr_arr_add_rowvec" : "dr_arr_add_colvec";
        aop mv[2] = {m, v};
        if (bad_args(nm, h, mv, 2, j))
            return;
        if (m.x->rank != 2 || v.x->rank != 1 || v.x->rows != need) {
            arr_expect_fail(nm, h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        arr_expect_ok(nm, h, 2, m.x->rows, m.x->cols);
        double sc[MAXE];
        for (int64_t i = 0; i < m.x->rows; i++)
            for (int64_t c = 0; c < m.x->cols; c++) {
                int64_t e = i * m.x->cols + c, q = row ? c : i;
                lin2(&ref[e], m.x->el[e].v + v.x->el[q].v, &m.x->el[e], 1.0,
                     0.0, &v.x->el[q], 1.0, 0.0);
                sc[e] = fabs(m.x->el[e].v) + fabs(v.x->el[q].v);
            }
        bool nan_in = arr_nan_in(m.x) || arr_nan_in(v.x);
        aslot *o = put_a(j, h, 2, m.x->rows, m.x->cols);
        arr_take(nm, o, ref, sc, nan_in);
        return;
    }
    default: { /* replicate rows / cols */
        bool rows = k % 4 == 2;
        const char *nm = rows ? "dr_arr_replicate_rows"
                              : "dr_arr_replicate_cols";
        int64_t cnt = u8(r) % 5;
        bool huge = (k & 0x30) == 0x30;
        if (huge) {
            int64_t big[] = {-1, (int64_t)1 << 31, INT64_MAX, INT64_MIN};
            cnt = big[u8(r) % 4];
        }
        if (m.kind == AO_OK && m.x->rank == 1 && !huge &&
            m.x->rows * cnt > MAXE)
            return; /* larger than the harness follows */
        h = rows ? dr_arr_replicate_rows(top()->h, m.h, cnt)
                 : dr_arr_replicate_cols(top()->h, m.h, cnt);
        if (bad_args(nm, h, &m, 1, j))
            return;
        if (huge) {
            arr_expect_fail(nm, h,
                            m.x->rank != 1 ? ST(DR_ESHAPE) | ST(DR_ERANGE)
                                           : ST(DR_ERANGE));
            put_failed_a(j);
            return;
        }
        if (m.x->rank != 1) {
            arr_expect_fail(nm, h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        int64_t n = m.x->rows;
        int64_t R = rows ? cnt : n, C = rows ? n : cnt;
        arr_expect_ok(nm, h, 2, R, C);
        for (int64_t i = 0; i < R; i++)
            for (int64_t c = 0; c < C; c++) {
                int64_t q = rows ? c : i;
                lin1(&ref[i * C + c], m.x->el[q].v, &m.x->el[q], 1.0, 0.0);
            }
        bool nan_in = arr_nan_in(m.x);
        aslot *o = put_a(j, h, 2, R, C);
        arr_take(nm, o, ref, NULL, nan_in);
        return;
    }
    }
}

/* an element of op(a) for a matrix a (transposed if tr) */
static const dual *mel(const aslot *a, int tr, int64_t i, int64_t k)
{
    return tr ? &a->el[k * a->cols + i] : &a->el[i * a->cols + k];
}

/* sum_k x_k y_k as a dual (n <= MAXE); scale: sum |x_k y_k| */
static void dual_dot(dual *o, int n, const dual *const *x,
                     const dual *const *y, double *scale)
{
    term tm[2 * MAXE];
    double v = 0, sc = 0;
    int m = 0;
    for (int k = 0; k < n; k++) {
        v += x[k]->v * y[k]->v;
        sc += fabs(x[k]->v * y[k]->v);
        if (x[k] == y[k]) {
            tm[m++] = (term){x[k], 2.0 * x[k]->v, 0.0};
        } else {
            tm[m++] = (term){x[k], y[k]->v, 0.0};
            tm[m++] = (term){y[k], x[k]->v, 0.0};
        }
    }
    /* the same element may appear twice among x and y (a v v product) */
    lin(o, v, m, tm);
    *scale = sc;
}

static void op_arr_linalg(rd *r)
{
    unsigned k = u8(r);
    int j = (int)(u8(r) % NA);
    aop a = arr_operand(r);
    dual ref[MAXE];
    double sc[MAXE];
    const dual *xs[MAXE], *ys[MAXE];
    dr_arr h;
    switch (k % 5) {
    case 0: { /* matvec */
        int need = a.x && a.x->rank == 2 ? (int)a.x->cols : 0;
        aop v = arr_partner(r, a.x, vec_len, need);
        h = (k & 0x40) ? dr_arr_get(top()->h,
                                    dr_arr_matvec_id(top()->h, a.h.idx,
                                                     v.h.idx))
                       : dr_arr_matvec(top()->h, a.h, v.h);
        aop av[2] = {a, v};
        if (bad_args("dr_arr_matvec", h, av, 2, j))
            return;
        if (a.x->rank != 2 || v.x->rank != 1 || v.x->rows != a.x->cols) {
            arr_expect_fail("dr_arr_matvec", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        arr_expect_ok("dr_arr_matvec", h, 1, a.x->rows, 1);
        for (int64_t i = 0; i < a.x->rows; i++) {
            for (int64_t c = 0; c < a.x->cols; c++) {
                xs[c] = &a.x->el[i * a.x->cols + c];
                ys[c] = &v.x->el[c];
            }
            dual_dot(&ref[i], (int)a.x->cols, xs, ys, &sc[i]);
        }
        S.poison |= arr_nan_in(a.x) || arr_nan_in(v.x);
        aslot *o = put_a(j, h, 1, a.x->rows, 1);
        arr_take("dr_arr_matvec", o, ref, sc, S.poison);
        return;
    }
    case 1: { /* vecmat */
        aop m = arr_operand(r);
        h = dr_arr_vecmat(top()->h, a.h, m.h);
        aop av[2] = {a, m};
        if (bad_args("dr_arr_vecmat", h, av, 2, j))
            return;
        if (a.x->rank != 1 || m.x->rank != 2 || m.x->rows != a.x->rows) {
            arr_expect_fail("dr_arr_vecmat", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        arr_expect_ok("dr_arr_vecmat", h, 1, m.x->cols, 1);
        for (int64_t c = 0; c < m.x->cols; c++) {
            for (int64_t i = 0; i < m.x->rows; i++) {
                xs[i] = &a.x->el[i];
                ys[i] = &m.x->el[i * m.x->cols + c];
            }
            dual_dot(&ref[c], (int)m.x->rows, xs, ys, &sc[c]);
        }
        S.poison |= arr_nan_in(a.x) || arr_nan_in(m.x);
        aslot *o = put_a(j, h, 1, m.x->cols, 1);
        arr_take("dr_arr_vecmat", o, ref, sc, S.poison);
        return;
    }
    case 2: { /* matmul */
        int ta = (k >> 3) & 1, tb = (k >> 4) & 1;
        aop b = arr_operand(r);
        if (a.kind == AO_OK && b.kind == AO_OK && a.x->rank == 2 &&
            b.x->rank == 2 &&
            (ta ? a.x->cols : a.x->rows) * (tb ? b.x->rows : b.x->cols) >
                MAXE)
            return; /* larger than the harness follows */
        h = dr_arr_matmul(top()->h, a.h, ta, b.h, tb);
        aop ab[2] = {a, b};
        if (bad_args("dr_arr_matmul", h, ab, 2, j))
            return;
        if (a.x->rank != 2 || b.x->rank != 2) {
            arr_expect_fail("dr_arr_matmul", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        int64_t M = ta ? a.x->cols : a.x->rows, K = ta ? a.x->rows : a.x->cols;
        int64_t K2 = tb ? b.x->cols : b.x->rows, N = tb ? b.x->rows : b.x->cols;
        if (K != K2) {
            arr_expect_fail("dr_arr_matmul", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        arr_expect_ok("dr_arr_matmul", h, 2, M, N);
        for (int64_t i = 0; i < M; i++)
            for (int64_t c = 0; c < N; c++) {
                for (int64_t q = 0; q < K; q++) {
                    xs[q] = mel(a.x, ta, i, q);
                    ys[q] = mel(b.x, tb, q, c);
                }
                dual_dot(&ref[i * N + c], (int)K, xs, ys, &sc[i * N + c]);
            }
        S.poison |= arr_nan_in(a.x) || arr_nan_in(b.x);
        aslot *o = put_a(j, h, 2, M, N);
        arr_take("dr_arr_matmul", o, ref, sc, S.poison);
        return;
    }
    case 3: { /* outer */
        aop v = arr_operand(r);
        if (a.kind == AO_OK && v.kind == AO_OK && a.x->rank == 1 &&
            v.x->rank == 1 && a.x->rows * v.x->rows > MAXE)
            return;
        h = dr_arr_outer(top()->h, a.h, v.h);
        aop av[2] = {a, v};
        if (bad_args("dr_arr_outer", h, av, 2, j))
            return;
        if (a.x->rank != 1 || v.x->rank != 1) {
            arr_expect_fail("dr_arr_outer", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        int64_t M = a.x->rows, N = v.x->rows;
        arr_expect_ok("dr_arr_outer", h, 2, M, N);
        for (int64_t i = 0; i < M; i++)
            for (int64_t c = 0; c < N; c++) {
                const dual *p = &a.x->el[i], *q = &v.x->el[c];
                if (p == q)
                    lin1(&ref[i * N + c], p->v * q->v, p, 2 * p->v, 0.0);
                else
                    lin2(&ref[i * N + c], p->v * q->v, p, q->v, 0.0, q, p->v,
                         0.0);
            }
        S.poison |= arr_nan_in(a.x) || arr_nan_in(v.x);
        aslot *o = put_a(j, h, 2, M, N);
        arr_take("dr_arr_outer", o, ref, NULL, S.poison);
        return;
    }
    default: { /* transpose */
        h = dr_arr_transpose(top()->h, a.h);
        if (bad_args("dr_arr_transpose", h, &a, 1, j))
            return;
        if (a.x->rank != 2) {
            arr_expect_fail("dr_arr_transpose", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        int64_t R = a.x->cols, C = a.x->rows;
        arr_expect_ok("dr_arr_transpose", h, 2, R, C);
        for (int64_t i = 0; i < R; i++)
            for (int64_t c = 0; c < C; c++)
                lin1(&ref[i * C + c], a.x->el[c * R + i].v,
                     &a.x->el[c * R + i], 1.0, 0.0);
        aslot *o = put_a(j, h, 2, R, C);
        arr_take("dr_arr_transpose", o, ref, NULL, arr_nan_in(a.x));
        return;
    }
    }
}

/* softmax of x[0..n-1] (duals) into y values and the reference duals */
static void softmax_ref(int n, const dual *const *x, dual *out, bool logsm,
                        dual *lse_out)
{
    double m = -INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i]->v > m)
            m = x[i]->v;
    double s = 0, p[MAXE];
    for (int i = 0; i < n; i++) {
        p[i] = exp(x[i]->v - m);
        s += p[i];
    }
    for (int i = 0; i < n; i++)
        p[i] /= s;
    double lse = m + log(s);
    term tm[MAXE] = {{NULL, 0, 0}};
    if (lse_out) {
        for (int i = 0; i < n; i++)
            tm[i] = (term){x[i], p[i], 0.0};
        lin(lse_out, n ? lse : -INFINITY, n, tm);
    }
    if (!out)
        return;
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < n; c++) {
            double d = (i == c ? 1.0 : 0.0);
            /* the reverse rules cancel (g_i - sum_j g_j y_j): at a row
               near saturation the partials are known to a few ulps of
               y_i (softmax) or of 1 (log_softmax), not of themselves */
            tm[c] = (term){x[c], logsm ? d - p[c] : p[i] * (d - p[c]),
                           8 * DBL_EPSILON * (logsm ? 1.0 : p[i])};
        }
        lin(&out[i], logsm ? x[i]->v - lse : p[i], n, tm);
    }
}

static void op_arr_reduce(rd *r)
{
    unsigned k = u8(r);
    int j = (int)(u8(r) % NA);
    int sj = (int)(u8(r) % NS);
    aop a = arr_operand(r);
    const dual *xs[MAXE] = {NULL};
    dual ref[MAXE], sref;
    double sc[MAXE];
    unsigned f = k % 10;
    if (f <= 4) { /* scalar results: dot, sum, max, logsumexp, index */
        dr_real res;
        const char *nm;
        aop b = {AO_OK, NULL, {DR_NONE, 0, 0, 0, NULL}};
        int64_t ix = 0, jx = 0;
        bool idx2 = false;
        switch (f) {
        case 0:
            b = arr_partner(r, a.x, same_shape, 0);
            nm = "dr_arr_dot";
            if (k & 0x80) {
                double v = NAN;
                dr_idx id = dr_arr_dot_id(top()->h, a.h.idx, b.h.idx, &v);
                res = (dr_real){v, id};
            } else {
                res = dr_arr_dot(top()->h, a.h, b.h);
            }
            break;
        case 1: nm = "dr_arr_sum"; res = dr_arr_sum(top()->h, a.h); break;
        case 2: nm = "dr_arr_max"; res = dr_arr_max(top()->h, a.h); break;
        case 3:
            nm = "dr_arr_logsumexp";
            res = dr_arr_logsumexp(top()->h, a.h);
            break;
        default:
            ix = (int8_t)u8(r);
            if (k & 0x40) {
                idx2 = true;
                jx = (int8_t)u8(r);
                nm = "dr_arr_index2";
                res = dr_arr_index2(top()->h, a.h, ix, jx);
            } else {
                nm = "dr_arr_index";
                if ((k & 0xa0) == 0xa0)
                    ix = (int64_t)u64(r);
                res = dr_arr_index(top()->h, a.h, ix);
            }
            break;
        }
        aop ab[2] = {a, b};
        TRACE("  %s of a%d (%s)\n", nm, a.x ? (int)(a.x - S.a) : -1,
              a.kind == AO_BAD ? "bad" : "ok");
        int nbad = a.kind == AO_BAD || (f == 0 && b.kind == AO_BAD);
        unsigned fail = 0;
        if (nbad) {
            fail = ST(DR_EINVAL);
        } else if (f == 0 && !same_shape(a.x, b.x, 0)) {
            fail = ST(DR_ESHAPE);
        } else if (f == 2 && a.x->n == 0) {
            fail = ST(DR_ESHAPE);
        } else if (f == 4 && idx2 && a.x->rank != 2) {
            fail = ST(DR_ESHAPE) | ST(DR_ERANGE);
        } else if (f == 4 && idx2 &&
                   (ix < 0 || ix >= a.x->rows || jx < 0 || jx >= a.x->cols)) {
            fail = ST(DR_ERANGE);
        } else if (f == 4 && !idx2 && (ix < 0 || ix >= a.x->n)) {
            fail = ST(DR_ERANGE);
        }
        (void)ab;
        if (fail) {
            CHECK(res.idx == DR_NONE, "%s: expected a failure, got id %lld",
                  nm, (long long)res.idx);
            CHECK(isnan(res.val), "%s failed with value %.17g, not NaN", nm,
                  res.val);
            sync_status(nm, top()->h, &top()->hs, fail);
            CHECK(top()->hs.st != DR_OK, "%s failed without a status", nm);
            dual_const(&sref, res.val);
            put_s(sj, res, &sref, -1);
            return;
        }
        aslot *x = a.x;
        double scale = 0;
        bool nan_in = arr_nan_in(x);
        for (int64_t i = 0; i < x->n; i++)
            xs[i] = &x->el[i];
        switch (f) {
        case 0: {
            const dual *ys[MAXE];
            for (int64_t i = 0; i < x->n; i++)
                ys[i] = &b.x->el[i];
            dual_dot(&sref, (int)x->n, xs, ys, &scale);
            nan_in |= arr_nan_in(b.x);
            S.poison |= nan_in;
            break;
        }
        case 1: {
            term tm[MAXE];
            double v = 0;
            for (int64_t i = 0; i < x->n; i++) {
                tm[i] = (term){xs[i], 1.0, 0.0};
                v += xs[i]->v;
                scale += fabs(xs[i]->v);
            }
            lin(&sref, v, (int)x->n, tm);
            break;
        }
        case 2: {
            int64_t best = -1;
            for (int64_t i = 0; i < x->n; i++)
                if (!isnan(xs[i]->v) && (best < 0 || xs[i]->v > xs[best]->v))
                    best = i;
            if (best < 0) {
                dual_unknown(&sref, NAN);
                S.poison = true;
            } else {
                lin1(&sref, xs[best]->v, xs[best], 1.0, 0.0);
            }
            break;
        }
        case 3:
            softmax_ref((int)x->n, xs, NULL, false, &sref);
            scale = fabs(sref.v) + 1.0;
            S.poison |= nan_in || x->n == 0;
            break;
        default: {
            int64_t e = idx2 ? ix * x->cols + jx : ix;
            lin1(&sref, xs[e]->v, xs[e], 1.0, 0.0);
            break;
        }
        }
        if (f == 3 && x->n == 0 && res.idx == DR_NONE) {
            /* logsumexp of nothing: the constant -inf (no node) */
            CHECK(res.val == -INFINITY, "empty logsumexp: %.17g", res.val);
            dual_const(&sref, res.val);
        } else if (g_act) {
            CHECK(res.idx != DR_NONE, "%s failed: %s", nm,
                  sn(dr_tape_status(top()->h)));
        } else {
            CHECK(res.idx == DR_NONE, "%s of inactive arrays gave id %lld",
                  nm, (long long)res.idx);
        }
        note_id(res.idx);
        check_sticky(nm, top()->h, &top()->hs);
        cmp_value(nm, res.val, sref.v, scale, nan_in);
        if (!isfinite(res.val))
            S.poison = true;
        sref.v = res.val;
        put_s(sj, res, &sref, -1);
        return;
    }
    /* array results */
    static const char *const nms[5] = {
        "dr_arr_sum_rows", "dr_arr_sum_cols", "dr_arr_softmax",
        "dr_arr_log_softmax", "dr_arr_logsumexp_rows"};
    const char *nm = nms[f - 5];
    dr_arr h;
    switch (f) {
    case 5: h = dr_arr_sum_rows(top()->h, a.h); break;
    case 6: h = dr_arr_sum_cols(top()->h, a.h); break;
    case 7: h = dr_arr_softmax(top()->h, a.h); break;
    case 8: h = dr_arr_log_softmax(top()->h, a.h); break;
    default: h = dr_arr_logsumexp_rows(top()->h, a.h); break;
    }
    if (bad_args(nm, h, &a, 1, j))
        return;
    aslot *x = a.x;
    bool matonly = f == 5 || f == 6 || f == 9;
    if (matonly && x->rank != 2) {
        arr_expect_fail(nm, h, ST(DR_ESHAPE));
        put_failed_a(j);
        return;
    }
    int64_t R = x->rows, C = x->cols;
    bool nan_in = arr_nan_in(x);
    if (f == 5 || f == 6) {
        int64_t n = f == 5 ? R : C;
        arr_expect_ok(nm, h, 1, n, 1);
        for (int64_t i = 0; i < n; i++) {
            term tm[MAXE];
            double v = 0, s = 0;
            int64_t m = f == 5 ? C : R;
            for (int64_t q = 0; q < m; q++) {
                const dual *e = f == 5 ? &x->el[i * C + q] : &x->el[q * C + i];
                tm[q] = (term){e, 1.0, 0.0};
                v += e->v;
                s += fabs(e->v);
            }
            lin(&ref[i], v, (int)m, tm);
            sc[i] = s;
        }
        aslot *o = put_a(j, h, 1, n, 1);
        arr_take(nm, o, ref, sc, nan_in);
        return;
    }
    S.poison |= nan_in;
    /* softmax, log_softmax: vector or rows; logsumexp_rows */
    int64_t nrow = x->rank == 2 ? R : 1, ncol = x->rank == 2 ? C : R;
    if (f == 9) {
        arr_expect_ok(nm, h, 1, R, 1);
        for (int64_t i = 0; i < R; i++) {
            for (int64_t q = 0; q < C; q++)
                xs[q] = &x->el[i * C + q];
            softmax_ref((int)C, xs, NULL, false, &ref[i]);
            sc[i] = fabs(ref[i].v) + 1.0;
        }
        if (C == 0)
            S.poison = true;
        aslot *o = put_a(j, h, 1, R, 1);
        arr_take(nm, o, ref, sc, nan_in);
        return;
    }
    arr_expect_ok(nm, h, x->rank, R, C);
    for (int64_t i = 0; i < nrow; i++) {
        for (int64_t q = 0; q < ncol; q++)
            xs[q] = &x->el[i * ncol + q];
        dual lse;
        softmax_ref((int)ncol, xs, &ref[i * ncol], f == 8, &lse);
        for (int64_t q = 0; q < ncol; q++)
            sc[i * ncol + q] = f == 8 ? fabs(xs[q]->v) + fabs(lse.v) + 1.0
                                      : 1.0;
    }
    aslot *o = put_a(j, h, x->rank, R, C);
    arr_take(nm, o, ref, sc, nan_in);
}

static void op_arr_struct(rd *r)
{
    unsigned k = u8(r);
    int j = (int)(u8(r) % NA);
    dual ref[MAXE];
    dr_arr h;
    switch (k % 7) {
    case 0: { /* from_reals */
        int n = (int)(u8(r) % 7);
        dr_real xr[8];
        dual cb[8];
        opnd o[8];
        int invalid = 0, unknown = 0;
        for (int i = 0; i < n; i++) {
            o[i] = (u8(r) & 0x1f) == 0x1f ? bad_operand(r, &cb[i])
                                          : operand(r, &cb[i]);
            if (o[i].kind < 0)
                return;
            invalid += o[i].kind == V_INVALID;
            unknown += o[i].kind == V_UNKNOWN;
            xr[i] = o[i].r;
        }
        if (k & 0x80) {
            double vals[8] = {0};
            dr_idx ids[8] = {0};
            for (int i = 0; i < n; i++) {
                vals[i] = xr[i].val;
                ids[i] = xr[i].idx;
            }
            dr_idx id = dr_arr_from_reals_id(top()->h, (size_t)n, vals, ids);
            h = id == DR_NONE ? (dr_arr){DR_NONE, 0, 0, 0, NULL}
                              : dr_arr_get(top()->h, id);
        } else {
            h = dr_arr_from_reals(top()->h, (size_t)n, xr);
        }
        if (invalid || (unknown && h.idx == DR_NONE)) {
            arr_expect_fail("dr_arr_from_reals", h, ST(DR_EINVAL));
            put_failed_a(j);
            return;
        }
        for (int i = 0; i < n; i++)
            g_act |= o[i].kind == V_VALID || o[i].kind == V_UNKNOWN;
        arr_expect_ok("dr_arr_from_reals", h, 1, n, 1);
        for (int i = 0; i < n; i++) {
            if (o[i].kind == V_UNKNOWN)
                dual_unknown(&ref[i], xr[i].val);
            else
                lin1(&ref[i], xr[i].val, o[i].d, 1.0, 0.0);
        }
        aslot *a = put_a(j, h, 1, n, 1);
        bool nan_in = false;
        for (int i = 0; i < n; i++)
            nan_in |= isnan(xr[i].val);
        arr_take("dr_arr_from_reals", a, ref, NULL, nan_in);
        return;
    }
    case 1: { /* slice */
        aop a = arr_operand(r);
        int64_t st = u8(r) % 6, len = u8(r) % 6;
        if (!(k & 0x80) && a.kind == AO_OK) { /* a slice that fits */
            st %= a.x->rows + 1;
            len %= a.x->rows - st + 1;
        }
        if ((k & 0x30) == 0x30) {
            int64_t big[] = {-1, INT64_MAX, INT64_MIN, (int64_t)1 << 40};
            if (k & 0x40)
                st = big[u8(r) % 4];
            else
                len = big[u8(r) % 4];
        }
        h = dr_arr_slice(top()->h, a.h, st, len);
        if (bad_args("dr_arr_slice", h, &a, 1, j))
            return;
        int64_t L = a.x->rows;
        if (st < 0 || len < 0 || st > L || len > L - st) {
            arr_expect_fail("dr_arr_slice", h, ST(DR_ERANGE));
            put_failed_a(j);
            return;
        }
        int64_t C = a.x->cols;
        arr_expect_ok("dr_arr_slice", h, a.x->rank, len, C);
        for (int64_t i = 0; i < len * C; i++)
            lin1(&ref[i], a.x->el[st * C + i].v, &a.x->el[st * C + i], 1.0,
                 0.0);
        aslot *o = put_a(j, h, a.x->rank, len, C);
        arr_take("dr_arr_slice", o, ref, NULL, false);
        return;
    }
    case 2: { /* slice2 */
        aop a = arr_operand(r);
        int64_t r0 = u8(r) % 5, nr = u8(r) % 5, c0 = u8(r) % 5,
                nc = u8(r) % 5;
        if (!(k & 0x80) && a.kind == AO_OK && a.x->rank == 2) {
            /* a block that fits */
            r0 %= a.x->rows + 1;
            nr %= a.x->rows - r0 + 1;
            c0 %= a.x->cols + 1;
            nc %= a.x->cols - c0 + 1;
        }
        if ((k & 0x30) == 0x30)
            nr = (k & 0x40) ? INT64_MAX : -3;
        h = dr_arr_slice2(top()->h, a.h, r0, nr, c0, nc);
        if (bad_args("dr_arr_slice2", h, &a, 1, j))
            return;
        if (a.x->rank != 2) {
            arr_expect_fail("dr_arr_slice2", h, ST(DR_ESHAPE) | ST(DR_ERANGE));
            put_failed_a(j);
            return;
        }
        if (nr < 0 || nc < 0 || r0 > a.x->rows || c0 > a.x->cols ||
            nr > a.x->rows - r0 || nc > a.x->cols - c0) {
            arr_expect_fail("dr_arr_slice2", h, ST(DR_ERANGE));
            put_failed_a(j);
            return;
        }
        arr_expect_ok("dr_arr_slice2", h, 2, nr, nc);
        for (int64_t i = 0; i < nr; i++)
            for (int64_t c = 0; c < nc; c++) {
                const dual *e = &a.x->el[(r0 + i) * a.x->cols + c0 + c];
                lin1(&ref[i * nc + c], e->v, e, 1.0, 0.0);
            }
        aslot *o = put_a(j, h, 2, nr, nc);
        arr_take("dr_arr_slice2", o, ref, NULL, false);
        return;
    }
    case 3: { /* concat */
        int axis = (k >> 3) & 1;
        int n = (int)(u8(r) % 4);
        aop a[3];
        dr_arr xs[3] = {{DR_NONE, 0, 0, 0, NULL}};
        dr_idx ids[3] = {DR_NONE, DR_NONE, DR_NONE};
        int bad = 0;
        for (int i = 0; i < n && i < 3; i++) {
            a[i] = arr_operand(r);
            xs[i] = a[i].h;
            ids[i] = a[i].h.idx;
            bad += a[i].kind == AO_BAD;
        }
        if (n > 3)
            n = 3;
        if (n == 0) {
            h = dr_arr_concat(top()->h, axis, 0, xs);
            arr_expect_fail("dr_arr_concat (n = 0)", h, ST(DR_EINVAL));
            put_failed_a(j);
            return;
        }
        int64_t R = 0, C = 0;
        int rank = bad ? 0 : a[0].x->rank;
        unsigned fail = 0;
        if (bad) {
            /* operands are checked in order: a shape error among the
               good ones may come first */
            fail = ST(DR_EINVAL) | ST(DR_ESHAPE);
        } else {
            for (int i = 0; i < n; i++)
                if (a[i].x->rank != rank)
                    fail = ST(DR_ESHAPE);
            if (!fail && rank == 1 && axis == 1)
                fail = ST(DR_ESHAPE);
            if (!fail) {
                R = axis == 0 ? 0 : a[0].x->rows;
                C = axis == 0 ? a[0].x->cols : 0;
                for (int i = 0; i < n; i++) {
                    if (axis == 0) {
                        if (a[i].x->cols != C)
                            fail = ST(DR_ESHAPE);
                        R += a[i].x->rows;
                    } else {
                        if (a[i].x->rows != R)
                            fail = ST(DR_ESHAPE);
                        C += a[i].x->cols;
                    }
                }
            }
            /* (empty matrices could grow a dimension without bound) */
            if (!fail && (R * C > MAXE || R > MAXE || C > MAXE))
                return;
        }
        if (k & 0x80) {
            dr_idx id = dr_arr_concat_id(top()->h, axis, (size_t)n, ids);
            h = id == DR_NONE ? (dr_arr){DR_NONE, 0, 0, 0, NULL}
                              : dr_arr_get(top()->h, id);
        } else {
            h = dr_arr_concat(top()->h, axis, (size_t)n, xs);
        }
        if (fail) {
            arr_expect_fail("dr_arr_concat", h, fail);
            put_failed_a(j);
            return;
        }
        arr_expect_ok("dr_arr_concat", h, rank, R, C);
        if (axis == 0) {
            int64_t e = 0;
            for (int i = 0; i < n; i++)
                for (int64_t q = 0; q < a[i].x->n; q++, e++)
                    lin1(&ref[e], a[i].x->el[q].v, &a[i].x->el[q], 1.0, 0.0);
        } else {
            int64_t c0 = 0;
            for (int i = 0; i < n; i++) {
                for (int64_t rr = 0; rr < R; rr++)
                    for (int64_t c = 0; c < a[i].x->cols; c++) {
                        const dual *e = &a[i].x->el[rr * a[i].x->cols + c];
                        lin1(&ref[rr * C + c0 + c], e->v, e, 1.0, 0.0);
                    }
                c0 += a[i].x->cols;
            }
        }
        aslot *o = put_a(j, h, rank, R, C);
        arr_take("dr_arr_concat", o, ref, NULL, false);
        return;
    }
    case 4:
    case 5: { /* gather / scatter */
        bool gather = k % 7 == 4;
        aop a = arr_operand(r);
        int n = (int)(u8(r) % 7);
        int64_t idx[8];
        int64_t outlen = u8(r) % 7;
        for (int i = 0; i < 8; i++)
            idx[i] = (int8_t)u8(r) % 8;
        if ((k & 0x30) == 0x30)
            idx[u8(r) % 8] = (k & 0x40) ? INT64_MIN : INT64_MAX;
        if (!gather && (k & 0xc0) == 0xc0)
            outlen = (k & 0x08) ? -1 : ((int64_t)1 << 31);
        const char *nm = gather ? "dr_arr_gather" : "dr_arr_scatter";
        int64_t m = a.kind == AO_OK ? a.x->rows : 0;
        if (!gather && m > 8)
            return; /* idx holds 8 */
        if (a.kind == AO_OK) {
            int64_t cols = a.x->cols;
            if ((gather ? n : outlen) * cols > MAXE && outlen >= 0 &&
                outlen < ((int64_t)1 << 31))
                return;
        }
        h = gather ? dr_arr_gather(top()->h, a.h, (size_t)n, idx)
                   : dr_arr_scatter(top()->h, a.h, outlen, idx);
        if (bad_args(nm, h, &a, 1, j))
            return;
        int64_t cols = a.x->cols, lim = gather ? a.x->rows : outlen;
        int cnt = gather ? n : (int)m;
        bool range = !gather && (outlen < 0 || outlen >= ((int64_t)1 << 31));
        for (int i = 0; i < cnt; i++)
            if (idx[i] < 0 || idx[i] >= lim)
                range = true;
        if (range) {
            arr_expect_fail(nm, h, ST(DR_ERANGE));
            put_failed_a(j);
            return;
        }
        int64_t R = gather ? n : outlen;
        arr_expect_ok(nm, h, a.x->rank, R, cols);
        if (gather) {
            for (int i = 0; i < n; i++)
                for (int64_t c = 0; c < cols; c++) {
                    const dual *e = &a.x->el[idx[i] * cols + c];
                    lin1(&ref[i * cols + c], e->v, e, 1.0, 0.0);
                }
            aslot *o = put_a(j, h, a.x->rank, R, cols);
            arr_take(nm, o, ref, NULL, false);
        } else {
            double sc[MAXE];
            for (int64_t q = 0; q < R * cols; q++) {
                term tm[8];
                int nt = 0;
                double v = 0, s = 0;
                int64_t row = q / (cols ? cols : 1), c = q - row * cols;
                for (int i = 0; i < cnt; i++)
                    if (idx[i] == row) {
                        const dual *e = &a.x->el[i * cols + c];
                        tm[nt++] = (term){e, 1.0, 0.0};
                        v += e->v;
                        s += fabs(e->v);
                    }
                lin(&ref[q], v, nt, tm);
                sc[q] = s;
            }
            aslot *o = put_a(j, h, a.x->rank, R, cols);
            arr_take(nm, o, ref, sc, arr_nan_in(a.x));
        }
        return;
    }
    default: { /* reshape */
        aop a = arr_operand(r);
        int rank = (k >> 3 & 1) ? 2 : 1;
        int64_t rows = u8(r) % 9, cols = rank == 2 ? u8(r) % 9 : 1;
        if (a.kind == AO_OK && (k & 0x10) && a.x->n > 0) {
            /* a fitting shape */
            rows = rank == 2 ? (a.x->n % 2 == 0 ? 2 : 1) : a.x->n;
            cols = rank == 2 ? a.x->n / rows : 1;
        }
        if ((k & 0xe0) == 0xe0) {
            rows = (int64_t)1 << 40;
            cols = rank == 2 ? (int64_t)1 << 40 : 1;
        }
        h = dr_arr_reshape(top()->h, a.h, rank, rows, cols);
        if (bad_args("dr_arr_reshape", h, &a, 1, j))
            return;
        if (rows >= ((int64_t)1 << 31)) {
            arr_expect_fail("dr_arr_reshape", h, ST(DR_ERANGE) |
                            ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        if (rows * cols != a.x->n) {
            arr_expect_fail("dr_arr_reshape", h, ST(DR_ESHAPE));
            put_failed_a(j);
            return;
        }
        arr_expect_ok("dr_arr_reshape", h, rank, rows, cols);
        for (int64_t i = 0; i < a.x->n; i++)
            lin1(&ref[i], a.x->el[i].v, &a.x->el[i], 1.0, 0.0);
        aslot *o = put_a(j, h, rank, rows, cols);
        arr_take("dr_arr_reshape", o, ref, NULL, false);
        return;
    }
    }
}

/* ------------------------------------------------ op: sweeps, gradients */

/* the status a whole-tape call must give now (before its own checks) */
dr_status whole_status(void)
{
    if (S.depth > 0 || S.rec_open)
        return DR_EBUSY;
    return DR_OK;
}

bool comparable(void) { return !S.poison; }

/* gradient of y (slot or constant) w.r.t. a list of xs */
static void op_gradient(rd *r)
{
    unsigned k = u8(r);
    int m = (k & 1) ? 1 + (int)(u8(r) % 3) : 1; /* jacobian rows */
    bool jac = k & 1;
    int n = (int)(u8(r) % 7);
    dr_real y[3], x[6];
    const dual *yd[3];
    int xdim[6];
    bool xbad = false, ybad = false, xconst[6];
    dual cb[3], cbx[6];
    for (int i = 0; i < m; i++) {
        opnd o = (u8(r) & 0x3f) == 0x3f ? bad_operand(r, &cb[i])
                                        : operand(r, &cb[i]);
        if (o.kind < 0 || o.kind == V_UNKNOWN)
            return;
        y[i] = o.r;
        yd[i] = o.d;
        ybad |= o.kind == V_INVALID;
    }
    for (int i = 0; i < n; i++) {
        unsigned b = u8(r);
        xdim[i] = -1;
        xconst[i] = false;
        if ((b & 0x3f) == 0x3f) {
            opnd o = bad_operand(r, &cbx[i]);
            if (o.kind < 0 || o.kind == V_UNKNOWN || o.kind == V_VALID)
                return;
            x[i] = o.r;
            xbad |= o.kind == V_INVALID;
            xconst[i] = o.kind == V_CONST;
            continue;
        }
        /* an input slot, or a constant */
        int j = -1;
        for (int q = 0; q < NS; q++) {
            int s = (int)((b + (unsigned)q) % NS);
            if (svisible(&S.s[s]) && S.s[s].dim >= 0) {
                j = s;
                break;
            }
        }
        if (j < 0 || (b & 0xc0) == 0xc0) {
            x[i] = dr_const(1.0);
            xconst[i] = true;
        } else {
            x[i] = S.s[j].r;
            xdim[i] = S.s[j].dim;
        }
    }
    /* an array id among the inputs */
    if (n > 0 && (k & 0x30) == 0x30) {
        int aj = pick_a(k >> 6);
        if (aj >= 0) {
            x[0] = (dr_real){0.0, S.a[aj].h.idx};
            xdim[0] = -1;
            xconst[0] = false;
            xbad = true;
        }
    }
    double g[18];
    for (int i = 0; i < 18; i++)
        g[i] = -12345.0;
    bool child = S.depth > 0 && (k & 0x40);
    dr_tape *t = child ? top()->h : S.T;
    dr_status st;
    bool use_null = n == 0 && (k & 0x80);
    if (g_trace > 0) {
        TRACE("  %s of", jac ? "dr_jacobian" : "dr_gradient");
        for (int i = 0; i < m; i++)
            TRACE(" %lld", (long long)y[i].idx);
        TRACE(" w.r.t.");
        for (int i = 0; i < n; i++)
            TRACE(" %lld (dim %d)", (long long)x[i].idx, xdim[i]);
        TRACE("\n");
    }
    if (jac)
        st = dr_jacobian(t, (size_t)m, y, (size_t)n, use_null ? NULL : x,
                         use_null ? NULL : g);
    else
        st = dr_gradient(t, y[0], (size_t)n, use_null ? NULL : x,
                         use_null ? NULL : g);
    dr_status want = child ? DR_EINVAL : whole_status();
    if (want == DR_OK && S.L[0].hs.st != DR_OK)
        want = S.L[0].hs.st;
    if (want == DR_OK && (xbad || ybad))
        want = DR_EINVAL;
    CHECK(st == want, "%s: %s, expected %s", jac ? "dr_jacobian"
          : "dr_gradient", sn(st), sn(want));
    check_sticky("dr_gradient", top()->h, &top()->hs);
    if (st != DR_OK || !comparable())
        return;
    for (int i = 0; i < m; i++)
        for (int q = 0; q < n; q++) {
            double gv = g[i * n + q];
            if (xconst[q] || y[i].idx == DR_NONE) {
                CHECK(gv == 0.0, "gradient w.r.t. a constant (or of a "
                      "constant) is %.17g", gv);
                continue;
            }
            cmp_deriv(jac ? "dr_jacobian" : "dr_gradient", gv, yd[i],
                      xdim[q], i * n + q);
        }
}

/* gradient_range / adjoints_read over a group of inputs */
static void op_gradient_range(rd *r)
{
    unsigned k = u8(r);
    dual cb;
    opnd y = operand(r, &cb);
    int gi = S.ngrp ? (int)(u8(r) % (unsigned)S.ngrp) : -1;
    group *G = gi >= 0 ? &S.grp[gi] : NULL;
    dr_idx first;
    size_t n;
    int off = 0;
    bool bad = false;
    if (!G || G->epoch != S.epoch || (k & 0xe0) == 0xe0) {
        /* a stale or absurd range */
        if (G && G->epoch != S.epoch) {
            first = G->first;
            n = (size_t)G->n;
        } else {
            static const size_t ns[] = {1, 3, SIZE_MAX, (size_t)1 << 40};
            first = (k & 0x10) ? S.max_id + ((dr_idx)1 << 40) : INT64_MIN + 5;
            n = ns[u8(r) % 4];
        }
        bad = true;
    } else {
        off = (int)(u8(r) % (unsigned)G->n);
        n = (size_t)(G->n - off);
        first = G->first + off;
        /* the range must be on the root's reach: a group recorded by a job
           that is not visible now (a sibling) or on a child is skipped */
        bool vis = false;
        for (int i = 0; i < NS; i++)
            if (svisible(&S.s[i]) && S.s[i].r.idx == G->first)
                vis = true;
        if (!vis)
            return;
    }
    double g[8];
    double gbig[1];
    bool read = k & 1;
    dr_status st;
    if (read) {
        st = dr_adjoints_read(S.T, first, n, n <= 8 ? g : gbig);
    } else {
        st = dr_gradient_range(S.T, y.r, first, n, n <= 8 ? g : gbig);
    }
    dr_status want;
    if (read) {
        /* no whole-tape check is documented for reading, except a child */
        want = bad ? DR_EINVAL : DR_OK;
        if (!bad && S.depth > 0)
            return; /* reading while forked: not specified */
    } else {
        want = whole_status();
        if (want == DR_OK && S.L[0].hs.st != DR_OK)
            want = S.L[0].hs.st;
        if (want == DR_OK && (bad || y.kind == V_INVALID))
            want = DR_EINVAL;
    }
    if (bad && read && S.rec_open)
        return;
    CHECK(st == want, "%s: %s, expected %s", read ? "dr_adjoints_read"
          : "dr_gradient_range", sn(st), sn(want));
    if (st != DR_OK || read || !comparable() || y.kind == V_UNKNOWN)
        return;
    for (size_t i = 0; i < n; i++) {
        if (y.r.idx == DR_NONE) {
            CHECK(g[i] == 0.0, "dr_gradient_range of a constant: %.17g",
                  g[i]);
            continue;
        }
        cmp_deriv("dr_gradient_range", g[i], y.d, G->dim[off + (int)i],
                  (int)i);
    }
}

/* seeds on scalars and arrays, one sweep, and every input's adjoint */
static void op_seed_reverse(rd *r)
{
    unsigned k = u8(r);
    if (S.depth > 0 || S.rec_open) {
        dr_status st = (k & 1) ? dr_reverse(S.T) : dr_adjoints_clear(S.T);
        CHECK(st == DR_EBUSY, "whole-tape call while busy: %s", sn(st));
        if (S.depth > 0) {
            st = dr_reverse(top()->h);
            CHECK(st == DR_EINVAL, "dr_reverse on a child handle: %s",
                  sn(st));
        }
        return;
    }
    dr_status st = dr_adjoints_clear(S.T);
    CHECK(st == DR_OK, "dr_adjoints_clear: %s", sn(st));
    /* the combined seed as a dual: sum_i w_i x_i */
    term tm[3 * MAXE + 3];
    int nt = 0;
    int ns = 1 + (int)(u8(r) % 3);
    static dual comb;
    /* the seeds, to seed again for the determinism check */
    dr_idx sid[3];
    double sw[3];
    int sarr[3], nseed = 0;
    for (int i = 0; i < ns; i++) {
        unsigned b = u8(r);
        double w = rdw(r);
        if (b & 0x80) { /* an array seed */
            int aj = pick_a(b);
            if (aj < 0)
                continue;
            aslot *x = &S.a[aj];
            double cot[MAXE];
            for (int64_t q = 0; q < x->n; q++)
                cot[q] = w * (double)((q % 3) + 1) * ((q & 1) ? -1 : 1);
            st = dr_arr_seed(S.T, x->h.idx, cot);
            CHECK(st == DR_OK, "dr_arr_seed: %s", sn(st));
            for (int64_t q = 0; q < x->n; q++)
                tm[nt++] = (term){&x->el[q], cot[q], 0.0};
            sid[nseed] = x->h.idx;
            sw[nseed] = w;
            sarr[nseed++] = aj;
            TRACE("  seed array a%d (id %lld) weight %g\n", aj,
                  (long long)x->h.idx, w);
            continue;
        }
        if ((b & 0x7f) == 0x7f) { /* a bad id */
            dual cb;
            opnd o = bad_operand(r, &cb);
            if (o.kind != V_INVALID)
                continue;
            st = dr_seed(S.T, o.r.idx, w);
            CHECK(st == DR_EINVAL, "dr_seed of an invalid id: %s", sn(st));
            continue;
        }
        int j = pick_s(b);
        if (j < 0)
            continue;
        st = dr_seed(S.T, S.s[j].r.idx, w);
        CHECK(st == DR_OK, "dr_seed: %s", sn(st));
        tm[nt++] = (term){&S.s[j].d, w, 0.0};
        sid[nseed] = S.s[j].r.idx;
        sw[nseed] = w;
        sarr[nseed++] = -1;
        TRACE("  seed s%d (id %lld) weight %g\n", j,
              (long long)S.s[j].r.idx, w);
    }
    lin(&comb, 0.0, nt, tm);
    st = dr_reverse(S.T);
    CHECK(st == S.L[0].hs.st, "dr_reverse: %s, sticky model %s", sn(st),
          sn(S.L[0].hs.st));
    if (st != DR_OK || !comparable())
        return;
    double first_pass[NS];
    for (int i = 0; i < NS; i++) {
        sslot *x = &S.s[i];
        first_pass[i] = 0;
        if (!svisible(x) || x->dim < 0)
            continue;
        double a = dr_adjoint(S.T, x->r.idx);
        double b2 = NAN;
        CHECK(dr_adjoint_get(S.T, x->r.idx, &b2) == DR_OK,
              "dr_adjoint_get of an input");
        CHECK(a == b2 || (isnan(a) && isnan(b2)),
              "dr_adjoint and dr_adjoint_get differ");
        first_pass[i] = a;
        cmp_deriv("adjoint", a, &comb, x->dim, i);
    }
    for (int i = 0; i < NA; i++) {
        aslot *x = &S.a[i];
        if (!avisible(x))
            continue;
        double adj[MAXE];
        st = dr_arr_adjoint(S.T, x->h.idx, adj);
        CHECK(st == DR_OK, "dr_arr_adjoint: %s", sn(st));
        /* its buffer, where the sweep reached the array, holds the same */
        const double *pa = dr_arr_adjoint_ptr(S.T, x->h.idx);
        for (int64_t q = 0; q < x->n; q++)
            CHECK(pa ? memcmp(&pa[q], &adj[q], sizeof adj[q]) == 0
                     : adj[q] == 0.0,
                  "dr_arr_adjoint_ptr[%lld] %.17g, dr_arr_adjoint %.17g",
                  (long long)q, pa ? pa[q] : 0.0, adj[q]);
        for (int64_t q = 0; q < x->n; q++) {
            if (x->input)
                cmp_deriv("array adjoint", adj[q], &comb, x->dim[q], (int)q);
            else if (dr_arr_active(S.T, x->h.idx) == 0)
                CHECK(adj[q] == 0.0, "adjoint of an inactive array: %.17g",
                      adj[q]);
        }
    }
    /* a stale or absurd id reads as NaN with DR_EINVAL */
    if (S.nstale) {
        double v = 0;
        dr_idx id = S.stale[k % S.nstale];
        CHECK(dr_adjoint_get(S.T, id, &v) == DR_EINVAL,
              "dr_adjoint_get of a stale id");
        CHECK(isnan(dr_adjoint(S.T, id)), "dr_adjoint of a stale id");
    }
    /* sweeping again from the same seeds gives the same bits (one thread) */
    if ((k & 0x10) && S.threads == 1) {
        CHECK(dr_adjoints_clear(S.T) == DR_OK, "dr_adjoints_clear");
        for (int i = 0; i < nseed; i++) {
            if (sarr[i] < 0) {
                st = dr_seed(S.T, sid[i], sw[i]);
            } else {
                double cot[MAXE];
                for (int64_t q = 0; q < S.a[sarr[i]].n; q++)
                    cot[q] = sw[i] * (double)((q % 3) + 1) *
                             ((q & 1) ? -1 : 1);
                st = dr_arr_seed(S.T, sid[i], cot);
            }
            CHECK(st == DR_OK, "seeding again: %s", sn(st));
        }
        st = dr_reverse(S.T);
        CHECK(st == DR_OK, "dr_reverse again: %s", sn(st));
        for (int i = 0; i < NS; i++) {
            sslot *x = &S.s[i];
            if (!svisible(x) || x->dim < 0)
                continue;
            double a = dr_adjoint(S.T, x->r.idx);
            CHECK(memcmp(&a, &first_pass[i], sizeof a) == 0 ||
                      (isnan(a) && isnan(first_pass[i])),
                  "a second sweep from the same seeds gave %.17g, the first "
                  "%.17g (slot %d)", a, first_pass[i], i);
        }
    }
}

/* -------------------------------------------------------- op: fork/join */

static void op_fork(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    unsigned what = k % 4;
    if (what == 0 || what == 3) { /* fork */
        size_t n = 1 + u8(r) % 3;
        if (what == 3 && (k & 0x80)) { /* bad forks */
            dr_tape *kids[3];
            dr_status st = dr_fork(lv->h, (k & 0x40) ? 0 : SIZE_MAX, kids);
            CHECK(st == DR_EINVAL || (S.rec_open && st == DR_EBUSY),
                  "dr_fork with a bad count: %s", sn(st));
            st = dr_fork(lv->h, 1, NULL);
            CHECK(st == DR_EINVAL, "dr_fork with NULL children: %s", sn(st));
            st = dr_join(lv->h);
            CHECK(st == DR_EINVAL, "dr_join with nothing forked: %s",
                  sn(st));
            check_sticky("bad fork", lv->h, &lv->hs);
            return;
        }
        /* a fork takes at most n + 1 jobs, two nested ones 8: keep room
           for every open fork to finish */
        if (S.depth + 1 >= MAXLEV || S.njobs + 16 > MAXJOBS)
            return;
        dr_tape *kids[3];
        dr_status st = dr_fork(lv->h, n, kids);
        if (S.rec_open) {
            CHECK(st == DR_EBUSY, "dr_fork with a recorder open: %s",
                  sn(st));
            check_sticky("dr_fork (recorder open)", lv->h, &lv->hs);
            return;
        }
        CHECK(st == DR_OK, "dr_fork(%zu): %s", n, sn(st));
        lv->nk = (int)n;
        lv->cur = 0;
        lv->korder = lv->order;
        for (size_t i = 0; i < n; i++) {
            lv->kids[i] = kids[i];
            lv->kjob[i] = -1;
            lv->kst[i] = DR_OK;
            CHECK(kids[i] && dr_tape_status(kids[i]) == DR_OK,
                  "a new child handle");
        }
        int job = new_job(S.anc[lv->job]);
        lv->kjob[0] = job;
        S.depth++;
        level *nl = top();
        memset(nl, 0, sizeof *nl);
        child_start(nl, kids[0], lv);
        nl->job = job;
        return;
    }
    if (S.depth == 0)
        return;
    level *pl = &S.L[S.depth - 1];
    if (what == 1) { /* next child, or record on the forked parent */
        if (k & 0x80) {
            dual cb;
            opnd a = operand(r, &cb);
            dr_real y = dr_sin(pl->h, a.r);
            CHECK(y.idx == DR_NONE, "recording on a forked handle gave id "
                  "%lld", (long long)y.idx);
            /* constants record nothing (no status); an id the forked
               handle cannot see (a child's) is DR_EINVAL, others
               DR_EBUSY */
            if (a.kind == V_CONST)
                check_sticky("recording on a forked handle", pl->h, &pl->hs);
            else
                sync_status("recording on a forked handle", pl->h, &pl->hs,
                            ST(DR_EBUSY) | ST(DR_EINVAL));
            return;
        }
        if (pl->cur + 1 >= pl->nk)
            return;
        rec_end_check();
        pl->kst[pl->cur] = top()->hs.st;
        check_sticky("child before switch", top()->h, &top()->hs);
        child_end(pl, top());
        pl->cur++;
        int job = new_job(S.anc[pl->job]);
        pl->kjob[pl->cur] = job;
        level *nl = top();
        memset(nl, 0, sizeof *nl);
        child_start(nl, pl->kids[pl->cur], pl);
        nl->job = job;
        return;
    }
    /* join */
    rec_end_check();
    pl->kst[pl->cur] = top()->hs.st;
    child_end(pl, top());
    dr_status st = dr_join(pl->h);
    CHECK(st == DR_OK, "dr_join: %s", sn(st));
    dmask m = S.anc[pl->job];
    for (int i = 0; i < pl->nk; i++) {
        stick(&pl->hs, pl->kst[i]);
        if (pl->kjob[i] >= 0)
            m |= S.anc[pl->kjob[i]];
    }
    S.depth--;
    int job = new_job(m);
    CHECK(job >= 0, "harness: out of jobs");
    pl->job = job;
    pl->nk = 0;
    check_sticky("dr_join", pl->h, &pl->hs);
    /* a joined handle records nothing (DR_EINVAL on it) */
    if (k & 0x80) {
        dr_tape *dead = pl->kids[0];
        dr_real y = dr_exp(dead, (dr_real){1.0, DR_NONE});
        CHECK(y.idx == DR_NONE, "a joined handle recorded");
        dr_idx id = dr_record0(dead);
        CHECK(id == DR_NONE, "a joined handle recorded an input");
        CHECK(dr_tape_set_order(dead, 2) == DR_EINVAL,
              "dr_tape_set_order on a joined handle");
        dr_status want = pl->kst[0] != DR_OK ? pl->kst[0] : DR_EINVAL;
        CHECK(dr_tape_status(dead) == want, "status of a joined "
              "handle: %s, expected %s", sn(dr_tape_status(dead)), sn(want));
        check_sticky("after recording on a joined handle", pl->h, &pl->hs);
    }
}

/* dr_fork_run: each job runs a small scalar program decoded beforehand */
#define KOPS 6
typedef struct kop {
    uint8_t op, f, a, b, dst;
    double v;
    int dim;
} kop;
typedef struct kjob {
    int nops;
    kop ops[KOPS];
    bool use_rec;
    int leave_open; /* 1: the job ends with its recorder open, 2: forked */
    /* results */
    dual loc[4];
    dr_real lr[4];
    bool lset[4];
    int ldim[4]; /* the direction of a local that is an input, else -1 */
    hstat hs;
    dr_idx ids[KOPS + 2];
    int nids;
} kjob;
typedef struct krun {
    int n;
    int order;        /* the forking handle's: the jobs' too */
    kjob job[3];
    const sslot *par; /* the parent's slots (read-only while running) */
} krun;

static void kid_fn(dr_tape *h, size_t i, void *ctx)
{
    krun *K = ctx;
    kjob *J = &K->job[i];
    sctx c = {h, &J->hs, J->ids, &J->nids, KOPS + 2};
    dr_rec rec;
    bool rec_open = false;
    if (J->use_rec) {
        dr_status st = dr_rec_begin(h, &rec);
        CHECK(st == DR_OK, "dr_rec_begin in a job (order %d): %s", K->order,
              sn(st));
        rec_open = st == DR_OK;
    }
    for (int q = 0; q < J->nops; q++) {
        kop *o = &J->ops[q];
        dual cba, cbb;
        opnd A, B;
        /* operand a/b: < 32 a parent slot (visible before the fork), else
           a local one */
        for (int w = 0; w < 2; w++) {
            uint8_t s = w ? o->b : o->a;
            opnd *X = w ? &B : &A;
            dual *cb = w ? &cbb : &cba;
            if (s < NS && K->par[s].live) {
                X->r = K->par[s].r;
                X->d = &K->par[s].d;
                X->kind = X->r.idx == DR_NONE ? V_CONST : V_VALID;
            } else if (s >= NS && s < NS + 4 && J->lset[s - NS]) {
                X->r = J->lr[s - NS];
                X->d = &J->loc[s - NS];
                X->kind = X->r.idx == DR_NONE ? V_CONST : V_VALID;
            } else {
                dual_const(cb, o->v);
                X->r = dr_const(o->v);
                X->d = cb;
                X->kind = V_CONST;
            }
        }
        dual out;
        dr_real res;
        int d = o->dst % 4;
        switch (o->op % 4) {
        case 0: { /* input */
            res = dr_input(h, o->v);
            CHECK(res.idx != DR_NONE, "dr_input in a job: %s",
                  sn(dr_tape_status(h)));
            ctx_note(&c, res.idx);
            dual_input(&out, o->v, o->dim);
            break;
        }
        case 1:
            if (rec_open && o->f % 2 == 0) {
                res = dr_rec_mul(&rec, A.r, B.r);
                dual ref;
                double y, pa, dpa, pb, dpb;
                ref_binary(B_MUL, A.r.val, B.r.val, &y, &pa, &dpa, &pb, &dpb);
                if (A.d == B.d)
                    lin2(&ref, y, A.d, pa, 0.0, A.d, pb, 0.0);
                else
                    lin2(&ref, y, A.d, pa, 0.0, B.d, pb, 0.0);
                opnd ops[2] = {A, B};
                finish_scalar(&c, "rec_mul (job)", res, &ref, 2, ops, 0.0,
                              isnan(A.r.val) || isnan(B.r.val), &out);
            } else {
                do_binary(&c, o->f % N_BINARY, A, B, &out, &res);
            }
            break;
        case 2:
            do_unary(&c, o->f % N_UNARY, A, &out, &res);
            break;
        default: { /* a stale id */
            dual cb;
            dual_const(&cb, o->v);
            opnd bad = {{o->v, INT64_MIN + 7}, &cb, V_INVALID};
            do_binary(&c, B_ADD, bad, A, &out, &res);
            break;
        }
        }
        J->loc[d] = out;
        J->lr[d] = res;
        J->lset[d] = true;
        J->ldim[d] = o->op % 4 == 0 ? o->dim : -1;
    }
    if (J->leave_open == 2) {
        dr_tape *kk[1];
        dr_status st = dr_fork(h, 1, kk);
        CHECK(st == (rec_open ? DR_EBUSY : DR_OK), "dr_fork in a job: %s",
              sn(st));
        if (st == DR_OK)
            return; /* left forked: dr_fork_run closes it */
    }
    if (rec_open && J->leave_open == 1)
        return; /* left open: dr_fork_run closes it */
    if (rec_open) {
        dr_status st = dr_rec_end(&rec);
        CHECK(st == J->hs.st, "dr_rec_end in a job: %s, model %s", sn(st),
              sn(J->hs.st));
    }
    check_sticky("end of job", h, &J->hs);
}

static void op_fork_run(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    static krun K;
    memset(&K, 0, sizeof K);
    K.n = 1 + (int)(u8(r) % 3);
    K.order = lv->order;
    K.par = S.s;
    if (S.njobs + 16 > MAXJOBS)
        return;
    for (int i = 0; i < K.n; i++) {
        kjob *J = &K.job[i];
        J->nops = (int)(u8(r) % (KOPS + 1));
        unsigned b = u8(r);
        J->use_rec = b & 1;
        if ((b & 0x70) == 0x70)
            J->leave_open = (b & 0x80) ? 2 : 1;
        for (int q = 0; q < J->nops; q++) {
            kop *o = &J->ops[q];
            o->op = (uint8_t)u8(r);
            o->f = (uint8_t)u8(r);
            o->a = (uint8_t)(u8(r) % (NS + 4));
            o->b = (uint8_t)(u8(r) % (NS + 4));
            o->dst = (uint8_t)u8(r);
            o->v = rdv(r);
            o->dim = o->op % 4 == 0 ? new_dim() : -1;
            if (o->op % 4 == 3 && !(o->f & 1))
                o->op = 2; /* stale ids rarely */
        }
        /* slots a job cannot see (a sibling's of an enclosing fork) are
           not operands: mark them so by 'live' in a private copy? The
           parent's slots are all visible to the forking job except those
           not visible to it, which are filtered here */
        for (int q = 0; q < J->nops; q++) {
            kop *o = &J->ops[q];
            if (o->a < NS && !svisible(&S.s[o->a]))
                o->a = NS + 4;
            if (o->b < NS && !svisible(&S.s[o->b]))
                o->b = NS + 4;
        }
    }
    if (lv == &S.L[0] && !S.rec_open && (k & 1)) {
        unsigned th = 1 + ((k >> 1) & 1);
        dr_status st = dr_set_threads(S.T, th);
        CHECK(st == DR_OK, "dr_set_threads(%u): %s", th, sn(st));
        S.threads = th;
        CHECK(dr_get_threads(S.T) == th, "dr_get_threads");
    }
    dr_status st = dr_fork_run(lv->h, (size_t)K.n, kid_fn, &K);
    if (S.rec_open) {
        CHECK(st == DR_EBUSY, "dr_fork_run with a recorder open: %s",
              sn(st));
        check_sticky("dr_fork_run (recorder open)", lv->h, &lv->hs);
        return;
    }
    /* a job that left a recorder open (or a fork) makes the whole call
       DR_EBUSY, and its handle's status DR_EBUSY, which the join passes
       up; the nodes of an unfinished recorder are dropped, so that job's
       results and ids are not kept */
    bool left = false;
    for (int i = 0; i < K.n; i++) {
        kjob *J = &K.job[i];
        if (J->leave_open == 1 && J->use_rec) {
            /* (at order 2 the recorder held no node of its own: every
               one went through the tape; the model forgets them alike) */
            stick(&J->hs, DR_EBUSY);
            J->nids = 0;
            memset(J->lset, 0, sizeof J->lset);
            left = true;
        } else if (J->leave_open == 2 && !J->use_rec) {
            stick(&J->hs, DR_EBUSY);
            left = true;
        }
    }
    TRACE("  dr_fork_run: %d jobs%s\n", K.n, left ? ", one left open" : "");
    CHECK(st == (left ? DR_EBUSY : DR_OK), "dr_fork_run: %s, expected %s",
          sn(st), sn(left ? DR_EBUSY : DR_OK));
    dmask m = S.anc[lv->job];
    int kj[3];
    for (int i = 0; i < K.n; i++) {
        kj[i] = new_job(S.anc[lv->job]);
        m |= S.anc[kj[i]];
        stick(&lv->hs, K.job[i].hs.st);
        for (int q = 0; q < K.job[i].nids; q++)
            note_id(K.job[i].ids[q]);
    }
    check_sticky("dr_fork_run", lv->h, &lv->hs);
    /* the jobs' results into slots */
    for (int i = 0; i < K.n; i++)
        for (int d = 0; d < 4; d++) {
            kjob *J = &K.job[i];
            if (!J->lset[d])
                continue;
            int j = (int)((k + (unsigned)(i * 4 + d) * 5) % NS);
            int job_now = lv->job;
            lv->job = kj[i];
            put_s(j, J->lr[d], &J->loc[d], J->ldim[d]);
            lv->job = job_now;
        }
    int job = new_job(m);
    CHECK(job >= 0, "harness: out of jobs");
    lv->job = job;
    /* the last job's outputs were put with their own job: visible now */
}

/* ------------------------------------------------------------ op: misc */

static void forget_all(void)
{
    for (int i = 0; i < NS; i++)
        if (S.s[i].live && S.s[i].r.idx != DR_NONE && S.nstale < NSTALE)
            S.stale[S.nstale++] = S.s[i].r.idx;
        else if (S.s[i].live && S.s[i].r.idx != DR_NONE)
            S.stale[i % NSTALE] = S.s[i].r.idx;
    for (int i = 0; i < NS; i++)
        S.s[i].live = false;
    for (int i = 0; i < NA; i++)
        if (S.a[i].failed)
            S.a[i].live = false; /* the failed handles keep nothing */
    S.epoch++;
    S.ngrp = 0;
    S.poison = false;
    S.njobs = 0;
    S.L[0].job = new_job(0);
    S.L[0].hs.st = DR_OK;
    /* the root's order stays; nothing is recorded yet */
    level *L0 = &S.L[0];
    L0->first = dr_tape_mark(S.T);
    L0->o1_from = L0->order == 1 ? L0->first : DR_NONE;
    memset(&L0->bad, 0, sizeof L0->bad);
    S.no_fwd = false;
    S.nexternal = 0;
    fz_cleared();
}

/* a small computation on a cleared tape: its gradient must be right */
static void health_check(const char *after)
{
    dr_status st = dr_tape_clear(S.T);
    CHECK(st == DR_OK, "dr_tape_clear (%s): %s", after, sn(st));
    forget_all();
    CHECK(dr_tape_status(S.T) == DR_OK, "status after clear");
    CHECK(dr_tape_len(S.T) == 0, "length after clear");
    dr_real x = dr_input(S.T, 1.5), y = dr_input(S.T, -0.25);
    note_id(x.idx);
    note_id(y.idx);
    dr_real z = dr_mul(S.T, dr_sin(S.T, x), dr_exp(S.T, y));
    dr_real w = dr_add(S.T, z, dr_mul(S.T, x, x));
    dr_real xs[2] = {x, y};
    double g[2] = {0, 0};
    st = dr_gradient(S.T, w, 2, xs, g);
    CHECK(st == DR_OK, "gradient after %s: %s", after, sn(st));
    /* the same again after a clear: no memory taken */
    size_t bytes = dr_tape_bytes(S.T);
    tape_bytes_check(S.T, after);
    CHECK(dr_tape_clear(S.T) == DR_OK, "dr_tape_clear (%s)", after);
    forget_all();
    x = dr_input(S.T, 1.5);
    y = dr_input(S.T, -0.25);
    note_id(x.idx);
    note_id(y.idx);
    z = dr_mul(S.T, dr_sin(S.T, x), dr_exp(S.T, y));
    w = dr_add(S.T, z, dr_mul(S.T, x, x));
    xs[0] = x;
    xs[1] = y;
    st = dr_gradient(S.T, w, 2, xs, g);
    CHECK(st == DR_OK, "gradient after %s: %s", after, sn(st));
    CHECK(dr_tape_bytes(S.T) == bytes, "the same program again after "
          "dr_tape_clear: dr_tape_bytes %zu, first %zu", dr_tape_bytes(S.T),
          bytes);
    double gx = cos(1.5) * exp(-0.25) + 3.0, gy = sin(1.5) * exp(-0.25);
    CHECK(fabs(g[0] - gx) <= 1e-14 && fabs(g[1] - gy) <= 1e-14,
          "gradient after %s: (%.17g, %.17g), expected (%.17g, %.17g)",
          after, g[0], g[1], gx, gy);
    st = dr_tape_clear(S.T);
    CHECK(st == DR_OK, "dr_tape_clear: %s", sn(st));
    forget_all();
}

static void op_clear(rd *r)
{
    unsigned k = u8(r);
    dr_status st = dr_tape_clear(S.T);
    dr_status want = whole_status();
    CHECK(st == want, "dr_tape_clear: %s, expected %s", sn(st), sn(want));
    if (S.depth > 0) {
        st = dr_tape_clear(top()->h);
        CHECK(st == DR_EINVAL, "dr_tape_clear on a child handle: %s", sn(st));
    }
    if (want != DR_OK)
        return;
    forget_all();
    if (k & 1)
        health_check("a clear");
}

static void op_threads(rd *r)
{
    unsigned k = u8(r);
    unsigned th = 1 + (k & 1);
    dr_status st = dr_set_threads(S.T, th);
    dr_status want = S.depth > 0 || S.rec_open ? DR_EBUSY : DR_OK;
    CHECK(st == want, "dr_set_threads: %s, expected %s", sn(st), sn(want));
    if (st == DR_OK)
        S.threads = th;
    if (S.depth > 0) {
        st = dr_set_threads(top()->h, th);
        CHECK(st == DR_EINVAL, "dr_set_threads on a child handle: %s",
              sn(st));
    }
}

/* misuse: NULL arguments and sizes nothing can hold */
static void op_misuse(rd *r)
{
    unsigned k = u8(r);
    level *lv = top();
    dr_tape *h = lv->h;
    switch (k % 8) {
    case 0: { /* huge input ranges */
        static const size_t ns[] = {SIZE_MAX, SIZE_MAX / 2,
                                    (size_t)1 << 62, ((size_t)1 << 63) + 5};
        dr_idx first = 12345;
        dr_status st = dr_input_range(h, ns[u8(r) % 4], &first);
        /* it returns the tape's sticky status, which is an earlier
           failure if there was one */
        CHECK(st == DR_ERANGE || st == DR_ENOMEM ||
                  (lv->hs.st != DR_OK && st == lv->hs.st),
              "dr_input_range(huge): %s", sn(st));
        CHECK(first == DR_NONE, "dr_input_range(huge) gave first %lld",
              (long long)first);
        sync_status("dr_input_range(huge)", h, &lv->hs,
                    ST(DR_ERANGE) | ST(DR_ENOMEM));
        break;
    }
    case 1: { /* dr_recordn with a count no memory holds */
        dr_idx args[3] = {DR_NONE, DR_NONE, DR_NONE};
        double p[3] = {1, 2, 3};
        dr_idx id = dr_recordn(h, SIZE_MAX - (k >> 4), args, p);
        CHECK(id == DR_NONE, "dr_recordn(huge) gave an id");
        sync_status("dr_recordn(huge)", h, &lv->hs,
                    ST(DR_ERANGE) | ST(DR_ENOMEM));
        break;
    }
    case 2: { /* NULL arrays */
        dr_status st = dr_inputs(h, 2, NULL, NULL);
        CHECK(st == DR_EINVAL, "dr_inputs(NULL): %s", sn(st));
        sync_status("dr_inputs(NULL)", h, &lv->hs, ST(DR_OK) | ST(DR_EINVAL));
        st = dr_input_range(h, 1, NULL);
        CHECK(st == DR_EINVAL, "dr_input_range(NULL): %s", sn(st));
        sync_status("dr_input_range(NULL)", h, &lv->hs,
                    ST(DR_OK) | ST(DR_EINVAL));
        dr_idx id = dr_recordn(h, 3, NULL, NULL);
        CHECK(id == DR_NONE, "dr_recordn(NULL) gave an id");
        sync_status("dr_recordn(NULL)", h, &lv->hs, ST(DR_EINVAL));
        break;
    }
    case 3: { /* NULL tapes */
        dr_real y = dr_add(NULL, (dr_real){1, 0}, (dr_real){2, 0});
        CHECK(y.idx == DR_NONE && y.val == 3.0, "dr_add(NULL tape)");
        CHECK(dr_tape_status(NULL) == DR_EINVAL, "dr_tape_status(NULL)");
        CHECK(dr_reverse(NULL) == DR_EINVAL, "dr_reverse(NULL)");
        CHECK(dr_seed(NULL, 0, 1.0) == DR_EINVAL, "dr_seed(NULL)");
        CHECK(dr_tape_clear(NULL) == DR_EINVAL, "dr_tape_clear(NULL)");
        double g;
        CHECK(dr_gradient(NULL, y, 0, NULL, &g) == DR_EINVAL,
              "dr_gradient(NULL)");
        CHECK(dr_rec_end(NULL) == DR_EINVAL, "dr_rec_end(NULL)");
        dr_rec rr;
        CHECK(dr_rec_begin(NULL, &rr) == DR_EINVAL, "dr_rec_begin(NULL)");
        CHECK(dr_rec_begin(h, NULL) == DR_EINVAL, "dr_rec_begin(t, NULL)");
        CHECK(dr_fork_run(h, 1, NULL, NULL) == DR_EINVAL,
              "dr_fork_run(NULL fn)");
        check_sticky("NULL calls", h, &lv->hs);
        break;
    }
    case 4: { /* jacobian sizes that overflow */
        dr_real y = {0, DR_NONE};
        double J;
        dr_status st = dr_jacobian(S.T, (size_t)1 << 33, &y, (size_t)1 << 33,
                                   &y, &J);
        CHECK(st == DR_EINVAL, "dr_jacobian with m * n overflowing: %s",
              sn(st));
        st = dr_adjoints_read(S.T, 0, SIZE_MAX, &J);
        CHECK(st == DR_EINVAL, "dr_adjoints_read(huge): %s", sn(st));
        check_sticky("overflowing sizes", h, &lv->hs);
        break;
    }
    case 5: { /* queries on wrong ids */
        dual cb;
        opnd o = bad_operand(r, &cb);
        if (o.kind != V_INVALID)
            break;
        int rank;
        int64_t rows, cols;
        CHECK(dr_arr_shape(S.T, o.r.idx, &rank, &rows, &cols) == DR_EINVAL,
              "dr_arr_shape of a bad id");
        CHECK(dr_arr_size(S.T, o.r.idx) == -1, "dr_arr_size of a bad id");
        CHECK(dr_arr_active(S.T, o.r.idx) == -1, "dr_arr_active of a bad id");
        CHECK(dr_arr_values(S.T, o.r.idx) == NULL, "dr_arr_values of a bad "
              "id");
        CHECK(dr_arr_get(S.T, o.r.idx).idx == DR_NONE, "dr_arr_get bad id");
        double out[4];
        CHECK(dr_arr_read(S.T, o.r.idx, out) == DR_EINVAL, "dr_arr_read");
        if (S.depth == 0 && !S.rec_open) {
            CHECK(dr_arr_seed(S.T, o.r.idx, out) == DR_EINVAL,
                  "dr_arr_seed of a bad id");
            CHECK(dr_arr_adjoint(S.T, o.r.idx, out) == DR_EINVAL,
                  "dr_arr_adjoint of a bad id");
        }
        check_sticky("bad id queries", h, &lv->hs);
        break;
    }
    case 6: { /* a scalar id where an array is wanted, and the opposite */
        int j = pick_s(k >> 3);
        if (j < 0 || S.s[j].r.idx == DR_NONE)
            break;
        CHECK(dr_arr_size(S.T, S.s[j].r.idx) == -1,
              "dr_arr_size of a scalar id");
        int aj = pick_a(k >> 3);
        if (aj >= 0) {
            int rank = 0;
            int64_t rows = -1, cols = -1;
            CHECK(dr_arr_shape(h, S.a[aj].h.idx, &rank, &rows, &cols) ==
                      DR_OK &&
                      rank == S.a[aj].rank && rows == S.a[aj].rows &&
                      cols == S.a[aj].cols,
                  "dr_arr_shape of a visible array");
            CHECK(dr_arr_size(h, S.a[aj].h.idx) == S.a[aj].n, "dr_arr_size");
        }
        check_sticky("shape queries", h, &lv->hs);
        break;
    }
    default: { /* an array id used as a scalar */
        int aj = pick_a(k >> 3);
        if (aj < 0)
            break;
        dual cb, out;
        dual_const(&cb, 0.5);
        opnd a = {{0.5, S.a[aj].h.idx}, &cb, V_INVALID};
        sctx c = main_ctx();
        dr_real res;
        if (k & 0x80) {
            dual cb2;
            opnd b = operand(r, &cb2);
            do_binary(&c, (int)(u8(r) % N_BINARY), b, a, &out, &res);
        } else {
            do_unary(&c, (int)(u8(r) % N_UNARY), a, &out, &res);
        }
        put_s((int)(u8(r) % NS), res, &out, -1);
        break;
    }
    }
}

/* ------------------------------------------------------------ the driver */

typedef void (*opfn)(rd *r);
static const opfn OPS[] = {
    op_input, op_inputs, op_const, op_unary, op_unary, op_binary, op_binary,
    op_powi, op_bad_id, op_record, op_rec, op_rec, op_arr_create,
    op_arr_create, op_arr_elementwise, op_arr_scale, op_arr_bcast,
    op_arr_linalg, op_arr_reduce, op_arr_struct, op_gradient, op_gradient,
    op_gradient_range, op_seed_reverse, op_seed_reverse, op_fork, op_fork,
    op_fork_run, op_threads, op_clear, op_misuse,
    /* the other files' */
    op_modes, op_modes, op_order, op_second_order, op_loop, op_external,
    op_other_tape, op_replay, op_statement, op_sumn, op_prog};
#define NOPS (sizeof OPS / sizeof OPS[0])

/* close whatever the program left open, then check the last result */
static void finish_program(void)
{
    rec_end_check();
    while (S.depth > 0) {
        level *pl = &S.L[S.depth - 1];
        pl->kst[pl->cur] = top()->hs.st;
        CHECK(dr_join(pl->h) == DR_OK, "dr_join at the end");
        dmask m = S.anc[pl->job];
        for (int i = 0; i < pl->nk; i++) {
            stick(&pl->hs, pl->kst[i]);
            if (pl->kjob[i] >= 0)
                m |= S.anc[pl->kjob[i]];
        }
        S.depth--;
        int job = new_job(m);
        if (job < 0) {
            /* no job left: everything is visible at the end anyway */
            job = 0;
            S.anc[0] = ~(dmask)0;
        }
        pl->job = job;
        check_sticky("dr_join at the end", pl->h, &pl->hs);
    }
    check_sticky("end of program", S.T, &S.L[0].hs);
    /* the gradient of the last result with respect to every input */
    int y = S.last_slot;
    if (y >= 0 && svisible(&S.s[y])) {
        dr_real xs[NS];
        int dims[NS], n = 0;
        for (int i = 0; i < NS; i++)
            if (svisible(&S.s[i]) && S.s[i].dim >= 0) {
                xs[n] = S.s[i].r;
                dims[n++] = S.s[i].dim;
            }
        double g[NS];
        dr_status st = dr_gradient(S.T, S.s[y].r, (size_t)n, xs, g);
        CHECK(st == S.L[0].hs.st, "final dr_gradient: %s, model %s", sn(st),
              sn(S.L[0].hs.st));
        if (st == DR_OK && comparable())
            for (int i = 0; i < n; i++) {
                if (S.s[y].r.idx == DR_NONE)
                    CHECK(g[i] == 0.0, "gradient of a constant");
                else
                    cmp_deriv("final gradient", g[i], &S.s[y].d, dims[i], i);
            }
    }
    health_check("the program");
}

static int run_one(const uint8_t *data, size_t size)
{
    g_input = data;
    g_input_len = size;
    memset(&S, 0, sizeof S);
    if (g_trace < 0)
        g_trace = getenv("FUZZ_TRACE") != NULL;
    fz_allocator(); /* (before the first tape) */
    S.T = dr_tape_new();
    if (!S.T)
        return 0;
    S.threads = 1;
    S.last_slot = -1;
    S.max_id = 0;
    S.L[0].h = S.T;
    S.L[0].job = new_job(0);
    level_start(&S.L[0], S.T);
    fz_start();
    rd r = {data, size, 0};
    for (int n = 0; n < MAXOPS && !eof(&r); n++) {
        unsigned op = u8(&r);
        g_act = false;
        TRACE("op %u at byte %zu (depth %d, rec %d)\n", op % (unsigned)NOPS,
              r.i - 1, S.depth, (int)S.rec_open);
        OPS[op % NOPS](&r);
    }
    finish_program();
    dr_tape_free(S.T);
    S.T = NULL;
    fz_end();
    g_input = NULL;
    return 0;
}

#ifndef FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    return run_one(data, size);
}
#else
/* ------------------------------------------- plain regression driver */

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    run_one(buf, n);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return 1;
    }
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        bad |= run_path(p, count);
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    for (int i = 1; i < argc; i++)
        bad |= run_path(argv[i], &count);
    /* a finding aborts before this: every input that ran passed */
    if (!bad)
        printf("fuzz_regress: %d passed, 0 failed\n", count);
    return bad;
}
#endif
