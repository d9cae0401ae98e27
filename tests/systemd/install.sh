#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` into a DESTDIR: units, sysusers/tmpfiles snippets, config, Slurm scripts
# and plugin land where systemd and Slurm look, and the installed unit verifies against the
# installed binary (systemd-analyze verify --root).
# Usage: install.sh BUILD_DIR
set -euo pipefail
# shellcheck source=../netns/lib.sh
. "$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../netns" && pwd)/lib.sh"

build=$1
cache=$build/CMakeCache.txt
[ -f "$cache" ] || die "no $cache"
get() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
prefix=$(get CMAKE_INSTALL_PREFIX)
unitdir=$(get NPF_SYSTEMD_UNITDIR)
sysusersdir=$(get NPF_SYSUSERSDIR)
tmpfilesdir=$(get NPF_TMPFILESDIR)
[ -x "$build/daemon/netpreflightd" ] || skip "netpreflightd not built"
need_cmds systemd-analyze

dest=$(mktemp -d /tmp/npfsl-install.XXXXXX)
on_exit 'rm -rf "$dest"'

DESTDIR=$dest cmake --install "$build" >"$dest.log" 2>&1 || { cat "$dest.log"; rm -f "$dest.log"; exit 1; }
rm -f "$dest.log"

sysconf=$prefix/etc
[ "$prefix" = /usr ] && sysconf=/etc
for f in "$unitdir/netpreflightd.service" "$unitdir/netpreflightd.socket" \
	"$sysusersdir/netpreflight.conf" "$tmpfilesdir/netpreflight.conf" \
	"$prefix/sbin/netpreflightd" "$prefix/libexec/netpreflight/netpreflight-prolog" \
	"$prefix/libexec/netpreflight/netpreflight-taskprolog" \
	"$prefix/share/doc/netpreflight/systemd.md" "$prefix/share/doc/netpreflight/slurm.md" \
	"$prefix/share/doc/netpreflight/metrics.md"; do
	[ -e "$dest$f" ] || fail "not installed: $f"
done
if [ -f "$build/slurm/spank_netpreflight.so" ]; then
	ls "$dest$prefix"/lib*/netpreflight/spank_netpreflight.so >/dev/null 2>&1 ||
		fail "SPANK plugin not installed under $prefix/lib*/netpreflight"
fi
if [ -f "$(dirname "$0")/../../systemd/netpreflight.conf.example" ]; then
	[ -f "$dest$sysconf/netpreflight/netpreflight.conf" ] || fail "no $sysconf/netpreflight/netpreflight.conf"
	# A second install keeps a locally edited configuration.
	echo "# local edit" >>"$dest$sysconf/netpreflight/netpreflight.conf"
	DESTDIR=$dest cmake --install "$build" >/dev/null 2>&1 || fail "second install failed"
	grep -q '^# local edit$' "$dest$sysconf/netpreflight/netpreflight.conf" ||
		fail "reinstall overwrote the local configuration"
fi

# The installed unit points at the installed daemon and the installed config.
exec_line=$(grep '^ExecStart=' "$dest$unitdir/netpreflightd.service")
[ "$exec_line" = "ExecStart=$prefix/sbin/netpreflightd --config $sysconf/netpreflight/netpreflight.conf" ] ||
	fail "unexpected $exec_line"
# The Slurm scripts carry absolute paths (Slurm sets no PATH).
grep -q "cli=\${NPF_CLI:-$prefix/bin/netpreflight}" "$dest$prefix/libexec/netpreflight/netpreflight-prolog" ||
	fail "prolog does not point at $prefix/bin/netpreflight"

# Verify the installed units with their paths mapped into the DESTDIR (a DESTDIR is
# no bootable root: --root would miss sysinit.target and /bin/kill).
mkdir -p "$dest/verify"
sed "s|^ExecStart=$prefix/|ExecStart=$dest$prefix/|" "$dest$unitdir/netpreflightd.service" \
	>"$dest/verify/netpreflightd.service"
cp "$dest$unitdir/netpreflightd.socket" "$dest/verify/"
if ! out=$(cd "$dest/verify" && systemd-analyze verify --man=no \
	./netpreflightd.service ./netpreflightd.socket 2>&1); then
	echo "$out"
	fail "systemd-analyze verify --root on the installed units"
fi
[ "$FAILS" -eq 0 ] && echo "install OK ($prefix)"
finish
