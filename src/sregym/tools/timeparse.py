"""Times and durations as agents write them: "now", "now-15m", "30m" (ago), RFC 3339, Unix.

Relative times resolve against the simulated clock, so an agent never needs to know the
simulated epoch to ask for "the last half hour".
"""

from __future__ import annotations

import re

from sregym.twin.clock import parse_time as parse_rfc3339

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")


class TimeParseError(ValueError):
    """A time or duration the tools cannot read, with the accepted forms."""


def parse_duration_s(text: str) -> float:
    """'90s', '15m', '1h30m', '500ms' or plain seconds → seconds."""
    raw = str(text).strip().lower()
    if not raw:
        raise TimeParseError("empty duration: use forms like 30s, 15m, 1h")
    try:
        return float(raw)
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for match in _DURATION.finditer(raw):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(raw) or pos == 0:
        raise TimeParseError(f"cannot read duration {text!r}: use forms like 30s, 15m, 1h, 1h30m")
    return total


def parse_time(text: str, now: float) -> float:
    """An absolute or relative time → Unix seconds (relative to `now`)."""
    raw = str(text).strip()
    lowered = raw.lower()
    if lowered in ("", "now"):
        return now
    if lowered.startswith("now-"):
        return now - parse_duration_s(lowered[4:])
    if lowered.startswith("-"):
        return now - parse_duration_s(lowered[1:])
    try:
        return float(raw)
    except ValueError:
        pass
    if _DURATION.fullmatch(lowered) or re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+", lowered):
        return now - parse_duration_s(lowered)
    try:
        return parse_rfc3339(raw)
    except ValueError:
        raise TimeParseError(f"cannot read time {text!r}: use RFC 3339, Unix seconds, 'now', "
                             f"'now-15m' or '15m' (ago)") from None


__all__ = ["TimeParseError", "parse_duration_s", "parse_time"]
