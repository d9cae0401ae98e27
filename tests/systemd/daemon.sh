#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netpreflightd's systemd contract without systemd: READY=1 and watchdog pings on a fake
# NOTIFY_SOCKET owned by this test, and socket activation with a passed fd through
# systemd-socket-activate (queries made before the daemon is ready wait, not fail).
# Usage: daemon.sh DAEMON_BINARY CLI_BINARY   (skips when either is "")
set -euo pipefail

# shellcheck source=../netns/lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../netns/lib.sh"
daemon=${1:-}
cli=${2:-}
if [ -z "$daemon" ] || [ ! -x "$daemon" ] || [ -z "$cli" ] || [ ! -x "$cli" ]; then
	skip "netpreflightd or netpreflight not built"
fi
need_cmds python3 systemd-socket-activate setpriv

tmp=$(mktemp -d /tmp/npfsl-daemon.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do stop_pid "$p" 10; done
	rm -rf "$tmp"
}
on_exit cleanup
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# A probe port of our own so a daemon already running on 7718 does not matter.
port=$((20000 + RANDOM % 20000))

# --- 1. sd_notify: READY=1, then WATCHDOG=1 pings keep coming ---
# The receiver timestamps each datagram (for the log shown on failure). How regular the
# pings are is sd-event's timer and the machine's load, not asserted here.
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
wait_until 30 grep -q ' READY=1$' "$tmp/notify.log" || bad "no READY=1 within 30 s"
# pings_after_ready N: at least N WATCHDOG=1 datagrams after READY=1.
pings_after_ready() {
	awk -v want="$1" '/ READY=1$/ { r = 1 } / WATCHDOG=1$/ && r { n++ } END { exit !(n >= want) }' \
		"$tmp/notify.log"
}
if wait_until 30 pings_after_ready 4; then
	echo "watchdog pings after READY: at least 4"
else
	bad "fewer than 4 WATCHDOG=1 after READY=1 within 30 s"
fi
grep -q ' STATUS=' "$tmp/notify.log" || bad "no STATUS= line"
stop_pid "$dpid" 10
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
if [ "$(id -u)" -ne 0 ]; then
	[ $fail -eq 0 ] || exit 1
	skip "part 3 (unprivileged daemon) needs root to drop privileges"
else
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
