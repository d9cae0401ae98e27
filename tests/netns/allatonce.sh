#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.allatonce: a job start as a Prolog makes it, every node checking at the same moment,
# gives the same answer as one node at a time (issue 11: load is not failure). N lab nodes
# (default 8; ALLATONCE_N) with eno1 (1500), a 9000-byte fabric ens1f0np0 and a running
# docker0 each; the daemons prefer the fabric. Asserted: one at a time, every node ok on the
# fabric; all at once, every node again ok on the same network, no fail. Then the MTU black
# hole on one node's fabric port, all at once: no node ok on the fabric with it (bulk-stall,
# never a split). The load figures (wall, daemon CPU, inconclusive and shared paths) are
# printed, not asserted: speed is bench/'s.
#
# Runs as root (exit 77 = skipped otherwise); the lab id is fa<pid>, so its namespaces are
# npl<id>-*, and `lab run` removes them on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=$BUILD
CLI=$NPF_BUILD_DIR/cli/netpreflight
N=${ALLATONCE_N:-8}

# ---- inside the lab (`lab run` exported LAB_ID and LAB) ------------------------------------
if [ "${1:-}" = --inside ]; then
	T=$2
	check() { # node tag
		"$CLI" --socket "$("$LAB" sock "$1")" check --nodes "node[1-$N]" --json \
			>"$T/$2-$1.json" 2>"$T/$2-$1.err"
		echo $? >"$T/$2-$1.rc"
	}
	field() { jq -r "$3" "$T/$2-$1.json" 2>/dev/null; }
	cpu_ticks() { # total utime+stime of the lab's daemons
		local s=0 p
		for f in /run/npflab/"$LAB_ID"/pids/*; do
			read -r p _ <"$f"
			s=$((s + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
		done
		echo "$s"
	}
	summary() { # tag
		local ok=0 bad=0 nets inc shared
		for i in $(seq "$N"); do
			[ "$(field "node$i" "$1" .verdict.verdict)" = ok ] && ok=$((ok + 1)) || bad=$((bad + 1))
		done
		nets=$(for i in $(seq "$N"); do field "node$i" "$1" '.recommendation.choice.network // "none"'; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
		inc=$(for i in $(seq "$N"); do field "node$i" "$1" '.load.inconclusive_paths // 0'; done | awk '{ s += $1 } END { print s + 0 }')
		shared=$(for i in $(seq "$N"); do field "node$i" "$1" '.load.shared_paths // 0'; done | awk '{ s += $1 } END { print s + 0 }')
		echo "$1: $ok ok, $bad not ok; networks:$nets inconclusive paths $inc, shared paths $shared"
	}
	all_at_once() { # tag
		local t0 c0
		c0=$(cpu_ticks)
		t0=$(date +%s%3N)
		for i in $(seq "$N"); do check "node$i" "$1" & done
		wait
		echo "$1: wall $(($(date +%s%3N) - t0)) ms, daemon CPU $((($(cpu_ticks) - c0) * 1000 / $(getconf CLK_TCK))) ms"
	}

	"$LAB" daemons start -- --prefer ens1f0np0 >"$T/daemons.out" 2>&1 || {
		cat "$T/daemons.out"
		die "daemons did not start"
	}
	# One node at a time: the reference.
	for i in $(seq "$N"); do
		check "node$i" one
		n=node$i
		[ "$(field $n one .verdict.verdict)" = ok ] &&
			[ "$(field $n one .recommendation.choice.ifname)" = ens1f0np0 ] &&
			pass "one at a time: $n ok on ens1f0np0" ||
			fail "one at a time: $n: $(field $n one .verdict.summary) $(cat "$T/one-$n.err")"
	done
	summary one
	# Every node at once, as a Prolog starts them (fresh checks: the cache is per peer set
	# and node; max_age 0 is the CLI's default for check).
	all_at_once all
	summary all
	for i in $(seq "$N"); do
		n=node$i
		a="$(field $n all .verdict.verdict) $(field $n all .recommendation.choice.network)"
		b="$(field $n one .verdict.verdict) $(field $n one .recommendation.choice.network)"
		[ "$a" = "$b" ] && pass "all at once: $n $a, as one at a time" ||
			fail "all at once: $n '$a' but one at a time '$b': $(field $n all .verdict.summary)"
	done

	# node2's fabric port at 1500 under 9000-byte NICs: an MTU black hole. Every node must
	# leave the fabric (the one-network rule: no node may stay on it with node2), all at once.
	"$LAB" port node2 ens1f0np0 mtu 1500 >/dev/null
	for i in $(seq "$N"); do
		# veths pass GSO super-packets across a smaller MTU, which wires never do.
		"$LAB" exec "node$i" ip link set ens1f0np0 gso_max_segs 1
	done
	all_at_once mtu
	summary mtu
	for i in $(seq "$N"); do
		n=node$i
		v=$(field $n mtu .verdict.verdict)
		c=$(field $n mtu .recommendation.choice.ifname)
		[ "$v" != fail ] || [ "$n" = node2 ] || [ "$N" -lt 3 ] ||
			fail "mtu: $n fail: $(field $n mtu .verdict.summary)"
		[ "$v" = ok ] && [ "$c" = ens1f0np0 ] &&
			fail "mtu: $n ok on the fabric with node2's black hole"
	done
	grep -l '"bulk-stall"' "$T"/mtu-node1.json >/dev/null &&
		pass "mtu: node1 saw bulk-stall with node2" ||
		fail "mtu: node1 did not see the black hole: $(field node1 mtu .verdict.summary)"
	finish
	exit
fi

# ---- outside: preconditions, then the lab ---------------------------------------------------
need_root
need_cmds ip nft jq
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
ID=fa$(($$ % 100000))
need_netns

T=$(mktemp -d /tmp/npf-allatonce.XXXXXX) || exit 1
on_exit 'rm -rf -- "$T"'
cat >"$T/allatonce.lab" <<LAB
desc $N nodes: eno1, a 9000-byte fabric and a running docker0 each
nodes node[1-$N]
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=198.19.0.{i}/16
nic all ens1f0np0 switch=fabric addr=198.18.0.{i}/16
docker all
resolve eno1
expect verdict=ok
LAB
"$LAB" run "$T/allatonce.lab" --id "$ID" -q -- bash "${BASH_SOURCE[0]}" --inside "$T"
rc=$?
[ "$rc" -eq 0 ] && echo "netns.allatonce: passed" || echo "netns.allatonce: failed ($rc)"
exit "$rc"
