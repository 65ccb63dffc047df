"""Which pods (and containers) a Chaos Mesh selector picks, and how a mode narrows them.

Mirrors `pkg/selector` of Chaos Mesh v2: a `pods` map names pods directly; otherwise namespaces
(defaulting to the experiment's own namespace, as the admission webhook fills it in), label,
expression, annotation and field selectors, nodes / nodeSelectors (union of both) and pod phases
all have to match. The mode then picks a random subset from the sorted candidates with the twin's
`chaos` stream, once, when the experiment first selects: the picks are written into the records
and never re-drawn, so a replacement pod created by a Deployment is not injected.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.selectors import LabelSelector, Requirement, field_value

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


class SelectError(Exception):
    """A selector or mode Chaos Mesh would reject (message as its `Failed` event shows it)."""


def label_selector(spec: dict[str, Any]) -> LabelSelector:
    requirements = [Requirement(k, "=", (str(v),)) for k, v in sorted((spec.get("labelSelectors") or {}).items())]
    for expr in spec.get("expressionSelectors") or []:
        op = _OPS.get(expr.get("operator", ""))
        if op is None:
            raise SelectError(f"{expr.get('operator')!r} is not a valid pod selector operator")
        requirements.append(Requirement(expr.get("key", ""), op, tuple(str(v) for v in expr.get("values") or ())))
    return LabelSelector(tuple(requirements))


def candidate_pods(twin: Twin, selector: dict[str, Any] | None, default_namespace: str) -> list[dict[str, Any]]:
    """Pods matching every part of a `SelectorSpec`, sorted by (namespace, name). Read-only dicts."""
    spec = selector or {}
    store = twin.store
    named = spec.get("pods") or {}
    if named:
        out = []
        for ns in sorted(named):
            for name in sorted(set(named[ns] or [])):
                pod = store.peek("Pod", ns, name)
                if pod is not None and not pod["metadata"].get("deletionTimestamp"):
                    out.append(pod)
        return out
    namespaces = list(spec.get("namespaces") or []) or [default_namespace]
    labels = label_selector(spec)
    annotations = spec.get("annotationSelectors") or {}
    fields = spec.get("fieldSelectors") or {}
    phases = set(spec.get("podPhaseSelectors") or [])
    nodes = _selected_nodes(twin, spec)
    out = []
    for ns in sorted(set(namespaces)):
        for pod in store.scan("Pod", ns):
            meta = pod["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            if not labels.matches(meta.get("labels")):
                continue
            pod_annotations = meta.get("annotations") or {}
            if any(pod_annotations.get(k) != v for k, v in annotations.items()):
                continue
            if any(field_value(pod, k) != str(v) for k, v in fields.items()):
                continue
            if phases and (pod.get("status") or {}).get("phase", "Pending") not in phases:
                continue
            if nodes is not None and (pod.get("spec") or {}).get("nodeName") not in nodes:
                continue
            out.append(pod)
    return out


def _selected_nodes(twin: Twin, spec: dict[str, Any]) -> set[str] | None:
    names = spec.get("nodes") or []
    node_selector = spec.get("nodeSelectors") or {}
    if not names and not node_selector:
        return None
    chosen = set(names)
    if node_selector:
        for node in twin.store.scan("Node"):
            node_labels = node["metadata"].get("labels") or {}
            if all(node_labels.get(k) == v for k, v in node_selector.items()):
                chosen.add(node["metadata"]["name"])
    return chosen


def apply_mode(items: list[Any], mode: str | None, value: str | int | None, rng: random.Random) -> list[Any]:
    """Narrow sorted candidates by a Chaos Mesh mode; raises SelectError like the real selector."""
    mode = mode or "one"
    count = len(items)
    if count == 0:
        return []
    if mode == "all":
        return list(items)
    if mode == "one":
        return [items[rng.randrange(count)]]
    number = _int(value, mode)
    if mode == "fixed":
        if number < 0:
            raise SelectError(f"fixed number value {number} is invalid")
        return _sample(items, min(number, count), rng)
    if mode in ("fixed-percent", "random-max-percent"):
        if not 0 <= number <= 100:
            raise SelectError(f"{mode} value {number} must be between 0 and 100")
        percent = number if mode == "fixed-percent" else rng.randint(0, number)
        return _sample(items, math.floor(count * percent / 100), rng)
    raise SelectError(f"mode {mode} not supported")


def _int(value: str | int | None, mode: str) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        raise SelectError(f"{mode} value {value!r} is invalid: must be an integer") from None


def _sample(items: list[Any], number: int, rng: random.Random) -> list[Any]:
    """A random subset kept in candidate order (records list targets in a stable order)."""
    picked = sorted(rng.sample(range(len(items)), number))
    return [items[i] for i in picked]


def pod_key(pod: dict[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace', 'default')}/{meta['name']}"


def container_names(pod: dict[str, Any], wanted: Iterable[str] | None) -> list[str]:
    """Containers a ContainerSelector targets: the named ones, or every regular container."""
    names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    wanted = list(wanted or [])
    return [n for n in names if n in wanted] if wanted else names
