#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.prolog_budget: the Prolog's check budget (issue 11). With a stand-in CLI that records
# its arguments (no daemon, no namespace needed): by default the Prolog passes no budget, so
# the daemon sizes it from the job; NPF_PROLOG_TIMEOUT_S (PrologEpilogTimeout) becomes a
# --max-timeout of what is left of it, halved for a job check (the exchange's window, twice
# that plus 2 s, fits what is left: docs/decision.md §10); NPF_TIMEOUT_MS sets --timeout outright; an absurd
# PrologEpilogTimeout is clamped to the API's range; a requeued job's restart count is part of
# its job tag. A job check that ends unknown is tried once more as the job start's last try
# (`--job TAG.s --settle`, issue 18) within what is left of the budget, and the last answer is
# the one kept; not when the first answer was a verdict, nor when no time is left. Exit 77
# when the Prolog is not built.
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
# The daemon's job check runs at most twice the ceiling plus 2 s (its probes, then the wait
# for late nodes' rows, docs/decision.md §10): that window must fit what the Prolog keeps of
# PrologEpilogTimeout (30 s less a tenth and 3 s).
awk -v m="$m" 'BEGIN { exit !(2 * m + 2 <= 30 - 3 - 3) }' &&
	pass "PrologEpilogTimeout 30 s: the job check's window, 2 x $m + 2 s, fits the 24 s it keeps" ||
	fail "PrologEpilogTimeout 30 s: window 2 x '$m' + 2 s does not fit 24 s"

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

# unknown, then the last try: a stand-in that answers unknown unless asked to settle.
cat >"$T/cli2" <<'CLI'
#!/bin/bash
n=$(($(cat "$ARGS_FILE.n" 2>/dev/null || echo 0) + 1))
echo "$n" >"$ARGS_FILE.n"
printf '%s\n' "$@" >"$ARGS_FILE.$n"
case " $* " in
*" --settle "*) echo '{"verdict":{"verdict":"degraded","summary":"settled on eno1"}}' ;;
*) echo '{"verdict":{"verdict":"unknown","summary":"evidence missing"}}'; exit 3 ;;
esac
CLI
chmod +x "$T/cli2"
run retry NPF_CLI="$T/cli2" NPF_PROLOG_TIMEOUT_S=30
[ "$(cat "$T/retry.n" 2>/dev/null)" = 2 ] && [ "$(arg_after retry.1 --job)" = 7 ] &&
	! grep -qx -- '--settle' "$T/retry.1" && [ "$(arg_after retry.2 --job)" = 7.s ] &&
	grep -qx -- '--settle' "$T/retry.2" &&
	pass "unknown: tried once more as the last try (--job 7.s --settle)" ||
	fail "retry: calls $(cat "$T/retry.n" 2>/dev/null): $(tr '\n' ' ' <"$T/retry.1" 2>/dev/null) / $(tr '\n' ' ' <"$T/retry.2" 2>/dev/null)"
m=$(arg_after retry.2 --max-timeout)
awk -v m="$m" 'BEGIN { exit !(m >= 1 && m <= 11) }' &&
	pass "the last try fits what is left of the budget: --max-timeout $m" ||
	fail "retry: the last try's --max-timeout '$m'"
grep -q '"degraded"' "$T/log/job-7.json" 2>/dev/null && pass "the last answer is the one kept" ||
	fail "retry: job log holds $(cat "$T/log/job-7.json" 2>/dev/null)"
run retry_tiny NPF_CLI="$T/cli2" NPF_PROLOG_TIMEOUT_S=2
[ "$(cat "$T/retry_tiny.n" 2>/dev/null)" = 1 ] && pass "unknown with no time left: no second try" ||
	fail "retry_tiny: $(cat "$T/retry_tiny.n" 2>/dev/null) calls"
run noretry NPF_CLI="$T/cli2" SLURM_JOB_ID=
[ "$(cat "$T/noretry.n" 2>/dev/null)" = 1 ] && pass "not a job check (health check): no second try" ||
	fail "noretry: $(cat "$T/noretry.n" 2>/dev/null) calls"

run junk NPF_PROLOG_TIMEOUT_S=soon
grep -qx -- '--max-timeout' "$T/junk" &&
	fail "junk: --max-timeout from a non-number" ||
	pass "NPF_PROLOG_TIMEOUT_S=soon: ignored"

finish
