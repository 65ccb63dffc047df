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


@fault
class WaitPodTurnover(Fault):
    """Advance until every pod the selector matches was created after this step began and is
    Ready, and none is still terminating."""

    name = "wait_pod_turnover"
    Params = PodTurnoverParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, PodTurnoverParams)
        old = {o["metadata"]["name"] for o in cluster.list("Pod", p.namespace, label_selector=p.label_selector)
               if p.replace_live or (o.get("metadata") or {}).get("deletionTimestamp")}
        waited = 0.0
        while not _fresh_and_ready(cluster.list("Pod", p.namespace, label_selector=p.label_selector), old):
            if waited >= p.timeout_s:
                raise RuntimeError(f"cannot inject: pods {p.label_selector} not replaced after {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S
        return {"waited_s": waited}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        """Nothing was written."""
