#!/bin/sh
# Install whichever of the given Debian packages are missing (we run as root
# on a fresh machine; elsewhere sudo is tried).  Quiet when all are present.
set -eu
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "ensure-debs: installing$missing" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null ||
    { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null; }
