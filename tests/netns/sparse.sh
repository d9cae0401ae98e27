#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.sparse: a healthy job larger than full_mesh_max is ok. 24 lab nodes on one switch, the
# daemons run with --full-mesh-max 8, so each node probes only its sparse plan and the peers
# outside it come back never contacted (available=false, probed=false). Every node's check
# must be ok and sparse with no unavailable peer. Then, seen from node1: a stopped daemon
# outside its plan changes nothing, a stopped daemon inside it makes the check unknown.
#
# Runs as root (exit 77 = skipped otherwise); the lab id is fs<pid>, so its namespaces are
# npl<id>-*, and `lab run` removes them on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=$BUILD
CLI=$NPF_BUILD_DIR/cli/netpreflight
N=24
MESH=8

# ---- inside the lab (`lab run` exported LAB_ID and LAB) ------------------------------------
if [ "${1:-}" = --inside ]; then
	T=$2
	check() { "$CLI" --socket "$("$LAB" sock "$1")" check --nodes "node[1-$N]" --json >"$T/$1.json" 2>"$T/$1.err"; }
	field() { jq -r "$2" "$T/$1.json" 2>/dev/null; }

	"$LAB" daemons start -- --full-mesh-max "$MESH" >"$T/daemons.out" 2>&1 || {
		cat "$T/daemons.out"
		die "daemons did not start"
	}
	for i in $(seq "$N"); do
		n=node$i
		check "$n"
		rc=$?
		v=$(field "$n" .verdict.verdict)
		if [ "$rc" -eq 0 ] && [ "$v" = ok ] && [ "$(field "$n" .sparse)" = true ] &&
			[ "$(field "$n" .verdict.unavailable)" = 0 ]; then
			pass "$n: ok, sparse, $(field "$n" '[.nodes[] | select(.probed)] | length') peers probed"
		else
			fail "$n: exit $rc, verdict '$v', sparse $(field "$n" .sparse), unavailable $(field "$n" .verdict.unavailable): $(field "$n" .verdict.summary) $(cat "$T/$n.err")"
		fi
	done

	# node1's plan, from its own report.
	mapfile -t planned < <(field node1 '.nodes[1:][] | select(.probed) | .name')
	mapfile -t outside < <(field node1 '.nodes[1:][] | select(.probed | not) | .name')
	if [ "${#planned[@]}" -lt 2 ] || [ "${#outside[@]}" -lt 1 ]; then
		fail "node1's plan: ${#planned[@]} probed, ${#outside[@]} outside (want a sparse plan)"
		exit 1
	fi
	"$LAB" daemons stop "${outside[0]}" >/dev/null 2>&1
	check node1
	[ "$(field node1 .verdict.verdict)" = ok ] &&
		pass "node1: ok with ${outside[0]} (outside its plan) stopped" ||
		fail "node1: ${outside[0]} (outside its plan) stopped: $(field node1 .verdict.summary)"
	"$LAB" daemons stop "${planned[0]}" >/dev/null 2>&1
	check node1
	rc=$?
	[ "$rc" -eq 3 ] && [ "$(field node1 .verdict.verdict)" = unknown ] &&
		[ "$(field node1 .recommendation.failure.node)" = "${planned[0]}" ] &&
		pass "node1: unknown, naming ${planned[0]} (in its plan, stopped)" ||
		fail "node1: ${planned[0]} (in its plan) stopped: exit $rc, $(field node1 .verdict.summary)"
	finish
	exit
fi

# ---- outside: preconditions, then the lab ---------------------------------------------------
need_root
need_cmds ip nft jq
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
need_netns
ID=fs$(($$ % 100000))

T=$(mktemp -d /tmp/npf-sparse.XXXXXX) || exit 1
on_exit 'rm -rf -- "$T"' 
cat >"$T/sparse.lab" <<LAB
desc $N nodes on one fabric switch, checked with a sparse plan (--full-mesh-max $MESH)
nodes node[1-$N]
switch fabric
nic all ens1f0np0 switch=fabric addr=198.18.0.{i}/16
expect verdict=ok
LAB
"$LAB" run "$T/sparse.lab" --id "$ID" -q -- bash "${BASH_SOURCE[0]}" --inside "$T"
rc=$?
[ "$rc" -eq 0 ] && echo "netns.sparse: passed" || echo "netns.sparse: failed ($rc)"
exit "$rc"
