/*
 * statement.h - statements the caller's code evaluates
 * (dr_record_statement, dualrev/external.h), the parts replay reads.
 * At order 1 such a statement is a node of given partials.  At order 2 its
 * log entry is DR_OPC_NONE (no second-order rule, so every second-order
 * pass refuses it as it refuses any such node) with aux DR_AUX_STATEMENT
 * and, in the bytes of x, a record from which replay calls the caller's
 * function again and writes the node's value and partials.  Not installed.
 */
#ifndef DR_RECORD_STATEMENT_H
#define DR_RECORD_STATEMENT_H

#include "record/record.h"

#include <stdint.h>
#include <string.h>

/* the aux of a DR_OPC_NONE entry that replays as a statement */
#define DR_AUX_STATEMENT 1

/* the record (in the arena): the function, its n leaves (the relative
   id, -1 for a constant), their values at the last recording or replay
   (a constant's for good), and room for the partials by leaf; the node's
   arguments are the k active leaves in order, each with its partial (a
   repeated leaf is an argument each time) */
typedef struct dr_stmt {
    dr_statement_fn f;
    const void *ctx;
    uint32_t n, k;
    int64_t leaf[];
} dr_stmt;

static inline double *dr__stmt_xs(const dr_stmt *s)
{
    return (double *)(void *)((int64_t *)s->leaf + s->n);
}
static inline double *dr__stmt_d(const dr_stmt *s)
{
    return dr__stmt_xs(s) + s->n;
}

/* the record of a log entry that replays as a statement, else NULL */
static inline dr_stmt *dr__oplog_stmt(const dr_oplog *e)
{
    if (e->op != DR_OPC_NONE || e->aux != DR_AUX_STATEMENT)
        return NULL;
    dr_stmt *s;
    memcpy(&s, &e->x, sizeof s);
    return s;
}

/* statement.c: the statement of entry e evaluated again at its leaves'
   values in the log: its value into e->v, its partials into node p (a
   node of two arguments or an n-ary record) */
DR_HIDDEN void dr__stmt_replay(const dr_oplog *log, dr_oplog *e, dr_node *p);

#endif /* DR_RECORD_STATEMENT_H */
