# SPDX-License-Identifier: MIT
# Shared by netns.jobrows, netns.deadnode and netns.blamepair (source it inside a lab run,
# after lib.sh, with CLI, LAB and T set; MERGE for job_merge): start one job check on several nodes of the lab at once, as a Slurm
# Prolog does (`netpreflight check --nodes HOSTLIST --job TAG --json`, docs/decision.md §10),
# then assert what EACH daemon answered. Not a test itself (no .sh: the CTest glob skips it).
# shellcheck shell=bash
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
# shellcheck disable=SC2016 # jq programs in single quotes

JOB_RC_OK=0 JOB_RC_FAIL=1

# job_check CASE HOSTLIST NODE...: every NODE checks HOSTLIST as one job (a fresh tag per
# case, "CASE-<pid>": a tag names one job start) at the same moment. Files
# $T/CASE-NODE.{json,err,rc}; prints the wall time of the whole job check.
job_check() {
	local c=$1 hl=$2 t0 n
	shift 2
	JOB_TAG=$c-$$
	local f0
	f0=$(arp_fulls)
	t0=$(date +%s%3N)
	for n in "$@"; do
		{
			"$CLI" --socket "$("$LAB" sock "$n")" check --nodes "$hl" --job "$JOB_TAG" --json \
				>"$T/$c-$n.json" 2>"$T/$c-$n.err"
			echo $? >"$T/$c-$n.rc"
		} &
	done
	wait
	JOB_WALL_MS=$(($(date +%s%3N) - t0))
	echo "  $c: $# nodes checked job '$JOB_TAG' at once, wall $JOB_WALL_MS ms"
	f0=$(($(arp_fulls) - f0))
	[ "$f0" -eq 0 ] ||
		echo "  NOTE $c: the kernel's neighbour table was full $f0 times during the check (other labs up on this host?): pairs may have failed for want of ARP entries"
}

jf() { jq -r "$2" "$T/$1.json" 2>/dev/null; } # CASE-NODE FILTER

# arp_fulls: how often the kernel's IPv4 neighbour table refused an entry (all namespaces
# share it: /proc/net/stat/arp_cache, column table_fulls, per CPU, summed). When it grows
# during a case, ARP failed between some lab nodes (several big labs up at once): the host
# dropped those pairs, not the product; job_check says so next to its wall time.
arp_fulls() {
	local n=0 col
	while read -r -a col; do
		[[ ${col[12]:-} =~ ^[0-9a-f]+$ ]] && n=$((n + 16#${col[12]}))
	done < <(tail -n +2 /proc/net/stat/arp_cache 2>/dev/null)
	echo "$n"
}
# jtrue FILE FILTER [jq args...]: FILTER prints true on FILE. Not `jq -e`: jq 1.6 exits 0 on
# an empty file (a check that printed nothing would pass).
jtrue() {
	local file=$1 q=$2
	shift 2
	[ "$(jq -r "$@" "$q" "$file" 2>/dev/null)" = true ]
}

# job_expect CASE VERDICT IFNAME NET SUSPECTS NODE...: every NODE of the job answered:
#  - a node named in SUSPECTS (comma separated, "" for none): verdict fail, job role suspect,
#    exit 1, its summary names the interface it is blamed on ($FABRIC_IF);
#  - every other node: VERDICT (ok or degraded), exit 0, on IFNAME with network NET, and the
#    published NCCL_SOCKET_IFNAME is exactly that interface;
#  - every node: the same job (id, coordinator, tag), the same job verdict, network NET and
#    suspect list, no node missing, every row in (JOB_SIZE rows when set: a job with nodes
#    that send a row but are not asserted here).
# Counts failures through fail(); prints one pass line per node.
job_expect() {
	local c=$1 want=$2 ifname=$3 net=$4 susp=$5 n f v rc role first="" same
	shift 5
	local -a nodes=("$@")
	local want_susp
	want_susp=$(jq -cn --arg s "$susp" '$s | split(",") | map(select(. != ""))')
	for n in "${nodes[@]}"; do
		f=$c-$n
		rc=$(cat "$T/$f.rc" 2>/dev/null)
		if ! jtrue "$T/$f.json" '.schema == "netpreflight.check" and (.job | type) == "object"'; then
			fail "$c: $n: exit $rc, no check JSON with a job object: $(head -c 300 "$T/$f.err")"
			continue
		fi
		v=$(jf "$f" .verdict.verdict)
		role=$(jf "$f" .job.role)
		if [[ ",$susp," == *",$n,"* ]]; then
			if [ "$v" = fail ] && [ "$role" = suspect ] && [ "$rc" = "$JOB_RC_FAIL" ] &&
				[[ $(jf "$f" .verdict.summary) == *"$FABRIC_IF"* ]]; then
				pass "$c: $n fail, suspect: $(jf "$f" .verdict.summary | head -c 160)"
			else
				fail "$c: $n: want fail (suspect, exit 1, summary naming $FABRIC_IF), got verdict $v role $role exit $rc: $(jf "$f" .verdict.summary) / job: $(jf "$f" .job.reason)"
			fi
		else
			if [ "$v" = "$want" ] && [ "$role" = "$want" ] && [ "$rc" = "$JOB_RC_OK" ] &&
				[ "$(jf "$f" .recommendation.choice.ifname)" = "$ifname" ] &&
				[ "$(jf "$f" .recommendation.choice.network)" = "$net" ] &&
				[ "$(jf "$f" '.recommendation.env.NCCL_SOCKET_IFNAME // ""')" = "=$ifname" ]; then
				pass "$c: $n $v on $ifname ($net), NCCL_SOCKET_IFNAME==$ifname"
			else
				fail "$c: $n: want $want on $ifname ($net), got verdict $v role $role exit $rc on $(jf "$f" '.recommendation.choice.ifname // "-"') ($(jf "$f" '.recommendation.choice.network // "-"')), NCCL_SOCKET_IFNAME=$(jf "$f" '.recommendation.env.NCCL_SOCKET_IFNAME // "-"'): $(jf "$f" .verdict.summary) / job: $(jf "$f" .job.reason)"
			fi
		fi
		# The job as this node holds it; compared with the first node's below.
		jq -c --arg tag "$JOB_TAG" --argjson n "${JOB_SIZE:-${#nodes[@]}}" '.job | {tag, id, coordinator,
			verdict, net, suspects, missing, rows, nodes, tag_ok: (.tag == $tag),
			complete: (.rows == $n and .nodes == $n and (.missing | length) == 0)}' \
			"$T/$f.json" >"$T/$f.job" 2>/dev/null
		if [ -z "$first" ]; then
			first=$n
			jtrue "$T/$f.job" '.tag_ok and .complete and .verdict == $v and .net == $net and
				(.suspects | sort) == ($s | sort) and (.id | test("^[0-9a-f]{32}$"))' \
				--arg v "$want" --arg net "$net" --argjson s "$want_susp" &&
				pass "$c: job $(jq -c '{verdict, net, suspects, coordinator, rows}' "$T/$f.job")" ||
				fail "$c: $n's job: $(cat "$T/$f.job"), want verdict $want net $net suspects $want_susp, every row in"
		else
			same=$(jq -n --slurpfile a "$T/$c-$first.job" --slurpfile b "$T/$f.job" \
				'($a | length) == 1 and $a == $b' 2>/dev/null)
			[ "$same" = true ] ||
				fail "$c: $n holds another job decision than $first: $(cat "$T/$f.job") vs $(cat "$T/$c-$first.job")"
		fi
	done
}

# job_env CASE NODE: NODE's published environment, as `export NAME='value'` lines (what
# `netpreflight env --format shell` prints), from the job check's recommendation.
job_env() {
	jq -r '.recommendation.env // {} | to_entries[] | "export \(.key)=\(.value | @sh)"' \
		"$T/$1-$2.json"
}

# job_print CASE NODE...: one line per node, its verdict and choice (for the log).
job_print() {
	local c=$1 n
	shift
	for n in "$@"; do
		echo "  $c $n: $(jf "$c-$n" .verdict.verdict) $(jf "$c-$n" '.recommendation.choice.ifname // "-"') role $(jf "$c-$n" '.job.role // "-"')"
	done
}

# fw NODE [RULE...]: NODE's nft input chain (the lab's table, made when missing) flushed, then
# RULE added when given; `fw NODE` alone clears it.
fw() {
	"$LAB" exec "$1" nft add table inet npflab &&
		"$LAB" exec "$1" nft add chain inet npflab input \
			'{ type filter hook input priority 0; policy accept; }' &&
		"$LAB" exec "$1" nft flush chain inet npflab input &&
		{ [ $# -eq 1 ] || "$LAB" exec "$1" nft add rule inet npflab input "${@:2}"; }
}

# job_merge CASE HEAD SUSPECTS NODE...: tests/tools/npf_jobmerge ($MERGE) over the same check
# JSONs decides as the daemons did: its line starts "verdict=HEAD suspects=SUSPECTS " (HEAD
# e.g. "ok net=198.18.1.0/24", SUSPECTS comma separated or "-").
job_merge() {
	local c=$1 head=$2 want=$3 got files=() n
	shift 3
	for n in "$@"; do files+=("$T/$c-$n.json"); done
	got=$("$MERGE" "${files[@]}" 2>"$T/$c.merge.err")
	case "$got" in
	"verdict=$head suspects=$want "*) pass "$c: npf_jobmerge agrees: ${got%% nets=*}" ;;
	*) fail "$c: npf_jobmerge over the daemons' rows: '$got' $(cat "$T/$c.merge.err"), want $head suspects=$want" ;;
	esac
}
