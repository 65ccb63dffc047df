"""Problems: the frozen spec, the `@problem` registry, the lifecycle driver and the check protocol.

Write a problem in one short file::

    from sregym.problems import problem, Problem
    @problem
    def my_problem() -> Problem:
        \"\"\"The problem card.\"\"\"
        return Problem(id="demo-shop/my-problem-v1", ...)
"""

from __future__ import annotations

from sregym.problems.model import Action, CheckSpec, FaultSpec, Limits, MitigationSpec, Problem, Tags
from sregym.problems.registry import (
    PROBLEMS,
    all_problem_ids,
    get_problem,
    load_problems_dir,
    problem,
    select,
)

__all__ = ["PROBLEMS", "Action", "CheckSpec", "FaultSpec", "Limits", "MitigationSpec", "Problem", "Tags",
           "all_problem_ids", "get_problem", "load_problems_dir", "problem", "select"]
