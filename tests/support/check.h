/*
 * check.h - helpers shared by every C test of dualrev (cmocka).
 *
 *   #include "check.h"       (the Makefile adds -Itests/support)
 *
 * - Finite differences: chk_fd1 / chk_fd2 / chk_fd_partial estimate a
 *   derivative by central differences with Richardson extrapolation and also
 *   return an error estimate, so a test can be tight where differencing is
 *   accurate and honest where it is not.
 * - Closeness assertions that print both values, their difference and the
 *   tolerance on failure: CHK_CLOSE, CHK_REL, CHK_ABS, CHK_SAME (bit-identical,
 *   NaN equal to NaN), CHK_DERIV (an exact derivative against a chk_deriv).
 * - A seeded deterministic random generator (splitmix64).
 * - A counting, fault-injecting allocator for dr_set_allocator: counts calls,
 *   live allocations and bytes (leaks), and fails the k-th allocation (or every
 *   allocation from the k-th on).
 *
 * Everything is plain C11; nothing here depends on the engine's internals.
 */
#ifndef DR_TEST_CHECK_H
#define DR_TEST_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dualrev.h"

/* ----------------------------------------------------- finite differences */

/** A derivative estimate and an estimate of its absolute error. */
typedef struct chk_deriv {
    double d;   /**< the estimate                                        */
    double err; /**< truncation + round-off error estimate (>= 0)        */
} chk_deriv;

typedef double (*chk_fn1)(double x, void *ctx);
typedef double (*chk_fn2)(double a, double b, void *ctx);
/** f(x[0..n-1]); the helpers never keep x after the call. */
typedef double (*chk_fnn)(const double *x, size_t n, void *ctx);

/**
 * The default step at x: the power of two in (2^-11 |x|, 2^-10 |x|] (x = 0:
 * 2^-11), so x +- h, x +- h/2, x +- h/4 are exact.  A step relative to |x|
 * never crosses 0, so a kink or pole at 0 is safe; pass an explicit h near
 * other domain edges.  Where f varies on a scale much larger than |x| (cos
 * near 0) the round-off part of the error estimate grows accordingly.
 */
double chk_fd_step(double x);

/**
 * df/dx at x by central differences at h, h/2, h/4 and two Richardson steps
 * (truncation error O(h^6)).  h <= 0 picks chk_fd_step(x); an explicit h
 * is rounded down to a power of two.  The points used are x +- h at most:
 * keep h below the distance to a domain edge.
 */
chk_deriv chk_fd1(chk_fn1 f, void *ctx, double x, double h);

/** Both partials of f(a, b); ha, hb as h of chk_fd1. */
void chk_fd2(chk_fn2 f, void *ctx, double a, double b, double ha, double hb,
             chk_deriv *da, chk_deriv *db);

/** d f / d x[i] at x (x is not modified); h as for chk_fd1. */
chk_deriv chk_fd_partial(chk_fnn f, void *ctx, size_t n, const double *x,
                         size_t i, double h);

/* ------------------------------------------------------------ assertions
 * All of these fail the running cmocka test with a message that names the
 * expression and prints the values with 17 significant digits.
 */

/**
 * |actual - expected| <= atol + rtol * |expected|.  NaN matches only NaN;
 * an infinity matches only the same infinity.
 */
#define CHK_CLOSE(actual, expected, rtol, atol)                              \
    chk_close_(__FILE__, __LINE__, #actual, (actual), (expected), (rtol),     \
               (atol))
#define CHK_REL(actual, expected, rtol) CHK_CLOSE(actual, expected, rtol, 0.0)
#define CHK_ABS(actual, expected, atol) CHK_CLOSE(actual, expected, 0.0, atol)
/** Bit-identical doubles (so +0 differs from -0); any NaN matches any NaN. */
#define CHK_SAME(actual, expected)                                           \
    chk_same_(__FILE__, __LINE__, #actual, (actual), (expected))
/**
 * An exact derivative against a finite-difference estimate:
 * |ad - fd.d| <= rtol * |fd.d| + 4 * fd.err.  Fails too if fd is not finite
 * (a test must not difference across a singularity).
 */
#define CHK_DERIV(ad, fd, rtol)                                              \
    chk_deriv_(__FILE__, __LINE__, #ad, (ad), (fd), (rtol))
/** A dr_status equals the expected one (prints both with dr_strerror). */
#define CHK_STATUS(actual, expected)                                         \
    chk_status_(__FILE__, __LINE__, #actual, (actual), (expected))

/**
 * The gradient of ya on tape ta with respect to xa[0..n-1] is, bit for bit,
 * that of yb on tb with respect to xb[0..n-1] (a replay against a fresh
 * recording, one way of recording against another); both dr_gradient
 * calls must answer DR_OK.
 */
#define CHK_SAME_GRADIENT(ta, ya, xa, tb, yb, xb, n)                         \
    chk_same_gradient_(__FILE__, __LINE__, (ta), (ya), (xa), (tb), (yb),      \
                       (xb), (n))

void chk_same_gradient_(const char *file, int line, dr_tape *ta, dr_real ya,
                        const dr_real *xa, dr_tape *tb, dr_real yb,
                        const dr_real *xb, size_t n);
void chk_close_(const char *file, int line, const char *what, double actual,
                double expected, double rtol, double atol);
void chk_same_(const char *file, int line, const char *what, double actual,
               double expected);
void chk_deriv_(const char *file, int line, const char *what, double ad,
                chk_deriv fd, double rtol);
void chk_status_(const char *file, int line, const char *what,
                 dr_status actual, dr_status expected);

/**
 * Describe what the test is checking now (printf format); every failure
 * message of the CHK_ macros repeats it.  chk_context(NULL) clears it.
 */
void chk_context(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/** true if the two doubles have identical bits (or are both NaN). */
bool chk_same_bits(double a, double b);

/* ------------------------------------------------------------------- rng */

/** splitmix64: deterministic for a given seed, on every platform. */
typedef struct chk_rng {
    uint64_t state;
} chk_rng;

void chk_rng_seed(chk_rng *r, uint64_t seed);
uint64_t chk_rng_u64(chk_rng *r);
/** Uniform in [0, 1), 53 random bits. */
double chk_rng_unit(chk_rng *r);
/** Uniform in [lo, hi). */
double chk_rng_uniform(chk_rng *r, double lo, double hi);
/** Uniform integer in [0, n) (n > 0). */
uint64_t chk_rng_below(chk_rng *r, uint64_t n);

/* ------------------------------------------------------------- allocator */

/**
 * State of the counting allocator.  Install it with chk_alloc_install (which
 * calls dr_set_allocator, so only while no tape exists) and remove it with
 * chk_alloc_uninstall after the last tape is freed.
 */
typedef struct chk_alloc {
    /* counters (reset by chk_alloc_install / chk_alloc_reset_counts) */
    size_t calls;      /**< malloc calls, failed ones included            */
    size_t fails;      /**< calls that were made to fail                  */
    size_t frees;      /**< free calls with a non-NULL pointer            */
    size_t bad_frees;  /**< frees of pointers this allocator did not give */
    size_t live;       /**< allocations not freed yet                     */
    size_t live_bytes; /**< their bytes                                   */
    size_t peak_bytes; /**< maximum of live_bytes                         */
    size_t max_size;   /**< largest single request                        */
    /* fault injection */
    size_t fail_at;    /**< fail call number fail_at (1-based); 0: never  */
    bool fail_rest;    /**< also fail every call after fail_at            */
} chk_alloc;

/** Zero *a and make it the library's allocator.  Asserts success. */
void chk_alloc_install(chk_alloc *a);
/** Restore malloc/free.  Asserts success. */
void chk_alloc_uninstall(void);
/**
 * A cmocka teardown fixture: restores malloc/free if a chk_alloc is still
 * installed (a test that failed half-way leaves it installed, pointing at a
 * dead stack frame).  Tapes such a test leaked are never freed, so no block
 * reaches the wrong allocator.  Use cmocka_unit_test_teardown(f,
 * chk_alloc_teardown) for every test that installs the counting allocator.
 */
int chk_alloc_teardown(void **state);
/** Zero the counters of calls/fails/frees (live counts are kept). */
void chk_alloc_reset_counts(chk_alloc *a);
/**
 * Fail the k-th malloc call counted from now (k = 1: the next one), and every
 * later one too if rest.  k = 0 turns injection off.
 */
void chk_alloc_fail_in(chk_alloc *a, size_t k, bool rest);

/** A new tape; fails the test if dr_tape_new returns NULL. */
dr_tape *chk_tape_new(void);
/**
 * For a loop over every allocation of a program (k = 1, 2, ...): install a,
 * make a tape, and fail the k-th allocation after it (k = 1: the next one).
 * NULL, with a uninstalled, if the tape itself could not be made.
 */
dr_tape *chk_oom_tape(chk_alloc *a, size_t k);

#endif /* DR_TEST_CHECK_H */
