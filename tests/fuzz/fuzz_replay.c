/*
 * fuzz_replay.c - record once, replay at new inputs (tests/fuzz/README.md,
 * "Replay"): dr_replay, dr_replay_arrays, dr_value, the comparisons that
 * record guards (dr_lt ... dr_ne), the discrete results (dr_floor ...
 * dr_signbit), dr_select, n-ary sums (dr_sumn, dr_sumn_id), external
 * functions with a primal, checkpointed loops, array operations,
 * statements with programs (dr_fe_prog; an op may take the program of the
 * op before it, so that statements of one program come back to back, as
 * replay pairs them) and statements of the caller's
 * code (dr_record_statement: at order 2 they replay, a leaf given another
 * value makes the tape refuse, the second-order drivers refuse them; at
 * order 1 nodes of their partials).
 *
 * A fuzzed program (scalar inputs of every kind and array inputs, copied
 * or borrowed; scalar operations, powers, selects, comparisons and
 * discrete results; sums; externals; loops; array operations whose scalar
 * results join the program) is recorded at order 2 on a tape of its own,
 * then replayed at new values of some inputs: scalar inputs and array
 * inputs given new values (a borrowed one new memory), borrowed memory
 * changed in place, others left alone.  The same program recorded afresh
 * at those values is the reference, bit for bit: every node's value
 * (dr_value), every array's values, the gradient, a Jacobian-vector
 * product (with a tangent seed left on an array input), a Hessian-vector
 * product, and the adjoints of one reverse sweep seeded on the last value
 * and the last array.  Where a guard's outcome differs at the new values,
 * or a loop's steps make another output constant (or a constant output
 * another value, which the caller's program holds), the replay must answer
 * DR_ERETAPE and leave the tape as it was; where a loop's step fails at
 * the new values, the step's status; where the program holds a node that
 * does not replay (given partials, an external without a primal, an
 * operation given a value other than its argument node's) or was recorded
 * at order 1, DR_ENOTSUP, changing nothing; ids that are not inputs, an
 * input given twice, array handles of another shape, another tape's:
 * DR_EINVAL / DR_ESHAPE.  An input recorded without its value and left out
 * keeps the value its first use was given.  Recording the fresh program
 * again after a clear allocates nothing (dr_tape_bytes) and gives the same
 * bits.
 */
#include "fuzz_model.h"
#include "frontend/frontend.h" /* dr_fe_prog */

#include <stdlib.h>
#include <string.h>

#define RIN 4                  /* scalar inputs */
#define RAIN 2                 /* array inputs */
#define ROPS 12                /* operations */
#define RSREG (RIN + 3 * ROPS) /* scalar registers */
#define RAREG (RAIN + ROPS)    /* array registers */
#define AIN 6                  /* elements of an array input */
#define AMAX 16                /* elements of any array of a program */
#define RTERMS 6               /* terms of a sum (inputs of an external: 4,
                                  of a loop: 3) */

enum { RK_UNARY, RK_BINARY, RK_CONST, RK_POWI, RK_SELECT, RK_CMP,
       RK_DISCRETE, RK_NOREPLAY, RK_SUMN, RK_EXTERNAL, RK_LOOP, RK_ARRAY,
       N_RK,
       /* a statement with its program (dr_fe_prog) over the terms of a
          sum: a flag of RK_SUMN's parameter, so that the kinds' byte
          keeps its meaning in the seeds written before it */
       RK_PROG = N_RK,
       /* a statement of the caller's code (dr_record_statement) over the
          terms of a sum: the programs' flag with two bits a program does
          not read (RK_STMT_FLAGS, which no seed written before it sets) */
       RK_STMT };
#define RK_PROG_FLAG 0x40
#define RK_STMT_FLAGS 0x68

/* array operations (RK_ARRAY) */
enum { AO_CONST, AO_FROM_REALS, AO_MAP, AO_ELEM, AO_SCALE, AO_DOT, AO_SUM,
       AO_MAX, AO_LSE, AO_SOFTMAX, AO_INDEX, AO_MV, AO_MATMUL, AO_OUTER,
       AO_RESHAPE, AO_SLICE, AO_CONCAT, AO_GATHER, AO_BCAST, N_AO };

/* the shapes of array inputs and constants */
static const struct {
    int rank;
    int64_t rows, cols;
} SHAPES[] = {{1, 0, 1}, {1, 1, 1}, {1, 3, 1}, {1, 4, 1},
              {1, 6, 1}, {2, 2, 2}, {2, 2, 3}, {2, 3, 2}};
#define NSHAPE ((int)(sizeof SHAPES / sizeof SHAPES[0]))

/* a step operation of a loop: kind 0 f(a), 1 f(a, b), 2 f(a, c (+ k/8)),
   3 f(a) where a < c (+ k/8), else the constant c (a branch on a value,
   which may make an output constant) */
typedef struct rlop {
    uint8_t kind, f, a, b;
    double c;
} rlop;

/* a statement's context (dr_record_statement): which function, over how
   many leaves, its coefficient; the functions check that they get it */
typedef struct rsctx {
    unsigned magic, fn, n;
    double c;
} rsctx;

typedef struct rop {
    uint8_t kind, f, a, b, c;
    double v;
    uint8_t e[4];         /* the kind's parameters                     */
    uint8_t term[RTERMS]; /* operands: registers or constants (term_of) */
    uint8_t outmap[3];    /* a loop's outputs                          */
    rlop lop[3];          /* a loop's step                             */
    fprog prog;           /* a statement's program                     */
    bool same_prog;       /* the program of the op before, handed over
                             at its address: statements of one program
                             back to back, which replay evaluates two at
                             a time where the second does not read the
                             first                                     */
    rsctx sc;             /* a statement's context (RK_STMT)           */
} rop;

typedef struct rain {
    uint8_t kind; /* bit 0: borrowed (_ref), bit 1: the _id form */
    int shape;
    int64_t n;
    double v0[AIN], v1[AIN];
    /* at the replay: 0 left alone, 1 given (a borrowed one: new memory),
       2 borrowed memory written in place (a copied one: given) */
    int mode;
} rain;

typedef struct rprog {
    int nin, nops, nain;
    unsigned aflags; /* 1: a tangent seed on the first array input; 2:
                        dr_replay_arrays also without arrays */
    bool lie;        /* nodes that do not replay may be made */
    uint8_t inkind[RIN];
    rain ain[RAIN];
    rop ops[ROPS];
} rprog;

typedef struct rarr {
    dr_arr h;
    int rank;
    int64_t rows, cols, n;
} rarr;

/* one recording of the program: its registers (the scalar inputs, then
   the results in order; the array inputs, then the array results), the
   outcomes of its comparisons and discrete results in order, each loop's
   status and first register, which operations were given a value other
   than their operand node's, and the memory its borrowed arrays lie in */
typedef struct rrun {
    dr_real w[RSREG];
    int nw;
    rarr ar[RAREG];
    int na;
    double out[ROPS];
    int outq[ROPS];      /* the operation of each outcome               */
    int nout;
    int first[ROPS];     /* an operation's first scalar register       */
    dr_status lst[ROPS]; /* a loop's status                            */
    bool noreplay;       /* a node that does not replay was recorded   */
    int8_t lied[ROPS];   /* the operand given another value (lie_in),
                            -1: none; the fresh recording lies on the
                            same one, so that the two tapes differ only
                            in its value (a lie that keeps a NaN's bits at
                            the first point can change them at the next) */
    bool byops[ROPS];    /* a statement recorded by operations: the
                            program computes another NaN than the
                            harness passed (fuzz_statements.c)          */
    bool diverged;       /* and the first recording did not: the two
                            tapes hold other nodes, whose bits need not
                            agree                                       */
    bool sdep[RSREG];    /* a scalar register depends on a statement
                            (dr_record_statement) node               */
    bool asdep[RAREG];   /* an array register does (the operands an
                            array operation may read: more, not less) */
    bool dep;            /* what the operation being recorded pushes  */
    dr_idx mark;         /* the first id it may record                 */
    int nstmt;           /* statement nodes recorded                   */
    int q;               /* the operation being recorded               */
    const struct rrun *path; /* the first recording (NULL: this one)   */
    double abuf[RAIN][AIN];  /* borrowed inputs' memory                */
    double cbuf[ROPS][AMAX]; /* borrowed constants' memory             */
    dr_status st;
} rrun;

static const double CTAB[8] = {0.0, 1.0, -0.5, 2.0, -0.0, 0.25, 3.0, -1.5};

/* the same bits (any NaN is a NaN: its sign and payload are not) */
static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* an operand byte: a constant of CTAB, or a register */
static dr_real term_of(const rrun *R, unsigned b)
{
    if ((b & 0xe0) == 0xe0)
        return dr_const(CTAB[b & 7]);
    return R->w[b % (unsigned)R->nw];
}

static double discrete(dr_tape *t, int f, dr_real a, int *outcome)
{
    switch (f % 7) {
    case 0: return dr_floor(t, a);
    case 1: return dr_ceil(t, a);
    case 2: return dr_trunc(t, a);
    case 3: return dr_rint(t, a);
    case 4: *outcome = dr_isnan(t, a); return 0.0;
    case 5: *outcome = dr_isinf(t, a); return 0.0;
    default: *outcome = dr_signbit(t, a); return 0.0;
    }
}

static int compare(dr_tape *t, int f, dr_real a, dr_real b)
{
    switch (f % 6) {
    case 0: return dr_lt(t, a, b);
    case 1: return dr_le(t, a, b);
    case 2: return dr_gt(t, a, b);
    case 3: return dr_ge(t, a, b);
    case 4: return dr_eq(t, a, b);
    default: return dr_ne(t, a, b);
    }
}

/* the comparisons' values as the header defines them (IEEE) */
static int compare_ref(int f, double a, double b)
{
    switch (f % 6) {
    case 0: return a < b;
    case 1: return a <= b;
    case 2: return a > b;
    case 3: return a >= b;
    case 4: return a == b;
    default: return a != b;
    }
}

/* the discrete results as the header defines them */
static double discrete_ref(int f, double a)
{
    switch (f % 7) {
    case 0: return floor(a);
    case 1: return ceil(a);
    case 2: return trunc(a);
    case 3: return rint(a);
    case 4: return isnan(a) != 0;
    case 5: return isinf(a) != 0;
    default: return signbit(a) != 0;
    }
}

/* is register i a scalar input recorded without its value? */
static bool valueless(const rprog *P, const rrun *R, int i)
{
    for (int q = 0; q < P->nin; q++)
        if ((P->inkind[q] % 4) >= 2 && R->w[i].idx == R->w[q].idx &&
            R->w[i].idx != DR_NONE)
            return true;
    return false;
}

/* give the first active operand (not an input without a value, whose
   first use gives it its value) a value other than its node's: the node
   does not replay then.  A recording afresh does so only where the first
   one did (at 1e300, + 1 is no other value): the same program */
static void lie_in(const rprog *P, rrun *R, dr_real *x, const uint8_t *bytes,
                   int n)
{
    int only = R->path ? R->path->lied[R->q] : -2;
    if (only == -1)
        return;
    for (int i = 0; i < n; i++) {
        if (only >= 0 && i != only)
            continue;
        if (x[i].idx == DR_NONE || (bytes[i] & 0xe0) == 0xe0)
            continue;
        if (valueless(P, R, (int)(bytes[i] % (unsigned)R->nw)))
            continue;
        double v = x[i].val + 1.0;
        if (same_bits(v, x[i].val))
            continue;
        x[i].val = v;
        R->noreplay = true;
        R->lied[R->q] = (int8_t)i;
        return;
    }
}

/* does an operand byte (term_of) name a register that depends on a
   statement node? */
static bool term_dep(const rrun *R, unsigned b)
{
    return (b & 0xe0) != 0xe0 && R->sdep[b % (unsigned)R->nw];
}

/* ------------------------------------------------------- statements
 * dr_record_statement of one of a few fixed functions of 1 .. 6 leaves,
 * its partials written out by hand: a product of the leaves, sin of
 * their sum times exp(c x0), a quotient (c + x0 + ... + x[n-2]) / x[n-1],
 * a linear c + sum a_i x_i and a Gaussian exp(-(x0^2 + ...) / 2).  The
 * library calls the function when it records the node and again at
 * every replay (at the leaves' new values); each call gets the context
 * the harness gave, and n */

enum { SF_PROD, SF_SINEXP, SF_QUOT, SF_LINEAR, SF_GAUSS, N_SF };
#define RSTMT_MAGIC 0x53746d74u
static const double SF_COEF[RTERMS] = {2.0, -0.5, 1.0, 0.25, -3.0, 1.5};

static double rstmt_fn(const void *ctx, size_t n, const double *x,
                       double *d)
{
    const rsctx *s = ctx;
    CHECK(s != NULL && s->magic == RSTMT_MAGIC && n == s->n && n >= 1 &&
              n <= RTERMS,
          "a statement's function called with context %p, n %zu",
          (const void *)s, n);
    double v;
    switch (s->fn) {
    case SF_PROD:
        v = 1.0;
        for (size_t i = 0; i < n; i++) {
            v *= x[i];
            double p = 1.0;
            for (size_t j = 0; j < n; j++)
                if (j != i)
                    p *= x[j];
            d[i] = p;
        }
        return v;
    case SF_SINEXP: {
        double u = 0.0;
        for (size_t i = 0; i < n; i++)
            u += x[i];
        double e = exp(s->c * x[0]), su = sin(u), cu = cos(u);
        for (size_t i = 0; i < n; i++)
            d[i] = cu * e;
        d[0] += su * s->c * e;
        return su * e;
    }
    case SF_QUOT: {
        double num = s->c, den = x[n - 1];
        for (size_t i = 0; i + 1 < n; i++)
            num += x[i];
        v = num / den;
        for (size_t i = 0; i + 1 < n; i++)
            d[i] = 1.0 / den;
        d[n - 1] = -v / den;
        return v;
    }
    case SF_LINEAR:
        v = s->c;
        for (size_t i = 0; i < n; i++) {
            v += SF_COEF[i] * x[i];
            d[i] = SF_COEF[i];
        }
        return v;
    default: { /* SF_GAUSS */
        double q = 0.0;
        for (size_t i = 0; i < n; i++)
            q += x[i] * x[i];
        v = exp(-0.5 * q);
        for (size_t i = 0; i < n; i++)
            d[i] = -x[i] * v;
        return v;
    }
    }
}

/* -------------------------------------------------------- externals
 * y = f(x) for a linear map, sin, exp (whose rules use y) or products of
 * the inputs; the rules and the primal check that they get the point of
 * the last recording or replay (x and y as the primal computed them) */

typedef struct rext {
    owned own; /* first: the destroy callback takes the context */
    int fn;
    size_t n, m;
    double M[3][4], c[3];
    double cx[4], cy[3]; /* the point of the last recording or replay */
} rext;

static void rext_eval(const rext *E, const double *x, double *y)
{
    for (size_t j = 0; j < E->m; j++) {
        double u = E->c[j];
        for (size_t i = 0; i < E->n; i++)
            u += E->M[j][i] * x[i];
        switch (E->fn) {
        case 0: y[j] = u; break;
        case 1: y[j] = sin(u); break;
        case 2: y[j] = exp(u); break;
        default:
            y[j] = E->n ? E->M[j][0] * x[j % E->n] * x[(j + 1) % E->n]
                        : E->c[j];
            break;
        }
    }
}

static void rext_jac(const rext *E, const double *x, const double *y,
                     double J[3][4])
{
    memset(J, 0, sizeof(double) * 12);
    for (size_t j = 0; j < E->m; j++) {
        double u = E->c[j];
        for (size_t i = 0; i < E->n; i++)
            u += E->M[j][i] * x[i];
        for (size_t i = 0; i < E->n; i++)
            switch (E->fn) {
            case 0: J[j][i] = E->M[j][i]; break;
            case 1: J[j][i] = cos(u) * E->M[j][i]; break;
            case 2: J[j][i] = y[j] * E->M[j][i]; break;
            default: break;
            }
        if (E->fn == 3 && E->n) {
            size_t a = j % E->n, b = (j + 1) % E->n;
            J[j][a] += E->M[j][0] * x[b];
            J[j][b] += E->M[j][0] * x[a];
        }
    }
}

static void rext_point(const rext *E, const char *who, size_t n,
                       const double *x, size_t m, const double *y)
{
    CHECK(n == E->n && m == E->m, "an external's %s got n %zu, m %zu "
          "(recorded %zu, %zu)", who, n, m, E->n, E->m);
    for (size_t i = 0; i < n; i++)
        CHECK(memcmp(&x[i], &E->cx[i], sizeof x[i]) == 0, "an external's "
              "%s got x[%zu] = %.17g, the point's %.17g", who, i, x[i],
              E->cx[i]);
    for (size_t j = 0; y && j < m; j++)
        CHECK(memcmp(&y[j], &E->cy[j], sizeof y[j]) == 0, "an external's "
              "%s got y[%zu] = %.17g, the primal's %.17g", who, j, y[j],
              E->cy[j]);
}

static void rext_reverse(void *ctx, size_t n, const double *x, size_t m,
                         const double *y, const double *ybar, double *xbar)
{
    const rext *E = ctx;
    rext_point(E, "reverse rule", n, x, m, y);
    double J[3][4];
    rext_jac(E, x, y, J);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            xbar[i] += ybar[j] * J[j][i];
}

static void rext_forward(void *ctx, size_t n, const double *x,
                         const double *xdot, size_t m, const double *y,
                         double *ydot)
{
    const rext *E = ctx;
    rext_point(E, "forward rule", n, x, m, y);
    double J[3][4];
    rext_jac(E, x, y, J);
    for (size_t j = 0; j < m; j++)
        for (size_t i = 0; i < n; i++)
            ydot[j] += J[j][i] * xdot[i];
}

static void rext_primal(void *ctx, size_t n, const double *x, size_t m,
                        double *y)
{
    rext *E = ctx;
    CHECK(n == E->n && m == E->m, "an external's primal got n %zu, m %zu "
          "(recorded %zu, %zu)", n, m, E->n, E->m);
    memcpy(E->cx, x, n * sizeof *x);
    rext_eval(E, x, y);
    memcpy(E->cy, y, m * sizeof *y);
}

/* ------------------------------------------------------------ loops */

typedef struct rloop {
    owned own; /* first: the destroy callback takes the context */
    int n, nops;
    rlop ops[3];
    uint8_t outmap[3];
    bool fail;  /* a step fails where |x[0]| exceeds thr (or is NaN) */
    double thr;
} rloop;

static dr_status rstep(void *ctx, dr_tape *t, size_t k, size_t n,
                       const dr_real *x, dr_real *y)
{
    const rloop *L = ctx;
    if (L->fail && !(fabs(x[0].val) <= L->thr))
        return DR_ERANGE;
    dr_real w[6];
    for (size_t i = 0; i < n; i++)
        w[i] = x[i];
    for (int q = 0; q < L->nops; q++) {
        const rlop *o = &L->ops[q];
        int avail = (int)n + q;
        dr_real a = w[o->a % avail], b = w[o->b % avail];
        double c = o->c + ((o->kind & 0x10) ? 0.125 * (double)k : 0.0);
        dr_real res;
        switch (o->kind % 4) {
        case 0: res = eng_unary(t, o->f % N_UNARY, a); break;
        case 1: res = eng_binary(t, o->f % N_BINARY, a, b); break;
        case 2: res = eng_binary(t, o->f % N_BINARY, a, dr_const(c)); break;
        default:
            res = a.val < c ? eng_unary(t, o->f % N_UNARY, a) : dr_const(c);
            break;
        }
        w[n + (size_t)q] = res;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = w[L->outmap[i]];
    return dr_tape_status(t);
}

/* ------------------------------------------------------------ arrays */

/* an array result into the next register, of the shape expected */
static void apush(rrun *R, dr_tape *t, dr_arr h, const char *what, int rank,
                  int64_t rows, int64_t cols)
{
    CHECK(h.idx != DR_NONE, "%s (a replayed program): failed, %s", what,
          sn(dr_tape_status(t)));
    int rk;
    int64_t rr, cc;
    CHECK(dr_arr_shape(t, h.idx, &rk, &rr, &cc) == DR_OK &&
              rk == rank && rr == rows && cc == cols && h.rank == rank &&
              h.rows == rows && h.cols == cols,
          "%s: shape %d %lldx%lld (handle %d %lldx%lld), expected %d "
          "%lldx%lld", what, rk, (long long)rr, (long long)cc, h.rank,
          (long long)h.rows, (long long)h.cols, rank, (long long)rows,
          (long long)cols);
    CHECK(rows * cols <= AMAX, "harness: an array of %lld elements",
          (long long)(rows * cols));
    R->asdep[R->na] = R->dep;
    rarr *x = &R->ar[R->na++];
    x->h = h;
    x->rank = rank;
    x->rows = rows;
    x->cols = cols;
    x->n = rows * cols;
    TRACE("   a%d = %s id %llx %d %lldx%lld\n", R->na - 1, what,
          (unsigned long long)h.idx, rank, (long long)rows,
          (long long)cols);
}

static void spush(rrun *R, dr_real x)
{
    if (R->nw >= RSREG)
        return;
    bool dep = R->dep && x.idx != DR_NONE;
    if (x.idx != DR_NONE && x.idx < R->mark) {
        /* a node recorded before (an operand handed back: a select of a
           constant condition, a sum of one term): its own dependence */
        dep = false;
        for (int j = 0; j < R->nw; j++)
            dep |= R->w[j].idx == x.idx && R->sdep[j];
    }
    R->sdep[R->nw] = dep;
    R->w[R->nw++] = x;
}

static bool same_shape(const rarr *a, const rarr *b)
{
    return a->rank == b->rank && a->rows == b->rows && a->cols == b->cols;
}

/* the scalar-valued array operations, as values and ids (the _id forms)
   or handles */
typedef dr_real (*arr_s_fn)(dr_tape *, dr_arr);
typedef dr_idx (*arr_s_id_fn)(dr_tape *, dr_idx, double *);
static dr_real arr_scalar(dr_tape *t, bool idf, arr_s_fn f, arr_s_id_fn g,
                          const rarr *A)
{
    if (!idf)
        return f(t, A->h);
    double v = -77.0;
    dr_idx id = g(t, A->h.idx, &v);
    return (dr_real){v, id};
}

static void arr_op(const rprog *P, int q, dr_tape *t, rrun *R)
{
    const rop *o = &P->ops[q];
    unsigned p = o->e[0] & 0x7f, p2 = o->e[1];
    bool idf = o->e[0] & 0x80; /* the _id form */
    int sub = o->f % N_AO;
    if (R->na == 0 && sub != AO_FROM_REALS)
        sub = AO_CONST;
    const rarr *A = R->na ? &R->ar[o->a % R->na] : NULL;
    const rarr *B = R->na ? &R->ar[o->b % R->na] : NULL;
    dr_arr h;
    dr_real s;
    switch (sub) {
    case AO_CONST: {
        int sh = (int)(p % NSHAPE);
        double *d = R->cbuf[q];
        int64_t n = SHAPES[sh].rows * SHAPES[sh].cols;
        for (int64_t i = 0; i < n; i++)
            d[i] = o->v + 0.25 * (double)i * ((i & 1) ? -1 : 1);
        int rk = SHAPES[sh].rank;
        int64_t rr = SHAPES[sh].rows, cc = SHAPES[sh].cols;
        bool ref = p & 0x40;
        if (idf)
            h = dr_arr_get(t, ref ? dr_arr_const_ref_id(t, rk, rr, cc, d)
                                  : dr_arr_const_id(t, rk, rr, cc, d));
        else
            h = ref ? dr_arr_const_ref(t, rk, rr, cc, d)
                    : dr_arr_const(t, rk, rr, cc, d);
        apush(R, t, h, "dr_arr_const", rk, rr, cc);
        CHECK(dr_arr_active(t, h.idx) == 0, "a constant array is active");
        return;
    }
    case AO_FROM_REALS: {
        int n = (int)((p & 7) % 5);
        dr_real x[4];
        for (int i = 0; i < n; i++)
            x[i] = term_of(R, o->term[i]);
        if (P->lie && (p & 0x20))
            lie_in(P, R, x, o->term, n);
        if (idf) {
            double v[4];
            dr_idx ids[4];
            for (int i = 0; i < n; i++) {
                v[i] = x[i].val;
                ids[i] = x[i].idx;
            }
            h = dr_arr_get(t, dr_arr_from_reals_id(t, (size_t)n, v, ids));
        } else {
            h = dr_arr_from_reals(t, (size_t)n, x);
        }
        apush(R, t, h, "dr_arr_from_reals", 1, n, 1);
        return;
    }
    case AO_MAP: {
        int f = (int)(p % 11);
        h = idf ? dr_arr_get(t, dr_arr_map_id(t, f, A->h.idx))
                : dr_arr_map(t, (dr_arr_fn)f, A->h);
        apush(R, t, h, "dr_arr_map", A->rank, A->rows, A->cols);
        return;
    }
    case AO_ELEM: {
        const rarr *C = same_shape(A, B) ? B : A;
        static dr_arr (*const fa[4])(dr_tape *, dr_arr, dr_arr) = {
            dr_arr_add, dr_arr_sub, dr_arr_mul, dr_arr_div};
        static dr_idx (*const fi[4])(dr_tape *, dr_idx, dr_idx) = {
            dr_arr_add_id, dr_arr_sub_id, dr_arr_mul_id, dr_arr_div_id};
        h = idf ? dr_arr_get(t, fi[p % 4](t, A->h.idx, C->h.idx))
                : fa[p % 4](t, A->h, C->h);
        apush(R, t, h, "dr_arr elementwise", A->rank, A->rows, A->cols);
        return;
    }
    case AO_SCALE: {
        dr_real x = term_of(R, o->c);
        if (P->lie && (p & 0x20))
            lie_in(P, R, &x, &o->c, 1);
        h = idf ? dr_arr_get(t, dr_arr_scale_id(t, x.val, x.idx, A->h.idx))
                : dr_arr_scale(t, x, A->h);
        apush(R, t, h, "dr_arr_scale", A->rank, A->rows, A->cols);
        return;
    }
    case AO_DOT: {
        const rarr *C = same_shape(A, B) ? B : A;
        if (idf) {
            double v = -77.0;
            dr_idx id = dr_arr_dot_id(t, A->h.idx, C->h.idx, &v);
            s = (dr_real){v, id};
        } else {
            s = dr_arr_dot(t, A->h, C->h);
        }
        break;
    }
    case AO_SUM:
        if (A->rank == 2 && p % 3 == 1) {
            h = idf ? dr_arr_get(t, dr_arr_sum_rows_id(t, A->h.idx))
                    : dr_arr_sum_rows(t, A->h);
            apush(R, t, h, "dr_arr_sum_rows", 1, A->rows, 1);
            return;
        }
        if (A->rank == 2 && p % 3 == 2) {
            h = idf ? dr_arr_get(t, dr_arr_sum_cols_id(t, A->h.idx))
                    : dr_arr_sum_cols(t, A->h);
            apush(R, t, h, "dr_arr_sum_cols", 1, A->cols, 1);
            return;
        }
        s = arr_scalar(t, idf, dr_arr_sum, dr_arr_sum_id, A);
        break;
    case AO_MAX:
        if (A->n == 0)
            s = arr_scalar(t, idf, dr_arr_sum, dr_arr_sum_id, A);
        else
            s = arr_scalar(t, idf, dr_arr_max, dr_arr_max_id, A);
        break;
    case AO_LSE:
        if (A->rank == 2 && (p & 1)) {
            h = idf ? dr_arr_get(t, dr_arr_logsumexp_rows_id(t, A->h.idx))
                    : dr_arr_logsumexp_rows(t, A->h);
            apush(R, t, h, "dr_arr_logsumexp_rows", 1, A->rows, 1);
            return;
        }
        s = arr_scalar(t, idf, dr_arr_logsumexp, dr_arr_logsumexp_id, A);
        break;
    case AO_SOFTMAX:
        if (p & 1)
            h = idf ? dr_arr_get(t, dr_arr_log_softmax_id(t, A->h.idx))
                    : dr_arr_log_softmax(t, A->h);
        else
            h = idf ? dr_arr_get(t, dr_arr_softmax_id(t, A->h.idx))
                    : dr_arr_softmax(t, A->h);
        apush(R, t, h, "dr_arr_softmax", A->rank, A->rows, A->cols);
        return;
    case AO_INDEX:
        if (A->n == 0) {
            s = arr_scalar(t, idf, dr_arr_sum, dr_arr_sum_id, A);
        } else if (A->rank == 2 && (p & 1)) {
            int64_t i = (int64_t)(p2 % (unsigned)A->rows);
            int64_t j = (int64_t)((p2 >> 4) % (unsigned)A->cols);
            if (idf) {
                double v = -77.0;
                dr_idx id = dr_arr_index2_id(t, A->h.idx, i, j, &v);
                s = (dr_real){v, id};
            } else {
                s = dr_arr_index2(t, A->h, i, j);
            }
        } else {
            int64_t i = (int64_t)(p2 % (unsigned)A->n);
            if (idf) {
                double v = -77.0;
                dr_idx id = dr_arr_index_id(t, A->h.idx, i, &v);
                s = (dr_real){v, id};
            } else {
                s = dr_arr_index(t, A->h, i);
            }
        }
        break;
    case AO_MV:
        if (A->rank == 2 && B->rank == 1 && B->rows == A->cols) {
            h = idf ? dr_arr_get(t, dr_arr_matvec_id(t, A->h.idx, B->h.idx))
                    : dr_arr_matvec(t, A->h, B->h);
            apush(R, t, h, "dr_arr_matvec", 1, A->rows, 1);
        } else if (A->rank == 2 && B->rank == 1 && B->rows == A->rows) {
            h = idf ? dr_arr_get(t, dr_arr_vecmat_id(t, B->h.idx, A->h.idx))
                    : dr_arr_vecmat(t, B->h, A->h);
            apush(R, t, h, "dr_arr_vecmat", 1, A->cols, 1);
        } else if (A->rank == 1 && B->rank == 2 && B->rows == A->rows) {
            h = dr_arr_vecmat(t, A->h, B->h);
            apush(R, t, h, "dr_arr_vecmat", 1, B->cols, 1);
        } else if (A->rank == 1 && B->rank == 2 && B->cols == A->rows) {
            h = dr_arr_matvec(t, B->h, A->h);
            apush(R, t, h, "dr_arr_matvec", 1, B->rows, 1);
        } else if (A->rank == 2) {
            h = idf ? dr_arr_get(t, dr_arr_transpose_id(t, A->h.idx))
                    : dr_arr_transpose(t, A->h);
            apush(R, t, h, "dr_arr_transpose", 2, A->cols, A->rows);
        } else {
            s = arr_scalar(t, idf, dr_arr_sum, dr_arr_sum_id, A);
            break;
        }
        return;
    case AO_MATMUL:
        if (A->rank == 2 && B->rank == 2) {
            for (unsigned i = 0; i < 4; i++) {
                unsigned fl = (p + i) % 4;
                int ta = fl & 1, tb = fl >> 1 & 1;
                int64_t m = ta ? A->cols : A->rows, k1 = ta ? A->rows
                                                             : A->cols;
                int64_t k2 = tb ? B->cols : B->rows, nn = tb ? B->rows
                                                              : B->cols;
                if (k1 != k2 || m * nn > AMAX)
                    continue;
                h = idf ? dr_arr_get(t, dr_arr_matmul_id(t, A->h.idx, ta,
                                                         B->h.idx, tb))
                        : dr_arr_matmul(t, A->h, ta, B->h, tb);
                apush(R, t, h, "dr_arr_matmul", 2, m, nn);
                return;
            }
            h = dr_arr_transpose(t, A->h);
            apush(R, t, h, "dr_arr_transpose", 2, A->cols, A->rows);
            return;
        }
        /* fall through */
    case AO_OUTER:
        if (A->rank == 1 && B->rank == 1 && A->n * B->n <= AMAX) {
            h = idf ? dr_arr_get(t, dr_arr_outer_id(t, A->h.idx, B->h.idx))
                    : dr_arr_outer(t, A->h, B->h);
            apush(R, t, h, "dr_arr_outer", 2, A->n, B->n);
            return;
        }
        h = dr_arr_map(t, DR_FN_NEG, A->h);
        apush(R, t, h, "dr_arr_map", A->rank, A->rows, A->cols);
        return;
    case AO_RESHAPE: {
        int rk = 1;
        int64_t rr = A->n, cc = 1;
        if (A->rank == 2 && (p & 1)) {
            h = dr_arr_transpose(t, A->h);
            apush(R, t, h, "dr_arr_transpose", 2, A->cols, A->rows);
            return;
        }
        if (A->rank == 1 && A->n > 0) {
            static const int64_t div[4] = {1, 2, 3, 0};
            rk = 2;
            rr = div[p2 % 4] && A->n % div[p2 % 4] == 0 ? div[p2 % 4]
                                                         : A->n;
            cc = A->n / rr;
        }
        h = idf ? dr_arr_get(t, dr_arr_reshape_id(t, A->h.idx, rk, rr, cc))
                : dr_arr_reshape(t, A->h, rk, rr, cc);
        apush(R, t, h, "dr_arr_reshape", rk, rr, cc);
        return;
    }
    case AO_SLICE:
        if (A->rank == 2 && !(p & 1)) {
            int64_t r0 = (int64_t)(p2 % (unsigned)(A->rows + 1));
            int64_t nr = (int64_t)((p2 >> 3) % (unsigned)(A->rows - r0 + 1));
            int64_t c0 = (int64_t)((p >> 1) % (unsigned)(A->cols + 1));
            int64_t nc = (int64_t)((p >> 3) % (unsigned)(A->cols - c0 + 1));
            h = idf ? dr_arr_get(t, dr_arr_slice2_id(t, A->h.idx, r0, nr, c0,
                                                     nc))
                    : dr_arr_slice2(t, A->h, r0, nr, c0, nc);
            apush(R, t, h, "dr_arr_slice2", 2, nr, nc);
        } else {
            int64_t st = (int64_t)(p2 % (unsigned)(A->rows + 1));
            int64_t len = (int64_t)((p2 >> 3) % (unsigned)(A->rows - st + 1));
            h = idf ? dr_arr_get(t, dr_arr_slice_id(t, A->h.idx, st, len))
                    : dr_arr_slice(t, A->h, st, len);
            apush(R, t, h, "dr_arr_slice", A->rank, len, A->cols);
        }
        return;
    case AO_CONCAT: {
        dr_arr xs[2] = {A->h, B->h};
        dr_idx ids[2] = {A->h.idx, B->h.idx};
        size_t n = 2;
        int axis = 0, rk = A->rank;
        int64_t rr = A->rows + B->rows, cc = A->cols;
        if (A->rank == 2 && B->rank == 2 && (p & 1) && A->rows == B->rows &&
            A->n + B->n <= AMAX) {
            axis = 1;
            rr = A->rows;
            cc = A->cols + B->cols;
        } else if (A->rank != B->rank || (A->rank == 2 && A->cols != B->cols)
                   || A->n + B->n > AMAX) {
            n = 1;
            rr = A->rows;
        }
        h = idf ? dr_arr_get(t, dr_arr_concat_id(t, axis, n, ids))
                : dr_arr_concat(t, axis, n, xs);
        apush(R, t, h, "dr_arr_concat", rk, rr, cc);
        return;
    }
    case AO_GATHER: {
        int64_t idx[AMAX];
        if ((p & 1) && A->rows > 0) {
            int64_t n = 1 + (int64_t)(p2 % 4);
            while (n > 1 && n * A->cols > AMAX)
                n--;
            for (int64_t k = 0; k < n; k++)
                idx[k] = (int64_t)((p2 + 3 * (unsigned)k) %
                                   (unsigned)A->rows);
            h = idf ? dr_arr_get(t, dr_arr_gather_id(t, A->h.idx, (size_t)n,
                                                     idx))
                    : dr_arr_gather(t, A->h, (size_t)n, idx);
            apush(R, t, h, "dr_arr_gather", A->rank, n, A->cols);
        } else {
            int64_t ol = 1 + (int64_t)(p2 % 4);
            while (ol > 1 && ol * A->cols > AMAX)
                ol--;
            for (int64_t k = 0; k < A->rows; k++)
                idx[k] = (int64_t)((p2 + (unsigned)k) % (unsigned)ol);
            h = idf ? dr_arr_get(t, dr_arr_scatter_id(t, A->h.idx, ol, idx))
                    : dr_arr_scatter(t, A->h, ol, idx);
            apush(R, t, h, "dr_arr_scatter", A->rank, ol, A->cols);
        }
        return;
    }
    default: /* AO_BCAST */
        if (A->rank == 2 && B->rank == 1 && B->rows == A->cols) {
            h = idf ? dr_arr_get(t, dr_arr_add_rowvec_id(t, A->h.idx,
                                                         B->h.idx))
                    : dr_arr_add_rowvec(t, A->h, B->h);
            apush(R, t, h, "dr_arr_add_rowvec", 2, A->rows, A->cols);
        } else if (A->rank == 2 && B->rank == 1 && B->rows == A->rows) {
            h = idf ? dr_arr_get(t, dr_arr_add_colvec_id(t, A->h.idx,
                                                         B->h.idx))
                    : dr_arr_add_colvec(t, A->h, B->h);
            apush(R, t, h, "dr_arr_add_colvec", 2, A->rows, A->cols);
        } else if (A->rank == 1) {
            int64_t r = (int64_t)(p2 % 4);
            while (r > 0 && r * A->n > AMAX)
                r--;
            if (p & 1) {
                h = idf ? dr_arr_get(t, dr_arr_replicate_rows_id(t, A->h.idx,
                                                                 r))
                        : dr_arr_replicate_rows(t, A->h, r);
                apush(R, t, h, "dr_arr_replicate_rows", 2, r, A->n);
            } else {
                h = idf ? dr_arr_get(t, dr_arr_replicate_cols_id(t, A->h.idx,
                                                                 r))
                        : dr_arr_replicate_cols(t, A->h, r);
                apush(R, t, h, "dr_arr_replicate_cols", 2, A->n, r);
            }
        } else {
            h = dr_arr_map(t, DR_FN_SQUARE, A->h);
            apush(R, t, h, "dr_arr_map", A->rank, A->rows, A->cols);
        }
        return;
    }
    /* a scalar result joins the program */
    CHECK(dr_tape_status(t) == DR_OK, "a scalar array operation (a "
          "replayed program) failed: %s", sn(dr_tape_status(t)));
    spush(R, s);
}

/* ------------------------------------------------------- recording */

/* record the program on t (order 2 already set, or not) at the scalar
   values v and the array values av (av[i]: AIN values); path: the first
   recording, whose failed loops this one leaves out as it did */
static void record(const rprog *P, dr_tape *t, const double *v,
                   double av[RAIN][AIN], rrun *R, const rrun *path,
                   int tape)
{
    R->nout = 0;
    R->nw = 0;
    R->na = 0;
    R->noreplay = false;
    R->diverged = false;
    R->path = path;
    R->dep = false;
    R->nstmt = 0;
    for (int i = 0; i < P->nin; i++) {
        dr_real x;
        switch (P->inkind[i] % 4) {
        case 0: x = dr_input(t, v[i]); break;
        case 1: CHECK(dr_inputs(t, 1, &v[i], &x) == DR_OK, "dr_inputs"); break;
        case 2: {
            dr_idx first;
            CHECK(dr_input_range(t, 1, &first) == DR_OK, "dr_input_range");
            x = (dr_real){v[i], first};
            break;
        }
        default: x = (dr_real){v[i], dr_record0(t)}; break;
        }
        R->sdep[R->nw] = false;
        R->w[R->nw++] = x;
        TRACE("   r%d = input (kind %d) %.17g id %lld\n", i,
              P->inkind[i] % 4, x.val, (long long)x.idx);
    }
    for (int i = 0; i < P->nain; i++) {
        const rain *a = &P->ain[i];
        int rk = SHAPES[a->shape].rank;
        int64_t rr = SHAPES[a->shape].rows, cc = SHAPES[a->shape].cols;
        double *d = R->abuf[i];
        memcpy(d, av[i], sizeof R->abuf[i]);
        dr_arr h;
        if (a->kind & 1)
            h = (a->kind & 2) ? dr_arr_get(t, dr_arr_input_ref_id(t, rk, rr,
                                                                  cc, d))
                              : dr_arr_input_ref(t, rk, rr, cc, d);
        else
            h = (a->kind & 2) ? dr_arr_get(t, dr_arr_input_id(t, rk, rr, cc,
                                                              d))
                              : dr_arr_input(t, rk, rr, cc, d);
        apush(R, t, h, "dr_arr_input", rk, rr, cc);
        CHECK(dr_arr_active(t, h.idx) == 1, "an array input is not active");
    }
    for (int q = 0; q < P->nops; q++) {
        const rop *o = &P->ops[q];
        int avail = R->nw;
        R->first[q] = R->nw;
        R->lst[q] = DR_OK;
        R->q = q;
        R->lied[q] = -1;
        R->mark = dr_tape_mark(t);
        dr_real a = R->w[o->a % avail], b = R->w[o->b % avail];
        dr_real res = a;
        int outcome = -1;
        double rounded = 0;
        bool guard = false, one = true;
        /* what the result depends on: its operands (sums, programs,
           externals and loops: their terms; selects: both sides, not the
           condition; array operations: what they may read) */
        bool da = R->sdep[o->a % avail], db = R->sdep[o->b % avail];
        R->dep = da || (db && (o->kind == RK_BINARY ||
                               o->kind == RK_SELECT));
        if (o->kind == RK_SUMN || o->kind == RK_PROG ||
            o->kind == RK_EXTERNAL || o->kind == RK_LOOP ||
            o->kind == RK_ARRAY) {
            R->dep = false;
            for (int i = 0; i < RTERMS; i++)
                R->dep |= term_dep(R, o->term[i]);
        }
        if (o->kind == RK_ARRAY) {
            R->dep |= term_dep(R, o->c);
            if (R->na)
                R->dep |= R->asdep[o->a % R->na] || R->asdep[o->b % R->na];
        }
        switch (o->kind) {
        case RK_UNARY:
            res = eng_unary(t, o->f % N_UNARY, a);
            break;
        case RK_BINARY:
            res = eng_binary(t, o->f % N_BINARY, a, b);
            break;
        case RK_CONST:
            res = eng_binary(t, o->f % N_BINARY, a, dr_const(o->v));
            break;
        case RK_POWI:
            res = dr_powi(t, a, (int)(int8_t)o->f % 7);
            break;
        case RK_SELECT:
            res = dr_select(t, R->w[o->c % avail], a, b);
            break;
        case RK_CMP:
            outcome = compare(t, o->f, a, b);
            CHECK(outcome == compare_ref(o->f, a.val, b.val),
                  "comparison %d of %.17g and %.17g: %d", o->f % 6, a.val,
                  b.val, outcome);
            rounded = outcome;
            guard = true;
            break;
        case RK_DISCRETE:
            rounded = discrete(t, o->f, a, &outcome);
            if (o->f % 7 < 4) { /* the rounded value joins the program */
                res = dr_add(t, a, dr_const(rounded));
            } else {
                rounded = outcome;
            }
            CHECK(same_bits(rounded, discrete_ref(o->f, a.val)),
                  "discrete result %d of %.17g: %.17g", o->f % 7, a.val,
                  rounded);
            guard = true;
            break;
        case RK_SUMN: {
            int n = (o->e[0] & 7) % (RTERMS + 1);
            dr_real x[RTERMS];
            double vals[RTERMS], s = 0.0;
            dr_idx ids[RTERMS];
            bool act = false;
            for (int i = 0; i < n; i++)
                x[i] = term_of(R, o->term[i]);
            if (P->lie && (o->e[0] & 0x10))
                lie_in(P, R, x, o->term, n);
            for (int i = 0; i < n; i++) {
                TRACE("   sum term %d: %.17g id %lld\n", i, x[i].val,
                      (long long)x[i].idx);
                s += x[i].val;
                act |= x[i].idx != DR_NONE;
                vals[i] = x[i].val;
                ids[i] = x[i].idx;
            }
            if (o->e[0] & 8) {
                double val = -77.0;
                bool want_val = !(o->e[0] & 0x20);
                dr_idx id = dr_sumn_id(t, (size_t)n, vals, ids,
                                       want_val ? &val : NULL);
                CHECK(!want_val || same_bits(val, s), "dr_sumn_id value "
                      "%.17g, expected %.17g", val, s);
                res = (dr_real){s, id};
            } else {
                res = dr_sumn(t, (size_t)n, x);
                CHECK(same_bits(res.val, s), "dr_sumn value %.17g, "
                      "expected %.17g (0 + x0 + x1 ..., left to right)",
                      res.val, s);
            }
            CHECK((res.idx != DR_NONE) == act, "dr_sumn of %d terms (%s): "
                  "id %lld", n, act ? "active" : "constants",
                  (long long)res.idx);
            break;
        }
        case RK_PROG: {
            const fprog *g = &o->prog;
            const unsigned char *code =
                o->same_prog ? P->ops[q - 1].prog.code : g->code;
            dr_real x[FP_LEAVES];
            double xs[FP_LEAVES];
            for (unsigned i = 0; i < g->n; i++)
                x[i] = term_of(R, o->term[i]);
            bool nr = R->noreplay;
            dr_real told[FP_LEAVES];
            memcpy(told, x, sizeof told);
            if (P->lie && (o->e[0] & 0x10))
                lie_in(P, R, x, o->term, (int)g->n);
            for (unsigned i = 0; i < g->n; i++)
                xs[i] = x[i].val;
            double pv = prog_value(g, xs);
            /* (programs on or off: the program's own choice, the same on
               both tapes, which are roots) */
            unsigned act = prog_active(x, g->n);
            bool nonlin = prog_nonlinear(g, act),
                 pairs = prog_pairs_refuse(g->code, act);
            R->byops[q] = path && path->byops[q];
            dr_idx id = R->byops[q] ? DR_FE_STMT_BY_OPS
                                    : prog_record(t, t, !g->off, code,
                                                  pv, x, g->n);
            TRACE("   dr_fe_prog(%u leaves, %u constants, %u instructions,"
                  " %u pairs%s%s%s) = %.17g id %lld\n", g->n, g->c, g->m,
                  g->q, g->off ? ", programs off" : "",
                  nonlin ? ", nonlinear" : "",
                  pairs ? ", pairs refuse" : "", pv, (long long)id);
            if (id == DR_FE_STMT_BY_OPS) {
                /* programs off, a program not linear in its active leaves
                   (or pairs that say so), or a NaN's sign and payload
                   that follow the operands' order, which a compiler may
                   swap */
                CHECK(R->byops[q] || g->off || nonlin || pairs ||
                      isnan(pv), "dr_fe_prog refused the "
                      "program's own value %.17g", pv);
                R->diverged |= path && !path->byops[q];
                R->byops[q] = true;
                /* (a leaf given another value makes the tape refuse to
                   replay only where an operation reads it: the program's
                   node is not recorded) */
                bool read = false;
                for (unsigned i = 0; i < g->n; i++) {
                    if (same_bits(told[i].val, x[i].val))
                        continue;
                    for (unsigned j = 0; j < g->m; j++) {
                        const unsigned char *s = prog_insn(g, j);
                        read |= s[1] == i || (s[0] != FP_NEG && s[2] == i);
                    }
                }
                if (!read)
                    R->noreplay = nr;
                res = prog_by_ops(t, g, x);
                CHECK(same_bits(res.val, pv), "a program by operations: "
                      "%.17g, expected %.17g", res.val, pv);
                /* (by operations: on the leaves its value is made of) */
                unsigned reach = prog_reached(g);
                R->dep = false;
                for (unsigned i = 0; i < g->n; i++)
                    R->dep |= (reach >> i & 1) && term_dep(R, o->term[i]);
            } else {
                CHECK(!g->off && !nonlin, "dr_fe_prog recorded %s: id "
                      "%lld", g->off ? "with programs off"
                      : "a program not linear in its active leaves",
                      (long long)id);
                CHECK((id != DR_NONE) == (act != 0), "dr_fe_prog of %u "
                      "leaves (%s): id %lld", g->n, act ? "active"
                      : "constants", (long long)id);
                res = (dr_real){pv, id};
            }
            break;
        }
        case RK_STMT: {
            const rsctx *sc = &o->sc;
            int n = (int)sc->n;
            dr_real x[RTERMS];
            double xs[RTERMS], d[RTERMS];
            for (int i = 0; i < n; i++)
                x[i] = term_of(R, o->term[i]);
            if (P->lie && (o->e[0] & 0x10))
                lie_in(P, R, x, o->term, n);
            bool act = false;
            for (int i = 0; i < n; i++) {
                xs[i] = x[i].val;
                act |= x[i].idx != DR_NONE;
            }
            double want = rstmt_fn(sc, (size_t)n, xs, d);
            size_t len = dr_tape_len(t);
            res = dr_record_statement(t, rstmt_fn, sc, (size_t)n, x);
            TRACE("   dr_record_statement(function %u, %d leaves%s) = "
                  "%.17g id %lld\n", sc->fn, n, act ? "" : ", constants",
                  res.val, (long long)res.idx);
            CHECK(dr_tape_status(t) == DR_OK, "dr_record_statement (a "
                  "replayed program): %s", sn(dr_tape_status(t)));
            CHECK(same_bits(res.val, want), "dr_record_statement's value "
                  "%.17g, its function's %.17g", res.val, want);
            /* one node where a leaf is active, else the constant */
            CHECK((res.idx != DR_NONE) == act &&
                      dr_tape_len(t) == len + (act ? 1 : 0),
                  "dr_record_statement of %d leaves (%s): id %lld, %zu "
                  "nodes", n, act ? "active" : "constants",
                  (long long)res.idx, dr_tape_len(t) - len);
            /* at order 2 the node's value is known (it replays) */
            if (act && dr_tape_order(t) == 2) {
                double sv = -1234.5;
                dr_status vs = dr_value(t, res.idx, &sv);
                CHECK(vs == DR_OK && same_bits(sv, want), "dr_value of a "
                      "statement at order 2: %s, %.17g, expected %.17g",
                      sn(vs), sv, want);
            }
            R->nstmt += act;
            R->dep = act;
            break;
        }
        case RK_EXTERNAL: {
            rext *E = calloc(1, sizeof *E);
            CHECK(E != NULL, "harness: out of memory");
            E->fn = o->e[0] % 4;
            E->n = (o->e[0] >> 2 & 7) % 5;
            E->m = 1 + (o->e[0] >> 5) % 3;
            unsigned fl = o->e[1], sd = o->e[2];
            for (size_t j = 0; j < 3; j++) {
                for (size_t i = 0; i < 4; i++)
                    E->M[j][i] = (double)((int)((sd + 3 * j + 5 * i) % 9) -
                                          4) / 4.0;
                E->c[j] = (double)((int)((sd / 9 + j) % 9) - 4) / 8.0;
            }
            dr_real x[4];
            for (size_t i = 0; i < E->n; i++)
                x[i] = term_of(R, o->term[i]);
            if (P->lie && (fl & 4))
                lie_in(P, R, x, o->term, (int)E->n);
            for (size_t i = 0; i < E->n; i++)
                E->cx[i] = x[i].val;
            rext_eval(E, E->cx, E->cy);
            bool primal = !(P->lie && (fl & 1));
            R->noreplay |= !primal;
            dr_external f = {E, rext_reverse, (fl & 2) ? NULL : rext_forward,
                             (fl & 8) ? NULL : owned_destroy,
                             primal ? rext_primal : NULL};
            dr_real out[3];
            dr_status st = dr_record_external(t, &f, E->n, E->n ? x : NULL,
                                              E->m, E->cy, out);
            CHECK(st == DR_OK, "dr_record_external (a replayed program): "
                  "%s", sn(st));
            owned_give(&E->own, tape, !(fl & 8));
            for (size_t j = 0; j < E->m; j++) {
                CHECK(out[j].idx != DR_NONE &&
                          same_bits(out[j].val, E->cy[j]),
                      "dr_record_external's output %zu", j);
                spush(R, out[j]);
            }
            one = false;
            break;
        }
        case RK_LOOP: {
            rloop *L = calloc(1, sizeof *L);
            CHECK(L != NULL, "harness: out of memory");
            int ln = 1 + (o->e[0] & 3) % 3;
            L->n = ln;
            L->nops = 1 + (o->e[0] >> 2 & 3) % 3;
            L->fail = o->f & 0x80;
            static const double thr[4] = {1.0, 2.0, 4.0, 64.0};
            L->thr = thr[o->f & 3];
            memcpy(L->ops, o->lop, sizeof L->ops);
            memcpy(L->outmap, o->outmap, sizeof L->outmap);
            size_t nsteps = o->e[1] % 25, seg = o->e[2] % 7,
                   snaps = o->e[3] % 5;
            dr_real x0[3], out[3];
            for (int i = 0; i < L->n; i++)
                x0[i] = term_of(R, o->term[i]);
            bool nr = R->noreplay;
            if (P->lie && (o->f & 0x40))
                lie_in(P, R, x0, o->term, L->n);
            dr_status st = DR_OK;
            if (path && path->lst[q] != DR_OK) {
                /* the first recording's loop failed: its outputs are the
                   constants it left */
                for (int i = 0; i < L->n; i++)
                    out[i] = dr_const(path->w[path->first[q] + i].val);
                free(L);
                st = path->lst[q];
            } else {
                dr_loop lp = {L, rstep, (o->f & 0x20) ? NULL : owned_destroy,
                              seg};
                st = dr_record_checkpointed(t, &lp, nsteps, (size_t)L->n, x0,
                                            snaps, out);
                TRACE("   loop (%d values, %zu steps, segment %zu, %zu "
                      "snapshots) -> %s\n", L->n, nsteps, seg, snaps,
                      sn(st));
                CHECK(st == DR_OK || (L->fail && st == DR_ERANGE),
                      "dr_record_checkpointed (a replayed program): %s",
                      sn(st));
                if (st == DR_OK) {
                    owned_give(&L->own, tape, !(o->f & 0x20));
                } else {
                    for (int i = 0; i < L->n; i++)
                        CHECK(out[i].idx == DR_NONE &&
                                  same_bits(out[i].val, x0[i].val),
                              "a failed dr_record_checkpointed's output "
                              "%d", i);
                    free(L);
                }
            }
            R->lst[q] = st;
            if (st != DR_OK) /* (nothing recorded: no node to refuse) */
                R->noreplay = nr;
            for (int i = 0; i < ln; i++) {
                TRACE("   loop input %d: %.17g id %lld, output r%d: %.17g "
                      "id %lld\n", i, x0[i].val, (long long)x0[i].idx,
                      R->nw, out[i].val, (long long)out[i].idx);
                spush(R, out[i]);
            }
            one = false;
            break;
        }
        case RK_ARRAY:
            arr_op(P, q, t, R);
            one = false;
            break;
        default: /* given partials: no replay */
            res = (dr_real){a.val * 0.5, dr_record1(t, a.idx, 0.5)};
            R->noreplay = true;
            break;
        }
        TRACE("   r%d = op %d/%d (r%d, r%d, r%d, %g) = %.17g id %lld%s\n",
              R->first[q], o->kind, o->f, o->a % avail, o->b % avail,
              o->c % avail, o->v, res.val, (long long)res.idx,
              guard ? " (guard)" : "");
        if (guard && R->nout < ROPS) {
            R->outq[R->nout] = q;
            R->out[R->nout++] = rounded;
        }
        if (one)
            spush(R, res);
    }
    R->st = dr_tape_status(t);
    tape_bytes_check(t, "of a replayed program");
}

/* a node's value, by dr_value: none for a tape of order 1, nor for a node
   whose value the library never saw (given partials, an input recorded
   without its value and not replayed) */
static dr_status value_of(dr_tape *t, dr_idx id, double *v)
{
    *v = -1234.5;
    if (id == DR_NONE)
        return DR_OK;
    dr_status st = dr_value(t, id, v);
    if (dr_tape_order(t) == 1)
        CHECK(st == DR_ENOTSUP, "dr_value at order 1: %s", sn(st));
    else
        CHECK(st == DR_OK || st == DR_ENOTSUP, "dr_value of node %lld: %s",
              (long long)id, sn(st));
    return st;
}

/* ---------------------------------------------------------- results */

/* what a tape says of the program: every scalar register's value, every
   array's values and activity, the gradient, a JVP and an HVP of the last
   scalar w.r.t. the scalar inputs, and one reverse sweep seeded on the
   last scalar and the last array: the inputs' and every array's
   adjoints */
typedef struct rres {
    double val[RSREG], g[RIN], jv, hv[RIN], adj[RIN];
    dr_status sv[RSREG], sg, sj, sh, sr;
    double av[RAREG][AMAX], aa[RAREG][AMAX];
    int aact[RAREG];
} rres;

/* the allocations dr_hvp made (it takes scratch memory at every call) */
static size_t g_hvp_calls;

static void results(const rprog *P, dr_tape *t, const rrun *R, rres *o)
{
    for (int i = 0; i < R->nw; i++)
        o->sv[i] = value_of(t, R->w[i].idx, &o->val[i]);
    /* (after a replay a dr_real's .val is the old value: the drivers read
       the nodes) */
    dr_real y = R->w[R->nw - 1];
    static const double dir[RIN] = {1.0, -0.5, 2.0, 0.25};
    o->sg = dr_gradient(t, y, (size_t)P->nin, R->w, o->g);
    o->sj = dr_jvp(t, 1, &y, (size_t)P->nin, R->w, dir, &o->jv);
    size_t calls = fz_alloc_calls();
    o->sh = dr_hvp(t, y, (size_t)P->nin, R->w, dir, o->hv);
    g_hvp_calls += fz_alloc_calls() - calls;
    for (int j = 0; j < R->na; j++) {
        const rarr *x = &R->ar[j];
        const double *v = dr_arr_values(t, x->h.idx);
        CHECK(v != NULL || x->n == 0, "dr_arr_values of array %d", j);
        double got[AMAX];
        CHECK(dr_arr_read(t, x->h.idx, got) == DR_OK, "dr_arr_read");
        for (int64_t e = 0; e < x->n; e++) {
            o->av[j][e] = v[e];
            CHECK(memcmp(&got[e], &v[e], sizeof got[e]) == 0, "dr_arr_read "
                  "and dr_arr_values differ");
        }
        o->aact[j] = dr_arr_active(t, x->h.idx);
    }
    o->sr = dr_adjoints_clear(t);
    if (o->sr == DR_OK)
        o->sr = dr_seed(t, y.idx, 1.0);
    if (o->sr == DR_OK && R->na) {
        const rarr *x = &R->ar[R->na - 1];
        double cot[AMAX];
        for (int64_t e = 0; e < x->n; e++)
            cot[e] = (double)(e % 3 + 1) * ((e & 1) ? -0.5 : 1.0);
        o->sr = dr_arr_seed(t, x->h.idx, cot);
    }
    if (o->sr == DR_OK)
        o->sr = dr_reverse(t);
    if (o->sr != DR_OK)
        return;
    for (int i = 0; i < P->nin; i++)
        o->adj[i] = dr_adjoint(t, R->w[i].idx);
    for (int j = 0; j < R->na; j++) {
        const rarr *x = &R->ar[j];
        CHECK(dr_arr_adjoint(t, x->h.idx, o->aa[j]) == DR_OK,
              "dr_arr_adjoint");
        /* the buffer, where the sweep reached the array, holds the same */
        const double *pa = dr_arr_adjoint_ptr(t, x->h.idx);
        for (int64_t e = 0; e < x->n; e++)
            CHECK(pa ? memcmp(&pa[e], &o->aa[j][e], sizeof pa[e]) == 0
                     : o->aa[j][e] == 0.0,
                  "dr_arr_adjoint_ptr[%lld] %.17g, dr_arr_adjoint %.17g",
                  (long long)e, pa ? pa[e] : 0.0, o->aa[j][e]);
    }
}

/* the gradient and the forward product in a and b, bit for bit, where
   a's succeeded */
static void same_first_derivatives(const char *what, const rprog *P,
                                   const rres *a, const rres *b)
{
    for (int i = 0; a->sg == DR_OK && i < P->nin; i++)
        CHECK(same_bits(a->g[i], b->g[i]), "%s: gradient[%d] %.17g, "
              "expected %.17g", what, i, a->g[i], b->g[i]);
    if (a->sj == DR_OK)
        CHECK(same_bits(a->jv, b->jv), "%s: jvp %.17g, expected %.17g", what,
              a->jv, b->jv);
}

/* array j's values in a and b, bit for bit */
static void same_array_values(const char *what, const rrun *R, int j,
                              const rres *a, const rres *b)
{
    for (int64_t e = 0; e < R->ar[j].n; e++)
        CHECK(same_bits(a->av[j][e], b->av[j][e]), "%s: array %d "
              "value[%lld] %.17g, expected %.17g", what, j, (long long)e,
              a->av[j][e], b->av[j][e]);
}

/* the adjoints of the inputs and arrays in a and b, bit for bit, where
   a's reverse sweep succeeded */
static void same_adjoints(const char *what, const rprog *P, const rrun *R,
                          const rres *a, const rres *b)
{
    if (a->sr != DR_OK)
        return;
    for (int i = 0; i < P->nin; i++)
        CHECK(same_bits(a->adj[i], b->adj[i]), "%s: adjoint of input %d "
              "%.17g, expected %.17g", what, i, a->adj[i], b->adj[i]);
    for (int j = 0; j < R->na; j++)
        for (int64_t e = 0; e < R->ar[j].n; e++)
            CHECK(same_bits(a->aa[j][e], b->aa[j][e]), "%s: array %d "
                  "adjoint[%lld] %.17g, expected %.17g", what, j,
                  (long long)e, a->aa[j][e], b->aa[j][e]);
}

/* strict: the values known for the same nodes (else: compared where both
   are known); registers that are inputs recorded without a value take
   the value their first use was given when a replay first checks the
   tape */
static void same_results(const char *what, const rprog *P, const rrun *R,
                         const rres *a, const rres *b, bool strict)
{
    for (int i = 0; i < R->nw; i++) {
        if (strict && !valueless(P, R, i))
            CHECK(a->sv[i] == b->sv[i], "%s: dr_value of node %d: %s, "
                  "expected %s", what, i, sn(a->sv[i]), sn(b->sv[i]));
        if (a->sv[i] == DR_OK && b->sv[i] == DR_OK)
            CHECK(same_bits(a->val[i], b->val[i]), "%s: node %d value "
                  "%.17g, expected %.17g", what, i, a->val[i], b->val[i]);
    }
    CHECK(a->sg == b->sg && a->sj == b->sj && a->sh == b->sh &&
              a->sr == b->sr,
          "%s: statuses %s %s %s %s, expected %s %s %s %s", what, sn(a->sg),
          sn(a->sj), sn(a->sh), sn(a->sr), sn(b->sg), sn(b->sj), sn(b->sh),
          sn(b->sr));
    same_first_derivatives(what, P, a, b);
    for (int i = 0; a->sh == DR_OK && i < P->nin; i++)
        CHECK(same_bits(a->hv[i], b->hv[i]), "%s: hvp[%d] %.17g, expected "
              "%.17g", what, i, a->hv[i], b->hv[i]);
    for (int j = 0; j < R->na; j++) {
        CHECK(a->aact[j] == b->aact[j], "%s: dr_arr_active of array %d: "
              "%d, expected %d", what, j, a->aact[j], b->aact[j]);
        same_array_values(what, R, j, a, b);
    }
    same_adjoints(what, P, R, a, b);
}

/* a program whose last value depends on a statement node (no
   second-order rule): dr_hvp (results' o->sh), dr_hessian, the sparse
   Hessian and its plan, dr_tangent_record and dr_adjoint_record from the
   program's first id (mark) answer DR_ENOTSUP, recording nothing and
   leaving the status alone (the replay and the comparisons after it
   find the tape usable).  (The dependence the harness tracks may be
   more than the graph's, for array operations: the library refuses a
   node without a rule anywhere up to y.) */
static void stmt_refusals(const char *when, const rprog *P, dr_tape *t,
                          const rrun *R, const rres *o, dr_idx mark)
{
    dr_real y = R->w[R->nw - 1];
    if (!R->sdep[R->nw - 1] || y.idx == DR_NONE)
        return;
    size_t n = (size_t)P->nin, len = dr_tape_len(t);
    CHECK(o->sh == DR_ENOTSUP, "%s: dr_hvp through a statement: %s", when,
          sn(o->sh));
    double H[RIN * RIN];
    dr_status st = dr_hessian(t, y, n, R->w, H);
    CHECK(st == DR_ENOTSUP, "%s: dr_hessian through a statement: %s", when,
          sn(st));
    {
        dr_sparse Hs;
        memset(&Hs, 0, sizeof Hs);
        st = dr_sparse_hessian(t, y, n, R->w, &Hs);
        CHECK(st == DR_ENOTSUP, "%s: dr_sparse_hessian through a "
              "statement: %s", when, sn(st));
        dr_sparse_free(&Hs);
        dr_sparse_plan *plan = NULL;
        st = dr_sparse_hessian_plan(t, y, n, R->w, &plan);
        CHECK(st == DR_ENOTSUP && plan == NULL, "%s: "
              "dr_sparse_hessian_plan through a statement: %s", when,
              sn(st));
        dr_sparse_plan_free(plan);
    }
    dr_idx ids[RIN];
    dr_real seeds[RIN], out[RIN];
    for (size_t i = 0; i < n; i++) {
        ids[i] = R->w[i].idx;
        seeds[i] = dr_const(1.0 + 0.5 * (double)i);
    }
    st = dr_tangent_record(t, mark, n, ids, seeds, y, out);
    CHECK(st == DR_ENOTSUP, "%s: dr_tangent_record through a statement: "
          "%s", when, sn(st));
    st = dr_adjoint_record(t, mark, y, n, ids, out);
    CHECK(st == DR_ENOTSUP, "%s: dr_adjoint_record through a statement: "
          "%s", when, sn(st));
    CHECK(dr_tape_len(t) == len && dr_tape_status(t) == DR_OK, "%s: the "
          "second-order drivers refused a statement and left %zu nodes "
          "(%zu before), the status %s", when, dr_tape_len(t), len,
          sn(dr_tape_status(t)));
    TRACE("  second order through a statement (%s): refused\n", when);
}

/* a program holding statements recorded at order 1 (a is that tape's)
   and at order 2 (b) at the same point: a statement is a node of its
   partials either way, so the first-order results are the same bits
   (dr_value: none at order 1; dr_hvp: none) */
static void same_first_order(const char *what, const rprog *P,
                             const rrun *R, const rres *a, const rres *b)
{
    CHECK(a->sg == b->sg && a->sj == b->sj && a->sr == b->sr,
          "%s: statuses %s %s %s, expected %s %s %s", what, sn(a->sg),
          sn(a->sj), sn(a->sr), sn(b->sg), sn(b->sj), sn(b->sr));
    same_first_derivatives(what, P, a, b);
    for (int j = 0; j < R->na; j++)
        same_array_values(what, R, j, a, b);
    same_adjoints(what, P, R, a, b);
}

/* a checkpointed loop was recorded in run R */
static bool holds_loop(const rprog *P, const rrun *R)
{
    for (int q = 0; q < P->nops; q++)
        if (P->ops[q].kind == RK_LOOP && R->lst[q] == DR_OK)
            return true;
    return false;
}

/* the tangent seed left on the first array input (dr_jvp takes it) */
static void seed_tangent(const rprog *P, dr_tape *t, const rrun *R)
{
    if (!(P->aflags & 1) || P->nain == 0 || R->ar[0].n == 0)
        return;
    double tan[AMAX];
    for (int64_t e = 0; e < R->ar[0].n; e++)
        tan[e] = 1.0 + 0.5 * (double)e;
    CHECK(dr_arr_tangent_seed(t, R->ar[0].h.idx, tan) == DR_OK,
          "dr_arr_tangent_seed");
}

void op_replay(rd *r)
{
    unsigned k = u8(r);
    static rprog P;
    memset(&P, 0, sizeof P);
    P.lie = k & 0x10;
    P.nin = 1 + (int)(u8(r) % RIN);
    P.nops = 1 + (int)(u8(r) % ROPS);
    unsigned ab = u8(r);
    P.nain = (int)((ab & 3) % (RAIN + 1));
    P.aflags = ab >> 2;
    double v0[RIN], v1[RIN];
    static double av0[RAIN][AIN], av1[RAIN][AIN];
    memset(av0, 0, sizeof av0);
    memset(av1, 0, sizeof av1);
    for (int i = 0; i < P.nin; i++) {
        P.inkind[i] = (uint8_t)u8(r);
        v0[i] = rdv(r);
    }
    for (int i = 0; i < P.nain; i++) {
        rain *a = &P.ain[i];
        a->kind = (uint8_t)u8(r);
        a->shape = (a->kind >> 2) % NSHAPE;
        a->n = SHAPES[a->shape].rows * SHAPES[a->shape].cols;
        for (int64_t e = 0; e < a->n; e++)
            av0[i][e] = a->v0[e] = rdv(r);
    }
    for (int q = 0; q < P.nops; q++) {
        rop *o = &P.ops[q];
        o->kind = (uint8_t)(u8(r) % N_RK);
        if (o->kind == RK_NOREPLAY && !P.lie)
            o->kind = RK_UNARY;
        o->f = (uint8_t)u8(r);
        o->a = (uint8_t)u8(r);
        o->b = (uint8_t)u8(r);
        o->c = (uint8_t)u8(r);
        o->v = rdv(r);
        int nterm = 0;
        switch (o->kind) {
        case RK_SUMN:
            o->e[0] = (uint8_t)u8(r);
            nterm = (o->e[0] & 7) % (RTERMS + 1);
            if ((o->e[0] & RK_STMT_FLAGS) == RK_STMT_FLAGS) {
                o->kind = RK_STMT;
                nterm = 1 + (o->e[0] & 7) % RTERMS;
                o->sc = (rsctx){RSTMT_MAGIC, o->f % N_SF, (unsigned)nterm,
                                o->v};
            } else if (o->e[0] & RK_PROG_FLAG) {
                o->kind = RK_PROG;
                nterm = 1 + (o->e[0] & 7) % FP_LEAVES;
                /* (0x20 without 0x08 here: RK_STMT_FLAGS not all set) */
                o->same_prog = (o->e[0] & 0x20) && q > 0 &&
                               P.ops[q - 1].kind == RK_PROG;
                if (o->same_prog)
                    nterm = (int)P.ops[q - 1].prog.n;
            }
            break;
        case RK_EXTERNAL:
            for (int i = 0; i < 3; i++)
                o->e[i] = (uint8_t)u8(r);
            nterm = (o->e[0] >> 2 & 7) % 5;
            break;
        case RK_LOOP: {
            for (int i = 0; i < 4; i++)
                o->e[i] = (uint8_t)u8(r);
            int n = 1 + (o->e[0] & 3) % 3;
            int nops = 1 + (o->e[0] >> 2 & 3) % 3;
            for (int i = 0; i < nops; i++) {
                rlop *l = &o->lop[i];
                l->kind = (uint8_t)u8(r);
                l->f = (uint8_t)u8(r);
                l->a = (uint8_t)u8(r);
                l->b = (uint8_t)u8(r);
                l->c = rdv(r);
            }
            nterm = n;
            /* distinct outputs */
            bool used[6] = {false};
            for (int i = 0; i < n; i++) {
                int m = (int)(u8(r) % (unsigned)(n + nops));
                while (used[m])
                    m = (m + 1) % (n + nops);
                used[m] = true;
                o->outmap[i] = (uint8_t)m;
            }
            break;
        }
        case RK_ARRAY:
            o->e[0] = (uint8_t)u8(r);
            o->e[1] = (uint8_t)u8(r);
            if (o->f % N_AO == AO_FROM_REALS)
                nterm = (o->e[0] & 7) % 5;
            break;
        default: break;
        }
        for (int i = 0; i < nterm; i++)
            o->term[i] = (uint8_t)u8(r);
        if (o->kind == RK_PROG && o->same_prog)
            o->prog = P.ops[q - 1].prog;
        else if (o->kind == RK_PROG)
            prog_decode(r, &o->prog, (unsigned)nterm, o->e[0] & 0x80);
    }
    /* the inputs replayed: all those without a value (but, for misuse 3,
       one: it keeps the value its first use was given), some others */
    dr_real x[RIN + 1];
    double xv[RIN + 1];
    bool given[RIN];
    int nx = 0;
    unsigned pick = u8(r);
    double nv[RIN];
    for (int i = 0; i < P.nin; i++)
        nv[i] = rdv(r);
    for (int i = 0; i < P.nain; i++) {
        rain *a = &P.ain[i];
        a->mode = (int)(u8(r) % 3);
        if (a->mode == 2 && !(a->kind & 1))
            a->mode = 1;
        for (int64_t e = 0; e < a->n; e++)
            av1[i][e] = a->v1[e] = a->mode ? rdv(r) : a->v0[e];
    }
    bool order1 = (k & 0x0f) == 0x0f;
    unsigned misuse = (k & 0xe0) == 0xe0 ? u8(r) % 10 : 10;
    bool left = false;
    for (int i = 0; i < P.nin; i++) {
        bool vless = (P.inkind[i] % 4) >= 2;
        given[i] = vless || (pick >> i & 1);
        if (vless && misuse == 3 && !left) {
            given[i] = false;
            left = true;
        }
        v1[i] = given[i] ? nv[i] : v0[i];
        if (given[i]) {
            xv[nx] = nv[i];
            x[nx++] = (dr_real){nv[i], 0}; /* (ids below) */
        }
    }
    dr_tape *t = dr_tape_new(), *f = dr_tape_new();
    if (!t || !f) {
        dr_tape_free(t);
        dr_tape_free(f);
        return;
    }
    if (!order1)
        CHECK(dr_tape_set_order(t, 2) == DR_OK, "dr_tape_set_order");
    CHECK(dr_tape_set_order(f, 2) == DR_OK, "dr_tape_set_order");
    static rrun A, B, B2;
    dr_idx mark = dr_tape_mark(t);
    record(&P, t, v0, av0, &A, NULL, TAPE_REPLAY);
    CHECK(A.st == DR_OK, "recording a program to replay: %s", sn(A.st));
    seed_tangent(&P, t, &A);
    nx = 0;
    for (int i = 0; i < P.nin; i++)
        if (given[i])
            x[nx++].idx = A.w[i].idx;
    /* the array inputs given, their new values or memory */
    dr_arr arrs[RAIN + 1];
    const double *avals[RAIN + 1];
    static double anew[RAIN][AIN];
    size_t m = 0;
    bool inplace = false;
    for (int i = 0; i < P.nain; i++) {
        memcpy(anew[i], av1[i], sizeof anew[i]);
        if (P.ain[i].mode == 1) {
            arrs[m] = A.ar[i].h;
            avals[m++] = anew[i];
        }
        inplace |= P.ain[i].mode == 2;
    }
    static rres before, after, fresh, fresh2;
    const rrun *fresh_run = &B; /* what f holds at the end */
    results(&P, t, &A, &before);
    if (!order1)
        stmt_refusals("a recorded program", &P, t, &A, &before, mark);
    /* the same program recorded at the new values */
    record(&P, f, v1, av1, &B, &A, TAPE_FRESH);
    CHECK(B.st == DR_OK, "recording a program afresh: %s", sn(B.st));
    seed_tangent(&P, f, &B);
    /* a guard holds where the outcome, or the rounded value, is the same
       (a NaN rounds to a NaN; a zero keeps its sign, since a program may
       divide by it) */
    bool flips = A.nout != B.nout;
    int qflip = flips ? 0 : P.nops; /* the first operation that flips */
    for (int i = 0; !flips && i < A.nout; i++) {
        flips = !(memcmp(&A.out[i], &B.out[i], sizeof(double)) == 0 ||
                  (isnan(A.out[i]) && isnan(B.out[i])));
        if (flips)
            qflip = A.outq[i];
    }
    /* a loop: its step fails at the new values (its status), or makes
       another output constant or a constant output another value (the
       caller's program holds it: DR_ERETAPE); the first such loop
       answers, before the guards are looked at.  After a guard that
       flips, the replay goes on along the recorded path (the rounded
       value recorded, not the fresh one) where the fresh recording takes
       another: there a loop's step may fail where the fresh one's does
       not, or the other way (its status or DR_ERETAPE, either goes) */
    dr_status loopst = DR_OK;
    bool flip_loop_fails = false;
    for (int q = qflip + 1; q < P.nops; q++)
        flip_loop_fails |= P.ops[q].kind == RK_LOOP && A.lst[q] == DR_OK &&
                           (P.ops[q].f & 0x80);
    for (int q = 0; q < qflip && loopst == DR_OK; q++) {
        if (P.ops[q].kind != RK_LOOP || A.lst[q] != DR_OK)
            continue;
        if (B.lst[q] != DR_OK) {
            loopst = B.lst[q];
            break;
        }
        for (int i = 0; i < 1 + (P.ops[q].e[0] & 3) % 3; i++) {
            int w = A.first[q] + i;
            if ((A.w[w].idx == DR_NONE) != (B.w[w].idx == DR_NONE) ||
                (A.w[w].idx == DR_NONE && !same_bits(A.w[w].val,
                                                     B.w[w].val)))
                loopst = DR_ERETAPE;
        }
    }
    /* the answer, in the header's order of checks for one misuse */
    dr_status want;
    const dr_real *xp = x;
    const double *vp = xv;
    size_t n = (size_t)nx;
    dr_tape *h = t;
    const dr_arr *arp = arrs;
    const double *const *avp = avals;
    static double junk[AMAX];
    bool mis = false;
    switch (misuse) {
    case 0: /* an input given twice */
        if (nx == 0)
            goto plain;
        x[nx] = x[0];
        xv[nx] = xv[0];
        n++;
        want = DR_EINVAL;
        mis = true;
        break;
    case 1: /* an id that is no input: an operation's (or none at all) */
        x[0].idx = INT64_MAX - 5;
        for (int i = P.nin; i < A.nw; i++) {
            bool input = A.w[i].idx == DR_NONE;
            for (int q = 0; q < P.nin; q++)
                input |= A.w[i].idx == A.w[q].idx;
            if (!input)
                x[0].idx = A.w[i].idx;
        }
        if (nx == 0)
            n = 1;
        want = DR_EINVAL;
        mis = true;
        break;
    case 2: /* NULL arrays */
        if (nx == 0)
            goto plain;
        xp = NULL;
        want = DR_EINVAL;
        mis = true;
        break;
    case 3: /* an input without a value left out (above): no misuse */
        goto plain;
    case 4: /* no tape */
        h = NULL;
        want = DR_EINVAL;
        mis = true;
        break;
    case 5: /* an array input given twice */
        if (m == 0)
            goto plain;
        arrs[m] = arrs[0];
        avals[m] = avals[0];
        m++;
        want = DR_EINVAL;
        mis = true;
        break;
    case 6: /* a handle of another shape */
        if (m == 0)
            goto plain;
        if (arrs[0].rank == 1) {
            arrs[0].rank = 2; /* (rows x 1: the same values) */
        } else {
            int64_t tr = arrs[0].rows;
            arrs[0].rows = arrs[0].cols;
            arrs[0].cols = tr;
            if (arrs[0].rows == arrs[0].cols)
                arrs[0].rows++;
        }
        want = DR_ESHAPE;
        mis = true;
        break;
    case 7: /* an array that is no input: a computed one, a constant, a
               scalar id, a failed handle */
        if (A.na > P.nain)
            arrs[m] = A.ar[A.na - 1].h;
        else
            arrs[m] = (dr_arr){(pick & 1) ? A.w[0].idx : DR_NONE, 1, 1, 1,
                               NULL};
        avals[m++] = junk;
        want = DR_EINVAL;
        mis = true;
        break;
    case 8: /* NULL arrays, NULL values */
        if (m == 0)
            goto plain;
        if (pick & 1)
            arp = NULL;
        else if ((pick & 2) || arrs[0].rows * arrs[0].cols == 0)
            avp = NULL;
        else
            avals[0] = NULL;
        want = DR_EINVAL;
        mis = true;
        break;
    case 9: /* an array input of another tape */
        if (P.nain == 0)
            goto plain;
        arrs[m] = B.ar[0].h;
        avals[m++] = junk;
        want = DR_EINVAL;
        mis = true;
        break;
    default:
    plain:
        mis = false;
        want = order1 || A.noreplay ? DR_ENOTSUP
               : loopst != DR_OK    ? loopst
               : flips              ? DR_ERETAPE
                                    : DR_OK;
        break;
    }
    /* borrowed memory written in place */
    for (int i = 0; i < P.nain; i++)
        if (P.ain[i].mode == 2)
            memcpy(A.abuf[i], av1[i], sizeof A.abuf[i]);
    dr_status st;
    if (m == 0 && !(P.aflags & 2) && arp == arrs && avp == avals)
        st = dr_replay(h, n, xp, vp);
    else
        st = dr_replay_arrays(h, n, xp, vp, m, arp, avp);
    TRACE("  dr_replay(%d inputs of %d, %zu arrays of %d, %d operations, "
          "%d guards%s%s%s) -> %s\n", (int)n, P.nin, m, P.nain, P.nops,
          A.nout, flips ? ", a flip" : "", A.noreplay ? ", no replay" : "",
          inplace ? ", in place" : "", sn(st));
    /* (a misuse and a tape that does not replay: either answer first) */
    if (mis && (order1 || A.noreplay))
        CHECK(st == DR_EINVAL || st == DR_ESHAPE || st == DR_ENOTSUP,
              "dr_replay: %s", sn(st));
    else if (!mis && want == DR_ERETAPE && flip_loop_fails)
        CHECK(st == DR_ERETAPE || st == DR_ERANGE, "dr_replay: %s, "
              "expected DR_ERETAPE (or a loop's DR_ERANGE after a flip)",
              sn(st));
    else
        CHECK(st == want, "dr_replay: %s, expected %s", sn(st), sn(want));
    if (st != DR_OK) {
        /* nothing changed, but what was written into borrowed memory,
           which the undoing replay read: write the old values back, and
           replay there where the refusal came after the evaluation */
        if (inplace) {
            for (int i = 0; i < P.nain; i++)
                if (P.ain[i].mode == 2)
                    memcpy(A.abuf[i], av0[i], sizeof A.abuf[i]);
            /* (a loop's step that fails or makes another output
               constant there makes that the tape's sticky status) */
            if (dr_tape_status(t) != DR_OK) {
                bool loops = false;
                for (int q = 0; q < P.nops; q++)
                    loops |= P.ops[q].kind == RK_LOOP;
                CHECK(loops, "a refused dr_replay set the sticky status %s",
                      sn(dr_tape_status(t)));
                goto done;
            }
            if (st == DR_ERETAPE || st == loopst ||
                (flip_loop_fails && st == DR_ERANGE)) {
                dr_status back = dr_replay(t, 0, NULL, NULL);
                CHECK(back == DR_OK, "dr_replay after the old values were "
                      "written back into borrowed memory: %s", sn(back));
            }
        }
        results(&P, t, &A, &after);
        same_results("a refused dr_replay", &P, &A, &after, &before, true);
    } else {
        results(&P, t, &A, &after);
        results(&P, f, &B, &fresh);
        if (!B.diverged)
            same_results("dr_replay against a fresh recording", &P, &A,
                         &after, &fresh, false);
        stmt_refusals("a replayed program", &P, t, &A, &after, mark);
        /* the fresh program once more after a clear: the same bits, and
           no memory taken */
        size_t bytes = dr_tape_bytes(f), calls = fz_alloc_calls();
        g_hvp_calls = 0;
        CHECK(dr_tape_clear(f) == DR_OK, "dr_tape_clear");
        owned_gone(TAPE_FRESH, "dr_tape_clear of a fresh recording");
        record(&P, f, v1, av1, &B2, &A, TAPE_FRESH);
        fresh_run = &B2;
        seed_tangent(&P, f, &B2);
        results(&P, f, &B2, &fresh2);
        size_t again = fz_alloc_calls() - calls - g_hvp_calls,
               bytes2 = dr_tape_bytes(f);
        CHECK(again == 0, "recording and sweeping a program again after "
              "dr_tape_clear: %zu allocations", again);
        CHECK(bytes2 == bytes, "recording a program again after "
              "dr_tape_clear: dr_tape_bytes %zu, first %zu", bytes2, bytes);
        /* and back to the first values */
        for (int i = 0; i < nx; i++) {
            int j = 0;
            while (A.w[j].idx != x[i].idx)
                j++;
            xv[i] = v0[j];
        }
        m = 0;
        for (int i = 0; i < P.nain; i++) {
            if (P.ain[i].mode == 1) {
                arrs[m] = A.ar[i].h;
                avals[m++] = (P.ain[i].kind & 1) ? A.abuf[i] : av0[i];
            } else if (P.ain[i].mode == 2) {
                memcpy(A.abuf[i], av0[i], sizeof A.abuf[i]);
            }
        }
        st = dr_replay_arrays(t, (size_t)nx, x, xv, m, arrs, avals);
        CHECK(st == DR_OK, "dr_replay back to the recorded values: %s",
              sn(st));
        results(&P, t, &A, &after);
        same_results("dr_replay back to the recorded values", &P, &A, &after,
                     &before, false);
    }
    bool selects = false;
    for (int q = 0; q < P.nops; q++)
        selects |= P.ops[q].kind == RK_SELECT;
    if (order1 && A.nstmt && !selects) {
        /* statements at order 1: nodes of their partials, as at order 2
           (the same program recorded at the first values on f, after a
           clear; not with a select, which at order 1 is the side it
           picks, at order 2 a node: another graph, whose sums may round
           otherwise) */
        CHECK(dr_tape_clear(f) == DR_OK, "dr_tape_clear");
        owned_gone(TAPE_FRESH, "dr_tape_clear of a fresh recording");
        record(&P, f, v0, av0, &B2, &A, TAPE_FRESH);
        fresh_run = &B2;
        CHECK(B2.st == DR_OK, "recording a program at order 2: %s",
              sn(B2.st));
        seed_tangent(&P, f, &B2);
        results(&P, f, &B2, &fresh2);
        TRACE("  statements at order 1 against order 2%s\n",
              B2.diverged ? ": diverged" : "");
        if (!B2.diverged)
            same_first_order("statements at order 1 against order 2", &P,
                             &A, &before, &fresh2);
    }
done:;
    double dummy;
    CHECK(dr_value(t, INT64_MAX - 1, &dummy) == DR_EINVAL,
          "dr_value of an id not on the tape");
    CHECK(dr_value(t, A.w[0].idx, NULL) == DR_EINVAL, "dr_value(NULL)");
    tape_free_counted(t, holds_loop(&P, &A), "a replayed tape");
    owned_gone(TAPE_REPLAY, "dr_tape_free of a replayed tape");
    tape_free_counted(f, holds_loop(&P, fresh_run), "a fresh recording");
    owned_gone(TAPE_FRESH, "dr_tape_free of a fresh recording");
}
