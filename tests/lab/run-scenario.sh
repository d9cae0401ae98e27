#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-scenario.sh: one lab scenario as a test (CTest scenario.<name>): the product's decision
# on every node against the scenario's `expect` lines, and Open MPI on what it publishes.
#
# usage: tests/lab/run-scenario.sh [--id ID] SCENARIO
#
# Brings the scenario up with one netpreflightd per node (`lab run --daemons`, which always
# tears down, also on failure, Ctrl-C or TERM), then, in two flows on the same lab, `node`
# (each node asks on its own) and `job` (the Slurm flow: `check --job TAG` on every node at
# once, then `env --cached` as the TaskProlog does):
#   1. runs `netpreflight check --json` (job flow: `--job TAG`) on EVERY node at once;
#   2. per node asserts the verdict (and the CLI's exit status for it), the interface the
#      recommendation chose (`-`: none, nothing published) and NCCL's default prediction;
#   3. with `mpi=yes` (the default for verdict ok and degraded) evaluates the first node's
#      job-wide environment (node flow: `env --job-wide`; job flow: `env --cached --job-wide`,
#      from the job check's answer) and runs a 4 MiB Open MPI allreduce with it across the
#      nodes whose verdict publishes (tests/lab/mpi-allreduce); it must finish; with
#      `gloo=yes` a PyTorch Gloo allreduce, each rank on its own node's `env --cached` (what
#      the TaskProlog gives each task); wherever the first publishing node's UCX_NET_DEVICES
#      names a netdev (unless `ucx=no`), UCX's ucx_perftest over its tcp transport, each side
#      on its own node's `env --cached` (tests/lab/ucx-pingpong); `ucx-bad=IFNAME` also runs
#      it with UCX_NET_DEVICES=IFNAME, which must not pass.
# An `expect job.KEY=VALUE` line overrides KEY for the job flow only (e.g. job.verdict=...).
# Exit status: 0 pass, 1 fail, 77 skipped (not root, no netns, not built, tools missing).
# Environment: NPF_BUILD_DIR (default <repo>/build), NPF_SOURCE_DIR; SCENARIO_MPI_TIMEOUT
# (seconds, default 60); SCENARIO_UCX_TIMEOUT (default 30); SCENARIO_FLOWS (default "node job").
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

# Expectations of the scenario (filled by inside(); `job.KEY=V` overrides KEY for the job flow).
declare -A EXP WANT DFLT ENVX JEXP

# flow MODE: one start of the job in MODE `node` (each node checks on its own) or `job` (the
# Slurm flow: `check --job TAG` on every node at once, then `env --cached` as the TaskProlog
# asks), with every assertion of the scenario and the real clients on what was published.
flow() {
	local mode=$1 n k v rc verdict mpi want_rc round inconclusive tag="" runs
	local -a pids jobarg=() carry=()
	local -A want=() dflt=() envx=() exp=() nverdict=()
	for k in "${!EXP[@]}"; do
		case $k in verdict.*) nverdict[${k#verdict.}]=${EXP[$k]} ;; *) exp[$k]=${EXP[$k]} ;; esac
	done
	for k in "${!WANT[@]}"; do want[$k]=${WANT[$k]}; done
	for k in "${!DFLT[@]}"; do dflt[$k]=${DFLT[$k]}; done
	for k in "${!ENVX[@]}"; do envx[$k]=${ENVX[$k]}; done
	if [ "$mode" = job ]; then
		for k in "${!JEXP[@]}"; do
			v=${JEXP[$k]}
			case $k in
			verdict | mpi | gloo | ucx | ucx-bad) exp[$k]=$v ;;
			verdict.*) nverdict[${k#verdict.}]=$v ;;
			env.*) envx[${k#env.}]=$v ;;
			nccl-default.*) dflt[${k#nccl-default.}]=$v ;;
			*) want[$k]=$v ;;
			esac
		done
	fi
	verdict=${exp[verdict]} mpi=${exp[mpi]:-}
	[ -n "$mpi" ] || { [ "$verdict" = ok ] || [ "$verdict" = degraded ] && mpi=yes || mpi=no; }
	echo "--- flow: $mode"

	# 1. Every node checks the job at the same time. `unknown` is what a loaded machine
	# answers (docs/decision.md §10, "Load is not failure"): when a node says it where the
	# scenario expects a verdict, the whole job start is made once more (at most twice in
	# all), and the second answer is the one judged. A job start has its own tag.
	for round in 1 2; do
		pids=()
		if [ "$mode" = job ]; then
			tag=scen-$$-$round
			jobarg=(--job "$tag")
		fi
		for n in "${nodes[@]}"; do
			"$CLI" --socket "$("$LAB" sock "$n")" check --nodes "$hostlist" "${jobarg[@]}" \
				--json >"$T/$n.json" 2>"$T/$n.err" &
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
		if [ "$round" = 1 ]; then
			echo "note: $mode: unknown on$inconclusive (load-shaped evidence); the job start is made once more"
			# Counted, not hidden: scripts/test lists every retry in its summary.
			k=${scen##*/}
			echo "scenario.${k%.lab} $mode: unknown on$inconclusive, retried" >>"$BUILD/retries.txt"
		fi
	done

	# 2. Per node: verdict (`verdict.NODE` where one node's differs: the suspect a job check
	# drains), choice, NCCL's default. The nodes whose verdict publishes carry the job: the
	# clients run there (a drained suspect does not).
	for n in "${nodes[@]}"; do
		local nv=${nverdict[$n]:-$verdict}
		case $nv in ok | degraded) want_rc=0; carry+=("$n") ;; fail) want_rc=1 ;; unknown) want_rc=3 ;; *)
			fail "$scen: bad expected verdict '$nv'"; return 1 ;;
		esac
		rc=$(cat "$T/$n.rc")
		if ! jq -e '.schema == "netpreflight.check" and (.recommendation | type) == "object"' \
			"$T/$n.json" >/dev/null 2>&1; then
			fail "$mode: $n: check exit $rc, no check JSON with a recommendation: $(head -c 300 "$T/$n.err")"
			continue
		fi
		j() { jq -r "$1" "$T/$n.json"; }
		local got_v got_if got_net verified summary
		got_v=$(j .recommendation.verdict)
		got_if=$(j '.recommendation.choice.ifname // "-"')
		got_net=$(j '.recommendation.choice.network // "-"')
		verified=$(j '.recommendation.choice.verified // false')
		summary=$(j .recommendation.summary)
		[ "$got_v" = "$nv" ] && [ "$(j .verdict.verdict)" = "$nv" ] &&
			pass "$mode: $n: verdict $nv" ||
			fail "$mode: $n: verdict $got_v (check object: $(j .verdict.verdict)), want $nv: $summary"
		[ "$rc" = "$want_rc" ] || fail "$mode: $n: exit status $rc for verdict $got_v, want $want_rc"
		if [ "$mode" = job ] && [ "$(j '.job.tag // ""')" != "$tag" ]; then
			fail "$mode: $n: the check is not job $tag: $(j '.job // "no job object"' | head -c 200)"
		fi
		if [ -n "${want[$n]:-}" ]; then
			if [ "${want[$n]}" = - ]; then
				# No interface: nothing verified, nothing published.
				if [ "$verified" != true ] &&
					jq -e '(.recommendation.env | length) == 0' "$T/$n.json" >/dev/null; then
					pass "$mode: $n: no interface chosen, nothing published ($summary)"
				else
					fail "$mode: $n: chose $got_if ($got_net, verified $verified), want none"
				fi
			elif [ "$got_if" = "${want[$n]}" ] && [ "$verified" = true ] &&
				[ "$(j '.recommendation.env.NCCL_SOCKET_IFNAME // ""')" = "=${want[$n]}" ]; then
				pass "$mode: $n: chose $got_if ($got_net), NCCL_SOCKET_IFNAME==$got_if"
			else
				fail "$mode: $n: chose $got_if ($got_net, verified $verified, NCCL_SOCKET_IFNAME=$(j '.recommendation.env.NCCL_SOCKET_IFNAME // "unset"')), want ${want[$n]}: $summary"
			fi
		fi
		if [ -n "${dflt[$n]:-}" ]; then
			local d
			d=$(j 'if .recommendation.nccl_default.found then .recommendation.nccl_default.ifname else "-" end')
			[ "$d" = "${dflt[$n]}" ] &&
				pass "$mode: $n: $(j .recommendation.nccl_default.text)" ||
				fail "$mode: $n: NCCL's default predicted $d, want ${dflt[$n]}: $(j .recommendation.nccl_default.text)"
		fi
	done

	# 2b. Published variables, per node (env.VAR=VALUE / - / !TEXT; `?`: no expectation in
	# this flow).
	for k in "${!envx[@]}"; do
		v=${envx[$k]}
		[ "$v" = "?" ] && continue
		for n in "${nodes[@]}"; do
			local got
			got=$(jq -r --arg k "$k" '.recommendation.env[$k] // "-"' "$T/$n.json" 2>/dev/null)
			case $v in
			!*) [ "$got" = - ] || [[ $got != *"${v#!}"* ]] ;;
			*) [ "$got" = "$v" ] ;;
			esac &&
				pass "$mode: $n: $k=$got (want $v)" ||
				fail "$mode: $n: $k=$got, want $v: $(jq -r '[.recommendation.notes[]? | tostring] | join("; ")' "$T/$n.json" 2>/dev/null | head -c 400)"
		done
	done

	# 3. Open MPI on the published environment: the launch node's job-wide values (mpirun
	# copies the launch node's environment to every node, so per-node values such as a
	# routed host link's /31 would not hold elsewhere); in the job flow from the job
	# check's answer the daemon kept (`env --cached --job-wide`), no new check.
	runs=$(IFS=,; echo "${carry[*]}")
	[ ${#carry[@]} -lt ${#nodes[@]} ] && echo "note: $mode: the clients run on $runs (the nodes whose verdict publishes)"
	if [ "$mpi" = yes ] && [ ${#carry[@]} -lt 2 ]; then
		fail "$mode: mpi: expected, but fewer than two nodes publish an environment"
	elif [ "$mpi" = yes ]; then
		local first=${carry[0]} line
		local -a how=(--job-wide)
		[ "$mode" = job ] && how=(--cached --job-wide)
		"$CLI" --socket "$("$LAB" sock "$first")" env --nodes "$hostlist" "${how[@]}" \
			--format shell >"$T/env.sh" 2>"$T/env.err"
		rc=$?
		if [ $rc -ne 0 ] || ! grep -q '^export OMPI_MCA_btl_tcp_if_include=' "$T/env.sh"; then
			fail "$mode: mpi: $first's ${how[*]} environment: exit $rc, $(tail -n 1 "$T/env.err")"
		else
			line=$("$MPI" --id "$LAB_ID" --env "$T/env.sh" --nodes "$runs" \
				--timeout "${SCENARIO_MPI_TIMEOUT:-60}" --log "$T/mpi.log")
			rc=$?
			if [ $rc -eq 0 ]; then
				pass "$mode: mpi: allreduce on $first's published environment ($(sed -n \
					"s/^export OMPI_MCA_btl_tcp_if_include='\(.*\)'/btl_tcp_if_include=\1/p" \
					"$T/env.sh")): $line"
			else
				fail "$mode: mpi: allreduce on the published environment: $line"
				sed 's/^/     | /' "$T/env.sh"
				grep -v '^[[:space:]]*$' "$T/mpi.log" | tail -n 40 | sed 's/^/     | /'
			fi
		fi
	else
		pass "$mode: mpi: not run (mpi=no: nothing that should carry a job is published)"
	fi

	# Each publishing node's own environment (`env --cached`, as the TaskProlog asks), for
	# the clients that run each rank on its node's values (Gloo, UCX).
	rm -rf "$T/genv"
	mkdir -p "$T/genv"
	for n in "${carry[@]}"; do
		"$CLI" --socket "$("$LAB" sock "$n")" env --nodes "$hostlist" --cached \
			--format shell >"$T/genv/$n.sh" 2>"$T/genv/$n.err" ||
			fail "$mode: $n's --cached environment: $(tail -n 1 "$T/genv/$n.err")"
	done

	# 3b. PyTorch Gloo, each rank with its own node's published environment.
	if [ "${exp[gloo]:-no}" = yes ]; then
		line=$("$LAB_DIR/gloo-allreduce" --id "$LAB_ID" --envdir "$T/genv" --nodes "$runs" \
			--timeout "${SCENARIO_GLOO_TIMEOUT:-90}" --log "$T/gloo.log")
		rc=$?
		if [ $rc -eq 0 ]; then
			pass "$mode: gloo: allreduce on each node's published environment: $line"
		else
			fail "$mode: gloo: allreduce on the published environment: $line"
			grep -h 'GLOO' "$T"/genv/*.sh | sort | uniq -c | sed 's/^/     | /'
			grep -v '^[[:space:]]*$' "$T/gloo.log" | tail -n 30 | sed 's/^/     | /'
		fi
	fi

	# 3c. UCX (ucx_perftest over its tcp transport) wherever the first publishing node's
	# UCX_NET_DEVICES names a netdev (RDMA ports `dev:port` need hardware the lab lacks), each
	# side on its own node's environment; `ucx=no` turns it off. `ucx-bad=IFNAME`: the same run
	# with UCX_NET_DEVICES=IFNAME must not pass (proof that this check can fail).
	local udev=""
	[ ${#carry[@]} -ge 2 ] && [ -r "$T/genv/${carry[0]}.sh" ] &&
		udev=$(sed -n "s/^export UCX_NET_DEVICES='\(.*\)'$/\1/p" "$T/genv/${carry[0]}.sh")
	if [ "${exp[ucx]:-yes}" = no ]; then
		:
	elif [ -z "$udev" ] || [[ $udev == *[:,]* ]]; then
		[ "${exp[ucx]:-}" = yes ] && fail "$mode: ucx: expected, but no netdev in UCX_NET_DEVICES ('$udev')"
	else
		line=$("$LAB_DIR/ucx-pingpong" --id "$LAB_ID" --envdir "$T/genv" --nodes "$runs" \
			--timeout "${SCENARIO_UCX_TIMEOUT:-30}" --log "$T/ucx.log")
		rc=$?
		if [ $rc -eq 0 ]; then
			pass "$mode: ucx: ucx_perftest on each node's published environment: $line"
		else
			fail "$mode: ucx: ucx_perftest on the published environment: $line"
			grep -h 'UCX' "$T"/genv/*.sh | sort | uniq -c | sed 's/^/     | /'
			grep -v '^[[:space:]]*$' "$T/ucx.log" | tail -n 20 | sed 's/^/     | /'
		fi
		if [ -n "${exp[ucx-bad]:-}" ]; then
			line=$("$LAB_DIR/ucx-pingpong" --id "$LAB_ID" --envdir "$T/genv" --nodes "$runs" \
				--devices "${exp[ucx-bad]}" --timeout "${SCENARIO_UCX_BAD_TIMEOUT:-15}")
			rc=$?
			[ $rc -eq 1 ] || [ $rc -eq 124 ] &&
				pass "$mode: ucx: with UCX_NET_DEVICES=${exp[ucx-bad]} it does not pass: $line" ||
				fail "$mode: ucx: with UCX_NET_DEVICES=${exp[ucx-bad]}: exit $rc, want a failure: $line"
		fi
	fi
}

inside() {
	local scen=$1 T n k v hostlist
	local -a nodes
	T=$(mktemp -d /tmp/npf-scen.XXXXXX) || return 1
	on_exit "rm -rf -- '$T'"

	mapfile -t nodes < <("$LAB" nodes)
	hostlist=$("$LAB" hostlist)
	while IFS='=' read -r k v; do
		case $k in
		job.*) JEXP[${k#job.}]=$v ;;
		verdict | mpi | gloo | ucx | ucx-bad) EXP[$k]=$v ;;
		verdict.*) EXP[$k]=$v ;;
		env.*) ENVX[${k#env.}]=$v ;;
		nccl-default.*) DFLT[${k#nccl-default.}]=$v ;;
		*) WANT[$k]=$v ;;
		esac
	done < <("$LAB" expect --id "$LAB_ID")
	[ -n "${EXP[verdict]:-}" ] || { fail "$scen: no 'expect verdict=' line"; return 1; }
	for k in "${!EXP[@]}"; do
		[[ $k == verdict.* ]] && n=${k#verdict.} && [[ " ${nodes[*]} " != *" $n "* ]] &&
			fail "$scen: expectation names unknown node $n"
	done
	for n in "${!WANT[@]}" "${!DFLT[@]}"; do
		[[ " ${nodes[*]} " == *" $n "* ]] || fail "$scen: expectation names unknown node $n"
	done
	for k in "${!JEXP[@]}"; do
		n=${k#nccl-default.}
		n=${n#verdict.}
		case $k in verdict | mpi | gloo | ucx | ucx-bad | env.*) continue ;; esac
		[[ " ${nodes[*]} " == *" $n "* ]] || fail "$scen: job expectation names unknown node $n"
	done

	# The per-node flow, then the Slurm flow, on the same lab (SCENARIO_FLOWS: "node job").
	for k in ${SCENARIO_FLOWS:-node job}; do
		case $k in node | job) flow "$k" ;; *) fail "SCENARIO_FLOWS: unknown flow $k" ;; esac
	done

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
need_cmds ip nft jq mpirun mpicc timeout ucx_perftest
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
