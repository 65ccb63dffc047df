"""Evaluation of a parsed PromQL expression over the TSDB, with Prometheus 2.x semantics.

Every node is evaluated over all steps of the query at once (an instant query is a range query
with a single step), exactly as Prometheus' evaluator does, so instant and range queries share
one code path and agree by construction.
"""

from __future__ import annotations

import bisect
from datetime import UTC, datetime, timedelta
from typing import Any

import promql_parser as pp

from sregym.twin.telemetry.promql import binops
from sregym.twin.telemetry.promql.aggregations import aggregate
from sregym.twin.telemetry.promql.budget import Budget, too_many_samples
from sregym.twin.telemetry.promql.clock_valued import is_clock_valued
from sregym.twin.telemetry.promql.errors import PromQLError
from sregym.twin.telemetry.promql.functions import FUNCTIONS, call_function, selects_one_name
from sregym.twin.telemetry.promql.nodes import unwrap
from sregym.twin.telemetry.promql.parse import parse, regex_failure
from sregym.twin.telemetry.promql.range_sums import fused_shape, sum_by_of_range
from sregym.twin.telemetry.promql.result import Result, Sample, SeriesPoints
from sregym.twin.telemetry.promql.values import (
    Ctx,
    Labels,
    MSeries,
    Scal,
    Str,
    Vec,
    VSeries,
    Windows,
    check_duplicates,
    key_of,
    without_name,
)
from sregym.twin.telemetry.regex import RegexError
from sregym.twin.telemetry.tsdb import TSDB, Matcher, Series, is_stale

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MATCH_OPS = {"Equal": "=", "NotEqual": "!=", "Re": "=~", "NotRe": "!~"}
MAX_POINTS_PER_SERIES = 11_000
# Budget accounting (see `budget`): a non-empty window costs about as much memory as this many
# samples; charges are made in batches, never after more than a batch has been allocated.
WINDOW_COST = 10
_CHARGE_BATCH = 4096
_EMPTY_WINDOW: tuple[Any, Any] = ((), ())


def td_ms(td: timedelta | None) -> int:
    if td is None:
        return 0
    return td.days * 86_400_000 + td.seconds * 1000 + td.microseconds // 1000



class Engine:
    """PromQL over a TSDB. `lookback_ms` is Prometheus' --query.lookback-delta (5 m default);
    `subquery_step_ms` is the step of `x[5m:]` (the global evaluation interval, 1 m default).
    `max_samples` and `timeout_s` bound every query (see `budget`); None means unbounded.
    `present_offset_s` is the served API's wall anchor offset for this request (`api/wall_time.py`):
    `time()`, `timestamp()`, the date functions, `@ <unix>` and the values of clock-valued families
    (`clock_valued`) are on the client's clock, while query times stay simulated. In-process
    callers leave it 0 and see stored time."""

    def __init__(self, tsdb: TSDB, lookback_ms: int = 300_000, subquery_step_ms: int = 60_000,
                 *, max_samples: int | None = None, timeout_s: float | None = None,
                 present_offset_s: int = 0) -> None:
        self.tsdb = tsdb
        self.lookback_ms = lookback_ms
        self.subquery_step_ms = subquery_step_ms
        self.max_samples = max_samples
        self.timeout_s = timeout_s
        self.budget = Budget()
        self.present_ms = int(present_offset_s) * 1000

    def _start(self) -> None:
        self.budget = Budget(self.max_samples, self.timeout_s)

    # ---- public API -------------------------------------------------------------------------

    def instant(self, query: str, t_ms: int, *, parsed: pp.Expr | None = None) -> Result:
        """`query` at `t_ms`; `parsed` is `parse(query)` when the caller already holds it (rule
        evaluation runs the same expressions every interval)."""
        self._start()
        expr = parse(query) if parsed is None else parsed
        try:
            return self._instant(expr, int(t_ms))
        except RegexError as exc:  # a pattern the parser library accepted but Go's regexp refuses
            raise regex_failure(query, exc) from None

    def _instant(self, expr: pp.Expr, t_ms: int) -> Result:
        ctx = Ctx([t_ms], t_ms, t_ms)
        node = unwrap(expr)
        if isinstance(node, pp.MatrixSelector | pp.SubqueryExpr):
            windows = self.eval_range_arg(node, ctx)
            out = [SeriesPoints(labels, list(zip(ts, vs, strict=True)))
                   for labels, ((ts, vs),) in windows.series if ts]
            return Result("matrix", out)
        value = self.eval(expr, ctx)
        if isinstance(value, Scal):
            return Result("scalar", Sample({}, t_ms, value.vals[0]))
        if isinstance(value, Str):
            return Result("string", (t_ms, value.value))
        samples = [Sample(s.labels, t_ms, s.vals[0]) for s in value.series if s.vals[0] is not None]
        return Result("vector", samples)

    def range(self, query: str, start_ms: int, end_ms: int, step_ms: int) -> Result:
        self._start()
        start_ms, end_ms, step_ms = int(start_ms), int(end_ms), int(step_ms)
        if end_ms < start_ms:
            raise PromQLError("bad_data", "end timestamp must not be before start time")
        if step_ms <= 0:
            raise PromQLError("bad_data",
                              "zero or negative query resolution step widths are not accepted. "
                              "Try a positive integer")
        if (end_ms - start_ms) // step_ms > MAX_POINTS_PER_SERIES:
            raise PromQLError("bad_data", "exceeded maximum resolution of 11,000 points per timeseries. "
                                          "Try decreasing the query resolution (?step=XX)")
        expr = parse(query)
        node = unwrap(expr)
        if isinstance(node, pp.MatrixSelector | pp.SubqueryExpr):
            raise PromQLError("bad_data", 'invalid expression type "range vector" for range query, '
                                          "must be Scalar or instant Vector")
        if isinstance(node, pp.StringLiteral):
            raise PromQLError("bad_data", 'invalid expression type "string" for range query, '
                                          "must be Scalar or instant Vector")
        times = list(range(start_ms, end_ms + 1, step_ms))
        ctx = Ctx(times, start_ms, end_ms)
        try:
            value = self.eval(expr, ctx)
        except RegexError as exc:
            raise regex_failure(query, exc) from None
        if isinstance(value, Scal):
            return Result("matrix", [SeriesPoints({}, list(zip(times, value.vals, strict=True)))])
        assert isinstance(value, Vec)
        out = []
        for s in value.series:
            points = [(t, v) for t, v in zip(times, s.vals, strict=True) if v is not None]
            if points:
                out.append(SeriesPoints(s.labels, points))
        out.sort(key=lambda sp: key_of(sp.labels))
        return Result("matrix", out)

    # ---- evaluation -------------------------------------------------------------------------

    def eval(self, node: pp.Expr, ctx: Ctx) -> Vec | Scal | Str:
        self.budget.check_time()
        if isinstance(node, pp.ParenExpr):
            return self.eval(node.expr, ctx)
        if isinstance(node, pp.NumberLiteral):
            return Scal([node.val] * ctx.n)
        if isinstance(node, pp.StringLiteral):
            return Str(node.val)
        if isinstance(node, pp.VectorSelector):
            return self.eval_vector_selector(node, ctx)
        if isinstance(node, pp.UnaryExpr):
            return self.eval_negation(node, ctx)
        if isinstance(node, pp.BinaryExpr):
            return binops.evaluate(self, node, ctx)
        if isinstance(node, pp.AggregateExpr):
            shape = fused_shape(node, ctx)
            if shape is not None and selects_one_name(shape[2]):  # else the rates' duplicate check applies
                names, function, matrix = shape
                return sum_by_of_range(self, matrix, FUNCTIONS[function].kernel, names, ctx, td_ms(matrix.range),
                                       WINDOW_COST, _CHARGE_BATCH)
            return aggregate(self, node, ctx)
        if isinstance(node, pp.Call):
            return call_function(self, node, ctx)
        if isinstance(node, pp.MatrixSelector | pp.SubqueryExpr):
            raise PromQLError("execution", "unexpected range vector where an instant vector is expected")
        raise PromQLError("execution", f"unhandled expression of type {type(node).__name__}")

    def eval_negation(self, node: pp.UnaryExpr, ctx: Ctx) -> Vec | Scal:
        value = self.eval(node.expr, ctx)
        if isinstance(value, Scal):
            return Scal([-v for v in value.vals])
        assert isinstance(value, Vec)
        out = Vec([VSeries(without_name(s.labels), [None if v is None else -v for v in s.vals])
                   for s in value.series])
        check_duplicates(out, ctx)
        return out

    # ---- selectors --------------------------------------------------------------------------

    def at_ms(self, at: pp.AtModifier | None, ctx: Ctx) -> int | None:
        if at is None:
            return None
        kind = at.type
        if kind == pp.AtModifierType.Start:
            return ctx.query_start
        if kind == pp.AtModifierType.End:
            return ctx.query_end
        assert at.at is not None
        moment = at.at if at.at.tzinfo else at.at.replace(tzinfo=UTC)
        return td_ms(moment - _EPOCH) - self.present_ms  # the client's instant, in simulated time

    def select(self, vs: pp.VectorSelector) -> list[Series]:
        matchers = [Matcher(m.name, _MATCH_OPS[str(m.op).rsplit(".", 1)[-1]], m.value) for m in vs.matchers.matchers]
        if vs.name and not any(m.name == "__name__" for m in matchers):
            matchers.insert(0, Matcher("__name__", "=", vs.name))
        return self.tsdb.select(matchers)

    def presented_values(self, series: Series) -> list[float]:
        """The series' values as the client's Prometheus would hold them: a clock-valued family
        moved by the presentation offset (stale markers kept bit for bit)."""
        values = series.values
        if not self.present_ms or not is_clock_valued(series.labels.get("__name__")):
            return values
        shift = self.present_ms / 1000
        return [v if is_stale(v) else v + shift for v in values]

    def ref_times(self, at: pp.AtModifier | None, offset: timedelta | None, ctx: Ctx) -> list[int]:
        off = td_ms(offset)
        at_t = self.at_ms(at, ctx)
        if at_t is not None:
            return [at_t - off] * ctx.n
        return [t - off for t in ctx.times]

    def eval_vector_selector(self, vs: pp.VectorSelector, ctx: Ctx) -> Vec:
        refs = self.ref_times(vs.at, vs.offset, ctx)
        lookback = self.lookback_ms
        out: list[VSeries] = []
        budget = self.budget
        for series in self.select(vs):
            budget.charge(len(refs))
            ts, values = series.timestamps, self.presented_values(series)
            vals: list[float | None] = []
            found = False
            for ref in refs:
                i = bisect.bisect_right(ts, ref) - 1
                if i >= 0 and ts[i] >= ref - lookback and not is_stale(values[i]):
                    vals.append(values[i])
                    found = True
                else:
                    vals.append(None)
            if found:
                out.append(VSeries(series.labels, vals))
        return Vec(out)

    def sample_timestamps(self, vs: pp.VectorSelector, ctx: Ctx) -> Vec:
        """timestamp(selector): the time of the sample each step picked, not the step time."""
        refs = self.ref_times(vs.at, vs.offset, ctx)
        out: list[VSeries] = []
        for series in self.select(vs):
            self.budget.charge(len(refs))
            ts, values = series.timestamps, series.values
            vals: list[float | None] = []
            for ref in refs:
                i = bisect.bisect_right(ts, ref) - 1
                ok = i >= 0 and ts[i] >= ref - self.lookback_ms and not is_stale(values[i])
                vals.append((ts[i] + self.present_ms) / 1000 if ok else None)
            if any(v is not None for v in vals):
                out.append(VSeries(without_name(series.labels), vals))
        return Vec(out)

    # ---- range vectors ----------------------------------------------------------------------

    def eval_range_arg(self, node: pp.Expr, ctx: Ctx) -> Windows:
        node = unwrap(node)
        if isinstance(node, pp.MatrixSelector):
            vs = node.vector_selector
            range_ms = td_ms(node.range)
            refs = self.ref_times(vs.at, vs.offset, ctx)
            raw = [MSeries(s.labels, s.timestamps, self.presented_values(s)) for s in self.select(vs)]
            return self._windows(raw, refs, range_ms, drop_stale=True)
        if isinstance(node, pp.SubqueryExpr):
            return self.eval_subquery(node, ctx)
        raise PromQLError("execution", "expected a range vector")

    def _windows(self, raw: list[MSeries], refs: list[int], range_ms: int, drop_stale: bool) -> Windows:
        starts = [r - range_ms for r in refs]
        series: list[tuple[Labels, list[tuple[list[int], list[float]]]]] = []
        budget = self.budget
        for s in raw:
            per_step: list[tuple[Any, Any]] = []
            times, vals = s.times, s.vals
            cost = 0
            for start, end in zip(starts, refs, strict=True):
                lo = bisect.bisect_left(times, start)
                hi = bisect.bisect_right(times, end)
                # A slot per step, and for a non-empty window its samples and the window itself,
                # charged before the slices exist.
                cost += 1 if hi <= lo else 1 + WINDOW_COST + (hi - lo)
                if cost >= _CHARGE_BATCH:
                    budget.charge(cost)
                    cost = 0
                if hi <= lo:
                    per_step.append(_EMPTY_WINDOW)  # shared: a sparse series costs a pointer a step
                    continue
                ts, vs = times[lo:hi], vals[lo:hi]
                # Only a NaN can be a staleness marker, and a window holding one sums to NaN (a
                # sum also NaN for +inf and -inf is only a false alarm: is_stale decides). The sum
                # runs in C; the common window holds no NaN, and is_stale unpacks bits.
                total = sum(vs) if drop_stale else 0.0
                if total != total and any(is_stale(v) for v in vs):
                    keep = [i for i, v in enumerate(vs) if not is_stale(v)]
                    ts = [ts[i] for i in keep]
                    vs = [vs[i] for i in keep]
                per_step.append((ts, vs))
            budget.charge(cost)
            series.append((s.labels, per_step))
        return Windows(series, starts, list(refs), range_ms)

    def eval_subquery(self, node: pp.SubqueryExpr, ctx: Ctx) -> Windows:
        range_ms = td_ms(node.range)
        step = td_ms(node.step) if node.step is not None else self.subquery_step_ms
        if step <= 0:
            step = self.subquery_step_ms
        refs = self.ref_times(node.at, node.offset, ctx)
        first = min(refs) - range_ms
        inner_start = (first // step) * step
        if inner_start < first:
            inner_start += step
        # Every inner step holds at least a sample per selected series: refuse a grid that alone
        # exceeds the budget (`x[1y:1s]`) before allocating it.
        inner_steps = max(0, (max(refs) - inner_start) // step + 1)
        if not self.budget.allows(2 * inner_steps):  # the grid, and a value per step to come
            raise too_many_samples()
        self.budget.check_time()
        inner_times = list(range(inner_start, max(refs) + 1, step))
        inner_ctx = Ctx(inner_times, ctx.query_start, ctx.query_end)
        value = self.eval(node.expr, inner_ctx)
        raw: list[MSeries] = []
        if isinstance(value, Scal):
            raw.append(MSeries({}, inner_times, value.vals))
        elif isinstance(value, Vec):
            for s in value.series:
                ts = [t for t, v in zip(inner_times, s.vals, strict=True) if v is not None]
                vs = [v for v in s.vals if v is not None]
                raw.append(MSeries(s.labels, ts, vs))
        else:
            raise PromQLError("bad_data", "subquery is only allowed on instant vector")
        return self._windows(raw, refs, range_ms, drop_stale=False)


