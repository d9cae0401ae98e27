#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.prolog_budget: the Prolog's check budget (issue 11). With a stand-in CLI that records
# its arguments (no daemon, no namespace needed): by default the Prolog passes no budget, so
# the daemon sizes it from the job; NPF_PROLOG_TIMEOUT_S (PrologEpilogTimeout) becomes a
# --max-timeout of what is left of it; NPF_TIMEOUT_MS sets --timeout outright; an absurd
# PrologEpilogTimeout is clamped to the API's range. Exit 77 when the Prolog is not built.
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${NPF_BUILD_DIR:-$SRC/build}
PROLOG=$BUILD/slurm/netpreflight-prolog
[ -f "$PROLOG" ] || { echo "SKIP: $PROLOG not built"; exit 77; }

T=$(mktemp -d /tmp/npf-prolog-budget.XXXXXX) || exit 1
trap 'rm -rf -- "$T"' EXIT
cat >"$T/cli" <<'CLI'
#!/bin/bash
printf '%s\n' "$@" >"$ARGS_FILE"
echo '{"verdict":{"verdict":"ok","summary":"stand-in"}}'
CLI
chmod +x "$T/cli"
FAILS=0
run() { # name env... : runs the Prolog, leaves the CLI's arguments in $T/name
	local name=$1
	shift
	env -i PATH=/usr/bin:/bin ARGS_FILE="$T/$name" NPF_CLI="$T/cli" NPF_CONF=/dev/null \
		NPF_PROLOG_LOG_DIR="$T/log" NPF_SOCKET="$T/none.sock" SLURM_JOB_ID=7 \
		SLURM_JOB_NODELIST='node[1-4]' SLURMD_NODENAME=node1 "$@" \
		bash "$PROLOG" >/dev/null 2>&1
	local rc=$?
	[ "$rc" -eq 0 ] || { echo "FAIL $name: exit $rc"; FAILS=$((FAILS + 1)); }
}
arg_after() { grep -A1 -x -- "$2" "$T/$1" | sed -n 2p; }

run default
if grep -qx -- '--timeout' "$T/default" || grep -qx -- '--max-timeout' "$T/default"; then
	echo "FAIL default: a budget was passed: $(tr '\n' ' ' <"$T/default")"; FAILS=$((FAILS + 1))
else
	echo "ok   default: no budget passed (the daemon sizes it from the job)"
fi

run prolog NPF_PROLOG_TIMEOUT_S=30
m=$(arg_after prolog --max-timeout)
# 30 s less a tenth and 3 s, less what the script itself took: 23 s at most, above 20.
if awk -v m="$m" 'BEGIN { exit !(m > 20 && m <= 24) }'; then
	echo "ok   PrologEpilogTimeout 30 s: --max-timeout $m"
else
	echo "FAIL PrologEpilogTimeout 30 s: --max-timeout '$m'"; FAILS=$((FAILS + 1))
fi
grep -qx -- '--timeout' "$T/prolog" && { echo "FAIL prolog: --timeout passed too"; FAILS=$((FAILS + 1)); }

run huge NPF_PROLOG_TIMEOUT_S=65534
m=$(arg_after huge --max-timeout)
[ "$m" = 300.000 ] && echo "ok   PrologEpilogTimeout 65534 s: clamped to $m" ||
	{ echo "FAIL huge: --max-timeout '$m'"; FAILS=$((FAILS + 1)); }

run tiny NPF_PROLOG_TIMEOUT_S=2
m=$(arg_after tiny --max-timeout)
[ "$m" = 1.000 ] && echo "ok   PrologEpilogTimeout 2 s: floor $m" ||
	{ echo "FAIL tiny: --max-timeout '$m'"; FAILS=$((FAILS + 1)); }

run explicit NPF_TIMEOUT_MS=1500 NPF_PROLOG_TIMEOUT_S=30
t=$(arg_after explicit --timeout)
[ "$t" = 1.500 ] && ! grep -qx -- '--max-timeout' "$T/explicit" &&
	echo "ok   NPF_TIMEOUT_MS=1500: --timeout $t only" ||
	{ echo "FAIL explicit: $(tr '\n' ' ' <"$T/explicit")"; FAILS=$((FAILS + 1)); }

run junk NPF_PROLOG_TIMEOUT_S=soon
grep -qx -- '--max-timeout' "$T/junk" &&
	{ echo "FAIL junk: --max-timeout from a non-number"; FAILS=$((FAILS + 1)); } ||
	echo "ok   NPF_PROLOG_TIMEOUT_S=soon: ignored"

[ "$FAILS" -eq 0 ] && echo "netns.prolog_budget: passed" || echo "netns.prolog_budget: failed"
[ "$FAILS" -eq 0 ]
