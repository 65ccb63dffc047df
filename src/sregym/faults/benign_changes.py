"""Benign operator changes: the writes a healthy team makes every day (a rollout restart, a
scale-up), used by control problems.

Why: a detector that calls every rollout or every new pod an incident is useless on call. The
no-incident controls make such a change while the agent watches, so the benchmark can measure
false positives. They are registered with the fault injectors because they are Kubernetes
writes made the same way and validated the same way, but they break nothing, and `recover`
leaves them in place: after a deliberate rollout the new pods are the desired state.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.objects import required

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class WorkloadParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str


class ScaleParams(WorkloadParams):
    replicas: int


@fault
class RolloutRestart(Fault):
    """`kubectl rollout restart`: stamp the pod template so the controller replaces every pod
    with a new, identical one (the annotation kubectl itself writes)."""

    name = "rollout_restart"
    Params = WorkloadParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, WorkloadParams)
        required(cluster, p.kind, p.namespace, p.name)
        stamp = datetime.fromtimestamp(cluster.now(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        cluster.patch(p.kind, p.namespace, p.name, {"spec": {"template": {"metadata": {"annotations": {
            "kubectl.kubernetes.io/restartedAt": stamp}}}}})
        return {"restarted_at": stamp}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        """A deliberate rollout is kept: the new pods are the desired state."""


@fault
class ScaleUp(Fault):
    """`kubectl scale --replicas=N` to more replicas than the workload has (capacity added ahead
    of demand)."""

    name = "scale_up"
    Params = ScaleParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ScaleParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        before = int((obj.get("spec") or {}).get("replicas", 1) or 0)
        if p.replicas <= before:
            raise ValueError(f"cannot scale up: {p.kind} {p.name} already has {before} replicas")
        cluster.patch(p.kind, p.namespace, p.name, {"spec": {"replicas": p.replicas}})
        return {"replicas_before": before}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        """The added capacity is kept: scaling up was the operator's decision, not a fault."""


__all__ = ["RolloutRestart", "ScaleUp"]
