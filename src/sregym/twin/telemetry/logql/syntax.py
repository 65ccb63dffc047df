"""The LogQL syntax tree: selectors, pipeline stages and metric expressions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sregym.twin.telemetry.logql.base import Labels
from sregym.twin.telemetry.logql.units import to_number
from sregym.twin.telemetry.regex import compile_anchored, compile_go
from sregym.twin.telemetry.tsdb import Matcher


@dataclass
class LineFilter:
    op: str
    values: list[str]  # `or`-chained alternatives

    def __post_init__(self) -> None:
        self._regexes = [compile_go(v) for v in self.values] if self.op in ("|~", "!~") else []

    def keep(self, line: str) -> bool:
        if self.op == "|=":
            return any(v in line for v in self.values)
        if self.op == "!=":
            return not any(v in line for v in self.values)
        hit = any(r.search(line) for r in self._regexes)
        return hit if self.op == "|~" else not hit


@dataclass
class Parser:
    kind: str  # json | logfmt
    params: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class LabelCmp:
    name: str
    op: str
    value: str
    numeric: float | None = None  # set for numeric comparisons

    def __post_init__(self) -> None:
        self._regex = compile_anchored(self.value) if self.op in ("=~", "!~") else None

    def test(self, labels: Labels) -> bool | None:
        """True/False, or None when the label does not convert (→ LabelFilterErr)."""
        actual = labels.get(self.name, "")
        if self.numeric is None:
            if self.op == "=":
                return actual == self.value
            if self.op == "!=":
                return actual != self.value
            assert self._regex is not None
            hit = self._regex.search(actual) is not None
            return hit if self.op == "=~" else not hit
        if "__error__" in labels:
            return True  # as Loki: after an error only string matchers can filter the line out
        if self.name not in labels:
            return False
        try:
            number = to_number(actual, self.value)
        except ValueError:
            return None
        return {"==": number == self.numeric, "=": number == self.numeric, "!=": number != self.numeric,
                ">": number > self.numeric, ">=": number >= self.numeric, "<": number < self.numeric,
                "<=": number <= self.numeric}[self.op]


@dataclass
class LabelBool:
    op: str  # and | or
    left: Any
    right: Any


@dataclass
class LabelFilter:
    expr: Any


@dataclass
class LineFormat:
    template: str


@dataclass
class LabelFormat:
    assignments: list[tuple[str, str, bool]]  # (dst, src or template, is_template)


@dataclass
class DropKeep:
    kind: str  # drop | keep
    names: list[str]


@dataclass
class Decolorize:
    pass


@dataclass
class LogExpr:
    matchers: list[Matcher]
    stages: list[Any]


@dataclass
class RangeAgg:
    func: str
    log: LogExpr
    range_ns: int
    offset_ns: int = 0


@dataclass
class VectorAgg:
    op: str
    inner: Any
    by: list[str] | None = None
    without: list[str] | None = None
    param: float | None = None


@dataclass
class BinOp:
    op: str
    left: Any
    right: Any


@dataclass
class Number:
    value: float
