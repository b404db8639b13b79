/*
 * fuzz_ref.h - the fuzz target's independent reference (tests/fuzz/README.md):
 * forward-mode dual numbers over up to NT input directions with their
 * comparison bounds (fuzz_ref.c), hyper-dual numbers carrying second
 * derivatives over up to HN directions (fuzz_second_order.c), the
 * derivative rules written from calculus, and how a disagreement is
 * reported.  Nothing here calls the library except dr_strerror.
 */
#ifndef FUZZ_REF_H
#define FUZZ_REF_H

#include "dualrev.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- limits */

#define NT 32        /* tangent directions (inputs the reference follows)  */
#define NS 32        /* scalar slots                                        */
#define NA 10        /* array slots                                         */
#define MAXE 16      /* elements of an array the harness makes              */
#define MAXJOBS 64   /* jobs per tape between clears (visibility masks)     */
#define MAXLEV 3     /* the root and two nested fork levels                 */
#define MAXOPS 600   /* decoded operations per input                        */
#define MAXIDS 8192  /* ids remembered for the collision check             */
#define NSTALE 16    /* ids from before a clear, kept for misuse            */

/* a partial or growth factor beyond these makes a direction "wild": the
   engine's reverse order and the forward reference may overflow or
   underflow differently there, so it is not compared */
#define PBIG 1e100
#define GROW_MAX 1e100
#define SHRINK_MIN 1e-150

/* --------------------------------------------------- known defects
 * Defects of cbits/ that a check below finds, reported and not fixed yet.
 * Each FUZZ_KNOWN_* macro keeps the harness off the case (only that one),
 * so that the target can go on finding others; build with
 * FUZZ_CFLAGS=-DFUZZ_KNOWN_NONE to run every case.  Delete a guard with
 * its #ifdef when its defect is fixed.
 */
#ifndef FUZZ_KNOWN_NONE
/* (none open) */
#endif

typedef uint64_t dmask;

/* A value of the reference: its value and, per direction d, the tangent
   t[d], a bound a[d] on the sum of |path products| (the scale of rounding
   differences), an error e[d] from partials that two formulas give
   differently, and the largest / smallest product of partials along any
   path (g[d] / l[d]).  Bit d of s: some path (even with zero partials) leads
   from direction d here; bit d of w: direction d is not comparable.  Bit d
   of z: not comparable in a tangent recorded as operations
   (dr_tangent_record), where a partial that is 0 multiplies an infinite
   tangent as IEEE does (0 * inf = NaN) instead of being skipped as the
   sweeps skip it: z holds w and what reaches here through zero partials. */
typedef struct dual {
    double v;
    dmask s, w, z;
    double t[NT], a[NT], e[NT], g[NT], l[NT];
} dual;

typedef struct term {
    const dual *x;
    double p;  /* partial                                 */
    double dp; /* its uncertainty (0: well conditioned)   */
} term;

/* ---------------------------------------------------------- findings */

extern const uint8_t *g_input;
extern size_t g_input_len;
/* FUZZ_TRACE=1 in the environment prints the program as it runs */
extern int g_trace;
#define TRACE(...)                                                         \
    do {                                                                   \
        if (g_trace > 0)                                                   \
            fprintf(stderr, __VA_ARGS__);                                  \
    } while (0)

/* a disagreement: print it and the input, and abort */
void finding(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            finding(__VA_ARGS__);                                          \
    } while (0)

static inline const char *sn(dr_status s) { return dr_strerror(s); }

/* -------------------------------------------------------------- duals */

void dual_const(dual *o, double v);
void dual_input(dual *o, double v, int dim);
/* a value whose derivative the reference cannot know: every direction is
   wild */
void dual_unknown(dual *o, double v);
/* out = value v with tangent sum_i p_i x_i (the chain rule); out may not
   alias any x */
void lin(dual *o, double v, int n, const term *tm);
void lin1(dual *o, double v, const dual *x, double p, double dp);
void lin2(dual *o, double v, const dual *x, double p, double dpx,
          const dual *y, double q, double dpy);
/* engine result g against the reference for direction d of r */
void cmp_deriv(const char *what, double g, const dual *r, int d, int k);
/* engine result g against sum_d w[d] r.t[d] (a tangent in the seeded
   directions w, or a reverse sweep seeded with weights w on several
   outputs): every direction with w[d] != 0 must be comparable, and a
   result none of them reaches must be exactly 0 */
void cmp_comb(const char *what, double g, const dual *r, const double *w,
              int k);
/* the same for a tangent recorded as operations (the mask z, not w) */
void cmp_comb_rec(const char *what, double g, const dual *r, const double *w,
                  int k);
void cmp_value(const char *what, double eng, double ref, double scale,
               bool args_nan);

/* ------------------------------------------------------ reference math */

enum {
    U_NEG, U_SQRT, U_CBRT, U_EXP, U_EXPM1, U_LOG, U_LOG1P, U_SIN, U_COS,
    U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH, U_TANH, U_ABS, U_ERF,
    U_SIGMOID, U_RELU, U_SQUARE, N_UNARY
};
enum {
    B_ADD, B_SUB, B_MUL, B_DIV, B_ATAN2, B_POW, B_MIN, B_MAX, B_HYPOT,
    N_BINARY
};
extern const char *const unary_name[N_UNARY];
extern const char *const binary_name[N_BINARY];

double sigmoid_val(double x);
/* |p - q| where both are finite, else 0 */
double disagree(double p, double q);
/* value and derivative of a one-argument function at x */
void ref_unary(int f, double x, double *y, double *p, double *dp);
/* value and both partials of a two-argument function */
void ref_binary(int f, double a, double b, double *y, double *pa,
                double *dpa, double *pb, double *dpb);
/* where a tangent recorded as operations computes a partial by its formula
   and gets NaN where the header's convention says 0 (pow's b a^(b-1) at
   a = b = 0 with b active): a's directions into o->z */
void ref_binary_rec(int f, dr_real a, dr_real b, const dual *da, dual *o);

#endif /* FUZZ_REF_H */
