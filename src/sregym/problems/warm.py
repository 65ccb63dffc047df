"""Warm starts: deploy an app once per (app, seed) and run each problem from a copy of it.

Every run of every problem on one app begins the same way: a fresh twin with the seed, the app
deployed until ready, a 30 s warm-up. The twin is deterministic, so that prefix is the same
state for all of them, and recomputing it for each of the three runs of each problem was a third
of `sregym check --all`. A warm start computes it once and hands each run its own copy.

The copy is made with `os.fork()`: the twin holds running container programs (Python generators
parked in `Sleep`), which no deep copy or pickle can duplicate, but a forked child inherits them
as they are. The child runs the rest of the problem and sends back a small picklable result over
a pipe. Forking is only safe when the process has a single thread (a lock held by another thread
would stay locked in the child forever), so `can_fork()` gates it and callers fall back to fresh
runs otherwise (e.g. under pytest-xdist, whose workers run a receiver thread).

The prefix is only computed once, so its determinism is checked where it is built: a warm start
is built twice from scratch and the two must have identical fingerprints (`WarmStart.deterministic`).
A caller that proves it elsewhere (the test suite's registry batch checks each app's warm-up in
one child, not in every child) asks for `verify=False`; the check is then not made, and says so
(`deterministic` is None), until a later caller asks for it.
"""

from __future__ import annotations

import gc
import os
import pickle
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sregym.cluster.twin import TwinCluster
from sregym.problems.model import Problem
from sregym.problems.run import ProblemRun

WARMUP_S = 30.0
T = TypeVar("T")


def can_fork() -> bool:
    """True when `os.fork()` is available and safe (only this thread is running)."""
    return hasattr(os, "fork") and threading.active_count() == 1


def prepare(problem: Problem, cluster: TwinCluster, seed: int, *, noise: str | None = "none") -> ProblemRun:
    """Deploy the problem's app on a fresh cluster and warm it up: the shared prefix of every run.
    `noise` is the profile the run starts later (None: the problem's); none runs before then."""
    run = ProblemRun(problem, cluster, seed=seed, noise=noise)
    run.deploy()
    run.advance(WARMUP_S)
    return run


@dataclass
class WarmStart:
    """A deployed, warmed-up cluster of one app and seed, ready to be forked."""

    app: str
    seed: int
    cluster: TwinCluster
    deterministic: bool | None  # None: not checked (built once)

    def run_for(self, problem: Problem, *, noise: str | None = None) -> ProblemRun:
        """A ProblemRun of `problem` that continues from the warm state (use it in a fork only:
        it mutates the shared cluster)."""
        return ProblemRun(problem, self.cluster, seed=self.seed, noise=noise)


_CACHE: dict[tuple[str, int], WarmStart] = {}


def warm_start(problem: Problem, seed: int, *, verify: bool = True) -> WarmStart:
    """The warm start of `problem`'s app for `seed`, built on first use and kept for the life of
    the process. With `verify` it is built twice from scratch and the two compared (once: a later
    call reuses the verdict); without, it is built once and `deterministic` stays None."""
    key = (problem.app, seed)
    cached = _CACHE.get(key)
    if cached is None:
        first = prepare(problem, TwinCluster.new(seed), seed).cluster
        cached = WarmStart(app=problem.app, seed=seed, cluster=first, deterministic=None)  # type: ignore[arg-type]
        _CACHE[key] = cached
        if verify:
            _verify(cached, problem)
        # Objects that exist now are shared by every fork; keeping them out of the collector's
        # reach stops each child's garbage collections from touching (and so copying) them.
        gc.collect()
        gc.freeze()
    elif verify and cached.deterministic is None:
        _verify(cached, problem)
    return cached


def _verify(warm: WarmStart, problem: Problem) -> None:
    """Build the prefix a second time from scratch and compare the fingerprints."""
    second = prepare(problem, TwinCluster.new(warm.seed), warm.seed).cluster
    warm.deterministic = warm.cluster.fingerprint() == second.fingerprint()  # type: ignore[attr-defined]


def clear_cache() -> None:
    _CACHE.clear()


class ForkedRunFailed(RuntimeError):
    """The forked child raised: its traceback is the message."""


def in_fork(fn: Callable[[], T]) -> T:
    """Run `fn` in a forked child and return its (picklable) result; the parent's state is
    untouched whatever the child does."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into the caller's stack, never run atexit handlers
        status = 0
        try:
            os.close(read_fd)
            try:
                payload: tuple[bool, Any] = (True, fn())
            except BaseException:
                payload = (False, traceback.format_exc())
            data = pickle.dumps(payload)
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as source:
        data = source.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise ForkedRunFailed(f"forked run died without a result (wait status {status})")
    ok, value = pickle.loads(data)
    if not ok:
        raise ForkedRunFailed(value)
    return value  # type: ignore[no-any-return]


__all__ = ["WARMUP_S", "ForkedRunFailed", "WarmStart", "can_fork", "clear_cache", "in_fork", "prepare",
           "warm_start"]
