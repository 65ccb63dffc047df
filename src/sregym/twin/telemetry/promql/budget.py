"""A query's budget: the samples it may load and the wall time it may take.

Prometheus bounds every query with `--query.max-samples` (samples held in memory at once) and
`--query.timeout`, and fails it with its own errors: `query processing would load too many samples
into memory in query execution` (execution, 422) and `query timed out in expression evaluation`
(timeout, 503). The engine charges samples where it loads them (vector selectors, range windows,
subquery steps) *before* materialising them, and checks the deadline at every node and series, so
a query such as `max_over_time(x[1y:1s])` fails fast instead of allocating gigabytes.

The twin counts samples loaded over the whole evaluation (a little stricter than Prometheus' peak
count), counts what a range vector holds besides its samples (a slot per step and series, so
`x[1m]` stepped a million times is a million-sample load even where `x` is sparse, and each
non-empty window as `WINDOW_COST` samples), and its default limits are lower than Prometheus'
(the evaluator is Python): about 16 bytes a sample, so a query holds at most a few hundred MB. The deadline
is the one wall-clock reading in query evaluation; results never depend on it, only whether a
query finishes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sregym.twin.telemetry.promql.errors import PromQLError

# Defaults served by the twin's Prometheus API (also reported by /api/v1/status/flags).
DEFAULT_MAX_SAMPLES = 10_000_000
DEFAULT_TIMEOUT_S = 20.0


def too_many_samples() -> PromQLError:
    return PromQLError("execution",
                       "query processing would load too many samples into memory in query execution")


def timed_out() -> PromQLError:
    return PromQLError("timeout", "query timed out in expression evaluation")


class Budget:
    """Samples and time left for one query. `None` limits are unbounded (the twin's own rule
    evaluation uses an unbounded budget; the HTTP API always passes limits)."""

    def __init__(self, max_samples: int | None = None, timeout_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_samples = max_samples
        self.samples = 0
        self._clock = clock
        self.deadline = None if timeout_s is None else clock() + timeout_s

    def check_time(self) -> None:
        if self.deadline is not None and self._clock() >= self.deadline:
            raise timed_out()

    def charge(self, samples: int) -> None:
        """Account for `samples` about to be loaded; fail before they are."""
        self.samples += samples
        if self.max_samples is not None and self.samples > self.max_samples:
            raise too_many_samples()
        self.check_time()

    def allows(self, samples: int) -> bool:
        return self.max_samples is None or self.samples + samples <= self.max_samples


__all__ = ["DEFAULT_MAX_SAMPLES", "DEFAULT_TIMEOUT_S", "Budget", "timed_out",
           "too_many_samples"]
