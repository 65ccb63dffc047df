"""The container and node logs as Loki streams: label sets (namespace, pod, container, job, node,
app) over time-ordered entries, read lazily; served by the Loki API and exported by snapshots.
Records programs sent over OTLP join them as the streams Loki's OTLP ingestion makes
(`otlp_logs.py`: `service_name`, `k8s_namespace_name`, `k8s_pod_name` ...)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from sregym.twin.node.logs import log_store
from sregym.twin.telemetry import logql
from sregym.twin.telemetry.otlp_logs import otlp_logs
from sregym.twin.telemetry.tsdb import Matcher

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

APP_LABELS = ("app", "app.kubernetes.io/name", "io.kompose.service")


class LogIndex:
    """Turns the LogStore into Loki streams (label set → time-ordered entries)."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self._apps: dict[tuple[str, str], str] = {}
        store = log_store(twin)
        store.listeners.append(self._remember)

    def _remember(self, _cid: str, _line: Any, labels: dict[str, Any]) -> None:
        ns, pod = str(labels.get("namespace", "")), str(labels.get("pod", ""))
        if ns and pod and (ns, pod) not in self._apps:
            self._app(ns, pod)

    def _app(self, namespace: str, pod: str) -> str:
        key = (namespace, pod)
        cached = self._apps.get(key)
        if cached is not None:
            return cached
        obj = self.twin.store.peek("Pod", namespace, pod)
        if obj is None:
            return ""
        pod_labels = obj["metadata"].get("labels") or {}
        app = next((pod_labels[k] for k in APP_LABELS if pod_labels.get(k)), "")
        self._apps[key] = app
        return app

    def streams(self, visible: Callable[[dict[str, str]], bool]) -> list[tuple[dict[str, str], Callable[[],
                                                                                   list[logql.Entry]]]]:
        """(labels, lazy entries) of every stream the user may see, in label order."""
        store = log_store(self.twin)
        grouped: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], list[str]]] = {}
        for cid, raw in store.instances():
            ns, pod, container = (str(raw.get(k, "")) for k in ("namespace", "pod", "container"))
            if not (ns and pod and container):
                continue
            labels = {"namespace": ns, "pod": pod, "container": container, "job": f"{ns}/{container}"}
            if raw.get("node"):
                labels["node"] = str(raw["node"])
            app = self._app(ns, pod)
            if app:
                labels["app"] = app
            key = tuple(sorted(labels.items()))
            grouped.setdefault(key, (labels, []))[1].append(cid)
        out: list[tuple[dict[str, str], Callable[[], list[logql.Entry]]]] = []
        for key in sorted(grouped):
            labels, cids = grouped[key]
            if visible(labels):
                out.append((labels, _container_entries(store, cids)))
        for node, source in store.node_sources():
            labels = {"node": node, "source": source}
            if visible(labels):
                out.append((labels, _node_entries(store, node, source)))
        out.extend(otlp_streams(self.twin, visible))
        out.sort(key=lambda s: tuple(sorted(s[0].items())))
        return out

    def source(self, visible: Callable[[dict[str, str]], bool]) -> logql.Source:
        def select(matchers: list[Matcher]) -> Iterable[tuple[dict[str, str], list[logql.Entry]]]:
            for labels, entries in self.streams(visible):
                if all(m.matches(labels) for m in matchers):
                    yield labels, entries()
        return select


def _container_entries(store: Any, cids: list[str]) -> Callable[[], list[logql.Entry]]:
    def load() -> list[logql.Entry]:
        entries = [(round(line.at * 1e9), line.text) for cid in cids for line in store.lines(cid)]
        if len(cids) > 1:
            entries.sort(key=lambda e: e[0])
        return entries
    return load


def _node_entries(store: Any, node: str, source: str) -> Callable[[], list[logql.Entry]]:
    return lambda: [(round(line.at * 1e9), line.text) for line in store.node_lines(node, source)]


def otlp_streams(twin: Twin, visible: Callable[[dict[str, str]], bool]) -> list[
        tuple[dict[str, str], Callable[[], list[logql.Entry]]]]:
    """The OTLP log backend's streams the user may see (bodies as lines, each carrying its
    structured metadata)."""
    if getattr(twin.services, "otlp_logs", None) is None:
        return []
    out: list[tuple[dict[str, str], Callable[[], list[logql.Entry]]]] = []
    for labels, records in otlp_logs(twin).streams():
        if visible(labels):
            entries = [(round(r.at * 1e9), logql.MetadataLine(r.body, metadata)) for r, metadata in records]
            out.append((labels, lambda entries=entries: entries))
    return out
