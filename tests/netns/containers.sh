#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns.containers: netpreflight with a real container runtime (issue 22, docs/containers.md):
# Debian's podman, rootful, run inside the lab's node namespaces (each node's podman makes its
# networks there). The image is a Debian bookworm minbase rootfs (debootstrap from the Debian
# mirror, NPF_DEBIAN_MIRROR) with the libraries netpreflight links, imported with `podman
# import` (no registry) and kept as localhost/npf-debian:TAG for the next run; the build's
# netpreflight and netpreflightd are bind-mounted into each container. 2 nodes with daemons
# that refuse foreign namespaces (`--allow-foreign-netns no`, as in production), and node3 for
# the DaemonSet's pod.
#   host:       a container with --network host on node1, node1's daemon socket bind-mounted,
#               gets the verified environment from `netpreflight env` (exit 0, the fabric);
#   bridge:     a container on podman's bridge network on node1, same socket: the daemon
#               answers foreign-netns (exit 2, the message says to use the host network);
#   standalone: two containers on a podman macvlan network over each node's fabric NIC, one on
#               node1 and one on node2, run `netpreflight run --standalone --nodes ctr1,ctr2`
#               at once: each finds the path to the other (its eth0), CMD gets it. (Two bridge
#               containers on two hosts cannot reach each other's addresses at all: NAT.)
#   kube:       `podman kube play` of the DaemonSet's pod template in node3: the daemon runs
#               with no capability, read-only root, uid 0, its socket on the hostPath, and the
#               manifest's liveness command answers (what podman plays differently: below).
# Runs as root (exit 77 = skipped otherwise, or without podman/debootstrap, or when the image
# cannot be built: no mirror). Lab id ct<pid>; containers carry the label npf.test=<pid> and
# are removed with the podman network on any exit.
# shellcheck disable=SC2015 # `A && pass || fail`: pass never fails
set -uo pipefail

SRC=${NPF_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/netns/lib.sh
. "$SRC/tests/netns/lib.sh"
LAB=$SRC/tests/lab/lab
export NPF_BUILD_DIR=${NPF_BUILD_DIR:-$BUILD}
CLI=$NPF_BUILD_DIR/cli/netpreflight
DAEMON=$NPF_BUILD_DIR/daemon/netpreflightd
# The libraries of `ldd netpreflight netpreflightd` that minbase lacks. A new one: bump TAG.
PKGS=libibverbs1,libinih1,libjansson4,libmnl0,libsodium23,libsystemd0,libzstd1,zlib1g
IMAGE=localhost/npf-debian:bookworm-1
MIRROR=${NPF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# shellcheck source=tests/netns/runcase.bash
. "$SRC/tests/netns/runcase.bash"
NODES=(node1 node2 node3)
# The outer run's pid names what it removes on exit (the inner run is another process).
ID=${NPF_CTR_ID:-$$}
NET=npf-fab-$ID

if [ "${1:-}" = --inside ]; then
	T=$2
	"$LAB" daemons start node1 node2 -- --allow-foreign-netns no >"$T/daemons.out" 2>&1 ||
		die "daemons: $(cat "$T/daemons.out")"
	# pr NODE PODMAN-RUN-ARGS...: a container started by podman inside NODE's namespace
	# (nsenter, not `ip netns exec`: that remounts /sys, and crun needs the cgroup tree).
	pr() {
		local n=$1
		shift
		nsenter --net="/run/netns/$("$LAB" ns "$n")" podman run --rm --pull=never \
			--label "npf.test=$ID" \
			-v "$CLI:/usr/bin/netpreflight:ro" -v "$DAEMON:/usr/sbin/netpreflightd:ro" \
			-e NPF_DAEMON=/usr/sbin/netpreflightd -v "$T/out:/out" "$@"
	}
	mkdir -p "$T/out"

	# host: the node's own namespace, the daemon's socket bind-mounted.
	pr node1 --network host -v "/run/npflab/$LAB_ID:/run/netpreflight" "$IMAGE" \
		netpreflight --socket /run/netpreflight/node1.sock env --nodes node1,node2 \
		>"$T/host.out" 2>"$T/host.err"
	rc=$?
	[ $rc = 0 ] && grep -qx "export NCCL_SOCKET_IFNAME='=$FABRIC_IF'" "$T/host.out" &&
		pass "host: a --network host container gets the environment through the bind-mounted socket: $(grep -c '^export ' "$T/host.out") variables, NCCL_SOCKET_IFNAME==$FABRIC_IF" ||
		fail "host: exit $rc: $(head -c 300 "$T/host.out") $(head -c 300 "$T/host.err")"

	# bridge: a namespace of its own; the daemon refuses it.
	pr node1 --network bridge -v "/run/npflab/$LAB_ID:/run/netpreflight" "$IMAGE" \
		netpreflight --socket /run/netpreflight/node1.sock env --nodes node1,node2 \
		>"$T/bridge.out" 2>"$T/bridge.err"
	rc=$?
	[ $rc = 2 ] && [ ! -s "$T/bridge.out" ] && grep -q 'foreign-netns' "$T/bridge.err" &&
		grep -q 'host network' "$T/bridge.err" &&
		pass "bridge: a container on podman's bridge gets foreign-netns, exit 2: $(grep -m1 foreign-netns "$T/bridge.err" | head -c 160)" ||
		fail "bridge: exit $rc: $(head -c 300 "$T/bridge.out") $(head -c 400 "$T/bridge.err")"

	# standalone: macvlan over each node's fabric NIC (the network definition is podman's,
	# global; each node's podman makes the macvlan in that node's namespace).
	nsenter --net="/run/netns/$("$LAB" ns node1)" podman network create -d macvlan \
		-o parent="$FABRIC_IF" --subnet "$FAB.0/24" "$NET" >"$T/net.out" 2>&1 ||
		die "podman network create: $(cat "$T/net.out")"
	for i in 1 2; do
		pr "node$i" --network "$NET" --ip "$FAB.10$i" --hostname "ctr$i" \
			--add-host "ctr1:$FAB.101" --add-host "ctr2:$FAB.102" "$IMAGE" \
			netpreflight run --standalone --nodes ctr1,ctr2 --job "c-$ID" --timeout 5 -- \
			sh -c "env > /out/ctr$i.env" >"$T/ctr$i.out" 2>"$T/ctr$i.err" &
	done
	wait
	for i in 1 2; do
		v=$(sed -n 's/^NCCL_SOCKET_IFNAME=//p' "$T/out/ctr$i.env" 2>/dev/null)
		[ "$v" = "=eth0" ] && [ "$(sed -n 's/^NETPREFLIGHT_NODE=//p' "$T/out/ctr$i.env")" = "ctr$i" ] &&
			pass "standalone: ctr$i (podman macvlan on node$i) found the path to the other container: NCCL_SOCKET_IFNAME=$v" ||
			fail "standalone: ctr$i: NCCL_SOCKET_IFNAME='$v': $(head -c 500 "$T/ctr$i.err")"
	done
	# kube: `podman kube play` of the DaemonSet's pod (deploy/kubernetes/daemonset.yaml) in
	# node3 (no lab daemon there): the pod template as written, but for what podman 4.3 plays
	# differently from Kubernetes: the image (ours, the build's programs as hostPath volumes),
	# $(NODE_NAME) expanded here and given as a value (podman expands no $(VAR) and serves no
	# spec.nodeName), no hostPort (podman refuses ports with the
	# host network), no key (podman ignores the Secret volume's defaultMode, which the daemon
	# checks, and has no ..data/ layout). What is checked is the least privilege: the daemon
	# runs with no capability, a read-only root, uid 0, serves its socket on the hostPath, and
	# the manifest's own liveness command answers.
	mkdir -p "$T/kube-run"
	python3 - "$SRC/deploy/kubernetes/daemonset.yaml" "$IMAGE" "$CLI" "$DAEMON" "$T/kube-run" \
		"kp-$ID" >"$T/pod.yaml" <<'PY' || die "cannot make the pod from the DaemonSet"
import sys, yaml
src, image, cli, daemon, run, name = sys.argv[1:]
ds = [d for d in yaml.safe_load_all(open(src)) if d and d["kind"] == "DaemonSet"][0]
spec = ds["spec"]["template"]["spec"]
c = spec["containers"][0]
c["image"] = image
c.pop("ports", None)
c["args"] = [a.replace("$(NODE_NAME)", "node3") for a in c["args"] if not a.startswith("--key-file")]
c["env"] = [{"name": "NODE_NAME", "value": "node3"}]
c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "key"] + [
    {"name": "bin-cli", "mountPath": "/usr/bin/netpreflight", "readOnly": True},
    {"name": "bin-daemon", "mountPath": "/usr/sbin/netpreflightd", "readOnly": True}]
spec["volumes"] = [v for v in spec["volumes"] if v["name"] != "key"] + [
    {"name": "bin-cli", "hostPath": {"path": cli, "type": "File"}},
    {"name": "bin-daemon", "hostPath": {"path": daemon, "type": "File"}}]
for v in spec["volumes"]:
    if v["name"] == "run":
        v["hostPath"]["path"] = run
spec.pop("priorityClassName", None)
yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name,
               "labels": {"npf.test": name}}, "spec": spec}, sys.stdout)
PY
	nsenter --net="/run/netns/$("$LAB" ns node3)" podman kube play "$T/pod.yaml" \
		>"$T/kube.out" 2>&1 || fail "kube: podman kube play: $(tail -n 3 "$T/kube.out")"
	ctr=kp-$ID-netpreflightd
	wait_until 30 test -S "$T/kube-run/netpreflight.sock" ||
		fail "kube: no socket on the hostPath: $(podman logs "$ctr" 2>&1 | tail -n 3)"
	mapfile -t live < <(python3 -c 'import sys, yaml
ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]
print("\n".join(ds["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["exec"]["command"]))' \
		"$SRC/deploy/kubernetes/daemonset.yaml")
	got=$(podman inspect "$ctr" --format '{{.State.Status}} caps={{.EffectiveCaps}} ro={{.HostConfig.ReadonlyRootfs}} user={{.Config.User}}' 2>&1)
	status=$(podman exec "$ctr" "${live[@]}" 2>&1 | head -n 1)
	[ "$got" = "running caps=[] ro=true user=0:0" ] && [[ $status == "netpreflightd "*" on node3 "* ]] &&
		pass "kube: the DaemonSet's pod plays: $got, socket on the hostPath, liveness '${live[*]}': $status" ||
		fail "kube: '$got' (want 'running caps=[] ro=true user=0:0'), liveness: $status; $(podman logs "$ctr" 2>&1 | tail -n 3)"

	finish
	exit
fi

need_root
need_cmds ip nft jq unshare nsenter timeout podman runc debootstrap
need_netns
[ -x "$CLI" ] && [ -x "$DAEMON" ] || skip "not built ($NPF_BUILD_DIR)"
T=$(mktemp -d /tmp/npf-ctr.XXXXXX)
chmod 755 "$T"
# This test's own podman settings, the machine's left alone: runc (crun refuses a hybrid
# cgroup v1 tree, which this machine has) and no default ulimits (podman's nofile default is
# above the hard limit a test machine may have: setrlimit EPERM).
cat >"$T/containers.conf" <<CONF
[containers]
default_ulimits = []
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF=$T/containers.conf
cleanup() {
	podman ps -aq --filter "label=npf.test=$ID" | xargs -r podman rm -f >/dev/null 2>&1
	podman network rm -f "$NET" >/dev/null 2>&1
	podman pod rm -f "kp-$ID" >/dev/null 2>&1
	rm -rf "$T"
}
on_exit cleanup
if ! podman image exists "$IMAGE"; then
	echo "  building $IMAGE: debootstrap --variant=minbase bookworm from $MIRROR"
	timeout 900 debootstrap --variant=minbase --include="$PKGS" bookworm "$T/rootfs" "$MIRROR" \
		>"$T/debootstrap.log" 2>&1 ||
		skip "no image: debootstrap from $MIRROR failed: $(tail -n 2 "$T/debootstrap.log")"
	tar -C "$T/rootfs" -c . | podman import - "$IMAGE" >/dev/null ||
		die "podman import failed"
	rm -rf "$T/rootfs"
fi
run_lab "$T/ctr.lab" "netns.containers: podman in the lab's nodes" "port 7718"
NPF_CTR_ID=$ID "$LAB" run "$T/ctr.lab" --id "ct$(($$ % 100000))" -q -- "$0" --inside "$T"
