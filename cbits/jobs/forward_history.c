/*
 * forward_history.c - the forward pass over the job graph: the
 * forward_history hook (tape/tape.h).  A job may read the nodes of the jobs
 * before it in its task and, for a child task, its ancestors' jobs before
 * the fork; so a task is swept oldest job first, and at a fork record the
 * job that forked comes before the children, the children before the job
 * after the join.  Children never read each other's nodes: they are swept
 * one after the other, in any order (sequentially: the forward pass is a
 * single thread's).
 */
#include "jobs/jobs.h"

#include <stdint.h>

/*
 * The task whose last job is c, with history h: the fork records of its
 * history, linked newest first by before_hist, are taken oldest first in
 * batches (as forward.c takes chunks: no allocation; a task with many
 * fork-joins costs (forks / BATCH) * forks steps of walking).  Recursion
 * only into child tasks: its depth is the nesting depth of forks.
 */
#define BATCH 64

static dr_status sweep_task(dr_chunk *c, dr_hist *h, dr_fsweep *f);

/* a fork record's children, then the job after its join (c) */
static dr_status after_fork(dr_hist *h, dr_chunk *c, dr_fsweep *f)
{
    for (size_t i = 0; i < h->n; i++) {
        const dr_kid *k = &h->kids[i];
        if (dr__kid_empty(k))
            continue;
        dr_status st = sweep_task(k->chunk, k->hist, f);
        if (st != DR_OK)
            return st;
    }
    return dr__forward_job(c, f);
}

static dr_status sweep_task(dr_chunk *c, dr_hist *h, dr_fsweep *f)
{
    /* the task's first job: the one before its oldest fork (or c itself) */
    size_t total = 0; /* fork records in the task's history */
    dr_chunk *first = c;
    for (dr_hist *x = h; x; x = x->before_hist) {
        total++;
        first = x->before_chunk;
    }
    dr_status st = dr__forward_job(first, f);
    /* then each fork record oldest first: its children and the job after
       its join, which is the before_chunk of the next newer record (c for
       the newest) */
    dr_hist *buf[BATCH];
    size_t done = 0;
    while (st == DR_OK && done < total) {
        size_t left = total - done; /* records 0 .. left-1, newest first */
        size_t lo = left > BATCH ? left - BATCH : 0;
        dr_hist *x = h, *newer = NULL;
        for (size_t i = 0; i < lo; i++) {
            newer = x;
            x = x->before_hist;
        }
        size_t nb = 0;
        for (; nb < left - lo; x = x->before_hist)
            buf[nb++] = x;
        for (size_t i = nb; st == DR_OK && i-- > 0;) {
            dr_chunk *after = i > 0 ? buf[i - 1]->before_chunk
                              : newer ? newer->before_chunk
                                      : c;
            st = after_fork(buf[i], after, f);
        }
        done += nb;
    }
    return st;
}

dr_status dr__forward_forks(dr_tape *root, void *ctx)
{
    /* the root's history; its current job (after the last join) is the
       caller's to sweep */
    return sweep_task(NULL, root->hist, ctx);
}
