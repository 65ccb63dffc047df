"""Time between two writes of one incident: wait until a restarted workload's pods are new and
ready before the next write lands.

Why: some incidents are two changes in a row where the order matters (ITBench 52: a feature flag
edited and flagd restarted, then a ResourceQuota that would refuse any new pod, flagd's
included). A restart deletes pods that stay Terminating for a moment, so the Deployment's status
still reads ready; this waits for the replacement pods themselves. It writes nothing, so recover
has nothing to undo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 5.0


class PodTurnoverParams(FaultParams):
    namespace: str
    label_selector: str
    timeout_s: float = 180.0
    # Also wait out the pods that are live now: after a template change the rollout has not yet
    # begun to terminate anything, so "terminating at the start" would name no pod.
    replace_live: bool = False


def _fresh_and_ready(pods: list[dict[str, Any]], old: set[str]) -> bool:
    live = [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
    return bool(live) and all(
        p["metadata"]["name"] not in old
        and any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in (p.get("status") or {}).get("conditions") or [])
        for p in live) and len(live) == len(pods)


def _owning_deployments(cluster: Cluster, namespace: str, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Deployments that own `pods` through their ReplicaSets (pods owned otherwise add none)."""
    replica_sets = {ref["name"] for pod in pods for ref in (pod.get("metadata") or {}).get("ownerReferences") or []
                    if ref.get("kind") == "ReplicaSet"}  # one read per ReplicaSet, not per pod
    names: set[str] = set()
    for replica_set_name in replica_sets:
        replica_set = cluster.get("ReplicaSet", namespace, replica_set_name) or {}
        names.update(r["name"] for r in (replica_set.get("metadata") or {}).get("ownerReferences") or []
                     if r.get("kind") == "Deployment")
    return [d for d in (cluster.get("Deployment", namespace, n) for n in sorted(names)) if d]


def _rolled_out(deployment: dict[str, Any]) -> bool:
    """The Deployment controller has seen the latest template and every replica runs it: right
    after a template patch the old pods are still Ready and not yet terminating, so pods alone
    cannot tell that a rollout is still to come."""
    meta, spec, status = deployment["metadata"], deployment.get("spec") or {}, deployment.get("status") or {}
    replicas = spec.get("replicas", 1)
    return (status.get("observedGeneration", 0) >= meta.get("generation", 0)
            and status.get("updatedReplicas", 0) == replicas
            and status.get("replicas", 0) == replicas
            and status.get("availableReplicas", 0) == replicas)


@fault
class WaitPodTurnover(Fault):
    """Advance until no pod the selector matches is one that was terminating when this step began,
    every one is Ready, none is still terminating, and the Deployments owning them have rolled
    out their latest template (a restart by template patch as well as by deleting pods)."""

    name = "wait_pod_turnover"
    Params = PodTurnoverParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, PodTurnoverParams)
        old = {o["metadata"]["name"] for o in cluster.list("Pod", p.namespace, label_selector=p.label_selector)
               if p.replace_live or (o.get("metadata") or {}).get("deletionTimestamp")}
        waited = 0.0
        while not self._done(cluster, old):
            if waited >= p.timeout_s:
                raise RuntimeError(f"cannot inject: pods {p.label_selector} not replaced after {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S
        return {"waited_s": waited}

    def _done(self, cluster: Cluster, old: set[str]) -> bool:
        p = self.params
        assert isinstance(p, PodTurnoverParams)
        pods = cluster.list("Pod", p.namespace, label_selector=p.label_selector)
        return _fresh_and_ready(pods, old) and all(
            _rolled_out(d) for d in _owning_deployments(cluster, p.namespace, pods))

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        """Nothing was written."""
