/*
 * fuzz_external.c - external functions on the main tape (tests/fuzz/
 * README.md, "External functions"): dr_record_external with a fuzzed
 * function of known Jacobian, its reverse rule and (or not) its forward
 * rule, on the root or a child handle, with a recorder open or not; and
 * the calls the header refuses.
 *
 * The harness computes y = f(x) itself; the rules compute ybar^T J and
 * J xdot from the x and y the library passes them, which must be the
 * values recorded (checked in the rules).  The outputs go into the
 * program's slots with the reference's tangents (the chain rule through
 * J), so every later gradient, Jacobian, sweep and product through them
 * is checked as any other.  A context is owned by the tape from a
 * successful call on: its destroy callback must run once when the tape is
 * cleared or freed, never for a failed call (fuzz_tapes.c).
 */
#include "fuzz_model.h"

#include <stdlib.h>
#include <string.h>

#define XN 4 /* inputs */
#define XM 3 /* outputs */

typedef struct extctx {
    owned own; /* first: the destroy callback takes the context */
    int fn;
    size_t n, m;
    double M[XM][XN], c[XM];
    double x[XN], y[XM]; /* as recorded */
} extctx;

enum { F_LINEAR, F_SIN, F_PRODUCT, F_EXP, N_FN };

/* y = f(x) */
static void ext_eval(const extctx *E, const double *x, double *y)
{
    for (size_t j = 0; j < E->m; j++) {
        double u = E->c[j];
        for (size_t i = 0; i < E->n; i++)
            u += E->M[j][i] * x[i];
        switch (E->fn) {
        case F_LINEAR: y[j] = u; break;
        case F_SIN: y[j] = sin(u); break;
        case F_EXP: y[j] = exp(u); break;
        default:
            y[j] = E->n ? E->M[j][0] * x[j % E->n] * x[(j + 1) % E->n]
                        : E->c[j];
            break;
        }
    }
}

/* J (m x n) at x, y: J[j][i] += ...; returns the terms of each entry as
   (partial, input) pairs for the reference, two per output at most for
   the product */
static void ext_jac(const extctx *E, const double *x, const double *y,
                    double J[XM][XN])
{
    memset(J, 0, sizeof(double) * XM * XN);
    for (size_t j = 0; j < E->m; j++) {
        double u = E->c[j];
        for (size_t i = 0; i < E->n; i++)
            u += E->M[j][i] * x[i];
        for (size_t i = 0; i < E->n; i++) {
            switch (E->fn) {
            case F_LINEAR: J[j][i] = E->M[j][i]; break;
            case F_SIN: J[j][i] = cos(u) * E->M[j][i]; break;
            case F_EXP: J[j][i] = y[j] * E->M[j][i]; break; /* y as given */
            default: break;
            }
        }
        if (E->fn == F_PRODUCT && E->n) {
            size_t a = j % E->n, b = (j + 1) % E->n;
            J[j][a] += E->M[j][0] * x[b];
            J[j][b] += E->M[j][0] * x[a];
        }
    }
}

static void same_values(const extctx *E, size_t n, const double *x, size_t m,
                        const double *y)
{
    CHECK(n == E->n && m == E->m, "an external's rule got n %zu, m %zu "
          "(recorded %zu, %zu)", n, m, E->n, E->m);
    for (size_t i = 0; i < n; i++)
        CHECK(memcmp(&x[i], &E->x[i], sizeof x[i]) == 0,
              "an external's rule got x[%zu] = %.17g, recorded %.17g", i,
              x[i], E->x[i]);
    for (size_t j = 0; j < m; j++)
        CHECK(memcmp(&y[j], &E->y[j], sizeof y[j]) == 0,
              "an external's rule got y[%zu] = %.17g, recorded %.17g", j,
              y[j], E->y[j]);
}

/* the rules skip zero adjoints, tangents and entries of J, as the sweeps
   skip zero adjoints and the forward sweep zero partials and tangents: an
   infinite entry of J that nothing reaches, or a zero one that an
   infinite tangent reaches, makes no NaN */
static void ext_reverse(void *ctx, size_t n, const double *x, size_t m,
                        const double *y, const double *ybar, double *xbar)
{
    const extctx *E = ctx;
    same_values(E, n, x, m, y);
    double J[XM][XN];
    ext_jac(E, x, y, J);
    for (size_t i = 0; i < n; i++) {
        CHECK(xbar[i] == 0.0, "an external's reverse rule got xbar[%zu] = "
              "%.17g, not zeroed", i, xbar[i]);
        for (size_t j = 0; j < m; j++)
            if (ybar[j] != 0.0 && J[j][i] != 0.0)
                xbar[i] += ybar[j] * J[j][i];
    }
}

static void ext_forward(void *ctx, size_t n, const double *x,
                        const double *xdot, size_t m, const double *y,
                        double *ydot)
{
    const extctx *E = ctx;
    same_values(E, n, x, m, y);
    double J[XM][XN];
    ext_jac(E, x, y, J);
    for (size_t j = 0; j < m; j++) {
        CHECK(ydot[j] == 0.0, "an external's forward rule got ydot[%zu] = "
              "%.17g, not zeroed", j, ydot[j]);
        for (size_t i = 0; i < n; i++)
            if (xdot[i] != 0.0 && J[j][i] != 0.0)
                ydot[j] += J[j][i] * xdot[i];
    }
}

void op_external(rd *r)
{
    unsigned k = u8(r);
    extctx *E = calloc(1, sizeof *E);
    if (!E)
        return;
    E->fn = (int)(u8(r) % N_FN);
    E->n = u8(r) % (XN + 1);
    E->m = 1 + u8(r) % XM;
    for (size_t j = 0; j < XM; j++) {
        for (size_t i = 0; i < XN; i++)
            E->M[j][i] = ((double)(int)(u8(r) % 9) - 4.0) / 4.0;
        E->c[j] = ((double)(int)(u8(r) % 9) - 4.0) / 8.0;
    }
    /* the inputs: slots or constants (sometimes an id not on the tape) */
    dr_real x[XN];
    const dual *xd[XN];
    dual cb[XN];
    bool bad = false;
    for (size_t i = 0; i < E->n; i++) {
        unsigned b = u8(r);
        opnd o = (b & 0x3f) == 0x3f ? bad_operand(r, &cb[i])
                                    : operand(r, &cb[i]);
        if (o.kind < 0 || o.kind == V_UNKNOWN) {
            free(E);
            return;
        }
        bad |= o.kind == V_INVALID;
        x[i] = o.r;
        xd[i] = o.d;
        E->x[i] = o.r.val;
    }
    ext_eval(E, E->x, E->y);
    dr_external f = {E, ext_reverse, (k & 1) ? NULL : ext_forward,
                     (k & 2) ? NULL : owned_destroy, NULL};
    /* misuse */
    const dr_external *fp = &f;
    size_t m = E->m;
    const double *yp = E->y;
    dr_real out[XM];
    dr_real *outp = out;
    const dr_real *xp = E->n ? x : NULL;
    level *lv = top();
    dr_tape *h = lv->h;
    hstat *hs = &lv->hs;
    dr_status want = DR_OK;
    unsigned mis = (k & 0x0c) == 0x0c ? u8(r) % 7 : 7;
    switch (mis) {
    case 0: fp = NULL; want = DR_EINVAL; break;
    case 1: f.reverse = NULL; want = DR_EINVAL; break;
    case 2: m = 0; want = DR_EINVAL; break;
    case 3: outp = NULL; want = DR_EINVAL; break;
    case 4: yp = NULL; want = DR_EINVAL; break;
    case 5:
        if (E->n) {
            xp = NULL;
            want = DR_EINVAL;
        }
        break;
    case 6: /* on a forked handle */
        if (S.depth > 0) {
            h = S.L[S.depth - 1].h;
            hs = &S.L[S.depth - 1].hs;
            want = DR_EBUSY;
        }
        break;
    default: break;
    }
    if (want == DR_OK && hs->st != DR_OK)
        want = hs->st;
    if (want == DR_OK && bad)
        want = DR_EINVAL;
    for (size_t j = 0; j < XM; j++)
        out[j] = (dr_real){-99.0, 12345};
    dr_idx mark = dr_tape_mark(h);
    dr_status st = dr_record_external(h, fp, E->n, xp, m, yp, outp);
    TRACE("  dr_record_external(fn %d, n %zu, m %zu%s%s) -> %s\n", E->fn,
          E->n, m, f.forward ? "" : ", no forward",
          f.destroy ? "" : ", no destroy", sn(st));
    CHECK(st == want, "dr_record_external: %s, expected %s", sn(st),
          sn(want));
    check_sticky("dr_record_external", h, hs);
    if (st != DR_OK) {
        CHECK(dr_tape_mark(h) == mark, "a failed dr_record_external (%s) "
              "recorded nodes", sn(st));
        for (size_t j = 0; outp && yp && j < m; j++)
            CHECK(out[j].idx == DR_NONE &&
                      memcmp(&out[j].val, &E->y[j], sizeof(double)) == 0,
                  "a failed dr_record_external's output %zu: id %lld value "
                  "%.17g", j, (long long)out[j].idx, out[j].val);
        CHECK(E->own.destroyed == 0, "a failed dr_record_external called "
              "destroy");
        free(E);
        return;
    }
    owned_give(&E->own, TAPE_MAIN, f.destroy != NULL);
    /* (a child of order 2 records it, under a root of order 1: a node
       without a second-order rule for the child) */
    if (h == lv->h && lv->order == 2)
        bad_add(&lv->bad, mark, dr_tape_mark(h));
    if (!f.forward)
        S.no_fwd = true;
    S.nexternal++;
    double J[XM][XN];
    ext_jac(E, E->x, E->y, J);
    /* every output's reference before any goes into a slot (the inputs'
       may be there) */
    static dual d[XM];
    for (size_t j = 0; j < E->m; j++) {
        CHECK(out[j].idx != DR_NONE && memcmp(&out[j].val, &E->y[j],
                                              sizeof(double)) == 0,
              "dr_record_external's output %zu: id %lld value %.17g, y "
              "%.17g", j, (long long)out[j].idx, out[j].val, E->y[j]);
        note_id(out[j].idx);
        term tm[XN];
        for (size_t i = 0; i < E->n; i++)
            tm[i] = (term){xd[i], J[j][i], 0.0};
        lin(&d[j], out[j].val, (int)E->n, tm);
    }
    for (size_t j = 0; j < E->m; j++)
        put_s((int)((k >> 4) + j * 7) % NS, out[j], &d[j], -1);
}
