/*
 * oplog.c - the tape's order and its second-order log (log.h, "second
 * order"): what each node recorded at order 2 was made from.
 */
#include "log/log.h"

#include <stddef.h>
#include <stdint.h>

static bool reserve(dr_tape *t, int64_t from, int64_t r);

dr_status dr_tape_set_order(dr_tape *t, int order)
{
    if (!t || (t->state & DR_ST_DEAD) || (order != 1 && order != 2))
        return DR_EINVAL;
    /* a forked handle records nothing; an open recorder may hold nodes
       recorded at order 1 that the log would not see */
    if (order == 2 && (t->state & (DR_ST_FORKED | DR_ST_RECOPEN)))
        return DR_EBUSY;
    if (order == 2 && t->order < 2) {
        if (t->oplog_n == 0) {
            /* the log starts here: the nodes before it have no entry */
            t->oplog_lo = t->oplog_start = t->next;
        } else if (t->next > t->oplog_lo + t->oplog_n) {
            /* the nodes recorded at order 1 since the log's last entry
               have no rule: the log would otherwise take them for gaps
               (ids no node took), whose tangent is zero, and a Hessian
               through them would be wrong */
            int64_t from = t->oplog_lo + t->oplog_n;
            if (!reserve(t, from, t->next - 1))
                return DR_ENOMEM;
            for (int64_t r = from; r < t->next; r++) {
                dr_oplog *e = &t->oplog[r - t->oplog_lo];
                memset(e, 0, sizeof *e);
                e->op = DR_OPC_NONE;
            }
        }
    }
    t->order = (unsigned)order;
    return DR_OK;
}

int dr_tape_order(const dr_tape *t)
{
    if (!t)
        return 0;
    return t->order > 1 ? 2 : 1;
}

dr_idx dr_tape_mark(const dr_tape *t)
{
    return t ? t->base + t->next : DR_NONE;
}

/* p (keep bytes of it in use; NULL: a new block) as a block of bytes,
   under the root's lock while the tape is shared */
static void *log_grow(dr_tape *t, void *p, size_t keep, size_t bytes)
{
    bool shared = dr__shared(t);
    if (shared)
        dr__lock(t->root);
    void *q = dr__realloc(p, keep, bytes);
    if (shared)
        dr__unlock(t->root);
    return q;
}

void *dr__log_alloc(dr_tape *t, size_t bytes)
{
    return log_grow(t, NULL, 0, bytes);
}

void dr__log_free(dr_tape *t, void *p)
{
    bool shared = dr__shared(t);
    if (shared)
        dr__lock(t->root);
    dr__free(p);
    if (shared)
        dr__unlock(t->root);
}

/* A child's log begins at its first entry, r: the ids its siblings took
   before it are not its to hold (children run one after another would
   otherwise each hold entries for all the ones before).  The root's
   begins where its order was set, as the replay of a whole tape needs. */
static void log_begin(dr_tape *t, int64_t r)
{
    if (t->oplog_n == 0 && t->root != t && r > t->oplog_lo)
        t->oplog_lo = r;
}

/* room for the entries up to relative id r (r >= t->oplog_lo): the ids
   skipped since the last entry and before `from` marked as gaps, the
   entries from .. r left for the caller to write (from = r + 1: it writes
   none; zeroing entries about to be written was a tenth of recording at
   order 2) */
static bool reserve(dr_tape *t, int64_t from, int64_t r)
{
    int64_t i = r - t->oplog_lo;
    if ((uint64_t)i >= t->oplog_cap) {
        size_t cap = t->oplog_cap ? t->oplog_cap : 256;
        while (cap <= (uint64_t)i) {
            if (cap > SIZE_MAX / sizeof(dr_oplog) / 2)
                return false;
            cap *= 2;
        }
        dr_oplog *p = log_grow(t, t->oplog, (size_t)t->oplog_n * sizeof *p,
                               cap * sizeof *p);
        if (!p)
            return false;
        dr__bytes_add(t, (ptrdiff_t)((cap - t->oplog_cap) * sizeof *p));
        t->oplog = p;
        t->oplog_cap = cap;
    }
    if (t->oplog_n <= i) {
        int64_t w = from - t->oplog_lo; /* the first entry the caller writes */
        if (w > t->oplog_n)
            memset(t->oplog + t->oplog_n, 0,
                   (size_t)(w - t->oplog_n) * sizeof(dr_oplog)); /* DR_OPC_GAP */
        t->oplog_n = i + 1;
    }
    return true;
}

dr_oplog *dr__oplog(dr_tape *t, dr_idx id, int op, double x, double y,
                    double v, dr_idx a, dr_idx b)
{
    int64_t r, ra = -1, rb = -1;
    if (!dr__rel_arg(t, id, &r))
        return NULL;
    log_begin(t, r);
    if (r < t->oplog_lo)
        return NULL;
    if (a != DR_NONE)
        dr__rel_arg(t, a, &ra);
    if (b != DR_NONE)
        dr__rel_arg(t, b, &rb);
    if (!reserve(t, r, r)) {
        dr__fail(t, DR_ENOMEM);
        return NULL;
    }
    dr_oplog *e = &t->oplog[r - t->oplog_lo];
    e->x = x;
    e->y = y;
    e->v = v;
    e->ra = ra;
    e->rb = rb;
    e->op = op;
    e->aux = 0;
    return e;
}

void dr__oplog_inputs(dr_tape *t, int64_t r, size_t n, const double *values)
{
    if (n == 0)
        return;
    log_begin(t, r);
    if (r < t->oplog_lo)
        return;
    if (!reserve(t, r, r + (int64_t)n - 1)) {
        dr__fail(t, DR_ENOMEM);
        return;
    }
    dr_oplog *e = &t->oplog[r - t->oplog_lo];
    for (size_t i = 0; i < n; i++) {
        e[i].x = values ? 1.0 : 0.0;
        e[i].y = 0.0;
        e[i].v = values ? values[i] : 0.0;
        e[i].ra = e[i].rb = -1;
        e[i].op = DR_OPC_INPUT;
        e[i].aux = 0;
    }
}

/* the handle goes: its log and guards with it (a child handle at its
   join) */
void dr__logs_free(dr_tape *t)
{
    dr__log_free(t, t->oplog);
    if (t->oplog_cap)
        dr__bytes_add(t, -(ptrdiff_t)(t->oplog_cap * sizeof(dr_oplog)));
    dr__log_free(t, t->guards);
    if (t->guards_cap)
        dr__bytes_add(t, -(ptrdiff_t)(t->guards_cap * sizeof(dr_guard)));
    t->oplog = NULL;
    t->oplog_cap = 0;
    t->oplog_n = 0;
    t->oplog_lo = 0;
    t->oplog_start = 0;
    t->guards = NULL;
    t->guards_n = t->guards_cap = 0;
    t->order = 0;
}

const dr_oplog dr__gap_entry; /* DR_OPC_GAP, no arguments */

void dr__oplog_child(dr_tape *kid, unsigned order, int64_t mark)
{
    kid->order = order;
    kid->oplog_lo = kid->oplog_start = mark;
}

bool dr__oplog_cover(dr_tape *t, int64_t lo, int64_t end)
{
    log_begin(t, lo);
    return end <= t->oplog_lo || reserve(t, end, end - 1);
}

bool dr__oplog_adopt(dr_tape *t, const dr_tape *kid, int64_t first,
                     size_t n)
{
    if (n == 0)
        return true;
    if (first < t->oplog_lo || !reserve(t, first, first + (int64_t)n - 1))
        return false;
    dr_oplog *d = &t->oplog[first - t->oplog_lo];
    for (size_t i = 0; i < n; i++) {
        const dr_oplog *e = dr__oplog_at(kid, first + (int64_t)i);
        if (e && e->op != DR_OPC_GAP) {
            d[i] = *e;
        } else {
            /* a node the child recorded at order 1: no rule (a gap
               would read as a node whose tangent is zero) */
            memset(&d[i], 0, sizeof d[i]);
            d[i].op = DR_OPC_NONE;
            d[i].ra = d[i].rb = -1;
        }
    }
    return true;
}
