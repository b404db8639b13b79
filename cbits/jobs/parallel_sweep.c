/*
 * parallel_sweep.c - the reverse pass over the job graph ("forks in the
 * primal become joins in the dual"; thesis section 3.10).
 *
 * dr_reverse sweeps the root's current job, then (through the tape's
 * sweep_history hook) this file walks the history backwards: for a fork
 * record, the child tasks are resolved (concurrently when a pool is
 * running), then the forking job.  While siblings run, adds into ids below
 * the fork's mark (ancestor jobs) are atomic; ids at or above it belong to
 * the running task alone.
 */
#include "jobs/jobs.h"

#include <stdint.h>

static void sweep_job(dr_par *P, dr_chunk *c, int64_t lo, bool atomic)
{
    if (!c)
        return;
    dr_sweep s = {P->adj, P->pool.root, atomic, lo, NULL, {NULL}, 0};
    if (atomic)
        dr__sweep_chunks_atomic(c, &s);
    else
        dr__sweep_chunks(c, &s);
}

static void resolve(dr_par *P, dr_chunk *c, dr_hist *h, int64_t lo,
                    bool atomic);

/* a kid's task in a sweep: resolve its child task beside its siblings */
static void run_kid(dr_task *task, dr_pool *pool)
{
    dr_kid *k = (dr_kid *)task;
    resolve(pool->root->parallel, k->chunk, k->hist, k->owner->mark, true);
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
        } else {
            for (size_t i = h->n; i-- > 0;)
                if (!dr__kid_empty(&h->kids[i]))
                    resolve(P, h->kids[i].chunk, h->kids[i].hist, lo, atomic);
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
    resolve(P, NULL, t->hist, 0, false);
    if (P->use_pool)
        dr__blas_solo_release();
    t->state &= ~DR_ST_PSWEEP;
    return dr_tape_status(t);
}
