/* nary.c - recording nodes with any number of arguments (user-supplied
   partials, dr_recordn; terms, dr__record_terms) and n-ary sums (dr_sumn,
   partials 1, which replay).  The n-ary node kind itself, record and
   rules, is push.c's (far nodes are n-ary nodes too). */
#include "record/record.h"

#include <math.h>
#include <stdint.h>

dr_idx dr_recordn(dr_tape *t, size_t n, const dr_idx *args,
                  const double *partials)
{
    if (!t)
        return DR_NONE;
    if (n && (!args || !partials)) {
        dr__fail(t, DR_EINVAL);
        return DR_NONE;
    }
    if (n <= 2) {
        dr_idx a = n > 0 ? args[0] : DR_NONE, b = n > 1 ? args[1] : DR_NONE;
        double da = n > 0 ? partials[0] : 0.0, db = n > 1 ? partials[1] : 0.0;
        return dr_record2(t, a, da, b, db);
    }
    if (n > (SIZE_MAX - sizeof(dr__nary_ext)) / 16) {
        dr__fail(t, DR_ENOMEM);
        return DR_NONE;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t r;
        if (!dr__rel_arg(t, args[i], &r)) {
            dr__fail(t, DR_EINVAL);
            return DR_NONE;
        }
    }
    dr__nary_ext *x = dr__nary_new(t, n, n);
    if (!x)
        return DR_NONE;
    for (size_t i = 0; i < n; i++) {
        dr__rel_arg(t, args[i], &x->args[i]);
        x->partials[i] = partials[i];
    }
    dr_idx id = dr__record_ext(t, &x->hdr);
    if (dr__order2(t) && id != DR_NONE)
        dr__oplog_terms(dr__oplog(t, id, DR_OPC_NARY, 0.0, 0.0, 0.0, DR_NONE,
                                  DR_NONE),
                        &x->hdr);
    return id;
}

dr_idx dr__record_terms(dr_tape *t, size_t n, const dr_idx *args,
                        const double *partials)
{
    /* dr__rel_arg's test with its bound read once: the loops' stores into
       the record could alias the tape's fields, and the compiler would
       load them again per term */
    const uint64_t base = (uint64_t)t->base, lim = dr__arg_limit(t);
    /* every id checked, and the active ones counted, before anything is
       written: a bad id records nothing */
    size_t k = 0, first[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        if (args[i] == DR_NONE)
            continue;
        if (DR_UNLIKELY((uint64_t)args[i] - base >= lim)) {
            dr__fail(t, DR_EINVAL);
            return DR_NONE;
        }
        if (k < 2)
            first[k] = i;
        k++;
    }
    if (k == 0)
        return DR_NONE;
    if (k <= 2) {
        dr_idx a = args[first[0]], b = k > 1 ? args[first[1]] : DR_NONE;
        double da = partials[first[0]], db = k > 1 ? partials[first[1]] : 0.0;
        dr_idx id = dr__rec2(t, a, da, b, db);
        /* given partials: linear to second order, as dr_record2 logs them */
        if (dr__order2(t) && id != DR_NONE)
            dr__oplog(t, id, DR_OPC_LINEAR, da, db, 0.0, a, b);
        return id;
    }
    if (k > (SIZE_MAX - sizeof(dr__nary_ext)) / 16) {
        dr__fail(t, DR_ENOMEM);
        return DR_NONE;
    }
    dr__nary_ext *x = dr__nary_new(t, k, k);
    if (!x)
        return DR_NONE;
    int64_t *restrict xa = x->args;
    double *restrict xd = x->partials;
    if (k == n) { /* no constant among them (a dot product's terms) */
        for (size_t i = 0; i < n; i++) {
            xa[i] = (int64_t)((uint64_t)args[i] - base);
            xd[i] = partials[i];
        }
    } else {
        for (size_t i = 0, j = 0; i < n; i++)
            if (args[i] != DR_NONE) {
                xa[j] = (int64_t)((uint64_t)args[i] - base);
                xd[j++] = partials[i];
            }
    }
    dr_idx id = dr__record_ext(t, &x->hdr);
    if (dr__order2(t) && id != DR_NONE)
        dr__oplog_terms(dr__oplog(t, id, DR_OPC_NARY, 0.0, 0.0, 0.0, DR_NONE,
                                  DR_NONE),
                        &x->hdr);
    return id;
}

/* ----------------------------------------------------------- n-ary sums */

/* An n-ary node whose partials are all 1 and whose value is
   0 + a0 + a1 + ... added left to right (dr_sumn): an n-ary record over
   all n terms in order (a constant's argument -1, its partial 0, so the
   rules add nothing for it but into the sink), and the constants' values
   by place, for replay to add them where they were. */
typedef struct sumn_ext {
    dr__nary_ext nx;
    const double *consts; /* n values, a constant's at its place; NULL
                             when every term is active                 */
} sumn_ext;

static dr_status sumn_replay(dr_ext *e, dr_oplog *log, double *v)
{
    const sumn_ext *x = (const sumn_ext *)e;
    const int64_t *a = x->nx.args;
    double s = 0.0;
    if (!x->consts)
        for (size_t i = 0; i < x->nx.n; i++)
            s += log[a[i]].v;
    else
        for (size_t i = 0; i < x->nx.n; i++)
            s += a[i] >= 0 ? log[a[i]].v : x->consts[i];
    *v = s;
    return DR_OK;
}

/* the sum of n terms, values vals[i] or xs[i].val and ids ids[i] or
   xs[i].idx (one of the pairs given) */
static dr_real sumn(dr_tape *t, size_t n, const dr_real *xs,
                    const double *vals, const dr_idx *ids)
{
    dr_real r = {NAN, DR_NONE};
    if (n && !xs && (!vals || !ids)) {
        if (t)
            dr__fail(t, DR_EINVAL);
        return r;
    }
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += xs ? xs[i].val : vals[i];
    r.val = s;
    if (!t)
        return r;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t rel;
        if (!dr__rel_arg(t, xs ? xs[i].idx : ids[i], &rel)) {
            dr__fail(t, DR_EINVAL);
            return r;
        }
        k += rel >= 0;
    }
    if (k == 0)
        return r;
    /* the record, its arguments and partials, and the constants' values
       where there are any */
    size_t each = k < n ? 24 : 16;
    if (n > (SIZE_MAX - sizeof(sumn_ext)) / each) {
        dr__fail(t, DR_ENOMEM);
        return r;
    }
    sumn_ext *x = dr__arena_alloc(t, sizeof *x + n * each);
    if (!x)
        return r;
    dr__nary_kind(&x->nx);
    x->nx.hdr.replay = sumn_replay;
    x->nx.n = n;
    x->nx.args = (int64_t *)(x + 1);
    x->nx.partials = (double *)(x->nx.args + n);
    double *consts = k < n ? x->nx.partials + n : NULL;
    bool logged = true; /* every term's value its node's (order 2) */
    for (size_t i = 0; i < n; i++) {
        int64_t *a = &x->nx.args[i];
        double v = xs ? xs[i].val : vals[i];
        dr__rel_arg(t, xs ? xs[i].idx : ids[i], a);
        x->nx.partials[i] = *a >= 0 ? 1.0 : 0.0;
        if (consts)
            consts[i] = v;
        if (dr__order2(t) && *a >= 0)
            logged &= dr__logged_as(t, *a, v);
    }
    x->consts = consts;
    r.idx = dr__record_ext_v(t, &x->nx.hdr, s);
    /* a term given a value other than its node's would replay otherwise:
       then the node is one of given partials (linear all the same) */
    if (dr__order2(t) && r.idx != DR_NONE)
        dr__oplog_terms(dr__oplog(t, r.idx, logged ? DR_OPC_SUMN : DR_OPC_NARY,
                                  0.0, 0.0, s, DR_NONE, DR_NONE),
                        &x->nx.hdr);
    return r;
}

dr_real dr_sumn(dr_tape *t, size_t n, const dr_real *x)
{
    return sumn(t, n, x, NULL, NULL);
}

dr_idx dr_sumn_id(dr_tape *t, size_t n, const double *vals, const dr_idx *ids,
                  double *val)
{
    dr_real r = sumn(t, n, NULL, vals, ids);
    if (val)
        *val = r.val;
    return r.idx;
}
