"""What exporters hand the scraper: metric families, scrape targets, series refs and batches of
samples, and the node facts several exporters label with. Below the scraper and every exporter,
so the scraper can import its exporters without them importing it back."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sregym.twin.telemetry.tsdb import LabelKey, Series

# Where the monitoring stack lives (kube-prometheus-stack installed as release
# "kube-prometheus-stack" into namespace "monitoring").
MONITORING_NAMESPACE = "monitoring"
RELEASE = "kube-prometheus-stack"
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True)
class Family:
    """HELP/TYPE of one metric family as the exporter exposes it."""

    name: str
    type: str  # counter | gauge | histogram | summary | unknown
    help: str


@dataclass
class Target:
    """One scrape target: its identity and the labels Prometheus attaches to its series."""

    job: str
    instance: str
    labels: dict[str, str]  # every target label, including job and instance
    honor_labels: bool = True
    up: bool = True
    pushed: bool = False  # received over OTLP: no scrape, so no `up`/`scrape_*` series

    @property
    def id(self) -> tuple[str, str, str]:
        return self.job, self.instance, self.labels.get("metrics_path", "")


class SeriesRef:
    """A collector's handle on one series: its label key plus the TSDB series it resolved to,
    so steady-state scrapes append without hashing label sets again."""

    __slots__ = ("gen", "key", "series")

    def __init__(self, key: LabelKey) -> None:
        self.key = key
        self.series: Series | None = None
        self.gen = -1


class Batch:
    """The samples of one target's scrape, as (series ref, value)."""

    __slots__ = ("_items", "samples", "target")

    def __init__(self, target: Target) -> None:
        self.target = target
        self.samples: list[tuple[SeriesRef, float]] = []
        self._items = tuple(target.labels.items())

    def key(self, name: str, labels: dict[str, str] | None = None) -> LabelKey:
        """The stored label set of a sample, after the target labels are attached."""
        merged = dict(self._items)
        if labels:
            if self.target.honor_labels:
                for k, v in labels.items():
                    if v != "":
                        merged[k] = v
            else:
                for k, v in labels.items():
                    if v != "":
                        merged["exported_" + k if k in self.target.labels else k] = v
                merged.update(self._items)
        merged["__name__"] = name
        return tuple(sorted(merged.items()))

    def ref(self, name: str, labels: dict[str, str] | None = None) -> SeriesRef:
        """A reusable handle for a series of this target (cache it per entity)."""
        return SeriesRef(self.key(name, labels))

    def add(self, name: str, labels: dict[str, str] | None, value: float) -> None:
        self.samples.append((SeriesRef(self.key(name, labels)), float(value)))

    def add_ref(self, ref: SeriesRef, value: float) -> None:
        self.samples.append((ref, float(value)))


class RefTable:
    """Series refs of one collector, kept across scrapes and keyed by (target labels, metric,
    labels). Exporters that rebuild their samples every scrape (node exporter, kube-state-metrics)
    otherwise sort and hash each label set and look its series up again, for every sample of
    every scrape. Owned by a collector (refs point into one twin's TSDB); cleared when it grows
    past `limit`, which costs a re-resolve and changes no sample."""

    __slots__ = ("_by_target", "limit", "size")

    def __init__(self, limit: int = 200_000) -> None:
        self._by_target: dict[tuple[bool, tuple[tuple[str, str], ...]], dict[Any, SeriesRef]] = {}
        self.limit = limit
        self.size = 0

    def refs_for(self, batch: Batch) -> dict[Any, SeriesRef]:
        ident = (batch.target.honor_labels, batch._items)
        refs = self._by_target.get(ident)
        if refs is None:
            if self.size >= self.limit:
                self._by_target.clear()
                self.size = 0
            refs = self._by_target[ident] = {}
        return refs

    def ref(self, batch: Batch, refs: dict[Any, SeriesRef], name: str,
            labels: dict[str, str] | None) -> SeriesRef:
        """The cached ref of `name{labels}` in `batch`'s target (`refs` from `refs_for(batch)`)."""
        ident = (name, tuple(labels.items())) if labels else name
        ref = refs.get(ident)
        if ref is None:
            ref = refs[ident] = batch.ref(name, labels)
            self.size += 1
        return ref

    def adder(self, batch: Batch) -> Callable[[str, dict[str, str] | None, float], None]:
        """A drop-in for `batch.add` that reuses this table's refs."""
        refs, append, ref = self.refs_for(batch), batch.samples.append, self.ref

        def add(name: str, labels: dict[str, str] | None, value: float) -> None:
            append((ref(batch, refs, name, labels), float(value)))

        return add


class Collector(Protocol):
    families: tuple[Family, ...]

    def collect(self, now: float) -> list[Batch]: ...


def stable_suffix(seed: str, length: int = 5) -> str:
    """A Kubernetes-looking name suffix derived from `seed` (stable across runs, no RNG draw)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:length])


def node_internal_ip(node: dict[str, Any]) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address", ""))
    return ""


def node_condition(node: dict[str, Any], kind: str) -> str:
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return str(cond.get("status", "Unknown"))
    return "Unknown"


def node_reachable(node: dict[str, Any]) -> bool:
    """Prometheus can scrape a node's endpoints unless its kubelet stopped reporting (Ready
    Unknown: the node is gone or partitioned)."""
    return node_condition(node, "Ready") != "Unknown"
