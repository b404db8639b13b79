/*
 * external.c - a user's function as one step of the tape
 * (dr_record_external): an ext node that holds the call (rules, context,
 * the input and output values and ids), followed by one node per output.
 *
 * The output nodes have no arguments, so the sweeps leave their adjoints
 * (tangents) where the nodes that use them put them.  The call's node comes
 * before them, so every sweep reaches it after the outputs are complete
 * (reverse) or before anything reads them (forward): its rules read and
 * write the outputs' slots directly.
 */
#include "record/record.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct ext_call {
    dr_ext hdr;
    dr_owned own;     /* on the handle's owned list while ctx needs freeing */
    dr_external f;
    dr_status (*status)(void *ctx); /* NULL: the rules cannot fail */
    size_t n, m;
    const int64_t *in;  /* relative ids of x (-1: a constant) */
    const int64_t *out; /* relative ids of the outputs */
    const double *x, *y;
    double *xs, *ys;    /* scratch: n and m doubles (one sweep at a time) */
} ext_call;

#define CALL_OF(e) ((ext_call *)(e))

static void call_release(dr_owned *o)
{
    ext_call *c = (ext_call *)((char *)o - offsetof(ext_call, own));
    c->f.destroy(c->f.ctx);
}

/* nothing of its own to clear: it is on the exts list so that the sweeps
   see a kind that may lack a forward rule, and may do anything in its rule */
static void call_clear_adj(dr_ext *e)
{
    (void)e;
}

/* a rule that can fail says so through status: the sweeping tape takes
   it as its sticky status, which the sweep's caller answers */
static void call_check(const ext_call *c, dr_tape *t)
{
    dr_status st;
    if (c->status && (st = c->status(c->f.ctx)) != DR_OK)
        dr__fail(t, st);
}

/* gather the outputs' adjoints of direction j (stride k); false if all are
   zero (the rule would add nothing) */
static bool gather(const double *v, const int64_t *ids, size_t cnt,
                   int64_t k, int64_t j, double *dst)
{
    bool any = false;
    for (size_t i = 0; i < cnt; i++) {
        dst[i] = v[ids[i] * k + j];
        any |= dst[i] != 0.0;
    }
    return any;
}

static void call_reverse(dr_ext *e, dr_sweep *s, double g)
{
    (void)g; /* the call's own slot is never used: its outputs are nodes */
    ext_call *c = CALL_OF(e);
    if (!gather(s->adj, c->out, c->m, 1, 0, c->ys))
        return;
    memset(c->xs, 0, c->n * sizeof(double));
    c->f.reverse(c->f.ctx, c->n, c->x, c->m, c->y, c->ys, c->xs);
    call_check(c, s->tape);
    for (size_t i = 0; i < c->n; i++)
        if (c->in[i] >= 0)
            dr__acc(s, c->in[i], c->xs[i]);
}

static void call_reverse_vec(dr_ext *e, dr_vsweep *s, const double *g)
{
    (void)g;
    ext_call *c = CALL_OF(e);
    const int64_t k = (int64_t)s->k;
    for (int64_t j = 0; j < k; j++) {
        if (!gather(s->adj, c->out, c->m, k, j, c->ys))
            continue;
        memset(c->xs, 0, c->n * sizeof(double));
        c->f.reverse(c->f.ctx, c->n, c->x, c->m, c->y, c->ys, c->xs);
        call_check(c, s->tape);
        for (size_t i = 0; i < c->n; i++)
            if (c->in[i] >= 0)
                s->adj[c->in[i] * k + j] += c->xs[i];
    }
}

/* replay: the inputs' values at the new point (a constant keeps its own)
   and the outputs the primal gives there, into the record, where the rules
   read them, and into the outputs' entries, where later nodes do.  A rule
   that can fail says so through status, as in a sweep. */
static dr_status call_replay(dr_ext *e, dr_oplog *log, double *v)
{
    ext_call *c = CALL_OF(e);
    double *x = (double *)c->x, *y = (double *)c->y;
    for (size_t i = 0; i < c->n; i++)
        if (c->in[i] >= 0)
            x[i] = log[c->in[i]].v;
    c->f.primal(c->f.ctx, c->n, x, c->m, y);
    dr_status st = c->status ? c->status(c->f.ctx) : DR_OK;
    for (size_t i = 0; i < c->m; i++)
        log[c->out[i]].v = y[i];
    *v = 0.0; /* (the call's own entry: no value) */
    return st;
}

static void call_forward(dr_ext *e, dr_fsweep *f)
{
    ext_call *c = CALL_OF(e);
    const int64_t k = (int64_t)f->k;
    for (int64_t j = 0; j < k; j++) {
        /* (a constant's slot, -1, holds zero tangents) */
        if (!gather(f->tan, c->in, c->n, k, j, c->xs))
            continue;
        memset(c->ys, 0, c->m * sizeof(double));
        c->f.forward(c->f.ctx, c->n, c->x, c->xs, c->m, c->y, c->ys);
        call_check(c, f->tape);
        for (size_t i = 0; i < c->m; i++)
            f->tan[c->out[i] * k + j] += c->ys[i];
    }
}

/* the record and its arrays in one arena allocation */
static ext_call *call_new(dr_tape *t, size_t n, size_t m)
{
    size_t words = 2 * (n + m) + (n + m); /* ids, values, scratch */
    if (n > SIZE_MAX / 64 || m > SIZE_MAX / 64)
        return NULL;
    ext_call *c = dr__arena_alloc(t, sizeof *c + words * 8);
    if (!c)
        return NULL;
    /* every hook NULL but those set below: the arena does not zero what it
       hands out (a record from before a clear may lie there), and the
       second-order passes and the sparse drivers read them all */
    memset(&c->hdr, 0, sizeof c->hdr);
    int64_t *ids = (int64_t *)(c + 1);
    double *vals = (double *)(ids + n + m);
    c->in = ids;
    c->out = ids + n;
    c->x = vals;
    c->y = vals + n;
    c->xs = vals + n + m;
    c->ys = c->xs + n;
    c->n = n;
    c->m = m;
    return c;
}

/* the outputs as constants: what a failed call leaves in out */
static dr_status fail(dr_status st, size_t m, const double *y, dr_real *out)
{
    for (size_t i = 0; out && y && i < m; i++) {
        out[i].val = y[i];
        out[i].idx = DR_NONE;
    }
    return st;
}

dr_status dr__external_ready(dr_tape *t, size_t n, const dr_real *x)
{
    if (!t || (n && !x) || (t->state & DR_ST_DEAD))
        return DR_EINVAL;
    if ((t->state & DR_ST_FORKED) || (t->root->state & DR_ST_PSWEEP))
        return DR_EBUSY;
    if (t->status != DR_OK)
        return t->status;
    for (size_t i = 0; i < n; i++) {
        int64_t r;
        if (!dr__rel_arg(t, x[i].idx, &r))
            return DR_EINVAL;
    }
    return DR_OK;
}

dr_status dr_record_external(dr_tape *t, const dr_external *f, size_t n,
                             const dr_real *x, size_t m, const double *y,
                             dr_real *out)
{
    return dr__record_external_checked(t, f, NULL, n, x, m, y, out);
}

dr_status dr__record_external_checked(dr_tape *t, const dr_external *f,
                                      dr_status (*status)(void *ctx),
                                      size_t n, const dr_real *x, size_t m,
                                      const double *y, dr_real *out)
{
    if (!f || !f->reverse || !y || !out || m == 0)
        return fail(DR_EINVAL, m, y, out);
    dr_status st = dr__external_ready(t, n, x);
    if (st != DR_OK)
        return fail(st, m, y, out);
    /* the record, then room for its node and the m outputs in one chunk,
       before anything is written: after that nothing can fail, so a
       failure has recorded nothing (and needs no rollback, which a child
       handle could not do beside its siblings) */
    ext_call *c = call_new(t, n, m);
    if (!c || ((size_t)(t->end - t->cur) < m + 1 && !dr__grow_n(t, m + 1))) {
        t->status = DR_OK; /* (it was, above) */
        return fail(DR_ENOMEM, m, y, out);
    }
    c->hdr.reverse = call_reverse;
    c->hdr.clear_adj = call_clear_adj;
    c->hdr.forward = f->forward ? call_forward : NULL;
    c->hdr.reverse_vec = call_reverse_vec;
    c->hdr.replay = f->primal ? call_replay : NULL;
    c->hdr.replayed = NULL;
    c->hdr.acc_into = NULL;
    c->f = *f;
    c->status = status;
    c->own.release = call_release;
    int64_t *in = (int64_t *)c->in, *outs = (int64_t *)c->out;
    double *xv = (double *)c->x, *yv = (double *)c->y;
    for (size_t i = 0; i < n; i++) {
        dr__rel_arg(t, x[i].idx, &in[i]);
        xv[i] = x[i].val;
        /* an input given a value other than its node's would replay
           otherwise: then the call does not replay */
        if (dr__order2(t) && in[i] >= 0 && !dr__logged_as(t, in[i], xv[i]))
            c->hdr.replay = NULL;
    }
    dr__copy_doubles(yv, y, m);
    dr__record_ext(t, &c->hdr);
    for (size_t i = 0; i < m; i++)
        outs[i] = dr__push(t, -1, 0.0, -1, 0.0) - t->base;
    /* at order 2 the outputs are logged with their values, as results of
       the call before them (no second-order rule; a replay through the
       call's primal sets their values) */
    if (dr__order2(t))
        for (size_t i = 0; i < m; i++)
            dr__oplog_last(t, t->base + outs[i], DR_OPC_EXTOUT, 0.0, 0.0,
                           y[i], DR_NONE, DR_NONE);
    for (size_t i = 0; i < m; i++) {
        out[i].val = y[i];
        out[i].idx = t->base + outs[i];
    }
    if (f->destroy) {
        c->own.next = t->owned;
        t->owned = &c->own;
    }
    return DR_OK;
}
