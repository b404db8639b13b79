#!/bin/sh
# bench/scaling.sh - the parallel scaling tables of bench/README.md
# ("Parallel scaling"), thread counts 1, 2, 4, ... up to the number of
# online CPUs, with the programs of BINDIR (default build/bench/static,
# made by `make -f bench/bench.mk scaling-static BUILD=build`; any build of
# the three programs works).
#
#     bench/scaling.sh [BINDIR] [REPS]
#
# OpenBLAS runs on one thread throughout (OPENBLAS_NUM_THREADS=1), so that
# a thread count means the same for every program: the jobs are the
# parallelism.  Every gradient is checked bit for bit against one thread's
# by scaling-bench itself.
set -eu
BIN=${1:-build/bench/static}
REPS=${2:-7}
export OPENBLAS_NUM_THREADS=1
ncpu=$(getconf _NPROCESSORS_ONLN)
ts=1
t=2
while [ "$t" -le "$ncpu" ]; do ts="$ts $t"; t=$((t * 2)); done
case " $ts " in *" $ncpu "*) ;; *) ts="$ts $ncpu" ;; esac

echo "## $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $ncpu CPUs"
echo
for prog in "own 64 4000" "own 16 4000" "shared 64 4000"; do
    # shellcheck disable=SC2086
    "$BIN/scaling-bench" $prog "$REPS" $ts
    echo
done

echo "nn784 (784-300-100-10, batch 64) split over 16 jobs; fastest of $((REPS * 4)) gradients, ms (record and sweep: the fastest of each)"
echo
echo "| T | gradient | record | sweep | gradient x | record x | sweep x |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
base=
for t in $ts; do
    # "... fastest repetition G us (record R us, sweep S us)" -> "G R S"
    grs=$(BENCH_TIMING=1 BENCH_JOBS=16 BENCH_THREADS=$t \
          "$BIN/nn-array-bench" nn784-split 0 $((REPS * 4)) 2>&1 >/dev/null |
          sed -n 's/.*fastest repetition \([0-9.]*\) us (record \([0-9.]*\) us, sweep \([0-9.]*\) us)/\1 \2 \3/p')
    base=${base:-$grs}
    echo "$t $grs $base" | awk '{ printf "| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n",
        $1, $2 / 1e3, $3 / 1e3, $4 / 1e3, $5 / $2, $6 / $3, $7 / $4 }'
done
us=$(BENCH_TIMING=1 "$BIN/nn-array-bench" nn784 0 $((REPS * 4)) 2>&1 >/dev/null |
     sed -n 's/.*fastest repetition \([0-9.]*\) us.*/\1/p')
echo
echo "unsplit nn784 on one thread: $(awk -v us="$us" 'BEGIN { printf "%.3f", us / 1e3 }') ms"
echo

echo "fparticles-fork (4 jobs); fastest of $((REPS * 400)) gradients, us"
echo
for t in 1 2 4; do
    [ "$t" -le "$ncpu" ] || continue
    BENCH_TIMING=1 BENCH_THREADS=$t "$BIN/fparticles-par" fparticles-fork 0 $((REPS * 400)) 2>&1 >/dev/null |
        sed -n "s/^fparticles (forked, \(.*\)): min \([0-9.]*\) us.*/| \1 | \2 |/p"
done
