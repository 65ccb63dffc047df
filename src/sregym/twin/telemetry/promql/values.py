"""Intermediate values during evaluation, one slot per evaluation step.

Like Prometheus' range evaluation, every node is evaluated over all steps at once: an instant
vector is a list of series each holding one optional value per step (None = no sample at that
step), a scalar holds one float per step. Range vectors only exist as function arguments and as
the top-level result of an instant query, so they are kept as per-series sample lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
