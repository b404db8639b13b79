/*
 * replay.c - the recorded program evaluated again at new inputs
 * (dualrev.h, "replay"): a forward sweep over the log of a tape of order 2
 * (log/log.h) that recomputes each node's value from its arguments'
 * by the rule that recorded it, and writes the node's partials back into
 * the tape, so the sweeps that follow work at the new point.  The same
 * rules in the same order give the same bits as a fresh recording, which
 * is also how a failed replay undoes itself: it replays the old inputs.
 */
#include "sweep/sweep.h"

#include <stdint.h>

/* the chunks of a job that never forked, oldest first, into the tape's
   t->replay_chunks; false if memory runs out */
static bool chunks_in_order(dr_tape *t)
{
    size_t k = 0;
    for (const dr_chunk *c = t->chunk; c; c = c->prev)
        k++;
    if (k > t->replay_cap) {
        if (k > SIZE_MAX / sizeof(dr_chunk *) / 2)
            return false;
        dr_chunk **v = dr__malloc(2 * k * sizeof *v);
        if (!v)
            return false;
        dr__free(t->replay_chunks);
        dr__bytes_add(t, (ptrdiff_t)((2 * k - t->replay_cap) * sizeof *v));
        t->replay_chunks = v;
        t->replay_cap = 2 * k;
    }
    size_t i = k;
    for (dr_chunk *c = t->chunk; c; c = c->prev)
        t->replay_chunks[--i] = c;
    t->replay_nchunks = k;
    return true;
}

/* nodes used in chunk c (the open chunk's count is its cursor's) */
static size_t used(const dr_tape *t, const dr_chunk *c)
{
    return c == t->chunk ? (size_t)(t->cur - c->nodes) : c->n;
}

/* the value an argument had: its node's, or the constant's as logged */
static inline double arg_value(const dr_oplog *log, int64_t r, double logged)
{
    return r >= 0 ? log[r].v : logged;
}

/* the node's value and partials by its rule, at arguments x, y */
static inline void rule(dr_oplog *e, double x, double y, double *pa,
                        double *pb)
{
    double v = 0.0;
    *pa = *pb = 0.0;
    switch (e->op) {
#define UNARY(op)                                                            \
    case DR_OPC_##op:                                                        \
        v = dr_rule_##op(x);                                                 \
        *pa = dr_rule_##op##_d(x, v);                                        \
        break;
        DR_RULES_UNARY(UNARY)
#undef UNARY
#define FUSED(op)                                                            \
    case DR_OPC_##op:                                                        \
        v = dr_rule_##op##_vd(x, pa);                                        \
        break;
        DR_RULES_UNARY_FUSED(FUSED)
#undef FUSED
#define BINARY(op)                                                           \
    case DR_OPC_##op: {                                                      \
        v = dr_rule_##op(x, y);                                              \
        dr_rule_d2 d = dr_rule_##op##_d(x, y, v);                            \
        *pa = d.a;                                                           \
        *pb = d.b;                                                           \
        break;                                                               \
    }
        DR_RULES_BINARY(BINARY)
#undef BINARY
    case DR_OPC_powi:
        v = dr_rule_powi(x, y);
        *pa = dr_rule_powi_d(x, y, v);
        break;
    case DR_OPC_select: {
        int32_t back = e->aux < 0 ? -e->aux : e->aux;
        bool first = dr__select_first(e[-back].v);
        v = first ? x : y;
        *pa = first ? 1.0 : 0.0;
        *pb = first ? 0.0 : 1.0;
        e->aux = first ? back : -back;
        break;
    }
    default: /* inputs, gaps: nothing to compute */
        return;
    }
    e->v = v;
}

/* the operations replay_node computes come after every kind it does not
   (inputs, gaps, extended nodes and what does not replay) */
_Static_assert(DR_OPC_GAP < DR_OPC_powi && DR_OPC_NONE < DR_OPC_powi &&
               DR_OPC_INPUT < DR_OPC_powi && DR_OPC_LINEAR < DR_OPC_powi &&
               DR_OPC_NARY < DR_OPC_powi && DR_OPC_EXT < DR_OPC_powi &&
               DR_OPC_EXTOUT < DR_OPC_powi && DR_OPC_SUMN < DR_OPC_powi &&
               DR_OPC_PROG < DR_OPC_powi &&
               DR_OPC_powi < DR_OPC_select,
               "replay_all: scalar rules from DR_OPC_powi on");

/* far arguments: the node is a two-argument record */
static __attribute__((noinline, cold)) void far_partials(dr_node *p,
                                                         double p0, double p1)
{
    double *d = dr__nary_partials(dr__node_ext(p));
    d[0] = p0;
    d[1] = p1;
}

/* rule() for a two-argument rule known here */
static inline __attribute__((always_inline)) void
known_binary(dr_oplog *e, double x, double y, double (*f)(double, double),
             dr_rule_d2 (*df)(double, double, double), double *pa,
             double *pb)
{
    double v = f(x, y);
    dr_rule_d2 d = df(x, y, v);
    *pa = d.a;
    *pb = d.b;
    e->v = v;
}

/* one node of a scalar rule (op >= DR_OPC_powi), e its entry and p its
   record */
static inline void replay_node(dr_oplog *log, dr_oplog *e, dr_node *p)
{
    int64_t ra = e->ra, rb = e->rb;
    double x = arg_value(log, ra, e->x), y = arg_value(log, rb, e->y);
    e->x = x;
    e->y = y;
    double pa, pb;
    /* the commonest rules by a test each ahead of the switch: a
       conditional branch predicts better than the switch's indirect jump
       in a program of products and sums */
    if (e->op == DR_OPC_mul)
        known_binary(e, x, y, dr_rule_mul, dr_rule_mul_d, &pa, &pb);
    else if (e->op == DR_OPC_add)
        known_binary(e, x, y, dr_rule_add, dr_rule_add_d, &pa, &pb);
    else
        rule(e, x, y, &pa, &pb);
    /* the record holds the active arguments in order (a constant first
       argument left out, record.h dr__rec2): their partials */
    if (DR_UNLIKELY(p->a == DR_EXT_TAG)) {
        if (ra >= 0 || rb >= 0) /* (a select of two constants: none) */
            far_partials(p, ra >= 0 ? pa : pb, pb);
    } else if (ra >= 0) {
        p->da = pa;
        if (rb >= 0)
            p->db = pb;
    } else if (rb >= 0) {
        p->da = pb;
    }
}

/* an extended node through its record's hook (array operations, n-ary
   sums, external calls): its value into its entry */
static __attribute__((noinline, cold)) dr_status replay_ext(dr_oplog *log,
                                                             int64_t r,
                                                             dr_node *p)
{
    dr_ext *x = dr__node_ext(p);
    double v = log[r].v;
    dr_status st = x->replay(x, log, &v);
    log[r].v = v;
    return st;
}

/* the nodes of chunk c in recording order; a hook's failure stops it */
static dr_status replay_chunk(dr_tape *t, dr_chunk *c)
{
    dr_oplog *log = t->oplog;
    size_t n = used(t, c);
    dr_oplog *e = log + c->first;
    dr_node *nodes = c->nodes;
    for (size_t i = c->lead; i < n; i++) {
        int32_t op = e[i].op;
        if (DR_LIKELY(op >= DR_OPC_powi)) { /* a rule of scalar_rules.h */
            replay_node(log, &e[i], &nodes[i]);
        } else if (op == DR_OPC_PROG) { /* (its partials stay) */
            if (i + 1 < n && e[i + 1].op == DR_OPC_PROG &&
                dr__prog_replay_pair(log, &e[i], c->first + (int64_t)i))
                i++;
            else
                dr__prog_replay(log, &e[i]);
        } else if (op == DR_OPC_EXT || op == DR_OPC_SUMN) {
            dr_status st = replay_ext(log, c->first + (int64_t)i, &nodes[i]);
            if (st != DR_OK)
                return st;
        } else if (op == DR_OPC_NONE) { /* (checked: a statement) */
            dr__stmt_replay(log, &e[i], &nodes[i]);
        } /* (inputs and gaps: nothing; external outputs: their call) */
    }
    return DR_OK;
}

static dr_status check_chunk(dr_tape *t, const dr_chunk *c);

/* what a replay of a job graph does per job (sweep.h) */
struct dr_replay_pass {
    dr_tape *t;
    bool check; /* look whether each node can replay, not replay it */
};

static dr_status visit_replay(dr_chunk *c, void *pass)
{
    dr_replay_pass *p = pass;
    return p->check ? check_chunk(p->t, c) : replay_chunk(p->t, c);
}

dr_status dr__replay_job(dr_chunk *newest, dr_replay_pass *p)
{
    return dr__chunks_oldest_first(newest, visit_replay, p);
}

/* a tape that forked: the jobs before its last join through the jobs
   layer's hook (children side by side where replaying and the pool
   runs), then its current job */
static dr_status job_graph(dr_tape *t, bool check)
{
    dr_replay_pass p = {t, check};
    dr_status st = t->hooks->replay_history(t, &p, !check);
    return st != DR_OK ? st : dr__replay_job(t->chunk, &p);
}

/* every node in recording order (in an order where each comes after its
   arguments, for a job graph); a hook's failure stops it */
static dr_status replay_all(dr_tape *t, dr_chunk **chunks, size_t nc)
{
    if (t->hist)
        return job_graph(t, false);
    for (size_t k = 0; k < nc; k++) {
        dr_status st = replay_chunk(t, chunks[k]);
        if (st != DR_OK)
            return st;
    }
    return DR_OK;
}

/* does every guard come out as recorded at the logged values? */
static bool guards_hold(const dr_tape *t)
{
    const dr_oplog *log = t->oplog;
    for (size_t i = 0; i < t->guards_n; i++) {
        const dr_guard *g = &t->guards[i];
        double a = arg_value(log, g->ra, g->x), b = arg_value(log, g->rb, g->y);
        if (dr__cmp(g->op, a, b) != g->outcome)
            return false;
    }
    return true;
}

/* the guards' arguments take their values at the new point, as the
   nodes' do (replay_node): what replayable() checks them against when it
   looks at the tape again (after a restore, or more recorded) */
static void guards_moved(dr_tape *t)
{
    const dr_oplog *log = t->oplog;
    for (size_t i = 0; i < t->guards_n; i++) {
        dr_guard *g = &t->guards[i];
        g->x = arg_value(log, g->ra, g->x);
        g->y = arg_value(log, g->rb, g->y);
    }
}

/* is v the value of the argument of relative id r (a constant: any)?  Bit
   for bit: replay computes each node from its arguments' node values, so
   a front end that handed an operation a value other than its argument
   node's (a constant folded into a sum without a node of its own) made a
   tape replay would compute otherwise.  An input recorded without its
   value takes it from here (record.h, dr__same_logged). */
static bool same_value(dr_oplog *log, int64_t r, double v)
{
    return r < 0 || dr__same_logged(log, r, v);
}

/* can every node of chunk c be replayed? */
static dr_status check_chunk(dr_tape *t, const dr_chunk *c)
{
    dr_oplog *log = t->oplog;
    size_t n = used(t, c);
    for (size_t i = 0; i < n; i++) {
        const dr_oplog *e = &log[c->first + (int64_t)i];
        switch (e->op) {
        case DR_OPC_INPUT:
            break;
        case DR_OPC_NONE: { /* (but a statement's: statement.h) */
            const dr_stmt *s = dr__oplog_stmt(e);
            if (!s)
                return DR_ENOTSUP;
            for (uint32_t j = 0; j < s->n; j++)
                if (!same_value(log, s->leaf[j], dr__stmt_xs(s)[j]))
                    return DR_ENOTSUP;
            break;
        }
        case DR_OPC_LINEAR:
        case DR_OPC_NARY:
        case DR_OPC_GAP: /* (a node, yet no entry: recorded at order 1) */
            return DR_ENOTSUP;
        case DR_OPC_EXT: /* (logged so for a second-order rule too) */
            if (!dr__oplog_ext(e)->replay)
                return DR_ENOTSUP;
            break;
        case DR_OPC_SUMN:
        case DR_OPC_EXTOUT: /* (its call's entry says) */
            break;
        case DR_OPC_PROG: {
            const dr_prog *g = dr__oplog_prog(e);
            for (unsigned j = 0; j < g->n; j++)
                if (!same_value(log, g->leaf[j], dr__prog_xs(g)[j]))
                    return DR_ENOTSUP;
            break;
        }
        default:
            if (!same_value(log, e->ra, e->x) || !same_value(log, e->rb, e->y))
                return DR_ENOTSUP;
            break;
        }
    }
    return DR_OK;
}

/* can every node of t be replayed, and every guard checked?  (The
   chunks in order for a tape that never forked; false if memory runs
   out.) */
static dr_status replayable(dr_tape *t)
{
    dr_status st = DR_OK;
    if (t->hist) {
        st = job_graph(t, true);
    } else if (!chunks_in_order(t)) {
        st = DR_ENOMEM;
    } else {
        for (size_t k = 0; st == DR_OK && k < t->replay_nchunks; k++)
            st = check_chunk(t, t->replay_chunks[k]);
    }
    dr_oplog *log = t->oplog;
    for (size_t i = 0; st == DR_OK && i < t->guards_n; i++) {
        const dr_guard *g = &t->guards[i];
        if (!same_value(log, g->ra, g->x) || !same_value(log, g->rb, g->y))
            st = DR_ENOTSUP;
    }
    return st;
}

/* the entry of the given input x (an input node), or NULL */
static dr_oplog *input_entry(dr_tape *t, dr_idx x)
{
    int64_t r;
    if (!dr__rel(t, x, &r) || r < 0 || r >= t->oplog_n)
        return NULL;
    dr_oplog *e = &t->oplog[r];
    return e->op == DR_OPC_INPUT ? e : NULL;
}

/* the id of given input i: x[i]'s, or first + i for a range (x NULL) */
static inline dr_idx input_id(const dr_real *x, dr_idx first, size_t i)
{
    return x ? x[i].idx : first + (dr_idx)i;
}

/* set the inputs' values (the old ones into old[], if given) */
static void set_inputs(dr_tape *t, size_t n, const dr_real *x, dr_idx first,
                       const double *values, double *old)
{
    for (size_t i = 0; i < n; i++) {
        dr_oplog *e = &t->oplog[input_id(x, first, i) - t->base];
        if (old)
            old[i] = e->v;
        e->v = values[i];
    }
}

/* whether the inputs given are the ones the last replay that succeeded
   found good (each an input node, once, its value known since), with
   nothing recorded, cleared or restored since: no need to look again */
static bool inputs_known(const dr_tape *t, size_t n, const dr_real *x,
                         dr_idx first)
{
    if (t->replay_in_ok != t->next || t->replay_in_n != n)
        return false;
    if (!x)
        return t->replay_in_first == first;
    if (t->replay_in_first != DR_NONE)
        return false;
    for (size_t i = 0; i < n; i++)
        if (t->replay_in_ids[i] != x[i].idx)
            return false;
    return true;
}

/* room for n inputs' ids and old values in the tape; false if memory runs
   out (nothing changed then) */
static bool inputs_room(dr_tape *t, size_t n)
{
    if (n <= t->replay_in_cap)
        return true;
    if (n > SIZE_MAX / sizeof(double) / 2)
        return false;
    size_t cap = n < 16 ? 16 : n + n / 2;
    dr_idx *ids = dr__malloc(cap * sizeof *ids);
    double *old = dr__malloc(cap * sizeof *old);
    if (!ids || !old) {
        dr__free(ids);
        dr__free(old);
        return false;
    }
    dr__free(t->replay_in_ids);
    dr__free(t->replay_old);
    dr__bytes_add(t, (ptrdiff_t)((cap - t->replay_in_cap) *
                                 (sizeof *ids + sizeof *old)));
    t->replay_in_ids = ids;
    t->replay_old = old;
    t->replay_in_cap = cap;
    t->replay_in_ok = -1;
    return true;
}

/* the inputs of a replay that succeeded, for inputs_known next time */
static void inputs_remember(dr_tape *t, size_t n, const dr_real *x,
                            dr_idx first)
{
    t->replay_in_n = n;
    t->replay_in_first = x ? DR_NONE : first;
    if (x)
        for (size_t i = 0; i < n; i++)
            t->replay_in_ids[i] = x[i].idx;
    t->replay_in_ok = t->next;
}

/* the replay succeeded: what sweeps left at the old point goes */
static void forget_sweeps(dr_tape *t)
{
    t->adj_valid = 0;
    t->tan_valid = 0;
    for (dr_ext *e = t->exts; e; e = e->next) {
        e->clear_adj(e);
        if (e->replayed)
            e->replayed(e);
    }
}

/* dr_replay of inputs x[0..n-1], or of the range first .. first+n-1 where
   x is NULL */
static dr_status replay_inputs(dr_tape *t, size_t n, const dr_real *x,
                               dr_idx first, const double *values,
                               const dr_replay_more *more)
{
    if (!t || (n && !values) || t->root != t)
        return DR_EINVAL;
    if (t->state & (DR_ST_FORKED | DR_ST_RECOPEN | DR_ST_REC))
        return DR_EBUSY;
    if (t->status != DR_OK)
        return t->status;
    if (t->next > 0 && (t->oplog_lo != 0 || t->oplog_n < t->next))
        return DR_ENOTSUP; /* nodes recorded at order 1 */
    if (!inputs_room(t, n))
        return DR_ENOMEM;
    bool known = inputs_known(t, n, x, first);
    /* the inputs given: each an input node, once (marked while checked) */
    size_t marked = 0;
    dr_status st = DR_OK;
    for (; !known && marked < n; marked++) {
        dr_oplog *e = input_entry(t, input_id(x, first, marked));
        if (!e || e->aux) {
            st = DR_EINVAL;
            break;
        }
        e->aux = 1;
    }
    /* what was found replayable stays so until more is recorded, whatever
       this replay comes to: a recording's operations are given their
       arguments' values once and for all (and a replay refused later puts
       back the inputs it can, not borrowed memory written in place, so the
       check would no longer see the recorded point) */
    if (st == DR_OK && t->replay_ok != t->next) {
        st = replayable(t);
        if (st == DR_OK)
            t->replay_ok = t->next;
    }
    for (size_t i = 0; i < marked; i++)
        t->oplog[input_id(x, first, i) - t->base].aux = 0;
    if (st != DR_OK)
        return st;
    double *old = t->replay_old;
    dr_chunk **chunks = t->replay_chunks;
    size_t nc = t->replay_nchunks;
    set_inputs(t, n, x, first, values, old);
    if (more)
        more->set(more->ctx);
    st = replay_all(t, chunks, nc);
    if (st == DR_OK && !guards_hold(t))
        st = DR_ERETAPE;
    if (st != DR_OK) {
        /* back to the recorded point: the same rules at the old inputs
           give back every bit (and the sweeps' results stay those of that
           point).  Should a hook fail there too, nothing can be trusted:
           the tape takes that as its sticky status */
        set_inputs(t, n, x, first, old, NULL);
        if (more)
            more->undo(more->ctx);
        dr_status back = replay_all(t, chunks, nc);
        if (back != DR_OK)
            dr__fail(t, back);
    } else {
        /* the inputs given have their values now (those recorded without
           one too), so every input's value is known */
        if (!known) {
            for (size_t i = 0; i < n; i++)
                t->oplog[input_id(x, first, i) - t->base].x = 1.0;
            inputs_remember(t, n, x, first);
        }
        t->replay_ok = t->next;
        guards_moved(t);
        /* the adjoints and tangents of earlier sweeps belong to the old
           point */
        forget_sweeps(t);
    }
    return st;
}

dr_status dr__replay(dr_tape *t, size_t n, const dr_real *x,
                     const double *values, const dr_replay_more *more)
{
    if (n && !x)
        return DR_EINVAL;
    return replay_inputs(t, n, x, 0, values, more);
}

dr_status dr_replay(dr_tape *t, size_t n, const dr_real *x,
                    const double *values)
{
    return dr__replay(t, n, x, values, NULL);
}

dr_status dr_replay_range(dr_tape *t, dr_idx first, size_t n,
                          const double *values)
{
    if (n && (first == DR_NONE || (uint64_t)n > (uint64_t)INT64_MAX ||
              first > INT64_MAX - (dr_idx)n))
        return DR_EINVAL;
    return replay_inputs(t, n, NULL, first, values, NULL);
}

dr_status dr_value(const dr_tape *t, dr_idx id, double *v)
{
    int64_t r;
    if (!t || !v || id == DR_NONE || !dr__rel(t, id, &r))
        return DR_EINVAL;
    const dr_oplog *e = dr__oplog_at(t, r);
    /* (an array-valued node's id is no scalar id: refused above) */
    if (!e || (e->op == DR_OPC_NONE && !dr__oplog_stmt(e)) ||
        e->op == DR_OPC_GAP ||
        e->op == DR_OPC_LINEAR || e->op == DR_OPC_NARY ||
        (e->op == DR_OPC_INPUT && e->x == 0.0))
        return DR_ENOTSUP;
    *v = e->v;
    return DR_OK;
}
