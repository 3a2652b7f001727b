#!/usr/bin/env bash
# emucluster life cycle: up creates exactly the objects it documents (named
# namespaces, bridge, veths, hostnames, addresses, tbf), up over an existing
# cluster and down are idempotent, down removes leftovers of a crashed run
# (processes inside the nodes, lost state) and leaves no object with its
# prefix, and objects it did not create (look-alike names) are untouched.
# usage: emu_updown.sh EMUCLUSTER
set -uo pipefail
EMU=$1
. "$(dirname "$0")/emu_lib.sh"
emu_require
P=$(emu_prefix)
STATE=${EMUCLUSTER_STATE_ROOT:-/run/emucluster}/$P
emu_cleanup_on_exit "$P"
export EMUCLUSTER_QUIET=1
E() { "$EMU" --prefix "$P" "$@"; }

count_ns() { ip netns list | awk '{print $1}' | grep -cE "^$P-node[0-9]+\$"; }
count_links() { ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -cE "^$P-"; }
qdisc_of() { ip netns exec "$P-node$1" tc qdisc show dev eth0 | head -1; }

# Look-alike objects that are not ours: another prefix starting with ours,
# and a link with our prefix but not one of our names.
DECOY_NS="${P}0-node0"; DECOY_BR="${P}0-br"; DECOY_LINK="$P-brx"
ip netns add "$DECOY_NS" || emu_fail "cannot create decoy namespace"
ip link add "$DECOY_BR" type bridge || emu_fail "cannot create decoy bridge"
ip link add "$DECOY_LINK" type bridge || emu_fail "cannot create decoy link"
trap 'EMUCLUSTER_QUIET=1 "$EMU" --prefix "$P" down; EMUCLUSTER_QUIET=1 "$EMU" --prefix "$Q" down; ip netns del "$DECOY_NS"; ip link del "$DECOY_BR"; ip link del "$DECOY_LINK"' EXIT
hosts_before=$(md5sum /etc/hosts)
etc_netns_before=$(ls -A /etc/netns 2>/dev/null || echo absent)

E status >/dev/null; [[ $? == 1 ]] || emu_fail "status before up is not 'down'"
# Two clusters brought up at once get distinct subnets; the second one (Q)
# must survive everything done to the first.
Q="f${P#e}"
"$EMU" --prefix "$Q" up 1 & qpid=$!
E up 3 || emu_fail "up 3"
wait $qpid || emu_fail "up of the second cluster $Q"
E status || emu_fail "status after up"
[[ $(count_ns) == 3 ]] || emu_fail "want 3 namespaces, have $(count_ns)"
ip link show "$P-br" >/dev/null || emu_fail "no bridge $P-br"
subnet=$(cat "$STATE/subnet")
for i in 0 1 2; do
  ip link show "$P-v$i" | grep -q "master $P-br" || emu_fail "$P-v$i not on the bridge"
  h=$(E exec "$P-node$i" hostname) || emu_fail "exec on node $i"
  [[ $h == "$P-node$i" ]] || emu_fail "node $i hostname '$h'"
  a=$(E exec "$P-node$i" ip -4 -o addr show dev eth0 | awk '{print $4}')
  [[ $a == "$subnet.$((i + 1))/24" ]] || emu_fail "node $i address '$a'"
  E exec "$P-node$i" ip link show lo | grep -q "UP" || emu_fail "node $i lo down"
done
[[ $(hostname) != "$P-node0" ]] || emu_fail "the root hostname changed"
qsubnet=$(cat "${STATE%/*}/$Q/subnet")
[[ $qsubnet != "$subnet" ]] || emu_fail "clusters $P and $Q share subnet $subnet"
# Names resolve inside the nodes (private hosts file), /sys shows the
# node's own interfaces.
r=$(E exec "$P-node0" getent hosts "$P-node2" | awk '{print $1}')
[[ $r == "$subnet.3" ]] || emu_fail "$P-node2 resolves to '$r' in node 0"
[[ $(E exec "$P-node1" ls /sys/class/net | xargs echo) == "eth0 lo" ]] ||
  emu_fail "node 1 /sys/class/net: $(E exec "$P-node1" ls /sys/class/net)"
[[ $(E hostlist 2) == "$P-node0:2,$P-node1:2,$P-node2:2" ]] || emu_fail "hostlist '$(E hostlist 2)'"
hf=$(E hostfile 4)
[[ $(cat "$hf") == "$P-node0 slots=4"$'\n'"$P-node1 slots=4"$'\n'"$P-node2 slots=4" ]] ||
  emu_fail "hostfile: $(cat "$hf")"

# TCP from node 0 to node 2 over the bridge (python3 is a build requirement).
E exec "$P-node2" python3 -c '
import socket; s = socket.socket(); s.bind(("", 5999)); s.listen(1); s.settimeout(10)
c, _ = s.accept(); c.sendall(c.recv(64).upper())' &
srv=$!
reply=""
for _ in $(seq 50); do
  reply=$(E exec "$P-node0" python3 -c "
import socket; c = socket.create_connection(('$subnet.3', 5999), timeout=2)
c.sendall(b'ping'); print(c.recv(64).decode())" 2>/dev/null) && break
  sleep 0.1
done
wait $srv
[[ $reply == PING ]] || emu_fail "no TCP between node 0 and node 2 (got '$reply')"
echo "TCP node0 -> node2 over the bridge: ok"

# up over a running cluster: recreated with the new size and shaping.
E up 2 --rate 50mbit --burst 128kb || emu_fail "second up"
[[ $(count_ns) == 2 ]] || emu_fail "want 2 namespaces after re-up, have $(count_ns)"
ip link show "$P-v2" >/dev/null 2>&1 && emu_fail "$P-v2 survived re-up"
for i in 0 1; do
  qdisc_of $i | grep -q "tbf .*rate 50Mbit" || emu_fail "node $i qdisc: $(qdisc_of $i)"
done
E shape --off || emu_fail "shape --off"
qdisc_of 0 | grep -q tbf && emu_fail "tbf left after shape --off"
E shape --rate 20mbit || emu_fail "shape --rate"
qdisc_of 1 | grep -q "rate 20Mbit" || emu_fail "node 1 qdisc: $(qdisc_of 1)"
E shape --node "$P-node0" --off || emu_fail "shape --node --off"
qdisc_of 0 | grep -q tbf && emu_fail "tbf left on node 0 after shape --node --off"
qdisc_of 1 | grep -q "rate 20Mbit" || emu_fail "shape --node changed node 1: $(qdisc_of 1)"

# A crashed run: a process left inside a node and the node list lost.
E exec "$P-node0" sleep 300 &
sleeper=$!
sleep 0.3
[[ -n $(ip netns pids "$P-node0") ]] || emu_fail "no process in node 0"
rm -f "$STATE/nodes"
E status; [[ $? == 2 ]] || emu_fail "status does not report the leftovers"
E down || emu_fail "down"
wait $sleeper 2>/dev/null
[[ $(count_ns) == 0 ]] || emu_fail "namespaces left: $(ip netns list)"
[[ $(count_links) == 1 ]] || emu_fail "links left: $(ip -o link show | grep "$P-")"
ip link show "$DECOY_LINK" >/dev/null || emu_fail "down removed $DECOY_LINK"
ip link show "$DECOY_BR" >/dev/null || emu_fail "down removed $DECOY_BR"
ip netns list | grep -q "^$DECOY_NS" || emu_fail "down removed $DECOY_NS"
[[ ! -e $STATE ]] || emu_fail "state $STATE left"
grep -q "$STATE" /proc/mounts && emu_fail "mounts left under $STATE"
kill -0 $sleeper 2>/dev/null && emu_fail "process in node 0 survived down"
E down || emu_fail "second down"
E status; [[ $? == 1 ]] || emu_fail "status after down is not 'down'"
[[ $(md5sum /etc/hosts) == "$hosts_before" ]] || emu_fail "/etc/hosts changed"
# The other cluster is intact.
[[ $("$EMU" --prefix "$Q" exec "$Q-node0" hostname) == "$Q-node0" ]] ||
  emu_fail "cluster $Q damaged by $P's down"
"$EMU" --prefix "$Q" status >/dev/null || emu_fail "cluster $Q not up"
"$EMU" --prefix "$Q" down || emu_fail "down $Q"
[[ $(ls -A /etc/netns 2>/dev/null || echo absent) == "$etc_netns_before" ]] ||
  emu_fail "/etc/netns changed: $(ls -A /etc/netns 2>&1)"
"$EMU" --prefix 'Bad!' up 1 2>/dev/null && emu_fail "accepted a bad prefix"
echo "PASS"
