/*
 * dualrev_bench.c - the six benchmark programs of ../shared/benchmarks.md
 * written against the dualrev C API.
 *
 *     dualrev-bench <program> <size> <reps>
 *
 * What one repetition measures (one "unit" of benchmarks.md, or n / k*k
 * units for fdotprod / fsummatvec): dr_tape_clear on a tape reused across
 * repetitions (so after the first repetition nothing is allocated), one
 * input node per independent variable (dr_input; for the vectors of fdotprod
 * and fsummatvec one dr_input_range call, see in_vec), the forward pass recording every
 * operation (through recorders, dr_rec_begin, wherever the program is sums
 * and products: every program but fmult's single product; fparticles'
 * assignments and fneural's neurons as statements, one node each, see
 * bench_particle.h and layer()), the reverse sweep(s) (dr_gradient / dr_gradient_range /
 * dr_jacobian) and reading the gradient out.  The checksum printed is the sum of all gradient
 * (Jacobian) entries of the last repetition.
 *
 * The programs are written the way the Haskell versions are (Smeding's
 * bench/Main.hs): sums are right folds onto the constant 0 (so every element
 * records one add), constants multiply as constants (one node each).
 *
 * BENCH_CHECK_LEN=1 in the environment makes it check that the tape holds
 * exactly bench_tape_nodes() nodes (the count the floor writes), on stderr.
 */
#include "bench_common.h"

#include <dualrev.h>

#include "bench_particle.h"

static dr_tape *T;

static void check(dr_status st, const char *what)
{
    if (st != DR_OK) {
        fprintf(stderr, "dualrev-bench: %s: %s\n", what, dr_strerror(st));
        exit(4);
    }
}

static void check_len(int prog, long size)
{
    const char *e = getenv("BENCH_CHECK_LEN");
    if (!e || !*e || *e == '0')
        return;
    long want = bench_tape_nodes(prog, size);
    long got = (long)dr_tape_len(T);
    fprintf(stderr, "%s: tape nodes %ld, floor records %ld%s\n",
            bench_prog_names[prog], got, want, got == want ? "" : "  MISMATCH");
    if (got != want)
        exit(5);
}

static double sum(size_t n, const double *g)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g[i];
    return s;
}

/* ------------------------------------------------------------- fmult */

static double run_fmult(const bench_args *a)
{
    double g[2] = {0, 0};
    double in[2] = {3.0, 4.0};
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        dr_tape_clear(T);
        dr_real x[2];
        check(dr_inputs(T, 2, in, x), "inputs");
        dr_real y = dr_mul(T, x[0], x[1]);
        check(dr_gradient(T, y, 2, x, g), "gradient");
        bench_use(g);
    }
    check_len(a->prog, a->size);
    return g[0] + g[1];
}

/* ---------------------------------------------------------- fdotprod */

/*
 * The vectors of fdotprod and fsummatvec are input ranges (dr_input_range):
 * the values stay in the caller's double arrays and the ids are
 * consecutive, so each operand is paired on the fly, as a C user holding
 * plain arrays would write it; no dr_real array is filled and read back.
 * A vector is its values and the id of its first element.
 */
typedef struct {
    const double *val;
    dr_idx id;
} in_vec;

static inline dr_real at(in_vec v, size_t i)
{
    dr_real r = {v.val[i], v.id + (dr_idx)i};
    return r;
}

/* sum' (zipWith (*) xs ys), sum' a right fold onto 0, over input ranges,
   recorded through a recorder
   (dr_rec: the inline recording of dualrev.h, as a C user would write a
   hot loop) */
static dr_real dot_in(dr_rec *rec, size_t n, in_vec xs, in_vec ys)
{
    dr_real acc = dr_const(0.0);
    for (size_t i = n; i-- > 0;)
        acc = dr_rec_add(rec, dr_rec_mul(rec, at(xs, i), at(ys, i)), acc);
    return acc;
}

static double run_fdotprod(const bench_args *a)
{
    size_t n = (size_t)a->size;
    double *xv = bench_xmalloc(2 * n * sizeof(double));
    bench_dot_inputs(a->size, xv, xv + n);
    double *g = bench_xmalloc(2 * n * sizeof(double));
    for (size_t i = 0; i < 2 * n; i++)
        g[i] = 0;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv);
        dr_tape_clear(T);
        dr_idx first;
        check(dr_input_range(T, 2 * n, &first), "inputs");
        in_vec xs = {xv, first}, ys = {xv + n, first + (dr_idx)n};
        dr_rec rec;
        check(dr_rec_begin(T, &rec), "recorder");
        dr_real y = dot_in(&rec, n, xs, ys);
        check(dr_rec_end(&rec), "recording");
        check(dr_gradient_range(T, y, first, 2 * n, g), "gradient");
        bench_use(g);
    }
    check_len(a->prog, a->size);
    double s = sum(2 * n, g);
    free(xv);
    free(g);
    return s;
}

/* -------------------------------------------------------- fsummatvec */

static double run_fsummatvec(const bench_args *a)
{
    size_t k = (size_t)bench_summatvec_k(a->size), nin = k * k + k;
    double *xv = bench_xmalloc(nin * sizeof(double));
    bench_summatvec_inputs((long)k, xv, xv + k * k);
    double *g = bench_xmalloc(nin * sizeof(double));
    dr_real *rows = bench_xmalloc(k * sizeof(dr_real));
    for (size_t i = 0; i < nin; i++)
        g[i] = 0;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv);
        dr_tape_clear(T);
        dr_idx first;
        check(dr_input_range(T, nin, &first), "inputs");
        in_vec v = {xv + k * k, first + (dr_idx)(k * k)};
        dr_rec rec;
        check(dr_rec_begin(T, &rec), "recorder");
        /* sum' (map' (dotp v) m): row dots first (map), then the fold */
        for (size_t i = 0; i < k; i++) {
            in_vec row = {xv + i * k, first + (dr_idx)(i * k)};
            rows[i] = dot_in(&rec, k, v, row);
        }
        dr_real y = dr_const(0.0);
        for (size_t i = k; i-- > 0;)
            y = dr_rec_add(&rec, rows[i], y);
        check(dr_rec_end(&rec), "recording");
        check(dr_gradient_range(T, y, first, nin, g), "gradient");
        bench_use(g);
    }
    check_len(a->prog, a->size);
    double s = sum(nin, g);
    free(rows);
    free(xv);
    free(g);
    return s;
}

/* ------------------------------------------------------- frotvecquat */

typedef struct {
    dr_real x, y, z;
} vec3;

/* recorded through the recorder R of run_frotvecquat (inline recording) */
static dr_rec *R;

static dr_real dot3(vec3 p, vec3 q)
{
    return dr_rec_add(R, dr_rec_add(R, dr_rec_mul(R, p.x, q.x), dr_rec_mul(R, p.y, q.y)),
                      dr_rec_mul(R, p.z, q.z));
}
static vec3 vadd(vec3 p, vec3 q)
{
    vec3 r = {dr_rec_add(R, p.x, q.x), dr_rec_add(R, p.y, q.y), dr_rec_add(R, p.z, q.z)};
    return r;
}
static vec3 scale(dr_real k, vec3 p)
{
    vec3 r = {dr_rec_mul(R, k, p.x), dr_rec_mul(R, k, p.y), dr_rec_mul(R, k, p.z)};
    return r;
}
static vec3 cross(vec3 a, vec3 b)
{
    vec3 r = {dr_rec_sub(R, dr_rec_mul(R, a.y, b.z), dr_rec_mul(R, a.z, b.y)),
              dr_rec_sub(R, dr_rec_mul(R, a.z, b.x), dr_rec_mul(R, a.x, b.z)),
              dr_rec_sub(R, dr_rec_mul(R, a.x, b.y), dr_rec_mul(R, a.y, b.x))};
    return r;
}

static double run_frotvecquat(const bench_args *a)
{
    double in[7], J[21] = {0};
    memcpy(in, bench_rot_inputs, sizeof in);
    dr_rec rec;
    R = &rec;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        dr_tape_clear(T);
        dr_real x[7];
        check(dr_inputs(T, 7, in, x), "inputs");
        check(dr_rec_begin(T, R), "recorder");
        vec3 v = {x[0], x[1], x[2]}, u = {x[3], x[4], x[5]};
        dr_real s = x[6];
        dr_real two = dr_const(2.0);
        vec3 t1 = scale(dr_rec_mul(R, two, dot3(u, v)), u);
        vec3 t2 = scale(dr_rec_sub(R, dr_rec_mul(R, s, s), dot3(u, u)), v);
        vec3 t3 = scale(dr_rec_mul(R, two, s), cross(u, v));
        vec3 o = vadd(vadd(t1, t2), t3);
        check(dr_rec_end(R), "recording");
        dr_real y[3] = {o.x, o.y, o.z};
        check(dr_jacobian(T, 3, y, 7, x, J), "jacobian");
        bench_use(J);
    }
    check_len(a->prog, a->size);
    return sum(21, J);
}

/* ----------------------------------------------------------- fneural */

/* x' = relu (W x + b), W is out x in.  Each neuron's dot product and bias
   is one statement (dr_sum: one node over the weights, the inputs and the
   bias, recorded through a recorder), relu a call.  W and b are parameters
   of the input range (values wv, ids from wid), x any active values. */
static void layer(int out, int in, const double *wv, dr_idx wid,
                  const double *bv, dr_idx bid, const dr_real *x, dr_real *y)
{
    static dr_idx ids[2 * NN_H1 + 1];
    static double parts[2 * NN_H1 + 1];
    dr_rec rec;
    for (int i = 0; i < out; i++) {
        check(dr_rec_begin(T, &rec), "recorder");
        dr_sum s;
        dr_sum_init(&s, 2 * (size_t)in + 1, ids, parts);
        for (int j = 0; j < in; j++) {
            size_t k = (size_t)i * in + j;
            dr_real w = {wv[k], wid + (dr_idx)k};
            dr_sum_mul(&s, w, x[j]);
        }
        dr_real b = {bv[i], bid + i};
        dr_sum_add(&s, dr_ex(b));
        dr_real z = dr_rec_sum(&rec, &s);
        check(dr_rec_end(&rec), "recording");
        y[i] = dr_relu(T, z);
    }
}

static double run_fneural(const bench_args *a)
{
    double pv[NN_NPARAM], g[NN_NPARAM] = {0};
    bench_neural_inputs(pv);
    const size_t ow1 = 0, ob1 = ow1 + NN_H1 * NN_IN, ow2 = ob1 + NN_H1,
                 ob2 = ow2 + NN_H2 * NN_H1, oin = ob2 + NN_H2;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(pv);
        dr_tape_clear(T);
        /* the parameters as one input range: values in pv, ids consecutive */
        dr_idx p;
        check(dr_input_range(T, NN_NPARAM, &p), "inputs");
        dr_real in[NN_IN], h1[NN_H1], h2[NN_H2], e[NN_H2];
        for (int i = 0; i < NN_IN; i++)
            in[i] = (dr_real){pv[oin + i], p + (dr_idx)(oin + i)};
        layer(NN_H1, NN_IN, pv + ow1, p + (dr_idx)ow1, pv + ob1,
              p + (dr_idx)ob1, in, h1);
        layer(NN_H2, NN_H1, pv + ow2, p + (dr_idx)ow2, pv + ob2,
              p + (dr_idx)ob2, h1, h2);
        /* safe softmax: running maximum started at 0 (a left fold) */
        dr_real m = dr_const(0.0);
        for (int i = 0; i < NN_H2; i++)
            m = dr_max(T, m, h2[i]);
        for (int i = 0; i < NN_H2; i++)
            e[i] = dr_exp(T, dr_sub(T, h2[i], m));
        dr_real s = dr_const(0.0);
        for (int i = NN_H2; i-- > 0;)
            s = dr_add(T, e[i], s);
        dr_real y = dr_const(0.0);
        for (int i = NN_H2; i-- > 0;)
            y = dr_add(T, dr_div(T, e[i], s), y);
        check(dr_gradient_range(T, y, p, NN_NPARAM, g), "gradient");
        bench_use(g);
    }
    check_len(a->prog, a->size);
    return sum(NN_NPARAM, g);
}

/* -------------------------------------------------------- fparticles */


/* Sequential version: the four particles one after the other on one tape.
   (The fork-join version is P_FPARTICLES_FORK, below.) */
static double run_fparticles(const bench_args *a)
{
    double in[4 * PT_N], g[4 * PT_N] = {0};
    bench_particle_inputs(in);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        dr_tape_clear(T);
        dr_real x[4 * PT_N], s[4 * PT_N];
        for (int i = 0; i < 4 * PT_N; i++)
            s[i] = x[i] = dr_input(T, in[i]);
        for (int i = 0; i < PT_N; i++)
            particle(T, s + 4 * i);
        dr_real y = dr_const(0.0);
        for (int i = PT_N; i-- > 0;)
            y = dr_add(T, dr_mul(T, s[4 * i], s[4 * i + 1]), y);
        check(dr_gradient(T, y, 4 * PT_N, x, g), "gradient");
        bench_use(g);
    }
    check_len(a->prog, a->size);
    return sum(4 * PT_N, g);
}

/*
 * The fork-join version of fparticles (the four particles as parallel jobs,
 * BENCH_THREADS threads) is its own executable, fparticles_par.c; this one
 * exits with status 2 for "fparticles-fork".
 */

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    double (*const run[P_COUNT])(const bench_args *) = {
        [P_FMULT] = run_fmult,
        [P_FDOTPROD] = run_fdotprod,
        [P_FSUMMATVEC] = run_fsummatvec,
        [P_FROTVECQUAT] = run_frotvecquat,
        [P_FNEURAL] = run_fneural,
        [P_FPARTICLES] = run_fparticles,
        [P_FPARTICLES_FORK] = NULL,
    };
    if (!run[a.prog]) {
        fprintf(stderr, "dualrev-bench: %s not implemented yet\n",
                bench_prog_names[a.prog]);
        return 2;
    }
    T = dr_tape_new();
    if (!T) {
        fprintf(stderr, "dualrev-bench: out of memory\n");
        return 3;
    }
    double c = run[a.prog](&a);
    check(dr_tape_status(T), "tape");
    printf("%.10g\n", c);
    dr_tape_free(T);
    return 0;
}
