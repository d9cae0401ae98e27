#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `netpreflight interfaces --json` inside a namespace holding a veth pair, a
# docker0-like bridge with a live port, a docker user bridge, a plain bridge,
# macvlan, vxlan, tun and tap, plus whatever optional kinds this kernel offers
# (vlan, bond, team, ipvlan, wireguard, dummy, geneve: each is tried, and
# skipped with a note when missing). Asserts kinds, roles, states, addresses,
# then the human table, and the same JSON as an unprivileged user.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
PFX=npfnl
NS=${PFX}-if$$
CLI=$BUILD/cli/netpreflight
TMP=

need_root
need_cmds jq ip
[ -x "$CLI" ] || skip "no $CLI (CLI not built)"

cleanup() {
	ip netns del "$NS" 2>/dev/null
	[ -n "$TMP" ] && rm -rf "$TMP"
}
on_exit cleanup

ip netns add "$NS" 2>/dev/null || skip "cannot create network namespaces"
TMP=$(mktemp -d)
n() { ip -n "$NS" "$@"; }

set -e
n link set lo up
n link add npfnl-a type veth peer name npfnl-b
n addr add 198.18.0.1/24 dev npfnl-a
n addr add 2001:db8:a::1/64 dev npfnl-a nodad
n link set npfnl-a up
n link set npfnl-b up
# docker0 look-alike with a container-side veth attached and up, so it is RUNNING.
n link add docker0 type bridge
n addr add 172.17.0.1/16 dev docker0
n link add vethnpf0 type veth peer name vethnpf1
n link set vethnpf0 master docker0
n link set vethnpf0 up
n link set vethnpf1 up
n link set docker0 up
# A docker user-network bridge nobody uses (down) and an ordinary bridge.
n link add br-0123456789ab type bridge
n addr add 172.18.0.1/16 dev br-0123456789ab
n link add npfnl-br type bridge
n link add npfnl-mv link npfnl-a type macvlan mode bridge
n addr add 198.18.1.1/24 dev npfnl-mv
n link set npfnl-mv up
n link add npfnl-vx type vxlan id 42 dstport 4789 local 198.18.0.1
n addr add 198.18.2.1/24 dev npfnl-vx
n tuntap add dev tun0 mode tun
n tuntap add dev npfnl-tap mode tap
set +e

# Optional kinds: name -> kind, created only when the kernel can.
declare -A OPT=()
try_kind() {
	local name=$1 kind=$2
	shift 2
	if n link add "$name" "$@" 2>/dev/null; then
		OPT[$name]=$kind
	else
		echo "note: this kernel offers no $kind; its checks are skipped"
	fi
}
try_kind npfnl-a.5 vlan link npfnl-a type vlan id 5
try_kind npfnl-bond bond type bond
try_kind npfnl-team team type team
try_kind npfnl-ipvl ipvlan link npfnl-a type ipvlan mode l2
try_kind wg0 wireguard type wireguard
try_kind npfnl-dum dummy type dummy
try_kind npfnl-gnv geneve type geneve id 7 remote 198.18.0.9

up_running() { [ "$(ip netns exec "$NS" cat /sys/class/net/docker0/operstate)" = up ]; }
wait_until 10 up_running || fail "docker0 never came up"

J=$TMP/if.json
if ! ip netns exec "$NS" "$CLI" interfaces --json >"$J" 2>"$TMP/err"; then
	cat "$TMP/err"
	fail "interfaces --json failed"
	exit 1
fi
jq -e . "$J" >/dev/null || { fail "output is not JSON"; exit 1; }

# q NAME FILTER: jq FILTER applied to the interface object named NAME.
q() { jq -c --arg n "$1" ".interfaces[] | select(.name == \$n) | $2" "$J"; }
# expect NAME FILTER WANT
expect() {
	local got
	got=$(q "$1" "$2")
	[ "$got" = "$3" ] || fail "$1: $2 = ${got:-<missing>}, want $3"
}
has_role() { expect "$1" "(.roles | index(\"$2\")) != null" true; }
no_roles() { expect "$1" '.roles' '[]'; }
has_addr() {
	expect "$1" "[.addresses[] | \"\\(.address)/\\(.prefixlen)\"] | index(\"$2\") != null" true
}

expect_top() {
	local got
	got=$(jq -c "$1" "$J")
	[ "$got" = "$2" ] || fail "$1 = $got, want $2"
}
expect_top .schema '"netpreflight.interfaces"'
expect_top .version 1
# Sorted by ifindex, names unique.
expect_top '[.interfaces[].ifindex] == ([.interfaces[].ifindex] | sort)' true
expect_top '[.interfaces[].name] | length == (unique | length)' true

expect lo .kind '"loopback"'
has_addr lo 127.0.0.1/8

expect npfnl-a .kind '"veth"'
expect npfnl-a .link_kind '"veth"'
expect npfnl-a .operstate '"UP"'
expect npfnl-a .carrier true
expect npfnl-a .running true
expect npfnl-a .parent '"npfnl-b"'
has_addr npfnl-a 198.18.0.1/24
has_addr npfnl-a 2001:db8:a::1/64
no_roles npfnl-a
# veth reports a speed through ethtool; whatever it is, it is a number or null.
expect npfnl-a '.speed_mbps | (. == null or . > 0)' true
expect lo .speed_mbps null
has_role npfnl-b virtual-port

expect docker0 .kind '"bridge"'
expect docker0 .operstate '"UP"'
expect docker0 .running true
expect docker0 .lower_up true
has_role docker0 container-bridge
has_addr docker0 172.17.0.1/16
expect docker0 '.addresses[] | select(.address == "172.17.0.1") | .scope' '"global"'
expect docker0 '.evidence | contains("docker")' true
expect vethnpf0 .master '"docker0"'
has_role vethnpf0 virtual-port
expect vethnpf0 '.evidence | contains("enslaved to docker0 (bridge)")' true

expect br-0123456789ab .kind '"bridge"'
has_role br-0123456789ab container-bridge
expect br-0123456789ab .up false
expect br-0123456789ab .operstate '"DOWN"'
has_addr br-0123456789ab 172.18.0.1/16
expect npfnl-br .kind '"bridge"'
no_roles npfnl-br

expect npfnl-mv .kind '"macvlan"'
expect npfnl-mv .parent '"npfnl-a"'
has_addr npfnl-mv 198.18.1.1/24
expect npfnl-vx .kind '"vxlan"'
has_addr npfnl-vx 198.18.2.1/24
expect tun0 .kind '"tun"'
has_role tun0 vpn
expect tun0 .carrier false
expect npfnl-tap .kind '"tap"'

for name in "${!OPT[@]}"; do
	expect "$name" .kind "\"${OPT[$name]}\""
done
[ -n "${OPT[wg0]:-}" ] && has_role wg0 vpn
[ -n "${OPT[npfnl-a.5]:-}" ] && expect npfnl-a.5 .parent '"npfnl-a"'

# The human table: a header and one line per interface.
if ip netns exec "$NS" "$CLI" interfaces >"$TMP/table" 2>"$TMP/err"; then
	head -1 "$TMP/table" | grep -q '^NAME  *KIND/ROLE  *STATE  *CARRIER  *SPEED  *MTU  *ADDRESSES$' ||
		fail "table header: $(head -1 "$TMP/table")"
	grep -Eq '^docker0 +bridge/container-bridge +UP +yes .*172\.17\.0\.1/16' "$TMP/table" ||
		fail "table has no docker0 row: $(grep docker0 "$TMP/table")"
	[ "$(($(wc -l <"$TMP/table") - 1))" = "$(jq '.interfaces | length' "$J")" ] ||
		fail "table and JSON list different interfaces"
else
	cat "$TMP/err"
	fail "interfaces (table) failed"
fi

# No privileges needed: the same inventory as nobody. A copy of the CLI that nobody can run:
# the build tree may sit under a directory closed to others (/root).
need_cmds setpriv
chmod 0755 "$TMP"
install -m 0755 "$CLI" "$TMP/cli-nobody"
if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$TMP/cli-nobody" 2>/dev/null; then
	if ip netns exec "$NS" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TMP/cli-nobody" interfaces --json >"$TMP/nobody.json" 2>"$TMP/err"; then
		[ "$(jq -c '[.interfaces[] | [.name, .kind, .roles, .operstate]]' "$TMP/nobody.json")" = \
			"$(jq -c '[.interfaces[] | [.name, .kind, .roles, .operstate]]' "$J")" ] ||
			fail "unprivileged run saw a different inventory"
	else
		cat "$TMP/err"
		fail "interfaces --json failed without privileges"
	fi
else
	fail "a copy of $CLI in $TMP is not executable by nobody"
fi

if [ "$FAILS" -ne 0 ]; then
	jq -c '.interfaces[] | {name, kind, roles, operstate, carrier, addresses: [.addresses[].address]}' "$J"
else
	echo "interfaces: optional kinds present: ${!OPT[*]:-none}"
fi
finish
