#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.jobskew: a job whose Prologs start far apart still decides once (issue 20,
# docs/decision.md §10 "When it decides"). Six nodes (eno1 + a 9000-byte fabric) check the
# same job, each `netpreflight check --nodes node[1-6] --job TAG --max-timeout 20` as the
# Prolog does with what PrologEpilogTimeout leaves; their checks start 3 s apart, 15 s from
# the first to the last, and the coordinator (node1, the hostlist's first node) starts last,
# so every other row reaches it before its own check (and the hostlist) exists.
#   skew:    every node ok on the fabric, every row in, the same decision everywhere, and the
#            coordinator decided the job exactly once (its log);
#   control: the same skew with a budget of 1 s and no ceiling (a 4 s window): the first
#            nodes give up before the last start, so this test can tell the two apart (no
#            node is ok with every row in).
# Runs as root (exit 77 = skipped otherwise); lab id js<pid>, removed by `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
FAB=198.18.1
FABRIC_IF=ens1f0np0
ORDER=(node2 node4 node6 node3 node5 node1) # start order; node1 coordinates
GAP_S=3

if [ "${1:-}" = --inside ]; then
	T=$2
	# shellcheck source=tests/netns/jobcase.bash
	. "$SRC/tests/netns/jobcase.bash"
	# skewed_check CASE CLI-ARGS...: every node of ORDER checks node[1-6] as one job, GAP_S
	# apart, in that order (the Prologs of one job, started by slurmd at different times).
	skewed_check() {
		local c=$1 n i=0 t0
		shift
		JOB_TAG=$c-$$
		t0=$(date +%s%3N)
		for n in "${ORDER[@]}"; do
			[ $i -eq 0 ] || sleep "$GAP_S"
			i=$((i + 1))
			{
				timeout 120 "$CLI" --socket "$("$LAB" sock "$n")" check --nodes "node[1-6]" \
					--job "$JOB_TAG" "$@" --json >"$T/$c-$n.json" 2>"$T/$c-$n.err"
				echo $? >"$T/$c-$n.rc"
			} &
		done
		wait
		echo "  $c: ${#ORDER[@]} nodes, starts ${GAP_S} s apart, wall $(($(date +%s%3N) - t0)) ms"
	}
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" node1 node2' EXIT
	"$LAB" daemons start -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"
	mapfile -t all < <(seq -f 'node%g' 6)

	skewed_check skew --max-timeout 20
	job_expect skew ok "$FABRIC_IF" "$FAB.0/24" "" "${all[@]}"
	id=$(jf skew-node1 '.job.id // ""')
	k=$(grep -cE "job ${id:0:8}: [a-z]+ on .* of 6 rows" "/run/npflab/$LAB_ID/node1.log" 2>/dev/null)
	[ -n "$id" ] && [ "$k" = 1 ] && pass "skew: the coordinator decided job ${id:0:8} once" ||
		fail "skew: the coordinator logged ${k:-no} decisions for job '${id:0:8}'"

	skewed_check control --timeout 1
	ok=0
	for n in "${all[@]}"; do
		jtrue "$T/control-$n.json" '.verdict.verdict == "ok" and .job.rows == 6' && ok=$((ok + 1))
	done
	[ "$ok" -eq 0 ] && pass "control: a 4 s window misses the skew (no node ok with every row in)" ||
		fail "control: $ok nodes ok with every row in although the window is shorter than the skew"
	finish
	exit
fi

need_root
need_cmds ip nft jq unshare timeout
need_netns
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
T=$(mktemp -d /tmp/npf-jobskew.XXXXXX)
on_exit rm -rf "$T"
cat >"$T/jobskew.lab" <<LAB
# netns.jobskew: 6 nodes, eno1 and a 9000-byte fabric
desc job rows with skewed starts: eno1 + fabric
nodes node[1-6]
port 7718
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=198.19.0.{i}/24
nic all $FABRIC_IF switch=fabric addr=$FAB.{i}/24
resolve eno1
LAB
"$LAB" run "$T/jobskew.lab" --id "js$(($$ % 100000))" -q -- "$0" --inside "$T"
