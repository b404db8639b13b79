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
 * out the same, bit for bit, at any number of threads.  What the children
 * add into ancestors' arrays (a split batch's weight gradient: each
 * child's share a whole matrix) is summed per thread, and those buffers are
 * added in once all the children are done, in parallel over the elements
 * (agreeing with one thread's to rounding; node/node.h).
 */
#include "jobs/jobs.h"
#include "jobs/sweep_trace.h"

#include <stdint.h>
#include <stdlib.h>

/* the buffers for one owner, added into dst */
typedef struct merge_job {
    double *dst;
    bool fresh; /* dst is undefined: the first buffer is copied */
    dr_scratch *const *g;
    size_t m;
} merge_job;

#define MERGE_BLOCK 1024 /* elements of dst kept in cache over all buffers */

static void merge_range(void *ctx, size_t lo, size_t hi)
{
    const merge_job *j = ctx;
    for (size_t b0 = lo; b0 < hi; b0 += MERGE_BLOCK) {
        size_t b1 = hi - b0 < MERGE_BLOCK ? hi : b0 + MERGE_BLOCK;
        double *restrict d = j->dst;
        size_t first = 0;
        if (j->fresh) {
            dr__copy_doubles(d + b0, j->g[0]->data + b0, b1 - b0);
            first = 1;
        }
        for (size_t k = first; k < j->m; k++) {
            const double *restrict x = j->g[k]->data;
            for (size_t r = b0; r < b1; r++)
                d[r] += x[r];
        }
    }
}

static int owner_cmp(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)(*(dr_scratch *const *)x)->owner;
    uintptr_t b = (uintptr_t)(*(dr_scratch *const *)y)->owner;
    return (a > b) - (a < b);
}

/* the buffers for ancestors' ext storage that the kids of h left (the
   threads' lists in h->acc, and a kid's own where it had no slot) into
   that storage as the forking task sees it (s); then back to the spares */
static void add_bufs(dr_par *P, dr_hist *h, dr_sweep *s)
{
    dr_tape *R = P->pool.root;
    dr_scratch **lists = h->acc ? (dr_scratch **)h->acc->data : NULL;
    size_t nb = 0;
    for (size_t i = 0; i < h->n; i++)
        for (dr_scratch *b = h->kids[i].log.bufs; b; b = b->next)
            nb++;
    for (size_t i = 0; lists && i < h->nacc; i++)
        for (dr_scratch *b = lists[i]; b; b = b->next)
            nb++;
    dr_scratch *tb = nb ? dr__scratch_take(R, nb) : NULL;
    dr_scratch **all = tb ? (dr_scratch **)tb->data : NULL;
    size_t k = 0;
    for (size_t i = 0; i < h->n + h->nacc; i++) {
        dr_scratch **l = i < h->n ? &h->kids[i].log.bufs
                         : lists  ? &lists[i - h->n]
                                  : NULL;
        if (!l)
            break;
        for (dr_scratch *b = *l, *nx; b; b = nx) {
            nx = b->next;
            if (all)
                all[k++] = b;
            else
                dr__scratch_give(R, b);
        }
        *l = NULL;
    }
    if (h->acc)
        dr__scratch_give(R, h->acc);
    h->acc = NULL;
    h->nacc = 0;
    if (!nb)
        return;
    if (!all) {
        dr__fail(R, DR_ENOMEM);
        return;
    }
    qsort(all, nb, sizeof *all, owner_cmp);
    for (size_t g0 = 0, g1; g0 < nb; g0 = g1) {
        for (g1 = g0 + 1; g1 < nb && all[g1]->owner == all[g0]->owner;)
            g1++;
        dr_ext *e = all[g0]->owner;
        merge_job j = {NULL, false, all + g0, g1 - g0};
        size_t len = 0;
        j.dst = e->acc_into(e, s, &j.fresh, &len);
        if (j.dst && len) {
            if (len * j.m >= ((size_t)1 << 15))
                dr__par_for(P, len, merge_range, &j);
            else
                merge_range(&j, 0, len);
        }
        for (size_t i = g0; i < g1; i++)
            dr__scratch_give(R, all[i]);
    }
    dr__scratch_give(R, tb);
}

/* before the kids of h run side by side: the threads' lists of buffers
   for ancestors' arrays (none: each kid keeps its own) */
static void acc_open(dr_par *P, dr_hist *h)
{
    dr_tape *R = P->pool.root;
    size_t n = 2 * (size_t)R->threads + 2; /* dr__slots_open's count */
    h->acc = dr__scratch_take(R, n);
    h->nacc = h->acc ? n : 0;
    if (h->acc)
        memset(h->acc->data, 0, n * sizeof(dr_scratch *));
}

static void sweep_job(dr_par *P, dr_chunk *c, int64_t lo, bool atomic,
                      dr_anc_log *log)
{
    if (!c)
        return;
    dr_sweep s = {P->adj, P->pool.root, atomic, lo, log, NULL};
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
    dr_anc_log log = {NULL, NULL, 0, 0, NULL, NULL, NULL};
    /* this thread's list for the fork's buffers, if it has a slot of its
       own (slot 0 may be several threads') */
    unsigned me = dr__slot(pool->root);
    dr_hist *h = k->owner;
    if (me != 0 && me < h->nacc)
        log.bufs_at = (dr_scratch **)h->acc->data + me;
    if (me != 0 && me == h->fork_slot)
        log.direct = h->fork_s;
    TR_T0();
    resolve(pool->root->parallel, k->chunk, k->hist, k->owner->mark, true,
            &log);
    k->log = log;
    TR_EVENT(TR_KID, dr__slot(pool->root), k->task.home);
    __atomic_store_n(&k->swept, 1, __ATOMIC_RELEASE);
}

/*
 * The kids' logs into the adjoints (or, for ids below the forking task's
 * own, into its log: as dr__acc puts any add of that task), the last kid's
 * first, each in its order.  The forking thread adds a kid's log in as
 * soon as the kids after it are added and it is done, while it waits for
 * the others (merge_ready is its poll): with many kids most of the adding
 * overlaps their sweeps instead of following them.
 */
typedef struct merger {
    dr_par *P;
    dr_hist *h;
    size_t next;  /* kids 0 .. next-1 are not added in yet */
    dr_sweep s;   /* the forking task's */
} merger;

static void merge_log(merger *m, dr_anc_log *L)
{
    if (!L->first)
        return;
    for (dr_scratch *b = L->first; b; b = b->next) {
        const double *e = b->data;
        size_t n = dr__log_entries(L, b);
        for (size_t j = 0; j < n; j++)
            dr__acc(&m->s, (int64_t)e[2 * j], e[2 * j + 1]);
    }
    dr__blocks_give(m->s.tape, L->first, L->last);
    *L = (dr_anc_log){NULL, NULL, 0, 0, L->bufs, NULL, NULL};
}

static void merge_ready(void *ctx)
{
    merger *m = ctx;
    while (m->next > 0) {
        dr_kid *k = &m->h->kids[m->next - 1];
        if (!dr__kid_empty(k) && !__atomic_load_n(&k->swept, __ATOMIC_ACQUIRE))
            return;
        merge_log(m, &k->log);
        m->next--;
    }
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
            acc_open(P, h);
            for (size_t i = 0; i < h->n; i++)
                h->kids[i].swept = 0;
            merger m = {P, h, h->n, {P->adj, P->pool.root, atomic, lo, log, NULL}};
            h->fork_s = &m.s;
            h->fork_slot = me;
            dr__kids_run(P, h, one, true, run_kid, merge_ready, &m);
            TR_T0();
            merge_ready(&m); /* every kid is done: the rest */
            h->fork_s = NULL;
            h->fork_slot = 0;
            add_bufs(P, h, &m.s);
            TR_EVENT(TR_LOGS, dr__slot(P->pool.root), 0);
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
