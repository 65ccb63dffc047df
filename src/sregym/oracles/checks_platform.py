"""Mitigation checks for platform problems: OOM-free pods, safe rollouts, CronJob runs that
finish, CPU that is not throttled, a retry loop that stays broken after its trigger is replayed.

Like every check they ask the live cluster an operator's question through `Cluster` and accept
any valid fix: "a restart of the Deployment keeps a pod available", not "maxUnavailable is 25%".
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from sregym.oracles.checks import CheckContext, check, workload_status
from sregym.twin.clock import parse_time

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 5.0
RESTART_ANNOTATION = "kubectl.kubernetes.io/restartedAt"


def _selector_text(deploy: dict[str, Any]) -> str:
    labels = ((deploy.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _pods_of(cluster: Cluster, namespace: str, deploy: dict[str, Any]) -> list[dict[str, Any]]:
    pods = cluster.list("Pod", namespace, label_selector=_selector_text(deploy))
    return sorted((p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")),
                  key=lambda p: p["metadata"]["name"])


def _ts(value: Any) -> float | None:
    if not value:
        return None
    try:
        return float(parse_time(str(value)))
    except (TypeError, ValueError):
        return None


# ------------------------------------------------------------------------------ OOM
@check("no_recent_oomkill")
def no_recent_oomkill(ctx: CheckContext, *, deployment: str, namespace: str | None = None,
                      within_s: float = 180.0) -> tuple[bool, str]:
    """The Deployment is rolled out and ready and none of its pods' containers was OOM-killed in
    the last `within_s` seconds (a pod that is Ready between two OOM kills does not count)."""
    ns = namespace or ctx.namespace
    deploy = ctx.cluster.get("Deployment", ns, deployment)
    if deploy is None:
        return False, f"Deployment {deployment} does not exist"
    ok, detail = workload_status(deploy, ctx.baseline.get(f"Deployment/{ns}/{deployment}"))
    if not ok:
        return False, detail
    now = ctx.cluster.now()
    for pod in _pods_of(ctx.cluster, ns, deploy):
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            for state in (status.get("state") or {}, status.get("lastState") or {}):
                term = state.get("terminated") or {}
                finished = _ts(term.get("finishedAt"))
                if term.get("reason") == "OOMKilled" and (finished is None or now - finished <= within_s):
                    return False, (f"container {status.get('name')} of {pod['metadata']['name']} was "
                                   f"OOMKilled {0 if finished is None else now - finished:.0f}s ago")
    return True, f"{detail}; no OOMKilled container in the last {within_s:.0f}s"


# ------------------------------------------------------------------------ rollouts
def _scaled(value: Any, replicas: int, *, round_up: bool) -> int:
    """A maxSurge/maxUnavailable int-or-percent as the Deployment controller resolves it."""
    if value is None:
        value = "25%"
    if isinstance(value, str) and value.endswith("%"):
        exact = replicas * float(value[:-1]) / 100.0
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


@check("rollout_keeps_capacity")
def rollout_keeps_capacity(ctx: CheckContext, *, deployment: str, namespace: str | None = None) -> tuple[bool, str]:
    """The Deployment's update strategy keeps at least one pod available during a rollout
    (Recreate or a RollingUpdate that may take every pod down at once both fail)."""
    ns = namespace or ctx.namespace
    deploy = ctx.cluster.get("Deployment", ns, deployment)
    if deploy is None:
        return False, f"Deployment {deployment} does not exist"
    spec = deploy.get("spec") or {}
    replicas = int(spec.get("replicas", 1) or 0)
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return False, f"Deployment {deployment} uses the Recreate strategy: every rollout is an outage"
    rolling = strategy.get("rollingUpdate") or {}
    surge = _scaled(rolling.get("maxSurge"), replicas, round_up=True)
    unavailable = _scaled(rolling.get("maxUnavailable"), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # what the controller does with an all-zero strategy
    if replicas - unavailable < 1:
        return False, (f"Deployment {deployment} may take {unavailable} of {replicas} pods down at once "
                       f"(maxUnavailable {rolling.get('maxUnavailable')}, maxSurge {rolling.get('maxSurge')})")
    return True, f"a rollout of {deployment} keeps ≥ {replicas - unavailable} pod(s) available"


@check("restart_keeps_available")
def restart_keeps_available(ctx: CheckContext, *, deployment: str, namespace: str | None = None,
                            timeout_s: float = 180.0) -> tuple[bool, str]:
    """Durability: `kubectl rollout restart` the Deployment; the rollout must complete within
    `timeout_s` and the Deployment must never report zero available replicas meanwhile."""
    ns = namespace or ctx.namespace
    if ctx.cluster.get("Deployment", ns, deployment) is None:
        return False, f"Deployment {deployment} does not exist"
    stamp = f"{ctx.cluster.now():.0f}"
    ctx.cluster.patch("Deployment", ns, deployment,
                      {"spec": {"template": {"metadata": {"annotations": {RESTART_ANNOTATION: stamp}}}}},
                      patch_type="merge")
    waited = 0.0
    while waited < timeout_s:
        ctx.cluster.advance(POLL_S)
        waited += POLL_S
        current = ctx.cluster.get("Deployment", ns, deployment)
        if current is None:
            return False, f"Deployment {deployment} disappeared during the restart"
        if int((current.get("status") or {}).get("availableReplicas") or 0) < 1:
            return False, f"Deployment {deployment} had no available pod {waited:.0f}s into a restart"
        if workload_status(current)[0]:
            return True, f"restart of {deployment} completed in {waited:.0f}s with a pod always available"
    return False, f"restart of {deployment} did not complete within {timeout_s:.0f}s"


# ------------------------------------------------------------------------- CronJobs
def _owned_jobs(cluster: Cluster, namespace: str, cronjob: dict[str, Any]) -> list[dict[str, Any]]:
    uid = (cronjob.get("metadata") or {}).get("uid")
    return [j for j in cluster.list("Job", namespace)
            if any(r.get("uid") == uid for r in (j.get("metadata") or {}).get("ownerReferences") or [])]


def _job_finished(job: dict[str, Any]) -> str | None:
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return str(cond["type"])
    return None


@check("cronjob_runs_complete")
def cronjob_runs_complete(ctx: CheckContext, *, namespace: str | None = None, grace_s: float = 90.0,
                          window_s: float = 240.0) -> tuple[bool, str]:
    """Every active CronJob in the namespace finishes its runs: each Job it started between
    `window_s` and `grace_s` ago has completed successfully, and it has at least one such run
    (an active CronJob with nothing to judge fails). A namespace without CronJobs passes — the
    healthy baseline has none — so problems pair it with `cronjob_kept`, which fails when the
    CronJob was deleted or suspended instead of fixed."""
    ns = namespace or ctx.namespace
    now = ctx.cluster.now()
    problems, judged = [], 0
    for cronjob in sorted(ctx.cluster.list("CronJob", ns), key=lambda c: c["metadata"]["name"]):
        if (cronjob.get("spec") or {}).get("suspend"):
            continue
        name = cronjob["metadata"]["name"]
        recent = [j for j in _owned_jobs(ctx.cluster, ns, cronjob)
                  if (created := _ts(j["metadata"].get("creationTimestamp"))) is not None
                  and grace_s <= now - created <= window_s]
        if not recent:
            problems.append(f"CronJob {name} has no run started {grace_s:.0f}-{window_s:.0f}s ago to judge")
            continue
        for job in sorted(recent, key=lambda j: j["metadata"]["name"]):
            judged += 1
            outcome = _job_finished(job)
            if outcome != "Complete":
                problems.append(f"Job {job['metadata']['name']} of CronJob {name} is "
                                f"{'failed' if outcome else 'still running'}")
    if problems:
        return False, "; ".join(problems)
    return True, f"{judged} recent CronJob run(s) completed"


@check("cronjob_kept")
def cronjob_kept(ctx: CheckContext, *, name: str, keep_images: tuple[str, ...] | list[str] = (),
                 namespace: str | None = None) -> tuple[bool, str]:
    """The CronJob still exists, is not suspended, and its pod template still runs a container
    (regular, init or sidecar) of each image repository in `keep_images`."""
    ns = namespace or ctx.namespace
    cronjob = ctx.cluster.get("CronJob", ns, name)
    if cronjob is None:
        return False, f"CronJob {name} was deleted"
    spec = cronjob.get("spec") or {}
    if spec.get("suspend"):
        return False, f"CronJob {name} is suspended"
    pod_spec = ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
    images = [str(c.get("image", "")) for c in (pod_spec.get("initContainers") or []) + (pod_spec.get("containers") or [])]
    missing = [repo for repo in keep_images if not any(repo in image for image in images)]
    if missing:
        return False, f"CronJob {name} no longer runs {', '.join(missing)}"
    return True, f"CronJob {name} kept with its containers"


# -------------------------------------------------------------------------- CPU
@check("cpu_not_throttled")
def cpu_not_throttled(ctx: CheckContext, *, deployment: str, namespace: str | None = None,
                      max_ratio: float = 0.25, window: str = "2m") -> tuple[bool, str]:
    """The Deployment's containers spend under `max_ratio` of their CFS periods throttled
    (cAdvisor counters over `window`, as the ContainerCPUThrottling alert computes it).

    Fails closed: no samples in the window (no running pod, no CPU limit left to measure, a
    scrape that stopped) or a ratio that is not a number is not evidence of a fix."""
    ns = namespace or ctx.namespace
    if ctx.cluster.get("Deployment", ns, deployment) is None:
        return False, f"Deployment {deployment} does not exist"
    sel = f'namespace="{ns}",pod=~"{deployment}-[a-z0-9]+-[a-z0-9]+",container!="",container!="POD"'
    query = (f"sum(increase(container_cpu_cfs_throttled_periods_total{{{sel}}}[{window}])) / "
             f"sum(increase(container_cpu_cfs_periods_total{{{sel}}}[{window}]))")
    result = ctx.cluster.promql(query)
    try:
        value = float(result[0]["value"][1])
    except (IndexError, KeyError, TypeError, ValueError):
        return False, f"{deployment}: no CFS period samples in the last {window} (no CPU limit or no running pod)"
    if not math.isfinite(value):
        return False, f"{deployment}: the CFS throttling ratio over the last {window} is not a number ({value})"
    if value > max_ratio:
        return False, f"{deployment} is CPU-throttled in {value:.0%} of CFS periods (> {max_ratio:.0%})"
    return True, f"{deployment} throttled in {value:.0%} of CFS periods"
