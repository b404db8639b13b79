/*
 * forward.c - the forward (tangent) pass: tangent storage, seeding, the
 * sweep over a job's chunks oldest node first, and reading tangents.  The
 * same loop carries k tangents per node side by side (vector mode,
 * drivers/jvp.c, drivers/jacobian.c), in scratch storage of the caller's.
 *
 * A node's tangent is its seed plus the sum of its partials times its
 * arguments' tangents.  As the reverse sweep skips nodes whose adjoint is
 * zero, a term whose argument's tangent is zero adds nothing, so an
 * infinite partial of an unperturbed argument never makes a NaN; then
 * forward and reverse agree wherever the reverse sweep is finite.
 */
#include "sweep/sweep.h"

#include <math.h>
#include <stdint.h>

/* ------------------------------------------------------------ storage */

/* make tan_raw cover every relative id handed out so far (as adjoints:
   zeroing of what was cleared is deferred to here) */
static dr_status tan_ensure(dr_tape *t)
{
    return dr__slots_ensure(t, &t->tan_raw, &t->tan_cap, &t->tan_valid);
}

bool dr__forward_ok(const dr_tape *t)
{
    for (const dr_ext *e = t->exts; e; e = e->next)
        if (!e->forward)
            return false;
    return true;
}

/* --------------------------------------------------------------- loops */

/* d * t, or 0 where the tangent t or the partial d is 0: the reverse sweep
   skips a node whose adjoint is 0, so 0 * inf never reaches a result there;
   skipping both zeros here gives the same Jacobian entries forward (a zero
   partial after an infinite tangent is the reverse sweep's zero adjoint
   before an infinite partial) */
static inline double term(double d, double t)
{
    return t != 0.0 && d != 0.0 ? d * t : 0.0;
}

/* One chunk, oldest node first.  The lead nodes are inputs recorded by
   dr_inputs, whose records are never written: they keep their seeds. */
static inline dr_status chunk_fwd(const dr_chunk *c, dr_fsweep *f,
                                  const size_t k)
{
    double *restrict T = f->tan;
    const dr_node *nodes = c->nodes;
    int64_t id = c->first + (int64_t)c->lead;
    for (size_t i = c->lead; i < c->n; i++, id++) {
        const dr_node *p = &nodes[i];
        int32_t a = p->a;
        if (DR_UNLIKELY(a <= 0)) {
            if (a == DR_EXT_TAG) {
                dr_ext *e = dr__node_ext(p);
                if (!e->forward)
                    return DR_ENOTSUP;
                e->forward(e, f);
            }
            continue; /* an input: keeps its seed */
        }
        /* one argument (b == 0): the zero slots before id 0 */
        int64_t ib = p->b ? id - p->b : -1;
        const double da = p->da, db = p->db;
        const double *ta = T + (id - a) * (int64_t)k, *tb = T + ib * (int64_t)k;
        double *to = T + id * (int64_t)k;
        if (DR_LIKELY(isfinite(da) && isfinite(db))) {
            /* finite partials: term's tests per lane are needed only for
               a zero partial, whose argument's tangent may be infinite; it
               reads the zero slots instead.  A finite partial times a zero
               tangent is a zero product, which adds what term's 0 adds (a
               node's slot starts at 0 and a sum from it is never -0) */
            const double *zero = T - (int64_t)k;
            if (da == 0.0)
                ta = zero;
            if (db == 0.0)
                tb = zero;
#if VEC2
            if (k % 2 == 0) {
                const v2d va = {da, da}, vb = {db, db};
#pragma GCC unroll 8
                for (size_t j = 0; j < k; j += 2)
                    store2(to + j, load2(to + j) + (va * load2(ta + j) + vb * load2(tb + j)));
                continue;
            }
#endif
            for (size_t j = 0; j < k; j++)
                to[j] += da * ta[j] + db * tb[j];
            continue;
        }
        for (size_t j = 0; j < k; j++)
            to[j] += term(da, ta[j]) + term(db, tb[j]);
    }
    return DR_OK;
}

/*
 * The scalar loop (k == 1) carries the tangent of the node before the
 * current one in a register: in a chain of operations each node reads the
 * tangent the node before it has just stored, from memory a store-to-load
 * forward on the loop's critical path once per node: a chain of 300 000
 * scalar steps took 2.65x a reverse sweep that way, 1.64x with the carry.
 * Only distance 1: the branch that picks the carry already mispredicts on
 * programs whose arguments are at random distances (such a mix of 10^6
 * operations went from 1.19x to 1.56x a reverse sweep), and testing more
 * distances would cost more such branches.  Memory always holds
 * the same values (an ext rule writes only its own node's tangent, read
 * back after it).
 */
static inline double tan_at(const double *T, int64_t id)
{
    return id >= 0 ? T[id] : 0.0;
}

/* the tangent of argument id - d (d > 0, or 0: none, the zero slot -1);
   d == 1 from the carry, a branch: a select would wait for the load */
static inline double arg_tan(const double *T, int64_t id, int32_t d, double r1)
{
    if (d == 1)
        return r1;
    return T[d ? id - d : -1];
}

static dr_status chunk_fwd1(const dr_chunk *c, dr_fsweep *f)
{
    double *restrict T = f->tan;
    const dr_node *nodes = c->nodes;
    int64_t id = c->first + (int64_t)c->lead;
    double r1 = tan_at(T, id - 1);
    for (size_t i = c->lead; i < c->n; i++, id++) {
        const dr_node *p = &nodes[i];
        int32_t a = p->a;
        double v;
        if (DR_UNLIKELY(a <= 0)) {
            if (a == DR_EXT_TAG) {
                dr_ext *e = dr__node_ext(p);
                if (!e->forward)
                    return DR_ENOTSUP;
                e->forward(e, f);
            }
            v = T[id]; /* an input keeps its seed */
        } else {
            double ta = arg_tan(T, id, a, r1);
            double tb = arg_tan(T, id, p->b, r1);
            v = T[id] + (term(p->da, ta) + term(p->db, tb));
            T[id] = v;
        }
        r1 = v;
    }
    return DR_OK;
}

/* the loop with k known at compile time for the widths the drivers use */
static dr_status chunk_fwd_k(const dr_chunk *c, dr_fsweep *f)
{
    switch (f->k) {
    case 1: return chunk_fwd1(c, f);
    case 2: return chunk_fwd(c, f, 2);
    case 4: return chunk_fwd(c, f, 4);
    case 8: return chunk_fwd(c, f, 8);
    case 10: return chunk_fwd(c, f, 10); /* dr_jacobian's blocks */
    case 16: return chunk_fwd(c, f, 16);
    default: return chunk_fwd(c, f, f->k);
    }
}

static dr_status visit_fwd(dr_chunk *c, void *f)
{
    return chunk_fwd_k(c, (dr_fsweep *)f);
}

dr_status dr__forward_job(dr_chunk *newest, dr_fsweep *f)
{
    return dr__chunks_oldest_first(newest, visit_fwd, f);
}

dr_status dr__forward_sweep(dr_tape *t, dr_fsweep *f)
{
    if (t->chunk)
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
    /* the jobs before the last join first (they are older), through the
       jobs layer's hook (a fork set it) */
    if (DR_UNLIKELY(t->hist != NULL)) {
        dr_status st = t->hooks->forward_history(t, f);
        if (st != DR_OK)
            return st;
    }
    dr_status st = dr__forward_job(t->chunk, f);
    return st != DR_OK ? st : dr_tape_status(t);
}

/* ------------------------------------------------------------- the API */

dr_status dr_tangent_seed(dr_tape *t, dr_idx id, double tangent)
{
    if (!t)
        return DR_EINVAL; /* before taking the address of its fields */
    return dr__slots_seed(t, &t->tan_raw, &t->tan_cap, &t->tan_valid, id,
                          tangent);
}

dr_status dr_forward(dr_tape *t)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    if (t->status != DR_OK)
        return t->status;
    /* refuse before anything is written (the sweep also stops at such a
       node, should a kind without a rule be missing from t->exts) */
    if (!dr__forward_ok(t))
        return DR_ENOTSUP;
    st = tan_ensure(t);
    if (st != DR_OK)
        return st;
    if (!t->tan_raw)
        return DR_OK; /* nothing was ever recorded */
    t->tan_raw[0] = 0.0;
    dr_fsweep f = {t->tan_raw + 1, 1, t, DR_ARR_SEEDS_TANGENT};
    return dr__forward_sweep(t, &f);
}

double dr_tangent(const dr_tape *t, dr_idx id)
{
    int64_t r;
    if (!t || t->root != t || !dr__rel(t, id, &r))
        return __builtin_nan("");
    return (r >= 0 && r < t->tan_valid) ? t->tan_raw[1 + r] : 0.0;
}

dr_status dr_tangents_clear(dr_tape *t)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    t->tan_valid = 0; /* zeroing is deferred to the next tan_ensure */
    return DR_OK;
}
