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

static dr_status sweep_task(dr_chunk *c, dr_hist *h, dr_fsweep *f);

static dr_status sweep_job(dr_chunk *c, void *f)
{
    return dr__forward_job(c, f);
}

/* a fork record's children, one task after another (recursion only into
   child tasks: its depth is the nesting depth of forks) */
static dr_status sweep_kids(dr_hist *h, void *f)
{
    for (size_t i = 0; i < h->n; i++) {
        const dr_kid *k = &h->kids[i];
        if (dr__kid_empty(k))
            continue;
        dr_status st = sweep_task(k->chunk, k->hist, f);
        if (st != DR_OK)
            return st;
    }
    return DR_OK;
}

static dr_status sweep_task(dr_chunk *c, dr_hist *h, dr_fsweep *f)
{
    static const dr_task_visit visit = {sweep_job, sweep_kids};
    return dr__task_oldest_first(c, h, &visit, f);
}

dr_status dr__forward_forks(dr_tape *root, void *ctx)
{
    /* the root's history; its current job (after the last join) is the
       caller's to sweep */
    return sweep_task(NULL, root->hist, ctx);
}
