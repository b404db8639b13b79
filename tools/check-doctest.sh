#!/bin/sh
# Run every `>>>` example of the Haskell package's documentation (doctest)
# and fail unless each one ran and showed what its comment says.
#
# usage: tools/check-doctest.sh [GHC OPTION...]   (from the repository root,
#        where the splices find the C headers they read; the options name
#        the package databases of the built package, as haskell/haskell.mk
#        passes them)
#
# doctest loads the modules from source into GHCi.  The C engine that they
# call comes from the built package (-package dualrev), whose Haskell
# modules the checkout's own shadow, so the examples run the checkout's
# code.  GHCi compiles some modules to object code (those with unboxed
# tuples, those whose code the splices run), and doctest cannot enter the
# scope of such a module: so each module's examples begin, in a `$setup`
# chunk, with the import of the public module whose documentation shows
# them, the names its reader has.  The modules that examples import are
# loaded beside the modules that have examples.
set -eu
src=haskell/src
[ -d "$src" ] || { echo "check-doctest: run from the repository root" >&2; exit 2; }
command -v doctest >/dev/null 2>&1 ||
    { echo "check-doctest: no doctest (Debian package doctest; make deps)" >&2; exit 1; }

# doctest takes an argument that does not start with '-' for a module: a
# package database must be given as -package-db=DIR
opts=""
while [ $# -gt 0 ]; do
    case $1 in
    -package-db) opts="$opts -package-db=$2"; shift 2 ;;
    *) opts="$opts $1"; shift ;;
    esac
done

with=$(grep -rl -- '^ *-- >>>' "$src" | sort)
[ -n "$with" ] || { echo "check-doctest: no examples found under $src" >&2; exit 1; }
imported=$(sed -n 's/^ *-- >>> import  *\(qualified  *\)\{0,1\}\(Numeric\.DualRev[A-Za-z0-9.]*\).*/\2/p' $with |
           sort -u | sed "s|\\.|/|g; s|^|$src/|; s|\$|.hs|")
for f in $imported; do
    [ -f "$f" ] || { echo "check-doctest: an example imports a module not in $src: $f" >&2; exit 1; }
done
expected=$(cat $with | grep -c '^ *-- >>>')

out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
status=0
# shellcheck disable=SC2086
doctest --no-magic $opts -package=dualrev -i"$src" $(printf '%s\n' $with $imported | sort -u) >"$out" 2>&1 || status=$?
cat "$out"
summary=$(tr '\r' '\n' <"$out" | grep '^Examples: ' | tail -n 1)
ran=$(echo "$summary" | sed -n 's/^Examples: *\([0-9]*\) *Tried: *\([0-9]*\) .*/\1 \2/p')
if [ "$status" != 0 ]; then
    echo "check-doctest: FAILED (doctest exit status $status)"; exit 1
fi
if [ "$ran" != "$expected $expected" ]; then
    echo "check-doctest: FAILED: $expected example lines in the sources, but doctest says: $summary"; exit 1
fi
echo "check-doctest: ok: $expected example lines of $(echo "$with" | wc -l) modules, each as documented"
