#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.prolog_verdict: what the Prolog makes of each verdict, with a stand-in CLI (no daemon,
# no namespace needed). degraded (the job check moved the whole job to a worse network,
# docs/decision.md §10) is ok for the node: exit 0, the ok branch (never the failure path),
# logged at warning; fail exits 1; unknown exits 0. The verdict comes from the JSON, also
# when the CLI's exit status says otherwise. Exit 77 when the Prolog is not built.
set -uo pipefail

# "cond && pass || fail" is used on purpose below: pass only prints, it cannot fail.
# shellcheck disable=SC2015
# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
PROLOG=$BUILD/slurm/netpreflight-prolog
[ -f "$PROLOG" ] || skip "$PROLOG not built"

T=$(mktemp -d /tmp/npf-prolog-verdict.XXXXXX) || exit 1
on_exit 'rm -rf -- "$T"'
cat >"$T/cli" <<'CLI'
#!/bin/bash
printf '%s\n' "$*" >"$ARGS"
printf '{"verdict":{"verdict":"%s","summary":"%s: stand-in"}}\n' "$VERDICT" "$VERDICT"
exit "$CLI_RC"
CLI
chmod +x "$T/cli"
# run VERDICT CLI_RC: the Prolog's exit status; its stderr (the log lines) in $T/err.
# drain is off: scontrol would ask a slurmctld that is not there.
run() {
	env -i PATH=/usr/bin:/bin VERDICT="$1" CLI_RC="$2" NPF_CLI="$T/cli" NPF_CONF=/dev/null \
		NPF_DRAIN=false NPF_PROLOG_LOG_DIR="$T/log" NPF_SOCKET="$T/none.sock" ARGS="$T/args" \
		SLURM_JOB_ID=7 SLURM_JOB_NODELIST='node[1-4]' SLURMD_NODENAME=node1 \
		bash "$PROLOG" >/dev/null 2>"$T/err"
}

# One row per verdict: the CLI's exit status, the Prolog's, and the log line it must write.
while read -r verdict cli_rc want_rc line; do
	run "$verdict" "$cli_rc"
	rc=$?
	[ "$rc" -eq "$want_rc" ] && grep -q -- "${line//_/ }" "$T/err" &&
		pass "$verdict (CLI exit $cli_rc): Prolog exit $rc, logged '${line//_/ }'" ||
		fail "$verdict (CLI exit $cli_rc): Prolog exit $rc (want $want_rc): $(cat "$T/err")"
	if [ "$verdict" = degraded ]; then
		grep -q FAIL "$T/err" && fail "degraded took the failure path: $(cat "$T/err")" ||
			pass "degraded: no failure logged, nothing drained"
	fi
done <<'CASES'
ok        0 0 job_7_on_node1:_ok_in
degraded  0 0 job_7_on_node1:_degraded_in
degraded  3 0 job_7_on_node1:_degraded_in
fail      1 1 job_7_on_node1:_FAIL_in
unknown   3 0 verdict_unknown_(exit_3)
CASES

# The job id is the tag of the job check every node's Prolog takes part in.
run ok 0
[[ " $(cat "$T/args") " == *" --job 7 "* ]] && pass "the check is a job check: --job 7" ||
	fail "no --job 7 in the CLI's arguments: $(cat "$T/args")"

finish
