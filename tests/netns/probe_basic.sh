#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Probe engine in namespaces, without the daemon: three nodes (tests/tools/probe_node)
# on a fabric bridge, each with a docker0-like 172.17.0.1/16, a bridge only node1 and
# node2 share; then firewall reject/drop on non-control ports, an MTU black hole and a
# stopped peer. Every outcome and the time bound are asserted.
set -uo pipefail

PFX=npfpr
SW=${PFX}-sw
NODES=(node1 node2 node3)
# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
TOOL=$BUILD/tests/tools/probe_node
TMP=
PIDS=()

need_root
need_cmds ip nft
[ -x "$TOOL" ] || skip "no $TOOL (npf_probe not built)"

ns() { echo "${PFX}-$1"; }
nodex() {
	local n=$1
	shift
	ip netns exec "$(ns "$n")" "$@"
}

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for n in "${NODES[@]}"; do
		ip netns del "$(ns "$n")" 2>/dev/null
		rm -rf "/etc/netns/$(ns "$n")"
	done
	ip netns del "$SW" 2>/dev/null
	[ -n "$TMP" ] && rm -rf "$TMP"
}
on_exit cleanup

ip netns add "$SW" 2>/dev/null || skip "cannot create network namespaces"
TMP=$(mktemp -d)
ip -n "$SW" link set lo up
for br in fab part; do
	ip -n "$SW" link add "$br" type bridge
	ip -n "$SW" link set "$br" up
done

i=0
for n in "${NODES[@]}"; do
	i=$((i + 1))
	ip netns add "$(ns "$n")"
	nodex "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$(ns "$n")" link set lo up
	# fabric NIC
	ip link add "pr${i}f" netns "$SW" type veth peer name eth0 netns "$(ns "$n")"
	ip -n "$SW" link set "pr${i}f" master fab up
	ip -n "$(ns "$n")" addr add "198.18.1.$i/24" dev eth0
	ip -n "$(ns "$n")" link set eth0 up
	# docker0 look-alike: same address everywhere, a veth port so it is RUNNING
	ip -n "$(ns "$n")" link add docker0 type bridge
	ip -n "$(ns "$n")" link add vethd0 type veth peer name ctr0
	ip -n "$(ns "$n")" link set vethd0 master docker0 up
	ip -n "$(ns "$n")" link set ctr0 up
	ip -n "$(ns "$n")" addr add 172.17.0.1/16 dev docker0
	ip -n "$(ns "$n")" link set docker0 up
	# partial bridge: node1 and node2 only
	if [ "$i" -le 2 ]; then
		ip link add "pr${i}p" netns "$SW" type veth peer name eth2 netns "$(ns "$n")"
		ip -n "$SW" link set "pr${i}p" master part up
		ip -n "$(ns "$n")" addr add "198.18.3.$i/24" dev eth2
		ip -n "$(ns "$n")" link set eth2 up
	fi
	mkdir -p "/etc/netns/$(ns "$n")"
	{
		echo "127.0.0.1 localhost"
		echo "198.18.1.1 node1"
		echo "198.18.1.2 node2"
		echo "198.18.1.3 node3"
	} >"/etc/netns/$(ns "$n")/hosts"
done

start_server() { # node
	# Not through nsx: $! must be the engine itself, not a subshell.
	ip netns exec "$(ns "$1")" "$TOOL" --node "$1" >"$TMP/$1.log" 2>&1 &
	PIDS+=($!)
	eval "PID_$1=$!"
}

# Wait until a node's control port answers (listeners bind within the first refresh).
port_open() { nodex "$1" bash -c "exec 3<>/dev/tcp/$2/7718" 2>/dev/null; }
wait_port() { # node addr
	wait_until 30 port_open "$1" "$2" && return 0
	echo "port 7718 on $1 ($2) never opened"
	cat "$TMP/$1.log"
	return 1
}

# run_check NAME TIMEOUT_MS: node1 checks node[1-3]; output in $TMP/NAME.out. The check
# ends by its own deadline; `timeout` at 3x plus start-up only catches a hang.
run_check() {
	local rc
	timeout $((3 * $2 / 1000 + 10)) ip netns exec "$(ns node1)" "$TOOL" --node node1 \
		--check node1,node2,node3 --timeout "$2" --linger 0 >"$TMP/$1.out" 2>"$TMP/$1.err"
	rc=$?
	[ "$rc" -ne 124 ] || fail "$1: check hung"
	echo "== $1"
	grep -E '^(check|node|link)' "$TMP/$1.out"
}

# expect_link NAME IF PEER FIELD REGEX
expect_link() {
	local line
	line=$(grep -E "^link $2 $3 " "$TMP/$1.out")
	[ -n "$line" ] || { fail "$1: no link $2 $3"; return; }
	echo "$line" | grep -qE " $4=($5) " || fail "$1: link $2 $3 $4 not ($5): $line"
}

# completed NAME: the check produced its result line (speed is a bench/ figure).
completed() {
	grep -q '^check duration_ms=[0-9]' "$TMP/$1.out" && return
	fail "$1: no result"
	cat "$TMP/$1.err"
}

start_server node2
start_server node3
# docker0 becomes RUNNING a moment after its port; the engine picks it up on refresh.
for n in node2 node3; do
	wait_port $n "198.18.1.${n#node}" || exit 1
	wait_port $n 172.17.0.1 || exit 1
done

# 1. Baseline.
run_check base 3000
completed base
for p in node2 node3; do
	expect_link base eth0 $p fwd ok
	expect_link base eth0 $p rev ok
	expect_link base docker0 $p fwd wrong-peer
	expect_link base docker0 $p rev wrong-peer
done
expect_link base eth2 node2 fwd ok
expect_link base eth2 node2 rev ok
expect_link base eth2 node3 fwd unreachable
expect_link base eth2 node3 rev 'unreachable|timeout'
grep -q 'eth2 node3 fwd=unreachable.*node3 has no address on 198.18.3.0/24' "$TMP/base.out" ||
	fail "base: eth2 node3 detail"
grep -q 'docker0 node2 fwd=wrong-peer.*fwd_detail="172.17.0.1 is local to node1"' \
	"$TMP/base.out" || fail "base: docker0 detail"

# 2. Firewall on node3: the control port is admitted, everything else rejected.
nodex node3 nft -f - <<'NFT'
table inet npfpr {
	chain input {
		type filter hook input priority 0; policy accept;
		ct state established,related accept
		tcp dport 7718 accept
		iifname "eth0" tcp flags syn reject
	}
}
NFT
run_check reject 3000
completed reject
expect_link reject eth0 node3 fwd refused
expect_link reject eth0 node2 fwd ok
nodex node3 nft delete table inet npfpr

# 3. Same with drop: a timeout within the bound, not the SYN retry schedule.
nodex node3 nft -f - <<'NFT'
table inet npfpr {
	chain input {
		type filter hook input priority 0; policy accept;
		ct state established,related accept
		tcp dport 7718 accept
		iifname "eth0" tcp flags syn drop
	}
}
NFT
run_check drop 2000
completed drop
expect_link drop eth0 node3 fwd timeout
expect_link drop eth0 node2 fwd ok
nodex node3 nft delete table inet npfpr

# 3b. A lossy path (issue 18): node3's second address 198.18.1.33 passes the TCP handshake
# but drops every data segment to it, so the first frame on the path's data connection
# (DATA_AUTH; since protocol version 3 the path has no control connection of its own) is
# lost there while node3's daemon answers on 198.18.1.3. TCP_INFO (the frame still
# unacknowledged after retransmissions) tells it from a slow daemon: a timeout "DATA_AUTH to
# 198.18.1.33 lost" that stands as evidence, not an inconclusive not-probed.
ip -n "$(ns node3)" addr add 198.18.1.33/24 dev eth0
wait_port node3 198.18.1.33 || exit 1
nodex node3 nft -f - <<'NFT'
table inet npfpr {
	chain input {
		type filter hook input priority 0; policy accept;
		ip daddr 198.18.1.33 meta l4proto tcp meta length > 100 drop
	}
}
NFT
run_check lossy 3000
completed lossy
grep -qE '^path forward peer=node3 .*198\.18\.1\.33.* outcome=timeout .*detail="DATA_AUTH to 198\.18\.1\.33 lost: [1-9][0-9]* unacked, [1-9][0-9]* retransmits"' \
	"$TMP/lossy.out" || fail "lossy: the path to 198.18.1.33 is not a lost DATA_AUTH: $(grep '198.18.1.33' "$TMP/lossy.out")"
expect_link lossy eth0 node3 fwd ok
nodex node3 nft delete table inet npfpr
ip -n "$(ns node3)" addr del 198.18.1.33/24 dev eth0

# 4. MTU black hole: node1 and node3 at 9000, their switch ports at 1500.
# veths hand GSO super-packets across a smaller-MTU peer untouched, which real
# wires never do: gso_max_segs 1 makes every skb one wire-sized frame.
for n in node1 node3; do
	ip -n "$(ns $n)" link set eth0 mtu 9000 gso_max_segs 1
done
run_check mtu 3000
completed mtu
expect_link mtu eth0 node3 fwd bulk-stall
expect_link mtu eth0 node3 rev bulk-stall
expect_link mtu eth0 node2 fwd ok
for n in node1 node3; do
	ip -n "$(ns $n)" link set eth0 mtu 1500
done

# 5. node3's engine stopped.
kill "$PID_node3"
wait "$PID_node3" 2>/dev/null
run_check stopped 3000
completed stopped
expect_link stopped eth0 node3 fwd peer-unavailable
expect_link stopped eth0 node2 fwd ok
grep -q '^node 2 node3 available=0 .*error="no daemon answering on node3' "$TMP/stopped.out" ||
	fail "stopped: node3 error"

# Stop the engines cleanly so sanitizer builds report leaks, then look for reports.
kill "$PID_node2"
wait "$PID_node2" 2>/dev/null
if grep -lE 'Sanitizer|runtime error' "$TMP"/*.log "$TMP"/*.err 2>/dev/null; then
	fail "sanitizer report"
	cat "$TMP"/*.log "$TMP"/*.err
fi

if [ "$FAILS" -ne 0 ]; then
	for f in "$TMP"/*.out; do echo "--- $f"; cat "$f"; done
fi
finish
