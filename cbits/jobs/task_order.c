/*
 * task_order.c - a task of the job graph visited oldest job first
 * (jobs.h), for the passes that run forward through it: the tangent pass
 * (forward_history.c) and replay (replay_history.c).  A job may read the
 * nodes of the jobs before it in its task, so the task's first job comes
 * first, then each fork record oldest first: its children, then the job
 * after its join.
 *
 * The fork records of a task's history, linked newest first by
 * before_hist, are taken oldest first in batches (as the sweep layer takes
 * a job's chunks: no allocation; a task with many fork-joins costs
 * (forks / BATCH) * forks steps of walking).
 */
#include "jobs/jobs.h"

#define BATCH 64

dr_status dr__task_oldest_first(dr_chunk *c, dr_hist *h,
                                const dr_task_visit *v, void *ctx)
{
    /* the task's first job: the one before its oldest fork (or c itself) */
    size_t total = 0; /* fork records in the task's history */
    dr_chunk *first = c;
    for (dr_hist *x = h; x; x = x->before_hist) {
        total++;
        first = x->before_chunk;
    }
    dr_status st = v->job(first, ctx);
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
            st = v->kids(buf[i], ctx);
            if (st == DR_OK)
                st = v->job(after, ctx);
        }
        done += nb;
    }
    return st;
}
