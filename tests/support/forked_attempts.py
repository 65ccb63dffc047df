"""Many conductor attempts of one test module, run in one child process and forked from warm prefixes.

A test that puts agents in front of problems through `env.Conductor` deploys the app and runs
its healthy baseline period afresh for every attempt when it runs in an xdist worker: the worker
runs a receiver thread, so it may not fork (`problems/warm.py`). That prefix depends only on
(app, seed, baseline_s), and for a module of many attempts on one app it is a large share of the
cost. A child started here is single-threaded: it builds each app's prefix once
(`problems.warm_prefix.share`) and runs every attempt in its own fork, where the conductor
continues from the prefix instead of deploying (`warm_prefix.shared_run`). What an attempt
computes from there on is what a fresh attempt computes: the twin is deterministic and the prefix
does not depend on the problem (the runner relies on the same fact for its workers).

`run_attempts(module_file, function, cases, seed=..., baseline_s=...)` loads `module_file` in the
child, calls `function(*case)` there for each `(problem_id, *case)` in `cases` (the function must
return something JSON-serialisable, typically an `AttemptResult`'s `model_dump_json()`), and
returns {case: result} in the parent (reading a case whose call raised raises, with the child's
traceback).

Run as a script: `python forked_attempts.py SPEC.json OUT.json`.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

Case = tuple[str, ...]  # (problem_id, further arguments as strings)


def run_attempts(module_file: str | Path, function: str, cases: list[Case], *, seed: int,
                 baseline_s: float) -> dict[Case, Any]:
    """{case: function(*case) as computed in a forked child of the case's app prefix}."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.json"
        out = Path(tmp) / "out.json"
        spec.write_text(json.dumps({"module": str(Path(module_file).resolve()), "function": function,
                                    "cases": [list(c) for c in cases], "seed": seed, "baseline_s": baseline_s,
                                    "path": str(Path(__file__).resolve().parents[1])}))
        proc = subprocess.run([sys.executable, __file__, str(spec), str(out)], capture_output=True, text=True,
                              timeout=3600)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"forked attempts failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        results = json.loads(out.read_text())
    return Outcomes({tuple(case): value for case, value in zip(cases, results, strict=True)})


class Outcomes(dict):  # type: ignore[type-arg]
    """{case: value}; reading a case whose attempt raised in the child raises, with the child's
    traceback, so that case's test fails and the others still read theirs."""

    def __getitem__(self, case: Case) -> Any:
        value = super().__getitem__(case)
        if isinstance(value, dict) and set(value) == {_RAISED}:
            raise RuntimeError(f"the attempt {case} raised in the child:\n{value[_RAISED]}")
        return value


_RAISED = "forked_attempts: raised"


# ------------------------------------------------------------------------- the child's side
def _child(spec: dict[str, Any]) -> list[Any]:
    sys.path.insert(0, spec["path"])
    from sregym.problems import get_problem
    from sregym.problems.warm import ForkedRunFailed, in_fork
    from sregym.problems.warm_prefix import share

    loader = importlib.util.spec_from_file_location("forked_attempts_target", spec["module"])
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    function = getattr(module, spec["function"])
    seed, baseline_s = int(spec["seed"]), float(spec["baseline_s"])
    results = []
    for case in spec["cases"]:
        share(get_problem(case[0]), seed, baseline_s)
        try:
            results.append(in_fork(lambda c=case: function(*c)))
        except ForkedRunFailed as exc:  # this case's test fails with the reason; the others go on
            results.append({_RAISED: str(exc)})
    return results


if __name__ == "__main__":
    spec_path, out_path = sys.argv[1:]
    Path(out_path).write_text(json.dumps(_child(json.loads(Path(spec_path).read_text()))))
