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

/* C(c + r, r) = C(c + r, c), or SIZE_MAX where that does not fit: every
   caller compares it with a count of steps, which does.  Exact up to there:
   the products are taken in 128 bits (an intermediate product overflowing
   64 bits does not mean the binomial does), over the smaller of c and r. */
static size_t beta(size_t c, size_t r)
{
    size_t k = c < r ? c : r, m = c < r ? r : c;
    unsigned __int128 b = 1;
    for (size_t i = 1; i <= k; i++) {
        /* C(m + i, i) >= m + i: past SIZE_MAX once m + i is */
        unsigned __int128 f = (unsigned __int128)m + i;
        if (f > SIZE_MAX)
            return SIZE_MAX;
        b = b * f / i; /* exact: C(m + i, i) = C(m + i - 1, i - 1) (m + i) / i */
        if (b > SIZE_MAX)
            return SIZE_MAX;
    }
    return (size_t)b;
}

/* the least r with beta(c, r) >= t (c >= 1): beta grows with r, and
   beta(c, t - 1) >= t, so a binary search over [0, t - 1] (at most 64
   evaluations, each over min(c, r) factors) */
static size_t least_repeats(size_t t, size_t c)
{
    if (t <= 1)
        return 0;
    size_t lo = 0, hi = t - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (beta(c, mid) >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
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
