"""`support.forked_attempts`: a module's attempts run in one child, each forked from its app's warm
prefix, and a case that raises fails alone, with the child's traceback."""

from __future__ import annotations

import json

import pytest

from support.forked_attempts import run_attempts

PROBLEM = "demo-shop/bad-image-tag-v1"
SEED = 0
BASELINE_S = 10.0


def probe(problem_id: str, mode: str) -> str:
    """Run in the child: whether a conductor here would continue from the shared prefix."""
    import os

    from sregym.problems import get_problem
    from sregym.problems.warm_prefix import shared_run

    if mode == "raise":
        raise ValueError("this case breaks")
    shared = shared_run(get_problem(problem_id), SEED, "none", BASELINE_S)
    return json.dumps({"shared": shared is not None, "pid": os.getpid()})


def test_each_case_forks_from_the_prefix_and_a_raising_case_fails_alone() -> None:
    results = run_attempts(__file__, "probe", [(PROBLEM, "a"), (PROBLEM, "raise"), (PROBLEM, "b")], seed=SEED,
                           baseline_s=BASELINE_S)
    first, second = json.loads(results[PROBLEM, "a"]), json.loads(results[PROBLEM, "b"])
    assert first["shared"] and second["shared"]
    assert first["pid"] != second["pid"]  # each case in its own fork
    with pytest.raises(RuntimeError, match="this case breaks"):
        results[PROBLEM, "raise"]
