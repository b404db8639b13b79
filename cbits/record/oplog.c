/*
 * oplog.c - the tape's order and its second-order log (record.h, "second
 * order"): what each node recorded at order 2 was made from.
 */
#include "record/record.h"

#include <stdint.h>

dr_status dr_tape_set_order(dr_tape *t, int order)
{
    if (!t || t->root != t || (order != 1 && order != 2))
        return DR_EINVAL;
    /* order 2 cannot follow a recorder or a job graph: neither logs */
    if (order == 2 && (t->state != 0 || t->hist))
        return DR_EBUSY;
    t->order = (unsigned)order;
    return DR_OK;
}

int dr_tape_order(const dr_tape *t)
{
    if (!t)
        return 0;
    return t->root->order > 1 ? 2 : 1;
}

dr_idx dr_tape_mark(const dr_tape *t)
{
    return t ? t->base + t->next : DR_NONE;
}

/* room for the entry of relative id r, the ids skipped since the last
   entry marked as gaps */
static bool reserve(dr_tape *t, int64_t r)
{
    dr_tape *R = t->root;
    if ((uint64_t)r >= R->oplog_cap) {
        size_t cap = R->oplog_cap ? R->oplog_cap : 256;
        while (cap <= (uint64_t)r) {
            if (cap > SIZE_MAX / sizeof(dr_oplog) / 2)
                return false;
            cap *= 2;
        }
        dr_oplog *p = dr__malloc(cap * sizeof *p);
        if (!p)
            return false;
        if (R->oplog_n > 0)
            memcpy(p, R->oplog, (size_t)R->oplog_n * sizeof *p);
        dr__free(R->oplog);
        dr__bytes_add(R, (ptrdiff_t)((cap - R->oplog_cap) * sizeof *p));
        R->oplog = p;
        R->oplog_cap = cap;
    }
    if (R->oplog_n < r)
        memset(R->oplog + R->oplog_n, 0,
               (size_t)(r - R->oplog_n) * sizeof(dr_oplog)); /* DR_OPC_GAP */
    if (R->oplog_n <= r)
        R->oplog_n = r + 1;
    return true;
}

void dr__oplog(dr_tape *t, dr_idx id, int op, double x, double y, double v,
               dr_idx a, dr_idx b)
{
    int64_t r, ra = -1, rb = -1;
    if (!dr__rel_arg(t, id, &r) || r < 0)
        return;
    if (a != DR_NONE)
        dr__rel_arg(t, a, &ra);
    if (b != DR_NONE)
        dr__rel_arg(t, b, &rb);
    if (!reserve(t, r)) {
        dr__fail(t, DR_ENOMEM);
        return;
    }
    dr_oplog *e = &t->root->oplog[r];
    e->x = x;
    e->y = y;
    e->v = v;
    e->ra = ra;
    e->rb = rb;
    e->op = op;
}
