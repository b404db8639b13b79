#!/usr/bin/env python3
"""run.py - GradBench's evals against dualrev-c, dualrev-hs (and GradBench's own C++
tools and its Haskell tool), through the relay, without Docker or GradBench's CLI; writes
OUT/results.md and OUT/logs/, and exits 1 if an output was judged invalid
or an evaluation failed.  make gradbench runs it (gradbench/README.md)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay import relay  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# sizes: the evals' own lists, cut where a size takes long on a small
# machine (--full: the evals' own defaults)
SIZES = {
    "det": ["-l", "5", "6", "7", "8", "9", "10"],
    "lse": ["-n", "2500", "10000", "40000", "160000", "640000"],
    "llsq": ["-n", "16", "64", "256", "1024", "4096", "-m", "128"],
    "ode": ["-n", "1000", "10000", "-s", "1", "10", "100"],
    "kmeans": ["-k", "10", "100", "-n", "1000", "10000", "-d", "8", "16"],
    "gmm": ["-d", "2", "10", "20", "32", "-k", "5", "10", "25"],
    "lstm": ["-l", "2", "4", "-c", "1024", "4096"],
    "ba": ["--max", "6"],
    "ht": ["--max", "6"],
}

# evals run as several sessions, one per variant: (label, arguments); the
# label prefixes each evaluate's description (ht: the eval's default,
# complicated, and simple; both on the big model)
VARIANTS = {
    "ht": [("complicated", []), ("simple", ["--variant", "simple"])],
}


def cpp_tool_evals(gb, tool):
    path = os.path.join(gb, "tools", tool, "evals.txt")
    if not os.path.exists(path):
        return None
    # a line is an eval and, after a space, the outcomes GradBench accepts
    with open(path) as f:
        return {line.split()[0] for line in f if line.split()}


# GradBench's Haskell tool (tools/haskell: the `ad` package), built here with
# ghc from the checkout's sources, copied into OUT/haskell/ (the checkout is
# never edited).  GradBench builds it with cabal and GHC 9.12; for an older
# GHC and its libraries the copy gets the least change that compiles, each
# only where the installed version lacks what the source uses
# (gradbench/README.md, "GradBench's Haskell tool")
GHC2021 = ("BangPatterns BinaryLiterals ConstrainedClassMethods ConstraintKinds "
           "DeriveDataTypeable DeriveFoldable DeriveFunctor DeriveGeneric DeriveLift "
           "DeriveTraversable EmptyCase EmptyDataDeriving ExistentialQuantification "
           "ExplicitForAll FlexibleContexts FlexibleInstances GADTSyntax "
           "GeneralisedNewtypeDeriving HexFloatLiterals ImportQualifiedPost InstanceSigs "
           "KindSignatures MultiParamTypeClasses NamedFieldPuns NamedWildCards "
           "NumericUnderscores PolyKinds PostfixOperators RankNTypes ScopedTypeVariables "
           "StandaloneDeriving StandaloneKindSignatures TupleSections TypeApplications "
           "TypeOperators TypeSynonymInstances").split()
# evals whose modules need GHC 9.2 (OverloadedRecordDot): left out before it
HS_NEEDS_92 = {"particle": "Particle", "saddle": "Saddle"}


def version(v):
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def pkg_version(pkg, dbs):
    """The newest version of pkg that ghc-pkg finds (the given package dbs
    and its defaults), or None."""
    r = subprocess.run(["ghc-pkg", "--simple-output", "--global", "--user",
                        *[f"--package-db={d}" for d in dbs],
                        "field", pkg, "version"], capture_output=True, text=True)
    vs = r.stdout.split() if r.returncode == 0 else []
    return max(vs, key=version) if vs else None


def build_haskell_tool(gb, out, ad_db):
    """Build GradBench's Haskell tool; returns (program, notes) or (None, why)."""
    if not shutil.which("ghc") or not shutil.which("ghc-pkg"):
        return None, "needs GHC (ghc, ghc-pkg)"
    dbs = [os.path.abspath(ad_db)] if ad_db else []
    ad = pkg_version("ad", dbs)
    if not ad:
        return None, ("the package ad is not installed" + (f" in {ad_db}" if ad_db else "")
                      + " (--ad-db: a GHC package db holding ad; gradbench/README.md)")
    ghc = subprocess.run(["ghc", "--numeric-version"], capture_output=True, text=True).stdout.strip()
    base = pkg_version("base", dbs) or "0"
    vec = pkg_version("vector", dbs) or "0"
    bs = pkg_version("bytestring", dbs) or "0"
    top = os.path.join(out, "haskell")
    src = os.path.join(top, "src")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(os.path.join(gb, "tools/haskell/src"), src)
    edits = []

    def edit(path, old, new, why):
        p = os.path.join(src, path)
        with open(p) as f:
            text = f.read()
        if old not in text:
            return
        with open(p, "w") as f:
            f.write(text.replace(old, new))
        if why not in edits:
            edits.append(why)

    langs = ["-XGHC2021"]
    if version(ghc) < (9, 2):
        langs = ["-XHaskell2010"] + [f"-X{x}" for x in GHC2021]
        for e, mod in HS_NEEDS_92.items():
            p = os.path.join(src, "Main.hs")
            with open(p) as f:
                lines = [l for l in f if f"GradBench.{mod}" not in l]
            text = "".join(lines)
            # the last entry of the list of functions loses its comma
            text = text.replace(",\n  ]", "\n  ]")
            with open(p, "w") as f:
                f.write(text)
        edits.append("GHC2021's extensions named one by one; "
                     f"{' and '.join(HS_NEEDS_92)} left out (OverloadedRecordDot, GHC 9.2)")
    if version(base) < (4, 18):
        if version(base) < (4, 16):
            edit("GradBench/Hello.hs", "import Data.Tuple (Solo (..))",
                 "import GHC.Tuple (Solo (..))", "base " + base + ": Solo from GHC.Tuple")
        for path in ("GradBench/Hello.hs",):
            edit(path, "MkSolo", "Solo", "base " + base + ": Solo's constructor Solo, not MkSolo")
    if version(vec) < (0, 13, 2):
        for f in sorted(os.listdir(os.path.join(src, "GradBench"))):
            edit(os.path.join("GradBench", f), "V.fromArray", "V.fromList",
                 f"vector {vec}: V.fromList on the list the JSON holds, not V.fromArray")
    if version(bs) < (0, 11, 1):
        edit("Main.hs", "import Data.ByteString.Char8 qualified as BS\n",
             "import Data.ByteString.Char8 qualified as BS\nimport Data.ByteString.Lazy qualified\n",
             f"bytestring {bs}: Data.ByteString.Lazy.toStrict, not Data.ByteString's")
        edit("Main.hs", "BS.toStrict", "Data.ByteString.Lazy.toStrict",
             f"bytestring {bs}: Data.ByteString.Lazy.toStrict, not Data.ByteString's")
    prog = os.path.join(top, "gradbench")
    # gradbench.cabal's flags (-Wall, OverloadedStrings, -rtsopts
    # -with-rtsopts=-A500m) at cabal's default optimization, -O1
    cmd = ["ghc", "-O", "-Wall"]
    for d in dbs:
        cmd += ["-package-db", d]
    for p in "ad aeson base bytestring text vector clock deepseq".split():
        cmd += ["-package", p]
    cmd += langs + ["-XOverloadedStrings", "-rtsopts", "-with-rtsopts=-A500m",
                    "-i" + src, "-outputdir", os.path.join(top, "obj"),
                    os.path.join(src, "Main.hs"), "-o", prog]
    with open(os.path.join(top, "build.log"), "w") as log:
        r = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    if r.returncode:
        return None, f"building it with ad-{ad} failed (see {os.path.join(top, 'build.log')})"
    return prog, [f"ad-{ad}" + (f" from {ad_db}" if ad_db else ""), f"GHC {ghc}", *edits]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gradbench", required=True, help="a GradBench checkout")
    ap.add_argument("--tool-bin", help="the dualrev-c program (for the tool dualrev-c)")
    ap.add_argument("--hs-bin", help="the dualrev-hs program (for the tool dualrev-hs)")
    ap.add_argument("--out", required=True, help="where results.md and logs/ go")
    ap.add_argument("--evals", default="hello det lse llsq ode kmeans gmm lstm ba ht saddle particle")
    ap.add_argument("--tools", default="dualrev-c manual")
    ap.add_argument("--codipack", default="",
                    help="a CoDiPack checkout (GradBench uses 2.3.1) for the tool codipack")
    ap.add_argument("--ad-db", default="",
                    help="a GHC package db holding ad, for GradBench's tool haskell "
                         "(without it, ad where ghc-pkg finds it)")
    ap.add_argument("--full", action="store_true", help="the evals' own sizes")
    ap.add_argument("--min-runs", default="1")
    ap.add_argument("--min-seconds", default="1")
    args = ap.parse_args()

    gb = os.path.abspath(args.gradbench)
    ours = {"dualrev-c": args.tool_bin, "dualrev-hs": args.hs_bin}
    out = os.path.abspath(args.out)
    logs = os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)
    if not os.path.exists(os.path.join(gb, "python/gradbench/gradbench/eval.py")):
        sys.exit(f"run.py: {gb} is not a GradBench checkout")

    # GradBench's C++ code includes json.hpp (nlohmann's): Debian's, through
    # an include directory of ours rather than a download into the checkout
    inc = os.path.join(out, "include")
    os.makedirs(inc, exist_ok=True)
    if not os.path.exists(os.path.join(inc, "json.hpp")):
        os.symlink("/usr/include/nlohmann/json.hpp", os.path.join(inc, "json.hpp"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(gb, "python/gradbench")
    env["CXXFLAGS"] = f"-std=c++17 -O3 -Wall -I../../cpp -I{inc}"
    # every tool single-threaded, as GradBench builds its C++ tools
    # (MULTITHREADED=no): an OpenBLAS of more threads also spins a worker
    # thread for about 0.1 s after it is loaded, which on a machine whose two
    # cores are one core's hyperthreads slowed the first evaluates of
    # dualrev-c by up to 1.5x (unless the caller sets its own count)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    py = sys.executable
    evals = args.evals.split()
    tools = args.tools.split()
    for t in tools:
        if t in ours and not ours[t]:
            sys.exit(f"run.py: the tool {t} needs its program: --{'tool' if t == 'dualrev-c' else 'hs'}-bin")
    if args.codipack:
        # header-only: its include directory on the compiler's path
        env["CPATH"] = os.path.join(os.path.abspath(args.codipack), "include")
        if "codipack" not in tools:
            tools.append("codipack")

    hs_tool, hs_notes = None, []
    if "haskell" in tools:
        hs_tool, hs_notes = build_haskell_tool(gb, out, args.ad_db)
        if hs_tool is None:
            print(f"run.py: GradBench's tool haskell skipped: {hs_notes}", flush=True)
        else:
            print("run.py: GradBench's tool haskell built: " + "; ".join(hs_notes), flush=True)

    # the evals validate against GradBench's tool "manual": build it first
    for e in evals:
        if os.path.exists(os.path.join(gb, "tools/manual", e + ".cpp")):
            r = subprocess.run(["make", "-C", "tools/manual", f"bin/{e}", "NATIVE=no"],
                               cwd=gb, env=env, capture_output=True, text=True)
            if r.returncode:
                sys.exit(f"run.py: building GradBench's manual/{e} failed:\n{r.stdout}{r.stderr}")

    results = {}  # (eval, tool) -> relay summary, or a string why not run
    bad = []
    for e in evals:
        base_cmd = [py, os.path.join(HERE, "evalshim.py"),
                    os.path.join(gb, "python/gradbench/gradbench/evals", e, "run.py"),
                    "--min-runs", args.min_runs, "--min-seconds", args.min_seconds]
        if not args.full:
            base_cmd += SIZES.get(e, [])
        variants = VARIANTS.get(e, [("", [])])
        for tool in tools:
            if tool in ours:
                tool_cmd = [os.path.abspath(ours[tool])]
            elif tool == "haskell":
                if hs_tool is None:
                    results[e, tool] = hs_notes
                    continue
                if e not in (cpp_tool_evals(gb, tool) or ()):
                    results[e, tool] = "no implementation"
                    continue
                if e in HS_NEEDS_92 and any(HS_NEEDS_92[e] in n for n in hs_notes):
                    results[e, tool] = "left out: its module needs GHC 9.2 (OverloadedRecordDot)"
                    continue
                tool_cmd = [hs_tool]
            else:
                supported = cpp_tool_evals(gb, tool)
                if tool == "codipack" and not args.codipack:
                    results[e, tool] = "needs a CoDiPack checkout (GRADBENCH_CODIPACK_DIR)"
                    continue
                if supported is None:
                    results[e, tool] = "not a C++ tool of this checkout"
                    continue
                if e not in supported:
                    results[e, tool] = "no implementation"
                    continue
                tool_cmd = [py, os.path.join(gb, "python/gradbench/gradbench/cpp.py"), tool]
            merged = None
            for label, extra in variants:
                name = f"{e}-{label}" if label else e
                print(f"== {name} / {tool}", flush=True)
                t0 = time.time()
                with open(os.path.join(logs, f"{name}-{tool}.jsonl"), "w") as log, \
                     open(os.path.join(logs, f"{name}-{tool}.stderr"), "w") as err:
                    found = relay(base_cmd + extra, tool_cmd, cwd=gb, env=env, log=log, stderr=err)
                found["seconds"] = time.time() - t0
                d = found["define"]
                if d is not None and not d.get("success"):
                    why = (d.get("error") or "").strip().splitlines()
                    results[e, tool] = "define failed: " + (why[-1] if why else "?")
                    print("   " + results[e, tool], flush=True)
                    if tool in ours:
                        bad.append(f"{e}/{tool}: {results[e, tool]}")
                    merged = None
                    break
                if label:
                    for ev in found["evaluations"].values():
                        ev["description"] = f"{label} {ev['description']}"
                for i, ev in sorted(found["evaluations"].items()):
                    ok = ev["success"] and ev["valid"] is not False
                    med = statistics.median(ev["timings"]) / 1e6 if ev["timings"] else float("nan")
                    print(f"   {ev['function']:8} {ev['description']:22} "
                          f"{med:12.4f} ms  {len(ev['timings']):5} runs  "
                          f"{'valid' if ev['valid'] else 'INVALID' if ev['valid'] is False else 'FAILED' if not ev['success'] else '?'}",
                          flush=True)
                    if not ok:
                        bad.append(f"{e}/{tool} {ev['function']} {ev['description']}: "
                                   + (ev["error"] or ev["analysis_error"] or "invalid").strip()[:2000])
                if found["error"] or found["eval_status"] != 0:
                    bad.append(f"{name}/{tool}: session: {found['error'] or 'eval exited with ' + str(found['eval_status'])}")
                if merged is None:
                    merged = found
                else:
                    # one result per eval and tool: the sessions' evaluations
                    # one after another (their ids renumbered)
                    base = max(merged["evaluations"], default=-1) + 1
                    for k, (_, ev) in enumerate(sorted(found["evaluations"].items())):
                        merged["evaluations"][base + k] = ev
                    merged["seconds"] += found["seconds"]
                    merged["error"] = merged["error"] or found["error"]
                    merged["eval_status"] = merged["eval_status"] or found["eval_status"]
            if merged is not None:
                results[e, tool] = merged

    write_results(os.path.join(out, "results.md"), evals, tools, results, args,
                  hs_notes if hs_tool else [])
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({f"{e}/{t}": v for (e, t), v in results.items()}, f, indent=1)
    print(f"wrote {os.path.join(out, 'results.md')}")
    if bad:
        print("\n".join(["run.py: failures:"] + bad), file=sys.stderr)
        sys.exit(1)


def fmt_ms(ns_list):
    if not ns_list:
        return "-"
    ms = statistics.median(ns_list) / 1e6
    return f"{ms:.4g} ms"


def write_results(path, evals, tools, results, args, hs_notes=()):
    lines = ["# GradBench results", "",
             "Median time of one evaluate (over its runs) and whether the eval judged "
             "the output valid; written by gradbench/run.py "
             f"(--min-runs {args.min_runs} --min-seconds {args.min_seconds}"
             f"{' --full' if args.full else ''}).", "",
             "| eval | function | input | " + " | ".join(tools) + " |",
             "|" + "---|" * (3 + len(tools))]
    notes = []
    for e in evals:
        rows = {}  # (function, description) -> {tool: cell}
        order = []
        for t in tools:
            r = results.get((e, t))
            if isinstance(r, str) or r is None:
                if r:
                    notes.append(f"- {e} / {t}: {r}")
                continue
            for _, ev in sorted(r["evaluations"].items()):
                key = (ev["function"], ev["description"])
                if key not in rows:
                    rows[key] = {}
                    order.append(key)
                v = ("valid" if ev["valid"] else "**invalid**" if ev["valid"] is False
                     else "**failed**" if not ev["success"] else "not judged")
                rows[key][t] = f"{fmt_ms(ev['timings'])} ({len(ev['timings'])} runs) {v}"
        for key in order:
            cells = [rows[key].get(t, "-") for t in tools]
            lines.append(f"| {e} | {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    if hs_notes:
        lines += ["", "haskell: GradBench's Haskell tool, " + "; ".join(hs_notes) + "."]
    if notes:
        lines += ["", "Not run:", ""] + notes
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
