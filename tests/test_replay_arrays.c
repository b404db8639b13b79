/*
 * test_replay_arrays.c - replay beyond the scalar operations (dualrev.h,
 * "replay"): every array primitive in a program of its own, and random
 * array programs with guards; array inputs given new values (copied ones,
 * and borrowed ones that borrow new memory), borrowed memory changed where
 * it lies, arrays left alone; n-ary sums (dr_sumn); external functions
 * with a primal; checkpointed loops.  Each is replayed at several random
 * points and compared with a fresh recording at each point, bit for bit:
 * values, the gradient with respect to every scalar and array input, and a
 * forward (Jacobian-vector) product.  A replay whose guard flips answers
 * DR_ERETAPE exactly where the fresh recording takes another path, and
 * leaves the tape as it was.  Refusals (DR_ENOTSUP) and misuse change
 * nothing, and so does running out of memory at any allocation.
 */
#include "check.h"

#include <math.h>
#include <string.h>

/* ----------------------------------------------------------- the inputs
 * Every program has two scalar inputs (dr_inputs) and four array inputs,
 * two copied (dr_arr_input) and two borrowed (dr_arr_input_ref), and two
 * constant arrays (one copied, one borrowed).  Their shapes come from a
 * shape set: one with every dimension different (the primitives), one of
 * 3-vectors and 3 x 3 matrices (random programs, where every array fits
 * every operation).
 */
#define NA 4
#define MAXN 16

typedef struct shapes {
    int rank[NA];
    int64_t rows[NA], cols[NA];
} shapes;

/* A 3x4, B 4x3 (borrowed), u 4, v 3 (borrowed) */
static const shapes PRIM = {{2, 2, 1, 1}, {3, 4, 4, 3}, {4, 3, 1, 1}};
/* M0, M1 (borrowed) 3x3, V0, V1 (borrowed) 3 */
static const shapes SQUARE = {{2, 2, 1, 1}, {3, 3, 3, 3}, {3, 3, 1, 1}};
static const bool BORROWED[NA] = {false, true, false, true};

static int64_t size_of(const shapes *sh, int i)
{
    return sh->rows[i] * sh->cols[i];
}

/* the values of every input: a point */
typedef struct point {
    double s[2];
    double a[NA][MAXN];
} point;

typedef struct inputs {
    dr_real s[2];
    dr_arr a[NA];
    dr_arr C, K; /* constants: 3 x cols of input 0 (copied), 3 (borrowed) */
} inputs;

static const double CVAL[MAXN] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5,
                                  0.25, -2.0, 1.0, 0.125, -0.75, 3.0};
static const double KVAL[3] = {1.5, -0.25, 0.625};

static void random_point(chk_rng *r, const shapes *sh, point *p)
{
    p->s[0] = chk_rng_uniform(r, -1.5, 1.5);
    p->s[1] = chk_rng_uniform(r, -1.5, 1.5);
    for (int i = 0; i < NA; i++)
        for (int64_t j = 0; j < size_of(sh, i); j++)
            p->a[i][j] = chk_rng_uniform(r, -1.5, 1.5);
}

/* the inputs on t from p; the borrowed ones borrow mem's arrays */
static void record_inputs(dr_tape *t, const shapes *sh, const point *p,
                          point *mem, inputs *in)
{
    CHK_STATUS(dr_inputs(t, 2, p->s, in->s), DR_OK);
    for (int i = 0; i < NA; i++) {
        if (BORROWED[i]) {
            memcpy(mem->a[i], p->a[i], sizeof p->a[i]);
            in->a[i] = dr_arr_input_ref(t, sh->rank[i], sh->rows[i],
                                        sh->cols[i], mem->a[i]);
        } else {
            in->a[i] = dr_arr_input(t, sh->rank[i], sh->rows[i], sh->cols[i],
                                    p->a[i]);
        }
    }
    in->C = dr_arr_const(t, 2, 3, sh->cols[0], CVAL);
    in->K = dr_arr_const_ref(t, 1, 3, 1, KVAL);
    CHK_STATUS(dr_tape_status(t), DR_OK);
}

/* --------------------------------------------------------- what a tape
 * gives at its point: the outputs' values, the values of one array, the
 * gradient of every output (scalar inputs, and the adjoints of the array
 * inputs), and the forward product in fixed directions.
 */
#define NOUT 3
#define MAXARR 64

typedef struct results {
    double y[NOUT];
    int64_t n;
    double arr[MAXARR];
    double g[NOUT][2];
    double ga[NOUT][NA][MAXN];
    double jv[NOUT];
} results;

static const double SDIR[2] = {0.7, -1.3};

static void read_results(dr_tape *t, const shapes *sh, const inputs *in,
                         size_t m, const dr_real *y, dr_idx arr, results *r)
{
    memset(r, 0, sizeof *r);
    for (size_t j = 0; j < m; j++)
        if (y[j].idx == DR_NONE)
            r->y[j] = y[j].val;
        else
            CHK_STATUS(dr_value(t, y[j].idx, &r->y[j]), DR_OK);
    if (arr != DR_NONE) {
        r->n = dr_arr_size(t, arr);
        assert_true(r->n >= 0 && r->n <= MAXARR);
        CHK_STATUS(dr_arr_read(t, arr, r->arr), DR_OK);
    }
    for (size_t j = 0; j < m; j++) {
        CHK_STATUS(dr_gradient(t, y[j], 2, in->s, r->g[j]), DR_OK);
        for (int i = 0; i < NA; i++)
            CHK_STATUS(dr_arr_adjoint(t, in->a[i].idx, r->ga[j][i]), DR_OK);
    }
    CHK_STATUS(dr_arr_tangents_clear(t), DR_OK);
    for (int i = 0; i < NA; i++) {
        double dir[MAXN];
        for (int64_t k = 0; k < size_of(sh, i); k++)
            dir[k] = 0.25 * (double)((k * 7 + (int64_t)i * 3) % 9) - 1.0;
        CHK_STATUS(dr_arr_tangent_seed(t, in->a[i].idx, dir), DR_OK);
    }
    CHK_STATUS(dr_jvp(t, m, y, 2, in->s, SDIR, r->jv), DR_OK);
}

static void check_same(const results *a, const results *b)
{
    for (size_t j = 0; j < NOUT; j++) {
        CHK_SAME(a->y[j], b->y[j]);
        CHK_SAME(a->jv[j], b->jv[j]);
        for (int i = 0; i < 2; i++)
            CHK_SAME(a->g[j][i], b->g[j][i]);
        for (int i = 0; i < NA; i++)
            for (int k = 0; k < MAXN; k++)
                CHK_SAME(a->ga[j][i][k], b->ga[j][i][k]);
    }
    assert_int_equal(a->n, b->n);
    for (int64_t k = 0; k < a->n; k++)
        CHK_SAME(a->arr[k], b->arr[k]);
}

/* ------------------------------------------------------ the primitives */

/* a scalar out of array r that depends on every element nonlinearly */
static dr_real readout(dr_tape *t, const inputs *in, dr_arr r)
{
    dr_real q = dr_arr_dot(t, r, r);
    dr_real w = dr_arr_sum(t, dr_arr_map(t, DR_FN_SIN, r));
    return dr_add(t, q, dr_mul(t, in->s[1], w));
}

/* the same for a scalar result */
static dr_real sreadout(dr_tape *t, const inputs *in, dr_real v)
{
    return dr_add(t, dr_mul(t, v, in->s[1]), dr_sin(t, v));
}

enum {
    P_ADD, P_SUB, P_MUL, P_DIV, P_SCALE, P_MAP, /* + DR_FN_SQUARE */
    P_ROWVEC = P_MAP + DR_FN_SQUARE + 1, P_COLVEC, P_REPROWS, P_REPCOLS,
    P_DOT, P_MATVEC, P_VECMAT, P_MM00, P_MM11, P_MM01, P_MM10, P_OUTER,
    P_TRANSPOSE, P_SUM, P_SUMROWS, P_SUMCOLS, P_MAX, P_SOFTMAX_V,
    P_SOFTMAX_M, P_LOGSOFTMAX, P_LSE, P_LSEROWS, P_INDEX, P_INDEX2,
    P_FROMREALS, P_SLICE, P_SLICE2, P_CONCAT0, P_CONCAT1, P_GATHER,
    P_SCATTER, P_RESHAPE, P_RESHAPE_BORROWED, P_SCALE_BY_NODE, P_SUMN,
    P_AXPY, P_AXPY_ID, P_COUNT
};

/* primitive k over the PRIM inputs: one output, *arr the array it made
   (DR_NONE for a scalar-valued primitive); some through the _id forms */
static dr_real prim_program(dr_tape *t, int k, const inputs *in, dr_idx *arr)
{
    const dr_arr A = in->a[0], B = in->a[1], u = in->a[2], v = in->a[3];
    dr_arr r = {DR_NONE, 0, 0, 0, NULL};
    dr_real sv = {0.0, DR_NONE};
    bool scalar = false;
    switch (k) {
    case P_ADD:
        r = dr_arr_get(t, dr_arr_add_id(t, A.idx, in->C.idx));
        break;
    case P_SUB:
        r = dr_arr_sub(t, in->C, A);
        break;
    case P_MUL:
        r = dr_arr_mul(t, A, dr_arr_transpose(t, B));
        break;
    case P_DIV:
        r = dr_arr_div(t, dr_arr_transpose(t, B), A);
        break;
    case P_SCALE:
        r = dr_arr_get(t, dr_arr_scale_id(t, in->s[0].val, in->s[0].idx, A.idx));
        break;
    case P_ROWVEC:
        r = dr_arr_add_rowvec(t, A, u);
        break;
    case P_COLVEC:
        r = dr_arr_add_colvec(t, A, v);
        break;
    case P_REPROWS:
        r = dr_arr_replicate_rows(t, u, 2);
        break;
    case P_REPCOLS:
        r = dr_arr_replicate_cols(t, v, 5);
        break;
    case P_DOT: {
        double val;
        sv.idx = dr_arr_dot_id(t, A.idx, in->C.idx, &val);
        sv.val = val;
        scalar = true;
        break;
    }
    case P_MATVEC:
        r = dr_arr_matvec(t, A, u);
        break;
    case P_VECMAT:
        r = dr_arr_vecmat(t, v, A);
        break;
    case P_MM00:
        r = dr_arr_matmul(t, A, 0, B, 0);
        break;
    case P_MM11:
        r = dr_arr_matmul(t, A, 1, B, 1);
        break;
    case P_MM01:
        r = dr_arr_matmul(t, A, 0, in->C, 1);
        break;
    case P_MM10:
        r = dr_arr_matmul(t, A, 1, A, 0);
        break;
    case P_OUTER:
        r = dr_arr_outer(t, u, v);
        break;
    case P_TRANSPOSE:
        r = dr_arr_transpose(t, A);
        break;
    case P_SUM:
        sv = dr_arr_sum(t, A);
        scalar = true;
        break;
    case P_SUMROWS:
        r = dr_arr_sum_rows(t, A);
        break;
    case P_SUMCOLS:
        r = dr_arr_sum_cols(t, A);
        break;
    case P_MAX: /* (the maximum moves from point to point) */
        sv = dr_arr_max(t, A);
        scalar = true;
        break;
    case P_SOFTMAX_V:
        r = dr_arr_softmax(t, u);
        break;
    case P_SOFTMAX_M:
        r = dr_arr_softmax(t, A);
        break;
    case P_LOGSOFTMAX:
        r = dr_arr_log_softmax(t, A);
        break;
    case P_LSE:
        sv = dr_arr_logsumexp(t, A);
        scalar = true;
        break;
    case P_LSEROWS:
        r = dr_arr_logsumexp_rows(t, A);
        break;
    case P_INDEX:
        sv = dr_arr_index(t, A, 5);
        scalar = true;
        break;
    case P_INDEX2: {
        double val;
        sv.idx = dr_arr_index2_id(t, B.idx, 2, 1, &val);
        sv.val = val;
        scalar = true;
        break;
    }
    case P_FROMREALS: {
        dr_real xs[4] = {in->s[0], dr_const(1.5), dr_sin(t, in->s[1]),
                         in->s[0]};
        r = dr_arr_from_reals(t, 4, xs);
        break;
    }
    case P_SLICE:
        r = dr_arr_slice(t, u, 1, 2);
        break;
    case P_SLICE2:
        r = dr_arr_slice2(t, A, 1, 2, 1, 3);
        break;
    case P_CONCAT0: {
        dr_arr xs[3] = {u, v, in->K};
        r = dr_arr_concat(t, 0, 3, xs);
        break;
    }
    case P_CONCAT1: {
        dr_idx xs[3] = {A.idx, in->C.idx, dr_arr_transpose(t, B).idx};
        r = dr_arr_get(t, dr_arr_concat_id(t, 1, 3, xs));
        break;
    }
    case P_GATHER: {
        const int64_t idx[4] = {2, 0, 2, 1};
        r = dr_arr_gather(t, A, 4, idx);
        break;
    }
    case P_SCATTER: {
        const int64_t idx[4] = {0, 2, 0, 1};
        r = dr_arr_scatter(t, u, 3, idx);
        break;
    }
    case P_RESHAPE:
        r = dr_arr_reshape(t, A, 1, 12, 1);
        break;
    case P_RESHAPE_BORROWED: /* (its values are B's memory itself) */
        r = dr_arr_reshape(t, B, 2, 3, 4);
        break;
    case P_AXPY: /* a x + y with a, x, y all inputs */
        r = dr_arr_axpy(t, in->s[0], A, dr_arr_transpose(t, B));
        break;
    case P_AXPY_ID: /* a constant y */
        r = dr_arr_get(t, dr_arr_axpy_id(t, in->s[1].val, in->s[1].idx, A.idx,
                                         in->C.idx));
        break;
    case P_SCALE_BY_NODE: /* a scalar operand made by an array node */
        r = dr_arr_scale(t, dr_arr_sum(t, u), v);
        break;
    case P_SUMN: {
        dr_real xs[5] = {dr_arr_index(t, u, 0), in->s[0], dr_const(0.1),
                         dr_arr_dot(t, u, u), in->s[0]};
        sv = dr_sumn(t, 5, xs);
        scalar = true;
        break;
    }
    default:
        assert_true(k >= P_MAP && k <= P_MAP + DR_FN_SQUARE);
        r = dr_arr_get(t, dr_arr_map_id(t, k - P_MAP, A.idx));
        break;
    }
    CHK_STATUS(dr_tape_status(t), DR_OK);
    *arr = scalar ? DR_NONE : r.idx;
    return scalar ? sreadout(t, in, sv) : readout(t, in, r);
}

/* program k recorded afresh at p: its results */
static void prim_fresh(int k, const point *p, results *res)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    point mem;
    inputs in;
    record_inputs(t, &PRIM, p, &mem, &in);
    dr_idx arr;
    dr_real y = prim_program(t, k, &in, &arr);
    read_results(t, &PRIM, &in, 1, &y, arr, res);
    dr_tape_free(t);
}

/*
 * The tape of primitive k replayed at random points, in three ways: every
 * input given (a borrowed input then borrows other memory), the copied
 * inputs given and the borrowed ones changed where they lie, and only
 * the scalars given (the arrays keep their values).
 */
static void test_primitives(void **state)
{
    (void)state;
    chk_rng rng;
    chk_rng_seed(&rng, 2024);
    for (int k = 0; k < P_COUNT; k++) {
        point truth, mem[2];
        int cur = 0;
        random_point(&rng, &PRIM, &truth);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        inputs in;
        record_inputs(t, &PRIM, &truth, &mem[0], &in);
        dr_idx arr;
        dr_real y = prim_program(t, k, &in, &arr);
        results first, got, want;
        read_results(t, &PRIM, &in, 1, &y, arr, &first);
        point p0 = truth;
        for (int j = 0; j < 6; j++) {
            chk_context("primitive %d, point %d", k, j);
            point p;
            random_point(&rng, &PRIM, &p);
            int mode = j % 3;
            dr_arr arrs[NA];
            const double *vals[NA];
            size_t m = 0;
            truth.s[0] = p.s[0];
            truth.s[1] = p.s[1];
            for (int i = 0; i < NA; i++) {
                size_t bytes = (size_t)size_of(&PRIM, i) * sizeof(double);
                if (mode == 2)
                    continue; /* the arrays keep their values */
                memcpy(truth.a[i], p.a[i], bytes);
                if (!BORROWED[i]) {
                    arrs[m] = in.a[i];
                    vals[m++] = p.a[i];
                } else if (mode == 0) { /* other memory, given */
                    memcpy(mem[1 - cur].a[i], p.a[i], bytes);
                    arrs[m] = in.a[i];
                    vals[m++] = mem[1 - cur].a[i];
                } else { /* the same memory, changed where it lies */
                    memcpy(mem[cur].a[i], p.a[i], bytes);
                }
            }
            CHK_STATUS(dr_replay_arrays(t, 2, in.s, truth.s, m, arrs, vals),
                       DR_OK);
            if (mode == 0) {
                /* the old memory is the caller's again: scribbled on, it
                   must not matter */
                for (int i = 0; i < NA; i++)
                    if (BORROWED[i])
                        memset(mem[cur].a[i], 0xff, sizeof mem[cur].a[i]);
                cur = 1 - cur;
            }
            read_results(t, &PRIM, &in, 1, &y, arr, &got);
            prim_fresh(k, &truth, &want);
            check_same(&got, &want);
        }
        /* back at the recorded point: every bit as recorded */
        chk_context("primitive %d, back", k);
        dr_arr all[NA];
        const double *vals[NA];
        for (int i = 0; i < NA; i++) {
            all[i] = in.a[i];
            vals[i] = p0.a[i];
        }
        CHK_STATUS(dr_replay_arrays(t, 2, in.s, p0.s, NA, all, vals), DR_OK);
        /* (the borrowed inputs borrow p0's memory now: it stays) */
        read_results(t, &PRIM, &in, 1, &y, arr, &got);
        check_same(&got, &first);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* ------------------------------------------------- random programs
 * Random compositions of the array primitives and scalar operations over
 * 3-vectors and 3 x 3 matrices (the SQUARE inputs), with branches on
 * values taken through guards (dr_lt) and selects.  The program's choices
 * come from its seed and from the branches it takes: a fresh recording at
 * another point takes other branches where a guard flips, and the replay
 * must answer DR_ERETAPE exactly then.
 */
#define POOL 48

typedef struct rprog {
    dr_arr mat[POOL], vec[POOL];
    dr_real sc[POOL];
    size_t nm, nv, ns;
    uint64_t trace; /* the outcomes of the branches, one bit each */
    int branches;
} rprog;

static dr_arr pick_m(chk_rng *r, rprog *p)
{
    return p->mat[p->nm - 1 - chk_rng_below(r, p->nm < 6 ? p->nm : 6)];
}
static dr_arr pick_v(chk_rng *r, rprog *p)
{
    return p->vec[p->nv - 1 - chk_rng_below(r, p->nv < 6 ? p->nv : 6)];
}
static dr_real pick_s(chk_rng *r, rprog *p)
{
    return p->sc[p->ns - 1 - chk_rng_below(r, p->ns < 6 ? p->ns : 6)];
}
/* a matrix or vector, chosen at random */
static dr_arr pick_a(chk_rng *r, rprog *p)
{
    return chk_rng_below(r, 2) ? pick_m(r, p) : pick_v(r, p);
}
static void push_a(rprog *p, dr_arr a)
{
    if (a.rank == 2)
        p->mat[p->nm++] = a;
    else
        p->vec[p->nv++] = a;
}

/* a function of every element that keeps values in range */
static const dr_arr_fn TAME[] = {DR_FN_SIN, DR_FN_TANH, DR_FN_SIGMOID,
                                 DR_FN_COS, DR_FN_NEG, DR_FN_RELU,
                                 DR_FN_ABS, DR_FN_SQUARE, DR_FN_EXP,
                                 DR_FN_SQRT, DR_FN_LOG};

/* one step of a random program */
static void rstep(dr_tape *t, chk_rng *r, rprog *p)
{
    dr_arr a, b, y;
    dr_real s;
    switch (chk_rng_below(r, 24)) {
    case 0: { /* elementwise */
        a = pick_a(r, p);
        b = a.rank == 2 ? pick_m(r, p) : pick_v(r, p);
        switch (chk_rng_below(r, 4)) {
        case 0: y = dr_arr_add(t, a, b); break;
        case 1: y = dr_arr_sub(t, a, b); break;
        case 2: y = dr_arr_mul(t, a, b); break;
        default: y = dr_arr_div(t, a, dr_arr_map(t, DR_FN_EXP, b)); break;
        }
        push_a(p, y);
        break;
    }
    case 1:
        push_a(p, dr_arr_scale(t, pick_s(r, p), pick_a(r, p)));
        break;
    case 2: case 3:
        push_a(p, dr_arr_map(t, TAME[chk_rng_below(r, 8 + 3 * (chk_rng_below(r, 4) == 0))],
                             pick_a(r, p)));
        break;
    case 4:
        a = pick_m(r, p);
        push_a(p, chk_rng_below(r, 2) ? dr_arr_add_rowvec(t, a, pick_v(r, p))
                                      : dr_arr_add_colvec(t, a, pick_v(r, p)));
        break;
    case 5:
        push_a(p, chk_rng_below(r, 2) ? dr_arr_replicate_rows(t, pick_v(r, p), 3)
                                      : dr_arr_replicate_cols(t, pick_v(r, p), 3));
        break;
    case 6:
        push_a(p, chk_rng_below(r, 2) ? dr_arr_matvec(t, pick_m(r, p), pick_v(r, p))
                                      : dr_arr_vecmat(t, pick_v(r, p), pick_m(r, p)));
        break;
    case 7: {
        int ta = (int)chk_rng_below(r, 2), tb = (int)chk_rng_below(r, 2);
        y = dr_arr_matmul(t, pick_m(r, p), ta, pick_m(r, p), tb);
        push_a(p, dr_arr_map(t, DR_FN_TANH, y));
        break;
    }
    case 8:
        push_a(p, chk_rng_below(r, 2) ? dr_arr_outer(t, pick_v(r, p), pick_v(r, p))
                                      : dr_arr_transpose(t, pick_m(r, p)));
        break;
    case 9:
        a = pick_m(r, p);
        switch (chk_rng_below(r, 3)) {
        case 0: push_a(p, dr_arr_sum_rows(t, a)); break;
        case 1: push_a(p, dr_arr_sum_cols(t, a)); break;
        default: push_a(p, dr_arr_logsumexp_rows(t, a)); break;
        }
        break;
    case 10:
        a = pick_a(r, p);
        push_a(p, chk_rng_below(r, 2) ? dr_arr_softmax(t, a)
                                      : dr_arr_log_softmax(t, a));
        break;
    case 11: { /* from scalars, some constant */
        dr_real xs[3];
        for (int i = 0; i < 3; i++)
            xs[i] = chk_rng_below(r, 4) ? pick_s(r, p) : dr_const(0.5 * i);
        push_a(p, dr_arr_from_reals(t, 3, xs));
        break;
    }
    case 12: /* cut in two and put together again */
        if (chk_rng_below(r, 2)) {
            a = pick_v(r, p);
            dr_arr parts[2] = {dr_arr_slice(t, a, 1, 2), dr_arr_slice(t, a, 0, 1)};
            push_a(p, dr_arr_concat(t, 0, 2, parts));
        } else {
            a = pick_m(r, p);
            dr_arr parts[2] = {dr_arr_slice2(t, a, 0, 3, 2, 1),
                               dr_arr_slice2(t, a, 0, 3, 0, 2)};
            push_a(p, dr_arr_concat(t, 1, 2, parts));
        }
        break;
    case 13: {
        int64_t idx[3] = {(int64_t)chk_rng_below(r, 3), (int64_t)chk_rng_below(r, 3),
                          (int64_t)chk_rng_below(r, 3)};
        a = pick_a(r, p);
        push_a(p, chk_rng_below(r, 2) || a.rank == 2 ? dr_arr_gather(t, a, 3, idx)
                                                     : dr_arr_scatter(t, a, 3, idx));
        break;
    }
    case 14:
        a = pick_m(r, p);
        push_a(p, dr_arr_reshape(t, dr_arr_reshape(t, a, 1, 9, 1), 2, 3, 3));
        break;
    case 15: case 16: { /* a scalar out of an array */
        a = pick_a(r, p);
        switch (chk_rng_below(r, 6)) {
        case 0: s = dr_arr_dot(t, a, a.rank == 2 ? pick_m(r, p) : pick_v(r, p)); break;
        case 1: s = dr_arr_sum(t, a); break;
        case 2: s = dr_arr_max(t, a); break;
        case 3: s = dr_arr_logsumexp(t, a); break;
        case 4: s = dr_arr_index(t, a, (int64_t)chk_rng_below(r, 3)); break;
        default:
            s = a.rank == 2 ? dr_arr_index2(t, a, 1, (int64_t)chk_rng_below(r, 3))
                            : dr_arr_index(t, a, 2);
            break;
        }
        p->sc[p->ns++] = dr_tanh(t, s);
        break;
    }
    case 17: case 18: { /* scalar operations */
        dr_real u = pick_s(r, p), w = pick_s(r, p);
        switch (chk_rng_below(r, 4)) {
        case 0: s = dr_mul(t, u, w); break;
        case 1: s = dr_add(t, u, dr_sin(t, w)); break;
        case 2: s = dr_sub(t, u, dr_const(0.25)); break;
        default: s = dr_tanh(t, dr_add(t, u, w)); break;
        }
        p->sc[p->ns++] = s;
        break;
    }
    case 19: { /* an n-ary sum, with constants and repeated terms */
        dr_real xs[6];
        size_t n = 1 + chk_rng_below(r, 6);
        for (size_t i = 0; i < n; i++)
            xs[i] = chk_rng_below(r, 5) ? pick_s(r, p) : dr_const(0.3);
        p->sc[p->ns++] = dr_sumn(t, n, xs);
        break;
    }
    case 20: case 21: { /* a branch on a value */
        dr_real c = pick_s(r, p);
        int out = dr_lt(t, c, dr_const(0.0));
        p->trace |= (uint64_t)out << (p->branches++ % 64);
        a = pick_a(r, p);
        push_a(p, out ? dr_arr_map(t, DR_FN_SIN, a)
                      : dr_arr_scale(t, c, a));
        break;
    }
    case 22: { /* a select */
        dr_real c = pick_s(r, p);
        dr_real sa = pick_s(r, p);
        s = dr_select(t, c, sa, pick_s(r, p));
        p->sc[p->ns++] = s;
        break;
    }
    default: /* a branch on an array's maximum */
        a = pick_a(r, p);
        s = dr_arr_max(t, a);
        if (dr_gt(t, s, dr_const(0.8))) {
            p->trace |= (uint64_t)1 << (p->branches % 64);
            s = dr_mul(t, s, pick_s(r, p));
            p->sc[p->ns++] = s;
        } else {
            push_a(p, dr_arr_softmax(t, a));
        }
        p->branches++;
        break;
    }
}

/* random program seed over the SQUARE inputs: three outputs */
static void random_program(dr_tape *t, uint64_t seed, const inputs *in,
                           dr_real *y, rprog *p)
{
    chk_rng r;
    chk_rng_seed(&r, seed);
    memset(p, 0, sizeof *p);
    p->mat[p->nm++] = in->C;
    p->mat[p->nm++] = in->a[0];
    p->mat[p->nm++] = in->a[1];
    p->vec[p->nv++] = in->K;
    p->vec[p->nv++] = in->a[2];
    p->vec[p->nv++] = in->a[3];
    p->sc[p->ns++] = in->s[0];
    p->sc[p->ns++] = in->s[1];
    while (p->nm < POOL - 2 && p->nv < POOL - 2 && p->ns < POOL - 2)
        rstep(t, &r, p);
    CHK_STATUS(dr_tape_status(t), DR_OK);
    y[0] = p->sc[p->ns - 1];
    y[1] = readout(t, in, p->mat[p->nm - 1]);
    y[2] = dr_add(t, dr_arr_sum(t, p->vec[p->nv - 1]), p->sc[p->ns - 2]);
}

static void random_fresh(uint64_t seed, const point *pt, results *res,
                         rprog *p)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    point mem;
    inputs in;
    record_inputs(t, &SQUARE, pt, &mem, &in);
    dr_real y[NOUT];
    random_program(t, seed, &in, y, p);
    read_results(t, &SQUARE, &in, NOUT, y, p->mat[p->nm - 1].idx, res);
    dr_tape_free(t);
}

static void test_random_programs(void **state)
{
    (void)state;
    static rprog prog, fprog; /* (large) */
    chk_rng rng;
    chk_rng_seed(&rng, 77);
    int replayed = 0, retaped = 0, finite = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        point truth, mem[2];
        int cur = 0;
        random_point(&rng, &SQUARE, &truth);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        inputs in;
        record_inputs(t, &SQUARE, &truth, &mem[0], &in);
        dr_real y[NOUT];
        random_program(t, seed, &in, y, &prog);
        dr_idx arr = prog.mat[prog.nm - 1].idx;
        results now, got, want;
        read_results(t, &SQUARE, &in, NOUT, y, arr, &now);
        for (int j = 0; j < 8; j++) {
            chk_context("program %llu, point %d", (unsigned long long)seed, j);
            /* near the point (the path mostly holds) or anywhere */
            point p = truth, d;
            random_point(&rng, &SQUARE, &d);
            double scale = j % 2 ? 1.0 : 1e-3;
            p.s[0] = j % 2 ? d.s[0] : truth.s[0] + scale * d.s[0];
            p.s[1] = j % 2 ? d.s[1] : truth.s[1] + scale * d.s[1];
            for (int i = 0; i < NA; i++)
                for (int k = 0; k < MAXN; k++)
                    p.a[i][k] = j % 2 ? d.a[i][k] : truth.a[i][k] + scale * d.a[i][k];
            dr_arr arrs[NA];
            const double *vals[NA];
            for (int i = 0; i < NA; i++) {
                arrs[i] = in.a[i];
                vals[i] = p.a[i];
                if (BORROWED[i]) {
                    memcpy(mem[1 - cur].a[i], p.a[i], sizeof p.a[i]);
                    vals[i] = mem[1 - cur].a[i];
                }
            }
            random_fresh(seed, &p, &want, &fprog);
            bool same_path = fprog.trace == prog.trace &&
                             fprog.branches == prog.branches;
            dr_status st = dr_replay_arrays(t, 2, in.s, p.s, NA, arrs, vals);
            if (same_path) {
                CHK_STATUS(st, DR_OK);
                read_results(t, &SQUARE, &in, NOUT, y, arr, &got);
                check_same(&got, &want);
                for (int q = 0; q < NOUT; q++)
                    finite += isfinite(got.y[q]) && isfinite(got.g[q][0]) &&
                              isfinite(got.ga[q][0][0]);
                truth = p;
                cur = 1 - cur;
                now = got;
                replayed++;
            } else {
                /* as it was: the old memory borrowed again */
                CHK_STATUS(st, DR_ERETAPE);
                CHK_STATUS(dr_tape_status(t), DR_OK);
                read_results(t, &SQUARE, &in, NOUT, y, arr, &got);
                check_same(&got, &now);
                for (int i = 0; i < NA; i++)
                    if (BORROWED[i])
                        assert_ptr_equal(dr_arr_values(t, in.a[i].idx),
                                         mem[cur].a[i]);
                retaped++;
            }
        }
        dr_tape_free(t);
    }
    chk_context(NULL);
    /* both kinds happen often */
    print_message("%d replays, %d retapes, %d finite\n", replayed, retaped, finite);
    assert_true(replayed > 150);
    assert_true(retaped > 150);
    assert_true(finite > 3 * replayed / 2); /* (mostly numbers) */
}

/* ------------------------------------------------------- n-ary sums */

#define NS 4

/* what a scalar tape gives at its point: values, Jacobian, forward and
   Hessian-vector products */
typedef struct sresults {
    double y[2], J[2 * NS], jv[2], hv[NS];
} sresults;

static const double SD4[NS] = {0.5, -1.5, 0.25, 1.0};

static void read_sresults(dr_tape *t, const dr_real *x, const dr_real *y,
                          bool second, sresults *r)
{
    memset(r, 0, sizeof *r);
    for (int j = 0; j < 2; j++)
        CHK_STATUS(dr_value(t, y[j].idx, &r->y[j]), DR_OK);
    CHK_STATUS(dr_jacobian(t, 2, y, NS, x, r->J), DR_OK);
    CHK_STATUS(dr_jvp(t, 2, y, NS, x, SD4, r->jv), DR_OK);
    CHK_STATUS(dr_hvp(t, y[0], NS, x, SD4, r->hv), second ? DR_OK : DR_ENOTSUP);
}

static void check_ssame(const sresults *a, const sresults *b)
{
    for (int j = 0; j < 2; j++) {
        CHK_SAME(a->y[j], b->y[j]);
        CHK_SAME(a->jv[j], b->jv[j]);
    }
    for (int i = 0; i < 2 * NS; i++)
        CHK_SAME(a->J[i], b->J[i]);
    for (int i = 0; i < NS; i++)
        CHK_SAME(a->hv[i], b->hv[i]);
}

/* sums of active terms, constants and repeated terms, of sums, in
   products (so that the Hessian is not zero) */
static void sum_program(dr_tape *t, const dr_real *x, dr_real *y)
{
    dr_real p = dr_mul(t, x[0], x[1]);
    dr_real a[6] = {p, dr_const(0.1), x[2], dr_sin(t, x[3]), x[0], p};
    dr_real s = dr_sumn(t, 6, a);
    double vals[3] = {s.val, -2.5, x[3].val};
    dr_idx ids[3] = {s.idx, DR_NONE, x[3].idx};
    dr_real s2;
    s2.idx = dr_sumn_id(t, 3, vals, ids, &s2.val);
    dr_real b[2] = {dr_mul(t, s, s2), dr_exp(t, x[2])};
    y[0] = dr_sumn(t, 2, b);
    dr_real c[1] = {dr_mul(t, s2, x[1])};
    y[1] = dr_sumn(t, 1, c);
}

/* the same with the sums written as additions (0 + a0 + a1 ...): the
   same values bit for bit, and derivatives to rounding */
static dr_real adds(dr_tape *t, size_t n, const dr_real *a)
{
    dr_real s = dr_const(0.0);
    for (size_t i = 0; i < n; i++)
        s = dr_add(t, s, a[i]);
    return s;
}

static void adds_program(dr_tape *t, const dr_real *x, dr_real *y)
{
    dr_real p = dr_mul(t, x[0], x[1]);
    dr_real a[6] = {p, dr_const(0.1), x[2], dr_sin(t, x[3]), x[0], p};
    dr_real s = adds(t, 6, a);
    dr_real a2[3] = {s, dr_const(-2.5), x[3]};
    dr_real s2 = adds(t, 3, a2);
    dr_real b[2] = {dr_mul(t, s, s2), dr_exp(t, x[2])};
    y[0] = adds(t, 2, b);
    dr_real c[1] = {dr_mul(t, s2, x[1])};
    y[1] = adds(t, 1, c);
}

static void sum_fresh(const double *xv, sresults *r)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NS], y[2];
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    sum_program(t, x, y);
    read_sresults(t, x, y, true, r);
    dr_tape_free(t);
}

/* the tangent of output 0 in direction x0, recorded afresh at xv: its
   value */
static void sum_tangent_fresh(const double *xv, double *dv)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NS], y[2], d;
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    sum_program(t, x, y);
    dr_idx seed = x[0].idx;
    dr_real one = dr_const(1.0);
    CHK_STATUS(dr_tangent_record(t, x[0].idx, 1, &seed, &one, y[0], &d), DR_OK);
    CHK_STATUS(dr_value(t, d.idx, dv), DR_OK);
    CHK_CLOSE(*dv, d.val, 0.0, 0.0);
    dr_tape_free(t);
}

static void test_sumn(void **state)
{
    (void)state;
    /* the value: 0 + a0 + a1 + ... left to right, bit for bit */
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NS];
    const double x0[NS] = {1e16, 1.0, -1e16, -0.0};
    CHK_STATUS(dr_inputs(t, NS, x0, x), DR_OK);
    dr_real a[5] = {x[0], x[1], dr_const(1.0), x[2], x[1]};
    dr_real s = dr_sumn(t, 5, a);
    CHK_SAME(s.val, (((0.0 + 1e16) + 1.0) + 1.0) + -1e16 + 1.0);
    double v;
    CHK_STATUS(dr_value(t, s.idx, &v), DR_OK);
    CHK_SAME(v, s.val);
    dr_real act[3] = {x[0], x[1], x[2]}; /* every term active */
    dr_real sa = dr_sumn(t, 3, act);
    CHK_SAME(sa.val, ((0.0 + 1e16) + 1.0) + -1e16);
    CHK_STATUS(dr_value(t, sa.idx, &v), DR_OK);
    CHK_SAME(v, sa.val);
    /* replayed where the order of the additions matters */
    const double x1[NS] = {3.0, 1e16, -1e16, 3.0};
    CHK_STATUS(dr_replay(t, NS, x, x1), DR_OK);
    CHK_STATUS(dr_value(t, sa.idx, &v), DR_OK);
    CHK_SAME(v, ((0.0 + 3.0) + 1e16) + -1e16);
    CHK_SAME(v, 4.0);
    CHK_STATUS(dr_value(t, s.idx, &v), DR_OK);
    CHK_SAME(v, ((((0.0 + 3.0) + 1e16) + 1.0) + -1e16) + 1e16);
    CHK_STATUS(dr_replay(t, NS, x, x0), DR_OK);
    dr_real z = dr_sumn(t, 1, &x[3]); /* 0 + -0 is +0 */
    CHK_SAME(z.val, 0.0);
    assert_true(z.idx != DR_NONE);
    dr_real none = dr_sumn(t, 0, NULL);
    CHK_SAME(none.val, 0.0);
    assert_int_equal(none.idx, DR_NONE);
    dr_real k[2] = {dr_const(0.5), dr_const(0.25)};
    dr_real c = dr_sumn(t, 2, k);
    CHK_SAME(c.val, 0.75);
    assert_int_equal(c.idx, DR_NONE);
    /* its gradient: each place of a term adds 1 */
    double g[NS];
    CHK_STATUS(dr_gradient(t, s, NS, x, g), DR_OK);
    CHK_SAME(g[0], 1.0);
    CHK_SAME(g[1], 2.0);
    CHK_SAME(g[2], 1.0);
    CHK_SAME(g[3], 0.0);
    /* misuse: a constant; NaN for no terms; the sticky status */
    dr_real r = dr_sumn(NULL, 5, a);
    CHK_SAME(r.val, s.val);
    assert_int_equal(r.idx, DR_NONE);
    r = dr_sumn(t, 2, NULL);
    assert_true(isnan(r.val));
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape_free(t);
    t = chk_tape_new();
    CHK_STATUS(dr_inputs(t, NS, x0, x), DR_OK);
    dr_real bad[2] = {x[0], {2.0, x[3].idx + 100}};
    r = dr_sumn(t, 2, bad);
    CHK_SAME(r.val, 1e16 + 2.0);
    assert_int_equal(r.idx, DR_NONE);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    assert_int_equal(dr_sumn_id(t, 1, NULL, NULL, &v), DR_NONE);
    dr_tape_free(t);

    /* replayed at random points against fresh recordings: values,
       Jacobian, forward and second-order products */
    chk_rng rng;
    chk_rng_seed(&rng, 5);
    double xv[NS];
    for (int i = 0; i < NS; i++)
        xv[i] = chk_rng_uniform(&rng, -1, 1);
    t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real y[2];
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    sum_program(t, x, y);
    sresults got, want;
    read_sresults(t, x, y, true, &got);
    sum_fresh(xv, &want);
    check_ssame(&got, &want);
    dr_real d;
    dr_idx seed = x[0].idx;
    dr_real one = dr_const(1.0);
    CHK_STATUS(dr_tangent_record(t, x[0].idx, 1, &seed, &one, y[0], &d), DR_OK);
    for (int j = 0; j < 8; j++) {
        chk_context("point %d", j);
        for (int i = 0; i < NS; i++)
            xv[i] = chk_rng_uniform(&rng, -2, 2);
        CHK_STATUS(dr_replay(t, NS, x, xv), DR_OK);
        read_sresults(t, x, y, true, &got);
        sum_fresh(xv, &want);
        check_ssame(&got, &want);
        /* the sums as additions: the same values, the same derivatives to
           rounding (first and second order) */
        dr_tape *u = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
        dr_real ux[NS], uy[2];
        CHK_STATUS(dr_inputs(u, NS, xv, ux), DR_OK);
        adds_program(u, ux, uy);
        read_sresults(u, ux, uy, true, &want);
        dr_tape_free(u);
        for (int i = 0; i < 2; i++)
            CHK_SAME(got.y[i], want.y[i]);
        for (int i = 0; i < 2 * NS; i++)
            CHK_CLOSE(got.J[i], want.J[i], 1e-13, 1e-13);
        for (int i = 0; i < NS; i++)
            CHK_CLOSE(got.hv[i], want.hv[i], 1e-13, 1e-13);
        /* the tangent recorded through the sums replays with them */
        double dv, dw;
        CHK_STATUS(dr_value(t, d.idx, &dv), DR_OK);
        sum_tangent_fresh(xv, &dw);
        CHK_SAME(dv, dw);
    }
    chk_context(NULL);
    dr_tape_free(t);

    /* a term given a value other than its node's: no replay (and still a
       linear node to second order) */
    t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    dr_real sq = dr_mul(t, x[0], x[0]);
    double vals[2] = {sq.val + 1.0, 3.0};
    dr_idx ids[2] = {sq.idx, DR_NONE};
    dr_real f;
    f.idx = dr_sumn_id(t, 2, vals, ids, &f.val);
    CHK_SAME(f.val, (0.0 + (sq.val + 1.0)) + 3.0);
    CHK_STATUS(dr_replay(t, NS, x, xv), DR_ENOTSUP);
    CHK_STATUS(dr_value(t, f.idx, &v), DR_ENOTSUP);
    double h, e1 = 1.0;
    CHK_STATUS(dr_hvp(t, f, 1, x, &e1, &h), DR_OK);
    CHK_SAME(h, 2.0);
    dr_tape_free(t);
}

/* ------------------------------------------------- external functions */

/* f(x) = (x0 x1, sin x2 + x0, e^x1 x2): the caller's code and the primal */
static void f_eval(const double *x, double *y)
{
    y[0] = x[0] * x[1];
    y[1] = sin(x[2]) + x[0];
    y[2] = exp(x[1]) * x[2];
}

static void f_reverse(void *ctx, size_t n, const double *x, size_t m,
                      const double *y, const double *ybar, double *xbar)
{
    (void)ctx, (void)n, (void)m, (void)y;
    double e = exp(x[1]);
    xbar[0] = ybar[0] * x[1] + ybar[1];
    xbar[1] = ybar[0] * x[0] + ybar[2] * e * x[2];
    xbar[2] = ybar[1] * cos(x[2]) + ybar[2] * e;
}

static void f_forward(void *ctx, size_t n, const double *x,
                      const double *xdot, size_t m, const double *y,
                      double *ydot)
{
    (void)ctx, (void)n, (void)m, (void)y;
    double e = exp(x[1]);
    ydot[0] = xdot[0] * x[1] + x[0] * xdot[1];
    ydot[1] = cos(x[2]) * xdot[2] + xdot[0];
    ydot[2] = e * x[2] * xdot[1] + e * xdot[2];
}

static int primal_calls;

static void f_primal(void *ctx, size_t n, const double *x, size_t m,
                     double *y)
{
    (void)ctx;
    assert_int_equal(n, 3);
    assert_int_equal(m, 3);
    primal_calls++;
    f_eval(x, y);
}

/* the external over (x0 x1, x2, 0.3) with and without a primal, then
   operations on its outputs; a guard on one of them when guard */
static void ext_program(dr_tape *t, const dr_real *x, bool primal,
                        bool guard, dr_real *y)
{
    dr_real in[3] = {dr_mul(t, x[0], x[1]), x[2], dr_const(0.3)};
    double xv[3] = {in[0].val, in[1].val, in[2].val}, yv[3];
    f_eval(xv, yv);
    dr_external f = {NULL, f_reverse, f_forward, NULL,
                     primal ? f_primal : NULL};
    dr_real out[3];
    CHK_STATUS(dr_record_external(t, &f, 3, in, 3, yv, out), DR_OK);
    if (guard)
        dr_lt(t, out[1], dr_const(0.0));
    y[0] = dr_add(t, dr_mul(t, out[0], out[1]), out[2]);
    y[1] = dr_sumn(t, 3, out);
}

static void ext_fresh(const double *xv, sresults *r)
{
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NS], y[2];
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    ext_program(t, x, true, true, y);
    read_sresults(t, x, y, false, r);
    dr_tape_free(t);
}

static void test_external(void **state)
{
    (void)state;
    chk_rng rng;
    chk_rng_seed(&rng, 11);
    double xv[NS] = {0.5, -0.25, 1.0, 0.0};
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NS], y[2];
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    ext_program(t, x, true, true, y);
    sresults now, got, want;
    read_sresults(t, x, y, false, &now);
    int replayed = 0, retaped = 0;
    for (int j = 0; j < 12; j++) {
        chk_context("point %d", j);
        double p[NS];
        for (int i = 0; i < NS; i++)
            p[i] = chk_rng_uniform(&rng, -2, 2);
        /* the guard: output 1, sin 0.3 + x0 x1, < 0 (it was not) */
        bool flips = sin(0.3) + p[0] * p[1] < 0.0;
        primal_calls = 0;
        dr_status st = dr_replay(t, NS, x, p);
        if (!flips) {
            CHK_STATUS(st, DR_OK);
            assert_int_equal(primal_calls, 1);
            read_sresults(t, x, y, false, &got);
            ext_fresh(p, &want);
            check_ssame(&got, &want);
            now = got;
            replayed++;
        } else { /* the primal again at the old point */
            CHK_STATUS(st, DR_ERETAPE);
            assert_int_equal(primal_calls, 2);
            read_sresults(t, x, y, false, &got);
            check_ssame(&got, &now);
            retaped++;
        }
    }
    chk_context(NULL);
    assert_true(replayed >= 3 && retaped >= 3);
    dr_tape_free(t);

    /* without a primal it does not replay; nor with an input given a
       value other than its node's */
    for (int k = 0; k < 2; k++) {
        t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
        if (k == 0) {
            ext_program(t, x, false, false, y);
        } else {
            dr_real in[3] = {x[0], {x[1].val + 1.0, x[1].idx}, x[2]};
            double iv[3] = {in[0].val, in[1].val, in[2].val}, yv[3];
            f_eval(iv, yv);
            dr_external f = {NULL, f_reverse, f_forward, NULL, f_primal};
            dr_real out[3];
            CHK_STATUS(dr_record_external(t, &f, 3, in, 3, yv, out), DR_OK);
            y[0] = dr_mul(t, out[0], out[1]);
            y[1] = dr_add(t, out[2], x[3]);
        }
        read_sresults(t, x, y, false, &now);
        double p[NS] = {1.0, 2.0, 3.0, 4.0};
        primal_calls = 0;
        CHK_STATUS(dr_replay(t, NS, x, p), DR_ENOTSUP);
        assert_int_equal(primal_calls, 0);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        read_sresults(t, x, y, false, &got);
        check_ssame(&got, &now);
        dr_tape_free(t);
    }
}

/* ------------------------------------------------- checkpointed loops */

#define NL 4

typedef struct lctx {
    double fail_above; /* a step fails where x0 is larger */
    double const_above; /* entry 2 becomes a constant where it is larger */
} lctx;

static dr_status lstep(void *ctx, dr_tape *t, size_t k, size_t n,
                       const dr_real *x, dr_real *y)
{
    const lctx *c = ctx;
    assert_int_equal(n, NL);
    if (x[0].val > c->fail_above)
        return DR_ERANGE;
    dr_real dt = dr_const(0.05);
    y[0] = dr_add(t, x[0], dr_mul(t, dt, x[1]));
    y[1] = dr_sub(t, x[1], dr_mul(t, dt, dr_mul(t, x[2], dr_sin(t, x[0]))));
    y[1] = dr_add(t, y[1], dr_const(0.01 * cos((double)k)));
    y[2] = x[2].val > c->const_above ? dr_const(x[2].val) : x[2];
    y[3] = dr_mul(t, x[3], dr_const(0.99));
    return dr_tape_status(t);
}

/* a loop from (x0, x1 x2, x2, 0.3), and a loss of its outputs */
static dr_real loop_program(dr_tape *t, lctx *c, const dr_real *x,
                            size_t segment)
{
    dr_real x0[NL] = {x[0], dr_mul(t, x[1], x[2]), x[2], dr_const(0.3)};
    dr_loop loop = {c, lstep, NULL, segment};
    dr_real out[NL];
    CHK_STATUS(dr_record_checkpointed(t, &loop, 37, NL, x0, 3, out), DR_OK);
    assert_int_equal(out[3].idx, DR_NONE); /* (constants all along) */
    dr_real l = dr_add(t, dr_mul(t, out[0], out[1]), dr_mul(t, out[2], out[2]));
    return dr_add(t, l, dr_mul(t, out[3], x[3]));
}

typedef struct lresults {
    double y, g[NS], g2[NS], jv;
} lresults;

static void read_lresults(dr_tape *t, const dr_real *x, dr_real y,
                          lresults *r)
{
    CHK_STATUS(dr_value(t, y.idx, &r->y), DR_OK);
    CHK_STATUS(dr_gradient(t, y, NS, x, r->g), DR_OK);
    /* a second sweep (the snapshots the first one left) */
    CHK_STATUS(dr_gradient(t, y, NS, x, r->g2), DR_OK);
    CHK_STATUS(dr_jvp(t, 1, &y, NS, x, SD4, &r->jv), DR_OK);
}

static void check_lsame(const lresults *a, const lresults *b)
{
    CHK_SAME(a->y, b->y);
    CHK_SAME(a->jv, b->jv);
    for (int i = 0; i < NS; i++) {
        CHK_SAME(a->g[i], b->g[i]);
        CHK_SAME(a->g2[i], b->g2[i]);
    }
}

static void loop_fresh(const double *xv, size_t segment, lresults *r)
{
    lctx c = {1e300, 1e300};
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real x[NS];
    CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
    dr_real y = loop_program(t, &c, x, segment);
    read_lresults(t, x, y, r);
    dr_tape_free(t);
}

static void test_checkpointed(void **state)
{
    (void)state;
    chk_rng rng;
    chk_rng_seed(&rng, 3);
    for (size_t segment = 0; segment < 3; segment++) {
        lctx c = {1e300, 1e300};
        double xv[NS] = {0.3, 0.7, 1.1, -0.4};
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[NS];
        CHK_STATUS(dr_inputs(t, NS, xv, x), DR_OK);
        dr_real y = loop_program(t, &c, x, segment);
        lresults got, want, now;
        read_lresults(t, x, y, &now);
        double h[NS];
        CHK_STATUS(dr_hvp(t, y, NS, x, SD4, h), DR_ENOTSUP);
        for (int j = 0; j < 5; j++) {
            chk_context("segment %zu, point %d", segment, j);
            for (int i = 0; i < NS; i++)
                xv[i] = chk_rng_uniform(&rng, -1, 1.5);
            CHK_STATUS(dr_replay(t, NS, x, xv), DR_OK);
            read_lresults(t, x, y, &got);
            loop_fresh(xv, segment, &want);
            check_lsame(&got, &want);
            now = got;
        }
        /* a step that fails at the new point: its status, and the tape as
           it was (the loop run again at the old point) */
        chk_context("segment %zu, failing", segment);
        c.fail_above = 2.0;
        double far[NS] = {5.0, 0.5, 0.5, 0.5};
        CHK_STATUS(dr_replay(t, NS, x, far), DR_ERANGE);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        read_lresults(t, x, y, &got);
        check_lsame(&got, &now);
        /* an output that comes out constant at the new point: another
           program */
        c.fail_above = 1e300;
        c.const_above = 1.2;
        double big[NS] = {0.1, 0.5, 1.3, 0.5};
        CHK_STATUS(dr_replay(t, NS, x, big), DR_ERETAPE);
        read_lresults(t, x, y, &got);
        check_lsame(&got, &now);
        /* and below it the loop replays again */
        xv[2] = 1.0;
        CHK_STATUS(dr_replay(t, NS, x, xv), DR_OK);
        read_lresults(t, x, y, &got);
        loop_fresh(xv, segment, &want);
        check_lsame(&got, &want);
        dr_tape_free(t);
    }
    chk_context(NULL);
}

/* ------------------------------------------- refusals and misuse */

/* a tape of primitive k at a fixed point, its results, and the memory its
   borrowed inputs borrow */
typedef struct fixture {
    dr_tape *t;
    point p, mem;
    inputs in;
    dr_real y;
    dr_idx arr;
    results before;
} fixture;

static void fixture_make(fixture *f, int k)
{
    chk_rng rng;
    chk_rng_seed(&rng, 1000 + (uint64_t)k);
    random_point(&rng, &PRIM, &f->p);
    f->t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(f->t, 2), DR_OK);
    record_inputs(f->t, &PRIM, &f->p, &f->mem, &f->in);
    f->y = prim_program(f->t, k, &f->in, &f->arr);
    read_results(f->t, &PRIM, &f->in, 1, &f->y, f->arr, &f->before);
}

/* nothing changed: the same results (and no sticky status) */
static void fixture_unchanged(fixture *f)
{
    results now;
    CHK_STATUS(dr_tape_status(f->t), DR_OK);
    read_results(f->t, &PRIM, &f->in, 1, &f->y, f->arr, &now);
    check_same(&now, &f->before);
}

static void test_refused(void **state)
{
    (void)state;
    /* array operations given a scalar whose value is not its node's */
    for (int k = 0; k < 3; k++) {
        chk_context("case %d", k);
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x = dr_input(t, 0.5);
        dr_real sx = dr_sin(t, x);
        double u3[3] = {1, 2, 3};
        dr_arr u = dr_arr_input(t, 1, 3, 1, u3), r;
        if (k == 0) {
            r = dr_arr_get(t, dr_arr_scale_id(t, sx.val + 1.0, sx.idx, u.idx));
        } else if (k == 1) {
            double vals[2] = {sx.val, x.val * 2.0};
            dr_idx ids[2] = {sx.idx, x.idx};
            r = dr_arr_get(t, dr_arr_from_reals_id(t, 2, vals, ids));
        } else {
            r = dr_arr_scale(t, sx, u); /* (this one replays) */
        }
        dr_real y = dr_arr_sum(t, r);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        double v = 0.25, before, after;
        CHK_STATUS(dr_value(t, y.idx, &before), DR_OK);
        CHK_SAME(before, y.val);
        CHK_STATUS(dr_replay(t, 1, &x, &v), k == 2 ? DR_OK : DR_ENOTSUP);
        CHK_STATUS(dr_value(t, y.idx, &after), DR_OK);
        if (k == 2)
            CHK_SAME(after, sin(0.25) * 1 + sin(0.25) * 2 + sin(0.25) * 3);
        else
            CHK_SAME(after, before);
        dr_tape_free(t);
    }
    chk_context(NULL);
    /* an array node on a tape of order 1, and a job graph */
    dr_tape *t = chk_tape_new();
    double u3[3] = {1, 2, 3};
    dr_arr u = dr_arr_input(t, 1, 3, 1, u3);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    dr_real y = dr_arr_sum(t, u);
    const double *nv[1] = {u3};
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &u, nv), DR_ENOTSUP);
    double v;
    CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
    CHK_SAME(v, 6.0);
    dr_tape_free(t);
}

static void test_misuse(void **state)
{
    (void)state;
    fixture f;
    fixture_make(&f, P_MM00);
    dr_tape *t = f.t;
    const inputs *in = &f.in;
    double news[MAXN] = {0};
    const double *nv[NA] = {news, news, news, news};
    dr_arr arrs[NA];
    for (int i = 0; i < NA; i++)
        arrs[i] = in->a[i];
    /* NULL */
    CHK_STATUS(dr_replay_arrays(NULL, 0, NULL, NULL, 1, arrs, nv), DR_EINVAL);
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, NULL, nv), DR_EINVAL);
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, arrs, NULL), DR_EINVAL);
    const double *nulls[NA] = {news, NULL, news, news};
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 2, arrs, nulls), DR_EINVAL);
    CHK_STATUS(dr_replay_arrays(t, 2, NULL, f.p.s, 1, arrs, nv), DR_EINVAL);
    fixture_unchanged(&f);
    /* not array inputs: constants, a computed array, a scalar id, a
       failed handle, another tape's input, an id past the tape */
    dr_arr bad[6];
    bad[0] = in->C;
    bad[1] = in->K;
    bad[2] = dr_arr_get(t, f.arr);
    bad[3] = (dr_arr){in->s[0].idx, 2, 3, 4, NULL};
    bad[4] = (dr_arr){DR_NONE, 0, 0, 0, NULL};
    dr_tape *other = chk_tape_new();
    bad[5] = dr_arr_input(other, 2, 3, 4, news);
    for (int i = 0; i < 6; i++) {
        chk_context("not an input %d", i);
        CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &bad[i], nv), DR_EINVAL);
        dr_arr two[2] = {in->a[0], bad[i]};
        CHK_STATUS(dr_replay_arrays(t, 2, in->s, f.p.s, 2, two, nv), DR_EINVAL);
        fixture_unchanged(&f);
    }
    chk_context(NULL);
    dr_arr past = in->a[0];
    past.idx += 1000;
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &past, nv), DR_EINVAL);
    dr_tape_free(other);
    /* an array given twice; an array id as a scalar input */
    dr_arr twice[2] = {in->a[1], in->a[1]};
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 2, twice, nv), DR_EINVAL);
    dr_real as_scalar = {1.0, in->a[0].idx};
    CHK_STATUS(dr_replay_arrays(t, 1, &as_scalar, news, 1, arrs, nv), DR_EINVAL);
    CHK_STATUS(dr_replay(t, 1, &as_scalar, news), DR_EINVAL);
    fixture_unchanged(&f);
    /* wrong shapes: the handle's shape is not the node's */
    for (int i = 0; i < 4; i++) {
        chk_context("shape %d", i);
        dr_arr w = in->a[0]; /* 3 x 4 */
        if (i == 0)
            w.rows = 4, w.cols = 3;
        else if (i == 1)
            w.rank = 1, w.rows = 12, w.cols = 1;
        else if (i == 2)
            w.cols = 5;
        else
            w.rows = 0;
        dr_arr two[2] = {in->a[2], w};
        CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 2, two, nv), DR_ESHAPE);
        fixture_unchanged(&f);
    }
    chk_context(NULL);
    /* a child handle; a forked tape; a sticky status */
    dr_tape *kids[1];
    CHK_STATUS(dr_fork(t, 1, kids), DR_OK);
    CHK_STATUS(dr_replay_arrays(kids[0], 0, NULL, NULL, 1, arrs, nv), DR_EINVAL);
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, arrs, nv), DR_EBUSY);
    CHK_STATUS(dr_join(t), DR_OK); /* (an empty child: nothing to replay) */
    fixture_unchanged(&f);
    /* after all that a replay works (no mark was left behind) */
    CHK_STATUS(dr_replay_arrays(t, 2, in->s, f.p.s, NA, arrs, nv), DR_OK);
    point z = f.p;
    for (int i = 0; i < NA; i++)
        memset(z.a[i], 0, sizeof z.a[i]);
    results got, want;
    read_results(t, &PRIM, in, 1, &f.y, f.arr, &got);
    point fm;
    prim_fresh(P_MM00, &z, &want);
    (void)fm;
    check_same(&got, &want);
    /* the sticky status answers first */
    dr_sin(t, (dr_real){1.0, (dr_idx)1 << 50});
    CHK_STATUS(dr_replay_arrays(t, 2, in->s, f.p.s, NA, arrs, nv), DR_EINVAL);
    CHK_STATUS(dr_tape_status(t), DR_EINVAL);
    dr_tape_free(t);

    /* a job graph, and a child handle */
    t = chk_tape_new();
    dr_arr a = dr_arr_input(t, 1, 3, 1, news);
    CHK_STATUS(dr_fork(t, 1, kids), DR_OK);
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &a, nv), DR_EBUSY);
    CHK_STATUS(dr_replay_arrays(kids[0], 0, NULL, NULL, 1, &a, nv), DR_EINVAL);
    CHK_STATUS(dr_join(t), DR_OK);
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &a, nv), DR_ENOTSUP);
    dr_tape_free(t);
}

/* After a replay the sweeps of the old point are gone: array adjoints and
   tangents too (the seeds of array inputs stay); after one that failed,
   they are as they were. */
static void test_sweeps_forgotten(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    double u3[3] = {0.5, -1, 2}, w3[3] = {1, 1, -1}, one[3] = {1, 1, 1};
    dr_arr u = dr_arr_input(t, 1, 3, 1, u3);
    dr_arr m = dr_arr_map(t, DR_FN_SQUARE, u);
    dr_real y = dr_arr_sum(t, m);
    dr_lt(t, y, dr_const(10.0));
    CHK_STATUS(dr_arr_seed(t, m.idx, one), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_STATUS(dr_arr_tangent_seed(t, u.idx, one), DR_OK);
    CHK_STATUS(dr_forward(t), DR_OK);
    double adj[3], tan[3];
    CHK_STATUS(dr_arr_adjoint(t, u.idx, adj), DR_OK);
    CHK_SAME(adj[1], -2.0);
    CHK_STATUS(dr_arr_tangent(t, m.idx, tan), DR_OK);
    CHK_SAME(tan[2], 4.0);
    /* a guard that flips: as it was */
    double big[3] = {5, 5, 5};
    const double *nv[1] = {big};
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &u, nv), DR_ERETAPE);
    CHK_STATUS(dr_arr_adjoint(t, u.idx, adj), DR_OK);
    CHK_SAME(adj[1], -2.0);
    CHK_STATUS(dr_arr_tangent(t, m.idx, tan), DR_OK);
    CHK_SAME(tan[2], 4.0);
    assert_ptr_equal(dr_arr_adjoint_ptr(t, m.idx) != NULL, true);
    /* a replay: gone (the seed stays and takes part in the next sweep) */
    nv[0] = w3;
    CHK_STATUS(dr_replay_arrays(t, 0, NULL, NULL, 1, &u, nv), DR_OK);
    CHK_STATUS(dr_arr_adjoint(t, u.idx, adj), DR_OK);
    CHK_STATUS(dr_arr_tangent(t, m.idx, tan), DR_OK);
    for (int i = 0; i < 3; i++) {
        CHK_SAME(adj[i], 0.0);
        CHK_SAME(tan[i], 0.0);
    }
    assert_null(dr_arr_adjoint_ptr(t, m.idx));
    CHK_SAME(dr_adjoint(t, y.idx), 0.0);
    CHK_STATUS(dr_forward(t), DR_OK);
    CHK_STATUS(dr_arr_tangent(t, m.idx, tan), DR_OK);
    CHK_SAME(tan[2], -2.0);
    CHK_SAME(dr_tangent(t, y.idx), 2.0 + 2.0 - 2.0);
    /* the input's values: the tape's own copy, and the value of y */
    const double *uv = dr_arr_values(t, u.idx);
    CHK_SAME(uv[2], -1.0);
    double v;
    CHK_STATUS(dr_value(t, y.idx, &v), DR_OK);
    CHK_SAME(v, 3.0);
    dr_tape_free(t);
}

/* Out of memory at each allocation of a replay of arrays, n-ary sums, an
   external function and a checkpointed loop, with more scalar inputs than
   fit on the stack: DR_ENOMEM and the tape as it was, or the replay
   done. */
#define NBIG 40

static dr_real oom_program(dr_tape *t, const dr_real *x, const inputs *in,
                           lctx *c)
{
    dr_real s = dr_sumn(t, NBIG, x);
    dr_arr r = dr_arr_matmul(t, in->a[0], 0, in->a[1], 0);
    r = dr_arr_scale(t, s, dr_arr_softmax(t, r));
    dr_real ys[2] = {readout(t, in, r), dr_arr_max(t, in->a[2])};
    dr_real lx[NS] = {ys[0], ys[1], x[2], x[3]};
    dr_real l = loop_program(t, c, lx, 2);
    dr_real in3[3] = {l, x[5], dr_const(0.1)};
    double xv[3] = {l.val, x[5].val, 0.1}, yv[3];
    f_eval(xv, yv);
    dr_external f = {NULL, f_reverse, f_forward, NULL, f_primal};
    dr_real out[3];
    CHK_STATUS(dr_record_external(t, &f, 3, in3, 3, yv, out), DR_OK);
    return dr_sumn(t, 3, out);
}

static void oom_results(dr_tape *t, const dr_real *x, const inputs *in,
                        dr_real y, results *r)
{
    memset(r, 0, sizeof *r);
    CHK_STATUS(dr_value(t, y.idx, &r->y[0]), DR_OK);
    CHK_STATUS(dr_gradient(t, y, 2, x, r->g[0]), DR_OK);
    for (int i = 0; i < NA; i++)
        CHK_STATUS(dr_arr_adjoint(t, in->a[i].idx, r->ga[0][i]), DR_OK);
}

static void oom_point(chk_rng *rng, double *xv, point *p)
{
    for (int i = 0; i < NBIG; i++)
        xv[i] = chk_rng_uniform(rng, -0.5, 0.5);
    random_point(rng, &PRIM, p);
}

static void test_oom(void **state)
{
    (void)state;
    bool done = false;
    for (size_t k = 1; !done && k < 40; k++) {
        chk_context("allocation %zu", k);
        chk_alloc al;
        chk_alloc_install(&al);
        chk_rng rng;
        chk_rng_seed(&rng, 8);
        double xv[NBIG], xv1[NBIG];
        point p, p1, mem, mem1;
        oom_point(&rng, xv, &p);
        oom_point(&rng, xv1, &p1);
        p1.s[0] = p.s[0]; /* (the scalars of the array inputs' set stay) */
        p1.s[1] = p.s[1];
        lctx c = {1e300, 1e300};
        dr_tape *t = chk_tape_new();
        CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
        dr_real x[NBIG];
        CHK_STATUS(dr_inputs(t, NBIG, xv, x), DR_OK);
        inputs in;
        record_inputs(t, &PRIM, &p, &mem, &in);
        dr_real y = oom_program(t, x, &in, &c);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        results before, after;
        oom_results(t, x, &in, y, &before);
        dr_arr arrs[NA];
        const double *vals[NA];
        for (int i = 0; i < NA; i++) {
            arrs[i] = in.a[i];
            memcpy(mem1.a[i], p1.a[i], sizeof p1.a[i]);
            vals[i] = BORROWED[i] ? mem1.a[i] : p1.a[i];
        }
        chk_alloc_reset_counts(&al);
        chk_alloc_fail_in(&al, k, false);
        dr_status st = dr_replay_arrays(t, NBIG, x, xv1, NA, arrs, vals);
        chk_alloc_fail_in(&al, 0, false);
        CHK_STATUS(dr_tape_status(t), DR_OK);
        oom_results(t, x, &in, y, &after);
        if (al.fails == 0) {
            CHK_STATUS(st, DR_OK);
            /* against a fresh recording */
            dr_tape *u = chk_tape_new();
            CHK_STATUS(dr_tape_set_order(u, 2), DR_OK);
            dr_real ux[NBIG];
            CHK_STATUS(dr_inputs(u, NBIG, xv1, ux), DR_OK);
            inputs uin;
            point umem;
            record_inputs(u, &PRIM, &p1, &umem, &uin);
            dr_real uy = oom_program(u, ux, &uin, &c);
            oom_results(u, ux, &uin, uy, &before);
            dr_tape_free(u);
            done = true;
        } else {
            CHK_STATUS(st, DR_ENOMEM);
        }
        check_same(&after, &before);
        dr_tape_free(t);
        assert_int_equal(al.live, 0);
        chk_alloc_uninstall();
    }
    chk_context(NULL);
    assert_true(done);
}

/* Borrowed memory written in place, a replay refused (a guard flips), the
   old values written back: the next replay succeeds at them.  (The check
   that the recording gave each operation its arguments' values is made
   once: after the refused replay the tape holds the borrowed memory's new
   values beside the old guards, which that check would take for a lie.) */
static void test_inplace_refused_then_back(void **state)
{
    (void)state;
    dr_tape *t = chk_tape_new();
    CHK_STATUS(dr_tape_set_order(t, 2), DR_OK);
    double m[2] = {1.0, 2.0};
    dr_arr a = dr_arr_input_ref(t, 1, 2, 1, m);
    dr_real s = dr_arr_sum(t, a);
    assert_true(dr_lt(t, s, dr_const(5.0)));
    double v = NAN, g[2];
    m[0] = 4.0;
    CHK_STATUS(dr_replay(t, 0, NULL, NULL), DR_ERETAPE);
    m[0] = 1.0;
    CHK_STATUS(dr_replay(t, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_value(t, s.idx, &v), DR_OK);
    CHK_SAME(v, 3.0);
    m[0] = 1.5;
    CHK_STATUS(dr_replay(t, 0, NULL, NULL), DR_OK);
    CHK_STATUS(dr_value(t, s.idx, &v), DR_OK);
    CHK_SAME(v, 3.5);
    CHK_STATUS(dr_adjoints_clear(t), DR_OK);
    CHK_STATUS(dr_seed(t, s.idx, 1.0), DR_OK);
    CHK_STATUS(dr_reverse(t), DR_OK);
    CHK_STATUS(dr_arr_adjoint(t, a.idx, g), DR_OK);
    CHK_SAME(g[0], 1.0);
    CHK_SAME(g[1], 1.0);
    dr_tape_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_primitives, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_random_programs, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_sumn, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_external, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_checkpointed, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_refused, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_misuse, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_sweeps_forgotten, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_inplace_refused_then_back, chk_alloc_teardown),
        cmocka_unit_test_teardown(test_oom, chk_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
