#!/usr/bin/env python3
"""Stands in for kube-controller-manager (which cannot be built here): one Pod
per Deployment replica (1), StatefulSet and Job of a namespace, from its pod
template, named after its owner and the owner's generation so that a changed
template (helm upgrade) replaces the pod. StatefulSet claim templates become
emptyDirs (no volume provisioner either)."""
import json, subprocess, sys
ns = sys.argv[1]
k = ["kubectl", "-n", ns]
# Stand-in for the service-account controller.
subprocess.run(k + ["create", "serviceaccount", "default"], capture_output=True)
objs = json.loads(subprocess.check_output(k + ["get", "deployments,statefulsets,jobs", "-o", "json"]))["items"]
want = {}
for o in objs:
    kind, name = o["kind"], o["metadata"]["name"]
    tpl = o["spec"]["template"]
    spec = tpl["spec"]
    for vct in o["spec"].get("volumeClaimTemplates", []):
        spec.setdefault("volumes", []).append({"name": vct["metadata"]["name"], "emptyDir": {}})
    if kind == "Job":
        spec["restartPolicy"] = "OnFailure"
    # the template's hash, as the ReplicaSet's pod-template-hash
    h = subprocess.run(["sha1sum"], input=json.dumps(tpl, sort_keys=True).encode(), capture_output=True).stdout.decode()[:8]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"{name}-{h}", "namespace": ns, "labels": {**tpl["metadata"].get("labels", {}), "zs-owner": name},
                        "annotations": tpl["metadata"].get("annotations", {}),
                        "ownerReferences": [{"apiVersion": o["apiVersion"], "kind": kind, "name": name, "uid": o["metadata"]["uid"]}]},
           "spec": spec}
    want[pod["metadata"]["name"]] = pod
# Stand-in for cluster DNS: each pod knows the namespace's Services by name.
svcs = json.loads(subprocess.check_output(k + ["get", "services", "-o", "json"]))["items"]
aliases = [{"ip": sv["spec"]["clusterIP"], "hostnames": [sv["metadata"]["name"], sv["metadata"]["name"] + "." + ns,
            sv["metadata"]["name"] + "." + ns + ".svc", sv["metadata"]["name"] + "." + ns + ".svc.cluster.local"]}
           for sv in svcs if sv["spec"].get("clusterIP") not in (None, "None")]
for pod in want.values():
    pod["spec"]["hostAliases"] = aliases
have = json.loads(subprocess.check_output(k + ["get", "pods", "-l", "zs-owner", "-o", "json"]))["items"]
for p in have:
    if p["metadata"]["name"] not in want:
        subprocess.run(k + ["delete", "pod", p["metadata"]["name"], "--wait=false"], check=True)
for name, pod in want.items():
    if not any(p["metadata"]["name"] == name for p in have):
        subprocess.run(k + ["create", "-f", "-"], input=json.dumps(pod).encode(), check=True)

# Stand-in for kube-proxy: ClusterIP:port -> the first ready pod of the
# selector, in the nat chain ZS-SVC (rebuilt each run).
def sh(*a): return subprocess.run(list(a), capture_output=True)
sh("iptables", "-t", "nat", "-N", "ZS-SVC")
sh("iptables", "-t", "nat", "-F", "ZS-SVC")
for chain in ("PREROUTING", "OUTPUT"):
    if sh("iptables", "-t", "nat", "-C", chain, "-j", "ZS-SVC").returncode:
        sh("iptables", "-t", "nat", "-I", chain, "-j", "ZS-SVC")
if sh("iptables", "-t", "nat", "-C", "POSTROUTING", "-s", "10.244.0.0/24", "-d", "10.244.0.0/24", "-j", "MASQUERADE").returncode:
    sh("iptables", "-t", "nat", "-I", "POSTROUTING", "-s", "10.244.0.0/24", "-d", "10.244.0.0/24", "-j", "MASQUERADE")
# Docker's engine sets FORWARD's policy to DROP: let pod traffic through.
for rule in (["-s", "10.244.0.0/24"], ["-d", "10.244.0.0/24"]):
    if sh("iptables", "-C", "FORWARD", *rule, "-j", "ACCEPT").returncode:
        sh("iptables", "-I", "FORWARD", *rule, "-j", "ACCEPT")
pods = json.loads(subprocess.check_output(k + ["get", "pods", "-o", "json"]))["items"]
for sv in svcs:
    sel = sv["spec"].get("selector")
    if not sel or sv["spec"].get("clusterIP") in (None, "None"):
        continue
    match = [p for p in pods if p["status"].get("podIP") and p["status"].get("phase") == "Running" and "deletionTimestamp" not in p["metadata"]
             and all(p["metadata"].get("labels", {}).get(a) == b for a, b in sel.items())]
    for port in sv["spec"]["ports"]:
        tp, p = port.get("targetPort", port["port"]), None
        for cand in match:  # the first pod that has the port
            if not isinstance(tp, str):
                p = cand
                break
            named = [cp["containerPort"] for c in cand["spec"]["containers"] for cp in c.get("ports", []) if cp.get("name") == tp]
            if named:
                p, tp = cand, named[0]
                break
        if p is None:
            continue
        sh("iptables", "-t", "nat", "-A", "ZS-SVC", "-d", sv["spec"]["clusterIP"], "-p", "tcp", "--dport", str(port["port"]),
           "-j", "DNAT", "--to-destination", f'{p["status"]["podIP"]}:{tp}')
