/*
 * reverse.c - the reverse pass: adjoint storage, seeding, the sweep over the
 * chunks, and reading adjoints.  The gradient and Jacobian built on them
 * are drivers (drivers/gradient.c).
 */
#include "sweep/sweep.h"

dr_status dr__slots_ensure(dr_tape *t, double **raw, size_t *cap_,
                           int64_t *valid)
{
    int64_t need = dr__id_limit(t);
    if ((uint64_t)need > *cap_) {
        size_t cap = *cap_ ? *cap_ : 256;
        while (cap < (uint64_t)need) {
            if (cap > (SIZE_MAX / sizeof(double) - 1) / 2)
                return DR_ENOMEM;
            cap *= 2;
        }
        double *p = dr__malloc((cap + 1) * sizeof(double));
        if (!p)
            return DR_ENOMEM;
        if (*raw && *valid > 0)
            dr__copy_doubles(p + 1, *raw + 1, (size_t)*valid);
        if (*raw)
            t->bytes -= (*cap_ + 1) * sizeof(double);
        dr__free(*raw);
        *raw = p;
        *cap_ = cap;
        t->bytes += (cap + 1) * sizeof(double);
    }
    if (*valid < need) {
        double *p = *raw + 1 + *valid;
        size_t n = (size_t)(need - *valid);
        if (t->hooks && n >= DR_ZERO_SPLIT)
            t->hooks->zero(t, p, n);
        else
            memset(p, 0, n * sizeof(double));
        *valid = need;
    }
    return DR_OK;
}

dr_status dr__adj_ensure(dr_tape *t)
{
    return dr__slots_ensure(t, &t->adj_raw, &t->adj_cap, &t->adj_valid);
}

/*
 * Adjoints carried in registers through the sweep: what the last node
 * stored (c1, c2) and what the node before it stored into its second
 * argument (c3).  The node swept next, or the one after, often reads one of
 * them: in a fold such as a dot product's sum (acc <- acc' + x * y) the
 * sum's node stores into the product and the previous sum, the product's
 * node then reads its adjoint and stores into its inputs, and the previous
 * sum's node reads what the sum's node stored two steps back.  Read from
 * memory, that is a store-to-load forward on the loop's critical path once
 * per element; from a register it is not.  Memory always holds the same
 * values (every store still goes there); an ext node's rule may store
 * anywhere, so it drops the carry.
 */
typedef struct carry {
    int64_t c1, c2, c3; /* carried slots; -2: none (no slot has that id) */
    double v1, v2, v3;
} carry;

static inline double carry_load(const carry *k, const double *A, int64_t id)
{
    return id == k->c1   ? k->v1
           : id == k->c2 ? k->v2
           : id == k->c3 ? k->v3
                         : A[id];
}

/* after a node stored va into slot ia and then vb into slot ib */
static inline void carry_store(carry *k, int64_t ia, double va, int64_t ib,
                               double vb)
{
    /* (a store of this node into slot c3 needs no update of v3: it makes
       c3 == c1 or c2, which carry_load checks first) */
    k->c3 = k->c2;
    k->v3 = k->v2;
    k->c1 = ia;
    k->v1 = ia == ib ? vb : va;
    k->c2 = ib;
    k->v2 = vb;
}

/* A run of dead nodes (zero adjoints) this long makes the sweep look ahead
   through the adjoints alone: a node is dead if its adjoint is zero when
   the sweep reaches it, and the adjoints of the nodes below it can only be
   written by nodes above them, so a run of zero slots below a dead node
   is dead through, and its records need not be read.  Where a program's
   output depends on part of what it computed (GradBench's ode: the last
   component reaches back to a few hundred of 10^4), most records are never
   read.  The count is of the dead nodes since the last look-ahead, not of
   a run (the live ones do not reset it): that keeps the live path as it
   was, and a look-ahead that finds live slots at once costs a few loads. */
#define DEAD_RUN 16

/* the lowest z in lo .. hi with a[z .. hi-1] all zero (+0 or -0; a -0
   the loop then meets as a dead node) */
static inline size_t zero_run_below(const double *a, size_t lo, size_t hi)
{
    size_t z = hi;
    /* four slots a test: their bits or'ed, the sign bit dropped */
    while (z >= lo + 4) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, &a[z - 1], 8);
        memcpy(&w1, &a[z - 2], 8);
        memcpy(&w2, &a[z - 3], 8);
        memcpy(&w3, &a[z - 4], 8);
        if (((w0 | w1 | w2 | w3) << 1) != 0)
            break;
        z -= 4;
    }
    while (z > lo) {
        uint64_t w;
        memcpy(&w, &a[z - 1], 8);
        if ((w << 1) != 0)
            break;
        z--;
    }
    return z;
}

/*
 * The hot loop over one job's chunks, newest node first.  A node whose
 * adjoint is zero is skipped (see the header: unreached nodes never turn
 * 0 * inf into NaN), and a long run of them without reading their records
 * (DEAD_RUN).
 *
 * par is a constant in each caller.  Without it (no sibling job runs), a
 * missing second argument adds into the sink slot adj[-1], cheaper than a
 * branch per node.  With it, sibling jobs run beside this one: arguments
 * below s->own_lo belong to ancestor jobs that siblings also add into, so
 * those adds go to the task's log (record.h, dr__anc_add), and a missing
 * argument (the shared sink) is skipped.  The job's own slots are its
 * alone, so the register carry works as in the sequential loop: only own
 * slots are read (g), so a carried ancestor slot is never matched.  Each
 * product is rounded before it is added, in both modes, so a logged add
 * made later gives the bits the sequential loop gives.
 */
static inline __attribute__((always_inline)) void
sweep_chunks(dr_chunk *c, dr_sweep *s, const bool par)
{
    double *restrict A = s->adj;
    const int64_t lo = par ? s->own_lo : 0;
    carry k = {-2, -2, -2, 0.0, 0.0, 0.0};
    for (; c; c = c->prev) {
        const dr_node *nodes = c->nodes;
        const size_t lead = c->lead;
        /* (no look-ahead past an ext node: see dr_chunk's ext) */
        const size_t limit = c->ext ? SIZE_MAX : DEAD_RUN;
        size_t i = c->n;
        int64_t id = c->first + (int64_t)c->n;
    run:;
        /* dead nodes met since the last look-ahead: the live ones do not
           reset the count, which keeps the live path as it was */
        size_t dead = 0;
        for (; i > lead;) {
            const dr_node *p = &nodes[--i];
            --id;
            int32_t a = p->a;
            if (DR_UNLIKELY(a <= 0)) {
                if (a == DR_EXT_TAG) {
                    dr_ext *e = dr__node_ext(p);
                    e->reverse(e, s, A[id]);
                    k.c1 = k.c2 = k.c3 = -2;
                }
                continue; /* an input: nothing to propagate */
            }
            double g = carry_load(&k, A, id);
            if (g == 0.0) {
                if (DR_UNLIKELY(++dead > limit)) {
                    /* on at the first live slot below (outside this loop,
                       whose pointer to the node then stays an induction
                       variable) */
                    size_t z = zero_run_below(A + c->first, lead, i);
                    id -= (int64_t)(i - z);
                    i = z;
                    goto run;
                }
                continue;
            }
            int64_t ia = id - a;
            int64_t ib = p->b ? id - p->b : -1;
            double va, vb;
            if (!par || DR_LIKELY(ia >= lo && ib >= lo)) {
                va = A[ia] + p->da * g;
                A[ia] = va;
                vb = A[ib] + p->db * g;
                A[ib] = vb;
            } else {
                va = p->da * g;
                if (ia >= lo) {
                    va += A[ia];
                    A[ia] = va;
                } else {
                    dr__anc_add(s, ia, va);
                }
                vb = p->db * g;
                if (ib >= lo) {
                    vb += A[ib];
                    A[ib] = vb;
                } else if (p->b) {
                    dr__anc_add(s, ib, vb);
                }
            }
            carry_store(&k, ia, va, ib, vb);
        }
    }
}

void dr__sweep_chunks(dr_chunk *c, dr_sweep *s)
{
    sweep_chunks(c, s, false);
}

void dr__sweep_chunks_par(dr_chunk *c, dr_sweep *s)
{
    sweep_chunks(c, s, true);
}

static void sync_chunk(dr_tape *t)
{
    if (t->chunk)
        t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
}

dr_status dr__slots_seed(dr_tape *t, double **raw, size_t *cap,
                         int64_t *valid, dr_idx id, double v)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    int64_t r;
    if (!dr__rel(t, id, &r))
        return DR_EINVAL;
    if (r < 0)
        return DR_OK;
    st = dr__slots_ensure(t, raw, cap, valid);
    if (st != DR_OK)
        return st;
    (*raw)[1 + r] += v;
    return DR_OK;
}

dr_status dr_seed(dr_tape *t, dr_idx id, double cotangent)
{
    if (!t)
        return DR_EINVAL; /* before taking the address of its fields */
    return dr__slots_seed(t, &t->adj_raw, &t->adj_cap, &t->adj_valid, id,
                          cotangent);
}

dr_status dr_reverse(dr_tape *t)
{
    dr_status st = dr__whole(t); /* the root, not forked */
    if (st != DR_OK)
        return st;
    if (t->status != DR_OK)
        return t->status;
    st = dr__adj_ensure(t);
    if (st != DR_OK)
        return st;
    if (!t->adj_raw)
        return DR_OK; /* nothing was ever recorded: nothing to sweep */
    sync_chunk(t);
    dr_sweep s = {t->adj_raw + 1, t, false, 0, NULL, NULL};
    t->adj_raw[0] = 0.0;
    dr__sweep_chunks(t->chunk, &s);
    /* the jobs before the last join, if the tape ever forked: the jobs
       layer's, reached through its hook (a fork set it) */
    if (DR_UNLIKELY(t->hist != NULL))
        return t->hooks->sweep_history(t, s.adj);
    return dr_tape_status(t); /* array adjoints allocated during the sweep
                                 may fail */
}

/* dr_adjoint_get, in line in both public reads (a gradient read one input
   at a time calls dr_adjoint once an input) */
static inline dr_status adjoint_get(const dr_tape *t, dr_idx id, double *out)
{
    if (!t || t->root != t)
        return DR_EINVAL;
    int64_t r;
    if (!dr__rel(t, id, &r))
        return DR_EINVAL;
    *out = (r >= 0 && r < t->adj_valid) ? t->adj_raw[1 + r] : 0.0;
    return DR_OK;
}

dr_status dr_adjoint_get(const dr_tape *t, dr_idx id, double *out)
{
    return out ? adjoint_get(t, id, out) : DR_EINVAL;
}

double dr_adjoint(const dr_tape *t, dr_idx id)
{
    double v;
    if (adjoint_get(t, id, &v) != DR_OK)
        return __builtin_nan("");
    return v;
}

dr_status dr_adjoints_clear(dr_tape *t)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    /* zeroing is deferred to the next dr__adj_ensure */
    t->adj_valid = 0;
    for (dr_ext *e = t->exts; e; e = e->next)
        e->clear_adj(e);
    return DR_OK;
}

bool dr__adj_range(const dr_tape *t, dr_idx first, size_t n, int64_t *rel)
{
    int64_t r;
    if (!dr__rel(t, first, &r) || r < 0 || n > (uint64_t)(t->next - r))
        return false;
    *rel = r;
    return true;
}

void dr__adj_read(const dr_tape *t, int64_t r, size_t n, double *out)
{
    size_t live = 0;
    if (r < t->adj_valid)
        live = (uint64_t)(t->adj_valid - r) < n ? (size_t)(t->adj_valid - r) : n;
    if (live)
        dr__copy_doubles(out, t->adj_raw + 1 + r, live);
    for (size_t i = live; i < n; i++)
        out[i] = 0.0;
}

dr_status dr_adjoints_read(const dr_tape *t, dr_idx first, size_t n,
                           double *out)
{
    if (!t || t->root != t || (n && !out))
        return DR_EINVAL;
    if (n == 0)
        return DR_OK;
    int64_t r;
    if (!dr__adj_range(t, first, n, &r))
        return DR_EINVAL;
    dr__adj_read(t, r, n, out);
    return DR_OK;
}

dr_status dr__sweep_ready(const dr_tape *t, size_t m, const dr_real *y,
                          size_t n, const dr_real *x)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    if (t->status != DR_OK)
        return t->status;
    int64_t r;
    for (size_t i = 0; i < m; i++)
        if (!dr__rel(t, y[i].idx, &r))
            return DR_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!dr__rel(t, x[i].idx, &r))
            return DR_EINVAL;
    return DR_OK;
}

/* an ext node's rule in dr__sweep_seq's loop (out of line: the sweep
   state it needs would cost the loop's setup on every call) */
static __attribute__((noinline)) void ext_reverse(dr_tape *t, double *A,
                                                  const dr_node *p, double g)
{
    dr_sweep s = {A, t, false, 0, NULL, NULL};
    dr_ext *e = dr__node_ext(p);
    e->reverse(e, &s, g);
}

/* at most this many nodes in one chunk are swept by dr__sweep_seq's own
   loop */
#define SMALL_SWEEP 64

/* dr__sweep_seq's sweep from ry, its ids checked: every adjoint into
   t->adj_raw + 1 (up to t->next, the rest not live); *none set, and
   g[0..n-1] zeroed, where nothing was recorded (no id is on the tape) */
static dr_status sweep_seq_adjoints(dr_tape *t, int64_t ry, size_t n,
                                    double *g, bool *none)
{
    const int64_t need = t->next;
    *none = false;
    if (DR_UNLIKELY((uint64_t)need > t->adj_cap || !t->adj_raw)) {
        t->adj_valid = 0;
        dr_status st = dr__adj_ensure(t);
        if (st != DR_OK)
            return st;
        if (!t->adj_raw) { /* nothing was recorded: no id is on the tape */
            for (size_t i = 0; i < n; i++)
                g[i] = 0.0;
            *none = true;
            return DR_OK;
        }
    }
    /* the sink and every node's slot, at once: cheaper than the deferred
       zeroing's bookkeeping on the small tapes this path is for; a few
       slots in stores of a fixed size, not a call (there are always at
       least 257 slots, and those beyond need are not live) */
    if (need < 8)
        memset(t->adj_raw, 0, 8 * sizeof(double));
    else
        memset(t->adj_raw, 0, (size_t)(need + 1) * sizeof(double));
    t->adj_valid = need;
    double *A = t->adj_raw + 1;
    if (ry >= 0) {
        A[ry] = 1.0;
        sync_chunk(t);
        dr_chunk *c = t->chunk;
        if (c->prev || c->n - c->lead > SMALL_SWEEP) {
            dr_sweep s = {A, t, false, 0, NULL, NULL};
            dr__sweep_chunks(c, &s);
        } else {
            /* a few nodes: the plain loop, from y down (nodes after y add
               nothing to it), without the register carry, whose setup
               costs more than it saves here */
            const int64_t first = c->first;
            for (int64_t id = ry; id >= first + (int64_t)c->lead; id--) {
                const dr_node *p = &c->nodes[id - first];
                int32_t a = p->a;
                double gy = A[id];
                if (a <= 0 || gy == 0.0) {
                    if (a == DR_EXT_TAG)
                        ext_reverse(t, A, p, gy);
                    continue;
                }
                A[id - a] += p->da * gy;
                A[p->b ? id - p->b : -1] += p->db * gy;
            }
        }
    } /* (else y is a constant: every adjoint is zero) */
    return DR_OK;
}

dr_status dr__sweep_seq(dr_tape *t, int64_t ry, size_t n, const dr_real *x,
                        double *g)
{
    /* every id of x checked before anything changes (as dr__sweep_ready) */
    const uint64_t base = (uint64_t)t->base;
    const int64_t need = t->next;
    for (size_t i = 0; i < n; i++)
        if (DR_UNLIKELY((uint64_t)x[i].idx - base >= (uint64_t)need &&
                        x[i].idx != DR_NONE))
            return DR_EINVAL;
    bool none;
    dr_status st = sweep_seq_adjoints(t, ry, n, g, &none);
    if (st != DR_OK || none)
        return st;
    const double *A = t->adj_raw + 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = (uint64_t)x[i].idx - base;
        g[i] = r < (uint64_t)need ? A[r] : 0.0;
    }
    return DR_OK;
}

dr_status dr__sweep_seq_range(dr_tape *t, int64_t ry, int64_t r, size_t n,
                              double *g)
{
    bool none;
    dr_status st = sweep_seq_adjoints(t, ry, n, g, &none);
    if (st == DR_OK && !none && n)
        dr__copy_doubles(g, t->adj_raw + 1 + r, n);
    return st;
}

dr_status dr__sweep_from(dr_tape *t, dr_idx y)
{
    dr_status st = dr_adjoints_clear(t);
    if (st == DR_OK)
        st = dr_seed(t, y, 1.0);
    if (st == DR_OK)
        st = dr_reverse(t);
    return st;
}
