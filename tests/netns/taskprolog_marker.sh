#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.taskprolog_marker: the TaskProlog applies the marker rules of slurm/envmarker.c (the
# SPANK plugin's, unit-tested by test_envmarker) on the same case table,
# tests/fixtures/envmarker/cases.txt, so the two implementations cannot drift apart.
# No namespaces or root needed: the daemon is replaced by a fake CLI printing the reply.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
PROLOG=$SRC/slurm/netpreflight-taskprolog
CASES=$SRC/tests/fixtures/envmarker/cases.txt
T=$(mktemp -d /tmp/npftpm.XXXXXX)
on_exit 'rm -rf "$T"'
N=0

# The fake CLI: prints $T/reply as TaskProlog lines, or fails like a daemon with no verdict.
cat >"$T/cli" <<'CLI'
#!/bin/bash
if [ -s "$FAKE_REPLY" ]; then
	while read -r kv; do printf 'export %s\n' "$kv"; done <"$FAKE_REPLY"
	exit 0
fi
echo "netpreflight: daemon: nothing cached (no-verdict)" >&2
exit 2
CLI
chmod +x "$T/cli"

trim() { local s=$1; s=${s#"${s%%[! ]*}"}; s=${s%"${s##*[! ]}"}; printf '%s' "$s"; }

while IFS= read -r line; do
	case $line in '#'* | '') continue ;; esac
	IFS='|' read -r name task reply self want <<<"$line"
	name=$(trim "$name")
	task=$(trim "$task")
	reply=$(trim "$reply")
	self=$(trim "$self")
	want=$(trim "$want")
	: >"$T/reply"
	[ "$reply" = - ] || tr ' ' '\n' <<<"$reply" >"$T/reply"
	envargs=()
	[ "$task" = - ] || read -r -a envargs <<<"$task"
	# The task's environment only: what Slurm gives a TaskProlog, plus the case's.
	got=$(env -i PATH=/usr/bin:/bin SLURM_JOB_NODELIST=node1,node2 SLURMD_NODENAME="$self" \
		NPF_CLI="$T/cli" NPF_SOCKET=/nonexistent FAKE_REPLY="$T/reply" "${envargs[@]}" \
		bash "$PROLOG" | while IFS= read -r out; do
		case $out in
		"export "*) printf 'set:%s\n' "${out#export }" ;;
		"unset "*) printf 'unset:%s\n' "${out#unset }" ;;
		*) printf 'junk:%s\n' "$out" ;;
		esac
	done | tr '\n' ' ')
	got=$(trim "$got")
	[ -n "$got" ] || got=-
	N=$((N + 1))
	if [ "$got" = "$want" ]; then
		pass "$name"
	else
		fail "$name"
		printf '  got  %s\n  want %s\n' "$got" "$want"
	fi
done <"$CASES"
[ "$N" -ge 10 ] || fail "only $N cases read from $CASES"
finish
