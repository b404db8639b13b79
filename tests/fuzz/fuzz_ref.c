/*
 * fuzz_ref.c - the first-order reference of the fuzz target (fuzz_ref.h):
 * dual numbers over up to NT input directions, the bounds that say when
 * the engine and the reference must agree, and the derivative rules of
 * every scalar operation, written here from calculus, independently of
 * cbits/ (tests/fuzz/README.md, "The reference").
 */
#include "fuzz_ref.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- findings */

const uint8_t *g_input;
size_t g_input_len;
int g_trace = -1;

void finding(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\n*** dualrev fuzz finding: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (g_input) {
        fprintf(stderr, "input (%zu bytes):", g_input_len);
        for (size_t i = 0; i < g_input_len && i < 512; i++)
            fprintf(stderr, "%s%02x", i % 32 ? " " : "\n  ", g_input[i]);
        fprintf(stderr, "\n");
    }
    abort();
}

/* -------------------------------------------------------------- duals */

void dual_const(dual *o, double v)
{
    memset(o, 0, sizeof *o);
    o->v = v;
}

void dual_input(dual *o, double v, int dim)
{
    dual_const(o, v);
    if (dim >= 0) {
        o->s = (dmask)1 << dim;
        o->t[dim] = 1.0;
        o->a[dim] = 1.0;
        o->g[dim] = 1.0;
        o->l[dim] = 1.0;
    }
}

/* a value whose derivative the reference cannot know: every direction is
   wild */
void dual_unknown(dual *o, double v)
{
    dual_const(o, v);
    o->s = o->w = o->z = ~(dmask)0;
}

/* out = value v with tangent sum_i p_i x_i (the chain rule); out may not
   alias any x */
void lin(dual *o, double v, int n, const term *tm)
{
    dual_const(o, v);
    for (int i = 0; i < n; i++) {
        const dual *x = tm[i].x;
        if (!x || !x->s)
            continue;
        double p = tm[i].p;
        bool huge = !(fabs(p) <= PBIG);
        /* x's wild directions stay wild through a non-zero partial; through
           a zero one the sweep adds 0 * (a finite adjoint) = 0 into x, so
           nothing of x's own subtree is reached from here (an infinite
           adjoint here would come from a huge partial further on, which
           marks these directions wild there) */
        if (p != 0.0 || tm[i].dp != 0.0)
            o->w |= x->w | (huge ? x->s : 0);
        o->z |= x->z | x->w | (huge ? x->s : 0);
        if (p == 0.0 || huge) {
            /* a zero partial still joins the paths (the sweep multiplies
               by it); what it carries is zero */
            dmask m = x->s & ~o->s;
            for (int d = 0; d < NT; d++) {
                if (m >> d & 1) {
                    o->g[d] = 1.0;
                    o->l[d] = 1.0;
                }
                /* a zero partial that another formula makes non-zero,
                   times x's tangent (up to a + e: the engine's tangent
                   of x may be the formula error alone where a is 0) */
                if (x->s >> d & 1)
                    o->e[d] += tm[i].dp * (x->a[d] + x->e[d]);
            }
            o->s |= x->s;
            continue;
        }
        double ap = fabs(p), gp = ap > 1 ? ap : 1, lp = ap < 1 ? ap : 1;
        for (int d = 0; d < NT; d++) {
            if (!(x->s >> d & 1))
                continue;
            bool first = !(o->s >> d & 1);
            o->t[d] += p * x->t[d];
            o->a[d] += ap * x->a[d];
            o->e[d] += ap * x->e[d] + tm[i].dp * (x->a[d] + x->e[d]);
            double gg = gp * x->g[d], ll = lp * x->l[d];
            if (first || gg > o->g[d])
                o->g[d] = gg;
            if (first || ll < o->l[d])
                o->l[d] = ll;
            o->s |= (dmask)1 << d;
        }
    }
    for (int d = 0; d < NT; d++)
        if (o->s >> d & 1)
            if (!isfinite(o->t[d]) || !(o->a[d] <= 1e150) ||
                !(o->g[d] <= GROW_MAX) || !(o->l[d] >= SHRINK_MIN) ||
                !isfinite(o->e[d]))
                o->w |= (dmask)1 << d;
    o->z |= o->w;
}

void lin1(dual *o, double v, const dual *x, double p, double dp)
{
    term tm[1] = {{x, p, dp}};
    lin(o, v, 1, tm);
}
void lin2(dual *o, double v, const dual *x, double p, double dpx,
                 const dual *y, double q, double dpy)
{
    term tm[2] = {{x, p, dpx}, {y, q, dpy}};
    lin(o, v, 2, tm);
}

/* engine result g against the reference for direction d of r; weight scales
   the reference (seeds) */
void cmp_deriv(const char *what, double g, const dual *r, int d, int k)
{
    if (d < 0)
        return;
    if (!(r->s >> d & 1)) {
        CHECK(g == 0.0,
              "%s[%d]: engine %.17g, but the output does not depend on "
              "that input (expected exactly 0)",
              what, k, g);
        return;
    }
    if (r->w >> d & 1)
        return;
    double ref = r->t[d];
    double tol = 1e-9 * r->a[d] + 8.0 * r->e[d] + 1e-290;
    CHECK(fabs(g - ref) <= tol,
          "%s[%d]: engine %.17g, reference %.17g (|diff| %.3g > tol %.3g; "
          "scale %.3g, formula err %.3g)",
          what, k, g, ref, fabs(g - ref), tol, r->a[d], r->e[d]);
}

static void comb_mask(const char *what, double g, const dual *r,
                      const double *w, int k, dmask wild)
{
    double ref = 0, a = 0, e = 0;
    bool any = false;
    for (int d = 0; d < NT; d++) {
        if (w[d] == 0.0 || !(r->s >> d & 1))
            continue;
        if (wild >> d & 1)
            return;
        any = true;
        ref += w[d] * r->t[d];
        a += fabs(w[d]) * r->a[d];
        e += fabs(w[d]) * r->e[d];
    }
    if (!any) {
        CHECK(g == 0.0,
              "%s[%d]: engine %.17g, but the output depends on none of the "
              "seeded inputs (expected exactly 0)",
              what, k, g);
        return;
    }
    if (!isfinite(ref) || !(a <= 1e150) || !isfinite(e))
        return;
    double tol = 1e-9 * a + 8.0 * e + 1e-290;
    CHECK(fabs(g - ref) <= tol,
          "%s[%d]: engine %.17g, reference %.17g (|diff| %.3g > tol %.3g; "
          "scale %.3g, formula err %.3g)",
          what, k, g, ref, fabs(g - ref), tol, a, e);
}

void cmp_comb(const char *what, double g, const dual *r, const double *w,
              int k)
{
    comb_mask(what, g, r, w, k, r->w);
}

void cmp_comb_rec(const char *what, double g, const dual *r, const double *w,
                  int k)
{
    comb_mask(what, g, r, w, k, r->z);
}

/* -------------------------------------------------------- value checks */

void cmp_value(const char *what, double eng, double ref, double scale,
               bool args_nan)
{
    if (args_nan || !(scale <= 1e280))
        return; /* sums that overflow: the order decides inf or NaN */
    if (isnan(ref) || isnan(eng)) {
        CHECK(isnan(ref) && isnan(eng), "%s: value engine %.17g, reference "
              "%.17g", what, eng, ref);
        return;
    }
    if (isinf(ref) || isinf(eng)) {
        if (fabs(isinf(ref) ? eng : ref) > 1e280)
            return; /* overflow at the edge: rounding decides */
        CHECK(eng == ref, "%s: value engine %.17g, reference %.17g", what, eng,
              ref);
        return;
    }
    double m = fmax(fabs(eng), fabs(ref));
    if (m > 1e280 || scale > 1e280)
        return;
    double tol = 1e-11 * (m > scale ? m : scale) + 1e-280;
    CHECK(fabs(eng - ref) <= tol,
          "%s: value engine %.17g, reference %.17g (scale %.3g)", what, eng,
          ref, scale);
}

/* ------------------------------------------------------ reference math */

void ref_binary_rec(int f, dr_real a, dr_real b, const dual *da, dual *o)
{
    if (f == B_POW && b.val == 0.0 && b.idx != DR_NONE &&
        !isfinite(b.val * pow(a.val, b.val - 1.0)))
        o->z |= da->s;
}

const char *const unary_name[N_UNARY] = {
    "neg", "sqrt", "cbrt", "exp", "expm1", "log", "log1p", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "abs", "erf",
    "sigmoid", "relu", "square"};
const char *const binary_name[N_BINARY] = {
    "add", "sub", "mul", "div", "atan2", "pow", "min", "max", "hypot"};

double sigmoid_val(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/* |p - q| where both are finite, else 0 */
double disagree(double p, double q)
{
    return (isfinite(p) && isfinite(q)) ? fabs(p - q) : 0.0;
}

/* value and derivative of a one-argument function at x */
void ref_unary(int f, double x, double *y, double *p, double *dp)
{
    double v = 0, d = 0, alt = NAN;
    switch (f) {
    case U_NEG: v = -x; d = -1; break;
    case U_SQRT: v = sqrt(x); d = 0.5 / v; alt = 1.0 / (2.0 * sqrt(x)); break;
    case U_CBRT:
        v = cbrt(x);
        d = 1.0 / (3.0 * v * v);
        if (x != 0)
            alt = v / (3.0 * x);
        break;
    case U_EXP: v = exp(x); d = v; break;
    case U_EXPM1: v = expm1(x); d = v + 1.0; alt = exp(x); break;
    case U_LOG: v = log(x); d = 1.0 / x; break;
    case U_LOG1P: v = log1p(x); d = 1.0 / (1.0 + x); break;
    case U_SIN: v = sin(x); d = cos(x); break;
    case U_COS: v = cos(x); d = -sin(x); break;
    case U_TAN: {
        v = tan(x);
        double c = cos(x);
        d = 1.0 / (c * c);
        alt = 1.0 + v * v;
        break;
    }
    case U_ASIN:
        v = asin(x);
        d = 1.0 / sqrt((1.0 - x) * (1.0 + x));
        alt = 1.0 / sqrt(1.0 - x * x);
        break;
    case U_ACOS:
        v = acos(x);
        d = -1.0 / sqrt((1.0 - x) * (1.0 + x));
        alt = -1.0 / sqrt(1.0 - x * x);
        break;
    case U_ATAN: v = atan(x); d = 1.0 / (1.0 + x * x); break;
    case U_SINH: v = sinh(x); d = cosh(x); break;
    case U_COSH: v = cosh(x); d = sinh(x); break;
    case U_TANH: {
        v = tanh(x);
        double c = cosh(x);
        d = 1.0 / (c * c);
        alt = 1.0 - v * v;
        break;
    }
    case U_ABS:
        v = fabs(x);
        d = x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : NAN;
        break;
    case U_ERF:
        v = erf(x);
        d = 1.1283791670955126 * exp(-x * x);
        break;
    case U_SIGMOID: {
        v = sigmoid_val(x);
        double e = exp(-fabs(x));
        d = e / ((1.0 + e) * (1.0 + e));
        alt = v * (1.0 - v);
        break;
    }
    case U_RELU: v = x > 0 ? x : 0.0; d = x > 0 ? 1.0 : 0.0; break;
    case U_SQUARE: v = x * x; d = 2.0 * x; break;
    }
    *y = v;
    *p = d;
    *dp = disagree(d, alt);
}

/* value and both partials of a two-argument function */
void ref_binary(int f, double a, double b, double *y, double *pa,
                       double *dpa, double *pb, double *dpb)
{
    double v = 0, da = 0, db = 0, alta = NAN, altb = NAN;
    switch (f) {
    case B_ADD: v = a + b; da = 1; db = 1; break;
    case B_SUB: v = a - b; da = 1; db = -1; break;
    case B_MUL: v = a * b; da = b; db = a; break;
    case B_DIV:
        v = a / b;
        da = 1.0 / b;
        db = -v / b;
        altb = -a / (b * b);
        break;
    case B_ATAN2: { /* atan2(y = a, x = b) */
        v = atan2(a, b);
        double r2 = a * a + b * b, h = hypot(a, b);
        da = (b / h) / h;
        db = (-a / h) / h;
        alta = b / r2;
        altb = -a / r2;
        break;
    }
    case B_POW:
        v = pow(a, b);
        if (b == 0) {
            da = 0;
        } else {
            da = b * pow(a, b - 1.0);
            if (a != 0 && isfinite(a))
                alta = b * v / a;
        }
        db = v == 0 ? 0.0 : v * log(a);
        break;
    case B_MIN:
        v = fmin(a, b);
        if (isnan(a) && isnan(b)) {
            da = db = NAN;
        } else if (isnan(a)) {
            db = 1;
        } else if (isnan(b)) {
            da = 1;
        } else if (a <= b) {
            da = 1;
        } else {
            db = 1;
        }
        break;
    case B_MAX:
        v = fmax(a, b);
        if (isnan(a) && isnan(b)) {
            da = db = NAN;
        } else if (isnan(a)) {
            db = 1;
        } else if (isnan(b)) {
            da = 1;
        } else if (a >= b) {
            da = 1;
        } else {
            db = 1;
        }
        break;
    case B_HYPOT:
        v = hypot(a, b);
        if (v == 0) {
            da = db = 0;
        } else {
            da = a / v;
            db = b / v;
        }
        break;
    }
    *y = v;
    *pa = da;
    *pb = db;
    *dpa = disagree(da, alta);
    *dpb = disagree(db, altb);
}
