#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "cond && pass || fail" is used on purpose below: pass only prints, it cannot fail.
# shellcheck disable=SC2015
# End to end with a real client: `netpreflight env` on a namespace cluster, then Open MPI
# (Debian openmpi-bin 4.1) across the namespaces, launched the way users do it.
#
# Topology (tests/netns/mpi_env.lab, 3 nodes): a docker user bridge br-5c2f8e1a9b07
# 172.18.0.1/16 and docker0 172.17.0.1/16 on every node, RUNNING, with the same addresses
# everywhere and ahead of the fabric NIC in ifindex order; the fabric 198.18.1.0/24 on a NIC
# named ens1f0np0 / eth2 / enp65s0f0np0 depending on the node.
#
# What breaks the defaults there:
# - Open MPI's TCP BTL uses every non-loopback interface. Each process advertises
#   172.18.0.1 and 172.17.0.1 too; a peer sees those on a directly connected subnet of its
#   own, prefers them, and connects to ITSELF (its own bridge address). The other process on
#   that node rejects the connection ("cannot find a corresponding process entry") and the
#   allreduce never completes: mpirun hangs.
# - An interface name from the launch node (btl_tcp_if_include=ens1f0np0) does not exist
#   on the other nodes: mpirun copies OMPI_MCA_* to every node, and MPI_Init fails there.
# - NCCL's default bootstrap pick is the br- bridge (not covered by ^docker,lo).
# What netpreflight publishes (OMPI_MCA_*_if_include = the fabric's CIDR, evaluated on the
# launch node with --job-wide) holds on every node, and the job finishes.
#
# Also asserted: on each node NCCL_SOCKET_IFNAME selects exactly the verified interface
# under NCCL's grammar and NCCL's bootstrap would bind it (tests/tools/nccl_select, on the
# node's live interfaces), the output formats, the cached path a TaskProlog uses (as an
# unprivileged user), and that a broken cluster (catalogue scenario no-network) and a dead
# peer daemon give a failure / unknown that names the node and why, with nothing published.
#
# Needs root, network namespaces, mpirun/mpicc (openmpi-bin, libopenmpi-dev) and jq; exit 77
# otherwise. Everything it creates is removed on exit (lab down), also on failure.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
need_root
CLI=$BUILD/cli/netpreflight
DAEMON=$BUILD/daemon/netpreflightd
SELECT=$BUILD/tests/tools/nccl_select
LAB=$SRC/tests/lab/lab
need_cmds mpirun mpicc jq ip setpriv timeout
for f in "$CLI" "$DAEMON" "$SELECT" "$LAB"; do
	[ -x "$f" ] || skip "$f not built"
done
need_netns

ID=e$(($$ % 100000))
# Checks where every probe of a path times out use the whole budget, and on a loaded
# machine reaching the peers' daemons alone can take seconds: give them room, so that a
# slow machine does not turn "fail" into "unknown" (peers not answering in time).
SLOW_S=6
ID2=${ID}n
T=$(mktemp -d /tmp/npfenv-mpi.XXXXXX)
chmod 0755 "$T"
export LAB_DAEMON="$DAEMON" LAB_CLI="$CLI" NPF_BUILD_DIR="$BUILD"
# Whatever the caller's environment holds must not decide the outcome.
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p')

cleanup() {
	"$LAB" down --id "$ID" >/dev/null 2>&1
	"$LAB" down --id "$ID2" >/dev/null 2>&1
	rm -rf "$T"
}
on_exit cleanup

sock() { echo "/run/npflab/$1/$2.sock"; }
# Stops a lab's daemons and fails on a sanitizer report in their logs (ASan/UBSan builds).
daemons_clean() { # id
	local n
	"$LAB" daemons stop --id "$1" >/dev/null
	for n in $("$LAB" nodes --id "$1"); do
		if grep -qE 'Sanitizer|runtime error' "/run/npflab/$1/$n.log" 2>/dev/null; then
			fail "$n's daemon: $(grep -m3 -E 'Sanitizer|runtime error|SUMMARY' "/run/npflab/$1/$n.log")"
		fi
	done
}
ns() { "$LAB" ns --id "$1" "$2"; }

# Ends what a job left in a lab's namespaces (a hung mpirun's orteds and ranks), sparing
# the daemons: the next run must not meet the previous one's processes.
# reap_once ID: kills what it finds; succeeds when there was nothing left to kill.
reap_once() {
	local n pid keep left=0
	for n in $("$LAB" nodes --id "$1"); do
		keep=$(cut -d' ' -f1 "/run/npflab/$1/pids/$n" 2>/dev/null)
		for pid in $(ip netns pids "$(ns "$1" "$n")"); do
			[ "$pid" = "$keep" ] && continue
			kill -9 "$pid" 2>/dev/null
			left=1
		done
	done
	[ $left -eq 0 ]
}
reap_job() { # id
	# Repeated: an orted may still be forking a rank while we list.
	wait_until 10 reap_once "$1" || fail "processes of a job are still running in lab $1"
}

mpicc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$T/mpi_allreduce" \
	"$SRC/tests/netns/mpi_allreduce.c" || die "mpicc mpi_allreduce.c"

"$LAB" up "$SRC/tests/netns/mpi_env.lab" --id "$ID" -q || die "lab up"
"$LAB" daemons start --id "$ID" >/dev/null || die "daemons start"
NODES=$("$LAB" nodes --id "$ID" | paste -sd, -)
HOSTLIST="node[1-3]"
declare -A WANT DEFAULT
while IFS='=' read -r k v; do
	case $k in
	node[0-9]*) WANT[$k]=$v ;;
	nccl-default.*) DEFAULT[${k#nccl-default.}]=$v ;;
	esac
done < <("$LAB" expect --id "$ID")
[ "${#WANT[@]}" -eq 3 ] || die "scenario expectations: ${!WANT[*]}"

# --- 1. every node: verdict, choice, NCCL's grammar and bootstrap pick -------------------
for n in node1 node2 node3; do
	"$CLI" --socket "$(sock "$ID" "$n")" env --nodes "$HOSTLIST" --format json \
		>"$T/$n.json" 2>"$T/$n.err"
	rc=$?
	[ $rc -eq 0 ] && pass "$n: env exit 0" || fail "$n: env exit $rc: $(cat "$T/$n.err")"
	j() { jq -r "$1" "$T/$n.json"; }
	[ "$(j .schema)/$(j .version)" = "netpreflight.env/1" ] && pass "$n: json schema" ||
		fail "$n: json schema $(j .schema)/$(j .version)"
	[ "$(j .verdict)" = ok ] && pass "$n: verdict ok" || fail "$n: verdict $(j .verdict)"
	[ "$(j .choice.ifname)" = "${WANT[$n]}" ] && pass "$n: chose ${WANT[$n]}" ||
		fail "$n: chose $(j .choice.ifname), want ${WANT[$n]}"
	[ "$(j .choice.network)" = 198.18.1.0/24 ] || fail "$n: network $(j .choice.network)"
	val=$(j .env.NCCL_SOCKET_IFNAME)
	[ "$val" = "=${WANT[$n]}" ] && pass "$n: NCCL_SOCKET_IFNAME=$val (exact form)" ||
		fail "$n: NCCL_SOCKET_IFNAME=$val"
	# The value against the node's live interface list, under NCCL's grammar, and the
	# address NCCL's bootstrap would bind with it.
	ip netns exec "$(ns "$ID" "$n")" "$SELECT" "$val" >"$T/$n.sel" ||
		fail "$n: nccl_select '$val'"
	sel=$(sed -n 's/^select //p' "$T/$n.sel" | paste -sd, -)
	[ "$sel" = "${WANT[$n]}" ] && pass "$n: '$val' selects exactly $sel" ||
		fail "$n: '$val' selects '$sel', want only ${WANT[$n]}"
	pick=$(sed -n 's/^pick //p' "$T/$n.sel")
	[ "$pick" = "${WANT[$n]} $(j .choice.address)" ] && pass "$n: NCCL would bind $pick" ||
		fail "$n: NCCL would bind '$pick', want ${WANT[$n]} $(j .choice.address)"
	# The prediction of NCCL's default against the model on the live interfaces.
	dflt=$(ip netns exec "$(ns "$ID" "$n")" "$SELECT" "" | sed -n 's/^pick \([^ ]*\) .*/\1/p')
	[ "$(j .nccl_default.ifname)" = "${DEFAULT[$n]}" ] && [ "$dflt" = "${DEFAULT[$n]}" ] &&
		[ "$(j .nccl_default.passed)" = false ] &&
		pass "$n: NCCL's default would take ${DEFAULT[$n]}, which failed" ||
		fail "$n: NCCL default: reported $(j .nccl_default.ifname) passed=$(j .nccl_default.passed), model $dflt"
	for bad in br-5c2f8e1a9b07 docker0; do
		jq -e --arg b "$bad" '[.rejected[] | select(.ifname == $b and .outcome == "wrong-peer")]
			| length == 1' "$T/$n.json" >/dev/null && pass "$n: $bad rejected: wrong-peer" ||
			fail "$n: no wrong-peer rejection line for $bad"
	done
	[ "$(j .env.OMPI_MCA_btl_tcp_if_include)" = 198.18.1.0/24 ] ||
		fail "$n: OMPI_MCA_btl_tcp_if_include=$(j .env.OMPI_MCA_btl_tcp_if_include)"
done

# --- 2. the launch node's job-wide environment -----------------------------------------
"$CLI" --socket "$(sock "$ID" node1)" env --nodes "$HOSTLIST" --job-wide --format shell \
	>"$T/jobwide.sh" 2>"$T/jobwide.err"
rc=$?
[ $rc -eq 0 ] && pass "job-wide: exit 0" || fail "job-wide: exit $rc: $(cat "$T/jobwide.err")"
# stdout is only assignments: safe to eval, nothing human in it.
if grep -qvE "^export [A-Za-z_][A-Za-z0-9_]*='[^']*'$" "$T/jobwide.sh"; then
	fail "job-wide: stdout has more than export lines: $(grep -vE '^export ' "$T/jobwide.sh")"
else
	pass "job-wide: stdout is $(wc -l <"$T/jobwide.sh") export lines"
fi
grep -q "^NCCL's default would use br-5c2f8e1a9b07 (container bridge" "$T/jobwide.err" &&
	pass "job-wide: NCCL's default story on stderr" || fail "job-wide: stderr lacks the NCCL default line"
grep -q '^note: GLOO_SOCKET_IFNAME: no job-wide value' "$T/jobwide.err" &&
	pass "job-wide: GLOO_SOCKET_IFNAME left out with a note" ||
	fail "job-wide: no note for GLOO_SOCKET_IFNAME: $(cat "$T/jobwide.err")"
jw=$(bash -c ". '$T/jobwide.sh' && printf '%s' \"\$NCCL_SOCKET_IFNAME\"")
[ "$jw" = "=ens1f0np0,eth2,enp65s0f0np0" ] && pass "job-wide: NCCL_SOCKET_IFNAME=$jw" ||
	fail "job-wide: NCCL_SOCKET_IFNAME='$jw'"
for n in node1 node2 node3; do
	sel=$(ip netns exec "$(ns "$ID" "$n")" "$SELECT" "$jw" | sed -n 's/^select //p' | paste -sd, -)
	[ "$sel" = "${WANT[$n]}" ] && pass "job-wide: on $n '$jw' selects exactly $sel" ||
		fail "job-wide: on $n '$jw' selects '$sel', want only ${WANT[$n]}"
done
! grep -qE 'GLOO_SOCKET_IFNAME|TP_SOCKET_IFNAME' "$T/jobwide.sh" ||
	fail "job-wide: a name-based Gloo/TensorPipe value was published"

# Other formats of the same answer (per node).
"$CLI" --socket "$(sock "$ID" node2)" env --nodes "$HOSTLIST" --format taskprolog \
	>"$T/tp.out" 2>/dev/null || fail "taskprolog: exit $?"
if grep -qvE '^export [A-Za-z_][A-Za-z0-9_]*=[^[:space:]]+$' "$T/tp.out" || ! [ -s "$T/tp.out" ]; then
	fail "taskprolog: not only 'export NAME=value' lines: $(cat "$T/tp.out")"
else
	grep -qx 'export NCCL_SOCKET_IFNAME==eth2' "$T/tp.out" && pass "taskprolog: export NAME=value lines" ||
		fail "taskprolog: no NCCL_SOCKET_IFNAME==eth2 line"
fi
"$CLI" --socket "$(sock "$ID" node3)" env --nodes "$HOSTLIST" --format nccl-conf \
	>"$T/conf.out" 2>/dev/null || fail "nccl-conf: exit $?"
if grep -qvE '^NCCL_[A-Z0-9_]+=[^[:space:]]+$' "$T/conf.out" || ! [ -s "$T/conf.out" ]; then
	fail "nccl-conf: not only NCCL_ KEY=VALUE lines: $(cat "$T/conf.out")"
else
	grep -qx 'NCCL_SOCKET_IFNAME==enp65s0f0np0' "$T/conf.out" && pass "nccl-conf: KEY=VALUE lines" ||
		fail "nccl-conf: no NCCL_SOCKET_IFNAME==enp65s0f0np0"
fi
# What a TaskProlog does, as the job's user: the cached answer, no probes of its own.
setpriv --reuid=65534 --regid=65534 --clear-groups "$CLI" --socket "$(sock "$ID" node1)" env \
	--nodes "$HOSTLIST" --format taskprolog --cached >"$T/user.out" 2>"$T/user.err"
rc=$?
[ $rc -eq 0 ] && grep -qx 'export NCCL_SOCKET_IFNAME==ens1f0np0' "$T/user.out" &&
	pass "unprivileged --cached: the cached environment" ||
	fail "unprivileged --cached: exit $rc: $(cat "$T/user.out" "$T/user.err")"
setpriv --reuid=65534 --regid=65534 --clear-groups "$CLI" --socket "$(sock "$ID" node1)" env \
	--nodes "$HOSTLIST" --max-age 0 >"$T/user2.out" 2>"$T/user2.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'forbidden' "$T/user2.err" && ! [ -s "$T/user2.out" ] &&
	pass "unprivileged, not from the cache: forbidden (exit 2)" ||
	fail "unprivileged probe: exit $rc: $(cat "$T/user2.err")"

# --- 3. Open MPI, launched the way users do it -----------------------------------------
# plm_rsh_agent stands in for ssh: "agent HOST CMD..." runs CMD through a shell on HOST,
# i.e. in HOST's namespace (whose /etc/hosts the lab wrote). Each node gets a session
# directory of its own, as real nodes have: the namespaces share one /tmp and one hostname,
# and orteds writing the same hwloc/PMIx files there crash now and then.
mkdir -p "$T/tmp/node1" "$T/tmp/node2" "$T/tmp/node3"
cat >"$T/agent" <<EOF
#!/bin/sh
host=\$1
shift
case \$host in node[1-3]) ;; *) echo "agent: unknown host \$host" >&2; exit 255 ;; esac
exec ip netns exec "npl$ID-\$host" env OMPI_MCA_orte_tmpdir_base="$T/tmp/\$host" \\
	/bin/sh -c "\$*"
EOF
chmod 0755 "$T/agent"
MPIRUN=(mpirun --allow-run-as-root --mca plm_rsh_agent "$T/agent" --host "$NODES" -np 3
	--map-by node --mca btl 'tcp,self')

# a) With the launch node's evaluated environment: must finish, correct, on 3 namespaces.
# shellcheck disable=SC2016
"$LAB" exec --id "$ID" node1 bash -c 'eval "$(cat "$1")" && shift && exec timeout -k 5 60 "$@"' \
	_ "$T/jobwide.sh" "${MPIRUN[@]}" "$T/mpi_allreduce" >"$T/mpi_env.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^allreduce ok: 3 ranks, 4194304 bytes$' "$T/mpi_env.out"; then
	pass "mpirun with netpreflight's environment: allreduce of 4 MiB ok"
else
	fail "mpirun with netpreflight's environment: exit $rc: $(tail -n 30 "$T/mpi_env.out")"
fi
nets=$(sed -n 's/^rank [0-9]* of 3 netns \(net:\[[0-9]*\]\) bad 0$/\1/p' "$T/mpi_env.out" | sort -u | wc -l)
[ "$nets" -eq 3 ] && pass "the 3 ranks ran in 3 namespaces" || fail "ranks spanned $nets namespaces"
reap_job "$ID"

# b) Same topology, Open MPI's defaults: must not finish (hangs or fails), bounded.
start=$SECONDS
"$LAB" exec --id "$ID" node1 timeout -k 5 20 "${MPIRUN[@]}" "$T/mpi_allreduce" \
	>"$T/mpi_default.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && ! grep -q '^allreduce ok' "$T/mpi_default.out"; then
	pass "mpirun with defaults: does not finish (exit $rc after $((SECONDS - start)) s)"
else
	fail "mpirun with defaults finished (exit $rc): this topology no longer breaks the default"
fi
reap_job "$ID"

# c) An interface name from the launch node instead of the CIDR: fails on the other nodes.
"$LAB" exec --id "$ID" node1 timeout -k 5 20 "${MPIRUN[@]}" --mca btl_tcp_if_include ens1f0np0 \
	--mca oob_tcp_if_include 198.18.1.0/24 "$T/mpi_allreduce" >"$T/mpi_name.out" 2>&1
rc=$?
[ $rc -ne 0 ] && pass "mpirun with btl_tcp_if_include=ens1f0np0 (a name): fails (exit $rc)" ||
	fail "mpirun with a launch-node interface name finished"
reap_job "$ID"

# --- 4. node3 firewalls the job's ports on its fabric NIC: a failure naming node3 -------
# The daemons still meet (port 7718 is spared); every probe to node3 times out.
ip netns exec "$(ns "$ID" node3)" nft -f - <<EOF || die "nft on node3"
table inet npfenv {
	chain input {
		type filter hook input priority filter; policy accept;
		iifname "enp65s0f0np0" tcp dport != 7718 drop
	}
}
EOF
"$CLI" --socket "$(sock "$ID" node1)" env --nodes "$HOSTLIST" --max-age 0 --timeout "$SLOW_S" \
	>"$T/fw.out" 2>"$T/fw.err"
rc=$?
[ $rc -eq 1 ] && pass "node3 firewalled: exit 1 (fail)" || fail "node3 firewalled: exit $rc"
! [ -s "$T/fw.out" ] && pass "fail: nothing on stdout" || fail "fail published: $(cat "$T/fw.out")"
grep -q 'NOT OK: fail: .*(suspect: node3)' "$T/fw.err" && pass "fail names node3 as the suspect" ||
	fail "fail line: $(cat "$T/fw.err")"
line=$(grep '^not chosen: ens1f0np0: ' "$T/fw.err")
[[ $line == "not chosen: ens1f0np0: 198.18.1.0/24: timeout (forward) with node3"* ]] &&
	pass "and why: $line" || fail "no evidence line for ens1f0np0: $(cat "$T/fw.err")"
"$CLI" --socket "$(sock "$ID" node1)" env --nodes "$HOSTLIST" --json >"$T/fw.json" 2>/dev/null
jq -e '.verdict == "fail" and .failure.node == "node3" and .failure.ifname == "ens1f0np0" and
	.failure.outcome == "timeout" and (.env | length) == 0' "$T/fw.json" >/dev/null &&
	pass "json failure: node3, ens1f0np0 timeout, env empty" ||
	fail "json failure: $(jq -c '{verdict, failure, env}' "$T/fw.json")"
ip netns exec "$(ns "$ID" node3)" nft delete table inet npfenv

# --- 5. a dead peer daemon: unknown, exit 3, nothing published, the node named ---------
"$LAB" daemons stop --id "$ID" node3 >/dev/null
"$CLI" --socket "$(sock "$ID" node1)" env --nodes "$HOSTLIST" --max-age 0 >"$T/dead.out" \
	2>"$T/dead.err"
rc=$?
[ $rc -eq 3 ] && pass "node3's daemon stopped: exit 3 (unknown)" || fail "dead peer: exit $rc"
! [ -s "$T/dead.out" ] && pass "unknown: nothing on stdout" || fail "unknown published: $(cat "$T/dead.out")"
grep -q 'NOT OK: unknown: .*peer-unavailable .* node3' "$T/dead.err" &&
	pass "unknown names node3: $(grep -o 'peer-unavailable.*' "$T/dead.err" | head -n 1)" ||
	fail "unknown does not name node3: $(cat "$T/dead.err")"
daemons_clean "$ID"
"$LAB" down --id "$ID" >/dev/null

# --- 6. a broken cluster: a failure naming the node and why, nothing published --------
"$LAB" up no-network --id "$ID2" -q || die "lab up no-network"
"$LAB" daemons start --id "$ID2" >/dev/null || die "daemons start (no-network)"
HL2=$("$LAB" hostlist --id "$ID2")
for n in $("$LAB" nodes --id "$ID2"); do
	"$CLI" --socket "$(sock "$ID2" "$n")" env --nodes "$HL2" --timeout "$SLOW_S" >"$T/b$n.out" \
		2>"$T/b$n.err"
	rc=$?
	[ $rc -eq 1 ] && pass "no-network $n: exit 1 (fail)" || fail "no-network $n: exit $rc"
	! [ -s "$T/b$n.out" ] || fail "no-network $n: published: $(cat "$T/b$n.out")"
	line=$(grep 'NOT OK: fail: ' "$T/b$n.err")
	suspect=$(sed -n 's/.*(suspect: \(node[0-9]\)).*/\1/p' <<<"$line")
	if [ -n "$suspect" ] && [[ $line == *"ens1f0np0: 198.18.1.0/24: "* ]] &&
		[[ $line =~ (timeout|unreachable|refused) ]]; then
		pass "no-network $n: names $suspect and why: ${line:0:150}..."
	else
		fail "no-network $n: failure line lacks node or evidence: $line"
	fi
	grep -q '^not chosen: eno1: 198.19.0.0/24: ' "$T/b$n.err" ||
		fail "no-network $n: no rejection line for eno1: $(cat "$T/b$n.err")"
	"$CLI" --socket "$(sock "$ID2" "$n")" env --nodes "$HL2" --json >"$T/b$n.json" 2>/dev/null
	jq -e '.verdict == "fail" and (.failure.node | test("^node[0-9]$")) and
		.failure.outcome != null and (.env | length) == 0' "$T/b$n.json" >/dev/null &&
		pass "no-network $n: json failure {node $(jq -r .failure.node "$T/b$n.json"), $(jq -r .failure.ifname "$T/b$n.json") $(jq -r .failure.outcome "$T/b$n.json")}, env empty" ||
		fail "no-network $n: json $(jq -c '{verdict, failure, env}' "$T/b$n.json")"
done
daemons_clean "$ID2"

echo "$FAILS failure(s)"
[ "$FAILS" -eq 0 ]
