"""The Loki HTTP API of the twin (`/loki/api/v1/...`) over the kubelet's LogStore.

Streams are built the way a promtail/Alloy Kubernetes pipeline labels them: pod logs carry
`namespace`, `pod`, `container`, `node`, `app` (the pod's `app`, `app.kubernetes.io/name` or
`io.kompose.service` label) and `job` = `<namespace>/<container>`; node logs carry `node` and
`source` (`kernel`, `kubelet`, ...). All restarts of one container share a stream, as they share
a label set in Loki.

Responses follow Loki 3: `{"status": "success", "data": {"resultType": "streams"|"matrix"|
"vector", "result": [...], "stats": {...}}}` with nanosecond string timestamps for log lines.
Errors are plain text with HTTP 400, as Loki writes them (`parse error at line 1, col 7: ...`).
The agent view (agent token or none) leaves out the hidden namespaces and machinery jobs.
Queries evaluate on worker threads behind the query gate (`query_gate`) with Loki's limits: max
entries, max query length (721h), max series (500), 11,000 points, and a timeout answered with
Loki's 504.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from sregym.twin.api import loki_status
from sregym.twin.api.body import BodyTooLarge, read_body
from sregym.twin.api.prom_access import user_from_headers
from sregym.twin.api.prom_params import FormData
from sregym.twin.api.query_gate import gate_for
from sregym.twin.telemetry import logql
from sregym.twin.telemetry.logindex import LogIndex
from sregym.twin.telemetry.promql.result import format_value
from sregym.twin.telemetry.tsdb import Matcher
from sregym.twin.telemetry.visibility import ADMIN, labels_visible

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

log = logging.getLogger("sregym.twin.api.loki")

DEFAULT_LIMIT = 100
MAX_LIMIT = 5000
DEFAULT_SINCE_NS = 3600 * 10**9
LABELS_SINCE_NS = 6 * 3600 * 10**9
MAX_POINTS = 11_000
# Loki's stock limits: max_query_length (30d1h), max_query_series, and a query timeout (the twin's
# is shorter than Loki's 1m: its evaluator is Python).
MAX_QUERY_LENGTH_NS = 721 * 3600 * 10**9
MAX_QUERY_SERIES = 500
QUERY_TIMEOUT_S = 20.0
MAX_BODY_BYTES = 10 << 20
DEADLINE_EXCEEDED = ("request timed out, decrease the duration of the request or add more label "
                     "matchers (prefer exact match over regex match) to reduce the amount of data "
                     "processed")


class LokiError(Exception):
    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# ------------------------------------------------------------------ params
def parse_time_ns(value: str | None, default: int, name: str) -> int:
    """Loki's parseTimestamp: float seconds if it has a dot, an integer (seconds when <= 10
    digits, else nanoseconds), or RFC 3339."""
    if value is None or value == "":
        return default
    text = value.strip()
    if "." in text:
        try:
            seconds = float(text)
            if math.isfinite(seconds):
                return round(seconds * 1e9)
        except ValueError:
            pass
    if re.fullmatch(r"-?\d+", text):
        number = int(text)
        if abs(number) >= 2**63:
            raise LokiError(f"could not parse '{name}' parameter: strconv.ParseInt: parsing "
                            f"\"{text}\": value out of range")
        return number * 10**9 if len(text.lstrip("-")) <= 10 else number
    from sregym.twin.telemetry.promtime import ParamError, parse_time_ms

    if "T" in text:
        try:
            return parse_time_ms(text) * 1_000_000
        except ParamError:
            pass
    raise LokiError(f"could not parse '{name}' parameter: strconv.ParseInt: parsing \"{text}\": invalid syntax")


def parse_step_ns(value: str | None, default_ns: int) -> int:
    if not value:
        return default_ns
    text = value.strip()
    try:
        seconds = float(text)
        if not math.isfinite(seconds):
            raise ValueError
        return round(seconds * 1e9)
    except ValueError:
        pass
    if re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+", text):
        return logql.parse_duration_ns(text)
    raise LokiError(f'invalid query, cannot parse step: time: invalid duration "{text}"')


def default_step_ns(start_ns: int, end_ns: int) -> int:
    return max(math.floor((end_ns - start_ns) / 1e9 / 250), 1) * 10**9


def _limit(value: str | None) -> int:
    if not value:
        return DEFAULT_LIMIT
    try:
        limit = int(value)
    except ValueError:
        raise LokiError(f'strconv.ParseUint: parsing "{value}": invalid syntax') from None
    if limit < 0:
        raise LokiError(f'strconv.ParseUint: parsing "{value}": invalid syntax')
    if limit > MAX_LIMIT:
        raise LokiError(f"max entries limit per query exceeded, limit > max_entries_limit_per_query "
                        f"({limit} > {MAX_LIMIT})")
    return limit


def _direction(value: str | None) -> str:
    text = (value or "backward").lower()
    if text not in ("backward", "forward"):
        raise LokiError(f"invalid direction '{value}'")
    return text


# ------------------------------------------------------------------ shapes
def _stats(stats: logql.QueryStats, exec_seconds: float) -> dict[str, Any]:
    store = {"totalChunksRef": 0, "totalChunksDownloaded": 0, "chunksDownloadTime": 0,
             "queryReferencedStructuredMetadata": False,
             "chunk": {"headChunkBytes": 0, "headChunkLines": 0, "decompressedBytes": stats.bytes,
                       "decompressedLines": stats.lines, "compressedBytes": stats.bytes // 4,
                       "totalDuplicates": 0, "postFilterLines": stats.returned,
                       "headChunkStructuredMetadataBytes": 0, "decompressedStructuredMetadataBytes": 0}}
    per_second = (lambda n: int(n / exec_seconds)) if exec_seconds > 0 else (lambda _n: 0)
    return {
        "summary": {"bytesProcessedPerSecond": per_second(stats.bytes),
                    "linesProcessedPerSecond": per_second(stats.lines),
                    "totalBytesProcessed": stats.bytes, "totalLinesProcessed": stats.lines,
                    "execTime": exec_seconds, "queueTime": 0, "subqueries": 0,
                    "totalEntriesReturned": stats.returned, "splits": 0, "shards": 0,
                    "totalPostFilterLines": stats.returned, "totalStructuredMetadataBytesProcessed": 0},
        "querier": {"store": store},
        "ingester": {"totalReached": 1, "totalChunksMatched": 0, "totalBatches": 1, "totalLinesSent": stats.lines,
                     "store": store},
        "cache": {name: {"entriesFound": 0, "entriesRequested": 0, "entriesStored": 0, "bytesReceived": 0,
                         "bytesSent": 0, "requests": 0, "downloadTime": 0, "queryLengthServed": 0}
                  for name in ("chunk", "index", "result", "statsResult", "volumeResult",
                               "seriesResult", "labelResult", "instantMetricResult")},
    }


def _seconds(t_ns: int) -> int | float:
    return t_ns // 10**9 if t_ns % 10**9 == 0 else t_ns / 1e9


def _success(data: Any) -> JSONResponse:
    return JSONResponse({"status": "success", "data": data})


# --------------------------------------------------------------------- API
class LokiApi:
    def __init__(self, twin: Twin, tokens: dict[str, str], timeout_s: float = QUERY_TIMEOUT_S) -> None:
        self.twin = twin
        self.tokens = dict(tokens)
        self.index = LogIndex(twin)
        self.timeout_s = timeout_s

    def now_ns(self) -> int:
        return round(self.twin.clock.now * 1e9)

    def visible(self, request: Request) -> Callable[[dict[str, str]], bool]:
        user = user_from_headers(self.tokens, request.headers)
        return (lambda _labels: True) if user == ADMIN else labels_visible

    def query_range(self, params: Any, visible: Callable[[dict[str, str]], bool]) -> Evaluation:
        query = params.get("query") or ""
        end = parse_time_ns(params.get("end"), self.now_ns(), "end")
        start = parse_time_ns(params.get("start"), end - DEFAULT_SINCE_NS, "start")
        if end < start:
            raise LokiError("invalid query, through < from (end < start)")
        limit = _limit(params.get("limit"))
        direction = _direction(params.get("direction"))
        expr = _parse(query)
        if end - start > MAX_QUERY_LENGTH_NS:
            raise LokiError(f"the query time range exceeds the limit (query length: "
                            f"{go_duration(end - start)}, limit: {go_duration(MAX_QUERY_LENGTH_NS)})")
        if logql.is_log_query(expr):
            step = 0
        else:
            step = parse_step_ns(params.get("step") or params.get("interval"), default_step_ns(start, end))
            if step <= 0:
                raise LokiError("zero or negative query resolution step widths are not accepted. Try a "
                                "positive integer")
            if (end - start) // step > MAX_POINTS:
                raise LokiError("exceeded maximum resolution of 11,000 points per timeseries. Try "
                                "increasing the value of the step parameter")
        budget = _Deadline(self.timeout_s)
        return Evaluation(lambda: self._range(expr, visible, start, end, step, limit, direction, budget))

    def _range(self, expr: Any, visible: Callable[[dict[str, str]], bool], start: int, end: int, step: int,
               limit: int, direction: str, budget: _Deadline) -> Response:
        stats = logql.QueryStats()
        source = budget.source(self.index.source(visible))
        if logql.is_log_query(expr):
            streams = logql.select_logs(expr, source, start, end, limit=limit,
                                        direction=direction, stats=stats)
            result = [{"stream": labels, "values": [[str(ts), line] for ts, line in entries]}
                      for labels, entries in streams]
            return _success({"resultType": "streams", "result": result,
                             "stats": _stats(stats, _exec_seconds(stats))})
        value = _eval(expr, source, start, end, step, stats, budget.check)
        if isinstance(value, float):
            result: Any = [{"metric": {}, "values": _points_scalar(value, start, end, step)}]
        else:
            result = [{"metric": labels, "values": [[_seconds(t), format_value(v)] for t, v in points]}
                      for labels, points in value]
            stats.returned = sum(len(p) for _l, p in value)
        return _success({"resultType": "matrix", "result": result, "stats": _stats(stats, _exec_seconds(stats))})

    def query(self, params: Any, visible: Callable[[dict[str, str]], bool]) -> Evaluation:
        query = params.get("query") or ""
        t = parse_time_ns(params.get("time"), self.now_ns(), "time")
        _limit(params.get("limit"))
        _direction(params.get("direction"))
        expr = _parse(query)
        if logql.is_log_query(expr):
            raise LokiError("log queries are not supported as an instant query type, please change your "
                            "query to a range query type")
        budget = _Deadline(self.timeout_s)
        return Evaluation(lambda: self._instant(expr, visible, t, budget))

    def _instant(self, expr: Any, visible: Callable[[dict[str, str]], bool], t: int,
                 budget: _Deadline) -> Response:
        stats = logql.QueryStats()
        value = _eval(expr, budget.source(self.index.source(visible)), t, t, 10**9, stats, budget.check)
        if isinstance(value, float):
            return _success({"resultType": "scalar", "result": [_seconds(t), format_value(value)],
                             "stats": _stats(stats, _exec_seconds(stats))})
        result = [{"metric": labels, "value": [_seconds(points[-1][0]), format_value(points[-1][1])]}
                  for labels, points in value if points]
        stats.returned = len(result)
        return _success({"resultType": "vector", "result": result, "stats": _stats(stats, _exec_seconds(stats))})

    def _streams_in(self, params: Any, visible: Callable[[dict[str, str]], bool], matchers: list[Matcher] | None,
                    ) -> list[dict[str, str]]:
        end = parse_time_ns(params.get("end"), self.now_ns(), "end")
        start = parse_time_ns(params.get("start"), end - LABELS_SINCE_NS, "start")
        out = []
        for labels, entries in self.index.streams(visible):
            if matchers is not None and not all(m.matches(labels) for m in matchers):
                continue
            times = [ts for ts, _ in entries()]
            if times and times[0] <= end and times[-1] >= start:
                out.append(labels)
        return out

    def status_routes(self, endpoint: Callable[..., Any]) -> list[Route]:
        """Index stats, detected labels, format_query, /config and /metrics (`loki_status`)."""
        def stats(params: Any, request: Request) -> Response:
            matchers = _selector(params.get("query") or "")
            end = parse_time_ns(params.get("end"), self.now_ns(), "end")
            start = parse_time_ns(params.get("start"), end - LABELS_SINCE_NS, "start")
            streams = [(labels, entries()) for labels, entries in self.index.streams(self.visible(request))
                       if all(m.matches(labels) for m in matchers)]
            return JSONResponse(loki_status.index_stats(streams, start, end))

        def detected(params: Any, request: Request) -> Response:
            matchers = _selector(params["query"]) if params.get("query") else None
            return JSONResponse(loki_status.detected_labels(self._streams_in(params, self.visible(request),
                                                                             matchers)))

        def metrics(request: Request) -> Response:
            streams = self.index.streams(self.visible(request))
            return PlainTextResponse(loki_status.metrics_text(len(streams), sum(len(e()) for _l, e in streams)),
                                     media_type="text/plain; version=0.0.4; charset=utf-8")

        both = ["GET", "POST"]
        return [
            Route("/loki/api/v1/index/stats", endpoint(stats), methods=both),
            Route("/loki/api/v1/detected_labels", endpoint(detected), methods=["GET"]),
            Route("/loki/api/v1/format_query", endpoint(lambda p, _r: JSONResponse(
                loki_status.format_query(p.get("query") or "", _parse))), methods=both),
            Route("/config", lambda _r: PlainTextResponse(loki_status.CONFIG), methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ]

    def labels(self, params: Any, visible: Callable[[dict[str, str]], bool]) -> Response:
        matchers = _selector(params.get("query")) if params.get("query") else None
        names = sorted({k for labels in self._streams_in(params, visible, matchers) for k in labels})
        return _success(names)

    def label_values(self, name: str, params: Any, visible: Callable[[dict[str, str]], bool]) -> Response:
        matchers = _selector(params.get("query")) if params.get("query") else None
        values = sorted({labels[name] for labels in self._streams_in(params, visible, matchers) if name in labels})
        return _success(values)

    def series(self, params: Any, match: list[str], visible: Callable[[dict[str, str]], bool]) -> Response:
        if not match:
            raise LokiError("0 matcher groups supplied")
        seen: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        for text in match:
            for labels in self._streams_in(params, visible, _selector(text)):
                seen[tuple(sorted(labels.items()))] = labels
        return _success([seen[k] for k in sorted(seen)])


def _parse(query: str) -> Any:
    try:
        return logql.parse(query)
    except logql.LogQLError as exc:
        raise LokiError(str(exc)) from None


def _selector(text: str) -> list[Matcher]:
    expr = _parse(text)
    if not isinstance(expr, logql.LogExpr):
        raise LokiError("parse error : only stream selectors are allowed here")
    return expr.matchers


def _eval(expr: Any, source: logql.Source, start: int, end: int, step: int, stats: logql.QueryStats,
          check: Callable[[], None]) -> Any:
    try:
        value = logql.eval_metric(expr, source, start, end, step, stats, check=check)
    except logql.LogQLError as exc:
        raise LokiError(str(exc)) from None
    if not isinstance(value, float) and len(value) > MAX_QUERY_SERIES:
        raise LokiError(f"maximum of series ({MAX_QUERY_SERIES}) reached for a single query")
    return value


class Evaluation:
    """A query's evaluation, run by the endpoint on a worker thread through the query gate."""

    def __init__(self, fn: Callable[[], Response]) -> None:
        self.fn = fn


class _Deadline:
    """The query timeout: checked per stream and per step; Loki answers 504 when it passes."""

    def __init__(self, timeout_s: float) -> None:
        self.deadline = time.monotonic() + timeout_s

    def check(self) -> None:
        if time.monotonic() >= self.deadline:
            raise LokiError(DEADLINE_EXCEEDED, 504)

    def source(self, inner: logql.Source) -> logql.Source:
        def select(matchers: list[Matcher]) -> Iterable[tuple[dict[str, str], list[logql.Entry]]]:
            for item in inner(matchers):
                self.check()
                yield item
        return select


def go_duration(ns: int) -> str:
    """Go's time.Duration.String() for whole seconds and up (`744h0m0s`)."""
    seconds, frac = divmod(ns, 10**9)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    sec_text = f"{secs}" if not frac else f"{secs}.{frac:09d}".rstrip("0")
    if hours:
        return f"{hours}h{minutes}m{sec_text}s"
    if minutes:
        return f"{minutes}m{sec_text}s"
    return f"{sec_text}s"


def _points_scalar(value: float, start: int, end: int, step: int) -> list[list[Any]]:
    return [[_seconds(t), format_value(value)] for t in range(start, end + 1, step)]


def _exec_seconds(stats: logql.QueryStats) -> float:
    """A deterministic, plausible execution time (the twin does not read the wall clock)."""
    return round(0.0004 + stats.lines * 2e-7, 9)


def create_loki_app(twin: Twin, *, tokens: dict[str, str], timeout_s: float = QUERY_TIMEOUT_S) -> Starlette:
    """The ASGI app serving the Loki query API for `twin`; queries evaluate on worker threads
    (see `query_gate`) within `timeout_s`."""
    api = LokiApi(twin, tokens, timeout_s)
    gate = gate_for(twin)

    def endpoint(fn: Callable[[Any, Request], Response]) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            try:
                params: Any = request.query_params
                if request.method == "POST" and "form" in (request.headers.get("content-type") or ""):
                    params = _Merged(FormData(await read_body(request, MAX_BODY_BYTES)), request.query_params)
                answer = fn(params, request)
                if isinstance(answer, Evaluation):
                    return await gate.run(answer.fn)
                return answer
            except LokiError as err:
                return PlainTextResponse(err.message + "\n", status_code=err.code)
            except BodyTooLarge:
                return PlainTextResponse("http: POST too large\n", status_code=400)
            except Exception as exc:  # never a traceback on the wire
                log.exception("loki API handler failed")
                return PlainTextResponse(f"{type(exc).__name__}: {exc}\n", status_code=400)
        return handle

    both = ["GET", "POST"]
    routes = [
        Route("/loki/api/v1/query_range", endpoint(lambda p, r: api.query_range(p, api.visible(r))), methods=both),
        Route("/loki/api/v1/query", endpoint(lambda p, r: api.query(p, api.visible(r))), methods=both),
        Route("/loki/api/v1/labels", endpoint(lambda p, r: api.labels(p, api.visible(r))), methods=both),
        Route("/loki/api/v1/label", endpoint(lambda p, r: api.labels(p, api.visible(r))), methods=both),
        Route("/loki/api/v1/label/{name}/values",
              endpoint(lambda p, r: api.label_values(r.path_params["name"], p, api.visible(r))), methods=both),
        Route("/loki/api/v1/series",
              endpoint(lambda p, r: api.series(p, _getlist(p, "match[]") or _getlist(p, "match"),
                                               api.visible(r))), methods=both),
        Route("/ready", lambda _r: PlainTextResponse("ready\n"), methods=["GET", "HEAD"]),
        Route("/loki/api/v1/status/buildinfo", lambda _r: JSONResponse(
            {"version": "3.1.0", "revision": "935aee77ed", "branch": "HEAD", "buildUser": "root@0f7f0ed2f1e8",
             "buildDate": "2024-07-02T10:47:33Z", "goVersion": "go1.22.4"}), methods=["GET"]),
        *api.status_routes(endpoint),
    ]
    app = Starlette(routes=routes)
    app.state.loki = api
    app.add_exception_handler(404, _not_found)
    app.add_exception_handler(405, _not_allowed)
    return app


class _Merged:
    def __init__(self, form: Any, query: Any) -> None:
        self.form = form
        self.query = query

    def get(self, name: str) -> Any:
        value = self.form.get(name)
        return value if isinstance(value, str) else self.query.get(name)

    def getlist(self, name: str) -> list[str]:
        return [v for v in self.form.getlist(name) if isinstance(v, str)] + list(self.query.getlist(name))


def _getlist(params: Any, name: str) -> list[str]:
    return list(params.getlist(name))


async def _not_found(_request: Request, _exc: Exception) -> Response:
    return PlainTextResponse("404 page not found\n", status_code=404)


async def _not_allowed(_request: Request, _exc: Exception) -> Response:
    return PlainTextResponse("Method Not Allowed\n", status_code=405)


__all__ = ["LogIndex", "create_loki_app"]
