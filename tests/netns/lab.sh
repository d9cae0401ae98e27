#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.lab: every lab scenario builds with its facts true, and the lab never leaves anything behind.
#
# Runs as root (exit 77 = skipped otherwise). Lab ids are t<pid>[a-z], so namespaces are
# npl<id>-*; decoys this test makes itself are removed by its EXIT trap.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
LAB=$SRC/tests/lab/lab
RUN=${LAB_RUN_DIR:-/run/npflab}
export NPF_BUILD_DIR=$BUILD

need_root
need_cmds ip nft nc ping ss getent
[ -x "$BUILD/daemon/netpreflightd" ] && [ -x "$BUILD/cli/netpreflight" ] ||
	skip "netpreflightd or netpreflight not built in $BUILD"
need_netns
B=t$(($$ % 100000))

TMP=$(mktemp -d /tmp/npl-labtest.XXXXXX)
DECOYS=()
BGPIDS=()
cleanup() {
	local id p
	for p in "${BGPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for id in "$B"a "$B"b "$B"c "$B"d "$B"e "$B"f "$B"g "$B"h "$B"i; do
		[ -d "$RUN/$id" ] && "$LAB" down --id "$id" >/dev/null 2>&1
	done
	for p in "${DECOYS[@]}"; do ip netns del "$p" 2>/dev/null; rm -rf "/etc/netns/$p"; done
	rm -rf "$TMP"
}
on_exit cleanup

ID=""
X() { local n=$1; shift; "$LAB" exec --id "$ID" "$n" "$@"; }
# Reachability, not latency: right after a link change the neighbour entry may still be
# FAILED and fail the first packets at once, so a one-packet ping is retried until a
# reply or a 5 s deadline (lib.sh's bound; a mustnot waits it out).
png() {
	local n=$1
	shift
	wait_until 5 X "$n" ping -c 1 -W 1 -q "$@"
}
tcp() { wait_until 5 X "$1" nc -z -w 1 "$2" "$3"; }
# tcp_say NODE ADDR PORT: one connect attempt; prints nc's verdict (refused, timed out).
tcp_say() { X "$1" nc -zv -w 2 "$2" "$3" 2>&1 || true; }
sysv() { X "$1" cat "/sys/class/net/$2/$3"; }
ifindex() { sysv "$1" "$2" ifindex; }
# has TEXT CMD...: CMD succeeds and its output contains TEXT. (No `| grep -q` under pipefail:
# grep exiting early makes the writer die of SIGPIPE and the pipeline fail at random.)
has() { local out; out=$("${@:2}" 2>/dev/null) && [[ $out == *"$1"* ]]; }
has_addr() { has " $3 " X "$1" ip -o addr show dev "$2"; }
# gone PID: the process ended within 2 s (a zombie counts as ended).
gone() { wait_gone 2 "$1"; }
lt() { (($1 < $2)); }
carrier_is() { [ "$(sysv "$1" "$2" carrier 2>/dev/null)" = "$3" ]; }
eq() { [ "$1" = "$2" ]; }
nft_has() { has "$2" X "$1" nft list table inet npflab; }
# listen NODE ADDR PORT: a TCP listener inside NODE (ended by `lab down`, being in the node).
listen() {
	"$LAB" exec --id "$ID" "$1" nc -lk "$2" "$3" >/dev/null 2>&1 &
	wait_until 5 listening "$1" "$3"
}
listening() { [ -n "$(X "$1" ss -Hltn "sport = :$2")" ]; }

# clean ID: nothing of lab ID is left (namespaces, /etc/netns dirs, state).
clean() {
	local id=$1
	! compgen -G "/run/netns/npl$id-*" >/dev/null &&
		! compgen -G "/etc/netns/npl$id-*" >/dev/null && [ ! -e "$RUN/$id" ]
}

up() { # SCENARIO ID
	local t0 t1
	ID=$2
	t0=$EPOCHREALTIME
	if ! "$LAB" up "$1" --id "$ID" -q; then
		fail "$1: lab up"
		return 1
	fi
	t1=$EPOCHREALTIME
	local ms=$(((${t1/./} - ${t0/./}) / 1000))
	local n
	n=$("$LAB" nodes --id "$ID" | wc -l)
	# Speed is a benchmark figure, not a test verdict: report it only.
	pass "$1: up in ${ms} ms ($n nodes)"
	# Generic facts: every node resolves every node name to its recorded address.
	local a addr want="" got names=()
	while read -r a _ addr; do
		names+=("$a")
		want+="$addr $a"$'\n'
	done <"$RUN/$ID/nodes"
	for a in "${names[@]}"; do
		got=$(X "$a" getent hosts "${names[@]}" | awk '{print $1, $2}')$'\n'
		[ "$got" = "$want" ] || { fail "$1: $a resolves names as '$got', want '$want'"; return 0; }
	done
	pass "$1: every node resolves every node name"
	local ex
	ex=$("$LAB" expect --id "$ID")
	local l v=""
	while read -r l; do
		[[ $l =~ ^verdict=(ok|degraded|fail|unknown)$ ]] && v=${BASH_REMATCH[1]}
	done <<<"$ex"
	if [ -n "$v" ]; then pass "$1: expects verdict $v"; else fail "$1: no verdict expectation"; fi
}

down() { # SCENARIO
	"$LAB" down --id "$ID" || fail "$1: lab down failed"
	if clean "$ID"; then pass "$1: down leaves nothing"; else fail "$1: down left something behind"; fi
	must "$1: second down is a no-op" "$LAB" down --id "$ID"
}

# ------------------------------------------------------------------------------------------
# Per-scenario facts.

sc_docker0() {
	local n
	for n in node1 node2 node3 node4; do
		must "docker0: $n docker0 has 172.17.0.1/16" has_addr "$n" docker0 172.17.0.1/16
		must "docker0: $n docker0 has carrier (RUNNING)" eq "$(sysv "$n" docker0 carrier)" 1
	done
	must "docker0: 172.17.0.1 is local on node1" has "local 172.17.0.1" X node1 ip route get 172.17.0.1
	for n in node2 node3 node4; do must "docker0: node1 pings $n on the fabric" png node1 "$n"; done
	must "docker0: fabric MTU 9000" eq "$(sysv node2 ens1f0np0 mtu)" 9000
	must "docker0: 8000-byte DF ping across the fabric" png node1 -M "do" -s 8000 198.18.1.4
}

sc_docker_bridge() {
	local n
	for n in node1 node2 node3 node4; do
		must "docker-bridge: $n br-5c2f8e1a9b07 has 172.18.0.1/16" has_addr "$n" br-5c2f8e1a9b07 172.18.0.1/16
		must "docker-bridge: $n bridge precedes the NIC in ifindex order" \
			lt "$(ifindex "$n" br-5c2f8e1a9b07)" "$(ifindex "$n" ens1f0np0)"
	done
	must "docker-bridge: bridge RUNNING" eq "$(sysv node3 br-5c2f8e1a9b07 carrier)" 1
	must "docker-bridge: node4 pings node1" png node4 node1
}

sc_virbr0() {
	must "virbr0: 192.168.122.1/24" has_addr node2 virbr0 192.168.122.1/24
	must "virbr0: vnet0 is a port of virbr0" has "master virbr0" X node2 ip -o link show vnet0
	must "virbr0: RUNNING" eq "$(sysv node2 virbr0 carrier)" 1
	must "virbr0: precedes the NIC" lt "$(ifindex node2 virbr0)" "$(ifindex node2 ens1f0np0)"
	must "virbr0: node2 pings node3" png node2 node3
}

sc_names_differ() {
	must "names-differ: node1 ens1f0np0" has_addr node1 ens1f0np0 198.18.1.1/24
	must "names-differ: node2 eth2" has_addr node2 eth2 198.18.1.2/24
	must "names-differ: node3 enp65s0f0np0" has_addr node3 enp65s0f0np0 198.18.1.3/24
	must "names-differ: node4 ens1f0" has_addr node4 ens1f0 198.18.1.4/24
	mustnot "names-differ: node4 has no ens1f0np0" X node4 ip link show ens1f0np0
	local a b
	for a in node1 node2 node3 node4; do
		for b in node1 node2 node3 node4; do
			[ "$a" = "$b" ] || png "$a" "$b" >/dev/null 2>&1 || { fail "names-differ: $a cannot ping $b"; return; }
		done
	done
	pass "names-differ: full mesh pings"
}

sc_ib_half() {
	must "ib-half: ib0 MTU 2044" eq "$(sysv node3 ib0 mtu)" 2044
	must "ib-half: names resolve to Ethernet" eq "$(X node1 getent hosts node3 | awk '{print $1}')" 198.18.1.3
	must "ib-half: node1 -> node2 over ib0" png node1 198.18.10.2
	must "ib-half: node3 -> node4 over ib0" png node3 198.18.10.4
	mustnot "ib-half: node1 -/-> node3 over ib0" png node1 198.18.10.3
	mustnot "ib-half: node4 -/-> node2 over ib0" png node4 198.18.10.2
	must "ib-half: node1 -> node3 over Ethernet" png node1 198.18.1.3
}

# fw_common SCEN NODE: the fabric of NODE is closed to new TCP except 7718, eno1 is open.
fw_common() {
	local s=$1 n=$2 i=${2#node}
	listen "$n" 198.18.1."$i" 5000 || fail "$s: listener on $n fabric"
	listen "$n" 198.18.1."$i" 7718 || fail "$s: listener on $n :7718"
	listen "$n" 198.19.0."$i" 5000 || fail "$s: listener on $n eno1"
	mustnot "$s: node1 -> $n fabric :5000 blocked" tcp node1 198.18.1."$i" 5000
	must "$s: node1 -> $n fabric :7718 spared" tcp node1 198.18.1."$i" 7718
	must "$s: node1 -> $n eno1 :5000 open" tcp node1 198.19.0."$i" 5000
	must "$s: ping still passes" png node1 198.18.1."$i"
}

sc_fw_drop() {
	must "fw-drop: rule present" nft_has node3 'tcp dport != 7718 drop'
	mustnot "fw-drop: node1 has no table" X node1 nft list table inet npflab
	fw_common fw-drop node3
	# What nc says, not how long it took: a drop times out, a reject is refused.
	must "fw-drop: blocked connect times out (not refused)" has "timed out" tcp_say node2 198.18.1.3 5000
	listen node1 198.18.1.1 5001 || fail "fw-drop: listener on node1"
	mustnot "fw-drop: node3 -> node1 fabric fails too (its SYN-ACKs are dropped)" tcp node3 198.18.1.1 5001
}

sc_fw_reject() {
	must "fw-reject: rule present" nft_has node3 'reject with tcp reset'
	fw_common fw-reject node3
	must "fw-reject: blocked connect refused (not timed out)" has "Connection refused" tcp_say node2 198.18.1.3 5000
}

sc_fw_asym() {
	must "fw-asym: rule present" nft_has node2 'ct state new'
	fw_common fw-asym node2
	listen node1 198.18.1.1 5000 || fail "fw-asym: listener on node1"
	must "fw-asym: node2 -> node1 fabric works (outbound)" tcp node2 198.18.1.1 5000
}

sc_linkdown() {
	must "linkdown: node4 NIC administratively UP" has "NO-CARRIER,BROADCAST,MULTICAST,UP>" X node4 ip -o link show ens1f0np0
	must "linkdown: node4 NIC has no carrier" eq "$(sysv node4 ens1f0np0 carrier 2>/dev/null)" 0
	must "linkdown: node3 NIC has carrier" eq "$(sysv node3 ens1f0np0 carrier)" 1
	mustnot "linkdown: node1 -/-> node4 fabric" png node1 198.18.1.4
	must "linkdown: node1 -> node4 eno1" png node1 node4
	must "linkdown: lab port up plugs the cable" "$LAB" port --id "$ID" node4 ens1f0np0 up
	must "linkdown: carrier back after replug" wait_until 5 carrier_is node4 ens1f0np0 1
	must "linkdown: node1 -> node4 fabric after replug" png node1 198.18.1.4
	must "linkdown: lab port down pulls it again" "$LAB" port --id "$ID" node4 ens1f0np0 down
	mustnot "linkdown: unknown nic refused" "$LAB" port --id "$ID" node4 eth9 down
}

sc_mtu_blackhole() {
	must "mtu-blackhole: node3 NIC MTU 9000" eq "$(sysv node3 ens1f0np0 mtu)" 9000
	must "mtu-blackhole: node3 switch port MTU 1500" has "mtu 1500 " ip -n "npl$ID-sw" -o link show n3-ens1f0np0
	must "mtu-blackhole: small ping node1 -> node3" png node1 198.18.1.3
	mustnot "mtu-blackhole: 8000-byte DF ping node1 -> node3 dropped" png node1 -M "do" -s 8000 198.18.1.3
	mustnot "mtu-blackhole: 8000-byte DF ping node3 -> node2 dropped" png node3 -M "do" -s 8000 198.18.1.2
	must "mtu-blackhole: 8000-byte DF ping node1 -> node2 passes" png node1 -M "do" -s 8000 198.18.1.2
	must "mtu-blackhole: lab port mtu 9000 fixes the port" "$LAB" port --id "$ID" node3 ens1f0np0 mtu 9000
	must "mtu-blackhole: 8000-byte DF ping node1 -> node3 after the fix" png node1 -M "do" -s 8000 198.18.1.3
}

sc_two_rails() {
	must "two-rails: rail 0" png node1 198.18.1.4
	must "two-rails: rail 1" png node1 198.18.2.4
	must "two-rails: rail 1 egress is ens1f1np1" has "dev ens1f1np1" X node1 ip route get 198.18.2.4
}

sc_ipv6_only() {
	must "ipv6-only: no IPv4 on the fabric NIC" eq "$(X node1 ip -4 -o addr show dev ens1f0np0)" ""
	must "ipv6-only: global address" has "2001:db8:1::2/64 scope global" X node2 ip -6 -o addr show dev ens1f0np0 scope global
	mustnot "ipv6-only: global address not tentative" has tentative X node2 ip -6 -o addr show dev ens1f0np0
	must "ipv6-only: names resolve to IPv6" eq "$(X node1 getent hosts node4 | awk '{print $1}')" 2001:db8:1::4
	must "ipv6-only: node1 pings node4 over IPv6" png node1 node4
	listen node3 2001:db8:1::3 5000 || fail "ipv6-only: listener"
	must "ipv6-only: TCP over IPv6" tcp node1 2001:db8:1::3 5000
}

sc_secondary_addr() {
	must "secondary-addr: 198.18.5 is ens1f0np0's first address (getifaddrs order)" \
		eq "$(X node2 ip -4 -o addr show dev ens1f0np0 | awk 'NR == 1 {print $4}')" 198.18.5.2/24
	must "secondary-addr: 198.18.1 is its second" has_addr node2 ens1f0np0 198.18.1.2/24
	listen node3 198.18.1.3 5000 || fail "secondary-addr: listener on 198.18.1.3"
	must "secondary-addr: TCP to node3's second address works" tcp node1 198.18.1.3 5000
	listen node3 198.18.5.3 5001 || fail "secondary-addr: listener on 198.18.5.3"
	mustnot "secondary-addr: TCP to node3's first address is dropped" tcp node1 198.18.5.3 5001
}

sc_dualstack_v4_broken() {
	must "dualstack-v4-broken: both families on ens1f0np0" has_addr node2 ens1f0np0 2001:db8:1::2/64
	listen node2 2001:db8:1::2 5000 || fail "dualstack-v4-broken: IPv6 listener"
	must "dualstack-v4-broken: IPv6 TCP to node2 works" tcp node1 2001:db8:1::2 5000
	listen node2 198.18.1.2 5001 || fail "dualstack-v4-broken: IPv4 listener"
	mustnot "dualstack-v4-broken: IPv4 TCP to node2 is dropped" tcp node1 198.18.1.2 5001
}

sc_roce_fabric_fail() {
	must "roce-fabric-fail: sysfs tree recorded for node2" \
		has "node2 $SRC/tests/fixtures/sysfs/mlx5-roce" cat "$RUN/$ID/sysfs"
	must "roce-fabric-fail: the RoCE netdev exists" X node2 ip link show enp65s0f0np0
	must "roce-fabric-fail: rule present" nft_has node3 'tcp dport != 7718 drop'
}

sc_storage_roce() {
	must "storage-roce: sysfs tree recorded for node4" \
		has "node4 $SRC/tests/fixtures/sysfs/storage-roce" cat "$RUN/$ID/sysfs"
	must "storage-roce: storage NIC on the management network" png node1 198.19.0.14
	must "storage-roce: compute fabric" png node1 198.18.2.4
}

sc_storage_roce_mgmt() {
	must "storage-roce-mgmt: sysfs tree recorded for node4" \
		has "node4 $SRC/tests/fixtures/sysfs/storage-roce-equal" cat "$RUN/$ID/sysfs"
	must "storage-roce-mgmt: names resolve to the storage NIC" \
		eq "$(X node1 getent hosts node4 | awk '{print $1}')" 198.18.0.14
	must "storage-roce-mgmt: management (storage) network" png node1 198.18.0.14
	must "storage-roce-mgmt: compute fabric" png node1 198.18.2.4
}

sc_routed_31() {
	must "routed-31: a /31 of its own" has_addr node2 ens1f0np0 198.18.4.4/31
	must "routed-31: the covering route" has "198.18.4.0/24 dev ens1f0np0" X node2 ip -4 route show
	must "routed-31: egress for another node's /31 is the fabric NIC" \
		has "dev ens1f0np0" X node1 ip route get 198.18.4.8
	must "routed-31: node1 reaches node4's fabric address" png node1 198.18.4.8
	listen node3 198.18.4.6 5000 || fail "routed-31: listener"
	must "routed-31: TCP across the route" tcp node2 198.18.4.6 5000
}

sc_mtu_small_node() {
	must "mtu-small-node: node3 NIC MTU 1500" eq "$(sysv node3 ens1f0np0 mtu)" 1500
	must "mtu-small-node: node1 NIC MTU 9000" eq "$(sysv node1 ens1f0np0 mtu)" 9000
	must "mtu-small-node: node3's switch port MTU 9000" has "mtu 9000 " ip -n "npl$ID-sw" -o link show n3-ens1f0np0
	listen node3 198.18.1.3 5000 || fail "mtu-small-node: listener"
	must "mtu-small-node: TCP node1 -> node3 (MSS from each end's MTU)" tcp node1 198.18.1.3 5000
}

sc_mtu_blackhole_many() {
	must "mtu-blackhole-many: node3 switch port MTU 1500" has "mtu 1500 " ip -n "npl$ID-sw" -o link show n3-ens1f0np0
	must "mtu-blackhole-many: 24 global addresses on node2's fabric NIC" \
		eq "$(X node2 ip -o addr show dev ens1f0np0 scope global | wc -l)" 24
	must "mtu-blackhole-many: small ping node1 -> node3" png node1 198.18.1.3
	mustnot "mtu-blackhole-many: 8000-byte DF ping node1 -> node3 dropped" png node1 -M "do" -s 8000 198.18.1.3
}

sc_gpu_rails() {
	must "gpu-rails: sysfs tree recorded for node4" \
		has "node4 $SRC/tests/fixtures/sysfs/gpu-rails" cat "$RUN/$ID/sysfs"
	must "gpu-rails: rail 0" png node1 198.18.1.4
	must "gpu-rails: rail 1" png node1 198.18.2.4
	must "gpu-rails: the third RoCE network works too" png node1 198.18.3.4
}

sc_egress_mismatch() {
	must "egress-mismatch: both NICs in one subnet" has_addr node1 ens1f1np1 198.18.1.101/24
	must "egress-mismatch: egress for a peer's ens1f1np1 is ens1f0np0" \
		has "dev ens1f0np0" X node1 ip route get 198.18.1.102
	must "egress-mismatch: egress for a peer's ens1f0np0 is ens1f0np0" \
		has "dev ens1f0np0" X node1 ip route get 198.18.1.2
	must "egress-mismatch: the address answers anyway" png node1 198.18.1.102
}

sc_no_network() {
	mustnot "no-network: fabric ports are isolated" png node1 198.18.1.2
	must "no-network: eno1 pings" png node1 node2
	listen node2 198.19.0.2 5000 || fail "no-network: listener"
	listen node2 198.19.0.2 7718 || fail "no-network: listener 7718"
	mustnot "no-network: eno1 TCP blocked" tcp node1 198.19.0.2 5000
	must "no-network: daemon port open" tcp node1 198.19.0.2 7718
	local n
	for n in node1 node2 node3 node4; do
		nft_has "$n" 'tcp dport != 7718 drop' || { fail "no-network: $n lacks its rule"; return; }
	done
	pass "no-network: every node has the firewall"
}

sc_demo() {
	must "demo: br-<hex> on node1" has_addr node1 br-5c2f8e1a9b07 172.18.0.1/16
	mustnot "demo: no br-<hex> on node3" X node3 ip link show br-5c2f8e1a9b07
	must "demo: docker0 on node4" has_addr node4 docker0 172.17.0.1/16
	must "demo: small ping to node4" png node1 node4
	mustnot "demo: 8000-byte DF ping to node4 dropped" png node1 -M "do" -s 8000 node4
	must "demo: 8000-byte DF ping to node3 passes" png node1 -M "do" -s 8000 node3
}

# ------------------------------------------------------------------------------------------
# 1. The catalogue.

n=0
for f in "$SRC"/tests/lab/scenarios/*.lab; do
	s=$(basename "$f" .lab)
	n=$((n + 1))
	up "$s" "$B"a || { "$LAB" down --id "$B"a; continue; }
	fn=sc_${s//-/_}
	if declare -F "$fn" >/dev/null; then "$fn"; else fail "$s: no facts checked for this scenario (add $fn)"; fi
	down "$s"
done
if ((n >= 15)); then pass "catalogue has $n scenarios"; else fail "catalogue has only $n scenarios"; fi

# ------------------------------------------------------------------------------------------
# 2. Bad scenarios build nothing.

bad() { # NAME TEXT
	printf '%s\n' "$2" >"$TMP/$1.lab"
	"$LAB" up "$TMP/$1.lab" --id "$B"b -q 2>"$TMP/err"
	local rc=$?
	if [ "$rc" = 2 ] && clean "$B"b; then pass "bad scenario $1 refused: $(head -c 100 "$TMP/err")"; else
		fail "bad scenario $1: rc $rc (want 2), clean=$(clean "$B"b && echo y || echo n)"
		"$LAB" down --id "$B"b
	fi
}
bad unknown-directive $'nodes a b\nswitch s\nbogus a'
bad outside-range $'nodes a b\nswitch s\nnic a eth0 switch=s addr=8.8.8.8/24'
bad outside-range6 $'nodes a b\nswitch s\nnic a eth0 switch=s addr=2001:4860::1/64'
bad unknown-node $'nodes a b\nswitch s\nnic c eth0 switch=s addr=198.18.1.1/24'
bad unknown-switch $'nodes a b\nnic a eth0 switch=nope addr=198.18.1.1/24'
bad long-ifname $'nodes a b\nswitch s\nnic a abcdefghijklmnop switch=s addr=198.18.1.1/24'
bad dup-ifname $'nodes a b\nswitch s\nnic a eth0 switch=s addr=198.18.1.1/24\nnic a eth0 switch=s addr=198.18.1.2/24'
bad open-nft-block $'nodes a b\nswitch s\nnic all eth0 switch=s addr=198.18.1.{i}/24\nnft a <<END\nadd rule inet npflab input drop'
bad bad-expect $'nodes a b\nswitch s\nnic all eth0 switch=s addr=198.18.1.{i}/24\nexpect verdict=maybe'
bad no-nodes $'switch s'
bad sw-node $'nodes sw\nswitch s'

# A scenario that fails while building (nft syntax error, found only by nft) cleans up.
printf '%s\n' 'nodes a b' 'switch s' 'nic all eth0 switch=s addr=198.18.1.{i}/24' \
	'nft b add rule inet npflab input this is not nft' >"$TMP/late.lab"
"$LAB" up "$TMP/late.lab" --id "$B"b -q 2>/dev/null
rc=$?
if [ "$rc" = 1 ] && clean "$B"b; then pass "failing up removes what it created"; else fail "failing up: rc $rc, clean=$(clean "$B"b && echo y || echo n)"; "$LAB" down --id "$B"b; fi

# ------------------------------------------------------------------------------------------
# 3. Never touches what it did not create.

ID=${B}c
ip netns add "npl${ID}-decoy" && DECOYS+=("npl${ID}-decoy")
mkdir -p "/etc/netns/npl${ID}-decoy2" && DECOYS+=("npl${ID}-decoy2")
"$LAB" up two-rails --id "$ID" -q || fail "decoy: up"
mustnot "same id twice is refused" "$LAB" up docker0 --id "$ID" -q
must "first lab intact after refused second up" png node1 node2
sleep 300 &
victim=$!
BGPIDS+=("$victim")
# A stale pid file naming someone else's live process (PID reused after a crash).
echo "$victim 1" >"$RUN/$ID/pids/node2"
"$LAB" down --id "$ID"
must "unlisted namespace npl${ID}-decoy survives down" test -e "/run/netns/npl${ID}-decoy"
must "unlisted /etc/netns dir survives down" test -d "/etc/netns/npl${ID}-decoy2"
mustnot "process with a reused PID is not killed" gone "$victim"
must "down without state is a no-op" "$LAB" down --id "$ID"
left=$(compgen -G "/run/netns/npl$ID-*" | grep -v decoy)
must "nothing of the lab left (decoys aside)" eq "$left" ""
# A namespace with a name up needs is not taken over: up fails, the namespace survives.
ip netns add "npl${ID}-node1" && DECOYS+=("npl${ID}-node1")
mustnot "up refuses when one of its namespace names exists" "$LAB" up docker0 --id "$ID" -q
must "the pre-existing namespace survives" test -e "/run/netns/npl${ID}-node1"
must "the failed up left no state" test ! -e "$RUN/$ID"
kill "$victim" 2>/dev/null

# ------------------------------------------------------------------------------------------
# 4. lab run: exit status, environment, cleanup on exit, TERM, INT, and kill -9 + down.

ID=${B}d
"$LAB" run docker0 --id "$ID" -q -- sh -c 'exit 7'
must "run returns CMD's status" eq "$?" 7
must "run cleans up after CMD" clean "$ID"
must "run exports LAB_ID and LAB; nodes resolve" "$LAB" run docker0 --id "$ID" -q -- \
	sh -c '[ "$LAB_ID" = '"$ID"' ] && "$LAB" exec node2 getent hosts node3'
must "run cleaned up again" clean "$ID"

# wait_up ID: until the lab is complete and a process runs in node1.
wait_up() { wait_until 10 lab_running "$1"; }
lab_running() { [ -f "$RUN/$1/nodes" ] && [ -n "$(ip netns pids "npl$1-node1" 2>/dev/null)" ]; }

for sig in TERM INT; do
	ID=${B}e
	env --default-signal=INT "$LAB" run docker0 --id "$ID" -q -- "$LAB" exec node1 sleep 300 &
	runpid=$!
	BGPIDS+=("$runpid")
	if wait_up "$ID"; then
		inner=$(ip netns pids "npl$ID-node1" | head -n 1)
		kill -"$sig" "$runpid"
		wait "$runpid"
		rc=$?
		[ "$sig" = TERM ] && want=143 || want=130
		must "run killed by SIG$sig exits $want (got $rc)" eq "$rc" "$want"
		must "run cleans up on SIG$sig" clean "$ID"
		must "CMD's process gone after SIG$sig" gone "$inner"
	else
		fail "run for SIG$sig did not come up"
	fi
done

ID=${B}f
"$LAB" run docker0 --id "$ID" -q -- "$LAB" exec node1 sleep 300 &
runpid=$!
BGPIDS+=("$runpid")
if wait_up "$ID"; then
	inner=$(ip netns pids "npl$ID-node1" | head -n 1)
	kill -KILL "$runpid"
	wait "$runpid" 2>/dev/null
	must "after kill -9 the state is still there" test -f "$RUN/$ID/nodes"
	must "after kill -9 the namespaces are still there" test -e "/run/netns/npl$ID-node1"
	"$LAB" down --id "$ID"
	must "down after kill -9 of lab run leaves nothing" clean "$ID"
	must "down ended the process left inside node1" gone "$inner"
else
	fail "run for kill -9 did not come up"
fi

# kill -9 in the middle of `lab up`: whatever was recorded goes away with down.
ID=${B}g
# The lab runs in its own process group and the whole group dies, as in a crash
# of the terminal or a job-step kill: a lone SIGKILL of the script would leave an
# `ip` child running that creates its namespace after `down` has already run.
setsid "$LAB" up ib-half --id "$ID" -q &
uppid=$!
wait_until 10 test -s "$RUN/$ID/netns"
kill -KILL -- -"$uppid" 2>/dev/null || kill -KILL "$uppid" 2>/dev/null
wait "$uppid" 2>/dev/null
"$LAB" down --id "$ID"
must "down after kill -9 of lab up leaves nothing" clean "$ID"

# ------------------------------------------------------------------------------------------
# 5. Daemons: the start/stop path with a stand-in, then the real netpreflightd if built.

cat >"$TMP/faked" <<'EOF'
#!/bin/bash
# Stand-in daemon: listens on --socket, logs its arguments.
sock=""
echo "args: $*"
while [ $# -gt 0 ]; do case $1 in --socket) sock=$2; shift 2 ;; *) shift ;; esac; done
exec nc -lkU "$sock"
EOF
cat >"$TMP/fakecli" <<'EOF'
#!/bin/bash
[ "$1" = --socket ] && [ "$3" = status ] || exit 2
exec nc -U -N "$2" </dev/null
EOF
printf '#!/bin/sh\necho "cannot start: bad config" >&2\nexit 1\n' >"$TMP/deadd"
printf '#!/bin/sh\nexec sleep 30\n' >"$TMP/muted"
chmod +x "$TMP"/faked "$TMP"/fakecli "$TMP"/deadd "$TMP"/muted

ID=${B}h
if "$LAB" up fw-drop --id "$ID" -q; then
	if LAB_DAEMON=$TMP/faked LAB_CLI=$TMP/fakecli "$LAB" daemons start --id "$ID" >/dev/null; then
		pass "daemons start (stand-in)"
		ok=1
		for nd in node1 node2 node3 node4; do
			read -r pid _ <"$RUN/$ID/pids/$nd"
			[ "$(readlink "/proc/$pid/ns/net")" = "$(ip netns exec "npl$ID-$nd" readlink /proc/self/ns/net)" ] || ok=0
			[ -S "$("$LAB" sock --id "$ID" "$nd")" ] || ok=0
			grep -q -- "--node-name $nd --state-dir $RUN/$ID/$nd --port 7718" "$RUN/$ID/$nd.log" || ok=0
		done
		must "each daemon runs in its node's namespace with its socket, name, state dir and the scenario port" eq "$ok" 1
		read -r p1 _ <"$RUN/$ID/pids/node1"
		must "daemons start again leaves running ones alone" env LAB_DAEMON="$TMP/faked" LAB_CLI="$TMP/fakecli" "$LAB" daemons start --id "$ID" node1
		read -r p1b _ <"$RUN/$ID/pids/node1"
		must "same daemon pid after second start" eq "$p1" "$p1b"
		"$LAB" daemons stop --id "$ID" node1
		must "daemons stop ends node1's daemon" gone "$p1"
		read -r p2 _ <"$RUN/$ID/pids/node2"
		must "node2's daemon still runs" kill -0 "$p2"
		"$LAB" daemons stop --id "$ID"
		must "daemons stop ends the rest" gone "$p2"
	else
		fail "daemons start (stand-in)"
	fi
	out=$(LAB_DAEMON=$TMP/deadd LAB_CLI=$TMP/fakecli "$LAB" daemons start --id "$ID" node2 2>&1)
	rc=$?
	must "a daemon that exits at start-up fails the start" eq "$rc" 1
	must "and its log is shown" grep -q 'cannot start: bad config' <<<"$out"
	out=$(LAB_DAEMON_TIMEOUT=1 LAB_DAEMON=$TMP/muted LAB_CLI=$TMP/fakecli "$LAB" daemons start --id "$ID" node3 2>&1)
	rc=$?
	must "a daemon whose socket never answers fails the start" eq "$rc" 1
	mustnot "and it is stopped" compgen -G "$RUN/$ID/pids/node3"
	if "$LAB" daemons start --id "$ID" node1 node2 >"$TMP/real" 2>&1; then
		pass "real netpreflightd starts on node1 and node2 and answers status"
		must "real: status through the socket" "$NPF_BUILD_DIR/cli/netpreflight" --socket "$("$LAB" sock --id "$ID" node1)" status
		"$LAB" daemons stop --id "$ID"
		must "real: daemons stopped" sh -c "! compgen -G '$RUN/$ID/pids/*'"
	else
		fail "real netpreflightd start: $(tail -n 5 "$TMP/real")"
	fi
	"$LAB" down --id "$ID"
	must "daemon lab cleaned" clean "$ID"
else
	fail "daemon lab up"
fi

# ------------------------------------------------------------------------------------------

for id in "$B"a "$B"b "$B"d "$B"e "$B"f "$B"g "$B"h; do
	clean "$id" || fail "lab $id left something behind"
done
finish
