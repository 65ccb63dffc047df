"""What every part of the LogQL engine shares: the error, the shapes of labels, entries and log
sources, and the names of range and vector aggregations."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sregym.twin.telemetry.tsdb import Matcher

Labels = dict[str, str]
Entry = tuple[int, str]


class MetadataLine(str):
    """A log line that carries Loki 3 structured metadata (what OTLP ingestion keeps beside the
    line: trace_id, span_id, severity_text, the record's attributes ...). A `str`, so every stage
    that reads lines reads it unchanged; the pipeline adds `metadata` to the entry's labels, where
    label filters (`| trace_id="..."`) see them and the response shows them, as Loki does."""

    metadata: dict[str, str]

    def __new__(cls, text: str, metadata: dict[str, str]) -> MetadataLine:
        line = super().__new__(cls, text)
        line.metadata = metadata
        return line


def line_metadata(line: str) -> dict[str, str]:
    """The structured metadata of an entry's line ({} for a plain line)."""
    return getattr(line, "metadata", None) or {}
Source = Callable[[list[Matcher]], Iterable[tuple[Labels, list[Entry]]]]

NS_PER_MS = 1_000_000
RANGE_FUNCS = ("count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time")
VECTOR_AGGS = ("sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk")


class LogQLError(Exception):
    """A query Loki would reject; `str()` is Loki's error text."""
