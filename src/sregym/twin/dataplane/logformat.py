"""Log lines in an application's own format (zerolog console, go-kit logfmt, JSON, Go's log).

Services print in whatever their logging library emits; an engineer greps for those shapes, so
the twin reproduces them: zerolog's console writer (`2026-01-05T09:00:01Z INF cmd/geo/main.go:48 >
Start geo server`), go-kit/logfmt (`ts=... caller=... level=error msg="..."`), JSON lines, and the
standard library's `2026/01/05 09:00:01 message`, and Envoy's own
`[2026-01-05 09:00:01.000][1][info][main] message`, and Boost.Log's
`[2026-01-05 09:00:01.000000] <error>: (Handler.h:125:Method) message` (DeathStarBench's C++).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

_ENVOY = {"warn": "warning", "fatal": "critical", "panic": "critical"}
_BOOST = {"warn": "warning", "panic": "fatal"}
_ZEROLOG = {"debug": "DBG", "info": "INF", "warn": "WRN", "error": "ERR", "fatal": "FTL", "panic": "PNC"}


def format_log(style: str, at: float, level: str, caller: str, message: str) -> str:
    moment = datetime.fromtimestamp(at, tz=UTC)
    if style == "zerolog":
        return f"{moment.strftime('%Y-%m-%dT%H:%M:%SZ')} {_ZEROLOG.get(level, 'INF')} {caller} > {message}"
    if style == "logfmt":
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        return f"ts={stamp} caller={caller} level={level} msg={json.dumps(message)}"
    if style == "json":
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        return json.dumps({"level": level, "ts": stamp, "caller": caller, "msg": message},
                          separators=(",", ":"))
    if style == "raw":
        return message
    if style == "klog":  # Kubernetes' klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
        stamp = moment.strftime("%m%d %H:%M:%S.") + f"{moment.microsecond:06d}"
        return f"{level[:1].upper()}{stamp}       7 {caller}] {message}"
    if style == "envoy":  # Envoy's default `[%Y-%m-%d %T.%e][%t][%l][%n] %v` (thread id, level, logger)
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
        return f"[{stamp}][1][{_ENVOY.get(level, level)}][{caller}] {message}"
    if style == "boost":  # Boost.Log's `[%TimeStamp%] <%Severity%>: (file:line:function) message`
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond:06d}"
        return f"[{stamp}] <{_BOOST.get(level, level)}>: ({caller}) {message}"
    return f"{moment.strftime('%Y/%m/%d %H:%M:%S')} {message}"


__all__ = ["format_log"]
