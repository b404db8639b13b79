/*
 * sweep_trace.h - a profiling aid for the parallel reverse pass, compiled
 * in only with -DDR_SWEEP_TRACE (bench/README.md, "Parallel scaling"):
 * each kid's sweep and each merge of logs is timed with the thread that
 * ran it, and dr__sweep_forks prints a summary on stderr.  Without the
 * macro every hook is an empty inline function.
 */
#ifndef DR_SWEEP_TRACE_H
#define DR_SWEEP_TRACE_H

#ifdef DR_SWEEP_TRACE
#include <stdio.h>
#include <time.h>

enum { TR_KID, TR_LOGS, TR_KINDS };
#define TR_MAX 65536
typedef struct tr_ev {
    double t0, t1;
    unsigned slot, home;
    int kind;
} tr_ev;
static tr_ev tr_evs[TR_MAX];
static size_t tr_n;
static double tr_start;

static inline double tr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline void tr_begin(void)
{
    tr_n = 0;
    tr_start = tr_now();
}
static inline void tr_event(int kind, double t0, unsigned slot, unsigned home)
{
    double t1 = tr_now();
    size_t i = __atomic_fetch_add(&tr_n, 1, __ATOMIC_RELAXED);
    if (i < TR_MAX)
        tr_evs[i] = (tr_ev){t0, t1, slot, home, kind};
}
static inline void tr_end(unsigned threads)
{
    double wall = tr_now() - tr_start, busy[TR_KINDS] = {0}, mx = 0;
    double first = 0, last = 0, per[256] = {0};
    size_t n = tr_n < TR_MAX ? tr_n : TR_MAX, cnt[TR_KINDS] = {0}, home = 0;
    for (size_t i = 0; i < n; i++) {
        tr_ev *e = &tr_evs[i];
        double d = e->t1 - e->t0;
        busy[e->kind] += d;
        cnt[e->kind]++;
        if (e->kind == TR_KID) {
            mx = d > mx ? d : mx;
            first = (first == 0 || e->t0 - tr_start < first) ? e->t0 - tr_start : first;
            last = e->t1 - tr_start > last ? e->t1 - tr_start : last;
            home += e->slot == e->home;
            per[e->slot & 255] += d;
        }
    }
    double pmax = 0, pmin = 1e30;
    unsigned used = 0;
    for (unsigned s = 0; s < 256; s++)
        if (per[s] > 0) {
            used++;
            pmax = per[s] > pmax ? per[s] : pmax;
            pmin = per[s] < pmin ? per[s] : pmin;
        }
    if (!used)
        pmin = 0;
    fprintf(stderr,
            "trace T=%u: wall %.3f ms; kids %zu (on home %zu) busy %.3f ms, "
            "mean %.1f us, max %.1f us, first start %.1f us, last end %.3f ms; "
            "%u threads ran kids, %.3f..%.3f ms each; logs %zu merges %.3f ms\n",
            threads, wall * 1e3, cnt[TR_KID], home, busy[TR_KID] * 1e3,
            cnt[TR_KID] ? busy[TR_KID] / (double)cnt[TR_KID] * 1e6 : 0.0,
            mx * 1e6, first * 1e6, last * 1e3, used, pmin * 1e3, pmax * 1e3,
            cnt[TR_LOGS], busy[TR_LOGS] * 1e3);
}
#define TR_T0() double tr_t0_ = tr_now()
#define TR_EVENT(kind, slot, home) tr_event(kind, tr_t0_, slot, home)
#else
#define TR_T0() ((void)0)
#define TR_EVENT(kind, slot, home) ((void)0)
static inline void tr_begin(void) {}
static inline void tr_end(unsigned threads) { (void)threads; }
#endif

#endif /* DR_SWEEP_TRACE_H */
