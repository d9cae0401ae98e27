#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-scenario.sh: one lab scenario as a test (CTest scenario.<name>): the product's decision
# on every node against the scenario's `expect` lines, and Open MPI on what it publishes.
#
# usage: tests/lab/run-scenario.sh [--id ID] SCENARIO
#
# Brings the scenario up with one netpreflightd per node (`lab run --daemons`, which always
# tears down, also on failure, Ctrl-C or TERM), then:
#   1. runs `netpreflight check --json` on EVERY node at once, as a job's Prologs would;
#   2. per node asserts the verdict (and the CLI's exit status for it), the interface the
#      recommendation chose (`-`: none, nothing published) and NCCL's default prediction;
#   3. with `mpi=yes` (the default for verdict ok) evaluates the first node's job-wide
#      environment (`netpreflight env --job-wide --format shell`) and runs a 4 MiB Open MPI
#      allreduce across every node with it (tests/lab/mpi-allreduce); it must finish.
# Exit status: 0 pass, 1 fail, 77 skipped (not root, no netns, not built, tools missing).
# Environment: NPF_BUILD_DIR (default <repo>/build), NPF_SOURCE_DIR; SCENARIO_MPI_TIMEOUT
# (seconds, default 60).
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

SELF=$(readlink -f -- "${BASH_SOURCE[0]}")
LAB_DIR=${SELF%/*}
# shellcheck source=../netns/lib.sh
. "$LAB_DIR/../netns/lib.sh"
CLI=$BUILD/cli/netpreflight
LAB=$LAB_DIR/lab
MPI=$LAB_DIR/mpi-allreduce
RUN_DIR=${LAB_RUN_DIR:-/run/npflab}
export NPF_BUILD_DIR=$BUILD

# ----------------------------------------------------------------------------------------
# Inside the lab (`lab run` exported LAB_ID): the assertions.
inside() {
	local scen=$1 T n k v rc hostlist
	local -a nodes pids
	local -A want dflt exp envx
	T=$(mktemp -d /tmp/npf-scen.XXXXXX) || return 1
	on_exit "rm -rf -- '$T'"

	mapfile -t nodes < <("$LAB" nodes)
	hostlist=$("$LAB" hostlist)
	while IFS='=' read -r k v; do
		case $k in
		verdict | mpi | gloo) exp[$k]=$v ;;
		env.*) envx[${k#env.}]=$v ;;
		nccl-default.*) dflt[${k#nccl-default.}]=$v ;;
		*) want[$k]=$v ;;
		esac
	done < <("$LAB" expect --id "$LAB_ID")
	[ -n "${exp[verdict]:-}" ] || { fail "$scen: no 'expect verdict=' line"; return 1; }
	for n in "${!want[@]}" "${!dflt[@]}"; do
		[[ " ${nodes[*]} " == *" $n "* ]] || fail "$scen: expectation names unknown node $n"
	done
	local verdict=${exp[verdict]} mpi=${exp[mpi]:-}
	[ -n "$mpi" ] || { [ "$verdict" = ok ] && mpi=yes || mpi=no; }
	local want_rc
	case $verdict in ok) want_rc=0 ;; fail) want_rc=1 ;; unknown) want_rc=3 ;; *)
		fail "$scen: bad expected verdict '$verdict'"; return 1 ;;
	esac

	# 1. Every node checks the job at the same time. `unknown` is what a loaded machine
	# answers (docs/decision.md §10, "Load is not failure"): when a node says it where the
	# scenario expects a verdict, the whole job start is made once more (at most twice in
	# all), and the second answer is the one judged.
	local round inconclusive
	for round in 1 2; do
		pids=()
		for n in "${nodes[@]}"; do
			"$CLI" --socket "$("$LAB" sock "$n")" check --nodes "$hostlist" --json \
				>"$T/$n.json" 2>"$T/$n.err" &
			pids+=($!)
		done
		for k in "${!nodes[@]}"; do
			wait "${pids[$k]}"
			echo $? >"$T/${nodes[$k]}.rc"
		done
		[ "$verdict" = unknown ] && break
		inconclusive=""
		for n in "${nodes[@]}"; do
			[ "$(jq -r '.verdict.verdict // ""' "$T/$n.json" 2>/dev/null)" = unknown ] &&
				inconclusive+=" $n"
		done
		[ -z "$inconclusive" ] && break
		[ "$round" = 1 ] && echo "note: unknown on$inconclusive (load-shaped evidence); the job start is made once more"
	done

	# 2. Per node: verdict, choice, NCCL's default.
	for n in "${nodes[@]}"; do
		rc=$(cat "$T/$n.rc")
		if ! jq -e '.schema == "netpreflight.check" and (.recommendation | type) == "object"' \
			"$T/$n.json" >/dev/null 2>&1; then
			fail "$n: check exit $rc, no check JSON with a recommendation: $(head -c 300 "$T/$n.err")"
			continue
		fi
		j() { jq -r "$1" "$T/$n.json"; }
		local got_v got_if got_net verified summary
		got_v=$(j .recommendation.verdict)
		got_if=$(j '.recommendation.choice.ifname // "-"')
		got_net=$(j '.recommendation.choice.network // "-"')
		verified=$(j '.recommendation.choice.verified // false')
		summary=$(j .recommendation.summary)
		[ "$got_v" = "$verdict" ] && [ "$(j .verdict.verdict)" = "$verdict" ] &&
			pass "$n: verdict $verdict" ||
			fail "$n: verdict $got_v (check object: $(j .verdict.verdict)), want $verdict: $summary"
		[ "$rc" = "$want_rc" ] || fail "$n: exit status $rc for verdict $got_v, want $want_rc"
		if [ -n "${want[$n]:-}" ]; then
			if [ "${want[$n]}" = - ]; then
				# No interface: nothing verified, nothing published.
				if [ "$verified" != true ] &&
					jq -e '(.recommendation.env | length) == 0' "$T/$n.json" >/dev/null; then
					pass "$n: no interface chosen, nothing published ($summary)"
				else
					fail "$n: chose $got_if ($got_net, verified $verified), want none"
				fi
			elif [ "$got_if" = "${want[$n]}" ] && [ "$verified" = true ] &&
				[ "$(j '.recommendation.env.NCCL_SOCKET_IFNAME // ""')" = "=${want[$n]}" ]; then
				pass "$n: chose $got_if ($got_net), NCCL_SOCKET_IFNAME==$got_if"
			else
				fail "$n: chose $got_if ($got_net, verified $verified, NCCL_SOCKET_IFNAME=$(j '.recommendation.env.NCCL_SOCKET_IFNAME // "unset"')), want ${want[$n]}: $summary"
			fi
		fi
		if [ -n "${dflt[$n]:-}" ]; then
			local d
			d=$(j 'if .recommendation.nccl_default.found then .recommendation.nccl_default.ifname else "-" end')
			[ "$d" = "${dflt[$n]}" ] &&
				pass "$n: $(j .recommendation.nccl_default.text)" ||
				fail "$n: NCCL's default predicted $d, want ${dflt[$n]}: $(j .recommendation.nccl_default.text)"
		fi
	done

	# 2b. Published variables, per node (env.VAR=VALUE / - / !TEXT).
	for k in "${!envx[@]}"; do
		v=${envx[$k]}
		for n in "${nodes[@]}"; do
			local got
			got=$(jq -r --arg k "$k" '.recommendation.env[$k] // "-"' "$T/$n.json" 2>/dev/null)
			case $v in
			!*) [ "$got" = - ] || [[ $got != *"${v#!}"* ]] ;;
			*) [ "$got" = "$v" ] ;;
			esac &&
				pass "$n: $k=$got (want $v)" ||
				fail "$n: $k=$got, want $v: $(jq -r '[.recommendation.notes[]? | tostring] | join("; ")' "$T/$n.json" 2>/dev/null | head -c 400)"
		done
	done

	# 3. Open MPI on the published environment.
	if [ "$mpi" = yes ]; then
		local first=${nodes[0]} line
		"$CLI" --socket "$("$LAB" sock "$first")" env --nodes "$hostlist" --job-wide \
			--format shell >"$T/env.sh" 2>"$T/env.err"
		rc=$?
		if [ $rc -ne 0 ] || ! grep -q '^export OMPI_MCA_btl_tcp_if_include=' "$T/env.sh"; then
			fail "mpi: $first's job-wide environment: exit $rc, $(tail -n 1 "$T/env.err")"
		else
			line=$("$MPI" --id "$LAB_ID" --env "$T/env.sh" \
				--timeout "${SCENARIO_MPI_TIMEOUT:-60}" --log "$T/mpi.log")
			rc=$?
			if [ $rc -eq 0 ]; then
				pass "mpi: allreduce on $first's published environment ($(sed -n \
					"s/^export OMPI_MCA_btl_tcp_if_include='\(.*\)'/btl_tcp_if_include=\1/p" \
					"$T/env.sh")): $line"
			else
				fail "mpi: allreduce on the published environment: $line"
				sed 's/^/     | /' "$T/env.sh"
				grep -v '^[[:space:]]*$' "$T/mpi.log" | tail -n 40 | sed 's/^/     | /'
			fi
		fi
	else
		pass "mpi: not run (mpi=no: nothing that should carry a job is published)"
	fi

	# 3b. PyTorch Gloo, each rank with its own node's published environment.
	if [ "${exp[gloo]:-no}" = yes ]; then
		mkdir -p "$T/genv"
		for n in "${nodes[@]}"; do
			"$CLI" --socket "$("$LAB" sock "$n")" env --nodes "$hostlist" --cached \
				--format shell >"$T/genv/$n.sh" 2>"$T/genv/$n.err" ||
				fail "gloo: $n's environment: $(tail -n 1 "$T/genv/$n.err")"
		done
		line=$("$LAB_DIR/gloo-allreduce" --id "$LAB_ID" --envdir "$T/genv" \
			--timeout "${SCENARIO_GLOO_TIMEOUT:-90}" --log "$T/gloo.log")
		rc=$?
		if [ $rc -eq 0 ]; then
			pass "gloo: allreduce on each node's published environment: $line"
		else
			fail "gloo: allreduce on the published environment: $line"
			grep -h 'GLOO' "$T"/genv/*.sh | sort | uniq -c | sed 's/^/     | /'
			grep -v '^[[:space:]]*$' "$T/gloo.log" | tail -n 30 | sed 's/^/     | /'
		fi
	fi

	if [ "$FAILS" -gt 0 ]; then
		printf -- '--- %s: netpreflight check (human report)\n' "${nodes[0]}"
		"$CLI" --socket "$("$LAB" sock "${nodes[0]}")" check --nodes "$hostlist" 2>&1 |
			sed 's/^/     | /'
	fi
	# 4. The daemons end cleanly: no sanitizer report (leaks show at exit) in any log.
	"$LAB" daemons stop >/dev/null 2>&1
	for n in "${nodes[@]}"; do
		if grep -qE 'Sanitizer|runtime error' "$("$LAB" log "$n")" 2>/dev/null; then
			fail "$n: daemon log: $(grep -m3 -E 'Sanitizer|runtime error|SUMMARY' \
				"$("$LAB" log "$n")")"
		fi
	done
	if [ "$FAILS" -gt 0 ]; then
		echo "scenario $scen: $FAILS failure(s)"
		return 1
	fi
	echo "scenario $scen: passed"
}

# ----------------------------------------------------------------------------------------

if [ "${1:-}" = --inside ]; then
	[ -n "${LAB_ID:-}" ] && [ $# -eq 2 ] || { echo "run-scenario: --inside is internal" >&2; exit 2; }
	inside "$2"
	exit
fi

id=
while [ $# -gt 0 ]; do
	case $1 in
	--id) [ $# -ge 2 ] || break; id=$2; shift 2 ;;
	-*) break ;;
	*) break ;;
	esac
done
if [ $# -ne 1 ] || [[ $1 == -* ]]; then
	echo "usage: run-scenario.sh [--id ID] SCENARIO" >&2
	exit 2
fi
scen=$1

need_root
need_cmds ip nft jq mpirun mpicc timeout
for f in "$CLI" "$BUILD/daemon/netpreflightd"; do
	[ -x "$f" ] || skip "$f not built"
done
"$LAB" check "$scen" >/dev/null || exit 1
need_netns

# A free lab id of ours (s1..s8) unless one is given; `lab up` refuses a taken one anyway.
if [ -z "$id" ]; then
	for k in 1 2 3 4 5 6 7 8; do
		if [ ! -e "$RUN_DIR/s$k" ] && ! ip netns list | grep -q "^npls$k-"; then
			id=s$k
			break
		fi
	done
	[ -n "$id" ] || { echo "run-scenario: lab ids s1..s8 are all in use (lab status)" >&2; exit 1; }
fi

exec "$LAB" run "$scen" --id "$id" --daemons -q -- bash "$SELF" --inside "$scen"
