#!/usr/bin/env bash
# Sets up the machine, builds ballast twice (optimised, and with address and
# undefined-behaviour sanitizers) and runs the whole test suite on both.
# Usage: scripts/test.sh            (everything)
#        BALLAST_SKIP_SANITIZE=1 scripts/test.sh   (optimised build only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
. scripts/env.sh

run_suite() { # build-dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
  ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 300
}

echo "== optimised build and tests"
run_suite build
if [ "${BALLAST_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "== sanitizer build (address, undefined) and tests"
  run_suite build-asan -DBALLAST_SANITIZE=ON -DBALLAST_BUILD_BENCH=OFF
fi
echo "== all tests passed"
