/*
 * push.c - the out-of-line part of appending a node (record.h): a new
 * chunk when the current one is full (taking the cursor back from an open
 * recorder first, recorder.c), extended nodes, and far nodes (two arguments
 * further back than a node's fields reach), which are n-ary nodes: the
 * n-ary node kind (its record and its reverse, forward and k-wide reverse
 * rules) is here too.  Everything else that records stands on this file,
 * which calls back into none of them.
 */
#include "record/record.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* take the cursor back from r, counting the nodes it appended */
/* (recorder.c lends the cursor; this takes it back) */
void dr__rec_give_back(dr_tape *t, dr_rec *r)
{
    t->len += (size_t)(r->cur_ - t->cur);
    t->cur = r->cur_;
    t->next = r->next_;
    t->end = t->chunk ? t->chunk->nodes + t->chunk->cap : NULL;
    t->state &= ~DR_ST_REC;
}

void dr__rec_reclaim(dr_tape *t)
{
    dr_rec *r = t->rec;
    dr__rec_give_back(t, r);
    r->end_ = r->cur_;
}

dr_node *dr__grow_n(dr_tape *t, size_t need)
{
    if (t->state & DR_ST_REC) {
        /* a tape call while a recorder holds the cursor: take it back;
           the room at the cursor may already do */
        dr__rec_reclaim(t);
        if ((size_t)(t->end - t->cur) >= need)
            return t->cur;
    }
    if (DR_UNLIKELY(t->state & (DR_ST_FORKED | DR_ST_DEAD))) {
        /* a forked parent (or a joined child) records nothing */
        dr__fail(t, (t->state & DR_ST_DEAD) ? DR_EINVAL : DR_EBUSY);
        return NULL;
    }
    return dr__chunk_open(t, need);
}

dr_node *dr__grow(dr_tape *t)
{
    return dr__grow_n(t, 1);
}

dr_idx dr__push_grow(dr_tape *t, int64_t ra, double da, int64_t rb,
                     double db)
{
    if (!dr__grow(t))
        return DR_NONE;
    return dr__push(t, ra, da, rb, db);
}

dr_idx dr__record_ext_v(dr_tape *t, dr_ext *e, double v)
{
    e->id = t->next;
    if (e->clear_adj) {
        e->next = t->exts;
        t->exts = e;
    } else {
        e->next = NULL;
    }
    dr_node *n = t->cur;
    if (n == t->end && !(n = dr__grow(t))) {
        if (e->clear_adj)
            t->exts = e->next;
        return DR_NONE;
    }
    e->id = t->next; /* a new chunk may have moved t->next */
    dr__node_set_ext(n, e);
    n->db = 0.0;
    n->a = DR_EXT_TAG;
    n->b = 0;
    t->chunk->ext = true;
    t->cur = n + 1;
    t->len++;
    dr_idx id = t->base + t->next++;
    /* kinds with a second-order rule log themselves over this */
    if (dr__order2(t)) {
        /* (a kind that neither replays nor has a second-order rule has
           no use for its record there) */
        bool ext = e->replay || e->reverse2;
        dr_oplog *l = dr__oplog(t, id, ext ? DR_OPC_EXT : DR_OPC_NONE, 0.0,
                                0.0, v, DR_NONE, DR_NONE);
        if (l && l->op == DR_OPC_EXT)
            dr__oplog_set_ext(l, e);
    }
    return id;
}

static void nary_reverse(dr_ext *e, dr_sweep *s, double g)
{
    if (g == 0.0)
        return;
    dr__nary_ext *x = (dr__nary_ext *)e;
    if (DR_LIKELY(!s->atomic)) {
        double *A = s->adj;
        for (size_t i = 0; i < x->n; i++)
            A[x->args[i]] += x->partials[i] * g;
        return;
    }
    for (size_t i = 0; i < x->n; i++)
        dr__acc(s, x->args[i], x->partials[i] * g);
}

/* tangents: the node's k tangents plus partial * argument tangents (a zero
   argument tangent or partial adds nothing, as in the forward loop); an
   argument may be -1 (DR_NONE), whose slots are zero.  As there, a finite
   partial adds its products without a test per lane: a zero one adds
   nothing (its argument's tangent may be infinite), and a zero tangent
   makes a zero product, which adds what the test's 0 adds */
static void nary_forward(dr_ext *e, dr_fsweep *f)
{
    dr__nary_ext *x = (dr__nary_ext *)e;
    const int64_t k = (int64_t)f->k;
    double *out = f->tan + x->hdr.id * k;
    for (size_t i = 0; i < x->n; i++) {
        const double *ta = f->tan + x->args[i] * k;
        const double d = x->partials[i];
        if (DR_LIKELY(isfinite(d))) {
            if (d != 0.0)
                for (int64_t j = 0; j < k; j++)
                    out[j] += d * ta[j];
            continue;
        }
        for (int64_t j = 0; j < k; j++)
            out[j] += ta[j] != 0.0 ? d * ta[j] : 0.0;
    }
}

/* k-wide reverse (vector mode, always sequential): columns whose adjoint
   is zero add nothing, as the scalar rule skips g == 0; a finite partial
   adds its products without a test per lane, as the k-wide reverse loop
   (a zero adjoint makes a zero product, which changes nothing) */
static void nary_reverse_vec(dr_ext *e, dr_vsweep *s, const double *g)
{
    dr__nary_ext *x = (dr__nary_ext *)e;
    const int64_t k = (int64_t)s->k;
    for (size_t i = 0; i < x->n; i++) {
        double *pa = s->adj + x->args[i] * k;
        const double d = x->partials[i];
        if (DR_LIKELY(isfinite(d))) {
            for (int64_t j = 0; j < k; j++)
                pa[j] += d * g[j];
            continue;
        }
        for (int64_t j = 0; j < k; j++)
            pa[j] += g[j] != 0.0 ? d * g[j] : 0.0;
    }
}

/* a record for n arguments, with room for cap >= n of them */
void dr__nary_kind(dr__nary_ext *x)
{
    /* every other hook NULL: the arena does not zero what it hands out,
       and to second order an n-ary node is its log entry's (DR_OPC_NARY,
       DR_OPC_SUMN, a far node's operation, a statement's DR_OPC_NONE),
       never a hook of its record */
    memset(&x->hdr, 0, sizeof x->hdr);
    x->hdr.reverse = nary_reverse;
    x->hdr.forward = nary_forward;
    x->hdr.reverse_vec = nary_reverse_vec;
    /* (replay NULL: given partials, nothing to recompute them by) */
}

dr__nary_ext *dr__nary_new(dr_tape *t, size_t n, size_t cap)
{
    dr__nary_ext *x = dr__arena_alloc(t, sizeof *x + cap * 16);
    if (!x)
        return NULL;
    dr__nary_kind(x);
    x->n = n;
    x->args = (int64_t *)(x + 1);
    x->partials = (double *)(x->args + cap);
    return x;
}

bool dr__nary_parts(const dr_ext *e, size_t *n, const int64_t **args,
                    const double **partials)
{
    if (e->reverse != nary_reverse)
        return false;
    const dr__nary_ext *x = (const dr__nary_ext *)e;
    *n = x->n;
    *args = x->args;
    *partials = x->partials;
    return true;
}

double *dr__nary_partials(dr_ext *e)
{
    return e->reverse == nary_reverse ? ((dr__nary_ext *)e)->partials : NULL;
}

dr_idx dr__push_far(dr_tape *t, int64_t ra, double da, int64_t rb, double db)
{
    dr__nary_ext *x = dr__nary_new(t, rb < 0 ? 1 : 2, 2);
    if (!x)
        return DR_NONE;
    x->args[0] = ra;
    x->args[1] = rb;
    x->partials[0] = da;
    x->partials[1] = db;
    return dr__record_ext(t, &x->hdr);
}

