/*
 * fuzz_tapes.c - a second live tape beside the main one, and what the
 * tapes own (tests/fuzz/README.md, "Second tape").
 *
 * Each tape takes its ids from a range of its own, so an id of another
 * tape is rejected with DR_EINVAL like any id that is not on the tape
 * (include/dualrev.h, "Ids").  op_other_tape gives ids of the second tape
 * (the one op_second_order programs, fuzz_second_order.c) to the main
 * tape's operations and drivers, and the main tape's to the second's: a
 * scalar operation gives a constant with the right value and a sticky
 * DR_EINVAL, an array operation a failed handle, a driver DR_EINVAL.
 *
 * Also here: the registry of contexts the tapes own (externals' and
 * loops' destroy callbacks), and the hooks run when a program starts,
 * when the main tape is cleared and when the program ends.
 */
#include "fuzz_model.h"

#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------- the second tape */

#define NOTHER 64
static struct {
    dr_tape *t;
    dr_idx ids[NOTHER];
    int n;
    dr_idx aids[8];
    int na;
} O;

dr_tape *other_tape(void)
{
    if (!O.t) {
        O.t = dr_tape_new();
        O.n = O.na = 0;
    }
    return O.t;
}

void other_tape_note(dr_idx id, bool array)
{
    if (id == DR_NONE)
        return;
    if (array) {
        if (O.na < 8)
            O.aids[O.na++] = id;
    } else if (O.n < NOTHER) {
        O.ids[O.n++] = id;
    }
}

void other_tape_reset(void)
{
    O.n = O.na = 0;
    owned_gone(TAPE_OTHER, "a clear of the second tape");
}

/* the second tape with a few ids (recorded now if it has none) */
static bool other_ready(void)
{
    dr_tape *t = other_tape();
    if (!t)
        return false;
    if (dr_tape_status(t) != DR_OK || (O.n > 0 && O.na > 0))
        return dr_tape_status(t) == DR_OK;
    dr_status st = dr_tape_clear(t);
    CHECK(st == DR_OK, "dr_tape_clear (second tape): %s", sn(st));
    other_tape_reset();
    dr_real x = dr_input(t, 1.25), y = dr_input(t, -0.5);
    dr_real z = dr_mul(t, x, y);
    double data[3] = {1, 2, 3};
    dr_arr a = dr_arr_input(t, 1, 3, 1, data);
    CHECK(z.idx != DR_NONE && a.idx != DR_NONE, "recording on the second "
          "tape: %s", sn(dr_tape_status(t)));
    other_tape_note(x.idx, false);
    other_tape_note(y.idx, false);
    other_tape_note(z.idx, false);
    other_tape_note(a.idx, true);
    return true;
}

/* the status a driver taking an id of another tape must give on the main
   tape: what the whole tape says first, then the sticky status */
static dr_status want_einval(void)
{
    dr_status w = whole_status();
    if (w == DR_OK && S.L[0].hs.st != DR_OK)
        w = S.L[0].hs.st;
    return w == DR_OK ? DR_EINVAL : w;
}

static void dummy_rev(void *ctx, size_t n, const double *x, size_t m,
                      const double *y, const double *ybar, double *xbar)
{
    (void)ctx, (void)x, (void)m, (void)y, (void)ybar;
    for (size_t i = 0; i < n; i++)
        xbar[i] = 0.0;
}

static dr_status copy_step(void *ctx, dr_tape *t, size_t k, size_t n,
                           const dr_real *x, dr_real *y)
{
    (void)ctx, (void)k;
    for (size_t i = 0; i < n; i++)
        y[i] = x[i];
    return dr_tape_status(t);
}

/* the main tape's drivers with an id of the second tape */
static void drivers(rd *r, dr_idx id2)
{
    dr_tape *T = S.T;
    dual cb;
    opnd y = operand(r, &cb);
    dr_real o2 = {0.5, id2};
    dr_real xs[2] = {o2, y.r};
    unsigned k = u8(r);
    bool as_y = k & 1;
    double g[4] = {0}, w[2] = {1.0, -2.0};
    dr_status st, want = want_einval();
    const char *nm;
    switch (k >> 1 & 7) {
    case 0:
        nm = "dr_gradient";
        st = as_y ? dr_gradient(T, o2, 1, &y.r, g)
                  : dr_gradient(T, y.r, 2, xs, g);
        break;
    case 1:
        nm = "dr_jacobian";
        st = as_y ? dr_jacobian(T, 2, xs, 1, &y.r, g)
                  : dr_jacobian(T, 1, &y.r, 2, xs, g);
        break;
    case 2:
        nm = "dr_jvp";
        st = as_y ? dr_jvp(T, 2, xs, 1, &y.r, w, g)
                  : dr_jvp(T, 1, &y.r, 2, xs, w, g);
        break;
    case 3:
        nm = "dr_vjp";
        st = as_y ? dr_vjp(T, 2, xs, w, 1, &y.r, g)
                  : dr_vjp(T, 1, &y.r, w, 2, xs, g);
        break;
    case 4:
        nm = "dr_hvp / dr_hessian";
        st = as_y ? dr_hvp(T, o2, 1, &y.r, w, g)
                  : dr_hessian(T, y.r, 2, xs, g);
        break;
    case 5:
        nm = "dr_gradient_range";
        st = as_y ? dr_gradient_range(T, o2, DR_NONE, 0, g)
                  : dr_gradient_range(T, y.r, id2, 1, g);
        break;
    case 6:
        nm = "dr_jvp_vec / dr_vjp_vec";
        st = as_y ? dr_jvp_vec(T, 1, &y.r, 2, xs, 1, w, g)
                  : dr_vjp_vec(T, 2, xs, 1, w, 1, &y.r, g);
        break;
    default: {
        nm = "dr_tangent_record";
        dr_real out;
        dr_real s = dr_const(1.0);
        st = as_y ? dr_tangent_record(T, S.L[0].first, 1, &id2, &s, y.r,
                                      &out)
                  : dr_tangent_record(T, id2, 0, NULL, NULL, y.r, &out);
        break;
    }
    }
    TRACE("  %s with an id of the second tape -> %s\n", nm, sn(st));
    /* an invalid y or x of the main tape says DR_EINVAL too */
    CHECK(st == want, "%s with an id of another tape: %s, expected %s", nm,
          sn(st), sn(want));
    check_sticky(nm, top()->h, &top()->hs);
    /* seeds, tangents and adjoints of it */
    if (S.depth == 0 && !S.rec_open) {
        st = dr_seed(T, id2, 1.0);
        CHECK(st == DR_EINVAL, "dr_seed of an id of another tape: %s",
              sn(st));
        st = dr_tangent_seed(T, id2, 1.0);
        CHECK(st == DR_EINVAL, "dr_tangent_seed of an id of another tape: "
              "%s", sn(st));
        double a = 0;
        st = dr_adjoint_get(T, id2, &a);
        CHECK(st == DR_EINVAL, "dr_adjoint_get of an id of another tape: "
              "%s", sn(st));
        CHECK(isnan(dr_adjoint(T, id2)), "dr_adjoint of an id of another "
              "tape");
        CHECK(isnan(dr_tangent(T, id2)), "dr_tangent of an id of another "
              "tape");
        st = dr_adjoints_read(T, id2, 1, &a);
        CHECK(st == DR_EINVAL, "dr_adjoints_read of an id of another tape: "
              "%s", sn(st));
    }
}

/* externals and loops with an input of the second tape: refused, nothing
   recorded, the status unchanged */
static void recorders(rd *r, dr_idx id2)
{
    level *lv = top();
    dual cb;
    opnd a = operand(r, &cb);
    dr_real x[2] = {a.r, {0.25, id2}};
    if (u8(r) & 1) {
        x[0] = x[1];
        x[1] = a.r;
    }
    dr_status want = lv->hs.st != DR_OK ? lv->hs.st : DR_EINVAL;
    dr_real out[2];
    double y[2] = {3.0, 4.0};
    dr_external f = {NULL, dummy_rev, NULL, NULL, NULL};
    dr_status st = dr_record_external(lv->h, &f, 2, x, 2, y, out);
    CHECK(st == want, "dr_record_external with an input of another tape: "
          "%s, expected %s", sn(st), sn(want));
    CHECK(out[0].idx == DR_NONE && out[0].val == 3.0 &&
              out[1].idx == DR_NONE && out[1].val == 4.0,
          "a refused external's outputs");
    dr_loop loop = {NULL, copy_step, NULL, 0};
    st = dr_record_checkpointed(lv->h, &loop, 4, 2, x, 1, out);
    CHECK(st == want, "dr_record_checkpointed with an input of another "
          "tape: %s, expected %s", sn(st), sn(want));
    CHECK(out[0].idx == DR_NONE && out[1].idx == DR_NONE,
          "a refused loop's outputs");
    check_sticky("externals with an id of another tape", lv->h, &lv->hs);
}

/* array operations with an array or scalar of the second tape */
static void arrays(rd *r, dr_idx id2, dr_idx aid2)
{
    dr_tape *h = top()->h;
    unsigned k = u8(r);
    dr_arr a2 = {aid2, 1, 3, 1, NULL};
    dr_arr res;
    const char *nm;
    switch (k % 4) {
    case 0: {
        dr_real s = dr_arr_sum(h, a2);
        CHECK(s.idx == DR_NONE && isnan(s.val), "dr_arr_sum of an array of "
              "another tape: id %lld value %.17g", (long long)s.idx, s.val);
        stick(&top()->hs, DR_EINVAL);
        check_sticky("dr_arr_sum of an array of another tape", h,
                     &top()->hs);
        return;
    }
    case 1: {
        int aj = pick_a(k >> 2);
        dr_arr b = aj >= 0 ? S.a[aj].h : a2;
        nm = "dr_arr_add with an array of another tape";
        res = (k & 0x10) ? dr_arr_add(h, b, a2) : dr_arr_add(h, a2, b);
        break;
    }
    case 2: {
        dr_real s = {2.0, id2};
        int aj = pick_a(k >> 2);
        nm = "dr_arr_scale by a scalar of another tape";
        res = dr_arr_scale(h, s, aj >= 0 ? S.a[aj].h : a2);
        break;
    }
    default: {
        dual cb;
        opnd o = operand(r, &cb);
        dr_real xs[2] = {o.r, {1.5, id2}};
        nm = "dr_arr_from_reals with a scalar of another tape";
        res = dr_arr_from_reals(h, 2, xs);
        break;
    }
    }
    arr_expect_fail(nm, res, ST(DR_EINVAL));
}

void op_other_tape(rd *r)
{
    unsigned k = u8(r);
    if (!other_ready())
        return;
    dr_idx id2 = O.ids[u8(r) % (unsigned)O.n];
    dr_idx aid2 = O.na ? O.aids[u8(r) % (unsigned)O.na] : DR_NONE;
    double v = rdv(r);
    dual cb, cb2, out;
    dual_const(&cb, v);
    opnd bad = {{v, id2}, &cb, V_INVALID};
    sctx c = main_ctx();
    dr_real res;
    switch (k % 8) {
    case 0:
        do_unary(&c, (int)(u8(r) % N_UNARY), bad, &out, &res);
        put_s((int)(u8(r) % NS), res, &out, -1);
        break;
    case 1: {
        opnd b = operand(r, &cb2);
        if (k & 0x10)
            do_binary(&c, (int)(u8(r) % N_BINARY), b, bad, &out, &res);
        else
            do_binary(&c, (int)(u8(r) % N_BINARY), bad, b, &out, &res);
        put_s((int)(u8(r) % NS), res, &out, -1);
        break;
    }
    case 2: { /* user-recorded nodes */
        level *lv = top();
        dr_idx id;
        dr_idx args[2] = {id2, id2};
        double p[2] = {1.0, 2.0};
        switch (k >> 4 & 3) {
        case 0: id = dr_record1(lv->h, id2, 1.0); break;
        case 1: id = dr_record2(lv->h, DR_NONE, 1.0, id2, 2.0); break;
        default: id = dr_recordn(lv->h, 2, args, p); break;
        }
        CHECK(id == DR_NONE, "dr_record with an id of another tape gave id "
              "%lld", (long long)id);
        stick(&lv->hs, DR_EINVAL);
        check_sticky("dr_record with an id of another tape", lv->h, &lv->hs);
        break;
    }
    case 3: case 4:
        drivers(r, id2);
        break;
    case 5:
        recorders(r, id2);
        break;
    case 6:
        if (aid2 != DR_NONE)
            arrays(r, id2, aid2);
        break;
    default: { /* the main tape's ids on the second tape */
        int j = pick_s(u8(r));
        if (j < 0 || S.s[j].r.idx == DR_NONE)
            break;
        dr_tape *t = O.t;
        dr_real m = S.s[j].r;
        dr_real y2 = {0.5, id2};
        double g;
        dr_status st = dr_gradient(t, y2, 1, &m, &g);
        CHECK(st == DR_EINVAL, "dr_gradient of the second tape w.r.t. an "
              "id of the main tape: %s", sn(st));
        dr_real z = dr_exp(t, m);
        CHECK(z.idx == DR_NONE && (z.val == exp(m.val) ||
                                   (isnan(z.val) && isnan(m.val))),
              "dr_exp with an id of another tape: id %lld value %.17g",
              (long long)z.idx, z.val);
        CHECK(dr_tape_status(t) == DR_EINVAL, "the second tape's status "
              "after an id of another tape: %s", sn(dr_tape_status(t)));
        /* the main tape is not touched */
        check_sticky("ids on the second tape", top()->h, &top()->hs);
        st = dr_tape_clear(t);
        CHECK(st == DR_OK, "dr_tape_clear (second tape): %s", sn(st));
        other_tape_reset();
        break;
    }
    }
}

/* ------------------------------------------------------- ownership */

static owned *g_owned;

void owned_give(owned *o, int tape, bool by_tape)
{
    o->destroyed = 0;
    o->tape = tape;
    o->by_tape = by_tape;
    o->next = g_owned;
    g_owned = o;
}

void owned_destroy(void *ctx)
{
    ((owned *)ctx)->destroyed++;
}

void owned_gone(int tape, const char *when)
{
    for (owned **p = &g_owned; *p;) {
        owned *o = *p;
        if (o->tape != tape) {
            p = &o->next;
            continue;
        }
        CHECK(o->destroyed == (o->by_tape ? 1 : 0),
              "after %s: a context's destroy callback ran %d times "
              "(expected %d)", when, o->destroyed, o->by_tape ? 1 : 0);
        *p = o->next;
        free(o);
    }
}

/* ------------------------------------------------------ the allocator
 * Every byte the library allocates goes through dr_set_allocator's
 * functions, set once before the first tape: they count the calls and
 * the bytes held, for the checks of dr_tape_bytes and of "recording the
 * same program again allocates nothing" (fuzz_replay.c). */

#define AHEAD 16 /* the size, before the block (keeps malloc's alignment) */
static size_t g_calls, g_live;

static void *count_malloc(size_t n, void *user)
{
    (void)user;
    if (n > SIZE_MAX - AHEAD)
        return NULL;
    unsigned char *p = malloc(n + AHEAD);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_live, n, __ATOMIC_RELAXED);
    return p + AHEAD;
}

static void count_free(void *q, void *user)
{
    (void)user;
    if (!q)
        return;
    unsigned char *p = (unsigned char *)q - AHEAD;
    size_t n;
    memcpy(&n, p, sizeof n);
    __atomic_sub_fetch(&g_live, n, __ATOMIC_RELAXED);
    free(p);
}

void fz_allocator(void)
{
    static bool set;
    if (set)
        return;
    set = true;
    CHECK(dr_set_allocator(count_malloc, NULL, NULL) == DR_EINVAL &&
              dr_set_allocator(NULL, count_free, NULL) == DR_EINVAL,
          "dr_set_allocator with one function NULL");
    CHECK(dr_set_allocator(count_malloc, count_free, NULL) == DR_OK,
          "dr_set_allocator");
}

void tape_free_counted(dr_tape *t, bool loops, const char *what)
{
    size_t bytes = dr_tape_bytes(t), live = fz_live_bytes();
    dr_tape_free(t);
    size_t freed = live - fz_live_bytes();
    (void)loops;
    CHECK(freed == bytes, "dr_tape_free of %s freed %zu bytes, "
          "dr_tape_bytes %zu", what, freed, bytes);
}

size_t fz_alloc_calls(void)
{
    return __atomic_load_n(&g_calls, __ATOMIC_RELAXED);
}

size_t fz_live_bytes(void)
{
    return __atomic_load_n(&g_live, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ hooks */

void fz_start(void)
{
    CHECK(g_owned == NULL, "harness: contexts left from the last input");
    /* the library linked is the header's version */
    unsigned ma = 0, mi = 0, pa = 0;
    const char *vs = dr_version_string();
    CHECK(vs && strcmp(vs, DR_VERSION_STRING) == 0 &&
              sscanf(vs, "%u.%u.%u", &ma, &mi, &pa) == 3 &&
              dr_version() == DR_VERSION_NUMBER &&
              dr_version() == ma * 10000 + mi * 100 + pa,
          "dr_version %u, dr_version_string %s (the header's %u, %s)",
          dr_version(), vs ? vs : "NULL", (unsigned)DR_VERSION_NUMBER,
          DR_VERSION_STRING);
}

void tape_bytes_check(const dr_tape *t, const char *when)
{
    CHECK(dr_tape_bytes(t) >= dr_tape_len(t) * sizeof(struct dr__node),
          "dr_tape_bytes %zu %s, for %zu nodes", dr_tape_bytes(t), when,
          dr_tape_len(t));
}

void fz_cleared(void)
{
    owned_gone(TAPE_MAIN, "dr_tape_clear");
    modes_cleared();
}

void fz_end(void)
{
    owned_gone(TAPE_MAIN, "dr_tape_free");
    if (O.t) {
        dr_tape_free(O.t);
        O.t = NULL;
        owned_gone(TAPE_OTHER, "dr_tape_free of the second tape");
    }
    O.n = O.na = 0;
    loops_end();
    progs_end();
    CHECK(g_owned == NULL, "contexts that no tape holds were left");
}
