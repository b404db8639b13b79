/*
 * parallel.c - fork-join parallelism (thesis section 3.10): child recording
 * handles, the job graph, and the parallel reverse pass over it on a pool of
 * worker threads ("forks in the primal become joins in the dual").
 *
 * Forward pass.  dr_fork ends the current job of a handle: it saves the job
 * (its chunks and history) in a fork record, hands out one child handle per
 * child task, and refuses recording on the parent until dr_join.  A child
 * handle records on its own chunks, whose id ranges come from the tape's
 * shared atomic counter, so ids of different jobs never overlap and an id
 * stays valid (and names the same node) everywhere it may be used.
 * dr_join stores each child task's final job in the fork record and starts
 * a continuation job whose history is that record.
 *
 * Reverse pass.  dr_reverse sweeps the root's current job, then this file
 * walks the history backwards: for a fork record, the child tasks are
 * resolved (concurrently when a pool is running), then the forking job.
 * While siblings run, adds into ids below the fork's mark (ancestor jobs)
 * are atomic; ids at or above it belong to the running task alone.
 *
 * Worker pool.  Per tape, created on first use, reused by later sweeps and
 * dr_fork_run calls, stopped by dr_set_threads (to resize) and dr_tape_free.
 * Tasks go on one LIFO queue under a mutex.  A thread that waits for its
 * group of tasks runs queued tasks meanwhile (any group), so nested forks
 * never deadlock.  Idle threads spin briefly before sleeping on a condition
 * variable, so the hand-offs of a short parallel section cost microseconds.
 * If no worker thread can be created the work runs on the calling thread.
 */
#include "tape/tape.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define MODE_FORWARD 1 /* queued kids run dr_fork_run's function        */
#define MODE_REVERSE 2 /* queued kids resolve their task in a sweep     */

#define SPIN_NS 150000L    /* how long an idle thread spins before sleeping */
#define MAX_THREADS 1024u

typedef struct dr_par {
    pthread_mutex_t lock;
    pthread_cond_t cond;   /* work queued, a group finished, shutdown    */
    dr_tape *hall;         /* every child handle                         */
    dr_tape *hfree;        /* joined child handles for reuse             */

    pthread_t *workers;
    unsigned nworkers;
    bool pool_tried;       /* pool creation attempted (for `threads`)    */
    int shutdown;          /* atomic                                     */
    dr_kid *queue;         /* LIFO of runnable kids                      */
    size_t qlen;           /* atomic mirror of the queue's length        */
    unsigned sleepers;

    unsigned started;      /* slots handed out (atomic)                  */
    unsigned epoch;        /* pool generation: slots of older ones are void */
    unsigned nslots;       /* 1 + slots in sfree (0: none allocated)     */
    dr_chunk **sfree;      /* [slot * DR_CHUNK_CLASSES + class]: free
                              chunks last recorded by the thread of slot */

    double *adj;           /* the running sweep's adjoint array          */
    dr_tape *root;
    bool use_pool;         /* the running sweep uses the pool            */
} dr_par;

/* the size of the per-slot free lists of nslots slots */
static size_t slot_lists_bytes(unsigned nslots)
{
    return (size_t)nslots * DR_CHUNK_CLASSES * sizeof(dr_chunk *);
}

/* Which thread this is, for chunk affinity: a slot number 1.. handed out
   on a thread's first use of the tape's pool (the workers at their start;
   the threads that call dr_fork_run or record on child handles, such as
   the Haskell front end's capabilities, when they first take a chunk); 0
   when the pool has run out of slots.  One tape at a time per thread: a
   thread that alternates between tapes only loses the affinity. */
static __thread dr_par *tls_par;
static __thread unsigned tls_epoch, tls_slot;

static unsigned my_slot(dr_par *P)
{
    if (tls_par == P && tls_epoch == P->epoch)
        return tls_slot;
    if (!P->sfree)
        return 0;
    unsigned s = __atomic_add_fetch(&P->started, 1, __ATOMIC_RELAXED);
    tls_par = P;
    tls_epoch = P->epoch;
    tls_slot = s < P->nslots ? s : 0;
    return tls_slot;
}

unsigned dr__par_slot(dr_tape *R)
{
    return my_slot(R->parallel);
}

dr_chunk *dr__par_take_chunk(dr_tape *R, unsigned cls, unsigned slot,
                             size_t cap)
{
    dr_par *P = R->parallel;
    if (!P->sfree)
        return NULL;
    unsigned lo = slot ? slot : 1, hi = slot ? slot + 1 : P->nslots;
    for (unsigned s = lo; s < hi && s < P->nslots; s++) {
        dr_chunk *c = dr__pop_fit(&P->sfree[s * DR_CHUNK_CLASSES + cls], cap);
        if (c)
            return c;
    }
    return NULL;
}

void dr__par_recycle_begin(dr_tape *R)
{
    dr_par *P = R->parallel;
    if (P->sfree)
        memset(P->sfree, 0, slot_lists_bytes(P->nslots));
}

bool dr__par_keep_chunk(dr_tape *R, dr_chunk *c, unsigned cls)
{
    dr_par *P = R->parallel;
    if (!P->sfree || c->slot >= P->nslots)
        return false;
    dr_chunk **head = &P->sfree[c->slot * DR_CHUNK_CLASSES + cls];
    c->next = *head;
    *head = c;
    return true;
}

/* the spare chunks of the pool threads back to the root's lists (the pool
   stops; a new one numbers its threads afresh) */
static void drop_slots(dr_par *P)
{
    if (!P->sfree)
        return;
    dr_tape *R = P->root;
    for (unsigned s = 1; s < P->nslots; s++)
        for (unsigned k = 0; k < DR_CHUNK_CLASSES; k++)
            for (dr_chunk *c = P->sfree[s * DR_CHUNK_CLASSES + k]; c;) {
                dr_chunk *nx = c->next;
                c->slot = 0;
                c->next = R->free[k];
                R->free[k] = c;
                c = nx;
            }
    dr__bytes_add(R, -(ptrdiff_t)slot_lists_bytes(P->nslots));
    dr__free(P->sfree);
    P->sfree = NULL;
    P->nslots = 0;
}

void dr__lock(dr_tape *R)
{
    if (R->parallel)
        pthread_mutex_lock(&R->parallel->lock);
}

void dr__unlock(dr_tape *R)
{
    if (R->parallel)
        pthread_mutex_unlock(&R->parallel->lock);
}

static dr_par *par_get(dr_tape *R)
{
    if (R->parallel)
        return R->parallel;
    dr_par *P = dr__malloc(sizeof *P);
    if (!P)
        return NULL;
    memset(P, 0, sizeof *P);
    if (pthread_mutex_init(&P->lock, NULL) != 0) {
        dr__free(P);
        return NULL;
    }
    if (pthread_cond_init(&P->cond, NULL) != 0) {
        pthread_mutex_destroy(&P->lock);
        dr__free(P);
        return NULL;
    }
    P->root = R;
    R->parallel = P;
    dr__bytes_add(R, (ptrdiff_t)sizeof *P);
    return P;
}

/* ------------------------------------------------------------ worker pool */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* one step of an idle thread's spin: pause first, then give the core away
   (on a busy machine the thread we wait for may need it), and after
   SPIN_NS in all, false: block on the condition variable */
static bool spin_step(unsigned spin, long *t0);

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

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

/* under the lock */
static void push_kid(dr_par *P, dr_kid *k)
{
    k->qnext = P->queue;
    P->queue = k;
    __atomic_store_n(&P->qlen, P->qlen + 1, __ATOMIC_RELEASE);
}

/* the pool thread that recorded a kid's final job (reverse mode) */
static inline unsigned kid_slot(const dr_kid *k)
{
    return k->chunk ? k->chunk->slot : 0;
}

/* under the lock: the next queued kid, preferring (among the first few) one
   this thread recorded, whose chunks are still in this core's caches */
static dr_kid *pop_kid(dr_par *P)
{
    dr_kid **link = &P->queue, *k = P->queue;
    if (!k)
        return NULL;
    if (k->owner->mode == MODE_REVERSE) {
        unsigned me = my_slot(P);
        dr_kid **l = &P->queue;
        for (int look = 0; *l && look < 8; look++, l = &(*l)->qnext)
            if ((*l)->owner->mode == MODE_REVERSE && kid_slot(*l) == me) {
                link = l;
                k = *l;
                break;
            }
    }
    *link = k->qnext;
    __atomic_store_n(&P->qlen, P->qlen - 1, __ATOMIC_RELEASE);
    return k;
}

static void resolve(dr_par *P, dr_chunk *c, dr_hist *h, int64_t lo,
                    bool atomic);

/* run a queued kid (without the lock), then count it done */
static void run_kid(dr_par *P, dr_kid *k)
{
    dr_hist *h = k->owner;
    if (h->mode == MODE_FORWARD)
        h->fn(k->handle, k->i, h->ctx);
    else
        resolve(P, k->chunk, k->hist, h->mark, true);
    pthread_mutex_lock(&P->lock);
    if (__atomic_sub_fetch(&h->pending, 1, __ATOMIC_ACQ_REL) == 0 &&
        P->sleepers)
        pthread_cond_broadcast(&P->cond);
    pthread_mutex_unlock(&P->lock);
}

/* wait until every queued kid of h is done, running queued kids meanwhile */
static void wait_group(dr_par *P, dr_hist *h)
{
    long t0 = 0;
    for (unsigned spin = 0;; spin++) {
        if (__atomic_load_n(&h->pending, __ATOMIC_ACQUIRE) == 0)
            return;
        if (__atomic_load_n(&P->qlen, __ATOMIC_ACQUIRE) != 0) {
            pthread_mutex_lock(&P->lock);
            dr_kid *k = pop_kid(P);
            pthread_mutex_unlock(&P->lock);
            if (k) {
                run_kid(P, k);
                t0 = 0;
                spin = 0;
                continue;
            }
        }
        if (!spin_step(spin, &t0))
            break;
    }
    pthread_mutex_lock(&P->lock);
    while (__atomic_load_n(&h->pending, __ATOMIC_ACQUIRE) != 0) {
        dr_kid *k = pop_kid(P);
        if (k) {
            pthread_mutex_unlock(&P->lock);
            run_kid(P, k);
            pthread_mutex_lock(&P->lock);
            continue;
        }
        P->sleepers++;
        pthread_cond_wait(&P->cond, &P->lock);
        P->sleepers--;
    }
    pthread_mutex_unlock(&P->lock);
}

static void *worker_main(void *arg)
{
    dr_par *P = arg;
    (void)my_slot(P);
    for (;;) {
        long t0 = 0;
        for (unsigned spin = 0;; spin++) {
            if (__atomic_load_n(&P->qlen, __ATOMIC_ACQUIRE) != 0 ||
                __atomic_load_n(&P->shutdown, __ATOMIC_ACQUIRE))
                break;
            if (!spin_step(spin, &t0))
                break;
        }
        pthread_mutex_lock(&P->lock);
        for (;;) {
            dr_kid *k = pop_kid(P);
            if (k) {
                pthread_mutex_unlock(&P->lock);
                run_kid(P, k);
                break;
            }
            if (__atomic_load_n(&P->shutdown, __ATOMIC_ACQUIRE)) {
                pthread_mutex_unlock(&P->lock);
                return NULL;
            }
            P->sleepers++;
            pthread_cond_wait(&P->cond, &P->lock);
            P->sleepers--;
        }
    }
}

/* the pool for the root's `threads` setting; true if it has workers */
static bool pool_ensure(dr_par *P)
{
    unsigned want = P->root->threads;
    if (want <= 1)
        return false;
    if (__atomic_load_n(&P->pool_tried, __ATOMIC_ACQUIRE))
        return P->nworkers > 0;
    pthread_mutex_lock(&P->lock);
    if (!P->pool_tried) {
        unsigned n = want - 1;
        P->workers = dr__malloc(n * sizeof(pthread_t));
        /* without slot lists the pool works, only without chunk affinity */
        /* slots for the workers, and as many other recording threads */
        unsigned nslots = 2 * n + 2;
        P->sfree = dr__malloc(slot_lists_bytes(nslots));
        if (P->sfree) {
            P->nslots = nslots;
            memset(P->sfree, 0, slot_lists_bytes(nslots));
            dr__bytes_add(P->root, (ptrdiff_t)slot_lists_bytes(nslots));
        }
        if (P->workers) {
            for (unsigned i = 0; i < n; i++) {
                if (pthread_create(&P->workers[P->nworkers], NULL, worker_main,
                                   P) != 0)
                    break; /* fewer workers; none means sequential */
                P->nworkers++;
            }
            dr__bytes_add(P->root, (ptrdiff_t)(n * sizeof(pthread_t)));
        }
        __atomic_store_n(&P->pool_tried, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&P->lock);
    return P->nworkers > 0;
}

static void pool_stop(dr_par *P)
{
    if (!P->pool_tried)
        return;
    pthread_mutex_lock(&P->lock);
    __atomic_store_n(&P->shutdown, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&P->cond);
    pthread_mutex_unlock(&P->lock);
    for (unsigned i = 0; i < P->nworkers; i++)
        pthread_join(P->workers[i], NULL);
    if (P->workers) {
        dr__bytes_add(P->root,
                      -(ptrdiff_t)((P->root->threads - 1) * sizeof(pthread_t)));
        dr__free(P->workers);
    }
    P->workers = NULL;
    P->nworkers = 0;
    P->started = 0;
    P->epoch++;
    drop_slots(P);
    P->shutdown = 0;
    P->pool_tried = false;
}

/*
 * Run the kids of h on the pool: kid `local` on this thread, every other kid
 * (with work, in reverse mode) queued, then wait for them, helping.  The
 * queue is LIFO: `up` pushes in ascending order so the highest index is
 * handed out first (reverse mode), else descending (forward mode: 1 first).
 */
static void run_group(dr_par *P, dr_hist *h, int mode, size_t local)
{
    h->mode = mode;
    pthread_mutex_lock(&P->lock);
    size_t m = 0;
    for (size_t j = 0; j < h->n; j++) {
        size_t i = mode == MODE_REVERSE ? j : h->n - 1 - j;
        dr_kid *k = &h->kids[i];
        if (i == local || (mode == MODE_REVERSE && !k->chunk && !k->hist))
            continue;
        push_kid(P, k);
        m++;
    }
    __atomic_store_n(&h->pending, m, __ATOMIC_RELEASE);
    if (P->sleepers)
        pthread_cond_broadcast(&P->cond);
    pthread_mutex_unlock(&P->lock);
    dr_kid *k = &h->kids[local];
    if (mode == MODE_FORWARD)
        h->fn(k->handle, k->i, h->ctx);
    else
        resolve(P, k->chunk, k->hist, h->mark, true);
    wait_group(P, h);
}

/* ------------------------------------------------------------ the sweep */

static void sweep_job(dr_par *P, dr_chunk *c, int64_t lo, bool atomic)
{
    if (!c)
        return;
    dr_sweep s = {P->adj, P->root, atomic, lo, NULL, {NULL}, 0};
    if (atomic)
        dr__sweep_chunks_atomic(c, &s);
    else
        dr__sweep_chunks(c, &s);
}

static inline bool kid_empty(const dr_kid *k)
{
    return !k->chunk && !k->hist;
}

/*
 * Resolve a task backwards from its job (c, h): sweep the job, then for its
 * fork record the children (concurrently if the pool is on and more than
 * one has work), then the job that forked, and so on back to the task's
 * start.  lo/atomic describe what may run beside this task.
 */
static void resolve(dr_par *P, dr_chunk *c, dr_hist *h, int64_t lo,
                    bool atomic)
{
    for (;;) {
        sweep_job(P, c, lo, atomic);
        if (!h)
            return;
        size_t live = 0, one = 0, mine = SIZE_MAX;
        unsigned me = my_slot(P);
        for (size_t i = 0; i < h->n; i++)
            if (!kid_empty(&h->kids[i])) {
                live++;
                one = i;
                if (kid_slot(&h->kids[i]) == me)
                    mine = i;
            }
        if (P->use_pool && live > 1) {
            /* here: the last child with work that this thread recorded
               (its chunks are in this core's caches), else the last child
               with work, as a sequential sweep would start with it; the
               others go to the pool */
            if (mine != SIZE_MAX)
                one = mine;
            run_group(P, h, MODE_REVERSE, one);
        } else {
            for (size_t i = h->n; i-- > 0;)
                if (!kid_empty(&h->kids[i]))
                    resolve(P, h->kids[i].chunk, h->kids[i].hist, lo, atomic);
        }
        c = h->before_chunk;
        h = h->before_hist;
    }
}

dr_status dr__sweep_forks(dr_tape *t, dr_sweep *s)
{
    dr_par *P = t->parallel;
    P->adj = s->adj;
    P->use_pool = pool_ensure(P);
    if (P->use_pool) {
        t->state |= DR_ST_PSWEEP;
        dr__blas_solo_hold(); /* jobs' array rules run BLAS single-threaded */
    }
    resolve(P, NULL, t->hist, 0, false);
    if (P->use_pool)
        dr__blas_solo_release();
    t->state &= ~DR_ST_PSWEEP;
    return dr_tape_status(t);
}

/* ------------------------------------------------------------ fork / join */

static dr_tape *take_handle(dr_par *P, dr_tape *R)
{
    /* allocations from child handles are made under the lock, so a user
       allocator is never called by two threads of one tape at once */
    pthread_mutex_lock(&P->lock);
    dr_tape *h = P->hfree;
    if (h) {
        P->hfree = h->hnext;
    } else {
        h = dr__malloc(sizeof *h);
        if (h) {
            memset(h, 0, sizeof *h);
            dr__bytes_add(R, (ptrdiff_t)sizeof *h);
            h->hall = P->hall;
            P->hall = h;
        }
    }
    pthread_mutex_unlock(&P->lock);
    return h;
}

static void give_handles(dr_par *P, dr_hist *H, size_t n)
{
    pthread_mutex_lock(&P->lock);
    for (size_t i = 0; i < n; i++) {
        dr_tape *h = H->kids[i].handle;
        if (h) {
            h->hnext = P->hfree;
            P->hfree = h;
        }
        H->kids[i].handle = NULL;
    }
    pthread_mutex_unlock(&P->lock);
}

static dr_status check_forkable(const dr_tape *t)
{
    if (!t || (t->state & DR_ST_DEAD))
        return DR_EINVAL;
    if (t->state & (DR_ST_FORKED | DR_ST_PSWEEP | DR_ST_RECOPEN))
        return DR_EBUSY;
    return DR_OK;
}

static dr_status fork_impl(dr_tape *t, size_t n, dr_hist **out)
{
    dr_status st = check_forkable(t);
    if (st != DR_OK)
        return st;
    if (n == 0 || n > (SIZE_MAX - sizeof(dr_hist)) / sizeof(dr_kid) / 2)
        return DR_EINVAL;
    dr_tape *R = t->root;
    dr_par *P = par_get(R); /* a child's root has one already */
    if (!P)
        return DR_ENOMEM;
    dr_hist *H = dr__arena_alloc(t, sizeof(dr_hist) + n * sizeof(dr_kid));
    if (!H)
        return DR_ENOMEM;
    memset(H, 0, sizeof(dr_hist) + n * sizeof(dr_kid));
    H->n = n;
    for (size_t i = 0; i < n; i++) {
        dr_tape *h = take_handle(P, R);
        if (!h) {
            give_handles(P, H, i);
            return DR_ENOMEM;
        }
        H->kids[i].handle = h;
        H->kids[i].owner = H;
        H->kids[i].i = i;
    }
    /* end the current job: sync its chunk and save it with its history */
    if (t->chunk)
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
    H->before_chunk = t->chunk;
    H->before_hist = t->hist;
    H->up = t->up;
    H->mark = __atomic_load_n(&R->reserved, __ATOMIC_RELAXED);
    if (H->mark < t->next)
        H->mark = t->next;
    for (size_t i = 0; i < n; i++) {
        dr_tape *h = H->kids[i].handle;
        dr_tape *keep_hall = h->hall;
        memset(h, 0, sizeof *h);
        h->hall = keep_hall;
        h->next = H->mark;
        h->base = R->base;
        h->state = DR_ST_CHILD;
        h->root = R;
        h->up = H;
        h->threads = 0;
    }
    t->fork = H;
    t->state |= DR_ST_FORKED;
    t->end = t->cur; /* the next record goes to dr__grow and is refused */
    *out = H;
    return DR_OK;
}

dr_status dr_fork(dr_tape *t, size_t n, dr_tape **children)
{
    if (!children)
        return DR_EINVAL;
    dr_hist *H;
    dr_status st = fork_impl(t, n, &H);
    if (st == DR_ENOMEM)
        dr__fail(t, st); /* every allocation failure is sticky */
    if (st != DR_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        children[i] = H->kids[i].handle;
    /* the children may record at once on the caller's threads */
    dr__blas_solo_hold();
    H->blas_solo = true;
    return DR_OK;
}

dr_status dr_join(dr_tape *t)
{
    if (!t || (t->state & DR_ST_DEAD))
        return DR_EINVAL;
    if (!(t->state & DR_ST_FORKED))
        return DR_EINVAL; /* nothing to join */
    dr_hist *H = t->fork;
    for (size_t i = 0; i < H->n; i++)
        if (H->kids[i].handle->state & (DR_ST_FORKED | DR_ST_RECOPEN))
            return DR_EBUSY; /* a child has an open fork or recorder */
    for (size_t i = 0; i < H->n; i++) {
        dr_kid *k = &H->kids[i];
        dr_tape *h = k->handle;
        if (h->chunk)
            h->chunk->n = (size_t)(h->cur - h->chunk->nodes);
        k->chunk = h->chunk;
        k->hist = h->hist;
        t->len += h->len;
        if (h->exts) {
            dr_ext *e = h->exts;
            while (e->next)
                e = e->next;
            e->next = t->exts;
            t->exts = h->exts;
        }
        if (h->status != DR_OK)
            dr__fail(t, h->status); /* first error in child order */
        h->state = DR_ST_DEAD;
        h->cur = h->end = NULL;
        h->chunk = NULL;
        h->hist = NULL;
        h->exts = NULL;
        h->arena = NULL;
        h->up = NULL;
    }
    give_handles(t->root->parallel, H, H->n);
    if (H->blas_solo)
        dr__blas_solo_release();
    t->fork = NULL;
    t->state &= ~DR_ST_FORKED;
    /* the continuation job: a fresh chunk on its first record */
    t->chunk = NULL;
    t->cur = t->end = NULL;
    t->hist = H;
    t->next = __atomic_load_n(&t->root->reserved, __ATOMIC_RELAXED);
    return DR_OK;
}

/*
 * Close what a finished job of dr_fork_run left open on its handle h: a
 * recorder, or a fork (its children first, to any depth).  Without this the
 * caller's handle would stay forked with children it never saw, and every
 * later clear, join or sweep would be DR_EBUSY.  The job's dr_rec may have
 * gone with its stack frame, so it is not read: the nodes the recorder
 * appended since it last took the cursor are dropped.  h's sticky status
 * becomes DR_EBUSY (the join passes it up), so the recording is refused
 * until dr_tape_clear.  Returns whether anything was open.
 */
static bool close_left_open(dr_tape *h)
{
    bool left = false;
    if (h->state & DR_ST_RECOPEN) {
        h->state &= ~(DR_ST_REC | DR_ST_RECOPEN);
        h->rec = NULL;
        h->end = h->chunk ? h->chunk->nodes + h->chunk->cap : NULL;
        left = true;
    }
    if (h->state & DR_ST_FORKED) {
        for (size_t i = 0; i < h->fork->n; i++)
            close_left_open(h->fork->kids[i].handle);
        dr_join(h);
        left = true;
    }
    if (left)
        dr__fail(h, DR_EBUSY);
    return left;
}

dr_status dr_fork_run(dr_tape *t, size_t n,
                      void (*fn)(dr_tape *child, size_t i, void *ctx),
                      void *ctx)
{
    if (!fn)
        return DR_EINVAL;
    dr_hist *H;
    dr_status st = fork_impl(t, n, &H);
    if (st == DR_ENOMEM)
        dr__fail(t, st);
    if (st != DR_OK)
        return st;
    H->fn = fn;
    H->ctx = ctx;
    dr_par *P = t->root->parallel;
    if (n > 1 && pool_ensure(P)) {
        dr__blas_solo_hold();
        run_group(P, H, MODE_FORWARD, 0);
        dr__blas_solo_release();
    } else {
        for (size_t i = 0; i < n; i++)
            fn(H->kids[i].handle, i, ctx);
    }
    bool left = false;
    for (size_t i = 0; i < n; i++)
        left |= close_left_open(H->kids[i].handle);
    st = dr_join(t);
    return left ? DR_EBUSY : st;
}

/* --------------------------------------------------------------- threads */

dr_status dr_set_threads(dr_tape *t, unsigned n)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (unsigned)c : 1u;
    }
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    if (n == t->threads)
        return DR_OK;
    if (t->parallel)
        pool_stop(t->parallel);
    t->threads = n;
    return DR_OK;
}

unsigned dr_get_threads(const dr_tape *t)
{
    return t ? t->root->threads : 0;
}

/* ------------------------------------------------------------- lookups */

/* the records of a chunk's leading inputs are never written (see
   dr_input_range): they read as this one */
static const dr_node input_node = {0.0, 0.0, 0, 0};

static const dr_node *node_in(const dr_chunk *c, int64_t rel)
{
    size_t k = (size_t)(rel - c->first);
    return k < c->lead ? &input_node : &c->nodes[k];
}

static const dr_node *find_in_job(const dr_chunk *c, const dr_hist *h,
                                  int64_t rel)
{
    for (;;) {
        for (; c; c = c->prev)
            if (rel >= c->first && rel < c->first + (int64_t)c->n)
                return node_in(c, rel);
        if (!h)
            return NULL;
        for (size_t i = 0; i < h->n; i++) {
            const dr_node *p = find_in_job(h->kids[i].chunk, h->kids[i].hist,
                                           rel);
            if (p)
                return p;
        }
        c = h->before_chunk;
        h = h->before_hist;
    }
}

const dr_node *dr__find_node(const dr_tape *t, int64_t rel)
{
    if (!t || rel < 0 || rel >= t->next)
        return NULL;
    const dr_chunk *c = t->chunk;
    if (c) {
        size_t n = (size_t)(t->cur - c->nodes);
        if (rel >= c->first && rel < c->first + (int64_t)n)
            return node_in(c, rel);
        c = c->prev;
    }
    const dr_node *p = find_in_job(c, t->hist, rel);
    /* a child also sees its ancestors' jobs before their forks */
    for (const dr_hist *up = t->up; !p && up; up = up->up)
        p = find_in_job(up->before_chunk, up->before_hist, rel);
    return p;
}

/* ------------------------------------------------------------------ free */

void dr__par_free(dr_tape *R)
{
    dr_par *P = R->parallel;
    if (!P)
        return;
    pool_stop(P);
    /* forks never joined give their BLAS holds back */
    if ((R->state & DR_ST_FORKED) && R->fork->blas_solo)
        dr__blas_solo_release();
    for (dr_tape *h = P->hall; h; h = h->hall)
        if ((h->state & DR_ST_FORKED) && h->fork->blas_solo)
            dr__blas_solo_release();
    for (dr_tape *h = P->hall; h;) {
        dr_tape *nx = h->hall;
        dr__free(h);
        h = nx;
    }
    pthread_cond_destroy(&P->cond);
    pthread_mutex_destroy(&P->lock);
    dr__free(P);
    R->parallel = NULL;
}
