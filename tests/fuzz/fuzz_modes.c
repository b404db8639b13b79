/*
 * fuzz_modes.c - forward and vector modes on the main tape (tests/fuzz/
 * README.md, "Forward and vector modes"): dr_jvp, dr_vjp, dr_jvp_vec,
 * dr_vjp_vec, and dr_tangent_seed / dr_forward / dr_tangent with the
 * array tangents (dr_arr_tangent_seed[_vec], dr_arr_tangent[_vec],
 * dr_arr_tangents_clear), with empty and NULL arrays where the header
 * allows them.
 *
 * The reference is the first-order one every operation keeps: a forward
 * sweep seeded with s_q on the inputs x_q gives every node the tangent
 * sum_d sigma_d t[d] (sigma_d: the seeds of direction d), a reverse sweep
 * seeded with w_i on the outputs y_i gives each input the adjoint
 * sum_i w_i t_i[d] (cmp_deriv).  Forward results are compared where no
 * direction reaching them is wild even through a zero partial
 * (cmp_comb_rec): the scalar forward sweep skips a zero partial times an
 * infinite tangent, but an array's forward rule multiplies them as IEEE
 * does (the header promises the skipping for reverse rules only).
 */
#include "fuzz_model.h"

#include <string.h>

/* Tangent seeds (k == 1) left on array inputs by earlier operations: they
   take part in every forward sweep of one direction until
   dr_arr_tangents_clear (or a clear of the tape). */
static struct {
    double s1[NT];
    bool unknown; /* on an element the reference does not follow */
} A;

void modes_cleared(void)
{
    memset(&A, 0, sizeof A);
}

static void arr_seeds_clear(void)
{
    dr_status st = dr_arr_tangents_clear(S.T);
    dr_status want = whole_status();
    CHECK(st == want, "dr_arr_tangents_clear: %s, expected %s", sn(st),
          sn(want));
    if (st == DR_OK)
        memset(&A, 0, sizeof A);
}

/* outputs and inputs of a product (as op_gradient picks them) */
typedef struct io {
    int m, n;
    dr_real y[3], x[6];
    const dual *yd[3];
    int xdim[6];
    bool bad;      /* an id not on the tape among them */
} io;

static bool pick_io(rd *r, io *P, int mmax)
{
    static dual cb[3], cbx[6];
    P->m = (int)(u8(r) % (unsigned)(mmax + 1));
    P->n = (int)(u8(r) % 7);
    P->bad = false;
    for (int i = 0; i < P->m; i++) {
        opnd o = (u8(r) & 0x3f) == 0x3f ? bad_operand(r, &cb[i])
                                        : operand(r, &cb[i]);
        if (o.kind < 0 || o.kind == V_UNKNOWN)
            return false;
        P->y[i] = o.r;
        P->yd[i] = o.d;
        P->bad |= o.kind == V_INVALID;
    }
    for (int i = 0; i < P->n; i++) {
        unsigned b = u8(r);
        P->xdim[i] = -1;
        if ((b & 0x3f) == 0x3f) {
            opnd o = bad_operand(r, &cbx[i]);
            if (o.kind != V_INVALID && o.kind != V_CONST)
                return false;
            P->x[i] = o.r;
            P->bad |= o.kind == V_INVALID;
            continue;
        }
        if ((b & 0x3f) == 0x3e) { /* an array id as a scalar input */
            int aj = pick_a(b >> 6);
            if (aj >= 0) {
                P->x[i] = (dr_real){0.0, S.a[aj].h.idx};
                P->bad = true;
                continue;
            }
        }
        int j = pick_input(b);
        if (j < 0 || (b & 0xc0) == 0xc0) {
            P->x[i] = dr_const(1.0);
        } else {
            P->x[i] = S.s[j].r;
            P->xdim[i] = S.s[j].dim;
        }
    }
    return true;
}

/* the status of a product call on t: a child handle, then the whole
   tape, then its sticky status, then the ids */
static dr_status want_of(bool child, const io *P, bool forward)
{
    dr_status w = child ? DR_EINVAL : whole_status();
    if (w == DR_OK && S.L[0].hs.st != DR_OK)
        w = S.L[0].hs.st;
    if (w == DR_OK && P && P->bad)
        w = DR_EINVAL;
    if (w == DR_OK && forward && S.no_fwd)
        w = DR_ENOTSUP;
    return w;
}

/* the seeds of one forward sweep by direction: xdot on the inputs
   (stride: the layout of the vector calls), plus the array seeds */
static void sigma(const io *P, const double *xdot, size_t stride, size_t j,
                  bool with_arrays, double *sg)
{
    for (int d = 0; d < NT; d++)
        sg[d] = with_arrays ? A.s1[d] : 0.0;
    for (int q = 0; q < P->n; q++)
        if (P->xdim[q] >= 0)
            sg[P->xdim[q]] += xdot[(size_t)q * stride + j];
}

/* every visible scalar and array tangent after a forward sweep of one
   direction with the seeds sg */
static void check_tangents(const char *what, const double *sg)
{
    for (int i = 0; i < NS; i++) {
        sslot *x = &S.s[i];
        if (!svisible(x))
            continue;
        double t = dr_tangent(S.T, x->r.idx);
        cmp_comb_rec(what, t, &x->d, sg, i);
    }
    for (int i = 0; i < NA; i++) {
        aslot *x = &S.a[i];
        if (!avisible(x))
            continue;
        double t[MAXE];
        dr_status st = dr_arr_tangent(S.T, x->h.idx, t);
        CHECK(st == DR_OK, "dr_arr_tangent: %s", sn(st));
        for (int64_t q = 0; q < x->n; q++)
            cmp_comb_rec(what, t[q], &x->el[q], sg, (int)q);
    }
}

/* the combined output of a reverse sweep: sum_i w_i y_i */
static void comb_of(const io *P, const double *w, size_t stride, size_t j,
                    dual *out)
{
    term tm[3];
    for (int i = 0; i < P->m; i++)
        tm[i] = (term){P->yd[i], w[j * stride + (size_t)i], 0.0};
    lin(out, 0.0, P->m, tm);
}

static void check_xbar(const char *what, const io *P, const double *xbar,
                       const dual *comb, int row)
{
    for (int q = 0; q < P->n; q++) {
        if (P->x[q].idx == DR_NONE) {
            CHECK(xbar[q] == 0.0, "%s[%d]: %.17g w.r.t. a constant", what,
                  row * P->n + q, xbar[q]);
            continue;
        }
        cmp_deriv(what, xbar[q], comb, P->xdim[q], row * P->n + q);
    }
}

static void m_jvp(unsigned k, rd *r)
{
    io P;
    if (!pick_io(r, &P, 3))
        return;
    double xdot[6], ydot[3] = {-7, -7, -7};
    for (int q = 0; q < P.n; q++)
        xdot[q] = rdw(r);
    bool child = S.depth > 0 && (k & 0x40);
    dr_tape *t = child ? top()->h : S.T;
    dr_status st = dr_jvp(t, (size_t)P.m, P.m ? P.y : NULL, (size_t)P.n,
                          P.n ? P.x : NULL, P.n ? xdot : NULL,
                          P.m ? ydot : NULL);
    dr_status want = want_of(child, &P, true);
    TRACE("  dr_jvp(m %d, n %d) -> %s\n", P.m, P.n, sn(st));
    CHECK(st == want, "dr_jvp: %s, expected %s", sn(st), sn(want));
    check_sticky("dr_jvp", top()->h, &top()->hs);
    if (st != DR_OK || !comparable() || A.unknown)
        return;
    double sg[NT];
    sigma(&P, xdot, 1, 0, true, sg);
    for (int i = 0; i < P.m; i++)
        cmp_comb_rec("dr_jvp", ydot[i], P.yd[i], sg, i);
    if (k & 0x20) /* the tangents of every node stay readable */
        check_tangents("dr_tangent after dr_jvp", sg);
}

static void m_vjp(unsigned k, rd *r)
{
    io P;
    if (!pick_io(r, &P, 3))
        return;
    double ybar[3], xbar[6];
    for (int i = 0; i < P.m; i++)
        ybar[i] = rdw(r);
    for (int q = 0; q < 6; q++)
        xbar[q] = -7;
    bool child = S.depth > 0 && (k & 0x40);
    dr_tape *t = child ? top()->h : S.T;
    dr_status st = dr_vjp(t, (size_t)P.m, P.m ? P.y : NULL,
                          P.m ? ybar : NULL, (size_t)P.n, P.n ? P.x : NULL,
                          P.n ? xbar : NULL);
    dr_status want = want_of(child, &P, false);
    TRACE("  dr_vjp(m %d, n %d) -> %s\n", P.m, P.n, sn(st));
    CHECK(st == want, "dr_vjp: %s, expected %s", sn(st), sn(want));
    check_sticky("dr_vjp", top()->h, &top()->hs);
    if (st != DR_OK)
        return;
    /* the adjoints stay readable */
    for (int q = 0; q < P.n; q++) {
        double a = dr_adjoint(S.T, P.x[q].idx);
        CHECK(memcmp(&a, &xbar[q], sizeof a) == 0 ||
                  (isnan(a) && isnan(xbar[q])),
              "dr_adjoint after dr_vjp: %.17g, xbar %.17g", a, xbar[q]);
    }
    if (!comparable())
        return;
    dual comb;
    comb_of(&P, ybar, 0, 0, &comb);
    check_xbar("dr_vjp", &P, xbar, &comb, 0);
}

static void m_jvp_vec(unsigned k, rd *r)
{
    io P;
    if (!pick_io(r, &P, 3))
        return;
    size_t kk = u8(r) % 5;
    bool huge = (k & 0x30) == 0x30;
    if (huge) {
        if (P.m < 2 && P.n < 2)
            return;
        kk = SIZE_MAX / 2 + 7; /* k * n overflows */
    }
    double X[6 * 4], Y[3 * 4];
    for (size_t i = 0; i < 6 * 4; i++)
        X[i] = rdw(r);
    for (size_t i = 0; i < 3 * 4; i++)
        Y[i] = -7;
    /* the tape's own tangents are untouched */
    int probe = pick_s(k >> 2);
    double before = probe >= 0 ? dr_tangent(S.T, S.s[probe].r.idx) : 0;
    bool child = S.depth > 0 && (k & 0x40);
    dr_tape *t = child ? top()->h : S.T;
    dr_status st = dr_jvp_vec(t, (size_t)P.m, P.m ? P.y : NULL, (size_t)P.n,
                              P.n ? P.x : NULL, kk, P.n ? X : NULL,
                              P.m ? Y : NULL);
    dr_status want = huge ? DR_EINVAL : want_of(child, &P, kk > 0);
    TRACE("  dr_jvp_vec(m %d, n %d, k %zu) -> %s\n", P.m, P.n, kk, sn(st));
    /* (with no outputs the library answers DR_OK where dr_jvp, which the
       header says it answers as, says DR_ENOTSUP: either goes) */
    if (want == DR_ENOTSUP && P.m == 0)
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_jvp_vec: %s", sn(st));
    else
        CHECK(st == want, "dr_jvp_vec: %s, expected %s", sn(st), sn(want));
    check_sticky("dr_jvp_vec", top()->h, &top()->hs);
    if (probe >= 0) {
        double after = dr_tangent(S.T, S.s[probe].r.idx);
        CHECK(memcmp(&before, &after, sizeof before) == 0 ||
                  (isnan(before) && isnan(after)),
              "dr_jvp_vec changed a tangent: %.17g, before %.17g", after,
              before);
    }
    if (st != DR_OK || huge || !comparable() || (A.unknown && kk == 1))
        return;
    for (size_t j = 0; j < kk; j++) {
        double sg[NT];
        sigma(&P, X, kk, j, kk == 1, sg);
        for (int i = 0; i < P.m; i++)
            cmp_comb_rec("dr_jvp_vec", Y[(size_t)i * kk + j], P.yd[i], sg,
                     (int)((size_t)i * kk + j));
    }
}

static void m_vjp_vec(unsigned k, rd *r)
{
    io P;
    if (!pick_io(r, &P, 3))
        return;
    size_t kk = u8(r) % 5;
    bool huge = (k & 0x30) == 0x30;
    if (huge) {
        /* (m = n = 0: nothing to compute for any k; a k the arrays do not
           hold is the caller's error, not a case) */
        if (P.m == 0 && P.n == 0)
            kk = SIZE_MAX;
        else if (P.m < 2 && P.n < 2)
            return;
        else
            kk = SIZE_MAX / 2 + 7;
    }
    double Yb[4 * 3], X[4 * 6];
    for (size_t i = 0; i < 4 * 3; i++)
        Yb[i] = rdw(r);
    for (size_t i = 0; i < 4 * 6; i++)
        X[i] = -7;
    bool child = S.depth > 0 && (k & 0x40);
    dr_tape *t = child ? top()->h : S.T;
    dr_status st = dr_vjp_vec(t, (size_t)P.m, P.m ? P.y : NULL, kk,
                              P.m ? Yb : NULL, (size_t)P.n, P.n ? P.x : NULL,
                              P.n ? X : NULL);
    bool overflow = huge && (P.m >= 2 || P.n >= 2);
    dr_status want = overflow ? DR_EINVAL : want_of(child, &P, false);
    TRACE("  dr_vjp_vec(m %d, n %d, k %zu) -> %s\n", P.m, P.n, kk, sn(st));
    CHECK(st == want, "dr_vjp_vec: %s, expected %s", sn(st), sn(want));
    check_sticky("dr_vjp_vec", top()->h, &top()->hs);
    if (st != DR_OK || huge || !comparable())
        return;
    for (size_t j = 0; j < kk; j++) {
        dual comb;
        comb_of(&P, Yb, (size_t)P.m, j, &comb);
        check_xbar("dr_vjp_vec", &P, X + j * (size_t)P.n, &comb, (int)j);
    }
}

/* a tangent seed pattern over an array's elements */
static void pattern(double w, int64_t n, double *t)
{
    for (int64_t q = 0; q < n; q++)
        t[q] = w * (double)((q % 3) + 1) * ((q & 1) ? -1 : 1);
}

/* seeds by hand, one forward sweep, every tangent read */
static void m_forward(unsigned k, rd *r)
{
    dr_status want = whole_status();
    dr_status st = dr_tangents_clear(S.T);
    CHECK(st == want, "dr_tangents_clear: %s, expected %s", sn(st),
          sn(want));
    if (S.depth > 0) {
        st = dr_tangents_clear(top()->h);
        CHECK(st == DR_EINVAL, "dr_tangents_clear on a child handle: %s",
              sn(st));
        st = dr_forward(top()->h);
        CHECK(st == DR_EINVAL, "dr_forward on a child handle: %s", sn(st));
        st = dr_arr_tangents_clear(top()->h);
        CHECK(st == DR_EINVAL, "dr_arr_tangents_clear on a child handle: "
              "%s", sn(st));
        CHECK(isnan(dr_tangent(top()->h, DR_NONE)) ||
                  dr_tangent(top()->h, DR_NONE) == 0.0,
              "dr_tangent on a child handle");
    }
    if (want != DR_OK) {
        st = dr_forward(S.T);
        CHECK(st == want, "dr_forward while busy: %s", sn(st));
        st = dr_arr_tangents_clear(S.T);
        CHECK(st == want, "dr_arr_tangents_clear while busy: %s", sn(st));
        return;
    }
    if (k & 0x10)
        arr_seeds_clear();
    double sg[NT] = {0};
    int ns = (int)(u8(r) % 5);
    for (int i = 0; i < ns; i++) {
        unsigned b = u8(r);
        double w = rdw(r);
        switch (b % 6) {
        case 0: case 1: { /* an input */
            int j = pick_input(b >> 3);
            if (j < 0)
                break;
            st = dr_tangent_seed(S.T, S.s[j].r.idx, w);
            CHECK(st == DR_OK, "dr_tangent_seed: %s", sn(st));
            sg[S.s[j].dim] += w;
            break;
        }
        case 2: { /* an array input (or, doing nothing, another array) */
            int aj = pick_a(b >> 3);
            if (aj < 0)
                break;
            aslot *x = &S.a[aj];
            double t[MAXE];
            pattern(w, x->n, t);
            st = dr_arr_tangent_seed(S.T, x->h.idx, t);
            CHECK(st == DR_OK, "dr_arr_tangent_seed: %s", sn(st));
            if (!x->input)
                break;
            for (int64_t q = 0; q < x->n; q++) {
                if (x->dim[q] >= 0)
                    A.s1[x->dim[q]] += t[q];
                else if (t[q] != 0.0)
                    A.unknown = true;
            }
            break;
        }
        case 3: { /* ids that are not inputs of the tape */
            dual cb;
            opnd o = bad_operand(r, &cb);
            if (o.kind == V_INVALID) {
                st = dr_tangent_seed(S.T, o.r.idx, w);
                CHECK(st == DR_EINVAL, "dr_tangent_seed of a bad id: %s",
                      sn(st));
                CHECK(isnan(dr_tangent(S.T, o.r.idx)), "dr_tangent of a bad "
                      "id");
                double t[MAXE];
                st = dr_arr_tangent_seed(S.T, o.r.idx, t);
                CHECK(st == DR_EINVAL, "dr_arr_tangent_seed of a bad id: %s",
                      sn(st));
            }
            st = dr_tangent_seed(S.T, DR_NONE, w);
            CHECK(st == DR_OK, "dr_tangent_seed(DR_NONE): %s", sn(st));
            CHECK(dr_tangent(S.T, DR_NONE) == 0.0, "dr_tangent(DR_NONE)");
            break;
        }
        case 4: { /* an array id as a scalar, a scalar id as an array */
            int aj = pick_a(b >> 3);
            if (aj >= 0) {
                st = dr_tangent_seed(S.T, S.a[aj].h.idx, w);
                CHECK(st == DR_EINVAL, "dr_tangent_seed of an array id: %s",
                      sn(st));
                st = dr_arr_tangent_seed(S.T, S.a[aj].h.idx, NULL);
                CHECK(st == (S.a[aj].n ? DR_EINVAL : DR_OK),
                      "dr_arr_tangent_seed(NULL) of %lld elements: %s",
                      (long long)S.a[aj].n, sn(st));
            }
            int j = pick_s(b >> 3);
            if (j >= 0 && S.s[j].r.idx != DR_NONE) {
                double t[MAXE] = {0};
                st = dr_arr_tangent_seed(S.T, S.s[j].r.idx, t);
                CHECK(st == DR_EINVAL, "dr_arr_tangent_seed of a scalar id: "
                      "%s", sn(st));
            }
            break;
        }
        default: /* seeds cleared again */
            st = dr_tangents_clear(S.T);
            CHECK(st == DR_OK, "dr_tangents_clear: %s", sn(st));
            memset(sg, 0, sizeof sg);
            break;
        }
    }
    st = dr_forward(S.T);
    want = S.L[0].hs.st != DR_OK ? S.L[0].hs.st
           : S.no_fwd            ? DR_ENOTSUP
                                 : DR_OK;
    TRACE("  dr_forward -> %s\n", sn(st));
    CHECK(st == want, "dr_forward: %s, expected %s", sn(st), sn(want));
    check_sticky("dr_forward", S.T, &S.L[0].hs);
    if (st == DR_OK && comparable() && !A.unknown) {
        double all[NT];
        for (int d = 0; d < NT; d++)
            all[d] = sg[d] + A.s1[d];
        check_tangents("dr_tangent", all);
    }
    /* k directions: seeds of that width on an array input, a product */
    if ((k & 0x20) && st == DR_OK) {
        size_t kk = 2 + u8(r) % 2;
        int aj = pick_a(u8(r));
        double tv[MAXE * 3] = {0};
        double s2[3][NT];
        memset(s2, 0, sizeof s2);
        bool unk = false;
        if (aj >= 0) {
            aslot *x = &S.a[aj];
            for (size_t j = 0; j < kk; j++)
                pattern(rdw(r), x->n, tv + j * (size_t)x->n);
            st = dr_arr_tangent_seed_vec(S.T, x->h.idx, kk, tv);
            CHECK(st == DR_OK, "dr_arr_tangent_seed_vec: %s", sn(st));
            if (x->input)
                for (size_t j = 0; j < kk; j++)
                    for (int64_t q = 0; q < x->n; q++) {
                        if (x->dim[q] >= 0)
                            s2[j][x->dim[q]] += tv[j * (size_t)x->n + q];
                        else if (tv[j * (size_t)x->n + q] != 0.0)
                            unk = true;
                    }
            /* the k == 1 seeds of that array are replaced */
            for (int64_t q = 0; x->input && q < x->n; q++)
                if (x->dim[q] >= 0)
                    A.s1[x->dim[q]] = 0.0;
            st = dr_arr_tangent_seed_vec(S.T, x->h.idx, 0, tv);
            CHECK(st == DR_EINVAL, "dr_arr_tangent_seed_vec(k = 0): %s",
                  sn(st));
        }
        int j = pick_s(u8(r));
        io P;
        P.m = j >= 0 ? 1 : 0;
        P.n = 0;
        P.bad = false;
        if (j >= 0) {
            P.y[0] = S.s[j].r;
            P.yd[0] = &S.s[j].d;
        }
        int xi = pick_input(u8(r));
        double X[3];
        if (xi >= 0) {
            P.n = 1;
            P.x[0] = S.s[xi].r;
            P.xdim[0] = S.s[xi].dim;
        }
        for (size_t q = 0; q < kk; q++)
            X[q] = rdw(r);
        double Y[3] = {-7, -7, -7};
        st = dr_jvp_vec(S.T, (size_t)P.m, P.y, (size_t)P.n, P.x, kk, X, Y);
        CHECK(st == DR_OK, "dr_jvp_vec with array seeds: %s", sn(st));
        /* (no outputs: no sweep) */
        if (comparable() && !unk && P.m > 0) {
            for (size_t q = 0; q < kk; q++) {
                double sgq[NT];
                for (int d = 0; d < NT; d++)
                    sgq[d] = s2[q][d];
                if (P.n)
                    sgq[P.xdim[0]] += X[q];
                if (P.m)
                    cmp_comb_rec("dr_jvp_vec (array seeds)", Y[q], P.yd[0],
                                 sgq, (int)q);
                for (int i = 0; i < NA; i++) {
                    aslot *x = &S.a[i];
                    if (!avisible(x))
                        continue;
                    double t[MAXE * 3];
                    st = dr_arr_tangent_vec(S.T, x->h.idx, kk, t);
                    CHECK(st == DR_OK, "dr_arr_tangent_vec: %s", sn(st));
                    for (int64_t e = 0; e < x->n; e++)
                        cmp_comb_rec("dr_arr_tangent_vec",
                                 t[q * (size_t)x->n + (size_t)e],
                                 &x->el[e], sgq, (int)e);
                }
            }
        }
        for (int i = 0; i < NA && P.m > 0; i++) {
            aslot *x = &S.a[i];
            if (!avisible(x) || !x->active)
                continue;
            double t[MAXE];
            st = dr_arr_tangent(S.T, x->h.idx, t);
            CHECK(st == DR_EINVAL, "dr_arr_tangent after a sweep of %zu "
                  "directions: %s", kk, sn(st));
            break;
        }
        arr_seeds_clear();
        return;
    }
    if (k & 0x80) /* left for the sweeps that follow */
        return;
    arr_seeds_clear();
}

/* NULL arrays, sizes that overflow, NULL tapes */
static void m_misuse(unsigned k, rd *r)
{
    (void)r;
    dr_real y = {1.0, DR_NONE};
    double v[2] = {1, 2}, o[2];
    CHECK(dr_jvp(S.T, 1, NULL, 0, NULL, NULL, o) == DR_EINVAL,
          "dr_jvp(y NULL)");
    CHECK(dr_jvp(S.T, 1, &y, 0, NULL, NULL, NULL) == DR_EINVAL,
          "dr_jvp(ydot NULL)");
    CHECK(dr_jvp(S.T, 0, NULL, 1, &y, NULL, NULL) == DR_EINVAL,
          "dr_jvp(xdot NULL)");
    CHECK(dr_vjp(S.T, 1, &y, NULL, 0, NULL, NULL) == DR_EINVAL,
          "dr_vjp(ybar NULL)");
    CHECK(dr_vjp(S.T, 0, NULL, NULL, 1, &y, NULL) == DR_EINVAL,
          "dr_vjp(xbar NULL)");
    CHECK(dr_jvp_vec(S.T, 1, &y, 0, NULL, 1, NULL, NULL) == DR_EINVAL,
          "dr_jvp_vec(Ydot NULL)");
    CHECK(dr_vjp_vec(S.T, 1, &y, 1, NULL, 0, NULL, NULL) == DR_EINVAL,
          "dr_vjp_vec(Ybar NULL)");
    CHECK(dr_jvp(NULL, 0, NULL, 0, NULL, NULL, NULL) == DR_EINVAL,
          "dr_jvp(NULL tape)");
    CHECK(dr_vjp_vec(NULL, 0, NULL, 0, NULL, 0, NULL, NULL) == DR_EINVAL,
          "dr_vjp_vec(NULL tape)");
    CHECK(dr_forward(NULL) == DR_EINVAL, "dr_forward(NULL)");
    CHECK(dr_tangents_clear(NULL) == DR_EINVAL, "dr_tangents_clear(NULL)");
    CHECK(dr_arr_tangents_clear(NULL) == DR_EINVAL,
          "dr_arr_tangents_clear(NULL)");
    CHECK(dr_tangent_seed(NULL, 0, 1.0) == DR_EINVAL,
          "dr_tangent_seed(NULL)");
    CHECK(isnan(dr_tangent(NULL, 0)), "dr_tangent(NULL)");
    /* nothing to compute: the whole tape's status */
    dr_status want = want_of(false, NULL, true);
    dr_status st = dr_jvp(S.T, 0, NULL, 0, NULL, NULL, NULL);
    CHECK(st == want, "dr_jvp(0, 0): %s, expected %s", sn(st), sn(want));
    st = dr_jvp_vec(S.T, 0, NULL, 0, NULL, 3, NULL, NULL);
    CHECK(st == want || (want == DR_ENOTSUP && st == DR_OK),
          "dr_jvp_vec(0, 0): %s, expected %s", sn(st), sn(want));
    want = want_of(false, NULL, false);
    st = dr_vjp(S.T, 0, NULL, NULL, 0, NULL, NULL);
    CHECK(st == want, "dr_vjp(0, 0): %s, expected %s", sn(st), sn(want));
    st = dr_jvp_vec(S.T, 0, NULL, 0, NULL, 0, NULL, NULL);
    CHECK(st == want, "dr_jvp_vec(k = 0): %s, expected %s", sn(st), sn(want));
    st = dr_vjp_vec(S.T, 0, NULL, (k & 0x40) ? SIZE_MAX : 3, NULL, 0, NULL,
                    NULL);
    CHECK(st == want, "dr_vjp_vec(0, 0): %s, expected %s", sn(st), sn(want));
    /* k * m or k * n overflows */
    dr_real y2[2] = {y, y};
    st = dr_jvp_vec(S.T, 2, y2, 2, y2, SIZE_MAX / 2 + 7, v, o);
    CHECK(st == DR_EINVAL, "dr_jvp_vec with k * n overflowing: %s", sn(st));
    st = dr_vjp_vec(S.T, 2, y2, SIZE_MAX / 2 + 7, v, 2, y2, o);
    CHECK(st == DR_EINVAL, "dr_vjp_vec with k * n overflowing: %s", sn(st));
    check_sticky("product misuse", top()->h, &top()->hs);
}

void op_modes(rd *r)
{
    unsigned k = u8(r);
    switch (k % 6) {
    case 0: m_jvp(k, r); break;
    case 1: m_vjp(k, r); break;
    case 2: m_jvp_vec(k, r); break;
    case 3: m_vjp_vec(k, r); break;
    case 4: m_forward(k, r); break;
    default: m_misuse(k, r); break;
    }
}
