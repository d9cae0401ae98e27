#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.blackhole_many: an MTU black hole in front of a node with many addresses (issue 18).
# Three nodes, eno1 on a 1500-byte management switch and ens1f0np0 on a 9000-byte fabric with
# 24 addresses per node (discovery answers of about 5 kB); node3's fabric switch port is left
# at 1500 (full-size frames to and from node3 vanish, no ICMP), and node names resolve to the
# fabric, so even the discovery exchange crosses the hole. Control connections clamp their
# MSS (docs/protocol.md, "MTU black holes"), so every control segment passes and every fabric
# path to and from node3 reaches its bulk phase and ends `bulk-stall` (evidence, never "no
# HELLO reply", never an unavailable daemon). Asserted in both flows:
#   pernode: every node runs `netpreflight check --nodes node[1-3]` at once;
#   job:     every node runs `check --nodes node[1-3] --job TAG` at once (the Prolog's flow);
# each node: every daemon available; each fabric path with node3, in both directions,
# `bulk-stall` (at least 10 per direction; the others only `not-probed` for want of reverse
# probe slots, which the stalls hold to their deadline), none a timeout or unavailable. Then
# the verdicts: per node, ok on eno1 (the only network that carries bulk data to every
# node); as a job, the job's one decision: ok on the fabric's 198.18.1.0/24 with node3 drained
# as the suspect (it fails, naming ens1f0np0 and bulk-stall), never `unknown`. The daemons
# prefer the fabric (`--prefer ens1f0np0`), so it is strictly better than eno1 and blame is in
# play (at equal quality the job falls back to eno1 without blame, docs/decision.md §10).
# Runs as root (exit 77 = skipped otherwise); lab id bh<pid>, removed by `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
# shellcheck disable=SC2016 # jq programs in single quotes
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
FABRIC_IF=ens1f0np0
NADDR=24
NODES=(node1 node2 node3)

if [ "${1:-}" = --inside ]; then
	T=$2
	# shellcheck source=tests/netns/jobcase.bash
	. "$SRC/tests/netns/jobcase.bash"
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" "${NODES[@]}"' EXIT
	"$LAB" daemons start -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"

	# pernode_check CASE: every node checks the three at once, without a job.
	pernode_check() {
		local n
		for n in "${NODES[@]}"; do
			"$CLI" --socket "$("$LAB" sock "$n")" check --nodes "node[1-3]" --json \
				>"$T/$1-$n.json" 2>"$T/$1-$n.err" &
		done
		wait
	}
	# expect_hole CASE NODE: what NODE's check says (see the header).
	expect_hole() {
		local c=$1 n=$2 f=$1-$2 peers want fwd rev bad
		if ! jtrue "$T/$f.json" '.schema == "netpreflight.check"'; then
			fail "$c: $n: no check JSON: $(head -c 300 "$T/$f.err")"
			return
		fi
		jtrue "$T/$f.json" '[.nodes[] | .available] | all' &&
			pass "$c: $n: every daemon answered" ||
			fail "$c: $n: a daemon counted unavailable: $(jq -c '[.nodes[] | select(.available | not) | {name, error}]' "$T/$f.json")"
		# The fabric paths between this node and node3 (node3: with every peer).
		if [ "$n" = node3 ]; then peers='["node1","node2"]'; else peers='["node3"]'; fi
		want='[.paths[] | select(.peer as $p | $peers | index($p)) |
			select(.local_if == $fab or .peer_if == $fab) |
			select(.outcome != "not-probed" or
				(.detail | test("reverse probe slots busy") | not))]'
		for dir in forward reverse; do
			fwd=$(jq --argjson peers "$peers" --arg fab "$FABRIC_IF" --arg d "$dir" \
				"$want"' | map(select(.direction == $d))' "$T/$f.json")
			rev=$(jq '[.[] | select(.outcome == "bulk-stall")] | length' <<<"$fwd")
			bad=$(jq -c '[.[] | select(.outcome != "bulk-stall") | {peer, local_addr, peer_addr, outcome, detail}] | .[:3]' <<<"$fwd")
			if [ "$bad" = "[]" ] && [ "$rev" -ge 10 ]; then
				pass "$c: $n: $rev $dir fabric paths with ${peers//\"/} end bulk-stall, none otherwise"
			else
				fail "$c: $n: $dir fabric paths with $peers: $rev bulk-stall (want >= 10, all): others $bad"
			fi
		done
	}

	pernode_check pernode
	for n in "${NODES[@]}"; do
		expect_hole pernode "$n"
		f=pernode-$n
		[ "$(jf "$f" .verdict.verdict)" = ok ] && [ "$(jf "$f" .recommendation.choice.ifname)" = eno1 ] &&
			pass "pernode: $n: ok on eno1" ||
			fail "pernode: $n: want ok on eno1, got $(jf "$f" .verdict.verdict) on $(jf "$f" '.recommendation.choice.ifname // "-"'): $(jf "$f" .verdict.summary)"
	done
	job_check job "node[1-3]" "${NODES[@]}"
	for n in "${NODES[@]}"; do expect_hole job "$n"; done
	job_expect job ok "$FABRIC_IF" 198.18.1.0/24 node3 "${NODES[@]}"
	[[ $(jf job-node3 .verdict.summary) == *bulk-stall* ]] &&
		pass "job: node3 is blamed on the bulk phase's evidence" ||
		fail "job: node3's summary does not name bulk-stall: $(jf job-node3 .verdict.summary)"
	finish
	exit
fi

need_root
need_cmds ip nft jq timeout
need_netns
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
T=$(mktemp -d /tmp/npf-blackhole.XXXXXX)
on_exit rm -rf "$T"
{
	echo "desc black hole at node3's fabric port, $NADDR fabric addresses per node, names on the fabric"
	echo "nodes node[1-3]"
	echo "switch mgmt mtu=1500"
	echo "switch fabric mtu=9000"
	echo "nic all eno1 switch=mgmt addr=198.19.0.{i}/24"
	for i in 1 2 3; do
		printf 'nic node%d %s switch=fabric' "$i" "$FABRIC_IF"
		for k in $(seq 1 "$NADDR"); do printf ' addr=198.18.%d.%d/24' "$k" "$i"; done
		[ "$i" = 3 ] && printf ' portmtu=1500'
		echo
	done
	echo "resolve $FABRIC_IF"
} >"$T/blackhole.lab"
"$LAB" run "$T/blackhole.lab" --id "bh$(($$ % 100000))" -q -- "$0" --inside "$T"
