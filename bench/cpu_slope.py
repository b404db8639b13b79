#!/usr/bin/python3
"""cpu_slope.py - A/B timing of bench executables by CPU time, for a busy machine.

    bench/cpu_slope.py LO HI TRIALS "CMD ... REPS" ["CMD ... REPS" ...]

Runs every command with REPS replaced by LO and by HI repetitions, TRIALS
times, the commands interleaved (so a slow stretch of the host hits all of
them alike), and prints for each the marginal CPU time (user + system) of
one repetition: (min T(HI) - min T(LO)) / (HI - LO), in nanoseconds.  The
fixed cost of a process (start, inputs, first-touch page faults) drops out,
as in the driver's wall-time slope (run.py); CPU time and the minimum are
far steadier than wall time on this shared 2-core VM, where noise only adds.
The commands run with OPENBLAS_NUM_THREADS=1 unless it is set: OpenBLAS's
worker threads spin for a while after the library starts, and that CPU time
grows with the run up to their time-out, so it does not drop out of the
slope (it added about 100 ns a repetition to a 400 ns Jacobian).
Divide by the units of a repetition (n for fdotprod, k*k for fsummatvec).
The wall-time slope (the same minima) is printed beside it: for a parallel
program (fparticles-fork at +RTS -N2) the CPU time counts every thread and
the wall time is what the threads gain.
"""
import os
import resource
import subprocess
import sys
import time


def cpu_time(cmd, reps):
    argv = [a.replace("REPS", str(reps)) for a in cmd]
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    lo, hi, trials = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cmds = [c.split() for c in sys.argv[4:]]
    lows = [[] for _ in cmds]
    highs = [[] for _ in cmds]
    for _ in range(trials):
        for i, cmd in enumerate(cmds):
            lows[i].append(cpu_time(cmd, lo))
            highs[i].append(cpu_time(cmd, hi))
    for i, cmd in enumerate(cmds):
        cpu, wall = ((min(t[k] for t in highs[i]) - min(t[k] for t in lows[i])) / (hi - lo)
                     for k in (0, 1))
        print("%-64s %12.1f ns per repetition (wall %.1f ns)"
              % (" ".join(cmd), cpu * 1e9, wall * 1e9))


if __name__ == "__main__":
    main()
