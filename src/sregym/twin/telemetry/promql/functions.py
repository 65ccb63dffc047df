"""PromQL functions with Prometheus 2.x semantics: which drop the metric name, how rate-style
functions extrapolate to the window edges, how histogram buckets are interpolated.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import promql_parser as pp

from sregym.twin.telemetry.promql import gomath
from sregym.twin.telemetry.promql.aggregations import LABEL_NAME, quantile
from sregym.twin.telemetry.promql.errors import PromQLError
from sregym.twin.telemetry.promql.nodes import unwrap
from sregym.twin.telemetry.promql.values import (
    Ctx,
    Labels,
    Scal,
    Str,
    Vec,
    VSeries,
    Windows,
    check_duplicates,
    without_name,
)
from sregym.twin.telemetry.regex import RegexError, compile_anchored

if TYPE_CHECKING:
    from sregym.twin.telemetry.promql.engine import Engine

NAN = math.nan


# ---- range-vector functions: (times, values, window start, window end, range seconds, step time,
#      extra scalar args) -> value or None ----------------------------------------------------

def _extrapolated(ts: list[int], vs: list[float], start: int, end: int, range_s: float,
                  counter: bool, is_rate: bool) -> float | None:
    if len(vs) < 2:
        return None
    result = vs[-1] - vs[0]
    if counter:
        last = 0.0
        for v in vs:
            if v < last:
                result += last
            last = v
    to_start = (ts[0] - start) / 1000
    to_end = (end - ts[-1]) / 1000
    sampled = (ts[-1] - ts[0]) / 1000
    avg = sampled / (len(vs) - 1)
    if counter and result > 0 and vs[0] >= 0:
        to_zero = sampled * (vs[0] / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = avg * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else avg / 2
    interval += to_end if to_end < threshold else avg / 2
    factor = interval / sampled
    if is_rate:
        factor /= range_s
    return result * factor


def _instant_value(ts: list[int], vs: list[float], is_rate: bool) -> float | None:
    if len(vs) < 2:
        return None
    last, prev = vs[-1], vs[-2]
    result = last if is_rate and last < prev else last - prev
    interval = ts[-1] - ts[-2]
    if interval == 0:
        return None
    if is_rate:
        result /= interval / 1000
    return result


def _linear_regression(ts: list[int], vs: list[float], intercept_time: int) -> tuple[float, float]:
    n = 0.0
    sx = cx = sy = cy = sxy = cxy = sx2 = cx2 = 0.0
    init = vs[0]
    const = True
    for i, (t, v) in enumerate(zip(ts, vs, strict=True)):
        if const and i > 0 and v != init:
            const = False
        n += 1.0
        x = (t - intercept_time) / 1e3
        sx, cx = gomath.kahan_inc(x, sx, cx)
        sy, cy = gomath.kahan_inc(v, sy, cy)
        sxy, cxy = gomath.kahan_inc(x * v, sxy, cxy)
        sx2, cx2 = gomath.kahan_inc(x * x, sx2, cx2)
    if const:
        if math.isinf(init):
            return NAN, NAN
        return 0.0, init
    sx += cx
    sy += cy
    sxy += cxy
    sx2 += cx2
    cov = sxy - sx * sy / n
    var = sx2 - sx * sx / n
    slope = gomath.div(cov, var)
    intercept = sy / n - slope * sx / n
    return slope, intercept


def _avg(vs: list[float]) -> float:
    mean = c = count = 0.0
    for v in vs:
        count += 1
        if math.isinf(mean):
            if math.isinf(v) and (mean > 0) == (v > 0):
                continue
            if not math.isinf(v) and not math.isnan(v):
                continue
        mean, c = gomath.kahan_inc(v / count - mean / count, mean, c)
    if math.isinf(mean):
        return mean
    return mean + c


def _sum(vs: list[float]) -> float:
    total = c = 0.0
    for v in vs:
        total, c = gomath.kahan_inc(v, total, c)
    if math.isinf(total):
        return total
    return total + c


def _variance(vs: list[float]) -> float:
    count = mean = cmean = aux = caux = 0.0
    for v in vs:
        count += 1
        delta = v - (mean + cmean)
        mean, cmean = gomath.kahan_inc(delta / count, mean, cmean)
        aux, caux = gomath.kahan_inc(delta * (v - (mean + cmean)), aux, caux)
    return (aux + caux) / count


def _max(vs: list[float]) -> float:
    best = vs[0]
    for v in vs:
        if v > best or math.isnan(best):
            best = v
    return best


def _min(vs: list[float]) -> float:
    best = vs[0]
    for v in vs:
        if v < best or math.isnan(best):
            best = v
    return best


def _changes(vs: list[float]) -> float:
    count = 0
    prev = vs[0]
    for cur in vs[1:]:
        if cur != prev and not (math.isnan(cur) and math.isnan(prev)):
            count += 1
        prev = cur
    return float(count)


def _resets(vs: list[float]) -> float:
    count = 0
    prev = vs[0]
    for cur in vs[1:]:
        if cur < prev:
            count += 1
        prev = cur
    return float(count)


RangeFn = Callable[[list[int], list[float], int, int, float, int, list[float]], float | None]


def _predict(ts: list[int], vs: list[float], t: int, duration: float) -> float:
    slope, intercept = _linear_regression(ts, vs, t)
    return slope * duration + intercept


# ---- instant-vector functions -------------------------------------------------------------

def _round(v: float, to: float) -> float:
    inverse = gomath.div(1.0, to)
    return gomath.div(gomath.floor(v * inverse + 0.5), inverse)


def _sgn(v: float) -> float:
    if v < 0:
        return -1.0
    if v > 0:
        return 1.0
    return v


def _utc(v: float) -> datetime:
    return datetime.fromtimestamp(gomath.to_int64(v), tz=UTC)


def _map_vec(vec: Vec, fn: Callable[[float, int], float], ctx: Ctx) -> Vec:
    """Apply fn to every sample; like every such Prometheus function, drop the metric name."""
    out = []
    for s in vec.series:
        vals = [None if v is None else fn(v, i) for i, v in enumerate(s.vals)]
        out.append(VSeries(without_name(s.labels), vals))
    result = Vec(out)
    check_duplicates(result, ctx)
    return result


def call_function(engine: Engine, node: pp.Call, ctx: Ctx) -> Vec | Scal:
    name = node.func.name
    fn = FUNCTIONS.get(name)
    if fn is None or fn.call is None:
        raise PromQLError("bad_data", f"function {name!r} is not supported by this engine")
    return fn.call(engine, fn, list(node.args), ctx)


# ---- how each kind of function is evaluated: (engine, its row, argument nodes, ctx) -------------

def _range_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    matrix_index = fn.arg_types.index(MATRIX)
    scalars = [_scalar_arg(engine, a, ctx) for i, a in enumerate(args) if i != matrix_index]
    windows = engine.eval_range_arg(args[matrix_index], ctx)
    out = _apply_range(fn, windows, scalars, ctx)
    if not selects_one_name(args[matrix_index]):
        check_duplicates(out, ctx)
    return out


def selects_one_name(node: pp.Expr) -> bool:
    """Whether a range argument selects stored series of one metric name (`x{...}[5m]`). Stored
    series differ in their label sets, so dropping the one name they share leaves them distinct
    and the duplicate check (a frozenset per series, thousands for a histogram's buckets in
    every rule evaluation) cannot find anything."""
    node = unwrap(node)
    if not isinstance(node, pp.MatrixSelector):
        return False
    vs = node.vector_selector
    names = [m for m in vs.matchers.matchers if m.name == "__name__"]
    if not names:
        return bool(vs.name)
    return any(m.op == pp.MatchOp.Equal for m in names)


def _absent_over_time_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    windows = engine.eval_range_arg(args[0], ctx)
    return _absent_over_time(windows, args[0], ctx)


def _time_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Scal:
    return Scal([(t + engine.present_ms) / 1000 for t in ctx.times])


def _vector_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    sc = _scalar_arg(engine, args[0], ctx)
    return Vec([VSeries({}, list(sc))])


def _scalar_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Scal:
    vec = _vector_arg(engine, args[0], ctx)
    vals = []
    for i in range(ctx.n):
        present = [s.vals[i] for s in vec.series if s.vals[i] is not None]
        vals.append(present[0] if len(present) == 1 else NAN)
    return Scal(vals)  # type: ignore[arg-type]


def _timestamp_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    arg = unwrap(args[0])
    if isinstance(arg, pp.VectorSelector):
        return engine.sample_timestamps(arg, ctx)
    vec = _vector_arg(engine, arg, ctx)
    return _map_vec(vec, lambda v, i: (ctx.times[i] + engine.present_ms) / 1000, ctx)


def _date_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    date_fn = fn.kernel
    if not args:
        return Vec([VSeries({}, [date_fn(_utc((t + engine.present_ms) / 1000)) for t in ctx.times])])
    vec = _vector_arg(engine, args[0], ctx)
    return _map_vec(vec, lambda v, i: NAN if math.isnan(v) or math.isinf(v) else date_fn(_utc(v)), ctx)


def _simple_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    fn1 = fn.kernel
    return _map_vec(_vector_arg(engine, args[0], ctx), lambda v, i: fn1(v), ctx)


def _round_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    vec = _vector_arg(engine, args[0], ctx)
    to = _scalar_arg(engine, args[1], ctx) if len(args) > 1 else [1.0] * ctx.n
    return _map_vec(vec, lambda v, i: _round(v, to[i]), ctx)


def _clamp_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    return _clamp(engine, fn.name, args, ctx)


def _sort_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    vec = _vector_arg(engine, args[0], ctx)
    if ctx.n == 1:
        desc = fn.name == "sort_desc"
        vec = Vec(sorted(vec.series, key=lambda s: _sort_key(s.vals[0], desc)))
    return vec


def _label_replace_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    out = _label_replace(engine, args, ctx)
    check_duplicates(out, ctx)
    return out


def _label_join_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    out = _label_join(engine, args, ctx)
    check_duplicates(out, ctx)
    return out


def _absent_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    vec = _vector_arg(engine, args[0], ctx)
    labels = absent_labels(args[0])
    vals = [None if any(s.vals[i] is not None for s in vec.series) else 1.0 for i in range(ctx.n)]
    if all(v is None for v in vals):
        return Vec([])
    return Vec([VSeries(labels, vals)])  # type: ignore[arg-type]


def _histogram_quantile_call(engine: Engine, fn: Function, args: list[pp.Expr], ctx: Ctx) -> Vec:
    q = _scalar_arg(engine, args[0], ctx)
    vec = _vector_arg(engine, args[1], ctx)
    out = _histogram_quantile(q, vec, ctx)
    check_duplicates(out, ctx)
    return out


def _sort_key(v: float | None, desc: bool) -> tuple[int, float]:
    assert v is not None
    if math.isnan(v):
        return (1, 0.0) if desc else (0, 0.0)
    return (0, -v) if desc else (1, v)


def _scalar_arg(engine: Engine, node: pp.Expr, ctx: Ctx) -> list[float]:
    value = engine.eval(node, ctx)
    if not isinstance(value, Scal):
        raise PromQLError("execution", "expected scalar argument")
    return value.vals


def _vector_arg(engine: Engine, node: pp.Expr, ctx: Ctx) -> Vec:
    value = engine.eval(node, ctx)
    if not isinstance(value, Vec):
        raise PromQLError("execution", "expected instant vector argument")
    return value


def _string_arg(engine: Engine, node: pp.Expr, ctx: Ctx) -> str:
    value = engine.eval(node, ctx)
    if not isinstance(value, Str):
        raise PromQLError("execution", "expected string argument")
    return value.value


def _apply_range(function: Function, windows: Windows, scalars: list[list[float]], ctx: Ctx) -> Vec:
    fn: RangeFn = function.kernel
    range_s = windows.range_ms / 1000
    keep_name = function.name == "last_over_time"
    out: list[VSeries] = []
    for labels, per_step in windows.series:
        vals: list[float | None] = []
        found = False
        for i, (ts, vs) in enumerate(per_step):
            if not vs:
                vals.append(None)
                continue
            extra = [sc[i] for sc in scalars]
            v = fn(ts, vs, windows.starts[i], windows.ends[i], range_s, ctx.times[i], extra)
            vals.append(v)
            found = found or v is not None
        if found:
            out.append(VSeries(labels if keep_name else without_name(labels), vals))
    return Vec(out)


def absent_labels(node: pp.Expr) -> Labels:
    node = unwrap(node)
    if isinstance(node, pp.MatrixSelector):
        node = node.vector_selector
    if not isinstance(node, pp.VectorSelector):
        return {}
    labels: Labels = {}
    drop: list[str] = []
    for m in node.matchers.matchers:
        if m.name == "__name__":
            continue
        if m.op == pp.MatchOp.Equal and m.name not in labels:
            labels[m.name] = m.value
        else:
            drop.append(m.name)
    for name in drop:
        labels.pop(name, None)
    return {k: v for k, v in labels.items() if v != ""}


def _absent_over_time(windows: Windows, arg: pp.Expr, ctx: Ctx) -> Vec:
    vals: list[float | None] = []
    for i in range(ctx.n):
        present = any(per_step[i][1] for _, per_step in windows.series)
        vals.append(None if present else 1.0)
    if all(v is None for v in vals):
        return Vec([])
    return Vec([VSeries(absent_labels(arg), vals)])


def _clamp(engine: Engine, name: str, args: list[pp.Expr], ctx: Ctx) -> Vec:
    vec = _vector_arg(engine, args[0], ctx)
    if name == "clamp":
        lo, hi = _scalar_arg(engine, args[1], ctx), _scalar_arg(engine, args[2], ctx)
        out = []
        for s in vec.series:
            vals = [None if v is None or hi[i] < lo[i] else gomath.gmax(lo[i], gomath.gmin(hi[i], v))
                    for i, v in enumerate(s.vals)]
            if any(v is not None for v in vals):
                out.append(VSeries(without_name(s.labels), vals))
        return Vec(out)
    bound = _scalar_arg(engine, args[1], ctx)
    pick = gomath.gmax if name == "clamp_min" else gomath.gmin
    return _map_vec(vec, lambda v, i: pick(bound[i], v), ctx)


def go_expand(template: str, match: Any) -> str:
    """Go's regexp.Expand: $1, ${1}, $name, ${name}, $$; unknown groups expand to nothing."""
    out: list[str] = []
    i = 0
    n = len(template)
    while i < n:
        ch = template[i]
        if ch != "$" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = template[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
            continue
        if nxt == "{":
            close = template.find("}", i + 2)
            name = template[i + 2:close] if close != -1 else ""
            if close == -1 or not name or not re.fullmatch(r"\w+", name):
                out.append(ch)
                i += 1
                continue
            i = close + 1
        else:
            m = re.match(r"\w+", template[i + 1:])
            if not m:
                out.append(ch)
                i += 1
                continue
            name = m.group(0)
            i += 1 + len(name)
        try:
            group = match.group(int(name)) if name.isdigit() else match.group(name)
        except IndexError:
            group = None
        out.append(group or "")
    return "".join(out)


def _compile_go_regex(pattern: str) -> Any:
    return compile_anchored(pattern)


def _label_replace(engine: Engine, args: list[pp.Expr], ctx: Ctx) -> Vec:
    vec = _vector_arg(engine, args[0], ctx)
    dst = _string_arg(engine, args[1], ctx)
    repl = _string_arg(engine, args[2], ctx)
    src = _string_arg(engine, args[3], ctx)
    pattern = _string_arg(engine, args[4], ctx)
    try:
        regex = _compile_go_regex(pattern)
    except RegexError:
        raise PromQLError("execution", f"invalid regular expression in label_replace(): {pattern}") from None
    if not LABEL_NAME.match(dst):
        raise PromQLError("execution", f"invalid destination label name in label_replace(): {dst}")
    out = []
    for s in vec.series:
        m = regex.match(s.labels.get(src, ""))
        labels = s.labels
        if m is not None:
            res = go_expand(repl, m)
            labels = {k: v for k, v in s.labels.items() if k != dst}
            if res:
                labels[dst] = res
        out.append(VSeries(labels, s.vals))
    return Vec(out)


def _label_join(engine: Engine, args: list[pp.Expr], ctx: Ctx) -> Vec:
    vec = _vector_arg(engine, args[0], ctx)
    dst = _string_arg(engine, args[1], ctx)
    sep = _string_arg(engine, args[2], ctx)
    srcs = [_string_arg(engine, a, ctx) for a in args[3:]]
    if not LABEL_NAME.match(dst):
        raise PromQLError("execution", f"invalid destination label name in label_join(): {dst}")
    out = []
    for s in vec.series:
        joined = sep.join(s.labels.get(k, "") for k in srcs)
        labels = {k: v for k, v in s.labels.items() if k != dst}
        if joined:
            labels[dst] = joined
        out.append(VSeries(labels, s.vals))
    return Vec(out)


def _parse_le(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    if math.isnan(q):
        return NAN
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    buckets = sorted(buckets, key=lambda b: b[0])
    if not math.isinf(buckets[-1][0]) or buckets[-1][0] < 0:
        return NAN
    merged: list[list[float]] = []
    for ub, count in buckets:
        if merged and merged[-1][0] == ub:
            merged[-1][1] += count
        else:
            merged.append([ub, count])
    top = -math.inf
    for b in merged:
        if b[1] > top:
            top = b[1]
        elif b[1] < top:
            b[1] = top
    if len(merged) < 2:
        return NAN
    observations = merged[-1][1]
    if observations == 0:
        return NAN
    rank = q * observations
    b = len(merged) - 1
    for idx in range(len(merged) - 1):
        if merged[idx][1] >= rank:
            b = idx
            break
    if b == len(merged) - 1:
        return merged[-2][0]
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start = 0.0
    end = merged[b][0]
    count = merged[b][1]
    if b > 0:
        start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    return start + (end - start) * (rank / count)


def _histogram_quantile(q: list[float], vec: Vec, ctx: Ctx) -> Vec:
    groups: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[float, VSeries]]]] = {}
    order: list[tuple[tuple[str, str], ...]] = []
    for s in vec.series:
        le = _parse_le(s.labels.get("le", ""))
        if le is None:
            continue
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        if key not in groups:
            groups[key] = ({k: v for k, v in s.labels.items() if k not in ("le", "__name__")}, [])
            order.append(key)
        groups[key][1].append((le, s))
    out = []
    for key in order:
        labels, members = groups[key]
        vals: list[float | None] = []
        for i in range(ctx.n):
            buckets = [(le, s.vals[i]) for le, s in members if s.vals[i] is not None]
            vals.append(bucket_quantile(q[i], buckets) if buckets else None)  # type: ignore[arg-type]
        if any(v is not None for v in vals):
            out.append(VSeries(labels, vals))
    return Vec(out)


# ---- the function table --------------------------------------------------------------------

VECTOR, MATRIX, SCALAR, STRING = "vector", "matrix", "scalar", "string"
Call = Callable[["Engine", "Function", list[pp.Expr], Ctx], "Vec | Scal"]


@dataclass(frozen=True)
class Function:
    """One PromQL function: its signature as Prometheus' parser declares it (`parser/functions.go`),
    which `diagnose` checks calls against for Prometheus' error messages, and how this engine
    evaluates it. One row serves both, so the two can never disagree about a function.

    `variadic` is Prometheus' `Variadic`: 0 for exactly `arg_types`, n > 0 for up to n optional
    trailing arguments (typed as the last one), -1 for unbounded. `call` is None for a function
    Prometheus knows and this engine does not evaluate (the query fails with "not supported");
    `kernel` is the per-sample function a shared `call` applies (a range, simple or date function).
    """

    name: str
    arg_types: tuple[str, ...]
    return_type: str
    variadic: int = 0
    call: Call | None = None
    kernel: Any = None


def _range(name: str, kernel: RangeFn, arg_types: tuple[str, ...] = (MATRIX,)) -> Function:
    return Function(name, arg_types, VECTOR, call=_range_call, kernel=kernel)


def _simple(name: str, kernel: Callable[[float], float] | None = None) -> Function:
    return Function(name, (VECTOR,), VECTOR, call=_simple_call if kernel else None, kernel=kernel)


def _date(name: str, kernel: Callable[[datetime], float]) -> Function:
    return Function(name, (VECTOR,), VECTOR, variadic=1, call=_date_call, kernel=kernel)


_ROWS: tuple[Function, ...] = (
    # Range-vector functions: (times, values, window start, window end, range seconds, step time,
    # extra scalar args) -> value or None.
    _range("rate", lambda ts, vs, s, e, r, t, a: _extrapolated(ts, vs, s, e, r, True, True)),
    _range("increase", lambda ts, vs, s, e, r, t, a: _extrapolated(ts, vs, s, e, r, True, False)),
    _range("delta", lambda ts, vs, s, e, r, t, a: _extrapolated(ts, vs, s, e, r, False, False)),
    _range("irate", lambda ts, vs, s, e, r, t, a: _instant_value(ts, vs, True)),
    _range("idelta", lambda ts, vs, s, e, r, t, a: _instant_value(ts, vs, False)),
    _range("deriv", lambda ts, vs, s, e, r, t, a: None if len(vs) < 2 else _linear_regression(ts, vs, ts[0])[0]),
    _range("predict_linear", lambda ts, vs, s, e, r, t, a: None if len(vs) < 2 else _predict(ts, vs, t, a[0]),
           (MATRIX, SCALAR)),
    _range("avg_over_time", lambda ts, vs, s, e, r, t, a: _avg(vs)),
    _range("sum_over_time", lambda ts, vs, s, e, r, t, a: _sum(vs)),
    _range("count_over_time", lambda ts, vs, s, e, r, t, a: float(len(vs))),
    _range("min_over_time", lambda ts, vs, s, e, r, t, a: _min(vs)),
    _range("max_over_time", lambda ts, vs, s, e, r, t, a: _max(vs)),
    _range("last_over_time", lambda ts, vs, s, e, r, t, a: vs[-1]),
    _range("present_over_time", lambda ts, vs, s, e, r, t, a: 1.0),
    _range("quantile_over_time", lambda ts, vs, s, e, r, t, a: quantile(a[0], vs), (SCALAR, MATRIX)),
    _range("stddev_over_time", lambda ts, vs, s, e, r, t, a: gomath.sqrt(_variance(vs))),
    _range("stdvar_over_time", lambda ts, vs, s, e, r, t, a: _variance(vs)),
    _range("changes", lambda ts, vs, s, e, r, t, a: _changes(vs)),
    _range("resets", lambda ts, vs, s, e, r, t, a: _resets(vs)),
    Function("absent_over_time", (MATRIX,), VECTOR, call=_absent_over_time_call),
    Function("holt_winters", (MATRIX, SCALAR, SCALAR), VECTOR),
    # Instant-vector functions applied sample by sample.
    _simple("abs", abs),
    _simple("ceil", gomath.ceil),
    _simple("floor", gomath.floor),
    _simple("exp", gomath.exp),
    _simple("sqrt", gomath.sqrt),
    _simple("ln", gomath.ln),
    _simple("log2", gomath.log2),
    _simple("log10", gomath.log10),
    _simple("sgn", _sgn),
    *(_simple(name) for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "deg",
                                 "rad", "sin", "sinh", "tan", "tanh", "histogram_count", "histogram_sum")),
    # Date functions: of the sample values, or of the evaluation time without an argument.
    _date("day_of_month", lambda d: float(d.day)),
    _date("day_of_week", lambda d: float((d.weekday() + 1) % 7)),
    _date("day_of_year", lambda d: float(d.timetuple().tm_yday)),
    _date("days_in_month", lambda d: float(calendar.monthrange(d.year, d.month)[1])),
    _date("hour", lambda d: float(d.hour)),
    _date("minute", lambda d: float(d.minute)),
    _date("month", lambda d: float(d.month)),
    _date("year", lambda d: float(d.year)),
    # The rest, one call each.
    Function("absent", (VECTOR,), VECTOR, call=_absent_call),
    Function("sort", (VECTOR,), VECTOR, call=_sort_call),
    Function("sort_desc", (VECTOR,), VECTOR, call=_sort_call),
    Function("timestamp", (VECTOR,), VECTOR, call=_timestamp_call),
    Function("clamp", (VECTOR, SCALAR, SCALAR), VECTOR, call=_clamp_call),
    Function("clamp_max", (VECTOR, SCALAR), VECTOR, call=_clamp_call),
    Function("clamp_min", (VECTOR, SCALAR), VECTOR, call=_clamp_call),
    Function("histogram_quantile", (SCALAR, VECTOR), VECTOR, call=_histogram_quantile_call),
    Function("histogram_fraction", (SCALAR, SCALAR, VECTOR), VECTOR),
    Function("label_replace", (VECTOR, STRING, STRING, STRING, STRING), VECTOR, call=_label_replace_call),
    Function("label_join", (VECTOR, STRING, STRING, STRING), VECTOR, variadic=-1, call=_label_join_call),
    Function("pi", (), SCALAR),
    Function("round", (VECTOR, SCALAR), VECTOR, variadic=1, call=_round_call),
    Function("scalar", (VECTOR,), SCALAR, call=_scalar_call),
    Function("time", (), SCALAR, call=_time_call),
    Function("vector", (SCALAR,), VECTOR, call=_vector_call),
)

# Every PromQL function by name: the evaluator dispatches on it, `diagnose` checks calls against it.
FUNCTIONS: dict[str, Function] = {fn.name: fn for fn in _ROWS}
