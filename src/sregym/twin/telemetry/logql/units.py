"""Durations (`5m`, `1h30m`) and byte sizes (`10KB`, `1MiB`) as LogQL literals and label filters read them."""

from __future__ import annotations

import re

from sregym.twin.telemetry.logql.base import NS_PER_MS

_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": NS_PER_MS, "s": 1_000_000_000,
                   "m": 60_000_000_000, "h": 3_600_000_000_000, "d": 86_400_000_000_000,
                   "w": 7 * 86_400_000_000_000, "y": 365 * 86_400_000_000_000}
_BYTE_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4, "kib": 1024,
               "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "k": 1000, "m": 1000**2, "g": 1000**3,
               "ki": 1024, "mi": 1024**2, "gi": 1024**3}


def parse_duration_ns(text: str) -> int:
    total = 0
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w|y)", text):
        total += round(float(amount) * _DURATION_UNITS[unit])
    return total


def parse_bytes(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([A-Za-z]*)", text)
    if not m:
        raise ValueError(text)
    unit = m.group(2).lower()
    if unit.endswith("b") and unit != "b":
        unit = unit[:-1] + "b" if unit[:-1] in ("k", "m", "g", "t", "ki", "mi", "gi", "ti") else unit
    factor = _BYTE_UNITS.get(unit) or _BYTE_UNITS.get(unit.rstrip("b")) or 1
    return float(m.group(1)) * factor



def to_number(text: str, kind: str) -> float:
    if kind == "DURATION":
        if re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+", text):
            return parse_duration_ns(text) / 1e9
        return float(text)
    if kind == "BYTES":
        return parse_bytes(text)
    return float(text)
