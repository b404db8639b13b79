/*
 * record.c - the recording entry points: inputs and nodes of given
 * partials (the slow paths of appending a node are push.c's).
 */
#include "record/record.h"

#include <stdint.h>

/* ------------------------------------------------------------- recording */

/* an input node of value v (logged for second order and replay, with
   whether v is its value) on t (not NULL) */
static inline dr_idx input_node(dr_tape *t, double v, bool known)
{
    dr_idx id;
    dr_node *p = t->cur;
    dr_chunk *c = t->chunk;
    /* (a cursor short of its end is in a chunk of its own job) */
    if (DR_LIKELY(p != t->end) && p == c->nodes + c->lead) {
        /* an input before any other node of its chunk: a leading input, as
           dr_input_range makes them, with no record to write or sweep */
        c->lead++;
        t->cur = p + 1;
        t->len++;
        id = t->base + t->next++;
    } else {
        id = dr__push(t, -1, 0.0, -1, 0.0);
    }
    if (dr__order2(t) && id != DR_NONE)
        dr__oplog_last(t, id, DR_OPC_INPUT, known ? 1.0 : 0.0, 0.0, v, DR_NONE,
                       DR_NONE);
    return id;
}

dr_real dr_input(dr_tape *t, double v)
{
    dr_real r = {v, DR_NONE};
    if (DR_LIKELY(t != NULL))
        r.idx = input_node(t, v, true);
    return r;
}

/* dr_input_range past its argument checks (n > 0), in line in dr_inputs:
   a small gradient's inputs are a good part of its recording; values
   (NULL: not given) are logged at order 2 */
static inline dr_status input_range(dr_tape *t, size_t n, dr_idx *first,
                                    const double *values)
{
    *first = DR_NONE;
    /* consecutive ids need one chunk: a new one if this one has less room */
    if ((size_t)(t->end - t->cur) < n && !dr__grow_n(t, n))
        return dr_tape_status(t);
    dr_node *p = t->cur;
    dr_chunk *c = t->chunk;
    if ((size_t)(p - c->nodes) == c->lead) {
        /* inputs at the start of a chunk: the sweep never visits them and
           lookups answer for them (dr__find_node), so their records are
           not even written; on a large tape that is half the recording
           traffic of a dot product */
        c->lead += n;
    } else {
        for (size_t i = 0; i < n; i++) {
            p[i].da = 0.0;
            p[i].db = 0.0;
            p[i].a = 0;
            p[i].b = 0;
        }
    }
    *first = t->base + t->next;
    t->cur = p + n;
    t->next += (int64_t)n;
    t->len += n;
    /* logged as inputs (not left as gaps) so that an input that ends the
       tape is not taken for a node without a rule */
    if (dr__order2(t))
        dr__oplog_inputs(t, *first - t->base, n, values);
    /* the inputs are recorded: a log that could not grow is the tape's
       sticky DR_ENOMEM, not this call's failure */
    return DR_OK;
}

dr_status dr_input_range(dr_tape *t, size_t n, dr_idx *first)
{
    if (!t || !first)
        return DR_EINVAL;
    *first = DR_NONE;
    return n == 0 ? DR_OK : input_range(t, n, first, NULL);
}

dr_status dr_inputs(dr_tape *t, size_t n, const double *values, dr_real *out)
{
    if (!t || (n && (!values || !out)))
        return DR_EINVAL;
    dr_idx first = DR_NONE;
    dr_status st = n == 0 ? DR_OK : input_range(t, n, &first, values);
    for (size_t i = 0; i < n; i++) {
        out[i].val = values[i];
        out[i].idx = st == DR_OK ? first + (dr_idx)i : DR_NONE;
    }
    return st;
}

dr_real dr_const(double v)
{
    dr_real r = {v, DR_NONE};
    return r;
}

dr_idx dr_record0(dr_tape *t)
{
    return t ? input_node(t, 0.0, false) : DR_NONE;
}

dr_idx dr_record1(dr_tape *t, dr_idx a, double da)
{
    return dr_record2(t, a, da, DR_NONE, 0.0);
}

dr_idx dr_record2(dr_tape *t, dr_idx a, double da, dr_idx b, double db)
{
    dr_idx id = t ? dr__rec2(t, a, da, b, db) : DR_NONE;
    /* a node of given partials is linear to second order */
    if (dr__order2(t) && id != DR_NONE)
        dr__oplog(t, id, DR_OPC_LINEAR, da, db, 0.0, a, b);
    return id;
}
