# shellcheck shell=bash
# Shared by the emu test drivers (sourced): skip handling, a unique cluster
# prefix per run, and teardown on every exit path.
# Expects EMU (path of tools/emucluster/emucluster) to be set.

emu_fail() { echo "FAIL: $*" >&2; exit 1; }

# Exit 77 (ctest: skipped) with a clear message when the machine cannot host
# an emulated cluster (no root, no ip netns, no nsenter/unshare).
emu_require() {
  local why
  if ! why=$("$EMU" check); then
    echo "SKIPPED: $why"
    exit 77
  fi
}

# A prefix no other run uses: "e" + pid (at most 8 characters).
emu_prefix() { echo "e$(($$ % 10000000))"; }

# Bring a cluster down when the driver exits, however it exits.
emu_cleanup_on_exit() {
  EMU_CLEANUP_PREFIX=$1
  trap 'EMUCLUSTER_QUIET=1 "$EMU" --prefix "$EMU_CLEANUP_PREFIX" down || true' EXIT
  trap 'exit 143' TERM INT
}
