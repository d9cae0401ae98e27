#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.hostile: real netpreflightd daemons under attack and faults (issue 12).
#
# Topology (namespaces npfho<pid>-*; nothing in the host namespace): one switch namespace with
# bridge brfab; node1..node3 with fab0 198.18.1.<i>/24; an attacker namespace "atk" with
# 198.18.1.66/24 on the same bridge. The attacker tool (tests/tools/npf_attack) talks only to
# node2's address. Every attack is bounded in connections and time.
#
# During each attack: a check among the healthy nodes, from node1 and from the victim node2,
# gives the baseline verdict (never fail; one rerun allowed for an unknown under load), the
# victim's local API answers, its RSS stays within the baseline + 128 MiB, and no daemon dies.
# Then: port squatting before the daemon starts, a cluster key (unauthenticated peer, replayed
# authenticated frame, a node without the key), and faults mid-check (peer killed, peer
# restarted with a new instance, link down, address removed, the local daemon restarted under
# socket activation while a client waits): each ends within its timeout, never with a fail the
# fault did not earn.
#
# Issue 19 (no healthy node drained): a data-port racer running as `nobody` on node2 that
# connects to every new listener it sees in /proc/net/tcp before the prober (checks stay ok);
# with the key, a replayed data token (dropped, the prober still gets in), an on-path impostor
# answering DATA_AUTH without the reply MAC (nftables sends node1's data connections to it: the
# paths are not-probed, never ok or fail), a pre-auth churn from the prober's own address
# (evicted probes end not-probed, never refused), and a check_group user (groups from the
# connection; address literals refused).
#
# Figures go to stdout as "figure:" lines (docs/security.md quotes them).
# Runs as root; exit 77 (skipped) without root, network namespaces or jq.
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
DAEMON=${NPF_DAEMON:-$BUILD/daemon/netpreflightd}
CLI=${NPF_CLI:-$BUILD/cli/netpreflight}
ATK=$BUILD/tests/tools/npf_attack
TIMEOUT_S=3
HOLD_MS=60000 # attackers hold this long at most; the suite kills them when done
IDLE_CONNS=${NPF_HOSTILE_IDLE:-10000}

need_root
need_cmds jq ip tc systemd-socket-activate setpriv nft
for b in "$DAEMON" "$CLI" "$ATK"; do [ -x "$b" ] || skip "$b not built"; done

P=npfho$(($$ % 100000))
SW=$P-sw
NODES=(node1 node2 node3)
ns() { echo "$P-$1"; }
need_netns

T=$(mktemp -d /tmp/npfho.XXXXXX)
declare -A PIDS=()
APID=""

cleanup() {
	local n pid
	[ -n "$APID" ] && kill -KILL "$APID" 2>/dev/null
	[ -n "${SQ:-}" ] && kill -KILL "$SQ" 2>/dev/null
	[ -n "${RPID:-}" ] && kill -KILL "$RPID" 2>/dev/null
	for n in "${!PIDS[@]}"; do kill -TERM "${PIDS[$n]}" 2>/dev/null; done
	for n in "${!PIDS[@]}"; do stop_pid "${PIDS[$n]}"; done
	for n in "${NODES[@]}" atk; do
		ip netns del "$(ns "$n")" 2>/dev/null
		rm -rf "/etc/netns/$(ns "$n")"
	done
	ip netns del "$SW" 2>/dev/null
	daemon_logs_on_failure 30 "$T" "${NODES[@]}"
	rm -rf "$T"
}
on_exit cleanup

X() {
	local n=$1
	shift
	nsx "$(ns "$n")" "$@"
}
S() { nsx "$SW" "$@"; }

# --- the network ---------------------------------------------------------------
ip netns add "$SW" || die "netns $SW"
S ip link set lo up
S ip link add brfab type bridge stp_state 0 || die "bridge"
S ip link set brfab up
i=0
for n in "${NODES[@]}" atk; do
	i=$((i + 1))
	addr=198.18.1.$i
	[ "$n" = atk ] && addr=198.18.1.66
	ip netns add "$(ns "$n")" || die "netns $n"
	X "$n" ip link set lo up
	X "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip link add fab0 netns "$(ns "$n")" type veth peer name "h${i}fab" netns "$SW" || die "veth $n"
	S ip link set "h${i}fab" master brfab up
	X "$n" ip addr add "$addr/24" dev fab0
	X "$n" ip link set fab0 up
	mkdir -p "/etc/netns/$(ns "$n")"
	printf '127.0.0.1 localhost\n198.18.1.1 node1\n198.18.1.2 node2\n198.18.1.3 node3\n' \
		>"/etc/netns/$(ns "$n")/hosts"
done

# --- daemons -------------------------------------------------------------------
# Under ASan freed memory sits in a 256 MiB quarantine, which would read as growth: keep it
# small so RSS measures what the daemon holds.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16
start_daemon() {
	local n=$1
	shift
	mkdir -p "$T/$n"
	rm -f "$T/$n.sock"
	ip netns exec "$(ns "$n")" "$DAEMON" --foreground --socket "$T/$n.sock" --node-name "$n" \
		--state-dir "$T/$n" --cache-ttl 1s --allow-foreign-netns yes "$@" >>"$T/$n.log" 2>&1 &
	PIDS[$n]=$!
}
# daemon_up NODE: its API answers; ends the wait early (exit 2) when the daemon died.
daemon_up() {
	[ -S "$T/$1.sock" ] && "$CLI" --socket "$T/$1.sock" status >/dev/null 2>&1 && return 0
	npf_pid_gone "${PIDS[$1]}" && return 2
	return 1
}
daemon_up_or_dead() { daemon_up "$1" || [ $? -eq 2 ]; }
wait_daemon() {
	wait_until 30 daemon_up_or_dead "$1" && daemon_up "$1" ||
		die "$1: daemon did not come up ($(tail -n 5 "$T/$1.log"))"
}
stop_daemon() { # NODE [SIGNAL]
	local n=$1 pid=${PIDS[$1]:-}
	[ -n "$pid" ] || return 0
	[ "${2:-TERM}" = TERM ] || kill "-$2" "$pid" 2>/dev/null
	stop_pid "$pid"
	unset "PIDS[$n]"
}
alive() {
	local n
	for n in "${NODES[@]}"; do
		[ -n "${PIDS[$n]:-}" ] || continue
		kill -0 "${PIDS[$n]}" 2>/dev/null || { fail "$1: $n's daemon died"; return 1; }
	done
	if grep -qE 'Sanitizer|runtime error' "$T"/node*.log; then
		fail "$1: sanitizer report: $(grep -m3 -hE 'Sanitizer|runtime error' "$T"/node*.log)"
		return 1
	fi
	return 0
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/${PIDS[$1]}/status" 2>/dev/null || echo 0; }

# verdict FROM TAG: checks node[1-3] from FROM; prints the verdict; output in $T/TAG.json.
verdict() {
	local from=$1 tag=$2
	# From the node's own namespace: the daemon serves checks only to clients there.
	X "$from" "$CLI" --socket "$T/$from.sock" check --nodes 'node[1-3]' --timeout "$TIMEOUT_S" --json \
		>"$T/$tag.json" 2>"$T/$tag.err"
	jq -r '.verdict.verdict // "none"' "$T/$tag.json" 2>/dev/null || echo none
}
# expect_verdict FROM TAG WANT: WANT, or one rerun when the first try was unknown (load);
# a fail is never retried.
expect_verdict() {
	local from=$1 tag=$2 want=$3 got
	got=$(verdict "$from" "$tag")
	if [ "$got" = unknown ] && [ "$want" != unknown ]; then
		got=$(verdict "$from" "$tag.rerun")
		tag=$tag.rerun
	fi
	if [ "$got" = "$want" ]; then
		pass "$tag: check from $from: $got"
	else
		fail "$tag: check from $from: '$got', want '$want': $(jq -r '.verdict.summary' "$T/$tag.json" 2>/dev/null) $(cat "$T/$tag.err")"
	fi
}
api_answers() { # NODE TAG
	if "$CLI" --socket "$T/$1.sock" status --json >"$T/$2.status" 2>&1 &&
		jq -e '.daemon.node' "$T/$2.status" >/dev/null 2>&1; then
		pass "$2: $1's local API answers"
	else
		fail "$2: $1's local API did not answer: $(head -c 300 "$T/$2.status")"
	fi
}

attacker_ready_or_gone() {
	grep -q '^ready' "$T/atk.$1.out" 2>/dev/null || npf_pid_gone "$APID"
}
# attack TAG MODE ARGS...: starts npf_attack in the attacker namespace against node2 and
# waits (bounded) until it reports the attack in place.
attack() {
	local tag=$1
	shift
	# Not through X: a backgrounded function is a subshell, and $! would not be the attacker.
	ip netns exec "$(ns atk)" "$ATK" "$1" 198.18.1.2 7718 "${@:2}" >"$T/atk.$tag.out" \
		2>"$T/atk.$tag.err" &
	APID=$!
	wait_until 60 attacker_ready_or_gone "$tag"
	grep -q '^ready' "$T/atk.$tag.out" || fail "$tag: attacker did not start: $(cat "$T/atk.$tag.err")"
}
attack_end() { # TAG: stops the attacker; prints its figures
	local tag=$1
	kill -TERM "$APID" 2>/dev/null
	wait "$APID" 2>/dev/null
	APID=""
	echo "figure: $tag: $(grep -h '^ready' "$T/atk.$tag.out" | head -1 | cut -c7-) $(grep -h '^inputs' "$T/atk.$tag.out" | tail -1)"
}

for n in "${NODES[@]}"; do start_daemon "$n"; done
for n in "${NODES[@]}"; do wait_daemon "$n"; done
pass "three daemons up (no cluster key)"
if jq -e '.daemon.probe_auth == "none"' <("$CLI" --socket "$T/node1.sock" status --json) >/dev/null; then
	pass "status says probe_auth none without a key"
else
	fail "status lacks probe_auth none"
fi
grep -q 'NOT authenticated' "$T/node1.log" && pass "the log warns about unauthenticated peers" ||
	fail "no warning about unauthenticated peers in the log"

BASE=$(verdict node1 base)
[ "$BASE" = ok ] && pass "baseline: check from node1 is ok" ||
	die "baseline: check from node1 is '$BASE': $(cat "$T/base.err") $(jq -r .verdict.summary "$T/base.json")"
RSS0=$(rss_kb node2)
echo "figure: node2 RSS before attacks: ${RSS0} kB"

# --- attacks, each against node2 ----------------------------------------------------
run_attack() { # TAG MODE ARGS...
	local tag=$1 rss
	attack "$@"
	expect_verdict node1 "$tag.n1" "$BASE"
	expect_verdict node2 "$tag.n2" "$BASE"
	api_answers node2 "$tag"
	rss=$(rss_kb node2)
	if [ "$rss" -le $((RSS0 + 131072)) ]; then
		pass "$tag: node2 RSS ${rss} kB (baseline ${RSS0} kB)"
	else
		fail "$tag: node2 RSS ${rss} kB grew past baseline ${RSS0} kB + 128 MiB"
	fi
	echo "figure: $tag: node2 RSS ${rss} kB"
	alive "$tag" && pass "$tag: every daemon alive"
	attack_end "$tag"
}
run_attack garbage garbage
run_attack idle idle "$IDLE_CONNS" "$HOLD_MS"
run_attack flood flood 5000
run_attack exhaust exhaust 256 "$HOLD_MS"
run_attack exhaust-close exhaust-close 256
run_attack slowloris slowloris 300 "$HOLD_MS"
run_attack reverse reverse 64 "$HOLD_MS"

# --- issue 19: a local user races the prober to node2's data ports --------------------------
# npf_attack race runs as nobody inside node2 and connects to each new listener on node2's
# address as soon as /proc/net/tcp shows it. Before issue 19 the first connection took the
# one-shot listener and the real prober was refused: a false fail. Several checks give it
# many listeners to race; every one must stay ok (one rerun for an unknown under load).
RACE_CHECKS=${NPF_HOSTILE_RACE_CHECKS:-8}
RACE_SEEN=0
RACE_IN=0
racer_ready() { grep -q '^ready' "$T/race.$1.out" 2>/dev/null || npf_pid_gone "$RPID"; }
race_attack() { # TAG
	local tag=$1 i from got nfail=0 nok=0 listeners raced
	chmod 0755 "$T"
	# Slow what flows into node2 (when tbf exists): a data SYN queued behind another
	# probe's bulk lets node2's listener wait long enough for the racer to see it.
	S tc qdisc add dev h2fab root tbf rate 1mbit burst 3kb latency 2s 2>/dev/null
	ip netns exec "$(ns node2)" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$ATK" race 198.18.1.2 7718 "$HOLD_MS" >"$T/race.$tag.out" 2>"$T/race.$tag.err" &
	RPID=$!
	wait_until 30 racer_ready "$tag"
	grep -q '^ready uid 65534' "$T/race.$tag.out" ||
		fail "$tag: the racer did not start as nobody: $(cat "$T/race.$tag.out" "$T/race.$tag.err")"
	for i in $(seq 1 "$RACE_CHECKS"); do
		# node1 and node3 at once: their probes of node2 queue behind each other.
		verdict node3 "$tag.node3.$i" >"$T/$tag.node3.$i.v" &
		verdict node1 "$tag.node1.$i" >"$T/$tag.node1.$i.v"
		wait $!
		for from in node1 node3; do
			got=$(cat "$T/$tag.$from.$i.v")
			[ "$got" = unknown ] && got=$(verdict "$from" "$tag.$from.$i.rerun")
			if [ "$got" = ok ]; then
				nok=$((nok + 1))
			else
				nfail=$((nfail + 1))
				fail "$tag: check $i from $from under the racer: '$got': $(jq -r .verdict.summary "$T/$tag.$from.$i.json" 2>/dev/null)"
			fi
		done
	done
	kill -TERM "$RPID" 2>/dev/null
	wait "$RPID" 2>/dev/null
	RPID=""
	S tc qdisc del dev h2fab root 2>/dev/null
	[ "$nfail" -eq 0 ] && pass "$tag: $nok checks under the data-port racer, all ok"
	listeners=$(awk '/^listeners/ {print $2}' "$T/race.$tag.out")
	raced=$(awk '/^listeners/ {print $4}' "$T/race.$tag.out")
	# Whether the racer sees a listener in time is up to the scheduler: both runs together
	# must have seen some (checked after key.race), each run's figure says how many.
	RACE_SEEN=$((RACE_SEEN + ${listeners:-0}))
	RACE_IN=$((RACE_IN + ${raced:-0}))
	echo "figure: $tag: $nok/$((nok + nfail)) checks ok; racer: $(grep -h '^listeners' "$T/race.$tag.out")"
}
race_attack race
alive "after the attacks" && pass "no daemon crashed under attack"


# --- port squatting before the daemon starts ------------------------------------------
stop_daemon node3
ip netns exec "$(ns node3)" "$ATK" squat 198.18.1.3 7718 "$HOLD_MS" >"$T/squat.out" 2>&1 &
SQ=$!
wait_until 30 grep -q '^ready' "$T/squat.out" || fail "squat: the squatter did not start: $(cat "$T/squat.out")"
start_daemon node3
wait_daemon node3
lerr=$("$CLI" --socket "$T/node3.sock" status --json | jq -r '.daemon.probe_listen_error')
case $lerr in
*198.18.1.3*) pass "squat: node3 says its probe port is not bound: $lerr" ;;
*) fail "squat: node3's status probe_listen_error = '$lerr'" ;;
esac
got=$(verdict node1 squat)
[ "$got" = unknown ] && pass "squat: check from node1 is unknown (node3 has no probe port)" ||
	fail "squat: check from node1 is '$got', want unknown: $(jq -r .verdict.summary "$T/squat.json")"
kill "$SQ" 2>/dev/null
wait "$SQ" 2>/dev/null
listen_error() { "$CLI" --socket "$T/node3.sock" status --json | jq -r '.daemon.probe_listen_error'; }
listen_ok() { [ "$(listen_error)" = null ]; }
wait_until 30 listen_ok
lerr=$(listen_error)
[ "$lerr" = null ] && pass "squat: the port is retried and bound once free" ||
	fail "squat: probe_listen_error still '$lerr'"
expect_verdict node1 squat.after ok

# --- the cluster key -----------------------------------------------------------------
"$CLI" key generate -o "$T/cluster.key" || die "key generate"
[ "$(stat -c %a "$T/cluster.key")" = 600 ] && pass "key generate -o creates the file 0600" ||
	fail "key generate -o: mode $(stat -c %a "$T/cluster.key")"
"$CLI" key generate -o "$T/cluster.key" 2>/dev/null && fail "key generate -o overwrote a key" ||
	pass "key generate -o never overwrites an existing file"
for n in "${NODES[@]}"; do stop_daemon "$n"; done
for n in "${NODES[@]}"; do start_daemon "$n" --key-file "$T/cluster.key"; done
for n in "${NODES[@]}"; do wait_daemon "$n"; done
if jq -e '.daemon.probe_auth == "cluster-key"' <("$CLI" --socket "$T/node1.sock" status --json) >/dev/null; then
	pass "key: status says probe_auth cluster-key"
else
	fail "key: status lacks probe_auth cluster-key"
fi
expect_verdict node1 key.base ok
attack unauth unauth
wait "$APID"
rc=$?
[ "$rc" -eq 0 ] && pass "key: an unauthenticated peer gets one forbidden ERROR and nothing else" ||
	fail "key: unauthenticated peer: $(cat "$T/atk.unauth.err")"
attack_end unauth
attack replay replay "$T/cluster.key"
wait "$APID"
rc=$?
[ "$rc" -eq 0 ] && pass "key: a replayed authenticated frame is refused" ||
	fail "key: replay: $(cat "$T/atk.replay.err")"
attack_end replay
run_attack key.exhaust exhaust 256 "$HOLD_MS"

# --- issue 19 with the key: replayed token, unauthenticated reply, eviction, local users ------
attack tokenreplay tokenreplay "$T/cluster.key"
wait "$APID"
rc=$?
if [ "$rc" -eq 0 ]; then
	pass "key: DATA_AUTH_REPLY carries a valid MAC; a replayed data token is dropped, the right one still gets in ($(grep -h '^ports' "$T/atk.tokenreplay.out"))"
else
	fail "key: tokenreplay: $(cat "$T/atk.tokenreplay.err")"
fi
attack_end tokenreplay
race_attack key.race
if [ "$RACE_SEEN" -gt 0 ]; then
	pass "race: the racer connected to $RACE_SEEN data listeners ($RACE_IN while they were open), no check failed"
else
	fail "race: in $((4 * RACE_CHECKS)) checks the racer never saw a data listener: the attack did not run"
fi

# An on-path impostor: node1's data connections to node2 go (nftables DNAT) to the attacker,
# which answers DATA_AUTH as node2, with node2's real instance, but without the reply MAC
# (or a MAC of zeros), and echoes the bulk. Without the MAC check this would be "ok" for a
# path nobody probed; with it the paths are not-probed: unknown, never ok, never fail.
N2INST=$("$CLI" --socket "$T/node2.sock" status --json | jq -r '.daemon.instance')
ip netns exec "$(ns atk)" "$ATK" fakedata 198.18.1.66 9999 "$HOLD_MS" node2 "$N2INST" \
	>"$T/atk.fakedata.out" 2>"$T/atk.fakedata.err" &
APID=$!
wait_until 30 attacker_ready_or_gone fakedata
printf '%s\n' 'table ip npfatk {' ' chain out {' \
	'  type nat hook output priority -100; policy accept;' \
	'  ip daddr 198.18.1.2 tcp dport != 7718 dnat to 198.18.1.66:9999' ' }' '}' |
	X node1 nft -f - || fail "fakedata: nft DNAT rule"
got=$(verdict node1 fakedata)
X node1 nft delete table ip npfatk
n_unauth=$(grep -o 'unauthenticated DATA_AUTH_REPLY' "$T/fakedata.json" | wc -l)
case $got in
ok) fail "fakedata: an impostor's unauthenticated data port passed as ok" ;;
fail) fail "fakedata: an impostor made the check fail: $(jq -r .verdict.summary "$T/fakedata.json")" ;;
*) if [ "$n_unauth" -gt 0 ]; then
	pass "fakedata: check from node1 is '$got', the impostor's replies not taken ($n_unauth paths)"
else
	fail "fakedata: verdict '$got' but no path says unauthenticated DATA_AUTH_REPLY"
fi ;;
esac
attack_end fakedata
expect_verdict node1 fakedata.after ok

# Pre-auth eviction hits the prober itself: a churn of idle connections from node1's own
# address keeps node2's per-address pre-auth cap (8) full, so node1's real probes are evicted
# before they authenticate. Evicted probes must end not-probed (busy, or a close), never
# refused: the verdict is ok or unknown, and no path is refused.
ip netns exec "$(ns node1)" "$ATK" churn 198.18.1.2 7718 32 "$HOLD_MS" >"$T/atk.churn.out" \
	2>"$T/atk.churn.err" &
APID=$!
wait_until 30 attacker_ready_or_gone churn
nref=0
nnp=0
for i in 1 2 3; do
	got=$(verdict node1 "churn.$i")
	r=$(jq '[.. | objects | select(.outcome? == "refused")] | length' "$T/churn.$i.json" 2>/dev/null || echo 0)
	np=$(jq '[.. | objects | select(.outcome? == "not-probed" or .outcome? == "peer-unavailable")] | length' "$T/churn.$i.json" 2>/dev/null || echo 0)
	nref=$((nref + r))
	nnp=$((nnp + np))
	case $got in
	ok | unknown) pass "churn.$i: check from node1 under eviction: $got" ;;
	*) fail "churn.$i: check from node1 under eviction: '$got': $(jq -r .verdict.summary "$T/churn.$i.json" 2>/dev/null)" ;;
	esac
done
[ "$nref" -eq 0 ] && pass "churn: no path refused under pre-auth eviction" ||
	fail "churn: $nref paths refused under pre-auth eviction"
attack_end churn
echo "figure: churn: 3 checks from node1 under eviction: $nref paths refused, $nnp without evidence (not-probed or peer-unavailable)"
alive "after the issue-19 attacks" && pass "key: every daemon alive after the issue-19 attacks"

# A check_group user: membership from the connection (SO_PEERGROUPS), so a supplementary
# group counts; it must name hosts (an address literal is refused); a user outside it is
# refused.
stop_daemon node1
start_daemon node1 --key-file "$T/cluster.key" --check-group nogroup
wait_daemon node1
chmod 0755 "$T"
NG=$(getent group nogroup | cut -d: -f3)
as_user() { # GROUPS-OPTION ARGS...: the CLI as nobody with primary gid 4242, in node1
	local g=$1
	shift
	ip netns exec "$(ns node1)" setpriv --reuid=65534 --regid=4242 "$g" "$CLI" \
		--socket "$T/node1.sock" "$@"
}
as_user --groups="$NG" check --nodes node2 --timeout "$TIMEOUT_S" --json >"$T/grp.json" 2>"$T/grp.err"
got=$(jq -r '.verdict.verdict // "none"' "$T/grp.json" 2>/dev/null)
case $got in
ok | unknown) pass "group: nogroup as a supplementary group may start a check ($got)" ;;
*) fail "group: supplementary nogroup: '$got': $(cat "$T/grp.err")" ;;
esac
as_user --clear-groups check --nodes node2 --timeout "$TIMEOUT_S" >/dev/null 2>"$T/grp.none.err"
if grep -q 'may not start probes' "$T/grp.none.err"; then
	pass "group: without the group: forbidden"
else
	fail "group: without the group: $(cat "$T/grp.none.err")"
fi
for lit in 2130706433 127.0.0.1 0x7f000001 198.18.1.2; do
	as_user --groups="$NG" check --nodes "$lit" --timeout "$TIMEOUT_S" >/dev/null 2>"$T/grp.lit.err"
	if grep -q 'address literal' "$T/grp.lit.err"; then
		pass "group: peer '$lit' refused (hosts only)"
	else
		fail "group: peer '$lit': $(cat "$T/grp.lit.err")"
	fi
done
expect_verdict node1 grp.root ok

# node3 without the key: not trusted, so unknown (never fail, never ok).
stop_daemon node3
start_daemon node3
wait_daemon node3
got=$(verdict node1 key.nokey)
[ "$got" = unknown ] && pass "key: node3 without the key: check from node1 is unknown" ||
	fail "key: node3 without the key: '$got': $(jq -r .verdict.summary "$T/key.nokey.json")"
stop_daemon node3
start_daemon node3 --key-file "$T/cluster.key"
wait_daemon node3
expect_verdict node1 key.again ok

# --- faults mid-check ------------------------------------------------------------------
# fault TAG BLAME DELAY_S ACTION...: starts a check from node1, runs ACTION after DELAY_S, and
# requires the check to end within its timeout; a fail is allowed only when BLAME names the
# node the fault really broke and the verdict suspects exactly that node.
# A check that outlives HANG_S is a hang: 3x its timeout and more, for a loaded machine under
# ASan. The duration itself is only a figure.
HANG_S=$((TIMEOUT_S * 3 + 2))
fault() {
	local tag=$1 blame=$2 delay=$3 t0 ms got sus rc
	shift 3
	t0=$(date +%s%N)
	timeout -k 2 "$HANG_S" ip netns exec "$(ns node1)" "$CLI" --socket "$T/node1.sock" check --nodes 'node[1-3]' \
		--timeout "$TIMEOUT_S" --json >"$T/$tag.json" 2>"$T/$tag.err" &
	local cpid=$!
	# Where in the check the fault lands (not an assertion).
	sleep "$delay"
	"$@"
	wait "$cpid"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	got=$(jq -r '.verdict.verdict // "none"' "$T/$tag.json" 2>/dev/null)
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && pass "$tag: the check ended (not hung)" ||
		fail "$tag: the check hung (killed after ${HANG_S}s, timeout ${TIMEOUT_S}s)"
	sus=$(jq -r '.recommendation.failure.node // ""' "$T/$tag.json" 2>/dev/null)
	case $got in
	ok | unknown) pass "$tag: verdict $got (not fail)" ;;
	fail) if [ -n "$blame" ] && [ "$sus" = "$blame" ]; then
		pass "$tag: verdict fail suspecting $sus, whose link the fault broke"
	else
		fail "$tag: verdict fail (suspect '$sus'), not earned: $(jq -r .verdict.summary "$T/$tag.json")"
	fi ;;
	*) fail "$tag: verdict '$got': $(jq -r .verdict.summary "$T/$tag.json" 2>/dev/null) $(cat "$T/$tag.err")" ;;
	esac
	echo "figure: $tag: verdict $got after ${ms} ms"
}
# Slow node3's link both ways (when tbf exists) so that a check lasts long enough for the
# faults to land in the middle of it.
if X node3 tc qdisc add dev fab0 root tbf rate 20mbit burst 16kb latency 400ms 2>/dev/null &&
	S tc qdisc add dev h3fab root tbf rate 20mbit burst 16kb latency 400ms 2>/dev/null; then
	pass "faults: node3's link shaped to 20 Mbit/s"
fi
expect_verdict node1 fault.base ok
echo "figure: a check with node3 shaped takes $(jq -r .duration_ms "$T/fault.base.json" 2>/dev/null) ms"
for d in 0 0.05 0.15 0.3; do
	fault "kill.$d" "" "$d" stop_daemon node3 KILL
	start_daemon node3 --key-file "$T/cluster.key"
	wait_daemon node3
done
for d in 0 0.05 0.15 0.3; do
	fault "restart.$d" "" "$d" eval 'stop_daemon node3 KILL; start_daemon node3 --key-file "$T/cluster.key"'
	wait_daemon node3
done
expect_verdict node1 fault.healthy ok
# A link really going down is a real failure of that node; what the fault must not do is
# hang a check or leave an ok standing on missing evidence after it.
for d in 0 0.05 0.15; do
	fault "linkdown.$d" node3 "$d" X node3 ip link set fab0 down
	X node3 ip link set fab0 up
	X node3 tc qdisc add dev fab0 root tbf rate 20mbit burst 16kb latency 400ms 2>/dev/null
	got=$(verdict node1 "linkdown.$d.after")
	[ "$got" != none ] && pass "linkdown.$d: the next check runs ($got)" || fail "linkdown.$d: no check after"
done
for d in 0 0.05 0.15; do
	fault "addrdel.$d" node3 "$d" X node3 ip addr del 198.18.1.3/24 dev fab0
	X node3 ip addr add 198.18.1.3/24 dev fab0
done
# The daemons see the address come back over netlink: wait (bounded) for the healthy verdict.
verdict_ok() { [ "$(verdict node1 fault.after)" = ok ]; }
wait_until 120 verdict_ok
got=$(jq -r '.verdict.verdict // "none"' "$T/fault.after.json" 2>/dev/null)
[ "$got" = ok ] && pass "fault.after: check from node1 is ok again" ||
	fail "fault.after: check from node1 stays '$got': $(jq -r .verdict.summary "$T/fault.after.json")"

# The local daemon restarted under socket activation while a client waits.
stop_daemon node1
ip netns exec "$(ns node1)" systemd-socket-activate -l "$T/node1.sock" -E NOTIFY_SOCKET= "$DAEMON" --foreground \
	--socket "$T/node1.sock" --node-name node1 --state-dir "$T/node1" \
	--key-file "$T/cluster.key" --allow-foreign-netns yes >>"$T/node1.log" 2>&1 &
PIDS[node1]=$!
wait_until 30 test -S "$T/node1.sock" || fail "sockact: the activation socket did not appear"
t0=$(date +%s%N)
timeout -k 2 "$HANG_S" ip netns exec "$(ns node1)" "$CLI" --socket "$T/node1.sock" check --nodes 'node[1-3]' \
	--timeout "$TIMEOUT_S" --json >"$T/sockact.json" 2>"$T/sockact.err" &
cpid=$!
# Let the client's request reach the daemon before it goes (not an assertion).
sleep 0.3
stop_daemon node1
wait "$cpid"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
case $rc in
0 | 2 | 3) pass "sockact: the waiting client ended (exit $rc), never a fail" ;;
124 | 137) fail "sockact: the client hung (killed after ${HANG_S}s)" ;;
*) fail "sockact: the waiting client exit $rc: $(cat "$T/sockact.err")" ;;
esac
echo "figure: sockact: client exit $rc after ${ms} ms"
# ...and the restarted daemon serves the next client on the same socket path.
rm -f "$T/node1.sock"
ip netns exec "$(ns node1)" systemd-socket-activate -l "$T/node1.sock" -E NOTIFY_SOCKET= "$DAEMON" \
	--foreground --socket "$T/node1.sock" --node-name node1 --state-dir "$T/node1" \
	--key-file "$T/cluster.key" --allow-foreign-netns yes >>"$T/node1.log" 2>&1 &
PIDS[node1]=$!
wait_until 30 test -S "$T/node1.sock" || fail "sockact: the activation socket did not come back"
expect_verdict node1 sockact.after ok

alive "end" && pass "every daemon alive at the end"
finish
