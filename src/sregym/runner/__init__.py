"""The benchmark runner: many attempts of one agent, in parallel, into a resumable results dir."""

from __future__ import annotations

from sregym.runner.plan import AttemptSpec, plan_attempts, seed_list, select_problem_ids
from sregym.runner.run import run
from sregym.runner.store import ResultsStore
from sregym.runner.summary import Summary, render_table, summarize

__all__ = ["AttemptSpec", "ResultsStore", "Summary", "plan_attempts", "render_table", "run",
           "seed_list", "select_problem_ids", "summarize"]
