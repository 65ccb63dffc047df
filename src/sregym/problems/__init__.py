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
from sregym.problems.validation import ProblemValidationError
from sregym.problems.vocabulary import mechanisms, vocabulary_of

__all__ = ["PROBLEMS", "Action", "CheckSpec", "FaultSpec", "Limits", "MitigationSpec", "Problem",
           "ProblemValidationError", "Tags", "all_problem_ids", "get_problem", "load_problems_dir", "mechanisms",
           "problem", "select", "vocabulary_of"]
