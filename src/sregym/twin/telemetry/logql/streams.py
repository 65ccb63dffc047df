"""Log queries: the selected streams' entries in a window through the pipeline, newest or oldest
first up to a limit, with the lines and bytes scanned counted for the caller's budget."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from sregym.twin.telemetry.logql.base import Entry, Labels, Source
from sregym.twin.telemetry.logql.pipeline import run_pipeline
from sregym.twin.telemetry.logql.syntax import LogExpr


def key_of(labels: Labels) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


@dataclass
class QueryStats:
    lines: int = 0
    bytes: int = 0
    returned: int = 0


def select_logs(expr: LogExpr, source: Source, start_ns: int, end_ns: int, *, limit: int = 100,
                direction: str = "backward", stats: QueryStats | None = None) \
        -> list[tuple[Labels, list[Entry]]]:
    """A log query: streams (labels after the pipeline) with entries in [start, end), at most
    `limit` entries in total (the newest for backward, the oldest for forward)."""
    stats = stats if stats is not None else QueryStats()
    candidates: list[tuple[int, int, tuple[tuple[str, str], ...], Labels, str]] = []
    order = 0
    for stream, entries in source(expr.matchers):
        times = [ts for ts, _ in entries]
        lo = bisect.bisect_left(times, start_ns)
        hi = bisect.bisect_left(times, end_ns)
        window = entries[lo:hi]
        stats.lines += len(window)
        stats.bytes += sum(len(line) for _ts, line in window)
        for labels, ts, line in run_pipeline(expr.stages, stream, window):
            candidates.append((ts, order, key_of(labels), labels, line))
            order += 1
    backward = direction == "backward"
    candidates.sort(key=lambda c: (-c[0], -c[1]) if backward else (c[0], c[1]))
    picked = candidates[:limit] if limit > 0 else candidates
    streams: dict[tuple[tuple[str, str], ...], tuple[Labels, list[Entry]]] = {}
    for ts, _order, key, labels, line in picked:
        streams.setdefault(key, (labels, []))[1].append((ts, line))
    stats.returned = len(picked)
    return [streams[k] for k in sorted(streams)]
