"""Aggregation operators with `by`/`without`, reproducing Prometheus 2.x arithmetic step by step
(incremental mean for avg, Welford for stddev/stdvar, Go's container/heap for topk/bottomk) so
results agree with Prometheus to the last bit, not just approximately.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import promql_parser as pp

from sregym.twin.telemetry.promql import gomath
from sregym.twin.telemetry.promql.errors import PromQLError
from sregym.twin.telemetry.promql.result import format_value
from sregym.twin.telemetry.promql.values import Ctx, Labels, Scal, Str, Vec, VSeries, key_of

if TYPE_CHECKING:
    from sregym.twin.telemetry.promql.engine import Engine

LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def group_labels(labels: Labels, by: bool, names: list[str]) -> Labels:
    if by:
        return {k: labels[k] for k in names if k in labels}
    skip = set(names) | {"__name__"}
    return {k: v for k, v in labels.items() if k not in skip}


def aggregate(engine: Engine, node: pp.AggregateExpr, ctx: Ctx) -> Vec:
    op = str(node.op).lower()
    by = True
    names: list[str] = []
    if node.modifier is not None:
        by = node.modifier.type == pp.AggModifierType.By
        names = list(node.modifier.labels)
    param_vals: list[float] | None = None
    label_param = ""
    if op in ("topk", "bottomk", "quantile"):
        param = engine.eval(node.param, ctx)
        if not isinstance(param, Scal):
            raise PromQLError("execution", f"expected scalar parameter for {op}")
        param_vals = param.vals
    elif op == "count_values":
        param = engine.eval(node.param, ctx)
        assert isinstance(param, Str)
        label_param = param.value
        if not LABEL_NAME.match(label_param):
            raise PromQLError("execution", f'invalid label name "{label_param}"')
    inner = engine.eval(node.expr, ctx)
    if not isinstance(inner, Vec):
        raise PromQLError("execution", "expected instant vector in aggregation")
    if op == "count_values":
        return _count_values(inner, by, names, label_param, ctx)

    keys = []
    glabels: dict[tuple[tuple[str, str], ...], Labels] = {}
    for s in inner.series:
        gl = group_labels(s.labels, by, names)
        k = key_of(gl)
        keys.append(k)
        glabels.setdefault(k, gl)

    out_series: dict[tuple[tuple[str, str], ...], list[float | None]] = {}
    out_labels: dict[tuple[tuple[str, str], ...], Labels] = {}
    order: list[tuple[tuple[str, str], ...]] = []

    def emit(k: tuple[tuple[str, str], ...], labels: Labels, step: int, value: float) -> None:
        vals = out_series.get(k)
        if vals is None:
            vals = [None] * ctx.n
            out_series[k] = vals
            out_labels[k] = labels
            order.append(k)
        vals[step] = value

    for i in range(ctx.n):
        groups: dict[tuple[tuple[str, str], ...], list[int]] = {}
        for idx, s in enumerate(inner.series):
            if s.vals[i] is not None:
                groups.setdefault(keys[idx], []).append(idx)
        for k, members in groups.items():
            values = [inner.series[m].vals[i] for m in members]
            if op in ("topk", "bottomk"):
                assert param_vals is not None
                kk = gomath.to_int64(param_vals[i])
                if kk < 1:
                    continue
                chosen = _select_k(values, kk, top=op == "topk")  # type: ignore[arg-type]
                for c in chosen:
                    s = inner.series[members[c]]
                    emit(key_of(s.labels), s.labels, i, values[c])  # type: ignore[arg-type]
                continue
            value = _reduce(op, values, param_vals[i] if param_vals else 0.0)  # type: ignore[arg-type]
            emit(k, glabels[k], i, value)
    return Vec([VSeries(out_labels[k], out_series[k]) for k in order])


def _reduce(op: str, values: list[float], param: float) -> float:
    first = values[0]
    if op == "sum":
        total = first
        for v in values[1:]:
            total += v
        return total
    if op == "avg":
        mean = first
        count = 1
        for v in values[1:]:
            count += 1
            if math.isinf(mean):
                if math.isinf(v) and (mean > 0) == (v > 0):
                    continue
                if not math.isinf(v) and not math.isnan(v):
                    continue
            mean += v / count - mean / count
        return mean
    if op == "count":
        return float(len(values))
    if op == "group":
        return 1.0
    if op == "max":
        best = first
        for v in values[1:]:
            if best < v or math.isnan(best):
                best = v
        return best
    if op == "min":
        best = first
        for v in values[1:]:
            if best > v or math.isnan(best):
                best = v
        return best
    if op in ("stddev", "stdvar"):
        mean = first
        acc = 0.0
        count = 1
        for v in values[1:]:
            count += 1
            delta = v - mean
            mean += delta / count
            acc += delta * (v - mean)
        var = acc / count
        return gomath.sqrt(var) if op == "stddev" else var
    if op == "quantile":
        return quantile(param, values)
    raise PromQLError("execution", f"unknown aggregation {op}")


def quantile(q: float, values: list[float]) -> float:
    if not values:
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = sorted(values, key=lambda v: (not math.isnan(v), v if not math.isnan(v) else 0.0))
    n = float(len(ordered))
    rank = q * (n - 1)
    lower = max(0.0, math.floor(rank))
    upper = min(n - 1, lower + 1)
    weight = rank - math.floor(rank)
    return ordered[int(lower)] * (1 - weight) + ordered[int(upper)] * weight


def _select_k(values: list[float], k: int, top: bool) -> list[int]:
    """Indices kept by topk/bottomk, using Go's heap algorithm so ties resolve as in Prometheus."""

    def less(a: int, b: int) -> bool:
        va, vb = values[a], values[b]
        if math.isnan(va):
            return True
        return va < vb if top else va > vb

    heap: list[int] = []

    def up(j: int) -> None:
        while j > 0:
            parent = (j - 1) // 2
            if parent == j or not less(heap[j], heap[parent]):
                break
            heap[parent], heap[j] = heap[j], heap[parent]
            j = parent

    def down(i0: int, n: int) -> None:
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n or j1 < 0:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and less(heap[j2], heap[j1]):
                j = j2
            if not less(heap[j], heap[i]):
                break
            heap[i], heap[j] = heap[j], heap[i]
            i = j

    for idx, v in enumerate(values):
        if len(heap) < k:
            heap.append(idx)
            up(len(heap) - 1)
            continue
        top_v = values[heap[0]]
        better = top_v < v if top else top_v > v
        if better or (math.isnan(top_v) and not math.isnan(v)):
            heap[0] = idx
            down(0, len(heap))
    # Output order: best first (Prometheus sorts the heap in reverse).
    return sorted(heap, key=lambda j: (math.isnan(values[j]), -values[j] if top else values[j]))


def _count_values(inner: Vec, by: bool, names: list[str], label: str, ctx: Ctx) -> Vec:
    if by:
        names = [*names, label]
    else:
        names = [n for n in names if n != label]
    out: dict[tuple[tuple[str, str], ...], list[float | None]] = {}
    labels_of: dict[tuple[tuple[str, str], ...], Labels] = {}
    order: list[tuple[tuple[str, str], ...]] = []
    for i in range(ctx.n):
        for s in inner.series:
            v = s.vals[i]
            if v is None:
                continue
            with_value = dict(s.labels)
            with_value[label] = format_value(v)
            gl = group_labels(with_value, by, names)
            if not by:
                gl[label] = with_value[label]
            k = key_of(gl)
            vals = out.get(k)
            if vals is None:
                vals = [None] * ctx.n
                out[k] = vals
                labels_of[k] = gl
                order.append(k)
            vals[i] = (vals[i] or 0.0) + 1.0
    return Vec([VSeries(labels_of[k], out[k]) for k in order])
