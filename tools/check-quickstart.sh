#!/bin/sh
# Run the README's two quick starts as a user would, outside this checkout:
#   C:       `make install` into a scratch prefix, compile and link the example
#            with pkg-config and a run-time path, run it;
#   Haskell: `cabal sdist`, then a fresh cabal project elsewhere that depends
#            on the tarball builds and runs the example, with an empty home
#            directory and the README's offline configuration.
# The code and the commands are taken from README.md (the blocks after
# `<!-- file: NAME -->` and `<!-- run: c|haskell -->`), so the README stays
# true.
#
# usage: tools/check-quickstart.sh BUILD_DIR   (CABAL_DIR: an offline cabal
#        configuration, as haskell/haskell.mk sets up)
set -eu
root=$(pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
work=$build/quickstart
rm -rf "$work"
mkdir -p "$work/c" "$work/hs" "$work/home" "$work/hs-home" "$work/sdist"

# the fenced block after the marker line $1 in README.md
block() {
  awk -v marker="$1" '
    $0 == marker { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$root/README.md"
}
file_to() { # marker name, destination directory
  block "<!-- file: $1 -->" > "$2/$1"
  [ -s "$2/$1" ] || { echo "README.md: no block after <!-- file: $1 -->" >&2; exit 1; }
}

echo "== C quick start (README.md), installed under $work/home/.local"
file_to quickstart.c "$work/c"
block "<!-- run: c -->" > "$work/c/run.sh"
out=$(cd "$work/c" && HOME="$work/home" &&
      make() { command make -C "$root" --no-print-directory "$@" >/dev/null; } &&
      . ./run.sh)
echo "$out"
case $out in
  *"df/dx = -3.95997"*) ;;
  *) echo "C quick start: unexpected output" >&2; exit 1 ;;
esac

echo "== Haskell quick start (README.md), against the package's tarball"
cabal sdist -v0 -o "$work/sdist"
tarball=$(ls "$work/sdist"/dualrev-*.tar.gz)
echo "$tarball"
for f in cabal.project quickstart.cabal Main.hs; do file_to "$f" "$work/hs"; done
sed -i "s|/path/to/|$work/sdist/|" "$work/hs/cabal.project"
block "<!-- run: haskell -->" | sed "s|/path/to/dualrev/|$root/|" > "$work/hs/run.sh"
# as a user would run it: an empty home directory (no cabal configuration
# of its own), none of the build's CABAL_DIR
out=$(cd "$work/hs" && unset CABAL_DIR && HOME="$work/hs-home" && export HOME && . ./run.sh)
echo "$out"
case $out in
  *"([66.0,88.0],[22.0,44.0])"*) ;;
  *) echo "Haskell quick start: unexpected output" >&2; exit 1 ;;
esac

echo "== Numeric.DualRev.AD's examples (README.md), a module of their own"
# each line `EXPR  -- RESULT ...` of the block becomes a check that EXPR
# shows as RESULT (where the comment starts with one), in a module with no
# type annotations: the element types must default as ad's do
mkdir -p "$work/hs/ad"
block "<!-- file: AdExamples.hs -->" | awk '
  /^import / { print; next }
  /^[ \t]*$/ { next }
  {
    i = index($0, "  -- ")
    expr = i ? substr($0, 1, i - 1) : $0
    note = i ? substr($0, i + 5) : ""
    sub(/[ \t]+$/, "", expr)
    want = note
    sub(/[: ].*$/, "", want)
    n++
    if (want ~ /^[-0-9[(]/)
      body = body sprintf("  check %d (show (%s)) \"%s\"\n", n, expr, want)
    else
      body = body sprintf("  (%s) `seq` pure ()\n", expr)
  }
  END {
    print "main :: IO ()"
    print "main = do"
    printf "%s", body
    print "  putStrLn \"ad examples: all as the README says\""
    print "check :: Int -> String -> String -> IO ()"
    print "check k got want"
    print "  | got == want = pure ()"
    print "  | otherwise = error (\"README example \" ++ show k ++ \": \" ++ got ++ \", README says \" ++ want)"
  }' > "$work/hs/ad/Main.hs"
cat >> "$work/hs/quickstart.cabal" <<'CABAL'
executable ad-examples
  main-is:          Main.hs
  hs-source-dirs:   ad
  build-depends:    base, dualrev
  default-language: Haskell2010
CABAL
(cd "$work/hs" && unset CABAL_DIR && HOME="$work/hs-home" && export HOME &&
   cabal --config-file="$root/haskell/cabal.config" run -v0 ad-examples)
