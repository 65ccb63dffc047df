"""An in-memory time-series database with Prometheus' data model.

Series are identified by their full label set (including `__name__`); samples are (timestamp in
milliseconds, float value). A scrape that no longer reports a series writes a *staleness marker*
(Prometheus' special NaN bit pattern) so the query engine stops returning it after that point,
exactly as Prometheus does. Everything the PromQL engine, the HTTP API and the scrapers share
goes through this module.
"""

from __future__ import annotations

import bisect
import math
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from sregym.twin.telemetry.regex import compile_anchored

# Prometheus' staleness marker: a NaN with a specific payload, distinguishable from ordinary NaN.
STALE_NAN_BITS = 0x7FF0000000000002
STALE_NAN: float = struct.unpack("<d", struct.pack("<Q", STALE_NAN_BITS))[0]

LabelKey = tuple[tuple[str, str], ...]


def is_stale(value: float) -> bool:
    return math.isnan(value) and struct.unpack("<Q", struct.pack("<d", value))[0] == STALE_NAN_BITS


def label_key(labels: dict[str, str]) -> LabelKey:
    return tuple(sorted((k, v) for k, v in labels.items() if v != ""))


@dataclass
class Series:
    labels: dict[str, str]
    timestamps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    # `label_key(labels)`, kept by the TSDB so `select` does not rebuild it to sort (alert rules
    # select over a thousand span-metric buckets every evaluation).
    key: LabelKey | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.labels.get("__name__", "")

    def append(self, t_ms: int, value: float) -> None:
        """Add a sample; out-of-order samples are dropped, a repeated timestamp overwrites."""
        timestamps = self.timestamps
        if timestamps and t_ms <= timestamps[-1]:
            if t_ms == timestamps[-1]:
                self.values[-1] = value
            return
        timestamps.append(int(t_ms))
        self.values.append(float(value))

    def window(self, start_ms: int, end_ms: int) -> tuple[list[int], list[float]]:
        """Samples with start_ms <= t <= end_ms (staleness markers included)."""
        lo = bisect.bisect_left(self.timestamps, start_ms)
        hi = bisect.bisect_right(self.timestamps, end_ms)
        return self.timestamps[lo:hi], self.values[lo:hi]


@dataclass(frozen=True)
class Matcher:
    name: str
    op: str  # "=", "!=", "=~", "!~"
    value: str

    def matches(self, labels: dict[str, str]) -> bool:
        actual = labels.get(self.name, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        # RE2 (linear time), anchored like Prometheus; a bad pattern raises `RegexError`.
        hit = compile_anchored(self.value).search(actual) is not None
        return hit if self.op == "=~" else not hit


@dataclass(frozen=True)
class MetricMetadata:
    type: str  # counter | gauge | histogram | summary | unknown
    help: str
    unit: str = ""


def _sort_key(series: Series) -> LabelKey:
    return series.key if series.key is not None else label_key(series.labels)


class TSDB:
    """Series storage with a metric-name index. Appends must be in time order per series."""

    def __init__(self) -> None:
        self._series: dict[LabelKey, Series] = {}
        # Each name's series, kept in label order lazily: a name whose list gained a series since it
        # was last sorted is in `_unsorted`, so `select` sorts a list once, not on every query.
        self._by_name: dict[str, list[Series]] = {}
        self._unsorted: set[str] = set()
        self.metadata: dict[str, MetricMetadata] = {}

    def __len__(self) -> int:
        return len(self._series)

    def append(self, labels: dict[str, str], t_ms: int, value: float) -> None:
        self.append_key(label_key(labels), t_ms, value)

    def append_key(self, key: LabelKey, t_ms: int, value: float) -> None:
        """`append` for a caller that already holds the canonical `label_key`."""
        self.series_for(key).append(t_ms, value)

    def series_for(self, key: LabelKey) -> Series:
        """The series with this label key, created if new. Scrapers keep the returned object
        and append to it directly, so a scrape does not re-hash every label set; a series
        removed by `drop_before` must be looked up again."""
        series = self._series.get(key)
        if series is None:
            series = Series(dict(key))
            series.key = label_key(series.labels)
            self._series[key] = series
            self._by_name.setdefault(series.name, []).append(series)
            self._unsorted.add(series.name)
        return series

    def mark_stale(self, labels: dict[str, str], t_ms: int) -> None:
        self.mark_stale_key(label_key(labels), t_ms)

    def mark_stale_key(self, key: LabelKey, t_ms: int) -> None:
        series = self._series.get(key)
        if series is not None and series.values and not is_stale(series.values[-1]):
            self.append_key(key, t_ms, STALE_NAN)

    def set_metadata(self, name: str, metric_type: str, help_text: str, unit: str = "") -> None:
        self.metadata[name] = MetricMetadata(metric_type, help_text, unit)

    def select(self, matchers: Iterable[Matcher]) -> list[Series]:
        """Series whose labels satisfy every matcher, in label order (deterministic)."""
        ms = list(matchers)
        by_name = next((m for m in ms if m.name == "__name__" and m.op == "="), None)
        if by_name is None:
            out = [s for s in self._series.values() if all(m.matches(s.labels) for m in ms)]
            out.sort(key=_sort_key)
            return out
        # Rule evaluation selects by metric name many times a scrape: the name's list is already
        # in label order, so filtering it keeps that order and the name matcher need not run.
        pool = self._sorted_by_name(by_name.value)
        rest = [m for m in ms if m is not by_name]
        if not rest:
            return list(pool)
        if len(rest) == 1 and rest[0].op == "=":  # `x{label="v"}`, a rule's usual shape, inlined
            name, value = rest[0].name, rest[0].value
            return [s for s in pool if s.labels.get(name, "") == value]
        return [s for s in pool if all(m.matches(s.labels) for m in rest)]

    def _sorted_by_name(self, name: str) -> list[Series]:
        pool = self._by_name.get(name)
        if pool is None:
            return []
        if name in self._unsorted:
            pool.sort(key=_sort_key)
            self._unsorted.discard(name)
        return pool

    def all_series(self) -> Iterator[Series]:
        for key in sorted(self._series):
            yield self._series[key]

    def label_names(self, matchers: Iterable[Matcher] = ()) -> list[str]:
        names: set[str] = set()
        ms = list(matchers)
        for s in (self.select(ms) if ms else self._series.values()):
            names.update(s.labels)
        return sorted(names)

    def label_values(self, name: str, matchers: Iterable[Matcher] = ()) -> list[str]:
        ms = list(matchers)
        values = {s.labels[name] for s in (self.select(ms) if ms else self._series.values())
                  if name in s.labels}
        return sorted(values)

    def drop_before(self, t_ms: int) -> None:
        """Retention: forget samples older than t_ms (series with none left are removed)."""
        for key in list(self._series):
            series = self._series[key]
            cut = bisect.bisect_left(series.timestamps, t_ms)
            if cut:
                del series.timestamps[:cut]
                del series.values[:cut]
            if not series.timestamps:
                del self._series[key]
                self._by_name[series.name].remove(series)
