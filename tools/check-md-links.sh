#!/bin/sh
# Every relative link of the repository's markdown files resolves: the file
# or folder exists in the repository (relative to the linking file) and, for a link to
# FILE.md#anchor or #anchor, FILE.md has a heading with that anchor (GitHub's
# rule: lower case, punctuation dropped, blanks to hyphens).  Links in
# fenced code blocks are not links; http(s) and mailto links are not
# checked.
#
# usage: tools/check-md-links.sh   (from the repository root)
set -eu

# the links of a markdown file, one a line: [text](target) and [label]: target
links() {
  awk '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
      line = $0
      if (match(line, /^ {0,3}\[[^]]+\]:[ \t]*[^ \t]+/)) {
        t = substr(line, RSTART, RLENGTH); sub(/^[^]]*\]:[ \t]*/, "", t); print t
      }
      while (match(line, /\]\([^) \t]+/)) {
        print substr(line, RSTART + 2, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$1"
}

# the anchors of a markdown file's headings
anchors() {
  awk '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence || !/^#+[ \t]/ { next }
    {
      h = tolower($0)
      sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#*[ \t]*$/, "", h)
      gsub(/[^a-z0-9 _-]/, "", h)
      gsub(/ /, "-", h)
      print h
    }' "$1"
}

root=$(realpath .)
status=0
for md in $(git ls-files '*.md'); do
  dir=$(dirname "$md")
  for link in $(links "$md"); do
    case $link in
      http://*|https://*|mailto:*) continue ;;
    esac
    path=${link%%#*}
    anchor=
    case $link in *'#'*) anchor=${link#*#} ;; esac
    if [ -z "$path" ]; then target=$md; else target=$dir/$path; fi
    if [ ! -e "$target" ]; then
      echo "$md: link to $link: no $target"; status=1; continue
    fi
    case $(realpath "$target") in
      "$root"|"$root"/*) ;;
      *) echo "$md: link to $link: outside the repository"; status=1; continue ;;
    esac
    if [ -n "$anchor" ] && [ -f "$target" ] && ! anchors "$target" | grep -qxF "$anchor"; then
      echo "$md: link to $link: $target has no heading #$anchor"; status=1
    fi
  done
done
[ "$status" = 0 ] && echo "check-md-links: ok: every relative link of $(git ls-files '*.md' | wc -l) markdown files resolves"
exit "$status"
