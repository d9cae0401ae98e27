# SPDX-License-Identifier: MIT
# Shared by netns.run, netns.run_standalone and netns.containers (source it after lib.sh, with LAB set): the
# 4-node lab both use (eno1 + a 9000-byte fabric) and the firewall helper that breaks a node's
# fabric. Not a test itself (no .sh: the CTest glob skips it).
# shellcheck shell=bash

FAB=198.18.1
FABRIC_IF=ens1f0np0
# shellcheck disable=SC2034 # used by the tests that source this file
NODES=(node1 node2 node3 node4)

# run_lab FILE DESC [LINE...]: writes the scenario of the nodes in NODES (extra LINEs, e.g.
# "port 7718", added).
run_lab() {
	local f=$1 desc=$2
	shift 2
	{
		echo "# $desc"
		echo "desc $desc"
		echo "nodes node[1-${#NODES[@]}]"
		printf '%s\n' "$@"
		echo "switch mgmt mtu=1500"
		echo "switch fabric mtu=9000"
		echo "nic all eno1 switch=mgmt addr=198.19.0.{i}/24"
		echo "nic all $FABRIC_IF switch=fabric addr=$FAB.{i}/24"
		echo "resolve eno1"
	} >"$f"
}

# fw NODE [RULE...]: the lab's input chain on NODE (made when missing), flushed, then RULE.
fw() {
	"$LAB" exec "$1" nft add table inet npflab &&
		"$LAB" exec "$1" nft add chain inet npflab input \
			'{ type filter hook input priority 0; policy accept; }' &&
		"$LAB" exec "$1" nft flush chain inet npflab input &&
		{ [ $# -eq 1 ] || "$LAB" exec "$1" nft add rule inet npflab input "${@:2}"; }
}
