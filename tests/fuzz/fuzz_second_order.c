/*
 * fuzz_second_order.c - second order: dr_tape_set_order, dr_hvp,
 * dr_hessian, dr_tangent_record (tests/fuzz/README.md, "Second order").
 *
 * Two operations:
 *
 * - op_second_order runs a program of its own on the second tape
 *   (fuzz_tapes.c), cleared and set to order 2: inputs, every scalar
 *   operation, powi, user-recorded (linear) nodes, marks, recorded tangents
 *   (nested derivatives), an array node or nodes recorded at order 1 (no
 *   second-order rule), and the refusals of dr_tape_set_order.  Beside it
 *   runs a hyper-dual reference: value, gradient and Hessian over up to HN
 *   inputs, with the second derivative of every scalar rule written here
 *   from calculus.  Then the gradient, Hessian-vector products, the dense
 *   Hessian and recorded tangents (to third order) are compared with it.
 *
 * - op_order sets the main tape's order (with the refusals the header
 *   documents) and takes Hessians and recorded tangents on it: their
 *   statuses, that the tape is unchanged by dr_hvp / dr_hessian, zeros
 *   where the result depends on no input, and a recorded tangent's value
 *   against the first-order reference.  While the main tape is of order 2
 *   every other operation checks its first-order results as always.
 */
#include "fuzz_model.h"
#include "frontend/frontend.h" /* dr_fe_prog */
#include "sweep/sweep.h" /* dr__hessian_edges */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ hyper-duals */

#define HN 6         /* directions of the hyper-dual reference */
#define HH (HN * HN)
#define HALL ((uint64_t)(((uint64_t)1 << HH) - 1))
#define GALL ((uint8_t)((1u << HN) - 1))

/*
 * A value with its gradient g and Hessian h (row-major, h[i * HN + j]) over
 * HN input directions.  As for the first-order duals each entry carries the
 * sum of |products| of the path partials that make it (ga, ha: the scale of
 * rounding in any order), an error from partials that two formulas give
 * differently (ge, he), a bit saying that some term reaches it (gs, hs;
 * without one the engine's result must be exactly 0) and one saying that
 * it cannot be compared (gw, hw).  gwt: a gradient entry that cannot be
 * compared in a tangent recorded as operations, where a partial computed
 * as a value that is 0 multiplies an infinite tangent (0 * inf = NaN)
 * instead of being skipped as the sweeps skip it (only partials that are
 * constants of the rule are skipped there); the Hessian, made of such
 * tangents, follows gwt.  big / small: the largest and smallest product
 * of partials along any path (any direction): beyond GROW_MAX and
 * SHRINK_MIN the orders may overflow or underflow differently.
 */
typedef struct hdual {
    double v;
    uint8_t gs, gw, gwt;
    uint64_t hs, hw;
    double big, small;
    double g[HN], ga[HN], ge[HN];
    double h[HH], ha[HH], he[HH];
} hdual;

static void hd_const(hdual *o, double v)
{
    memset(o, 0, sizeof *o);
    o->v = v;
    o->big = o->small = 1.0;
}

static void hd_input(hdual *o, double v, int dim)
{
    hd_const(o, v);
    if (dim >= 0) {
        o->gs = (uint8_t)(1u << dim);
        o->g[dim] = 1.0;
        o->ga[dim] = 1.0;
    }
}

/* nothing known: every entry may be anything */
static void hd_unknown(hdual *o, double v)
{
    hd_const(o, v);
    o->gs = o->gw = o->gwt = GALL;
    o->hs = o->hw = HALL;
}

/* a value of moderate size (its products neither over- nor underflow) */
static bool moderate(double x)
{
    return x == 0.0 || (fabs(x) >= 1e-60 && fabs(x) <= 1e60);
}

/* The rule of one operation over n <= 4 arguments: the first partials p
   (with dp, their formula error), and the second partials q[a][b]
   (qz: present at all, i.e. not identically zero as a function; qs: the
   size of the terms a formula for it adds, which is the scale of its
   rounding; dq: formula error).  wild2: the second partials are not
   comparable here (outside the domain where the engine's intermediate
   values are of moderate size).  pconst: the partial is a constant of the
   rule (linear operations, piecewise ones, a partial that depends on a
   constant operand only), which a recorded tangent skips where it is 0. */
#define HMAXA 6
typedef struct hrule {
    int n;
    double p[HMAXA], dp[HMAXA];
    bool pconst[HMAXA];
    /* a recorded tangent computes the partial by its formula, which is
       NaN here where the convention says 0 */
    bool recnan[HMAXA];
    double q[HMAXA][HMAXA], qs[HMAXA][HMAXA], dq[HMAXA][HMAXA];
    bool qz[HMAXA][HMAXA];
    bool wild2;
} hrule;

static void rule_init(hrule *R, int n)
{
    memset(R, 0, sizeof *R);
    R->n = n;
}

/* the symmetric second partial of a, b (both orders) */
static void rule_q(hrule *R, int a, int b, double q, double qs, double dq)
{
    R->q[a][b] = R->q[b][a] = q;
    R->qs[a][b] = R->qs[b][a] = fmax(fabs(q), qs);
    R->dq[a][b] = R->dq[b][a] = dq;
    R->qz[a][b] = R->qz[b][a] = true;
}

static bool huge_or_nan(double p) { return !(fabs(p) <= PBIG); }

/* the Hessian entries (i, j) for i in a, j in b */
static uint64_t outer(uint8_t a, uint8_t b)
{
    uint64_t m = 0;
    for (int i = 0; i < HN; i++)
        for (int j = 0; j < HN; j++)
            if ((a >> i & 1) && (b >> j & 1))
                m |= (uint64_t)1 << (i * HN + j);
    return m;
}

/* o = the operation of rule R on the arguments x[0..n-1] at value v
   (o may not alias any x; two x may be the same) */
static void hd_apply(hdual *o, double v, const hrule *R,
                     const hdual *const *x)
{
    hd_const(o, v);
    double big = 1.0, small = 1.0;
    /* A partial that is infinite or NaN, or a tangent that is, multiplies
       the derivatives of the other factors of the engine's tangent: nodes
       even where those are 0 as functions (a constant power's partial,
       say), so 0 * inf = NaN may reach any second derivative of the
       arguments' directions */
    uint8_t all = 0;
    bool wild = false;
    for (int a = 0; a < R->n; a++) {
        all |= x[a]->gs;
        wild |= (huge_or_nan(R->p[a]) || x[a]->gwt || R->recnan[a]) &&
                !R->pconst[a];
    }
    if (wild) {
        o->hs |= outer(all, all);
        o->hw |= outer(all, all);
    }
    for (int a = 0; a < R->n; a++) {
        const hdual *X = x[a];
        double p = R->p[a], dp = R->dp[a];
        if (!X->gs)
            continue;
        double ap = fabs(p);
        if (p != 0.0) {
            big = fmax(big, X->big * fmax(1.0, ap));
            small = fmin(small, X->small * fmin(1.0, ap));
        }
        bool huge = huge_or_nan(p);
        bool zero = p == 0.0 && dp == 0.0;
        if (!zero)
            o->gw |= X->gw | (huge ? X->gs : 0);
        if (!zero || !R->pconst[a]) {
            o->gwt |= X->gwt | X->gw | (huge || R->recnan[a] ? X->gs : 0);
            o->hw |= X->hw | (huge ? X->hs : 0);
        }
        o->gs |= X->gs;
        o->hs |= X->hs;
        if (huge)
            continue;
        for (int i = 0; i < HN; i++) {
            if (!(X->gs >> i & 1))
                continue;
            o->g[i] += p * X->g[i];
            o->ga[i] += ap * X->ga[i];
            o->ge[i] += ap * X->ge[i] + dp * X->ga[i];
        }
        for (int e = 0; e < HH; e++) {
            if (!(X->hs >> e & 1))
                continue;
            o->h[e] += p * X->h[e];
            o->ha[e] += ap * X->ha[e];
            o->he[e] += ap * X->he[e] + dp * X->ha[e];
        }
    }
    /* the second partials: q_ab g_a g_b^T over ordered pairs (a, b) */
    for (int a = 0; a < R->n; a++)
        for (int b = 0; b < R->n; b++) {
            if (!R->qz[a][b])
                continue;
            const hdual *A = x[a], *B = x[b];
            if (!A->gs || !B->gs)
                continue;
            double q = R->q[a][b], qs = R->qs[a][b], dq = R->dq[a][b];
            bool bad = R->wild2 || huge_or_nan(q) || huge_or_nan(qs) ||
                       !isfinite(dq);
            if (q != 0.0) {
                big = fmax(big, A->big * B->big * fmax(1.0, fabs(q)));
                small = fmin(small, A->small * B->small * fmin(1.0, fabs(q)));
            }
            for (int i = 0; i < HN; i++) {
                if (!(A->gs >> i & 1))
                    continue;
                for (int j = 0; j < HN; j++) {
                    if (!(B->gs >> j & 1))
                        continue;
                    int e = i * HN + j;
                    uint64_t bit = (uint64_t)1 << e;
                    o->hs |= bit;
                    if (bad || (A->gwt >> i & 1) || (B->gwt >> j & 1)) {
                        o->hw |= bit;
                        continue;
                    }
                    o->h[e] += q * A->g[i] * B->g[j];
                    o->ha[e] += qs * A->ga[i] * B->ga[j];
                    o->he[e] += fabs(q) * (A->ge[i] * B->ga[j] +
                                           A->ga[i] * B->ge[j]) +
                                dq * A->ga[i] * B->ga[j];
                }
            }
        }
    o->big = big;
    o->small = small;
    if (!(big <= GROW_MAX) || !(small >= SHRINK_MIN)) {
        o->gw |= o->gs;
        o->hw |= o->hs;
    }
    for (int i = 0; i < HN; i++)
        if ((o->gs >> i & 1) &&
            (!isfinite(o->g[i]) || !(o->ga[i] <= 1e150) ||
             !isfinite(o->ge[i])))
            o->gw |= (uint8_t)(1u << i);
    o->gwt |= o->gw;
    for (int e = 0; e < HH; e++)
        if ((o->hs >> e & 1) &&
            (!isfinite(o->h[e]) || !(o->ha[e] <= 1e150) ||
             !isfinite(o->he[e])))
            o->hw |= (uint64_t)1 << e;
}

/* engine result against sum_i w[i] g[i] (w over directions): a sweep's
   (rec false), or a value of a recorded tangent (rec true) */
static void hd_cmp_g(const char *what, double eng, const hdual *r,
                     const double *w, int k, bool rec)
{
    double ref = 0, a = 0, e = 0;
    bool any = false;
    for (int i = 0; i < HN; i++) {
        if (w[i] == 0.0 || !(r->gs >> i & 1))
            continue;
        if ((rec ? r->gwt : r->gw) >> i & 1)
            return;
        any = true;
        ref += w[i] * r->g[i];
        a += fabs(w[i]) * r->ga[i];
        e += fabs(w[i]) * r->ge[i];
    }
    if (!any) {
        CHECK(eng == 0.0, "%s[%d]: engine %.17g, but the value depends on "
              "none of the inputs (expected exactly 0)", what, k, eng);
        return;
    }
    if (!isfinite(ref) || !(a <= 1e150))
        return;
    double tol = 1e-9 * a + 8.0 * e + 1e-290;
    CHECK(fabs(eng - ref) <= tol,
          "%s[%d]: engine %.17g, reference %.17g (|diff| %.3g > tol %.3g; "
          "scale %.3g, formula err %.3g)",
          what, k, eng, ref, fabs(eng - ref), tol, a, e);
}

/* engine result against sum_j w[j] h[i][j] (row i; i < 0: no direction,
   then the result must be 0) */
static void hd_cmp_h(const char *what, double eng, const hdual *r, int i,
                     const double *w, int k)
{
    double ref = 0, a = 0, e = 0;
    bool any = false;
    for (int j = 0; i >= 0 && j < HN; j++) {
        int x = i * HN + j;
        if (w[j] == 0.0 || !(r->hs >> x & 1))
            continue;
        if (r->hw >> x & 1)
            return;
        any = true;
        ref += w[j] * r->h[x];
        a += fabs(w[j]) * r->ha[x];
        e += fabs(w[j]) * r->he[x];
    }
    if (!any) {
        CHECK(eng == 0.0, "%s[%d]: engine %.17g, but no second derivative "
              "reaches it (expected exactly 0)", what, k, eng);
        return;
    }
    if (!isfinite(ref) || !(a <= 1e150))
        return;
    double tol = 1e-9 * a + 8.0 * e + 1e-290;
    CHECK(fabs(eng - ref) <= tol,
          "%s[%d]: engine %.17g, reference %.17g (|diff| %.3g > tol %.3g; "
          "scale %.3g, formula err %.3g)",
          what, k, eng, ref, fabs(eng - ref), tol, a, e);
}

/* the recorded tangent of y with seeds s[0..k-1] on the directions
   d[0..k-1]: value sum_i s_i g_y[d_i], gradient
   sum_i (s_i H_y[d_i][.] + g_y[d_i] grad s_i); its Hessian would take
   third derivatives (unknown) */
static void hd_tangent(hdual *o, const hdual *y, int k, const int *d,
                       const hdual *const *s)
{
    hd_const(o, 0.0);
    o->hs = o->hw = HALL;
    double v = 0;
    for (int q = 0; q < k; q++) {
        const hdual *S2 = s[q];
        int di = d[q];
        if (!(y->gs >> di & 1))
            continue;
        o->gw |= (y->gwt >> di & 1) ? GALL : 0;
        v += S2->v * y->g[di];
        for (int j = 0; j < HN; j++) {
            int x = di * HN + j;
            if (y->hs >> x & 1) {
                o->gs |= (uint8_t)(1u << j);
                if (y->hw >> x & 1)
                    o->gw |= (uint8_t)(1u << j);
                o->g[j] += S2->v * y->h[x];
                o->ga[j] += fabs(S2->v) * y->ha[x];
                o->ge[j] += fabs(S2->v) * y->he[x];
            }
            if (S2->gs >> j & 1) {
                o->gs |= (uint8_t)(1u << j);
                if (S2->gwt >> j & 1)
                    o->gw |= (uint8_t)(1u << j);
                o->g[j] += y->g[di] * S2->g[j];
                o->ga[j] += y->ga[di] * S2->ga[j];
                o->ge[j] += y->ge[di] * S2->ga[j] + y->ga[di] * S2->ge[j];
            }
        }
        o->big = fmax(o->big, y->big * fmax(1.0, S2->big));
        o->small = fmin(o->small, y->small * fmin(1.0, S2->small));
    }
    o->v = v;
    if (!(o->big <= GROW_MAX) || !(o->small >= SHRINK_MIN))
        o->gw = GALL;
    for (int j = 0; j < HN; j++)
        if (!isfinite(o->g[j]) || !(o->ga[j] <= 1e150))
            o->gw |= (uint8_t)(1u << j);
    o->gwt = o->gw; /* (its own tangents: third order, not compared) */
}

/* -------------------------------------------- second-order rules
 * Every scalar operation of the header: its value, partials and second
 * partials, from calculus.  Piecewise rules (abs, relu, min, max, hypot at
 * the origin, pow's conventions) have the partials the header documents
 * at the recorded point, and no second partials (a partial that is a
 * constant has derivative 0).
 */

enum { U2_ASINH = N_UNARY, U2_ACOSH, U2_ATANH, U2_SOFTPLUS, N2_UNARY };
enum { B2_LOGBASE = N_BINARY, N2_BINARY };
static const char *const u2_name[N2_UNARY - N_UNARY] = {
    "asinh", "acosh", "atanh", "softplus"};

static const char *unary2_name(int f)
{
    return f < N_UNARY ? unary_name[f] : u2_name[f - N_UNARY];
}
static const char *binary2_name(int f)
{
    return f < N_BINARY ? binary_name[f] : "logbase";
}

static dr_real eng_unary2(dr_tape *t, int f, dr_real a)
{
    switch (f) {
    case U2_ASINH: return dr_asinh(t, a);
    case U2_ACOSH: return dr_acosh(t, a);
    case U2_ATANH: return dr_atanh(t, a);
    case U2_SOFTPLUS: return dr_softplus(t, a);
    default: return eng_unary(t, f, a);
    }
}

static dr_real eng_binary2(dr_tape *t, int f, dr_real a, dr_real b)
{
    return f == B2_LOGBASE ? dr_logbase(t, a, b) : eng_binary(t, f, a, b);
}

/* value and rule of a one-argument operation at x (the engine's value y) */
static double rule_unary(int f, double x, double y, hrule *R)
{
    rule_init(R, 1);
    double v, p, dp, q = 0, qs = 0, alt = NAN;
    bool has_q = true;
    if (f < N_UNARY) {
        ref_unary(f, x, &v, &p, &dp);
    } else {
        switch (f) {
        case U2_ASINH:
            v = asinh(x);
            p = 1.0 / hypot(x, 1.0);
            dp = disagree(p, 1.0 / sqrt(x * x + 1.0));
            break;
        case U2_ACOSH:
            v = acosh(x);
            p = 1.0 / (sqrt(x - 1.0) * sqrt(x + 1.0));
            dp = disagree(p, 1.0 / sqrt(x * x - 1.0));
            break;
        case U2_ATANH:
            v = atanh(x);
            p = 1.0 / ((1.0 - x) * (1.0 + x));
            dp = disagree(p, 1.0 / (1.0 - x * x));
            break;
        default: { /* softplus: log(1 + e^x), derivative the sigmoid */
            v = fmax(x, 0.0) + log1p(exp(-fabs(x)));
            p = sigmoid_val(x);
            double e = exp(-fabs(x));
            dp = disagree(p, x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e)) +
                 1e-15 * fabs(p);
            break;
        }
        }
    }
    switch (f) {
    case U_NEG: case U_ABS: case U_RELU:
        has_q = false; /* linear, or piecewise constant partials */
        R->pconst[0] = true;
        break;
    case U_SQRT: q = -0.25 / (x * y); alt = -0.25 / pow(x, 1.5); break;
    case U_CBRT: q = -2.0 / (9.0 * x * y * y); break;
    case U_EXP: q = y; break;
    case U_EXPM1: q = exp(x); break;
    case U_LOG: q = -1.0 / (x * x); break;
    case U_LOG1P: q = -1.0 / ((1.0 + x) * (1.0 + x)); break;
    case U_SIN: q = -sin(x); break;
    case U_COS: q = -cos(x); break;
    case U_TAN: {
        double c = cos(x);
        q = 2.0 * y / (c * c);
        alt = 2.0 * y * (1.0 + y * y);
        break;
    }
    case U_ASIN:
    case U_ACOS: {
        double s = (1.0 - x) * (1.0 + x);
        q = (f == U_ASIN ? x : -x) / (s * sqrt(s));
        /* (1 + x) and (1 - x) cancel in the derivative of s */
        qs = fabs(p * p * p) * (fabs(1.0 - x) + fabs(1.0 + x)) / 2.0;
        break;
    }
    case U_ATAN: {
        double d = 1.0 + x * x;
        q = -2.0 * x / (d * d);
        break;
    }
    case U_SINH: q = sinh(x); break;
    case U_COSH: q = cosh(x); break;
    case U_TANH: {
        double c = cosh(x);
        q = -2.0 * y / (c * c);
        alt = -2.0 * sinh(x) / (c * c * c);
        break;
    }
    case U_ERF: q = -2.0 * x * p; break;
    case U_SIGMOID:
        /* s'' = s' (1 - 2 s) = -tanh(x / 2) s'; (1 - s) and s cancel */
        q = -tanh(x / 2.0) * p;
        alt = p * (1.0 - 2.0 * y);
        qs = fabs(p);
        break;
    case U_SQUARE: /* (as mul(a, a): not reached) */
        q = 2.0;
        break;
    case U2_ASINH: q = -x * p * p * p; break;
    case U2_ACOSH: q = -x * p * p * p; break;
    case U2_ATANH:
        q = 2.0 * x * p * p;
        qs = p * p * (fabs(1.0 - x) + fabs(1.0 + x));
        break;
    case U2_SOFTPLUS: {
        double e = exp(-fabs(x));
        q = e / ((1.0 + e) * (1.0 + e));
        alt = p * (1.0 - p);
        break;
    }
    }
    R->p[0] = p;
    R->dp[0] = dp;
    if (has_q) {
        rule_q(R, 0, 0, q, qs, disagree(q, alt));
        R->wild2 = !moderate(x) || !moderate(y) || !moderate(p) ||
                   !moderate(q) || !isfinite(q);
        /* where exp or cosh (squared) overflows, or exp(-x^2) underflows,
           in the engine's formulas, a derivative that underflowed to 0
           meets an infinite intermediate value */
        double lim = f == U_ERF ? 26.0
                   : (f == U_SIGMOID || f == U2_SOFTPLUS) ? 700.0 : 300.0;
        if ((f == U_EXP || f == U_EXPM1 || f == U_SINH || f == U_COSH ||
             f == U_TANH || f == U_ERF || f == U_SIGMOID ||
             f == U2_SOFTPLUS) && !(fabs(x) <= lim))
            R->wild2 = true;
    }
    return v;
}

/* value and rule of a two-argument operation at (a, b), engine value y;
   ca, cb: the operand is a constant */
static double rule_binary(int f, double a, double b, double y, bool ca,
                          bool cb, hrule *R)
{
    rule_init(R, 2);
    double v, pa, dpa, pb, dpb;
    if (f < N_BINARY) {
        ref_binary(f, a, b, &v, &pa, &dpa, &pb, &dpb);
    } else { /* logbase(b0 = a, x = b): log x / log b0 */
        double lb = log(a), lx = log(b);
        v = lx / lb;
        pa = -v / (a * lb);
        dpa = disagree(pa, -lx / (a * lb * lb));
        pb = 1.0 / (b * lb);
        dpb = 0;
    }
    R->p[0] = pa;
    R->dp[0] = dpa;
    R->p[1] = pb;
    R->dp[1] = dpb;
    bool dom = moderate(a) && moderate(b) && moderate(y) && moderate(pa) &&
               moderate(pb);
    switch (f) {
    case B_ADD: case B_SUB: case B_MIN: case B_MAX:
        R->pconst[0] = R->pconst[1] = true;
        return v;
    case B_MUL:
        R->pconst[0] = cb;
        R->pconst[1] = ca;
        rule_q(R, 0, 1, 1.0, 1.0, 0.0);
        return v;
    case B_DIV:
        R->pconst[0] = cb;
        rule_q(R, 0, 1, -1.0 / (b * b), 0.0, 0.0);
        rule_q(R, 1, 1, 2.0 * y / (b * b), 0.0, 0.0);
        break;
    case B_ATAN2: {
        double r2 = a * a + b * b;
        rule_q(R, 0, 0, -2.0 * a * b / (r2 * r2), 1.0 / r2, 0.0);
        rule_q(R, 0, 1, (a * a - b * b) / (r2 * r2), 1.0 / r2, 0.0);
        rule_q(R, 1, 1, 2.0 * a * b / (r2 * r2), 1.0 / r2, 0.0);
        dom = dom && r2 >= 1e-100 && r2 <= 1e100;
        break;
    }
    case B_POW: {
        /* at a <= 0, b beyond small integers or a^b out of range the
           conventions (and logarithms of negatives) take over */
        double la = log(a), am1 = pow(a, b - 1.0);
        R->pconst[0] = b == 0.0 && cb;
        R->pconst[1] = y == 0.0;
        R->recnan[0] = b == 0.0 && !cb && !isfinite(b * pow(a, b - 1.0));
        rule_q(R, 0, 0, b * (b - 1.0) * pow(a, b - 2.0), 0.0, 0.0);
        rule_q(R, 0, 1, am1 * (1.0 + b * la),
               fabs(am1) * (1.0 + fabs(b * la)), 0.0);
        rule_q(R, 1, 1, y * la * la, 0.0, 0.0);
        dom = dom && a > 0 && fabs(b) <= 64 && y != 0 && moderate(am1);
        break;
    }
    case B_HYPOT:
        if (y == 0.0) { /* partials 0 at the origin: no second ones */
            R->pconst[0] = R->pconst[1] = true;
            return v;
        }
        rule_q(R, 0, 0, b * b / (y * y * y), 2.0 / y, 0.0);
        rule_q(R, 0, 1, -a * b / (y * y * y), 0.0, 0.0);
        rule_q(R, 1, 1, a * a / (y * y * y), 2.0 / y, 0.0);
        break;
    default: { /* logbase */
        double lb = log(a);
        rule_q(R, 0, 0, y * (lb + 2.0) / (a * a * lb * lb),
               fabs(y) * (fabs(lb) + 2.0) / (a * a * lb * lb), 0.0);
        rule_q(R, 0, 1, -1.0 / (b * a * lb * lb), 0.0, 0.0);
        rule_q(R, 1, 1, -1.0 / (b * b * lb), 0.0, 0.0);
        dom = dom && a > 0 && b > 0 && fabs(lb) >= 1e-8;
        break;
    }
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (R->qz[i][j] && !moderate(R->q[i][j]))
                dom = false;
    R->wild2 = !dom;
    return v;
}

/* powi: n x^(n-1), n (n-1) x^(n-2) */
static double rule_powi(double x, int n, hrule *R)
{
    rule_init(R, 1);
    double v = pow(x, (double)n);
    double p = n == 0 ? 0.0 : (double)n * pow(x, (double)n - 1.0);
    double alt = (n != 0 && x != 0 && isfinite(x)) ? (double)n * v / x : NAN;
    R->p[0] = p;
    R->dp[0] = disagree(p, alt) + 1e-13 * fabs(p);
    R->pconst[0] = n == 0;
    if (n != 0 && n != 1) {
        double q = (double)n * ((double)n - 1.0) * pow(x, (double)n - 2.0);
        rule_q(R, 0, 0, q, 0.0, 1e-13 * fabs(q));
        R->wild2 = !moderate(x) || !moderate(v) || !moderate(p) ||
                   !moderate(q);
    }
    return v;
}

/* ------------------------------------------------ the second tape's
 * program (op_second_order) */

#define NH 8 /* slots */

typedef struct hslot {
    bool live;
    bool input;  /* an input node (of this program, at order 2) */
    int hdim;    /* its direction, or -1 */
    dr_real r;
    hdual d;
} hslot;

static struct sostate {
    dr_tape *t;
    hslot s[NH];
    int ndim;
    dr_idx base;  /* the tape's first id (dr_hvp replays from there) */
    dr_idx from0; /* the mark taken when the tape became of order 2 */
    dr_idx mark[2];
    bads bad;
    hstat hs;
} Q;

void bad_add(bads *b, dr_idx lo, dr_idx hi)
{
    if (hi <= lo)
        return;
    if (b->n == NBAD) {
        b->lost = true;
        return;
    }
    b->lo[b->n] = lo;
    b->hi[b->n++] = hi;
}

/* 1: a node of ids [from, y] has no rule, 0: none has, -1: not known.
   A seeded node is not replayed: it needs none (the ids seed[0..ns-1]) */
static int bad_in(const bads *b, dr_idx from, dr_idx y, const dr_idx *seed,
                  int ns)
{
    if (from > y)
        return 0;
    for (int i = 0; i < b->n; i++) {
        dr_idx lo = b->lo[i] > from ? b->lo[i] : from;
        dr_idx hi = b->hi[i] <= y ? b->hi[i] : y + 1;
        if (hi - lo > ns)
            return 1;
        for (dr_idx id = lo; id < hi; id++) {
            bool seeded = false;
            for (int q = 0; q < ns && !seeded; q++)
                seeded = seed[q] == id;
            if (!seeded)
                return 1;
        }
    }
    return b->lost ? -1 : 0;
}


static int pick_h(unsigned k)
{
    for (int i = 0; i < NH; i++) {
        int j = (int)((k + (unsigned)i) % NH);
        if (Q.s[j].live)
            return j;
    }
    return -1;
}

/* an operand: a slot or a constant */
typedef struct hop {
    dr_real r;
    const hdual *d;
} hop;

static hop hoperand(rd *r, hdual *cbuf)
{
    unsigned b = u8(r);
    int j = (b & 0xe0) == 0xe0 ? -1 : pick_h(b);
    if (j < 0) {
        double v = rdv(r);
        hd_const(cbuf, v);
        hop o = {dr_const(v), cbuf};
        return o;
    }
    hop o = {Q.s[j].r, &Q.s[j].d};
    return o;
}

static void hput(int j, dr_real r, const hdual *d, bool input, int hdim)
{
    hslot *x = &Q.s[j % NH];
    x->live = true;
    x->r = r;
    x->d = *d;
    x->input = input;
    x->hdim = hdim;
    TRACE("  h%d = id %lld val %.17g gs %#x gw %#x hs %#llx hw %#llx\n",
          j % NH, (long long)r.idx, r.val, d->gs, d->gw,
          (unsigned long long)d->hs, (unsigned long long)d->hw);
    if (r.idx != DR_NONE)
        other_tape_note(r.idx, false);
}

/* the common tail of a scalar operation on the second tape */
static void hfinish(const char *what, dr_real res, double ref_v,
                    const hdual *ref, int n, const hop *ops, bool nan_args,
                    int dst)
{
    bool active = false;
    for (int i = 0; i < n; i++)
        active |= ops[i].r.idx != DR_NONE;
    TRACE("  (2nd) %s(%lld, %lld) -> %lld\n", what, (long long)ops[0].r.idx,
          n > 1 ? (long long)ops[1].r.idx : -9LL, (long long)res.idx);
    cmp_value(what, res.val, ref_v, 0.0, nan_args);
    check_sticky(what, Q.t, &Q.hs);
    hdual out;
    if (!active) {
        CHECK(res.idx == DR_NONE, "%s of constants (order 2) gave id %lld",
              what, (long long)res.idx);
        hd_const(&out, res.val);
    } else {
        CHECK(res.idx != DR_NONE, "%s (order 2) gave a constant: %s", what,
              sn(dr_tape_status(Q.t)));
        out = *ref;
        out.v = res.val;
    }
    hput(dst, res, &out, false, -1);
}

static void h_input(rd *r)
{
    double v = rdv(r);
    int dst = (int)u8(r);
    dr_real x;
    if (dst & 0x80) { /* through dr_inputs */
        dr_status st = dr_inputs(Q.t, 1, &v, &x);
        CHECK(st == DR_OK, "dr_inputs (order 2): %s", sn(st));
    } else {
        x = dr_input(Q.t, v);
    }
    CHECK(x.idx != DR_NONE, "dr_input (order 2) failed");
    int dim = Q.ndim < HN ? Q.ndim++ : -1;
    hdual d;
    hd_input(&d, v, dim);
    hput(dst, x, &d, true, dim);
}

/* the operations a recorder has (dualrev.h, "inline recording"), through
   a recorder opened for it on the tape of order 2: recorded and logged
   as the tape's own (the same rules, checked by the same reference) */
static dr_real rec_binary(dr_tape *t, int f, dr_real a, dr_real b)
{
    dr_rec rec;
    dr_status st = dr_rec_begin(t, &rec);
    CHECK(st == DR_OK, "dr_rec_begin (order 2): %s", sn(st));
    dr_real y;
    switch (f) {
    case B_ADD: y = dr_rec_add(&rec, a, b); break;
    case B_SUB: y = dr_rec_sub(&rec, a, b); break;
    case B_MUL: y = dr_rec_mul(&rec, a, b); break;
    case B_DIV: y = dr_rec_div(&rec, a, b); break;
    default: y = dr_rec_neg(&rec, a); break; /* (U_NEG) */
    }
    st = dr_rec_end(&rec);
    CHECK(st == DR_OK, "dr_rec_end (order 2): %s", sn(st));
    return y;
}

static void h_unary(rd *r)
{
    unsigned fb = u8(r);
    int f = (int)(fb % N2_UNARY);
    hdual cb;
    hop a = hoperand(r, &cb);
    int dst = (int)u8(r);
    if (f == U_SQUARE) { /* mul(a, a) */
        hrule R;
        double v = rule_binary(B_MUL, a.r.val, a.r.val, a.r.val * a.r.val,
                               false, false, &R);
        dr_real res = dr_mul(Q.t, a.r, a.r);
        hdual ref;
        const hdual *x[2] = {a.d, a.d};
        hd_apply(&ref, res.val, &R, x);
        hop ops[2] = {a, a};
        hfinish("square", res, v, &ref, 2, ops, isnan(a.r.val), dst);
        return;
    }
    dr_real res = f == U_NEG && (fb & 0x80)
                      ? rec_binary(Q.t, -1, a.r, dr_const(0.0))
                      : eng_unary2(Q.t, f, a.r);
    hrule R;
    double v = rule_unary(f, a.r.val, res.val, &R);
    hdual ref;
    const hdual *x[1] = {a.d};
    hd_apply(&ref, res.val, &R, x);
    hfinish(unary2_name(f), res, v, &ref, 1, &a, isnan(a.r.val), dst);
}

static void h_binary(rd *r)
{
    unsigned fb = u8(r);
    int f = (int)(fb % N2_BINARY);
    hdual cb1, cb2;
    hop a = hoperand(r, &cb1);
    hop b = hoperand(r, &cb2);
    int dst = (int)u8(r);
    dr_real res = f <= B_DIV && (fb & 0x80) ? rec_binary(Q.t, f, a.r, b.r)
                                             : eng_binary2(Q.t, f, a.r, b.r);
    hrule R;
    double v = rule_binary(f, a.r.val, b.r.val, res.val, a.r.idx == DR_NONE,
                           b.r.idx == DR_NONE, &R);
    hdual ref;
    const hdual *x[2] = {a.d, b.d};
    hd_apply(&ref, res.val, &R, x);
    hop ops[2] = {a, b};
    hfinish(binary2_name(f), res, v, &ref, 2, ops,
            isnan(a.r.val) || isnan(b.r.val), dst);
}

static void h_powi(rd *r)
{
    static const int ns[] = {2, 3, -1, -2, 0, 1, 5, 12, -7, 40,
                             INT_MAX, INT_MIN, INT_MIN + 1, 1000};
    hdual cb;
    hop a = hoperand(r, &cb);
    int n = ns[u8(r) % (sizeof ns / sizeof ns[0])];
    int dst = (int)u8(r);
    dr_real res = dr_powi(Q.t, a.r, n);
    hrule R;
    double v = rule_powi(a.r.val, n, &R);
    hdual ref;
    const hdual *x[1] = {a.d};
    hd_apply(&ref, res.val, &R, x);
    hfinish("powi", res, v, &ref, 1, &a, isnan(a.r.val), dst);
}

/* user-recorded nodes: linear to second order */
static void h_record(rd *r)
{
    unsigned k = u8(r);
    int n = (int)(k % 5);
    hdual cb[4];
    hop ops[4];
    dr_idx args[4];
    hrule R;
    rule_init(&R, n > 4 ? 4 : n);
    const hdual *x[4];
    for (int i = 0; i < n; i++) {
        ops[i] = hoperand(r, &cb[i]);
        args[i] = ops[i].r.idx;
        R.p[i] = rdv(r);
        R.pconst[i] = true;
        x[i] = ops[i].d;
    }
    double v = rdv(r);
    dr_idx id;
    if (n == 0)
        id = (k & 8) ? dr_record0(Q.t) : dr_recordn(Q.t, 0, NULL, NULL);
    else if (n <= 2 && (k & 0x80) && (args[0] != DR_NONE ||
                                      (n == 2 && args[1] != DR_NONE))) {
        /* through a recorder (which records nothing for constants alone),
           as dr_record1/2 */
        dr_rec rec;
        dr_status st = dr_rec_begin(Q.t, &rec);
        CHECK(st == DR_OK, "dr_rec_begin (order 2): %s", sn(st));
        id = n == 1 ? dr_rec_record1(&rec, v, ops[0].r, R.p[0]).idx
                    : dr_rec_record2(&rec, v, ops[0].r, R.p[0], ops[1].r,
                                     R.p[1]).idx;
        st = dr_rec_end(&rec);
        CHECK(st == DR_OK, "dr_rec_end (order 2): %s", sn(st));
    } else if (n == 1 && !(k & 8))
        id = dr_record1(Q.t, args[0], R.p[0]);
    else if (n == 2 && !(k & 8))
        id = dr_record2(Q.t, args[0], R.p[0], args[1], R.p[1]);
    else
        id = dr_recordn(Q.t, (size_t)n, args, R.p);
    CHECK(id != DR_NONE, "dr_record (order 2) failed: %s",
          sn(dr_tape_status(Q.t)));
    check_sticky("dr_record (order 2)", Q.t, &Q.hs);
    hdual out;
    hd_apply(&out, v, &R, x);
    /* a node without arguments is an input as far as the engine knows, but
       not one of the reference's */
    hput((int)u8(r), (dr_real){v, id}, &out, false, -1);
}

/* the partials of a program are products taken at record time (it is a
   linear node of those partials at order 2): 0 * inf = NaN inside it,
   where a sweep or a recorded tangent of the operations one by one would
   skip (what gwt follows) */
static void hd_as_product(hdual *o)
{
    o->gw |= o->gwt;
    o->hw |= outer(o->gwt, o->gs) | outer(o->gs, o->gwt);
}

/* a statement with its program (dr_fe_prog) over operands: the
   hyper-dual reference one instruction at a time by the rules above,
   the leaves no path reaches joined with a zero partial (the node's
   arguments all the same) */
static void h_prog(rd *r, unsigned k)
{
    unsigned n = 1 + (k & 7) % FP_LEAVES;
    hdual cb[FP_LEAVES];
    hop ops[FP_LEAVES];
    dr_real x[FP_LEAVES];
    double xs[FP_LEAVES];
    bool nan_args = false;
    for (unsigned i = 0; i < n; i++) {
        ops[i] = hoperand(r, &cb[i]);
        x[i] = ops[i].r;
        xs[i] = x[i].val;
        nan_args |= isnan(xs[i]);
    }
    static fprog g;
    prog_decode(r, &g, n, k & 0x80);
    int dst = (int)u8(r);
    static hdual reg[FP_REGS];
    unsigned base = g.n + g.c;
    for (unsigned i = 0; i < n; i++)
        reg[i] = *ops[i].d;
    for (unsigned j = 0; j < g.c; j++)
        hd_const(&reg[n + j], prog_const(&g, j));
    for (unsigned i = 0; i < g.m; i++) {
        const unsigned char *s = prog_insn(&g, i);
        const hdual *a = &reg[s[1]];
        hrule R;
        if (s[0] == FP_NEG) {
            rule_unary(U_NEG, a->v, -a->v, &R);
            const hdual *xa[1] = {a};
            hd_apply(&reg[base + i], -a->v, &R, xa);
            continue;
        }
        const hdual *b = &reg[s[2]];
        double y;
        switch (s[0]) {
        case FP_ADD: y = a->v + b->v; break;
        case FP_SUB: y = a->v - b->v; break;
        case FP_MUL: y = a->v * b->v; break;
        default: y = a->v / b->v; break;
        }
        /* (no operand is a constant of the rule here: the program
           multiplies by every partial, zero or not) */
        rule_binary((int)s[0] - FP_ADD, a->v, b->v, y, false, false, &R);
        const hdual *xb[2] = {a, b};
        hd_apply(&reg[base + i], y, &R, xb);
    }
    hdual ref = reg[base + g.m - 1], tmp;
    unsigned reached = prog_reached(&g);
    for (unsigned i = 0; i < n; i++) {
        if (reached >> i & 1)
            continue;
        hrule R;
        rule_init(&R, 2);
        R.p[0] = 1.0;
        R.pconst[0] = true;
        const hdual *xj[2] = {&ref, ops[i].d};
        hd_apply(&tmp, ref.v, &R, xj);
        ref = tmp;
    }
    hd_as_product(&ref);
    double v = prog_value(&g, xs);
    /* (programs on or off: the program's own choice, set on the second
       tape, a root) */
    unsigned act = prog_active(x, n);
    bool nonlin = prog_nonlinear(&g, act),
         pairs = prog_pairs_refuse(g.code, act);
    dr_idx id = prog_record(Q.t, Q.t, !g.off, prog_keep(&g), v, x, n);
    TRACE("  (2nd) dr_fe_prog(%u leaves, %u constants, %u instructions, %u "
          "pairs%s%s%s) = %.17g id %lld\n", g.n, g.c, g.m, g.q,
          g.off ? ", programs off" : "", nonlin ? ", nonlinear" : "",
          pairs ? ", pairs refuse" : "", v, (long long)id);
    dr_real res = {v, id};
    if (id == DR_FE_STMT_BY_OPS) {
        /* programs off, a program not linear in its active leaves (or
           pairs that say so), or another NaN than the harness's
           (fuzz_statements.c): the operations one by one, of the same
           derivatives */
        CHECK(g.off || nonlin || pairs || isnan(v), "dr_fe_prog (order 2) "
              "refused the program's own value %.17g", v);
        res = prog_by_ops(Q.t, &g, x);
        if (res.idx == DR_NONE) {
            hdual d;
            hd_const(&d, res.val);
            check_sticky("a program by operations (order 2)", Q.t, &Q.hs);
            hput(dst, res, &d, false, -1);
            return;
        }
    } else {
        /* (a linear node of constant partials: second derivatives
           through it are the hyper-dual's, none of its own) */
        CHECK(!g.off && !nonlin, "dr_fe_prog (order 2) recorded %s: id "
              "%lld", g.off ? "with programs off"
              : "a program not linear in its active leaves", (long long)id);
    }
    hfinish("dr_fe_prog", res, v, &ref, (int)n, ops, nan_args, dst);
}

/* an n-ary sum (dr_sumn, dr_sumn_id): linear, with no second partials;
   its value 0 + x0 + x1 + ..., left to right */
static void h_sumn(rd *r)
{
    unsigned k = u8(r);
    if (k & 0x40) { /* (a flag the sums' seeds do not set) */
        h_prog(r, k);
        return;
    }
    int n = (int)((k & 7) % (HMAXA + 1));
    hdual cb[HMAXA];
    hop ops[HMAXA];
    dr_real xs[HMAXA];
    double vals[HMAXA], s = 0.0;
    dr_idx ids[HMAXA];
    const hdual *x[HMAXA];
    hrule R;
    rule_init(&R, n);
    bool nan_args = false;
    for (int i = 0; i < n; i++) {
        ops[i] = hoperand(r, &cb[i]);
        xs[i] = ops[i].r;
        vals[i] = xs[i].val;
        ids[i] = xs[i].idx;
        x[i] = ops[i].d;
        R.p[i] = 1.0;
        R.pconst[i] = true;
        s += xs[i].val;
        nan_args |= isnan(xs[i].val);
    }
    dr_real res;
    if (k & 8) {
        double v = -77.0;
        res.idx = dr_sumn_id(Q.t, (size_t)n, vals, ids, &v);
        res.val = v;
    } else {
        res = dr_sumn(Q.t, (size_t)n, xs);
    }
    CHECK(memcmp(&res.val, &s, sizeof s) == 0 || (isnan(s) && isnan(res.val)),
          "dr_sumn (order 2) of %d terms: %.17g, expected %.17g", n,
          res.val, s);
    int dst = (int)u8(r);
    if (n == 0) {
        hdual d;
        CHECK(res.idx == DR_NONE, "dr_sumn (order 2) of no terms gave id "
              "%lld", (long long)res.idx);
        hd_const(&d, res.val);
        hput(dst, res, &d, false, -1);
        return;
    }
    hdual ref;
    hd_apply(&ref, res.val, &R, x);
    hfinish("dr_sumn", res, s, &ref, n, ops, nan_args, dst);
}

/* a recorded tangent: the derivative of y in the directions of seeds on
   input slots, as a value on the tape (a nested derivative) */
static void h_tangent(rd *r, bool check_only)
{
    unsigned k = u8(r);
    int yj = pick_h(u8(r));
    if (yj < 0)
        return;
    hslot *Y = &Q.s[yj];
    int ns = (int)(k % 4);
    dr_idx from;
    switch (k >> 2 & 3) {
    case 0: from = Q.from0; break;
    case 1: from = Q.mark[0]; break;
    case 2: from = Q.mark[1]; break;
    default: from = dr_tape_mark(Q.t); break;
    }
    dr_idx ids[3];
    dr_real seeds[3];
    int dims[3];
    const hdual *sd[3];
    hdual cbs[3];
    bool valid = true; /* the reference holds */
    int n = 0;
    for (int i = 0; i < ns; i++) {
        int j = pick_h(u8(r));
        if (j < 0 || !Q.s[j].input)
            continue;
        /* (a seed id given twice takes the sum of its seeds) */
        ids[n] = Q.s[j].r.idx;
        dims[n] = Q.s[j].hdim;
        valid &= dims[n] >= 0 && ids[n] >= from;
        unsigned b = u8(r);
        int sj = pick_h(b);
        if ((b & 0xc0) == 0xc0 && sj >= 0) { /* an active seed */
            seeds[n] = Q.s[sj].r;
            sd[n] = &Q.s[sj].d;
        } else {
            double w = rdw(r);
            seeds[n] = dr_const(w);
            hd_const(&cbs[n], w);
            sd[n] = &cbs[n];
        }
        n++;
    }
    dr_idx mark = dr_tape_mark(Q.t);
    dr_real out = {12345.0, 12345};
    dr_status st = dr_tangent_record(Q.t, from, (size_t)n, ids, seeds, Y->r,
                                     &out);
    int bad = Y->r.idx == DR_NONE ? 0
                                   : bad_in(&Q.bad, from, Y->r.idx, ids, n);
    /* a seeded node is not replayed: a seed on a node without a rule is
       fine (only inputs are seeded here, which have one) */
    dr_status want = bad == 1 ? DR_ENOTSUP : DR_OK;
    TRACE("  dr_tangent_record(from %lld, %d seeds, y %lld) -> %s, %lld\n",
          (long long)from, n, (long long)Y->r.idx, sn(st),
          (long long)out.idx);
    if (bad < 0) {
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_tangent_record: %s",
              sn(st));
    } else {
        CHECK(st == want, "dr_tangent_record: %s, expected %s", sn(st),
              sn(want));
    }
    check_sticky("dr_tangent_record", Q.t, &Q.hs);
    if (st != DR_OK) {
        CHECK(dr_tape_mark(Q.t) == mark, "dr_tangent_record failed with %s "
              "and recorded nodes", sn(st));
        return;
    }
    hdual ref;
    if (valid) {
        hd_tangent(&ref, &Y->d, n, dims, sd);
        double w[HN] = {0};
        bool wild = false;
        for (int i = 0; i < n; i++) {
            w[dims[i]] += seeds[i].val;
            /* an active seed that is 0 is a value: it multiplies an
               infinite derivative (0 * inf = NaN) */
            if (seeds[i].idx != DR_NONE && (Y->d.gs >> dims[i] & 1) &&
                ((Y->d.gwt >> dims[i] & 1) || !isfinite(Y->d.g[dims[i]])))
                wild = true;
        }
        /* the value is a first derivative: compare it as one */
        if (!wild)
            hd_cmp_g("dr_tangent_record value", out.val, &Y->d, w, 0, true);
        bool any = false;
        for (int i = 0; i < n; i++)
            any |= Y->d.gs >> dims[i] & 1;
        if (!any)
            CHECK(out.idx == DR_NONE && out.val == 0.0,
                  "dr_tangent_record of a value that depends on no seed: "
                  "id %lld value %.17g", (long long)out.idx, out.val);
    } else {
        hd_unknown(&ref, out.val);
    }
    ref.v = out.val;
    if (out.idx == DR_NONE)
        hd_const(&ref, out.val);
    if (!check_only)
        hput((int)u8(r), out, &ref, false, -1);
}

/* an array node whose sum is a scalar node (both linear: their
   second-order rules add nothing of their own) */
static void h_array(rd *r)
{
    hdual cb1, cb2;
    hop a = hoperand(r, &cb1), b = hoperand(r, &cb2);
    dr_real xs[2] = {a.r, b.r};
    dr_arr v = dr_arr_from_reals(Q.t, 2, xs);
    CHECK(v.idx != DR_NONE, "dr_arr_from_reals (order 2): %s",
          sn(dr_tape_status(Q.t)));
    other_tape_note(v.idx, true);
    dr_real s = dr_arr_sum(Q.t, v);
    check_sticky("array at order 2", Q.t, &Q.hs);
    /* the sum is linear: its first and second derivatives are known */
    hrule R;
    rule_init(&R, 2);
    R.p[0] = R.p[1] = 1.0;
    R.pconst[0] = R.pconst[1] = true;
    const hdual *x[2] = {a.d, b.d};
    hdual ref;
    hd_apply(&ref, s.val, &R, x);
    if (s.idx == DR_NONE)
        hd_const(&ref, s.val);
    cmp_value("dr_arr_sum (order 2)", s.val, a.r.val + b.r.val,
              fabs(a.r.val) + fabs(b.r.val),
              isnan(a.r.val) || isnan(b.r.val));
    hput((int)u8(r), s, &ref, false, -1);
}

/* nodes recorded at order 1 between nodes of order 2 */
static void h_order1(rd *r)
{
    dr_status st = dr_tape_set_order(Q.t, 1);
    CHECK(st == DR_OK && dr_tape_order(Q.t) == 1, "dr_tape_set_order(1): "
          "%s", sn(st));
    dr_idx mark = dr_tape_mark(Q.t);
    if (u8(r) & 1)
        h_unary(r);
    else
        h_binary(r);
    bad_add(&Q.bad, mark, dr_tape_mark(Q.t));
    st = dr_tape_set_order(Q.t, 2);
    CHECK(st == DR_OK && dr_tape_order(Q.t) == 2, "dr_tape_set_order(2) "
          "again: %s", sn(st));
}

/* a Hessian's inputs: input slots (distinct unless repeated on purpose),
   constants */
typedef struct hx {
    int n;
    dr_real x[HN];
    int dim[HN]; /* -1: a constant, or an input the reference does not
                    follow (-2) */
    bool rep;    /* an input appears twice */
} hx;

static void pick_xs(rd *r, hx *X)
{
    X->n = (int)(u8(r) % (HN + 1));
    X->rep = false;
    for (int i = 0; i < X->n; i++) {
        unsigned b = u8(r);
        int j = pick_h(b);
        if (j < 0 || !Q.s[j].input || (b & 0xe0) == 0xe0) {
            X->x[i] = dr_const(0.5);
            X->dim[i] = -1;
            continue;
        }
        X->x[i] = Q.s[j].r;
        X->dim[i] = Q.s[j].hdim >= 0 ? Q.s[j].hdim : -2;
        for (int q = 0; q < i; q++)
            if (X->x[q].idx == X->x[i].idx)
                X->rep = true;
    }
}

/* edge pushing's Hessian of Y with respect to X (the pass itself,
   unbounded) against the reference, as dr_hessian's is checked, and
   exactly symmetric; a tape it has no rule for (order 1 under order 2)
   is not checked */
static void check_edges(const hslot *Y, const hx *X)
{
    int64_t rx[HN];
    for (int i = 0; i < X->n; i++)
        rx[i] = dr__rel_of(Q.t, X->x[i].idx);
    double E[HH];
    bool done = false;
    dr_status st = dr__hessian_edges(Q.t, dr__rel_of(Q.t, Y->r.idx),
                                     (size_t)X->n, rx, UINT64_MAX, E, &done);
    CHECK(st == DR_OK || st == DR_ENOMEM, "edge pushing: %s", sn(st));
    if (!done)
        return;
    for (int i = 0; i < X->n; i++)
        for (int j = 0; j < X->n; j++) {
            double h = E[i * X->n + j], hs = E[j * X->n + i];
            /* (a NaN either way: its sign is no value, and the halves'
               products may carry either operand's NaN) */
            CHECK(memcmp(&h, &hs, sizeof h) == 0 || (isnan(h) && isnan(hs)),
                  "edge pushing: H[%d][%d] %.17g, H[%d][%d] %.17g", i, j, h,
                  j, i, hs);
            if (X->dim[i] == -2 || X->dim[j] == -2)
                continue;
            double e[HN] = {0};
            if (X->dim[j] >= 0)
                e[X->dim[j]] = 1.0;
            hd_cmp_h("edge pushing", h, &Y->d, X->dim[i], e, i * X->n + j);
        }
}

/* the checks at the end of a program: gradient, Hessian-vector product,
   Hessian, recorded tangents of y with respect to the inputs */
static void h_checks(rd *r)
{
    int yj = pick_h(u8(r));
    if (yj < 0)
        return;
    hslot *Y = &Q.s[yj];
    hx X;
    pick_xs(r, &X);
    /* dr_hvp / dr_hessian replay from the tape's first id (the nodes
       recorded before it became of order 2 too, h_pre); the recorded
       tangents below from the mark taken then */
    dr_idx xid[HN];
    for (int i = 0; i < X.n; i++)
        xid[i] = X.x[i].idx;
    int bad = Y->r.idx == DR_NONE ? 0
                                  : bad_in(&Q.bad, Q.base, Y->r.idx, xid, X.n);
    double g[HN], hv[HN], H[HH], v[HN];
    for (int i = 0; i < HN; i++)
        v[i] = rdw(r);
    size_t len = dr_tape_len(Q.t);
    dr_idx mark = dr_tape_mark(Q.t);
    /* the gradient, first order on a tape of order 2 */
    dr_status st = dr_gradient(Q.t, Y->r, (size_t)X.n, X.x, g);
    CHECK(st == DR_OK, "dr_gradient (order 2): %s", sn(st));
    for (int i = 0; i < X.n; i++) {
        double w[HN] = {0};
        if (X.dim[i] == -1 || Y->r.idx == DR_NONE) {
            CHECK(g[i] == 0.0, "dr_gradient (order 2) w.r.t. a constant: "
                  "%.17g", g[i]);
            continue;
        }
        if (X.dim[i] < 0)
            continue;
        w[X.dim[i]] = 1.0;
        hd_cmp_g("dr_gradient (order 2)", g[i], &Y->d, w, i, false);
    }
    /* H v, and the dense H */
    bool hess = u8(r) & 1;
    /* (a Hessian or product of no inputs computes nothing: DR_OK, whatever
       the tape holds) */
    if (X.n == 0)
        bad = 0;
    dr_status want = bad == 1 ? DR_ENOTSUP : DR_OK;
    if (hess)
        st = dr_hessian(Q.t, Y->r, (size_t)X.n, X.n ? X.x : NULL,
                        X.n ? H : NULL);
    else
        st = dr_hvp(Q.t, Y->r, (size_t)X.n, X.n ? X.x : NULL,
                    X.n ? v : NULL, X.n ? hv : NULL);
    const char *nm = hess ? "dr_hessian" : "dr_hvp";
    TRACE("  %s(y %lld, n %d) -> %s\n", nm, (long long)Y->r.idx, X.n, sn(st));
    if (bad < 0)
        CHECK(st == DR_OK || st == DR_ENOTSUP, "%s: %s", nm, sn(st));
    else
        CHECK(st == want, "%s: %s, expected %s", nm, sn(st), sn(want));
    CHECK(dr_tape_len(Q.t) == len && dr_tape_mark(Q.t) == mark,
          "%s changed the tape: %zu nodes, mark %lld (before %zu, %lld)", nm,
          dr_tape_len(Q.t), (long long)dr_tape_mark(Q.t), len,
          (long long)mark);
    check_sticky(nm, Q.t, &Q.hs);
    if (st == DR_OK) {
        /* direction weights: the sum over the x entries of each input */
        double w[HN] = {0};
        for (int j = 0; j < X.n; j++)
            if (X.dim[j] >= 0)
                w[X.dim[j]] += v[j];
        bool untracked = false;
        for (int j = 0; j < X.n; j++)
            untracked |= X.dim[j] == -2 && v[j] != 0.0;
        for (int i = 0; i < X.n; i++) {
            int di = X.dim[i];
            if (di == -2 || Y->r.idx == DR_NONE) {
                if (Y->r.idx == DR_NONE)
                    for (int j = 0; j < (hess ? X.n : 1); j++)
                        CHECK((hess ? H[i * X.n + j] : hv[i]) == 0.0,
                              "%s of a constant: %.17g", nm,
                              hess ? H[i * X.n + j] : hv[i]);
                continue;
            }
            if (!hess) {
                if (!untracked)
                    hd_cmp_h("dr_hvp", hv[i], &Y->d, di, w, i);
                continue;
            }
            for (int j = 0; j < X.n; j++) {
                double e[HN] = {0};
                if (X.dim[j] == -2)
                    continue;
                if (X.dim[j] >= 0)
                    e[X.dim[j]] = 1.0;
                hd_cmp_h("dr_hessian", H[i * X.n + j], &Y->d, di, e,
                         i * X.n + j);
            }
        }
    }
    /* edge pushing (sweep/edge_push.c), which dr_hessian takes for more
       inputs than these: the pass itself, unbounded, against the same
       reference, and exactly symmetric */
    if (hess && st == DR_OK && X.n > 0 && Y->r.idx != DR_NONE)
        check_edges(Y, &X);
    /* the sparse Hessian of the same: the dense one's entries, compressed
       products agreeing to rounding, and zeros outside its pattern (where
       the dense Hessian is finite: an infinite or NaN entry spreads
       through a compressed product to its colour's other entries) */
    if (hess && st == DR_OK && X.n > 0) {
        bool finite = true;
        double scale = 0.0;
        for (int i = 0; i < X.n * X.n; i++) {
            finite &= isfinite(H[i]) && fabs(H[i]) < 1e150;
            scale = fmax(scale, fabs(H[i]));
        }
        dr_sparse SH;
        dr_status ss = dr_sparse_hessian(Q.t, Y->r, (size_t)X.n, X.x, &SH);
        TRACE("  dr_sparse_hessian(n %d) -> %s\n", X.n, sn(ss));
        CHECK(ss == DR_OK || ss == DR_ENOMEM, "dr_sparse_hessian: %s where "
              "dr_hessian gave DR_OK", sn(ss));
        if (ss == DR_OK && finite) {
            double D[HH];
            for (int i = 0; i < X.n * X.n; i++)
                D[i] = 0.0;
            for (size_t i = 0; i < SH.rows; i++)
                for (size_t k = SH.rowptr[i]; k < SH.rowptr[i + 1]; k++)
                    D[i * (size_t)X.n + SH.colind[k]] = SH.val[k];
            /* to rounding of the terms, whose size the reference's
               magnitudes give: an entry that cancels to zero (hypot(a, a)
               is linear) is rounding noise of its terms in both */
            for (int i = 0; i < X.n * X.n; i++) {
                int di = X.dim[i / X.n], dj = X.dim[i % X.n];
                double mag = 0.0;
                if (di >= 0 && dj >= 0 && (Y->d.hs >> (di * HN + dj) & 1) &&
                    isfinite(Y->d.ha[di * HN + dj]))
                    mag = Y->d.ha[di * HN + dj];
                CHECK(fabs(D[i] - H[i]) <= 1e-9 * (scale + mag) + 1e-300,
                      "dr_sparse_hessian entry %d: %.17g, dense %.17g", i,
                      D[i], H[i]);
            }
        }
        dr_sparse_free(&SH);
        CHECK(dr_tape_len(Q.t) == len, "dr_sparse_hessian changed the tape");
        check_sticky("dr_sparse_hessian", Q.t, &Q.hs);
    }
    /* the same by hand: a recorded tangent in the direction v on the
       inputs, and its gradient */
    if (u8(r) & 1 || X.n == 0)
        return;
    dr_idx ids[HN];
    dr_real seeds[HN];
    int dims[HN], n = 0;
    const hdual *sd[HN];
    hdual cst[HN];
    for (int i = 0; i < X.n; i++) {
        if (X.dim[i] < 0)
            continue;
        bool dup = false;
        for (int q = 0; q < n; q++)
            dup |= ids[q] == X.x[i].idx;
        if (dup)
            continue;
        ids[n] = X.x[i].idx;
        dims[n] = X.dim[i];
        seeds[n] = dr_const(v[i]);
        hd_const(&cst[n], v[i]);
        sd[n] = &cst[n];
        n++;
    }
    dr_real yd = {0, 0};
    st = dr_tangent_record(Q.t, Q.from0, (size_t)n, ids, seeds, Y->r, &yd);
    int badt = Y->r.idx == DR_NONE ? 0
                                   : bad_in(&Q.bad, Q.from0, Y->r.idx, ids, n);
    want = badt == 1 ? DR_ENOTSUP : DR_OK;
    if (badt < 0)
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_tangent_record: %s",
              sn(st));
    else
        CHECK(st == want, "dr_tangent_record: %s, expected %s", sn(st),
              sn(want));
    check_sticky("dr_tangent_record", Q.t, &Q.hs);
    if (st != DR_OK)
        return;
    hdual T1;
    hd_tangent(&T1, &Y->d, n, dims, sd);
    double w[HN] = {0};
    for (int i = 0; i < n; i++)
        w[dims[i]] += seeds[i].val;
    hd_cmp_g("dr_tangent_record value", yd.val, &Y->d, w, 0, true);
    if (yd.idx == DR_NONE)
        hd_const(&T1, yd.val);
    T1.v = yd.val;
    st = dr_gradient(Q.t, yd, (size_t)X.n, X.x, g);
    CHECK(st == DR_OK, "dr_gradient of a recorded tangent: %s", sn(st));
    for (int i = 0; i < X.n; i++) {
        double e[HN] = {0};
        if (X.dim[i] == -2)
            continue;
        if (X.dim[i] >= 0)
            e[X.dim[i]] = 1.0;
        hd_cmp_g("gradient of a recorded tangent (H v)", g[i], &T1, e, i,
                 false);
    }
    /* third order: the tangent of the tangent; its value is w^T H v */
    dr_real ydd = {0, 0};
    for (int i = 0; i < n; i++) {
        seeds[i] = dr_const(rdw(r));
        hd_const(&cst[i], seeds[i].val);
    }
    st = dr_tangent_record(Q.t, Q.from0, (size_t)n, ids, seeds, yd, &ydd);
    /* (nodes recorded after y, before the tangent, are replayed too) */
    int bad2 = yd.idx == DR_NONE ? 0
                                 : bad_in(&Q.bad, Q.from0, yd.idx, ids, n);
    if (bad2 < 0)
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_tangent_record of a "
              "recorded tangent: %s", sn(st));
    else
        CHECK(st == (bad2 ? DR_ENOTSUP : DR_OK), "dr_tangent_record of a "
              "recorded tangent: %s", sn(st));
    if (st != DR_OK)
        return;
    double w2[HN] = {0};
    for (int i = 0; i < n; i++)
        w2[dims[i]] += seeds[i].val;
    hd_cmp_g("dr_tangent_record of a tangent (w^T H v)", ydd.val, &T1, w2, 0,
             true);
    st = dr_gradient(Q.t, ydd, (size_t)X.n, X.x, g);
    CHECK(st == DR_OK, "dr_gradient of a third-order tangent: %s", sn(st));
    other_tape_note(yd.idx, false);
    other_tape_note(ydd.idx, false);
}

/* the refusals of dr_tape_set_order, and a derivative inside a job, on the
   second tape before its program; what is recorded here has no rule for
   the root */
static void h_pre(rd *r, unsigned k)
{
    dr_tape *t = Q.t;
    if ((k & 0x41) == 0x41) { /* a job of order 2 */
        dr_tape *kid[1];
        dr_status st = dr_fork(t, 1, kid);
        CHECK(st == DR_OK, "dr_fork (second tape): %s", sn(st));
        double v = rdv(r);
        dr_real x = dr_input(kid[0], v);
        CHECK(x.idx != DR_NONE, "dr_input on a child of the second tape");
        st = dr_tape_set_order(t, 2);
        CHECK(st == DR_EBUSY, "dr_tape_set_order(2) while forked: %s",
              sn(st));
        st = dr_tape_set_order(kid[0], 2);
        CHECK(st == DR_OK && dr_tape_order(kid[0]) == 2 &&
                  dr_tape_order(t) == 1,
              "dr_tape_set_order(2) on a child handle: %s (orders %d, root "
              "%d)", sn(st), dr_tape_order(kid[0]), dr_tape_order(t));
        dr_rec rec;
        st = dr_rec_begin(kid[0], &rec);
        CHECK(st == DR_OK, "dr_rec_begin on a child of order 2: %s", sn(st));
        st = dr_tape_set_order(kid[0], 2);
        CHECK(st == DR_EBUSY, "dr_tape_set_order(2) on a child with a "
              "recorder open: %s", sn(st));
        st = dr_rec_end(&rec);
        CHECK(st == DR_OK, "dr_rec_end on a child of order 2: %s", sn(st));
        dr_tape *gk[1];
        st = dr_fork(kid[0], 1, gk);
        CHECK(st == DR_OK && dr_tape_order(gk[0]) == 2,
              "dr_fork on a child of order 2: %s", sn(st));
        st = dr_join(kid[0]);
        CHECK(st == DR_OK, "dr_join on a child of order 2: %s", sn(st));
        /* a nested derivative inside the job: d/dx sin(x) */
        dr_real y = dr_sin(kid[0], x);
        dr_idx from = x.idx;
        dr_real s = dr_const(1.0), d = {0, 0};
        st = dr_tangent_record(kid[0], from, 1, &x.idx, &s, y, &d);
        CHECK(st == DR_OK, "dr_tangent_record on a child handle: %s",
              sn(st));
        double ref = cos(v);
        CHECK(d.val == ref || (isnan(d.val) && isnan(ref)) ||
                  fabs(d.val - ref) <= 1e-15,
              "dr_tangent_record on a child handle: %.17g, cos %.17g",
              d.val, ref);
        CHECK(dr_join(t) == DR_OK, "dr_join (second tape)");
        st = dr_tape_set_order(kid[0], 2);
        CHECK(st == DR_EINVAL, "dr_tape_set_order on a joined handle: %s",
              sn(st));
        if (d.idx != DR_NONE) { /* an ordinary node for the root */
            hdual hd;
            hd_const(&hd, d.val);
            hput(2, d, &hd, false, -1);
        }
    }
    if (k & 2) { /* a recorder open */
        dr_rec rec;
        CHECK(dr_rec_begin(t, &rec) == DR_OK, "dr_rec_begin (second tape)");
        dr_status st = dr_tape_set_order(t, 2);
        CHECK(st == DR_EBUSY, "dr_tape_set_order(2) with a recorder open: "
              "%s", sn(st));
        CHECK(dr_rec_end(&rec) == DR_OK, "dr_rec_end (second tape)");
    }
    if (k & 4) { /* orders that do not exist */
        static const int bad[] = {0, 3, -1, INT_MIN, INT_MAX, 100};
        int o = bad[u8(r) % 6];
        dr_status st = dr_tape_set_order(t, o);
        CHECK(st == DR_EINVAL, "dr_tape_set_order(%d): %s", o, sn(st));
        CHECK(dr_tape_set_order(NULL, 2) == DR_EINVAL,
              "dr_tape_set_order(NULL)");
        CHECK(dr_tape_order(NULL) == 0, "dr_tape_order(NULL)");
        CHECK(dr_tape_order(t) == 1, "the order after dr_tape_set_order(%d)",
              o);
    }
    if ((k & 0x88) == 0x88) { /* nodes recorded at order 1 before */
        double v = rdv(r);
        dr_real x = dr_input(t, v);
        dr_real y = dr_sin(t, x);
        hdual d;
        hd_const(&d, v); /* the reference follows no direction of it */
        hput(0, x, &d, false, -1);
        hd_const(&d, y.val);
        hput(1, y, &d, false, -1);
    }
}

/* what a tape of order 2 refuses, and a recorder and a fork it takes */
static void h_refusals(void)
{
    dr_tape *t = Q.t;
    dr_rec rec;
    dr_status st = dr_rec_begin(t, &rec);
    CHECK(st == DR_OK, "dr_rec_begin on a tape of order 2: %s", sn(st));
    st = dr_tape_set_order(t, 2);
    CHECK(st == DR_EBUSY, "dr_tape_set_order(2) with a recorder open (order "
          "2): %s", sn(st));
    st = dr_rec_end(&rec);
    CHECK(st == DR_OK, "dr_rec_end on a tape of order 2: %s", sn(st));
    /* a fork gives children of order 2 (an empty child: nothing changes
       that the model follows) */
    dr_tape *kid[1];
    st = dr_fork(t, 1, kid);
    CHECK(st == DR_OK, "dr_fork on a tape of order 2: %s", sn(st));
    CHECK(dr_tape_order(kid[0]) == 2, "a child of a handle of order 2: "
          "order %d", dr_tape_order(kid[0]));
    st = dr_join(t);
    CHECK(st == DR_OK, "dr_join on a tape of order 2: %s", sn(st));
    check_sticky("refusals at order 2", t, &Q.hs);
}

static dr_status dummy_step(void *ctx, dr_tape *t, size_t k, size_t n,
                            const dr_real *x, dr_real *y)
{
    (void)ctx, (void)k;
    for (size_t i = 0; i < n; i++)
        y[i] = dr_sin(t, x[i]);
    return dr_tape_status(t);
}
static void dummy_rev(void *ctx, size_t n, const double *x, size_t m,
                      const double *y, const double *ybar, double *xbar)
{
    (void)ctx, (void)x, (void)m, (void)y, (void)ybar;
    for (size_t i = 0; i < n; i++)
        xbar[i] = 0.0;
}

/* externals and loops record at order 2 (they replay) but give no second
   derivatives: a Hessian or recorded tangent through them answers
   DR_ENOTSUP */
static void h_ext_order2(rd *r)
{
    dr_tape *t = Q.t;
    int j = pick_h(u8(r));
    dr_real x = j >= 0 ? Q.s[j].r : dr_const(1.0);
    dr_idx mark = dr_tape_mark(t);
    dr_external f = {NULL, dummy_rev, NULL, NULL, NULL};
    double y = 2.5;
    dr_real out = {0, 0};
    dr_status st = dr_record_external(t, &f, 1, &x, 1, &y, &out);
    CHECK(st == DR_OK, "dr_record_external at order 2: %s", sn(st));
    dr_loop loop = {NULL, dummy_step, NULL, 0};
    st = dr_record_checkpointed(t, &loop, 3, 1, &x, 1, &out);
    CHECK(st == DR_OK, "dr_record_checkpointed at order 2: %s", sn(st));
    bad_add(&Q.bad, mark, dr_tape_mark(t));
    check_sticky("externals at order 2", t, &Q.hs);
    /* (their outputs: no reference) */
}

/* misuse of dr_hvp / dr_hessian / dr_tangent_record */
static void h_misuse(rd *r)
{
    dr_tape *t = Q.t;
    int j = pick_h(u8(r));
    if (j < 0)
        return;
    dr_real y = Q.s[j].r;
    dr_real x[1] = {y};
    double v[1] = {1.0}, out[1];
    dr_real o = {1, 1};
    size_t len = dr_tape_len(t);
    switch (u8(r) % 6) {
    case 0:
        CHECK(dr_tangent_record(t, Q.from0, 0, NULL, NULL, y, NULL) ==
                  DR_EINVAL, "dr_tangent_record(out NULL)");
        CHECK(dr_tangent_record(t, Q.from0, 1, NULL, NULL, y, &o) ==
                  DR_EINVAL, "dr_tangent_record(seeds NULL)");
        break;
    case 1: { /* from not on the tape */
        static const dr_idx bad[] = {INT64_MIN, -5, INT64_MAX};
        dr_idx from = bad[u8(r) % 3];
        dr_status st = dr_tangent_record(t, from, 0, NULL, NULL, y, &o);
        CHECK(st == DR_EINVAL, "dr_tangent_record(from %lld): %s",
              (long long)from, sn(st));
        st = dr_tangent_record(t, dr_tape_mark(t) + 1, 0, NULL, NULL, y, &o);
        CHECK(st == DR_EINVAL, "dr_tangent_record(from beyond the mark): "
              "%s", sn(st));
        break;
    }
    case 2: /* NULL arrays */
        CHECK(dr_hvp(t, y, 1, x, NULL, out) == DR_EINVAL, "dr_hvp(v NULL)");
        CHECK(dr_hvp(t, y, 1, x, v, NULL) == DR_EINVAL, "dr_hvp(out NULL)");
        CHECK(dr_hessian(t, y, 1, x, NULL) == DR_EINVAL,
              "dr_hessian(H NULL)");
        CHECK(dr_hessian(t, y, 1, NULL, out) == DR_EINVAL,
              "dr_hessian(x NULL)");
        CHECK(dr_hvp(NULL, y, 0, NULL, NULL, NULL) == DR_EINVAL,
              "dr_hvp(NULL tape)");
        CHECK(dr_hessian(t, y, (size_t)1 << 33, x, out) == DR_EINVAL,
              "dr_hessian with n * n overflowing");
        break;
    case 3: { /* a seed value not on the tape */
        int k = pick_h(u8(r));
        if (k < 0 || !Q.s[k].input)
            break;
        dr_idx id = Q.s[k].r.idx;
        dr_real s = {1.0, INT64_MAX - 3};
        dr_idx mark = dr_tape_mark(t);
        dr_status st = dr_tangent_record(t, Q.from0, 1, &id, &s, y, &o);
        CHECK(st == DR_EINVAL, "dr_tangent_record with a seed value not on "
              "the tape: %s", sn(st));
        CHECK(dr_tape_mark(t) == mark, "dr_tangent_record with a seed value "
              "not on the tape recorded nodes (%lld ids)",
              (long long)(dr_tape_mark(t) - mark));
        check_sticky("dr_tangent_record with a seed value not on the tape",
                     t, &Q.hs);
        break;
    }
    case 4: { /* order 1 now: what was recorded at order 2 keeps its
                 rules */
        CHECK(dr_tape_set_order(t, 1) == DR_OK, "dr_tape_set_order(1)");
        int bad = y.idx == DR_NONE ? 0
                                   : bad_in(&Q.bad, Q.base, y.idx,
                                            &x[0].idx, 1);
        dr_status st = dr_hvp(t, y, 1, x, v, out);
        if (bad >= 0)
            CHECK(st == (bad ? DR_ENOTSUP : DR_OK), "dr_hvp at order 1 of a "
                  "value recorded at order 2: %s", sn(st));
        st = dr_hessian(t, y, 1, x, out);
        if (bad >= 0)
            CHECK(st == (bad ? DR_ENOTSUP : DR_OK), "dr_hessian at order 1 "
                  "of a value recorded at order 2: %s", sn(st));
        CHECK(dr_tape_set_order(t, 2) == DR_OK, "dr_tape_set_order(2)");
        break;
    }
    default: { /* ids of the main tape */
        int mj = pick_s(u8(r));
        if (mj < 0 || S.s[mj].r.idx == DR_NONE)
            break;
        dr_real m = S.s[mj].r;
        dr_status st = dr_hvp(t, m, 1, x, v, out);
        CHECK(st == DR_EINVAL, "dr_hvp with y of another tape: %s", sn(st));
        st = dr_hessian(t, y, 1, &m, out);
        CHECK(st == DR_EINVAL, "dr_hessian with x of another tape: %s",
              sn(st));
        dr_idx id = m.idx;
        dr_real s = dr_const(1.0);
        st = dr_tangent_record(t, Q.from0, 1, &id, &s, y, &o);
        CHECK(st == DR_EINVAL, "dr_tangent_record with a seed id of "
              "another tape: %s", sn(st));
        st = dr_tangent_record(t, m.idx, 0, NULL, NULL, y, &o);
        CHECK(st == DR_EINVAL, "dr_tangent_record from an id of another "
              "tape: %s", sn(st));
        break;
    }
    }
    CHECK(dr_tape_len(t) == len, "a refused call recorded nodes");
    check_sticky("second-order misuse", t, &Q.hs);
}

void op_second_order(rd *r)
{
    unsigned k = u8(r);
    memset(&Q, 0, sizeof Q);
    Q.t = other_tape();
    if (!Q.t)
        return;
    dr_status st = dr_tape_clear(Q.t);
    CHECK(st == DR_OK, "dr_tape_clear (second tape): %s", sn(st));
    other_tape_reset();
    Q.base = dr_tape_mark(Q.t);
    st = dr_tape_set_order(Q.t, 1);
    CHECK(st == DR_OK, "dr_tape_set_order(1) (second tape): %s", sn(st));
    h_pre(r, k);
    bad_add(&Q.bad, Q.base, dr_tape_mark(Q.t)); /* recorded at order 1 */
    st = dr_tape_set_order(Q.t, 2);
    CHECK(st == DR_OK, "dr_tape_set_order(2): %s", sn(st));
    CHECK(dr_tape_order(Q.t) == 2, "dr_tape_order after setting 2");
    Q.from0 = dr_tape_mark(Q.t);
    Q.mark[0] = Q.mark[1] = Q.from0;
    if (k & 0x10)
        h_refusals();
    int nops = (int)(u8(r) % 20);
    for (int i = 0; i < nops && !eof(r); i++) {
        unsigned op = u8(r);
        TRACE(" (2nd) op %u\n", op % 13);
        switch (op % 13) {
        case 0: case 1: h_input(r); break;
        case 2: case 3: h_unary(r); break;
        case 4: case 5: h_binary(r); break;
        case 6: h_powi(r); break;
        case 7: h_record(r); break;
        case 8: Q.mark[u8(r) & 1] = dr_tape_mark(Q.t); break;
        case 9: h_tangent(r, false); break;
        case 10: h_array(r); break;
        case 12: h_sumn(r); break;
        default:
            if (op & 0x80)
                h_order1(r);
            else
                h_misuse(r);
            break;
        }
    }
    if (k & 0x20)
        h_ext_order2(r);
    h_checks(r);
}

/* ------------------------------------------------- the main tape's order */

/* 1: a node of ids [from, y] of handle lv has no second-order rule for
   it, 0: none has, -1: not known */
static int level_bad(const level *lv, dr_idx from, dr_idx y,
                     const dr_idx *seed, int ns)
{
    bads b = lv->bad;
    if (lv->order == 1 && lv->o1_from != DR_NONE)
        bad_add(&b, lv->o1_from, dr_tape_mark(lv->h));
    return bad_in(&b, from, y, seed, ns);
}



static void o_set(unsigned k, rd *r)
{
    int order = (k & 0x10) ? 1 : 2;
    bool bad = (k & 0xe0) == 0xe0;
    if (bad) {
        static const int bo[] = {0, 3, -2, INT_MAX};
        order = bo[u8(r) % 4];
    }
    /* the top handle (a child when forked), or the root */
    level *lv = (k & 0x08) ? &S.L[0] : top();
    bool forked = lv != top(), rec = lv == top() && S.rec_open;
    dr_status st = dr_tape_set_order(lv->h, order);
    dr_status want = DR_OK;
    if (bad)
        want = DR_EINVAL;
    else if (order == 2 && (forked || rec))
        want = DR_EBUSY;
    TRACE("  dr_tape_set_order(%d) on level %d -> %s\n", order,
          (int)(lv - S.L), sn(st));
    /* (order 1 is taken on a forked handle and with a recorder open too:
       only 2 is refused there) */
    CHECK(st == want, "dr_tape_set_order(%d): %s, expected %s", order,
          sn(st), sn(want));
    if (st == DR_OK && order != lv->order) {
        dr_idx mark = dr_tape_mark(lv->h);
        if (order == 2) {
            if (lv->o1_from != DR_NONE)
                bad_add(&lv->bad, lv->o1_from, mark);
            lv->o1_from = DR_NONE;
        } else {
            lv->o1_from = mark;
        }
        lv->order = order;
    }
    for (int d = 0; d <= S.depth; d++)
        CHECK(dr_tape_order(S.L[d].h) == S.L[d].order,
              "dr_tape_order of level %d: %d, expected %d", d,
              dr_tape_order(S.L[d].h), S.L[d].order);
    check_sticky("dr_tape_set_order", lv->h, &lv->hs);
}

/* a Hessian on the main tape: its status, the tape unchanged, and zeros
   where y depends on no input */
static void o_hessian(unsigned k, rd *r)
{
    dual cb;
    opnd y = operand(r, &cb);
    int n = (int)(u8(r) % 5);
    dr_real x[4];
    int dim[4];
    bool xbad = false;
    for (int i = 0; i < n; i++) {
        unsigned b = u8(r);
        int j = pick_input(b);
        dim[i] = -1;
        if ((b & 0xf0) == 0xf0) {
            dual c2;
            opnd o = bad_operand(r, &c2);
            if (o.kind != V_INVALID)
                return;
            x[i] = o.r;
            xbad = true;
        } else if (j < 0 || (b & 0xc0) == 0xc0) {
            x[i] = dr_const(2.0);
        } else {
            x[i] = S.s[j].r;
            dim[i] = S.s[j].dim;
        }
    }
    double v[4], out[16];
    for (int i = 0; i < 4; i++)
        v[i] = rdw(r);
    bool child = S.depth > 0 && (k & 0x08);
    dr_tape *t = child ? top()->h : S.T;
    size_t len = dr_tape_len(S.T);
    dr_idx mark = dr_tape_mark(S.T);
    bool hess = k & 0x10;
    dr_status st = hess ? dr_hessian(t, y.r, (size_t)n, x, out)
                        : dr_hvp(t, y.r, (size_t)n, x, v, out);
    const char *nm = hess ? "dr_hessian" : "dr_hvp";
    dr_status want = child ? DR_EINVAL : whole_status();
    if (want == DR_OK && S.L[0].hs.st != DR_OK)
        want = S.L[0].hs.st;
    if (want == DR_OK && (xbad || y.kind == V_INVALID))
        want = DR_EINVAL;
    int bad = 0;
    /* dr_hvp replays from the tape's first id; of no inputs there is
       nothing to compute, but for array inputs whose tangents were seeded
       (dr_arr_tangent_seed, fuzz_modes.c: the header's "but the products
       for array inputs seeded"), for which the pass runs and refuses a
       node without a rule up to y; the model does not follow those seeds
       (an array's seeds outlive its slot here), so either answer stands */
    if (want == DR_OK && y.r.idx != DR_NONE && n == 0 && !hess)
        bad = -1;
    if (want == DR_OK && y.r.idx != DR_NONE && n > 0) {
        dr_idx xid[4];
        for (int i = 0; i < n; i++)
            xid[i] = x[i].idx;
        bad = level_bad(&S.L[0], S.L[0].first, y.r.idx, xid, n);
        if (bad == 1)
            want = DR_ENOTSUP;
    }
    TRACE("  %s(y %lld, n %d) on the main tape -> %s\n", nm,
          (long long)y.r.idx, n, sn(st));
    if (bad < 0)
        CHECK(st == DR_OK || st == DR_ENOTSUP, "%s: %s", nm, sn(st));
    else
        CHECK(st == want, "%s: %s, expected %s", nm, sn(st), sn(want));
    if (S.depth == 0 && !S.rec_open)
        CHECK(dr_tape_len(S.T) == len && dr_tape_mark(S.T) == mark,
              "%s changed the main tape", nm);
    check_sticky(nm, top()->h, &top()->hs);
    if (st != DR_OK || !comparable() || y.kind != V_VALID)
        return;
    /* a row (or entry) for an input y does not depend on is exactly 0;
       so is everything of a y that depends on none of them */
    for (int i = 0; i < n; i++) {
        bool dep_i = dim[i] >= 0 && (y.d->s >> dim[i] & 1);
        for (int j = 0; j < (hess ? n : 1); j++) {
            double e = hess ? out[i * n + j] : out[i];
            if (x[i].idx == DR_NONE || (dim[i] >= 0 && !dep_i))
                CHECK(e == 0.0, "%s[%d]: %.17g where y does not depend on "
                      "that input", nm, hess ? i * n + j : i, e);
        }
    }
}

/* a recorded tangent on the main tape (the root, or a child handle: a
   derivative inside a job): its value is a directional derivative (the
   first-order reference's), the node a new value */
static void o_tangent(unsigned k, rd *r)
{
    dual cb;
    opnd y = operand(r, &cb);
    if (y.kind != V_CONST && y.kind != V_VALID)
        return;
    level *lv = (k & 0x08) ? &S.L[0] : top();
    bool forked = lv != top();
    int ns = (int)(u8(r) % 4);
    dr_idx ids[3];
    dr_real seeds[3];
    double w[NT] = {0};
    int n = 0;
    dr_idx lowest = INT64_MAX;
    for (int i = 0; i < ns; i++) {
        int j = pick_input(u8(r));
        if (j < 0)
            continue;
        /* on a child: its own inputs (the replay starts at the first) */
        if (lv != &S.L[0] && S.s[j].job != lv->job)
            continue;
        ids[n] = S.s[j].r.idx;
        seeds[n] = dr_const(rdw(r));
        w[S.s[j].dim] += seeds[n].val;
        if (ids[n] < lowest)
            lowest = ids[n];
        n++;
    }
    bool sbad = false;
    if ((k & 0xe0) == 0xe0 && n > 0) { /* a seed id that is not on it */
        dual c2;
        opnd o = bad_operand(r, &c2);
        if (o.kind != V_INVALID)
            return;
        ids[0] = o.r.idx;
        sbad = true;
    }
    /* from the current mark (nothing replayed), or the first id the
       handle recorded (the root: since the clear; a child: its lowest
       seeded input) */
    bool now = (k & 0x10) || (lv != &S.L[0] && n == 0);
    dr_idx from = now ? dr_tape_mark(lv->h)
                  : lv == &S.L[0] ? S.L[0].first : lowest;
    dr_idx mark = dr_tape_mark(lv->h);
    dr_real out = {99.0, 99};
    dr_status st = dr_tangent_record(lv->h, from, (size_t)n, ids, seeds,
                                     y.r, &out);
    dr_status want = forked || (lv == top() && S.rec_open) ? DR_EBUSY
                   : lv->hs.st;
    if (want == DR_OK && sbad)
        want = DR_EINVAL;
    int bad = 0;
    if (want == DR_OK && !now && y.r.idx != DR_NONE) {
        bad = level_bad(lv, from, y.r.idx, ids, n);
        if (bad == 1)
            want = DR_ENOTSUP;
    }
    TRACE("  dr_tangent_record(level %d, %d seeds, from %lld, y %lld) -> "
          "%s\n", (int)(lv - S.L), n, (long long)from, (long long)y.r.idx,
          sn(st));
    if (bad < 0)
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_tangent_record: %s",
              sn(st));
    else
        CHECK(st == want, "dr_tangent_record (main tape, level %d): %s, "
              "expected %s", (int)(lv - S.L), sn(st), sn(want));
    check_sticky("dr_tangent_record", lv->h, &lv->hs);
    if (st != DR_OK) {
        CHECK(dr_tape_mark(lv->h) == mark, "dr_tangent_record failed (%s) "
              "and recorded nodes", sn(st));
        return;
    }
    if (comparable()) {
        if (now) { /* nothing replayed: y's own seeds, else 0 */
            double s = 0;
            for (int i = 0; i < n; i++)
                if (ids[i] == y.r.idx)
                    s += seeds[i].val;
            CHECK(out.val == s, "dr_tangent_record from the mark: %.17g, "
                  "expected %.17g", out.val, s);
        } else {
            cmp_comb_rec("dr_tangent_record (main tape)", out.val, y.d, w,
                         0);
        }
    }
    dual d;
    if (out.idx == DR_NONE) {
        dual_const(&d, out.val);
    } else {
        note_id(out.idx);
        dual_unknown(&d, out.val); /* its derivatives are second order */
    }
    /* (a slot of the top level: the node's job) */
    if (lv == top())
        put_s((int)(u8(r) % NS), out, &d, -1);
}

void op_order(rd *r)
{
    unsigned k = u8(r);
    /* recorded tangents of recorded tangents double the tape: keep the
       replays (and the input's run time) small */
    if ((k % 4) != 0 && dr_tape_len(S.T) > 4096)
        return;
    switch (k % 4) {
    case 0: o_set(k, r); break;
    case 1: case 2: o_hessian(k, r); break;
    default: o_tangent(k, r); break;
    }
}
