"""The objects a fresh kind v1.32 cluster holds beyond nodes, namespaces and kube-system add-ons.

`kubectl get` on any resource a real cluster lists in `api-resources` should answer what a kind
cluster answers right after `kind create cluster` (with metrics-server installed, which the twin's
`kubectl top` implies):

- node identity: `status.nodeInfo.machineID` is per node (kind writes a fresh /etc/machine-id in
  every node container), while `systemUUID` and `bootID` come from the one host kernel all kind
  nodes share, so they are equal across nodes; all drawn from the `node-identity` stream;
- `componentstatuses`: scheduler, controller-manager and etcd-0, all Healthy (deprecated: the
  kind row carries the API server's warning);
- `apiservices`: one Local APIService per served group/version, as the aggregator's
  autoregistration creates them, plus `v1beta1.metrics.k8s.io` backed by
  `kube-system/metrics-server`;
- API Priority and Fairness: the mandatory and suggested FlowSchemas and
  PriorityLevelConfigurations of 1.32 with their precedences, distinguishers and queuing;
- `csinodes`: one per node, no drivers (kind's local-path provisioner is not a CSI driver);
- `certificatesigningrequests`: the kubelet client-certificate requests of TLS bootstrap, one per
  node (the control plane's by `system:node:<name>`, the workers' by kind's bootstrap token
  `system:bootstrap:abcdef`), auto-approved and issued; the csrcleaner controller removes them
  (controllers/csr_cleaner.py). Their `request`/`certificate` bytes are PEM-framed stand-ins;
- nothing for RuntimeClasses, ValidatingAdmissionPolicies, CSIStorageCapacities: kind has none.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

Obj = dict[str, Any]

# kube-aggregator's apiVersionPriorities: (group, version) → (groupPriorityMinimum, versionPriority).
_API_PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1), ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("apps", "v1"): (17800, 15), ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15), ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15), ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15), ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15), ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15), ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15), ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15), ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15), ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
_AGGREGATED = {("metrics.k8s.io", "v1beta1"): ("kube-system", "metrics-server", 100, 100)}

# (name, type, nominal shares, lendable %, (queues, hand size, queue length) or None → Reject)
_PRIORITY_LEVELS: tuple[tuple[str, str, int, int, tuple[int, int, int] | None], ...] = (
    ("catch-all", "Limited", 5, 0, None),
    ("exempt", "Exempt", 0, 0, None),
    ("global-default", "Limited", 20, 50, (128, 6, 50)),
    ("leader-election", "Limited", 10, 0, (16, 4, 50)),
    ("node-high", "Limited", 40, 25, (64, 6, 50)),
    ("system", "Limited", 30, 33, (64, 6, 50)),
    ("workload-high", "Limited", 40, 50, (128, 6, 50)),
    ("workload-low", "Limited", 100, 90, (128, 6, 50)),
)
# (name, priority level, matching precedence, distinguisher, subjects)
_GROUP = "Group"
_FLOW_SCHEMAS: tuple[tuple[str, str, int, str | None, tuple[tuple[str, str], ...]], ...] = (
    ("exempt", "exempt", 1, None, ((_GROUP, "system:masters"),)),
    ("probes", "exempt", 2, None, ((_GROUP, "system:unauthenticated"), (_GROUP, "system:authenticated"))),
    ("system-leader-election", "leader-election", 100, "ByUser",
     (("User", "system:kube-controller-manager"), ("User", "system:kube-scheduler"))),
    ("endpoint-controller", "workload-high", 150, "ByUser",
     (("User", "system:kube-controller-manager"),)),
    ("workload-leader-election", "leader-election", 200, "ByUser",
     (("ServiceAccount", "kube-system/*"),)),
    ("system-node-high", "node-high", 400, "ByUser", ((_GROUP, "system:nodes"),)),
    ("system-nodes", "system", 500, "ByUser", ((_GROUP, "system:nodes"),)),
    ("kube-controller-manager", "workload-high", 800, "ByNamespace",
     (("User", "system:kube-controller-manager"),)),
    ("kube-scheduler", "workload-high", 800, "ByNamespace", (("User", "system:kube-scheduler"),)),
    ("kube-system-service-accounts", "workload-high", 900, "ByNamespace",
     (("ServiceAccount", "kube-system/*"),)),
    ("service-accounts", "workload-low", 9000, "ByUser", ((_GROUP, "system:serviceaccounts"),)),
    ("global-default", "global-default", 9900, "ByUser",
     ((_GROUP, "system:unauthenticated"), (_GROUP, "system:authenticated"))),
    ("catch-all", "catch-all", 10000, "ByUser",
     ((_GROUP, "system:unauthenticated"), (_GROUP, "system:authenticated"))),
)
_APF_ANNOTATIONS = {"apf.kubernetes.io/autoupdate-spec": "true"}


def stamp_node_identity(node: Obj, twin: Twin) -> Obj:
    """Fill `status.nodeInfo`'s machineID, systemUUID and bootID (see the module docstring)."""
    rng = twin.rng.stream("node-identity")
    host = random_uuid(twin, "node-identity-host")
    info = node.setdefault("status", {}).setdefault("nodeInfo", {})
    info["machineID"] = f"{rng.getrandbits(128):032x}"
    info["systemUUID"] = host[0]
    info["bootID"] = host[1]
    return node


def random_uuid(twin: Twin, stream: str) -> tuple[str, str]:
    """The host's (product UUID, boot ID): the same for every node, drawn afresh from a stream of
    their own, so the per-node draws never shift them."""
    rng = twin.rng.stream(stream)
    state = rng.getstate()
    values = (str(uuid.UUID(int=rng.getrandbits(128), version=4)),
              str(uuid.UUID(int=rng.getrandbits(128), version=4)))
    rng.setstate(state)
    return values


def _condition(ctype: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {"type": ctype, "status": status, "lastTransitionTime": now, "reason": reason,
            "message": message}


def component_statuses() -> list[Obj]:
    return [{"apiVersion": "v1", "kind": "ComponentStatus", "metadata": {"name": name},
             "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}
            for name in ("scheduler", "controller-manager", "etcd-0")]


def api_services(twin: Twin) -> list[Obj]:
    from sregym.twin.machinery.authz import HIDDEN_GROUPS
    from sregym.twin.machinery.served_versions import group_versions

    now = twin.clock.iso()
    out: list[Obj] = []
    for group, versions in group_versions(twin.kinds, "admin").items():
        if group in HIDDEN_GROUPS:
            continue
        for version in versions:
            name = f"{version}.{group}" if group else f"{version}."
            spec: Obj = {"group": group, "version": version}
            meta: Obj = {"name": name}
            aggregated = _AGGREGATED.get((group, version))
            if aggregated is None:
                group_min, version_priority = _API_PRIORITIES.get((group, version), (1000, 15))
                meta["labels"] = {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
                spec.update(groupPriorityMinimum=group_min, versionPriority=version_priority)
                status = _condition("Available", "True", "Local",
                                    "Local APIServices are always available", now)
            else:
                namespace, service, group_min, version_priority = aggregated
                meta["labels"] = {"k8s-app": service}
                spec = {"service": {"namespace": namespace, "name": service, "port": 443},
                        **spec, "insecureSkipTLSVerify": True,
                        "groupPriorityMinimum": group_min, "versionPriority": version_priority}
                status = _condition("Available", "True", "Passed", "all checks passed", now)
            out.append({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                        "metadata": meta, "spec": spec, "status": {"conditions": [status]}})
    return sorted(out, key=lambda o: o["metadata"]["name"])


def priority_levels() -> list[Obj]:
    out = []
    for name, ptype, shares, lendable, queuing in _PRIORITY_LEVELS:
        spec: Obj = {"type": ptype}
        if ptype == "Exempt":
            spec["exempt"] = {"nominalConcurrencyShares": shares, "lendablePercent": lendable}
        else:
            response: Obj = {"type": "Reject"} if queuing is None else {
                "type": "Queue",
                "queuing": {"queues": queuing[0], "handSize": queuing[1], "queueLengthLimit": queuing[2]}}
            spec["limited"] = {"nominalConcurrencyShares": shares, "lendablePercent": lendable,
                               "limitResponse": response}
        out.append({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
                    "metadata": {"name": name, "annotations": dict(_APF_ANNOTATIONS)},
                    "spec": spec, "status": {}})
    return out


def _subject(kind: str, name: str) -> Obj:
    if kind == "ServiceAccount":
        namespace, _, sa = name.partition("/")
        return {"kind": kind, "serviceAccount": {"namespace": namespace, "name": sa}}
    return {"kind": kind, kind.lower(): {"name": name}}


def flow_schemas(twin: Twin) -> list[Obj]:
    now = twin.clock.iso()
    out = []
    for name, level, precedence, method, subjects in _FLOW_SCHEMAS:
        spec: Obj = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence,
                     "rules": [{"subjects": [_subject(k, n) for k, n in subjects],
                                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                   "resources": ["*"], "clusterScope": True,
                                                   "namespaces": ["*"]}],
                                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}
        if method:
            spec["distinguisherMethod"] = {"type": method}
        dangling = _condition("Dangling", "False", "Found",
                              f'This FlowSchema references the PriorityLevelConfiguration object '
                              f'named "{level}" and it exists', now)
        out.append({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                    "metadata": {"name": name, "annotations": dict(_APF_ANNOTATIONS)},
                    "spec": spec, "status": {"conditions": [dangling]}})
    return out


def csi_nodes(twin: Twin) -> list[Obj]:
    out = []
    for node in twin.store.scan("Node"):
        meta = node["metadata"]
        out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                    "metadata": {"name": meta["name"], "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Node", "name": meta["name"],
                         "uid": meta.get("uid", "")}]},
                    "spec": {"drivers": None}})
    return out


def _pem(label: str, rng: Any, size: int) -> str:
    import base64

    body = base64.b64encode(rng.getrandbits(size * 8).to_bytes(size, "big")).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    text = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"
    return base64.b64encode(text.encode()).decode()


def kubelet_csrs(twin: Twin) -> list[Obj]:
    now = twin.clock.iso()
    rng = twin.rng.stream("cluster-defaults")
    out = []
    for node in twin.store.scan("Node"):
        name = node["metadata"]["name"]
        control_plane = "node-role.kubernetes.io/control-plane" in (node["metadata"].get("labels") or {})
        if control_plane:
            user, groups = f"system:node:{name}", ["system:nodes", "system:authenticated"]
            reason, message = "AutoApproved", "Auto approving self kubelet client certificate after SubjectAccessReview."
        else:
            user = "system:bootstrap:abcdef"
            groups = ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token",
                      "system:authenticated"]
            reason, message = "AutoApproved", "Auto approving kubelet client certificate after SubjectAccessReview."
        out.append({
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": f"csr-{twin.rng.suffix(5, name='cluster-defaults')}",
                         "generateName": "csr-"},
            "spec": {"groups": groups, "request": _pem("CERTIFICATE REQUEST", rng, 180),
                     "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                     "usages": ["digital signature", "client auth"], "username": user},
            "status": {"conditions": [{"type": "Approved", "status": "True", "reason": reason,
                                       "message": message, "lastUpdateTime": now,
                                       "lastTransitionTime": now}],
                       "certificate": _pem("CERTIFICATE", rng, 540)}})
    return out


def default_objects(twin: Twin) -> list[Obj]:
    """Everything above, in creation order (after nodes and namespaces exist). Their uids come from
    a stream of their own, so the objects every run creates later keep the uids they had."""
    objects = [*component_statuses(), *api_services(twin), *priority_levels(), *flow_schemas(twin),
               *csi_nodes(twin), *kubelet_csrs(twin)]
    for obj in objects:
        obj["metadata"]["uid"] = twin.rng.uuid("cluster-defaults")
    return objects


__all__ = ["api_services", "component_statuses", "csi_nodes", "default_objects", "flow_schemas",
           "kubelet_csrs", "priority_levels", "stamp_node_identity"]
