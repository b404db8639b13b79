/*
 * kids.c - the kids of a fork record run as tasks of the worker pool
 * (jobs.h, dr__kids_run): by dr_fork_run (fork.c), the parallel sweep
 * (parallel_sweep.c) and replay (replay_history.c).  On its own so that
 * those three, which fork.c names in the tape's hooks, do not call back
 * into fork.c.
 */
#include "jobs/jobs.h"

void dr__kids_run(dr_par *P, dr_hist *h, size_t local, bool sweeping,
                  void (*run)(dr_task *, dr_pool *), void (*poll)(void *),
                  void *pctx)
{
    dr_task *head = NULL;
    size_t m = 0;
    for (size_t j = 0; j < h->n; j++) {
        size_t i = sweeping ? j : h->n - 1 - j;
        dr_kid *k = &h->kids[i];
        k->task.run = run;
        k->task.pending = &h->pending;
        k->task.home = sweeping ? dr__kid_slot(k) : DR_HOME_NONE;
        if (i == local || (sweeping && dr__kid_empty(k)))
            continue;
        k->task.qnext = head; /* the last one linked is handed out first */
        head = &k->task;
        m++;
    }
    dr__pool_run(&P->pool, head, m, &h->pending, &h->kids[local].task, poll,
                 pctx);
}
