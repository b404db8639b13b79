/*
 * primal_bench.c - the six benchmark programs as plain C on doubles: the
 * same operations in the same order as bench/c/dualrev_bench.c, no
 * derivatives.  This is the floor a gradient cannot beat; gradient / primal
 * is the overhead of AD.
 *
 *     primal-bench <program> <size> <reps>
 *
 * One repetition evaluates the function once (frotvecquat: once, not three
 * times - the Jacobian needs one forward pass).  The inputs are built once;
 * a compiler barrier at the top of each repetition keeps gcc from hoisting
 * the evaluation out of the loop.  Checksum: the sum of the outputs.
 */
#include "bench_common.h"

static double dot(size_t n, const double *xs, const double *ys)
{
    double acc = 0.0;
    for (size_t i = n; i-- > 0;)
        acc = xs[i] * ys[i] + acc;
    return acc;
}

static double run_fmult(const bench_args *a)
{
    double in[2] = {3.0, 4.0}, y = 0;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        y = in[0] * in[1];
        bench_use(y);
    }
    return y;
}

static double run_fdotprod(const bench_args *a)
{
    size_t n = (size_t)a->size;
    double *x = bench_xmalloc(2 * n * sizeof(double)), y = 0;
    bench_dot_inputs(a->size, x, x + n);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(x);
        y = dot(n, x, x + n);
        bench_use(y);
    }
    free(x);
    return y;
}

static double run_fsummatvec(const bench_args *a)
{
    size_t k = (size_t)bench_summatvec_k(a->size);
    double *x = bench_xmalloc((k * k + k) * sizeof(double)), y = 0;
    double *rows = bench_xmalloc(k * sizeof(double));
    bench_summatvec_inputs((long)k, x, x + k * k);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(x);
        for (size_t i = 0; i < k; i++)
            rows[i] = dot(k, x + k * k, x + i * k);
        y = 0.0;
        for (size_t i = k; i-- > 0;)
            y = rows[i] + y;
        bench_use(y);
    }
    free(x);
    free(rows);
    return y;
}

static double run_frotvecquat(const bench_args *a)
{
    double in[7], o[3] = {0, 0, 0};
    memcpy(in, bench_rot_inputs, sizeof in);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        double vx = in[0], vy = in[1], vz = in[2];
        double ux = in[3], uy = in[4], uz = in[5], s = in[6];
        double k1 = 2.0 * (ux * vx + uy * vy + uz * vz);
        double k2 = s * s - (ux * ux + uy * uy + uz * uz);
        double k3 = 2.0 * s;
        double cx = uy * vz - uz * vy, cy = uz * vx - ux * vz,
               cz = ux * vy - uy * vx;
        o[0] = (k1 * ux + k2 * vx) + k3 * cx;
        o[1] = (k1 * uy + k2 * vy) + k3 * cy;
        o[2] = (k1 * uz + k2 * vz) + k3 * cz;
        bench_use(o);
    }
    return o[0] + o[1] + o[2];
}

static void layer(int out, int in, const double *w, const double *b,
                  const double *x, double *y)
{
    for (int i = 0; i < out; i++) {
        double z = dot((size_t)in, w + (size_t)i * in, x) + b[i];
        y[i] = z > 0.0 ? z : 0.0;
    }
}

static double run_fneural(const bench_args *a)
{
    static double p[NN_NPARAM];
    double y = 0;
    bench_neural_inputs(p);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(p);
        const double *w1 = p, *b1 = w1 + NN_H1 * NN_IN, *w2 = b1 + NN_H1,
                     *b2 = w2 + NN_H2 * NN_H1, *in = b2 + NN_H2;
        double h1[NN_H1], h2[NN_H2], e[NN_H2];
        layer(NN_H1, NN_IN, w1, b1, in, h1);
        layer(NN_H2, NN_H1, w2, b2, h1, h2);
        double m = 0.0;
        for (int i = 0; i < NN_H2; i++)
            m = h2[i] > m ? h2[i] : m;
        for (int i = 0; i < NN_H2; i++)
            e[i] = exp(h2[i] - m);
        double s = 0.0;
        for (int i = NN_H2; i-- > 0;)
            s = e[i] + s;
        y = 0.0;
        for (int i = NN_H2; i-- > 0;)
            y = e[i] / s + y;
        bench_use(y);
    }
    return y;
}

static double run_fparticles(const bench_args *a)
{
    double in[4 * PT_N], y = 0;
    bench_particle_inputs(in);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        y = 0.0;
        double fin[PT_N];
        for (int i = 0; i < PT_N; i++) {
            double px = in[4 * i], py = in[4 * i + 1], vx = in[4 * i + 2],
                   vy = in[4 * i + 3];
            for (int k = 0; k < PT_STEPS; k++) {
                double ax = -0.5 * px + -0.2 * vx, ay = -0.5 * py + -0.2 * vy;
                double npx = px + PT_DT * vx, npy = py + PT_DT * vy;
                vx = vx + PT_DT * ax;
                vy = vy + PT_DT * ay;
                px = npx;
                py = npy;
            }
            fin[i] = px * py;
        }
        for (int i = PT_N; i-- > 0;)
            y = fin[i] + y;
        bench_use(y);
    }
    return y;
}

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
        /* the primal of the forked program is the sequential primal */
        [P_FPARTICLES_FORK] = run_fparticles,
    };
    printf("%.10g\n", run[a.prog](&a));
    return 0;
}
