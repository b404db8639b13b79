/*
 * replay_history.c - replay over the job graph: the replay_history hook
 * (tape/tape.h).  Replay (sweep/replay.c) evaluates every node again from
 * its arguments' values, so a job comes after every job it may read: in a
 * task, its jobs oldest first; at a fork record, the job that forked, then
 * the children, then the job after the join.  Children never read each
 * other's nodes, so they may run at once on the pool; each writes only the
 * log entries and partials of its own nodes.
 */
#include "jobs/jobs.h"

#include <stdint.h>

typedef struct walk {
    dr_par *P;
    void *pass;    /* the sweep layer's dr_replay_pass */
    bool parallel; /* children on the pool */
} walk;

static dr_status replay_task(dr_chunk *c, dr_hist *h, const walk *w);

/* a kid's task in a parallel replay */
static void run_kid(dr_task *task, dr_pool *pool)
{
    dr_kid *k = (dr_kid *)task;
    dr_par *P = pool->root->parallel;
    walk w = {P, P->replay_pass, true};
    k->replayed = replay_task(k->chunk, k->hist, &w);
}

/* the children of h: side by side where the pool runs and more than one
   has work, else in order; the first failure in child order (what a
   sequential replay would meet first) */
static dr_status replay_kids(dr_hist *h, const walk *w)
{
    size_t live = 0;
    for (size_t i = 0; i < h->n; i++)
        live += !dr__kid_empty(&h->kids[i]);
    /* the children were recorded with BLAS on one thread where they
       could run at once: the same kernels on the same threads give the
       same bits */
    if (h->rec_solo)
        dr__blas_solo_hold();
    dr_status st = DR_OK;
    if (w->parallel && live > 1) {
        for (size_t i = 0; i < h->n; i++)
            h->kids[i].replayed = DR_OK;
        dr__kids_run(w->P, h, 0, false, run_kid, NULL, NULL);
        for (size_t i = 0; st == DR_OK && i < h->n; i++)
            st = h->kids[i].replayed;
    } else {
        for (size_t i = 0; st == DR_OK && i < h->n; i++)
            if (!dr__kid_empty(&h->kids[i]))
                st = replay_task(h->kids[i].chunk, h->kids[i].hist, w);
    }
    if (h->rec_solo)
        dr__blas_solo_release();
    return st;
}

static dr_status replay_job(dr_chunk *c, void *w)
{
    return dr__replay_job(c, ((const walk *)w)->pass);
}

static dr_status replay_kids_of(dr_hist *h, void *w)
{
    return replay_kids(h, w);
}

/* the task whose last job is c, with history h: its first job, then each
   fork record oldest first (its children, then the job after its join) */
static dr_status replay_task(dr_chunk *c, dr_hist *h, const walk *w)
{
    static const dr_task_visit visit = {replay_job, replay_kids_of};
    return dr__task_oldest_first(c, h, &visit, (void *)w);
}

dr_status dr__replay_forks(dr_tape *root, void *pass, bool parallel)
{
    dr_par *P = root->parallel;
    walk w = {P, pass, parallel && dr__pool_ensure(&P->pool)};
    P->replay_pass = pass;
    /* the root's history; its current job (after the last join) is the
       caller's to replay */
    dr_status st = replay_task(NULL, root->hist, &w);
    P->replay_pass = NULL;
    return st;
}
