#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.run: `netpreflight run -- CMD` on every node of a job at once (issue 22, docs/run.md),
# with real daemons in a 4-node lab (eno1 + a 9000-byte fabric ens1f0np0, daemons preferring
# the fabric). Each node runs, inside its own namespace and with a clean environment plus
# stand-in launcher variables, `netpreflight run -- sh -c 'env > FILE'`; asserted per node:
# run exits 0, CMD ran with NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME = the fabric and
# NETPREFLIGHT_NODE = that node, a value the user set is kept, another node's inherited
# value (NETPREFLIGHT_NODE of another node) replaced (the TaskProlog's marker rules).
#   slurm:    SLURM_JOB_ID, SLURM_JOB_NODELIST=node[1-4], SLURM_RESTART_COUNT=2; with --json
#             first (nothing started): every node's job tag is "<id>.r2" and the job check
#             holds all 4 rows;
#   user:     the same Slurm job as uid nobody, who may not start probes: `forbidden`, then
#             the decision the job check left in the daemon's cache; CMD runs with it;
#   pbs:      PBS_JOBID=<id>.pbs-server, PBS_NODEFILE (a line per slot);
#   lsf:      LSB_JOBID, LSB_MCPU_HOSTS="node1 8 node2 8 ...";
#   hostfile: --hostfile (Open MPI / DeepSpeed "host slots=N" with comments) and --job;
#   fail:     node4's fabric drops everything: the job check blames node4; no node starts
#             CMD (exit 1, "command not started");
#   degraded: the same fault with daemons on `fallback = degrade`: every node runs CMD on eno1;
#   env --job: the same fault, `netpreflight env --job` on every node at once: node4 exit 1,
#             the others print the fabric (one job decision, for scripts);
#   unknown:  no daemon at the socket: CMD starts without the verified environment (the
#             Prolog's rule: netpreflight's own trouble never blocks a job);
#   mpi:      an Open MPI allreduce (mpirun, one rank per node) whose ranks each run
#             `netpreflight run ... -- PROGRAM`, finishes, every rank with the fabric's
#             OMPI_MCA_btl_tcp_if_include;
#   gloo:     a PyTorch Gloo all_reduce whose 4 ranks are each started by
#             `netpreflight run --nodes node[1-4] --job TAG -- python3 ...`, finishes, each rank
#             with GLOO_SOCKET_IFNAME from run.
# Runs as root (exit 77 = skipped otherwise); lab id rn<pid>, removed by `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
# shellcheck source=tests/netns/runcase.bash
. "$SRC/tests/netns/runcase.bash"

if [ "${1:-}" = --inside ]; then
	T=$2
	# run_all CASE VAR=VALUE... -- RUN-ARGS...: every node at once, inside its namespace, a
	# clean environment plus the VARs (and per node extras from $T/CASE-NODE.vars), runs
	# `netpreflight --socket S run RUN-ARGS -- sh -c 'env > $T/CASE-NODE.env'`.
	# Files $T/CASE-NODE.{env,out,err,rc}.
	run_all() {
		local c=$1 n t0 vars=()
		shift
		while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
		shift
		t0=$(date +%s%3N)
		for n in "${NODES[@]}"; do
			local extra=()
			[ -r "$T/$c-$n.vars" ] && mapfile -t extra <"$T/$c-$n.vars"
			{
				"$LAB" exec "$n" env -i PATH=/usr/bin:/bin HOME=/tmp "${vars[@]}" \
					"${extra[@]}" "$CLI" --socket "$("$LAB" sock "$n")" run "$@" -- \
					sh -c "env > '$T/$c-$n.env'" >"$T/$c-$n.out" 2>"$T/$c-$n.err"
				echo $? >"$T/$c-$n.rc"
			} &
		done
		wait
		echo "  $c: ${#NODES[@]} nodes ran 'netpreflight run' at once, wall $(($(date +%s%3N) - t0)) ms"
	}
	envv() { sed -n "s/^$2=//p" "$T/$1.env" | head -n 1; } # CASE-NODE VAR
	# expect_env CASE: every node ran CMD with the fabric's environment (and its extras).
	# A GLOO_SOCKET_IFNAME the node's user set (in CASE-NODE.vars) must be kept.
	expect_env() { # CASE [IFNAME, default the fabric]
		local c=$1 want=${2:-$FABRIC_IF} n f gloo
		for n in "${NODES[@]}"; do
			f=$c-$n
			gloo=$(sed -n 's/^GLOO_SOCKET_IFNAME=//p' "$T/$f.vars" 2>/dev/null)
			gloo=${gloo:-$want}
			if [ "$(cat "$T/$f.rc")" != 0 ] || [ ! -s "$T/$f.env" ]; then
				fail "$c: $n: exit $(cat "$T/$f.rc"), CMD's env $( [ -s "$T/$f.env" ] && echo written || echo missing): $(head -c 400 "$T/$f.err")"
				continue
			fi
			[ "$(envv "$f" NETPREFLIGHT_NODE)" = "$n" ] &&
				[ "$(envv "$f" NCCL_SOCKET_IFNAME)" = "=$want" ] &&
				[ "$(envv "$f" GLOO_SOCKET_IFNAME)" = "$gloo" ] &&
				pass "$c: $n: CMD ran with NCCL_SOCKET_IFNAME==$want GLOO_SOCKET_IFNAME=$gloo NETPREFLIGHT_NODE=$n" ||
				fail "$c: $n: CMD's env: NETPREFLIGHT_NODE=$(envv "$f" NETPREFLIGHT_NODE) NCCL_SOCKET_IFNAME=$(envv "$f" NCCL_SOCKET_IFNAME) GLOO_SOCKET_IFNAME=$(envv "$f" GLOO_SOCKET_IFNAME); stderr: $(head -c 300 "$T/$f.err")"
		done
	}
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" node1 node2 node3 node4' EXIT

	"$LAB" daemons start -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"

	# slurm, --json first: the decision, nothing started; the Prolog's tag <id>.r<count>.
	id=$((1000 + $$ % 9000))
	slurm=("SLURM_JOB_ID=$id" "SLURM_JOB_NODELIST=node[1-4]" SLURM_RESTART_COUNT=2)
	run_all slurmjson "${slurm[@]}" -- --json
	for n in "${NODES[@]}"; do
		f=slurmjson-$n
		got=$(jq -r '[.job, .source, .launcher, .action, .verdict, .check.job.tag,
			.check.job.rows, .set.NCCL_SOCKET_IFNAME] | map(tostring) | join(" ")' \
			"$T/$f.out" 2>/dev/null)
		[ "$(cat "$T/$f.rc")" = 0 ] && [ ! -e "$T/$f.env" ] &&
			[ "$got" = "$id.r2 SLURM_JOB_NODELIST slurm exec ok $id.r2 4 =$FABRIC_IF" ] &&
			pass "slurm --json: $n: $got, CMD not started" ||
			fail "slurm --json: $n: exit $(cat "$T/$f.rc"), '$got' (want '$id.r2 SLURM_JOB_NODELIST slurm exec ok $id.r2 4 =$FABRIC_IF'), CMD $( [ -e "$T/$f.env" ] && echo started || echo 'not started'): $(head -c 300 "$T/$f.err")"
	done

	# slurm: node2's user set GLOO_SOCKET_IFNAME=eno1 (kept: the user's explicit value);
	# node3 inherited node1's values (srun --export=ALL): NCCL_SOCKET_IFNAME replaced with its
	# own, OMPI_MCA_x (listed, not published here) removed.
	printf '%s\n' GLOO_SOCKET_IFNAME=eno1 >"$T/slurm-node2.vars"
	printf '%s\n' NETPREFLIGHT_NODE=node1 NETPREFLIGHT_VARS=NCCL_SOCKET_IFNAME,OMPI_MCA_x \
		NCCL_SOCKET_IFNAME=eno9 OMPI_MCA_x=1 >"$T/slurm-node3.vars"
	run_all slurm SLURM_JOB_ID=$((id + 1)) "SLURM_JOB_NODELIST=node[1-4]" -- --timeout 5
	expect_env slurm
	grep -q '^OMPI_MCA_x=' "$T/slurm-node3.env" &&
		fail "slurm: node3: node1's OMPI_MCA_x (listed in NETPREFLIGHT_VARS) was left in place" ||
		pass "slurm: node3: node1's NCCL_SOCKET_IFNAME replaced, its OMPI_MCA_x removed"

	# user: a user who may not start probes (uid nobody: not root, no check_group) gets
	# `forbidden` for the check and the decision the slurm case left in the daemon's cache
	# (the TaskProlog's request): CMD runs with it.
	mkdir -m 1777 "$T/user"
	# (That uid may not: its own check of the same nodes is refused.)
	"$LAB" exec node1 setpriv --reuid=65534 --regid=65534 --clear-groups "$CLI" \
		--socket "$("$LAB" sock node1)" check --nodes 'node[1-4]' >/dev/null 2>"$T/user-check.err"
	rc=$?
	[ $rc = 2 ] && grep -q forbidden "$T/user-check.err" ||
		fail "user: uid 65534's own check was not refused: exit $rc $(head -c 200 "$T/user-check.err")"
	for n in "${NODES[@]}"; do
		{
			"$LAB" exec "$n" setpriv --reuid=65534 --regid=65534 --clear-groups \
				env -i PATH=/usr/bin:/bin HOME=/tmp SLURM_JOB_ID=$((id + 1)) \
				"SLURM_JOB_NODELIST=node[1-4]" "$CLI" --socket "$("$LAB" sock "$n")" run \
				-- sh -c "env > '$T/user/$n.env'" >"$T/user-$n.out" 2>"$T/user-$n.err"
			echo $? >"$T/user-$n.rc"
		} &
	done
	wait
	for n in "${NODES[@]}"; do
		v=$(sed -n 's/^NCCL_SOCKET_IFNAME=//p' "$T/user/$n.env" 2>/dev/null)
		[ "$(cat "$T/user-$n.rc")" = 0 ] && [ "$v" = "=$FABRIC_IF" ] &&
			[ "$(stat -c %u "$T/user/$n.env")" = 65534 ] &&
			pass "user: $n: uid 65534 may not probe; CMD ran with the cached job decision: NCCL_SOCKET_IFNAME=$v" ||
			fail "user: $n: exit $(cat "$T/user-$n.rc"), NCCL_SOCKET_IFNAME='$v': $(head -c 300 "$T/user-$n.err")"
	done

	# pbs: one line per slot.
	for n in "${NODES[@]}"; do printf '%s\n%s\n' "$n" "$n"; done >"$T/pbs_nodefile"
	run_all pbs "PBS_JOBID=$((id + 2)).pbs-server" "PBS_NODEFILE=$T/pbs_nodefile" -- --timeout 5
	expect_env pbs

	# lsf: name and slot count.
	run_all lsf "LSB_JOBID=$((id + 3))" "LSB_MCPU_HOSTS=node1 8 node2 8 node3 8 node4 8" -- \
		--timeout 5
	expect_env lsf

	# hostfile: Open MPI / DeepSpeed form, the tag given.
	{
		echo "# the job's hosts (mpirun --hostfile / deepspeed --hostfile)"
		for n in "${NODES[@]}"; do echo "$n slots=8 max_slots=8"; done
	} >"$T/hostfile"
	run_all hostfile -- --hostfile "$T/hostfile" --job "hf-$$" --timeout 5
	expect_env hostfile

	# fail: node4's fabric dead. The job check blames it; nobody starts CMD.
	fw node4 iifname "$FABRIC_IF" drop
	run_all fail SLURM_JOB_ID=$((id + 4)) "SLURM_JOB_NODELIST=node[1-4]" -- --timeout 5
	for n in "${NODES[@]}"; do
		f=fail-$n
		[ "$(cat "$T/$f.rc")" = 1 ] && [ ! -e "$T/$f.env" ] &&
			grep -q 'command not started' "$T/$f.err" &&
			pass "fail: $n: exit 1, CMD not started: $(head -n 1 "$T/$f.err" | head -c 200)" ||
			fail "fail: $n: exit $(cat "$T/$f.rc"), CMD $( [ -e "$T/$f.env" ] && echo started || echo 'not started'): $(head -c 300 "$T/$f.err")"
	done
	# env --job: the same job check for a script, as an environment: node4 fails (exit 1,
	# nothing printed), the others print the fabric, all from one decision.
	for n in "${NODES[@]}"; do
		{
			"$LAB" exec "$n" "$CLI" --socket "$("$LAB" sock "$n")" env --nodes 'node[1-4]' \
				--job "envjob-$$" --timeout 5 >"$T/envjob-$n.out" 2>"$T/envjob-$n.err"
			echo $? >"$T/envjob-$n.rc"
		} &
	done
	wait
	for n in "${NODES[@]}"; do
		rc=$(cat "$T/envjob-$n.rc")
		if [ "$n" = node4 ]; then
			[ "$rc" = 1 ] && [ ! -s "$T/envjob-$n.out" ] &&
				pass "env --job: node4 exit 1, nothing printed: $(tail -n 1 "$T/envjob-$n.err" | head -c 160)" ||
				fail "env --job: node4: exit $rc: $(head -c 200 "$T/envjob-$n.out") $(tail -n 1 "$T/envjob-$n.err")"
		else
			[ "$rc" = 0 ] && grep -qx "export NCCL_SOCKET_IFNAME='=$FABRIC_IF'" "$T/envjob-$n.out" &&
				pass "env --job: $n exit 0, NCCL_SOCKET_IFNAME==$FABRIC_IF: $(tail -n 1 "$T/envjob-$n.err" | head -c 160)" ||
				fail "env --job: $n: exit $rc: $(head -c 200 "$T/envjob-$n.out") $(tail -n 1 "$T/envjob-$n.err")"
		fi
	done
	# degraded: the same fault under [publish] fallback = degrade: the whole job moves to eno1,
	# verdict degraded on every node, which publishes as ok does: CMD runs everywhere on eno1.
	"$LAB" daemons stop >/dev/null 2>&1
	"$LAB" daemons start -- --prefer "$FABRIC_IF" --fallback degrade >"$T/daemons.out" 2>&1 ||
		die "daemons --fallback degrade: $(cat "$T/daemons.out")"
	run_all degraded SLURM_JOB_ID=$((id + 6)) "SLURM_JOB_NODELIST=node[1-4]" -- --timeout 5
	expect_env degraded eno1
	fw node4

	# unknown: no daemon answers. CMD starts, without verified values, and says so.
	"$LAB" exec node1 env -i PATH=/usr/bin:/bin SLURM_JOB_ID=$((id + 5)) SLURM_JOB_NODELIST=node1,node2 \
		"$CLI" --socket "$T/nothing.sock" run -- sh -c "env > '$T/unknown.env'" \
		>"$T/unknown.out" 2>"$T/unknown.err"
	rc=$?
	[ $rc = 0 ] && [ -s "$T/unknown.env" ] && ! grep -q '^NCCL_SOCKET_IFNAME=' "$T/unknown.env" &&
		grep -q 'no verified answer' "$T/unknown.err" &&
		pass "unknown: no daemon: CMD started without verified values: $(head -c 200 "$T/unknown.err")" ||
		fail "unknown: exit $rc, env $( [ -s "$T/unknown.env" ] && echo written || echo missing): $(head -c 300 "$T/unknown.err")"

	# mpi: a real Open MPI job (mpirun on node1, one rank per node), each rank
	# `netpreflight run ... -- sh -c 'env > FILE; exec PROGRAM'`: the rank process itself runs
	# the job check and becomes the program (same PID, as orted expects).
	cat >"$T/mpiwrap" <<EOF
#!/bin/sh
# mpi-allreduce --wrap: PROGRAM -> netpreflight run on this node's daemon, then PROGRAM.
n=\$(ip netns identify)
n=\${n#npl$LAB_ID-}
exec "$CLI" --socket "/run/npflab/$LAB_ID/\$n.sock" run --nodes 'node[1-4]' --job mpi-$$ \\
	--timeout 5 -- sh -c 'env > "\$0"; exec "\$@"' "$T/mpi-\$n.env" "\$@"
EOF
	chmod 755 "$T/mpiwrap"
	line=$("$SRC/tests/lab/mpi-allreduce" --id "$LAB_ID" --wrap "$T/mpiwrap" --timeout 60 \
		--log "$T/mpi.log")
	rc=$?
	good=0
	for n in "${NODES[@]}"; do
		[ "$(sed -n 's/^NETPREFLIGHT_NODE=//p' "$T/mpi-$n.env" 2>/dev/null)" = "$n" ] &&
			grep -q "^OMPI_MCA_btl_tcp_if_include=$FAB.0/24" "$T/mpi-$n.env" && good=$((good + 1))
	done
	[ $rc -eq 0 ] && [ $good = 4 ] &&
		pass "mpi: Open MPI allreduce, 4 ranks each started through netpreflight run, all with OMPI_MCA_btl_tcp_if_include=$FAB.0/24: $line" || {
		fail "mpi: $line ($good of 4 ranks had the fabric's environment: $(grep -h '^OMPI_MCA_btl_tcp_if_include=' "$T"/mpi-*.env 2>/dev/null | sort | uniq -c | tr '\n' ' '))"
		grep -v '^[[:space:]]*$' "$T/mpi.log" | tail -n 30 | sed 's/^/     | /'
	}

	# gloo: a real job, each rank started by run.
	cat >"$T/wrap" <<EOF
#!/bin/bash
# gloo-allreduce --wrap: NODE CMD... -> netpreflight run on that node's daemon, then CMD.
n=\$1
shift
exec "$CLI" --socket "/run/npflab/$LAB_ID/\$n.sock" run --nodes 'node[1-4]' --job gloo-$$ \\
	--timeout 5 -- "\$@"
EOF
	chmod 755 "$T/wrap"
	[ "$("$LAB" sock node1)" = "/run/npflab/$LAB_ID/node1.sock" ] || die "lab socket path moved: $("$LAB" sock node1)"
	line=$("$SRC/tests/lab/gloo-allreduce" --id "$LAB_ID" --wrap "$T/wrap" --timeout 90 \
		--log "$T/gloo.log")
	rc=$?
	n_fab=$(grep -c "^rank [0-9]* ok (GLOO_SOCKET_IFNAME=$FABRIC_IF)" "$T/gloo.log")
	[ $rc -eq 0 ] && [ "$n_fab" = 4 ] &&
		pass "gloo: 4 ranks started by netpreflight run, all on GLOO_SOCKET_IFNAME=$FABRIC_IF: $line" || {
		fail "gloo: $line ($n_fab of 4 ranks on $FABRIC_IF)"
		grep -v '^[[:space:]]*$' "$T/gloo.log" | tail -n 30 | sed 's/^/     | /'
	}
	finish
	exit
fi

need_root
need_cmds ip nft jq unshare timeout setpriv mpirun mpicc
need_netns
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	skip "python3-torch with Gloo missing (scripts/setup-deps)"
T=$(mktemp -d /tmp/npf-run.XXXXXX)
chmod 755 "$T" # the ranks and CMDs write here from inside the lab
on_exit rm -rf "$T"
run_lab "$T/run.lab" "netns.run: eno1 + fabric, faults set by the test" "port 7718"
"$LAB" run "$T/run.lab" --id "rn$(($$ % 100000))" -q -- "$0" --inside "$T"
