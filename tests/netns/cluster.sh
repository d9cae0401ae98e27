#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.cluster: three namespaced netpreflightd nodes find the working interface and say why the others fail.
#
# Topology (namespaces npfdm<pid>-*; nothing is created in the host namespace):
#   switch namespace "sw" with bridges brfab (all nodes), brpa (node1, node2), brpb (node3 alone)
#   node<i>: fab0  198.18.1.<i>/24  veth to brfab      -> works everywhere
#            docker0 172.17.0.1/16  bridge + veth pair -> same address on every node: wrong-peer
#            part0 198.19.1.<i>/24  veth to brpa/brpb  -> node3 is cut off: timeout/unreachable
# node3 also excludes part0 from probing (--interfaces-exclude), so it announces only fab0, docker0.
# Node names resolve to the fab0 addresses through /etc/netns/<ns>/hosts.
# Scenarios: baseline, nft reject / drop sparing the daemon port, MTU black hole, stopped daemon.
# Runs as root; exit 77 (skipped) without root, network namespaces, nft or jq.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
DAEMON=${NPF_DAEMON:-$BUILD/daemon/netpreflightd}
CLI=${NPF_CLI:-$BUILD/cli/netpreflight}
TIMEOUT_S=3
# A check ends by its own deadline; this only catches a hang (3x, for ASan on a loaded box).
HANG_S=$((TIMEOUT_S * 3 + 5))

need_root
need_cmds ip nft jq setpriv script
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing (scripts/setup-deps)"
[ -x "$DAEMON" ] || skip "$DAEMON not built"
[ -x "$CLI" ] || skip "$CLI not built"
need_netns

P=npfdm$(($$ % 100000))
SW=$P-sw
NODES=(node1 node2 node3)
ns() { echo "$P-$1"; }
ip netns add "$SW" || die "netns $SW"

T=$(mktemp -d /tmp/npfdm.XXXXXX)
declare -A PIDS=()

cleanup() {
	local n pid
	[ -n "${NOTIFY_PID:-}" ] && kill "$NOTIFY_PID" 2>/dev/null
	for n in "${!PIDS[@]}"; do kill -TERM "${PIDS[$n]}" 2>/dev/null; done
	for n in "${!PIDS[@]}"; do stop_pid "${PIDS[$n]}" 10; done
	for n in "${NODES[@]}"; do
		ip netns del "$(ns "$n")" 2>/dev/null
		rm -rf "/etc/netns/$(ns "$n")"
	done
	ip netns del "$SW" 2>/dev/null
	daemon_logs_on_failure 40 "$T" "${NODES[@]}"
	rm -rf "$T"
}
on_exit cleanup

X() { local n=$1; shift; ip netns exec "$(ns "$n")" "$@"; }
S() { ip netns exec "$SW" "$@"; }

# --- build the cluster -------------------------------------------------------
S ip link set lo up
S sysctl -qw net.ipv6.conf.all.disable_ipv6=1
for br in brfab brpa brpb; do
	S ip link add "$br" type bridge stp_state 0 || die "bridge $br"
	S ip link set "$br" up
done
i=0
for n in "${NODES[@]}"; do
	i=$((i + 1))
	N=$(ns "$n")
	ip netns add "$N" || die "netns $N"
	X "$n" ip link set lo up
	X "$n" sysctl -qw net.ipv6.conf.default.accept_dad=0
	# fab0: the fabric every node shares.
	ip link add fab0 netns "$N" type veth peer name "n${i}fab" netns "$SW" || die "veth fab0 $n"
	S ip link set "n${i}fab" master brfab up
	X "$n" ip addr add "198.18.1.$i/24" dev fab0
	X "$n" ip link set fab0 up
	# docker0: the same 172.17.0.1/16 everywhere, RUNNING through a veth pair.
	X "$n" ip link add docker0 type bridge stp_state 0
	X "$n" ip addr add 172.17.0.1/16 dev docker0
	X "$n" ip link add veth0dm type veth peer name ctr0dm
	X "$n" ip link set veth0dm master docker0 up
	X "$n" ip link set ctr0dm up
	X "$n" ip link set docker0 up
	# part0: node1 and node2 share brpa; node3 sits alone on brpb.
	br=brpa
	[ "$n" = node3 ] && br=brpb
	ip link add part0 netns "$N" type veth peer name "n${i}part" netns "$SW" || die "veth part0 $n"
	S ip link set "n${i}part" master "$br" up
	X "$n" ip addr add "198.19.1.$i/24" dev part0
	X "$n" ip link set part0 up
	mkdir -p "/etc/netns/$N"
	{
		echo "127.0.0.1 localhost"
		echo "::1 localhost"
		echo "198.18.1.1 node1"
		echo "198.18.1.2 node2"
		echo "198.18.1.3 node3"
	} >"/etc/netns/$N/hosts"
done

# The docker0 bridge only turns RUNNING once its port forwards.
# Carrier comes through linkwatch, up to a second later: the daemons start on the cluster
# as built.
for n in "${NODES[@]}"; do
	wait_until 20 links_running "$(ns "$n")" fab0 part0 docker0 || die "$n: interfaces not RUNNING"
done

start_daemon() {
	local n=$1
	shift
	mkdir -p "$T/$n"
	ip netns exec "$(ns "$n")" "$DAEMON" --foreground --socket "$T/$n.sock" --node-name "$n" \
		--state-dir "$T/$n" --allow-foreign-netns yes "$@" >>"$T/$n.log" 2>&1 &
	PIDS[$n]=$!
}
daemon_answers() {
	kill -0 "${PIDS[$1]}" 2>/dev/null || return 2
	[ -S "$T/$1.sock" ] && "$CLI" --socket "$T/$1.sock" status >/dev/null 2>&1
}
wait_daemon() {
	wait_until 30 daemon_answers "$1" || die "$1: daemon did not come up ($(tail -n 5 "$T/$1.log"))"
}
# stop_daemon NODE: SIGTERM must end the daemon cleanly (status 0; under ASan/UBSan a
# leak or error report makes it non-zero) and remove its socket.
stop_daemon() {
	local n=$1 pid=${PIDS[$1]} rc
	kill -TERM "$pid"
	wait_gone 20 "$pid" || die "$n: daemon ignored SIGTERM"
	wait "$pid"
	rc=$?
	unset "PIDS[$n]"
	if [ "$rc" -eq 0 ] && ! grep -qE 'Sanitizer|runtime error' "$T/$n.log"; then
		pass "$n: clean exit on SIGTERM"
	else
		fail "$n: exit status $rc on SIGTERM: $(grep -m5 -E 'Sanitizer|runtime error|SUMMARY' "$T/$n.log")"
	fi
	[ -e "$T/$n.sock" ] && fail "$n: socket left behind after SIGTERM" || pass "$n: socket removed"
}
# node1 reads a config file (reloaded on SIGHUP below); node2 and node3 run without one.
printf '[probe]\ntimeout = 3s\ncache_ttl = 10m\n' >"$T/node1.conf"
start_daemon node1 --config "$T/node1.conf"
# node2 runs as under systemd Type=notify with WatchdogSec=1s: a datagram listener records
# what it announces.
NOTIFY_PID=""
{
	/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode(errors="replace") + "\n--\n")
        f.flush()
' "$T/notify.sock" "$T/notify.log" &
	NOTIFY_PID=$!
	wait_until 10 test -S "$T/notify.sock" || die "notify listener did not start"
	NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=1000000 start_daemon node2
}
# node3 never announces or probes part0 (command-line override of [probe] interfaces_exclude).
start_daemon node3 --interfaces-exclude 'part*'
for n in "${NODES[@]}"; do wait_daemon "$n"; done
pass "three daemons answer on their sockets"
notified() { grep -q "$1" "$T/notify.log" 2>/dev/null; }
wait_until 20 notified '^READY=1' && pass "sd_notify: READY=1" || fail "sd_notify: no READY=1"
wait_until 20 notified '^STATUS=node2: ' && pass "sd_notify: STATUS=$(grep -m1 '^STATUS=' "$T/notify.log" | cut -c8-)" ||
	fail "sd_notify: no STATUS"
wait_until 20 notified '^WATCHDOG=1' && pass "sd_notify: WATCHDOG=1 from sd-event" ||
	fail "sd_notify: no WATCHDOG=1"
kill "$NOTIFY_PID" 2>/dev/null

# --- helpers -----------------------------------------------------------------
# check NODE TAG [--json]: runs the CLI from NODE's socket, output in $T/TAG.out, exit
# status in RC. Speed is a benchmark figure (bench/); only a hang fails here.
RC=0
check() {
	local n=$1 tag=$2
	shift 2
	timeout "$HANG_S" "$CLI" --socket "$T/$n.sock" check --nodes 'node[1-3]' --timeout "$TIMEOUT_S" "$@" \
		>"$T/$tag.out" 2>"$T/$tag.err"
	RC=$?
	[ "$RC" -ne 124 ] || fail "$tag: check hung (killed after ${HANG_S} s)"
	if [ "${1:-}" = --json ]; then
		local d
		d=$(jq -r '.duration_ms | numbers' "$T/$tag.out" 2>/dev/null)
		if [ -n "$d" ]; then
			pass "$tag: reports duration_ms ($d)"
		else
			fail "$tag: no duration_ms (stderr: $(cat "$T/$tag.err"))"
		fi
	fi
}
# link TAG IFNAME PEER FIELD: prints links[].FIELD for that pair.
link() {
	jq -r --arg i "$2" --arg p "$3" \
		'[.links[] | select(.ifname == $i and .peer == $p)][0] | .'"$4"' // "missing"' \
		"$T/$1.out"
}
# expect TAG IFNAME PEER FIELD ALLOWED...: the outcome must be one of ALLOWED.
expect() {
	local tag=$1 i=$2 p=$3 f=$4 got
	shift 4
	got=$(link "$tag" "$i" "$p" "$f")
	for want in "$@"; do
		if [ "$got" = "$want" ]; then
			pass "$tag: $i -> $p $f = $got"
			return
		fi
	done
	fail "$tag: $i -> $p $f = $got, want one of: $* (detail: $(link "$tag" "$i" "$p" "${f}_detail"))"
}
expect_rc() {
	if [ "$RC" -eq "$2" ]; then pass "$1: exit status $RC"; else fail "$1: exit status $RC, want $2 ($(cat "$T/$1.err" 2>/dev/null))"; fi
}
expect_jq() {
	local tag=$1 q=$2 want=$3 got
	got=$(jq -r "$q" "$T/$tag.out" 2>/dev/null)
	if [ "$got" = "$want" ]; then pass "$tag: $q = $want"; else fail "$tag: $q = '$got', want '$want'"; fi
}
expect_grep() {
	if grep -qE -- "$2" "$T/$1.out"; then pass "$1: output has /$2/"; else fail "$1: no /$2/ in: $(cat "$T/$1.out")"; fi
}
status_json() { "$CLI" --socket "$T/$1.sock" status --json; }

# Usage errors exit 2 with a clear message.
"$CLI" --socket "$T/node1.sock" check --nodes 'node[1-' >"$T/badhl.out" 2>&1
RC=$?
expect_rc badhl 2
expect_grep badhl "bad hostlist 'node\[1-'"

# --- 1. baseline ---------------------------------------------------------------
check node1 base1 --json
expect_rc base1 0
expect_jq base1 .self node1
expect_jq base1 .verdict.verdict ok
for p in node2 node3; do
	expect base1 fab0 $p fwd ok
	expect base1 fab0 $p rev ok
	expect base1 docker0 $p fwd wrong-peer
	expect base1 docker0 $p rev wrong-peer
done
expect base1 part0 node2 fwd ok
expect base1 part0 node2 rev ok
expect base1 part0 node3 fwd timeout unreachable
expect base1 part0 node3 rev timeout unreachable
expect_jq base1 '[.verdict.interfaces[] | select(.works) | .ifname] | join(",")' fab0

check node3 base3 --json
expect_rc base3 0
for p in node1 node2; do
	expect base3 fab0 $p fwd ok
	expect base3 fab0 $p rev ok
	expect base3 docker0 $p fwd wrong-peer
done
expect_jq base3 '[.links[] | select(.ifname == "part0")] | length' 0
expect_jq base3 '[.nodes[0].candidates[].ifname] | sort | join(",")' docker0,fab0

check node2 human2
expect_rc human2 0
expect_grep human2 '^INTERFACE +node1 +node3'
expect_grep human2 '^fab0 +ok [0-9.]+ms/ok [0-9.]+ms +ok [0-9.]+ms/ok [0-9.]+ms'
expect_grep human2 '^docker0 +wrong-peer/wrong-peer +wrong-peer/wrong-peer'
expect_grep human2 '^part0 +ok [0-9.]+ms/ok [0-9.]+ms +(timeout|unreachable)/(timeout|unreachable)'
expect_grep human2 '^  docker0 -> node1: fwd wrong-peer'
expect_grep human2 '^verdict: ok: fab0 \(198\.18\.1\.0/24\) works to and from 2 peers$'
# The recommendation and NCCL's default pick are part of the report.
expect_grep human2 '^using fab0 \(198\.18\.1\.2 on 198\.18\.1\.0/24\), verified to 2 peers in [0-9]+ ms$'
expect_grep human2 "^NCCL's default would use fab0 .*which passed"
expect_grep human2 '^not chosen: docker0: 172\.17\.0\.0/16: wrong-peer \(forward\) with node[13]'

# Identical concurrent requests join one run.
starts=$(grep -c 'check node2,node3 started' "$T/node1.log")
"$CLI" --socket "$T/node1.sock" check --nodes 'node[1-3]' --json >"$T/join1.out" 2>&1 &
j1=$!
# The second request goes in once the first one's run has started (condition, not a nap).
started_more() { [ "$(grep -c 'check node2,node3 started' "$T/node1.log")" -gt "$starts" ]; }
wait_until 20 started_more || fail "join: the first check never started"
"$CLI" --socket "$T/node1.sock" check --nodes 'node3,node2' --json >"$T/join2.out" 2>&1
wait "$j1"
s1=$(jq -r .started_unix_ms "$T/join1.out")
s2=$(jq -r .started_unix_ms "$T/join2.out")
if [ "$s1" = "$s2" ] && [ "$s1" != null ] &&
	[ "$(grep -c 'check node2,node3 started' "$T/node1.log")" -eq $((starts + 1)) ]; then
	pass "join: two concurrent checks of the same peer set share one run"
else
	fail "join: runs $s1 / $s2, $(grep -c 'check node2,node3 started' "$T/node1.log") starts (was $starts)"
fi

# Status, cache and state file after a check.
status_json node1 >"$T/st1.out"
expect_jq st1 '.daemon.node' node1
expect_jq st1 '[.checks[] | select(.peers == "node2,node3") | .verdict][0]' ok
expect_jq st1 '.inventory.candidates | sort | join(",")' docker0,fab0,part0
if jq -e '.check.self == "node1" and .check.verdict.verdict == "ok"' "$T/node1/last-check.json" >/dev/null 2>&1; then
	pass "state: $T/node1/last-check.json holds the last check"
else
	fail "state: last-check.json missing or wrong"
fi

# --- local API robustness: strict frames, caps, deadlines, SO_PEERCRED policy --------
cat >"$T/api.py" <<'PYEOF'
import json, os, socket, struct, sys, time
path, mode = sys.argv[1], sys.argv[2]
fails = 0
def res(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + "api: " + what)
    fails += 0 if ok else 1
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s
def send(s, b):
    s.sendall(struct.pack(">I", len(b)) + b)
def recv(s):
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                return None
            b += c
        return b
    h = exact(4)
    if h is None:
        return None
    b = exact(struct.unpack(">I", h)[0])
    return None if b is None else json.loads(b)
def code(r):
    return r and not r.get("ok") and r["error"]["code"]
if mode == "strict":
    s = conn()
    send(s, b'{"version":1,')
    res(code(recv(s)) == "bad-request", "truncated JSON -> bad-request")
    send(s, b'{"version":1,"request":"status"}')
    r = recv(s)
    res(r and r["ok"] and r["daemon"]["node"] == "node1", "same connection still answers")
    send(s, b'{"version":2,"request":"status"}')
    res(code(recv(s)) == "unsupported-version", "version 2 -> unsupported-version")
    send(s, b'{"version":1,"request":"status","extra":1}')
    res(code(recv(s)) == "bad-request", "unknown field -> bad-request")
    send(s, b'{"version":1,"version":1,"request":"status"}')
    res(code(recv(s)) == "bad-request", "duplicate key -> bad-request")
    send(s, b'{"version":1,"request":"verdict","peers":["nodeX"]}')
    res(code(recv(s)) == "no-verdict", "verdict for an unknown peer set -> no-verdict")
    send(s, b'{"version":1,"request":"verdict","peers":["node3","node2","node1"]}')
    r = recv(s)
    res(r and r["ok"] and r["cached"] and r["check"]["self"] == "node1",
        "verdict for the checked set (any order) -> cached check")
    s.close()
    s = conn()
    s.sendall(struct.pack(">I", 65537))
    res(code(recv(s)) == "too-large", "65537-byte frame -> too-large")
    res(recv(s) is None, "connection closed after too-large")
    s.close()
    s = conn()
    s.sendall(b"\x00\x00")
    t0 = time.time()
    r = recv(s)
    # Not before the 5 s request deadline; the socket timeout (30 s) only catches a hang.
    res(r is None and time.time() - t0 >= 4, "half a header is dropped at the request deadline")
elif mode == "cap":
    held = [conn() for _ in range(64)]
    # The daemon accepts in order, so the 65th is answered after the 64 were taken.
    s = conn()
    res(code(recv(s)) == "busy", "65th concurrent client -> busy")
    for h in held:
        h.close()
    # Until the daemon has seen the closes it may still say busy: retry, bounded.
    r, end = None, time.time() + 30
    while time.time() < end:
        s = conn()
        send(s, b'{"version":1,"request":"status"}')
        r = recv(s)
        s.close()
        if r and r["ok"]:
            break
        time.sleep(0.1)
    res(r and r["ok"], "answers again once the idle clients left")
elif mode == "nobody":
    s = conn()
    send(s, b'{"version":1,"request":"status"}')
    r = recv(s)
    res(r and r["ok"], "uid %d may read status" % os.getuid())
    send(s, b'{"version":1,"request":"check","peers":["node2"]}')
    res(code(recv(s)) == "forbidden", "uid %d may not start a check" % os.getuid())
    # env: the cache is asked first (anyone may read it), the permission only when a probe
    # would have to start. Nothing was ever checked for this peer set.
    send(s, b'{"version":1,"request":"env","peers":["node1","node9"],"cached":true}')
    res(code(recv(s)) == "no-verdict", "env, cached only, nothing cached -> no-verdict")
    send(s, b'{"version":1,"request":"env","peers":["node1","node9"]}')
    r = recv(s)
    res(code(r) == "forbidden" and "nothing cached for these peers" in r["error"]["message"],
        "uid %d may not start a check through env" % os.getuid())
elif mode == "group":
    s = conn()
    send(s, b'{"version":1,"request":"check","peers":["node2"],"timeout_ms":1500}')
    r = recv(s)
    res(r and r["ok"] and r["check"]["self"] == "node1",
        "gid %d (check_group) may start a check" % os.getgid())
sys.exit(1 if fails else 0)
PYEOF
# /usr/bin/python3: an unprivileged uid can run it (pyenv shims under /root are not).
PY=/usr/bin/python3
"$PY" "$T/api.py" "$T/node1.sock" strict || FAILS=$((FAILS + 1))
"$PY" "$T/api.py" "$T/node1.sock" cap || FAILS=$((FAILS + 1))
chmod 0755 "$T"
chmod 0644 "$T/api.py"
setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$T/api.py" "$T/node1.sock" nobody ||
	FAILS=$((FAILS + 1))
if "$CLI" --socket "$T/node1.sock" status >/dev/null; then
	pass "node1 still serves after the abuse"
else
	fail "node1 stopped answering"
fi

# --- SIGHUP: a good file is applied, a bad one is refused and the old config kept ----
default_timeout() { status_json node1 | jq -r .daemon.default_timeout_ms; }
printf '[probe]\ntimeout = 2500ms\n' >"$T/node1.conf"
kill -HUP "${PIDS[node1]}"
timeout_is() { [ "$(default_timeout)" = "$1" ]; }
logged() { grep -q "$1" "$T/node1.log"; }
wait_until 20 timeout_is 2500 && pass "SIGHUP: new timeout applied" || fail "SIGHUP: timeout is $(default_timeout)"
printf '[probe]\ntimeout = soon\n' >"$T/node1.conf"
kill -HUP "${PIDS[node1]}"
wait_until 20 logged 'reload failed' && pass "SIGHUP: bad file refused" || fail "SIGHUP: bad file not reported"
[ "$(default_timeout)" = 2500 ] && pass "SIGHUP: previous config kept" || fail "SIGHUP: config lost"
# check_group lets a non-root group start probes (SO_PEERCRED gid / getgrouplist).
printf '[daemon]\ncheck_group = nogroup\n[probe]\ntimeout = 3s\n' >"$T/node1.conf"
kill -HUP "${PIDS[node1]}"
wait_until 20 timeout_is 3000 || fail "SIGHUP: check_group config not applied"
if getent group nogroup >/dev/null; then
	setpriv --reuid=65534 --regid="$(getent group nogroup | cut -d: -f3)" --clear-groups \
		"$PY" "$T/api.py" "$T/node1.sock" group || FAILS=$((FAILS + 1))
else
	fail "no group 'nogroup' for the check_group case"
fi
printf '[probe]\ntimeout = 3s\n' >"$T/node1.conf"
kill -HUP "${PIDS[node1]}"

# --- 2. nftables reject, sparing the daemon's port -------------------------------
nft_node2() {
	X node2 nft -f - <<-EOF
		table inet npfdm {
			chain input {
				type filter hook input priority 0; policy accept;
				ct state established,related accept
				iifname "fab0" tcp dport != 7718 $1
			}
		}
	EOF
}
nft_node2 "reject with tcp reset" || die "nft reject rule"
check node1 reject --json
expect_rc reject 1
expect reject fab0 node2 fwd refused
expect reject fab0 node3 fwd ok
expect reject part0 node2 fwd ok
expect_jq reject .verdict.verdict fail
check node1 reject_h
expect_rc reject_h 1
expect_grep reject_h '^verdict: fail: .*\(suspect: node2\).*fab0: 198\.18\.1\.0/24: refused \(forward\) with node2'
expect_grep reject_h '^not chosen: fab0: 198\.18\.1\.0/24: refused \(forward\) with node2'
expect_grep reject_h '^  fab0 -> node2: fwd refused'
X node2 nft delete table inet npfdm

# --- 3. nftables drop, sparing the daemon's port ---------------------------------
nft_node2 "drop" || die "nft drop rule"
check node1 drop --json
expect_rc drop 1
expect drop fab0 node2 fwd timeout
expect drop fab0 node3 fwd ok
# On a terminal a slow check shows progress on stderr (a pty from script(1)).
# script(1) is in bsdutils (Essential: yes): always there.
script -qec "'$CLI' --socket '$T/node1.sock' check --nodes 'node[1-3]' --timeout $TIMEOUT_S" \
	/dev/null >"$T/tty.out" 2>&1
expect_grep tty 'checking 3 nodes\.\.\. [0-9.]+s of 3\.0s'
expect_grep tty 'verdict: fail: '
X node2 nft delete table inet npfdm

# --- 4. MTU black hole: jumbo part0 on node1/node2, 1500 on node2's switch port ---
gen_before=$(status_json node1 | jq -r .inventory.generation)
# veths hand GSO super-packets across a smaller-MTU peer untouched, which real wires never
# do: gso_max_segs 1 makes every skb one wire-sized frame.
for i in 1 2; do
	X "node$i" ip link set part0 mtu 9000 gso_max_segs 1
	S ip link set "n${i}part" mtu 9000
done
S ip link set n2part mtu 1500
# The daemon rebuilds after a 200 ms debounce; the MTU change must drop the cached check.
gen_moved() { [ "$(status_json node1 | jq -r .inventory.generation)" != "$gen_before" ]; }
wait_until 20 gen_moved || fail "mtu: inventory generation never moved"
status_json node1 >"$T/st2.out"
expect_jq st2 '.inventory.generation != '"$gen_before" true
expect_jq st2 '[.checks[] | select(.peers == "node2,node3")] | length' 0
check node1 mtu --json
expect mtu part0 node2 fwd bulk-stall
expect mtu part0 node2 rev bulk-stall
expect mtu fab0 node2 fwd ok
expect mtu fab0 node2 rev ok
expect_rc mtu 0
for i in 1 2; do
	X "node$i" ip link set part0 mtu 1500 gso_max_segs 65535
	S ip link set "n${i}part" mtu 1500
done

# --- 4b. a bridge that comes up just before a check (docker starting its bridge at boot) ---
# The daemon learns of it by a netlink event it debounces; a check asked for right after
# the kernel reported the bridge RUNNING must still probe it (it used to say "not announced
# as a candidate ... newer than the check").
X node1 ip link add br-late type bridge stp_state 0
X node1 ip addr add 198.20.0.1/24 dev br-late
X node1 ip link add vethlate type veth peer name ctrlate
X node1 ip link set vethlate master br-late up
X node1 ip link set ctrlate up
X node1 ip link set br-late up
wait_until 20 links_running "$(ns node1)" br-late || fail "late: br-late never RUNNING"
check node1 late --json
expect_jq late '[.nodes[0].candidates[].ifname] | index("br-late") != null' true
expect_jq late '[.links[] | select(.ifname == "br-late")] | length' 2
X node1 ip link del br-late
X node1 ip link del vethlate

# --- 5. a peer whose daemon is stopped ------------------------------------------
stop_daemon node3
check node1 down --json
expect_rc down 3 # unknown: never ok, and not a failure either
expect_jq down '.nodes[] | select(.name == "node3") | .available' false
expect down fab0 node3 fwd peer-unavailable
expect down fab0 node2 fwd ok
expect_jq down .verdict.verdict unknown
check node1 down_h
expect_rc down_h 3
expect_grep down_h '^verdict: unknown: .*peer-unavailable \(forward\) with node3'
expect_grep down_h '^provisional choice \(not verified\): fab0 '

# A client of a stopped daemon gets a clear error and exit status 2.
"$CLI" --socket "$T/node3.sock" status >"$T/gone.out" 2>&1
RC=$?
expect_rc gone 2
expect_grep gone 'daemon not running at'

stop_daemon node1
stop_daemon node2

finish
