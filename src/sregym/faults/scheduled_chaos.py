"""A Chaos Mesh experiment that comes back every minute: a `Schedule` wrapping it.

ITBench injects most of its Chaos Mesh scenarios this way (its `scheduled-chaos-mesh-experiment`
fault): the scenario's experiment block is embedded in a `Schedule` with cron `* * * * *`,
`concurrencyPolicy: Forbid` and `historyLimit: 1`, and the injector waits until the Schedule has
spawned its first child. With a `duration` of 55 s the fault is intermittent (on 55 s, off until
the next minute); without one the first child runs until it is deleted and `Forbid` keeps the
Schedule from spawning another.

`scheduled_chaos` writes that Schedule, by default in Chaos Mesh's hidden namespace like every
experiment the faults create; with `schedule_namespace` it lives in a user namespace instead (a
team's experiment left running, which the agent sees and can pause or delete: the problem's root
cause rather than a hidden trigger). Like ITBench's waiter, it advances until the first child exists, so the
symptom has started when the fault returns. `recover` deletes the Schedule and whatever children
it left (their finalizers are Chaos Mesh's to release). Kubernetes writes only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE
from sregym.faults.disk_and_metastable import POLL_S
from sregym.twin.chaos.spawn import API_VERSION, EMBEDDED

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

EVERY_MINUTE = "* * * * *"
MANAGED_BY = "managed-by"  # the label Chaos Mesh's schedule controller puts on what it spawns


class TargetSelector(FaultParams):
    """The far end of a NetworkChaos (`direction: to`, partition/loss/delay towards it)."""

    namespace: str
    labels: dict[str, str]


class ScheduledChaosParams(FaultParams):
    name: str  # the Schedule's name
    type: str  # the experiment kind: NetworkChaos, StressChaos, PodChaos, HTTPChaos, JVMChaos ...
    namespace: str  # the target pods' namespace
    labels: dict[str, str]  # the target pods' labels
    # The kind's own fields besides mode/selector/target: {"action": "delay", "delay": {...}, "duration": "55s"}.
    experiment: dict[str, Any]
    target: TargetSelector | None = None
    schedule: str = EVERY_MINUTE
    history_limit: int = 1
    concurrency_policy: str = "Forbid"
    first_child_timeout_s: float = 120.0  # a cron minute boundary, then the spawn
    schedule_namespace: str = CHAOS_NAMESPACE  # where the Schedule (and so its children) lives


def _selector(namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"namespaces": [namespace], "labelSelectors": dict(labels)}


def schedule_manifest(p: ScheduledChaosParams) -> dict[str, Any]:
    """The Schedule ITBench writes: the experiment on every selected pod, spawned on `schedule`."""
    if p.type not in EMBEDDED:
        raise ValueError(f"Schedule cannot embed {p.type!r} (one of {', '.join(sorted(EMBEDDED))})")
    block: dict[str, Any] = {**p.experiment, "mode": "all", "selector": _selector(p.namespace, p.labels)}
    if p.target is not None:
        block["target"] = {"mode": "all", "selector": _selector(p.target.namespace, p.target.labels)}
    return {"apiVersion": API_VERSION, "kind": "Schedule",
            "metadata": {"name": p.name, "namespace": p.schedule_namespace},
            "spec": {"schedule": p.schedule, "concurrencyPolicy": p.concurrency_policy,
                     "historyLimit": p.history_limit, "type": p.type, EMBEDDED[p.type]: block}}


def spawned(cluster: Cluster, kind: str, schedule: str, namespace: str = CHAOS_NAMESPACE) -> list[dict[str, Any]]:
    """The experiments a Schedule has spawned and not yet garbage-collected."""
    return list(cluster.list(kind, namespace, label_selector=f"{MANAGED_BY}={schedule}"))


def _require_pods(cluster: Cluster, namespace: str, labels: dict[str, str]) -> None:
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    if not cluster.list("Pod", namespace, label_selector=selector):
        raise LookupError(f"cannot inject: no pod matches {selector} in {namespace}")


@fault
class ScheduledChaos(Fault):
    """A Chaos Mesh Schedule spawning one experiment kind on a workload's pods every minute."""

    name = "scheduled_chaos"
    Params = ScheduledChaosParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ScheduledChaosParams)
        _require_pods(cluster, p.namespace, p.labels)
        if p.target is not None:
            _require_pods(cluster, p.target.namespace, p.target.labels)
        if cluster.get("Namespace", None, p.schedule_namespace) is None:
            cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": p.schedule_namespace}})
        cluster.create(schedule_manifest(p))
        waited = 0.0
        while not spawned(cluster, p.type, p.name, p.schedule_namespace):
            if waited >= p.first_child_timeout_s:
                raise RuntimeError(f"cannot inject: Schedule {p.name} spawned no {p.type} in {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S
        return {"name": p.name, "type": p.type, "namespace": p.schedule_namespace}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        name, kind = str(state.get("name") or ""), str(state.get("type") or "")
        namespace = str(state.get("namespace") or CHAOS_NAMESPACE)
        delete_if_present(cluster, "Schedule", namespace, name)
        for child in spawned(cluster, kind, name, namespace) if name and kind else []:
            delete_if_present(cluster, kind, namespace, child["metadata"]["name"])
