#!/bin/sh
# tools/check-layers.sh [OBJDIR] - check that no file of cbits/ uses a layer
# above its own (cbits/LAYERS gives the order).
#
# Two kinds of use are checked:
#   includes  every #include "..." of cbits/*/*.c and cbits/*/*.h, resolved
#             to a layer by its folder ("tape/tape.h") or, for a bare name,
#             the including file's own folder; the public header (include/)
#             may be included anywhere
#   symbols   with OBJDIR (the objects of cbits/, $(BUILD)/obj, laid out as
#             the sources: OBJDIR/tape/tape.o; an optional layer's only when
#             its own target has built them), every dr_* and dr__* symbol
#             an object leaves undefined must be defined by an object of the
#             same layer or a lower one.  Includes alone miss a call through
#             a declaration written by hand; the symbol table does not.  And
#             every function a layer's header declares (DR_HIDDEN) must be
#             defined by that layer, so a header is a true list of its
#             layer's functions.  And inside a layer, the files' uses of
#             each other's symbols form no circle (a file that calls into
#             a file that calls back is two concerns tangled, or one split
#             badly).
# Any folder of cbits/ that LAYERS does not name, or a source directly in
# cbits/, is an error too.  Prints one line per offence and exits 1, or a
# summary and exits 0.  POSIX sh, awk, grep, nm; run from the repository root.
set -eu

objdir=${1-}
layers=cbits/LAYERS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

[ -f "$layers" ] || { echo "check-layers: $layers is missing" >&2; exit 2; }

# "layer level" per line: the line number among the non-comment lines; the
# layers of an "optional:" line also go to $tmp/optional, one a line
awk -v opt="$tmp/optional" '
    !/^[ \t]*#/ && NF { lvl++; o = ($1 == "optional:")
                        for (i = 1 + o; i <= NF; i++) { print $i, lvl; if (o) print $i > opt } }' \
    "$layers" > "$tmp/levels"
touch "$tmp/optional"

fail=0
complain() { echo "check-layers: $*" >&2; fail=1; }

# every folder is a layer, every source is in one
for d in cbits/*/; do
    d=${d%/}; d=${d#cbits/}
    grep -q "^$d " "$tmp/levels" ||
        complain "cbits/$d/ is not a layer: add it to $layers (in its place in the order)"
done
for f in cbits/*.c cbits/*.h; do
    [ -e "$f" ] && complain "$f is in no layer: move it into the folder of its layer"
done
while read -r l _; do
    [ -d "cbits/$l" ] || complain "$layers names $l, but cbits/$l/ does not exist"
done < "$tmp/levels"

# uses, as "file target-layer what" (what: the include or the symbol)
: > "$tmp/uses"
nfiles=0
for f in cbits/*/*.c cbits/*/*.h; do
    [ -e "$f" ] || continue
    nfiles=$((nfiles + 1))
    own=${f#cbits/}; own=${own%%/*}
    grep -n '^[ \t]*#[ \t]*include[ \t]*"' "$f" |
    sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
    while read -r line inc; do
        if [ -f "cbits/$inc" ] && [ "${inc#*/}" != "$inc" ]; then
            echo "$f:$line ${inc%%/*} include \"$inc\""
        elif [ -f "cbits/$own/$inc" ]; then
            echo "$f:$line $own include \"$inc\""
        elif [ -f "include/$inc" ]; then
            : # the public API: below every layer
        else
            echo "$f:$line ? include \"$inc\""
        fi
    done >> "$tmp/uses"
done

nsyms=0
if [ -n "$objdir" ]; then
    : > "$tmp/defs"
    : > "$tmp/undef"
    for c in cbits/*/*.c; do
        [ -e "$c" ] || continue
        rel=${c#cbits/}
        o="$objdir/${rel%.c}.o"
        if [ ! -f "$o" ]; then
            # an optional layer's objects come from its own target
            grep -qx "${rel%%/*}" "$tmp/optional" && continue
            complain "no object $o for $c (build the library first, make lib; is $c in the c-sources of dualrev.cabal?)"
            continue
        fi
        l=${rel%%/*}
        # nm -P: "name type [value size]"; U undefined, upper case defined
        nm -P "$o" | awk -v f="$c" -v l="$l" '
            $1 !~ /^dr_/ { next }
            $2 == "U" { print f, $1 >> "'"$tmp/undef"'"; next }
            $2 ~ /^[A-TV-Z]$/ { print $1, l, f >> "'"$tmp/defs"'" }'
    done
    nsyms=$(wc -l < "$tmp/undef")
    for h in cbits/*/*.h; do
        [ -e "$h" ] || continue
        grep '^DR_HIDDEN' "$h" |
        sed -n 's/^[^(]*[^a-z0-9_]\(dr_[a-z0-9_]*\)(.*/\1/p' |
        while read -r sym; do echo "$h $sym"; done
    done > "$tmp/decls"
    awk 'NR == FNR { layer[$1] = $2; file[$1] = $3; next }
         { own = $1; sub(/^cbits\//, "", own); sub(/\/.*/, "", own)
           if (!($2 in layer))
               printf "check-layers: %s declares %s, which no object of cbits/ defines\n", $1, $2
           else if (layer[$2] != own)
               printf "check-layers: %s declares %s, defined in %s: a header of layer %s declares only what layer %s defines\n", $1, $2, file[$2], own, own
           else next
           bad = 1 }
         END { exit bad }' "$tmp/defs" "$tmp/decls" >&2 || fail=1
    # circles inside a layer: the file graph of symbol uses within each
    # layer, pruned of every file that uses no other or that no other uses
    # (repeatedly); what is left lies on a circle
    awk '
        NR == FNR { layer[$1] = $2; file[$1] = $3; next }
        ($2 in layer) && file[$2] != $1 {
            from = $1; sub(/^cbits\//, "", from); sub(/\/.*/, "", from)
            if (layer[$2] != from) next
            e = $1 " " file[$2]
            if (!(e in edge)) { edge[e] = 1; out[$1]++; in_[file[$2]]++; node[$1]; node[file[$2]] }
        }
        END {
            do {
                changed = 0
                for (n in node)
                    if (!out[n] || !in_[n]) {
                        for (e in edge) {
                            split(e, p, " ")
                            if (p[1] == n || p[2] == n) { out[p[1]]--; in_[p[2]]--; delete edge[e] }
                        }
                        delete node[n]; changed = 1
                    }
            } while (changed)
            for (n in node) {
                    printf "check-layers: %s is on a circle of uses inside its layer:", n
                    for (e in edge) { split(e, p, " "); if (p[1] == n) printf " uses %s", p[2] }
                    printf "\n"; bad = 1
                }
            exit bad
        }' "$tmp/defs" "$tmp/undef" >&2 || fail=1
    # file -> the layer that defines each symbol it leaves undefined
    awk 'NR == FNR { layer[$1] = $2; file[$1] = $3; next }
         { if ($2 in layer) print $1, layer[$2], "symbol " $2 " (defined in " file[$2] ")"
           else print $1, "?", "symbol " $2 }' \
        "$tmp/defs" "$tmp/undef" >> "$tmp/uses"
fi

# judge every use against the levels
awk -v layers="$layers" '
    NR == FNR { level[$1] = $2; members[$2] = members[$2] (members[$2] ? ", " : "") $1; next }
    {
        f = $1; to = $2; what = $3; for (i = 4; i <= NF; i++) what = what " " $i
        src = f; sub(/:[0-9]+$/, "", src)
        from = src; sub(/^cbits\//, "", from); sub(/\/.*/, "", from)
        if (to == "?") {
            if (what ~ /^include/)
                printf "check-layers: %s: %s: no such file in cbits/ or include/\n", f, what
            else
                printf "check-layers: %s uses %s, which no object of cbits/ defines\n", f, what
            bad = 1; next
        }
        if (to == from || level[to] < level[from]) next
        why = level[to] > level[from] ? "which is above it" : "a sibling on the same level"
        printf "check-layers: %s uses %s: layer %s (level %d) may not use layer %s (level %d), %s\n",
               f, what, from, level[from], to, level[to], why
        bad = 1
    }
    END { exit bad }' "$tmp/levels" "$tmp/uses" >&2 || fail=1

if [ "$fail" -ne 0 ]; then
    echo "check-layers: FAILED: a layer uses only itself and the layers below it ($layers);" \
         "reach up through a hook registered from above (cbits/README.md)" >&2
    exit 1
fi
order=$(awk '{ m[$2] = m[$2] (m[$2] ? ", " : "") $1; n = $2 }
             END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " < " : ""), m[i] }' "$tmp/levels")
nincs=$(grep -c ' include ' "$tmp/uses" || true)
if [ -n "$objdir" ]; then
    ndecls=$(wc -l < "$tmp/decls")
    echo "check-layers: ok: $order; $nfiles files: $nincs includes of cbits headers, $nsyms undefined dr_ symbols in $objdir, $ndecls header declarations"
else
    echo "check-layers: ok: $order; $nfiles files: $nincs includes of cbits headers (no OBJDIR: symbols not checked)"
fi
