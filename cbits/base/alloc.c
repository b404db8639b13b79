/* alloc.c - the allocator hooks every allocation of the library goes through. */
#include "base/base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *default_malloc(size_t n, void *user)
{
    (void)user;
    return malloc(n);
}

static void default_free(void *p, void *user)
{
    (void)user;
    free(p);
}

static dr_malloc_fn g_malloc = default_malloc;
static dr_free_fn g_free = default_free;
static void *g_user;

dr_status dr_set_allocator(dr_malloc_fn malloc_fn, dr_free_fn free_fn,
                           void *user)
{
    if (!malloc_fn && !free_fn) {
        g_malloc = default_malloc;
        g_free = default_free;
        g_user = NULL;
        return DR_OK;
    }
    if (!malloc_fn || !free_fn)
        return DR_EINVAL;
    g_malloc = malloc_fn;
    g_free = free_fn;
    g_user = user;
    return DR_OK;
}

void *dr__malloc(size_t n)
{
    return n ? g_malloc(n, g_user) : NULL;
}

void dr__free(void *p)
{
    if (p)
        g_free(p, g_user);
}

void *dr__realloc(void *p, size_t keep, size_t n)
{
    if (!p)
        return dr__malloc(n);
    /* glibc's realloc moves a large block's pages (mremap): nothing
       copied, no page touched again, where a new block and a copy cost a
       fault on every page twice (a tape at order 2 of 10^7 nodes spent a
       quarter of its recording there) */
    if (g_malloc == default_malloc && g_free == default_free)
        return realloc(p, n);
    void *q = dr__malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, keep);
    dr__free(p);
    return q;
}

void *dr__malloc_aligned(size_t n, void **raw)
{
    if (n > SIZE_MAX - DR_ALIGN_SLACK) {
        *raw = NULL;
        return NULL;
    }
    void *p = dr__malloc(n + DR_ALIGN_SLACK);
    *raw = p;
    if (!p)
        return NULL;
    uintptr_t u = ((uintptr_t)p + 63) & ~(uintptr_t)63;
    return (void *)u;
}
