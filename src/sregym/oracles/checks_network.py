"""Mitigation checks for reachability and stability: what a workload's own pods can reach, and
whether a workload stays up for a while instead of flapping.

`deployment_reaches` asks the question an engineer would type into `kubectl exec`: from inside
each running pod of the Deployment, does `nc -z <name> <port>` connect? It goes through the pod's
own resolv.conf (dnsPolicy/dnsConfig), CoreDNS, the Service, NetworkPolicy and the listener, so a
fix anywhere on that path passes and a fix that only helps some other client does not.

`sustained_ready` watches a Deployment for a stretch of simulated time: every pod must stay ready
and no container may restart. A probe that kills a healthy server under load fails it even if
the pods happen to be ready at the instant of the check.
"""

from __future__ import annotations

from typing import Any

from sregym.oracles.checks import CheckContext, check, pod_ready, workload_status


def _deployment_pods(ctx: CheckContext, ns: str, deployment: str) -> tuple[dict[str, Any] | None, list[dict]]:
    deploy = ctx.cluster.get("Deployment", ns, deployment)
    if deploy is None:
        return None, []
    selector = ((deploy.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    pods = [p for p in ctx.cluster.list("Pod", ns, label_selector=text)
            if not (p.get("metadata") or {}).get("deletionTimestamp")]
    return deploy, sorted(pods, key=lambda p: p["metadata"]["name"])


def _restarts(pod: dict[str, Any]) -> int:
    return sum(int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or [])


@check("deployment_reaches")
def deployment_reaches(ctx: CheckContext, *, deployment: str, targets: list[list[Any]],
                       namespace: str | None = None) -> tuple[bool, str]:
    """Every running pod of `deployment` connects to each `[host, port]` of `targets` by name."""
    ns = namespace or ctx.namespace
    deploy, pods = _deployment_pods(ctx, ns, deployment)
    if deploy is None:
        return False, f"Deployment {deployment} does not exist"
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    if not running:
        return False, f"Deployment {deployment} has no running pods"
    for pod in running:
        name = pod["metadata"]["name"]
        for host, port in targets:
            try:
                result = ctx.cluster.exec(ns, name, ["nc", "-z", "-w", "3", str(host), str(port)])
            except Exception as exc:  # the container went away between list and exec
                return False, f"cannot exec in {name}: {exc}"
            if not result.ok:
                text = (result.stderr or result.stdout).strip().splitlines()
                return False, f"{name} cannot reach {host}:{port}: {text[-1] if text else 'failed'}"
    return True, f"{len(running)} {deployment} pod(s) reach {', '.join(f'{h}:{p}' for h, p in targets)}"


@check("sustained_ready")
def sustained_ready(ctx: CheckContext, *, deployment: str, seconds: float = 60.0,
                    namespace: str | None = None) -> tuple[bool, str]:
    """The Deployment is rolled out and ready, then for `seconds` of simulated time none of its
    pods restarts, is replaced or stops being ready."""
    ns = namespace or ctx.namespace
    deploy, pods = _deployment_pods(ctx, ns, deployment)
    if deploy is None:
        return False, f"Deployment {deployment} does not exist"
    ok, detail = workload_status(deploy, ctx.baseline.get(f"Deployment/{ns}/{deployment}"))
    if not ok:
        return False, detail
    before = {p["metadata"]["uid"]: _restarts(p) for p in pods}
    waited = 0.0
    while waited < seconds:
        step = min(5.0, seconds - waited)
        ctx.cluster.advance(step)
        waited += step
        _, now_pods = _deployment_pods(ctx, ns, deployment)
        for pod in now_pods:
            uid, name = pod["metadata"]["uid"], pod["metadata"]["name"]
            if uid not in before:
                return False, f"{name} replaced a pod of {deployment} after {waited:.0f}s"
            if _restarts(pod) > before[uid]:
                return False, f"{name} restarted after {waited:.0f}s ({_restarts(pod)} restarts)"
            if not pod_ready(pod):
                return False, f"{name} stopped being ready after {waited:.0f}s"
        if len(now_pods) < len(before):
            return False, f"a pod of {deployment} disappeared after {waited:.0f}s"
    return True, f"{deployment}: {len(before)} pod(s) ready without restarts for {seconds:.0f}s"
