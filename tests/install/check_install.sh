#!/bin/sh
# Installs the build into a temporary prefix, then builds an out-of-tree
# program against it twice: with CMake (find_package(ballast) +
# ballast::ballast) and with pkg-config, and runs both on 2 ranks. Each must
# print its own line and ballast's report with the program's exact traffic.
# usage: check_install.sh BUILD_DIR SOURCE_DIR MPIEXEC [EXTRA_CFLAGS]
# EXTRA_CFLAGS: flags the app needs to load this build's library (the
# sanitizer build passes -fsanitize=...).
set -eu
build=$1 src=$2 mpiexec=$3 xflags=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
[ -f "$tmp/prefix/include/ballast.h" ] || fail "ballast.h not installed"
[ -f "$tmp/prefix/include/ballast/version.h" ] || fail "version.h not installed"
pcdir=$(dirname "$(find "$tmp/prefix" -name ballast.pc | head -n 1)")
[ -f "$pcdir/ballast.pc" ] || fail "ballast.pc not installed"
cfg=$(find "$tmp/prefix" -name ballastConfig.cmake | head -n 1)
[ -n "$cfg" ] || fail "ballastConfig.cmake not installed"
libdir=$(dirname "$(find "$tmp/prefix" -name 'libballast.so' | head -n 1)")
[ -f "$libdir/libballast.so" ] || fail "libballast.so not installed"
[ -f "$libdir/libballast.a" ] || fail "libballast.a not installed"
# Nothing private is installed.
! find "$tmp/prefix" -name '*_internal.h' | grep -q . || fail "internal header installed"

check_run() { # name, output file
  grep -q "^app: ballast [0-9]*\.[0-9]*\.[0-9]*, regions rc 0, sum 2$" "$2" ||
    { cat "$2"; fail "$1: the program's line"; }
  grep -q "^##ballast##" "$2" || { cat "$2"; fail "$1: no report"; }
  grep -q "^# ranks      : 2$" "$2" || { cat "$2"; fail "$1: ranks line"; }
  # 3 Allreduce per rank on 2 ranks: [calls] column is 6
  awk '$2 == "MPI_Allreduce" { if ($8 == 6) ok = 1 } END { exit !ok }' "$2" ||
    { cat "$2"; fail "$1: MPI_Allreduce calls"; }
  awk '$2 == "installed" { if ($3 == 2) ok = 1 } END { exit !ok }' "$2" ||
    { cat "$2"; fail "$1: region count"; }
  echo "ok: $1"
}

# 1. CMake package
cmake -S "$src/app" -B "$tmp/app-cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$xflags" >"$tmp/cfg.log" 2>&1 || { cat "$tmp/cfg.log"; fail "configure with find_package(ballast)"; }
cmake --build "$tmp/app-cmake" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build with ballast::ballast"; }
"$mpiexec" -n 2 --oversubscribe "$tmp/app-cmake/app" >"$tmp/run1.out" 2>"$tmp/run1.err" ||
  { cat "$tmp/run1.out" "$tmp/run1.err"; fail "run of the CMake-built app"; }
check_run "find_package(ballast)" "$tmp/run1.out"

# 2. pkg-config
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs ballast) || fail "pkg-config ballast"
mpicc $xflags "$src/app/main.c" $flags -o "$tmp/app-pc" || fail "build with pkg-config flags: $flags"
# The .pc's Libs carry the run path: no LD_LIBRARY_PATH needed.
env -u LD_LIBRARY_PATH "$mpiexec" -n 2 --oversubscribe "$tmp/app-pc" >"$tmp/run2.out" 2>"$tmp/run2.err" ||
  { cat "$tmp/run2.out" "$tmp/run2.err"; fail "run of the pkg-config-built app"; }
check_run "pkg-config ballast" "$tmp/run2.out"
# 3. Installed programs run from the prefix as they are: no LD_LIBRARY_PATH
# (their RUNPATH finds libballast.so beside them). ballast-ring links the
# shared library, ballast-map the mapping engine alone.
if [ -x "$tmp/prefix/bin/ballast-ring" ]; then
  env -u LD_LIBRARY_PATH "$mpiexec" -n 2 --oversubscribe "$tmp/prefix/bin/ballast-ring" 3 64 0 \
    >"$tmp/run3.out" 2>"$tmp/run3.err" ||
    { cat "$tmp/run3.out" "$tmp/run3.err"; fail "installed ballast-ring does not run"; }
  grep -q "^##ballast##" "$tmp/run3.out" || { cat "$tmp/run3.out"; fail "installed ballast-ring: no report"; }
  echo "ok: installed ballast-ring runs"
fi
if [ -x "$tmp/prefix/bin/ballast-map" ]; then
  env -u LD_LIBRARY_PATH "$tmp/prefix/bin/ballast-map" --help >"$tmp/run4.out" 2>&1 ||
    { cat "$tmp/run4.out"; fail "installed ballast-map does not run"; }
  ! ldd "$tmp/prefix/bin/ballast-map" | grep -q libballast ||
    fail "ballast-map links libballast: it should link the mapping engine alone"
  echo "ok: installed ballast-map runs"
fi
if [ -x "$tmp/prefix/bin/ballast-profile-merge" ]; then
  "$tmp/prefix/bin/ballast-profile-merge" --help >"$tmp/run5.out" 2>&1 ||
    { cat "$tmp/run5.out"; fail "installed ballast-profile-merge does not run"; }
  echo "ok: installed ballast-profile-merge runs"
else
  fail "ballast-profile-merge is not installed"
fi
# 4. BALLAST_HTML finds the installed ballast-report beside the library
# (bin/ next to lib/) and writes the page.
[ -x "$tmp/prefix/bin/ballast-report" ] || fail "ballast-report not installed"
if [ -x "$tmp/prefix/bin/ballast-ring" ]; then
  env -u LD_LIBRARY_PATH BALLAST_HTML="$tmp/ring.html" BALLAST_VERBOSE=2 \
    "$mpiexec" -n 2 --oversubscribe "$tmp/prefix/bin/ballast-ring" 3 64 0 \
    >"$tmp/run6.out" 2>"$tmp/run6.err" ||
    { cat "$tmp/run6.out" "$tmp/run6.err"; fail "ballast-ring with BALLAST_HTML"; }
  grep -q "drawing $tmp/ring.html with $tmp/prefix/bin/.*ballast-report" "$tmp/run6.err" ||
    { cat "$tmp/run6.err"; fail "BALLAST_HTML did not use the installed ballast-report"; }
  grep -q '<section id="comm">' "$tmp/ring.html" || fail "BALLAST_HTML: no page"
  echo "ok: BALLAST_HTML draws the page with the installed ballast-report"
fi
echo "PASS install"
