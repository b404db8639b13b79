/*
 * sparse.c - sparse Jacobians and Hessians: the sparsity pattern read off
 * the recorded graph, a colouring of it (coloring.c), and the compressed
 * sweeps - one direction per colour instead of one per input - whose
 * results hold every nonzero entry exactly once.
 *
 * Patterns by index sets, propagated forward over the graph: each node
 * gets the set of variables (places of x) it depends on, its arguments'
 * sets united (plus its own places, where the node is in x).  A Jacobian's
 * row is its output's set.  A Hessian's pattern is the nonlinear
 * interaction of Walther ("Computing sparse Hessians with automatic
 * differentiation", ACM TOMS 34, 2008; ADOL-C's hess_pat): at each node
 * y depends on whose second partials are not all zero, every variable of
 * one argument's set interacts with every variable of the other's (a
 * product), or of its own (a nonlinear function of one argument): those
 * sets are added to that variable's row.  Which second partials an
 * operation has is its structure, not its values, so the pattern holds at
 * every point the tape records or replays the same graph at.
 *
 * Graphs: a Jacobian's is read off the nodes (any order, a tape that
 * never forked) or the second-order log (order 2, forks too); a
 * Hessian's, like the Hessian-vector products, off the log.  A plan keeps
 * a hash of the graph it was made from, and refuses (DR_ESHAPE) a tape
 * whose graph differs.
 */
#include "sweep/sweep.h"
#include "drivers/coloring.h"

#include <stdint.h>
#include <stdlib.h>

enum { KIND_JAC = 1, KIND_HESS = 2 };
enum { WALK_NODES = 1, WALK_LOG = 2 };

struct dr_sparse_plan {
    int kind, walk;
    size_t m, n;          /* outputs (1 for a Hessian), variables         */
    int64_t *ry, *rx;     /* their relative ids (-1: a constant)          */
    int64_t top;          /* the largest of ry (-1: none)                  */
    uint64_t hash;        /* of the graph up to top                        */
    size_t rows, cols, nnz;
    size_t *rowptr, *colind;
    uint32_t *color;      /* by column (forward, Hessian) or row (reverse) */
    size_t ncolors;
    bool forward;         /* Jacobian: columns coloured, forward sweeps    */
    size_t *src;          /* Hessian: where each entry is read             */
};

/* ------------------------------------------------------------- the hash */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdu;
    return h ^ (h >> 33);
}

/* --------------------------------------------------------- index sets
 * Every set is a run of distinct variable indices in one growing buffer,
 * off[r] and len[r] by relative id, increasing, or decreasing where
 * down[r]; a node with one contributing argument shares its run.  A sum
 * whose terms come in either order extends the run written last (a
 * decreasing run takes terms of lower indices), so a chain of k additions
 * writes k indices, not k^2 / 2. */

typedef struct sets {
    uint32_t *buf;
    size_t used, cap;
    size_t *off;
    uint32_t *len;
    uint8_t *down;
    bool oom;
} sets;

/* the i-th smallest index of the set of r */
static inline uint32_t set_at(const sets *S, int64_t r, size_t i)
{
    return S->buf[S->off[r] + (S->down[r] ? S->len[r] - 1 - i : i)];
}

static bool room(sets *S, size_t more)
{
    if (S->cap - S->used >= more)
        return true;
    size_t cap = S->cap ? S->cap : 1024;
    while (cap - S->used < more) {
        if (cap > SIZE_MAX / 2 / sizeof(uint32_t)) {
            S->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint32_t *p = dr__malloc(cap * sizeof *p);
    if (!p) {
        S->oom = true;
        return false;
    }
    if (S->used)
        memcpy(p, S->buf, S->used * sizeof *p);
    dr__free(S->buf);
    S->buf = p;
    S->cap = cap;
    return true;
}

/* the set of r: the union of the sets of a and b, as a new increasing
   run */
static void unite2(sets *S, int64_t r, int64_t a, int64_t b)
{
    size_t na = S->len[a], nb = S->len[b];
    if (!room(S, na + nb))
        return;
    uint32_t *d = S->buf + S->used;
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        uint32_t u = set_at(S, a, i), v = set_at(S, b, j);
        d[k++] = u < v ? u : v;
        i += u <= v;
        j += v <= u;
    }
    while (i < na)
        d[k++] = set_at(S, a, i++);
    while (j < nb)
        d[k++] = set_at(S, b, j++);
    S->off[r] = S->used;
    S->len[r] = (uint32_t)k;
    S->used += k;
}

/* the set of r: that of a, the run written last, extended by that of b
   where all of b lies beyond a's far end in a's direction (a run of one
   goes either way); false where it does not */
static bool extend(sets *S, int64_t r, int64_t a, int64_t b)
{
    size_t oa = S->off[a], na = S->len[a], nb = S->len[b];
    if (oa + na != S->used)
        return false;
    bool down;
    if ((!S->down[a] || na == 1) && set_at(S, b, 0) > set_at(S, a, na - 1))
        down = false;
    else if ((S->down[a] || na == 1) && set_at(S, b, nb - 1) < set_at(S, a, 0))
        down = true;
    else
        return false;
    if (!room(S, nb))
        return true; /* (out of memory: the set stays empty) */
    uint32_t *d = S->buf + S->used;
    for (size_t j = 0; j < nb; j++)
        d[j] = set_at(S, b, down ? nb - 1 - j : j);
    S->off[r] = oa;
    S->len[r] = (uint32_t)(na + nb);
    S->down[r] = down;
    S->used += nb;
    return true;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* sort and drop repeats of p[0 .. n-1]; the new length */
static size_t sort_unique(uint32_t *p, size_t n)
{
    if (n > 1)
        qsort(p, n, sizeof *p, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || p[k - 1] != p[i])
            p[k++] = p[i];
    return k;
}

/* the set of node r: the union of its own places (seeds) and its nargs
   arguments' sets (an argument < 0 is a constant) */
static void set_of(sets *S, int64_t r, const uint32_t *seeds, size_t ns,
                   size_t nargs, const int64_t *args)
{
    size_t total = ns, nonempty = ns ? 1 : 0;
    int64_t one = -1;
    for (size_t i = 0; i < nargs; i++)
        if (args[i] >= 0 && S->len[args[i]]) {
            total += S->len[args[i]];
            if (one < 0 || S->off[args[i]] != S->off[one] ||
                S->len[args[i]] != S->len[one])
                nonempty++;
            one = args[i];
        }
    S->off[r] = 0;
    S->len[r] = 0;
    S->down[r] = 0;
    if (total == 0)
        return;
    if (nonempty == 1 && one >= 0) { /* shared with its one argument */
        S->off[r] = S->off[one];
        S->len[r] = S->len[one];
        S->down[r] = S->down[one];
        return;
    }
    if (nargs <= 2 && ns == 0) {
        /* (both sets are non-empty here, and not the same run) */
        if (!extend(S, r, args[0], args[1]) &&
            !extend(S, r, args[1], args[0]))
            unite2(S, r, args[0], args[1]);
        return;
    }
    if (!room(S, total))
        return;
    uint32_t *d = S->buf + S->used;
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        d[k++] = seeds[i];
    for (size_t i = 0; i < nargs; i++)
        if (args[i] >= 0)
            for (uint32_t j = 0; j < S->len[args[i]]; j++)
                d[k++] = S->buf[S->off[args[i]] + j];
    k = sort_unique(d, k);
    S->off[r] = S->used;
    S->len[r] = (uint32_t)k;
    S->used += k;
}

/* ------------------------------------------------ the graph, node by node
 * What the pattern needs of a node: its arguments (relative ids, -1 for
 * none) and which second partials it has. */

enum { H_AA = 1, H_AB = 2, H_BB = 4 };
/* a Hessian's marks by relative id: y depends on the node (REACH), its
   set is used by a node y depends on that has second partials (NEED) */
enum { REACH = 1, NEED = 2 };

/* the second partials an operation has, by its structure */
static int second_of(int op)
{
    switch (op) {
    case DR_OPC_mul:
        return H_AB;
    case DR_OPC_div:
        return H_AB | H_BB;
    case DR_OPC_pow:
    case DR_OPC_atan2:
    case DR_OPC_hypot:
    case DR_OPC_logbase:
        return H_AA | H_AB | H_BB;
    case DR_OPC_add:
    case DR_OPC_sub:
    case DR_OPC_min:
    case DR_OPC_max:
    case DR_OPC_neg:
    case DR_OPC_abs:
    case DR_OPC_relu:
        return 0; /* linear where they are smooth */
    case DR_OPC_powi:
        return H_AA;
    default:
        break;
    }
    /* every other operation of one argument (the lists' order) */
    if (op >= DR_OPC_neg && op <= DR_OPC_sigmoid)
        return H_AA;
    return 0; /* inputs, given partials, sums, select: linear */
}

/* an extended node's arguments, and whether it has second partials
   (dr_ext.pattern); false for a kind with no rule */
static bool ext_args(dr_ext *x, size_t *n, const int64_t **args,
                     bool *nonlinear)
{
    bool nl = false;
    if (!x || !x->pattern || !x->pattern(x, n, args, &nl))
        return false;
    if (nonlinear)
        *nonlinear = nl;
    return true;
}

/* the second partials of a log entry (an extended node's: all of its
   arguments' together, H_AA over its own set) */
static int second_of_entry(const dr_oplog *e)
{
    if (e->op != DR_OPC_EXT)
        return second_of(e->op);
    size_t n;
    const int64_t *args;
    bool nl = false;
    return ext_args(dr__oplog_ext(e), &n, &args, &nl) && nl ? H_AA : 0;
}

/* the arguments of a log entry (*args: two in two, or an n-ary record's);
   false for a kind with no rule (no arguments known) */
static bool log_args(const dr_oplog *e, int64_t two[2], size_t *n,
                     const int64_t **args)
{
    switch (e->op) {
    case DR_OPC_GAP:
    case DR_OPC_INPUT:
        *n = 0;
        *args = two;
        return true;
    case DR_OPC_EXT: /* (array operations) */
        return ext_args(dr__oplog_ext(e), n, args, NULL);
    case DR_OPC_NONE:
    case DR_OPC_EXTOUT:
        return false;
    case DR_OPC_NARY:
    case DR_OPC_SUMN:
    case DR_OPC_PROG: {
        const double *ps;
        if (!dr__oplog_nary(e, n, args, &ps)) {
            *n = 0;
            *args = two;
        }
        return true;
    }
    default: /* a scalar operation, given partials, select: both sides */
        if (e->op >= DR_OPC_COUNT)
            return false;
        two[0] = e->ra;
        two[1] = e->rb;
        *n = 2;
        *args = two;
        return true;
    }
}

/* ------------------------------------------------------------ the walks */

typedef struct walk {
    const dr_tape *t;
    int64_t top;           /* the last id that matters                   */
    const uint32_t *sptr;  /* seeds of relative id r: sidx[sptr[r] ..]   */
    const uint32_t *sidx;
    bool cut;              /* a node of x is a variable, not looked
                              through (Hessian); else its arguments' sets
                              are added to its places (Jacobian)          */
    sets *S;               /* NULL: the hash alone                        */
    const uint8_t *need;   /* by relative id, the sets to compute (bit
                              NEED); NULL: all                            */
    uint64_t hash;
    dr_status st;
} walk;

static void visit(walk *w, int64_t r, int op, size_t nargs,
                  const int64_t *args)
{
    w->hash = mix(mix(w->hash, (uint64_t)r), (uint64_t)op);
    for (size_t i = 0; i < nargs; i++)
        w->hash = mix(w->hash, (uint64_t)args[i]);
    if (!w->S)
        return;
    if (w->need && !(w->need[r] & NEED)) {
        w->S->len[r] = 0;
        return;
    }
    const uint32_t *seeds = w->sidx + w->sptr[r];
    size_t ns = w->sptr[r + 1] - w->sptr[r];
    if (w->cut && ns)
        nargs = 0;
    set_of(w->S, r, seeds, ns, nargs, args);
}

/* the nodes of one chunk, oldest first, up to top */
static dr_status chunk_visit(dr_chunk *c, void *ctx)
{
    walk *w = ctx;
    for (size_t i = 0; i < c->n && w->st == DR_OK; i++) {
        int64_t r = c->first + (int64_t)i;
        if (r > w->top)
            break;
        int64_t two[2] = {-1, -1};
        if (i < c->lead) {
            visit(w, r, 1, 0, two);
            continue;
        }
        const dr_node *p = &c->nodes[i];
        if (p->a == DR_EXT_TAG) {
            const int64_t *args;
            const double *ps;
            size_t n;
            if (!dr__nary_parts(dr__node_ext(p), &n, &args, &ps) &&
                !ext_args(dr__node_ext(p), &n, &args, NULL)) {
                w->st = DR_ENOTSUP; /* external functions */
                break;
            }
            visit(w, r, 2, n, args);
            continue;
        }
        if (p->a > 0)
            two[0] = r - p->a;
        if (p->a > 0 && p->b)
            two[1] = r - p->b;
        visit(w, r, 0, two[0] < 0 ? 0 : 2, two);
    }
    if (w->S && w->S->oom)
        w->st = DR_ENOMEM;
    return w->st;
}

static dr_status walk_nodes(dr_tape *t, walk *w)
{
    if (t->hist || t->fork)
        return DR_ENOTSUP;
    if (!t->chunk || w->top < 0)
        return DR_OK;
    t->chunk->n = (size_t)(t->cur - t->chunk->nodes);
    dr_status st = dr__chunks_oldest_first(t->chunk, chunk_visit, w);
    return st != DR_OK ? st : w->st;
}

/* every id up to top off the log; with sets, one without an entry or
   without a rule must be a variable (as dr_hvp), and for a Jacobian one
   without a rule is refused (its arguments are not known) */
static dr_status walk_log(const dr_tape *t, walk *w)
{
    for (int64_t r = 0; r <= w->top; r++) {
        const dr_oplog *e = dr__oplog_at(t, r);
        int64_t two[2] = {-1, -1};
        size_t n = 0;
        const int64_t *args = two;
        bool var = w->S && w->sptr[r] != w->sptr[r + 1];
        if (!e) {
            if (w->S && !var)
                return DR_ENOTSUP;
            visit(w, r, -1, 0, two);
        } else if (!log_args(e, two, &n, &args)) {
            if (w->S && (!var || !w->cut))
                return DR_ENOTSUP;
            visit(w, r, -2, 0, two);
        } else {
            visit(w, r, e->op, n, args);
        }
        if (w->S && w->S->oom)
            return DR_ENOMEM;
    }
    return DR_OK;
}

/* the log covers every id up to top (with or without an entry) */
static bool log_covers(const dr_tape *t, int64_t top)
{
    return t->oplog && top < t->oplog_lo + t->oplog_n;
}

/* -------------------------------------------------------- plan building */

void dr_sparse_plan_free(dr_sparse_plan *p)
{
    if (!p)
        return;
    dr__free(p->ry);
    dr__free(p->rx);
    dr__free(p->rowptr);
    dr__free(p->colind);
    dr__free(p->color);
    dr__free(p->src);
    dr__free(p);
}

/* the plan's ids, seeds by relative id (sptr over top + 2 places) */
static dr_status plan_ids(const dr_tape *t, dr_sparse_plan *p, size_t m,
                          const dr_real *y, size_t n, const dr_real *x,
                          uint32_t **sptr, uint32_t **sidx)
{
    p->ry = dr__malloc(m * sizeof *p->ry + 1);
    p->rx = dr__malloc(n * sizeof *p->rx + 1);
    if (!p->ry || !p->rx)
        return DR_ENOMEM;
    p->top = -1;
    for (size_t i = 0; i < m; i++) {
        p->ry[i] = dr__rel_of(t, y[i].idx);
        if (p->ry[i] > p->top)
            p->top = p->ry[i];
    }
    for (size_t i = 0; i < n; i++)
        p->rx[i] = dr__rel_of(t, x[i].idx);
    size_t span = (size_t)(p->top + 1);
    if (span > SIZE_MAX / sizeof(uint32_t) - 2)
        return DR_ENOMEM;
    *sptr = dr__malloc((span + 2) * sizeof **sptr);
    *sidx = dr__malloc(n * sizeof **sidx + 1);
    if (!*sptr || !*sidx)
        return DR_ENOMEM;
    uint32_t *c = *sptr;
    memset(c, 0, (span + 2) * sizeof *c);
    for (size_t i = 0; i < n; i++)
        if (p->rx[i] >= 0 && p->rx[i] <= p->top)
            c[p->rx[i] + 2]++;
    for (size_t r = 0; r < span; r++)
        c[r + 2] += c[r + 1];
    for (size_t i = 0; i < n; i++) /* increasing i: each run sorted */
        if (p->rx[i] >= 0 && p->rx[i] <= p->top)
            (*sidx)[c[p->rx[i] + 1]++] = (uint32_t)i;
    return DR_OK;
}

static dr_status sets_new(sets *S, int64_t top)
{
    memset(S, 0, sizeof *S);
    size_t span = (size_t)(top + 1);
    if (span > SIZE_MAX / sizeof(size_t))
        return DR_ENOMEM;
    S->off = dr__malloc(span * sizeof *S->off + 1);
    S->len = dr__malloc(span * sizeof *S->len + 1);
    S->down = dr__malloc(span * sizeof *S->down + 1);
    if (!S->off || !S->len || !S->down)
        return DR_ENOMEM;
    memset(S->len, 0, span * sizeof *S->len);
    memset(S->off, 0, span * sizeof *S->off);
    memset(S->down, 0, span * sizeof *S->down);
    return DR_OK;
}

static void sets_free(sets *S)
{
    dr__free(S->buf);
    dr__free(S->off);
    dr__free(S->len);
    dr__free(S->down);
}

/* the transpose of a rows x cols pattern */
static dr_status transpose(size_t rows, size_t cols, const size_t *rp,
                           const size_t *ri, size_t **cp, size_t **ci)
{
    size_t nnz = rp[rows];
    *cp = dr__malloc((cols + 1) * sizeof **cp);
    *ci = dr__malloc(nnz * sizeof **ci + 1);
    if (!*cp || !*ci)
        return DR_ENOMEM;
    size_t *c = *cp;
    memset(c, 0, (cols + 1) * sizeof *c);
    for (size_t e = 0; e < nnz; e++)
        c[ri[e] + 1]++;
    for (size_t j = 0; j < cols; j++)
        c[j + 1] += c[j];
    size_t *at = dr__malloc((cols + 1) * sizeof *at);
    if (!at)
        return DR_ENOMEM;
    memcpy(at, c, (cols + 1) * sizeof *at);
    for (size_t i = 0; i < rows; i++)
        for (size_t e = rp[i]; e < rp[i + 1]; e++)
            (*ci)[at[ri[e]]++] = i;
    dr__free(at);
    return DR_OK;
}

static bool checked_sizes(size_t m, size_t n)
{
    return n <= UINT32_MAX - 1 && m <= UINT32_MAX - 1;
}

/* the most entries of a line of a CSR (or CSC) pattern of k lines */
static size_t longest(size_t k, const size_t *ptr)
{
    size_t most = 0;
    for (size_t i = 0; i < k; i++)
        if (ptr[i + 1] - ptr[i] > most)
            most = ptr[i + 1] - ptr[i];
    return most;
}

/* the columns' colouring (dr__color_columns' arguments), given the
   longest row: where that row has every column, each column its own
   colour, which is what the greedy colouring gives there */
static dr_status color_side(size_t rows, size_t cols, const size_t *rp,
                            const size_t *ri, const size_t *cp,
                            const size_t *ci, size_t longest_row,
                            uint32_t *color, size_t *ncolors)
{
    if (cols == 0 || longest_row < cols)
        return dr__color_columns(rows, cols, rp, ri, cp, ci, color, ncolors);
    for (size_t j = 0; j < cols; j++)
        color[j] = (uint32_t)j;
    *ncolors = cols;
    return DR_OK;
}

static dr_status jac_plan(dr_tape *t, size_t m, const dr_real *y, size_t n,
                          const dr_real *x, dr_sparse_plan *p)
{
    uint32_t *sptr = NULL, *sidx = NULL;
    size_t *cp = NULL, *ci = NULL;
    uint32_t *rcolor = NULL;
    sets S;
    memset(&S, 0, sizeof S);
    p->kind = KIND_JAC;
    p->m = p->rows = m;
    p->n = p->cols = n;
    dr_status st = plan_ids(t, p, m, y, n, x, &sptr, &sidx);
    if (st == DR_OK)
        st = sets_new(&S, p->top);
    walk w = {t, p->top, sptr, sidx, false, &S, NULL, 0, DR_OK};
    if (st == DR_OK) {
        /* the nodes where they can be read (every order); a tape that
           forked off its log */
        p->walk = !t->hist && !t->fork ? WALK_NODES : WALK_LOG;
        if (p->walk == WALK_NODES)
            st = walk_nodes(t, &w);
        else
            st = log_covers(t, p->top) ? walk_log(t, &w)
                                       : DR_ENOTSUP;
        p->hash = w.hash;
    }
    /* the rows: each output's set */
    if (st == DR_OK) {
        p->rowptr = dr__malloc((m + 1) * sizeof *p->rowptr);
        st = p->rowptr ? DR_OK : DR_ENOMEM;
    }
    if (st == DR_OK) {
        p->rowptr[0] = 0;
        for (size_t i = 0; i < m; i++)
            p->rowptr[i + 1] =
                p->rowptr[i] + (p->ry[i] >= 0 ? S.len[p->ry[i]] : 0);
        p->nnz = p->rowptr[m];
        p->colind = dr__malloc(p->nnz * sizeof *p->colind + 1);
        st = p->colind ? DR_OK : DR_ENOMEM;
    }
    if (st == DR_OK) {
        for (size_t i = 0; i < m; i++)
            for (size_t e = p->rowptr[i]; e < p->rowptr[i + 1]; e++)
                p->colind[e] = set_at(&S, p->ry[i], e - p->rowptr[i]);
        st = transpose(m, n, p->rowptr, p->colind, &cp, &ci);
    }
    /* both colourings; the fewer colours, columns (forward) at a tie */
    size_t kc = 0, kr = 0;
    if (st == DR_OK) {
        p->color = dr__malloc(n * sizeof *p->color + 1);
        rcolor = dr__malloc(m * sizeof *rcolor + 1);
        st = p->color && rcolor ? DR_OK : DR_ENOMEM;
    }
    /* The longest row is a floor under the columns' colours (its columns
       all differ), and the longest column under the rows'.  A colouring
       whose floor is above the other's count cannot win, and is not made:
       the greedy colouring of a side costs the square of the other side's
       longest line, n^2 for an output that reads every input.  A side
       whose floor is all of it is coloured one by one, as the greedy
       colouring would (n colours for n), without the n^2. */
    bool by_cols = false, by_rows = false;
    if (st == DR_OK) {
        size_t lr = longest(m, p->rowptr), lc = longest(n, cp);
        if (lr <= lc) {
            st = color_side(m, n, p->rowptr, p->colind, cp, ci, lr, p->color,
                            &kc);
            by_cols = true;
            if (st == DR_OK && lc < kc) {
                st = color_side(n, m, cp, ci, p->rowptr, p->colind, lc,
                                rcolor, &kr);
                by_rows = true;
            }
        } else {
            st = color_side(n, m, cp, ci, p->rowptr, p->colind, lc, rcolor,
                            &kr);
            by_rows = true;
            if (st == DR_OK && lr <= kr) { /* (a tie goes to columns) */
                st = color_side(m, n, p->rowptr, p->colind, cp, ci, lr,
                                p->color, &kc);
                by_cols = true;
            }
        }
    }
    if (st == DR_OK) {
        p->forward = by_cols && (!by_rows || kc <= kr);
        p->ncolors = p->nnz == 0 ? 0 : p->forward ? kc : kr;
        if (!p->forward) {
            uint32_t *c = p->color;
            p->color = rcolor;
            rcolor = c;
        }
    }
    dr__free(rcolor);
    dr__free(cp);
    dr__free(ci);
    dr__free(sptr);
    dr__free(sidx);
    sets_free(&S);
    return st;
}

/* a variable's row of interactions, unsorted with repeats, sorted and
   made unique whenever it has doubled since */
typedef struct row {
    uint32_t *v;
    size_t n, cap, clean;
} row;

static bool row_add(row *R, const uint32_t *s, size_t k)
{
    if (R->cap - R->n < k) {
        if (R->n - R->clean > R->clean + 16) {
            R->n = sort_unique(R->v, R->n);
            R->clean = R->n;
        }
        if (R->cap - R->n < k) {
            size_t cap = R->cap ? R->cap : 8;
            while (cap - R->n < k) {
                if (cap > SIZE_MAX / 2 / sizeof(uint32_t))
                    return false;
                cap *= 2;
            }
            uint32_t *p = dr__malloc(cap * sizeof *p);
            if (!p)
                return false;
            if (R->n)
                memcpy(p, R->v, R->n * sizeof *p);
            dr__free(R->v);
            R->v = p;
            R->cap = cap;
        }
    }
    memcpy(R->v + R->n, s, k * sizeof *s);
    R->n += k;
    return true;
}

/* the rows of every variable in set (o, k) take the set (o2, k2) */
static bool interact(sets *S, row *rows, size_t o, size_t k, size_t o2,
                     size_t k2)
{
    if (k == 0 || k2 == 0)
        return true; /* (and S->buf may be NULL) */
    for (size_t i = 0; i < k; i++)
        if (!row_add(&rows[S->buf[o + i]], S->buf + o2, k2))
            return false;
    return true;
}

static dr_status hess_plan(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                           dr_sparse_plan *p)
{
    uint32_t *sptr = NULL, *sidx = NULL;
    uint8_t *reach = NULL;
    row *rows = NULL;
    sets S;
    memset(&S, 0, sizeof S);
    p->kind = KIND_HESS;
    p->walk = WALK_LOG;
    p->m = 1;
    p->n = p->rows = p->cols = n;
    dr_status st = plan_ids(t, p, 1, &y, n, x, &sptr, &sidx);
    if (st == DR_OK)
        st = sets_new(&S, p->top);
    if (st == DR_OK && p->top >= 0 && !log_covers(t, p->top))
        st = DR_ENOTSUP;
    size_t span = (size_t)(p->top + 1);
    if (st == DR_OK) {
        reach = dr__malloc(span + 1);
        rows = dr__malloc(n * sizeof *rows + 1);
        if (rows)
            memset(rows, 0, n * sizeof *rows + 1);
        st = reach && rows ? DR_OK : DR_ENOMEM;
    }
    /* the ids y depends on (not through a variable: its rule is cut), and
       those whose sets the interactions need: the arguments of a node y
       depends on that has second partials, and (through linear nodes)
       what their sets are made of.  A long sum, as an objective is, then
       keeps no sets: each of its partial sums would copy the last */
    if (st == DR_OK) {
        memset(reach, 0, span + 1);
        if (p->top >= 0)
            reach[p->top] = REACH;
        for (int64_t r = p->top; r >= 0; r--) {
            if (!reach[r] || sptr[r] != sptr[r + 1])
                continue;
            const dr_oplog *e = dr__oplog_at(t, r);
            int64_t two[2];
            size_t na = 0;
            const int64_t *args = two;
            if (!e || !log_args(e, two, &na, &args)) {
                st = DR_ENOTSUP;
                break;
            }
            uint8_t mark = reach[r] & REACH;
            if ((reach[r] & NEED) || (mark && second_of_entry(e)))
                mark |= NEED;
            /* (an extended node's interaction is over its own set) */
            if (mark && e->op == DR_OPC_EXT && second_of_entry(e))
                reach[r] |= NEED;
            for (size_t i = 0; i < na; i++)
                if (args[i] >= 0)
                    reach[args[i]] |= mark;
        }
    }
    /* the sets, and at each node y reaches with second partials the
       interactions of its arguments' sets */
    walk w = {t, p->top, sptr, sidx, true, &S, reach, 0, DR_OK};
    if (st == DR_OK)
        st = walk_log(t, &w);
    p->hash = w.hash;
    for (int64_t r = 0; st == DR_OK && r <= p->top; r++) {
        if (!(reach[r] & REACH) || sptr[r] != sptr[r + 1])
            continue;
        const dr_oplog *e = dr__oplog_at(t, r);
        int h = e ? second_of_entry(e) : 0;
        if (!h)
            continue;
        int64_t a = e->ra, b = e->rb;
        if (e->op == DR_OPC_EXT)
            a = r, b = -1; /* every pair of its arguments' variables */
        size_t oa = a >= 0 ? S.off[a] : 0, na = a >= 0 ? S.len[a] : 0;
        size_t ob = b >= 0 ? S.off[b] : 0, nb = b >= 0 ? S.len[b] : 0;
        bool ok = true;
        if (h & H_AA)
            ok &= interact(&S, rows, oa, na, oa, na);
        if (h & H_BB)
            ok &= interact(&S, rows, ob, nb, ob, nb);
        if (h & H_AB) {
            ok &= interact(&S, rows, oa, na, ob, nb);
            ok &= interact(&S, rows, ob, nb, oa, na);
        }
        if (!ok)
            st = DR_ENOMEM;
    }
    if (st == DR_OK) {
        p->rowptr = dr__malloc((n + 1) * sizeof *p->rowptr);
        st = p->rowptr ? DR_OK : DR_ENOMEM;
    }
    if (st == DR_OK) {
        p->rowptr[0] = 0;
        for (size_t j = 0; j < n; j++) {
            rows[j].n = sort_unique(rows[j].v, rows[j].n);
            p->rowptr[j + 1] = p->rowptr[j] + rows[j].n;
        }
        p->nnz = p->rowptr[n];
        p->colind = dr__malloc(p->nnz * sizeof *p->colind + 1);
        p->src = dr__malloc(p->nnz * sizeof *p->src + 1);
        p->color = dr__malloc(n * sizeof *p->color + 1);
        st = p->colind && p->src && p->color ? DR_OK : DR_ENOMEM;
    }
    if (st == DR_OK) {
        for (size_t j = 0; j < n; j++)
            for (size_t e = 0; e < rows[j].n; e++)
                p->colind[p->rowptr[j] + e] = rows[j].v[e];
        st = dr__color_symmetric(n, p->rowptr, p->colind, p->color,
                                 &p->ncolors, p->src);
        if (p->nnz == 0)
            p->ncolors = 0; /* no sweep */
    }
    for (size_t j = 0; rows && j < n; j++)
        dr__free(rows[j].v);
    dr__free(rows);
    dr__free(reach);
    dr__free(sptr);
    dr__free(sidx);
    sets_free(&S);
    return st;
}

static dr_status plan_new(dr_sparse_plan **out)
{
    dr_sparse_plan *p = dr__malloc(sizeof *p);
    if (!p)
        return DR_ENOMEM;
    memset(p, 0, sizeof *p);
    *out = p;
    return DR_OK;
}

dr_status dr_sparse_jacobian_plan(dr_tape *t, size_t m, const dr_real *y,
                                  size_t n, const dr_real *x,
                                  dr_sparse_plan **plan)
{
    if (!plan)
        return DR_EINVAL;
    *plan = NULL;
    if (!t || (m && !y) || (n && !x))
        return DR_EINVAL;
    if (!checked_sizes(m, n))
        return DR_ERANGE;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    dr_sparse_plan *p = NULL;
    if (st == DR_OK)
        st = plan_new(&p);
    if (st == DR_OK)
        st = jac_plan(t, m, y, n, x, p);
    if (st != DR_OK)
        dr_sparse_plan_free(p);
    else
        *plan = p;
    return st;
}

dr_status dr_sparse_hessian_plan(dr_tape *t, dr_real y, size_t n,
                                 const dr_real *x, dr_sparse_plan **plan)
{
    if (!plan)
        return DR_EINVAL;
    *plan = NULL;
    if (!t || (n && !x))
        return DR_EINVAL;
    if (!checked_sizes(1, n))
        return DR_ERANGE;
    dr_status st = dr__sweep_ready(t, 1, &y, n, x);
    dr_sparse_plan *p = NULL;
    if (st == DR_OK)
        st = plan_new(&p);
    if (st == DR_OK)
        st = hess_plan(t, y, n, x, p);
    if (st != DR_OK)
        dr_sparse_plan_free(p);
    else
        *plan = p;
    return st;
}

dr_status dr_sparse_plan_pattern(const dr_sparse_plan *p, size_t *rows,
                                 size_t *cols, size_t *nnz,
                                 const size_t **rowptr, const size_t **colind)
{
    if (!p)
        return DR_EINVAL;
    if (rows)
        *rows = p->rows;
    if (cols)
        *cols = p->cols;
    if (nnz)
        *nnz = p->nnz;
    if (rowptr)
        *rowptr = p->rowptr;
    if (colind)
        *colind = p->colind;
    return DR_OK;
}

size_t dr_sparse_plan_colors(const dr_sparse_plan *p)
{
    return p ? p->ncolors : 0;
}

/* ------------------------------------------------------------ evaluation */

/* the plan fits t, y and x: the same ids and the same graph */
static dr_status plan_fits(dr_tape *t, const dr_sparse_plan *p, int kind,
                           size_t m, const dr_real *y, size_t n,
                           const dr_real *x)
{
    if (p->kind != kind || p->m != m || p->n != n)
        return DR_ESHAPE;
    for (size_t i = 0; i < m; i++)
        if (dr__rel_of(t, y[i].idx) != p->ry[i])
            return DR_ESHAPE;
    for (size_t i = 0; i < n; i++)
        if (dr__rel_of(t, x[i].idx) != p->rx[i])
            return DR_ESHAPE;
    /* the hash again, no sets: the seeds' places do not enter it */
    walk w = {t, p->top, NULL, NULL, kind == KIND_HESS, NULL, NULL, 0, DR_OK};
    dr_status st;
    if (p->walk == WALK_NODES)
        st = t->hist || t->fork ? DR_ESHAPE : walk_nodes(t, &w);
    else
        st = p->top < 0 || log_covers(t, p->top) ? walk_log(t, &w)
                                                 : DR_ESHAPE;
    if (st == DR_ENOTSUP)
        st = DR_ESHAPE;
    if (st == DR_OK && w.hash != p->hash)
        st = DR_ESHAPE;
    return st;
}

/* directions a pass of the compressed Jacobian, and at most this much
   scratch for one (as dr_jacobian) */
#define JBLOCK 10
#define JBLOCK_BYTES ((size_t)256 << 20)

static dr_status jac_eval(dr_tape *t, const dr_sparse_plan *p,
                          const dr_real *y, const dr_real *x, double *val)
{
    size_t m = p->m, n = p->n, k = p->ncolors;
    if (p->nnz == 0)
        return DR_OK;
    if (p->forward && !dr__forward_ok(t))
        return DR_ENOTSUP;
    size_t fit = JBLOCK_BYTES / sizeof(double) /
                 ((size_t)dr__id_limit(t) + 1);
    size_t kb = k < JBLOCK ? k : JBLOCK;
    if (kb > fit)
        kb = fit ? fit : 1;
    /* C: the products, the rows of the compressed Jacobian (m x k,
       forward) or of its transpose (k x n, reverse); S the seeds and R
       the results of one pass */
    size_t seeds = p->forward ? n : m, reads = p->forward ? m : n;
    if (k > SIZE_MAX / sizeof(double) / (reads ? reads : 1) ||
        kb > SIZE_MAX / sizeof(double) / (seeds + reads + 1))
        return DR_ENOMEM;
    double *C = dr__malloc(k * reads * sizeof *C + 1);
    double *S = dr__malloc(kb * (seeds + reads) * sizeof *S + 1);
    dr_status st = C && S ? DR_OK : DR_ENOMEM;
    double *R = S ? S + kb * seeds : NULL;
    for (size_t c0 = 0; st == DR_OK && c0 < k; c0 += kb) {
        size_t w = k - c0 < kb ? k - c0 : kb;
        memset(S, 0, w * seeds * sizeof *S);
        if (p->forward) {
            /* S is n x w: seed j in the direction of its colour */
            for (size_t j = 0; j < n; j++)
                if (p->color[j] >= c0 && p->color[j] < c0 + w)
                    S[j * w + (p->color[j] - c0)] = 1.0;
            dr_pass_io in = {n, x, w, 1}, out = {m, y, w, 1};
            st = dr__pass_k(t, true, w, in, S, out, R, false);
            for (size_t i = 0; st == DR_OK && i < m; i++)
                for (size_t c = 0; c < w; c++)
                    C[i * k + c0 + c] = R[i * w + c];
        } else {
            /* S is w x m: row c seeds the outputs of colour c0 + c */
            for (size_t i = 0; i < m; i++)
                if (p->color[i] >= c0 && p->color[i] < c0 + w)
                    S[(p->color[i] - c0) * m + i] = 1.0;
            st = dr_vjp_vec(t, m, y, w, S, n, x, C + c0 * n);
        }
    }
    for (size_t i = 0; st == DR_OK && i < m; i++)
        for (size_t e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) {
            size_t j = p->colind[e];
            val[e] = p->forward ? C[i * k + p->color[j]]
                                : C[p->color[i] * n + j];
        }
    dr__free(C);
    dr__free(S);
    return st;
}

dr_status dr_sparse_jacobian_eval(dr_tape *t, const dr_sparse_plan *p,
                                  size_t m, const dr_real *y, size_t n,
                                  const dr_real *x, double *val)
{
    if (!t || !p || (m && !y) || (n && !x) || (p->nnz && !val))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, m, y, n, x);
    if (st == DR_OK)
        st = plan_fits(t, p, KIND_JAC, m, y, n, x);
    if (st == DR_OK)
        st = jac_eval(t, p, y, x, val);
    return st;
}

static dr_status hess_eval(dr_tape *t, const dr_sparse_plan *p, dr_real y,
                           const dr_real *x, double *val)
{
    size_t n = p->n, k = p->ncolors;
    if (p->nnz == 0)
        return DR_OK;
    if (k > SIZE_MAX / sizeof(double) / 2 / n)
        return DR_ENOMEM;
    double *V = dr__malloc(2 * k * n * sizeof *V);
    if (!V)
        return DR_ENOMEM;
    double *B = V + k * n;
    memset(V, 0, k * n * sizeof *V);
    for (size_t j = 0; j < n; j++)
        V[p->color[j] * n + j] = 1.0;
    dr_status st = dr_hvp_vec(t, y, n, x, k, V, B);
    for (size_t e = 0; st == DR_OK && e < p->nnz; e++)
        val[e] = B[p->src[e]];
    dr__free(V);
    return st;
}

dr_status dr_sparse_hessian_eval(dr_tape *t, const dr_sparse_plan *p,
                                 dr_real y, size_t n, const dr_real *x,
                                 double *val)
{
    if (!t || !p || (n && !x) || (p->nnz && !val))
        return DR_EINVAL;
    dr_status st = dr__sweep_ready(t, 1, &y, n, x);
    if (st == DR_OK)
        st = plan_fits(t, p, KIND_HESS, 1, &y, n, x);
    if (st == DR_OK)
        st = hess_eval(t, p, y, x, val);
    return st;
}

/* ----------------------------------------------------------- one call */

void dr_sparse_free(dr_sparse *A)
{
    if (!A)
        return;
    dr__free(A->rowptr);
    dr__free(A->colind);
    dr__free(A->val);
    memset(A, 0, sizeof *A);
}

/* A as p's pattern, with room for its values */
static dr_status sparse_of(const dr_sparse_plan *p, dr_sparse *A)
{
    A->rows = p->rows;
    A->cols = p->cols;
    A->nnz = p->nnz;
    A->rowptr = dr__malloc((p->rows + 1) * sizeof *A->rowptr);
    A->colind = dr__malloc(p->nnz * sizeof *A->colind + 1);
    A->val = dr__malloc(p->nnz * sizeof *A->val + 1);
    if (!A->rowptr || !A->colind || !A->val)
        return DR_ENOMEM;
    memcpy(A->rowptr, p->rowptr, (p->rows + 1) * sizeof *A->rowptr);
    if (p->nnz)
        memcpy(A->colind, p->colind, p->nnz * sizeof *A->colind);
    return DR_OK;
}

dr_status dr_sparse_jacobian(dr_tape *t, size_t m, const dr_real *y,
                             size_t n, const dr_real *x, dr_sparse *J)
{
    if (!J)
        return DR_EINVAL;
    memset(J, 0, sizeof *J);
    dr_sparse_plan *p;
    dr_status st = dr_sparse_jacobian_plan(t, m, y, n, x, &p);
    if (st == DR_OK)
        st = sparse_of(p, J);
    if (st == DR_OK)
        st = jac_eval(t, p, y, x, J->val);
    if (st != DR_OK)
        dr_sparse_free(J);
    dr_sparse_plan_free(p);
    return st;
}

dr_status dr_sparse_hessian(dr_tape *t, dr_real y, size_t n,
                            const dr_real *x, dr_sparse *H)
{
    if (!H)
        return DR_EINVAL;
    memset(H, 0, sizeof *H);
    dr_sparse_plan *p;
    dr_status st = dr_sparse_hessian_plan(t, y, n, x, &p);
    if (st == DR_OK)
        st = sparse_of(p, H);
    if (st == DR_OK)
        st = hess_eval(t, p, y, x, H->val);
    if (st != DR_OK)
        dr_sparse_free(H);
    dr_sparse_plan_free(p);
    return st;
}
