"""LimitRanger: per-namespace defaults and bounds for container, pod and claim resources.

A LimitRange is the quiet cause behind two classic incidents: a Deployment whose pods are all
rejected (`maximum memory usage per Container is 1Gi, but limit is 2Gi`, surfacing only as a
ReplicaSet `FailedCreate`), and pods that get a default memory limit nobody wrote in the manifest
and are OOM-killed. Both need the real plugin's behaviour: defaults are filled in at admission time
(and recorded in the `kubernetes.io/limit-ranger` annotation), then min/max/ratio are enforced on
the result with the API server's exact wording.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin, forbidden
from sregym.twin.machinery.quantity import QuantityError, canonical_quantity, parse_quantity
from sregym.twin.machinery.store import Operation

ANNOTATION = "kubernetes.io/limit-ranger"
_MILLI_LIMIT = Decimal(2**63 - 1) / 1000  # resource.MaxMilliValue


def _q(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ArithmeticError):
        return None


def default_limit_range_item(item: dict[str, Any]) -> None:
    """API-server defaulting of a `Container` LimitRange item (SetDefaults_LimitRangeItem): the
    default limit falls back to max, the default request to the default limit, then to min."""
    if item.get("type") != "Container":
        return
    default = item.setdefault("default", {})
    default_request = item.setdefault("defaultRequest", {})
    for key, value in (item.get("max") or {}).items():
        default.setdefault(key, value)
    for key, value in default.items():
        default_request.setdefault(key, value)
    for key, value in (item.get("min") or {}).items():
        default_request.setdefault(key, value)


def _merge_defaults(container: dict[str, Any], limits: dict[str, Any], requests: dict[str, Any],
                    prefix: str) -> list[str]:
    """Fill missing requests/limits of one container; return the annotation fragments."""
    resources = container.setdefault("resources", {})
    # API defaulting ran before admission: an explicit limit already implies the same request.
    for key, value in (resources.get("limits") or {}).items():
        resources.setdefault("requests", {}).setdefault(key, value)
    set_limits: list[str] = []
    set_requests: list[str] = []
    if limits:
        current = resources.setdefault("limits", {})
        for key in sorted(limits):
            if key not in current:
                current[key] = limits[key]
                set_limits.append(key)
    if requests:
        current = resources.setdefault("requests", {})
        for key in sorted(requests):
            if key not in current:
                current[key] = requests[key]
                set_requests.append(key)
    for empty in ("limits", "requests"):
        if empty in resources and not resources[empty]:
            resources.pop(empty)
    notes = []
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {prefix} {container.get('name', '')}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {prefix} {container.get('name', '')}")
    return notes


def _min_constraint(limit_type: str, resource: str, enforced: Any, request: dict[str, Any],
                    limit: dict[str, Any]) -> str | None:
    enforced_value = _q(enforced) or Decimal(0)
    shown = canonical_quantity(enforced)
    if resource not in request:
        return f"minimum {resource} usage per {limit_type} is {shown}.  No request is specified"
    req = _q(request[resource]) or Decimal(0)
    if req < enforced_value:
        return (f"minimum {resource} usage per {limit_type} is {shown}, "
                f"but request is {canonical_quantity(request[resource])}")
    if resource in limit and (_q(limit[resource]) or Decimal(0)) < enforced_value:
        return (f"minimum {resource} usage per {limit_type} is {shown}, "
                f"but limit is {canonical_quantity(limit[resource])}")
    return None


def _max_constraint(limit_type: str, resource: str, enforced: Any, request: dict[str, Any],
                    limit: dict[str, Any]) -> str | None:
    enforced_value = _q(enforced) or Decimal(0)
    shown = canonical_quantity(enforced)
    if resource not in limit:
        return f"maximum {resource} usage per {limit_type} is {shown}.  No limit is specified"
    if (_q(limit[resource]) or Decimal(0)) > enforced_value:
        return (f"maximum {resource} usage per {limit_type} is {shown}, "
                f"but limit is {canonical_quantity(limit[resource])}")
    if resource in request and (_q(request[resource]) or Decimal(0)) > enforced_value:
        return (f"maximum {resource} usage per {limit_type} is {shown}, "
                f"but request is {canonical_quantity(request[resource])}")
    return None


def _ratio_constraint(limit_type: str, resource: str, enforced: Any, request: dict[str, Any],
                      limit: dict[str, Any]) -> str | None:
    shown = canonical_quantity(enforced)
    req = _q(request.get(resource)) if resource in request else None
    lim = _q(limit.get(resource)) if resource in limit else None
    if not req:
        return (f"{resource} max limit to request ratio per {limit_type} is {shown}, "
                "but no request is specified or request is 0")
    if not lim:
        return (f"{resource} max limit to request ratio per {limit_type} is {shown}, "
                "but no limit is specified or limit is 0")
    ratio = lim / req
    if ratio > (_q(enforced) or Decimal(0)):
        return (f"{resource} max limit to request ratio per {limit_type} is {shown}, "
                f"but provided ratio is {float(ratio):f}")
    return None


def _check(limit_type: str, item: dict[str, Any], request: dict[str, Any],
           limit: dict[str, Any]) -> list[str]:
    errors = []
    for bounds, check in (("min", _min_constraint), ("max", _max_constraint),
                          ("maxLimitRequestRatio", _ratio_constraint)):
        for resource, enforced in sorted((item.get(bounds) or {}).items()):
            message = check(limit_type, resource, enforced, request, limit)
            if message:
                errors.append(message)
    return errors


def _effective(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A container's requests and limits after API defaulting (a limit alone implies the same
    request), which is what the real plugin sees."""
    resources = container.get("resources") or {}
    limits = dict(resources.get("limits") or {})
    requests = dict(resources.get("requests") or {})
    for key, value in limits.items():
        requests.setdefault(key, value)
    return requests, limits


def _pod_totals(spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pod-level requests/limits: the sum over app containers, or the largest init container when
    that is bigger (init containers run one at a time)."""
    totals: list[dict[str, Decimal]] = [{}, {}]
    for container in spec.get("containers") or []:
        for index, values in enumerate(_effective(container)):
            for key, value in values.items():
                totals[index][key] = totals[index].get(key, Decimal(0)) + (_q(value) or Decimal(0))
    for container in spec.get("initContainers") or []:
        for index, values in enumerate(_effective(container)):
            for key, value in values.items():
                amount = _q(value) or Decimal(0)
                if amount > totals[index].get(key, Decimal(-1)):
                    totals[index][key] = amount
    return ({k: str(v) for k, v in totals[0].items()}, {k: str(v) for k, v in totals[1].items()})


@admission_plugin
class LimitRanger(AdmissionPlugin):
    """Defaults (mutate) and enforces (validate) the namespace's LimitRanges."""

    name = "LimitRanger"
    order = 120

    def _ranges(self, namespace: str) -> list[dict[str, Any]]:
        return list(self.twin.store.scan("LimitRange", namespace)) if namespace else []

    def mutate(self, op: Operation) -> None:
        if op.obj is None or op.subresource:
            return
        key = op.kind.key
        if key == ("", "LimitRange") and op.verb in ("CREATE", "UPDATE"):
            for item in (op.obj.get("spec") or {}).get("limits") or []:
                default_limit_range_item(item)
            return
        if key != ("", "Pod") or op.verb != "CREATE":
            return
        ranges = self._ranges(op.namespace)
        if not ranges:
            return
        spec = op.obj.setdefault("spec", {})
        notes: list[str] = []
        for limit_range in ranges:
            default_limits: dict[str, Any] = {}
            default_requests: dict[str, Any] = {}
            for item in (limit_range.get("spec") or {}).get("limits") or []:
                if item.get("type") == "Container":
                    default_requests.update(item.get("defaultRequest") or {})
                    default_limits.update(item.get("default") or {})
            if not default_limits and not default_requests:
                continue
            for prefix, field in (("container", "containers"), ("init container", "initContainers")):
                for container in spec.get(field) or []:
                    notes.extend(_merge_defaults(container, default_limits, default_requests, prefix))
        if notes:
            annotations = op.obj.setdefault("metadata", {}).setdefault("annotations", {})
            annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)

    def validate(self, op: Operation) -> None:
        if op.obj is None or op.subresource or op.verb != "CREATE":
            return
        key = op.kind.key
        if key not in (("", "Pod"), ("", "PersistentVolumeClaim")):
            return
        ranges = self._ranges(op.namespace)
        if not ranges:
            return
        errors: list[str] = []
        spec = op.obj.get("spec") or {}
        for limit_range in ranges:
            for item in (limit_range.get("spec") or {}).get("limits") or []:
                limit_type = item.get("type")
                if key == ("", "Pod") and limit_type == "Container":
                    for field in ("containers", "initContainers"):
                        for container in spec.get(field) or []:
                            requests, limits = _effective(container)
                            errors.extend(_check("Container", item, requests, limits))
                elif key == ("", "Pod") and limit_type == "Pod":
                    requests, limits = _pod_totals(spec)
                    errors.extend(_check("Pod", item, requests, limits))
                elif key == ("", "PersistentVolumeClaim") and limit_type == "PersistentVolumeClaim":
                    resources = spec.get("resources") or {}
                    requests = resources.get("requests") or {}
                    limits = resources.get("limits") or {}
                    for resource, enforced in sorted((item.get("min") or {}).items()):
                        message = _min_constraint("PersistentVolumeClaim", resource, enforced,
                                                  requests, limits)
                        if message:
                            errors.append(message)
                    for resource, enforced in sorted((item.get("max") or {}).items()):
                        message = _max_constraint_claim(resource, enforced, requests, limits)
                        if message:
                            errors.append(message)
        if errors:
            raise forbidden(op, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def _max_constraint_claim(resource: str, enforced: Any, request: dict[str, Any],
                          limit: dict[str, Any]) -> str | None:
    """Claims are bounded on what they request (a claim rarely sets limits)."""
    enforced_value = _q(enforced) or Decimal(0)
    if resource in request and (_q(request[resource]) or Decimal(0)) > enforced_value:
        return (f"maximum {resource} usage per PersistentVolumeClaim is {canonical_quantity(enforced)}, "
                f"but request is {canonical_quantity(request[resource])}")
    return None
