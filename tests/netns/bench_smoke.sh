#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run --smoke keeps working: a 2-node lab, every measurement once, well-formed results
# JSON and a rendered document; then --allatonce at 8 nodes with a sparse plan. No timing is
# asserted (the machine may be busy).
set -uo pipefail

# shellcheck source=lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
OUT=

[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -x "$BUILD/bench/qload" ] && [ -x "$BUILD/bench/plan" ] || skip "no $BUILD/bench/qload or plan"
[ -x "$BUILD/daemon/netpreflightd" ] && [ -x "$BUILD/cli/netpreflight" ] || skip "daemon or CLI not built"
command -v jq >/dev/null || skip "no jq"
command -v nc >/dev/null || skip "no nc"
ip netns add npfbs-probe 2>/dev/null || skip "cannot create network namespaces"
ip netns del npfbs-probe

cleanup() {
	# bench/run takes its lab down itself; this covers a bench/run killed from outside.
	NPF_BUILD_DIR=$BUILD "$SRC/tests/lab/lab" down --id b8 >/dev/null 2>&1
	[ -n "$OUT" ] && rm -rf -- "$OUT"
}
on_exit cleanup
OUT=$(mktemp -d)

# qload's own argument checks: bad values are refused, not run.
"$BUILD/bench/qload" --socket /nonexistent --peers a --clients 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "qload accepted --clients 0"
"$BUILD/bench/qload" --socket /nonexistent --peers a --duration 0.1 >/dev/null 2>&1
[ $? -eq 1 ] || fail "qload without a daemon did not fail"

bash "$SRC/bench/run" --smoke --build-dir "$BUILD" --out "$OUT" --docs "$OUT" >"$OUT/log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$OUT/log"; fail "bench/run --smoke exited $rc"; }

R=$OUT/smoke.json
if ! jq -e . "$R" >/dev/null 2>&1; then
	fail "no well-formed $R"
else
	# Shape and sanity, not speed: every measurement ran and produced numbers.
	jq -e '.schema == "netpreflight.bench" and .version == 1 and (.machine.cpus >= 1)' "$R" \
		>/dev/null || fail "header fields"
	jq -e '[.checks[].variant] | sort == ["dead", "dead-1s", "healthy"]' "$R" >/dev/null ||
		fail "expected the healthy, dead and dead-1s variants: $(jq -c '[.checks[].variant]' "$R")"
	jq -e 'all(.checks[]; .nodes == 2 and (.node1_wall_ms_median | type) == "number"
		and (.node1_daemon_ms_median | type) == "number" and .all_wall_ms > 0
		and .rss_rest_kb_max > 0 and .rss_hwm_kb_max >= .rss_rest_kb_max)' "$R" >/dev/null ||
		fail "check records incomplete: $(jq -c .checks "$R")"
	# Healthy: everything ok, the nc mesh saw 2 nodes x 2 addresses answer.
	jq -e '.checks[] | select(.variant == "healthy") | .verdicts == "node1:ok x1; all:ok x2"
		and .baseline_ok == 4 and .baseline_failed == 0' "$R" >/dev/null ||
		fail "healthy variant: $(jq -c '.checks[] | select(.variant == "healthy")' "$R")"
	# Dead fabric on node2: still ok (eno1 works), and nc sees the two dead pairs.
	jq -e '.checks[] | select(.variant == "dead") | .dead_node == "node2"
		and .verdicts == "node1:ok x1; all:ok x2" and .baseline_failed == 2' "$R" >/dev/null ||
		fail "dead variant: $(jq -c '.checks[] | select(.variant == "dead")' "$R")"
	# The short-timeout variant really asked for 1 s (no timing is asserted: a busy machine
	# may stretch it).
	jq -e '.checks[] | select(.variant == "dead-1s") | .timeout_s == "1"
		and .baseline_wall_ms == null' "$R" >/dev/null ||
		fail "dead-1s variant: $(jq -c '.checks[] | select(.variant == "dead-1s")' "$R")"
	jq -e '(.query | length) == 4 and all(.query[]; .errors == 0 and .requests > 0
		and .p50_us > 0 and .p99_us >= .p50_us and .reply_bytes > 0)' "$R" >/dev/null ||
		fail "query records: $(jq -c .query "$R")"
	jq -e '.rest.seconds > 0 and .rest.rss_kb > 0' "$R" >/dev/null || fail "rest record"
fi

MD=$OUT/benchmarks.md
if [ ! -s "$MD" ]; then
	fail "no $MD"
else
	for h in "## Against the targets" "## Cached query latency" "## Fresh check wall time" \
		"## Daemon cost" "## Findings"; do
		grep -qF "$h" "$MD" || fail "$MD lacks '$h'"
	done
	grep -q '^| 2 | full mesh | healthy |' "$MD" || fail "$MD has no 2-node row"
	! grep -q 'null' "$MD" || fail "$MD shows a null: $(grep -n null "$MD" | head -3)"
fi
# gnuplot-nox is in scripts/setup-deps: no plot is a failure, whatever the reason.
command -v gnuplot >/dev/null || fail "gnuplot not installed (gnuplot-nox, scripts/setup-deps)"
[ -s "$OUT/benchmarks-check-time.png" ] || fail "no plot drawn ($OUT/benchmarks-check-time.png)"

# The all-at-once mode with a sparse plan at a small size (issue 20): 8 nodes, full mesh only
# up to 4, sparse_k 1 (at most 4 peers of 7), one healthy and one dead-fabric job round. The
# floors must cover exactly the planned paths (bench/plan), not the full mesh.
A=$OUT/aao
bash "$SRC/bench/run" --allatonce 8 --full-mesh-max 4 --sparse-k 1 --rounds 1 --runs 1 --dead 8 \
	--coord "" --base "$R" --build-dir "$BUILD" --id b8 --out "$A" --docs "$A" >"$OUT/aao.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$OUT/aao.log"; fail "bench/run --allatonce (sparse) exited $rc"; }
RA=$(find "$A" -maxdepth 1 -name '20*.json' | head -n 1)
if [ -z "$RA" ] || ! jq -e . "$RA" >/dev/null 2>&1; then
	fail "no well-formed all-at-once results in $A"
else
	jq -e '(.allatonce | length) == 2 and all(.allatonce[]; .nodes == 8 and .sparse == true
		and .job == true and .full_mesh_max == 4 and .sparse_k == 1
		and .plan_peers_max <= 4 and .plan_pairs < 56
		and .mesh_paths == 2 * .plan_pairs and .mesh_ok == .mesh_paths
		and .nc_ok == 2 * .plan_pairs and .nc_failed == 0
		and .rss_hwm_kb_max > 0 and .rss_hwm_kb_max >= .rss_hwm_kb_mean
		and .false_verdicts == 0)' "$RA" >/dev/null ||
		fail "sparse all-at-once records: $(jq -c .allatonce "$RA")"
	jq -e '.allatonce[] | select(.dead == null) | .ok == 8 and .networks == 1' "$RA" >/dev/null ||
		fail "healthy sparse round: $(jq -c '.allatonce[] | select(.dead == null)' "$RA")"
	jq -e '.allatonce[] | select(.dead != null) | .dead == "node4" and .dead_probed_by >= 2
		and .dead_verdict == "fail" and .fail == 1' "$RA" >/dev/null ||
		fail "dead sparse round: $(jq -c '.allatonce[] | select(.dead != null)' "$RA")"
	# Its other sections come from the smoke run's file.
	jq -e '.base_file == "smoke.json" and (.checks | length) == 3' "$RA" >/dev/null ||
		fail "all-at-once results did not keep the base file's sections"
fi
if [ ! -s "$A/benchmarks.md" ]; then
	fail "no $A/benchmarks.md"
else
	grep -q '^| 8 nodes sparse at once: all `ok` on one network |' "$A/benchmarks.md" ||
		fail "no sparse target row in $A/benchmarks.md"
	grep -q '^| 8 | sparse, <= [0-9] peers, job check | none | 1 |' "$A/benchmarks.md" ||
		fail "no per-size sparse row in $A/benchmarks.md"
	! grep -q 'null' "$A/benchmarks.md" || fail "$A/benchmarks.md shows a null: $(grep -n null "$A/benchmarks.md" | head -3)"
fi

# bench/run removed its lab.
[ ! -d /run/npflab/b8 ] || fail "lab b8 left behind"
! ip netns list | grep -q '^nplb8-' || fail "namespaces of lab b8 left behind"

finish
