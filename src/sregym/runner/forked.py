"""Attempts of a worker forked from a warm prefix of their app (issue 24: attempts start warm).

A worker runs many attempts one after another, and each used to deploy its app and run the
`baseline_s` healthy period from scratch, although that prefix depends only on (app, seed,
baseline_s) (`problems.warm_prefix`). Here a worker builds the prefix once and runs each attempt
in a forked child (`problems.warm.in_fork`) whose conductor continues from it. The twin is
deterministic, so the attempt computes exactly what it would from scratch; only the wall time
changes.

A worker keeps one prefix (the last key it needed), so its memory does not grow with the
number of seeds or apps. Whenever forking is not possible (another thread is running, no
`os.fork`), building the prefix fails (the fresh attempt then records why) or the child dies, the
caller runs the attempt as before.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

from sregym.problems.warm import ForkedRunFailed, can_fork, in_fork
from sregym.problems.warm_prefix import clear, has, share


def run_forked(problem_id: str, seed: int, baseline_s: float, attempt: Callable[[], str]) -> str | None:
    """`attempt()` run in a child forked from the warm prefix of `problem_id`'s app, or None when
    the caller must run it itself."""
    if not can_fork():
        return None
    try:
        from sregym.problems import get_problem

        problem = get_problem(problem_id)
        if not has(problem, seed, baseline_s):  # a prefix kept for another key goes first
            gc.unfreeze()
            clear()
            gc.collect()
        share(problem, seed, baseline_s)
    except Exception:
        return None
    try:
        return in_fork(attempt)
    except ForkedRunFailed:
        return None


__all__ = ["run_forked"]
