#!/bin/sh
# Keep the c-sources field of the library in haskell/dualrev.cabal equal to
# cbits/*/*.c (every layer's sources), so the Haskell package always compiles the whole C engine.
# Other stanzas' c-sources (a test suite's own C files) are left as they are.
set -eu
cabal_file=haskell/dualrev.cabal
srcs=$(cd haskell && ls ../cbits/*/*.c | tr '\n' ' ')
awk -v srcs="$srcs" '
  /^[^ \t]/ { in_lib = ($1 == "library") }
  in_lib && /^  c-sources:/ { print "  c-sources:        " srcs; skip = 1; next }
  skip && /^                    / { next }
  { skip = 0; print }
' "$cabal_file" > "$cabal_file.tmp"
if cmp -s "$cabal_file" "$cabal_file.tmp"; then rm "$cabal_file.tmp"; else mv "$cabal_file.tmp" "$cabal_file"; fi
