#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pkg.man: the built man pages cover what the programs accept.
#  - netpreflight.conf(5) documents every key the daemon knows, in the right section,
#    with its option, and no key the daemon does not know. The keys come from
#    `netpreflightd --check-config --print` (npf_config_dump(), every key of the table)
#    and `netpreflightd --help` (one option per key), not from the generator itself.
#  - netpreflight(1) has a subsection for every command of `netpreflight help` and
#    names each option of its usage line and of `netpreflight COMMAND --help`, and the
#    exit statuses 0-3.
#  - netpreflightd(8) names every fixed option of `netpreflightd --help`.
#  - no page makes groff warn.
# Usage: man.sh MAN_BUILD_DIR DAEMON CLI (MAN_BUILD_DIR empty: scdoc missing, skip).
set -uo pipefail
# shellcheck source=../netns/lib.sh
. "$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../netns" && pwd)/lib.sh"

mandir=$1
daemon=$2
cli=$3
[ -n "$mandir" ] || skip "man pages not built (scdoc missing: scripts/setup-deps)"
need_cmds man col
render() { LC_ALL=C.UTF-8 MANWIDTH=250 man -l "$1" 2>/dev/null | col -b; }

for p in netpreflight.1 netpreflightd.8 netpreflight.conf.5; do
	[ -f "$mandir/$p" ] || { fail "$mandir/$p not built"; continue; }
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$mandir/$p" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "$p: groff warnings: $w"
done

# --- netpreflight.conf(5) ---------------------------------------------------------------
empty=$(mktemp /tmp/npfman.XXXXXX)
on_exit 'rm -f "$empty"'
dump=$("$daemon" --config "$empty" --check-config --print) || fail "netpreflightd --check-config --print"
mapfile -t want < <(awk '/^\[/ { s = substr($1, 2, length($1) - 2); next }
	/^[a-z_]+ =/ { print s "." $1 }' <<<"$dump")
[ ${#want[@]} -ge 10 ] || fail "only ${#want[@]} keys in the dump"
page=$(render "$mandir/netpreflight.conf.5")
grep -q "undocumented value type" <<<"$page" &&
	fail "netpreflight.conf(5): a value type has no description in man/gen_conf_man.c (type_doc)"
# Under KEYS: "   [section]" subsection lines, then "       key = TYPE" entries.
mapfile -t have < <(awk '/^KEYS/ { k = 1; next } /^[A-Z]/ { k = 0 }
	k && /^   \[[a-z_]+\]$/ { s = $1; gsub(/[][]/, "", s); next }
	k && /^       [a-z_]+ = [A-Z]+$/ { print s "." $1 }' <<<"$page")
for k in "${want[@]}"; do
	printf '%s\n' "${have[@]}" | grep -qxF "$k" || fail "netpreflight.conf(5) does not document [${k%%.*}] ${k#*.}"
done
for k in "${have[@]}"; do
	printf '%s\n' "${want[@]}" | grep -qxF "$k" || fail "netpreflight.conf(5) documents unknown key $k"
done
for o in $("$daemon" --help | sed -n 's/^      \(--[a-z-]*\) [A-Z]* *\[.*/\1/p'); do
	grep -qe "Option: $o " <<<"$page" || fail "netpreflight.conf(5) does not name option $o"
done
echo "netpreflight.conf(5): ${#have[@]} keys documented, ${#want[@]} known"

# --- netpreflight(1) ------------------------------------------------------------------
page=$(render "$mandir/netpreflight.1")
cmds=$("$cli" help | sed -n 's/^  netpreflight \([a-z][a-z-]*\).*/\1/p')
[ -n "$cmds" ] || fail "no commands in 'netpreflight help'"
for c in $cmds; do
	grep -qx "   $c" <<<"$page" || fail "netpreflight(1) has no subsection for command '$c'"
	opts=$( { "$cli" help | grep "^  netpreflight $c\b"; "$cli" "$c" --help 2>&1; } |
		grep -o -- '--[a-z][a-z-]*' | sort -u)
	for o in $opts; do
		grep -q -- "$o\b" <<<"$page" || fail "netpreflight(1) does not mention $o ($c)"
	done
done
for s in 0 1 2 3; do
	awk '/^EXIT STATUS/ { e = 1; next } /^[A-Z]/ { e = 0 } e' <<<"$page" | grep -qx "       $s" ||
		fail "netpreflight(1) EXIT STATUS lacks $s"
done
echo "netpreflight(1): commands $(echo $cmds)"

# --- netpreflightd(8) -----------------------------------------------------------------
page=$(render "$mandir/netpreflightd.8")
for o in $("$daemon" --help | sed '/^every configuration key/q' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$o\b" <<<"$page" || fail "netpreflightd(8) does not mention $o"
done

[ "$FAILS" -eq 0 ] && echo "man pages OK"
finish
