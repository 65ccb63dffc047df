"""What every part of the LogQL engine shares: the error, the shapes of labels, entries and log
sources, and the names of range and vector aggregations."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sregym.twin.telemetry.tsdb import Matcher

Labels = dict[str, str]
Entry = tuple[int, str]
Source = Callable[[list[Matcher]], Iterable[tuple[Labels, list[Entry]]]]

NS_PER_MS = 1_000_000
RANGE_FUNCS = ("count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time")
VECTOR_AGGS = ("sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk")


class LogQLError(Exception):
    """A query Loki would reject; `str()` is Loki's error text."""
