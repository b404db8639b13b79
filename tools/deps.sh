#!/bin/sh
# deps.sh check|ensure GROUP...  -  what each part of the build needs.
#
#   check   every group's tools and libraries are there, or one line on
#           stderr naming the Debian packages to install, and exit 1
#   ensure  install the packages of the groups that are not complete
#           (apt-get, as root or through sudo); nothing when all are there
#
# Groups: lib (the library: a C compiler and OpenBLAS), test (the C tests:
# cmocka, clang with its sanitizers; jansson for the GradBench tool;
# python3 for the check of generated files),
# hs (the Haskell package, and aeson for dualrev-hs, its GradBench tool), bench (benchmarks), fuzz (libFuzzer), mpi (the
# optional MPI part: mpicc and mpirun, or $MPICC and $MPIRUN), gradbench
# (make gradbench: jansson; Python with numpy, scipy, pydantic and
# dataclasses_json for GradBench's evals, at $GRADBENCH_PYTHON or
# /usr/bin/python3; C++,
# nlohmann's json.hpp and ADOL-C for its C++ tools).  Presence is tested by what the build
# uses (pkg-config, the compilers), not by asking dpkg, so a machine that
# has them some other way needs no apt.
set -eu

debs() {
    case "$1" in
    lib) echo "pkg-config libopenblas-dev" ;;
    test) echo "libcmocka-dev clang libclang-rt-dev libjansson-dev python3" ;;
    hs) echo "ghc cabal-install doctest libghc-hspec-dev libghc-quickcheck2-dev libghc-vector-dev libghc-free-dev libghc-adjunctions-dev libghc-aeson-dev" ;;
    bench) echo "hyperfine libadolc-dev python3 gnuplot-nox" ;;
    fuzz) echo "clang libclang-rt-dev" ;;
    mpi) echo "libopenmpi-dev openmpi-bin" ;;
    gradbench) echo "libjansson-dev python3 python3-numpy python3-scipy python3-pydantic python3-dataclasses-json g++ make nlohmann-json3-dev libadolc-dev" ;;
    *) echo "deps.sh: unknown group '$1'" >&2; exit 2 ;;
    esac
}

# a C program that clang compiles and links with the given sanitizers
clang_links() {
    command -v clang >/dev/null 2>&1 || return 1
    d=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; return (int)(n & 0); }\n' > "$d/f.c"
    if [ "$1" = fuzzer ]; then
        clang -fsanitize=fuzzer,address,undefined "$d/f.c" -o "$d/f" >/dev/null 2>&1
    else
        printf 'int main(void) { return 0; }\n' >> "$d/f.c"
        clang -fsanitize="$1" "$d/f.c" -o "$d/f" >/dev/null 2>&1
    fi
    r=$?
    rm -rf "$d"
    return $r
}

have() {
    case "$1" in
    lib) command -v "${CC:-cc}" >/dev/null 2>&1 &&
         command -v pkg-config >/dev/null 2>&1 &&
         pkg-config --exists openblas ;;
    test) pkg-config --exists cmocka 2>/dev/null &&
          pkg-config --exists jansson 2>/dev/null &&
          command -v python3 >/dev/null 2>&1 &&
          clang_links address,undefined ;;
    hs) command -v ghc >/dev/null 2>&1 && command -v cabal >/dev/null 2>&1 &&
        command -v doctest >/dev/null 2>&1 &&
        ghc-pkg --simple-output --names-only list hspec 2>/dev/null | grep -q hspec &&
        ghc-pkg --simple-output --names-only list QuickCheck 2>/dev/null | grep -q QuickCheck &&
        ghc-pkg --simple-output --names-only list vector 2>/dev/null | grep -q vector &&
        ghc-pkg --simple-output --names-only list free 2>/dev/null | grep -q free &&
        ghc-pkg --simple-output --names-only list adjunctions 2>/dev/null | grep -q adjunctions &&
        ghc-pkg --simple-output --names-only list aeson 2>/dev/null | grep -q aeson ;;
    bench) command -v hyperfine >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 &&
           command -v gnuplot >/dev/null 2>&1 && [ -e /usr/include/adolc/adolc.h ] ;;
    fuzz) clang_links fuzzer ;;
    mpi) command -v "${MPICC:-mpicc}" >/dev/null 2>&1 &&
         command -v "${MPIRUN:-mpirun}" >/dev/null 2>&1 ;;
    gradbench) pkg-config --exists jansson 2>/dev/null &&
               "${GRADBENCH_PYTHON:-/usr/bin/python3}" -c 'import numpy, scipy, pydantic, dataclasses_json' >/dev/null 2>&1 &&
               command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 &&
               [ -e /usr/include/nlohmann/json.hpp ] && [ -e /usr/include/adolc/adolc.h ] ;;
    esac
}

[ $# -ge 2 ] || { echo "usage: deps.sh check|ensure GROUP..." >&2; exit 2; }
mode=$1
shift
missing=""
for g in "$@"; do
    debs "$g" >/dev/null
    have "$g" || missing="$missing $(debs "$g")"
done
[ -z "$missing" ] && exit 0

if [ "$mode" = check ]; then
    echo "dualrev: missing build dependencies; install the Debian packages:$missing (or run: make deps)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && SUDO=sudo
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "dualrev: missing build dependencies and no apt-get here; install the equivalents of the Debian packages:$missing" >&2
    exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null ||
    { $SUDO apt-get update -q >/dev/null &&
      $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null; }
