#!/usr/bin/python3
"""bench/run.py - the benchmark driver (system python3, standard library only).

    /usr/bin/python3 bench/run.py --build BUILD [--quick] [--only PROG,...]

For every (program, implementation) pair it
  1. probes the executable once (exit status 2 = "not implemented": the cell
     stays empty), and reads its checksum;
  2. calibrates two repetition counts: reps_hi, about --target seconds of
     repetitions beyond the fixed cost of a process, and reps_lo ~ reps_hi/4;
  3. then times ALL commands in ONE hyperfine run (--shell=none, warmup runs,
     --export-json), so the ratios in a row come from one run on one machine
     state.
Time per unit = (min T(reps_hi) - min T(reps_lo)) / (reps_hi - reps_lo)
/ units per rep (--stat median for medians): the marginal cost of a
repetition, as criterion's regression
over iteration counts measures it (the reference timings in benchmarks.md are
criterion's).  Process start-up, input construction and the first
repetition's page faults are what drops out; nothing else is subtracted.  The
whole-process time per unit is kept in the details table.

It prints a markdown table and writes it to BUILD/bench/results.md, the raw
hyperfine JSON to BUILD/bench/hyperfine.json and, when gnuplot is there, a bar
chart of the ratios to BUILD/bench/ratios.png.

Executables (all with the interface `<exe> <program> <size> <reps>`, one
checksum line on stdout; see bench/c/bench_common.h):
  BUILD/bench/primal-bench, dualrev-bench, adolc-bench, floor-bench   (C)
  BUILD/bench/codipack-bench, adept-bench   (C++, optional: built by bench.mk
      from the user's own checkouts, CODIPACK_DIR / ADEPT_DIR; their columns
      and the ratio dualrev / the faster of the two appear when they exist)
  BUILD/bench/hs/dualrev-hs-bench, dualrev-ad-bench, ad-bench   (Haskell,
      optional; fparticles threads are given as `+RTS -N<k>` after the args)
C executables get the fparticles thread count in BENCH_THREADS.
"""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

# ----------------------------------------------------------------- rows

class Row:
    """One table row.  `exe` maps an implementation key to another executable
    in BUILD/bench for this row (same interface); `progs` maps an
    implementation key to another program name for this row; `impls`, when
    given, is the set of implementation keys that run on it; `c=False` runs
    only the Haskell ones."""
    def __init__(self, label, prog, size=0, threads=1, c=True, unit="unit",
                 exe=None, impls=None, progs=None):
        self.label, self.prog, self.size = label, prog, size
        self.threads, self.c, self.unit = threads, c, unit
        self.exe, self.impls = exe or {}, impls
        self.progs = progs or {}

    @property
    def units(self):
        """units per repetition, as bench_units() in bench_common.h"""
        if self.prog == "fdotprod":
            return self.size
        if self.prog == "fsummatvec":
            k = int(math.floor(math.sqrt(self.size) + 0.5))
            return k * k
        return 1


def all_rows(quick):
    rows = [
        Row("fmult", "fmult", unit="gradient"),
        Row("fdotprod, n = 10^3", "fdotprod", 10**3, unit="element"),
        Row("fdotprod, n = 10^6", "fdotprod", 10**6, unit="element"),
        Row("fsummatvec, n = 10^3", "fsummatvec", 10**3, unit="matrix element"),
        Row("fsummatvec, n = 10^6", "fsummatvec", 10**6, unit="matrix element"),
        Row("frotvecquat", "frotvecquat", unit="3x7 Jacobian"),
        Row("fneural", "fneural", unit="gradient"),
        # the C fparticles is sequential: its C columns appear on the
        # 1-thread row only; the Haskell executables run both
        Row("fparticles, 1 thread", "fparticles", threads=1, unit="gradient"),
        Row("fparticles, 2 threads", "fparticles", threads=2, c=False,
            unit="gradient"),
        # fork-join fparticles with the parallel API (bench/c/fparticles_par.c
        # -> fparticles-par; dualrev-bench exits 2 for it, so without that
        # executable the rows are left out).  Primal, ADOL-C and the floor run
        # the sequential program for them.
        Row("fparticles-fork, 1 thread", "fparticles-fork", threads=1,
            unit="gradient", exe={"dualrev": "fparticles-par"},
            impls={"primal", "dualrev", "adolc", "floor", "hs", "ad", "hsad"}),
        Row("fparticles-fork, 2 threads", "fparticles-fork", threads=2,
            unit="gradient", exe={"dualrev": "fparticles-par"},
            impls={"primal", "dualrev", "adolc", "floor", "hs", "ad", "hsad"}),
        # bulk-array versions (bench/c/nn_array_bench.c: nn-array-bench and
        # its -DNN_PRIMAL twin nn-primal-bench); ADOL-C and ad run their
        # scalar fneural, dualrev-hs its array version (fneural-array)
        Row("fneural, arrays", "fneural", unit="gradient",
            exe={"dualrev": "nn-array-bench", "primal": "nn-primal-bench"},
            impls={"primal", "dualrev", "adolc", "hs", "ad", "replay",
                   "hstaped"},
            progs={"hs": "fneural-array", "hstaped": "fneural-array-taped",
                   "replay": "nn-fneural"}),
        Row("nn784, arrays, batch 64", "nn784", unit="gradient",
            exe={"dualrev": "nn-array-bench", "primal": "nn-primal-bench"},
            impls={"primal", "dualrev", "hs", "replay", "hstaped"}),
        Row("nn784, arrays, batch split over 2 jobs", "nn784-split",
            threads=2, unit="gradient",
            exe={"dualrev": "nn-array-bench", "primal": "nn-primal-bench"},
            impls={"primal", "dualrev"}),
    ]
    if quick:
        rows = [r for r in rows if r.size != 10**3]
    return rows


class Impl:
    """An implementation column.  `suffix` is added to each row's program
    name (the Haskell executable's taped programs are `fmult-taped`, ...)."""
    def __init__(self, key, title, path, haskell=False, gradient=True, suffix="",
                 env=()):
        self.key, self.title, self.path = key, title, path
        self.haskell, self.gradient, self.suffix = haskell, gradient, suffix
        self.env = list(env)

    def exe(self, row):
        if self.key in row.exe:
            return os.path.join(os.path.dirname(self.path), row.exe[self.key])
        return self.path

    def argv(self, row, reps):
        args = [self.exe(row), row.progs.get(self.key, row.prog + self.suffix),
                str(row.size), str(reps)]
        if self.haskell:
            if row.prog.startswith("fparticles"):
                args += ["+RTS", "-N%d" % row.threads, "-RTS"]
            return args
        return ["env", "BENCH_THREADS=%d" % row.threads] + self.env + args

    def applies(self, row):
        if row.impls is not None and self.key not in row.impls:
            return False
        if not os.access(self.exe(row), os.X_OK):
            return False
        return row.c or self.haskell


# --------------------------------------------------------------- helpers

def fmt_time(s):
    if s is None:
        return "—"
    for scale, unit in ((1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms")):
        if s < scale * 1000:
            v = s / scale
            return ("%.3g" % v if v < 100 else "%.0f" % v) + " " + unit
    return "%.3g s" % s


def fmt_ratio(x):
    if x is None:
        return "—"
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def run_once(argv, cwd, timeout=120):
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, time.perf_counter() - t0, p.stdout.strip(), p.stderr.strip()


def calibrate(impl, row, target, cwd):
    """((reps_lo, reps_hi), checksum) or (None, reason).

    reps_hi repetitions take about `target` seconds beyond the process's fixed
    cost (start-up, input construction, the first repetition's page faults);
    reps_lo is about a quarter of that, and at least 3 repetitions fewer.
    Each probe is the faster of two runs (the machine may be busy)."""
    def probe(reps):
        best = None
        for _ in range(2):
            rc, dt, out, err = run_once(impl.argv(row, reps), cwd)
            if rc != 0:
                return rc, None, out, err
            best = dt if best is None else min(best, dt)
        return 0, best, out, err

    rc, t1, out, err = probe(1)
    if rc == 2:
        return None, "not implemented"
    if rc != 0:
        return None, "failed (exit %d): %s" % (rc, err.splitlines()[-1] if err else "")
    checksum = out.splitlines()[-1] if out else ""
    # grow until the extra repetitions clearly dominate the noise
    reps, dt = 1, t1
    while dt - t1 < 0.1 and reps < 10**9:
        reps *= 8 if (dt - t1 < 0.02 and t1 < 0.05) else 2
        rc, dt, out, err = probe(reps)
        if rc != 0:
            return None, "failed (exit %d) at %d reps" % (rc, reps)
    slope = (dt - t1) / (reps - 1)
    if slope <= 0:
        slope = dt / reps
    if slope > target / 3:
        # one repetition alone is long enough to measure (n = 10^6 rows of
        # the slower implementations): keep those processes short
        return (1, 2, slope), checksum
    hi = max(4, int(round(target / slope)))
    lo = max(1, min(int(round(hi / 4.0)), hi - 3))
    return (lo, hi, slope), checksum


def checksums_agree(a, b):
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    return abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y))


def git_rev():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


# ------------------------------------------------------------------ chart

def chart(rows_out, have_hs, tools_title, path, workdir):
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot not found (install gnuplot-nox): chart skipped"
    cols = [("grad/primal", "gp"), ("dualrev/ADOL-C", "da"),
            ("dualrev/floor", "df")]
    if tools_title:
        cols += [("dualrev/min(%s)" % tools_title.replace(" or ", ",")
                  if " or " in tools_title else "dualrev/" + tools_title, "dt")]
    if have_hs:
        cols += [("ad/dualrev-hs", "ah")]
    # gnuplot rejects a column without a single value
    cols = [c for c in cols if any(r.get(c[1]) for _, r in rows_out)]
    if not cols:
        return "no ratios to plot: chart skipped"
    dat = os.path.join(workdir, "ratios.dat")
    with open(dat, "w") as f:
        f.write("label " + " ".join('"%s"' % c[0] for c in cols) + "\n")
        n = 0
        for label, r in rows_out:
            if all(r.get(k) is None for _, k in cols):
                continue
            n += 1
            f.write('"%s" ' % label.replace(", ", "\\n") +
                    " ".join(("%g" % r[k]) if r.get(k) else "NaN" for _, k in cols)
                    + "\n")
    if n == 0:
        return "no ratios to plot: chart skipped"
    plots = ", ".join(
        "'%s' using %d:xtic(1) title columnheader(%d)" % (dat, i + 2, i + 2)
        for i in range(len(cols)))
    script = """
set terminal png size 1400,700 font ",10"
set output '%s'
set title 'dualrev benchmark ratios (log scale; 1 = parity)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set yrange [0.001:*]
set grid ytics
set key top left
set xtics font ",8"
set bmargin 5
set ylabel 'ratio'
plot %s, 1 with lines lc rgb 'black' notitle
""" % (path, plots)
    p = subprocess.run([gp], input=script, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0 or not os.path.exists(path):
        return "gnuplot failed: %s" % p.stderr.strip()[-300:]
    return None


# ------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory")
    ap.add_argument("--target", type=float, default=0.3,
                    help="seconds per process (default 0.3)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--quick", action="store_true",
                    help="skip the n = 10^3 rows, 5 runs, 1 warmup")
    ap.add_argument("--only", default="",
                    help="comma-separated programs (e.g. fdotprod,fneural)")
    ap.add_argument("--impls", default="",
                    help="comma-separated implementations "
                         "(primal,dualrev,adolc,codi,adept,floor,hs,ad,hsad)")
    ap.add_argument("--out", default="", help="results.md path")
    ap.add_argument("--stat", choices=("min", "median"), default="min",
                    help="statistic of each command's runs (default min: on a "
                         "shared machine noise only adds time)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.warmup = 5, 1

    b = os.path.join(args.build, "bench")
    hsdir = os.path.join(b, "hs")
    impls = [
        Impl("primal", "primal (C)", os.path.join(b, "primal-bench"), gradient=False),
        Impl("dualrev", "dualrev (C API)", os.path.join(b, "dualrev-bench")),
        # recorded once at order 2, replayed per repetition (bench/README.md,
        # "Record once, replay")
        Impl("replay", "dualrev replay (C)", os.path.join(b, "dualrev-replay-bench")),
        Impl("adolc", "ADOL-C", os.path.join(b, "adolc-bench")),
        # ADOL-C's own tape reuse: taped once, gradient() at each repetition
        Impl("adolconce", "ADOL-C taped once", os.path.join(b, "adolc-bench"),
             env=["ADOLC_TAPE_ONCE=1"]),
        Impl("floor", "floor", os.path.join(b, "floor-bench"), gradient=False),
        Impl("codi", "CoDiPack", os.path.join(b, "codipack-bench")),
        Impl("adept", "Adept", os.path.join(b, "adept-bench")),
        Impl("hs", "dualrev-hs", os.path.join(hsdir, "dualrev-hs-bench"), haskell=True),
        Impl("hstaped", "dualrev-hs tapedGrad", os.path.join(hsdir, "dualrev-hs-bench"),
             haskell=True, suffix="-taped"),
        Impl("ad", "ad", os.path.join(hsdir, "ad-bench"), haskell=True),
        # the ad programs with the import switched to Numeric.DualRev.AD
        Impl("hsad", "dualrev-AD", os.path.join(hsdir, "dualrev-ad-bench"), haskell=True),
    ]
    notes = []
    if not shutil.which("hyperfine"):
        sys.exit("bench: hyperfine not found (make deps-bench installs it)")
    by_key = {im.key: im for im in impls}
    for key in ("primal", "dualrev", "adolc", "floor"):
        if not os.access(by_key[key].path, os.X_OK):
            sys.exit("bench: %s missing (make -f bench/bench.mk bench-c)"
                     % by_key[key].path)
    for key, var in (("codi", "CODIPACK_DIR"), ("adept", "ADEPT_DIR")):
        if not os.access(by_key[key].path, os.X_OK):
            notes.append("%s not built (make bench %s=<checkout>, bench/README.md): "
                         "its column skipped" % (by_key[key].title, var))
    hs_exists = os.access(by_key["hs"].path, os.X_OK)
    ad_exists = os.access(by_key["ad"].path, os.X_OK)
    if not os.path.exists("haskell/haskell.mk") and not hs_exists:
        notes.append("Haskell front end not built: dualrev-hs and ad rows skipped")
    elif not hs_exists:
        notes.append("Haskell front end not built (%s missing): dualrev-hs and ad "
                     "rows skipped" % by_key["hs"].path)
    elif not ad_exists:
        notes.append("ad package not installed: ad rows skipped")
    impls = [im for im in impls if os.access(im.path, os.X_OK)]
    if args.impls:
        want = set(args.impls.split(","))
        impls = [im for im in impls if im.key in want]
    for n in notes:
        print("bench: " + n, flush=True)

    rows = all_rows(args.quick)
    if args.only:
        want = set(args.only.split(","))
        rows = [r for r in rows if r.prog in want]

    # ADOL-C may write tape files into the working directory: use a scratch one
    workdir = tempfile.mkdtemp(prefix="dualrev-bench-")
    # absolute paths, since the processes run in workdir
    for im in impls:
        im.path = os.path.abspath(im.path)

    # 1-2: probe and calibrate
    print("bench: calibrating (target %.2f s per process)..." % args.target, flush=True)
    plan = []  # (row, impl, (reps_lo, reps_hi))
    cells = {}  # (row label, impl key) -> dict
    for row in rows:
        for im in impls:
            if not im.applies(row):
                continue
            reps, info = calibrate(im, row, args.target, workdir)
            if reps is None:
                if info != "not implemented":
                    notes.append("%s on %s: %s" % (im.title, row.label, info))
                    print("bench: %s on %s: %s" % (im.title, row.label, info), flush=True)
                continue
            cells[(row.label, im.key)] = {"reps": reps, "checksum": info}
            plan.append((row, im, reps))
    # checksums of the gradient implementations must agree
    for row in rows:
        grads = [(im.title, cells[(row.label, im.key)]["checksum"]) for im in impls
                 if im.gradient and (row.label, im.key) in cells]
        for title, cs in grads[1:]:
            if not checksums_agree(cs, grads[0][1]):
                msg = "CHECKSUM MISMATCH on %s: %s %s vs %s %s" % (
                    row.label, grads[0][0], grads[0][1], title, cs)
                notes.append(msg)
                print("bench: " + msg, flush=True)
    # drop rows where dualrev does not run and nothing Haskell does either
    plan = [p for p in plan
            if (p[0].label, "dualrev") in cells or (p[0].label, "hs") in cells
            or (p[0].label, "ad") in cells]
    for key in list(cells):
        if not any(p[0].label == key[0] and p[1].key == key[1] for p in plan):
            del cells[key]
    if not plan:
        sys.exit("bench: nothing to run")

    # 3: one hyperfine run over every command
    jpath = os.path.abspath(os.path.join(b, "hyperfine.json"))
    # hyperfine runs a command for ~3 s, within [min-runs, max-runs]: the
    # 0.3 s commands get --runs, the few multi-second ones fewer
    cmd = ["hyperfine", "--shell=none", "--style", "basic",
           "--warmup", str(args.warmup),
           "--min-runs", str(max(3, args.runs // 2)), "--max-runs", str(args.runs),
           "--export-json", jpath]
    for row, im, (lo, hi, _) in plan:
        for r in (lo, hi):
            cmd += ["-n", "%s | %s | %d" % (row.label, im.key, r),
                    " ".join(im.argv(row, r))]
    print("bench: hyperfine over %d commands (~%.0f s)..." %
          (2 * len(plan), len(plan) * (args.warmup + args.runs) * args.target * 1.6),
          flush=True)
    hf = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(b, "hyperfine.log"), "w") as f:
        f.write(hf.stdout)
    if hf.returncode != 0:
        print(hf.stdout[-3000:])
        sys.exit("bench: hyperfine failed")
    with open(jpath) as f:
        results = {r["command"]: r for r in json.load(f)["results"]}
    for row, im, (lo, hi, cal) in plan:
        rl = results["%s | %s | %d" % (row.label, im.key, lo)]
        rh = results["%s | %s | %d" % (row.label, im.key, hi)]
        c = cells[(row.label, im.key)]
        c["t_lo"], c["t_hi"] = rl[args.stat], rh[args.stat]
        # the cost of one more repetition: the slope between the two
        # process times (as criterion's regression on iterations)
        slope = (c["t_hi"] - c["t_lo"]) / (hi - lo)
        if slope <= 0:
            notes.append("%s on %s: no measurable slope (noise); whole-process "
                         "time used" % (im.title, row.label))
            slope = c["t_hi"] / hi
        if c["t_hi"] - c["t_lo"] < 0.05 * cal * (hi - lo):
            notes.append("%s on %s: the extra repetitions took %.3f s where "
                         "calibration predicted %.3f s; are repetitions being "
                         "optimised away or cached?" % (
                             im.title, row.label, c["t_hi"] - c["t_lo"],
                             cal * (hi - lo)))
        c["unit"] = slope / row.units
        c["whole"] = c["t_hi"] / (hi * row.units)
        c["rsd"] = max((x["stddev"] or 0.0) / x["mean"] for x in (rl, rh))

    # table
    have_hs = any(im.key in ("hs", "ad") for im in impls)
    have_hsad = any(im.key == "hsad" for im in impls)
    have_replay = any(im.key in ("replay", "hstaped") for im in impls)
    # the C++ tools' columns, for those that were run
    tools = [im for im in impls if im.key in ("codi", "adept")]
    def t(row, key):
        c = cells.get((row.label, key))
        return c.get("unit") if c else None
    def ratio(a, b):
        return a / b if a is not None and b else None

    head = ["program (unit)", "primal", "dualrev", "ADOL-C"]
    head += [im.title for im in tools]
    head += ["floor", "dualrev / primal", "dualrev / ADOL-C", "dualrev / floor"]
    # dualrev against the faster of CoDiPack and Adept on each row
    tools_title = " or ".join(im.title for im in tools)
    if len(tools) > 1:
        head += ["dualrev / best of %s" % ", ".join(im.title for im in tools)]
    elif tools:
        head += ["dualrev / %s" % tools_title]
    if have_hs:
        head += ["dualrev-hs", "ad", "dualrev-hs / primal", "ad / dualrev-hs"]
    if have_hsad:
        head += ["dualrev-AD", "ad / dualrev-AD", "dualrev-AD / dualrev-hs"]
    if have_replay:
        head += ["replay (C)", "replay / dualrev", "ADOL-C taped once",
                 "replay / ADOL-C taped once", "tapedGrad (hs)",
                 "tapedGrad / dualrev-hs", "tapedGrad / dualrev"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    rows_out = []
    for row in rows:
        if not any((row.label, im.key) in cells and "unit" in cells[(row.label, im.key)]
                   for im in impls):
            continue
        p, d, a, fl = (t(row, k) for k in ("primal", "dualrev", "adolc", "floor"))
        tt = [t(row, im.key) for im in tools]
        best = min([x for x in tt if x is not None], default=None)
        rr = {"gp": ratio(d, p), "da": ratio(d, a), "df": ratio(d, fl),
              "dt": ratio(d, best)}
        cellv = [fmt_time(p), fmt_time(d), fmt_time(a)]
        cellv += [fmt_time(x) for x in tt]
        cellv += [fmt_time(fl), fmt_ratio(rr["gp"]), fmt_ratio(rr["da"]),
                  fmt_ratio(rr["df"])]
        if tools:
            cellv += [fmt_ratio(rr["dt"])]
        if have_hs:
            h, ad = t(row, "hs"), t(row, "ad")
            rr["ah"] = ratio(ad, h)
            cellv += [fmt_time(h), fmt_time(ad), fmt_ratio(ratio(h, p)),
                      fmt_ratio(rr["ah"])]
        if have_hsad:
            hsad = t(row, "hsad")
            cellv += [fmt_time(hsad), fmt_ratio(ratio(t(row, "ad"), hsad)),
                      fmt_ratio(ratio(hsad, t(row, "hs")))]
        if have_replay:
            rp, tg, ao = t(row, "replay"), t(row, "hstaped"), t(row, "adolconce")
            cellv += [fmt_time(rp), fmt_ratio(ratio(rp, d)), fmt_time(ao),
                      fmt_ratio(ratio(rp, ao)), fmt_time(tg),
                      fmt_ratio(ratio(tg, t(row, "hs"))), fmt_ratio(ratio(tg, d))]
        lines.append("| %s (%s) | %s |" % (row.label, row.unit, " | ".join(cellv)))
        rows_out.append((row.label, rr))
    table = "\n".join(lines)

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    hfv = subprocess.run(["hyperfine", "--version"], stdout=subprocess.PIPE,
                         text=True).stdout.strip()
    header = ("Time per unit = the cost of one more repetition / units per repetition: "
              "each cell is timed at two repetition counts (about %.2f s and a quarter "
              "of that beyond the fixed cost of a process), and the slope between the "
              "two hyperfine %ss (%d runs, fewer for multi-second commands, after "
              "%d warmups each) is the time per "
              "repetition, as criterion's regression does; process start-up and first-"
              "touch page faults drop out. All commands in one hyperfine run.\n\n"
              "Machine: %s, %d cores, %s; %s; git %s; %s.\n"
              % (args.target, args.stat, args.runs, args.warmup, cpu_name(), os.cpu_count() or 0,
                 platform.platform(), hfv, git_rev(), now))
    reps_lines = ["", "<details><summary>commands: reps (low, high), process "
                  "times (%s), whole-process time per unit, checksum, spread</summary>" % args.stat, "",
                  "| command (at the high reps) | reps | times | whole process "
                  "/ unit | checksum | max stddev/mean |",
                  "|---|---:|---:|---:|---:|---:|"]
    for row, im, (lo, hi, _) in plan:
        c = cells[(row.label, im.key)]
        cmdline = " ".join(im.argv(row, hi)).replace(os.path.abspath(b), b)
        if not im.haskell and not row.prog.startswith("fparticles"):
            cmdline = cmdline.replace("env BENCH_THREADS=1 ", "")
        reps_lines.append("| `%s` | %d, %d | %.3f s, %.3f s | %s | %s | %.1f%% |" % (
            cmdline, lo, hi, c["t_lo"], c["t_hi"], fmt_time(c["whole"]),
            c["checksum"], 100 * c.get("rsd", 0)))
    reps_lines += ["", "</details>"]
    md = header + "\n" + table + "\n"
    if notes:
        md += "\n" + "\n".join("- " + n for n in notes) + "\n"
    md += "\n".join(reps_lines) + "\n"

    png = os.path.join(b, "ratios.png")
    err = chart(rows_out, have_hs, tools_title, png, workdir)
    if err:
        print("bench: " + err, flush=True)
        md += "\n- " + err + "\n"
    out = args.out or os.path.join(b, "results.md")
    with open(out, "w") as f:
        f.write(md)
    shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(md)
    print("bench: table in %s%s" % (out, "" if err else ", chart in " + png))


if __name__ == "__main__":
    main()
