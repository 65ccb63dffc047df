"""The ground truth of a problem from a run's own `--problems-dir`: the viewer loads the
directories `run.json` names when the registry does not know the id, and says so when it cannot."""

from __future__ import annotations

import json
import re
from pathlib import Path

from starlette.testclient import TestClient

from sregym.problems import PROBLEMS
from sregym.viewer import create_app

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _example_problem() -> tuple[str, str]:
    """The worked example of docs/problems.md (a problem that is not in the catalogue)."""
    text = (DOCS / "problems.md").read_text().split("<!-- docs-test: problem-example -->", 1)[1]
    code = re.match(r"\s*```python\n(.*?)\n```", text, re.S).group(1)
    return re.search(r'\bid="([^"]+)"', code).group(1), code


def _run_dir(path: Path, problem_id: str, problems_dirs: list[str]) -> Path:
    path.mkdir(parents=True)
    (path / "run.json").write_text(json.dumps({
        "problem_ids": [problem_id], "seeds": [0], "started_at": "2026-01-01T00:00:00Z", "finished_at": None,
        "worker": {"agent": "noop", "noise": "none", "problems_dirs": problems_dirs}}))
    line = {"problem_id": problem_id, "seed": 0, "agent": "noop", "passed": False, "layers": ["network"],
            "diagnosis": None, "mitigation": None, "environment_failure": False, "steps": 0}
    (path / "results.jsonl").write_text(json.dumps(line) + "\n")
    return path


def test_ground_truth_from_the_runs_problems_dir(tmp_path: Path) -> None:
    problem_id, code = _example_problem()
    assert problem_id not in PROBLEMS.names()
    # Not "my_problems": plug-in modules are named after the directory, and the docs test loads the
    # same example from a "my_problems" of its own in the same process.
    mine = tmp_path / "viewer_problems"
    mine.mkdir()
    (mine / "example_problem.py").write_text(code)
    gone = _run_dir(tmp_path / "runs" / "a-gone", problem_id, [str(tmp_path / "deleted")])
    _run_dir(tmp_path / "runs" / "b-mine", problem_id, [str(mine)])
    client = TestClient(create_app([tmp_path / "runs"]))
    try:
        params = {"problem": problem_id, "seed": 0}
        assert client.get(f"/api/runs/{gone.name}/attempt", params=params).json()["ground_truth"] is None
        view = client.get("/api/runs/b-mine/attempt", params=params).json()
        assert view["ground_truth"]["mechanism"] == "service_selector"
        assert view["ground_truth"]["root_causes"][0]["entity"]["name"] == "rate"
    finally:
        PROBLEMS._entries.pop(problem_id, None)
