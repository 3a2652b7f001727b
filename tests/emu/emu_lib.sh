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
  emu_reap_stale
}

# Removes the clusters of earlier test runs that died without their EXIT trap
# (ctest kills a test that times out): prefixes e<pid>/f<pid> whose driver
# process no longer exists.
emu_reap_stale() {
  local p pid
  for p in $( (ip netns list | awk '{print $1}' | sed -n 's/^\([ef][0-9]\{1,7\}\)-node[0-9]*$/\1/p'
               ip -o link show | awk -F': ' '{print $2}' | sed -n 's/^\([ef][0-9]\{1,7\}\)-br\(@.*\)\{0,1\}$/\1/p') | sort -u); do
    pid=${p#?}
    kill -0 "$pid" 2>/dev/null && continue
    echo "removing stale test cluster $p (driver $pid is gone)"
    EMUCLUSTER_QUIET=1 "$EMU" --prefix "$p" down || true
  done
}

# A prefix no other run uses: "e" + pid (at most 8 characters).
emu_prefix() { echo "e$(($$ % 10000000))"; }

# Bring a cluster down when the driver exits, however it exits.
emu_cleanup_on_exit() {
  EMU_CLEANUP_PREFIX=$1
  trap 'EMUCLUSTER_QUIET=1 "$EMU" --prefix "$EMU_CLEANUP_PREFIX" down || true' EXIT
  trap 'exit 143' TERM INT
}
