/* test_gbtool.c - dualrev-c without GradBench: a scripted protocol session,
   and every eval's derivatives against central finite differences of its
   own primal (make test-gradbench) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evals.h"

/* ------------------------------------------------------------ helpers */

/* the output of f on input (one run), or fails the test */
static json_t *call(const gb_function *f, json_t *input)
{
    char err[GB_ERRLEN] = "";
    void *s = f->prepare(input, err);
    if (!s)
        fail_msg("%s/%s prepare: %s", f->module, f->name, err);
    if (f->run(s, err))
        fail_msg("%s/%s run: %s", f->module, f->name, err);
    json_t *out = f->output(s, err);
    f->release(s);
    if (!out)
        fail_msg("%s/%s output: %s", f->module, f->name, err);
    json_decref(input);
    return out;
}

/* a deterministic pseudo-random number in [0, 1) */
static double rnd(void)
{
    static uint64_t state = 88172645463325252u;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static json_t *vec(const double *x, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_real(x[i]));
    return a;
}

static void assert_close(double got, double want, double tol, const char *what,
                         size_t i)
{
    if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
        fail_msg("%s[%zu]: %.17g, finite differences %.17g", what, i, got, want);
}

/* a scalar primal of x (the vector field key of an input built by mk) */
typedef json_t *(*mk_input)(const double *x, size_t n);

/* the gradient function's output against central differences of the
   primal's scalar output (or of element `elem` of a vector output) */
static void check_gradient(const gb_function *primal, const gb_function *grad,
                           mk_input mk, const double *x0, size_t n, long elem,
                           double h, double tol)
{
    json_t *g = call(grad, mk(x0, n));
    assert_int_equal(json_array_size(g), n);
    double *x = malloc(n * sizeof *x);
    memcpy(x, x0, n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        double f[2];
        for (int k = 0; k < 2; k++) {
            x[i] = x0[i] + (k ? -h : h);
            json_t *y = call(primal, mk(x, n));
            f[k] = elem < 0 ? json_number_value(y)
                            : json_number_value(json_array_get(y, (size_t)elem));
            json_decref(y);
        }
        x[i] = x0[i];
        assert_close(json_number_value(json_array_get(g, i)), (f[0] - f[1]) / (2 * h),
                     tol, grad->module, i);
    }
    free(x);
    json_decref(g);
}

/* ----------------------------------------------------------- protocol */

/* the responses of gb_serve to the lines of script */
static json_t **session(const char *script, size_t *count)
{
    FILE *in = fmemopen((void *)script, strlen(script), "r");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(in);
    assert_non_null(out);
    assert_int_equal(gb_serve(in, out), 0);
    fclose(in);
    fclose(out);
    json_t **r = calloc(64, sizeof *r);
    size_t k = 0;
    for (char *line = strtok(buf, "\n"); line && k < 64; line = strtok(NULL, "\n")) {
        json_error_t e;
        r[k] = json_loads(line, 0, &e);
        if (!r[k])
            fail_msg("response %zu is not JSON: %s", k, line);
        k++;
    }
    free(buf);
    *count = k;
    return r;
}

static int is_success(json_t *r)
{
    return json_is_true(json_object_get(r, "success"));
}

static void test_protocol(void **state)
{
    (void)state;
    const char *script =
        "{\"id\":0,\"kind\":\"start\",\"eval\":\"hello\"}\n"
        "{\"id\":1,\"kind\":\"define\",\"module\":\"hello\"}\n"
        "{\"id\":2,\"kind\":\"evaluate\",\"module\":\"hello\",\"function\":\"square\",\"input\":3}\n"
        "{\"id\":3,\"kind\":\"evaluate\",\"module\":\"det\",\"function\":\"gradient\","
        "\"input\":{\"A\":[1,2,3,4],\"ell\":2,\"min_runs\":3,\"min_seconds\":0}}\n"
        "{\"id\":4,\"kind\":\"analysis\",\"of\":3,\"valid\":true}\n"
        "{\"id\":5,\"kind\":\"define\",\"module\":\"nosuch\"}\n"
        "{\"id\":6,\"kind\":\"evaluate\",\"module\":\"det\",\"function\":\"nosuch\",\"input\":{}}\n"
        "{\"id\":7,\"kind\":\"evaluate\",\"module\":\"det\",\"function\":\"primal\","
        "\"input\":{\"A\":[1,2,3],\"ell\":2}}\n"
        "{\"id\":8,\"kind\":\"evaluate\",\"module\":\"det\",\"function\":\"primal\","
        "\"input\":{\"A\":[1,2,3,4],\"ell\":2,\"min_runs\":\"many\"}}\n"
        "{\"id\":9,\"kind\":\"evaluate\",\"module\":\"kmeans\",\"function\":\"dir\","
        "\"input\":{\"points\":[[1,2],[3]],\"centroids\":[[1,2]]}}\n"
        "this is not JSON\n"
        "\n"
        "[1,2,3]\n"
        "{\"id\":10}\n"
        "{\"id\":11,\"kind\":\"jump\"}\n"
        "{\"id\":12,\"kind\":\"evaluate\",\"module\":\"lse\",\"function\":\"gradient\"}\n"
        "{\"id\":13,\"kind\":\"evaluate\",\"module\":\"ode\",\"function\":\"primal\","
        "\"input\":{\"x\":[1e308,1e308,1e308],\"s\":1}}\n"
        "{\"id\":14,\"kind\":\"end\"}\n"
        "{\"id\":15,\"kind\":\"start\"}\n";
    size_t n;
    json_t **r = session(script, &n);
    assert_int_equal(n, 16); /* one per line before end, but the blank one */
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(json_integer_value(json_object_get(r[i], "id")), (json_int_t)i);
    assert_string_equal(json_string_value(json_object_get(r[0], "tool")), "dualrev-c");
    assert_true(is_success(r[1]));
    assert_true(is_success(r[2]));
    assert_true(json_number_value(json_object_get(r[2], "output")) == 9.0);
    /* det [[1,2],[3,4]]: gradient [4,-3,-2,1], three timed runs */
    assert_true(is_success(r[3]));
    json_t *g = json_object_get(r[3], "output");
    const double want[4] = {4, -3, -2, 1};
    for (size_t i = 0; i < 4; i++)
        assert_true(json_number_value(json_array_get(g, i)) == want[i]);
    json_t *t = json_object_get(r[3], "timings");
    assert_int_equal(json_array_size(t), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(t, 0), "name")),
                        "evaluate");
    assert_true(json_is_integer(json_object_get(json_array_get(t, 0), "nanoseconds")));
    /* analysis: the id alone */
    assert_int_equal(json_object_size(r[4]), 1);
    /* errors: responses with success false and a message, never a crash */
    for (size_t i = 5; i < n; i++) {
        if (i >= 10)
            assert_true(json_object_get(r[i], "id") != NULL);
        assert_false(is_success(r[i]));
        assert_non_null(json_string_value(json_object_get(r[i], "error")));
    }
    assert_true(json_is_null(json_object_get(r[10], "id"))); /* not JSON */
    assert_true(json_is_null(json_object_get(r[11], "id"))); /* not an object */
    assert_int_equal(json_integer_value(json_object_get(r[12], "id")), 10);
    assert_non_null(strstr(json_string_value(json_object_get(r[15], "error")), "not finite"));
    for (size_t i = 0; i < n; i++)
        json_decref(r[i]);
    free(r);
}

/* -------------------------------------------------- first derivatives */

static void test_hello(void **state)
{
    (void)state;
    json_t *d = call(&gb_hello_double, json_real(1.5));
    json_t *p = call(&gb_hello_square, json_real(1.5 + 1e-6)),
           *m = call(&gb_hello_square, json_real(1.5 - 1e-6));
    assert_close(json_number_value(d),
                 (json_number_value(p) - json_number_value(m)) / 2e-6, 1e-8, "hello", 0);
    json_decref(d);
    json_decref(p);
    json_decref(m);
}

static size_t det_ell;
static json_t *det_input(const double *x, size_t n)
{
    return json_pack("{s:o, s:I}", "A", vec(x, n), "ell", (json_int_t)det_ell);
}

static void test_det(void **state)
{
    (void)state;
    for (det_ell = 1; det_ell <= 5; det_ell++) {
        double A[25];
        for (size_t i = 0; i < det_ell * det_ell; i++)
            A[i] = rnd();
        check_gradient(&gb_det_primal, &gb_det_gradient, det_input, A,
                       det_ell * det_ell, -1, 1e-6, 1e-7);
    }
}

static json_t *lse_input(const double *x, size_t n)
{
    return json_pack("{s:o}", "x", vec(x, n));
}

static void test_lse(void **state)
{
    (void)state;
    double x[9];
    for (size_t i = 0; i < 9; i++)
        x[i] = 20 * rnd() - 10;
    check_gradient(&gb_lse_primal, &gb_lse_gradient, lse_input, x, 9, -1, 1e-6, 1e-7);
}

static json_t *llsq_input(const double *x, size_t n)
{
    return json_pack("{s:o, s:i}", "x", vec(x, n), "n", 11);
}

static void test_llsq(void **state)
{
    (void)state;
    double x[5];
    for (size_t i = 0; i < 5; i++)
        x[i] = rnd();
    check_gradient(&gb_llsq_primal, &gb_llsq_gradient, llsq_input, x, 5, -1, 1e-6, 1e-7);
}

static json_t *ode_input(const double *x, size_t n)
{
    return json_pack("{s:o, s:i}", "x", vec(x, n), "s", 7);
}

static void test_ode(void **state)
{
    (void)state;
    double x[6];
    for (size_t i = 0; i < 6; i++)
        x[i] = rnd();
    size_t saved = gb_ode_tape_max;
    /* recorded whole, then as a checkpointed loop */
    check_gradient(&gb_ode_primal, &gb_ode_gradient, ode_input, x, 6, 5, 1e-6, 1e-7);
    gb_ode_tape_max = 0;
    check_gradient(&gb_ode_primal, &gb_ode_gradient, ode_input, x, 6, 5, 1e-6, 1e-7);
    gb_ode_tape_max = saved;
}

/* ------------------------------------------------- second derivatives */

/* kmeans dir = J / H: J and H (diagonal) by central differences of cost */
static void test_kmeans(void **state)
{
    (void)state;
    enum { N = 40, K = 4, D = 3 };
    double P[N][D], C[K][D];
    for (size_t i = 0; i < N; i++)
        for (size_t l = 0; l < D; l++)
            P[i][l] = rnd();
    memcpy(C, P[N - K], sizeof C);
    json_t *jp = json_array();
    for (size_t i = 0; i < N; i++)
        json_array_append_new(jp, vec(P[i], D));
    json_t *dir = NULL;
    double h = 1e-4;
    for (int pass = 0; pass <= K * D; pass++) {
        double f[3];
        for (int k = 0; k < (pass ? 3 : 1); k++) {
            double Ck[K][D];
            memcpy(Ck, C, sizeof C);
            if (pass)
                Ck[(pass - 1) / D][(pass - 1) % D] += (k - 1) * h;
            json_t *jc = json_array();
            for (size_t j = 0; j < K; j++)
                json_array_append_new(jc, vec(Ck[j], D));
            json_t *in = json_pack("{s:O, s:o}", "points", jp, "centroids", jc);
            if (!pass) {
                dir = call(&gb_kmeans_dir, in);
                break;
            }
            json_t *y = call(&gb_kmeans_cost, in);
            f[k] = json_number_value(y);
            json_decref(y);
        }
        if (!pass)
            continue;
        double J = (f[2] - f[0]) / (2 * h), H = (f[2] - 2 * f[1] + f[0]) / (h * h);
        size_t j = (size_t)(pass - 1) / D, l = (size_t)(pass - 1) % D;
        assert_close(json_number_value(json_array_get(json_array_get(dir, j), l)), J / H,
                     1e-5, "kmeans", (size_t)pass - 1);
    }
    json_decref(dir);
    json_decref(jp);
}

/* gmm: the parameters alpha (K), mu, q (K x D) and l (K x D(D-1)/2) in one
   vector, as an input of N points */
enum { GK = 2, GD = 3, GN = 6, GL = GD * (GD - 1) / 2, GP = GK + 2 * GK * GD + GK * GL };
static double gmm_x[GN * GD];

static json_t *rows(const double *x, size_t r, size_t c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r; i++)
        json_array_append_new(a, vec(x + i * c, c));
    return a;
}

static json_t *gmm_input(const double *p, size_t n)
{
    (void)n;
    return json_pack("{s:i, s:i, s:i, s:f, s:i, s:o, s:o, s:o, s:o, s:o}", "d", GD, "k", GK,
                     "n", GN, "gamma", 1.5, "m", 2, "alpha", vec(p, GK), "mu",
                     rows(p + GK, GK, GD), "q", rows(p + GK + GK * GD, GK, GD), "l",
                     rows(p + GK + 2 * GK * GD, GK, GL), "x", rows(gmm_x, GN, GD));
}

/* the jacobian's four fields, flattened in the order of gmm_input's vector */
static void test_gmm(void **state)
{
    (void)state;
    double p[GP], h = 1e-6;
    for (size_t i = 0; i < GN * GD; i++)
        gmm_x[i] = 2 * rnd() - 1;
    for (size_t i = 0; i < GP; i++)
        p[i] = rnd() - 0.5;
    json_t *jac = call(&gb_gmm_jacobian, gmm_input(p, GP));
    double g[GP];
    size_t o = 0;
    const char *keys[4] = {"alpha", "mu", "q", "l"};
    for (int f = 0; f < 4; f++) {
        json_t *v = json_object_get(jac, keys[f]);
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            if (json_is_array(e))
                for (size_t j = 0; j < json_array_size(e); j++)
                    g[o++] = json_number_value(json_array_get(e, j));
            else
                g[o++] = json_number_value(e);
        }
    }
    assert_int_equal(o, GP);
    json_decref(jac);
    for (size_t i = 0; i < GP; i++) {
        double f[2], x0 = p[i];
        for (int k = 0; k < 2; k++) {
            p[i] = x0 + (k ? -h : h);
            json_t *y = call(&gb_gmm_objective, gmm_input(p, GP));
            f[k] = json_number_value(y);
            json_decref(y);
        }
        p[i] = x0;
        assert_close(g[i], (f[0] - f[1]) / (2 * h), 1e-6, "gmm", i);
    }
}

static const char *modes[4] = {"rr", "rf", "fr", "ff"};

/* the outer gradients of saddle, each mode, against differences */
static void test_saddle(void **state)
{
    (void)state;
    const double start[2] = {1.0, 1.0}, x[2] = {0.3, -0.2}, h = 1e-6;
    char err[GB_ERRLEN];
    for (int m = 0; m < 4; m++) {
        double v = 0, g[2] = {0, 0};
        int of = modes[m][0] == 'f', inf = modes[m][1] == 'f';
        if (saddle_outer(of, inf, start, x, &v, g, err))
            fail_msg("saddle %s: %s", modes[m], err);
        for (size_t c = 0; c < 2; c++) {
            double xp[2] = {x[0], x[1]}, xm[2] = {x[0], x[1]}, fp = 0, fm = 0;
            xp[c] += h;
            xm[c] -= h;
            if (saddle_outer(of, inf, start, xp, &fp, NULL, err) ||
                saddle_outer(of, inf, start, xm, &fm, NULL, err))
                fail_msg("saddle %s: %s", modes[m], err);
            assert_close(g[c], (fp - fm) / (2 * h), 1e-5, "saddle", c);
        }
    }
    /* the whole descent: GradBench's expected point, in every mode */
    const gb_function *fns[4] = {&gb_saddle_rr, &gb_saddle_rf, &gb_saddle_fr, &gb_saddle_ff};
    for (int m = 0; m < 4; m++) {
        json_t *out = call(fns[m], json_pack("{s:[f,f]}", "start", 1.0, 1.0));
        for (size_t i = 0; i < 4; i++)
            assert_close(json_number_value(json_array_get(out, i)), 8.246324826140356e-06,
                         1e-9, "saddle", i);
        json_decref(out);
    }
}

static void test_particle(void **state)
{
    (void)state;
    char err[GB_ERRLEN];
    const double h = 1e-6;
    for (int m = 0; m < 4; m++) {
        int of = modes[m][0] == 'f', inf = modes[m][1] == 'f';
        for (double w = 0.0; w <= 0.2; w += 0.1) {
            double v = 0, g = 0, fp = 0, fm = 0;
            if (particle_outer(of, inf, w, &v, &g, err) ||
                particle_outer(of, inf, w + h, &fp, NULL, err) ||
                particle_outer(of, inf, w - h, &fm, NULL, err))
                fail_msg("particle %s: %s", modes[m], err);
            assert_close(g, (fp - fm) / (2 * h), 1e-5, "particle", 0);
        }
    }
    const gb_function *fns[4] = {&gb_particle_rr, &gb_particle_rf, &gb_particle_fr,
                                 &gb_particle_ff};
    for (int m = 0; m < 4; m++) {
        json_t *out = call(fns[m], json_pack("{s:f}", "w", 0.0));
        assert_close(json_number_value(out), 0.2071918746486116, 1e-9, "particle", 0);
        json_decref(out);
    }
}

/* ------------------------------------------------- lstm, ba and ht */

/* an evaluate message of f on input through the protocol: the response
   must be a failure whose message holds want */
static void check_refused(const gb_function *f, json_t *input, const char *want)
{
    json_t *msg = json_pack("{s:i, s:s, s:s, s:s, s:o}", "id", 1, "kind", "evaluate",
                            "module", f->module, "function", f->name, "input", input);
    char *line = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    size_t len = strlen(line), n;
    char *script = malloc(len + 2);
    memcpy(script, line, len);
    script[len] = '\n';
    script[len + 1] = 0;
    free(line);
    json_t **r = session(script, &n);
    free(script);
    assert_int_equal(n, 1);
    assert_false(is_success(r[0]));
    const char *e = json_string_value(json_object_get(r[0], "error"));
    if (!e || !strstr(e, want))
        fail_msg("%s/%s: error \"%s\", wanted \"%s\"", f->module, f->name, e ? e : "(none)", want);
    json_decref(r[0]);
    free(r);
}

/* a rows x cols matrix of JSON from x (row-major) */
static json_t *mat(const double *x, size_t rows, size_t cols)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rows; i++)
        json_array_append_new(a, vec(x + i * cols, cols));
    return a;
}

#define LL 2 /* layers */
#define LB 3 /* cells */
#define LC 5 /* characters */
#define LP (8 * LL * LB + 3 * LB)
static double lstm_state[2 * LL * LB], lstm_seq[LC * LB];

/* x: main_params (2 LL x 4 LB) then extra_params (3 x LB) */
static json_t *lstm_input(const double *x, size_t n)
{
    (void)n;
    return json_pack("{s:o, s:o, s:o, s:o}", "main_params", mat(x, 2 * LL, 4 * LB),
                     "extra_params", mat(x + 8 * LL * LB, 3, LB), "state",
                     mat(lstm_state, 2 * LL, LB), "sequence", mat(lstm_seq, LC, LB));
}

static void test_lstm(void **state)
{
    (void)state;
    double x[LP];
    for (size_t i = 0; i < LP; i++)
        x[i] = 2 * rnd() - 1;
    for (size_t i = 0; i < 2 * LL * LB; i++)
        lstm_state[i] = rnd();
    for (size_t i = 0; i < LC * LB; i++)
        lstm_seq[i] = rnd() < 0.5 ? 0.0 : 1.0;
    /* the gradient of every parameter (main, then extra) */
    check_gradient(&gb_lstm_objective, &gb_lstm_jacobian, lstm_input, x, LP, -1, 1e-6, 1e-6);
    /* a sequence of the wrong width */
    json_t *in = lstm_input(x, LP);
    json_object_set_new(in, "sequence", mat(lstm_seq, LC, LB - 1));
    check_refused(&gb_lstm_jacobian, in, "lstm: \"sequence\"");
}

#define BN 2  /* cameras */
#define BM 3  /* points */
static int BPP = 10; /* observations: one batch of the tape, or several */

/* x: the camera (11), the point (3), the weight */
static json_t *ba_input(const double *x, size_t n)
{
    (void)n;
    double feat[2] = {0.3, -0.2};
    return json_pack("{s:i, s:i, s:i, s:o, s:o, s:f, s:o}", "n", BN, "m", BM, "p", BPP, "cam",
                     vec(x, 11), "x", vec(x + 11, 3), "w", x[14], "feat", vec(feat, 2));
}

/* the residual k of the objective's output: the two reprojection errors
   of the first observation, the weight's */
static double ba_residual(json_t *o, int k)
{
    if (k < 2)
        return json_number_value(json_array_get(
            json_object_get(json_object_get(o, "reproj_error"), "elements"), (size_t)k));
    return json_number_value(json_object_get(json_object_get(o, "w_err"), "element"));
}

static void test_ba(void **state)
{
    (void)state;
    const double h = 1e-6;
    /* a rotation; none (the branch without one); a rotation and 600
       observations (the tape takes 256 at a time: three batches) */
    for (int c = 0; c < 3; c++) {
        double x[15];
        BPP = c == 2 ? 600 : 10;
        for (size_t i = 0; i < 15; i++)
            x[i] = 0.5 * rnd() - 0.25;
        x[5] = -3.0; /* the centre 3 behind the point: depth about 3 */
        x[6] = 1.0 + rnd(); /* focal length */
        x[14] = 0.5 + rnd(); /* weight */
        if (c == 1)
            x[0] = x[1] = x[2] = 0.0;
        json_t *o = call(&gb_ba_objective, ba_input(x, 15));
        assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "reproj_error"),
                                                            "repeated")), BPP);
        json_decref(o);
        json_t *J = call(&gb_ba_jacobian, ba_input(x, 15));
        json_t *rows = json_object_get(J, "rows"), *cols = json_object_get(J, "cols"),
               *vals = json_object_get(J, "vals");
        assert_int_equal(json_array_size(rows), 31);
        assert_int_equal(json_array_size(cols), 31);
        assert_int_equal(json_array_size(vals), 31);
        /* rows: 15 entries each reprojection row, one each weight row */
        for (size_t k = 0; k < 30; k++)
            assert_int_equal(json_integer_value(json_array_get(rows, k)),
                             k <= 2 * (size_t)BPP ? 15 * k : 30 * (size_t)BPP + (k - 2 * (size_t)BPP));
        assert_int_equal(json_integer_value(json_array_get(rows, 30)), 31 * BPP);
        /* the first observation's columns: camera 0, point 0, weight 0 */
        for (size_t k = 0; k < 30; k++) {
            size_t j = k % 15;
            json_int_t want = j < 11 ? (json_int_t)j : j < 14 ? 11 * BN + (json_int_t)j - 11
                                                              : 11 * BN + 3 * BM;
            assert_int_equal(json_integer_value(json_array_get(cols, k)), want);
        }
        assert_int_equal(json_integer_value(json_array_get(cols, 30)), 11 * BN + 3 * BM + BPP - 1);
        /* the values against differences of the first observation's
           residuals in its 15 parameters, and the last weight's */
        for (size_t j = 0; j < 15; j++) {
            double f[2][3], x0 = x[j];
            for (int s = 0; s < 2; s++) {
                x[j] = x0 + (s ? -h : h);
                json_t *y = call(&gb_ba_objective, ba_input(x, 15));
                for (int k = 0; k < 3; k++)
                    f[s][k] = ba_residual(y, k);
                json_decref(y);
            }
            x[j] = x0;
            for (size_t row = 0; row < 2; row++)
                assert_close(json_number_value(json_array_get(vals, 15 * row + j)),
                             (f[0][row] - f[1][row]) / (2 * h), 1e-6, "ba", 15 * row + j);
            if (j == 14)
                assert_close(json_number_value(json_array_get(vals, 30)),
                             (f[0][2] - f[1][2]) / (2 * h), 1e-6, "ba", 30);
        }
        json_decref(J);
    }
    /* a camera of 10 parameters */
    double x[15] = {0.1, 0.2, 0.3, 0, 0, -3, 1, 0, 0, 0, 0, 0, 0, 0, 1};
    json_t *in = ba_input(x, 15);
    json_object_set_new(in, "cam", vec(x, 10));
    check_refused(&gb_ba_objective, in, "ba: \"cam\"");
}

#define HB 22 /* bones */
#define HV 9  /* vertices */
#define HT 5  /* triangles */
#define HN 6  /* points */
static double ht_rel[HB * 16], ht_inv[HB * 16], ht_pos[HV * 4], ht_w[HV * HB], ht_pts[HN * 3];
static int ht_parent[HB], ht_tri[HT * 3], ht_corr[HN];
static int ht_complicated, ht_mirrored;

static json_t *ints(const int *x, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(x[i]));
    return a;
}

/* x: theta (26), then us (HN x 2) if complicated */
static json_t *ht_input(const double *x, size_t n)
{
    (void)n;
    json_t *rel = json_array(), *inv = json_array(), *tri = json_array(), *names = json_array();
    for (size_t b = 0; b < HB; b++) {
        json_array_append_new(rel, mat(ht_rel + 16 * b, 4, 4));
        json_array_append_new(inv, mat(ht_inv + 16 * b, 4, 4));
        json_array_append_new(names, json_string("bone"));
    }
    for (size_t t = 0; t < HT; t++)
        json_array_append_new(tri, ints(ht_tri + 3 * t, 3));
    json_t *model = json_pack(
        "{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "bone_count", HB, "bone_names", names,
        "parents", ints(ht_parent, HB), "base_relatives", rel, "inverse_base_absolutes", inv,
        "base_positions", mat(ht_pos, HV, 4), "weights", mat(ht_w, HV, HB), "triangles", tri,
        "is_mirrored", ht_mirrored);
    json_t *data = json_pack("{s:o, s:o, s:o}", "model", model, "correspondences",
                             ints(ht_corr, HN), "points", mat(ht_pts, HN, 3));
    return json_pack("{s:o, s:o, s:o}", "theta", vec(x, 26), "data", data, "us",
                     ht_complicated ? mat(x + 26, HN, 2) : json_array());
}

/* a random rigid-looking 4 x 4 transform: a rotation-ish 3 x 3 block near
   the identity, a translation, the last row (0, 0, 0, 1) */
static void ht_transform(double *m)
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            m[4 * i + j] = i == 3 ? (j == 3 ? 1.0 : 0.0) : (i == j ? 1.0 : 0.0) + 0.4 * rnd() - 0.2;
}

static void test_ht(void **state)
{
    (void)state;
    const double h = 1e-6;
    for (size_t b = 0; b < HB; b++) {
        ht_parent[b] = b == 0 ? -1 : (int)(rnd() * (double)b);
        ht_transform(ht_rel + 16 * b);
        ht_transform(ht_inv + 16 * b);
    }
    for (size_t v = 0; v < HV; v++) {
        for (int k = 0; k < 3; k++)
            ht_pos[4 * v + k] = 2 * rnd() - 1;
        ht_pos[4 * v + 3] = 1.0;
        /* two or three bones a vertex, weights summing to 1 */
        size_t b1 = (size_t)(rnd() * HB), b2 = (b1 + 1 + (size_t)(rnd() * (HB - 1))) % HB;
        double a = rnd();
        ht_w[HB * v + b1] = a;
        ht_w[HB * v + b2] = (1 - a) / 2;
        ht_w[HB * v + (b2 + 5) % HB] += (1 - a) / 2;
    }
    for (size_t t = 0; t < 3 * HT; t++)
        ht_tri[t] = (int)(rnd() * HV);
    for (size_t i = 0; i < 3 * HN; i++)
        ht_pts[i] = 2 * rnd() - 1;
    for (int variant = 0; variant < 3; variant++) {
        /* simple; complicated; complicated and mirrored, with a global
           rotation below the angle-axis threshold */
        ht_complicated = variant > 0;
        ht_mirrored = variant == 2;
        for (size_t i = 0; i < HN; i++)
            ht_corr[i] = (int)(rnd() * (ht_complicated ? HT : HV));
        size_t np = 26 + (ht_complicated ? 2 * HN : 0), ncols = ht_complicated ? 28 : 26;
        double x[26 + 2 * HN];
        for (size_t i = 0; i < np; i++)
            x[i] = i < 26 ? rnd() - 0.5 : rnd() * 0.5;
        if (variant == 2)
            x[0] = x[1] = x[2] = 1e-5;
        json_t *J = call(&gb_ht_jacobian, ht_input(x, np));
        assert_int_equal(json_array_size(J), 3 * HN);
        for (size_t c = 0; c < ncols; c++) {
            /* the column c: theta c - 2 (complicated) or c, or every
               point's u0 (c = 0) or u1 (c = 1) at once: a residual depends
               on its own point's u alone */
            double f[2][3 * HN], saved[26 + 2 * HN];
            memcpy(saved, x, sizeof saved);
            for (int s = 0; s < 2; s++) {
                double d = s ? -h : h;
                if (ht_complicated && c < 2)
                    for (size_t i = 0; i < HN; i++)
                        x[26 + 2 * i + c] = saved[26 + 2 * i + c] + d;
                else
                    x[c - (ht_complicated ? 2 : 0)] += d;
                json_t *y = call(&gb_ht_objective, ht_input(x, np));
                assert_int_equal(json_array_size(y), 3 * HN);
                for (size_t k = 0; k < 3 * HN; k++)
                    f[s][k] = json_number_value(json_array_get(y, k));
                json_decref(y);
                memcpy(x, saved, sizeof saved);
            }
            for (size_t k = 0; k < 3 * HN; k++)
                assert_close(json_number_value(json_array_get(json_array_get(J, k), c)),
                             (f[0][k] - f[1][k]) / (2 * h), 1e-6, "ht", k * ncols + c);
        }
        json_decref(J);
    }
    /* a correspondence past the triangles */
    double x[26 + 2 * HN] = {0};
    ht_complicated = 1;
    ht_corr[0] = HT;
    check_refused(&gb_ht_jacobian, ht_input(x, 26 + 2 * HN), "ht: correspondence 0");
    ht_corr[0] = 0;
    /* points of two coordinates */
    json_t *in = ht_input(x, 26 + 2 * HN);
    json_object_set_new(json_object_get(in, "data"), "points", mat(ht_pts, HN, 2));
    check_refused(&gb_ht_objective, in, "ht: \"points\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_protocol), cmocka_unit_test(test_hello),
        cmocka_unit_test(test_det),      cmocka_unit_test(test_lse),
        cmocka_unit_test(test_llsq),     cmocka_unit_test(test_ode),
        cmocka_unit_test(test_kmeans),   cmocka_unit_test(test_gmm),
        cmocka_unit_test(test_saddle),
        cmocka_unit_test(test_particle),
        cmocka_unit_test(test_lstm),     cmocka_unit_test(test_ba),
        cmocka_unit_test(test_ht),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
