/*
 * checkpoint.c - a time-stepping loop as one node with binomial
 * checkpointing (dr_record_checkpointed).  The node is an external function
 * (record/external.c) whose context holds the loop, a tape of its own that
 * holds one step at a time, and the snapshots.  Its reverse rule walks the
 * schedule of schedule.c back from the last step: recompute from the
 * nearest stored state, record the step, sweep it with the state's
 * adjoints, and go one step back.
 *
 * The snapshots form a stack: level 0 is the loop's input, level d >= 1 is
 * snapshot d - 1, holding the state at step pos[d] (increasing with d).
 * Recording the loop runs every step once to get the outputs; on the way it
 * fills the levels the first reverse sweep would store first (the "chain"),
 * so that sweep starts without recomputing them.
 */
#include "loops/loops.h"
#include "record/record.h"

#include <stdint.h>

/* A state: its values, and which are active.  A constant stays one through
   a step that only combines constants, so the loop's tape records what the
   caller's would have for the same step, node for node: that keeps the
   gradient bit-identical to the one without checkpoints. */
typedef struct state {
    double *v;
    unsigned char *act;
} state;

typedef struct ckpt {
    dr_loop loop;
    size_t n, nsteps, nsnap;
    dr_tape *tape;          /* the loop's own, one step at a time */
    dr_real *x, *y;         /* that step's inputs and outputs */
    state x0, work;
    state *snap;            /* nsnap snapshots: levels 1 .. nsnap */
    size_t *pos;            /* step of each level (pos[0] = 0) */
    size_t chain;           /* levels the recording left for the next sweep */
    double *bar, *bar2;     /* adjoints (tangents) of the state: before, after */
    dr_status err;          /* the first failure of a rule: sticky */
} ckpt;

static void ckpt_free(ckpt *c)
{
    if (c) {
        dr_tape_free(c->tape);
        dr__free(c);
    }
}

/* size += cnt * each, false on overflow */
static bool add_size(size_t *size, size_t cnt, size_t each)
{
    if (each && cnt > (SIZE_MAX - *size) / each)
        return false;
    *size += cnt * each;
    return true;
}

/* one allocation for the context and its arrays (doubles first, bytes
   last, so each part is aligned) */
static ckpt *ckpt_new(size_t n, size_t nsteps, size_t nsnap)
{
    size_t size = sizeof(ckpt), states = nsnap + 2;
    if (!add_size(&size, 2 * n, sizeof(dr_real)) ||
        !add_size(&size, nsnap, sizeof(state)) ||
        !add_size(&size, nsnap + 1, sizeof(size_t)) ||
        !add_size(&size, 2 * n, sizeof(double)) || n > SIZE_MAX / states ||
        !add_size(&size, n * states, sizeof(double) + 1))
        return NULL;
    ckpt *c = dr__malloc(size);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->tape = dr_tape_new();
    if (!c->tape) {
        dr__free(c);
        return NULL;
    }
    c->n = n;
    c->nsteps = nsteps;
    c->nsnap = nsnap;
    c->x = (dr_real *)(c + 1);
    c->y = c->x + n;
    c->snap = (state *)(c->y + n);
    c->pos = (size_t *)(c->snap + nsnap);
    c->bar = (double *)(c->pos + nsnap + 1);
    c->bar2 = c->bar + n;
    double *v = c->bar2 + n;
    unsigned char *act = (unsigned char *)(v + n * states);
    state *all[2] = {&c->x0, &c->work};
    for (size_t i = 0; i < states; i++) {
        state *s = i < 2 ? all[i] : &c->snap[i - 2];
        s->v = v + i * n;
        s->act = act + i * n;
    }
    return c;
}

static void copy_state(const ckpt *c, state *dst, const state *src)
{
    memcpy(dst->v, src->v, c->n * sizeof(double));
    memcpy(dst->act, src->act, c->n);
}

/* step k recorded from s on the loop's tape: c->x, c->y */
static dr_status run_step(ckpt *c, size_t k, const state *s)
{
    dr_tape *t = c->tape;
    dr_status st = dr_tape_clear(t);
    for (size_t i = 0; st == DR_OK && i < c->n; i++)
        c->x[i] = s->act[i] ? dr_input(t, s->v[i]) : dr_const(s->v[i]);
    if (st == DR_OK)
        st = dr_tape_status(t);
    if (st == DR_OK)
        st = c->loop.step(c->loop.ctx, t, k, c->n, c->x, c->y);
    if (st == DR_OK)
        st = dr_tape_status(t);
    return st;
}

static void take_outputs(const ckpt *c, state *s)
{
    for (size_t i = 0; i < c->n; i++) {
        s->v[i] = c->y[i].val;
        s->act[i] = c->y[i].idx != DR_NONE;
    }
}

/* s, the state at step from, becomes the one at step to */
static dr_status advance(ckpt *c, size_t from, size_t to, state *s)
{
    for (size_t k = from; k < to; k++) {
        dr_status st = run_step(c, k, s);
        if (st != DR_OK)
            return st;
        take_outputs(c, s);
    }
    return DR_OK;
}

/* c->bar, the adjoint of the state after step k, becomes the one before it
   (s: the state before it) */
static dr_status reverse_step(ckpt *c, size_t k, const state *s)
{
    dr_status st = run_step(c, k, s);
    if (st == DR_OK)
        st = dr_vjp(c->tape, c->n, c->y, c->bar, c->n, c->x, c->bar2);
    if (st == DR_OK) /* (a constant's adjoint reads 0) */
        memcpy(c->bar, c->bar2, c->n * sizeof(double));
    return st;
}

/* Would the sweep store another snapshot above level d, whose step is l,
   while reversing up to step r?  Then *m is its step. */
static bool next_level(const ckpt *c, size_t d, size_t l, size_t r, size_t *m)
{
    if (r - l < 2 || d >= c->nsnap)
        return false;
    *m = l + dr__loop_split(r - l, c->nsnap - d);
    return true;
}

/* every step once, from x0 to the outputs (in c->work), filling the chain */
static dr_status record_forward(ckpt *c)
{
    size_t d = 0, m = 0;
    bool more = next_level(c, 0, 0, c->nsteps, &m);
    copy_state(c, &c->work, &c->x0);
    c->pos[0] = 0;
    for (size_t k = 0; k < c->nsteps; k++) {
        dr_status st = advance(c, k, k + 1, &c->work);
        if (st != DR_OK)
            return st;
        if (more && k + 1 == m) {
            copy_state(c, &c->snap[d], &c->work);
            c->pos[++d] = m;
            more = next_level(c, d, m, c->nsteps, &m);
        }
    }
    c->chain = d;
    return DR_OK;
}

/* the reverse sweep of the loop: c->bar from the outputs' adjoints to the
   inputs' */
static dr_status sweep_back(ckpt *c)
{
    size_t d = c->chain, r = c->nsteps, m;
    c->chain = 0; /* the sweep overwrites the snapshots */
    while (r > 0) {
        size_t l = c->pos[d];
        const state *base = d ? &c->snap[d - 1] : &c->x0;
        dr_status st = DR_OK;
        if (next_level(c, d, l, r, &m)) {
            copy_state(c, &c->snap[d], base);
            st = advance(c, l, m, &c->snap[d]);
            c->pos[++d] = m;
            if (st != DR_OK)
                return st;
            continue;
        }
        /* one step left, or no snapshot: each step from the base state */
        for (size_t j = r - 1; st == DR_OK && j > l; j--) {
            copy_state(c, &c->work, base);
            st = advance(c, l, j, &c->work);
            if (st == DR_OK)
                st = reverse_step(c, j, &c->work);
        }
        if (st == DR_OK)
            st = reverse_step(c, l, base);
        if (st != DR_OK)
            return st;
        r = l;
        if (d)
            d--;
    }
    return DR_OK;
}

/* the tangents of the outputs from the inputs', step by step */
static dr_status sweep_forward(ckpt *c)
{
    copy_state(c, &c->work, &c->x0);
    for (size_t k = 0; k < c->nsteps; k++) {
        dr_status st = run_step(c, k, &c->work);
        if (st == DR_OK)
            st = dr_jvp(c->tape, c->n, c->y, c->n, c->x, c->bar, c->bar2);
        if (st != DR_OK)
            return st;
        take_outputs(c, &c->work);
        memcpy(c->bar, c->bar2, c->n * sizeof(double));
    }
    return DR_OK;
}

/* ------------------------------------------------ the external function */

static void loop_reverse(void *ctx, size_t n, const double *x, size_t m,
                         const double *y, const double *ybar, double *xbar)
{
    (void)x, (void)m, (void)y;
    ckpt *c = ctx;
    if (c->err != DR_OK)
        return;
    memcpy(c->bar, ybar, n * sizeof(double));
    c->err = sweep_back(c);
    if (c->err == DR_OK)
        memcpy(xbar, c->bar, n * sizeof(double));
}

static void loop_forward(void *ctx, size_t n, const double *x,
                         const double *xdot, size_t m, const double *y,
                         double *ydot)
{
    (void)x, (void)m, (void)y;
    ckpt *c = ctx;
    if (c->err != DR_OK)
        return;
    memcpy(c->bar, xdot, n * sizeof(double));
    c->err = sweep_forward(c);
    if (c->err == DR_OK)
        memcpy(ydot, c->bar, n * sizeof(double));
}

static dr_status loop_status(void *ctx)
{
    return ((ckpt *)ctx)->err;
}

static void loop_destroy(void *ctx)
{
    ckpt *c = ctx;
    if (c->loop.destroy)
        c->loop.destroy(c->loop.ctx);
    ckpt_free(c);
}

/* x0 as constants: what a failed call leaves in out */
static dr_status fail(dr_status st, size_t n, const dr_real *x0, dr_real *out)
{
    for (size_t i = 0; x0 && out && i < n; i++)
        out[i] = dr_const(x0[i].val);
    return st;
}

dr_status dr_record_checkpointed(dr_tape *t, const dr_loop *loop,
                                 size_t nsteps, size_t n, const dr_real *x0,
                                 size_t snapshots, dr_real *out)
{
    if (!loop || !loop->step || !x0 || n == 0 || !out)
        return fail(DR_EINVAL, n, x0, out);
    dr_status st = dr__external_ready(t, n, x0);
    if (st != DR_OK)
        return fail(st, n, x0, out);
    /* more snapshots than nsteps - 2 change nothing (every state fits) */
    size_t useful = nsteps > 2 ? nsteps - 2 : 0;
    ckpt *c = ckpt_new(n, nsteps, snapshots < useful ? snapshots : useful);
    if (!c)
        return fail(DR_ENOMEM, n, x0, out);
    c->loop = *loop;
    for (size_t i = 0; i < n; i++) {
        c->x0.v[i] = x0[i].val;
        c->x0.act[i] = x0[i].idx != DR_NONE;
    }
    st = record_forward(c);
    if (st == DR_OK) {
        dr_external f = {c, loop_reverse, loop_forward, loop_destroy};
        st = dr__record_external_checked(t, &f, loop_status, n, x0, n,
                                         c->work.v, out);
    }
    if (st != DR_OK) {
        ckpt_free(c);
        return fail(st, n, x0, out);
    }
    /* an output the steps made constant is one (nothing to sweep) */
    for (size_t i = 0; i < n; i++)
        if (!c->work.act[i])
            out[i] = dr_const(c->work.v[i]);
    return DR_OK;
}
