/*
 * schedule.c - where a checkpointed loop's reverse sweep stores its
 * snapshots: the binomial schedule of Griewank and Walther ("Algorithm 799:
 * revolve", ACM TOMS 26(1), 2000).  With c stored states (the one a segment
 * starts from included) and each step recomputed at most r times, at most
 * beta(c, r) = C(c + r, c) steps can be reversed, and an optimal first
 * split of t steps leaves the right part at most beta(c - 1, r) steps and
 * the left part at most beta(c, r - 1) steps.
 */
#include "loops/loops.h"

#include <dualrev.h>

#include <math.h>

/* C(c + i, i) from b = C(c + i - 1, i - 1), or SIZE_MAX where that does not
   fit: every caller compares it with a count of steps, which does */
static size_t beta_next(size_t b, size_t c, size_t i)
{
    size_t f = c + i;
    if (b == SIZE_MAX || f < c || b > SIZE_MAX / f)
        return SIZE_MAX;
    return b * f / i; /* exact: C(c + i, i) = C(c + i - 1, i - 1) (c + i) / i */
}

/* C(c + r, r) */
static size_t beta(size_t c, size_t r)
{
    size_t b = 1;
    for (size_t i = 1; i <= r; i++)
        b = beta_next(b, c, i);
    return b;
}

/* the least r with beta(c, r) >= t (c >= 1: beta grows with r).  One
   snapshot or none, beta is t - 1 or about r^2 / 2: closed forms, as
   counting r up to them would take up to t steps; with more, r is small */
static size_t least_repeats(size_t t, size_t c)
{
    if (t <= 1)
        return 0;
    if (c == 1)
        return t - 1;
    size_t r = 0, b = 1;
    if (c == 2) {
        /* (r + 1)(r + 2) / 2 >= t from a guess just below the root */
        double g = (sqrt(8.0 * (double)t + 1.0) - 3.0) / 2.0 - 2.0;
        r = g > 0 ? (size_t)g : 0;
        while ((unsigned __int128)(r + 1) * (r + 2) / 2 < t)
            r++;
        return r;
    }
    while (b < t)
        b = beta_next(b, c, ++r);
    return r;
}

size_t dr_loop_repeats(size_t nsteps, size_t snapshots)
{
    if (snapshots == SIZE_MAX)
        snapshots--;
    return least_repeats(nsteps, snapshots + 1);
}

size_t dr__loop_split(size_t t, size_t s)
{
    size_t c = s + 1, r = least_repeats(t, c);
    /* the left part needs at least beta(c, r - 2) steps, and the right
       part (one snapshot fewer) can take at most beta(c - 1, r) */
    size_t lo = r >= 2 ? beta(c, r - 2) : 1;
    size_t right = beta(c - 1, r);
    if (right < t && t - right > lo)
        lo = t - right;
    return lo < t - 1 ? lo : t - 1;
}
