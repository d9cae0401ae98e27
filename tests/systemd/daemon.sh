#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netpreflightd's systemd contract without systemd: READY=1 and watchdog pings on a fake
# NOTIFY_SOCKET owned by this test, and socket activation with a passed fd through
# systemd-socket-activate (queries made before the daemon is ready wait, not fail).
# Usage: daemon.sh DAEMON_BINARY CLI_BINARY   (skips when either is "")
set -euo pipefail

daemon=${1:-}
cli=${2:-}
if [ -z "$daemon" ] || [ ! -x "$daemon" ] || [ -z "$cli" ] || [ ! -x "$cli" ]; then
	echo "SKIP: netpreflightd or netpreflight not built"
	exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 missing (scripts/setup-deps)"; exit 77; }
command -v systemd-socket-activate >/dev/null ||
	{ echo "SKIP: systemd-socket-activate missing (systemd package)"; exit 77; }

tmp=$(mktemp -d /tmp/npfsl-daemon.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# A probe port of our own so a daemon already running on 7718 does not matter.
port=$((20000 + RANDOM % 20000))

wait_until() { # timeout_s command...
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# --- 1. sd_notify: READY=1, then WATCHDOG=1 at least every half WATCHDOG_USEC ---
# The receiver timestamps each datagram so the ping interval can be checked.
cat >"$tmp/notify.py" <<'EOF'
import os, socket, sys, time
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
t0 = time.monotonic()
with open(log, "w", buffering=1) as f:
    while True:
        msg = s.recv(4096).decode(errors="replace")
        for line in msg.split("\n"):
            f.write("%.3f %s\n" % (time.monotonic() - t0, line))
EOF
python3 "$tmp/notify.py" "$tmp/notify.sock" "$tmp/notify.log" &
pids+=($!)
wait_until 5 test -S "$tmp/notify.sock" || { echo "FAIL: notify receiver did not start"; exit 1; }

mkdir -p "$tmp/st1"
watchdog_usec=1000000
NOTIFY_SOCKET="$tmp/notify.sock" WATCHDOG_USEC=$watchdog_usec \
	"$daemon" --foreground --socket "$tmp/d1.sock" --node-name npfsl1 \
	--state-dir "$tmp/st1" --port "$port" >"$tmp/d1.log" 2>&1 &
dpid=$!
pids+=($dpid)
wait_until 10 grep -q ' READY=1$' "$tmp/notify.log" || bad "no READY=1 within 10 s"
sleep 3.2
kill "$dpid" 2>/dev/null || true
wait "$dpid" 2>/dev/null || true
# Pings during the 3 s after READY: at least every 0.5 s (half the interval), allow
# scheduling slack up to 0.8 s between two pings.
awk -v lim=0.8 '
	/ READY=1$/ { ready = $1 }
	/ WATCHDOG=1$/ && ready != "" { if (last != "" && $1 - last > lim) gap = 1; last = $1; n++ }
	END {
		if (n < 4) { print "FAIL: only " n " WATCHDOG=1 after READY=1"; exit 1 }
		if (gap) { print "FAIL: a gap between WATCHDOG=1 pings exceeded " lim " s"; exit 1 }
		print "watchdog pings after READY: " n
	}' "$tmp/notify.log" || fail=1
grep ' STATUS=' "$tmp/notify.log" | head -1 || echo "note: no STATUS= line"
if [ $fail -ne 0 ]; then
	echo "--- notify log"; cat "$tmp/notify.log"; echo "--- daemon log"; cat "$tmp/d1.log"
fi

# --- 2. socket activation: the daemon answers on the fd systemd passes ---
# systemd-socket-activate binds and listens first, then execs the daemon with
# LISTEN_FDS=1; our query connects right away, before the daemon is ready, and
# must be answered once it is (that is what makes restarts invisible to the
# Prolog). --socket names a path the daemon must NOT create when given an fd.
mkdir -p "$tmp/st2"
systemd-socket-activate -l "$tmp/act.sock" \
	"$daemon" --foreground --socket "$tmp/not-used.sock" --node-name npfsl2 \
	--state-dir "$tmp/st2" --port "$((port + 1))" >"$tmp/d2.log" 2>&1 &
pids+=($!)
wait_until 5 test -S "$tmp/act.sock" || bad "systemd-socket-activate did not listen"
if out=$(timeout 20 "$cli" --socket "$tmp/act.sock" status --json 2>&1); then
	echo "status through the passed fd: ok"
else
	bad "status through the socket-activated fd failed: $out"
	cat "$tmp/d2.log"
fi
[ -e "$tmp/not-used.sock" ] && bad "daemon bound its own socket although systemd passed one"

# --- 3. unprivileged, as the unit runs it: no capability at all, no new privileges ---
# (User=, CapabilityBoundingSet= empty, NoNewPrivileges=yes): the inventory and the
# local API must work without root.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$tmp/st3"
	chown nobody "$tmp/st3"
	chmod 0755 "$tmp"
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		--bounding-set=-all --no-new-privs \
		"$daemon" --foreground --socket "$tmp/st3/d3.sock" --node-name npfsl3 \
		--state-dir "$tmp/st3" --port "$((port + 2))" >"$tmp/d3.log" 2>&1 &
	pids+=($!)
	wait_until 10 test -S "$tmp/st3/d3.sock" || bad "unprivileged daemon did not create its socket"
	if out=$(timeout 10 "$cli" --socket "$tmp/st3/d3.sock" status --json 2>&1); then
		echo "unprivileged daemon answers status"
	else
		bad "unprivileged daemon: status failed: $out"
		cat "$tmp/d3.log"
	fi
	grep -i -E 'permission|denied|EPERM' "$tmp/d3.log" && bad "unprivileged daemon logged permission errors"
fi

[ $fail -eq 0 ] && echo "daemon systemd contract OK"
exit $fail
