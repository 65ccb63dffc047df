"""Faults that are one Chaos Mesh experiment on the pods of one workload.

They share the write pattern: check that the selector picks a pod (Chaos Mesh would select
nothing, and the problem would have no cause), make sure Chaos Mesh's namespace exists (hidden
from the agent; it stays, like an installed tool), create the experiment there; recover deletes
it. A subclass names the experiment's `kind` and builds its manifest from the parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sregym.faults.base import Fault, FaultParams, delete_if_present

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

CHAOS_NAMESPACE = "chaos-mesh"


class ExperimentParams(FaultParams):
    """What every single-experiment fault takes: the experiment's name, the target pods."""

    name: str
    namespace: str
    labels: dict[str, str]


class ChaosExperiment(Fault):
    """Base class: subclasses set `name`, `Params` (an ExperimentParams), `kind`, `manifest`."""

    kind: ClassVar[str] = ""

    def manifest(self) -> dict[str, Any]:
        raise NotImplementedError

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ExperimentParams)
        selector = ",".join(f"{k}={v}" for k, v in sorted(p.labels.items()))
        if not cluster.list("Pod", p.namespace, label_selector=selector):
            raise LookupError(f"cannot inject: no pod matches {selector} in {p.namespace}")
        if cluster.get("Namespace", None, CHAOS_NAMESPACE) is None:
            cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CHAOS_NAMESPACE}})
        cluster.create(self.manifest())
        return {"name": p.name}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        delete_if_present(cluster, self.kind, CHAOS_NAMESPACE, str(state.get("name") or ""))
