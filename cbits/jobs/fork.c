/*
 * fork.c - fork and join (thesis section 3.10): child recording handles,
 * the job graph they leave behind (jobs.h), lookups in it, and the jobs
 * layer's hooks on the tape.
 *
 * dr_fork ends the current job of a handle: it saves the job (its chunks
 * and history) in a fork record, hands out one child handle per child task,
 * and refuses recording on the parent until dr_join.  A child handle
 * records on its own chunks, whose id ranges come from the tape's shared
 * atomic counter, so ids of different jobs never overlap and an id stays
 * valid (and names the same node) everywhere it may be used.  dr_join
 * stores each child task's final job in the fork record and starts a
 * continuation job whose history is that record.  dr_fork_run runs the
 * child tasks on the worker pool (pool.c).
 */
#include "jobs/jobs.h"

#include <stdint.h>
#include <unistd.h>

#define MAX_THREADS 1024u

static void release(dr_tape *R);

/* the lower layers reach the jobs through these (tape.h) */
static const dr_tape_hooks hooks = {release, dr__sweep_forks,
                                    dr__forward_forks, dr__replay_forks,
                                    dr__zero_split};

/* the jobs state of root R, made at its first fork */
static dr_par *par_get(dr_tape *R)
{
    if (R->parallel)
        return R->parallel;
    if (!dr__sharing_start(R))
        return NULL;
    dr_par *P = dr__malloc(sizeof *P);
    if (!P)
        return NULL;
    memset(P, 0, sizeof *P);
    if (!dr__pool_init(&P->pool, R)) {
        dr__free(P);
        return NULL;
    }
    R->parallel = P;
    R->hooks = &hooks;
    dr__bytes_add(R, (ptrdiff_t)sizeof *P);
    return P;
}

/* a kid's task in dr_fork_run: the user's function on its handle */
static void run_fn(dr_task *task, dr_pool *pool)
{
    (void)pool;
    dr_kid *k = (dr_kid *)task;
    k->owner->fn(k->handle, k->i, k->owner->ctx);
}

static dr_tape *take_handle(dr_par *P, dr_tape *R)
{
    /* allocations from child handles are made under the lock, so a user
       allocator is never called by two threads of one tape at once */
    dr__lock(R);
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
    dr__unlock(R);
    return h;
}

static void give_handles(dr_par *P, dr_hist *H, size_t n)
{
    dr__lock(P->pool.root);
    for (size_t i = 0; i < n; i++) {
        dr_tape *h = H->kids[i].handle;
        if (h) {
            h->hnext = P->hfree;
            P->hfree = h;
        }
        H->kids[i].handle = NULL;
    }
    dr__unlock(P->pool.root);
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
        /* a job records at the order of the job that forked it, so that
           a program recorded for replay stays one with its forks */
        if (t->order > 1)
            dr__oplog_child(h, t->order, H->mark);
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
    H->blas_solo = H->rec_solo = true;
    return DR_OK;
}

/* each chunk of the task whose last job is c with history h, through fn;
   false as soon as fn says so */
static bool task_chunks(dr_chunk *c, dr_hist *h, dr_tape *t, const dr_tape *kid,
                        bool (*fn)(dr_tape *, const dr_tape *, dr_chunk *))
{
    for (;;) {
        for (; c; c = c->prev)
            if (!fn(t, kid, c))
                return false;
        if (!h)
            return true;
        for (size_t i = 0; i < h->n; i++)
            if (!task_chunks(h->kids[i].chunk, h->kids[i].hist, t, kid, fn))
                return false;
        c = h->before_chunk;
        h = h->before_hist;
    }
}

static bool adopt_chunk(dr_tape *t, const dr_tape *kid, dr_chunk *c)
{
    return dr__oplog_adopt(t, kid, c->first, c->n);
}

/* a parent of order 2 takes the log entries and guards of its children's
   nodes (record.h, "fork-join at order 2"); of order 1 it keeps none, as
   for its own nodes.  Memory running out fails t: its log is then not
   whole, and the tape is not used again before a clear. */
static void adopt_logs(dr_tape *t, dr_hist *H, int64_t end)
{
    if (t->order < 2)
        return;
    bool ok = dr__oplog_cover(t, H->mark, end);
    for (size_t i = 0; ok && i < H->n; i++) {
        dr_kid *k = &H->kids[i];
        ok = task_chunks(k->chunk, k->hist, t, k->handle, adopt_chunk) &&
             dr__guards_adopt(t, k->handle);
    }
    if (!ok)
        dr__fail(t, DR_ENOMEM);
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
    }
    int64_t end = __atomic_load_n(&t->root->reserved, __ATOMIC_RELAXED);
    adopt_logs(t, H, end);
    for (size_t i = 0; i < H->n; i++) {
        dr_kid *k = &H->kids[i];
        dr_tape *h = k->handle;
        t->len += h->len;
        if (h->exts) {
            dr_ext *e = h->exts;
            while (e->next)
                e = e->next;
            e->next = t->exts;
            t->exts = h->exts;
        }
        if (h->owned) {
            dr_owned *o = h->owned;
            while (o->next)
                o = o->next;
            o->next = t->owned;
            t->owned = h->owned;
        }
        if (h->status != DR_OK)
            dr__fail(t, h->status); /* first error in child order */
        h->state = DR_ST_DEAD;
        dr__logs_free(h); /* its nodes are the parent's now */
        h->cur = h->end = NULL;
        h->chunk = NULL;
        h->hist = NULL;
        h->exts = NULL;
        h->owned = NULL;
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
    t->next = end;
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
    if (n > 1 && dr__pool_ensure(&P->pool)) {
        H->rec_solo = true;
        dr__blas_solo_hold();
        dr__kids_run(P, H, 0, false, run_fn, NULL, NULL);
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
        dr__pool_stop(&t->parallel->pool);
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

/* the release hook: dr_tape_free, before the storage goes */
static void release(dr_tape *R)
{
    dr_par *P = R->parallel;
    if (!P)
        return;
    dr__pool_destroy(&P->pool);
    /* forks never joined give their BLAS holds back */
    if ((R->state & DR_ST_FORKED) && R->fork->blas_solo)
        dr__blas_solo_release();
    for (dr_tape *h = P->hall; h; h = h->hall)
        if ((h->state & DR_ST_FORKED) && h->fork->blas_solo)
            dr__blas_solo_release();
    for (dr_tape *h = P->hall; h;) {
        dr_tape *nx = h->hall;
        dr__owned_release(h->owned, NULL); /* children never joined */
        dr__logs_free(h);
        dr__free(h);
        h = nx;
    }
    dr__free(P);
    R->parallel = NULL;
    R->hooks = NULL;
}
