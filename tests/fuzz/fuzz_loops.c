/*
 * fuzz_loops.c - checkpointed loops (tests/fuzz/README.md, "Checkpointed
 * loops"): dr_record_checkpointed and dr_loop_repeats.
 *
 * A fuzzed step (a few scalar operations over a state of up to LN values,
 * with constants that may depend on the step number) runs nsteps times as
 * a checkpointed loop on the main tape, with fuzzed segment length and
 * number of snapshots.  The same loop is run unrolled on a plain tape
 * beside it: the outputs must be the same values and the same constants,
 * and the gradient (a vector-Jacobian product seeded on the outputs) the
 * same bits (the header's promise for distinct inputs used after the loop
 * only through its outputs).  The unrolled run also carries the
 * first-order reference through the steps, so the outputs take their
 * place among the program's values and every later check covers them.
 *
 * Misuse: a step that captures a value of the caller's tape (an id not on
 * the loop's tape: DR_EINVAL), a step that fails while the loop is
 * recorded (its status, nothing recorded), and one that fails only when a
 * sweep runs it again (the sweep's status and the tape's sticky status).
 * dr_loop_repeats is compared with the binomial bound computed here.
 */
#include "fuzz_model.h"

#include <stdlib.h>
#include <string.h>

#define LN 4                /* state */
#define LOPS 6              /* operations per step */
#define LREG (LN + LOPS)    /* registers: the state, then the results */

typedef struct lop {
    uint8_t kind, f, a, b;
    double c, kc; /* a constant c + kc * k (k: the step) */
} lop;

typedef struct lprog {
    owned own; /* first: the destroy callback takes the context */
    int n, nops;
    lop ops[LOPS];
    uint8_t outmap[LN];
    long calls;            /* steps run (any thread)                  */
    long fail_at;          /* this call and the later ones fail (0: none) */
    dr_status fail_st;
    bool use_capture;      /* the first operation takes `capture`     */
    dr_real capture;
    dual *ref;             /* the reference of the registers while the
                              harness runs the loop unrolled, else NULL */
} lprog;

static dual g_reg[2][LREG]; /* the reference's registers, state in [0..n) */

/* one step of the program: x -> y on t (and the reference, when on) */
static dr_status lstep(void *ctx, dr_tape *t, size_t k, size_t n,
                       const dr_real *x, dr_real *y)
{
    lprog *P = ctx;
    long call = __atomic_add_fetch(&P->calls, 1, __ATOMIC_RELAXED);
    if (P->fail_at && call >= P->fail_at)
        return P->fail_st;
    dr_real w[LREG];
    dual *D = P->ref;
    for (size_t i = 0; i < n; i++)
        w[i] = x[i];
    for (int q = 0; q < P->nops; q++) {
        const lop *o = &P->ops[q];
        int avail = (int)n + q;
        int ia = o->a % avail, ib = o->b % avail;
        dr_real a = w[ia], b = w[ib];
        double cv = o->c + o->kc * (double)k;
        dr_real c = dr_const(cv);
        if (q == 0 && P->use_capture)
            b = P->capture;
        int kind = o->kind % 4, f;
        dr_real res;
        switch (kind) {
        case 0:
            f = o->f % N_UNARY;
            res = eng_unary(t, f, a);
            break;
        case 1:
            f = o->f % N_BINARY;
            res = eng_binary(t, f, a, b);
            break;
        case 2:
            f = o->f % N_BINARY;
            res = eng_binary(t, f, a, c);
            break;
        default:
            f = o->f % N_BINARY;
            res = eng_binary(t, f, c, a);
            break;
        }
        w[n + (size_t)q] = res;
        if (!D)
            continue;
        /* the reference at the engine's values, as every operation */
        dual *out = &D[n + (size_t)q];
        dual cd;
        dual_const(&cd, cv);
        double v, pa, dpa, pb, dpb;
        switch (kind) {
        case 0:
            if (f == U_SQUARE) {
                lin2(out, a.val * a.val, &D[ia], a.val, 0.0, &D[ia], a.val,
                     0.0);
                break;
            }
            ref_unary(f, a.val, &v, &pa, &dpa);
            lin1(out, v, &D[ia], pa, dpa);
            break;
        case 1:
            ref_binary(f, a.val, b.val, &v, &pa, &dpa, &pb, &dpb);
            lin2(out, v, &D[ia], pa, dpa, &D[ib], pb, dpb);
            break;
        case 2:
            ref_binary(f, a.val, cv, &v, &pa, &dpa, &pb, &dpb);
            lin2(out, v, &D[ia], pa, dpa, &cd, pb, dpb);
            break;
        default:
            ref_binary(f, cv, a.val, &v, &pa, &dpa, &pb, &dpb);
            lin2(out, v, &cd, pa, dpa, &D[ia], pb, dpb);
            break;
        }
        out->v = res.val;
        if (res.idx == DR_NONE)
            dual_const(out, res.val);
    }
    for (size_t i = 0; i < n; i++)
        y[i] = w[P->outmap[i] % ((int)n + P->nops)];
    if (D) { /* the outputs become the next step's state */
        dual *nx = D == g_reg[0] ? g_reg[1] : g_reg[0];
        for (size_t i = 0; i < n; i++)
            nx[i] = D[P->outmap[i] % ((int)n + P->nops)];
        P->ref = nx;
    }
    return dr_tape_status(t);
}

static lprog *prog_new(rd *r)
{
    lprog *P = calloc(1, sizeof *P);
    if (!P)
        return NULL;
    P->n = 1 + (int)(u8(r) % LN);
    P->nops = 1 + (int)(u8(r) % LOPS);
    for (int q = 0; q < P->nops; q++) {
        lop *o = &P->ops[q];
        o->kind = (uint8_t)u8(r);
        o->f = (uint8_t)u8(r);
        o->a = (uint8_t)u8(r);
        o->b = (uint8_t)u8(r);
        o->c = rdv(r);
        o->kc = (u8(r) & 3) == 3 ? 0.125 : 0.0;
    }
    /* distinct outputs: two state entries that are one node would add
       their adjoints in another order than the unrolled loop */
    bool used[LREG] = {false};
    int nreg = P->n + P->nops;
    for (int i = 0; i < P->n; i++) {
        int o = (int)(u8(r) % (unsigned)nreg);
        while (used[o])
            o = (o + 1) % nreg;
        used[o] = true;
        P->outmap[i] = (uint8_t)o;
    }
    return P;
}

static dr_tape *g_scratch; /* the plain tape of the unrolled loops */

static dr_tape *scratch(void)
{
    if (!g_scratch)
        g_scratch = dr_tape_new();
    else
        CHECK(dr_tape_clear(g_scratch) == DR_OK, "dr_tape_clear (scratch)");
    return g_scratch;
}

/* the loop unrolled on a plain tape from x0 (active entries as inputs),
   its reference from the duals d0 (NULL: none); out: the state at the end */
static void unrolled(lprog *P, dr_tape *t, size_t nsteps, const dr_real *x0,
                     const dual *const *d0, dr_real *in, dr_real *out)
{
    dr_real a[LN], b[LN];
    for (int i = 0; i < P->n; i++) {
        in[i] = x0[i].idx != DR_NONE ? dr_input(t, x0[i].val)
                                     : dr_const(x0[i].val);
        a[i] = in[i];
        if (d0)
            g_reg[0][i] = *d0[i];
    }
    P->ref = d0 ? g_reg[0] : NULL;
    dr_real *cur = a, *nxt = b;
    for (size_t k = 0; k < nsteps; k++) {
        dr_status st = lstep(P, t, k, (size_t)P->n, cur, nxt);
        CHECK(st == DR_OK, "the unrolled loop failed at step %zu: %s", k,
              sn(st));
        dr_real *tmp = cur;
        cur = nxt;
        nxt = tmp;
    }
    memcpy(out, cur, (size_t)P->n * sizeof *out);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* ---------------------------------------------------- dr_loop_repeats */

/* C(c + r, r), or SIZE_MAX where that does not fit */
static size_t binom_sat(unsigned __int128 c, unsigned __int128 r)
{
    unsigned __int128 lo = c < r ? c : r, hi = c < r ? r : c, b = 1;
    for (unsigned __int128 i = 1; i <= lo; i++) {
        unsigned __int128 f = hi + i;
        if (b > ~(unsigned __int128)0 / f)
            return SIZE_MAX;
        b = b * f / i; /* C(hi + i, i) = C(hi + i - 1, i - 1) (hi + i) / i */
        if (b > SIZE_MAX)
            return SIZE_MAX;
    }
    return (size_t)b;
}

/* the least r with C(snapshots + 1 + r, r) >= nseg (the header's words) */
static size_t repeats_ref(size_t nseg, size_t snapshots)
{
    if (nseg <= 1)
        return 0;
    unsigned __int128 c = (unsigned __int128)snapshots + 1;
    size_t lo = 1, hi = nseg - 1; /* C(c + nseg - 1, nseg - 1) >= nseg */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (binom_sat(c, mid) >= nseg)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void check_repeats(rd *r)
{
    static const size_t big[] = {
        2, 3, 7, 100, 1000, (size_t)1 << 20, (size_t)1 << 32,
        ((size_t)1 << 32) + 1, (size_t)1 << 40, (size_t)1 << 62,
        SIZE_MAX / 2, SIZE_MAX - 1, SIZE_MAX};
    unsigned b = u8(r);
    size_t nseg = (b & 1) ? big[u8(r) % 13] : u8(r);
    size_t snap = (b & 2) ? big[u8(r) % 13] : u8(r) % 12;
    if (b & 4)
        nseg += u8(r);
    size_t got = dr_loop_repeats(nseg, snap);
    size_t want = repeats_ref(nseg, snap);
    CHECK(got == want, "dr_loop_repeats(%zu, %zu) = %zu, expected %zu", nseg,
          snap, got, want);
}

/* ------------------------------------------------ the loop on the main
   tape */

static void main_loop(unsigned k, rd *r, lprog *P)
{
    level *lv = top();
    int n = P->n;
    dr_real x0[LN];
    const dual *d0[LN];
    static dual cb[LN];
    bool bad = false, distinct = true, inputs = true;
    for (int i = 0; i < n; i++) {
        unsigned b = u8(r);
        opnd o;
        if ((b & 0x3f) == 0x3f) {
            o = bad_operand(r, &cb[i]);
        } else if (b & 0x80) {
            o = operand(r, &cb[i]);
        } else { /* an input, mostly */
            int j = pick_input(b);
            if (j < 0) {
                o = operand(r, &cb[i]);
            } else {
                o.r = S.s[j].r;
                o.d = &S.s[j].d;
                o.kind = V_VALID;
            }
        }
        if (o.kind < 0 || o.kind == V_UNKNOWN) {
            free(P);
            return;
        }
        bad |= o.kind == V_INVALID;
        x0[i] = o.r;
        d0[i] = o.d;
        if (o.r.idx != DR_NONE) {
            bool in = false;
            for (int s = 0; s < NS; s++)
                if (svisible(&S.s[s]) && S.s[s].r.idx == o.r.idx &&
                    S.s[s].dim >= 0)
                    in = true;
            inputs &= in;
            for (int q = 0; q < i; q++)
                distinct &= x0[q].idx != o.r.idx;
        }
    }
    static const size_t steps[] = {0, 1, 2, 3, 5, 8, 13, 40, 100, 257};
    unsigned b = u8(r);
    size_t nsteps = (b & 0x80) ? steps[b % 10] : b % 24;
    size_t seg = u8(r);
    seg = (seg & 0x80) ? 0 : seg % (nsteps + 2);
    size_t snap = u8(r);
    snap = snap == 0xff ? SIZE_MAX : snap == 0xfe ? ((size_t)1 << 40)
                                                  : snap % 9;
    bool use_destroy = !(k & 0x10);
    dr_loop loop = {P, lstep, use_destroy ? owned_destroy : NULL, seg};
    dr_status want = DR_OK;
    dr_tape *h = lv->h;
    hstat *hs = &lv->hs;
    if ((k & 0x60) == 0x60 && S.depth > 0) { /* on a forked handle */
        h = S.L[S.depth - 1].h;
        hs = &S.L[S.depth - 1].hs;
        want = DR_EBUSY;
    }
    if (want == DR_OK && hs->st != DR_OK)
        want = hs->st;
    if (want == DR_OK && bad)
        want = DR_EINVAL;
    dr_real out[LN];
    dr_idx mark = dr_tape_mark(h);
    dr_status st = dr_record_checkpointed(h, &loop, nsteps, (size_t)n, x0,
                                          snap, out);
    TRACE("  dr_record_checkpointed(n %d, %zu steps, segment %zu, %zu "
          "snapshots) -> %s (%ld step calls)\n", n, nsteps, seg, snap,
          sn(st), P->calls);
    CHECK(st == want, "dr_record_checkpointed: %s, expected %s", sn(st),
          sn(want));
    check_sticky("dr_record_checkpointed", h, hs);
    if (st != DR_OK) {
        CHECK(dr_tape_mark(h) == mark, "a failed dr_record_checkpointed "
              "recorded nodes");
        for (int i = 0; i < n; i++)
            CHECK(out[i].idx == DR_NONE && same_bits(out[i].val, x0[i].val),
                  "a failed dr_record_checkpointed's output %d", i);
        CHECK(P->own.destroyed == 0, "a failed dr_record_checkpointed "
              "called destroy");
        free(P);
        return;
    }
    owned_give(&P->own, TAPE_MAIN, use_destroy);
    if (h == lv->h && lv->order == 2) /* (a child of order 2) */
        bad_add(&lv->bad, mark, dr_tape_mark(h));
    S.nexternal++;
    /* the same loop unrolled, with the reference */
    dr_tape *t = scratch();
    if (!t)
        return;
    dr_real in3[LN], out3[LN];
    unrolled(P, t, nsteps, x0, d0, in3, out3);
    dual *ref = P->ref;
    P->ref = NULL;
    for (int i = 0; i < n; i++) {
        CHECK(same_bits(out[i].val, out3[i].val),
              "checkpointed loop output %d: %.17g, unrolled %.17g", i,
              out[i].val, out3[i].val);
        CHECK((out[i].idx == DR_NONE) == (out3[i].idx == DR_NONE),
              "checkpointed loop output %d: %s, unrolled %s", i,
              out[i].idx == DR_NONE ? "a constant" : "active",
              out3[i].idx == DR_NONE ? "a constant" : "active");
    }
    for (int i = 0; i < n; i++) {
        dual d = ref[i];
        d.v = out[i].val;
        if (out[i].idx == DR_NONE)
            dual_const(&d, out[i].val);
        else
            note_id(out[i].idx);
        put_s((int)((k >> 2) + (unsigned)i * 11) % NS, out[i], &d, -1);
    }
    /* the gradient, bit for bit: one sweep seeded on the outputs, on
       either tape */
    if (!(distinct && inputs) || whole_status() != DR_OK ||
        S.L[0].hs.st != DR_OK)
        return;
    double w[LN], g[LN], g3[LN];
    for (int i = 0; i < n; i++)
        w[i] = rdw(r);
    st = dr_vjp(S.T, (size_t)n, out, w, (size_t)n, x0, g);
    CHECK(st == DR_OK, "dr_vjp through a checkpointed loop: %s", sn(st));
    dr_status st3 = dr_vjp(t, (size_t)n, out3, w, (size_t)n, in3, g3);
    CHECK(st3 == DR_OK, "dr_vjp through the unrolled loop: %s", sn(st3));
    for (int i = 0; i < n; i++)
        CHECK(same_bits(g[i], g3[i]),
              "gradient through a checkpointed loop (%zu steps, segment "
              "%zu, %zu snapshots) [%d]: %.17g, unrolled %.17g", nsteps, seg,
              snap, i, g[i], g3[i]);
}

/* a step that fails while the loop is recorded, or captures a value of the
   caller's tape */
static void failing_loop(unsigned k, rd *r, lprog *P)
{
    static const dr_status fails[] = {DR_ERANGE, DR_ENOMEM, DR_ESHAPE,
                                      DR_EINVAL, DR_EBUSY, DR_ENOTSUP};
    int n = P->n;
    dr_real x0[LN];
    for (int i = 0; i < n; i++) {
        int j = pick_s(u8(r));
        x0[i] = j >= 0 ? S.s[j].r : dr_const(rdv(r));
    }
    size_t nsteps = u8(r) % 12;
    size_t seg = u8(r) % 4;
    bool capture = k & 0x10;
    dr_status want = DR_OK;
    if (capture) {
        int j = pick_s(u8(r));
        if (j < 0 || S.s[j].r.idx == DR_NONE) {
            free(P);
            return;
        }
        P->use_capture = true;
        P->capture = S.s[j].r;
        /* the first operation takes it as its second argument */
        P->ops[0].kind = 1;
        want = nsteps ? DR_EINVAL : DR_OK;
    } else {
        P->fail_at = 1 + (long)(u8(r) % 14);
        P->fail_st = fails[u8(r) % 6];
    }
    level *lv = top();
    bool bad = false;
    for (int i = 0; i < n; i++) {
        bool ok = x0[i].idx == DR_NONE;
        for (int s = 0; s < NS && !ok; s++)
            ok = svisible(&S.s[s]) && S.s[s].r.idx == x0[i].idx;
        bad |= !ok;
    }
    if (bad) {
        free(P);
        return;
    }
    dr_status pre = lv->hs.st;
    dr_loop loop = {P, lstep, owned_destroy, seg};
    dr_real out[LN];
    dr_idx mark = dr_tape_mark(lv->h);
    dr_status st = dr_record_checkpointed(lv->h, &loop, nsteps, (size_t)n,
                                          x0, 1 + u8(r) % 3, out);
    /* the step's status, where a call of it failed */
    if (pre != DR_OK)
        want = pre;
    else if (!capture)
        want = P->fail_at <= P->calls ? P->fail_st : DR_OK;
    TRACE("  failing loop (%s, %zu steps) -> %s after %ld calls\n",
          capture ? "capture" : "status", nsteps, sn(st), P->calls);
    CHECK(st == want, "dr_record_checkpointed with a %s: %s, expected %s",
          capture ? "step using a value of the caller's tape"
                  : "failing step",
          sn(st), sn(want));
    check_sticky("dr_record_checkpointed (failing step)", lv->h, &lv->hs);
    if (st == DR_OK) {
        /* (no step ran, or none failed: a loop like any other; it may
           fail in a later sweep: keep it off the main tape's sweeps) */
        P->fail_at = 0;
        P->use_capture = false;
        owned_give(&P->own, TAPE_MAIN, true);
        if (lv->order == 2)
            bad_add(&lv->bad, mark, dr_tape_mark(lv->h));
        for (int i = 0; i < n; i++) {
            dual d;
            if (out[i].idx == DR_NONE) {
                dual_const(&d, out[i].val);
            } else {
                note_id(out[i].idx);
                dual_unknown(&d, out[i].val);
            }
            put_s((int)(u8(r) % NS), out[i], &d, -1);
        }
        return;
    }
    CHECK(dr_tape_mark(lv->h) == mark, "a failed dr_record_checkpointed "
          "recorded nodes");
    CHECK(P->own.destroyed == 0, "a failed dr_record_checkpointed called "
          "destroy");
    free(P);
}

/* a step that fails when a sweep runs it again: on a tape of its own */
static void failing_sweep(rd *r, lprog *P)
{
    static const dr_status fails[] = {DR_ERANGE, DR_ENOMEM, DR_ESHAPE,
                                      DR_EINVAL, DR_EBUSY};
    dr_tape *t = dr_tape_new();
    if (!t) {
        free(P);
        return;
    }
    int n = P->n;
    dr_real x[LN], out[LN];
    for (int i = 0; i < n; i++)
        x[i] = dr_input(t, rdv(r));
    size_t nsteps = 1 + u8(r) % 20;
    size_t seg = u8(r) % 5;
    dr_loop loop = {P, lstep, owned_destroy, seg};
    dr_status st = dr_record_checkpointed(t, &loop, nsteps, (size_t)n, x,
                                          u8(r) % 4, out);
    CHECK(st == DR_OK, "dr_record_checkpointed: %s", sn(st));
    owned_give(&P->own, TAPE_SCRATCH, true);
    P->fail_at = P->calls + 1 + (long)(u8(r) % 8);
    P->fail_st = fails[u8(r) % 5];
    bool fwd = u8(r) & 1;
    double g[LN], v[LN] = {1, -1, 0.5, 2};
    long before = P->calls;
    st = fwd ? dr_jvp(t, (size_t)n, out, (size_t)n, x, v, g)
             : dr_gradient(t, out[0], (size_t)n, x, g);
    bool fired = P->calls >= P->fail_at;
    TRACE("  sweep through a loop whose step fails at call %ld: %s after "
          "%ld calls\n", P->fail_at, sn(st), P->calls - before);
    dr_status want = fired ? P->fail_st : DR_OK;
    CHECK(st == want, "a %s through a loop whose step failed: %s, expected "
          "%s", fwd ? "dr_jvp" : "dr_gradient", sn(st), sn(want));
    CHECK(dr_tape_status(t) == want, "the sticky status after a step failed "
          "in a sweep: %s, expected %s", sn(dr_tape_status(t)), sn(want));
    if (fired) { /* sticky: the next sweep answers the same */
        st = dr_gradient(t, out[0], (size_t)n, x, g);
        CHECK(st == want, "a sweep after a step failed in one: %s", sn(st));
    }
    dr_tape_free(t);
    owned_gone(TAPE_SCRATCH, "dr_tape_free of a loop's tape");
}

void op_loop(rd *r)
{
    unsigned k = u8(r);
    if ((k & 7) == 7) {
        check_repeats(r);
        return;
    }
    lprog *P = prog_new(r);
    if (!P)
        return;
    switch (k & 7) {
    case 5: failing_loop(k, r, P); break;
    case 6: failing_sweep(r, P); break;
    default: main_loop(k, r, P); break;
    }
}

void loops_end(void)
{
    dr_tape_free(g_scratch);
    g_scratch = NULL;
}
