/*
 * edge_push.c - the dense Hessian by edge pushing (Gower and Mello, "A new
 * framework for the computation of Hessians", 2012): one reverse pass over
 * the second-order log that carries, beside each node's adjoint, the
 * second-order interactions W(u, v) between the nodes not yet visited.
 * Visiting node r with arguments j (partials d_j, second partials h_jk,
 * adjoint g) replaces it by its arguments:
 *
 *     W(j, q) += d_j W(r, q)             each interaction of r (q != r)
 *     W(j, k) += d_j d_k W(r, r)         r's own (diagonal) interaction
 *     W(j, k) += g h_jk                  r's second derivatives
 *     adj(j)  += d_j g                   the gradient, as dr_reverse
 *
 * and what is left between the inputs at the end is the Hessian.  The work
 * is the number of interactions pushed, not the inputs times the nodes: a
 * quadratic form of 100 inputs (20 000 nodes) takes about 40 000 pushes
 * where the products with the unit vectors (hvp.c) take 7 passes of 16
 * directions over every node.  A Hessian whose interactions spread over
 * many nodes at once (long dense chains) would push more than the products
 * cost, so the pass gives up once its pushes and visits pass a budget the
 * caller derives from the products' cost (or early, where it has spent
 * more than its share for the nodes visited), and the caller takes the
 * products instead.
 *
 * Interactions are kept by row: W(u, v) belongs to the row of the later
 * node of the two that is not an input of the Hessian (an input's row would
 * never be visited), so a row is complete when the pass reaches its node.
 * A row is a list of (other node, weight) terms appended as pushes arrive,
 * summed per node when the row is visited (a repeated node is one
 * interaction); visited rows' terms are reused for later pushes.
 */
#include "sweep/sweep.h"
#include "sweep/entry_rules.h"

#include <stdint.h>

/* a node's role: an input of the Hessian (>= 0, its place in x), a node
   the pass visits (INNER), or one whose interactions are dropped (DEAD: an
   input not in x, a constant as far as the Hessian goes, or a gap) */
enum { DEAD = -2, INNER = -1 };

typedef struct term {
    double w;
    int32_t q;     /* the other node                               */
    uint32_t next; /* the row's next term + 1 (0: none)            */
} term;

typedef struct edges {
    term *terms;
    uint32_t nterms, cap, free; /* free: a list of reusable terms (+1) */
    bool own;                   /* terms were allocated here (grown)  */
    uint32_t *head;             /* a row's first term + 1, by node   */
    int32_t *role;              /* DEAD, INNER, or the index in x     */
    double *adj;
    double *sum;                /* a row's weights, summed per node   */
    int32_t *seen;              /* the row (+1) that last summed into */
    int32_t *uniq;              /* the nodes of the row being visited */
    size_t n;
    double *H;
    uint64_t budget; /* pushes left                                   */
    bool failed;     /* over budget or out of memory                  */
    bool oom;
} edges;

static void push(edges *p, int64_t u, int64_t v, double w)
{
    if (w == 0.0 || u < 0 || v < 0)
        return;
    int32_t lu = p->role[u], lv = p->role[v];
    if (lu == DEAD || lv == DEAD)
        return;
    if (lu >= 0 && lv >= 0) { /* between inputs: the Hessian's */
        p->H[(size_t)lu * p->n + (size_t)lv] += w;
        if (lu != lv)
            p->H[(size_t)lv * p->n + (size_t)lu] += w;
        return;
    }
    if (p->budget == 0) {
        p->failed = true;
        return;
    }
    p->budget--;
    int64_t row = lu >= 0 ? v : lv >= 0 ? u : (u > v ? u : v);
    int64_t other = row == u ? v : u;
    uint32_t i;
    if (p->free) {
        i = p->free - 1;
        p->free = p->terms[i].next;
    } else {
        if (p->nterms == p->cap) {
            if (p->cap >= UINT32_MAX / 2) {
                p->failed = true;
                return;
            }
            uint32_t cap = p->cap ? 2 * p->cap : 1024;
            term *nt = dr__malloc((size_t)cap * sizeof *nt);
            if (!nt) {
                p->failed = p->oom = true;
                return;
            }
            if (p->nterms)
                memcpy(nt, p->terms, (size_t)p->nterms * sizeof *nt);
            if (p->own)
                dr__free(p->terms);
            p->terms = nt;
            p->own = true;
            p->cap = cap;
        }
        i = p->nterms++;
    }
    p->terms[i] = (term){w, (int32_t)other, p->head[row]};
    p->head[row] = i + 1;
}

/* the arguments of a node and their partials, first and second, where the
   entry's kind has a rule that pushing can use */
typedef struct args {
    size_t n;
    int64_t two[2];
    double dtwo[2];
    const int64_t *id; /* n of them */
    const double *d;   /* their partials (NULL: all 1) */
    double haa, hab, hbb; /* (two arguments at most) */
} args;

/* does pushing have a rule for the entry's kind */
static bool has_rule(int op)
{
    switch (op) {
    case DR_OPC_mul:
    case DR_OPC_add:
    case DR_OPC_sub:
    case DR_OPC_LINEAR:
    case DR_OPC_select:
    case DR_OPC_NARY:
    case DR_OPC_SUMN:
    case DR_OPC_PROG:
        return true;
    default:
        return scalar_rule_op(op);
    }
}

static void args_of(const dr_oplog *e, args *a)
{
    a->n = 2;
    a->id = a->two;
    a->d = a->dtwo;
    a->two[0] = e->ra;
    a->two[1] = e->rb;
    a->haa = a->hab = a->hbb = 0.0;
    switch (e->op) {
    case DR_OPC_mul:
        a->dtwo[0] = e->y;
        a->dtwo[1] = e->x;
        a->hab = 1.0;
        return;
    case DR_OPC_add:
        a->dtwo[0] = a->dtwo[1] = 1.0;
        return;
    case DR_OPC_sub:
        a->dtwo[0] = 1.0;
        a->dtwo[1] = -1.0;
        return;
    case DR_OPC_LINEAR:
        a->dtwo[0] = e->x;
        a->dtwo[1] = e->y;
        return;
    case DR_OPC_select:
        a->n = 1;
        a->two[0] = e->aux > 0 ? e->ra : e->rb;
        a->dtwo[0] = 1.0;
        return;
    case DR_OPC_NARY:
    case DR_OPC_SUMN:
    case DR_OPC_PROG: {
        const double *ps;
        if (!dr__oplog_nary(e, &a->n, &a->id, &ps)) {
            a->n = 0;
            return;
        }
        a->d = e->op == DR_OPC_SUMN ? NULL : ps;
        return;
    }
    default: {
        dr_rule_so2_t s = second_partials(e);
        a->dtwo[0] = s.pa;
        a->dtwo[1] = s.pb;
        a->haa = s.haa;
        a->hab = s.hab;
        a->hbb = s.hbb;
        return;
    }
    }
}

static inline double partial(const args *a, size_t i)
{
    return a->d ? a->d[i] : 1.0;
}

/* visit node r: its row and adjoint passed on to its arguments */
static void visit(edges *p, int64_t r, const dr_oplog *e)
{
    double g = p->adj[r];
    uint32_t h = p->head[r];
    if (h == 0 && g == 0.0)
        return;
    args a;
    args_of(e, &a); /* (has_rule: checked before the pass) */
    /* the row summed per node, its terms freed */
    size_t nu = 0;
    double diag = 0.0;
    int32_t stamp = (int32_t)r + 1;
    while (h) {
        term *tm = &p->terms[h - 1];
        uint32_t next = tm->next;
        if (tm->q == r) {
            diag += tm->w;
        } else if (p->seen[tm->q] != stamp) {
            p->seen[tm->q] = stamp;
            p->sum[tm->q] = tm->w;
            p->uniq[nu++] = tm->q;
        } else {
            p->sum[tm->q] += tm->w;
        }
        tm->next = p->free;
        p->free = h;
        h = next;
    }
    p->head[r] = 0;
    for (size_t u = 0; u < nu; u++) {
        int32_t q = p->uniq[u];
        double w = p->sum[q];
        for (size_t i = 0; i < a.n; i++) {
            double d = partial(&a, i);
            if (d != 0.0)
                push(p, a.id[i], q, a.id[i] == q ? 2.0 * d * w : d * w);
        }
    }
    /* pairs of argument places: a node in two places (x * x) meets
       itself from both */
    if (diag != 0.0)
        for (size_t i = 0; i < a.n; i++) {
            double di = partial(&a, i);
            if (di == 0.0)
                continue;
            push(p, a.id[i], a.id[i], di * di * diag);
            for (size_t j = i + 1; j < a.n; j++) {
                double dj = partial(&a, j);
                if (dj != 0.0)
                    push(p, a.id[i], a.id[j],
                         (a.id[i] == a.id[j] ? 2.0 : 1.0) * di * dj * diag);
            }
        }
    if (g == 0.0)
        return;
    /* a second partial that is exactly zero is one that does not exist
       (as in hvp.c): it adds nothing, whatever g is */
    if (a.haa != 0.0)
        push(p, a.id[0], a.id[0], g * a.haa);
    if (a.hbb != 0.0)
        push(p, a.id[1], a.id[1], g * a.hbb);
    if (a.hab != 0.0)
        push(p, a.id[0], a.id[1],
             (a.id[0] == a.id[1] ? 2.0 : 1.0) * g * a.hab);
    for (size_t i = 0; i < a.n; i++)
        if (a.id[i] >= 0) {
            double d = partial(&a, i);
            if (d != 0.0)
                p->adj[a.id[i]] += d * g;
        }
}

dr_status dr__hessian_edges(dr_tape *t, int64_t ry, size_t n,
                            const int64_t *rx, uint64_t budget, double *H,
                            bool *done)
{
    *done = false;
    if (ry < 0 || ry >= INT32_MAX - 1 || n > INT32_MAX)
        return DR_OK;
    size_t span = (size_t)ry + 1;
    /* one block of the root's scratch for the per-node arrays and the
       first terms (a small Hessian makes no other call of the allocator;
       more terms go to a block of their own) */
    size_t cap0 = 2 * span + 64;
    if (span > (SIZE_MAX / 8 - n) / 64)
        return DR_ENOMEM;
    size_t words = 2 * span + cap0 * 2 + (4 * span + n) / 2 + 2;
    dr_scratch *sb = dr__scratch_take(t, words);
    if (!sb)
        return DR_ENOMEM;
    edges p = {0};
    p.n = n;
    p.H = H;
    p.budget = budget;
    p.adj = sb->data;
    p.sum = p.adj + span;
    p.terms = (term *)(void *)(p.sum + span);
    p.cap = (uint32_t)cap0;
    p.head = (uint32_t *)(void *)(p.terms + cap0);
    p.role = (int32_t *)(p.head + span);
    p.seen = p.role + span;
    p.uniq = p.seen + span;
    int32_t *first = p.uniq + span;
    dr_status st = DR_OK;
    /* the inputs of the Hessian (a node given twice is the first
       place's), then every other node up to ry: an input not in x or a
       gap is dead, and one without an entry or a rule here stops the pass
       before it starts */
    for (size_t r = 0; r < span; r++)
        p.role[r] = INNER;
    for (size_t i = 0; i < n; i++) {
        first[i] = -1;
        if (rx[i] < 0 || rx[i] > ry)
            continue;
        if (p.role[rx[i]] < 0)
            p.role[rx[i]] = (int32_t)i;
        first[i] = p.role[rx[i]];
    }
    for (size_t r = 0; r < span; r++) {
        if (p.role[r] >= 0)
            continue;
        const dr_oplog *e = dr__oplog_at(t, (int64_t)r);
        if (!e)
            goto out;
        if (e->op == DR_OPC_INPUT || e->op == DR_OPC_GAP)
            p.role[r] = DEAD;
        else if (!has_rule(e->op))
            goto out;
    }
    memset(p.head, 0, span * sizeof *p.head);
    memset(p.adj, 0, span * sizeof *p.adj);
    memset(p.seen, 0, span * sizeof *p.seen);
    memset(H, 0, n * n * sizeof *H);
    p.adj[ry] = 1.0;
    /* a visit counts as a push; a pass that has spent more than twice its
       share of the budget for the nodes it has visited (checked every 64
       nodes from a sixty-fourth of them on) gives up then, not at the end
       of the budget: a dense Hessian's interactions pile up from the
       output on (tanh layers: half the budget gone at a tenth of the
       nodes) */
    for (int64_t r = ry; r >= 0 && !p.failed; r--) {
        if (p.role[r] != INNER)
            continue;
        if (p.budget == 0) {
            p.failed = true;
            break;
        }
        p.budget--;
        visit(&p, r, dr__oplog_at(t, r));
        uint64_t seen = (uint64_t)(ry - r) + 1;
        if ((seen & 63) == 0 && seen >= span / 64 &&
            (double)(budget - p.budget) * (double)span >
                2.0 * (double)budget * (double)seen)
            p.failed = true;
    }
    if (p.oom) {
        st = DR_ENOMEM;
        goto out;
    }
    if (p.failed)
        goto out;
    /* a node given twice: its rows and columns copied to its other places
       (each read from the first places, which are written once) */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (first[i] != (int32_t)i || first[j] != (int32_t)j)
                H[i * n + j] = first[i] >= 0 && first[j] >= 0
                                   ? H[(size_t)first[i] * n + first[j]]
                                   : 0.0;
    *done = true;
out:
    if (p.own)
        dr__free(p.terms);
    dr__scratch_give(t, sb);
    return st;
}
