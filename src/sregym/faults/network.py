"""Faults in how traffic finds a workload: Service ports, pod labels, probes, replica counts, pod DNS
settings and the cluster DNS server's configuration.

Like `faults.objects`, every injector saves the part of the object it changes and `recover` puts
exactly that part back onto the live object, so what controllers did meanwhile (status, replica
counts of other workloads) is kept. All of them are ordinary `kubectl patch`-style writes: a wrong
`targetPort`, a label added to a pod template, a probe pointing at a port nothing listens on, a
Deployment scaled to zero, a pod template with `dnsPolicy: None`, a `template` block in the
Corefile. None leaves a marker behind: the agent has to read the objects to find the cause.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.objects import required, restore_field, template_spec_path

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


def _container_index(obj: dict[str, Any], kind: str, container: str | None) -> int:
    spec = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"] if kind == "CronJob" \
        else obj["spec"]["template"]["spec"]
    names = [c.get("name") for c in spec.get("containers") or []]
    if container is None:
        return 0
    if container not in names:
        raise LookupError(f"cannot inject: {kind} {obj['metadata']['name']} has no container {container!r}")
    return names.index(container)


# --------------------------------------------------------------------- Service targetPort
class ServiceTargetPortParams(FaultParams):
    namespace: str
    name: str
    port: int  # the Service port whose targetPort changes
    target_port: int | str


@fault
class SetServiceTargetPort(Fault):
    """Point one Service port at a container port nothing listens on: the Service keeps its ready
    endpoints, but every connection through it is reset by the pod's kernel (refused)."""

    name = "set_service_target_port"
    Params = ServiceTargetPortParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ServiceTargetPortParams)
        obj = required(cluster, "Service", p.namespace, p.name)
        ports = obj["spec"].get("ports") or []
        index = next((i for i, item in enumerate(ports) if int(item.get("port") or 0) == p.port), None)
        if index is None:
            raise LookupError(f"cannot inject: Service {p.name} has no port {p.port}")
        cluster.patch("Service", p.namespace, p.name,
                      [{"op": "replace", "path": f"/spec/ports/{index}/targetPort", "value": p.target_port}],
                      patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ServiceTargetPortParams)
        restore_field(cluster, "Service", p.namespace, p.name, "spec", state["spec"])


# -------------------------------------------------------------------- pod template labels
class TemplateLabelsParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    names: tuple[str, ...]
    labels: dict[str, str]


@fault
class AddPodTemplateLabels(Fault):
    """Add labels to the pod templates of workloads (a routing label copied onto the wrong
    Deployment): each rolls out, and a Service selecting the label picks up every pod carrying it."""

    name = "add_pod_template_labels"
    Params = TemplateLabelsParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, TemplateLabelsParams)
        saved: dict[str, Any] = {}
        for name in p.names:
            obj = required(cluster, p.kind, p.namespace, name)
            saved[name] = obj["spec"]
            cluster.patch(p.kind, p.namespace, name,
                          {"spec": {"template": {"metadata": {"labels": dict(p.labels)}}}}, patch_type="merge")
        return {"specs": saved}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, TemplateLabelsParams)
        for name in p.names:
            if name in state["specs"]:
                restore_field(cluster, p.kind, p.namespace, name, "spec", state["specs"][name])


# ------------------------------------------------------------------------------- probes
ProbeKind = Literal["readinessProbe", "livenessProbe", "startupProbe"]


class ProbeParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str
    container: str | None = None
    probe_kind: ProbeKind
    probe: dict[str, Any]


@fault
class SetProbe(Fault):
    """Set (or replace) one container probe: a readiness probe on a port the server does not
    listen on keeps new pods out of the endpoints; a liveness probe with a 1 s budget and no
    tolerance kills a server the moment it answers slowly."""

    name = "set_probe"
    Params = ProbeParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ProbeParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        index = _container_index(obj, p.kind, p.container)
        path = f"{template_spec_path(p.kind)}/containers/{index}/{p.probe_kind}"
        cluster.patch(p.kind, p.namespace, p.name, [{"op": "add", "path": path, "value": dict(p.probe)}],
                      patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ProbeParams)
        restore_field(cluster, p.kind, p.namespace, p.name, "spec", state["spec"])


# ------------------------------------------------------------------------------ replicas
class ScaleParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str
    replicas: int = 0


@fault
class ScaleWorkload(Fault):
    """Scale a workload (to zero: a cost-cutting script or a mistaken `kubectl scale` on the
    wrong context). Its Service keeps existing with no endpoints."""

    name = "scale_workload"
    Params = ScaleParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ScaleParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        cluster.patch(p.kind, p.namespace, p.name, {"spec": {"replicas": p.replicas}}, patch_type="merge")
        return {"replicas": (obj.get("spec") or {}).get("replicas", 1)}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ScaleParams)
        if cluster.get(p.kind, p.namespace, p.name) is not None:
            cluster.patch(p.kind, p.namespace, p.name, {"spec": {"replicas": state["replicas"]}},
                          patch_type="merge")


# ---------------------------------------------------------------------------- dnsPolicy
class DnsPolicyParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str
    dns_policy: Literal["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]
    dns_config: dict[str, Any] | None = None


@fault
class SetDnsPolicy(Fault):
    """Change a pod template's `dnsPolicy` (and `dnsConfig`): with `None` and a public
    nameserver, the pods' resolv.conf no longer points at CoreDNS, so cluster names do not
    resolve from inside them while everything else looks healthy."""

    name = "set_dns_policy"
    Params = DnsPolicyParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, DnsPolicyParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        base = template_spec_path(p.kind)
        ops: list[dict[str, Any]] = [{"op": "add", "path": f"{base}/dnsPolicy", "value": p.dns_policy}]
        if p.dns_config is not None:
            ops.append({"op": "add", "path": f"{base}/dnsConfig", "value": dict(p.dns_config)})
        cluster.patch(p.kind, p.namespace, p.name, ops, patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, DnsPolicyParams)
        restore_field(cluster, p.kind, p.namespace, p.name, "spec", state["spec"])


# ------------------------------------------------------------------ CoreDNS Corefile
class CorefileTemplateParams(FaultParams):
    names: tuple[str, ...]  # fully qualified names answered with `rcode`
    rcode: str = "NXDOMAIN"
    namespace: str = "kube-system"
    configmap: str = "coredns"
    key: str = "Corefile"
    before: str = "kubernetes"  # the directive the block is inserted in front of


def template_block(names: tuple[str, ...], rcode: str, indent: str = "    ") -> str:
    """A CoreDNS `template` block answering every query in the zones `names` with `rcode`."""
    zones = " ".join(n.rstrip(".") for n in names)
    return (f"{indent}template ANY ANY {zones} {{\n"
            f"{indent}   rcode {rcode}\n"
            f"{indent}}}\n")


@fault
class CorefileTemplate(Fault):
    """Insert a `template` block into CoreDNS's Corefile (a leftover from a migration that
    blackholed an old name) so queries for some Service names get NXDOMAIN. CoreDNS's `reload`
    plugin picks the change up without a restart."""

    name = "corefile_template"
    Params = CorefileTemplateParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, CorefileTemplateParams)
        obj = required(cluster, "ConfigMap", p.namespace, p.configmap)
        text = (obj.get("data") or {}).get(p.key)
        if not text:
            raise LookupError(f"cannot inject: ConfigMap {p.configmap} has no {p.key}")
        lines = text.splitlines(keepends=True)
        at = next((i for i, line in enumerate(lines) if line.strip().startswith(p.before + " ")
                   or line.strip() == p.before), None)
        if at is None:
            raise LookupError(f"cannot inject: the Corefile has no {p.before!r} directive")
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        new_text = "".join(lines[:at]) + template_block(p.names, p.rcode, indent) + "".join(lines[at:])
        cluster.patch("ConfigMap", p.namespace, p.configmap, {"data": {p.key: new_text}}, patch_type="merge")
        return {"data": obj.get("data")}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, CorefileTemplateParams)
        restore_field(cluster, "ConfigMap", p.namespace, p.configmap, "data", state["data"])
