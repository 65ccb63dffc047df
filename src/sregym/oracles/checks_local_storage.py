"""Mitigation checks for local ephemeral storage problems (a pod evicted over its storage limits).

`no_recent_eviction` asks whether a Deployment has stopped losing pods to the kubelet: it is
rolled out and ready, and none of its pods was evicted (`status.reason: Evicted`) in the last
`within_s` seconds. A workload that still fills its emptyDir or writable layer keeps being
evicted every few minutes, however often it is restarted, so only a fix of what writes (or of
the limits it writes against) passes. The eviction time is when the pod stopped being Ready,
which the kubelet records on the pod as it evicts it.
"""

from __future__ import annotations

from typing import Any

from sregym.oracles.checks import CheckContext, check, workload_status
from sregym.twin.clock import parse_time


def _evicted_at(pod: dict[str, Any]) -> float | None:
    status = pod.get("status") or {}
    if status.get("reason") != "Evicted":
        return None
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready" and cond.get("lastTransitionTime"):
            try:
                return float(parse_time(str(cond["lastTransitionTime"])))
            except (TypeError, ValueError):
                return None
    return None


@check("no_recent_eviction")
def no_recent_eviction(ctx: CheckContext, *, deployment: str, namespace: str | None = None,
                       within_s: float = 240.0) -> tuple[bool, str]:
    """The Deployment is rolled out and ready and none of its pods was evicted by the kubelet in
    the last `within_s` seconds."""
    ns = namespace or ctx.namespace
    deploy = ctx.cluster.get("Deployment", ns, deployment)
    if deploy is None:
        return False, f"Deployment {deployment} does not exist"
    ok, detail = workload_status(deploy, ctx.baseline.get(f"Deployment/{ns}/{deployment}"))
    if not ok:
        return False, detail
    selector = ((deploy.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    now = ctx.cluster.now()
    for pod in ctx.cluster.list("Pod", ns, label_selector=text):
        at = _evicted_at(pod)
        if at is not None and now - at <= within_s:
            return False, (f"pod {pod['metadata']['name']} was evicted {now - at:.0f}s ago: "
                           f"{(pod.get('status') or {}).get('message', '')}")
    return True, f"{detail}; no pod evicted in the last {within_s:.0f}s"
