#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.foreign_netns: a local API client in another network namespace (a container on a
# bridge, an ordinary pod) is refused with foreign-netns; one in the daemon's namespace is served.
#
# Topology (namespaces npffn<pid>-*; nothing is created in the host namespace):
#   node1, node2: fab0 198.18.3.<i>/24 on a veth pair, a daemon each.
#   ctr: a container-style namespace of its own, attached to node1 through a docker0-like
#        bridge (172.17.0.1/16 on node1, eth0 172.17.0.2 in ctr). It reaches node1's daemon
#        only through the socket: by path, and bind-mounted into a private mount namespace
#        as a container runtime does.
# Runs as root; exit 77 (skipped) without root, network namespaces, unshare or jq.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
DAEMON=${NPF_DAEMON:-$BUILD/daemon/netpreflightd}
CLI=${NPF_CLI:-$BUILD/cli/netpreflight}

need_root
need_cmds ip jq unshare python3
[ -x "$DAEMON" ] || skip "$DAEMON not built"
[ -x "$CLI" ] || skip "$CLI not built"

P=npffn$(($$ % 100000))
NODES=(node1 node2)
ns() { echo "$P-$1"; }
need_netns

T=$(mktemp -d /tmp/npffn.XXXXXX)
declare -A PIDS=()

cleanup() {
	local n
	for n in "${!PIDS[@]}"; do kill -TERM "${PIDS[$n]}" 2>/dev/null; done
	for n in "${!PIDS[@]}"; do stop_pid "${PIDS[$n]}"; done
	for n in "${NODES[@]}" ctr; do
		ip netns del "$(ns "$n")" 2>/dev/null
		rm -rf "/etc/netns/$(ns "$n")"
	done
	daemon_logs_on_failure 30 "$T" "${NODES[@]}"
	rm -rf "$T"
}
on_exit cleanup
X() {
	local n=$1
	shift
	nsx "$(ns "$n")" "$@"
}

# --- topology ----------------------------------------------------------------
ip netns add "$(ns node1)" || die "netns node1"
ip netns add "$(ns node2)" || die "netns node2"
ip netns add "$(ns ctr)" || die "netns ctr"
for n in "${NODES[@]}" ctr; do
	X "$n" ip link set lo up
	X "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	mkdir -p "/etc/netns/$(ns "$n")"
	printf '127.0.0.1 localhost\n198.18.3.1 node1\n198.18.3.2 node2\n' >"/etc/netns/$(ns "$n")/hosts"
done
ip link add fab0 netns "$(ns node1)" type veth peer name fab0 netns "$(ns node2)" || die "veth fab0"
for i in 1 2; do
	X "node$i" ip addr add "198.18.3.$i/24" dev fab0
	X "node$i" ip link set fab0 up
done
X node1 ip link add docker0 type bridge stp_state 0
X node1 ip addr add 172.17.0.1/16 dev docker0
ip link add vethctr netns "$(ns node1)" type veth peer name eth0 netns "$(ns ctr)" || die "veth ctr"
X node1 ip link set vethctr master docker0 up
X node1 ip link set docker0 up
X ctr ip addr add 172.17.0.2/16 dev eth0
X ctr ip link set eth0 up

# A veth end only gets its carrier once both are up: wait for it, or a daemon would
# start without its fabric address and the first check find no listener there.
for n in "${NODES[@]}"; do
	wait_until 30 links_running "$(ns "$n")" fab0 || die "$n: fab0 has no carrier"
done
for n in "${NODES[@]}"; do
	mkdir -p "$T/$n" "$T/$n-run"
	printf '[probe]\ntimeout = 3s\ncache_ttl = 10m\n' >"$T/$n.conf"
	# Not through X: a backgrounded function is a subshell, and $! would not be the daemon.
	ip netns exec "$(ns "$n")" "$DAEMON" --foreground --config "$T/$n.conf" --socket "$T/$n-run/netpreflight.sock" \
		--node-name "$n" --state-dir "$T/$n" >>"$T/$n.log" 2>&1 &
	PIDS[$n]=$!
done
# daemon_up NODE: its API answers (0), not yet (1), or the daemon died (2: stop waiting).
daemon_up() {
	X "$1" "$CLI" --socket "$T/$1-run/netpreflight.sock" status >/dev/null 2>&1 && return 0
	npf_pid_gone "${PIDS[$1]}" && return 2
	return 1
}
daemon_up_or_dead() { daemon_up "$1" || [ $? -eq 2 ]; }
for n in "${NODES[@]}"; do
	wait_until 30 daemon_up_or_dead "$n" && daemon_up "$n" || die "$n: daemon did not come up ($(tail -n 5 "$T/$n.log"))"
done
SOCK=$T/node1-run/netpreflight.sock

# --- same namespace: served ----------------------------------------------------
X node1 "$CLI" --socket "$SOCK" env --nodes node1,node2 --format shell >"$T/same.out" 2>"$T/same.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^export NCCL_SOCKET_IFNAME=' "$T/same.out"; then
	pass "same namespace: env served ($(grep -c '^export' "$T/same.out") variables)"
else
	fail "same namespace: exit $rc, want 0 with variables ($(head -c 300 "$T/same.err"))"
fi

# --- container-style namespace, socket by path ---------------------------------
# The cache holds a fresh verdict now: without the check, --cached would be served.
X ctr "$CLI" --socket "$SOCK" env --nodes node1,node2 --cached >"$T/ctr.out" 2>"$T/ctr.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'foreign-netns' "$T/ctr.err" && grep -q 'host network' "$T/ctr.err" &&
	! grep -q 'NCCL_' "$T/ctr.out"; then
	pass "other namespace: env refused (foreign-netns, exit 2)"
else
	fail "other namespace: exit $rc, want 2 with foreign-netns ($(head -c 300 "$T/ctr.err"))"
fi
for cmd in "check --nodes node1,node2" "status"; do
	X ctr "$CLI" --socket "$SOCK" $cmd >/dev/null 2>"$T/ctr2.err"
	rc=$?
	case $cmd in
	status) want=0 ;;
	*) want=2 ;;
	esac
	if [ "$rc" -eq "$want" ]; then
		pass "other namespace: '${cmd%% *}' exit $rc"
	else
		fail "other namespace: '${cmd%% *}' exit $rc, want $want ($(head -c 200 "$T/ctr2.err"))"
	fi
done

# The raw API: the error code and that no inventory or verdict leaks.
X ctr python3 - "$SOCK" >"$T/api.out" 2>&1 <<'EOF'
import json, socket, struct, sys
def ask(req):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    b = json.dumps(req).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
    hdr = b""
    while len(hdr) < 4:
        c = s.recv(4 - len(hdr))
        if not c: break
        hdr += c
    n = struct.unpack(">I", hdr)[0]
    body = b""
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c: break
        body += c
    return json.loads(body)
for req in ({"version": 1, "request": "inventory"},
            {"version": 1, "request": "verdict", "peers": ["node1", "node2"]},
            {"version": 1, "request": "env", "peers": ["node1", "node2"], "cached": True}):
    r = ask(req)
    print(req["request"], r.get("ok"), (r.get("error") or {}).get("code"),
          "leak" if ("inventory" in r or "variables" in r or "recommendation" in r) else "clean")
EOF
if [ "$(grep -c ' False foreign-netns clean$' "$T/api.out")" -eq 3 ]; then
	pass "other namespace: inventory, verdict, env refused on the wire, nothing leaked"
else
	fail "other namespace: raw API: $(tr '\n' ';' <"$T/api.out" | head -c 400)"
fi

# --- container-style namespace, socket bind-mounted as a runtime does ----------
mkdir -p "$T/ctr-run"
X ctr unshare --mount --propagation private sh -c \
	'mount --bind "$1" "$2" && exec "$3" --socket "$2/netpreflight.sock" env --nodes node1,node2 --cached' \
	sh "$T/node1-run" "$T/ctr-run" "$CLI" >/dev/null 2>"$T/bind.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'foreign-netns' "$T/bind.err"; then
	pass "bind-mounted socket, other namespace: refused (foreign-netns)"
else
	fail "bind-mounted socket, other namespace: exit $rc ($(head -c 300 "$T/bind.err"))"
fi
# The same bind mount in the daemon's own namespace (host-network container): served.
X node1 unshare --mount --propagation private sh -c \
	'mount --bind "$1" "$2" && exec "$3" --socket "$2/netpreflight.sock" env --nodes node1,node2 --cached --format shell' \
	sh "$T/node1-run" "$T/ctr-run" "$CLI" >"$T/bind-same.out" 2>"$T/bind.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^export NCCL_SOCKET_IFNAME=' "$T/bind-same.out"; then
	pass "bind-mounted socket, host network: served"
else
	fail "bind-mounted socket, host network: exit $rc ($(head -c 300 "$T/bind.err"))"
fi
grep -qE 'Sanitizer|runtime error' "$T/node1.log" && fail "node1: sanitizer report in the log"

finish
