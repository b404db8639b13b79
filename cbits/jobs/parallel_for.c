/*
 * parallel_for.c - a range of work split into pieces on the worker pool
 * (dr__par_for), and what uses it below the jobs: the zero hook
 * (tape/tape.h), which sets the adjoint (or tangent) slots of every id to
 * zero before a sweep.  On a tape of millions of ids that is a memset of
 * tens of megabytes, which one thread does at a fraction of the memory
 * bandwidth the cores have together; left serial, it would bound the
 * speed-up of the parallel sweep that follows (Amdahl).
 */
#include "jobs/jobs.h"

#define MAX_PIECES 64

typedef struct piece {
    dr_task task; /* first: the pool hands it back as a dr_task */
    void (*fn)(void *ctx, size_t lo, size_t hi);
    void *ctx;
    size_t lo, hi;
} piece;

static void run_piece(dr_task *task, dr_pool *pool)
{
    (void)pool;
    piece *z = (piece *)task;
    z->fn(z->ctx, z->lo, z->hi);
}

void dr__par_for(dr_par *P, size_t n, void (*fn)(void *ctx, size_t lo, size_t hi),
                 void *ctx)
{
    dr_tape *R = P->pool.root;
    unsigned k = R->threads < MAX_PIECES ? R->threads : MAX_PIECES;
    if (k < 2 || n < 16 || !dr__pool_ensure(&P->pool)) {
        fn(ctx, 0, n);
        return;
    }
    /* pieces of whole cache lines (8 doubles), the last takes the rest */
    size_t step = (n / k + 7) & ~(size_t)7;
    piece z[MAX_PIECES];
    size_t pending = 0;
    unsigned used = 0;
    for (size_t off = 0; off < n && used < k; used++) {
        size_t len = used + 1 == k || n - off < step ? n - off : step;
        z[used] = (piece){{NULL, run_piece, &pending, DR_HOME_NONE},
                          fn, ctx, off, off + len};
        off += len;
    }
    dr_task *head = NULL;
    for (unsigned i = used; i-- > 1;) {
        z[i].task.qnext = head;
        head = &z[i].task;
    }
    dr__pool_run(&P->pool, head, used - 1, &pending, &z[0].task, NULL, NULL);
}

static void zero_range(void *ctx, size_t lo, size_t hi)
{
    memset((double *)ctx + lo, 0, (hi - lo) * sizeof(double));
}

void dr__zero_split(dr_tape *R, double *p, size_t n)
{
    if (R->parallel)
        dr__par_for(R->parallel, n, zero_range, p);
    else
        memset(p, 0, n * sizeof(double));
}
