#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pkg.kubernetes: offline validation of deploy/kubernetes/ (no cluster, no network).

There is no Kubernetes schema validator in Debian 12 and the OpenAPI schemas would have to be
downloaded, so this checks structure with python3-yaml against the rules the manifests rely on:
  - every document parses, has apiVersion/kind/metadata.name, and every field this test knows
    for its kind has the right type (one table, FIELDS);
  - pod templates: container names unique, every volumeMount names a volume, every
    downward-API env reference is one the API serves;
  - the DaemonSet: selector matches the template, host network with ClusterFirstWithHostNet,
    no privilege (capabilities drop ALL and add none, no privileged, no escalation, read-only
    root), liveness and readiness by `netpreflight ... status`, the socket on the hostPath
    /run/netpreflight, the key from a Secret with a mode the daemon accepts (no bit of 0137)
    and named by its ..data/ path (the daemon opens it with O_NOFOLLOW);
  - the PyTorchJob and JobSet: the entrypoint is `netpreflight run --standalone ... --
    torchrun`; the shell script is run for one pod with a stand-in `netpreflight` and the
    environment Kubernetes would give it, and the node list, tag and node name it passes are
    checked, the node list expanded by the real CLI (`netpreflight run --json` with a socket
    that does not exist: it parses --nodes, then starts nothing).
Not run here: a real cluster, `kubectl apply --dry-run=server`, `podman kube play`.
Usage: kubernetes.py DEPLOY_DIR CLI
"""
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml missing")
    sys.exit(77)

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL " + msg)


def ok(msg):
    print("ok   " + msg)


def get(obj, path):
    for key in path.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


# Per kind: the API group/version and the typed fields this test relies on (path -> type).
POD = "spec.template.spec"
FIELDS = {
    "Namespace": ("v1", {}),
    "ServiceAccount": ("v1", {"automountServiceAccountToken": bool}),
    "DaemonSet": ("apps/v1", {"spec.selector.matchLabels": dict,
                              "spec.template.metadata.labels": dict,
                              POD + ".containers": list, POD + ".volumes": list,
                              POD + ".hostNetwork": bool, POD + ".dnsPolicy": str}),
    "PyTorchJob": ("kubeflow.org/v1", {"spec.pytorchReplicaSpecs": dict}),
    "JobSet": ("jobset.x-k8s.io/v1alpha2", {"spec.replicatedJobs": list,
                                            "spec.network.subdomain": str}),
}
# Downward API fields an env var may take (fieldRef.fieldPath).
DOWNWARD = re.compile(r"^(metadata\.(name|namespace|uid)|spec\.(nodeName|serviceAccountName)|"
                      r"status\.(hostIP|podIP|podIPs)|metadata\.labels\['[^']+'\]|"
                      r"metadata\.annotations\['[^']+'\])$")


def pod_specs(doc):
    """(where, pod spec) of every pod template in a document."""
    kind = doc["kind"]
    if kind == "DaemonSet":
        yield "DaemonSet", get(doc, POD)
    elif kind == "PyTorchJob":
        for rtype, rs in doc["spec"]["pytorchReplicaSpecs"].items():
            yield "PyTorchJob " + rtype, get(rs, "template.spec")
    elif kind == "JobSet":
        for rj in doc["spec"]["replicatedJobs"]:
            yield "JobSet " + rj["name"], get(rj, "template.spec.template.spec")


def check_pod(where, spec):
    vols = {v["name"] for v in spec.get("volumes", [])}
    names = [c["name"] for c in spec["containers"]]
    if len(names) != len(set(names)):
        fail("%s: container names repeat: %s" % (where, names))
    for c in spec["containers"]:
        for m in c.get("volumeMounts", []):
            if m["name"] not in vols:
                fail("%s: mount %s names no volume" % (where, m["name"]))
        for e in c.get("env", []):
            ref = get(e, "valueFrom.fieldRef.fieldPath")
            if ref is not None and not DOWNWARD.match(ref):
                fail("%s: env %s: %s is not a downward API field" % (where, e["name"], ref))
    ok("%s: %d container(s), mounts name volumes, env references valid" % (where, len(names)))


def check_daemonset(doc):
    spec = get(doc, POD)
    sel, labels = get(doc, "spec.selector.matchLabels"), get(doc, "spec.template.metadata.labels")
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        fail("DaemonSet: selector %s does not match the template's labels %s" % (sel, labels))
    if spec.get("hostNetwork") is not True or spec.get("dnsPolicy") != "ClusterFirstWithHostNet":
        fail("DaemonSet: needs hostNetwork: true and dnsPolicy: ClusterFirstWithHostNet")
    c = spec["containers"][0]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    if (caps.get("drop") != ["ALL"] or caps.get("add") or sc.get("privileged") or
            sc.get("allowPrivilegeEscalation") is not False or
            sc.get("readOnlyRootFilesystem") is not True):
        fail("DaemonSet: not least privilege: %s" % sc)
    else:
        ok("DaemonSet: every capability dropped, none added, no escalation, read-only root")
    for probe in ("livenessProbe", "readinessProbe"):
        cmd = get(c, probe + ".exec.command") or []
        if not cmd or not cmd[0].endswith("/netpreflight") or cmd[-1] != "status":
            fail("DaemonSet: %s is not `netpreflight ... status`: %s" % (probe, cmd))
    args = c.get("args", [])
    opt = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if "=" in a}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in spec["volumes"]}
    sock_dir = os.path.dirname(opt.get("--socket", ""))
    host = get(vols.get(mounts.get(sock_dir), {}), "hostPath.path")
    if host != "/run/netpreflight":
        fail("DaemonSet: socket %s is not on the hostPath /run/netpreflight (%s)" %
             (opt.get("--socket"), host))
    key = opt.get("--key-file", "")
    kdir = key.split("/..data/")[0] if "/..data/" in key else None
    kvol = vols.get(mounts.get(kdir), {})
    mode = get(kvol, "secret.defaultMode")
    if kdir is None or "secret" not in kvol or mode is None or mode & 0o137:
        fail("DaemonSet: key %s: want a Secret volume's ..data/ path, mode without 0137 (%s)" %
             (key, mode))
    else:
        ok("DaemonSet: key from Secret %s, mode %04o, by its ..data path" %
           (kvol["secret"]["secretName"], mode))
    if "--node-name=$(NODE_NAME)" not in args:
        fail("DaemonSet: the node's name should be spec.nodeName ($(NODE_NAME))")


def run_entrypoint(where, script, env, cli):
    """Runs the pod's script with a stand-in netpreflight; returns its argv."""
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(tmp + "/bin")
        with open(tmp + "/bin/netpreflight", "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$ARGS_OUT"\n')
        os.chmod(tmp + "/bin/netpreflight", 0o755)
        keydir = tmp + "/key"
        os.makedirs(keydir)
        with open(keydir + "/cluster.key", "w") as f:
            f.write("npf-key-v1 " + "0" * 64 + "\n")
        script = script.replace("/etc/netpreflight/key", keydir)
        e = dict(env, PATH=tmp + "/bin:/usr/bin:/bin", TMPDIR=tmp, ARGS_OUT=tmp + "/args")
        r = subprocess.run(["/bin/sh", "-c", script], env=e, capture_output=True, text=True)
        if r.returncode != 0:
            fail("%s: the entrypoint failed: %s" % (where, r.stderr.strip()))
            return None
        argv = open(tmp + "/args").read().splitlines()
        if oct(os.stat(tmp + "/netpreflight.key").st_mode & 0o777) != "0o600":
            fail("%s: the key copy is not mode 0600" % where)
    return argv


def check_job(where, spec, env, want_nodes, want_job, want_self, cli):
    c = spec["containers"][0]
    if c.get("command") != ["/bin/sh", "-c"] or len(c.get("args", [])) != 1:
        fail("%s: the entrypoint should be /bin/sh -c SCRIPT" % where)
        return
    script = c["args"][0]
    names = {e["name"] for e in c.get("env", [])}
    missing = [k for k in env if k not in names and k not in ("RANK", "MASTER_ADDR",
                                                               "MASTER_PORT",
                                                               "JOB_COMPLETION_INDEX")]
    if missing:
        fail("%s: the manifest does not set %s" % (where, missing))
    argv = run_entrypoint(where, script, env, cli)
    if argv is None:
        return
    if argv[:2] != ["run", "--standalone"] or "--" not in argv or \
            argv[argv.index("--") + 1] != "torchrun":
        fail("%s: not `netpreflight run --standalone ... -- torchrun`: %s" % (where, argv))
        return

    def opt(name):
        return argv[argv.index(name) + 1] if name in argv else None
    # The real CLI expands the node list (it parses --nodes before it needs a daemon).
    r = subprocess.run([cli, "--socket", "/nonexistent/sock", "run", "--nodes", opt("--nodes"),
                        "--job", opt("--job"), "--json"], capture_output=True, text=True)
    got = re.search(r'"nodes": "([^"]*)"', r.stdout)
    got = got.group(1) if got else "(no JSON: %s)" % r.stderr.strip()
    if got != want_nodes or opt("--job") != want_job or opt("--node-name") != want_self:
        fail("%s: nodes %s job %s node-name %s; want %s %s %s" %
             (where, got, opt("--job"), opt("--node-name"), want_nodes, want_job, want_self))
    else:
        ok("%s: run --standalone --nodes %s (%s) --job %s --node-name %s -- torchrun" %
           (where, opt("--nodes"), got, want_job, want_self))
    if want_self not in want_nodes.split(","):
        fail("%s: this pod's name %s is not in its node list" % (where, want_self))


def main():
    deploy, cli = sys.argv[1], sys.argv[2]
    docs = []
    for name in sorted(os.listdir(deploy)):
        if name.endswith(".yaml"):
            with open(os.path.join(deploy, name)) as f:
                try:
                    docs += [(name, d) for d in yaml.safe_load_all(f) if d is not None]
                except yaml.YAMLError as e:
                    fail("%s: %s" % (name, e))
    kinds = [d["kind"] for _, d in docs]
    for want in ("DaemonSet", "PyTorchJob", "JobSet"):
        if want not in kinds:
            fail("no %s in %s" % (want, deploy))
    for name, d in docs:
        kind = d.get("kind")
        if kind not in FIELDS or not get(d, "metadata.name"):
            fail("%s: unknown kind %s or no metadata.name" % (name, kind))
            continue
        api, fields = FIELDS[kind]
        if d.get("apiVersion") != api:
            fail("%s: %s apiVersion %s, want %s" % (name, kind, d.get("apiVersion"), api))
        for path, typ in fields.items():
            if not isinstance(get(d, path), typ):
                fail("%s: %s: %s is not a %s" % (name, kind, path, typ.__name__))
        for where, spec in pod_specs(d):
            check_pod(where, spec)
        if kind == "DaemonSet":
            check_daemonset(d)
        elif kind == "PyTorchJob":
            job = d["metadata"]["name"]
            n = sum(r["replicas"] for r in d["spec"]["pytorchReplicaSpecs"].values())
            nodes = ",".join([job + "-master-0"] + ["%s-worker-%d" % (job, i)
                                                     for i in range(n - 1)])
            env = {"NNODES": str(n), "JOB_NAME": job, "POD_NAME": job + "-worker-1",
                   "RANK": "2", "MASTER_ADDR": job + "-master-0", "MASTER_PORT": "23456"}
            spec = get(d["spec"]["pytorchReplicaSpecs"]["Worker"], "template.spec")
            check_job("PyTorchJob worker 1", spec, env, nodes, job, job + "-worker-1", cli)
        elif kind == "JobSet":
            js = d["metadata"]["name"]
            rj = d["spec"]["replicatedJobs"][0]
            n = rj["template"]["spec"]["parallelism"]
            sub = d["spec"]["network"]["subdomain"]
            nodes = ",".join("%s-%s-0-%d.%s" % (js, rj["name"], i, sub) for i in range(n))
            env = {"NNODES": str(n), "JOBSET": js, "JOB_INDEX": "0", "RESTART_ATTEMPT": "1",
                   "JOB_COMPLETION_INDEX": "2"}
            spec = get(rj, "template.spec.template.spec")
            check_job("JobSet pod 2", spec, env, nodes, js + ".r1",
                      "%s-%s-0-2.%s" % (js, rj["name"], sub), cli)
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
