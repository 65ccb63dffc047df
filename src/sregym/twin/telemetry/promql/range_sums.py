"""`sum by (labels) (rate(selector[range]))` at one step, in one pass over the selected series.

The alert rules evaluate this shape every interval over every span-metric histogram bucket (over
a thousand series in the Astronomy Shop): the general evaluator builds a window, a result series
and a label set without the name for each of them before the aggregation groups them, which cost
several times the arithmetic. This pass does, for each series in the selector's order, exactly
what those stages do to it — the same window bounds and staleness filtering, the same kernel
(`rate`, `increase`), the same budget charges — and adds its value to its group in the same order,
so the sums are bit-identical; anything outside the shape (several steps, `without`, grouping by
the metric name, a selector that may match several names, other functions) returns None and takes
the general path.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import promql_parser as pp

from sregym.twin.telemetry.promql.nodes import unwrap
from sregym.twin.telemetry.promql.values import Ctx, Labels, Vec, VSeries
from sregym.twin.telemetry.tsdb import is_stale

if TYPE_CHECKING:
    from sregym.twin.telemetry.promql.engine import Engine

FUSED_FUNCTIONS = ("rate", "increase")
ENABLED = True  # False: every aggregation takes the general path (the reference this pass is tested against)
_MISSING = object()  # a grouping label the series does not carry
# A range function's kernel: (times, values, window start, window end, range s, step, extra) -> value.
RangeKernel = Callable[[list[int], list[float], int, int, float, int, list[Any]], "float | None"]


def fused_shape(node: pp.AggregateExpr, ctx: Ctx) -> tuple[list[str], str, pp.MatrixSelector] | None:
    """(grouping labels, function name, matrix selector) when `node` is `sum by (labels)
    (rate|increase(selector[range]))` evaluated at one step, else None (the general path)."""
    if not ENABLED or ctx.n != 1 or str(node.op).lower() != "sum":
        return None
    names: list[str] = []
    if node.modifier is not None:
        if node.modifier.type != pp.AggModifierType.By:
            return None
        names = list(node.modifier.labels)
    if "__name__" in names:
        return None
    call = unwrap(node.expr)
    if not isinstance(call, pp.Call) or call.func.name not in FUSED_FUNCTIONS or len(call.args) != 1:
        return None
    matrix = unwrap(call.args[0])
    if not isinstance(matrix, pp.MatrixSelector):
        return None
    return names, call.func.name, matrix


def sum_by_of_range(engine: Engine, matrix: pp.MatrixSelector, kernel: RangeKernel, names: list[str], ctx: Ctx,
                    range_ms: int, window_cost: int, charge_batch: int) -> Vec:
    """The sums of `kernel` over `matrix`'s windows per group of `names`, as the general path
    (`Engine._windows`, `functions._apply_range`, `aggregations.aggregate`) computes them; the
    window and batch costs are the ones `_windows` charges."""
    engine.budget.check_time()
    vs = matrix.vector_selector
    end = engine.ref_times(vs.at, vs.offset, ctx)[0]
    start = end - range_ms
    range_s = range_ms / 1000
    step = ctx.times[0]
    budget = engine.budget
    presented = engine.presented_values
    left, right = bisect.bisect_left, bisect.bisect_right
    sums: dict[tuple[object, ...], float] = {}
    group_labels: dict[tuple[object, ...], Labels] = {}
    for series in engine.select(vs):
        times = series.timestamps
        lo = left(times, start)
        hi = right(times, end)
        if hi <= lo:
            budget.charge(1)
            continue
        cost = 1 + window_cost + (hi - lo)
        if cost >= charge_batch:
            budget.charge(cost)
            cost = 0
        budget.charge(cost)
        ts, values = times[lo:hi], presented(series)[lo:hi]
        total = sum(values)  # NaN only when the window may hold a staleness marker
        if total != total and any(is_stale(v) for v in values):
            keep = [i for i, v in enumerate(values) if not is_stale(v)]
            ts = [ts[i] for i in keep]
            values = [values[i] for i in keep]
            if not values:
                continue
        value = kernel(ts, values, start, end, range_s, step, [])
        if value is None:
            continue
        labels = series.labels
        group = tuple([labels.get(name, _MISSING) for name in names])
        if group in sums:
            sums[group] += value
        else:
            sums[group] = value
            group_labels[group] = {name: labels[name] for name in names if name in labels}
    return Vec([VSeries(group_labels[group], [total]) for group, total in sums.items()])


__all__ = ["ENABLED", "FUSED_FUNCTIONS", "fused_shape", "sum_by_of_range"]
