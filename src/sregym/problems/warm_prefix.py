"""A deployed app with its healthy baseline period already run, shared by attempts forked from it.

Every live attempt (`env.Conductor`) and every snapshot export begins the same way: a fresh twin
with the seed, the app deployed until ready, `baseline_s` of healthy traffic. Only then does the
problem matter (baseline recorded, noise started, faults injected). The twin is deterministic, so
that prefix depends on nothing but (app, seed, baseline_s); for a batch of problems on one app it
was most of the cost of each attempt (issue 24: attempts start from warm state).

`share(app, seed, baseline_s)` builds the prefix once in this process. Afterwards
`shared_run(problem, seed, noise, baseline_s)` hands a `ProblemRun` over that cluster to the
conductor or the exporter — but only inside a process forked after `share` (`warm.in_fork`): the
attempt mutates the cluster, and each forked child mutates its own copy. In the process that built
it, and wherever nothing was shared, `shared_run` returns None and the caller deploys from
scratch as before, so nothing changes for a plain run.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sregym.cluster.twin import TwinCluster
from sregym.problems.model import Problem
from sregym.problems.run import ProblemRun
from sregym.problems.warm import can_fork, in_fork

T = TypeVar("T")


@dataclass(frozen=True)
class Prefix:
    """A cluster of one app right after `baseline_s` of healthy traffic."""

    cluster: TwinCluster
    ready_time: float  # simulated time at which the app became ready (the healthy period's start)
    owner_pid: int  # the process that built it: never handed out there


_SHARED: dict[tuple[str, int, float], Prefix] = {}


def share(problem: Problem, seed: int, baseline_s: float) -> Prefix:
    """Build (once) the prefix of `problem`'s app for `seed` and `baseline_s`. Call it only in a
    single-threaded process that forks its attempts."""
    key = (problem.app, int(seed), float(baseline_s))
    prefix = _SHARED.get(key)
    if prefix is None:
        cluster = TwinCluster.new(seed)
        run = ProblemRun(problem, cluster, seed=seed)
        run.deploy()
        ready = float(cluster.now())
        run.advance(baseline_s)
        prefix = _SHARED[key] = Prefix(cluster=cluster, ready_time=ready, owner_pid=os.getpid())
        # Shared by every fork: out of the collector's reach, so children do not copy it by collecting.
        gc.collect()
        gc.freeze()
    return prefix


def shared_run(problem: Problem, seed: int, noise: str | None, baseline_s: float) -> tuple[ProblemRun, float] | None:
    """(run over the shared prefix, ready time) in a forked child of the process that shared it;
    None when there is none to continue from."""
    prefix = _SHARED.get((problem.app, int(seed), float(baseline_s)))
    if prefix is None or prefix.owner_pid == os.getpid():
        return None
    return ProblemRun(problem, prefix.cluster, seed=seed, noise=noise), prefix.ready_time


def has(problem: Problem, seed: int, baseline_s: float) -> bool:
    return (problem.app, int(seed), float(baseline_s)) in _SHARED


def clear() -> None:
    _SHARED.clear()


def run_forked(problem: Problem, seed: int, baseline_s: float, fn: Callable[[], T]) -> T | None:
    """`fn()` (which must not return None) in a child forked from the prefix of `problem`'s app,
    built here on first use; None when the caller must run it itself: forking is not possible
    (another thread runs, no `os.fork`), building the prefix failed (a fresh run then says why)
    or the child raised or died. One prefix is kept (the last key), so memory does not grow with
    the number of seeds or apps."""
    if not can_fork():
        return None
    try:
        if not has(problem, seed, baseline_s):  # a prefix kept for another key goes first
            gc.unfreeze()
            clear()
            gc.collect()
        share(problem, seed, baseline_s)
        return in_fork(fn)
    except Exception:  # ForkedRunFailed included
        return None


__all__ = ["Prefix", "clear", "has", "run_forked", "share", "shared_run"]
