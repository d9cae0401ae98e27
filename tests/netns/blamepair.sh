#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.blamepair: a fault that breaks exactly one pair, or a key holder that lies in its job
# row, drains nobody but the liar (issue 19, "blame you can trust", docs/decision.md §10: the
# blame table and the row guards). Daemons prefer the fabric (`--prefer`), so it strictly
# outranks eno1 and blame is in play; every node checks at once (`check --job`), as a Slurm
# Prolog starts them, with real daemons.
# One pair: one node's firewall drops new connections from one peer's fabric address; either
# end of that pair could be at fault, so no node may fail for it: every node lands on eno1,
# `degraded`, and the job's reason names the pair (until issue 19 the later node of the pair
# was drained); tests/tools/npf_jobmerge over the same rows must agree.
#   pair3: job node[1-3], node1 (the coordinator) drops node2's fabric address; and a row
#          from node3 under node1's name (no key yet) is refused;
#   pair4: job node[1-4], node4 drops node2's fabric address.
# A liar (daemons restarted with a cluster key): node1 and node2 run `check --job`, node3's
# row comes from tests/tools/npf_liar (node3's key and name; node3's daemon runs and answers
# probes, so every pair really works):
#   accuse: node3's row says its fabric pair with node2 fails, ranks the fabric 0 and eno1
#           above everything: node2 is no suspect (only node3 says so), the job ranks by the
#           coordinator's policy (the fabric first): both `degraded` on eno1, the pair named;
#   self:   node3's row says every fabric pair of its fails: node3 the only suspect, node1
#           and node2 ok on the fabric;
#   index:  node3 also sends a row at node2's index first: refused ("index 1 of the job is
#           node2"), node2's own row counts, the job ok on the fabric, no suspect.
# Then the caps: node3 opens rounds at node1 under 9 made-up tags, the 9th is refused (8 per
# remote node); a check_group user (nobody:nogroup) with one job check running gets
# `busy` for a second (another tag and hostlist); root beside it is not capped.
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
LIAR=$NPF_BUILD_DIR/tests/tools/npf_liar
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
		# Without a key, a row from node3 under the coordinator's name and index: refused
		# (the coordinator's row comes from its own check), the job decided as without it.
		[ "$n" = 3 ] && LIAR_KEY=- LIAR_NODE=node1 liar "$c" "$c.spoof" 0 \
			"$FAB.0/24,9,5,.ff" "$ENO.0/24,1,1,.oo"
		job_check "$c" "node[1-$n]" "${nodes[@]}"
		wait
		if [ "$n" = 3 ]; then
			grep -q "the coordinator's own row comes from its own check" "$T/$c.spoof.out" &&
				pass "$c: a row under node1's name from node3 is refused" ||
				fail "$c: the row under node1's name: $(cat "$T/$c.spoof.out" "$T/$c.spoof.err")"
		fi
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
	# liar CASE OUT INDEX NET...: node3's forged row for the job CASE, in the background.
	liar() {
		local c=$1 out=$2 idx=$3
		shift 3
		"$LAB" exec node3 "$LIAR" "${LIAR_KEY:-$T/cluster.key}" "${LIAR_NODE:-node3}" node1 \
			node1,node2,node3 \
			"$c-$$" "$idx" "$@" >"$T/$out.out" 2>"$T/$out.err" &
	}
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" node1 node2 node3 node4' EXIT

	"$LAB" daemons start -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"
	pair_case pair3 3 node1 node2
	pair_case pair4 4 node4 node2

	# The liar: daemons with the cluster key.
	"$LAB" daemons stop >/dev/null 2>&1
	"$LAB" daemons start -- --prefer "$FABRIC_IF" --key-file "$T/cluster.key" \
		>"$T/daemons.out" 2>&1 || die "daemons with the key: $(cat "$T/daemons.out")"
	JOB_SIZE=3 # node3 sends its row but runs no check: job_expect counts 3 rows
	liar accuse accuse 2 "$FAB.0/24,0,0,of." "$ENO.0/24,999999999999999,999999999999999,oo."
	job_check accuse "node[1-3]" node1 node2
	wait
	job_print accuse node1 node2
	job_expect accuse degraded eno1 "$ENO.0/24" "" node1 node2
	for n in node1 node2; do
		r=$(jf "accuse-$n" '.job.reason // ""')
		[[ $r == *"fails between node2 and node3"* ]] &&
			pass "accuse: $n's job names the pair node2-node3, the liar's accusation" ||
			fail "accuse: $n's job reason: '$r'"
	done
	grep -q '^decision verdict=degraded ' "$T/accuse.out" &&
		pass "accuse: the liar got the job's decision: $(head -c 200 "$T/accuse.out")" ||
		fail "accuse: the liar's answer: $(cat "$T/accuse.out" "$T/accuse.err")"

	liar self self 2 "$FAB.0/24,9,5,ff." "$ENO.0/24,1,1,oo."
	job_check self "node[1-3]" node1 node2
	wait
	job_expect self ok "$FABRIC_IF" "$FAB.0/24" node3 node1 node2
	jtrue "$T/self-node1.job" '.suspects == ["node3"]' &&
		pass "self: the liar is the only suspect" ||
		fail "self: suspects $(jq -c .suspects "$T/self-node1.job"), want [\"node3\"]"

	liar index index1 1 "$FAB.0/24,9,5,f.f" "$ENO.0/24,1,1,o.o"
	sleep 0.3
	liar index index2 2 "$FAB.0/24,9,5,oo." "$ENO.0/24,1,1,oo."
	job_check index "node[1-3]" node1 node2
	wait
	job_expect index ok "$FABRIC_IF" "$FAB.0/24" "" node1 node2
	grep -q 'index 1 of the job is node2, not node3' "$T/index1.out" &&
		pass "index: node3's row at node2's index was refused: $(head -c 200 "$T/index1.out")" ||
		fail "index: the row at node2's index: $(cat "$T/index1.out" "$T/index1.err")"

	# Per-peer cap: node3 (a key holder) opens rounds at node1 under 8 made-up tags (jobs
	# node1 never checks): the 9th is refused, so one key holder cannot take all 64 rounds.
	for i in 1 2 3 4 5 6 7 8; do
		liar "peer$i" "peer$i" 2 "$FAB.0/24,9,5,oo." "$ENO.0/24,1,1,oo."
	done
	sleep 1
	liar peer9 peer9 2 "$FAB.0/24,9,5,oo." "$ENO.0/24,1,1,oo."
	wait
	grep -q 'too many open job checks from this node' "$T/peer9.out" &&
		pass "peer cap: node3's 9th open round is refused: $(head -c 160 "$T/peer9.out")" ||
		fail "peer cap: node3's 9th round: $(cat "$T/peer9.out" "$T/peer9.err")"
	if grep -l 'too many open job checks' "$T"/peer[1-8].out >/dev/null 2>&1; then
		fail "peer cap: one of node3's first 8 rounds was refused"
	elif [ "$(cat "$T"/peer[1-8].out | grep -c '^decision verdict=unknown .*no row from 3 of 3')" = 8 ]; then
		pass "peer cap: node3's first 8 rounds were taken, each unknown at its deadline (its row waits for node1's own, which never comes)"
	else
		fail "peer cap: node3's first 8 rounds: $(cat "$T"/peer[1-8].out | head -c 400)"
	fi

	# One job check at a time per non-root uid: a check_group user with many tags cannot
	# hold the coordinators' rounds of everyone's jobs (root, the Prolog, is not capped).
	"$LAB" daemons stop >/dev/null 2>&1
	"$LAB" daemons start -- --prefer "$FABRIC_IF" --check-group nogroup >"$T/daemons.out" 2>&1 ||
		die "daemons with check_group: $(cat "$T/daemons.out")"
	as_nobody() { setpriv --reuid=65534 --regid="$(getent group nogroup | cut -d: -f3)" --clear-groups "$@"; }
	sock=$("$LAB" sock node2)
	as_nobody "$CLI" --socket "$sock" check --nodes "node[1-3]" --job capA --timeout 2 \
		>"$T/capA.out" 2>&1 &
	capa=$!
	sleep 0.5
	as_nobody "$CLI" --socket "$sock" check --nodes "node[1-4]" --job capB --timeout 2 \
		>"$T/capB.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && grep -q "already has a job check running" "$T/capB.out" &&
		pass "uid cap: nobody's second job check (another tag, another hostlist) is busy: $(head -c 120 "$T/capB.out")" ||
		fail "uid cap: nobody's second job check: exit $rc: $(head -c 300 "$T/capB.out")"
	"$CLI" --socket "$sock" check --nodes "node[1-4]" --job capC --timeout 2 >"$T/capC.out" 2>&1
	grep -q "already has a job check running" "$T/capC.out" &&
		fail "uid cap: root was capped: $(head -c 300 "$T/capC.out")" ||
		pass "uid cap: root's job check beside it is not capped"
	wait "$capa"
	finish
	exit
fi

need_root
need_cmds ip nft jq unshare timeout setpriv getent
getent group nogroup >/dev/null || skip "no group nogroup for the check_group case"
need_netns
[ -x "$MERGE" ] || skip "npf_jobmerge not built"
[ -x "$LIAR" ] || skip "npf_liar not built"
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
T=$(mktemp -d /tmp/npf-blamepair.XXXXXX)
on_exit rm -rf "$T"
# `key generate -o` where the CLI has it (0600, O_EXCL), else stdout.
(umask 077 && { "$CLI" key generate -o "$T/cluster.key" 2>/dev/null ||
	"$CLI" key generate >"$T/cluster.key"; }) || die "key generate"
cat >"$T/blamepair.lab" <<LAB
# netns.blamepair: 4 nodes, eno1 and a 9000-byte fabric
desc blame pair: eno1 + fabric, one pair broken or one row forged by the test
nodes node[1-4]
port 7718
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=$ENO.{i}/24
nic all $FABRIC_IF switch=fabric addr=$FAB.{i}/24
resolve eno1
LAB
"$LAB" run "$T/blamepair.lab" --id "bp$(($$ % 100000))" -q -- "$0" --inside "$T"
