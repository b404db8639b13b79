#!/bin/sh
# test_session.sh TOOL [NAME] - a GradBench tool (dualrev-c, or NAME:
# dualrev-hs) through its stdin and stdout: a short session, its responses
# checked line by line (timings, which vary, left out of the comparison)
set -eu
tool=$1
name=${2:-dualrev-c}
got=$(printf '%s\n' \
  '{"id":0,"kind":"start","eval":"llsq"}' \
  '{"id":1,"kind":"define","module":"llsq"}' \
  '{"id":2,"kind":"evaluate","module":"llsq","function":"primal","input":{"x":[0,0],"n":3,"min_runs":2,"min_seconds":0}}' \
  '{"id":3,"kind":"analysis","of":2,"valid":true}' \
  '{"id":4,"kind":"evaluate","module":"hello","function":"double","input":"two"}' \
  '{"id":5,"kind":"end"}' | "$tool" | sed 's/,"timings":\[[^]]*\]//')
want='{"id":0,"tool":"'$name'"}
{"id":1,"success":true}
{"id":2,"success":true,"output":1.0}
{"id":3}
{"id":4,"success":false,"error":"hello: the input must be a number"}'
if [ "$got" != "$want" ]; then
  echo "test_session.sh: $name answered"
  echo "$got"
  echo "test_session.sh: instead of"
  echo "$want"
  exit 1
fi
echo "test_session.sh: $name: ok"
