"""The Jaeger query API of the twin (`/api/...` as served by jaeger-query on :16686).

Shapes follow Jaeger's `structuredResponse`: `{"data": ..., "total": n, "limit": 0, "offset": 0,
"errors": null}`, errors as `{"data": null, ..., "errors": [{"code": 400, "msg": "..."}]}`.
Traces carry `spans` (with `references` CHILD_OF, microsecond `startTime`/`duration`, tags as
`{key, type, value}`, `processID`) and `processes` (`p1`, `p2` ... in order of first
appearance). `/api/dependencies` derives the service call graph from parent→child spans that cross
a service boundary, as Jaeger's dependency job does.

The agent view (agent token or none) leaves out the spans of the load generator and the chaos
machinery; references to a left-out parent are dropped, so the first visible span becomes a root.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from sregym.twin.api.prom_access import user_from_headers
from sregym.twin.telemetry.trace_views import call_counts, span_logs, span_tags, tag
from sregym.twin.telemetry.traces import Span, TraceStore
from sregym.twin.telemetry.visibility import ADMIN, span_visible

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

log = logging.getLogger("sregym.twin.api.jaeger")

DEFAULT_LIMIT = 100
DEFAULT_LOOKBACK_US = 2 * 86_400 * 10**6
DEFAULT_DEPENDENCY_LOOKBACK_MS = 86_400_000
_GO_DURATION = re.compile(r"^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$")
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_US = {"ns": 0.001, "us": 1, "µs": 1, "ms": 1000, "s": 1e6, "m": 60e6, "h": 3600e6}


class JaegerError(Exception):
    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def go_duration_us(text: str) -> int:
    """Go's time.ParseDuration, in microseconds (Jaeger's error text on failure)."""
    value = text.strip()
    if value == "0":
        return 0
    if not _GO_DURATION.match(value):
        raise ValueError(f'time: invalid duration "{text}"')
    total = sum(float(n) * _UNIT_US[u] for n, u in _GO_PART.findall(value))
    return -round(total) if value.startswith("-") else round(total)


# ---------------------------------------------------------------- encoding
def encode_trace(trace_id: str, spans: list[Span], visible: Callable[[Span], bool]) -> dict[str, Any] | None:
    shown = sorted((s for s in spans if visible(s)), key=lambda s: (s.start_us, s.span_id))
    if not shown:
        return None
    ids = {s.span_id for s in shown}
    processes: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
    process_docs: dict[str, dict[str, Any]] = {}
    out_spans = []
    for s in shown:
        pkey = (s.service, tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in s.process_tags.items())))
        pid = processes.get(pkey)
        if pid is None:
            pid = f"p{len(processes) + 1}"
            processes[pkey] = pid
            process_docs[pid] = {"serviceName": s.service,
                                 "tags": [tag(k, v) for k, v in sorted(s.process_tags.items())]}
        refs = []
        if s.parent_span_id and s.parent_span_id in ids:
            refs.append({"refType": "CHILD_OF", "traceID": trace_id, "spanID": s.parent_span_id})
        out_spans.append({"traceID": trace_id, "spanID": s.span_id, "operationName": s.operation,
                          "references": refs, "startTime": s.start_us, "duration": s.duration_us,
                          "tags": [tag(k, v) for k, v in sorted(span_tags(s).items())], "logs": span_logs(s),
                          "processID": pid, "warnings": None, "flags": 1})
    return {"traceID": trace_id, "spans": out_spans, "processes": process_docs, "warnings": None}


def ok(data: Any, total: int | None = None) -> JSONResponse:
    count = total if total is not None else (len(data) if isinstance(data, list) else 0)
    return JSONResponse({"data": data, "total": count, "limit": 0, "offset": 0, "errors": None})


def error(message: str, code: int) -> JSONResponse:
    return JSONResponse({"data": None, "total": 0, "limit": 0, "offset": 0,
                         "errors": [{"code": code, "msg": message}]}, status_code=code)


# ---------------------------------------------------------------- queries
class JaegerApi:
    def __init__(self, twin: Twin, tokens: dict[str, str]) -> None:
        self.twin = twin
        self.tokens = dict(tokens)

    @property
    def store(self) -> TraceStore:
        store = self.twin.services.traces
        if store is None:
            store = self.twin.services.traces = TraceStore()
        return store

    def now_us(self) -> int:
        return round(self.twin.clock.now * 1e6)

    def visible(self, request: Request) -> Callable[[Span], bool]:
        user = user_from_headers(self.tokens, request.headers)
        return (lambda _s: True) if user == ADMIN else span_visible

    def spans(self, visible: Callable[[Span], bool]) -> Iterable[Span]:
        return (s for s in self.store.spans() if visible(s))

    def services(self, visible: Callable[[Span], bool]) -> Response:
        return ok(sorted({s.service for s in self.spans(visible)}))

    def operations_of(self, service: str, visible: Callable[[Span], bool]) -> Response:
        return ok(sorted({s.operation for s in self.spans(visible) if s.service == service}))

    def operations(self, params: Any, visible: Callable[[Span], bool]) -> Response:
        service = params.get("service") or ""
        if not service:
            raise JaegerError("parameter 'service' is required")
        kind = (params.get("spanKind") or "").lower()
        ops = sorted({(s.operation, s.kind) for s in self.spans(visible)
                      if s.service == service and (not kind or s.kind == kind)})
        return ok([{"name": name, "spanKind": k} for name, k in ops])

    def trace(self, trace_id: str, visible: Callable[[Span], bool]) -> Response:
        tid = trace_id.lower()
        if not tid or len(tid) > 32 or not re.fullmatch(r"[0-9a-f]+", tid):
            raise JaegerError(f'strconv.ParseUint: parsing "{trace_id}": invalid syntax')
        tid = tid.rjust(32, "0")
        doc = encode_trace(tid, self.store.trace(tid), visible)
        if doc is None:
            raise JaegerError("trace not found", 404)
        return ok([doc])

    def find_traces(self, params: Any, visible: Callable[[Span], bool]) -> Response:
        trace_ids = params.getlist("traceID")
        if trace_ids:
            docs = []
            for tid in trace_ids:
                doc = encode_trace(tid.lower().rjust(32, "0"), self.store.trace(tid.lower().rjust(32, "0")),
                                   visible)
                if doc is not None:
                    docs.append(doc)
            return ok(docs)
        service = params.get("service") or ""
        if not service:
            raise JaegerError("parameter 'service' is required")
        operation = params.get("operation") or ""
        end = _int_param(params, "end", self.now_us())
        lookback = params.get("lookback") or ""
        if params.get("start"):
            start = _int_param(params, "start", 0)
        elif lookback and lookback != "custom":
            try:
                start = end - go_duration_us(lookback)
            except ValueError as exc:
                raise JaegerError(f"unable to parse param 'lookback': {exc}") from None
        else:
            start = end - DEFAULT_LOOKBACK_US
        if start > end:
            raise JaegerError("start time must not be after end time")
        min_d = _duration_param(params, "minDuration")
        max_d = _duration_param(params, "maxDuration")
        if min_d is not None and max_d is not None and max_d < min_d:
            raise JaegerError("'maxDuration' should be greater than 'minDuration'")
        limit = _int_param(params, "limit", 0) or DEFAULT_LIMIT
        if limit < 0:
            raise JaegerError("'limit' must be a positive number")
        tags = _tags_param(params)
        matched: dict[str, int] = {}
        for s in self.spans(visible):
            if s.service != service or (operation and s.operation != operation):
                continue
            if not (start <= s.start_us <= end):
                continue
            if min_d is not None and s.duration_us < min_d:
                continue
            if max_d is not None and s.duration_us > max_d:
                continue
            if tags and not _tags_match(s, tags):
                continue
            matched[s.trace_id] = max(matched.get(s.trace_id, 0), s.start_us)
        newest = sorted(matched, key=lambda t: (-matched[t], t))[:limit]
        docs = [d for tid in newest if (d := encode_trace(tid, self.store.trace(tid), visible)) is not None]
        return ok(docs)

    def dependencies(self, params: Any, visible: Callable[[Span], bool]) -> Response:
        end_ms = _int_param(params, "endTs", round(self.now_us() / 1000), what="endTs")
        lookback_ms = _int_param(params, "lookback", DEFAULT_DEPENDENCY_LOOKBACK_MS, what="lookback")
        start_us, end_us = (end_ms - lookback_ms) * 1000, end_ms * 1000
        by_id: dict[tuple[str, str], Span] = {}
        window: list[Span] = []
        for s in self.spans(visible):
            by_id[(s.trace_id, s.span_id)] = s
            if start_us <= s.start_us <= end_us:
                window.append(s)
        counts = call_counts(by_id, window)
        return ok([{"parent": p, "child": c, "callCount": n} for (p, c), n in sorted(counts.items())])


def _int_param(params: Any, name: str, default: int, *, what: str | None = None) -> int:
    text = params.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        label = what or name
        raise JaegerError(f"unable to parse param '{label}': strconv.ParseInt: parsing \"{text}\": "
                          "invalid syntax") from None


def _duration_param(params: Any, name: str) -> int | None:
    text = params.get(name)
    if not text:
        return None
    try:
        return go_duration_us(text)
    except ValueError as exc:
        raise JaegerError(f"cannot not parse {name}: {exc}") from None


def _tags_param(params: Any) -> dict[str, str]:
    tags: dict[str, str] = {}
    for raw in params.getlist("tags"):
        try:
            doc = json.loads(raw)
        except ValueError:
            raise JaegerError(f"malformed 'tags' parameter, cannot unmarshal JSON: {raw}") from None
        if not isinstance(doc, dict):
            raise JaegerError(f"malformed 'tags' parameter, cannot unmarshal JSON: {raw}")
        tags.update({str(k): _tag_text(v) for k, v in doc.items()})
    for raw in params.getlist("tag"):
        key, sep, value = raw.partition(":")
        if not sep:
            raise JaegerError(f"malformed 'tag' parameter, expecting key:value, received: {raw}")
        tags[key] = value
    return tags


def _tag_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _tags_match(span: Span, wanted: dict[str, str]) -> bool:
    own = {k: _tag_text(v) for k, v in span_tags(span).items()}
    own.update({k: _tag_text(v) for k, v in span.process_tags.items() if k not in own})
    return all(own.get(k) == v for k, v in wanted.items())


def create_jaeger_app(twin: Twin, *, tokens: dict[str, str]) -> Starlette:
    """The ASGI app serving the Jaeger query API for `twin`."""
    api = JaegerApi(twin, tokens)

    def endpoint(fn: Callable[[Any, Request], Response]) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            try:
                return fn(request.query_params, request)
            except JaegerError as err:
                return error(err.message, err.code)
            except Exception as exc:  # never a traceback on the wire
                log.exception("jaeger API handler failed")
                return error(f"{type(exc).__name__}: {exc}", 400)
        return handle

    routes = [
        Route("/api/services", endpoint(lambda _p, r: api.services(api.visible(r))), methods=["GET"]),
        Route("/api/services/{service:path}/operations",
              endpoint(lambda _p, r: api.operations_of(r.path_params["service"], api.visible(r))),
              methods=["GET"]),
        Route("/api/operations", endpoint(lambda p, r: api.operations(p, api.visible(r))), methods=["GET"]),
        Route("/api/traces", endpoint(lambda p, r: api.find_traces(p, api.visible(r))), methods=["GET"]),
        Route("/api/traces/{trace_id}", endpoint(lambda _p, r: api.trace(r.path_params["trace_id"],
                                                                        api.visible(r))), methods=["GET"]),
        Route("/api/dependencies", endpoint(lambda p, r: api.dependencies(p, api.visible(r))), methods=["GET"]),
        Route("/", lambda _r: PlainTextResponse("Jaeger UI is not bundled with the twin; use the /api "
                                                "endpoints.\n"), methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    app.state.jaeger = api
    app.add_exception_handler(404, _not_found)
    app.add_exception_handler(405, _not_allowed)
    return app


async def _not_found(_request: Request, _exc: Exception) -> Response:
    return error("404 page not found", 404)


async def _not_allowed(_request: Request, _exc: Exception) -> Response:
    return error("method not allowed", 405)


__all__ = ["call_counts", "create_jaeger_app", "encode_trace", "span_tags", "span_visible", "tag"]
