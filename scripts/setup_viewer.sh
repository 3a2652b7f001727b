#!/usr/bin/env bash
# Installs the trace reader the trace tests open the Perfetto writer's JSON
# in: speedscope, driven in headless Chromium by playwright-core (no browser
# download: the tests use Debian's /usr/bin/chromium). Exactly the versions
# of tools/trace/viewer/package-lock.json, into tools/trace/viewer/
# node_modules (git-ignored), with `npm ci` from the npm registry.
# Safe to run again: does nothing when the installed versions match.
# Exit 0 installed (or already), 1 when it cannot be installed (no npm, no
# registry): the viewer tests then skip and say why.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../tools/trace/viewer" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
  echo "setup_viewer: npm not found (Debian: apt-get install npm); the viewer tests will skip" >&2
  exit 1
fi
stamp="$dir/node_modules/.package-lock.json"
if [ -f "$stamp" ] && [ -f "$dir/node_modules/speedscope/dist/release/index.html" ] &&
   [ -d "$dir/node_modules/playwright-core" ] && [ "$stamp" -nt "$dir/package-lock.json" ]; then
  echo "setup_viewer: speedscope and playwright-core present in $dir/node_modules"
  exit 0
fi
echo "setup_viewer: npm ci in $dir"
if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "setup_viewer: npm ci failed (no access to the npm registry?); the viewer tests will skip" >&2
  exit 1
fi
