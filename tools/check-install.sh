#!/bin/sh
# make install and make uninstall, checked under scratch directories:
#   - PREFIX alone: a program compiled with the installed dualrev.pc and
#     header, linked against the installed shared library (found through its
#     soname, libdualrev.so.MAJOR), runs; the MPI header is there, and the
#     MPI helper where mpicc is found (then an MPI program links against it
#     and runs on one rank);
#   - DESTDIR and PREFIX: the same files under DESTDIR/PREFIX, and make
#     uninstall leaves no file there.
#
# usage: tools/check-install.sh BUILD_DIR   (the library built there)
set -eu
root=$(pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
work=$build/install-check
rm -rf "$work"
mkdir -p "$work"
version=$(sed -n 's/^version: *//p' dualrev.cabal)
major=${version%%.*}
mpicc=${MPICC:-mpicc}
m() { make -C "$root" --no-print-directory BUILD="$build" "$@" >"$work/make.log" 2>&1 ||
      { cat "$work/make.log"; echo "check-install: make $* failed" >&2; exit 1; }; }
fail() { echo "check-install: $*" >&2; exit 1; }

# the files under a directory (links too), relative to it, sorted
files() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort); }

# the headers: the umbrella dualrev.h, those of include/dualrev/ it includes,
# and the MPI helper's
want="$(cd "$root" && ls include/dualrev.h include/dualrev/*.h include/dualrev/*/*.h)
include/dualrev_mpi.h
lib/libdualrev.a
lib/libdualrev.so
lib/libdualrev.so.$major
lib/libdualrev.so.$version
lib/pkgconfig/dualrev.pc"
if command -v "$mpicc" >/dev/null 2>&1; then
  want="$want
lib/libdualrev_mpi.a"
fi
want=$(printf '%s\n' "$want" | LC_ALL=C sort)

echo "== make install PREFIX=$work/prefix"
prefix=$work/prefix
m install PREFIX="$prefix"
[ "$(files "$prefix")" = "$want" ] ||
  fail "installed files differ from the expected ones:
$(files "$prefix")"
[ "$(readlink "$prefix/lib/libdualrev.so")" = "libdualrev.so.$major" ] &&
  [ "$(readlink "$prefix/lib/libdualrev.so.$major")" = "libdualrev.so.$version" ] ||
  fail "libdualrev.so -> libdualrev.so.$major -> libdualrev.so.$version expected"
readelf -d "$prefix/lib/libdualrev.so.$version" | grep -q "SONAME.*\[libdualrev.so.$major\]" ||
  fail "the shared library's soname is not libdualrev.so.$major"

cat > "$work/prog.c" <<'C'
#include <dualrev.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    dr_tape *t = dr_tape_new();
    dr_real x = dr_input(t, 3.0);
    dr_real f = dr_mul(t, x, x);
    double g;
    int ok = dr_gradient(t, f, 1, &x, &g) == DR_OK && g == 6.0 &&
             strcmp(dr_version_string(), DR_VERSION_STRING) == 0;
    dr_tape_free(t);
    printf("d(x*x)/dx at 3 = %g, library %s\n", g, dr_version_string());
    return ok ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc "$work/prog.c" $(pkg-config --cflags --libs dualrev) -Wl,-rpath,"$prefix/lib" -o "$work/prog"
readelf -d "$work/prog" | grep -q "NEEDED.*\[libdualrev.so.$major\]" ||
  fail "the program does not load libdualrev.so.$major"
"$work/prog" || fail "the program built against the installed library failed"

if command -v "$mpicc" >/dev/null 2>&1; then
  cat > "$work/mpi_prog.c" <<'C'
#include <dualrev_mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    double g[3] = {1, 2, 3};
    int st = dr_mpi_allreduce_sum(g, 3, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("dr_mpi_allreduce_sum: %s, %g %g %g\n", dr_mpi_strerror(st), g[0], g[1], g[2]);
    MPI_Finalize();
    return st == DR_OK && g[2] == 3.0 * size ? 0 : 1;
}
C
  # shellcheck disable=SC2046
  "$mpicc" "$work/mpi_prog.c" -ldualrev_mpi $(pkg-config --cflags --libs dualrev) \
    -Wl,-rpath,"$prefix/lib" -o "$work/mpi_prog"
  env OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "${MPIRUN:-mpirun}" -np 1 "$work/mpi_prog" || fail "the MPI program against the installed helper failed"
else
  echo "(no $mpicc: the MPI helper is not installed, and not checked)"
fi

echo "== make install DESTDIR=$work/stage PREFIX=/opt/dualrev, then make uninstall"
stage=$work/stage
m install DESTDIR="$stage" PREFIX=/opt/dualrev
[ "$(files "$stage/opt/dualrev")" = "$want" ] || fail "DESTDIR install: other files than with PREFIX alone"
grep -q '^prefix=/opt/dualrev$' "$stage/opt/dualrev/lib/pkgconfig/dualrev.pc" ||
  fail "dualrev.pc does not name PREFIX (without DESTDIR)"
m uninstall DESTDIR="$stage" PREFIX=/opt/dualrev
left=$(files "$stage")
[ -z "$left" ] || fail "make uninstall left:
$left"
m uninstall PREFIX="$prefix"
left=$(files "$prefix")
[ -z "$left" ] || fail "make uninstall left:
$left"
[ ! -d "$prefix/include/dualrev" ] && [ ! -d "$stage/opt/dualrev/include/dualrev" ] ||
  fail "make uninstall left the folder include/dualrev/"
rm -rf "$work"
echo "check-install: ok: install (headers, libdualrev.so.$version with soname libdualrev.so.$major, pkg-config) and uninstall"
