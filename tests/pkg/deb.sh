#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pkg.deb: the Debian packages, end to end, the way an operator gets them.
#  1. dpkg-buildpackage -us -uc -b in a clean copy of the source tree (tracked and
#     untracked-but-not-ignored files: what a checkout has), DEB_BUILD_OPTIONS=nocheck;
#  2. lintian: no errors, and every warning tag explained in docs/packaging.md;
#  3. install both packages on this machine (apt-get, so dependencies resolve) and
#     check the layout: binaries, units (systemd-analyze verify, enabled, not started),
#     the sysusers user, tmpfiles directories, the conffile = the documented example,
#     man pages (man -l, no groff warnings), completion, SPANK plugin in slurmd's
#     PluginDir, plugstack.conf.d snippet, Prolog scripts;
#  4. the installed daemon, run by hand as the packaged user in two network namespaces,
#     answers the installed CLI: status, a 2-node check (ok), env --cached;
#  5. dpkg --purge: no file of either package, no state/log directory, no unit
#     symlink is left; the system user stays (Debian keeps system users).
# Root only (exit 77 otherwise). Refuses (77) to run where netpreflight is already
# installed: it would replace and purge the operator's package. Registered only in
# the non-sanitizer build (tests/CMakeLists.txt): the package is built from source
# by dpkg-buildpackage with Debian's flags, so a second run under ASan would test
# the same thing again.
set -uo pipefail

# "cond && pass || fail" is used on purpose below: pass only prints, it cannot fail.
# shellcheck disable=SC2015
# shellcheck source=../netns/lib.sh
. "$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../netns" && pwd)/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (installs and purges packages, network namespaces)"
# All in scripts/setup-deps: a missing one is a broken machine, not a reason to skip.
for c in dpkg-buildpackage dh lintian apt-get ip jq man systemd-analyze setpriv getfacl; do
	command -v "$c" >/dev/null || die "'$c' not installed (scripts/setup-deps)"
done
for p in netpreflight slurm-netpreflight; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
		skip "package $p is installed on this machine; this test would replace and purge it"
	fi
done

T=$(mktemp -d /tmp/npfpkg.XXXXXX)
P=npfpkg$(($$ % 100000))
NSA=$P-a
NSB=$P-b
declare -a PIDS=()
INSTALLED=0

stop_daemons() {
	local pid
	for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
	PIDS=()
}

cleanup() {
	stop_daemons
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "/etc/netns/$NSA" "/etc/netns/$NSB"
	if [ "$INSTALLED" -eq 1 ]; then
		dpkg --purge slurm-netpreflight netpreflight >/dev/null 2>&1
	fi
	case ${MADE_PROMDIR:-0} in
	1) rm -rf /var/lib/prometheus/node-exporter ;;
	2) rm -rf /var/lib/prometheus ;;
	esac
	if [ "$FAILS" -ne 0 ]; then
		for f in "$T"/*.log; do
			[ -f "$f" ] && { echo "--- $(basename "$f")"; tail -n 40 "$f"; }
		done
	fi
	rm -rf "$T"
}
on_exit cleanup

# --- 1. build from a clean copy ----------------------------------------------------
mkdir -p "$T/src"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$SRC" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
		tar -C "$T/src" -xf - || die "copying the source tree"
else
	tar -C "$SRC" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -C "$T/src" -xf - ||
		die "copying the source tree"
fi
[ -d "$T/src/debian" ] || die "no debian/ in the source tree"
version=$(cd "$T/src" && dpkg-parsechangelog -S Version)
upstream=$(sed -n 's/^project(netpreflight VERSION \([0-9.]*\).*/\1/p' "$T/src/CMakeLists.txt")
[ "$version" = "$upstream" ] && pass "debian/changelog version $version = CMake project version" ||
	fail "debian/changelog says $version, CMakeLists.txt $upstream"

if (cd "$T/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b"
else
	die "dpkg-buildpackage failed (build.log below)"
fi
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=("$T/netpreflight_${version}_$arch.deb" "$T/slurm-netpreflight_${version}_$arch.deb")
for d in "${debs[@]}"; do [ -f "$d" ] || die "not built: $(basename "$d")"; done
changes=$T/netpreflight_${version}_$arch.changes

# --- 2. lintian ---------------------------------------------------------------------
lintian --fail-on error "$changes" >"$T/lintian.log" 2>&1
lrc=$?
if [ $lrc -eq 0 ]; then
	pass "lintian: no errors"
else
	cat "$T/lintian.log"
	fail "lintian reports errors (exit $lrc)"
fi
for tag in $(awk '$1 == "W:" { print $3 }' "$T/lintian.log" | sort -u); do
	grep -q -- "$tag" "$SRC/docs/packaging.md" && pass "lintian warning $tag is explained in docs/packaging.md" ||
		fail "lintian warning $tag is not explained in docs/packaging.md"
done

# --- 3. install and check the layout ------------------------------------------------
# node_exporter's textfile directory (Debian's prometheus-node-exporter path), owned by
# root and closed to others, so that only the tmpfiles ACL lets the daemon write there.
promdir=/var/lib/prometheus/node-exporter
MADE_PROMDIR=0
if [ ! -e "$promdir" ]; then
	[ -e /var/lib/prometheus ] || MADE_PROMDIR=2
	[ $MADE_PROMDIR -eq 0 ] && MADE_PROMDIR=1
	install -d -m 0755 "$promdir" || die "mkdir $promdir"
fi
# apt-get resolves the packages' dependencies (jq, slurm-wlm-basic-plugins, ...).
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${debs[@]}" \
	>"$T/install.log" 2>&1; then
	INSTALLED=1
	pass "apt-get install of both packages"
else
	INSTALLED=1
	die "installing the packages failed (install.log below)"
fi
dpkg -L netpreflight slurm-netpreflight >"$T/files.lst"

for f in /usr/bin/netpreflight /usr/sbin/netpreflightd \
	/usr/libexec/netpreflight/netpreflight-prolog /usr/libexec/netpreflight/netpreflight-taskprolog; do
	[ -x "$f" ] && pass "$f installed, executable" || fail "$f missing or not executable"
done
v=$(/usr/bin/netpreflight --version 2>&1)
[ "$v" = "netpreflight $version" ] && pass "netpreflight --version: $v" || fail "netpreflight --version: $v"
v=$(/usr/sbin/netpreflightd --version 2>&1)
[ "$v" = "netpreflightd $version" ] && pass "netpreflightd --version: $v" || fail "netpreflightd --version: $v"

unitdir=/lib/systemd/system
if out=$(systemd-analyze verify --man=yes "$unitdir/netpreflightd.service" \
	"$unitdir/netpreflightd.socket" 2>&1); then
	pass "systemd-analyze verify --man=yes on the installed units (Documentation= man page exists)"
else
	echo "$out"
	fail "systemd-analyze verify on the installed units"
fi
doc=$(sed -n 's|^Documentation=.*file://\([^ ]*\).*|\1|p' "$unitdir/netpreflightd.service")
[ -n "$doc" ] && [ -f "$doc" ] && pass "the unit's Documentation= file exists ($doc)" ||
	fail "the unit's Documentation= file '$doc' is missing"
[ -L /etc/systemd/system/multi-user.target.wants/netpreflightd.service ] &&
	[ -L /etc/systemd/system/sockets.target.wants/netpreflightd.socket ] &&
	pass "units enabled (multi-user.target, sockets.target)" || fail "units not enabled"
if [ -d /run/systemd/system ]; then
	systemctl is-active -q netpreflightd.service && fail "netpreflightd.service was started on install" ||
		pass "netpreflightd.service not started on install"
fi

pw=$(getent passwd netpreflight)
case $pw in
netpreflight:*:/var/lib/netpreflight:/usr/sbin/nologin) pass "sysusers user: $pw" ;;
*) fail "sysusers user netpreflight: '$pw'" ;;
esac
getent group netpreflight >/dev/null && pass "group netpreflight" || fail "no group netpreflight"
st=$(stat -c '%U:%G %a' /var/lib/netpreflight 2>&1)
[ "$st" = "netpreflight:netpreflight 750" ] && pass "/var/lib/netpreflight $st" || fail "/var/lib/netpreflight: $st"
st=$(stat -c '%U:%G %a' /var/log/netpreflight 2>&1)
[ "$st" = "root:root 750" ] && pass "/var/log/netpreflight $st" || fail "/var/log/netpreflight: $st"

conf=/etc/netpreflight/netpreflight.conf
example=/usr/share/doc/netpreflight/netpreflight.conf.example
dpkg-query -W -f='${Conffiles}\n' netpreflight | grep -q " $conf " &&
	pass "$conf is a conffile" || fail "$conf is not a conffile"
cmp -s "$conf" "$example" && pass "$conf = $example" || fail "$conf differs from $example"
/usr/sbin/netpreflightd --config "$conf" --check-config >"$T/check-config.log" 2>&1 &&
	pass "netpreflightd --check-config on the installed configuration" ||
	fail "the installed configuration does not parse"

for m in 1/netpreflight.1 5/netpreflight.conf.5 8/netpreflightd.8; do
	page=/usr/share/man/man${m}.gz
	[ -f "$page" ] || { fail "$page not installed"; continue; }
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	text=$(MANWIDTH=80 man -l "$page" 2>/dev/null)
	if [ -z "$warn" ] && grep -q '^NAME' <<<"$text" && grep -q '^SEE ALSO' <<<"$text"; then
		pass "man -l $page ($(wc -l <<<"$text") lines, no groff warnings)"
	else
		echo "$warn"
		fail "man -l $page"
	fi
done
man -w netpreflight.conf >/dev/null 2>&1 && pass "man finds netpreflight.conf(5)" ||
	fail "man -w netpreflight.conf"

bcdir=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null)
bcdir=${bcdir:-/usr/share/bash-completion/completions}
[ -f "$bcdir/netpreflight" ] && pass "bash completion in $bcdir" || fail "no $bcdir/netpreflight"

plugdir=/usr/lib/$multiarch/slurm-wlm
plugin=$plugdir/spank_netpreflight.so
[ -f "$plugin" ] && pass "SPANK plugin $plugin" || fail "no $plugin"
# Same folder as Slurm's own plugins (slurmd's compiled-in PluginDir on Debian).
dpkg -S "$plugdir" 2>/dev/null | grep -q slurm-wlm-basic-plugins &&
	pass "$plugdir is Slurm's plugin folder (slurm-wlm-basic-plugins)" ||
	fail "$plugdir is not slurm-wlm-basic-plugins' plugin folder"
for sym in slurm_spank_init slurm_spank_user_init plugin_name plugin_type spank_plugin_version; do
	nm -D --defined-only "$plugin" 2>/dev/null | grep -qw "$sym" || fail "plugin does not export $sym"
done
snippet=/etc/slurm/plugstack.conf.d/netpreflight.conf
if [ -f "$snippet" ] && grep -q '^optional spank_netpreflight.so' "$snippet"; then
	pass "plugstack.conf.d snippet ($(grep '^optional' "$snippet"))"
else
	fail "no plugstack.conf.d snippet naming spank_netpreflight.so"
fi
grep -q '^include /etc/slurm/plugstack.conf.d/\*.conf' /etc/slurm/plugstack.conf 2>/dev/null &&
	pass "Slurm's plugstack.conf includes plugstack.conf.d/*.conf" ||
	fail "/etc/slurm/plugstack.conf does not include plugstack.conf.d"
grep -q 'cli=${NPF_CLI:-/usr/bin/netpreflight}' /usr/libexec/netpreflight/netpreflight-prolog &&
	pass "Prolog calls /usr/bin/netpreflight" || fail "Prolog does not call /usr/bin/netpreflight"

# --- 4. the installed daemon and CLI in two namespaces --------------------------------
ip netns add "$NSA" 2>/dev/null || die "cannot create network namespaces"
ip netns add "$NSB" || die "ip netns add $NSB"
ip link add vpkga netns "$NSA" type veth peer name vpkgb netns "$NSB" || die "veth pair"
ip -n "$NSA" addr add 198.18.77.1/24 dev vpkga
ip -n "$NSB" addr add 198.18.77.2/24 dev vpkgb
ip -n "$NSA" link set vpkga up
ip -n "$NSB" link set vpkgb up
# The second end reports carrier a moment after "up"; start the daemons on RUNNING links.
wait_until 30 links_running "$NSA" vpkga && wait_until 30 links_running "$NSB" vpkgb ||
	die "veth pair has no carrier"
for ns in "$NSA" "$NSB"; do
	ip -n "$ns" link set lo up
	mkdir -p "/etc/netns/$ns"
	printf '127.0.0.1 localhost\n198.18.77.1 pkg1\n198.18.77.2 pkg2\n' >"/etc/netns/$ns/hosts"
done
chmod 755 "$T"
for n in 1 2; do
	install -d -o netpreflight -g netpreflight -m 0750 "$T/run-$n" "$T/state-$n"
done
# As systemd would run it: the packaged user, the packaged configuration; the socket
# and state directory are the test's (node 2 cannot share node 1's /var/lib).
start_daemon() { # ns n [options]
	ip netns exec "$1" setpriv --reuid=netpreflight --regid=netpreflight --init-groups \
		/usr/sbin/netpreflightd -f --config "$conf" \
		--node-name "pkg$2" --socket "$T/run-$2/npf.sock" --state-dir "$T/state-$2" "${@:3}" \
		>"$T/daemon-$2.log" 2>&1 &
	PIDS+=($!)
}
start_daemon "$NSA" 1 --textfile-dir "$promdir"
start_daemon "$NSB" 2
cli() { # ns node args...
	local ns=$1 n=$2
	shift 2
	ip netns exec "$ns" /usr/bin/netpreflight --socket "$T/run-$n/npf.sock" "$@"
}
for n in 1 2; do
	ns=$NSA
	[ $n = 2 ] && ns=$NSB
	wait_until 60 cli "$ns" $n status >/dev/null 2>&1 || die "installed daemon pkg$n does not answer on its socket"
done
st=$(cli "$NSA" 1 status --json 2>"$T/status.err")
jq -e --arg v "$version" '.daemon.version == $v and .daemon.node == "pkg1"' <<<"$st" >/dev/null &&
	pass "netpreflight status --json: daemon $version, node pkg1" || fail "status --json: $st"
u=$(ps -o user= -p "${PIDS[0]}" 2>/dev/null)
[ "$u" = netpreflight ] && pass "daemon runs as the packaged user" || fail "daemon runs as '$u'"
cli "$NSA" 1 check --nodes 'pkg[1-2]' --json >"$T/check.json" 2>"$T/check.log"
rc=$?
verdict=$(jq -r '.verdict.verdict // empty' "$T/check.json" 2>/dev/null)
[ $rc -eq 0 ] && [ "$verdict" = ok ] && pass "check --nodes 'pkg[1-2]': ok (exit 0)" ||
	fail "check --nodes 'pkg[1-2]': exit $rc, verdict '$verdict'"
envout=$(cli "$NSA" 1 env --nodes 'pkg[1-2]' --cached --format shell 2>"$T/env.log")
grep -q "^export NCCL_SOCKET_IFNAME='=vpkga'$" <<<"$envout" &&
	pass "env --cached: NCCL_SOCKET_IFNAME='=vpkga' (exact-match form)" ||
	fail "env --cached: '$envout' ($(head -c 400 "$T/env.log"))"
# The ACL from the tmpfiles snippet is what lets the daemon's user write here.
wait_until 30 test -s "$promdir/netpreflight.prom"
owner=$(stat -c %U "$promdir/netpreflight.prom" 2>/dev/null)
[ "$owner" = netpreflight ] && pass "metrics written to $promdir through the tmpfiles ACL" ||
	fail "no netpreflight.prom in $promdir (owner '$owner')"
stop_daemons

# --- 5. purge --------------------------------------------------------------------------
if dpkg --purge slurm-netpreflight netpreflight >"$T/purge.log" 2>&1; then
	INSTALLED=0
	pass "dpkg --purge"
else
	die "dpkg --purge failed (purge.log below)"
fi
left=0
while read -r f; do
	[ -d "$f" ] && continue # shared folders (/usr/bin, /etc/slurm, ...)
	if [ -e "$f" ] || [ -L "$f" ]; then
		echo "left after purge: $f"
		left=1
	fi
done <"$T/files.lst"
for f in /etc/netpreflight /var/lib/netpreflight /var/log/netpreflight \
	/etc/systemd/system/multi-user.target.wants/netpreflightd.service \
	/etc/systemd/system/sockets.target.wants/netpreflightd.socket \
	/var/lib/systemd/deb-systemd-helper-enabled/netpreflightd.service.dsh-also \
	/usr/libexec/netpreflight; do
	if [ -e "$f" ] || [ -L "$f" ]; then
		echo "left after purge: $f"
		left=1
	fi
done
[ -e "$promdir/netpreflight.prom" ] && { echo "left after purge: $promdir/netpreflight.prom"; left=1; }
getfacl -p "$promdir" 2>/dev/null | grep -q '^user:netpreflight:' &&
	{ echo "left after purge: the ACL entry for netpreflight on $promdir"; left=1; }
[ $left -eq 0 ] && pass "nothing of the packages is left after purge" || fail "files left after purge"
getent passwd netpreflight >/dev/null && pass "system user netpreflight kept after purge (Debian practice)" ||
	fail "the system user was removed on purge"

finish
