"""Who sees which telemetry: the twin's Prometheus, Loki and Jaeger APIs and the snapshot export.

The real services have no notion of users; the twin puts the kubeconfig's bearer tokens in front
of them so that the agent (or anyone without a token) sees what an on-call engineer would see in a
cluster where the benchmark machinery is not part of the system: nothing from the `sregym-system`
and `chaos-mesh` namespaces, and nothing from the load generator or the chaos daemons. The admin
token sees everything.

The filter is applied where data is *selected* (a `FilteredTSDB` handed to the PromQL engine, a
predicate for log streams and spans), never on query results, so an aggregation such as
`count(up)` cannot leak the hidden series' existence.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sregym.twin.telemetry.traces import Span
from sregym.twin.telemetry.tsdb import TSDB, Matcher, Series
from sregym.twin.topology import HIDDEN_NAMESPACES

ADMIN = "admin"
AGENT = "agent"

# Scrape jobs / services of the benchmark machinery (load generator, Chaos Mesh daemons).
HIDDEN_JOBS: frozenset[str] = frozenset({
    "sregym-loadgen", "sregym-load-generator", "loadgen", "load-generator", "locust",
    "chaos-daemon", "chaos-controller-manager", "chaos-dashboard", "chaos-mesh",
})
# Label names that may carry a namespace or a job/service identity.
_NAMESPACE_LABELS = ("namespace", "exported_namespace", "k8s_namespace_name", "service_namespace")
_JOB_LABELS = ("job", "service_name", "service", "exported_job")


def hidden_job(value: str) -> bool:
    """A job/service name of the machinery, including Loki-style `<namespace>/<container>` jobs."""
    if not value:
        return False
    if value in HIDDEN_JOBS:
        return True
    head = value.split("/", 1)[0]
    return head in HIDDEN_NAMESPACES or (head != value and value.split("/", 1)[1] in HIDDEN_JOBS)


def labels_visible(labels: Mapping[str, Any]) -> bool:
    """Whether the agent may see a series/stream/span carrying these labels."""
    for name in _NAMESPACE_LABELS:
        if labels.get(name) in HIDDEN_NAMESPACES:
            return False
    for name in _JOB_LABELS:
        value = labels.get(name)
        if isinstance(value, str) and hidden_job(value):
            return False
    return True


class FilteredTSDB:
    """A read-only view of a TSDB without the series the agent must not see.

    It offers the TSDB's read interface (select, all_series, label_names, label_values,
    metadata), so the PromQL engine can be built on it unchanged."""

    def __init__(self, tsdb: TSDB) -> None:
        self._tsdb = tsdb

    @property
    def metadata(self) -> dict[str, Any]:
        return self._tsdb.metadata

    def __len__(self) -> int:
        return sum(1 for _ in self.all_series())

    def select(self, matchers: Iterable[Matcher]) -> list[Series]:
        return [s for s in self._tsdb.select(matchers) if labels_visible(s.labels)]

    def all_series(self) -> Iterator[Series]:
        return (s for s in self._tsdb.all_series() if labels_visible(s.labels))

    def label_names(self, matchers: Iterable[Matcher] = ()) -> list[str]:
        ms = list(matchers)
        names: set[str] = set()
        for s in (self.select(ms) if ms else self.all_series()):
            names.update(s.labels)
        return sorted(names)

    def label_values(self, name: str, matchers: Iterable[Matcher] = ()) -> list[str]:
        ms = list(matchers)
        pool = self.select(ms) if ms else self.all_series()
        return sorted({s.labels[name] for s in pool if name in s.labels})


def tsdb_for(tsdb: TSDB, user: str) -> TSDB | FilteredTSDB:
    return tsdb if user == ADMIN else FilteredTSDB(tsdb)


def span_visible(span: Span) -> bool:
    if hidden_job(span.service):
        return False
    labels = {"namespace": str(span.process_tags.get("k8s.namespace.name") or span.process_tags.get("namespace")
                               or span.tags.get("k8s.namespace.name") or "")}
    return labels_visible(labels)


__all__ = ["ADMIN", "AGENT", "HIDDEN_JOBS", "FilteredTSDB", "hidden_job", "labels_visible", "span_visible",
           "tsdb_for"]
