"""Gather a snapshot's content from a twin, only through what the agent credential can see.

Objects and events come from the agent's `Cluster` view (RBAC and the hidden benchmark
namespaces apply); alerts, metrics, logs and traces from the same in-process handlers that serve
the twin's Prometheus, Loki and Jaeger APIs to an agent token (`FilteredTSDB`, `labels_visible`,
`span_visible`), called directly instead of over HTTP. Every function returns plain rows, sorted,
so that the same twin state always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sregym.cluster.base import AGENT
from sregym.errors import ApiError
from sregym.snapshot.jsonfile import dumps_compact as compact
from sregym.snapshot.layout import (
    CLUSTER_SCOPED,
    MAX_SPANS_PER_SERVICE,
    METRIC_FAMILIES,
    METRIC_STEP_S,
    MetricFamily,
    entity_id,
)
from sregym.twin.clock import format_time, parse_time

if TYPE_CHECKING:
    from sregym.cluster.twin import TwinCluster
    from sregym.twin.telemetry.traces import Span
    from sregym.twin.twin import Twin

# Kinds whose objects are entities of the topology (what a root cause can be).
TOPOLOGY_KINDS = ("Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Service",
                  "ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim", "NetworkPolicy",
                  "ResourceQuota", "LimitRange", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Ingress",
                  "Node", "PersistentVolume", "StorageClass", "ValidatingWebhookConfiguration",
                  "MutatingWebhookConfiguration", "Namespace", "PriorityClass")
SKIPPED_KINDS = ("Event",)  # written to k8s_events.tsv instead


# --------------------------------------------------------------------- time
def iso_s(ts: float) -> str:
    """RFC 3339, second precision (floored, where `format_time` would round a fraction very
    close to the next second up), UTC."""
    return format_time(ts // 1)


def iso_ms(ts: float) -> str:
    """RFC 3339, millisecond precision (rounded), UTC."""
    ms = round(ts * 1000)
    return format_time(ms // 1000).removesuffix("Z") + f".{ms % 1000:03d}Z"


def _parse(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return parse_time(text)
    except ValueError:
        return None


# ------------------------------------------------------------------ objects
def agent_objects(cluster: TwinCluster) -> list[dict[str, Any]]:
    """Every object the agent may list, all kinds but Events, sorted by (kind, namespace, name)."""
    from sregym.twin.machinery.authz import authorize

    agent = cluster.as_user(AGENT)
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for k in cluster.twin.store.kinds.kinds:
        if k.virtual or k.kind in SKIPPED_KINDS or k.key in seen or "list" not in k.verbs:
            continue
        seen.add(k.key)
        if not authorize(AGENT, "list", k.group, k.plural)[0]:
            continue
        try:
            items = agent.list(f"{k.api_version}/{k.kind}")
        except ApiError:
            continue
        out.extend(items)
    out.sort(key=_object_key)
    return out


def _object_key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def object_rows(phase: str, objects: Iterable[dict[str, Any]]) -> list[tuple[str, ...]]:
    return [(phase, *_object_key(o), compact(o)) for o in objects]


# ------------------------------------------------------------------- events
def event_rows(cluster: TwinCluster) -> list[tuple[str, ...]]:
    return event_rows_of(cluster.as_user(AGENT).list("v1/Event"))


def event_rows_of(events: Iterable[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Event objects as `k8s_events.tsv` rows, by time."""
    rows: list[tuple[tuple[Any, ...], tuple[str, ...]]] = []
    for ev in events:
        meta = ev.get("metadata") or {}
        inv = ev.get("involvedObject") or {}
        at = (_parse(ev.get("lastTimestamp")) or _parse(ev.get("eventTime")) or _parse(ev.get("firstTimestamp"))
              or _parse(meta.get("creationTimestamp")) or 0.0)
        source = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
        row = (iso_ms(at), str(meta.get("namespace") or ""), str(inv.get("kind") or ""), str(inv.get("name") or ""),
               str(ev.get("type") or ""), str(ev.get("reason") or ""), str(ev.get("message") or ""),
               str(ev.get("count") or 1), str(source), compact(ev))
        rows.append(((round(at * 1000), row[1], str(meta.get("name", ""))), row))
    rows.sort(key=lambda r: r[0])
    return [r for _k, r in rows]


# ------------------------------------------------------------------- alerts
def alerts_now(twin: Twin) -> list[dict[str, Any]]:
    """What `/api/v1/alerts` returns to the agent right now (pending and firing)."""
    from sregym.twin.telemetry.alerts import rule_manager
    from sregym.twin.telemetry.visibility import labels_visible

    alerts = rule_manager(twin).api_alerts(labels_visible)
    return sorted(alerts, key=lambda a: (compact(a.get("labels")), str(a.get("activeAt"))))


# ------------------------------------------------------------------ metrics
MetricRows = dict[tuple[str, str | None, str], list[tuple[str, str, str, str]]]


def metric_rows(twin: Twin, start: float, end: float, *, service_namespaces: dict[str, str]) -> MetricRows:
    """Every metric family over [start, end] at the snapshot step, split by entity:
    {(kind, namespace, name): [(timestamp, metric_name, value, labels)]}, rows in file order."""
    from sregym.twin.api.prometheus import PrometheusApi

    engine = PrometheusApi(twin, {}).engine(AGENT)
    start_ms, end_ms = round(start * 1000), round(end * 1000)
    return metric_rows_of({f.query: engine.range(f.query, start_ms, end_ms, METRIC_STEP_S * 1000).to_api()
                           for f in METRIC_FAMILIES}, service_namespaces=service_namespaces)


def metric_rows_of(results: dict[str, dict[str, Any]], *, service_namespaces: dict[str, str]) -> MetricRows:
    """Each family's range-query answer (`data` of Prometheus' API, by query) split by entity."""
    out: MetricRows = {}
    for family in METRIC_FAMILIES:
        series = (results.get(family.query) or {}).get("result") or []
        keyed = []
        for s in series:
            labels = {k: str(v) for k, v in (s.get("metric") or {}).items()}
            entity = _entity_of(family, labels, service_namespaces)
            values = s.get("values") or []
            if entity is None or not values:
                continue
            if family.sparse and not any(_nonzero(v) for _t, v in values):
                continue
            keyed.append((compact(labels), entity, values))
        keyed.sort(key=lambda x: x[0])
        for labels_text, entity, values in keyed:
            bucket = out.setdefault(entity, [])
            bucket.extend((iso_s(float(t)), family.query, str(v), labels_text) for t, v in values)
    return out


def _nonzero(value: Any) -> bool:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return number == number and number != 0.0


def _entity_of(family: MetricFamily, labels: dict[str, str],
               service_namespaces: dict[str, str]) -> tuple[str, str | None, str] | None:
    if family.entity == "pod" and labels.get("namespace") and labels.get("pod"):
        return ("pod", labels["namespace"], labels["pod"])
    if family.entity == "deployment" and labels.get("namespace") and labels.get("deployment"):
        return ("deployment", labels["namespace"], labels["deployment"])
    if family.entity == "service":
        if labels.get("service_name"):
            name = labels["service_name"]
            namespace = service_namespaces.get(name)
            return ("service", namespace, name) if namespace else None
        if labels.get("namespace") and labels.get("endpoint"):
            return ("service", labels["namespace"], labels["endpoint"])
    if family.entity == "node" and labels.get("node"):
        return ("node", None, labels["node"])
    return None


# --------------------------------------------------------------------- logs
def log_rows(twin: Twin, start: float, end: float) -> list[tuple[str, ...]]:
    """Container and node log lines written in [start, end], as the agent's Loki sees them."""
    from sregym.twin.telemetry.logindex import LogIndex
    from sregym.twin.telemetry.visibility import labels_visible

    return log_rows_of([(labels, list(entries())) for labels, entries in LogIndex(twin).streams(labels_visible)],
                       start, end)


def log_rows_of(streams: Iterable[tuple[dict[str, str], list[tuple[int, str]]]], start: float,
                end: float) -> list[tuple[str, ...]]:
    """Log streams (labels, [(ns timestamp, line)]) as `logs.tsv` rows in [start, end], by time."""
    lo, hi = round(start * 1e9), round(end * 1e9)
    keyed: list[tuple[tuple[Any, ...], tuple[str, ...]]] = []
    for labels, entries in streams:
        if "pod" in labels:
            head = ("pod", labels.get("namespace", ""), labels.get("pod", ""), labels.get("container", ""),
                    labels.get("node", ""))
        elif "service_name" in labels:  # a record sent over OTLP (twin/telemetry/otlp_logs.py)
            head = ("otlp", labels.get("k8s_namespace_name", ""), labels.get("k8s_pod_name", ""),
                    labels["service_name"], "")
        else:
            head = (labels.get("source", "node"), "", "", "", labels.get("node", ""))
        for index, (ts, line) in enumerate(entries):
            if lo <= ts <= hi:
                keyed.append(((ts, head, index), (iso_ms(ts / 1e9), *head, line)))
    keyed.sort(key=lambda r: r[0])
    return [r for _k, r in keyed]


# ------------------------------------------------------------------- traces
def visible_spans(twin: Twin) -> list[Span]:
    from sregym.twin.telemetry.visibility import span_visible

    store = twin.services.traces
    return [s for s in store.spans() if span_visible(s)] if store is not None else []


def spans_between(spans: list[Span], start: float, end: float) -> list[Span]:
    lo, hi = round(start * 1e6), round(end * 1e6)
    return [s for s in spans if lo <= s.start_us <= hi]


def trace_rows(spans: list[Span], window: list[Span]) -> list[tuple[str, ...]]:
    """The window's spans as rows, capped per service (lowest trace ids kept), by start time."""
    from sregym.twin.telemetry.trace_views import span_tags

    known = {(s.trace_id, s.span_id) for s in spans}
    by_service: dict[str, list[Span]] = {}
    for s in window:
        by_service.setdefault(s.service, []).append(s)
    kept: list[Span] = []
    for service in sorted(by_service):
        group = by_service[service]
        if len(group) > MAX_SPANS_PER_SERVICE:
            group = sorted(group, key=lambda s: (s.trace_id, s.span_id))[:MAX_SPANS_PER_SERVICE]
        kept.extend(group)
    kept.sort(key=lambda s: (s.start_us, s.trace_id, s.span_id))
    rows = []
    for s in kept:
        parent = s.parent_span_id if s.parent_span_id and (s.trace_id, s.parent_span_id) in known else ""
        attributes = {**{str(k): v for k, v in s.process_tags.items()}, **span_tags(s)}
        rows.append((iso_ms(s.start_us / 1e6), s.trace_id, s.span_id, parent, s.service, s.operation,
                     f"SPAN_KIND_{str(s.kind).upper()}", str(s.start_us * 1000), str(s.duration_us * 1000),
                     "STATUS_CODE_ERROR" if s.error else "STATUS_CODE_UNSET", s.message or "", compact(attributes)))
    return rows


def service_calls(spans: list[Span], window: list[Span]) -> list[dict[str, Any]]:
    """Cross-service parent → child span pairs in `window`, counted (Jaeger's dependencies)."""
    from sregym.twin.telemetry.trace_views import call_counts

    counts = call_counts({(s.trace_id, s.span_id): s for s in spans}, window)
    return [{"source": a, "target": b, "calls": n} for (a, b), n in sorted(counts.items())]


# ----------------------------------------------------------------- topology
def topology(objects: list[dict[str, Any]], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Entities, ownership, Service → pods, placement, claims and observed calls."""
    entities: list[dict[str, Any]] = []
    ids: set[str] = set()
    namespaced: dict[str, bool] = {}
    for o in objects:
        kind = str(o.get("kind", ""))
        if kind not in TOPOLOGY_KINDS:
            continue
        meta = o.get("metadata") or {}
        ns = meta.get("namespace") or None
        namespaced[kind] = ns is not None
        eid = entity_id(kind, ns, meta["name"])
        ids.add(eid)
        entities.append({"id": eid, "kind": kind, "namespace": ns, "name": meta["name"]})
    ownership, selects, placement, claims = [], [], [], []
    pvc_volume: dict[str, str | None] = {}
    for o in objects:
        if o.get("kind") == "PersistentVolumeClaim":
            meta = o["metadata"]
            pvc_volume[entity_id("PersistentVolumeClaim", meta.get("namespace"), meta["name"])] = \
                (o.get("spec") or {}).get("volumeName")
    for o in objects:
        kind = str(o.get("kind", ""))
        meta = o.get("metadata") or {}
        ns = meta.get("namespace") or None
        eid = entity_id(kind, ns, meta.get("name", ""))
        if eid not in ids:
            continue
        for ref in meta.get("ownerReferences") or []:
            owner_ns = ns if namespaced.get(str(ref.get("kind")), True) else None
            ownership.append({"owner": entity_id(str(ref.get("kind")), owner_ns, str(ref.get("name"))), "owned": eid})
        if kind == "Pod":
            node = (o.get("spec") or {}).get("nodeName")
            if node:
                placement.append({"pod": eid, "node": entity_id("Node", None, node)})
            for vol in (o.get("spec") or {}).get("volumes") or []:
                claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
                if claim:
                    cid = entity_id("PersistentVolumeClaim", ns, claim)
                    volume = pvc_volume.get(cid)
                    claims.append({"pod": eid, "claim": cid,
                                   "volume": entity_id("PersistentVolume", None, volume) if volume else None})
    for o in objects:
        if o.get("kind") != "Endpoints":
            continue
        meta = o["metadata"]
        ns = meta.get("namespace")
        service = entity_id("Service", ns, meta["name"])
        if service not in ids:
            continue
        pods = set()
        for subset in o.get("subsets") or []:
            for addr in (subset.get("addresses") or []) + (subset.get("notReadyAddresses") or []):
                ref = addr.get("targetRef") or {}
                if ref.get("kind") == "Pod" and ref.get("name"):
                    pods.add(entity_id("Pod", ref.get("namespace") or ns, ref["name"]))
        selects.append({"service": service, "selects": sorted(pods)})
    return {
        "entities": sorted(entities, key=lambda e: e["id"]),
        "ownership": sorted(ownership, key=lambda r: (r["owner"], r["owned"])),
        "services": sorted(selects, key=lambda r: r["service"]),
        "placement": sorted(placement, key=lambda r: r["pod"]),
        "claims": sorted(claims, key=lambda r: (r["pod"], r["claim"])),
        "calls": calls,
    }


def service_namespaces(objects: list[dict[str, Any]], namespaces: list[str]) -> dict[str, str]:
    """Span service name → the namespace of the Service of that name (app namespaces first)."""
    found: dict[str, str] = {}
    order = {ns: i for i, ns in enumerate(namespaces)}
    services = [o for o in objects if o.get("kind") == "Service"]
    services.sort(key=lambda o: (order.get(o["metadata"].get("namespace"), len(order)),
                                 o["metadata"].get("namespace") or "", o["metadata"]["name"]))
    for o in services:
        found.setdefault(o["metadata"]["name"], o["metadata"].get("namespace") or CLUSTER_SCOPED)
    return found


__all__ = ["TOPOLOGY_KINDS", "agent_objects", "alerts_now", "compact", "event_rows", "event_rows_of", "iso_ms",
           "iso_s", "log_rows", "log_rows_of", "metric_rows", "metric_rows_of", "object_rows", "service_calls", "service_namespaces", "spans_between",
           "topology", "trace_rows", "visible_spans"]
