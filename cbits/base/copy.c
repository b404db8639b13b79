/*
 * copy.c - the copy of an array of doubles that the engine's hot paths
 * make (a gradient read out, an array's values, a checkpoint's state).
 *
 * Not memcpy: glibc before 2.39 copies more than about 2 KB with `rep
 * movsb` on AMD Zen 3 and 4, which there runs at a fraction of a vector
 * loop's speed (glibc bug 30994).  A gradient of 2,000 inputs read out
 * that way took 40 % of fdotprod's whole gradient on an AMD EPYC
 * (docs/engine-performance.md, "Copies of doubles").  GCC would turn the
 * loop back into a call of memcpy, hence the attribute.
 */
#include "base/base.h"

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
void dr__copy_doubles(double *restrict dst, const double *restrict src,
                      size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const dr__d2 *s = (const dr__d2 *)(const void *)(src + i);
        dr__d2 *d = (dr__d2 *)(void *)(dst + i);
        dr__d2 a = s[0], b = s[1], c = s[2], e = s[3];
        d[0] = a;
        d[1] = b;
        d[2] = c;
        d[3] = e;
    }
    for (; i < n; i++)
        dst[i] = src[i];
}
