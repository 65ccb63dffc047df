"""What a run will do: the problems selected, the seeds, and the ordered list of attempts.

The plan is computed once, in the parent process, and is the canonical order of results: the
results file is rewritten in this order when a run ends, so the same plan gives the same file
whether attempts finished in this order (`-j 1`), in another (`-j N`), or across a resume.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class AttemptSpec(BaseModel):
    """One attempt: a problem and a seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    problem_id: str
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.problem_id, self.seed)

    def trajectory_path(self, out_dir: Path) -> Path:
        """`trajectories/<problem>__<seed>.jsonl`; a problem id's `app/` part is a sub-folder."""
        return out_dir / "trajectories" / f"{self.problem_id}__{self.seed}.jsonl"


def load_problem_dirs(dirs: Iterable[str | Path]) -> None:
    """Register the problems of every `--problems-dir` (also needed in each spawned worker)."""
    from sregym.problems import load_problems_dir

    for d in dirs:
        load_problems_dir(d)


def select_problem_ids(problem_ids: Iterable[str] = (), *, suite: str | None = None,
                       tag: str | None = None) -> list[str]:
    """Explicit ids (validated, in the order given, duplicates dropped), or else every problem in
    `suite` and/or with `tag`, sorted by id. Raises `KeyError` for an unknown id and `ValueError`
    when the selection is empty, with a message saying what to do."""
    from sregym.problems import get_problem, select

    ids = list(dict.fromkeys(problem_ids))
    for pid in ids:
        get_problem(pid)
    if not ids:
        if suite is None and tag is None:
            raise ValueError("no problems selected: name ids with --problem, or use --suite / --tag")
        ids = [p.id for p in select(tag=tag, suite=suite)]
        if not ids:
            raise ValueError(f"no problem matches suite={suite!r} tag={tag!r} (see `sregym list problems`)")
    return ids


def seed_list(count: int, base: int = 0) -> list[int]:
    """`count` distinct seeds, `base`, `base+1`, ...: attempt k of every problem uses the same
    seed, so pass^k compares agents on identical environments."""
    if count < 1:
        raise ValueError("--seeds must be at least 1")
    return [base + i for i in range(count)]


def plan_attempts(problem_ids: Iterable[str], seeds: Iterable[int]) -> list[AttemptSpec]:
    seeds = list(seeds)
    return [AttemptSpec(problem_id=pid, seed=s) for pid in problem_ids for s in seeds]


__all__ = ["AttemptSpec", "load_problem_dirs", "plan_attempts", "seed_list", "select_problem_ids"]
