#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.settle: `unknown` is not "nothing" (issue 18). Three nodes, eno1 on a 1500-byte switch
# and a 9000-byte fabric ens1f0np0 that the daemons prefer (--prefer: the fabric strictly
# outranks eno1). node3's daemon answers node1 on the fabric, but those answers are lost
# (node3 drops its own segments with data to 198.18.1.1 on the connections node1 opened:
# conntrack's reply direction, the data ports since protocol version 3): node1's requests are
# acknowledged and never answered, which the load rule cannot tell from a slow daemon, so the
# pair node1-node3 is `unknown` on the fabric while eno1 is verified between every pair.
#   1. `check --job` on every node at once: the job is `unknown` on every node, no env.
#   2. The Prolog on every node at once (slurm/netpreflight-prolog, PrologEpilogTimeout 40 s):
#      its job check ends unknown, it tries once more as the job's last try (--settle): every
#      node `degraded` on eno1 (198.19.0.0/24) with the reason "a better network could not be
#      verified", the same job decision everywhere, env published (NCCL_SOCKET_IFNAME=eno1),
#      the Prolog exits 0.
#   3. The TaskProlog on every node prints that env from the daemon's cache (export
#      NCCL_SOCKET_IFNAME=eno1, GLOO_SOCKET_IFNAME=eno1).
# Runs as root (exit 77 = skipped otherwise); lab id st<pid>, removed by `lab run` on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
# shellcheck disable=SC2016 # jq programs in single quotes
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
PROLOG=$NPF_BUILD_DIR/slurm/netpreflight-prolog
TASKPROLOG=$NPF_BUILD_DIR/slurm/netpreflight-taskprolog
FABRIC_IF=ens1f0np0
NODES=(node1 node2 node3)

if [ "${1:-}" = --inside ]; then
	T=$2
	# shellcheck source=tests/netns/jobcase.bash
	. "$SRC/tests/netns/jobcase.bash"
	trap 'daemon_logs_on_failure 30 "/run/npflab/$LAB_ID" "${NODES[@]}"' EXIT
	"$LAB" daemons start -- --prefer "$FABRIC_IF" >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"
	"$LAB" exec node3 nft -f - <<'NFT' || die "nft on node3"
table inet npfst {
	chain output {
		type filter hook output priority 0; policy accept;
		ip saddr 198.18.1.3 ip daddr 198.18.1.1 meta l4proto tcp ct direction reply meta length > 100 drop
	}
}
NFT

	# 1. The job check alone: unknown everywhere, nothing published.
	job_check plain "node[1-3]" "${NODES[@]}"
	for n in "${NODES[@]}"; do
		f=plain-$n
		[ "$(jf "$f" .verdict.verdict)" = unknown ] && [ "$(jf "$f" .job.verdict)" = unknown ] &&
			[ "$(jf "$f" '.recommendation.env // {} | length')" = 0 ] &&
			pass "plain: $n unknown, no env: $(jf "$f" .job.reason | head -c 120)" ||
			fail "plain: $n: want unknown without env, got $(jf "$f" .verdict.verdict) (job $(jf "$f" .job.verdict)): $(jf "$f" .verdict.summary)"
	done

	# 2. The Prolog: unknown, then the last try settles on eno1.
	for n in "${NODES[@]}"; do
		mkdir -p "$T/log-$n"
		"$LAB" exec "$n" env -i PATH=/usr/bin:/bin NPF_CLI="$CLI" NPF_CONF=/dev/null \
			NPF_SOCKET="$("$LAB" sock "$n")" NPF_DRAIN=false NPF_PROLOG_LOG_DIR="$T/log-$n" \
			NPF_PROLOG_TIMEOUT_S=40 SLURM_JOB_ID="st$$" SLURM_JOB_NODELIST="node[1-3]" \
			SLURMD_NODENAME="$n" bash "$PROLOG" >"$T/prolog-$n.out" 2>"$T/prolog-$n.err" &
	done
	wait
	first=""
	for n in "${NODES[@]}"; do
		f=$T/log-$n/job-st$$.json
		v=$(jq -r '.verdict.verdict' "$f" 2>/dev/null)
		if [ "$v" = degraded ] && [ "$(jq -r .job.verdict "$f")" = degraded ] &&
			[ "$(jq -r .job.net "$f")" = 198.19.0.0/24 ] &&
			[ "$(jq -r .recommendation.choice.ifname "$f")" = eno1 ] &&
			[ "$(jq -r '.recommendation.env.NCCL_SOCKET_IFNAME // ""' "$f")" = =eno1 ] &&
			jq -e '.job.reason | test("a better network could not be verified")' "$f" >/dev/null &&
			jq -e '.job.tag | endswith(".s")' "$f" >/dev/null; then
			pass "prolog: $n degraded on eno1 after the last try, NCCL_SOCKET_IFNAME==eno1: $(jq -r .verdict.summary "$f" | head -c 140)"
		else
			fail "prolog: $n: want degraded on eno1 with env, got $v: $(jq -c '{v: .verdict.summary, job: .job}' "$f" 2>/dev/null | head -c 400) / $(tail -n 3 "$T/prolog-$n.err")"
		fi
		grep -q 'last try' "$T/prolog-$n.err" && pass "prolog: $n said it tried once more" ||
			fail "prolog: $n: no second try in its log: $(tail -n 3 "$T/prolog-$n.err")"
		jq -c '.job | {id, verdict, net, suspects, reason}' "$f" >"$T/job-$n" 2>/dev/null
		if [ -z "$first" ]; then
			first=$n
		elif ! cmp -s "$T/job-$first" "$T/job-$n"; then
			fail "prolog: $n holds another job decision than $first: $(cat "$T/job-$n") vs $(cat "$T/job-$first")"
		fi
	done

	# 3. The TaskProlog follows, from the daemon's cache.
	for n in "${NODES[@]}"; do
		out=$("$LAB" exec "$n" env -i PATH=/usr/bin:/bin NPF_CLI="$CLI" NPF_CONF=/dev/null \
			NPF_SOCKET="$("$LAB" sock "$n")" SLURM_JOB_NODELIST="node[1-3]" \
			SLURMD_NODENAME="$n" bash "$TASKPROLOG" 2>&1)
		grep -qx 'export NCCL_SOCKET_IFNAME==eno1' <<<"$out" &&
			grep -qx 'export GLOO_SOCKET_IFNAME=eno1' <<<"$out" &&
			pass "taskprolog: $n exports the degraded job's env (eno1)" ||
			fail "taskprolog: $n: $(head -c 300 <<<"$out")"
	done
	finish
	exit
fi

need_root
need_cmds ip nft jq timeout logger
need_netns
[ -x "$CLI" ] && [ -x "$NPF_BUILD_DIR/daemon/netpreflightd" ] || skip "not built ($NPF_BUILD_DIR)"
[ -f "$PROLOG" ] && [ -f "$TASKPROLOG" ] || skip "Slurm scripts not built"
T=$(mktemp -d /tmp/npf-settle.XXXXXX)
on_exit rm -rf "$T"
cat >"$T/settle.lab" <<LAB
desc settle: eno1 + a preferred fabric, node3's fabric answers to node1 lost
nodes node[1-3]
switch mgmt mtu=1500
switch fabric mtu=9000
nic all eno1 switch=mgmt addr=198.19.0.{i}/24
nic all $FABRIC_IF switch=fabric addr=198.18.1.{i}/24
resolve eno1
LAB
"$LAB" run "$T/settle.lab" --id "st$(($$ % 100000))" -q -- "$0" --inside "$T"
