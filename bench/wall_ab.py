#!/usr/bin/python3
"""wall_ab.py - A/B timing of whole commands by wall-clock time.

    bench/wall_ab.py TRIALS "CMD ..." ["CMD ..." ...]

Runs every command TRIALS times, the commands interleaved (so a slow
stretch of the host hits all of them alike), and prints each one's median
and minimum wall time and its median relative to the first command's.
For parallel programs, where CPU time (cpu_slope.py) would hide what the
threads gain or lose.  The whole process is timed: use repetition counts
that make start-up negligible.
"""
import statistics
import subprocess
import sys
import time


def wall(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd.split(), stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trials, cmds = int(sys.argv[1]), sys.argv[2:]
    times = {c: [] for c in cmds}
    for _ in range(trials):
        for c in cmds:
            times[c].append(wall(c))
    base = statistics.median(times[cmds[0]])
    for c in cmds:
        med = statistics.median(times[c])
        print("%-50s median %8.1f ms  min %8.1f ms  median/first %.2f"
              % (c, 1e3 * med, 1e3 * min(times[c]), med / base))


if __name__ == "__main__":
    main()
