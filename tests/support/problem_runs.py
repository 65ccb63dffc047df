"""A Hotel Reservation-style problem deployed on a fresh twin and settled, ready to inject: the
start of every problem test that walks inject → symptom → gold → check."""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.problems.registry import PROBLEMS
from sregym.problems.run import ProblemRun


def deployed(problem_id: str, seed: int = 3) -> tuple[TwinCluster, ProblemRun]:
    """Deploy without noise, let it run 30 s, record the baseline the checks compare with."""
    cluster = TwinCluster.new(seed)
    run = ProblemRun(PROBLEMS.get(problem_id), cluster, seed=seed, noise="none")
    run.deploy()
    run.advance(30)
    run.record_baseline()
    return cluster, run
