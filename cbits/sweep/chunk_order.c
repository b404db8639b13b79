/*
 * chunk_order.c - a job's chunks visited oldest first (sweep.h), for the
 * passes that run forward through a job: the tangent sweep and replay.
 *
 * A job's chunks are linked newest first.  They are taken in batches from
 * the oldest end, each batch found by walking from the newest: no
 * allocation, and the walks cost (chunks / BATCH) * chunks steps, nothing
 * beside the nodes (a chunk holds up to DR_CHUNK_MAX of them).
 */
#include "sweep/sweep.h"

#define BATCH 256

dr_status dr__chunks_oldest_first(dr_chunk *newest,
                                  dr_status (*visit)(dr_chunk *, void *),
                                  void *ctx)
{
    size_t total = 0;
    for (dr_chunk *c = newest; c; c = c->prev)
        total++;
    dr_chunk *buf[BATCH];
    size_t done = 0; /* oldest chunks visited */
    while (done < total) {
        size_t left = total - done; /* chunks 0 .. left-1, newest first */
        size_t lo = left > BATCH ? left - BATCH : 0;
        dr_chunk *c = newest;
        for (size_t i = 0; i < lo; i++)
            c = c->prev;
        size_t nb = 0;
        for (; nb < left - lo; c = c->prev)
            buf[nb++] = c;
        for (size_t i = nb; i-- > 0;) {
            dr_status st = visit(buf[i], ctx);
            if (st != DR_OK)
                return st;
        }
        done += nb;
    }
    return DR_OK;
}
