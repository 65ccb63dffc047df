"""Faults that change Kubernetes objects: images, selectors, scheduling constraints, config keys,
extra policy objects, and pod deletions that make a latent fault bite.

Each injector saves the part of the object it changes (spec, data, selector ...) and `recover`
writes that part back onto the *current* object, so whatever else happened in between (status,
replica counts from an HPA) is kept while the fault itself is undone exactly.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.builds import push_faulty_build

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


def required(cluster: Cluster, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
    obj = cluster.get(kind, namespace, name)
    if obj is None:
        where = f" in namespace {namespace}" if namespace else ""
        raise LookupError(f"cannot inject: {kind} {name}{where} does not exist")
    return obj


def restore_field(cluster: Cluster, kind: str, namespace: str | None, name: str, field: str,
                   original: Any) -> None:
    """Put `original` back as the object's top-level `field` (spec/data), on the live version."""
    current = cluster.get(kind, namespace, name)
    if current is None:
        return
    if current.get(field) == original:
        return
    restored = copy.deepcopy(current)
    if original is None:
        restored.pop(field, None)
    else:
        restored[field] = copy.deepcopy(original)
    cluster.replace(restored)


def template_spec_path(kind: str) -> str:
    return "/spec/jobTemplate/spec/template/spec" if kind == "CronJob" else "/spec/template/spec"


# ------------------------------------------------------------------------ container image
class SetImageParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str
    container: str | None = None  # default: the first container
    image: str


@fault
class SetImage(Fault):
    """Point a workload's container at another image (a tag that does not exist, a build that
    crashes): what a bad CI push or a typo in a release does."""

    name = "set_image"
    Params = SetImageParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, SetImageParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        containers = obj["spec"]["template"]["spec"]["containers"]
        index = next((i for i, c in enumerate(containers) if c["name"] == p.container), 0) if p.container else 0
        push_faulty_build(cluster, p.image)
        cluster.patch(p.kind, p.namespace, p.name,
                      [{"op": "replace", "path": f"{template_spec_path(p.kind)}/containers/{index}/image",
                        "value": p.image}], patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, SetImageParams)
        restore_field(cluster, p.kind, p.namespace, p.name, "spec", state["spec"])


# ----------------------------------------------------------------------- service selector
class ServiceSelectorParams(FaultParams):
    namespace: str
    name: str
    selector: dict[str, str]


@fault
class SetServiceSelector(Fault):
    """Replace a Service's selector (a label that no pod carries, or one that also matches other
    pods): endpoints empty out or point at the wrong backends while every pod looks healthy."""

    name = "set_service_selector"
    Params = ServiceSelectorParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ServiceSelectorParams)
        obj = required(cluster, "Service", p.namespace, p.name)
        cluster.patch("Service", p.namespace, p.name,
                      [{"op": "replace", "path": "/spec/selector", "value": dict(p.selector)}], patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ServiceSelectorParams)
        restore_field(cluster, "Service", p.namespace, p.name, "spec", state["spec"])


# -------------------------------------------------------------------------- nodeSelector
class NodeSelectorParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str
    node_selector: dict[str, str]


@fault
class SetNodeSelector(Fault):
    """Pin a workload's pods to nodes with a label no node has: new pods stay Pending with
    FailedScheduling, and the rollout never completes."""

    name = "set_node_selector"
    Params = NodeSelectorParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, NodeSelectorParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        cluster.patch(p.kind, p.namespace, p.name,
                      [{"op": "add", "path": f"{template_spec_path(p.kind)}/nodeSelector",
                        "value": dict(p.node_selector)}], patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, NodeSelectorParams)
        restore_field(cluster, p.kind, p.namespace, p.name, "spec", state["spec"])


# -------------------------------------------------------------------------- ConfigMap key
class ConfigMapKeyParams(FaultParams):
    namespace: str
    name: str
    key: str


@fault
class RemoveConfigMapKey(Fault):
    """Drop one key from a ConfigMap (a config refactor that forgot a consumer). Running pods keep
    their env; pods created afterwards fail with CreateContainerConfigError."""

    name = "remove_configmap_key"
    Params = ConfigMapKeyParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ConfigMapKeyParams)
        obj = required(cluster, "ConfigMap", p.namespace, p.name)
        if p.key not in (obj.get("data") or {}):
            raise LookupError(f"cannot inject: ConfigMap {p.name} has no key {p.key!r}")
        escaped = p.key.replace("~", "~0").replace("/", "~1")
        cluster.patch("ConfigMap", p.namespace, p.name, [{"op": "remove", "path": f"/data/{escaped}"}],
                      patch_type="json")
        return {"data": obj.get("data")}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ConfigMapKeyParams)
        restore_field(cluster, "ConfigMap", p.namespace, p.name, "data", state["data"])


# ----------------------------------------------------------------------- extra objects
class CreateObjectsParams(FaultParams):
    objects: tuple[dict[str, Any], ...]


@fault
class CreateObjects(Fault):
    """Create objects that change the cluster's rules (a ResourceQuota, a webhook configuration, a
    NetworkPolicy, a Chaos Mesh experiment). Recover deletes them, newest first; objects that
    already existed are left untouched (and not created)."""

    name = "create_objects"
    Params = CreateObjectsParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, CreateObjectsParams)
        created = []
        for obj in p.objects:
            meta = obj.get("metadata") or {}
            if cluster.get(obj["kind"], meta.get("namespace"), meta["name"]) is not None:
                continue
            cluster.create(obj)
            created.append({"kind": obj["kind"], "namespace": meta.get("namespace"), "name": meta["name"]})
        return {"created": created}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        for ref in reversed(state.get("created") or []):
            if cluster.get(ref["kind"], ref["namespace"], ref["name"]) is not None:
                cluster.delete(ref["kind"], ref["namespace"], ref["name"])


# ---------------------------------------------------------------------- pod deletion
class DeletePodsParams(FaultParams):
    namespace: str
    label_selector: str
    count: int | None = None  # None = all matching pods


@fault
class DeletePods(Fault):
    """Delete pods of a workload so their controller must recreate them: how a latent fault (a
    removed ConfigMap key, a quota, a broken webhook) turns into an outage. Nothing to recover:
    controllers replace the pods."""

    name = "delete_pods"
    Params = DeletePodsParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, DeletePodsParams)
        pods = sorted(cluster.list("Pod", p.namespace, label_selector=p.label_selector),
                      key=lambda o: o["metadata"]["name"])
        chosen = pods if p.count is None else pods[: p.count]
        for pod in chosen:
            cluster.delete("Pod", p.namespace, pod["metadata"]["name"])
        return {"deleted": [pod["metadata"]["name"] for pod in chosen]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        return None
