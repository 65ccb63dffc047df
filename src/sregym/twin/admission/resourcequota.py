"""ResourceQuota admission and the usage arithmetic shared with the quota controller.

An exhausted quota is a fault whose only visible symptom is on the *owner*: the Deployment stays
short of replicas and the ReplicaSet carries `FailedCreate` events with the API server's text
(`exceeded quota: compute, requested: limits.memory=512Mi, used: limits.memory=1536Mi, limited:
limits.memory=2Gi`). Reproducing it needs the real evaluators: which resources each kind charges,
that terminal pods are free, that a quota on cpu/memory forces every container to declare them
(`failed quota: compute: must specify limits.memory for: web`), and that scoped quotas only see
matching pods.

Usage is recomputed from the store at admission time rather than read from `status.used`, so the
answer never depends on whether the controller has run since the last write; the controller
publishes the same numbers in `status`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin, forbidden
from sregym.twin.clock import parse_time
from sregym.twin.machinery.quantity import (
    QuantityError,
    format_quantity,
    is_binary_quantity,
    parse_quantity,
)
from sregym.twin.machinery.store import Operation

if TYPE_CHECKING:
    from sregym.twin.machinery.kinds import ResourceKind
    from sregym.twin.twin import Twin

# Resources a pod must declare per container when a quota limits them (the "backward
# compatibility requirement" of the pod evaluator).
_VALIDATED = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                        "limits.memory"})
_STANDARD_REQUESTS = ("cpu", "memory", "ephemeral-storage")
# Object-count resources with a legacy short name.
_LEGACY_COUNTS = {("", "Pod"): "pods", ("", "Service"): "services", ("", "ConfigMap"): "configmaps",
                  ("", "Secret"): "secrets", ("", "PersistentVolumeClaim"): "persistentvolumeclaims",
                  ("", "ReplicationController"): "replicationcontrollers",
                  ("", "ResourceQuota"): "resourcequotas"}


@dataclass(frozen=True)
class Amount:
    """A quantity that remembers whether it was written in binary units, so sums print like the
    API server prints them (`1536Mi`, not `1610612736`)."""

    value: Decimal
    binary: bool = False

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.value + other.value, self.binary)

    def __sub__(self, other: Amount) -> Amount:
        return Amount(self.value - other.value, self.binary)

    def text(self) -> str:
        return format_quantity(self.value, self.binary)


ONE = Amount(Decimal(1))
ResourceList = dict[str, Amount]


def amount(value: Any) -> Amount:
    try:
        return Amount(parse_quantity(value), is_binary_quantity(value))
    except (QuantityError, TypeError, ArithmeticError):
        return Amount(Decimal(0))


def add_into(total: ResourceList, extra: ResourceList) -> None:
    for key, value in extra.items():
        total[key] = total[key] + value if key in total else value


def pretty(resources: ResourceList) -> str:
    """`limits.memory=512Mi,pods=1`: the quota error's resource list format (sorted)."""
    return ",".join(f"{k}={resources[k].text()}" for k in sorted(resources))


# ------------------------------------------------------------------ evaluators
def _container_resources(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    resources = container.get("resources") or {}
    limits = dict(resources.get("limits") or {})
    requests = dict(resources.get("requests") or {})
    for key, value in limits.items():  # API defaulting: a limit implies the same request
        requests.setdefault(key, value)
    return requests, limits


def _compute_usage(requests: dict[str, Any], limits: dict[str, Any]) -> ResourceList:
    """podComputeUsageHelper: which quota resources a set of requests/limits charges."""
    out: ResourceList = {}
    for key, value in requests.items():
        qty = amount(value)
        if key in _STANDARD_REQUESTS:
            out[key] = qty
            out[f"requests.{key}"] = qty
        elif key.startswith("hugepages-") or "/" in key:
            out[f"requests.{key}"] = qty
    for key, value in limits.items():
        if key in _STANDARD_REQUESTS:
            out[f"limits.{key}"] = amount(value)
    return out


def _pod_totals(spec: dict[str, Any]) -> tuple[dict[str, Amount], dict[str, Amount]]:
    requests: dict[str, Amount] = {}
    limits: dict[str, Amount] = {}
    sidecar = []
    for container in spec.get("containers") or []:
        req, lim = _container_resources(container)
        add_into(requests, {k: amount(v) for k, v in req.items()})
        add_into(limits, {k: amount(v) for k, v in lim.items()})
    for container in spec.get("initContainers") or []:
        req, lim = _container_resources(container)
        if container.get("restartPolicy") == "Always":  # native sidecars run alongside
            sidecar.append((req, lim))
            continue
        for key, value in req.items():
            qty = amount(value)
            if key not in requests or qty.value > requests[key].value:
                requests[key] = qty
        for key, value in lim.items():
            qty = amount(value)
            if key not in limits or qty.value > limits[key].value:
                limits[key] = qty
    for req, lim in sidecar:
        add_into(requests, {k: amount(v) for k, v in req.items()})
        add_into(limits, {k: amount(v) for k, v in lim.items()})
    for key, value in (spec.get("overhead") or {}).items():
        add_into(requests, {key: amount(value)})
        if key in limits:
            add_into(limits, {key: amount(value)})
    return requests, limits


def pod_counts_toward_quota(pod: dict[str, Any], now: float) -> bool:
    """QuotaV1Pod: terminal pods are free; a terminating pod stops counting once its grace period
    has run out (the kubelet just has not reported yet)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    stamp = meta.get("deletionTimestamp")
    if stamp and meta.get("deletionGracePeriodSeconds") is not None:
        try:
            if now > parse_time(stamp) + int(meta.get("deletionGracePeriodSeconds") or 0):
                return False
        except ValueError:
            return True
    return True


def pod_usage(pod: dict[str, Any], now: float) -> ResourceList:
    if not pod_counts_toward_quota(pod, now):
        return {}
    requests, limits = _pod_totals(pod.get("spec") or {})
    out: ResourceList = {"pods": ONE, "count/pods": ONE}
    for key, qty in requests.items():
        if key in _STANDARD_REQUESTS:
            out[key] = qty
            out[f"requests.{key}"] = qty
        elif key.startswith("hugepages-") or "/" in key:
            out[f"requests.{key}"] = qty
    for key, qty in limits.items():
        if key in _STANDARD_REQUESTS:
            out[f"limits.{key}"] = qty
    return out


def _service_usage(svc: dict[str, Any]) -> ResourceList:
    spec = svc.get("spec") or {}
    out: ResourceList = {"services": ONE, "count/services": ONE}
    svc_type = spec.get("type") or "ClusterIP"
    if svc_type == "LoadBalancer":
        out["services.loadbalancers"] = ONE
    if svc_type in ("NodePort", "LoadBalancer"):
        ports = len(spec.get("ports") or [])
        out["services.nodeports"] = Amount(Decimal(ports))
    return out


def _claim_usage(pvc: dict[str, Any]) -> ResourceList:
    spec = pvc.get("spec") or {}
    out: ResourceList = {"persistentvolumeclaims": ONE, "count/persistentvolumeclaims": ONE}
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    class_name = spec.get("storageClassName")
    if class_name:
        out[f"{class_name}.storageclass.storage.k8s.io/persistentvolumeclaims"] = ONE
    if storage is not None:
        qty = amount(storage)
        out["requests.storage"] = qty
        if class_name:
            out[f"{class_name}.storageclass.storage.k8s.io/requests.storage"] = qty
    return out


def count_resource(kind: ResourceKind) -> str:
    """`count/deployments.apps`, `count/pods`: the generic object-count resource name."""
    return f"count/{kind.plural}.{kind.group}" if kind.group else f"count/{kind.plural}"


def usage_of(kind: ResourceKind, obj: dict[str, Any] | None, now: float) -> ResourceList:
    """What one object charges against quota (empty for objects that are free)."""
    if obj is None:
        return {}
    key = kind.key
    if key == ("", "Pod"):
        return pod_usage(obj, now)
    if key == ("", "Service"):
        return _service_usage(obj)
    if key == ("", "PersistentVolumeClaim"):
        return _claim_usage(obj)
    out: ResourceList = {count_resource(kind): ONE}
    legacy = _LEGACY_COUNTS.get(key)
    if legacy:
        out[legacy] = ONE
    return out


def _kind_for_resource(twin: Twin, resource: str) -> ResourceKind | None:
    """Which kind a quota resource name charges (None for resources no kind charges)."""
    for key, legacy in _LEGACY_COUNTS.items():
        if resource in (legacy, f"count/{legacy}"):
            return twin.kinds.by_kind("v1", key[1])
    if resource.startswith("services."):
        return twin.kinds.by_kind("v1", "Service")
    if resource == "requests.storage" or ".storageclass.storage.k8s.io/" in resource:
        return twin.kinds.by_kind("v1", "PersistentVolumeClaim")
    if resource in _STANDARD_REQUESTS or resource.startswith(("requests.", "limits.", "hugepages-")):
        return twin.kinds.by_kind("v1", "Pod")
    if resource.startswith("count/"):
        plural, _, group = resource[len("count/"):].partition(".")
        for kind in twin.kinds.kinds:
            if kind.plural == plural and kind.group == group and not kind.virtual:
                return kind
    return None


# ---------------------------------------------------------------------- scopes
def _best_effort(pod: dict[str, Any]) -> bool:
    for field in ("containers", "initContainers"):
        for container in (pod.get("spec") or {}).get(field) or []:
            resources = container.get("resources") or {}
            if resources.get("requests") or resources.get("limits"):
                return False
    return True


def _scope_matches(scope: str, operator: str, values: list[str], pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "BestEffort":
        return _best_effort(pod)
    if scope == "NotBestEffort":
        return not _best_effort(pod)
    if scope == "PriorityClass":
        name = spec.get("priorityClassName")
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "In":
            return bool(name) and name in values
        if operator == "NotIn":
            return not name or name not in values
    return False


def quota_matches(quota: dict[str, Any], kind: ResourceKind, obj: dict[str, Any] | None) -> bool:
    """Scoped quotas (`scopes`, `scopeSelector`) track pods only, and only the matching ones."""
    spec = quota.get("spec") or {}
    scopes = [(s, "Exists", []) for s in spec.get("scopes") or []]
    for expr in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        scopes.append((expr.get("scopeName", ""), expr.get("operator", "Exists"),
                       list(expr.get("values") or [])))
    if not scopes:
        return True
    if kind.key != ("", "Pod") or obj is None:
        return False
    return all(_scope_matches(s, op, values, obj) for s, op, values in scopes)


# ----------------------------------------------------------------------- usage
def hard_of(quota: dict[str, Any]) -> ResourceList:
    return {k: amount(v) for k, v in ((quota.get("spec") or {}).get("hard") or {}).items()}


UsageCache = dict[tuple[tuple[str, str], str, str], tuple[dict[str, Any], ResourceList]]


def _usage_cache(twin: Twin) -> UsageCache:
    """Per-twin memo of object usage. Stored objects are replaced, never mutated, on every write,
    so an entry is valid exactly while it still refers to the stored dict itself."""
    cache = twin.services.quota_usage
    if cache is None or len(cache) > 50_000:  # entries of deleted objects pile up: start over
        cache = twin.services.quota_usage = {}
    return cache


def _cached_usage(cache: UsageCache, kind: ResourceKind, obj: dict[str, Any], now: float) -> ResourceList:
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return usage_of(kind, obj, now)  # depends on the clock until the grace period ends
    key = (kind.key, meta.get("namespace", ""), meta.get("name", ""))
    entry = cache.get(key)
    if entry is not None and entry[0] is obj:
        return entry[1]
    usage = usage_of(kind, obj, now)
    cache[key] = (obj, usage)
    return usage


def namespace_usage(twin: Twin, quota: dict[str, Any]) -> ResourceList:
    """Current usage, in the namespace of `quota`, of every resource the quota limits."""
    namespace = (quota.get("metadata") or {}).get("namespace", "")
    hard = hard_of(quota)
    now = twin.clock.now
    used: ResourceList = {}
    kinds: dict[tuple[str, str], ResourceKind] = {}
    for resource in sorted(hard):
        kind = _kind_for_resource(twin, resource)
        if kind is not None:
            kinds[kind.key] = kind
    cache = _usage_cache(twin)
    for key in sorted(kinds):
        kind = kinds[key]
        for obj in twin.store.scan(kind, namespace):
            if not quota_matches(quota, kind, obj):
                continue
            for resource, qty in _cached_usage(cache, kind, obj, now).items():
                if resource in hard:
                    used[resource] = used[resource] + qty if resource in used else qty
    for resource, limit in hard.items():
        used.setdefault(resource, Amount(Decimal(0), limit.binary))
    return used


def missing_declarations(required: set[str], pod: dict[str, Any]) -> str | None:
    """The pod evaluator's Constraints: every container must declare what the quota limits."""
    required = required & _VALIDATED
    if not required:
        return None
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or []:
            declared = set(_compute_usage(*_container_resources(container)))
            for resource in sorted(required - declared):
                missing.setdefault(resource, set()).add(container.get("name", ""))
    if not missing:
        return None
    parts = [f"{resource} for: {','.join(sorted(missing[resource]))}" for resource in sorted(missing)]
    return "must specify " + "; ".join(parts)


@admission_plugin
class ResourceQuotaAdmission(AdmissionPlugin):
    """Rejects writes that would push a namespace past any of its ResourceQuotas."""

    name = "ResourceQuota"
    order = 190

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._quota_kind = twin.kinds.by_kind("v1", "ResourceQuota")

    def validate(self, op: Operation) -> None:
        if op.subresource or op.verb not in ("CREATE", "UPDATE") or op.obj is None:
            return
        if not op.kind.namespaced or op.kind.key == ("", "Event"):
            return
        quotas = list(self.twin.store.scan(self._quota_kind, op.namespace))
        if not quotas:
            return
        now = self.twin.clock.now
        new_usage = usage_of(op.kind, op.obj, now)
        if not new_usage:
            return
        old_usage = usage_of(op.kind, op.old, now) if op.verb == "UPDATE" else {}
        delta: ResourceList = {}
        for key, qty in new_usage.items():
            change = qty - old_usage[key] if key in old_usage else qty
            if op.verb == "CREATE" or change.value > 0:
                delta[key] = change
        if not delta:
            return
        if op.verb == "UPDATE" and op.kind.key == ("", "Pod"):
            # Pod resources are immutable; only a pod coming back from a terminal phase charges.
            delta = {k: v for k, v in delta.items() if v.value > 0}
            if not delta:
                return
        matching = [q for q in quotas if quota_matches(q, op.kind, op.obj)]
        if op.verb == "CREATE" and op.kind.key == ("", "Pod"):
            for quota in matching:
                problem = missing_declarations(set(hard_of(quota)), op.obj)
                if problem:
                    raise forbidden(op, f"failed quota: {quota['metadata']['name']}: {problem}")
        for quota in matching:
            hard = hard_of(quota)
            requested = {k: v for k, v in delta.items() if k in hard}
            if not requested:
                continue
            used = namespace_usage(self.twin, quota)
            exceeded = sorted(k for k, v in requested.items() if used[k].value + v.value > hard[k].value)
            if exceeded:
                raise forbidden(op, (
                    f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {pretty({k: requested[k] for k in exceeded})}, "
                    f"used: {pretty({k: used[k] for k in exceeded})}, "
                    f"limited: {pretty({k: hard[k] for k in exceeded})}"))
