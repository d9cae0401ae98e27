# SPDX-License-Identifier: MIT
# Shared helpers for tests/netns/*.sh, tests/systemd/*.sh and the lab scripts.
# Source it; it sets nothing but functions and a few variables it documents here:
#   FAILS    failures counted by fail()/must()/mustnot()
#   SRC      the source tree (NPF_SOURCE_DIR or two levels above this file)
#   BUILD    the build tree (NPF_BUILD_DIR or $SRC/build)
# Exit status convention (CTest SKIP_RETURN_CODE): 77 = skipped, 0 = passed, else failed.
# Every test script runs in strict mode `set -uo pipefail` and ends with `finish`: not `-e`,
# because a failed assertion is counted (fail/must/mustnot) and the script goes on to clean
# up and to report every failure, not only the first.
# shellcheck shell=bash

# No forks while sourcing: `lab exec` sources this on every call.
NPF_TESTLIB=${BASH_SOURCE[0]}
[[ $NPF_TESTLIB == /* ]] || NPF_TESTLIB=$PWD/$NPF_TESTLIB
NPF_TESTLIB_DIR=${NPF_TESTLIB%/*}
SRC=${NPF_SOURCE_DIR:-${NPF_TESTLIB_DIR%/tests/netns}}
BUILD=${NPF_BUILD_DIR:-$SRC/build}
FAILS=${FAILS:-0}

# skip WHY: the test cannot run here. CTest reports it as skipped; CI fails on any skip.
skip() {
	echo "SKIP: $*"
	exit 77
}
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"; }
# need_cmds CMD...: skip unless every command is installed.
need_cmds() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "'$c' not installed (scripts/setup-deps)"
	done
}
# need_netns: skip unless this kernel lets us create network namespaces.
need_netns() {
	local probe=npftest-probe$$
	ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here"
	ip netns del "$probe"
}

pass() { printf 'ok   %s\n' "$*"; }
fail() {
	printf 'FAIL %s\n' "$*"
	FAILS=$((FAILS + 1))
}
die() {
	fail "$@"
	exit 1
}
# must WHAT CMD...: CMD must succeed; mustnot WHAT CMD...: CMD must fail.
must() {
	local w=$1
	shift
	if "$@" >/dev/null 2>&1; then pass "$w"; else fail "$w"; fi
}
# mustnot tells a refusal from a broken command: exit 126/127 (not runnable, not found)
# or death by a signal other than timeout(1)'s 124 is a broken test, not the refusal
# it asserts, so it fails with the status.
mustnot() {
	local w=$1 rc=0
	shift
	"$@" >/dev/null 2>&1 || rc=$?
	if ((rc == 0)); then
		fail "$w"
	elif ((rc == 126 || rc == 127 || rc > 128)); then
		fail "$w (broken command, exit $rc: $*)"
	else
		pass "$w"
	fi
}
# finish: the last line of a test: a summary and the exit status.
finish() {
	echo "$FAILS failure(s)"
	[ "$FAILS" -eq 0 ]
}

# ---- cleanup ------------------------------------------------------------------------------
# on_exit CMD...: run CMD when the script exits, whatever the reason (last registered runs
# first). INT and TERM exit through the same path, so Ctrl-C and a CTest timeout clean up too.
# The traps are set by the first on_exit, so a script with traps of its own (the lab) can
# source this file for the rest.
NPF_ON_EXIT=()
on_exit() {
	if ((${#NPF_ON_EXIT[@]} == 0)); then
		trap npf_run_on_exit EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
	fi
	NPF_ON_EXIT+=("$*")
}
npf_run_on_exit() {
	# Names no handler uses: bash scopes dynamically, so a handler's own loop variable
	# (`for i in ...` in a cleanup function) would be this loop's.
	local _npf_rc=$? _npf_k
	local -a _npf_handlers=("${NPF_ON_EXIT[@]}")
	trap - EXIT
	set +e
	for ((_npf_k = ${#_npf_handlers[@]} - 1; _npf_k >= 0; _npf_k--)); do
		# Each handler sees the script's exit status in $? (cleanup functions print logs
		# on failure).
		(exit "$_npf_rc")
		eval "${_npf_handlers[_npf_k]}"
	done
	exit "$_npf_rc"
}

# daemon_logs_on_failure LINES DIR NODE...: when a check failed (FAILS > 0), the last LINES
# lines of each node's daemon log DIR/NODE.log, for the CTest output.
daemon_logs_on_failure() {
	local lines=$1 dir=$2 n
	shift 2
	[ "$FAILS" -ne 0 ] || return 0
	for n in "$@"; do
		[ -f "$dir/$n.log" ] && { echo "--- $n daemon log"; tail -n "$lines" "$dir/$n.log"; }
	done
}

# ---- bounded, condition-based waits ----------------------------------------------------------
# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (0) or SECONDS pass (1).
# The deadline only catches a hang: pick it generously (a loaded 2-core machine under ASan).
wait_until() {
	local end=$((${EPOCHREALTIME/./} + ${1%.*} * 1000000))
	shift
	until "$@"; do
		((${EPOCHREALTIME/./} < end)) || return 1
		sleep 0.1
	done
}
# not CMD...: succeeds when CMD fails (for wait_until on a condition's negation).
not() { ! "$@"; }
# wait_gone SECONDS PID: the process ended (a zombie counts as ended).
npf_pid_gone() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	st=${st##*) }
	[ "${st:0:1}" = Z ]
}
wait_gone() { wait_until "$1" npf_pid_gone "$2"; }
# stop_pid PID [SECONDS]: TERM, wait up to SECONDS (default 5), then KILL.
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	wait_gone "${2:-5}" "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null || true
}

# ---- namespaces -------------------------------------------------------------------------------
# nsx NS CMD...: run CMD inside network namespace NS.
nsx() {
	local n=$1
	shift
	ip netns exec "$n" "$@"
}
# links_running NS IFNAME...: every one of them is operationally up (IFF_RUNNING). Carrier
# reaches an interface through the kernel's linkwatch up to a second after `link set up`:
# wait on this before starting daemons that should see the interfaces as built.
links_running() {
	local ns=$1 out name
	shift
	local -A up=()
	out=$(ip -n "$ns" -o link show up 2>/dev/null) || return 1
	while read -r _ name rest; do
		name=${name%:}
		[[ $rest == *"state UP"* ]] && up[${name%@*}]=1
	done <<<"$out"
	for name in "$@"; do
		[ -n "${up[$name]:-}" ] || return 1
	done
}
# ns_ping NS ADDR [ping options...]: reachability, not latency. Right after a link or
# address change the kernel may still hold a FAILED neighbour entry and fail the first
# packets at once; so one-packet pings are retried until a reply or a 5 s deadline.
ns_ping() {
	local n=$1 addr=$2
	shift 2
	wait_until 5 nsx "$n" ping -c 1 -W 1 -q "$@" "$addr"
}
# ns_tcp NS ADDR PORT: a TCP connect from NS succeeds within 5 s (retried likewise).
ns_tcp() { wait_until 5 nsx "$1" nc -z -w 1 "$2" "$3"; }
