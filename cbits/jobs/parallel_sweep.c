/*
 * parallel_sweep.c - the reverse pass over the job graph ("forks in the
 * primal become joins in the dual"; thesis section 3.10).
 *
 * dr_reverse sweeps the root's current job, then (through the tape's
 * sweep_history hook) this file walks the history backwards: for a fork
 * record, the child tasks are resolved (concurrently when a pool is
 * running), then the forking job.  While siblings run, adds into ids below
 * the fork's mark (ancestor jobs) go to the running task's log
 * (dr_anc_log); ids at or above it belong to the running task alone.  When
 * all the children are done, the task that forked adds their logs in, the
 * last child's first, as a sequential sweep adds them: the adjoints come
 * out the same, bit for bit, at any number of threads.
 */
#include "jobs/jobs.h"
#include "jobs/sweep_trace.h"

#include <stdint.h>

static void sweep_job(dr_par *P, dr_chunk *c, int64_t lo, bool atomic,
                      dr_anc_log *log)
{
    if (!c)
        return;
    dr_sweep s = {P->adj, P->pool.root, atomic, lo, NULL, {NULL}, 0, log};
    if (atomic)
        dr__sweep_chunks_par(c, &s);
    else
        dr__sweep_chunks(c, &s);
}

static void resolve(dr_par *P, dr_chunk *c, dr_hist *h, int64_t lo,
                    bool atomic, dr_anc_log *log);

/* a kid's task in a sweep: resolve its child task beside its siblings,
   logging its adds into the ancestors (in a log on this thread's stack
   while it runs: the kids' records share cache lines, and a log's count
   changes at every add) */
static void run_kid(dr_task *task, dr_pool *pool)
{
    dr_kid *k = (dr_kid *)task;
    dr_anc_log log = {NULL, NULL, 0};
    TR_T0();
    resolve(pool->root->parallel, k->chunk, k->hist, k->owner->mark, true,
            &log);
    k->log = log;
    TR_EVENT(TR_KID, dr__slot(pool->root), k->task.home);
}

/* after the kids of h ran side by side: their logs, the last kid's first,
   each in its order, into the adjoints (or, for ids below this task's own,
   into its log: as dr__acc puts any add of this task) */
static void add_logs(dr_par *P, dr_hist *h, int64_t lo, bool atomic,
                     dr_anc_log *log)
{
    dr_tape *R = P->pool.root;
    dr_sweep s = {P->adj, R, atomic, lo, NULL, {NULL}, 0, log};
    TR_T0();
    for (size_t i = h->n; i-- > 0;) {
        dr_anc_log *L = &h->kids[i].log;
        if (!L->first)
            continue;
        for (dr_scratch *b = L->first; b; b = b->next) {
            const double *e = b->data;
            size_t n = b == L->last ? L->n : DR_LOG_BLOCK;
            for (size_t j = 0; j < n; j++)
                dr__acc(&s, (int64_t)e[2 * j], e[2 * j + 1]);
        }
        dr__blocks_give(R, L->first, L->last);
        *L = (dr_anc_log){NULL, NULL, 0};
    }
    TR_EVENT(TR_LOGS, dr__slot(R), 0);
}

/*
 * Resolve a task backwards from its job (c, h): sweep the job, then for its
 * fork record the children (concurrently if the pool is on and more than
 * one has work, then their logs), then the job that forked, and so on back
 * to the task's start.  lo/atomic describe what may run beside this task,
 * log where its adds into ids below lo go.
 */
static void resolve(dr_par *P, dr_chunk *c, dr_hist *h, int64_t lo,
                    bool atomic, dr_anc_log *log)
{
    for (;;) {
        sweep_job(P, c, lo, atomic, log);
        if (!h)
            return;
        size_t live = 0, one = 0, mine = SIZE_MAX;
        unsigned me = dr__slot(P->pool.root);
        for (size_t i = 0; i < h->n; i++)
            if (!dr__kid_empty(&h->kids[i])) {
                live++;
                one = i;
                if (dr__kid_slot(&h->kids[i]) == me)
                    mine = i;
            }
        if (P->use_pool && live > 1) {
            /* here: the last child with work that this thread recorded
               (its chunks are in this core's caches), else the last child
               with work, as a sequential sweep would start with it; the
               others go to the pool */
            if (mine != SIZE_MAX)
                one = mine;
            dr__kids_run(P, h, one, true, run_kid);
            add_logs(P, h, lo, atomic, log);
        } else {
            for (size_t i = h->n; i-- > 0;)
                if (!dr__kid_empty(&h->kids[i]))
                    resolve(P, h->kids[i].chunk, h->kids[i].hist, lo, atomic,
                            log);
        }
        c = h->before_chunk;
        h = h->before_hist;
    }
}

dr_status dr__sweep_forks(dr_tape *t, double *adj)
{
    dr_par *P = t->parallel;
    P->adj = adj;
    P->use_pool = dr__pool_ensure(&P->pool);
    if (P->use_pool) {
        t->state |= DR_ST_PSWEEP;
        dr__blas_solo_hold(); /* jobs' array rules run BLAS single-threaded */
    }
    tr_begin();
    resolve(P, NULL, t->hist, 0, false, NULL);
    tr_end(t->threads);
    if (P->use_pool)
        dr__blas_solo_release();
    t->state &= ~DR_ST_PSWEEP;
    return dr_tape_status(t);
}
