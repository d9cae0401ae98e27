#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Probe engine under a whole job checking at once: 8 nodes (tests/tools/probe_node) on one
# fabric bridge, each with a docker0-like 172.17.0.1/16, all starting their check at the
# same moment, first as a full mesh, then with a sparse plan (--mesh 4 -k 1). Every planned
# pair must be ok both ways on the fabric and wrong-peer on docker0. The checks start
# together once every node listens (SIGUSR1) and every node serves until all are done.
set -uo pipefail

PFX=npfpr
SW=${PFX}-ssw
N=8
# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
TOOL=$BUILD/tests/tools/probe_node
TMP=
PIDS=()

need_root
need_cmds ip
[ -x "$TOOL" ] || skip "no $TOOL (npf_probe not built)"

ns() { echo "${PFX}-s$1"; }

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for i in $(seq "$N"); do
		ip netns del "$(ns "$i")" 2>/dev/null
		rm -rf "/etc/netns/$(ns "$i")"
	done
	ip netns del "$SW" 2>/dev/null
	[ -n "$TMP" ] && rm -rf "$TMP"
}
on_exit cleanup

ip netns add "$SW" 2>/dev/null || skip "cannot create network namespaces"
TMP=$(mktemp -d)
ip -n "$SW" link add fab type bridge
ip -n "$SW" link set fab up
NODES=
for i in $(seq "$N"); do
	NODES+="${NODES:+,}n$i"
done
for i in $(seq "$N"); do
	n=$(ns "$i")
	ip netns add "$n"
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$n" link set lo up
	ip link add "ps${i}" netns "$SW" type veth peer name eth0 netns "$n"
	ip -n "$SW" link set "ps${i}" master fab up
	ip -n "$n" addr add "198.18.1.$i/24" dev eth0
	ip -n "$n" link set eth0 up
	ip -n "$n" link add docker0 type bridge
	ip -n "$n" link add vethd0 type veth peer name ctr0
	ip -n "$n" link set vethd0 master docker0 up
	ip -n "$n" link set ctr0 up
	ip -n "$n" addr add 172.17.0.1/16 dev docker0
	ip -n "$n" link set docker0 up
	mkdir -p "/etc/netns/$n"
	for j in $(seq "$N"); do echo "198.18.1.$j n$j"; done >"/etc/netns/$n/hosts"
done
# docker0 is RUNNING once its port forwards; the engines must see it in their inventory.
docker_up() { [[ $(ip -n "$(ns "$1")" -o link show docker0) == *"state UP"* ]]; }
for i in $(seq "$N"); do wait_until 20 docker_up "$i" || die "n$i: docker0 not RUNNING"; done

listens() { # I: node i's engine answers on its fabric address and on docker0
	ip netns exec "$(ns "$1")" bash -c "exec 3<>/dev/tcp/198.18.1.$1/7718" 2>/dev/null &&
		ip netns exec "$(ns "$1")" bash -c "exec 3<>/dev/tcp/172.17.0.1/7718" 2>/dev/null
}
done_all() { # NAME: every node printed its result
	local i
	for i in $(seq "$N"); do grep -q '^check duration_ms=' "$TMP/$1.n$i.out" || return 1; done
}

# run NAME TIMEOUT_MS EXTRA...: every node checks the whole job at the same moment, and
# keeps serving until every node has its result.
run() {
	local name=$1 tmo=$2 i p
	shift 2
	PIDS=()
	for i in $(seq "$N"); do
		ip netns exec "$(ns "$i")" "$TOOL" --node "n$i" --check "$NODES" --timeout "$tmo" \
			--go --serve "$@" >"$TMP/$name.n$i.out" 2>"$TMP/$name.n$i.err" &
		PIDS+=($!)
	done
	for i in $(seq "$N"); do wait_until 30 listens "$i" || fail "$name: n$i never listened"; done
	for p in "${PIDS[@]}"; do kill -USR1 "$p"; done
	# Checks end by their own deadline; the bound only catches a hang.
	wait_until $((3 * tmo / 1000 + 20)) done_all "$name" || fail "$name: not every node finished"
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" || fail "$name: an engine exited with $?"; done
	PIDS=()
}

# verify NAME TIMEOUT_MS SPARSE(0|1)
verify() {
	local name=$1 sparse=$3 i f d covered
	declare -A probed_by=()
	for i in $(seq "$N"); do
		f=$TMP/$name.n$i.out
		d=$(sed -n 's/^check duration_ms=\([0-9]*\).*/\1/p' "$f")
		[ -n "$d" ] || { fail "$name: n$i has no result"; cat "$TMP/$name.n$i.err"; continue; }
		grep -q "sparse=$sparse " "$f" || fail "$name: n$i sparse flag"
		while read -r _ idx peer avail probed _; do
			[ "$idx" = 0 ] && continue
			if [ "$probed" = probed=1 ]; then
				[ "$avail" = available=1 ] || fail "$name: n$i sees $peer $avail"
				probed_by[$peer]+=" n$i"
				grep -qE "^link eth0 $peer fwd=ok rev=ok " "$f" ||
					fail "$name: n$i eth0 -> $peer: $(grep "^link eth0 $peer " "$f")"
				grep -qE "^link docker0 $peer fwd=wrong-peer rev=wrong-peer " "$f" ||
					fail "$name: n$i docker0 -> $peer: $(grep "^link docker0 $peer " "$f")"
			else
				grep -qE "^link eth0 $peer fwd=not-probed rev=not-probed " "$f" ||
					fail "$name: n$i unplanned $peer not reported not-probed"
			fi
		done < <(grep '^node ' "$f")
	done
	for i in $(seq "$N"); do
		covered=$(echo "${probed_by[n$i]:-}" | wc -w)
		[ "$covered" -ge 2 ] || fail "$name: n$i probed by $covered nodes"
	done
	echo "== $name: done"
}

run mesh 4000
verify mesh 4000 0
run sparse 4000 --mesh 4 --k 1
verify sparse 4000 1

if grep -lE 'Sanitizer|runtime error' "$TMP"/*.err 2>/dev/null; then
	fail "sanitizer report"
fi
if [ "$FAILS" -ne 0 ]; then
	echo "$FAILS failure(s)"
	for f in "$TMP"/*.out; do echo "--- $f"; grep -E '^(check|node|link)' "$f"; done
	exit 1
fi
echo "probe_scale: all passed"
