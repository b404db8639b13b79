/*
 * array.c - array nodes: representation, lookup by id, creation, access,
 * seeding and the adjoint buffers.  See array.h.
 */
#include "arrays/array.h"

#include <cblas.h>

#include <limits.h>
#include <stdint.h>

/* ------------------------------------------------------------- plumbing */

void dr__arr_clear_adj(dr_ext *e)
{
    ((dr_arr_node *)e)->adj_live = false;
}

/*
 * Parallel sweeps.  Sibling jobs run their array rules at once, and their
 * rules may add into the adjoint of the same ancestor array (a weight
 * matrix every job of a split batch uses).  Each task adds into a buffer of
 * its own for such an array instead (node/node.h, dr_anc_log's bufs), which
 * the forking task adds in when the siblings are done: no locks, and the
 * products of all the jobs run in parallel.  Arrays of the running job are
 * the job's alone and are written directly.
 */
static double *arr_acc_into(dr_ext *e, dr_sweep *s, bool *fresh, size_t *n);

/* reverse entry of array-valued nodes: nothing to do unless reached */
static void arr_reverse(dr_ext *e, dr_sweep *s, double g)
{
    dr_arr_node *y = (dr_arr_node *)e;
    if (!y->adj_live || !y->rev)
        return;
    y->rev(y, s, g);
}

/* reverse entry of scalar-valued array ops */
static void arr_sreverse(dr_ext *e, dr_sweep *s, double g)
{
    dr_arr_node *y = (dr_arr_node *)e;
    if (g == 0.0 || !y->rev)
        return;
    y->rev(y, s, g);
}

/* ---------------------------------------------------------- second order
 * (array.h, "second order") */

bool dr__arr_hzeros(dr_sweep *s, int64_t n)
{
    dr_hsweep *h = s->h;
    if ((size_t)n <= h->nzeros)
        return true;
    double *z = dr__malloc((size_t)n * sizeof *z);
    if (!z) {
        dr__fail(s->tape, DR_ENOMEM);
        return false;
    }
    memset(z, 0, (size_t)n * sizeof *z);
    dr__free(h->zeros);
    h->zeros = z;
    h->nzeros = (size_t)n;
    return true;
}

/* plane s->h->plane of x's adjoint in this pass: all k + 1 planes zeroed
   by the first use; NULL for an inactive x or after failing the tape */
static double *h2_plane(dr_sweep *s, dr_arr_node *x)
{
    if (!x->active)
        return NULL;
    const dr_hsweep *h = s->h;
    size_t n = (size_t)x->n;
    if (x->h2_pass != h->pass) {
        if (n && h->k + 1 > SIZE_MAX / 4 / sizeof(double) / n) {
            dr__fail(s->tape, DR_ENOMEM);
            return NULL;
        }
        size_t need = (h->k + 1) * n;
        if (x->h2_cap < need || !x->h2) {
            /* (as dr__arr_tan_out: an old buffer stays in the arena) */
            double *b = dr__arena_alloc(s->tape, (need ? need : 1) *
                                                     sizeof(double));
            if (!b)
                return NULL;
            x->h2 = b;
            x->h2_cap = need;
        }
        memset(x->h2, 0, need * sizeof(double));
        x->h2_pass = h->pass;
        x->h2_k = h->k;
    }
    return x->h2 + h->plane * n;
}

/* what J's change along each direction adds (array.h, "second order"),
   g the node's scalar adjoint (scalar-valued ops) */
static void second_terms(dr_arr_node *y, dr_sweep *s, double g)
{
    dr_hsweep *h = s->h;
    if (y->so == DR_ARR_SO_BILINEAR) {
        int64_t m = y->x[0] ? y->x[0]->n : 0;
        if (y->x[1] && y->x[1]->n > m)
            m = y->x[1]->n;
        if (!dr__arr_hzeros(s, m))
            return;
        for (size_t d = 0; d < h->k; d++) {
            dr__hplane(s, d + 1);
            h->tval = (int64_t)d;
            y->rev(y, s, g);
        }
        h->tval = -1;
    } else if (y->so == DR_ARR_SO_OWN) {
        for (size_t d = 0; d < h->k; d++) {
            dr__hplane(s, d + 1);
            y->rev2(y, s, g, d);
        }
    }
}

/* dr_ext.reverse2 of array-valued nodes: the reverse kernel on every
   plane, then the second-order terms; nothing for an input, a constant
   or a node the pass did not reach */
static void arr_reverse2(dr_ext *e, dr_sweep *s, const double *g)
{
    (void)g;
    dr_arr_node *y = (dr_arr_node *)e;
    if (!y->rev || y->h2_pass != s->h->pass)
        return;
    for (size_t j = 0; j <= s->h->k; j++) {
        dr__hplane(s, j);
        y->rev(y, s, 0.0);
    }
    second_terms(y, s, 0.0);
}

/* ... of scalar-valued ones, g[j] the node's adjoint of plane j */
static void arr_sreverse2(dr_ext *e, dr_sweep *s, const double *g)
{
    dr_arr_node *y = (dr_arr_node *)e;
    if (!y->rev)
        return;
    for (size_t j = 0; j <= s->h->k; j++)
        if (g[j] != 0.0) {
            dr__hplane(s, j);
            y->rev(y, s, g[j]);
        }
    if (g[0] != 0.0)
        second_terms(y, s, g[0]);
}

/* the recorded passes' rules, registered from above (array.h) */
static dr_arr_rec_tangent rec_tangent;
static dr_arr_rec_adjoint rec_adjoint;

void dr__arr_register_recorded(dr_arr_rec_tangent tangent,
                               dr_arr_rec_adjoint adjoint)
{
    /* (the same values from any thread that starts a pass) */
    __atomic_store_n(&rec_tangent, tangent, __ATOMIC_RELEASE);
    __atomic_store_n(&rec_adjoint, adjoint, __ATOMIC_RELEASE);
}

static dr_real arr_tangent_record(dr_ext *e, dr_rpass *p)
{
    dr_arr_rec_tangent f = __atomic_load_n(&rec_tangent, __ATOMIC_ACQUIRE);
    dr_real none = {0.0, DR_NONE};
    if (!f) {
        dr__fail(p->t, DR_ENOTSUP);
        return none;
    }
    return f((dr_arr_node *)e, p);
}

static void arr_adjoint_record(dr_ext *e, dr_rpass *p, dr_real g)
{
    dr_arr_rec_adjoint f = __atomic_load_n(&rec_adjoint, __ATOMIC_ACQUIRE);
    if (!f) {
        dr__fail(p->t, DR_ENOTSUP);
        return;
    }
    f((dr_arr_node *)e, p, g);
}

/* dr_ext.pattern (drivers/sparse.c): the operands, array and scalar,
   and whether the op has second partials (a map of a piecewise linear
   function has none) */
static bool arr_pattern(dr_ext *e, size_t *n, const int64_t **args,
                        bool *nonlinear)
{
    dr_arr_node *y = (dr_arr_node *)e;
    *nonlinear = y->so == DR_ARR_SO_BILINEAR || y->so == DR_ARR_SO_OWN;
    if (y->kind == DR_ARR_K_MAP &&
        (y->ip[0] == DR_FN_NEG || y->ip[0] == DR_FN_ABS ||
         y->ip[0] == DR_FN_RELU))
        *nonlinear = false;
    if (y->kind == DR_ARR_K_BUILD) { /* its scalars (none: constants) */
        *n = y->aux ? (size_t)y->naux : 0;
        *args = y->aux ? y->aux : y->pa;
        return true;
    }
    if (y->kind == DR_ARR_K_CONCAT) {
        if (!y->pargs)
            return false;
        *n = (size_t)y->naux;
        *args = y->pargs;
        return true;
    }
    size_t k = 0;
    for (int i = 0; i < DR_ARR_MAXOPS; i++)
        if (y->x[i])
            y->pa[k++] = y->x[i]->hdr.id;
    if (y->sx >= 0)
        y->pa[k++] = y->sx;
    *n = k;
    *args = y->pa;
    return true;
}

/* dr_ext.hvp_result of array-valued nodes: an input's adjoint becomes its
   part of the product (the tangent the pass gave it was its adjoint) */
static void arr_hvp_result(dr_ext *e, dr_tape *t, uint64_t pass)
{
    dr_arr_node *y = (dr_arr_node *)e;
    if (y->tcur && y->tcur == y->adj) {
        y->tcur = NULL;
        y->tcur_k = 0;
    }
    if (!y->input || !y->active || y->h2_pass != pass || y->h2_k != 1 ||
        y->n == 0)
        return;
    bool fresh;
    double *a = dr__arr_adj_acquire_raw(t, y, &fresh);
    if (a)
        dr__copy_doubles(a, y->h2 + y->n, (size_t)y->n);
}

/* a node with a second-order rule gets the hook (an input or a constant
   has nothing to pass on: it gets it too) */
static void set_reverse2(dr_arr_node *y, void (*hook)(dr_ext *, dr_sweep *,
                                                      const double *))
{
    y->hdr.reverse2 = !y->rev || y->so != DR_ARR_SO_NONE ? hook : NULL;
}

/* the kernels pass k to BLAS as an int */
static bool k_ok(dr_fsweep *f)
{
    if (DR_LIKELY(f->k <= INT_MAX))
        return true;
    dr__fail(f->tape, DR_ERANGE);
    return false;
}

/*
 * Forward entry of array-valued nodes (array.h, "tangents").  Every node is
 * visited in every forward sweep, so tcur is reset here first: a node that
 * is inactive, or whose operands all have zero tangents, reads as zero
 * without touching its buffer.  An input's tangent is its seed, used in
 * place.
 */
static void arr_forward(dr_ext *e, dr_fsweep *f)
{
    dr_arr_node *y = (dr_arr_node *)e;
    y->tcur = NULL;
    y->tcur_k = f->k;
    if (!y->active || !k_ok(f))
        return;
    if (y->fwd)
        y->fwd(y, f);
    else if (f->arr_seeds == DR_ARR_SEEDS_TANGENT && y->seed_k == f->k && y->n)
        y->tcur = y->tseed;
    else if (f->arr_seeds == DR_ARR_SEEDS_ADJOINT && f->k == 1 && y->adj_live &&
             y->n)
        y->tcur = y->adj; /* (the pass writes its adjoints elsewhere) */
}

/* forward entry of scalar-valued array ops: the scalar tangent array may
   hold anything (an earlier sweep's values), so zero first */
static void arr_sforward(dr_ext *e, dr_fsweep *f)
{
    dr_arr_node *y = (dr_arr_node *)e;
    double *ty = f->tan + (size_t)y->hdr.id * f->k;
    for (size_t d = 0; d < f->k; d++)
        ty[d] = 0.0;
    if (y->fwd && k_ok(f))
        y->fwd(y, f);
}

/* replay entry (array.h, "replay"): an active node's kernel, its scalar
   operand read from the log first */
static dr_status arr_replay(dr_ext *e, dr_oplog *lg, double *v)
{
    dr_arr_node *y = (dr_arr_node *)e;
    if (y->prim) {
        if (y->sx >= 0)
            y->sv = lg[y->sx].v;
        double r = y->prim(y, lg);
        if (y->rank == 0)
            *v = r;
    }
    return DR_OK;
}

/* a replay succeeded: the tangents of sweeps at the old point go (seeds,
   directions the caller gave, stay) */
static void arr_replayed(dr_ext *e)
{
    dr_arr_node *y = (dr_arr_node *)e;
    y->tcur = NULL;
    y->tcur_k = 0;
}

double *dr__arr_tan_out(dr_fsweep *f, dr_arr_node *y)
{
    size_t n = (size_t)y->n, k = f->k;
    if (n == 0)
        return NULL; /* nothing to write: an empty tangent is zero */
    if (k > SIZE_MAX / 4 / sizeof(double) / n) {
        dr__fail(f->tape, DR_ENOMEM);
        return NULL;
    }
    if (y->tan_cap < k * n) {
        /* the old buffer stays in the arena until clear: sweeps with a
           growing k are rare, and arena memory is never handed back */
        double *b = dr__arena_alloc(f->tape, k * n * sizeof(double));
        if (!b)
            return NULL;
        y->tan = b;
        y->tan_cap = k * n;
    }
    y->tcur = y->tan;
    return y->tan;
}

bool dr__arr_dims_ok(int64_t rows, int64_t cols)
{
    if (rows < 0 || cols < 0 || rows > INT_MAX || cols > INT_MAX)
        return false;
    /* elements must fit the arena's size limit with room to spare */
    if (rows && cols > (int64_t)(SIZE_MAX / 4 / sizeof(double)) / rows)
        return false;
    return true;
}

/* the array record of relative id rel, as seen from handle t (its job, its
   history and, for a child handle, its ancestors' jobs before the fork) */
static dr_arr_node *node_at(const dr_tape *t, int64_t rel)
{
    const dr_node *p = dr__find_node(t, rel);
    if (!p || p->a != DR_EXT_TAG)
        return NULL;
    dr_ext *e = dr__node_ext(p);
    if (e->clear_adj != dr__arr_clear_adj || e->id != rel)
        return NULL;
    return (dr_arr_node *)e;
}

dr_arr_node *dr__arr_find(const dr_tape *t, dr_idx id)
{
    if (!t)
        return NULL;
    int64_t rel;
    if (((uint64_t)id >> 62) != 1 || !dr__rel(t, id & ~DR_ARR_TAG, &rel))
        return NULL;
    return node_at(t, rel);
}

static dr_arr_node *lookup(const dr_tape *t, dr_idx id)
{
    return dr__arr_find(t, id);
}

dr_arr_node *dr__arr_get(dr_tape *t, dr_idx id)
{
    dr_arr_node *x = lookup(t, id);
    if (!x && t)
        dr__fail(t, DR_EINVAL);
    return x;
}

dr_arr_node *dr__arr_get_mat(dr_tape *t, dr_idx id)
{
    dr_arr_node *x = dr__arr_get(t, id);
    if (x && x->rank != 2) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    return x;
}

dr_arr_node *dr__arr_new(dr_tape *t, int rank, int64_t rows, int64_t cols)
{
    if (!dr__arr_dims_ok(rows, cols)) {
        dr__fail(t, DR_ERANGE);
        return NULL;
    }
    size_t n = (size_t)rows * (size_t)cols;
    dr_arr_node *y = dr__arena_alloc(t, sizeof *y + n * sizeof(double));
    if (!y)
        return NULL;
    memset(y, 0, sizeof *y);
    y->hdr.reverse = arr_reverse;
    y->hdr.clear_adj = dr__arr_clear_adj;
    y->hdr.acc_into = arr_acc_into;
    y->hdr.forward = arr_forward;
    y->hdr.replay = arr_replay;
    y->hdr.replayed = arr_replayed;
    y->hdr.hvp_result = arr_hvp_result;
    y->hdr.tangent_record = arr_tangent_record;
    y->hdr.adjoint_record = arr_adjoint_record;
    y->hdr.pattern = arr_pattern;
    y->rank = rank;
    y->rows = rows;
    y->cols = cols;
    y->n = (int64_t)n;
    y->val = (double *)(y + 1);
    y->sx = -1;
    y->pub = DR_NONE;
    return y;
}

dr_idx dr__arr_push(dr_tape *t, dr_arr_node *y)
{
    if (!y)
        return DR_NONE;
    if (!y->active) { /* (constants alone: nothing to run, ever) */
        y->rev = NULL;
        y->fwd = NULL;
        y->prim = NULL;
    }
    set_reverse2(y, arr_reverse2);
    dr_idx id = dr__record_ext(t, &y->hdr);
    y->pub = id == DR_NONE ? DR_NONE : id | DR_ARR_TAG;
    return y->pub;
}

dr_arr_node *dr__arr_snew(dr_tape *t)
{
    dr_arr_node *y = dr__arena_alloc(t, sizeof *y);
    if (!y)
        return NULL;
    memset(y, 0, sizeof *y);
    y->hdr.reverse = arr_sreverse;
    y->hdr.clear_adj = NULL;
    y->hdr.forward = arr_sforward;
    y->hdr.replay = arr_replay;
    y->hdr.tangent_record = arr_tangent_record;
    y->hdr.adjoint_record = arr_adjoint_record;
    y->hdr.pattern = arr_pattern;
    y->sx = -1;
    y->pub = DR_NONE;
    return y;
}

dr_idx dr__arr_spush(dr_tape *t, dr_arr_node *y, double v)
{
    if (!y)
        return DR_NONE;
    y->active = true; /* (a scalar-valued op records a node only then) */
    set_reverse2(y, arr_sreverse2);
    y->pub = dr__record_ext_v(t, &y->hdr, v);
    return y->pub;
}

double *dr__arr_adj_acquire_raw(dr_tape *t, dr_arr_node *x, bool *fresh)
{
    *fresh = false;
    if (!x || !x->active)
        return NULL;
    if (!x->adj_live) {
        if (!x->adj) {
            x->adj = dr__arena_alloc(t, (size_t)x->n * sizeof(double));
            if (!x->adj)
                return NULL;
        }
        x->adj_live = true;
        *fresh = true;
    }
    return x->adj;
}

double *dr__arr_adj_for_raw(dr_sweep *s, dr_arr_node *x, bool *fresh)
{
    if (DR_UNLIKELY(s->h)) {
        *fresh = false;
        return h2_plane(s, x);
    }
    if (DR_LIKELY(!dr__foreign(s, x->hdr.id)))
        return dr__arr_adj_acquire_raw(s->tape, x, fresh);
    *fresh = false;
    if (!x->active)
        return NULL;
    return dr__anc_buf(s, &x->hdr, (size_t)x->n, fresh);
}

/* dr_ext's acc_into for array-valued nodes */
static double *arr_acc_into(dr_ext *e, dr_sweep *s, bool *fresh, size_t *n)
{
    dr_arr_node *x = (dr_arr_node *)e;
    *n = (size_t)x->n;
    return dr__arr_adj_for_raw(s, x, fresh);
}

/* a buffer for adding into: a fresh one is zeroed first */
static double *zero_if_fresh(double *a, bool fresh, const dr_arr_node *x)
{
    if (a && fresh && x->n)
        memset(a, 0, (size_t)x->n * sizeof(double));
    return a;
}

double *dr__arr_adj_for(dr_sweep *s, dr_arr_node *x)
{
    bool fresh;
    double *a = dr__arr_adj_for_raw(s, x, &fresh);
    return zero_if_fresh(a, fresh, x);
}

double *dr__arr_adj_acquire(dr_tape *t, dr_arr_node *x)
{
    bool fresh;
    double *a = dr__arr_adj_acquire_raw(t, x, &fresh);
    return zero_if_fresh(a, fresh, x);
}

dr_arr dr__arr_handle(const dr_arr_node *y)
{
    dr_arr h = {DR_NONE, 0, 0, 0, NULL};
    if (y && y->pub != DR_NONE) {
        h.idx = y->pub;
        h.rank = y->rank;
        h.rows = y->rows;
        h.cols = y->cols;
        h.val = y->val;
    }
    return h;
}

/* ------------------------------------------------------------- creation */

/* copy: the tape copies data; otherwise it keeps the caller's pointer */
static dr_arr_node *create(dr_tape *t, int rank, int64_t rows, int64_t cols,
                           const double *data, bool active, bool copy)
{
    if (!t)
        return NULL;
    if (rank != 1 && rank != 2) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    if (rank == 1 && cols != 1) {
        dr__fail(t, DR_ESHAPE);
        return NULL;
    }
    if (!dr__arr_dims_ok(rows, cols)) {
        dr__fail(t, DR_ERANGE);
        return NULL;
    }
    if (!data && rows * cols > 0) {
        dr__fail(t, DR_EINVAL);
        return NULL;
    }
    dr_arr_node *y = dr__arr_new(t, rank, copy ? rows : 0, copy ? cols : 0);
    if (!y)
        return NULL;
    if (copy) {
        if (y->n)
            dr__copy_doubles(y->val, data, (size_t)y->n);
    } else {
        /* values stay the caller's: kernels never write an operand's values */
        y->rows = rows;
        y->cols = cols;
        y->n = rows * cols;
        y->val = (double *)(uintptr_t)data;
    }
    y->active = active;
    y->input = active;
    y->borrowed = !copy;
    return dr__arr_push(t, y) == DR_NONE ? NULL : y;
}

static dr_arr_node *input(dr_tape *t, int rank, int64_t rows, int64_t cols,
                          const double *data)
{
    return create(t, rank, rows, cols, data, true, true);
}
DR_ARR_FORMS_input(input)

static dr_arr_node *constant(dr_tape *t, int rank, int64_t rows,
                             int64_t cols, const double *data)
{
    return create(t, rank, rows, cols, data, false, true);
}
DR_ARR_FORMS_const(constant)

static dr_arr_node *input_ref(dr_tape *t, int rank, int64_t rows,
                              int64_t cols, const double *data)
{
    return create(t, rank, rows, cols, data, true, false);
}
DR_ARR_FORMS_input_ref(input_ref)

static dr_arr_node *const_ref(dr_tape *t, int rank, int64_t rows,
                              int64_t cols, const double *data)
{
    return create(t, rank, rows, cols, data, false, false);
}
DR_ARR_FORMS_const_ref(const_ref)

/* --------------------------------------------------------------- access */

dr_arr dr_arr_get(const dr_tape *t, dr_idx id)
{
    return dr__arr_handle(lookup(t, id));
}

dr_status dr_arr_shape(const dr_tape *t, dr_idx id, int *rank, int64_t *rows,
                       int64_t *cols)
{
    dr_arr_node *x = lookup(t, id);
    if (!x)
        return DR_EINVAL;
    if (rank)
        *rank = x->rank;
    if (rows)
        *rows = x->rows;
    if (cols)
        *cols = x->cols;
    return DR_OK;
}

int64_t dr_arr_size(const dr_tape *t, dr_idx id)
{
    dr_arr_node *x = lookup(t, id);
    return x ? x->n : -1;
}

int dr_arr_active(const dr_tape *t, dr_idx id)
{
    dr_arr_node *x = lookup(t, id);
    return x ? (x->active ? 1 : 0) : -1;
}

const double *dr_arr_values(const dr_tape *t, dr_idx id)
{
    dr_arr_node *x = lookup(t, id);
    return x ? x->val : NULL;
}

dr_status dr_arr_read(const dr_tape *t, dr_idx id, double *out)
{
    dr_arr_node *x = lookup(t, id);
    if (!x || (!out && x->n))
        return DR_EINVAL;
    if (x->n)
        dr__copy_doubles(out, x->val, (size_t)x->n);
    return DR_OK;
}

dr_status dr_arr_seed(dr_tape *t, dr_idx id, const double *cot)
{
    dr_arr_node *x = lookup(t, id);
    if (!x || (!cot && x->n))
        return DR_EINVAL;
    if (!x->active)
        return DR_OK;
    double *a = dr__arr_adj_acquire(t, x);
    if (!a)
        return DR_ENOMEM;
    for (int64_t i = 0; i < x->n; i++)
        a[i] += cot[i];
    return DR_OK;
}

dr_status dr_arr_adjoint(const dr_tape *t, dr_idx id, double *out)
{
    dr_arr_node *x = lookup(t, id);
    if (!x || (!out && x->n))
        return DR_EINVAL;
    if (!x->n)
        return DR_OK;
    if (x->adj_live)
        dr__copy_doubles(out, x->adj, (size_t)x->n);
    else
        memset(out, 0, (size_t)x->n * sizeof(double));
    return DR_OK;
}

const double *dr_arr_adjoint_ptr(const dr_tape *t, dr_idx id)
{
    dr_arr_node *x = lookup(t, id);
    return x && x->adj_live ? x->adj : NULL;
}

/* ------------------------------------------------------------- tangents */

dr_status dr_arr_tangent_seed_vec(dr_tape *t, dr_idx id, size_t k,
                                  const double *tangents)
{
    dr_arr_node *x = lookup(t, id);
    if (!x || k == 0 || (!tangents && x->n))
        return DR_EINVAL;
    size_t n = (size_t)x->n;
    if (n && k > SIZE_MAX / 4 / sizeof(double) / n)
        return DR_ERANGE;
    /* a computed array's tangent comes from its operands: only an input's
       seed is ever read */
    if (!x->active || x->fwd || n == 0)
        return DR_OK;
    if (x->seed_k != k) {
        /* seeds of another k replace the old ones; the buffer is kept if
           it is big enough */
        if (x->seed_cap < k * n) {
            double *b = dr__arena_alloc(t, k * n * sizeof(double));
            if (!b)
                return DR_ENOMEM;
            x->tseed = b;
            x->seed_cap = k * n;
        }
        memset(x->tseed, 0, k * n * sizeof(double));
        x->seed_k = k;
    }
    for (size_t i = 0; i < k * n; i++)
        x->tseed[i] += tangents[i];
    t->root->arr_seeded = true;
    return DR_OK;
}

dr_status dr_arr_tangent_seed(dr_tape *t, dr_idx id, const double *tangent)
{
    return dr_arr_tangent_seed_vec(t, id, 1, tangent);
}

dr_status dr_arr_tangent_vec(const dr_tape *t, dr_idx id, size_t k,
                             double *out)
{
    dr_arr_node *x = lookup(t, id);
    if (!x || k == 0 || (!out && x->n))
        return DR_EINVAL;
    /* tcur_k == 0: no forward sweep has visited the node (zero) */
    if (x->tcur_k != 0 && x->tcur_k != k)
        return DR_EINVAL;
    size_t n = (size_t)x->n;
    if (n == 0)
        return DR_OK;
    if (x->tcur)
        dr__copy_doubles(out, x->tcur, k * n);
    else
        memset(out, 0, k * n * sizeof(double));
    return DR_OK;
}

dr_status dr_arr_tangent(const dr_tape *t, dr_idx id, double *out)
{
    return dr_arr_tangent_vec(t, id, 1, out);
}

dr_status dr_arr_hvp_vec(const dr_tape *t, dr_idx id, size_t k, double *out)
{
    dr_arr_node *x = lookup(t, id);
    if (!x || k == 0 || (!out && x->n))
        return DR_EINVAL;
    size_t n = (size_t)x->n;
    if (n == 0)
        return DR_OK;
    bool reached = t->hvp_pass != 0 && x->h2_pass == t->hvp_pass;
    if (reached && x->h2_k != k)
        return DR_EINVAL;
    if (k > SIZE_MAX / sizeof(double) / n)
        return DR_ERANGE;
    if (reached) /* planes 1 .. k: the adjoint's tangents */
        dr__copy_doubles(out, x->h2 + n, k * n);
    else
        memset(out, 0, k * n * sizeof(double));
    return DR_OK;
}

dr_status dr_arr_hvp(const dr_tape *t, dr_idx id, double *out)
{
    return dr_arr_hvp_vec(t, id, 1, out);
}

dr_status dr_arr_tangents_clear(dr_tape *t)
{
    dr_status st = dr__whole(t);
    if (st != DR_OK)
        return st;
    t->arr_seeded = false;
    /* every array-valued node is on the exts list (it has clear_adj) */
    for (dr_ext *e = t->exts; e; e = e->next)
        if (e->clear_adj == dr__arr_clear_adj) {
            dr_arr_node *x = (dr_arr_node *)e;
            x->seed_k = 0;
            x->tcur = NULL;
            x->tcur_k = 0;
        }
    return DR_OK;
}
