#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.run_standalone: `netpreflight run --standalone` with no netpreflightd on any node
# (issue 22, docs/run.md). A 4-node lab (eno1 + a 9000-byte fabric ens1f0np0); every node runs,
# at once, as an unprivileged user (setpriv: uid/gid nobody, no supplementary groups, every
# capability dropped, bounding set empty), in the node's own network namespace and host name,
# `netpreflight run --standalone --nodes node[1-4] --job TAG -- sh -c 'env > FILE'`. The CLI
# starts the daemon's program as that user on a private socket and a port derived from TAG.
#   plain:    every node runs CMD with NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME = the fabric, the
#             job check holds all 4 rows (--json first), and stderr warns that peers are
#             not authenticated; the port is the tag's (npf_launcher_port);
#   two jobs: two jobs on the same four nodes at the same moment (different tags, so different
#             ports) both get the fabric on every node;
#   key:      with a cluster key the user can read (--key-file), the same, without the warning;
#   domain:   the job lists the nodes as node1.job ... (a pod plus its headless service):
#             each engine is named as the job spells it (NETPREFLIGHT_NODE=nodeN.job);
#   fallback: node4's fabric dead: the whole job moves to eno1 alike (no [publish] prefer, so
#             no blame; the refusal on a blamed node is netns.run's);
#   gloo:     a PyTorch Gloo all_reduce whose 4 ranks are each started, as that user, by
#             `netpreflight run --standalone`, finishes on the fabric;
#   cleanup:  once the linger is over, no daemon or private directory of these runs is left;
#   mpi:      an Open MPI allreduce whose ranks (root: orted forks them) each start through
#             `run --standalone --node-name NODE -- PROGRAM`, finishes on the fabric.
# Runs as root to build the lab (exit 77 = skipped otherwise); lab id rs<pid>, removed by
# `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
DAEMON=$NPF_BUILD_DIR/daemon/netpreflightd
# shellcheck source=tests/netns/runcase.bash
. "$SRC/tests/netns/runcase.bash"
USER_ID=65534 # nobody

if [ "${1:-}" = --inside ]; then
	T=$2
	# as_user NODE CMD...: CMD in NODE's namespace with its host name, as the unprivileged
	# user, no capabilities, a clean environment (TMPDIR for the private directory).
	cat >"$T/as_user" <<EOF
#!/bin/bash
n=\$1
shift
exec ip netns exec "\$("$LAB" ns --id "$LAB_ID" "\$n")" unshare --uts sh -c 'hostname "\$0" && exec "\$@"' "\$n" \\
	setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups --inh-caps=-all --bounding-set=-all \\
	env -i PATH=/usr/bin:/bin HOME=/tmp TMPDIR=$T/tmp NPF_DAEMON=$DAEMON "\$@"
EOF
	chmod 755 "$T/as_user"
	mkdir -m 1777 "$T/tmp" "$T/out"
	# run_all CASE TAG RUN-ARGS...: every node at once runs run --standalone for job TAG.
	run_all() {
		local c=$1 tag=$2 n
		shift 2
		for n in "${NODES[@]}"; do
			{
				"$T/as_user" "$n" "$CLI" run --standalone --nodes "${HOSTLIST:-node[1-4]}" --job "$tag" \
					--timeout 5 "$@" -- sh -c "env > '$T/out/$c-$n.env'" \
					>"$T/$c-$n.out" 2>"$T/$c-$n.err"
				echo $? >"$T/$c-$n.rc"
			} &
		done
	}
	envv() { sed -n "s/^$2=//p" "$T/out/$1.env" | head -n 1; } # CASE-NODE VAR
	# expect_env CASE [WARN [IFNAME]]: every node ran CMD with IFNAME (default the fabric);
	# WARN yes: stderr says the probes are unauthenticated, no: it does not.
	expect_env() {
		local c=$1 warn=${2:-yes} want=${3:-$FABRIC_IF} n f w
		for n in "${NODES[@]}"; do
			f=$c-$n
			w=no
			grep -q 'NOT authenticated' "$T/$f.err" && w=yes
			[ "$(cat "$T/$f.rc")" = 0 ] && [ "$(envv "$f" NETPREFLIGHT_NODE)" = "$n${SUFFIX:-}" ] &&
				[ "$(envv "$f" NCCL_SOCKET_IFNAME)" = "=$want" ] &&
				[ "$(envv "$f" GLOO_SOCKET_IFNAME)" = "$want" ] && [ "$w" = "$warn" ] &&
				[ "$(stat -c %u "$T/out/$f.env")" = "$USER_ID" ] &&
				pass "$c: $n: CMD ran as uid $USER_ID, NETPREFLIGHT_NODE=$n${SUFFIX:-}, with NCCL_SOCKET_IFNAME==$want GLOO_SOCKET_IFNAME=$want, unauthenticated warning: $w" ||
				fail "$c: $n: exit $(cat "$T/$f.rc"), NETPREFLIGHT_NODE=$(envv "$f" NETPREFLIGHT_NODE) NCCL_SOCKET_IFNAME=$(envv "$f" NCCL_SOCKET_IFNAME) GLOO_SOCKET_IFNAME=$(envv "$f" GLOO_SOCKET_IFNAME), CMD's uid $(stat -c %u "$T/out/$f.env" 2>/dev/null), warning $w (want $warn): $(head -c 400 "$T/$f.err")"
		done
	}

	# plain, --json first: the decision on the derived port, all rows in, nothing started.
	# A numeric tag (a job id): port 20000 + id mod 12000.
	id=$((5000 + $$ % 1000))
	run_all plainjson "$id" --json
	wait
	want="$id $((20000 + id)) exec ok 4 =$FABRIC_IF"
	for n in "${NODES[@]}"; do
		f=plainjson-$n
		got=$(jq -r '[.job, .port, .action, .verdict, .check.job.rows,
			.set.NCCL_SOCKET_IFNAME] | map(tostring) | join(" ")' "$T/$f.out" 2>/dev/null)
		[ "$(cat "$T/$f.rc")" = 0 ] && [ "$got" = "$want" ] &&
			pass "plain --json: $n: job port exec verdict rows NCCL_SOCKET_IFNAME: $got" ||
			fail "plain --json: $n: exit $(cat "$T/$f.rc"), '$got' (want '$want'): $(head -c 400 "$T/$f.err")"
	done
	run_all plain "sa2-$$"
	wait
	expect_env plain yes

	# Two jobs on the same nodes at once: two ports, no collision.
	run_all jobA "1$(($$ % 1000))"
	run_all jobB "2$(($$ % 1000))"
	wait
	expect_env jobA yes
	expect_env jobB yes

	# A cluster key the user can read.
	# The user's own key, as the daemon wants it (owner, no group/other bits but group read).
	"$CLI" key generate >"$T/key" && chown "$USER_ID:$USER_ID" "$T/key" && chmod 600 "$T/key" ||
		die "key generate"
	run_all key "k-$$" --key-file "$T/key"
	wait
	expect_env key no

	# domain: the job lists the nodes with a domain (Kubernetes: pod host name plus the
	# headless service, "job-w-1.job"); each engine takes its name as the job spells it.
	for n in "${NODES[@]}"; do
		for i in 1 2 3 4; do echo "198.19.0.$i node$i.job"; done >>"/etc/netns/$("$LAB" ns "$n")/hosts"
	done
	HOSTLIST='node[1-4].job' SUFFIX=.job
	run_all domain "d-$$"
	wait
	expect_env domain yes
	unset HOSTLIST SUFFIX

	# fallback: node4's fabric dead. Without [publish] prefer the two networks rank alike, so
	# no node is blamed: the whole job moves to eno1, every node the same.
	fw node4 iifname "$FABRIC_IF" drop
	run_all fallback "f-$$"
	wait
	expect_env fallback yes eno1
	fw node4

	# gloo: each rank started by run --standalone, as the user.
	cat >"$T/wrap" <<EOF
#!/bin/bash
# gloo-allreduce --wrap: NODE CMD... (already in the node's namespace with its host name).
shift
exec setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups --inh-caps=-all --bounding-set=-all \\
	env TMPDIR=$T/tmp NPF_DAEMON=$DAEMON "$CLI" run --standalone --nodes 'node[1-4]' \\
	--job g-$$ --timeout 5 -- "\$@"
EOF
	chmod 755 "$T/wrap"
	line=$("$SRC/tests/lab/gloo-allreduce" --id "$LAB_ID" --wrap "$T/wrap" --timeout 90 \
		--log "$T/gloo.log")
	rc=$?
	n_fab=$(grep -c "^rank [0-9]* ok (GLOO_SOCKET_IFNAME=$FABRIC_IF)" "$T/gloo.log")
	[ $rc -eq 0 ] && [ "$n_fab" = 4 ] &&
		pass "gloo: 4 ranks started by netpreflight run --standalone as uid $USER_ID, all on GLOO_SOCKET_IFNAME=$FABRIC_IF: $line" || {
		fail "gloo: $line ($n_fab of 4 ranks on $FABRIC_IF)"
		grep -v '^[[:space:]]*$' "$T/gloo.log" | tail -n 30 | sed 's/^/     | /'
	}

	# cleanup: every keeper lets its daemon go after the linger (2 x (5 s + 10 s) here).
	# shellcheck disable=SC2317 # called through wait_until
	gone() { ! pgrep -f "^$DAEMON " >/dev/null && [ -z "$(ls -A "$T/tmp")" ]; }
	wait_until 90 gone && pass "cleanup: no standalone daemon and no private directory left" ||
		fail "cleanup: left: $(pgrep -a -f "^$DAEMON " | head -n 3) $(ls "$T/tmp")"
	# mpi: a real Open MPI job whose ranks each run `netpreflight run --standalone
	# --node-name NODE -- PROGRAM` (mpirun's ranks run as root here: orted forks them; the
	# host name is the machine's, so --node-name says which node this is). Last: the
	# harness kills whatever the job leaves in the namespaces, keepers included, so their
	# private directories stay behind (removed with $T).
	cat >"$T/mpiwrap" <<EOF
#!/bin/sh
# mpi-allreduce --wrap: PROGRAM -> netpreflight run --standalone on this node, then PROGRAM.
n=\$(ip netns identify)
n=\${n#npl$LAB_ID-}
export TMPDIR=$T/tmp NPF_DAEMON=$DAEMON
exec "$CLI" run --standalone --node-name "\$n" --nodes 'node[1-4]' --job mpi-$$ --timeout 5 \\
	-- sh -c 'env > "\$0"; exec "\$@"' "$T/out/mpi-\$n.env" "\$@"
EOF
	chmod 755 "$T/mpiwrap"
	line=$("$SRC/tests/lab/mpi-allreduce" --id "$LAB_ID" --wrap "$T/mpiwrap" --timeout 90 \
		--log "$T/mpi.log")
	rc=$?
	good=0
	for n in "${NODES[@]}"; do
		[ "$(envv "mpi-$n" NETPREFLIGHT_NODE)" = "$n" ] &&
			[ "$(envv "mpi-$n" OMPI_MCA_btl_tcp_if_include)" = "$FAB.0/24" ] && good=$((good + 1))
	done
	[ $rc -eq 0 ] && [ $good = 4 ] &&
		pass "mpi: Open MPI allreduce, 4 ranks each started through run --standalone --node-name, all with OMPI_MCA_btl_tcp_if_include=$FAB.0/24: $line" || {
		fail "mpi: $line ($good of 4 ranks had the fabric's environment)"
		grep -v '^[[:space:]]*$' "$T/mpi.log" | tail -n 30 | sed 's/^/     | /'
	}
	finish
	exit
fi

need_root
need_cmds ip nft jq unshare timeout setpriv pgrep mpirun mpicc
need_netns
[ -x "$CLI" ] && [ -x "$DAEMON" ] || skip "not built ($NPF_BUILD_DIR)"
setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups test -x "$CLI" -a -x "$DAEMON" ||
	skip "uid $USER_ID cannot run $CLI (a build tree only root can read)"
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	skip "python3-torch with Gloo missing (scripts/setup-deps)"
T=$(mktemp -d /tmp/npf-runsa.XXXXXX)
chmod 755 "$T"
on_exit rm -rf "$T"
run_lab "$T/run.lab" "netns.run_standalone: eno1 + fabric, no daemons"
"$LAB" run "$T/run.lab" --id "rs$(($$ % 100000))" -q -- "$0" --inside "$T"
