/*
 * jobs.h - fork-join parallelism (cbits/README.md; thesis section 3.10):
 * a worker pool that runs generic tasks (pool.c), child recording handles
 * and the job graph they leave (fork.c), and the parallel reverse pass over
 * that graph (parallel_sweep.c).  The thread budget shared with OpenBLAS is
 * here too (blas_threads.c): the jobs are what it budgets for.  Not
 * installed.
 */
#ifndef DR_JOBS_H
#define DR_JOBS_H

#include "sweep/sweep.h"

/* ------------------------------------------------------------ worker pool */

/*
 * A task: embedded first in what it runs on (a dr_kid), queued by the pool
 * and run by whichever thread takes it.  `home` is the slot (tape/tape.h,
 * chunk affinity) of the thread whose caches hold the task's data; a thread
 * taking work prefers, among the first few queued, a task whose home is its
 * own slot (DR_HOME_NONE: no preference).
 */
typedef struct dr_task dr_task;
typedef struct dr_pool dr_pool;
struct dr_task {
    dr_task *qnext;                         /* link in the queue        */
    void (*run)(dr_task *task, dr_pool *P); /* the work                 */
    size_t *pending;  /* its group's count of unfinished tasks          */
    unsigned home;
};
#define DR_HOME_NONE (~0u)

/*
 * Per tape, created on first use, reused by later sweeps and dr_fork_run
 * calls, stopped by dr_set_threads (to resize) and dr_tape_free.  Tasks go
 * on one LIFO queue under the tape's shared-storage lock (one lock, so that
 * the pool's allocations and storage's never meet in the user's allocator).
 * A thread that waits for its group of tasks runs queued tasks meanwhile
 * (any group), so nested forks never deadlock.  Idle threads spin briefly
 * before sleeping on a condition variable, so the hand-offs of a short
 * parallel section cost microseconds.  If no worker thread can be created
 * the work runs on the calling thread.
 */
struct dr_pool {
    dr_tape *root;         /* its `threads`, its lock and its slots      */
    pthread_mutex_t *lock; /* dr__lock_mutex(root)                      */
    pthread_cond_t cond;   /* work queued, a group finished, shutdown    */
    pthread_t *workers;
    unsigned nworkers;
    bool tried;            /* creation attempted (for `threads`)         */
    int shutdown;          /* atomic                                     */
    dr_task *queue;        /* LIFO of runnable tasks                     */
    size_t qlen;           /* atomic mirror of the queue's length        */
    unsigned sleepers;
};

/* false if the condition variable cannot be made */
DR_HIDDEN bool dr__pool_init(dr_pool *P, dr_tape *root);
/* stops the workers and frees the pool's memory (not P itself) */
DR_HIDDEN void dr__pool_destroy(dr_pool *P);
/* the workers for root's `threads` setting; true if there are any */
DR_HIDDEN bool dr__pool_ensure(dr_pool *P);
/* stop the workers (a later dr__pool_ensure starts new ones) */
DR_HIDDEN void dr__pool_stop(dr_pool *P);
/*
 * Queue the m tasks linked by qnext from head (head is handed out first),
 * counting them in *pending; run `local` (not queued, not counted; may be
 * NULL) on this thread; then wait until *pending is 0, running queued tasks
 * (of any group) meanwhile, and poll(pctx) (where poll is not NULL)
 * between them and while spinning: work of this thread's that the tasks
 * make ready one by one.
 */
DR_HIDDEN void dr__pool_run(dr_pool *P, dr_task *head, size_t m,
                            size_t *pending, dr_task *local,
                            void (*poll)(void *), void *pctx);

/* -------------------------------------------------------------- the jobs */

/*
 * A job is a sequential stretch of recording: its nodes are the chunks
 * linked by prev from its newest chunk.  A task's jobs are described as in
 * the thesis (Fig. 3.16): the current job of a handle has a history `hist`,
 * NULL for the first job of a task ("Start"), else the fork record of the
 * fork that ended the previous job ("Fork jd0 kids...").  A fork record
 * holds the forking job (its chunks and its own history) and the final job
 * of each child task, and the value of the id counter at the fork (`mark`):
 * every id recorded by the children's tasks is >= mark, every id they may
 * read from an ancestor is < mark.
 */
typedef struct dr_kid dr_kid;
struct dr_kid {
    dr_task task;        /* first: the pool hands it back as a dr_task  */
    dr_hist *owner;      /* the fork record this kid belongs to          */
    size_t i;            /* its index                                    */
    dr_tape *handle;     /* while forked: the child's recording handle   */
    dr_chunk *chunk;     /* after join: newest chunk of the final job     */
    dr_hist *hist;       /* after join: history of the final job          */
    dr_anc_log log;      /* during a parallel sweep: its adds into the
                            ancestors, until the forking task adds them  */
    int swept;           /* during a parallel sweep: its task is done and
                            its log complete (atomic)                    */
    dr_status replayed;  /* during a replay: how its task's replay ended */
};
struct dr_hist {
    dr_chunk *before_chunk; /* the job that forked: its newest chunk ...  */
    dr_hist *before_hist;   /* ... and its history                        */
    dr_hist *up;            /* the forking handle's own `up` (see dr_tape) */
    int64_t mark;           /* id counter at the fork                     */
    size_t n;               /* number of children                         */
    size_t pending;         /* tasks not finished (worker pool)           */
    void (*fn)(dr_tape *, size_t, void *); /* dr_fork_run's function     */
    void *ctx;
    bool blas_solo;         /* dr_fork took a BLAS hold; the join gives
                               it back (blas_threads.c)                  */
    bool rec_solo;          /* the children recorded under a BLAS hold:
                               a replay runs them under one too, for the
                               same bits                                 */
    dr_scratch *acc;        /* during a parallel sweep of the children:
                               per thread slot, the list of its buffers
                               for ancestors' arrays (dr_anc_log), NULL
                               when none could be had                    */
    size_t nacc;            /* slots in acc                               */
    dr_sweep *fork_s;       /* during a parallel sweep of the children:
                               the forking task's sweep ...              */
    unsigned fork_slot;     /* ... and its thread's slot (0: none)        */
    dr_kid kids[];
};

static inline bool dr__kid_empty(const dr_kid *k)
{
    return !k->chunk && !k->hist;
}
/* the pool thread that recorded a kid's final job, after the join */
static inline unsigned dr__kid_slot(const dr_kid *k)
{
    return k->chunk ? k->chunk->slot : 0;
}

/* The jobs layer's state of a tape, shared by all its handles. */
typedef struct dr_par {
    dr_pool pool;
    dr_tape *hall;         /* every child handle                         */
    dr_tape *hfree;        /* joined child handles for reuse             */
    double *adj;           /* the running sweep's adjoint array          */
    bool use_pool;         /* the running sweep uses the pool            */
    void *replay_pass;     /* the running replay's dr_replay_pass        */
} dr_par;

/* fork.c */
/*
 * Run the kids of h, each by run: kid `local` on this thread and, on the
 * pool, every other kid (with work, when sweeping).  The queue is LIFO:
 * when sweeping the highest index is handed out first, as a sequential
 * sweep would start with it; else kid 1 first.  poll(pctx), if given, as
 * dr__pool_run's.
 */
DR_HIDDEN void dr__kids_run(dr_par *P, dr_hist *h, size_t local,
                            bool sweeping, void (*run)(dr_task *, dr_pool *),
                            void (*poll)(void *), void *pctx);
/* the node with relative id rel as seen from handle t: in t's current job,
   its history, or (for a child) the ancestors' jobs before the fork; NULL
   if none (ids of other jobs, gaps) */
DR_HIDDEN const dr_node *dr__find_node(const dr_tape *t, int64_t rel);

/* parallel_sweep.c: the sweep_history hook (tape/tape.h) */
DR_HIDDEN dr_status dr__sweep_forks(dr_tape *root, double *adj);

/* task_order.c: the task whose last job is c, with history h, oldest job
   first: job(first job), then per fork record oldest first kids(record)
   and job(the job after its join); the first status that is not DR_OK
   stops it and is returned */
typedef struct dr_task_visit {
    dr_status (*job)(dr_chunk *newest, void *ctx);
    dr_status (*kids)(dr_hist *h, void *ctx);
} dr_task_visit;
DR_HIDDEN dr_status dr__task_oldest_first(dr_chunk *c, dr_hist *h,
                                          const dr_task_visit *v, void *ctx);

/* forward_history.c: the forward_history hook (tape/tape.h) */
DR_HIDDEN dr_status dr__forward_forks(dr_tape *root, void *ctx);

/* replay_history.c: the replay_history hook (tape/tape.h) */
DR_HIDDEN dr_status dr__replay_forks(dr_tape *root, void *pass,
                                     bool parallel);

/* parallel_for.c: fn(ctx, lo, hi) over pieces of [0, n) (of whole cache
   lines of doubles), one a thread of the tape's count, on the pool, the
   calling thread taking part; all of it on the calling thread when the
   pool does not run */
DR_HIDDEN void dr__par_for(dr_par *P, size_t n,
                           void (*fn)(void *ctx, size_t lo, size_t hi),
                           void *ctx);
/* the zero hook (tape/tape.h): n doubles at p set to zero, by dr__par_for */
DR_HIDDEN void dr__zero_split(dr_tape *root, double *p, size_t n);

/* blas_threads.c: while a hold is open (any tape), OpenBLAS runs
   single-threaded; holds nest and are counted process-wide */
DR_HIDDEN void dr__blas_solo_hold(void);
DR_HIDDEN void dr__blas_solo_release(void);

#endif /* DR_JOBS_H */
