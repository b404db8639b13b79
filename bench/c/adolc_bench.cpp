/*
 * adolc_bench.cpp - the six benchmark programs with ADOL-C (Debian
 * libadolc-dev), the established operator-overloading, tape-based AD tool for
 * C/C++.
 *
 *     adolc-bench <program> <size> <reps>
 *
 * What one repetition measures, to compare like with like with dualrev
 * (which records a fresh tape per unit): the program is RETAPED every
 * repetition - trace_on, one adouble per independent variable (<<=), the
 * forward pass on adoubles, the output (>>=), trace_off - and then the
 * standard driver is called: gradient() (a zero-order forward sweep over the
 * tape that keeps the Taylor values, then a first-order reverse sweep), or
 * for frotvecquat jacobian() (3 outputs < 7 inputs, so one forward sweep and
 * a vector reverse sweep over 3 directions).  The tape buffers are sized by
 * trace_on to hold the whole tape in memory (ADOL-C would otherwise spill
 * tapes bigger than its 524288-element default buffers to files).  The
 * programs perform the same operations in the same order as
 * bench/c/dualrev_bench.c.  relu and the running max of the softmax branch
 * on values (legitimate because every unit is retaped) with dualrev's
 * convention at ties (ADOL-C's fmax would warn at ties and record extra
 * negations).
 *
 * Checksum: the sum of all gradient (Jacobian) entries of the last rep.
 */
#include <adolc/adolc.h>

#include <vector>

#include "bench_common.h"

static const short TAG = 1;

/* trace_on with in-memory buffers for a tape of about `nodes` operations */
static void start(long nodes)
{
    unsigned n = (unsigned)(nodes + 1024);
    trace_on(TAG, 0, 2 * n, 4 * n, 2 * n, 2 * n);
}

static double sum(size_t n, const double *g)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g[i];
    return s;
}

static double run_fmult(const bench_args *a)
{
    double in[2] = {3.0, 4.0}, g[2] = {0, 0}, y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(bench_tape_nodes(a->prog, a->size));
        {
            adouble x0, x1, ay;
            x0 <<= in[0];
            x1 <<= in[1];
            ay = x0 * x1;
            ay >>= y;
        }
        trace_off();
        gradient(TAG, 2, in, g);
        bench_use(g);
    }
    return g[0] + g[1];
}

/* sum' (zipWith (*) xs ys), sum' a right fold onto 0 */
static adouble dot(size_t n, const adouble *xs, const adouble *ys)
{
    adouble acc = 0.0;
    for (size_t i = n; i-- > 0;)
        acc = xs[i] * ys[i] + acc;
    return acc;
}

static double run_fdotprod(const bench_args *a)
{
    size_t n = (size_t)a->size;
    std::vector<double> xv(2 * n), g(2 * n, 0.0);
    bench_dot_inputs(a->size, xv.data(), xv.data() + n);
    double y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        start(bench_tape_nodes(a->prog, a->size));
        {
            std::vector<adouble> x(2 * n);
            for (size_t i = 0; i < 2 * n; i++)
                x[i] <<= xv[i];
            adouble ay = dot(n, x.data(), x.data() + n);
            ay >>= y;
        }
        trace_off();
        gradient(TAG, (int)(2 * n), xv.data(), g.data());
        bench_use(g.data());
    }
    return sum(2 * n, g.data());
}

static double run_fsummatvec(const bench_args *a)
{
    size_t k = (size_t)bench_summatvec_k(a->size), nin = k * k + k;
    std::vector<double> xv(nin), g(nin, 0.0);
    bench_summatvec_inputs((long)k, xv.data(), xv.data() + k * k);
    double y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(xv.data());
        start(bench_tape_nodes(a->prog, a->size));
        {
            std::vector<adouble> x(nin);
            for (size_t i = 0; i < nin; i++)
                x[i] <<= xv[i];
            const adouble *m = x.data(), *v = x.data() + k * k;
            std::vector<adouble> rows(k);
            for (size_t i = 0; i < k; i++)
                rows[i] = dot(k, v, m + i * k);
            adouble ay = 0.0;
            for (size_t i = k; i-- > 0;)
                ay = rows[i] + ay;
            ay >>= y;
        }
        trace_off();
        gradient(TAG, (int)nin, xv.data(), g.data());
        bench_use(g.data());
    }
    return sum(nin, g.data());
}

static double run_frotvecquat(const bench_args *a)
{
    double in[7], y[3];
    memcpy(in, bench_rot_inputs, sizeof in);
    double **J = myalloc2(3, 7);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(bench_tape_nodes(a->prog, a->size));
        {
            adouble x[7];
            for (int i = 0; i < 7; i++)
                x[i] <<= in[i];
            adouble &vx = x[0], &vy = x[1], &vz = x[2];
            adouble &ux = x[3], &uy = x[4], &uz = x[5], &s = x[6];
            adouble k1 = 2.0 * (ux * vx + uy * vy + uz * vz);
            adouble k2 = s * s - (ux * ux + uy * uy + uz * uz);
            adouble k3 = 2.0 * s;
            adouble cx = uy * vz - uz * vy, cy = uz * vx - ux * vz,
                    cz = ux * vy - uy * vx;
            adouble o0 = (k1 * ux + k2 * vx) + k3 * cx;
            adouble o1 = (k1 * uy + k2 * vy) + k3 * cy;
            adouble o2 = (k1 * uz + k2 * vz) + k3 * cz;
            o0 >>= y[0];
            o1 >>= y[1];
            o2 >>= y[2];
        }
        trace_off();
        jacobian(TAG, 3, 7, in, J);
        bench_use(J[0]);
    }
    double s = 0;
    for (int i = 0; i < 3; i++)
        s += sum(7, J[i]);
    myfree2(J);
    return s;
}

/* relu: derivative 0 at 0, as dr_relu */
static adouble relu(const adouble &x)
{
    if (x.getValue() > 0.0)
        return x;
    return adouble(0.0);
}

static void layer(int out, int in, const adouble *w, const adouble *b,
                  const adouble *x, adouble *y)
{
    for (int i = 0; i < out; i++)
        y[i] = relu(dot((size_t)in, w + (size_t)i * in, x) + b[i]);
}

static double run_fneural(const bench_args *a)
{
    static double pv[NN_NPARAM], g[NN_NPARAM];
    bench_neural_inputs(pv);
    double y;
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(pv);
        start(bench_tape_nodes(a->prog, a->size));
        {
            std::vector<adouble> p(NN_NPARAM);
            for (int i = 0; i < NN_NPARAM; i++)
                p[i] <<= pv[i];
            const adouble *w1 = p.data(), *b1 = w1 + NN_H1 * NN_IN,
                          *w2 = b1 + NN_H1, *b2 = w2 + NN_H2 * NN_H1,
                          *in = b2 + NN_H2;
            adouble h1[NN_H1], h2[NN_H2], e[NN_H2];
            layer(NN_H1, NN_IN, w1, b1, in, h1);
            layer(NN_H2, NN_H1, w2, b2, h1, h2);
            adouble m = 0.0;
            for (int i = 0; i < NN_H2; i++)
                if (h2[i].getValue() > m.getValue()) /* tie: keep m */
                    m = h2[i];
            for (int i = 0; i < NN_H2; i++)
                e[i] = exp(h2[i] - m);
            adouble s = 0.0;
            for (int i = NN_H2; i-- > 0;)
                s = e[i] + s;
            adouble ay = 0.0;
            for (int i = NN_H2; i-- > 0;)
                ay = e[i] / s + ay;
            ay >>= y;
        }
        trace_off();
        gradient(TAG, NN_NPARAM, pv, g);
        bench_use(g);
    }
    return sum(NN_NPARAM, g);
}

static double run_fparticles(const bench_args *a)
{
    double in[4 * PT_N], g[4 * PT_N] = {0}, y;
    bench_particle_inputs(in);
    for (long r = 0; r < a->reps; r++) {
        bench_clobber(in);
        start(bench_tape_nodes(a->prog, a->size));
        {
            adouble x[4 * PT_N], fin[PT_N];
            for (int i = 0; i < 4 * PT_N; i++)
                x[i] <<= in[i];
            for (int i = 0; i < PT_N; i++) {
                adouble px = x[4 * i], py = x[4 * i + 1], vx = x[4 * i + 2],
                        vy = x[4 * i + 3];
                for (int k = 0; k < PT_STEPS; k++) {
                    adouble ax = -0.5 * px + -0.2 * vx;
                    adouble ay = -0.5 * py + -0.2 * vy;
                    adouble npx = px + PT_DT * vx, npy = py + PT_DT * vy;
                    vx = vx + PT_DT * ax;
                    vy = vy + PT_DT * ay;
                    px = npx;
                    py = npy;
                }
                fin[i] = px * py;
            }
            adouble ay = 0.0;
            for (int i = PT_N; i-- > 0;)
                ay = fin[i] + ay;
            ay >>= y;
        }
        trace_off();
        gradient(TAG, 4 * PT_N, in, g);
        bench_use(g);
    }
    return sum(4 * PT_N, g);
}

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    double (*run)(const bench_args *) = nullptr;
    switch (a.prog) {
    case P_FMULT: run = run_fmult; break;
    case P_FDOTPROD: run = run_fdotprod; break;
    case P_FSUMMATVEC: run = run_fsummatvec; break;
    case P_FROTVECQUAT: run = run_frotvecquat; break;
    case P_FNEURAL: run = run_fneural; break;
    case P_FPARTICLES:
    case P_FPARTICLES_FORK: /* ADOL-C runs the sequential program */
        run = run_fparticles; break;
    default:
        return 2;
    }
    printf("%.10g\n", run(&a));
    return 0;
}
