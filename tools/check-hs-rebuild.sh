#!/bin/sh
# A change to a C header must reach the Haskell package, which compiles
# cbits/ itself: haskell/haskell.mk's stamp rule drops the package's C
# objects and the library's build record (cabal, finding no source file
# changed, would otherwise call the package up to date and keep linking the
# objects built against the old header).  Checked on a made-up build tree:
# a stamp older than the headers, one C object and the record in place;
# after the rule, both must be gone.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^version: *//p' dualrev.cabal)
fail=0
# the library's record is under opt/ when built at optimization: 2
# (cabal.project), directly under the package at the default level
for layout in opt ""; do
    rm -rf "$tmp/hs"
    pkg=$tmp/hs/dist/build/x86_64-linux/ghc-0/dualrev-$version${layout:+/$layout}
    mkdir -p "$pkg/cache" "$pkg/build/cbits/tape"
    touch "$pkg/cache/build" "$pkg/build/cbits/tape/tape.o"
    touch -d '2000-01-01' "$tmp/hs/c-headers.stamp"
    make --no-print-directory -f haskell/haskell.mk BUILD="$tmp" "$tmp/hs/c-headers.stamp" >/dev/null
    if [ -e "$pkg/build/cbits/tape/tape.o" ]; then
        echo "check-hs-rebuild: a header change left the package's C objects ($pkg)"; fail=1
    fi
    if [ -e "$pkg/cache/build" ]; then
        echo "check-hs-rebuild: a header change left the library's build record (cabal would relink the old objects) ($pkg)"; fail=1
    fi
done
[ "$fail" = 0 ] && echo "check-hs-rebuild: ok: a header change drops the package's C objects and its build record"
exit "$fail"
