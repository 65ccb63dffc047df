"""Query results and their Prometheus HTTP API encoding.

Kept separate from evaluation so the HTTP layer (and tests) depend only on this small shape:
`Result.type` is one of vector|matrix|scalar|string and `to_api()` returns exactly the `data`
object of `/api/v1/query` and `/api/v1/query_range`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

Labels = dict[str, str]


def format_value(v: float) -> str:
    """Go's strconv.FormatFloat(v, 'f', -1, 64): shortest round-trip digits, never an exponent."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    text = format(Decimal(repr(v)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_time(t_ms: int) -> int | float:
    """Seconds as Prometheus writes them: an integer when whole, else with millisecond fraction."""
    return t_ms // 1000 if t_ms % 1000 == 0 else t_ms / 1000


@dataclass
class Sample:
    labels: Labels
    t_ms: int
    value: float


@dataclass
class SeriesPoints:
    labels: Labels
    points: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class Result:
    """`value` is list[Sample] (vector), list[SeriesPoints] (matrix), Sample (scalar, no labels)
    or (t_ms, str) (string)."""

    type: str
    value: Any
    warnings: list[str] = field(default_factory=list)

    def to_api(self) -> dict[str, Any]:
        if self.type == "vector":
            result: Any = [{"metric": dict(s.labels), "value": [format_time(s.t_ms), format_value(s.value)]}
                           for s in self.value]
        elif self.type == "matrix":
            result = [{"metric": dict(s.labels),
                       "values": [[format_time(t), format_value(v)] for t, v in s.points]}
                      for s in self.value]
        elif self.type == "scalar":
            result = [format_time(self.value.t_ms), format_value(self.value.value)]
        else:
            t_ms, text = self.value
            result = [format_time(t_ms), text]
        return {"resultType": self.type, "result": result}
