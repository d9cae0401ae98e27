#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pkg.completion: the bash completion offers what the CLI accepts. Every command of
# `netpreflight help`, each option of its usage line and of `netpreflight CMD --help`,
# and the --format values of the usage line must be completed; a command or option
# added to the CLI without its completion fails here. The CLI is deliberately not on
# PATH: the completion's fallback for commands missing from its table (the usage line
# of an installed "netpreflight help") must not hide a missing table entry.
# Usage: completion.sh COMPLETION_FILE CLI
set -uo pipefail
# shellcheck source=../netns/lib.sh
. "$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../netns" && pwd)/lib.sh"

comp=$1
cli=$2
bc=/usr/share/bash-completion/bash_completion
[ -f "$bc" ] || skip "bash-completion not installed (scripts/setup-deps)"

# Completions for a command line whose last word is being completed (may be "").
complete_line() { # words...
	bash --norc --noprofile -c '
		source "$1" >/dev/null 2>&1
		source "$2"
		shift 2
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		_netpreflight netpreflight "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$bc" "$comp" "$@"
}

help=$("$cli" help)
cmds=$(sed -n 's/^  netpreflight \([a-z][a-z-]*\).*/\1/p' <<<"$help")
[ -n "$cmds" ] || fail "no commands in 'netpreflight help'"
got=$(complete_line netpreflight "")
for c in $cmds help version; do
	grep -qx "$c" <<<"$got" || fail "'netpreflight <TAB>' does not offer $c"
done
got=$(complete_line netpreflight --)
for o in --socket --sysfs-root --json; do
	grep -qx -- "$o" <<<"$got" || fail "'netpreflight --<TAB>' does not offer $o"
done
n=0
for c in $cmds; do
	got=$(complete_line netpreflight "$c" --)
	for o in $( { grep "^  netpreflight $c\b" <<<"$help"; "$cli" "$c" --help 2>&1; } |
		grep -o -- '--[a-z][a-z-]*' | sort -u); do
		n=$((n + 1))
		grep -qx -- "$o" <<<"$got" || fail "'netpreflight $c --<TAB>' does not offer $o"
	done
done
# --format values as the usage line lists them: "--format shell|taskprolog|...".
formats=$(grep -o -- '--format [a-z|-]*' <<<"$help" | head -1 | cut -d' ' -f2 | tr '|' '\n')
[ -n "$formats" ] || fail "no --format values in 'netpreflight help'"
got=$(complete_line netpreflight env --format "")
for f in $formats; do
	grep -qx "$f" <<<"$got" || fail "'env --format <TAB>' does not offer $f"
done
got=$(complete_line netpreflight env --format=ta)
grep -qx taskprolog <<<"$got" || fail "'env --format=ta<TAB>' does not offer taskprolog"
got=$(complete_line netpreflight --socket /run/x.sock st)
grep -qx status <<<"$got" || fail "'--socket PATH st<TAB>' does not offer status"

[ "$FAILS" -eq 0 ] && echo "completion OK: $(echo $cmds | wc -w) commands, $n options, formats $(echo $formats)"
finish
