"""Metric queries: range aggregations over the streams, vector aggregations and arithmetic, at
every step of a range."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from typing import Any

from sregym.twin.telemetry.logql.base import Labels, LogQLError, Source
from sregym.twin.telemetry.logql.pipeline import run_pipeline
from sregym.twin.telemetry.logql.streams import QueryStats, key_of
from sregym.twin.telemetry.logql.syntax import BinOp, Number, RangeAgg, VectorAgg

Vector = dict[tuple[tuple[str, str], ...], tuple[Labels, float]]


class _MetricEval:
    def __init__(self, source: Source, stats: QueryStats) -> None:
        self.source = source
        self.stats = stats
        self._cache: dict[int, list[tuple[Labels, list[int], list[int]]]] = {}

    def series_for(self, agg: RangeAgg, lo_ns: int, hi_ns: int) -> list[tuple[Labels, list[int], list[int]]]:
        """Per output label set: sorted timestamps and line sizes of the pipeline's lines."""
        cached = self._cache.get(id(agg))
        if cached is not None:
            return cached
        grouped: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[int, int]]]] = {}
        for stream, entries in self.source(agg.log.matchers):
            times = [ts for ts, _ in entries]
            window = entries[bisect.bisect_right(times, lo_ns):bisect.bisect_right(times, hi_ns)]
            self.stats.lines += len(window)
            self.stats.bytes += sum(len(line) for _ts, line in window)
            for labels, ts, line in run_pipeline(agg.log.stages, stream, window):
                grouped.setdefault(key_of(labels), (labels, []))[1].append((ts, len(line.encode())))
        out = []
        for key in sorted(grouped):
            labels, points = grouped[key]
            points.sort()
            out.append((labels, [p[0] for p in points], [p[1] for p in points]))
        self._cache[id(agg)] = out
        return out

    def at(self, expr: Any, t_ns: int, span: tuple[int, int]) -> Vector | float:
        if isinstance(expr, Number):
            return expr.value
        if isinstance(expr, RangeAgg):
            return self.range_at(expr, t_ns, span)
        if isinstance(expr, VectorAgg):
            return self.vector_agg(expr, t_ns, span)
        if isinstance(expr, BinOp):
            return self.binop(expr, t_ns, span)
        raise LogQLError("parse error : syntax error: unexpected log query in a metric expression")

    def range_at(self, agg: RangeAgg, t_ns: int, span: tuple[int, int]) -> Vector:
        series = self.series_for(agg, span[0] - agg.range_ns - agg.offset_ns, span[1] - agg.offset_ns)
        end = t_ns - agg.offset_ns
        start = end - agg.range_ns
        out: Vector = {}
        seconds = agg.range_ns / 1e9
        for labels, times, sizes in series:
            lo = bisect.bisect_right(times, start)
            hi = bisect.bisect_right(times, end)
            if hi <= lo:
                continue
            if "__error__" in labels:
                raise LogQLError(f"pipeline error: '{labels['__error__']}' for series: '{_fmt_labels(labels)}'.\n"
                                 "Use a label filter to intentionally skip this error. (e.g | __error__!=\""
                                 f"{labels['__error__']}\").\nTo skip all potential errors you can match "
                                 "empty errors.(e.g __error__=\"\")\nThe label filter can also be specified "
                                 "after unwrap. (e.g | unwrap latency | __error__=\"\" )\n")
            count = hi - lo
            if agg.func == "count_over_time":
                value = float(count)
            elif agg.func == "rate":
                value = count / seconds
            elif agg.func == "bytes_over_time":
                value = float(sum(sizes[lo:hi]))
            elif agg.func == "bytes_rate":
                value = sum(sizes[lo:hi]) / seconds
            else:
                continue
            out[key_of(labels)] = (labels, value)
        if agg.func == "absent_over_time":
            if any(bisect.bisect_right(t, end) > bisect.bisect_right(t, start) for _l, t, _s in series):
                return {}
            labels = {m.name: m.value for m in agg.log.matchers if m.op == "="}
            return {key_of(labels): (labels, 1.0)}
        return out

    def vector_agg(self, agg: VectorAgg, t_ns: int, span: tuple[int, int]) -> Vector:
        inner = self.at(agg.inner, t_ns, span)
        if isinstance(inner, float):
            raise LogQLError("parse error : unexpected scalar in a vector aggregation")
        groups: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[Labels, float]]]] = {}
        for labels, value in inner.values():
            if agg.by is not None:
                glabels = {k: v for k, v in labels.items() if k in agg.by}
            elif agg.without is not None:
                glabels = {k: v for k, v in labels.items() if k not in agg.without}
            else:
                glabels = {}
            groups.setdefault(key_of(glabels), (glabels, []))[1].append((labels, value))
        out: Vector = {}
        for key in sorted(groups):
            glabels, members = groups[key]
            values = [v for _l, v in members]
            if agg.op in ("topk", "bottomk"):
                k = int(agg.param or 0)
                ranked = sorted(members, key=lambda m: (-m[1] if agg.op == "topk" else m[1], key_of(m[0])))
                for labels, value in ranked[:max(k, 0)]:
                    out[key_of(labels)] = (labels, value)
                continue
            if agg.op == "sum":
                value = math.fsum(values)
            elif agg.op == "avg":
                value = math.fsum(values) / len(values)
            elif agg.op == "min":
                value = min(values)
            elif agg.op == "max":
                value = max(values)
            elif agg.op == "count":
                value = float(len(values))
            else:
                mean = math.fsum(values) / len(values)
                var = math.fsum((v - mean) ** 2 for v in values) / len(values)
                value = var if agg.op == "stdvar" else math.sqrt(var)
            out[key] = (glabels, value)
        return out

    def binop(self, expr: BinOp, t_ns: int, span: tuple[int, int]) -> Vector | float:
        left = self.at(expr.left, t_ns, span)
        right = self.at(expr.right, t_ns, span)

        def apply(a: float, b: float) -> float:
            try:
                if expr.op == "+":
                    return a + b
                if expr.op == "-":
                    return a - b
                if expr.op == "*":
                    return a * b
                if expr.op == "/":
                    return a / b if b else (math.nan if a == 0 else math.copysign(math.inf, a))
                if expr.op == "%":
                    return math.fmod(a, b) if b else math.nan
                return a ** b
            except (OverflowError, ZeroDivisionError, ValueError):
                return math.nan

        if isinstance(left, float) and isinstance(right, float):
            return apply(left, right)
        if isinstance(left, float):
            assert not isinstance(right, float)
            return {k: (lb, apply(left, v)) for k, (lb, v) in right.items()}
        if isinstance(right, float):
            return {k: (lb, apply(v, right)) for k, (lb, v) in left.items()}
        out: Vector = {}
        for key, (labels, value) in left.items():
            if key in right:
                out[key] = (labels, apply(value, right[key][1]))
        return out


def _fmt_labels(labels: Labels) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def eval_metric(expr: Any, source: Source, start_ns: int, end_ns: int, step_ns: int,
                stats: QueryStats | None = None, *, check: Callable[[], None] | None = None,
                ) -> list[tuple[Labels, list[tuple[int, float]]]] | float:
    """A metric query at every step from start to end (inclusive): per label set its points.
    A pure number expression returns the number. `check` is called at every step (the caller's
    time budget raises from it)."""
    if step_ns <= 0:
        raise LogQLError("zero or negative query resolution step widths are not accepted. Try a positive "
                         "integer")
    ev = _MetricEval(source, stats if stats is not None else QueryStats())
    series: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[int, float]]]] = {}
    t = start_ns
    scalar: float | None = None
    while t <= end_ns:
        if check is not None:
            check()
        value = ev.at(expr, t, (start_ns, end_ns))
        if isinstance(value, float):
            scalar = value
        else:
            for key, (labels, v) in value.items():
                series.setdefault(key, (labels, []))[1].append((t, v))
        t += step_ns
    if scalar is not None and not series:
        return scalar
    return [series[k] for k in sorted(series)]
