#!/usr/bin/env python3
"""run.py - GradBench's evals against dualrev-c, dualrev-hs (and GradBench's own C++
tools), through the relay, without Docker or GradBench's CLI; writes
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
    with open(path) as f:
        return set(f.read().split())


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

    write_results(os.path.join(out, "results.md"), evals, tools, results, args)
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


def write_results(path, evals, tools, results, args):
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
    if notes:
        lines += ["", "Not run:", ""] + notes
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
