/*
 * fuzz_replay.c - record once, replay at new inputs (tests/fuzz/README.md,
 * "Replay"): dr_replay, dr_value, the comparisons that record guards
 * (dr_lt ... dr_ne), the discrete results (dr_floor ... dr_signbit) and
 * dr_select.
 *
 * A fuzzed program (inputs of every kind, scalar operations, powers,
 * selects, comparisons and discrete results) is recorded at order 2 on a
 * tape of its own, then replayed at new values of some inputs.  The same
 * program recorded afresh at those values is the reference, bit for bit:
 * every node's value (dr_value), the gradient, a Jacobian-vector product
 * and a Hessian-vector product.  Where a guard's outcome differs at the new
 * values the replay must answer DR_ERETAPE and leave the tape as it was
 * (values and gradient, bit for bit); where the program holds a node that
 * does not replay (given partials) or was recorded at order 1, DR_ENOTSUP,
 * changing nothing; ids that are not inputs, an input given twice:
 * DR_EINVAL.  An input recorded without its value and left out keeps the
 * value its first use was given.
 */
#include "fuzz_model.h"

#include <stdlib.h>
#include <string.h>

#define RIN 4              /* inputs */
#define ROPS 12            /* operations */
#define RREG (RIN + ROPS)  /* registers: the inputs, then the results */

enum { RK_UNARY, RK_BINARY, RK_CONST, RK_POWI, RK_SELECT, RK_CMP,
       RK_DISCRETE, RK_NOREPLAY, N_RK };

typedef struct rop {
    uint8_t kind, f, a, b, c;
    double v;
} rop;

typedef struct rprog {
    int nin, nops;
    uint8_t inkind[RIN]; /* dr_input, dr_inputs, dr_input_range, dr_record0 */
    rop ops[ROPS];
} rprog;

/* one recording of the program at the input values v: the registers, the
   outcomes of its guards in order, and the ids of its inputs */
typedef struct rrun {
    dr_real w[RREG];
    double out[ROPS]; /* a comparison's 0 or 1, a rounded value */
    int nout;
    dr_status st;
} rrun;

static double discrete(dr_tape *t, int f, dr_real a, int *outcome)
{
    switch (f % 7) {
    case 0: return dr_floor(t, a);
    case 1: return dr_ceil(t, a);
    case 2: return dr_trunc(t, a);
    case 3: return dr_rint(t, a);
    case 4: *outcome = dr_isnan(t, a); return 0.0;
    case 5: *outcome = dr_isinf(t, a); return 0.0;
    default: *outcome = dr_signbit(t, a); return 0.0;
    }
}

static int compare(dr_tape *t, int f, dr_real a, dr_real b)
{
    switch (f % 6) {
    case 0: return dr_lt(t, a, b);
    case 1: return dr_le(t, a, b);
    case 2: return dr_gt(t, a, b);
    case 3: return dr_ge(t, a, b);
    case 4: return dr_eq(t, a, b);
    default: return dr_ne(t, a, b);
    }
}

/* the comparisons' values as the header defines them (IEEE) */
static int compare_ref(int f, double a, double b)
{
    switch (f % 6) {
    case 0: return a < b;
    case 1: return a <= b;
    case 2: return a > b;
    case 3: return a >= b;
    case 4: return a == b;
    default: return a != b;
    }
}

/* record the program on t (order 2 already set, or not) at values v */
static void record(const rprog *P, dr_tape *t, const double *v, rrun *R)
{
    R->nout = 0;
    for (int i = 0; i < P->nin; i++) {
        dr_real x;
        switch (P->inkind[i] % 4) {
        case 0: x = dr_input(t, v[i]); break;
        case 1: CHECK(dr_inputs(t, 1, &v[i], &x) == DR_OK, "dr_inputs"); break;
        case 2: {
            dr_idx first;
            CHECK(dr_input_range(t, 1, &first) == DR_OK, "dr_input_range");
            x = (dr_real){v[i], first};
            break;
        }
        default: x = (dr_real){v[i], dr_record0(t)}; break;
        }
        R->w[i] = x;
        TRACE("   r%d = input (kind %d) %.17g id %lld\n", i,
              P->inkind[i] % 4, x.val, (long long)x.idx);
    }
    for (int q = 0; q < P->nops; q++) {
        const rop *o = &P->ops[q];
        int avail = P->nin + q;
        dr_real a = R->w[o->a % avail], b = R->w[o->b % avail];
        dr_real res = a;
        int outcome = -1;
        double rounded = 0;
        bool guard = false;
        switch (o->kind % N_RK) {
        case RK_UNARY:
            res = eng_unary(t, o->f % N_UNARY, a);
            break;
        case RK_BINARY:
            res = eng_binary(t, o->f % N_BINARY, a, b);
            break;
        case RK_CONST:
            res = eng_binary(t, o->f % N_BINARY, a, dr_const(o->v));
            break;
        case RK_POWI:
            res = dr_powi(t, a, (int)(int8_t)o->f % 7);
            break;
        case RK_SELECT:
            res = dr_select(t, R->w[o->c % avail], a, b);
            break;
        case RK_CMP:
            outcome = compare(t, o->f, a, b);
            CHECK(outcome == compare_ref(o->f, a.val, b.val),
                  "comparison %d of %.17g and %.17g: %d", o->f % 6, a.val,
                  b.val, outcome);
            rounded = outcome;
            guard = true;
            break;
        case RK_DISCRETE:
            rounded = discrete(t, o->f, a, &outcome);
            if (o->f % 7 < 4) /* the rounded value joins the program */
                res = dr_add(t, a, dr_const(rounded));
            else
                rounded = outcome;
            guard = true;
            break;
        default: /* given partials: no replay */
            res = (dr_real){a.val * 0.5, dr_record1(t, a.idx, 0.5)};
            break;
        }
        TRACE("   r%d = op %d/%d (r%d, r%d, r%d, %g) = %.17g id %lld%s\n",
              P->nin + q, o->kind % N_RK, o->f, o->a % avail, o->b % avail,
              o->c % avail, o->v, res.val, (long long)res.idx,
              guard ? " (guard)" : "");
        if (guard && R->nout < ROPS)
            R->out[R->nout++] = rounded;
        R->w[P->nin + q] = res;
    }
    R->st = dr_tape_status(t);
}

/* the same bits (any NaN is a NaN: its sign and payload are not) */
static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* a node's value, by dr_value: none for a tape of order 1, nor for a node
   whose value the library never saw (given partials, an input recorded
   without its value and not replayed) */
static dr_status value_of(dr_tape *t, dr_idx id, double *v)
{
    *v = -1234.5;
    if (id == DR_NONE)
        return DR_OK;
    dr_status st = dr_value(t, id, v);
    if (dr_tape_order(t) == 1)
        CHECK(st == DR_ENOTSUP, "dr_value at order 1: %s", sn(st));
    else
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_value of node %lld: %s",
              (long long)id, sn(st));
    return st;
}

/* the values, gradient, a JVP and an HVP of the last register w.r.t. the
   inputs, on t */
typedef struct rres {
    double val[RREG], g[RIN], jv, hv[RIN];
    dr_status sv[RREG], sg, sj, sh;
} rres;

static void results(const rprog *P, dr_tape *t, const rrun *R, rres *o)
{
    int n = P->nin + P->nops;
    for (int i = 0; i < n; i++)
        o->sv[i] = value_of(t, R->w[i].idx, &o->val[i]);
    /* (after a replay a dr_real's .val is the old value: the drivers read
       the nodes) */
    dr_real y = R->w[n - 1];
    static const double dir[RIN] = {1.0, -0.5, 2.0, 0.25};
    o->sg = dr_gradient(t, y, (size_t)P->nin, R->w, o->g);
    o->sj = dr_jvp(t, 1, &y, (size_t)P->nin, R->w, dir, &o->jv);
    o->sh = dr_hvp(t, y, (size_t)P->nin, R->w, dir, o->hv);
}

/* the registers of run R that are inputs recorded without a value */
static void valueless_of(const rprog *P, const rrun *R, bool *vl)
{
    for (int i = 0; i < P->nin + P->nops; i++) {
        vl[i] = false;
        for (int q = 0; q < P->nin; q++)
            if ((P->inkind[q] % 4) >= 2 && R->w[i].idx == R->w[q].idx)
                vl[i] = true;
    }
}

/* strict: the values known for the same nodes (else: compared where both
   are known); vl: registers that are inputs recorded without a value,
   which take the value their first use was given when a replay first
   checks the tape */
static void same_results(const char *what, const rprog *P, const rres *a,
                         const rres *b, bool strict, const bool *vl)
{
    int n = P->nin + P->nops;
    for (int i = 0; i < n; i++) {
        if (strict && !vl[i])
            CHECK(a->sv[i] == b->sv[i], "%s: dr_value of node %d: %s, "
                  "expected %s", what, i, sn(a->sv[i]), sn(b->sv[i]));
        if (a->sv[i] == DR_OK && b->sv[i] == DR_OK)
            CHECK(same_bits(a->val[i], b->val[i]), "%s: node %d value "
                  "%.17g, expected %.17g", what, i, a->val[i], b->val[i]);
    }
    CHECK(a->sg == b->sg && a->sj == b->sj && a->sh == b->sh,
          "%s: statuses %s %s %s, expected %s %s %s", what, sn(a->sg),
          sn(a->sj), sn(a->sh), sn(b->sg), sn(b->sj), sn(b->sh));
    for (int i = 0; a->sg == DR_OK && i < P->nin; i++)
        CHECK(same_bits(a->g[i], b->g[i]), "%s: gradient[%d] %.17g, "
              "expected %.17g", what, i, a->g[i], b->g[i]);
    if (a->sj == DR_OK)
        CHECK(same_bits(a->jv, b->jv), "%s: jvp %.17g, expected %.17g", what,
              a->jv, b->jv);
    for (int i = 0; a->sh == DR_OK && i < P->nin; i++)
        CHECK(same_bits(a->hv[i], b->hv[i]), "%s: hvp[%d] %.17g, expected "
              "%.17g", what, i, a->hv[i], b->hv[i]);
}

void op_replay(rd *r)
{
    unsigned k = u8(r);
    rprog P;
    memset(&P, 0, sizeof P);
    P.nin = 1 + (int)(u8(r) % RIN);
    P.nops = 1 + (int)(u8(r) % ROPS);
    double v0[RIN], v1[RIN];
    for (int i = 0; i < P.nin; i++) {
        P.inkind[i] = (uint8_t)u8(r);
        v0[i] = rdv(r);
    }
    bool noreplay = false;
    for (int q = 0; q < P.nops; q++) {
        rop *o = &P.ops[q];
        o->kind = (uint8_t)(u8(r) % N_RK);
        if (o->kind == RK_NOREPLAY && !(k & 0x10))
            o->kind = RK_UNARY;
        noreplay |= o->kind == RK_NOREPLAY;
        o->f = (uint8_t)u8(r);
        o->a = (uint8_t)u8(r);
        o->b = (uint8_t)u8(r);
        o->c = (uint8_t)u8(r);
        o->v = rdv(r);
    }
    /* the inputs replayed: all those without a value (but, for misuse 3,
       one: it keeps the value its first use was given), some others */
    dr_real x[RIN + 1];
    double xv[RIN + 1];
    bool given[RIN];
    int nx = 0;
    unsigned pick = u8(r);
    double nv[RIN];
    for (int i = 0; i < P.nin; i++)
        nv[i] = rdv(r);
    bool order1 = (k & 0x0f) == 0x0f;
    unsigned misuse = (k & 0xe0) == 0xe0 ? u8(r) % 5 : 5;
    bool left = false;
    for (int i = 0; i < P.nin; i++) {
        bool valueless = (P.inkind[i] % 4) >= 2;
        given[i] = valueless || (pick >> i & 1);
        if (valueless && misuse == 3 && !left) {
            given[i] = false;
            left = true;
        }
        v1[i] = given[i] ? nv[i] : v0[i];
        if (given[i]) {
            xv[nx] = nv[i];
            x[nx++] = (dr_real){nv[i], 0}; /* (ids below) */
        }
    }
    dr_tape *t = dr_tape_new(), *f = dr_tape_new();
    if (!t || !f) {
        dr_tape_free(t);
        dr_tape_free(f);
        return;
    }
    if (!order1)
        CHECK(dr_tape_set_order(t, 2) == DR_OK, "dr_tape_set_order");
    CHECK(dr_tape_set_order(f, 2) == DR_OK, "dr_tape_set_order");
    static rrun A, B;
    record(&P, t, v0, &A);
    CHECK(A.st == DR_OK, "recording a program to replay: %s", sn(A.st));
    nx = 0;
    for (int i = 0; i < P.nin; i++)
        if (given[i])
            x[nx++].idx = A.w[i].idx;
    rres before, after, fresh;
    bool vl[RREG];
    valueless_of(&P, &A, vl);
    results(&P, t, &A, &before);
    /* the same program recorded at the new values */
    record(&P, f, v1, &B);
    CHECK(B.st == DR_OK, "recording a program afresh: %s", sn(B.st));
    /* a guard holds where the outcome, or the rounded value, is the same
       (a NaN rounds to a NaN; a zero keeps its sign, since a program may
       divide by it) */
    bool flips = A.nout != B.nout;
    for (int i = 0; !flips && i < A.nout; i++)
        flips = !(memcmp(&A.out[i], &B.out[i], sizeof(double)) == 0 ||
                  (isnan(A.out[i]) && isnan(B.out[i])));
    /* the answer, in the header's order of checks for one misuse */
    dr_status want;
    const dr_real *xp = x;
    const double *vp = xv;
    size_t n = (size_t)nx;
    dr_tape *h = t;
    switch (misuse) {
    case 0: /* an input given twice */
        if (nx == 0)
            goto plain;
        x[nx] = x[0];
        xv[nx] = xv[0];
        n++;
        want = DR_EINVAL;
        break;
    case 1: /* an id that is no input: an operation's (or none at all) */
        x[0].idx = INT64_MAX - 5;
        for (int i = P.nin; i < P.nin + P.nops; i++) {
            bool input = A.w[i].idx == DR_NONE;
            for (int q = 0; q < P.nin; q++)
                input |= A.w[i].idx == A.w[q].idx;
            if (!input)
                x[0].idx = A.w[i].idx;
        }
        if (nx == 0)
            n = 1;
        want = DR_EINVAL;
        break;
    case 2: /* NULL arrays */
        if (nx == 0)
            goto plain;
        xp = NULL;
        want = DR_EINVAL;
        break;
    case 3: /* an input without a value left out (above): no misuse */
        goto plain;
    case 4: /* no tape */
        h = NULL;
        want = DR_EINVAL;
        break;
    default:
    plain:
        want = order1 || noreplay ? DR_ENOTSUP : flips ? DR_ERETAPE : DR_OK;
        break;
    }
    dr_status st = dr_replay(h, n, xp, vp);
    TRACE("  dr_replay(%d inputs of %d, %d operations, %d guards%s%s) -> "
          "%s\n", (int)n, P.nin, P.nops, A.nout, flips ? ", a flip" : "",
          noreplay ? ", no replay" : "", sn(st));
    /* (a misuse and a tape that does not replay: either answer first) */
    if (misuse < 5 && misuse != 3 && (order1 || noreplay))
        CHECK(st == DR_EINVAL || st == DR_ENOTSUP, "dr_replay: %s", sn(st));
    else
        CHECK(st == want, "dr_replay: %s, expected %s", sn(st), sn(want));
    results(&P, t, &A, &after);
    if (st != DR_OK) {
        /* nothing changed */
        same_results("a refused dr_replay", &P, &after, &before, true, vl);
    } else {
        results(&P, f, &B, &fresh);
        same_results("dr_replay against a fresh recording", &P, &after,
                     &fresh, false, vl);
        /* and back to the first values */
        for (int i = 0; i < nx; i++) {
            int j = 0;
            while (A.w[j].idx != x[i].idx)
                j++;
            xv[i] = v0[j];
        }
        st = dr_replay(t, (size_t)nx, x, xv);
        CHECK(st == DR_OK, "dr_replay back to the recorded values: %s",
              sn(st));
        results(&P, t, &A, &after);
        same_results("dr_replay back to the recorded values", &P, &after,
                     &before, false, vl);
    }
    double dummy;
    CHECK(dr_value(t, INT64_MAX - 1, &dummy) == DR_EINVAL,
          "dr_value of an id not on the tape");
    CHECK(dr_value(t, A.w[0].idx, NULL) == DR_EINVAL, "dr_value(NULL)");
    dr_tape_free(t);
    dr_tape_free(f);
}
