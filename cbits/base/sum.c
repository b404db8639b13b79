/*
 * sum.c - the sum of an array of doubles (dr_arr_sum's value and tangents).
 *
 * One accumulator makes the loop a chain of dependent additions, one per
 * latency of an add (4 cycles): the sum of a 784-300 weight matrix took 8 %
 * of nn784's taped gradient.  Eight partial sums in four pairs (SSE2, which
 * every x86-64 has) run at the loads' speed, and the error of the result
 * grows with n/8 rather than n.  The order of the additions is fixed, so
 * every call on the same data gives the same bits.
 */
#include "base/base.h"

double dr__sum_doubles(const double *x, size_t n)
{
    dr__d2 a = {0.0, 0.0}, b = a, c = a, d = a;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const dr__d2 *s = (const dr__d2 *)(const void *)(x + i);
        a += s[0];
        b += s[1];
        c += s[2];
        d += s[3];
    }
    a = (a + b) + (c + d);
    double acc = a[0] + a[1];
    for (; i < n; i++)
        acc += x[i];
    return acc;
}
