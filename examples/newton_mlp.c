/*
 * newton_mlp.c - train a small MLP (4 -> 8 tanh -> 3, softmax
 * cross-entropy over a batch of 48, written with the array operations) by
 * damped Newton steps (Levenberg-Marquardt): each step solves
 * (H + lambda I) d = -g by conjugate gradients whose products H v are
 * Hessian-vector products through the array operations (dr_hvp over the
 * weights' tangent seeds, dr_arr_hvp to read), on the loss recorded once
 * per step at order 2.  The exit status says whether every product checked
 * agreed with central differences of the gradient and the loss came down.
 */
#include <dualrev.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { NB = 48, NI = 4, NH = 8, NO = 3 };
/* the parameters, packed: W1 (NH x NI), b1, W2 (NO x NH), b2 */
enum { OW1 = 0, OB1 = OW1 + NH * NI, OW2 = OB1 + NH, OB2 = OW2 + NO * NH,
       NP = OB2 + NO };

static double X[NB * NI], Y[NB * NO]; /* inputs, one-hot classes */

typedef struct net {
    dr_arr p[4]; /* W1, b1, W2, b2 */
    dr_real loss;
} net;

static const int off[4] = {OW1, OB1, OW2, OB2};

/* the mean cross-entropy plus a small weight penalty, on a cleared tape */
static net record(dr_tape *t, const double *P)
{
    net n;
    dr_tape_clear(t);
    n.p[0] = dr_arr_input_ref(t, 2, NH, NI, P + OW1);
    n.p[1] = dr_arr_input_ref(t, 1, NH, 1, P + OB1);
    n.p[2] = dr_arr_input_ref(t, 2, NO, NH, P + OW2);
    n.p[3] = dr_arr_input_ref(t, 1, NO, 1, P + OB2);
    dr_arr x = dr_arr_const(t, 2, NB, NI, X), y = dr_arr_const(t, 2, NB, NO, Y);
    dr_arr h = dr_arr_map(t, DR_FN_TANH,
                          dr_arr_add_rowvec(t, dr_arr_matmul(t, x, 0, n.p[0], 1), n.p[1]));
    dr_arr z = dr_arr_add_rowvec(t, dr_arr_matmul(t, h, 0, n.p[2], 1), n.p[3]);
    dr_real ce = dr_sub(t, dr_arr_sum(t, dr_arr_logsumexp_rows(t, z)),
                        dr_arr_dot(t, y, z));
    dr_real l2 = dr_add(t, dr_arr_dot(t, n.p[0], n.p[0]), dr_arr_dot(t, n.p[2], n.p[2]));
    n.loss = dr_add(t, dr_mul(t, ce, dr_const(1.0 / NB)), dr_mul(t, l2, dr_const(1e-3)));
    return n;
}

static void gradient(dr_tape *t, const net *n, double *g)
{
    dr_adjoints_clear(t);
    dr_seed(t, n->loss.idx, 1.0);
    dr_reverse(t);
    for (int k = 0; k < 4; k++)
        dr_arr_adjoint(t, n->p[k].idx, g + off[k]);
}

/* hv = H v: the direction as the weights' tangent seeds, one product */
static void hvp(dr_tape *t, const net *n, const double *v, double *hv)
{
    dr_arr_tangents_clear(t);
    for (int k = 0; k < 4; k++)
        dr_arr_tangent_seed(t, n->p[k].idx, v + off[k]);
    dr_hvp(t, n->loss, 0, NULL, NULL, NULL);
    for (int k = 0; k < 4; k++)
        dr_arr_hvp(t, n->p[k].idx, hv + off[k]);
}

static double dot(const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < NP; i++)
        s += a[i] * b[i];
    return s;
}

/* the largest relative difference between H v and central differences of
   the gradient along v (recorded afresh at P +- h v, order 1) */
static double check_hvp(const double *P, const double *v, const double *hv)
{
    dr_tape *u = dr_tape_new();
    double Pp[NP], gp[NP], gm[NP], h = 1e-5, worst = 0.0;
    for (int side = 0; side < 2; side++) {
        for (int i = 0; i < NP; i++)
            Pp[i] = P[i] + (side ? -h : h) * v[i];
        net n = record(u, Pp);
        gradient(u, &n, side ? gm : gp);
    }
    for (int i = 0; i < NP; i++) {
        double fd = (gp[i] - gm[i]) / (2 * h);
        double e = fabs(hv[i] - fd) / (1e-3 + fabs(fd));
        worst = e > worst ? e : worst;
    }
    dr_tape_free(u);
    return worst;
}

int main(void)
{
    /* three classes on the sign pattern of two features, a little noise */
    for (int b = 0; b < NB; b++) {
        for (int i = 0; i < NI; i++)
            X[b * NI + i] = sin(1.7 * b + 2.3 * i) + 0.3 * cos(5.1 * b * (i + 1));
        int c = X[b * NI] > 0 ? (X[b * NI + 1] > 0 ? 0 : 1) : 2;
        for (int o = 0; o < NO; o++)
            Y[b * NO + o] = o == c;
    }
    double P[NP];
    for (int i = 0; i < NP; i++)
        P[i] = 0.3 * sin(0.9 * i + 0.4);

    dr_tape *t = dr_tape_new();
    dr_tape_set_order(t, 2); /* before recording: second-order rules kept */
    dr_tape *u = dr_tape_new(); /* trial points */
    int bad = 0;
    double first = 0.0, lambda = 1e-1, worst = 0.0;
    net n = record(t, P);
    first = n.loss.val;
    for (int step = 0; step < 12; step++) {
        if (dr_tape_status(t) != DR_OK)
            return 2;
        double g[NP], d[NP] = {0}, r[NP], q[NP], Hq[NP];
        gradient(t, &n, g);
        /* conjugate gradients on (H + lambda I) d = -g, 30 products at
           most, on the tape as recorded at P */
        for (int i = 0; i < NP; i++)
            r[i] = q[i] = -g[i];
        double rr = dot(r, r);
        for (int it = 0; it < 30 && rr > 1e-24; it++) {
            hvp(t, &n, q, Hq);
            if (it == 0) { /* the first product of a step, checked */
                double e = check_hvp(P, q, Hq);
                worst = e > worst ? e : worst;
            }
            for (int i = 0; i < NP; i++)
                Hq[i] += lambda * q[i];
            double qHq = dot(q, Hq);
            if (qHq <= 0)
                break; /* negative curvature: keep what we have */
            double a = rr / qHq;
            for (int i = 0; i < NP; i++) {
                d[i] += a * q[i];
                r[i] -= a * Hq[i];
            }
            double rr2 = dot(r, r);
            for (int i = 0; i < NP; i++)
                q[i] = r[i] + rr2 / rr * q[i];
            rr = rr2;
        }
        /* take the step if the loss comes down (less damping next time),
           else more damping */
        double Pn[NP];
        for (int i = 0; i < NP; i++)
            Pn[i] = P[i] + d[i];
        double trial = record(u, Pn).loss.val;
        printf("step %2d: loss %.6f, |g| %.2e, lambda %.1e%s\n", step,
               n.loss.val, sqrt(dot(g, g)), lambda,
               trial < n.loss.val ? "" : " (step refused)");
        if (trial < n.loss.val) {
            memcpy(P, Pn, sizeof P);
            lambda = lambda / 3 > 1e-6 ? lambda / 3 : 1e-6;
            n = record(t, P);
        } else {
            lambda *= 4;
        }
    }
    dr_tape_free(u);
    dr_tape_free(t);
    printf("largest relative difference of H v from differences of the "
           "gradient: %.1e\n", worst);
    bad |= !(worst < 1e-5) || !(n.loss.val < 0.25 * first);
    printf("%s\n", bad ? "FAILED" : "every H v agreed with differences of the gradient");
    return bad;
}
