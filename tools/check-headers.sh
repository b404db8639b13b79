#!/bin/sh
# tools/check-headers.sh - check that each public header of include/dualrev/
# compiles on its own: included alone into an empty translation unit, as C11
# with -Wall -Wextra -Werror, and as C++ (its extern "C" guard) where a C++
# compiler is found.  So each includes what it needs and has its include
# guard (each is also included twice).  The umbrella include/dualrev.h is
# checked the same way, and each private header of include/dualrev/internal/
# must refuse to be included on its own (#error).
#
# CC and CXX choose the compilers (cc and c++ by default).
set -eu
cc=${CC:-cc}
cxx=${CXX:-c++}
flags="-Wall -Wextra -Werror -Iinclude -fsyntax-only"
fail=0
n=0
have_cxx=0
command -v "$cxx" >/dev/null 2>&1 && have_cxx=1
for h in include/dualrev.h include/dualrev/*.h; do
  name=${h#include/}
  src="#include <$name>
#include <$name>"
  printf '%s\n' "$src" | $cc -std=c11 $flags -x c - ||
    { echo "check-headers: $h does not compile alone as C"; fail=1; }
  if [ $have_cxx = 1 ]; then
    printf '%s\n' "$src" | $cxx -std=c++11 $flags -x c++ - ||
      { echo "check-headers: $h does not compile alone as C++"; fail=1; }
  fi
  n=$((n + 1))
done
for h in include/dualrev/internal/*.h; do
  [ -f "$h" ] || continue
  if printf '#include <%s>\n' "${h#include/}" | $cc -std=c11 $flags -x c - 2>/dev/null; then
    echo "check-headers: $h (private) compiles when included directly; it must #error"
    fail=1
  fi
done
[ $fail = 0 ] || exit 1
if [ $have_cxx = 1 ]; then langs="C and C++"; else langs="C (no $cxx: C++ not checked)"; fi
echo "check-headers: ok: $n headers compile alone as $langs"
