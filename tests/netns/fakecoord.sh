#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.fakecoord: a cluster-key holder that answers as a job's coordinator (issue 19,
# docs/security.md). Job node[1-3] (coordinator node1), real daemons with `--prefer` on the
# fabric, every node runs `check --job` at once; node2's /etc/hosts sends the name node1 to
# node4, where tests/tools/npf_fakecoord serves the probe port with the cluster key and
# answers every ROW with a forged JOB_DECISION (ok on eno1, the worse network, node1 a
# suspect). node4 runs no daemon and is not in the job.
#   as3: the fake proves the key as node3 (its own name): node2 sends its row to it (the
#        fake says so) but refuses the decision (not the coordinator): node2 `unknown`, no
#        env, never `fail`, never the forged network; node1 and node3 hold node1's own
#        decision (node2's row missing: `unknown`), nobody fails.
#   drain: the fake proves the key as node1 (the shared cluster key proves membership, not
#          which node holds it) and forges `fail` with node2 the suspect: node2 is not
#          drained: its own evidence shows no failure there, and a node is a suspect only on
#          its own evidence (lib/jobapply.c suspect_backed): `unknown`, no env, said why;
#   nokey: the same with daemons without a key (README: no key, no authentication).
# With NPF_FAKECOORD_NAMED=1 (opt-in, open in docs/security.md):
#   as1:   the fake as node1 forges `ok` on eno1: node2 takes it (eno1 works from node2, so
#          its own evidence cannot refuse it) while node1 and node3 are `unknown`.
# Runs as root (exit 77 = skipped otherwise); lab id fc<pid>, removed by `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
# shellcheck disable=SC2016 # jq programs in single quotes
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
FAKE=$NPF_BUILD_DIR/tests/tools/npf_fakecoord
FAB=198.18.1
ENO=198.19.0
FABRIC_IF=ens1f0np0
FORGED_NET=$ENO.0/24

if [ "${1:-}" = --inside ]; then
	T=$2
	# shellcheck source=tests/netns/jobcase.bash
	. "$SRC/tests/netns/jobcase.bash"
	FAKE_PID=
	trap '[ -z "$FAKE_PID" ] || stop_pid "$FAKE_PID"
		daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" node1 node2 node3' EXIT

	# node2 alone resolves node1 to node4's address (its own hosts file, read by its daemon).
	h2=/etc/netns/$("$LAB" ns node2)/hosts
	sed "s/^$ENO\.1\tnode1\$/$ENO.4\tnode1/" "$h2" >"$T/hosts2" && cat "$T/hosts2" >"$h2" &&
		[ "$("$LAB" exec node2 getent hosts node1 | cut -d' ' -f1)" = "$ENO.4" ] ||
		die "cannot point node2's node1 at node4: $(cat "$h2")"
	[ "$("$LAB" exec node3 getent hosts node1 | cut -d' ' -f1)" = "$ENO.1" ] ||
		die "node3 resolves node1 to node4 too"

	# fake CASE KEY NAME [VERDICT NODES]: npf_fakecoord on node4 as NAME (forging VERDICT,
	# default ok, and NODES, default "s..": node1 a suspect), until unfake (180 s at most).
	# Not a child of this shell: job_check's `wait` must not wait for it.
	fake() {
		FAKE_PID=$(ip netns exec "$("$LAB" ns node4)" "$FAKE" "$2" "$3" 180 "${4:-ok}" \
			"$FORGED_NET" "${5:-s..}" "forged by node4 as $3" \
			>"$T/$1.fake" 2>"$T/$1.fake.err" </dev/null & echo $!)
		wait_until 20 grep -qs '^listening as' "$T/$1.fake" ||
			die "$1: the fake coordinator did not start: $(cat "$T/$1.fake.err")"
	}
	unfake() { stop_pid "$FAKE_PID"; FAKE_PID=; }
	show() {
		local c=$1 n
		shift
		for n in "$@"; do
			echo "  $c $n exit $(cat "$T/$c-$n.rc"): $(jq -c '{verdict: .verdict.verdict, net: .recommendation.choice.network, env: (.recommendation.env // {} | length), job: .job | {verdict, net, suspects, missing, reason}}' "$T/$c-$n.json")"
		done
	}
	# deceived CASE NODE: NODE sent its row to the fake and did not take its decision:
	# `unknown` (exit 3), no environment, not the forged network, no suspect.
	deceived() {
		local c=$1 n=$2 f=$1-$2
		if [ "$(cat "$T/$f.rc")" = 3 ] && jtrue "$T/$f.json" '.verdict.verdict == "unknown" and
			.job.role == "unknown" and .job.verdict == "unknown" and .job.net != $net and
			(.recommendation.env // {} | length) == 0 and
			(.recommendation.choice.network // "") != $net and .job.suspects == []' \
			--arg net "$FORGED_NET"; then
			pass "$c: $n did not take the forged decision: unknown, no env ($(jf "$f" .job.reason))"
		else
			fail "$c: $n: exit $(cat "$T/$f.rc"), $(jq -c '{verdict: .verdict.verdict, choice: .recommendation.choice, env: .recommendation.env, job}' "$T/$f.json" 2>/dev/null)"
		fi
	}
	# not_drained CASE NODE: NODE got a forged decision naming it a suspect and refused to
	# be drained on it: `unknown` (exit 3), no environment, the summary says why.
	not_drained() {
		local c=$1 n=$2 f=$1-$2
		if [ "$(cat "$T/$f.rc")" = 3 ] && jtrue "$T/$f.json" '.verdict.verdict == "unknown" and
			(.recommendation.env // {} | length) == 0 and
			(.verdict.summary | test("its own evidence shows no failure there: not drained"))'; then
			pass "$c: $n is not drained on a forged decision: $(jf "$f" .verdict.summary)"
		else
			fail "$c: $n: exit $(cat "$T/$f.rc"), $(jq -c '{verdict: .verdict, env: .recommendation.env, job}' "$T/$f.json" 2>/dev/null)"
		fi
	}
	# undeceived CASE NODE...: the nodes that asked the real coordinator hold its decision
	# (node2's row missing: unknown, the same job), none fails.
	undeceived() {
		local c=$1 n f
		shift
		for n in "$@"; do
			f=$c-$n
			if [ "$(cat "$T/$f.rc")" = 3 ] && jtrue "$T/$f.json" '.verdict.verdict == "unknown" and
				.job.coordinator == "node1" and .job.missing == ["node2"] and .job.rows == 2 and
				.job.suspects == []'; then
				pass "$c: $n holds node1's decision: $(jf "$f" .job.reason)"
			else
				fail "$c: $n: exit $(cat "$T/$f.rc"), $(jq -c '{verdict: .verdict.verdict, job}' "$T/$f.json" 2>/dev/null)"
			fi
		done
	}

	"$LAB" daemons start node1 node2 node3 -- --prefer "$FABRIC_IF" --key-file "$T/cluster.key" \
		>"$T/daemons.out" 2>&1 || die "daemons: $(cat "$T/daemons.out")"
	fake as3 "$T/cluster.key" node3
	job_check as3 "node[1-3]" node1 node2 node3
	unfake
	job_print as3 node1 node2 node3
	grep -q '^row from node2 index 1: answered' "$T/as3.fake" &&
		pass "as3: node2's row went to the fake coordinator, which answered: $(paste -sd' ' "$T/as3.fake")" ||
		fail "as3: the fake coordinator got no row from node2: $(cat "$T/as3.fake" "$T/as3.fake.err")"
	deceived as3 node2
	undeceived as3 node1 node3
	# The fake proves the key under node1's name: the handshake proves the cluster key, not
	# which node holds it. A forged drain still drains nobody (see the header).
	fake drain "$T/cluster.key" node1 fail .s.
	job_check drain "node[1-3]" node1 node2 node3
	unfake
	show drain node1 node2 node3
	not_drained drain node2
	undeceived drain node1 node3
	if [ "${NPF_FAKECOORD_NAMED:-0}" = 1 ]; then
		fake as1 "$T/cluster.key" node1
		job_check as1 "node[1-3]" node1 node2 node3
		unfake
		show as1 node1 node2 node3
		deceived as1 node2
		undeceived as1 node1 node3
	fi
	"$LAB" daemons stop >/dev/null 2>&1
	"$LAB" daemons start node1 node2 node3 -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons without a key: $(cat "$T/daemons.out")"
	fake nokey - node1 fail .s.
	job_check nokey "node[1-3]" node1 node2 node3
	unfake
	show nokey node1 node2 node3
	not_drained nokey node2
	finish
	exit
fi

need_root
need_cmds ip jq timeout getent
need_netns
[ -x "$FAKE" ] || skip "npf_fakecoord not built"
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
T=$(mktemp -d /tmp/npf-fakecoord.XXXXXX)
on_exit rm -rf "$T"
(umask 077 && "$CLI" key generate -o "$T/cluster.key") || die "key generate"
cat >"$T/fakecoord.lab" <<LAB
# netns.fakecoord: 4 nodes, eno1 and a 9000-byte fabric; node4 hosts the fake coordinator
desc fake coordinator: eno1 + fabric, node2 resolves node1 to node4
nodes node[1-4]
port 7718
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=$ENO.{i}/24
nic all $FABRIC_IF switch=fabric addr=$FAB.{i}/24
resolve eno1
LAB
"$LAB" run "$T/fakecoord.lab" --id "fc$(($$ % 100000))" -q -- "$0" --inside "$T"
