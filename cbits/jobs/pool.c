/*
 * pool.c - the worker pool (jobs.h): threads that run queued tasks, and the
 * waiting that runs them meanwhile.  It knows nothing of what a task does.
 */
#include "jobs/jobs.h"

#include <sched.h>
#include <time.h>

#define SPIN_NS 150000L /* how long an idle thread spins before sleeping */

bool dr__pool_init(dr_pool *P, dr_tape *root)
{
    memset(P, 0, sizeof *P);
    if (pthread_cond_init(&P->cond, NULL) != 0)
        return false;
    P->root = root;
    P->lock = dr__lock_mutex(root);
    return true;
}

void dr__pool_destroy(dr_pool *P)
{
    dr__pool_stop(P);
    pthread_cond_destroy(&P->cond);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* one step of an idle thread's spin: pause first, then give the core away
   (on a busy machine the thread we wait for may need it), and after
   SPIN_NS in all, false: block on the condition variable */
static bool spin_step(unsigned spin, long *t0)
{
    if (spin < 256) {
        cpu_relax();
        return true;
    }
    long t = now_ns();
    if (*t0 == 0)
        *t0 = t;
    else if (t - *t0 > SPIN_NS)
        return false;
    sched_yield();
    return true;
}

/* under the lock: the next queued task, preferring (among the first few)
   one whose home is this thread, whose data are still in this core's
   caches */
static dr_task *pop_task(dr_pool *P)
{
    dr_task **link = &P->queue, *k = P->queue;
    if (!k)
        return NULL;
    if (k->home != DR_HOME_NONE) {
        unsigned me = dr__slot(P->root);
        dr_task **l = &P->queue;
        for (int look = 0; *l && look < 8; look++, l = &(*l)->qnext)
            if ((*l)->home == me) {
                link = l;
                k = *l;
                break;
            }
    }
    *link = k->qnext;
    __atomic_store_n(&P->qlen, P->qlen - 1, __ATOMIC_RELEASE);
    return k;
}

/* run a queued task (without the lock), then count it done */
static void run_task(dr_pool *P, dr_task *k)
{
    size_t *pending = k->pending;
    k->run(k, P);
    pthread_mutex_lock(P->lock);
    if (__atomic_sub_fetch(pending, 1, __ATOMIC_ACQ_REL) == 0 &&
        P->sleepers)
        pthread_cond_broadcast(&P->cond);
    pthread_mutex_unlock(P->lock);
}

/* wait until *pending is 0, running queued tasks meanwhile, and poll
   (when given) between them and while spinning */
static void wait_group(dr_pool *P, size_t *pending, void (*poll)(void *),
                       void *pctx)
{
    long t0 = 0;
    for (unsigned spin = 0;; spin++) {
        if (__atomic_load_n(pending, __ATOMIC_ACQUIRE) == 0)
            return;
        if (poll)
            poll(pctx);
        if (__atomic_load_n(&P->qlen, __ATOMIC_ACQUIRE) != 0) {
            pthread_mutex_lock(P->lock);
            dr_task *k = pop_task(P);
            pthread_mutex_unlock(P->lock);
            if (k) {
                run_task(P, k);
                t0 = 0;
                spin = 0;
                continue;
            }
        }
        if (!spin_step(spin, &t0))
            break;
    }
    pthread_mutex_lock(P->lock);
    while (__atomic_load_n(pending, __ATOMIC_ACQUIRE) != 0) {
        dr_task *k = pop_task(P);
        if (k) {
            pthread_mutex_unlock(P->lock);
            run_task(P, k);
            pthread_mutex_lock(P->lock);
            continue;
        }
        P->sleepers++;
        pthread_cond_wait(&P->cond, P->lock);
        P->sleepers--;
    }
    pthread_mutex_unlock(P->lock);
}

static void *worker_main(void *arg)
{
    dr_pool *P = arg;
    (void)dr__slot(P->root);
    for (;;) {
        long t0 = 0;
        for (unsigned spin = 0;; spin++) {
            if (__atomic_load_n(&P->qlen, __ATOMIC_ACQUIRE) != 0 ||
                __atomic_load_n(&P->shutdown, __ATOMIC_ACQUIRE))
                break;
            if (!spin_step(spin, &t0))
                break;
        }
        pthread_mutex_lock(P->lock);
        for (;;) {
            dr_task *k = pop_task(P);
            if (k) {
                pthread_mutex_unlock(P->lock);
                run_task(P, k);
                break;
            }
            if (__atomic_load_n(&P->shutdown, __ATOMIC_ACQUIRE)) {
                pthread_mutex_unlock(P->lock);
                return NULL;
            }
            P->sleepers++;
            pthread_cond_wait(&P->cond, P->lock);
            P->sleepers--;
        }
    }
}

bool dr__pool_ensure(dr_pool *P)
{
    unsigned want = P->root->threads;
    if (want <= 1)
        return false;
    if (__atomic_load_n(&P->tried, __ATOMIC_ACQUIRE))
        return P->nworkers > 0;
    pthread_mutex_lock(P->lock);
    if (!P->tried) {
        unsigned n = want - 1;
        P->workers = dr__malloc(n * sizeof(pthread_t));
        /* slots for the workers, and as many other recording threads;
           without them the pool works, only without chunk affinity */
        (void)dr__slots_open(P->root, 2 * n + 2);
        if (P->workers) {
            for (unsigned i = 0; i < n; i++) {
                if (pthread_create(&P->workers[P->nworkers], NULL, worker_main,
                                   P) != 0)
                    break; /* fewer workers; none means sequential */
                P->nworkers++;
            }
            dr__bytes_add(P->root, (ptrdiff_t)(n * sizeof(pthread_t)));
        }
        __atomic_store_n(&P->tried, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(P->lock);
    return P->nworkers > 0;
}

void dr__pool_stop(dr_pool *P)
{
    if (!P->tried)
        return;
    pthread_mutex_lock(P->lock);
    __atomic_store_n(&P->shutdown, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&P->cond);
    pthread_mutex_unlock(P->lock);
    for (unsigned i = 0; i < P->nworkers; i++)
        pthread_join(P->workers[i], NULL);
    if (P->workers) {
        dr__bytes_add(P->root,
                      -(ptrdiff_t)((P->root->threads - 1) * sizeof(pthread_t)));
        dr__free(P->workers);
    }
    P->workers = NULL;
    P->nworkers = 0;
    dr__slots_close(P->root);
    P->shutdown = 0;
    P->tried = false;
}

void dr__pool_run(dr_pool *P, dr_task *head, size_t m, size_t *pending,
                  dr_task *local, void (*poll)(void *), void *pctx)
{
    pthread_mutex_lock(P->lock);
    if (m) {
        dr_task *last = head;
        while (last->qnext)
            last = last->qnext;
        last->qnext = P->queue;
        P->queue = head;
        __atomic_store_n(&P->qlen, P->qlen + m, __ATOMIC_RELEASE);
    }
    __atomic_store_n(pending, m, __ATOMIC_RELEASE);
    if (P->sleepers)
        pthread_cond_broadcast(&P->cond);
    pthread_mutex_unlock(P->lock);
    if (local)
        local->run(local, P);
    wait_group(P, pending, poll, pctx);
}
