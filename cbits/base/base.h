/*
 * base.h - the bottom layer (cbits/README.md): what every other layer
 * needs and nothing of the tape.  Not installed.
 */
#ifndef DR_BASE_H
#define DR_BASE_H

#include "dualrev.h"

#include <stdbool.h>
#include <string.h>

#define DR_LIKELY(x) __builtin_expect(!!(x), 1)
#define DR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define DR_HIDDEN __attribute__((visibility("hidden")))

/* allocation (alloc.c): every allocation of the library goes through the
   user's allocator (dr_set_allocator) */
DR_HIDDEN void *dr__malloc(size_t n);
DR_HIDDEN void dr__free(void *p);
/* p, of which the first keep bytes are in use, as a block of n >= keep
   bytes (p NULL: a new one); NULL on failure, p then as it was */
DR_HIDDEN void *dr__realloc(void *p, size_t keep, size_t n);
/* n bytes aligned to 64, raw pointer to free returned in *raw */
DR_HIDDEN void *dr__malloc_aligned(size_t n, void **raw);
/* what dr__malloc_aligned allocates beyond n (the alignment's slack) */
#define DR_ALIGN_SLACK 64

/* two doubles, loaded and stored unaligned (SSE2's moves, which every
   x86-64 has; the build sets no -march): the vector loops of copy.c and
   sum.c */
typedef double dr__d2 __attribute__((vector_size(16), aligned(8)));

/* n doubles from src to dst (not overlapping), as memcpy would, but at a
   vector loop's speed where libc's memcpy is slow (copy.c) */
DR_HIDDEN void dr__copy_doubles(double *restrict dst,
                                const double *restrict src, size_t n);
/* x[0] + ... + x[n-1], in eight partial sums (sum.c): the same bits at
   every call, not those of the sum in order */
DR_HIDDEN double dr__sum_doubles(const double *x, size_t n);

#endif /* DR_BASE_H */
