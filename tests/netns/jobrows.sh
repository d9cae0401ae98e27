#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.jobrows: one decision per job, from real daemons (issue 11, docs/decision.md §10).
# Every node of the job runs `netpreflight check --nodes HOSTLIST --job TAG` at once, as a
# Slurm Prolog starts them; the daemons exchange their rows, the job's coordinator (the
# hostlist's first node) decides, and each node applies the job's decision. Asserted per node
# (tests/netns/jobcase.bash): the suspects fail, every other node is ok on the fabric, and all
# of them hold the same job decision (id, network, suspects, every row in). One 8-node lab
# (eno1 + a 9000-byte fabric ens1f0np0, daemons preferring the fabric so it strictly outranks
# eno1):
#   asym:    node3 drops new connections from node1's fabric address only, job node[1-3]:
#            either end could explain that pair, so nobody fails (issue 19; until then node3
#            was the suspect): all three `degraded` on eno1 (netns.blamepair has more);
#   dead4:   node4's fabric drops everything, job node[1-4]: node4 suspect, the rest ok on it;
#   dead8:   the same fault, job node[1-8];
#   degrade: the same fault, job node[1-4], daemons with --fallback degrade: all four nodes
#            `degraded` on eno1, none fails;
#   sparse:  node2's fabric drops all TCP arriving on it, job node[1-8], daemons with
#            --full-mesh-max 4 --sparse-k 2: one network on all 8, node2 the suspect; then a
#            PyTorch Gloo all_reduce on the 7 healthy nodes, each rank with its own node's
#            published GLOO_SOCKET_IFNAME (tests/lab/gloo-allreduce), finishes.
# Cross-check: tests/tools/npf_jobmerge decides from the job_rows of the same check JSONs, and
# must name the same network and suspects as the daemons.
# Runs as root (exit 77 = skipped otherwise); lab id jr<pid>, removed by `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
MERGE=$NPF_BUILD_DIR/tests/tools/npf_jobmerge
FAB=198.18.1
FABRIC_IF=ens1f0np0

if [ "${1:-}" = --inside ]; then
	T=$2
	# shellcheck source=tests/netns/jobcase.bash
	. "$SRC/tests/netns/jobcase.bash"
	daemons() { # daemon args...
		"$LAB" daemons stop >/dev/null 2>&1
		"$LAB" daemons start -- --prefer "$FABRIC_IF" "$@" >"$T/daemons.out" 2>&1 ||
			die "daemons $*: $(cat "$T/daemons.out")"
	}
	run_case() { # case n suspect
		local c=$1 n=$2 s=$3 nodes t0
		mapfile -t nodes < <(seq -f 'node%g' "$n")
		t0=$(date +%s%3N)
		job_check "$c" "node[1-$n]" "${nodes[@]}"
		job_expect "$c" ok "$FABRIC_IF" "$FAB.0/24" "$s" "${nodes[@]}"
		job_merge "$c" "ok net=$FAB.0/24" "$s" "${nodes[@]}"
		echo "  $c: case wall $(($(date +%s%3N) - t0)) ms"
	}
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" node1 node2 node3 node4' EXIT

	daemons
	fw node3 ip saddr "$FAB.1" ct state new drop
	job_check asym "node[1-3]" node1 node2 node3
	job_expect asym degraded eno1 198.19.0.0/24 "" node1 node2 node3
	job_merge asym "degraded net=198.19.0.0/24" - node1 node2 node3
	fw node3
	fw node4 iifname "$FABRIC_IF" drop
	run_case dead4 4 node4
	run_case dead8 8 node4

	# fallback = degrade: the job moves to the worse network instead of blaming node4.
	daemons --fallback degrade
	t0=$(date +%s%3N)
	job_check degrade "node[1-4]" node1 node2 node3 node4
	job_expect degrade degraded eno1 198.19.0.0/24 "" node1 node2 node3 node4
	echo "  degrade: case wall $(($(date +%s%3N) - t0)) ms"
	fw node4

	daemons --full-mesh-max 4 --sparse-k 2
	fw node2 iifname "$FABRIC_IF" meta l4proto tcp drop
	t0=$(date +%s%3N)
	mapfile -t all < <(seq -f 'node%g' 8)
	job_check sparse "node[1-8]" "${all[@]}"
	jtrue "$T/sparse-node1.json" .sparse && pass "sparse: node1's plan is sparse" ||
		fail "sparse: node1's check is not sparse: $(jf sparse-node1 .sparse)"
	job_expect sparse ok "$FABRIC_IF" "$FAB.0/24" node2 "${all[@]}"
	job_merge sparse "ok net=$FAB.0/24" node2 "${all[@]}"
	# Gloo on the healthy nodes, each rank with its own node's published environment.
	mkdir -p "$T/genv"
	healthy=()
	for n in "${all[@]}"; do
		[ "$n" = node2 ] && continue
		healthy+=("$n")
		job_env sparse "$n" >"$T/genv/$n.sh"
		grep -qx "export GLOO_SOCKET_IFNAME='$FABRIC_IF'" "$T/genv/$n.sh" ||
			fail "sparse: $n publishes no GLOO_SOCKET_IFNAME=$FABRIC_IF: $(grep GLOO "$T/genv/$n.sh")"
	done
	line=$("$SRC/tests/lab/gloo-allreduce" --id "$LAB_ID" --envdir "$T/genv" \
		--nodes "$(IFS=,; echo "${healthy[*]}")" --timeout 90 --log "$T/gloo.log")
	rc=$?
	[ $rc -eq 0 ] && pass "sparse: Gloo all_reduce on the ${#healthy[@]} healthy nodes, per-node env: $line" || {
		fail "sparse: Gloo all_reduce on the healthy nodes: $line"
		grep -v '^[[:space:]]*$' "$T/gloo.log" | tail -n 30 | sed 's/^/     | /'
	}
	echo "  sparse: case wall $(($(date +%s%3N) - t0)) ms (Gloo included)"
	finish
	exit
fi

need_root
need_cmds ip nft jq unshare timeout
need_netns
[ -x "$MERGE" ] || skip "npf_jobmerge not built"
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	skip "python3-torch with Gloo missing (scripts/setup-deps)"
T=$(mktemp -d /tmp/npf-jobrows.XXXXXX)
on_exit rm -rf "$T"
cat >"$T/jobrows.lab" <<LAB
# netns.jobrows: 8 nodes, eno1 and a 9000-byte fabric
desc job rows: eno1 + fabric, faults set by the test
nodes node[1-8]
port 7718
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=198.19.0.{i}/24
nic all $FABRIC_IF switch=fabric addr=$FAB.{i}/24
resolve eno1
LAB
"$LAB" run "$T/jobrows.lab" --id "jr$(($$ % 100000))" -q -- "$0" --inside "$T"
