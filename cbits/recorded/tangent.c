/*
 * tangent.c - the tangent pass of part of a tape, recorded as operations
 * on the same tape (dr_tangent_record): forward mode whose result is itself
 * differentiable, which is what second derivatives and nested derivatives
 * are made of.  Each node's tangent is the sum of its partials times its
 * arguments' tangents, the partials written as operations on the values
 * the node was made from (its entry in the second-order log).  While the
 * tape is of order 2 those operations are logged in turn, so a tangent can
 * be taken of a tangent, to any depth.
 */
#include "recorded/recorded_ops.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct pass {
    dr_rpass rp;          /* for extended nodes' rules (first: a cast) */
    dr_tape *t;
    int64_t lo, hi;       /* the relative ids replayed                 */
    dr_real *tan;         /* tangents of lo .. hi                      */
    bool *seeded;         /* ... of which these are given, not replayed */
    size_t nb;            /* seeds before lo, by increasing rel         */
    rel_value *before;    /* ... with their tangents (given ones summed) */
} pass;

static dr_real tangent_of(const pass *p, int64_t r)
{
    if (r >= p->lo && r <= p->hi)
        return p->tan[r - p->lo];
    if (r < 0 || p->nb == 0)
        return ZERO;
    const rel_value *b = find_rel(p->before, p->nb, r);
    return b ? b->v : ZERO;
}

static dr_real rp_get(dr_rpass *rp, int64_t r)
{
    return tangent_of((const pass *)(void *)rp, r);
}

static dr_real replay_one(pass *p, int64_t r, const dr_oplog *e)
{
    dr_tape *t = p->t;
    switch (e->op) {
    case DR_OPC_GAP:
    case DR_OPC_INPUT:
        return ZERO;
    case DR_OPC_EXT: { /* (dr__rules_cover: it has the hook) */
        dr_ext *x = dr__oplog_ext(e);
        return x->tangent_record(x, &p->rp);
    }
    case DR_OPC_LINEAR:
        return plus(t, term(t, K(e->x), tangent_of(p, e->ra)),
                    term(t, K(e->y), tangent_of(p, e->rb)));
    case DR_OPC_NARY:
    case DR_OPC_PROG: { /* (linear: constant partials) */
        size_t n;
        const int64_t *args;
        const double *ps;
        if (!dr__oplog_nary(e, &n, &args, &ps))
            return ZERO;
        dr_real s = ZERO;
        for (size_t i = 0; i < n; i++)
            s = plus(t, s, term(t, K(ps[i]), tangent_of(p, args[i])));
        return s;
    }
    case DR_OPC_SUMN: { /* linear, partials 1: the sum of the terms'
                           tangents, as one n-ary sum again (chunks of
                           them, from a buffer on the stack) */
        size_t n;
        const int64_t *args;
        const double *ps;
        if (!dr__oplog_nary(e, &n, &args, &ps))
            return ZERO;
        dr_real buf[64], s = ZERO;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            dr_real d = args[i] >= 0 ? tangent_of(p, args[i]) : ZERO;
            if (is_zero(d))
                continue;
            if (k == 64) {
                s = dr_sumn(t, k, buf);
                k = 0;
                buf[k++] = s;
            }
            buf[k++] = d;
        }
        return k == 0 ? ZERO : k == 1 ? buf[0] : dr_sumn(t, k, buf);
    }
    case DR_OPC_select: /* the side chosen, with partial 1 */
        return tangent_of(p, e->aux > 0 ? e->ra : e->rb);
    default: {
        dr_real da = tangent_of(p, e->ra), db = tangent_of(p, e->rb);
        if (is_zero(da) && is_zero(db))
            return ZERO;
        dr_real a = value_node(t, e->ra, e->x), b = value_node(t, e->rb, e->y);
        dr_real c = value_node(t, r, e->v), pa, pb;
        partials(t, e->op, a, b, c, &pa, &pb);
        return plus(t, term(t, pa, da), term(t, pb, db));
    }
    }
}

/* the seeds' relative ids, every id and tangent checked, and every node
   from lo to hi with a rule (or seeded): nothing is recorded before this */
static dr_status check_pass(const dr_tape *t, int64_t lo, int64_t hi, size_t k,
                            const dr_idx *seed_ids, const dr_real *seeds,
                            int64_t *rel, bool *seeded)
{
    int64_t unused;
    for (size_t i = 0; i < k; i++)
        if (!dr__rel(t, seed_ids[i], &rel[i]) ||
            !dr__rel(t, seeds[i].idx, &unused))
            return DR_EINVAL;
    for (size_t i = 0; i < k; i++)
        if (rel[i] >= lo && rel[i] <= hi)
            seeded[rel[i] - lo] = true;
    return dr__rules_cover(t, lo, hi, seeded, false);
}

/* the seeds into p: those in the range into p->tan, the others into
   p->before, sorted; a node seeded more than once takes the sum */
static void place_seeds(pass *p, size_t k, const int64_t *rel,
                        const dr_real *seeds)
{
    dr_tape *t = p->t;
    for (int64_t r = p->lo; r <= p->hi; r++)
        if (p->seeded[r - p->lo])
            p->tan[r - p->lo] = ZERO;
    size_t nb = 0;
    for (size_t i = 0; i < k; i++) {
        if (rel[i] >= p->lo && rel[i] <= p->hi) {
            dr_real *d = &p->tan[rel[i] - p->lo];
            *d = plus(t, *d, seeds[i]);
        } else if (rel[i] >= 0) {
            p->before[nb++] = (rel_value){rel[i], seeds[i]};
        }
    }
    sort_by_rel(p->before, nb);
    size_t m = 0;
    for (size_t i = 0; i < nb; i++)
        if (m && p->before[m - 1].rel == p->before[i].rel)
            p->before[m - 1].v = plus(t, p->before[m - 1].v, p->before[i].v);
        else
            p->before[m++] = p->before[i];
    p->nb = m;
}

dr_status dr__tangent_record(dr_tape *t, dr_idx from, size_t k,
                            const dr_idx *seed_ids, const dr_real *seeds,
                            dr_real y, dr_real *out)
{
    if (!out)
        return DR_EINVAL;
    *out = ZERO;
    if (!t || (t->state & DR_ST_DEAD) || (k && (!seed_ids || !seeds)))
        return DR_EINVAL;
    int64_t lo, hi;
    dr_status ready = dr__recorded_range(t, from, y, &lo, &hi);
    if (ready != DR_OK)
        return ready;
    if (k > SIZE_MAX / (sizeof(int64_t) + sizeof(rel_value)))
        return DR_ENOMEM;
    size_t span = hi >= lo ? (size_t)(hi - lo + 1) : 0;
    if (span > SIZE_MAX / (sizeof(dr_real) + sizeof(bool)))
        return DR_ENOMEM;
    pass_arrays a;
    dr_status st = DR_ENOMEM;
    bool got = pass_arrays_get(&a, k, span);
    int64_t *rel = a.rel;
    pass p = {{t, rp_get, NULL, NULL}, t, lo, hi, a.val, a.mark, 0, a.before};
    if (got)
        st = check_pass(t, lo, hi, k, seed_ids, seeds, rel, p.seeded);
    if (st == DR_OK && hi >= 0) {
        /* a failure from here on (memory) takes the recorded nodes off
           again on a root handle: a failed call changes nothing.  A child
           handle keeps them (its chunks and ids are shared with running
           siblings): nodes no id was returned of, which nothing uses */
        bool root = t->root == t;
        dr_tape_pos pos;
        if (root)
            dr__tape_save(t, &pos);
        place_seeds(&p, k, rel, seeds);
        for (int64_t r = lo; r <= hi; r++)
            if (!p.seeded[r - lo]) {
                /* a copy: recording the tangent may move the log */
                dr_oplog e = *dr__oplog_at(t, r);
                p.tan[r - lo] = replay_one(&p, r, &e);
            }
        *out = tangent_of(&p, hi);
        st = t->status;
        if (st != DR_OK) {
            if (root)
                dr__tape_restore(t, &pos);
            t->status = DR_OK;
            *out = ZERO;
        }
    }
    pass_arrays_free(&a);
    return st;
}
