/* check.c - see check.h. */
#include "check.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- finite differences */

double chk_fd_step(double x)
{
    double ax = fabs(x);
    if (ax == 0.0 || isnan(ax))
        ax = 1.0;
    if (ax < 0x1p-1000) /* keep h / 4 a normal number */
        ax = 0x1p-1000;
    if (ax > 0x1p1000)
        ax = 0x1p1000;
    int e;
    frexp(ax, &e); /* ax = m * 2^e, m in [0.5, 1) */
    return ldexp(1.0, e - 11);
}

/* Central difference over the points actually representable. */
static double central(chk_fn1 f, void *ctx, double x, double h, double *fmax)
{
    volatile double xp = x + h, xm = x - h;
    double fp = f(xp, ctx), fm = f(xm, ctx);
    if (fabs(fp) > *fmax)
        *fmax = fabs(fp);
    if (fabs(fm) > *fmax)
        *fmax = fabs(fm);
    return (fp - fm) / (xp - xm);
}

chk_deriv chk_fd1(chk_fn1 f, void *ctx, double x, double h)
{
    if (!(h > 0.0)) {
        h = chk_fd_step(x);
    } else {
        int e; /* round down to a power of two: x +- h/4 stay exact */
        frexp(h, &e);
        h = ldexp(1.0, e - 1);
    }
    double fmax = fabs(f(x, ctx));
    double d1 = central(f, ctx, x, h, &fmax);
    double d2 = central(f, ctx, x, h / 2, &fmax);
    double d3 = central(f, ctx, x, h / 4, &fmax);
    /* (4 d2 - d1) / 3 and (16 r2 - r1) / 15, written not to overflow */
    double r1 = d2 + (d2 - d1) / 3.0;
    double r2 = d3 + (d3 - d2) / 3.0;
    double r = r2 + (r2 - r1) / 15.0;
    chk_deriv out;
    out.d = r;
    /* truncation: distance to the previous level; round-off: a few ulps of
       the largest sample, over the smallest step, amplified by Richardson */
    out.err = fabs(r - r2) + 8.0 * DBL_EPSILON * fmax / (h / 4);
    if (!isfinite(out.err))
        out.err = INFINITY;
    return out;
}

typedef struct fd2_ctx {
    chk_fn2 f;
    void *ctx;
    double other;
} fd2_ctx;

static double fd2_first(double a, void *c)
{
    fd2_ctx *k = c;
    return k->f(a, k->other, k->ctx);
}

static double fd2_second(double b, void *c)
{
    fd2_ctx *k = c;
    return k->f(k->other, b, k->ctx);
}

void chk_fd2(chk_fn2 f, void *ctx, double a, double b, double ha, double hb,
             chk_deriv *da, chk_deriv *db)
{
    fd2_ctx k = {f, ctx, b};
    if (da)
        *da = chk_fd1(fd2_first, &k, a, ha);
    k.other = a;
    if (db)
        *db = chk_fd1(fd2_second, &k, b, hb);
}

typedef struct fdn_ctx {
    chk_fnn f;
    void *ctx;
    double *x;
    size_t n, i;
} fdn_ctx;

static double fdn_at(double xi, void *c)
{
    fdn_ctx *k = c;
    k->x[k->i] = xi;
    return k->f(k->x, k->n, k->ctx);
}

chk_deriv chk_fd_partial(chk_fnn f, void *ctx, size_t n, const double *x,
                         size_t i, double h)
{
    double *w = malloc((n ? n : 1) * sizeof *w);
    assert_non_null(w);
    memcpy(w, x, n * sizeof *w);
    fdn_ctx k = {f, ctx, w, n, i};
    chk_deriv d = chk_fd1(fdn_at, &k, x[i], h);
    free(w);
    return d;
}

/* ------------------------------------------------------------ assertions */

static char g_context[256];

void chk_context(const char *fmt, ...)
{
    g_context[0] = 0;
    if (!fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_context, sizeof g_context, fmt, ap);
    va_end(ap);
}

static void print_context(void)
{
    if (g_context[0])
        print_error("    while checking: %s\n", g_context);
}

bool chk_same_bits(double a, double b)
{
    if (isnan(a) && isnan(b))
        return true;
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool close_enough(double a, double e, double rtol, double atol)
{
    if (isnan(a) || isnan(e))
        return isnan(a) && isnan(e);
    if (isinf(a) || isinf(e))
        return a == e;
    return fabs(a - e) <= atol + rtol * fabs(e);
}

void chk_close_(const char *file, int line, const char *what, double actual,
                double expected, double rtol, double atol)
{
    if (close_enough(actual, expected, rtol, atol))
        return;
    double diff = actual - expected;
    print_error("%s:%d: %s is not close to the expected value\n"
                "    actual   %.17g (%a)\n"
                "    expected %.17g (%a)\n"
                "    diff     %.6g, relative %.6g; allowed rtol %.3g atol %.3g\n",
                file, line, what, actual, actual, expected, expected, diff,
                expected != 0.0 ? fabs(diff / expected) : INFINITY, rtol,
                atol);
    print_context();
    _fail(file, line);
}

void chk_same_(const char *file, int line, const char *what, double actual,
               double expected)
{
    if (chk_same_bits(actual, expected))
        return;
    print_error("%s:%d: %s is not bit-identical to the expected value\n"
                "    actual   %.17g (%a)\n"
                "    expected %.17g (%a)\n",
                file, line, what, actual, actual, expected, expected);
    print_context();
    _fail(file, line);
}

void chk_deriv_(const char *file, int line, const char *what, double ad,
                chk_deriv fd, double rtol)
{
    if (!isfinite(fd.d) || !isfinite(fd.err)) {
        print_error("%s:%d: finite difference for %s is not finite "
                    "(%.17g, error %.3g): bad test point or step\n",
                    file, line, what, fd.d, fd.err);
        print_context();
    _fail(file, line);
        return;
    }
    double tol = rtol * fabs(fd.d) + 4.0 * fd.err;
    if (isfinite(ad) && fabs(ad - fd.d) <= tol)
        return;
    print_error("%s:%d: derivative %s does not match finite differences\n"
                "    exact    %.17g\n"
                "    fd       %.17g (error estimate %.3g)\n"
                "    diff     %.6g; allowed %.6g (rtol %.3g)\n",
                file, line, what, ad, fd.d, fd.err, ad - fd.d, tol, rtol);
    print_context();
    _fail(file, line);
}

void chk_status_(const char *file, int line, const char *what,
                 dr_status actual, dr_status expected)
{
    if (actual == expected)
        return;
    print_error("%s:%d: %s\n    gave     %d (%s)\n    expected %d (%s)\n",
                file, line, what, (int)actual, dr_strerror(actual),
                (int)expected, dr_strerror(expected));
    print_context();
    _fail(file, line);
}

void chk_same_gradient_(const char *file, int line, dr_tape *ta, dr_real ya,
                        const dr_real *xa, dr_tape *tb, dr_real yb,
                        const dr_real *xb, size_t n)
{
    double *ga = malloc((n ? n : 1) * sizeof *ga),
           *gb = malloc((n ? n : 1) * sizeof *gb);
    if (!ga || !gb) {
        print_error("%s:%d: out of memory for two gradients\n", file, line);
        _fail(file, line);
    }
    chk_status_(file, line, "dr_gradient (first)",
                dr_gradient(ta, ya, n, xa, ga), DR_OK);
    chk_status_(file, line, "dr_gradient (second)",
                dr_gradient(tb, yb, n, xb, gb), DR_OK);
    for (size_t i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "gradient entry %zu", i);
        chk_same_(file, line, what, ga[i], gb[i]);
    }
    free(ga);
    free(gb);
}

/* ------------------------------------------------------------------- rng */

void chk_rng_seed(chk_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t chk_rng_u64(chk_rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

double chk_rng_unit(chk_rng *r)
{
    return (double)(chk_rng_u64(r) >> 11) * 0x1p-53;
}

double chk_rng_uniform(chk_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * chk_rng_unit(r);
}

uint64_t chk_rng_below(chk_rng *r, uint64_t n)
{
    /* rejection sampling: no modulo bias */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = chk_rng_u64(r);
    while (v >= lim);
    return v % n;
}

/* ------------------------------------------------------------- allocator */

/* Each block carries a header with its size and a magic word, so frees can be
   counted in bytes and foreign pointers recognised.  32 bytes keep the
   payload as aligned as malloc's. */
#define CHK_MAGIC UINT64_C(0xd0a1ec0ffee5eed5)
typedef union chk_hdr {
    struct {
        uint64_t magic;
        size_t size;
    } h;
    max_align_t align;
    unsigned char pad[32];
} chk_hdr;

static void *chk_malloc(size_t size, void *user)
{
    chk_alloc *a = user;
    a->calls++;
    if (size > a->max_size)
        a->max_size = size;
    if (a->fail_at && (a->calls == a->fail_at ||
                       (a->fail_rest && a->calls > a->fail_at))) {
        a->fails++;
        return NULL;
    }
    if (size > SIZE_MAX - sizeof(chk_hdr))
        return NULL;
    chk_hdr *p = malloc(sizeof(chk_hdr) + size);
    if (!p)
        return NULL;
    p->h.magic = CHK_MAGIC;
    p->h.size = size;
    /* new memory is not zero: a read of what the library never wrote
       finds this pattern, not the zeros fresh pages often hold */
    memset(p + 1, 0xA5, size);
    a->live++;
    a->live_bytes += size;
    if (a->live_bytes > a->peak_bytes)
        a->peak_bytes = a->live_bytes;
    return p + 1;
}

static void chk_free(void *ptr, void *user)
{
    chk_alloc *a = user;
    if (!ptr)
        return;
    chk_hdr *p = (chk_hdr *)ptr - 1;
    if (p->h.magic != CHK_MAGIC) {
        a->bad_frees++;
        return; /* not ours: leak it rather than corrupt the heap */
    }
    a->frees++;
    a->live--;
    a->live_bytes -= p->h.size;
    p->h.magic = 0;
    free(p);
}

static bool g_installed;

void chk_alloc_install(chk_alloc *a)
{
    memset(a, 0, sizeof *a);
    assert_int_equal(dr_set_allocator(chk_malloc, chk_free, a), DR_OK);
    g_installed = true;
}

void chk_alloc_uninstall(void)
{
    g_installed = false;
    assert_int_equal(dr_set_allocator(NULL, NULL, NULL), DR_OK);
}

int chk_alloc_teardown(void **state)
{
    (void)state;
    if (g_installed) {
        g_installed = false;
        return dr_set_allocator(NULL, NULL, NULL) == DR_OK ? 0 : -1;
    }
    return 0;
}

void chk_alloc_reset_counts(chk_alloc *a)
{
    a->calls = 0;
    a->fails = 0;
    a->frees = 0;
    a->max_size = 0;
    a->fail_at = 0;
    a->fail_rest = false;
}

void chk_alloc_fail_in(chk_alloc *a, size_t k, bool rest)
{
    a->fail_at = k ? a->calls + k : 0;
    a->fail_rest = rest;
}

dr_tape *chk_tape_new(void)
{
    dr_tape *t = dr_tape_new();
    if (!t) {
        print_error("dr_tape_new returned NULL\n");
        fail();
    }
    return t;
}

dr_tape *chk_oom_tape(chk_alloc *a, size_t k)
{
    chk_alloc_install(a);
    dr_tape *t = dr_tape_new();
    if (!t) {
        chk_alloc_uninstall();
        return NULL;
    }
    chk_alloc_fail_in(a, k, false);
    return t;
}
