"""Go `time.ParseDuration` and the quantity strings Chaos Mesh specs carry.

Chaos Mesh CRs write durations the Go way (`30s`, `1m30s`, `100ms`, `-10m100ns`), rates the tc
way (`1mbps`) and sizes the stress-ng way (`256MB`, `50%`); parsing them exactly as the real
controller does keeps a CR that works on a real cluster meaning the same thing in the twin.
"""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str | int | float | None) -> float | None:
    """Seconds for a Go duration string; None when absent or malformed."""
    if text is None or text == "":
        return None
    if isinstance(text, int | float):
        return float(text)
    raw = str(text).strip()
    sign = 1.0
    if raw[:1] in "+-":
        sign = -1.0 if raw[0] == "-" else 1.0
        raw = raw[1:]
    if raw == "0":
        return 0.0
    total, pos = 0.0, 0
    while pos < len(raw):
        match = _PART.match(raw, pos)
        if match is None:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total if pos else None


# tc rate units: `bit`-suffixed units are bits per second, `bps`-suffixed are bytes per second.
_RATE = {"bit": 1 / 8, "kbit": 1e3 / 8, "mbit": 1e6 / 8, "gbit": 1e9 / 8, "tbit": 1e12 / 8,
         "bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}


def parse_rate(text: str | None) -> float | None:
    """Bytes per second for a tc rate such as `1mbps` (bytes) or `10mbit` (bits)."""
    if not text:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if match is None:
        return None
    unit = match.group(2).lower() or "bit"
    factor = _RATE.get(unit)
    return float(match.group(1)) * factor if factor is not None else None


_SIZE = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
         "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40,
         "tib": 1 << 40}


def parse_size(text: str | int | None, total: int) -> int:
    """Bytes for a memory stressor size: `256MB` (stress-ng units are binary) or `50%` of `total`."""
    if text is None or text == "":
        return 0
    raw = str(text).strip()
    if raw.endswith("%"):
        try:
            return int(total * float(raw[:-1]) / 100)
        except ValueError:
            return 0
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)", raw)
    if match is None:
        return 0
    factor = _SIZE.get(match.group(2).lower())
    return int(float(match.group(1)) * factor) if factor is not None else 0


def parse_percent(text: str | int | float | None, default: float = 0.0) -> float:
    """A Chaos Mesh percentage string (`"25"`, `"25.5"`) as a fraction in [0, 1]."""
    if text is None or text == "":
        return default
    try:
        return max(0.0, min(1.0, float(text) / 100.0))
    except (TypeError, ValueError):
        return default
