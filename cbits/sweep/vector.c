/*
 * vector.c - vector mode: k values per node side by side (x[id * k + j]) in
 * scratch storage, so one pass over the tape serves k directions; and the
 * k-wide reverse sweep.  The k-wide forward sweep is forward.c's loop.
 * Nothing here touches the tape's own adjoints or tangents (dr_adjoint and
 * dr_tangent read the same before and after).
 */
#include "sweep/sweep.h"

#include <math.h>
#include <stdint.h>

double *dr__vec_take(dr_tape *t, size_t k, dr_scratch **sb)
{
    uint64_t ids = (uint64_t)dr__id_limit(t) + 1; /* and the sink */
    if (k == 0 || ids > SIZE_MAX / sizeof(double) / k)
        return NULL;
    dr_scratch *b = dr__scratch_take(t, (size_t)ids * k);
    if (!b)
        return NULL;
    /* every slot zero: seeds add in, and the forward loop adds into each
       node's slot */
    memset(b->data, 0, (size_t)ids * k * sizeof(double));
    *sb = b;
    return b->data + k;
}

bool dr__reverse_vec_ok(const dr_tape *t)
{
    for (const dr_ext *e = t->exts; e; e = e->next)
        if (!e->reverse_vec)
            return false;
    return true;
}

/*
 * The k-wide reverse loop: as dr__sweep_chunks for each of the k columns.
 * A column whose adjoint is zero adds nothing (the scalar sweep skips such
 * nodes), so an infinite partial of an unreached node makes no NaN.  No
 * register carry as in the scalar loop: the k-wide loads and stores of a
 * node are independent of each other, and the chain through memory is
 * spread over k lanes.
 */
static inline dr_status chunks_rev(dr_chunk *c, dr_vsweep *s, const size_t k)
{
    double *A = s->adj;
    for (; c; c = c->prev) {
        const dr_node *nodes = c->nodes;
        const size_t lead = c->lead;
        int64_t id = c->first + (int64_t)c->n;
        for (size_t i = c->n; i-- > lead;) {
            const dr_node *p = &nodes[i];
            --id;
            int32_t a = p->a;
            const double *g = A + id * (int64_t)k;
            if (DR_UNLIKELY(a <= 0)) {
                if (a == DR_EXT_TAG) {
                    dr_ext *e = dr__node_ext(p);
                    if (!e->reverse_vec)
                        return DR_ENOTSUP;
                    e->reverse_vec(e, s, g);
                }
                continue;
            }
            int64_t ib = p->b ? id - p->b : -1;
            const double da = p->da, db = p->db;
            /* pa and pb may be the same slots (x * x): each column's two
               adds stay in order */
            double *pa = A + (id - a) * (int64_t)k, *pb = A + ib * (int64_t)k;
            if (DR_LIKELY(isfinite(da) && isfinite(db))) {
                /* finite partials: a zero column adds a zero product,
                   which changes nothing */
#if VEC2
                if (k % 2 == 0) {
                    const v2d va = {da, da}, vb = {db, db};
#pragma GCC unroll 8
                    for (size_t j = 0; j < k; j += 2) {
                        v2d gj = load2(g + j);
                        store2(pa + j, load2(pa + j) + va * gj);
                        store2(pb + j, load2(pb + j) + vb * gj);
                    }
                    continue;
                }
#endif
                for (size_t j = 0; j < k; j++) {
                    double gj = g[j];
                    pa[j] += da * gj;
                    pb[j] += db * gj;
                }
                continue;
            }
            for (size_t j = 0; j < k; j++) {
                double gj = g[j];
                pa[j] += gj != 0.0 ? da * gj : 0.0;
                pb[j] += gj != 0.0 ? db * gj : 0.0;
            }
        }
    }
    return DR_OK;
}

dr_status dr__reverse_vec(dr_tape *t, dr_vsweep *s)
{
    if (t->chunk)
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
    dr_status st;
    /* fixed widths unrolled: dr__pass_k's reverse widths are even (or 1),
       and the Jacobian's blocks at most BLOCK (10) */
    switch (s->k) {
    case 1: st = chunks_rev(t->chunk, s, 1); break;
    case 2: st = chunks_rev(t->chunk, s, 2); break;
    case 4: st = chunks_rev(t->chunk, s, 4); break; /* a 3-output Jacobian */
    case 6: st = chunks_rev(t->chunk, s, 6); break;
    case 8: st = chunks_rev(t->chunk, s, 8); break;
    case 10: st = chunks_rev(t->chunk, s, 10); break;
    default: st = chunks_rev(t->chunk, s, s->k); break;
    }
    return st != DR_OK ? st : dr_tape_status(t);
}

dr_status dr__pass_k(dr_tape *t, bool forward, size_t k, dr_pass_io seed,
                     const double *S, dr_pass_io read, double *R,
                     bool arr_seeds)
{
    /* the reverse sweep keeps an odd number of columns (but one) in an
       even width, the last column zero throughout, so that every node's
       update goes two columns at a time (VEC2): a 3-output Jacobian costs
       two vector updates a node instead of three scalar ones */
    const size_t w = !forward && VEC2 && k > 1 && k % 2 ? k + 1 : k;
    dr_scratch *sb;
    double *V = dr__vec_take(t, w, &sb);
    if (!V)
        return DR_ENOMEM;
    const int64_t kk = (int64_t)w;
    for (size_t i = 0; i < seed.n; i++) {
        int64_t r = dr__rel_of(t, seed.ids[i].idx);
        if (r >= 0)
            for (size_t j = 0; j < k; j++)
                V[r * kk + (int64_t)j] += S[i * seed.stride_id + j * seed.stride_dir];
    }
    dr_status st;
    if (forward) {
        dr_fsweep f = {V, k, t,
                       arr_seeds ? DR_ARR_SEEDS_TANGENT : DR_ARR_SEEDS_NONE};
        st = dr__forward_sweep(t, &f);
    } else {
        dr_vsweep v = {V, w, t};
        st = dr__reverse_vec(t, &v);
    }
    for (size_t c = 0; st == DR_OK && c < read.n; c++) {
        int64_t r = dr__rel_of(t, read.ids[c].idx);
        for (size_t j = 0; j < k; j++)
            R[c * read.stride_id + j * read.stride_dir] =
                r >= 0 ? V[r * kk + (int64_t)j] : 0.0;
    }
    dr__scratch_give(t, sb);
    return st;
}
