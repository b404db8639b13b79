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
    size_t seg, nseg;       /* steps per segment, segments */
    dr_tape *tape;          /* the loop's own, one segment at a time */
    dr_real *x, *y, *z;     /* its inputs, outputs, and between steps */
    state x0, work;         /* the loop's inputs, and a state to work on */
    state *snap;            /* nsnap snapshots: levels 1 .. nsnap */
    size_t *pos;            /* step of each level (pos[0] = 0) */
    size_t chain;           /* levels the recording left for the next sweep */
    double *bar, *bar2;     /* adjoints (tangents) of the state: before, after */
    unsigned char *out_act; /* which outputs were active when recorded */
    double *out_v;          /* the outputs' values when recorded (those of
                               the constants stay in the caller's program) */
    dr_status err;          /* the first failure of a rule: sticky */
    dr_tape *owner;         /* the tape holding the loop (NULL until it is
                               recorded there), whose dr_tape_bytes counts
                               the loop's memory */
    size_t fixed;           /* bytes of this context and its snapshots */
    size_t counted;         /* bytes the owner counts for the loop now */
    size_t base;            /* bytes of the context (ckpt_new's block) */
    size_t snap_bytes;      /* bytes of the snapshots' block           */
    dr_owned spare;         /* on the owner's spares once its node went */
} ckpt;

static void ckpt_free(ckpt *c)
{
    if (c) {
        dr_tape_free(c->tape);
        dr__free(c->snap);
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

/* the context, its tape, and what does not depend on the number of
   snapshots, in one allocation (doubles first, bytes last: aligned) */
static ckpt *ckpt_new(size_t n, size_t nsteps)
{
    size_t size = sizeof(ckpt);
    if (!add_size(&size, 3 * n, sizeof(dr_real)) ||
        !add_size(&size, 2 * n, sizeof(double)) ||
        !add_size(&size, 2 * n, sizeof(double) + 1) ||
        !add_size(&size, n, sizeof(double) + 1))
        return NULL;
    ckpt *c = dr__malloc(size);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->fixed = c->base = size;
    c->tape = dr_tape_new();
    if (!c->tape) {
        dr__free(c);
        return NULL;
    }
    c->n = n;
    c->nsteps = nsteps;
    c->x = (dr_real *)(c + 1);
    c->y = c->x + n;
    c->z = c->y + n;
    c->bar = (double *)(c->z + n);
    c->bar2 = c->bar + n;
    double *v = c->bar2 + n;
    unsigned char *act = (unsigned char *)(v + 3 * n);
    c->x0 = (state){v, act};
    c->work = (state){v + n, act + n};
    c->out_v = v + 2 * n;
    c->out_act = act + 2 * n;
    return c;
}

/* the snapshots (and their steps), once the segments are known: more than
   nseg - 2 would change nothing (every state fits) */
static dr_status ckpt_snapshots(ckpt *c, size_t snapshots)
{
    size_t useful = c->nseg > 2 ? c->nseg - 2 : 0, n = c->n;
    c->nsnap = snapshots < useful ? snapshots : useful;
    size_t size = 0;
    if (!add_size(&size, c->nsnap, sizeof(state)) ||
        !add_size(&size, c->nsnap + 1, sizeof(size_t)) ||
        (c->nsnap && n > SIZE_MAX / c->nsnap) ||
        !add_size(&size, n * c->nsnap, sizeof(double) + 1))
        return DR_ENOMEM;
    /* (a context taken back from the spares keeps its block where the
       size is the same) */
    if (!c->snap || c->snap_bytes != size) {
        dr__free(c->snap);
        c->snap_bytes = 0;
        c->snap = dr__malloc(size); /* never 0 bytes: pos has one entry */
        if (!c->snap)
            return DR_ENOMEM;
        c->snap_bytes = size;
    }
    c->fixed = c->base + size;
    c->pos = (size_t *)(c->snap + c->nsnap);
    double *v = (double *)(c->pos + c->nsnap + 1);
    unsigned char *act = (unsigned char *)(v + c->nsnap * n);
    for (size_t i = 0; i < c->nsnap; i++)
        c->snap[i] = (state){v + i * n, act + i * n};
    return DR_OK;
}

static void copy_state(const ckpt *c, state *dst, const state *src)
{
    dr__copy_doubles(dst->v, src->v, c->n);
    memcpy(dst->act, src->act, c->n);
}

/* steps [lo, hi) recorded from s on the loop's tape, from c->x to c->y */
static dr_status run_steps(ckpt *c, size_t lo, size_t hi, const state *s)
{
    dr_tape *t = c->tape;
    dr_status st = dr_tape_clear(t);
    bool all = true;
    for (size_t i = 0; i < c->n; i++)
        all &= s->act[i] != 0;
    if (all) /* (one call, as most loops' states are all active) */
        st = dr_inputs(t, c->n, s->v, c->x);
    else
        for (size_t i = 0; i < c->n; i++)
            c->x[i] = s->act[i] ? dr_input(t, s->v[i]) : dr_const(s->v[i]);
    /* a step must not write its inputs: y and z take turns, the last step
       writing y */
    const dr_real *in = c->x;
    for (size_t k = lo; st == DR_OK && k < hi; k++) {
        dr_real *out = (hi - k) % 2 ? c->y : c->z;
        st = c->loop.step(c->loop.ctx, t, k, c->n, in, out);
        in = out;
    }
    return st == DR_OK ? dr_tape_status(t) : st;
}

/* segment u recorded from s */
static dr_status run_segment(ckpt *c, size_t u, const state *s)
{
    size_t lo = u * c->seg, hi = c->nsteps - lo > c->seg ? lo + c->seg : c->nsteps;
    return run_steps(c, lo, hi, s);
}

static void take_outputs(const ckpt *c, state *s)
{
    for (size_t i = 0; i < c->n; i++) {
        s->v[i] = c->y[i].val;
        s->act[i] = c->y[i].idx != DR_NONE;
    }
}

/* s, the state at segment from, becomes the one at segment to */
static dr_status advance(ckpt *c, size_t from, size_t to, state *s)
{
    for (size_t u = from; u < to; u++) {
        dr_status st = run_segment(c, u, s);
        if (st != DR_OK)
            return st;
        take_outputs(c, s);
    }
    return DR_OK;
}

/* c->bar, the adjoint of the state after segment u, becomes the one before
   it (s: the state before it) */
static dr_status reverse_segment(ckpt *c, size_t u, const state *s)
{
    dr_status st = run_segment(c, u, s);
    if (st == DR_OK)
        st = dr_vjp(c->tape, c->n, c->y, c->bar, c->n, c->x, c->bar2);
    if (st == DR_OK) /* (a constant's adjoint reads 0) */
        dr__copy_doubles(c->bar, c->bar2, c->n);
    return st;
}

/* Would the sweep store another snapshot above level d, whose segment is
   l, while reversing up to segment r?  Then *m is its segment. */
static bool next_level(const ckpt *c, size_t d, size_t l, size_t r, size_t *m)
{
    if (r - l < 2 || d >= c->nsnap)
        return false;
    *m = l + dr__loop_split(r - l, c->nsnap - d);
    return true;
}

/* every segment once, from x0 to the outputs (in c->work), filling the
   chain */
static dr_status record_forward(ckpt *c)
{
    size_t d = 0, m = 0;
    bool more = next_level(c, 0, 0, c->nseg, &m);
    copy_state(c, &c->work, &c->x0);
    c->pos[0] = 0;
    for (size_t u = 0; u < c->nseg; u++) {
        dr_status st = advance(c, u, u + 1, &c->work);
        if (st != DR_OK)
            return st;
        if (more && u + 1 == m) {
            copy_state(c, &c->snap[d], &c->work);
            c->pos[++d] = m;
            more = next_level(c, d, m, c->nseg, &m);
        }
    }
    c->chain = d;
    return DR_OK;
}

/* the reverse sweep of the loop: c->bar from the outputs' adjoints to the
   inputs' */
static dr_status sweep_back(ckpt *c)
{
    size_t d = c->chain, r = c->nseg, m;
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
        /* one segment left, or no snapshot: each from the base state */
        for (size_t j = r - 1; st == DR_OK && j > l; j--) {
            copy_state(c, &c->work, base);
            st = advance(c, l, j, &c->work);
            if (st == DR_OK)
                st = reverse_segment(c, j, &c->work);
        }
        if (st == DR_OK)
            st = reverse_segment(c, l, base);
        if (st != DR_OK)
            return st;
        r = l;
        if (d)
            d--;
    }
    return DR_OK;
}

/* the tangents of the outputs from the inputs', segment by segment */
static dr_status sweep_forward(ckpt *c)
{
    copy_state(c, &c->work, &c->x0);
    for (size_t u = 0; u < c->nseg; u++) {
        dr_status st = run_segment(c, u, &c->work);
        if (st == DR_OK)
            st = dr_jvp(c->tape, c->n, c->y, c->n, c->x, c->bar, c->bar2);
        if (st != DR_OK)
            return st;
        take_outputs(c, &c->work);
        dr__copy_doubles(c->bar, c->bar2, c->n);
    }
    return DR_OK;
}

/* ------------------------------------------------ the external function */

/* the owner's byte count brought up to the loop's memory now (its own
   tape grows as segments are recorded again, in sweeps and replays) */
static void count_bytes(ckpt *c)
{
    if (!c->owner)
        return;
    size_t now = c->fixed + dr_tape_bytes(c->tape);
    dr__bytes_add(c->owner, (ptrdiff_t)(now - c->counted));
    c->counted = now;
}

static void loop_reverse(void *ctx, size_t n, const double *x, size_t m,
                         const double *y, const double *ybar, double *xbar)
{
    (void)x, (void)m, (void)y;
    ckpt *c = ctx;
    if (c->err != DR_OK)
        return;
    dr__copy_doubles(c->bar, ybar, n);
    c->err = sweep_back(c);
    count_bytes(c);
    if (c->err == DR_OK)
        dr__copy_doubles(xbar, c->bar, n);
}

static void loop_forward(void *ctx, size_t n, const double *x,
                         const double *xdot, size_t m, const double *y,
                         double *ydot)
{
    (void)x, (void)m, (void)y;
    ckpt *c = ctx;
    if (c->err != DR_OK)
        return;
    dr__copy_doubles(c->bar, xdot, n);
    c->err = sweep_forward(c);
    count_bytes(c);
    if (c->err == DR_OK)
        dr__copy_doubles(ydot, c->bar, n);
}

/* replay: the loop run again from the new initial state, every segment
   once, which refreshes the snapshots the next reverse sweep starts from
   (as recording fills them); the steps must make the same outputs active
   as when the loop was recorded, and the others the same values (the
   caller's tape holds them as constants), else the recorded program has
   changed: DR_ERETAPE.  The
   outcome is the loop's status from then on (a failure undoes the replay,
   which runs the loop again at the old state) */
static void loop_primal(void *ctx, size_t n, const double *x, size_t m,
                        double *y)
{
    (void)m;
    ckpt *c = ctx;
    dr__copy_doubles(c->x0.v, x, n);
    dr_status st = record_forward(c);
    if (st == DR_OK && memcmp(c->work.act, c->out_act, n) != 0)
        st = DR_ERETAPE;
    /* a constant output is part of the caller's program, bit for bit (a
       zero's sign too; any NaN is a NaN) */
    for (size_t i = 0; st == DR_OK && i < n; i++)
        if (!c->out_act[i] &&
            memcmp(&c->work.v[i], &c->out_v[i], sizeof(double)) != 0 &&
            !(isnan(c->work.v[i]) && isnan(c->out_v[i])))
            st = DR_ERETAPE;
    c->err = st;
    count_bytes(c);
    dr__copy_doubles(y, c->work.v, n);
}

static dr_status loop_status(void *ctx)
{
    return ((ckpt *)ctx)->err;
}

/* a spare no recording took back: its memory leaves the owner's count */
static void spare_release(dr_owned *o)
{
    ckpt *c = (ckpt *)(void *)((char *)o - offsetof(ckpt, spare));
    dr__bytes_add(c->owner, -(ptrdiff_t)c->counted);
    ckpt_free(c);
}

/* the node goes (the tape cleared or freed, or a restore drops it): the
   caller's context let go, and the loop's own memory kept on the owner's
   spares, still counted in its bytes, for the next recording of a loop
   of as many values (dr_tape_clear's promise: recording the same program
   again allocates nothing); released at a clear after a recording of
   other loops that did not take it back, or with the owner */
static void loop_destroy(void *ctx)
{
    ckpt *c = ctx;
    if (c->loop.destroy)
        c->loop.destroy(c->loop.ctx);
    if (!c->owner) {
        ckpt_free(c);
        return;
    }
    c->spare.release = spare_release;
    dr__spare_keep(c->owner, &c->spare);
}

static bool fits(const dr_owned *o, const void *want)
{
    if (o->release != spare_release)
        return false;
    const ckpt *c = (const ckpt *)(const void *)((const char *)o -
                                                 offsetof(ckpt, spare));
    return c->n == *(const size_t *)want;
}

/* a context for n values: a spare of the tape's (its memory taken out of
   the tape's count, as a new one's is not in it yet), else a new one */
static ckpt *ckpt_get(dr_tape *t, size_t n, size_t nsteps)
{
    dr_owned *o = dr__spare_take(t, fits, &n);
    if (!o)
        return ckpt_new(n, nsteps);
    ckpt *c = (ckpt *)(void *)((char *)o - offsetof(ckpt, spare));
    dr__bytes_add(c->owner, -(ptrdiff_t)c->counted);
    /* as ckpt_new leaves it, with the blocks it has */
    c->loop = (dr_loop){0};
    c->nsteps = nsteps;
    c->nsnap = c->seg = c->nseg = c->chain = 0;
    c->pos = NULL;
    c->err = DR_OK;
    c->owner = NULL;
    c->counted = 0;
    c->fixed = c->base + c->snap_bytes;
    return c;
}

/* x0 as constants: what a failed call leaves in out */
static dr_status fail(dr_status st, size_t n, const dr_real *x0, dr_real *out)
{
    for (size_t i = 0; x0 && out && i < n; i++)
        out[i] = dr_const(x0[i].val);
    return st;
}

/* The steps per segment when the caller leaves it to the library: as many
   as make a tape about as large as the snapshots' memory (at least
   SEGMENT_MIN_BYTES), judged from the nodes of step 0 (NODE_BYTES each,
   node and adjoint).  Longer segments mean fewer segments to checkpoint
   and fewer calls per step; the snapshots' size says how much memory the
   caller gives the loop. */
#define SEGMENT_MIN_BYTES ((size_t)256 << 10)
#define NODE_BYTES 32
static dr_status choose_segment(ckpt *c, size_t segment, size_t snapshots)
{
    if (segment == 0 && c->nsteps > 1) {
        dr_status st = run_steps(c, 0, 1, &c->x0);
        if (st != DR_OK)
            return st;
        size_t per_step = (dr_tape_len(c->tape) + 1) * NODE_BYTES;
        size_t budget = SEGMENT_MIN_BYTES, snap = c->n * (sizeof(double) + 1);
        if (snapshots > c->nsteps)
            snapshots = c->nsteps;
        if (snapshots <= SIZE_MAX / snap && snapshots * snap > budget)
            budget = snapshots * snap;
        segment = budget / per_step ? budget / per_step : 1;
    }
    if (segment == 0 || segment > c->nsteps)
        segment = c->nsteps ? c->nsteps : 1;
    c->seg = segment;
    c->nseg = c->nsteps / segment + (c->nsteps % segment != 0);
    return DR_OK;
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
    ckpt *c = ckpt_get(t, n, nsteps);
    if (!c)
        return fail(DR_ENOMEM, n, x0, out);
    c->loop = *loop;
    for (size_t i = 0; i < n; i++) {
        c->x0.v[i] = x0[i].val;
        c->x0.act[i] = x0[i].idx != DR_NONE;
    }
    st = choose_segment(c, loop->segment, snapshots);
    if (st == DR_OK)
        st = ckpt_snapshots(c, snapshots);
    if (st == DR_OK)
        st = record_forward(c);
    if (st == DR_OK) {
        dr_external f = {c, loop_reverse, loop_forward, loop_destroy,
                         loop_primal};
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
    memcpy(c->out_act, c->work.act, n);
    dr__copy_doubles(c->out_v, c->work.v, n);
    c->owner = t->root;
    count_bytes(c);
    return DR_OK;
}
