"""The Prometheus HTTP API of the twin (`/api/v1/...`), over the twin's TSDB and rule manager.

Shapes follow Prometheus 2.53: every answer is `{"status": "success", "data": ...}` or
`{"status": "error", "errorType": ..., "error": ...}` with 400 (`bad_data`), 422 (`execution`)
or 503 (`timeout`/`canceled`); sample values are strings and timestamps float seconds. Queries run
on the simulated clock: a missing `time` means the twin's "now".

Visibility: the admin token sees everything; the agent token (or no token) queries through a
`FilteredTSDB` (see `telemetry.visibility`), and alerts/rules only show alerts whose labels it may see.
Query evaluation runs on worker threads behind the twin's query gate (`query_gate`): the server
keeps answering other clients meanwhile, and the clock never ticks under a running query. Every
query has Prometheus' budgets (`promql.budget`: samples, timeout — the smaller of the `timeout`
parameter and the server's) and the 11,000-points limit, failing with Prometheus' own errors.
Any unexpected failure still leaves as API error JSON, never a 500.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from sregym.twin.api import prom_status
from sregym.twin.api.body import BodyTooLarge, read_body
from sregym.twin.api.prom_access import user_from_headers
from sregym.twin.api.prom_params import FormData
from sregym.twin.api.query_gate import gate_for
from sregym.twin.api.wall_time import active_offset
from sregym.twin.telemetry.promql.budget import DEFAULT_MAX_SAMPLES, DEFAULT_TIMEOUT_S
from sregym.twin.telemetry.promtime import ParamError, parse_duration_ms, parse_time_ms
from sregym.twin.telemetry.regex import check as regex_check
from sregym.twin.telemetry.tsdb import TSDB, Matcher
from sregym.twin.telemetry.visibility import ADMIN, labels_visible, tsdb_for

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

log = logging.getLogger("sregym.twin.api.prometheus")

LOOKBACK_MS = 300_000
MAX_POINTS = 11_000
# Go's net/http ParseForm refuses larger form bodies ("http: POST too large").
MAX_BODY_BYTES = 10 << 20
BUILD_INFO = {
    "version": "2.53.0",
    "revision": "4c35b9250afefede41c5f5acd76191f90f625898",
    "branch": "HEAD",
    "buildUser": "root@7b6d2a5d3c51",
    "buildDate": "20240619-07:39:12",
    "goVersion": "go1.22.4",
}
_OPS = {"Equal": "=", "NotEqual": "!=", "Re": "=~", "NotRe": "!~"}


class ApiFailure(Exception):
    """An API error: Prometheus' errorType, message and HTTP code."""

    def __init__(self, error_type: str, message: str, code: int) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.code = code


def bad_data(message: str) -> ApiFailure:
    return ApiFailure("bad_data", message, 400)


def success(data: Any, warnings: list[str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"status": "success", "data": data}
    if warnings:
        body["warnings"] = warnings
    return JSONResponse(body)


def failure(err: ApiFailure) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": err.error_type, "error": err.message},
                        status_code=err.code)


class PrometheusApi:
    """Per-app state: the twin and the credentials."""

    def __init__(self, twin: Twin, tokens: dict[str, str], *, max_samples: int = DEFAULT_MAX_SAMPLES,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.twin = twin
        self.tokens = dict(tokens)
        self.max_samples = max_samples
        self.timeout_s = timeout_s

    # ------------------------------------------------------------ helpers
    @property
    def tsdb(self) -> TSDB:
        tsdb = self.twin.services.tsdb
        if tsdb is None:
            tsdb = self.twin.services.tsdb = TSDB()
        return tsdb

    def now_ms(self) -> int:
        return round(self.twin.clock.now * 1000)

    def user(self, request: Request) -> str:
        return user_from_headers(self.tokens, request.headers)

    def engine(self, user: str, timeout_s: float | None = None) -> Any:
        from sregym.twin.telemetry.promql import Engine

        timeout = self.timeout_s if timeout_s is None else min(timeout_s, self.timeout_s)
        return Engine(tsdb_for(self.tsdb, user), lookback_ms=LOOKBACK_MS,
                      max_samples=self.max_samples, timeout_s=timeout, present_offset_s=active_offset())

    def time_param(self, params: Params, name: str, default: int) -> int:
        text = params.get(name)
        if not text:
            return default
        try:
            return parse_time_ms(text)
        except ParamError as exc:
            raise bad_data(f'invalid parameter "{name}": {exc}') from None

    # ----------------------------------------------------------- queries
    def query(self, params: Params, user: str) -> Evaluation:
        t_ms = self.time_param(params, "time", self.now_ms())
        engine = self.engine(user, _timeout(params))
        query = params.get("query") or ""

        def evaluate() -> Response:
            result = run_query(lambda: engine.instant(query, t_ms))
            return success(result.to_api(), getattr(result, "warnings", None))
        return Evaluation(evaluate)

    def query_range(self, params: Params, user: str) -> Evaluation:
        start = _required_time(params, "start")
        end = _required_time(params, "end")
        if end < start:
            raise bad_data('invalid parameter "end": end timestamp must not be before start time')
        step_text = params.get("step")
        if not step_text:
            raise bad_data('invalid parameter "step": cannot parse "" to a valid duration')
        try:
            step = parse_duration_ms(step_text)
        except ParamError as exc:
            raise bad_data(f'invalid parameter "step": {exc}') from None
        if step <= 0:
            raise bad_data('invalid parameter "step": zero or negative query resolution step widths are '
                           'not accepted. Try a positive integer')
        if (end - start) // step > MAX_POINTS:
            raise bad_data("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing "
                           "the query resolution (?step=XX)")
        engine = self.engine(user, _timeout(params))
        query = params.get("query") or ""

        def evaluate() -> Response:
            result = run_query(lambda: engine.range(query, start, end, step))
            return success(result.to_api(), getattr(result, "warnings", None))
        return Evaluation(evaluate)

    # ------------------------------------------------------------ metadata
    def _selected(self, params: Params, user: str, *, required: bool) -> list[Any] | None:
        """The series matching `match[]` (None when no match[] and it is optional), limited to
        those with samples in [start, end] when either is given."""
        matches = params.getlist("match[]")
        if not matches:
            if required:
                raise bad_data("no match[] parameter provided")
            return None
        start = self.time_param(params, "start", -(2**62))
        end = self.time_param(params, "end", 2**62)
        view = tsdb_for(self.tsdb, user)
        seen: dict[tuple[tuple[str, str], ...], Any] = {}
        for text in matches:
            for series in view.select(parse_selector(text)):
                key = tuple(sorted(series.labels.items()))
                if key not in seen and _has_samples(series, start, end):
                    seen[key] = series
        return [seen[k] for k in sorted(seen)]

    def series(self, params: Params, user: str) -> Response:
        selected = self._selected(params, user, required=True) or []
        return success([dict(sorted(s.labels.items())) for s in selected])

    def labels(self, params: Params, user: str) -> Response:
        selected = self._selected(params, user, required=False)
        if selected is None:
            return success(tsdb_for(self.tsdb, user).label_names())
        return success(sorted({name for s in selected for name in s.labels}))

    def label_values(self, name: str, params: Params, user: str) -> Response:
        if not _valid_label_name(name):
            raise bad_data(f'invalid label name: "{name}"')
        selected = self._selected(params, user, required=False)
        if selected is None:
            return success(tsdb_for(self.tsdb, user).label_values(name))
        return success(sorted({s.labels[name] for s in selected if name in s.labels}))

    def metadata(self, params: Params, user: str) -> Response:
        return success(prom_status.metadata(self.twin, user, params.get("metric") or "",
                                            params.get("limit") or "", params.get("limit_per_metric") or ""))

    # --------------------------------------------------------- alerting
    def alerts(self, user: str) -> Response:
        from sregym.twin.telemetry.alerts import rule_manager

        manager = rule_manager(self.twin)
        return success({"alerts": manager.api_alerts(_visible_for(user))})

    def rules(self, params: Params, user: str) -> Response:
        from sregym.twin.telemetry.alerts import rule_manager

        kind = params.get("type") or ""
        if kind not in ("", "alert", "record"):
            raise bad_data(f'invalid parameter "type": not supported value "{kind}"')
        manager = rule_manager(self.twin)
        return success({"groups": manager.api_rules(
            _visible_for(user), kind=kind, rule_names=params.getlist("rule_name[]"),
            group_names=params.getlist("rule_group[]"), files=params.getlist("file[]"))})


# ---------------------------------------------------------------- parsing
class Params:
    """Query-string and form parameters together (Prometheus reads both via FormValue)."""

    def __init__(self, query: Any, form: Any | None) -> None:
        self._query = query
        self._form = form

    def get(self, name: str) -> str | None:
        if self._form is not None and name in self._form:
            value = self._form.get(name)
            return value if isinstance(value, str) else None
        return self._query.get(name)

    def getlist(self, name: str) -> list[str]:
        out = [v for v in self._form.getlist(name) if isinstance(v, str)] if self._form is not None else []
        return out + list(self._query.getlist(name))


def _required_time(params: Params, name: str) -> int:
    text = params.get(name)
    if not text:
        raise bad_data(f'invalid parameter "{name}": cannot parse "" to a valid timestamp')
    try:
        return parse_time_ms(text)
    except ParamError as exc:
        raise bad_data(f'invalid parameter "{name}": {exc}') from None


def _timeout(params: Params) -> float | None:
    """The `timeout` parameter in seconds (Prometheus uses the smaller of it and
    --query.timeout), None when absent."""
    text = params.get("timeout")
    if not text:
        return None
    try:
        return parse_duration_ms(text) / 1000
    except ParamError as exc:
        raise bad_data(f'invalid parameter "timeout": {exc}') from None


class Evaluation:
    """A query's evaluation, run by the endpoint on a worker thread through the query gate."""

    def __init__(self, fn: Callable[[], Response]) -> None:
        self.fn = fn


def _int_param(params: Params, name: str, default: int) -> int:
    text = params.get(name)
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise bad_data(f'invalid parameter "{name}": strconv.Atoi: parsing "{text}": invalid syntax') \
            from None


def _valid_label_name(name: str) -> bool:
    if not name or not (name[0].isalpha() or name[0] == "_"):
        return False
    return all(c.isascii() and (c.isalnum() or c == "_") for c in name)


def _has_samples(series: Any, start: int, end: int) -> bool:
    if not series.timestamps:
        return False
    return series.timestamps[0] <= end and series.timestamps[-1] >= start


def _visible_for(user: str) -> Callable[[dict[str, str]], bool]:
    return (lambda _labels: True) if user == ADMIN else labels_visible


def parse_selector(text: str, param: str = "match[]") -> list[Matcher]:
    """A `match[]` (or other `param`) series selector → TSDB matchers (Prometheus' errors on bad input)."""
    import promql_parser

    try:
        expr = promql_parser.parse(text)
    except (ValueError, TypeError) as exc:
        raise bad_data(f'invalid parameter "{param}": 1:1: parse error: {exc}') from None
    if not isinstance(expr, promql_parser.VectorSelector):
        raise bad_data(f'invalid parameter "{param}": 1:1: parse error: expected type instant vector '
                       'in series selector')
    matchers: list[Matcher] = []
    if expr.name:
        matchers.append(Matcher("__name__", "=", expr.name))
    for m in expr.matchers.matchers:
        matchers.append(Matcher(m.name, _OPS.get(str(m.op).rsplit(".", 1)[-1], "="), m.value))
    for matcher in matchers:
        problem = regex_check(matcher.value, anchored=True) if matcher.op in ("=~", "!~") else None
        if problem is not None:  # RE2 refuses what the parser library accepted
            from sregym.twin.telemetry.promql.diagnose import diagnose

            raise bad_data(f'invalid parameter "{param}": {diagnose(text) or "1:1: parse error: " + problem}')
    if all(m.matches({}) for m in matchers):
        raise bad_data("match[] must contain at least one non-empty matcher")
    return matchers


def run_query(fn: Callable[[], Any]) -> Any:
    """Run a PromQL evaluation, turning the engine's errors into API failures."""
    from sregym.twin.telemetry.promql import PromQLError

    try:
        return fn()
    except PromQLError as exc:
        raise promql_failure(exc) from None
    except (RecursionError, MemoryError):
        raise ApiFailure("execution", "query processing would load too many samples into memory "
                                      "in query execution", 422) from None


def promql_failure(exc: Exception) -> ApiFailure:
    kind = str(getattr(exc, "kind", "") or "bad_data")
    message = str(getattr(exc, "message", "") or exc)
    if kind in ("bad_data", "parse", "parse_error"):
        if not message.startswith("invalid parameter"):
            message = f'invalid parameter "query": {message}'
        return ApiFailure("bad_data", message, 400)
    if kind in ("timeout", "canceled"):
        return ApiFailure(kind, message, 503)
    return ApiFailure("execution", message, 422)


# ------------------------------------------------------------------- app
def create_prometheus_app(twin: Twin, *, tokens: dict[str, str], max_samples: int = DEFAULT_MAX_SAMPLES,
                          timeout_s: float = DEFAULT_TIMEOUT_S) -> Starlette:
    """The ASGI app serving the Prometheus HTTP API for `twin`. Queries evaluate on worker
    threads (see `query_gate`), each within `max_samples` and `timeout_s`."""
    api = PrometheusApi(twin, tokens, max_samples=max_samples, timeout_s=timeout_s)
    gate = gate_for(twin)

    def endpoint(fn: Callable[[Params, str, Request], Response]) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            try:
                form = None
                if request.method == "POST":
                    ctype = request.headers.get("content-type") or ""
                    if "form" in ctype:
                        form = FormData(await read_body(request, MAX_BODY_BYTES))
                params = Params(request.query_params, form)
                answer = fn(params, api.user(request), request)
                if isinstance(answer, Evaluation):
                    return await gate.run(answer.fn)
                return answer
            except ApiFailure as err:
                return failure(err)
            except prom_status.StatusError as err:
                return failure(ApiFailure(err.error_type, err.message, err.code))
            except BodyTooLarge:
                return failure(bad_data("error parsing form values: http: POST too large"))
            except Exception as exc:  # never a traceback on the wire
                log.exception("prometheus API handler failed")
                return failure(ApiFailure("execution", f"unexpected error: {type(exc).__name__}: {exc}",
                                          422))
        return handle

    both = ["GET", "POST"]
    routes = [
        Route("/api/v1/query", endpoint(lambda p, u, _r: api.query(p, u)), methods=both),
        Route("/api/v1/query_range", endpoint(lambda p, u, _r: api.query_range(p, u)), methods=both),
        Route("/api/v1/series", endpoint(lambda p, u, _r: api.series(p, u)), methods=[*both, "DELETE"]),
        Route("/api/v1/labels", endpoint(lambda p, u, _r: api.labels(p, u)), methods=both),
        Route("/api/v1/label/{name}/values",
              endpoint(lambda p, u, r: api.label_values(r.path_params["name"], p, u)), methods=["GET"]),
        Route("/api/v1/metadata", endpoint(lambda p, u, _r: api.metadata(p, u)), methods=["GET"]),
        Route("/api/v1/alerts", endpoint(lambda _p, u, _r: api.alerts(u)), methods=["GET"]),
        Route("/api/v1/rules", endpoint(lambda p, u, _r: api.rules(p, u)), methods=["GET"]),
        Route("/api/v1/status/buildinfo", endpoint(lambda _p, _u, _r: success(dict(BUILD_INFO))),
              methods=["GET"]),
        Route("/api/v1/status/runtimeinfo", endpoint(lambda _p, _u, _r: success(_runtime_info(twin))),
              methods=["GET"]),
        *status_routes(api, endpoint),
        Route("/-/ready", lambda _r: PlainTextResponse("Prometheus Server is Ready.\n"),
              methods=["GET", "HEAD"]),
        Route("/-/healthy", lambda _r: PlainTextResponse("Prometheus Server is Healthy.\n"),
              methods=["GET", "HEAD"]),
    ]
    app = Starlette(routes=routes)
    app.state.prometheus = api
    app.add_exception_handler(404, _not_found)
    app.add_exception_handler(405, _not_allowed)
    return app


def status_routes(api: PrometheusApi, endpoint: Callable[..., Any]) -> list[Route]:
    """Targets, scrape pools and the status pages (`prom_status`)."""
    twin = api.twin

    def get(path: str, fn: Callable[[Params, str], Any]) -> Route:
        return Route(path, endpoint(lambda p, u, _r: success(fn(p, u))), methods=["GET"])

    return [
        get("/api/v1/status/flags", lambda _p, _u: prom_status.flags(api.max_samples, api.timeout_s)),
        get("/api/v1/status/config", lambda _p, u: prom_status.config(twin, u)),
        get("/api/v1/status/tsdb", lambda p, u: prom_status.tsdb_status(twin, u, p.get("limit") or "")),
        get("/api/v1/status/walreplay", lambda _p, _u: prom_status.walreplay(twin)),
        get("/api/v1/targets", lambda p, u: prom_status.targets(twin, u, p.get("state") or "",
                                                                p.get("scrapePool") or "")),
        get("/api/v1/targets/metadata", lambda p, u: prom_status.target_metadata(
            twin, u, p.get("match_target") or "", p.get("metric") or "", p.get("limit") or "",
            lambda text: parse_selector(text, "match_target"))),
        get("/api/v1/scrape_pools", lambda _p, u: prom_status.scrape_pools(twin, u)),
        get("/api/v1/alertmanagers", lambda _p, _u: prom_status.alertmanagers()),
    ]


def _runtime_info(twin: Twin) -> dict[str, Any]:
    from sregym.twin.telemetry.promtime import rfc3339

    return {"startTime": rfc3339(round(twin.clock.start * 1000)), "CWD": "/prometheus",
            "reloadConfigSuccess": True, "lastConfigTime": rfc3339(round(twin.clock.start * 1000)),
            "corruptionCount": 0, "goroutineCount": 42, "GOMAXPROCS": 4, "GOMEMLIMIT": 9223372036854775807,
            "GOGC": "", "GODEBUG": "", "storageRetention": "15d"}


async def _not_found(_request: Request, _exc: Exception) -> Response:
    return PlainTextResponse("404 page not found\n", status_code=404)


async def _not_allowed(_request: Request, _exc: Exception) -> Response:
    return PlainTextResponse("Method Not Allowed\n", status_code=405)


__all__ = ["BUILD_INFO", "create_prometheus_app", "parse_selector"]
