#!/bin/sh
# Compile-fail tests of the Haskell front end.  Each module in this directory
# uses one construct outside the supported language (or misuses a splice) and
# must FAIL to compile, with every message named by its "-- EXPECT: ..." lines
# in the compiler's output, and without a GHC panic.  lib/ holds helper
# modules that some of them import.  The modules in ok/ must compile with
# -Wall -Werror: the code the splices generate draws no warning.  Those in
# warn/ must compile, with the warnings their EXPECT lines name.
#
# usage: run.sh [GHC COMMAND...]
#   The command (default: $HS_GHC, else "ghc -package dualrev") must be able to
#   load the dualrev package; haskell.mk passes
#   "ghc -package-db BUILD/hs/dist/packagedb/ghc-VERSION -package dualrev"
#   (the built package's database), not cabal exec, so that the cases may
#   run while cabal builds the test suites in the same build folder.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then ghc="$*"; else ghc="${HS_GHC:-ghc -package dualrev}"; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
# every "-- EXPECT: ..." line of module $1 in the compiler's output $2
# (what: the error or the warnings), on top of the checks made so far (ok);
# then the verdict on the module
expect() {
  grep '^-- EXPECT: ' "$1" | sed 's/^-- EXPECT: //' >"$tmp/expect"
  while IFS= read -r e; do
    if ! grep -qF -- "$e" "$2"; then
      echo "FAIL $name: $3 lacks: $e"; ok=0
    fi
  done <"$tmp/expect"
  if [ $ok -eq 1 ]; then
    echo "ok   $name"; pass=$((pass + 1))
  else
    sed 's/^/       | /' "$2" | head -n 30
    fail=$((fail + 1))
  fi
}
for f in "$dir"/*.hs; do
  name=$(basename "$f" .hs)
  out="$tmp/$name.out"
  if ! grep -q '^-- EXPECT: ' "$f"; then
    echo "FAIL $name: no -- EXPECT: line"; fail=$((fail + 1)); continue
  fi
  if $ghc -fno-code -outputdir "$tmp/o-$name" -i"$dir/lib" "$f" >"$out" 2>&1; then
    echo "FAIL $name: compiled, but must be rejected"; fail=$((fail + 1)); continue
  fi
  ok=1
  if grep -qi 'panic\|impossible happened' "$out"; then
    echo "FAIL $name: GHC panic"; ok=0
  fi
  if grep -q 'Could not load module\|cannot satisfy\|unknown package' "$out"; then
    echo "FAIL $name: the dualrev package could not be loaded"; ok=0
  fi
  expect "$f" "$out" "the error"
done
# and the other way round: modules in ok/ must compile warning-free
for f in "$dir"/ok/*.hs; do
  name=ok/$(basename "$f" .hs)
  out="$tmp/$(basename "$f" .hs).ok.out"
  if $ghc -Wall -Werror -fno-code -outputdir "$tmp/ok-$(basename "$f" .hs)" "$f" >"$out" 2>&1; then
    echo "ok   $name"; pass=$((pass + 1))
  else
    echo "FAIL $name: must compile without warnings"
    sed 's/^/       | /' "$out" | head -n 30
    fail=$((fail + 1))
  fi
done
# and modules in warn/ must compile, warning with every line their
# "-- EXPECT: ..." lines name
for f in "$dir"/warn/*.hs; do
  name=warn/$(basename "$f" .hs)
  out="$tmp/$(basename "$f" .hs).warn.out"
  if ! $ghc -fno-code -outputdir "$tmp/warn-$(basename "$f" .hs)" "$f" >"$out" 2>&1; then
    echo "FAIL $name: must compile (with warnings)"
    sed 's/^/       | /' "$out" | head -n 30
    fail=$((fail + 1)); continue
  fi
  ok=1
  expect "$f" "$out" "the warnings"
done
echo "compile-fail: $pass passed, $fail failed"
[ $fail -eq 0 ]
