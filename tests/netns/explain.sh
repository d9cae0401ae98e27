#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# "cond && pass || fail" is used on purpose below: pass only prints, it cannot fail.
# shellcheck disable=SC2015
# netpreflight explain on a live trapped job: the lab topology of netns.mpi_env (docker0 and a
# docker user bridge with the same addresses on every node, ahead of the fabric NIC, fabric NIC
# names that differ), an Open MPI allreduce launched with Open MPI's defaults (it hangs or
# fails: processes connect to bridge addresses that are local to every node), its output
# captured here, then fed to `explain` with the lab's daemons running:
#   - the cause is same-address, from the log's own lines, and the cross-check names what the
#     daemon's check found for the bridges (wrong-peer) and which interface passed;
#   - the fix printed is the environment the daemon publishes, and applying exactly that text
#     makes the same allreduce finish;
#   - without a daemon the diagnosis still runs and says the evidence is from the log alone;
#   - gzip and zstd copies of the log, and a truncated copy, give the same cause;
#   - a second trap (catalogue scenario fw-reject: node3 rejects fabric TCP, the job forced onto
#     the fabric with btl_tcp_if_include): Open MPI 4.1 logs only "connect() to 198.18.1.3
#     failed" with a meaningless errno, so the log alone is "unknown" (exit 1), and the daemon's
#     check of that very path decides: firewall-refused, node3; its published fix (eno1's CIDR)
#     makes the job finish;
#   - on the same lab, with Debian's python3-torch, a PyTorch Gloo allreduce without
#     GLOO_SOCKET_IFNAME (the hostname does not resolve to a fabric address: Gloo binds
#     loopback): gloo-hostname-loopback, and the published GLOO_SOCKET_IFNAME makes it finish.
# Needs root, network namespaces, mpirun/mpicc, jq and zstd; exit 77 otherwise (torch missing
# is a failure). Everything it creates is removed on exit (lab down), also on failure.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
need_root
CLI=$BUILD/cli/netpreflight
DAEMON=$BUILD/daemon/netpreflightd
LAB=$SRC/tests/lab/lab
need_cmds mpirun mpicc jq ip timeout gzip zstd python3
for f in "$CLI" "$DAEMON" "$LAB"; do
	[ -x "$f" ] || skip "$f not built"
done
need_netns

ID=x$(($$ % 100000))
ID2=${ID}f
T=$(mktemp -d /tmp/npf-explain.XXXXXX)
chmod 0755 "$T"
export LAB_DAEMON="$DAEMON" LAB_CLI="$CLI" NPF_BUILD_DIR="$BUILD"
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p')

on_exit 'rm -rf "$T"'
on_exit '"$LAB" down --id "$ID" >/dev/null 2>&1; "$LAB" down --id "$ID2" >/dev/null 2>&1'

"$LAB" up "$SRC/tests/netns/mpi_env.lab" --id "$ID" -q || die "lab up failed"
"$LAB" daemons start --id "$ID" >/dev/null || die "lab daemons failed"
NODES=$("$LAB" hostlist --id "$ID")
SOCK=$("$LAB" sock --id "$ID" node1)

# 1. The trapped job, as a user runs it: Open MPI's defaults. Bounded; it must not succeed.
mpicc -std=c11 -D_GNU_SOURCE -O2 -o "$T/mpi_allreduce" "$SRC/tests/netns/mpi_allreduce.c" ||
	die "mpicc failed"
export MPI_ALLREDUCE_BIN=$T/mpi_allreduce
out=$("$SRC/tests/lab/mpi-allreduce" --id "$ID" --timeout 20 --log "$T/job.log")
rc=$?
[ $rc -ne 0 ] && pass "trapped job did not finish ($out)" || fail "trapped job finished: $out"
grep -q 'cannot find a corresponding process' "$T/job.log" &&
	pass "job log has Open MPI's warning" || { fail "no Open MPI warning in the log"; cat "$T/job.log"; }

# 2. explain with the lab's daemon (node1's), JSON.
"$CLI" --socket "$SOCK" explain --nodes "$NODES" --json "$T/job.log" >"$T/x.json" 2>"$T/x.err"
rc=$?
j() { jq -r "$1" "$T/x.json"; }
[ $rc -eq 0 ] && pass "explain exit 0 (diagnosed)" || { fail "explain exit $rc"; cat "$T/x.err"; }
[ "$(j .cause)" = same-address ] && pass "cause same-address" || fail "cause $(j .cause)"
[ "$(j .evidence_source)" = log+daemon ] && pass "cross-checked with the daemon" ||
	fail "evidence_source $(j .evidence_source): $(j .cross_check_error)"
[ "$(j '.evidence | length')" -ge 1 ] && j '.evidence[0].text' | grep -q 'corresponding process' &&
	pass "evidence line quoted" || fail "evidence: $(j .evidence)"
[ "$(j .cross_check.confirmed)" = true ] && pass "daemon confirms the cause" ||
	fail "not confirmed: $(j .cross_check.findings)"
j '.cross_check.findings[]' | grep -q 'br-5c2f8e1a9b07 wrong-peer' &&
	pass "finding: the bridge is wrong-peer" || fail "findings: $(j .cross_check.findings)"
j '.cross_check.findings[]' | grep -q 'ens1f0np0 passed to all 2 peers' &&
	pass "finding: the fabric passed" || fail "findings: $(j .cross_check.findings)"
[ "$(j .cross_check.env.OMPI_MCA_btl_tcp_if_include)" = 198.18.1.0/24 ] &&
	pass "fix: the published OMPI_MCA_btl_tcp_if_include" || fail "env: $(j .cross_check.env)"

# 3. The human answer: cause, first failing process, the fix as published text.
"$CLI" --socket "$SOCK" explain --nodes "$NODES" "$T/job.log" >"$T/x.txt" 2>&1
grep -q '^cause: same-address' "$T/x.txt" && grep -q '^first failure: ' "$T/x.txt" &&
	grep -q "^  export OMPI_MCA_btl_tcp_if_include='198.18.1.0/24'" "$T/x.txt" &&
	pass "human output: cause, first failure, fix" || { fail "human output"; cat "$T/x.txt"; }

# 4. The fix works: the exact text explain printed, applied on the launch node.
sed -n 's/^  \(export .*\)$/\1/p' "$T/x.txt" >"$T/fix.sh"
out=$("$SRC/tests/lab/mpi-allreduce" --id "$ID" --timeout 60 --env "$T/fix.sh")
rc=$?
[ $rc -eq 0 ] && pass "job with explain's fix: $out" || { fail "job with the fix: $out"; cat "$T/fix.sh"; }

# 5. No daemon: the same diagnosis, from the log alone.
"$CLI" --socket "$T/none.sock" explain --nodes "$NODES" --json "$T/job.log" >"$T/n.json" 2>/dev/null
rc=$?
[ $rc -eq 0 ] && [ "$(jq -r .cause "$T/n.json")" = same-address ] &&
	[ "$(jq -r .evidence_source "$T/n.json")" = log ] &&
	pass "without a daemon: same cause, evidence from the log alone" ||
	fail "no daemon: rc $rc $(cat "$T/n.json")"

# 6. Compressed and truncated copies.
gzip -c "$T/job.log" >"$T/job.log.gz"
"$CLI" explain --no-daemon --json "$T/job.log.gz" | jq -e '.cause == "same-address"' >/dev/null &&
	pass "gzip input" || fail "gzip input"
head -c $(($(stat -c %s "$T/job.log.gz") * 2 / 3)) "$T/job.log.gz" >"$T/cut.gz"
"$CLI" explain --no-daemon --json "$T/cut.gz" 2>/dev/null | jq -e '.cause' >/dev/null &&
	pass "truncated gzip input still diagnosed" || fail "truncated gzip"
zstd -q -c "$T/job.log" >"$T/job.log.zst"
"$CLI" explain --no-daemon --json <"$T/job.log.zst" | jq -e '.cause == "same-address"' >/dev/null &&
	pass "zstd on stdin" || fail "zstd on stdin"

# 7. fw-reject: the log alone cannot say how the connects failed; the daemon's check can.
"$LAB" down --id "$ID" >/dev/null 2>&1
"$LAB" up fw-reject --id "$ID2" -q || die "lab up fw-reject failed"
"$LAB" daemons start --id "$ID2" >/dev/null || die "lab daemons failed"
NODES2=$("$LAB" hostlist --id "$ID2")
SOCK2=$("$LAB" sock --id "$ID2" node1)
out=$("$SRC/tests/lab/mpi-allreduce" --id "$ID2" --timeout 20 --log "$T/fw.log" -- \
	--mca btl_tcp_if_include 198.18.1.0/24)
rc=$?
[ $rc -ne 0 ] && pass "fw-reject job on the fabric did not finish ($out)" || fail "fw-reject job: $out"
"$CLI" explain --no-daemon --json "$T/fw.log" >"$T/fw0.json"
rc=$?
[ $rc -eq 1 ] && [ "$(jq -r .cause "$T/fw0.json")" = unknown ] &&
	pass "log alone: unknown, exit 1 (nothing guessed)" ||
	fail "log alone: rc $rc cause $(jq -r .cause "$T/fw0.json")"
"$CLI" --socket "$SOCK2" explain --nodes "$NODES2" --json "$T/fw.log" >"$T/fw.json" 2>"$T/fw.err"
rc=$?
k() { jq -r "$1" "$T/fw.json"; }
[ $rc -eq 0 ] && [ "$(k .cause)" = firewall-refused ] && [ "$(k .cross_check.cause_from_daemon)" = true ] &&
	pass "with the daemon: firewall-refused, from its check" ||
	{ fail "with the daemon: rc $rc cause $(k .cause)"; cat "$T/fw.err"; }
[ "$(k .subject.host)" = node3 ] && [ "$(k .subject.address)" = 198.18.1.3 ] &&
	pass "names node3 198.18.1.3" || fail "subject $(k .subject)"
[ "$(k .cross_check.env.OMPI_MCA_btl_tcp_if_include)" = 198.19.0.0/24 ] &&
	pass "fix: the published eno1 CIDR" || fail "env $(k .cross_check.env)"
"$CLI" --socket "$SOCK2" explain --nodes "$NODES2" "$T/fw.log" | sed -n 's/^  \(export .*\)$/\1/p' >"$T/fix2.sh"
out=$("$SRC/tests/lab/mpi-allreduce" --id "$ID2" --timeout 60 --env "$T/fix2.sh")
rc=$?
[ $rc -eq 0 ] && pass "fw-reject job with explain's fix: $out" || { fail "with the fix: $out"; cat "$T/fix2.sh"; }

# 8. Gloo (PyTorch from Debian's python3-torch, in scripts/setup-deps, so its absence is a
# failure, not a skip): no GLOO_SOCKET_IFNAME, and the hostname does not resolve to a fabric
# address inside the nodes, so Gloo binds loopback.
# Debian's torch lives in /usr/bin/python3's path; a python3 earlier in PATH (pyenv) lacks it.
PY=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import torch.distributed' 2>/dev/null; then
		PY=$(command -v "$p")
		break
	fi
done
gloo_job() { # $1: env file to source first ("" = none); output in $T/gloo.log
	local r pids=()
	: >"$T/gloo.log"
	for r in 0 1; do
		# shellcheck disable=SC2016
		"$LAB" exec --id "$ID2" "node$((r + 1))" timeout -k 3 60 bash -c '
			[ -z "$1" ] || . "$1"; shift; exec "$@"' _ "$1" \
			"$PY" "$SRC/tests/explain/gloo_allreduce.py" "$r" 2 198.19.0.1 29517 \
			2>&1 | sed "s/^/[rank$r]:/" >"$T/gloo.$r" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$T/gloo.0" "$T/gloo.1" >"$T/gloo.log"
}
if [ -n "$PY" ]; then
	gloo_job ""
	if [ "$(grep -c 'gloo allreduce ok' "$T/gloo.log")" -eq 2 ]; then
		fail "Gloo job without GLOO_SOCKET_IFNAME finished: the trap did not spring"
	else
		pass "Gloo job without GLOO_SOCKET_IFNAME failed"
	fi
	"$CLI" --socket "$SOCK2" explain --nodes "$NODES2" --json "$T/gloo.log" >"$T/g.json"
	[ "$(jq -r .cause "$T/g.json")" = gloo-hostname-loopback ] &&
		pass "Gloo: cause gloo-hostname-loopback" ||
		{ fail "Gloo: cause $(jq -r .cause "$T/g.json")"; cat "$T/gloo.log"; }
	[ "$(jq -r .cross_check.env.GLOO_SOCKET_IFNAME "$T/g.json")" = eno1 ] &&
		pass "Gloo fix: the published GLOO_SOCKET_IFNAME" ||
		fail "Gloo env: $(jq -c .cross_check.env "$T/g.json")"
	"$CLI" --socket "$SOCK2" explain --nodes "$NODES2" "$T/gloo.log" |
		sed -n 's/^  \(export .*\)$/\1/p' >"$T/fix3.sh"
	gloo_job "$T/fix3.sh"
	[ "$(grep -c 'gloo allreduce ok' "$T/gloo.log")" -eq 2 ] && pass "Gloo job with explain's fix" ||
		{ fail "Gloo with the fix"; cat "$T/gloo.log"; }
else
	fail "Gloo: python3 cannot import torch.distributed (python3-torch, scripts/setup-deps)"
fi

finish
