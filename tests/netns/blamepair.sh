#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.blamepair: a fault that breaks exactly one pair drains nobody (issue 19, "blame you can
# trust", docs/decision.md §10, the blame table). One node's firewall drops new connections
# from one peer's fabric address; either end of that pair could be at fault, so no node may
# fail for it: every node of the job lands on the next network (eno1), `degraded`, and the
# job's reason names the pair for the operator. Daemons prefer the fabric (`--prefer`), so it
# strictly outranks eno1 and blame is in play (until issue 19 the later node of the pair was
# drained). Every node checks at once (`check --job`), as a Slurm Prolog starts them, with
# real daemons; tests/tools/npf_jobmerge over the same rows must agree.
#   pair3: job node[1-3], node1 (the coordinator) drops node2's fabric address;
#   pair4: job node[1-4], node4 drops node2's fabric address.
# Runs as root (exit 77 = skipped otherwise); lab id bp<pid>, removed by `lab run` on any exit.
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
ENO=198.19.0
FABRIC_IF=ens1f0np0

if [ "${1:-}" = --inside ]; then
	T=$2
	# shellcheck source=tests/netns/jobcase.bash
	. "$SRC/tests/netns/jobcase.bash"
	# pair_case CASE N FWNODE FROM: FWNODE drops new connections from node FROM's fabric
	# address; job node[1-N].
	pair_case() {
		local c=$1 n=$2 at=$3 from=$4 nodes reason
		mapfile -t nodes < <(seq -f 'node%g' "$n")
		fw "$at" ip saddr "$FAB.${from#node}" ct state new drop ||
			die "$c: cannot set the firewall on $at"
		job_check "$c" "node[1-$n]" "${nodes[@]}"
		job_print "$c" "${nodes[@]}"
		# Nobody fails; everyone degraded on eno1, one decision.
		job_expect "$c" degraded eno1 "$ENO.0/24" "" "${nodes[@]}"
		# The pair is named (the operator's alert), on every node.
		for n in "${nodes[@]}"; do
			reason=$(jf "$c-$n" '.job.reason // ""')
			if [[ $reason == *"fails between "*"$at"* && $reason == *"$from"* && $reason == *"nobody drained"* ]]; then
				pass "$c: $n's job reason names the pair $at-$from"
			else
				fail "$c: $n's job reason does not name the pair $at-$from: '$reason'"
			fi
		done
		# The same rows through npf_jobmerge: the same decision.
		job_merge "$c" "degraded net=$ENO.0/24" - "${nodes[@]}"
		fw "$at"
	}
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" node1 node2 node3 node4' EXIT

	"$LAB" daemons start -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"
	pair_case pair3 3 node1 node2
	pair_case pair4 4 node4 node2
	finish
	exit
fi

need_root
need_cmds ip nft jq unshare timeout
need_netns
[ -x "$MERGE" ] || skip "npf_jobmerge not built"
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
T=$(mktemp -d /tmp/npf-blamepair.XXXXXX)
on_exit rm -rf "$T"
cat >"$T/blamepair.lab" <<LAB
# netns.blamepair: 4 nodes, eno1 and a 9000-byte fabric
desc blame pair: eno1 + fabric, one pair broken by the test
nodes node[1-4]
port 7718
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=$ENO.{i}/24
nic all $FABRIC_IF switch=fabric addr=$FAB.{i}/24
resolve eno1
LAB
"$LAB" run "$T/blamepair.lab" --id "bp$(($$ % 100000))" -q -- "$0" --inside "$T"
