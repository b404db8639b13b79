#!/bin/sh
# make-help.sh [--check] MAKEFILE...  -  `make help`, from the notes beside
# the rules and settings of the makefiles, so that the list cannot go stale.
#
#   target [target...]: prerequisites ## what it does
#   ## NAME: what the setting does     (a line of its own, above NAME ?= ...)
#
# A setting's note is a line of its own because make keeps the blanks before
# a comment in a variable's value.  The first makefile is the top one: it and
# the files it includes are run as `make TARGET`, the others as
# `make -f FILE TARGET`.  With --check, print nothing but what lacks a note:
# a target, a `?=` setting, a makefile of the repository not named here; and
# exit 1 if anything does.
set -eu
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
top=$1
included=$(sed -n 's/^-\{0,1\}include  *//p' "$top")

# one line per fact: FILE<TAB>KIND<TAB>NAME<TAB>TEXT, KIND being target
# (defined), ttext (a target's note), var (a ?= setting) or vtext (a
# setting's note, with the default of the ?= line below it where it is a
# plain word)
facts() {
  for f in "$@"; do
    awk -v file="$f" '
      function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
      pending != "" {
        if ($0 ~ "^" pending "[ \t]*\\?=") {
          d = $0; sub(/^[^=]*=/, "", d); d = trim(d)
          if (d != "" && d !~ /[$\\]/) note = note " (default " d ")"
        }
        print file "\tvtext\t" pending "\t" note
        pending = ""
      }
      /^## [A-Z][A-Z0-9_]*: / {
        pending = $2; sub(/:$/, "", pending)
        note = $0; sub(/^## [A-Z0-9_]*: */, "", note)
        next
      }
      /^[A-Z][A-Z0-9_]*[ \t]*\?=/ { n = $0; sub(/[ \t]*\?=.*/, "", n); print file "\tvar\t" n "\t" }
      /^[a-zA-Z][a-zA-Z0-9_. -]*:([^=]|$)/ {
        names = $0; sub(/:.*/, "", names)
        text = ""
        if (index($0, " ## ")) { text = substr($0, index($0, " ## ") + 4) }
        k = split(names, t, /[ \t]+/)
        for (i = 1; i <= k; i++) {
          if (t[i] == "" || t[i] ~ /^\./) continue
          print file "\ttarget\t" t[i] "\t"
          if (text != "") print file "\tttext\t" t[i] "\t" text
        }
      }
      END { if (pending != "") print file "\tvtext\t" pending "\t" note }
    ' "$f"
  done
}

all=$(facts "$@")

if [ "$check" = 1 ]; then
  printf '%s\n' "$all" | awk -F'\t' -v top="$top" -v included="$included" '
    BEGIN { n = split(included, inc, /[ \t\n]+/); group[top] = top
            for (i = 1; i <= n; i++) if (inc[i] != "") group[inc[i]] = top }
    function g(f) { return (f in group) ? group[f] : f }
    $2 == "target" { want[g($1) SUBSEP $3] = $1 }
    $2 == "ttext"  { have[g($1) SUBSEP $3] = 1 }
    $2 == "var"    { wantv[$3] = $1 }
    $2 == "vtext"  { havev[$3] = 1 }
    END {
      bad = 0
      for (k in want) if (!(k in have)) {
        split(k, p, SUBSEP); print want[k] ": target " p[2] " has no ## note"; bad = 1 }
      for (v in wantv) if (!(v in havev)) {
        print wantv[v] ": setting " v " has no ## " v ": note"; bad = 1 }
      exit bad
    }' || status=1
  for mk in $(git ls-files 'Makefile' '*.mk' 2>/dev/null); do
    case " $* " in *" $mk "*) ;; *) echo "make-help: $mk is not among the makefiles of make help"; status=1 ;; esac
  done
  exit "${status:-0}"
fi

# the list: each file's targets under the command that runs them, then the
# settings (a target named twice, as in a rule of the top file and its
# recipe in an included one, once)
printf '%s\n' "$all" | awk -F'\t' -v top="$top" -v included="$included" '
  BEGIN { n = split(included, inc, /[ \t\n]+/)
          for (i = 1; i <= n; i++) if (inc[i] != "") intop[inc[i]] = 1 }
  $2 == "ttext" {
    key = (($1 == top || $1 in intop) ? "" : $1)
    if ((key SUBSEP $3) in seen) next
    seen[key SUBSEP $3] = 1
    if (!(key in started)) { started[key] = 1; order[++groups] = key }
    lines[key] = lines[key] sprintf("  %-18s %s\n", $3, $4)
  }
  $2 == "vtext" { vars = vars sprintf("  %-22s %s\n", $3, $4) }
  END {
    for (i = 1; i <= groups; i++) {
      k = order[i]
      print (k == "" ? "make TARGET" : "make -f " k " TARGET  (called by the targets above)")
      printf "%s", lines[k]
    }
    print "settings: make TARGET NAME=value"
    printf "%s", vars
  }'
