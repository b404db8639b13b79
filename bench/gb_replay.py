#!/usr/bin/python3
"""Replays the evaluate messages of one GradBench eval to GradBench tools,
for same-run comparisons of builds without GradBench's own runner.

  bench/gb_replay.py LOG FUNCTION ROUNDS TOOL...

LOG is the message log that gradbench/run.py wrote (OUT/logs/EVAL-TOOL.jsonl);
each input of FUNCTION is sent to each TOOL (a tool program speaking the
protocol on stdin/stdout), the tools in turn, ROUNDS times; printed: the
median time of one evaluate per input and tool (the median over the
rounds of each round's median).  RUNS and SECS (environment, default 3 and
0.3) replace each input's min_runs and min_seconds."""
import json, os, statistics, subprocess, sys

log, fn, rounds, tools = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
msgs = []
for line in open(log):
    rec = json.loads(line)
    if rec.get('from') != 'eval':
        continue
    m = json.loads(rec['message'])
    if m.get('kind') == 'evaluate' and m.get('function') == fn:
        if isinstance(m.get('input'), dict):
            m['input']['min_runs'] = int(os.environ.get('RUNS', 3))
            m['input']['min_seconds'] = float(os.environ.get('SECS', 0.3))
        msgs.append(m)
messages = ''.join(json.dumps(m) + '\n' for m in msgs).encode()
times = {}
for _ in range(rounds):
    for tool in tools:
        out = subprocess.run([tool], input=messages, capture_output=True, check=True).stdout
        for i, line in enumerate(l for l in out.decode().splitlines() if l.strip()):
            r = json.loads(line)
            if not r.get('success'):
                sys.exit('%s: input %d: %s' % (tool, i, r.get('error')))
            times.setdefault((i, tool), []).append(
                statistics.median(t['nanoseconds'] for t in r['timings']))
for i, m in enumerate(msgs):
    print('%-20s' % (m.get('description') or i),
          '  '.join('%s %.4g ms' % (tool, statistics.median(times[(i, tool)]) / 1e6) for tool in tools))
