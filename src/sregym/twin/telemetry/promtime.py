"""Prometheus' time and duration syntax, with its own error texts: read by the Prometheus-style
APIs and by the rule manager (rule `for:` durations, alert timestamps).

Prometheus accepts times as RFC 3339 or (fractional) Unix seconds, and durations as float seconds
or its duration syntax (`1h30m`, `15s`, `500ms`). Tools depend on the exact error strings
(`cannot parse "x" to a valid timestamp`), so they are reproduced here.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

_DURATION_RE = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
_UNITS_MS = (365 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000, 1)

# Prometheus' min/max time sentinels (what clients send for "unbounded").
MIN_TIME_MS = -9223309901257974
MAX_TIME_MS = 9223309901257974
_MIN_TIME_TEXT = {"0001-01-01T00:00:00Z", "-292273086-05-16T16:47:06Z"}
_MAX_TIME_TEXT = {"9999-12-31T23:59:59Z", "292277025-08-18T07:12:54.999999999Z"}


class ParamError(ValueError):
    """A request parameter that cannot be used; `str()` is the API's error text."""


def parse_time_ms(text: str) -> int:
    """RFC 3339 or Unix seconds → epoch milliseconds."""
    value = text.strip()
    try:
        seconds = float(value)
    except ValueError:
        seconds = None
    if seconds is not None and math.isfinite(seconds):
        return round(seconds * 1000)
    if value in _MIN_TIME_TEXT:
        return MIN_TIME_MS
    if value in _MAX_TIME_TEXT:
        return MAX_TIME_MS
    try:
        iso = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        # Python accepts at most microseconds; Go's RFC3339Nano may carry nanoseconds.
        iso = re.sub(r"(\.\d{6})\d+", r"\1", iso)
        moment = datetime.fromisoformat(iso)
        if moment.tzinfo is None or "T" not in iso.upper():
            raise ValueError
        return round(moment.timestamp() * 1000)
    except (ValueError, OverflowError):
        raise ParamError(f'cannot parse "{text}" to a valid timestamp') from None


def parse_duration_ms(text: str) -> int:
    """Float seconds or a Prometheus duration → milliseconds."""
    value = text.strip()
    try:
        seconds = float(value)
    except ValueError:
        seconds = None
    if seconds is not None:
        if not math.isfinite(seconds) or abs(seconds) > 9.2e15:
            raise ParamError(f'cannot parse "{text}" to a valid duration. It overflows int64')
        return round(seconds * 1000)
    match = _DURATION_RE.match(value)
    if not value or match is None or not any(match.groups()):
        raise ParamError(f'cannot parse "{text}" to a valid duration')
    return sum(int(g) * unit for g, unit in zip(match.groups(), _UNITS_MS, strict=True) if g)


def format_duration(ms: int) -> str:
    """A duration as Prometheus prints it (`5m`, `1h30m`, `0s`)."""
    if ms == 0:
        return "0s"
    out = []
    rest = ms
    for suffix, unit in (("y", _UNITS_MS[0]), ("w", _UNITS_MS[1]), ("d", _UNITS_MS[2]),
                         ("h", _UNITS_MS[3]), ("m", _UNITS_MS[4]), ("s", _UNITS_MS[5]),
                         ("ms", 1)):
        if rest >= unit:
            out.append(f"{rest // unit}{suffix}")
            rest %= unit
    return "".join(out)


def rfc3339(ms: int) -> str:
    """Go's RFC3339Nano rendering of a time.Time in UTC (trailing zeros dropped)."""
    seconds, millis = divmod(int(ms), 1000)
    base = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    frac = f".{millis:03d}".rstrip("0").rstrip(".") if millis else ""
    return f"{base}{frac}Z"


__all__ = [
    "MAX_TIME_MS",
    "MIN_TIME_MS",
    "ParamError",
    "format_duration",
    "parse_duration_ms",
    "parse_time_ms",
    "rfc3339",
]
