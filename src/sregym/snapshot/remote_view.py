"""A snapshot's content read from a cluster over the wire (`snapshot export --backend kube`).

The twin's export reads its own state through the agent's views (`collect.py`). On a cluster
reached by kubeconfig the same content comes from the same places the agent's tools read: the
Kubernetes API with the agent's ServiceAccount token (so it holds exactly what the agent could
list), Prometheus' `/api/v1/alerts` and `/api/v1/query_range`, Loki's `query_range` and Jaeger's
`/api/traces`. The rows are then shaped by the functions the twin's export uses, so the files have
the same layout. A real cluster is not deterministic: two exports of one seed differ.
"""

from __future__ import annotations

from typing import Any

from sregym.errors import ApiError
from sregym.snapshot import collect
from sregym.snapshot.jsonfile import dumps_compact as compact
from sregym.snapshot.layout import METRIC_FAMILIES, METRIC_STEP_S

LOG_SELECTORS = ('{namespace=~".+"}', '{service_name=~".+"}', '{node=~".+", namespace=""}')
LOG_LIMIT = 5000  # lines per selector and query
TRACE_LIMIT = 1000  # traces per service
# Point-in-time usage (metrics.k8s.io) is not an object the twin's export lists either.
SKIPPED_GROUPS = ("metrics.k8s.io",)


class RemoteView:
    """What the agent sees on a cluster: `agent` is a `KubeCluster` with the agent's credential,
    `urls` the query APIs by name, `http` an httpx client (it carries the agent's token)."""

    def __init__(self, agent: Any, urls: dict[str, str], http: Any) -> None:
        self.agent = agent
        self.urls = urls
        self.http = http

    def _get(self, name: str, path: str, params: dict[str, Any] | None = None) -> Any:
        base = self.urls.get(name)
        if not base:
            return None
        response = self.http.get(base + path, params=params or {}, timeout=60)
        response.raise_for_status()
        return response.json()

    # ------------------------------------------------------------- objects
    def _kinds(self) -> list[Any]:
        """The listable kinds of the API server's discovery (no subresources, no Events)."""
        kinds, seen = [], set()
        for res in self.agent.dynamic.resources.search():
            verbs = getattr(res, "verbs", None) or []
            if "/" in (getattr(res, "name", "") or "") or "list" not in verbs or res.kind in collect.SKIPPED_KINDS:
                continue
            if res.kind.endswith("List") or (res.group, res.kind) in seen or res.group in SKIPPED_GROUPS:
                continue
            seen.add((res.group, res.kind))
            kinds.append(res)
        return kinds

    def namespaces(self) -> list[str]:
        return sorted(o["metadata"]["name"] for o in self.agent.list("Namespace"))

    def objects(self) -> list[dict[str, Any]]:
        """Every object the agent may list. RBAC on a cluster grants namespaced kinds per namespace,
        so those are listed namespace by namespace; what is forbidden is left out."""
        out: list[dict[str, Any]] = []
        namespaces = self.namespaces()
        for res in self._kinds():
            for namespace in (namespaces if res.namespaced else [None]):
                out.extend(_list(res, namespace))
        out.sort(key=collect._object_key)
        return out

    def event_rows(self) -> list[tuple[str, ...]]:
        events: list[dict[str, Any]] = []
        for namespace in self.namespaces():
            try:
                events.extend(self.agent.list("Event", namespace))
            except ApiError:
                continue
        return collect.event_rows_of(events)

    # -------------------------------------------------------------- alerts
    def alerts_now(self) -> list[dict[str, Any]]:
        data = self._get("prometheus", "/api/v1/alerts") or {}
        alerts = list((data.get("data") or {}).get("alerts") or [])
        return sorted(alerts, key=lambda a: (compact(a.get("labels")), str(a.get("activeAt"))))

    # ------------------------------------------------------------- metrics
    def metric_rows(self, start: float, end: float, *, service_namespaces: dict[str, str]) -> collect.MetricRows:
        def fetch(query: str) -> dict[str, Any]:
            data = self._get("prometheus", "/api/v1/query_range",
                             {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": METRIC_STEP_S})
            return (data or {}).get("data") or {}

        return collect.metric_rows_of({f.query: fetch(f.query) for f in METRIC_FAMILIES},
                                      service_namespaces=service_namespaces)

    # ---------------------------------------------------------------- logs
    def log_rows(self, start: float, end: float) -> list[tuple[str, ...]]:
        streams: dict[str, tuple[dict[str, str], list[tuple[int, str]]]] = {}
        for selector in LOG_SELECTORS if self.urls.get("loki") else ():
            data = self._get("loki", "/loki/api/v1/query_range",
                             {"query": selector, "start": str(round(start * 1e9)), "end": str(round(end * 1e9)),
                              "limit": LOG_LIMIT, "direction": "forward"}) or {}
            for stream in (data.get("data") or {}).get("result") or []:
                labels = {str(k): str(v) for k, v in (stream.get("stream") or {}).items()}
                streams.setdefault(compact(labels), (labels, [(int(ts), str(line))
                                                               for ts, line in stream.get("values") or []]))
        return collect.log_rows_of(list(streams.values()), start, end)

    # -------------------------------------------------------------- traces
    def spans(self, start: float, end: float) -> list[Any]:
        """The spans Jaeger returns for every service over [start, end], as the twin's `Span`s."""
        if not self.urls.get("jaeger"):
            return []
        services = (self._get("jaeger", "/api/services") or {}).get("data") or []
        found: dict[tuple[str, str], Any] = {}
        for service in sorted(services):
            data = self._get("jaeger", "/api/traces", {"service": service, "start": round(start * 1e6),
                                                       "end": round(end * 1e6), "limit": TRACE_LIMIT}) or {}
            for trace in data.get("data") or []:
                for span in spans_of_trace(trace):
                    found.setdefault((span.trace_id, span.span_id), span)
        return sorted(found.values(), key=lambda s: (s.start_us, s.trace_id, s.span_id))


def _list(res: Any, namespace: str | None) -> list[dict[str, Any]]:
    """The items of one discovered resource (in `namespace`); [] when the agent may not list them
    there or the server cannot list that kind."""
    try:
        answer = res.get(namespace=namespace).to_dict()
    except Exception:
        return []
    items = list(answer.get("items") or [])
    for item in items:  # a real API server leaves them out of list items
        item.setdefault("kind", res.kind)
        item.setdefault("apiVersion", res.group_version)
    return items


def spans_of_trace(trace: dict[str, Any]) -> list[Any]:
    """One Jaeger trace (its JSON API form) as the twin's `Span`s."""
    from sregym.twin.telemetry.traces import Span

    processes = trace.get("processes") or {}
    out = []
    for raw in trace.get("spans") or []:
        tags = {t["key"]: t.get("value") for t in raw.get("tags") or [] if "key" in t}
        process = processes.get(raw.get("processID")) or {}
        parent = next((r.get("spanID") for r in raw.get("references") or []
                       if r.get("refType") == "CHILD_OF" and r.get("traceID") == raw.get("traceID")), "")
        error = tags.get("error") in (True, "true") or tags.get("otel.status_code") == "ERROR"
        out.append(Span(trace_id=str(raw["traceID"]), span_id=str(raw["spanID"]), parent_span_id=str(parent or ""),
                        service=str(process.get("serviceName") or ""), operation=str(raw.get("operationName") or ""),
                        kind=str(tags.get("span.kind") or "internal"), start_us=int(raw.get("startTime") or 0),
                        duration_us=int(raw.get("duration") or 0), error=bool(error),
                        message=str(tags.get("otel.status_description") or ""), tags=tags,
                        process_tags={t["key"]: t.get("value") for t in process.get("tags") or [] if "key" in t}))
    return out


__all__ = ["RemoteView", "spans_of_trace"]
