"""Intermediate values during evaluation, one slot per evaluation step.

Like Prometheus' range evaluation, every node is evaluated over all steps at once: an instant
vector is a list of series each holding one optional value per step (None = no sample at that
step), a scalar holds one float per step. Range vectors only exist as function arguments and as
the top-level result of an instant query, so they are kept as per-series sample lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sregym.twin.telemetry.promql.errors import PromQLError

Labels = dict[str, str]
LabelKey = tuple[tuple[str, str], ...]


def key_of(labels: Labels) -> LabelKey:
    return tuple(sorted(labels.items()))


def without_name(labels: Labels) -> Labels:
    if "__name__" not in labels:
        return labels
    return {k: v for k, v in labels.items() if k != "__name__"}


@dataclass
class Ctx:
    """The steps a node is evaluated at, plus the query's own start/end (for start()/end())."""

    times: list[int]
    query_start: int
    query_end: int

    @property
    def n(self) -> int:
        return len(self.times)


@dataclass
class VSeries:
    labels: Labels
    vals: list[float | None]


@dataclass
class Vec:
    series: list[VSeries] = field(default_factory=list)


@dataclass
class Scal:
    vals: list[float]


@dataclass
class Str:
    value: str


@dataclass
class MSeries:
    """A range-vector series: its samples (staleness markers removed)."""

    labels: Labels
    times: list[int]
    vals: list[float]


@dataclass
class Windows:
    """A range vector evaluated at every step: per series, per step, the samples in the window.

    `start`/`end` are the per-step window bounds (ms), needed by rate-style extrapolation.
    """

    series: list[tuple[Labels, list[tuple[list[int], list[float]]]]]
    starts: list[int]
    ends: list[int]
    range_ms: int

def check_duplicates(vec: Vec, ctx: Ctx) -> None:
    """Prometheus refuses a result vector holding two series with one labelset at one step."""
    if len(vec.series) < 2:
        return
    # A label set as a frozenset of its items: equal exactly when the label sets are, and cheaper
    # than sorting them (this runs on every function result, thousands of histogram buckets).
    keys = [frozenset(s.labels.items()) for s in vec.series]
    if len(set(keys)) == len(keys):
        return
    by_key: dict[frozenset[tuple[str, str]], list[VSeries]] = {}
    for k, s in zip(keys, vec.series, strict=True):
        by_key.setdefault(k, []).append(s)
    for group in by_key.values():
        if len(group) < 2:
            continue
        for i in range(ctx.n):
            if sum(1 for s in group if s.vals[i] is not None) > 1:
                raise PromQLError("execution", "vector cannot contain metrics with the same labelset")
    merged: list[VSeries] = []
    seen: dict[frozenset[tuple[str, str]], VSeries] = {}
    for k, s in zip(keys, vec.series, strict=True):
        if k in seen:
            base = seen[k]
            base.vals = [a if a is not None else b for a, b in zip(base.vals, s.vals, strict=True)]
        else:
            copy = VSeries(s.labels, list(s.vals))
            seen[k] = copy
            merged.append(copy)
    vec.series = merged
