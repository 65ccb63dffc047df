"""Query API answers rendered as compact text for an agent to read.

The wire formats (Prometheus, Loki, Jaeger JSON) are made for programs; agents read text, and
every character costs. Each renderer keeps what an engineer would look at — labels and values,
log lines with their source, one line per trace — and goes through `compact` for the size cap.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sregym.tools.output import compact

MAX_RANGE_POINTS = 12


def _ts(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _labels(metric: dict[str, Any]) -> str:
    name = metric.get("__name__", "")
    rest = ", ".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k != "__name__")
    return f"{name}{{{rest}}}" if rest or not name else name


def api_error(api: str, status: int, data: Any) -> str:
    if isinstance(data, dict):
        message = data.get("error") or data.get("message")
        if not message and isinstance(data.get("errors"), list) and data["errors"]:
            message = "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in data["errors"])
        if message:
            kind = data.get("errorType")
            return f"{api} error ({kind or status}): {message}"
    return f"{api} error (HTTP {status}): {str(data)[:500]}"


def prom_instant(payload: dict[str, Any]) -> str:
    data = payload.get("data") or {}
    kind = data.get("resultType")
    result = data.get("result")
    if kind in ("scalar", "string"):
        return f"{kind}: {result[1]} at {_ts(float(result[0]))}"
    if not result:
        return "no data (the query matched no series at this time)"
    lines = [f"{len(result)} series:"]
    for item in result:
        value = item.get("value") or ["", ""]
        lines.append(f"{_labels(item.get('metric') or {})} => {value[1]}")
    return compact("\n".join(lines))


def prom_range(payload: dict[str, Any]) -> str:
    data = payload.get("data") or {}
    result = data.get("result") or []
    if not result:
        return "no data (the query matched no series in this range)"
    lines = [f"{len(result)} series:"]
    for item in result:
        values = item.get("values") or []
        lines.append(_labels(item.get("metric") or {}))
        shown = values
        if len(values) > MAX_RANGE_POINTS:
            stride = (len(values) - 1) / (MAX_RANGE_POINTS - 1)
            shown = [values[round(i * stride)] for i in range(MAX_RANGE_POINTS)]
            lines.append(f"  ({len(values)} points, {MAX_RANGE_POINTS} shown evenly spaced)")
        nums = [float(v[1]) for v in values if v[1] not in ("NaN", "+Inf", "-Inf")]
        lines.append("  " + "  ".join(f"{_ts(float(t))[11:19]} {v}" for t, v in shown))
        if nums:
            lines.append(f"  min {min(nums):.6g}  max {max(nums):.6g}  last {values[-1][1]}")
    return compact("\n".join(lines))


def alerts(payload: dict[str, Any]) -> str:
    items = (payload.get("data") or {}).get("alerts") or []
    if not items:
        return "no alerts are pending or firing"
    lines = []
    for alert in sorted(items, key=lambda a: (a.get("state") != "firing", a.get("labels", {}).get("alertname", ""))):
        labels = alert.get("labels") or {}
        ann = alert.get("annotations") or {}
        name = labels.get("alertname", "?")
        others = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k != "alertname")
        line = f"[{alert.get('state', '?').upper()}] {name} ({others}) since {alert.get('activeAt', '?')}"
        text = ann.get("summary") or ann.get("description")
        if text:
            line += f"\n    {text}"
        lines.append(line)
    return compact("\n".join(lines))


def loki(payload: dict[str, Any]) -> str:
    data = payload.get("data") or {}
    kind = data.get("resultType")
    result = data.get("result") or []
    if kind == "streams":
        entries: list[tuple[int, str, str]] = []
        for stream in result:
            labels = stream.get("stream") or {}
            source = "/".join(str(labels[k]) for k in ("namespace", "pod", "container") if k in labels) \
                or _labels(labels)
            entries.extend((int(ts), source, line) for ts, line in stream.get("values") or [])
        if not entries:
            return "no log lines matched"
        entries.sort(key=lambda e: (e[0], e[1]))
        lines = [f"{_ts(ts / 1e9)} {source} {line}" for ts, source, line in entries]
        return compact(f"{len(lines)} lines:\n" + "\n".join(lines))
    if kind in ("matrix", "vector"):
        return prom_range(payload) if kind == "matrix" else prom_instant(payload)
    return compact(str(data))


def jaeger_list(payload: dict[str, Any], what: str) -> str:
    items = payload.get("data") or []
    if not items:
        return f"no {what} found"
    return compact(f"{what} ({len(items)}):\n" + "\n".join(str(i) for i in sorted(items)))


def traces(payload: dict[str, Any]) -> str:
    items = payload.get("data") or []
    if not items:
        return "no traces found"
    lines = [f"{len(items)} traces (newest first):"]
    rows = []
    for trace in items:
        spans = trace.get("spans") or []
        if not spans:
            continue
        processes = trace.get("processes") or {}
        ids = {s.get("spanID") for s in spans}
        roots = [s for s in spans if not any(r.get("spanID") in ids for r in s.get("references") or [])]
        root = min(roots or spans, key=lambda s: s.get("startTime", 0))
        start = min(s.get("startTime", 0) for s in spans)
        end = max(s.get("startTime", 0) + s.get("duration", 0) for s in spans)
        errors = [s for s in spans if _is_error(s)]
        services = sorted({(processes.get(s.get("processID")) or {}).get("serviceName", "?") for s in spans})
        root_service = (processes.get(root.get("processID")) or {}).get("serviceName", "?")
        row = (f"{trace.get('traceID')} {_ts(start / 1e6)} {root_service} {root.get('operationName')} "
               f"{(end - start) / 1000:.1f}ms spans={len(spans)} errors={len(errors)} "
               f"services={','.join(services)}")
        if errors:
            first = min(errors, key=lambda s: s.get("startTime", 0))
            svc = (processes.get(first.get("processID")) or {}).get("serviceName", "?")
            msg = _tag(first, "error.message") or _tag(first, "http.status_code") or ""
            row += f"\n    first error: {svc} {first.get('operationName')} {msg}".rstrip()
        rows.append((-start, row))
    lines.extend(r for _, r in sorted(rows))
    return compact("\n".join(lines))


def _tag(span: dict[str, Any], key: str) -> str:
    for tag in span.get("tags") or []:
        if tag.get("key") == key:
            return str(tag.get("value"))
    return ""


def _is_error(span: dict[str, Any]) -> bool:
    return _tag(span, "error").lower() == "true" or _tag(span, "otel.status_code") == "ERROR"


def dependencies(payload: dict[str, Any]) -> str:
    items = payload.get("data") or []
    if not items:
        return "no calls between services were traced in this period"
    rows = sorted((d.get("parent", "?"), d.get("child", "?"), d.get("callCount", 0)) for d in items)
    return compact("caller -> callee (calls):\n" + "\n".join(f"{p} -> {c} ({n})" for p, c, n in rows))


__all__ = ["alerts", "api_error", "dependencies", "jaeger_list", "loki", "prom_instant", "prom_range",
           "traces"]
