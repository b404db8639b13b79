/*
 * hs_tapes.c - the cleared tapes the Haskell front end reuses
 * (Numeric.DualRev.Internal.Run.Driver.Runners, withPooledTape), so that a
 * gradient in a loop allocates no C memory after the first.
 *
 * Each OS thread keeps the tape it gave back last; a take on the same
 * thread gets it back with no atomic operation at all.  Haskell threads
 * share OS threads, but each of these functions is one unsafe foreign call,
 * which no other Haskell thread can interrupt, so thread-local storage is
 * enough.  A take that finds its thread's slot empty (the first gradient
 * on a thread, a gradient inside another one) goes to a small shared pool
 * under a lock (and a give that finds it full goes there too).  A thread's
 * tape is freed when the thread exits.
 */
#include <dualrev.h>

#include <pthread.h>
#include <stddef.h>

enum { POOL_MAX = 8 };

static _Thread_local dr_tape *hot;
static _Thread_local int registered; /* the exit handler knows of hot */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static dr_tape *pool[POOL_MAX];
static size_t pooled;

static pthread_key_t exit_key;
static int exit_key_ok;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* At a thread's exit (its thread-local slot is still there, and the key's
 * value points to it): the tape in the slot goes. */
static void free_at_exit(void *slot)
{
    dr_tape **s = slot;
    if (*s)
        dr_tape_free(*s);
    *s = NULL;
}

static void make_exit_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, free_at_exit) == 0;
}

/* Whether this thread's slot may hold a tape: its exit will free it. */
static int slot_usable(void)
{
    if (!registered) {
        pthread_once(&exit_once, make_exit_key);
        registered = exit_key_ok && pthread_setspecific(exit_key, &hot) == 0;
    }
    return registered;
}

static dr_tape *from_pool(void)
{
    dr_tape *t = NULL;
    pthread_mutex_lock(&pool_lock);
    if (pooled > 0)
        t = pool[--pooled];
    pthread_mutex_unlock(&pool_lock);
    return t ? t : dr_tape_new();
}

/*
 * A cleared tape set up for `threads` threads (dr_set_threads); NULL when
 * out of memory.
 */
DR_API dr_tape *drhs_tape_take(unsigned threads)
{
    dr_tape *t = hot;
    if (t)
        hot = NULL;
    else if (!(t = from_pool()))
        return NULL;
    if (dr_get_threads(t) != threads)
        (void)dr_set_threads(t, threads); /* on failure: stays sequential */
    return t;
}

/* Clear a tape of drhs_tape_take and keep it for the next take. */
DR_API void drhs_tape_give(dr_tape *t)
{
    (void)dr_tape_clear(t);
    if (!hot && slot_usable()) {
        hot = t;
        return;
    }
    int kept = 0;
    pthread_mutex_lock(&pool_lock);
    if (pooled < POOL_MAX) {
        pool[pooled++] = t;
        kept = 1;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!kept)
        dr_tape_free(t);
}
