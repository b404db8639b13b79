#!/usr/bin/env python3
"""relay.py - connect a GradBench eval to a tool: the eval's stdout lines go
to the tool's stdin and the tool's response lines back to the eval's stdin,
one message and one response at a time, as GradBench's own runner does.
Every message and response is logged (JSON lines), and what the session
found (each evaluate's timings and success, each analysis's validity) is
returned.

As a command:
    relay.py [--cwd DIR] [--log FILE] --eval 'CMD ARGS' --tool 'CMD ARGS'
prints the summary as JSON and exits 1 if an output was judged invalid or
an evaluation failed.
"""
import argparse
import json
import shlex
import subprocess
import sys
import time


def relay(eval_cmd, tool_cmd, cwd=None, env=None, log=None, stderr=None):
    """Run one session; returns a dict: define (the define response, or
    None), evaluations (id -> {function, description, success, timings,
    error, valid, analysis_error}), error (a message when the session broke
    off, else None), eval_status."""
    ev = subprocess.Popen(eval_cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=stderr, text=True)
    tool = subprocess.Popen(tool_cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, text=True)
    found = {"define": None, "evaluations": {}, "error": None}
    evals = found["evaluations"]

    def record(direction, line):
        if log:
            log.write(json.dumps({"from": direction, "t": time.time(),
                                  "message": line.rstrip("\n")}) + "\n")

    try:
        while True:
            line = ev.stdout.readline()
            if not line:
                break
            record("eval", line)
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                found["error"] = "the eval sent a line that is not JSON"
                break
            kind = msg.get("kind")
            if kind == "evaluate":
                evals[msg["id"]] = {
                    "function": msg.get("function"),
                    "description": msg.get("description", ""),
                    "success": False, "timings": [], "error": None,
                    "valid": None, "analysis_error": None}
            elif kind == "analysis" and msg.get("of") in evals:
                evals[msg["of"]]["valid"] = bool(msg.get("valid"))
                evals[msg["of"]]["analysis_error"] = msg.get("error")
            tool.stdin.write(line)
            tool.stdin.flush()
            if kind == "end":
                break
            resp_line = tool.stdout.readline()
            if not resp_line:
                found["error"] = "the tool ended without a response"
                break
            record("tool", resp_line)
            try:
                resp = json.loads(resp_line)
            except json.JSONDecodeError:
                found["error"] = "the tool sent a line that is not JSON"
                break
            if kind == "define":
                found["define"] = resp
            elif kind == "evaluate":
                e = evals[msg["id"]]
                e["success"] = bool(resp.get("success"))
                e["error"] = resp.get("error")
                e["timings"] = [t["nanoseconds"] for t in resp.get("timings") or []
                                if t.get("name") == "evaluate"]
            ev.stdin.write(resp_line)
            ev.stdin.flush()
    except BrokenPipeError:
        found["error"] = "a pipe broke (one side ended early)"
    finally:
        for p in (ev, tool):
            try:
                p.stdin.close()
            except BrokenPipeError:
                pass
        found["eval_status"] = ev.wait()
        try:
            tool.wait(timeout=30)
        except subprocess.TimeoutExpired:
            tool.kill()
            tool.wait()
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval", required=True, help="the eval's command line")
    ap.add_argument("--tool", required=True, help="the tool's command line")
    ap.add_argument("--cwd", help="the directory both run in")
    ap.add_argument("--log", help="a file for every message (JSON lines)")
    args = ap.parse_args()
    log = open(args.log, "w") if args.log else None
    found = relay(shlex.split(args.eval), shlex.split(args.tool),
                  cwd=args.cwd, log=log)
    if log:
        log.close()
    print(json.dumps(found, indent=1))
    bad = found["error"] or found["eval_status"] != 0 or any(
        not e["success"] or e["valid"] is False
        for e in found["evaluations"].values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
