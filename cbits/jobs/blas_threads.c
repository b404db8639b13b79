/*
 * blas_threads.c - one thread budget for the fork-join pool and OpenBLAS.
 *
 * OpenBLAS runs a large product on its own thread pool.  Called from
 * several jobs at once, each call would ask that pool for every core while
 * the jobs already use them: the cores are oversubscribed, and OpenBLAS
 * queues concurrent callers behind one another, so a batch split over jobs
 * ran slower than unsplit.  So while parallel jobs may run (an open
 * dr_fork, dr_fork_run on the worker pool, a parallel sweep), BLAS runs
 * single-threaded in each job: the jobs are the parallelism.  Outside,
 * OpenBLAS keeps its own thread count.
 *
 * OpenBLAS's thread count is one process-wide setting (0.3.21 has no
 * per-thread one), so the holds of all tapes are counted: the first saves
 * the count and sets 1, the last restores it.  The OpenBLAS functions are
 * weak references: linked against another CBLAS, this does nothing.
 */
#include "jobs/jobs.h"

#include <pthread.h>

extern int openblas_get_num_threads(void) __attribute__((weak));
extern void openblas_set_num_threads(int n) __attribute__((weak));

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned holds; /* open holds, all tapes together */
static int saved;      /* OpenBLAS's count before the first hold */

void dr__blas_solo_hold(void)
{
    if (!openblas_get_num_threads || !openblas_set_num_threads)
        return;
    pthread_mutex_lock(&budget_lock);
    if (holds++ == 0) {
        saved = openblas_get_num_threads();
        if (saved > 1)
            openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&budget_lock);
}

void dr__blas_solo_release(void)
{
    if (!openblas_get_num_threads || !openblas_set_num_threads)
        return;
    pthread_mutex_lock(&budget_lock);
    if (holds > 0 && --holds == 0 && saved > 1)
        openblas_set_num_threads(saved);
    pthread_mutex_unlock(&budget_lock);
}
