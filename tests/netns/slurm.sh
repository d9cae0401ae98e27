#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netpreflight inside a real Slurm (Debian's slurmctld/slurmd 22.05 + munge) on a namespace cluster:
# Prolog verdict + typed drain + requeue + resume after repair (the job check drains exactly the
# node with a dead fabric, not its peers), env injection through TaskProlog and through the SPANK
# plugin (user settings win, --netpreflight=off, node1's values carried to node2 are replaced
# there by node2's: NETPREFLIGHT_NODE), a TCP exchange between the nodes on the
# published interface, and the metrics textfile.
#
# Cluster (tests/lab/lab): namespaces for "ctl" (slurmctld, srun) and node1..node3 (one
# slurmd and one netpreflightd each), a management network eno1 198.19.0.0/24 that carries
# Slurm's traffic, a fabric 198.18.1.0/24 whose NIC is named differently on each node,
# and docker0 with the same address everywhere. slurmd starts with `nsenter --net=...` (not
# `ip netns exec`, which remounts /sys and hides the cgroup mounts slurmd needs), with
# NodeAddr= so Slurm never needs the lab's names; one munged serves all.
# Every daemon this test starts is stopped by PID at the end, also on failure.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
need_root
src=$SRC
build=$BUILD
daemon=$build/daemon/netpreflightd
cli=$build/cli/netpreflight
plugin=$build/slurm/spank_netpreflight.so
prolog=$build/slurm/netpreflight-prolog
taskprolog=$build/slurm/netpreflight-taskprolog
lab=$src/tests/lab/lab
need_cmds slurmctld slurmd slurmstepd srun sbatch scontrol sinfo munged nsenter jq
[ -x /usr/bin/python3 ] || skip "python3 missing (scripts/setup-deps)"
for f in "$daemon" "$cli" "$prolog" "$taskprolog" "$lab"; do
	[ -x "$f" ] || skip "$f not built"
done
[ -f "$plugin" ] || skip "SPANK plugin not built (libslurm-dev missing?)"

ID=sl$(($$ % 100000))
T=$(mktemp -d /tmp/npfsl-slurm.XXXXXX)
chmod 0755 "$T"
pids=()
host=$(hostname -s)
export LAB_DAEMON="$daemon" LAB_CLI="$cli"

stop_pids() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do stop_pid "$p" 10; done
	pids=()
}
cleanup() {
	local rc=$?
	stop_pids
	"$lab" down --id "$ID" >/dev/null 2>&1 || true
	if [ $rc -ne 0 ] || [ "$FAILS" -ne 0 ]; then
		for f in "$T"/log/*.log; do
			[ -f "$f" ] || continue
			echo "--- $f (tail)"
			tail -n 15 "$f"
		done
	fi
	rm -rf "$T"
}
on_exit cleanup

# --- the cluster -------------------------------------------------------------------
cat >"$T/slurm.lab" <<'EOF'
desc slurm: controller ctl + compute node1..node3; Slurm on eno1, a fabric, docker0
nodes ctl node[1-3]
switch mgmt
switch fabric
nic all eno1 switch=mgmt addr=198.19.0.{i}/24
# The fabric NIC has a different name on each node: every node must get its own value.
nic ctl ens1f0np0 switch=fabric addr=198.18.1.1/24
nic node1 ens1f0np0 switch=fabric addr=198.18.1.2/24
nic node2 eth2 switch=fabric addr=198.18.1.3/24
nic node3 enp65s0f0np0 switch=fabric addr=198.18.1.4/24
docker all
resolve eno1
EOF
"$lab" up "$T/slurm.lab" --id "$ID" -q || die "lab up"
ctl_ns=/run/netns/$("$lab" ns --id "$ID" ctl)
sockdir=$(dirname "$("$lab" sock --id "$ID" node1)")
mkdir -p "$T/log" "$T/ctld" "$T/spool" "$T/plog" "$T/prom"
for n in node1 node2 node3; do
	mkdir -p "$T/prom/$n"
	# --avoid eno1: the fabric strictly outranks eno1 (the veths report equal speeds), so a
	# broken fabric on one node blames that node instead of moving the job (case 5).
	"$lab" daemons start --id "$ID" "$n" -- --textfile-dir "$T/prom/$n" --avoid eno1 >/dev/null ||
		die "netpreflightd did not start on $n"
done

# One munged for every namespace: its socket is a file path, not an address. A key of
# its own: the test never depends on (or touches) the machine's /etc/munge.
head -c 1024 /dev/urandom >"$T/munge.key"
chmod 0600 "$T/munge.key"
munged -F --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
	--log-file="$T/log/munged.log" --seed-file="$T/munge.seed" 2>>"$T/log/munged.log" &
pids+=($!)
wait_until 10 test -S "$T/munge.sock" || die "munged did not start"

# Wrappers: slurmd starts Prolog/TaskProlog with a bare environment, so the test's
# paths are baked in here; the per-node daemon socket comes from SLURMD_NODENAME.
cat >"$T/prolog.sh" <<EOF
#!/bin/bash
export NPF_CLI=$cli NPF_CONF=/dev/null NPF_DRAIN=yes NPF_TIMEOUT_MS=3000
# scontrol (drain/resume) must find this cluster's slurm.conf, not /etc/slurm's.
export SLURM_CONF=$T/slurm.conf
export NPF_SOCKET=$sockdir/\$SLURMD_NODENAME.sock NPF_PROLOG_LOG_DIR=$T/plog/\$SLURMD_NODENAME
exec $prolog
EOF
cat >"$T/taskprolog.sh" <<EOF
#!/bin/bash
export NPF_CLI=$cli NPF_CONF=/dev/null NPF_SOCKET=$sockdir/\$SLURMD_NODENAME.sock
exec $taskprolog
EOF
chmod 0755 "$T/prolog.sh" "$T/taskprolog.sh"
: >"$T/plugstack-none.conf"
echo "required $plugin socket=$sockdir/%n.sock timeout_ms=2000" >"$T/plugstack-spank.conf"

write_conf() { # taskprolog|spank
	local extra
	if [ "$1" = taskprolog ]; then
		extra="TaskProlog=$T/taskprolog.sh
PlugStackConfig=$T/plugstack-none.conf"
	else
		extra="PlugStackConfig=$T/plugstack-spank.conf"
	fi
	cat >"$T/slurm.conf" <<EOF
ClusterName=npfsl
SlurmctldHost=$host(198.19.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock
CredType=cred/munge
StateSaveLocation=$T/ctld
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/ctld.pid
SlurmdPidFile=$T/slurmd-%n.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
Prolog=$T/prolog.sh
PrologFlags=Alloc
# The same script without a job resumes nodes it drained once their check passes.
HealthCheckProgram=$T/prolog.sh
HealthCheckInterval=5
PrologEpilogTimeout=30
$extra
NodeName=node1 NodeAddr=198.19.0.2 CPUs=1 State=UNKNOWN
NodeName=node2 NodeAddr=198.19.0.3 CPUs=1 State=UNKNOWN
NodeName=node3 NodeAddr=198.19.0.4 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP
EOF
}
export SLURM_CONF=$T/slurm.conf
inctl() { nsenter --net="$ctl_ns" "$@"; }

all_idle() {
	[ "$(inctl sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)" -eq 3 ]
}
start_slurm() { # taskprolog|spank
	write_conf "$1"
	# -D: stay in the foreground so $! is the daemon (stderr duplicates the log file).
	inctl slurmctld -D -f "$T/slurm.conf" 2>/dev/null &
	pids+=($!)
	for n in node1 node2 node3; do
		nsenter --net="/run/netns/$("$lab" ns --id "$ID" "$n")" slurmd -D -N "$n" -f "$T/slurm.conf" 2>/dev/null &
		pids+=($!)
	done
	wait_until 40 all_idle || { inctl sinfo -N; die "nodes not idle"; }
}
stop_slurm() {
	local keep=${pids[0]} # munged
	pids=("${pids[@]:1}")
	stop_pids
	pids=("$keep")
}

# Each node's own value, as its daemon publishes it (the Prolog's check filled the cache).
daemon_value() { # node var
	# In the node's namespace: the daemon refuses clients from others (foreign-netns).
	{ nsenter --net="/run/netns/$("$lab" ns --id "$ID" "$1")" "$cli" --socket "$sockdir/$1.sock" env --nodes 'node[1-3]' --format taskprolog 2>/dev/null ||
		true; } | sed -n "s/^export $2=//p"
}
check_values() { # label  (reads "node value" lines on stdin)
	local label=$1 n v want seen=0
	while read -r n v; do
		seen=$((seen + 1))
		want=$(daemon_value "$n" NCCL_SOCKET_IFNAME)
		if [ -z "$want" ]; then
			fail "$label: $n: daemon publishes no NCCL_SOCKET_IFNAME"
		elif [ "$v" != "$want" ]; then
			fail "$label: $n: job got NCCL_SOCKET_IFNAME=$v, daemon says $want"
		else
			echo "$label: $n NCCL_SOCKET_IFNAME=$v (daemon's value)"
		fi
	done
	[ $seen -eq 3 ] || fail "$label: expected 3 tasks, got $seen"
}
# shellcheck disable=SC2016
show='echo "$SLURMD_NODENAME ${NCCL_SOCKET_IFNAME:-UNSET}"'

# Per-node values stay per node: node1's task environment (its TaskProlog's or plugin's
# output, plus a user's own GLOO_SOCKET_IFNAME) is carried into a step on node2, as
# srun --export=ALL from inside node1's task or an mpirun in the allocation does. node2
# must replace node1's values with its own (the fabric NIC is named differently there)
# and keep the user's.
carry_check() { # label
	local label=$1 env1 nccl1 mark list name out want got n carried=()
	# shellcheck disable=SC2016
	env1=$(GLOO_SOCKET_IFNAME=mine inctl timeout 60 srun -N3 -w 'node[1-3]' /bin/bash -c \
		'[ "$SLURMD_NODENAME" != node1 ] || /usr/bin/env') ||
		{ fail "$label: srun (node1's environment) failed"; return; }
	nccl1=$(sed -n 's/^NCCL_SOCKET_IFNAME=//p' <<<"$env1")
	mark=$(sed -n 's/^NETPREFLIGHT_NODE=//p' <<<"$env1")
	list=$(sed -n 's/^NETPREFLIGHT_VARS=//p' <<<"$env1")
	[ "$mark" = node1 ] || fail "$label: node1's task has NETPREFLIGHT_NODE='$mark', want node1"
	[ -n "$nccl1" ] && [ "$nccl1" = "$(daemon_value node1 NCCL_SOCKET_IFNAME)" ] ||
		fail "$label: node1's task has NCCL_SOCKET_IFNAME='$nccl1'"
	case ",$list," in
	*,NCCL_SOCKET_IFNAME,*) ;;
	*) fail "$label: node1's NETPREFLIGHT_VARS='$list' lacks NCCL_SOCKET_IFNAME" ;;
	esac
	case ",$list," in
	*,GLOO_SOCKET_IFNAME,*) fail "$label: the user's GLOO_SOCKET_IFNAME is listed as ours: '$list'" ;;
	esac
	for name in ${list//,/ } NETPREFLIGHT_NODE NETPREFLIGHT_VARS GLOO_SOCKET_IFNAME; do
		carried+=("$name=$(sed -n "s/^$name=//p" <<<"$env1")")
	done
	# shellcheck disable=SC2016
	out=$(inctl env "${carried[@]}" timeout 60 srun -N3 -w 'node[1-3]' --export=ALL /bin/bash -c \
		'echo "$SLURMD_NODENAME ${NCCL_SOCKET_IFNAME:-UNSET} ${GLOO_SOCKET_IFNAME:-UNSET} ${NETPREFLIGHT_NODE:-UNSET}"') ||
		{ fail "$label: srun with node1's environment failed"; return; }
	for n in node1 node2 node3; do
		want="$n $(daemon_value "$n" NCCL_SOCKET_IFNAME) mine $n"
		got=$(grep "^$n " <<<"$out")
		[ "$n" = node1 ] || [ "$want" != "$n $nccl1 mine $n" ] ||
			fail "$label: node1 and $n publish the same value ($nccl1): nothing to correct"
		if [ "$got" = "$want" ]; then
			echo "$label: node1's NCCL_SOCKET_IFNAME=$nccl1 on $n: '$got' (user's GLOO kept)"
		else
			fail "$label: node1's environment on $n: got '$got', want '$want'"
		fi
	done
}

# --- 1. TaskProlog --------------------------------------------------------------------
t0=$SECONDS
start_slurm taskprolog
out=$(inctl timeout 60 srun -N3 -w 'node[1-3]' /bin/bash -c "$show") || fail "taskprolog: srun failed"
check_values taskprolog <<<"$out"
out=$(NCCL_SOCKET_IFNAME=mine inctl timeout 60 srun -N1 -w node2 /bin/bash -c "$show") || true
[ "$out" = "node2 mine" ] && echo "taskprolog: user-set NCCL_SOCKET_IFNAME survives" ||
	fail "taskprolog: user-set value lost: '$out'"
carry_check taskprolog
stop_slurm

# --- 2. SPANK plugin --------------------------------------------------------------------
start_slurm spank
inctl srun --help 2>&1 | grep -q -- '--netpreflight' || fail "spank: srun --help lacks --netpreflight"
out=$(inctl timeout 60 srun -N3 -w 'node[1-3]' /bin/bash -c "$show") || fail "spank: srun failed"
check_values spank <<<"$out"
out=$(inctl timeout 60 srun -N1 -w node1 --netpreflight=off /bin/bash -c "$show") || true
[ "$out" = "node1 UNSET" ] && echo "spank: --netpreflight=off sets nothing" ||
	fail "spank: --netpreflight=off still got '$out'"
out=$(NCCL_SOCKET_IFNAME=mine inctl timeout 60 srun -N1 -w node3 /bin/bash -c "$show") || true
[ "$out" = "node3 mine" ] && echo "spank: user-set NCCL_SOCKET_IFNAME survives" ||
	fail "spank: user-set value lost: '$out'"
carry_check spank

# --- 3. A job step that uses the values: TCP between the nodes on the published interface
mkdir -p "$T/xchg"
cat >"$T/exchange.py" <<'EOF'
import os, socket, subprocess, sys, time
d = sys.argv[1]
rank = int(os.environ["SLURM_PROCID"])
ifname = os.environ["NCCL_SOCKET_IFNAME"].lstrip("=").split(",")[0]
addr = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", ifname], check=True,
                      capture_output=True, text=True).stdout.split()[3].split("/")[0]
def bound():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The published interface, not whatever the routing table prefers.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
    s.settimeout(20)
    return s
if rank == 0:
    srv = bound()
    srv.bind((addr, 0))
    srv.listen(8)
    with open(d + "/addr.tmp", "w") as f:
        f.write("%s %d\n" % srv.getsockname())
    os.rename(d + "/addr.tmp", d + "/addr")
    for _ in range(int(os.environ["SLURM_NTASKS"]) - 1):
        c, _peer = srv.accept()
        c.sendall(c.recv(4096).upper())
        c.close()
    print("rank 0 on %s %s: served" % (ifname, addr))
else:
    for _ in range(200):
        if os.path.exists(d + "/addr"):
            break
        time.sleep(0.05)
    host, port = open(d + "/addr").read().split()
    c = bound()
    c.connect((host, int(port)))
    msg = ("rank %d from %s" % (rank, addr)).encode()
    c.sendall(msg)
    assert c.recv(4096) == msg.upper(), "bad echo"
    print("rank %d on %s %s: exchanged with %s" % (rank, ifname, addr, host))
EOF
if out=$(inctl timeout 60 srun -N3 -w 'node[1-3]' /usr/bin/python3 "$T/exchange.py" "$T/xchg" 2>&1); then
	echo "$out"
	[ "$(grep -c -e 'served' -e 'exchanged' <<<"$out")" -eq 3 ] || fail "exchange: not every rank reported"
else
	fail "exchange step failed: $out"
fi

# --- 4. Metrics in the textfile directory ----------------------------------------------
# Every node's daemon publishes after each check (metrics_publish()): a missing file fails.
metrics_ok() {
	grep -q '^netpreflight_last_check_verdict{verdict="ok"} 1$' "$1" 2>/dev/null &&
		grep -q '^netpreflight_build_info{version="' "$1"
}
for n in node1 node2 node3; do
	f=$T/prom/$n/netpreflight.prom
	if wait_until 30 metrics_ok "$f" && [ "$(stat -c %a "$f")" = 644 ]; then
		echo "metrics: $n: $f has the last check (verdict ok)"
	else
		fail "metrics: $n: no ok verdict (or wrong mode) in $f"
	fi
done

# --- 5. One node's fabric is dead at job start: node2's eth2 drops everything arriving on it
# (Slurm and the daemons' control traffic use eno1). The job's Prologs take part in one job
# check (--job $SLURM_JOB_ID, docs/decision.md §10): node2 is the suspect and is drained with
# the typed reason; node1 and node3 are ok on the fabric and stay in service.
ns2=$("$lab" ns --id "$ID" node2)
ip netns exec "$ns2" nft -f - <<'EOF'
table inet npfdead {
	chain input { type filter hook input priority filter; policy accept; iifname "eth2" drop; }
}
EOF
t5=$SECONDS
jid=$(inctl sbatch --parsable -N3 -w 'node[1-3]' -o /dev/null --wrap true) || die "sbatch failed"
node_drained() { # node
	inctl scontrol show node "$1" -o 2>/dev/null | grep -q 'State=[A-Z+]*DRAIN'
}
prolog_done() { # node: its Prolog of job $jid recorded a verdict
	[ -s "$T/plog/$1/job-$jid.json" ]
}
pj() { jq -r "$2" "$T/plog/$1/job-$jid.json" 2>/dev/null; } # node filter
if wait_until 40 node_drained node2; then
	reason=$(inctl scontrol show node node2 -o | sed -n 's/.* Reason=\(.*\)$/\1/p')
	case $reason in
	netpreflight:*eth2*) echo "dead fabric: node2 drained: $reason" ;;
	*) fail "dead fabric: node2 drained without our typed reason naming eth2: '$reason'" ;;
	esac
	[ "$(pj node2 .verdict.verdict)/$(pj node2 .job.role)" = fail/suspect ] ||
		fail "dead fabric: node2's Prolog recorded $(pj node2 .verdict.verdict)/$(pj node2 .job.role), want fail/suspect"
else
	inctl scontrol show node node2 -o
	fail "dead fabric: node2 not drained after its Prolog saw its dead fabric"
fi
for n in node1 node3; do
	if wait_until 40 prolog_done "$n"; then
		if [ "$(pj "$n" .verdict.verdict)" = ok ] &&
			[ "$(pj "$n" .recommendation.choice.network)" = 198.18.1.0/24 ] &&
			! node_drained "$n"; then
			echo "dead fabric: $n ok on $(pj "$n" .recommendation.choice.ifname), not drained"
		else
			fail "dead fabric: $n: verdict $(pj "$n" .verdict.verdict) on $(pj "$n" '.recommendation.choice.network // "-"'), $(inctl scontrol show node "$n" -o | grep -o 'State=[^ ]*'): $(pj "$n" .verdict.summary)"
		fi
	else
		fail "dead fabric: $n's Prolog recorded no verdict for job $jid"
	fi
done
# One job decision on the three nodes, tagged with the job id.
ids=$(for n in node1 node2 node3; do pj "$n" '"\(.job.tag) \(.job.id) \(.job.net) \(.job.suspects)"'; done | sort -u)
[ "$(wc -l <<<"$ids")" -eq 1 ] && [[ $ids == "$jid "* ]] && echo "dead fabric: one job decision: $ids" ||
	fail "dead fabric: the Prologs hold different job decisions (or not tagged $jid): $ids"
inctl scancel "$jid" 2>/dev/null || true
ip netns exec "$ns2" nft delete table inet npfdead
if wait_until 60 all_idle; then
	echo "dead fabric: node2 resumed by the health check ($((SECONDS - t5)) s for the case)"
else
	inctl sinfo -N -o '%N %t %E'
	fail "dead fabric: node2 still drained after its fabric was repaired"
fi

# --- 6. A failing preflight: node3 drops every new inbound TCP connection except Slurm's
# (slurmd 6818) and netpreflight's control port (7718): its daemon answers, but no probe
# reaches it on any interface, a definite failure. Slurm itself keeps working.
ns3=$("$lab" ns --id "$ID" node3)
ip netns exec "$ns3" nft -f - <<'EOF'
table inet npfsl {
	chain input {
		type filter hook input priority filter; policy accept;
		ct state established,related accept
		tcp dport { 6818, 7718 } accept
		meta l4proto tcp drop
	}
}
EOF
jid=$(inctl sbatch --parsable -N3 -w 'node[1-3]' -o /dev/null --wrap true) ||
	die "sbatch failed"
node3_drained() {
	inctl scontrol show node node3 -o 2>/dev/null | grep -q 'State=[A-Z+]*DRAIN'
}
if wait_until 40 node3_drained; then
	reason=$(inctl scontrol show node node3 -o | sed -n 's/.* Reason=\(.*\)$/\1/p')
	case $reason in
	netpreflight:*) echo "failure: node3 drained: $reason" ;;
	*) fail "failure: node3 drained without our typed reason: '$reason'" ;;
	esac
	[ -f "$T/plog/node3/job-$jid.json" ] && [ "$(jq -r .verdict.verdict "$T/plog/node3/job-$jid.json")" = fail ] ||
		fail "failure: no fail verdict recorded in $T/plog/node3/job-$jid.json"
	# What the job check made of the other two (node3 is unreachable on every network).
	for n in node1 node2; do
		[ ! -s "$T/plog/$n/job-$jid.json" ] ||
			echo "failure: $n's Prolog: $(jq -r '"\(.verdict.verdict), job role \(.job.role // "-"), suspects \(.job.suspects // "-")"' "$T/plog/$n/job-$jid.json")"
	done
else
	inctl scontrol show node node3 -o
	fail "failure: node3 not drained after its Prolog saw the broken fabric"
fi
job_requeued() {
	inctl scontrol show job "$jid" -o 2>/dev/null | grep -Eq 'Restarts=[1-9]|JobState=(PENDING|REQUEUE)'
}
if wait_until 20 job_requeued; then
	echo "failure: job $jid requeued ($(inctl scontrol show job "$jid" -o | grep -o 'JobState=[A-Z_]* Reason=[^ ]*'))"
else
	fail "failure: job $jid not requeued: $(inctl scontrol show job "$jid" -o | grep -o 'JobState=[A-Z_]*')"
fi
inctl scancel "$jid" 2>/dev/null || true

# --- 7. Repair: the firewall goes, the HealthCheckProgram run re-checks the failed node
# set and resumes the nodes the Prolog drained (and only those).
ip netns exec "$ns3" nft delete table inet npfsl
if wait_until 60 all_idle; then
	echo "repair: every node resumed by the health check"
else
	inctl sinfo -N -o '%N %t %E'
	fail "repair: nodes still drained after the network was fixed"
fi

echo "wall time: $((SECONDS - t0)) s"
[ "$FAILS" -eq 0 ] && echo "slurm integration OK"
finish
