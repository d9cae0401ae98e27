#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.prolog_budget: the Prolog's check budget (issue 11). With a stand-in CLI that records
# its arguments (no daemon, no namespace needed): by default the Prolog passes no budget, so
# the daemon sizes it from the job; NPF_PROLOG_TIMEOUT_S (PrologEpilogTimeout) becomes a
# --max-timeout of what is left of it, halved for a job check (the exchange waits up to the
# budget again, docs/decision.md §10); NPF_TIMEOUT_MS sets --timeout outright; an absurd
# PrologEpilogTimeout is clamped to the API's range; a requeued job's restart count is part of
# its job tag. Exit 77 when the Prolog is not built.
set -uo pipefail

# "cond && pass || fail" is used on purpose below: pass only prints, it cannot fail.
# shellcheck disable=SC2015
# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
PROLOG=$BUILD/slurm/netpreflight-prolog
[ -f "$PROLOG" ] || skip "$PROLOG not built"

T=$(mktemp -d /tmp/npf-prolog-budget.XXXXXX) || exit 1
on_exit 'rm -rf -- "$T"'
cat >"$T/cli" <<'CLI'
#!/bin/bash
printf '%s\n' "$@" >"$ARGS_FILE"
echo '{"verdict":{"verdict":"ok","summary":"stand-in"}}'
CLI
chmod +x "$T/cli"
run() { # name env... : runs the Prolog, leaves the CLI's arguments in $T/name
	local name=$1
	shift
	env -i PATH=/usr/bin:/bin ARGS_FILE="$T/$name" NPF_CLI="$T/cli" NPF_CONF=/dev/null \
		NPF_PROLOG_LOG_DIR="$T/log" NPF_SOCKET="$T/none.sock" SLURM_JOB_ID=7 \
		SLURM_JOB_NODELIST='node[1-4]' SLURMD_NODENAME=node1 "$@" \
		bash "$PROLOG" >/dev/null 2>&1
	local rc=$?
	[ "$rc" -eq 0 ] || fail "$name: exit $rc"
}
arg_after() { grep -A1 -x -- "$2" "$T/$1" | sed -n 2p; }

run default
if grep -qx -- '--timeout' "$T/default" || grep -qx -- '--max-timeout' "$T/default"; then
	fail "default: a budget was passed: $(tr '\n' ' ' <"$T/default")"
else
	pass "default: no budget passed (the daemon sizes it from the job)"
fi

t0=$EPOCHREALTIME
run prolog NPF_PROLOG_TIMEOUT_S=30
t1=$EPOCHREALTIME
m=$(arg_after prolog --max-timeout)
# 30 s less a tenth and 3 s, less what the script itself took: 24 s at most; a job check then
# keeps 2 s for the exchange and halves the rest: 11 s at most, and no less than that minus
# half the time this run took (measured here, so a loaded machine cannot fail it).
if awk -v m="$m" -v t0="$t0" -v t1="$t1" 'BEGIN { exit !(m > 11 - (t1 - t0) / 2 - 0.5 && m <= 11) }'; then
	pass "PrologEpilogTimeout 30 s: --max-timeout $m"
else
	fail "PrologEpilogTimeout 30 s: --max-timeout '$m' (the run took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s)"
fi
grep -qx -- '--timeout' "$T/prolog" && fail "prolog: --timeout passed too"

run huge NPF_PROLOG_TIMEOUT_S=65534
m=$(arg_after huge --max-timeout)
[ "$m" = 149.000 ] && pass "PrologEpilogTimeout 65534 s: clamped to 300 s, $m for the job check" ||
	fail "huge: --max-timeout '$m'"

run tiny NPF_PROLOG_TIMEOUT_S=2
m=$(arg_after tiny --max-timeout)
[ "$m" = 1.000 ] && pass "PrologEpilogTimeout 2 s: floor $m" ||
	fail "tiny: --max-timeout '$m'"

run explicit NPF_TIMEOUT_MS=1500 NPF_PROLOG_TIMEOUT_S=30
t=$(arg_after explicit --timeout)
[ "$t" = 1.500 ] && ! grep -qx -- '--max-timeout' "$T/explicit" &&
	pass "NPF_TIMEOUT_MS=1500: --timeout $t only" ||
	fail "explicit: $(tr '\n' ' ' <"$T/explicit")"

j=$(arg_after prolog --job)
[ "$j" = 7 ] && pass "a job's Prolog runs a job check tagged with its id: --job $j" ||
	fail "prolog: --job '$j'"
run requeued SLURM_RESTART_COUNT=2
j=$(arg_after requeued --job)
[ "$j" = 7.r2 ] && pass "a requeued start is its own job check: --job $j" ||
	fail "requeued: --job '$j'"

run junk NPF_PROLOG_TIMEOUT_S=soon
grep -qx -- '--max-timeout' "$T/junk" &&
	fail "junk: --max-timeout from a non-number" ||
	pass "NPF_PROLOG_TIMEOUT_S=soon: ignored"

finish
