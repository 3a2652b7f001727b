#!/usr/bin/env bash
# Installs the Debian packages ballast needs, only those that are missing.
# Safe to run again; runs apt-get update only when something must be installed.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config python3 gfortran
  libopenmpi-dev openmpi-bin
  libscotch-dev libptscotch-dev
  libhwloc-dev hwloc
  uthash-dev
  libpapi-dev
  iproute2
  libotf2-trace-dev otf2-tools python3-otf2
  chromium
  doxygen
)
# Extra packages named by the caller (e.g. benchmarks: libtrilinos-zoltan-dev).
pkgs+=("$@")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The trace reader of the trace tests (speedscope from npm, pinned by
# tools/trace/viewer/package-lock.json): optional, the viewer tests skip
# with a message when it cannot be installed.
"$(dirname "$0")/setup_viewer.sh" || echo "setup: the trace viewer is not installed (see above)"
