/*
 * floor_bench.c - the memory traffic no tape can avoid.
 *
 *     floor-bench <program> <size> <reps>
 *
 * For each program, one repetition writes N 32-byte records (two 64-bit
 * argument ids and two doubles: the record the floor target is defined
 * with, and dualrev's node layout until its nodes became 24 bytes), where N is
 * exactly the number of nodes dualrev's tape records for that program, inputs
 * included (bench_tape_nodes, checked against dr_tape_len), and then reads
 * them all back from the last to the first, accumulating a sum of their
 * fields so the compiler can delete neither loop.  A program whose tape
 * holds n-ary nodes (statements of more than two arguments) also writes
 * and reads back their (argument, partial) entries, 16 bytes each
 * (bench_tape_entries).  The record buffer is
 * allocated once and reused, as dualrev reuses its tape's chunks.
 *
 * No arithmetic of the program itself, no adjoint array, no gradient: a
 * tape-based gradient does at least this much work, so dualrev / floor says
 * how close the engine is to the bandwidth bound.  Checksum: the accumulator.
 */
#include "bench_common.h"

/* a dualrev node's layout; the union lets the reverse loop sum raw words */
typedef union rec {
    struct {
        int64_t a, b;
        double da, db;
    } f;
    uint64_t w[4];
} rec;

/* an n-ary node's (argument, partial) entry */
typedef union entry {
    struct {
        int64_t a;
        double d;
    } f;
    uint64_t w[2];
} entry;

int main(int argc, char **argv)
{
    bench_args a = bench_parse(argc, argv);
    long n = bench_tape_nodes(a.prog, a.size);
    long ne = bench_tape_entries(a.prog, a.size);
    rec *buf = bench_xmalloc((size_t)n * sizeof(rec));
    entry *ent = bench_xmalloc((size_t)(ne > 0 ? ne : 1) * sizeof(entry));
    uint64_t acc = 0;
    for (long r = 0; r < a.reps; r++) {
        bench_clobber(buf);
        bench_clobber(ent);
        /* forward: append one record per operation, one entry per
           argument of an n-ary node */
        for (long i = 0; i < n; i++) {
            buf[i].f.a = i - 1;
            buf[i].f.b = i - 2;
            buf[i].f.da = (double)r;
            buf[i].f.db = 1.0;
        }
        for (long i = 0; i < ne; i++) {
            ent[i].f.a = i - 1;
            ent[i].f.d = (double)r;
        }
        bench_clobber(buf);
        bench_clobber(ent);
        /* reverse: read every record, newest first; integer sums of all four
           words (no floating-point latency chain to slow the floor down) */
        for (long i = n; i-- > 0;)
            acc += (buf[i].w[0] ^ buf[i].w[1]) + (buf[i].w[2] ^ buf[i].w[3]);
        for (long i = ne; i-- > 0;)
            acc += ent[i].w[0] ^ ent[i].w[1];
        bench_use(acc);
    }
    printf("%.10g\n", (double)acc);
    free(ent);
    free(buf);
    return 0;
}
