"""Prometheus, Loki and Jaeger on the client's clock: an ASGI layer around each query API.

Dashboards and agents ask for "the last hour" with absolute times from their own clock
(`query_range?start=<now-1h>&end=<now>`, Loki's nanosecond `start`/`end`, Jaeger's microsecond
`start`/`end` and millisecond `endTs`). The query APIs themselves work in simulated time, so this
layer maps the time parameters of a request back to simulated time and moves every timestamp of
the JSON answer forward, with one offset per request (`api/wall_time.py`). A parameter it cannot
read is passed on untouched, so the API answers with its own error wording; durations, `step`
and `lookback` are relative and never change. Defaults ("now", Loki's `now-1h`) are the
simulated now inside, hence the wall now outside.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode

from sregym.twin.api.wall_time import WallAnchor, bound, shift_embedded, shift_stamp

Api = Literal["prometheus", "loki", "jaeger"]
Message = dict[str, Any]

# The time parameters of each API, with the function mapping a wall value to simulated time.
_TIME_PARAMS: dict[str, tuple[str, ...]] = {"prometheus": ("time", "start", "end"),
                                            "loki": ("time", "start", "end"),
                                            "jaeger": ("start", "end", "endTs")}


class WallTimeApp:
    """Wraps one query API's ASGI app (see the module docstring)."""

    def __init__(self, app: Any, anchor: WallAnchor, api: Api) -> None:
        self.app = app
        self.anchor = anchor
        self.api = api

    async def __call__(self, scope: Message, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        offset = self.anchor.offset
        if not offset:
            await self.app(scope, receive, send)
            return
        qs = scope.get("query_string", b"").decode("latin-1")
        scope = dict(scope, query_string=rewrite_params(qs, self.api, offset).encode("latin-1"))
        receive = await self._rewritten_form(scope, receive, offset)
        # The offset this request's times were mapped with, for what the API computes itself
        # (PromQL's `time()`, `@`, clock-valued samples: `promql.clock_valued`).
        with bound(WallAnchor.fixed(offset)):
            await self.app(scope, receive, _Presenter(send, self.api, offset))

    async def _rewritten_form(self, scope: Message, receive: Any, offset: int) -> Any:
        """A POSTed url-encoded form (Prometheus and Loki read parameters from it too)."""
        headers = dict(scope.get("headers") or [])
        ctype = headers.get(b"content-type", b"").decode("latin-1")
        if scope.get("method") != "POST" or "x-www-form-urlencoded" not in ctype:
            return receive
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return _replay([message])
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        body = rewrite_params(body.decode("utf-8", errors="replace"), self.api, offset).encode()
        return _replay([{"type": "http.request", "body": body, "more_body": False}])


def _replay(messages: list[Message]) -> Callable[[], Any]:
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        return {"type": "http.disconnect"}
    return receive


class _Presenter:
    """The `send` of one request: buffers a JSON answer and moves its timestamps."""

    def __init__(self, send: Any, api: Api, offset: int) -> None:
        self.send = send
        self.api = api
        self.offset = offset
        self.start: Message | None = None
        self.body = b""

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = dict(message.get("headers") or [])
            if b"json" not in headers.get(b"content-type", b""):
                await self.send(message)
                return
            self.start = message
            return
        if message["type"] != "http.response.body" or self.start is None:
            await self.send(message)
            return
        self.body += message.get("body", b"")
        if message.get("more_body"):
            return
        body = present_body(self.body, self.api, self.offset)
        headers = [(k, str(len(body)).encode() if k == b"content-length" else v)
                   for k, v in self.start.get("headers") or []]
        await self.send(dict(self.start, headers=headers))
        await self.send({"type": "http.response.body", "body": body, "more_body": False})


# ------------------------------------------------------------- requests
def rewrite_params(text: str, api: Api, offset: int) -> str:
    """A query string (or form body) with its absolute times moved back by `offset` seconds."""
    if not text:
        return text
    names = _TIME_PARAMS[api]
    pairs = parse_qsl(text, keep_blank_values=True)
    if not any(k in names for k, _v in pairs):
        return text
    return urlencode([(k, _to_sim(api, k, v, offset) if k in names else v) for k, v in pairs])


def _to_sim(api: Api, name: str, value: str, offset: int) -> str:
    try:
        if api == "prometheus":
            from sregym.twin.telemetry.promtime import MAX_TIME_MS, MIN_TIME_MS, parse_time_ms

            ms = parse_time_ms(value)
            if ms in (MIN_TIME_MS, MAX_TIME_MS):
                return value
            return _seconds_text(ms - offset * 1000)
        if api == "loki":
            from sregym.twin.api.loki import parse_time_ns

            return str(parse_time_ns(value, 0, name) - offset * 10**9)
        unit = 1000 if name == "endTs" else 10**6
        return str(int(value) - offset * unit)
    except Exception:  # unreadable: the API itself answers with its own wording
        return value


def _seconds_text(ms: int) -> str:
    whole, frac = divmod(ms, 1000)
    return f"{whole}.{frac:03d}" if frac else str(whole)


# ------------------------------------------------------------ responses
def present_body(body: bytes, api: Api, offset: int) -> bytes:
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if isinstance(doc, dict):
        _PRESENTERS[api](doc, offset)
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _shift_seconds(value: Any, offset: int) -> Any:
    """A Prometheus/Loki float-seconds timestamp moved, at its millisecond precision."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int):
        return value + offset
    ms = round(value * 1000) + offset * 1000
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def _shift_pairs(pairs: Any, offset: int, at: Callable[[Any, int], Any]) -> None:
    for pair in pairs or []:
        if isinstance(pair, list) and pair:
            pair[0] = at(pair[0], offset)


def _present_result(data: Any, offset: int, at: Callable[[Any, int], Any]) -> None:
    """`{"resultType": ..., "result": ...}`: vector, matrix, streams, scalar, string."""
    if not isinstance(data, dict):
        return
    result = data.get("result")
    if data.get("resultType") in ("scalar", "string") and isinstance(result, list) and result:
        result[0] = _shift_seconds(result[0], offset)
        return
    for item in result if isinstance(result, list) else []:
        if not isinstance(item, dict):
            continue
        for key in ("value", "histogram"):
            if isinstance(item.get(key), list) and item[key]:
                item[key][0] = _shift_seconds(item[key][0], offset)
        for key in ("values", "histograms"):
            _shift_pairs(item.get(key), offset, at)


def _present_prometheus(doc: dict[str, Any], offset: int) -> None:
    data = doc.get("data")
    if not isinstance(data, dict):
        return
    _present_result(data, offset, _shift_seconds)
    for alert in data.get("alerts") or []:
        _shift_keys(alert, offset, "activeAt")
    for group in data.get("groups") or []:
        _shift_keys(group, offset, "lastEvaluation")
        for rule in group.get("rules") or []:
            _shift_keys(rule, offset, "lastEvaluation")
            for alert in rule.get("alerts") or []:
                _shift_keys(alert, offset, "activeAt")
    for target in data.get("activeTargets") or []:
        _shift_keys(target, offset, "lastScrape")
    _shift_keys(data, offset, "startTime", "lastConfigTime")


def _shift_keys(obj: Any, offset: int, *keys: str) -> None:
    if not isinstance(obj, dict):
        return
    for key in keys:
        if isinstance(obj.get(key), str):
            obj[key] = shift_stamp(obj[key], offset)


def _shift_ns_text(value: Any, offset: int) -> Any:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return str(int(value) + offset * 10**9)
    return _shift_seconds(value, offset)


def _present_loki(doc: dict[str, Any], offset: int) -> None:
    data = doc.get("data")
    if not isinstance(data, dict):
        return
    _present_result(data, offset, _shift_ns_text)
    if data.get("resultType") == "streams":
        for stream in data.get("result") or []:
            for entry in stream.get("values") or []:
                if isinstance(entry, list) and len(entry) > 1 and isinstance(entry[1], str):
                    entry[1] = shift_embedded(entry[1], offset)


def _present_jaeger(doc: dict[str, Any], offset: int) -> None:
    micros = offset * 10**6
    for trace in doc.get("data") or []:
        if not isinstance(trace, dict):
            continue
        for span in trace.get("spans") or []:
            if isinstance(span.get("startTime"), int):
                span["startTime"] += micros
            for log in span.get("logs") or []:
                if isinstance(log, dict) and isinstance(log.get("timestamp"), int):
                    log["timestamp"] += micros


_PRESENTERS: dict[str, Callable[[dict[str, Any], int], None]] = {
    "prometheus": _present_prometheus, "loki": _present_loki, "jaeger": _present_jaeger}


__all__ = ["WallTimeApp", "present_body", "rewrite_params"]
