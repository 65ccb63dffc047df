"""The healthy baseline the `must_keep` checks compare against, recorded just before the fault.

Collateral damage is judged against what the healthy system had, not against a list of expected
values: the load generators as they were (their pod template and replicas) and the request rate
they offered at the entry points, and the safeguards the app was deployed with — probes,
resource limits, NetworkPolicies, quotas, LimitRanges, PodDisruptionBudgets. Anything the fault
added is not in the baseline, so an agent may fix it or remove it; anything the baseline had
must still be there (its values may change: raising a limit is a fix, deleting it is not).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
# Objects whose only job is to protect the app: deleting one that existed is never a fix.
SAFEGUARD_KINDS = ("NetworkPolicy", "ResourceQuota", "LimitRange", "PodDisruptionBudget")
TEMPLATED_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob")
# `kubectl rollout restart` stamps this; restarting a generator does not change what it sends.
RESTART_ANNOTATION = "kubectl.kubernetes.io/restartedAt"


@dataclass(frozen=True)
class LoadGenerator:
    """A load generator as the healthy baseline had it."""

    key: str  # "Kind/namespace/name"
    template_digest: str
    replicas: int


@dataclass(frozen=True)
class HealthyBaseline:
    """What the must_keep checks hold the system to (see the module docstring). `entry_rps` is
    None where the cluster reports no entry statistics (an app without a data-plane workload,
    or a real cluster): then only the generators' specs stand for the workload."""

    load_generators: tuple[LoadGenerator, ...]
    entry_rps: float | None
    safeguards: tuple[str, ...]


def pod_template(obj: dict[str, Any]) -> dict[str, Any]:
    """The pod template of a workload (a CronJob's is inside its job template)."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return spec.get("template") or {}


def template_digest(obj: dict[str, Any]) -> str:
    """A digest of the workload's pod template, ignoring the rollout-restart stamp."""
    template = copy.deepcopy(pod_template(obj))
    metadata = template.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    annotations.pop(RESTART_ANNOTATION, None)
    if not annotations:
        metadata.pop("annotations", None)
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()


def workload_safeguards(obj: dict[str, Any]) -> list[str]:
    """`Kind/name/container: field` for every probe and resource limit of the workload's pod
    template (init and sidecar containers included)."""
    spec = pod_template(obj).get("spec") or {}
    owner = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
    found = []
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        name = container.get("name", "")
        found += [f"{owner}/{name}: {probe}" for probe in PROBES if container.get(probe)]
        limits = (container.get("resources") or {}).get("limits") or {}
        found += [f"{owner}/{name}: limits.{resource}" for resource in sorted(limits)]
    return found


def safeguards(cluster: Cluster, namespace: str) -> tuple[str, ...]:
    """Every safeguard in the namespace now: workload probes and limits, and the objects of
    SAFEGUARD_KINDS (as `Kind/name`)."""
    found: list[str] = []
    for kind in TEMPLATED_KINDS:
        for obj in cluster.list(kind, namespace):
            found += workload_safeguards({**obj, "kind": kind})
    for kind in SAFEGUARD_KINDS:
        found += [f"{kind}/{o['metadata']['name']}" for o in cluster.list(kind, namespace)]
    return tuple(sorted(found))


def entry_rps(cluster: Cluster, window_s: float) -> float | None:
    """Requests per second offered at the entry points over the last `window_s`; None when the
    cluster measures none (no finite, positive rate)."""
    stats = cluster.entry_stats(window_s)
    if stats is None or window_s <= 0:
        return None
    rate = float(stats.requests) / window_s
    return rate if math.isfinite(rate) and rate > 0 else None


def record(cluster: Cluster, namespace: str, load_generators: tuple[str, ...], window_s: float) -> HealthyBaseline:
    """Record the healthy baseline (call it when the app is healthy, before any fault)."""
    generators = []
    for key in load_generators:
        kind, ns, name = key.split("/", 2)
        obj = cluster.get(kind, ns, name)
        if obj is None:
            raise LookupError(f"load generator {key} does not exist in the healthy baseline")
        generators.append(LoadGenerator(key, template_digest(obj), int((obj.get("spec") or {}).get("replicas", 1) or 0)))
    return HealthyBaseline(load_generators=tuple(generators), entry_rps=entry_rps(cluster, window_s),
                           safeguards=safeguards(cluster, namespace))


__all__ = ["PROBES", "SAFEGUARD_KINDS", "HealthyBaseline", "LoadGenerator", "entry_rps", "pod_template", "record",
           "safeguards", "template_digest", "workload_safeguards"]
