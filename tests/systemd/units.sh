#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static checks of the generated systemd units and snippets: systemd-analyze verify,
# the security exposure score (must be <= 2.0), sysusers.d and tmpfiles.d applied
# to a throw-away root.
# Usage: units.sh BUILD_SYSTEMD_DIR DAEMON_BINARY   (binary may be "": verify cannot run)
# Exit 77 (skipped) after the other checks when verify or the root-only snippet part could
# not run: a partial run is not a pass.
set -euo pipefail
# shellcheck source=../netns/lib.sh
. "$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../netns" && pwd)/lib.sh"

unitdir=$1
daemon=${2:-}
srcdir=$(cd "$(dirname "$0")/../../systemd" && pwd)
max_exposure=2.0

need_cmds systemd-analyze

tmp=$(mktemp -d /tmp/npfsl-units.XXXXXX)
on_exit 'rm -rf "$tmp"'

for u in netpreflightd.service netpreflightd.socket; do
	[ -f "$unitdir/$u" ] || die "$unitdir/$u not generated"
	if grep -n '@[A-Z_]*@' "$unitdir/$u"; then
		fail "$u has unsubstituted @VARS@"
	fi
done

# The installed unit points at the installed binary; systemd-analyze verify checks
# that ExecStart exists, so verify a copy pointed at the built one.
grep -q '^ExecStart=/.*/netpreflightd --config /' "$unitdir/netpreflightd.service" ||
	fail "ExecStart is not an absolute netpreflightd path with --config"
cp "$unitdir/netpreflightd.socket" "$tmp/"
sed "s|^ExecStart=[^ ]*/netpreflightd |ExecStart=${daemon:-/nonexistent/netpreflightd} |" \
	"$unitdir/netpreflightd.service" >"$tmp/netpreflightd.service"

# --offline: the units are files, not loaded in a running manager (there is none
# in CI); --threshold makes systemd-analyze itself fail above the target.
threshold=$(awk -v m="$max_exposure" 'BEGIN { printf "%d", m * 10 }')
if ! out=$(cd "$tmp" && systemd-analyze security --offline=true --threshold="$threshold" \
		./netpreflightd.service 2>&1); then
	echo "$out" | grep '✗' || true
	fail "systemd-analyze security exposure above $max_exposure"
fi
score=$(echo "$out" | sed -n 's/.*Overall exposure level for netpreflightd.service: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "no exposure score in systemd-analyze output: $out"
echo "exposure score: ${score:-?} (target <= $max_exposure)"
echo "remaining exposures (each explained in docs/systemd.md):"
echo "$out" | grep '✗' | awk '{ print "  " $2 }'
# Every remaining exposure must be accounted for in the docs.
doc="$srcdir/../docs/systemd.md"
if [ -f "$doc" ]; then
	for k in $(echo "$out" | grep '✗' | awk '{ print $2 }'); do
		# Markdown tables escape '|' as '\|'.
		grep -qF -e "$k" -e "${k//|/\\|}" "$doc" ||
			fail "exposure $k not explained in docs/systemd.md"
	done
else
	fail "docs/systemd.md missing"
fi

# Snippets: sysusers creates the account, tmpfiles the directories (root only:
# tmpfiles chowns).
if [ "$(id -u)" -eq 0 ]; then
	root="$tmp/root"
	mkdir -p "$root/etc"
	systemd-sysusers --root="$root" - <"$srcdir/sysusers.conf" ||
		fail "systemd-sysusers rejected sysusers.conf"
	grep -q '^netpreflight:' "$root/etc/passwd" || fail "sysusers did not create netpreflight"
	systemd-tmpfiles --root="$root" --create - <"$srcdir/tmpfiles.conf" 2>"$tmp/tmpfiles.err" ||
		fail "systemd-tmpfiles failed: $(cat "$tmp/tmpfiles.err")"
	[ -d "$root/var/log/netpreflight" ] || fail "tmpfiles did not create /var/log/netpreflight"
	[ "$(stat -c %a "$root/var/log/netpreflight")" = 750 ] || fail "/var/log/netpreflight not 0750"
fi

if [ -n "$daemon" ] && [ -x "$daemon" ]; then
	if ! (cd "$tmp" && systemd-analyze verify --man=no ./netpreflightd.service ./netpreflightd.socket); then
		fail "systemd-analyze verify"
	fi
fi
[ "$FAILS" -eq 0 ] || finish
[ -n "$daemon" ] && [ -x "$daemon" ] || skip "netpreflightd not built, systemd-analyze verify not run"
[ "$(id -u)" -eq 0 ] || skip "the rest passed; the sysusers/tmpfiles part needs root"
echo "units OK"
finish
