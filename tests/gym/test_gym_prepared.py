"""Prepared twins for warm resets: one per (problem, seed, options), reused, the oldest evicted."""

from __future__ import annotations

from sregym.gym.episode import PreparedTwins
from sregym.problems import get_problem

SELECTOR = "demo-shop/service-selector-mismatch-v1"


def test_prepared_twins_are_reused_per_key_and_the_oldest_goes() -> None:
    problem = get_problem(SELECTOR)
    twins = PreparedTwins(capacity=1)
    try:
        first = twins.get(problem, 1, {"fixed_time": True})
        assert twins.get(problem, 1, {"fixed_time": True}) is first  # same key: no second twin
        assert not first.finished  # prepared, never started
        second = twins.get(problem, 2, {"fixed_time": True})
        assert second is not first and second.seed == 2
        # capacity 1: the seed-1 twin was evicted, so asking again prepares a new one
        assert twins.get(problem, 1, {"fixed_time": True}) is not first
    finally:
        twins.clear()
