"""Registered mitigation checks: semantic questions about the live cluster, asked through `Cluster`.

Checks ask what an operator would verify, not whether a particular field has a particular value:
"the Service answers from a ready pod of the intended workload", "the Deployment is fully rolled
out at its baseline size", "a new pod can still be created". Any valid fix passes; deleting or
scaling away the broken component never does, because the baseline checks require every
workload that existed before the incident to be there at its baseline size and ready, the
workload (load generators and the traffic they send) to be intact, and every safeguard of the
healthy baseline (probes, limits, policies) to be kept.

Checks fail closed: data that is missing, stale (outside the check's window) or not a number is
a failure with the reason, never a pass — "no samples" cannot tell a fixed system from one that
no longer receives traffic.

A check is `fn(ctx, **params) -> (passed, detail)`, registered with `@check("name")`. The registry
discovers every module of `sregym.oracles`, so a problem file needs no import to make the checks it
names exist; a check's keyword parameters are its parameter model (`sregym.problems.validation`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.oracles.baseline import HealthyBaseline, safeguards, template_digest
from sregym.registry import Registry

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster, EntryStats

CheckFn = Callable[..., tuple[bool, str]]
CHECKS: Registry[CheckFn] = Registry("check", ("sregym.oracles",))


def check(name: str) -> Callable[[CheckFn], CheckFn]:
    def wrap(fn: CheckFn) -> CheckFn:
        CHECKS.register(name, fn)
        return fn

    return wrap


@dataclass
class CheckContext:
    """What checks may use: the admin cluster, the app's namespace, the pre-fault baseline
    (workload key "Kind/namespace/name" → replicas, and the `healthy` record of load generators,
    entry rate and safeguards) and the app's entry point and SLO."""

    cluster: Cluster
    namespace: str
    baseline: dict[str, int] = field(default_factory=dict)
    entry_service: str = ""
    entry_port: int = 0
    slo_success_ratio: float = 0.99
    slo_p95_ms: float = 1000.0
    slo_window_s: float = 60.0
    healthy: HealthyBaseline | None = None
    # The entry points must receive at least this share of the baseline's request rate.
    min_traffic_ratio: float = 0.8


# ------------------------------------------------------------------------- helpers
def workload_status(obj: dict[str, Any], expected: int | None = None) -> tuple[bool, str]:
    """Whether a Deployment/StatefulSet is fully rolled out and ready at ≥ `expected` replicas."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    meta = obj.get("metadata") or {}
    name = f"{obj.get('kind')}/{meta.get('name')}"
    replicas = int(spec.get("replicas", 1) or 0)
    if expected is not None and replicas < expected:
        return False, f"{name} has {replicas} replicas, fewer than its baseline {expected}"
    if replicas == 0:
        return False, f"{name} is scaled to zero"
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        return False, f"{name}: the controller has not observed the latest spec yet"
    updated = int(status.get("updatedReplicas") or 0)
    ready = int(status.get("readyReplicas") or 0)
    total = int(status.get("replicas") or 0)
    if updated < replicas:
        return False, f"{name}: rollout incomplete ({updated}/{replicas} pods on the current template)"
    if ready < replicas:
        return False, f"{name}: {ready}/{replicas} pods ready"
    if total > replicas:
        return False, f"{name}: {total - replicas} old pods still terminating"
    return True, f"{name}: {ready}/{replicas} ready, rolled out"


def pod_ready(pod: dict[str, Any]) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _labels_match(selector: dict[str, str], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())


# --------------------------------------------------------------------------- checks
@check("workload_ready")
def workload_ready(ctx: CheckContext, *, name: str, kind: str = "Deployment",
                   namespace: str | None = None) -> tuple[bool, str]:
    """The workload exists, at ≥ its baseline replicas, fully rolled out and ready."""
    ns = namespace or ctx.namespace
    obj = ctx.cluster.get(kind, ns, name)
    if obj is None:
        return False, f"{kind}/{name} does not exist"
    return workload_status(obj, ctx.baseline.get(f"{kind}/{ns}/{name}"))


@check("service_serves")
def service_serves(ctx: CheckContext, *, service: str, port: int, backend: str | None = None,
                   namespace: str | None = None) -> tuple[bool, str]:
    """The Service has ready endpoints, all of them pods of `backend` (a Deployment, when given),
    and a fresh connection to it from inside the namespace succeeds."""
    ns = namespace or ctx.namespace
    svc = ctx.cluster.get("Service", ns, service)
    if svc is None:
        return False, f"Service {service} does not exist"
    endpoints = ctx.cluster.get("Endpoints", ns, service) or {}
    ready = [a for s in endpoints.get("subsets") or [] for a in s.get("addresses") or []]
    if not ready:
        return False, f"Service {service} has no ready endpoints"
    if backend:
        deploy = ctx.cluster.get("Deployment", ns, backend)
        if deploy is None:
            return False, f"Deployment {backend} behind Service {service} does not exist"
        selector = ((deploy.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        for address in ready:
            ref = address.get("targetRef") or {}
            pod = ctx.cluster.get("Pod", ref.get("namespace") or ns, ref.get("name", "")) if ref else None
            if pod is None or not _labels_match(selector, (pod.get("metadata") or {}).get("labels")):
                return False, f"Service {service} routes to {ref.get('name') or address.get('ip')}, not a {backend} pod"
    probe = ctx.cluster.connect(ns, service, port)
    if not probe.ok:
        return False, f"connecting to {service}:{port} failed: {probe.error} {probe.message}".strip()
    return True, f"{service}:{port} answers from {len(ready)} ready endpoint(s)"


@check("baseline_intact")
def baseline_intact(ctx: CheckContext) -> tuple[bool, str]:
    """Every workload present before the incident still exists at ≥ its baseline replicas and is
    ready (deleting, scaling down or replacing components never passes). An empty baseline means
    none was recorded, which fails."""
    if not ctx.baseline:
        return False, "no baseline workloads were recorded: collateral damage cannot be judged"
    problems = []
    for key in sorted(ctx.baseline):
        kind, ns, name = key.split("/", 2)
        obj = ctx.cluster.get(kind, ns, name)
        if obj is None:
            problems.append(f"{kind}/{name} was deleted")
            continue
        ok, detail = workload_status(obj, ctx.baseline[key])
        if not ok:
            problems.append(detail)
    if problems:
        return False, "; ".join(problems)
    return True, f"{len(ctx.baseline)} baseline workloads present and ready"


@check("pods_healthy")
def pods_healthy(ctx: CheckContext, *, namespace: str | None = None) -> tuple[bool, str]:
    """Every live pod in the namespace is Running and Ready (completed Job pods aside), and
    there is at least one."""
    ns = namespace or ctx.namespace
    bad, live = [], 0
    for pod in ctx.cluster.list("Pod", ns):
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Succeeded" or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        live += 1
        if phase != "Running" or not pod_ready(pod):
            bad.append(f"{pod['metadata']['name']} ({phase})")
    if bad:
        return False, "pods not ready: " + ", ".join(sorted(bad))
    if not live:
        return False, f"no live pods in {ns}"
    return True, "all pods running and ready"


def _finite(*values: float) -> bool:
    return all(isinstance(v, int | float) and math.isfinite(v) for v in values)


def traffic_shortfall(ctx: CheckContext, stats: EntryStats | None, expected_rps: float) -> str | None:
    """Why the entry points do not receive (close to) the baseline's request rate, or None."""
    window = ctx.slo_window_s
    rps = stats.requests / window if stats is not None and window > 0 else 0.0
    if not _finite(rps):
        return f"the entry statistics over the last {window:.0f}s are not numbers"
    if rps < ctx.min_traffic_ratio * expected_rps:
        return (f"the entry points received {rps:.1f} req/s over the last {window:.0f}s, below "
                f"{ctx.min_traffic_ratio:.0%} of the healthy baseline's {expected_rps:.1f} req/s")
    return None


def _judge_slo(ctx: CheckContext, stats: EntryStats) -> tuple[bool, str]:
    if not _finite(stats.success_ratio, stats.p95_ms):
        return False, (f"entry statistics are not numbers (success ratio {stats.success_ratio}, "
                       f"p95 {stats.p95_ms})")
    if stats.success_ratio < ctx.slo_success_ratio:
        return False, f"entry success ratio {stats.success_ratio:.3f} < {ctx.slo_success_ratio}"
    if stats.p95_ms > ctx.slo_p95_ms:
        return False, f"entry p95 latency {stats.p95_ms:.0f} ms > {ctx.slo_p95_ms:.0f} ms"
    return True, f"entry success {stats.success_ratio:.3f}, p95 {stats.p95_ms:.0f} ms"


@check("entry_slo")
def entry_slo(ctx: CheckContext) -> tuple[bool, str]:
    """The app's entry point meets its SLO (success ratio, p95 latency) over the SLO window, on
    real traffic: where the healthy baseline measured entry traffic, missing, too little or
    non-numeric statistics fail. Only an app whose baseline had no entry statistics (no
    data-plane workload, or a real cluster) is judged by a connection to its entry Service."""
    if ctx.healthy is None:
        return False, "no healthy baseline was recorded: the SLO cannot be judged"
    stats = ctx.cluster.entry_stats(ctx.slo_window_s)
    if ctx.healthy.entry_rps is not None:
        shortfall = traffic_shortfall(ctx, stats, ctx.healthy.entry_rps)
        if shortfall is not None:
            return False, shortfall
    if stats is not None and _finite(stats.requests) and stats.requests > 0:
        return _judge_slo(ctx, stats)
    if not ctx.entry_service:
        return False, "no entry statistics and no entry point defined: the SLO cannot be judged"
    probe = ctx.cluster.connect(ctx.namespace, ctx.entry_service, ctx.entry_port)
    if not probe.ok:
        return False, f"entry {ctx.entry_service}:{ctx.entry_port} unreachable: {probe.error}"
    return True, f"entry {ctx.entry_service}:{ctx.entry_port} answers (this app reports no entry statistics)"


@check("workload_intact")
def workload_intact(ctx: CheckContext) -> tuple[bool, str]:
    """The workload is as the healthy baseline had it: every load generator exists with its
    baseline pod template at ≥ its baseline replicas, and the entry points receive at least
    `min_traffic_ratio` of the baseline's request rate. Stopping, shrinking or rewriting the
    traffic is collateral damage, never a fix (a quiet system is not a healthy one)."""
    healthy = ctx.healthy
    if healthy is None:
        return False, "no healthy baseline was recorded: the workload cannot be judged"
    if not healthy.load_generators and healthy.entry_rps is None:
        return False, "the healthy baseline has neither a load generator nor entry traffic to compare with"
    problems = []
    for generator in healthy.load_generators:
        kind, ns, name = generator.key.split("/", 2)
        obj = ctx.cluster.get(kind, ns, name)
        if obj is None:
            problems.append(f"load generator {generator.key} was deleted")
            continue
        replicas = int((obj.get("spec") or {}).get("replicas", 1) or 0)
        if replicas < generator.replicas:
            problems.append(f"load generator {generator.key} has {replicas} replicas, fewer than its "
                            f"baseline {generator.replicas}")
        if template_digest(obj) != generator.template_digest:
            problems.append(f"load generator {generator.key}'s pod template differs from the baseline")
    if healthy.entry_rps is not None:
        shortfall = traffic_shortfall(ctx, ctx.cluster.entry_stats(ctx.slo_window_s), healthy.entry_rps)
        if shortfall is not None:
            problems.append(shortfall)
    if problems:
        return False, "; ".join(problems)
    rate = f", entry traffic at ≥ {ctx.min_traffic_ratio:.0%} of {healthy.entry_rps:.1f} req/s" \
        if healthy.entry_rps is not None else ""
    return True, f"{len(healthy.load_generators)} load generator(s) as in the baseline{rate}"


@check("safeguards_kept")
def safeguards_kept(ctx: CheckContext, *, may_remove: tuple[str, ...] | list[str] = ()) -> tuple[bool, str]:
    """Every safeguard of the healthy baseline is still in place: the probes and resource limits
    of each workload's containers and the NetworkPolicies, ResourceQuotas, LimitRanges and
    PodDisruptionBudgets of the namespace. Their values may change (a fix may correct a probe or
    raise a limit); ones the fault added may go. `may_remove` names baseline safeguards the
    problem's own gold solution removes (as `safeguards()` spells them)."""
    if ctx.healthy is None:
        return False, "no healthy baseline was recorded: collateral damage cannot be judged"
    present = set(safeguards(ctx.cluster, ctx.namespace))
    allowed = set(may_remove)
    missing = [item for item in ctx.healthy.safeguards if item not in present and item not in allowed]
    if missing:
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        return False, f"{len(missing)} safeguard(s) of the healthy baseline removed: {shown}"
    return True, f"{len(ctx.healthy.safeguards)} safeguard(s) of the healthy baseline kept"


@check("pod_recreation")
def pod_recreation(ctx: CheckContext, *, deployment: str, namespace: str | None = None,
                   timeout_s: float = 120.0) -> tuple[bool, str]:
    """Durability: delete one pod of the Deployment; a replacement must be admitted, scheduled and
    become ready within `timeout_s` (a quota, webhook or policy that blocks creation fails)."""
    ns = namespace or ctx.namespace
    deploy = ctx.cluster.get("Deployment", ns, deployment)
    if deploy is None:
        return False, f"Deployment {deployment} does not exist"
    selector = ((deploy.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    pods = sorted(ctx.cluster.list("Pod", ns, label_selector=text), key=lambda p: p["metadata"]["name"])
    if not pods:
        return False, f"Deployment {deployment} has no pods to recreate"
    victim = pods[0]["metadata"]
    ctx.cluster.delete("Pod", ns, victim["name"])
    waited = 0.0
    while waited < timeout_s:
        ctx.cluster.advance(5)
        waited += 5
        current = ctx.cluster.get("Deployment", ns, deployment)
        fresh = [p for p in ctx.cluster.list("Pod", ns, label_selector=text)
                 if p["metadata"].get("uid") != victim.get("uid") and pod_ready(p)]
        if current is not None and workload_status(current)[0] and fresh:
            return True, f"a replacement for {victim['name']} became ready after {waited:.0f}s"
    return False, f"no ready replacement for {victim['name']} within {timeout_s:.0f}s"
