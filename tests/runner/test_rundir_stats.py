"""The shared run-directory reader and the statistics the viewer and the report print."""

from __future__ import annotations

import json

import pytest

from sregym.runner.rundir import NotARunDirectory, find_runs, load_run
from sregym.runner.stats import bootstrap_rate, mcnemar_exact, paired, wilson
from sregym.runner.store import ResultsStore


def _line(pid: str, seed: int, passed: bool) -> dict:
    return {"problem_id": pid, "seed": seed, "passed": passed, "layers": ["app"], "agent": "noop",
            "diagnosis": {"passed": passed}, "mitigation": {"passed": passed}, "environment_failure": False}


def test_load_run_recomputes_a_summary_while_running_and_reads_trajectories(tmp_path):
    run = tmp_path / "runs" / "20261202-120000"
    store = ResultsStore(run)
    store.write_config({"problem_ids": ["x/b-v1", "x/a-v1"], "seeds": [0, 1], "worker": {"agent": "noop",
                        "noise": "none"}, "finished_at": None})
    (run / "trajectories" / "x").mkdir(parents=True)
    (run / "trajectories" / "x" / "a-v1__1.jsonl").write_text(json.dumps({"index": 0, "tool": "kubectl"}) + "\nnot json\n")
    with store.results_path.open("w") as fh:
        for line in (_line("x/a-v1", 1, True), _line("x/b-v1", 0, False), _line("x/a-v1", 0, False)):
            fh.write(json.dumps(line) + "\n")
    data = load_run(run)
    assert data.running and not data.summary_is_final
    assert [(ln["problem_id"], ln["seed"]) for ln in data.lines] == [("x/b-v1", 0), ("x/a-v1", 0), ("x/a-v1", 1)]
    assert data.summary.overall.end_to_end == pytest.approx(1 / 3, abs=1e-5)
    assert data.summary.missing == 1
    assert data.trajectory("x/a-v1", 1) == [{"index": 0, "tool": "kubectl"}]
    assert data.trajectory("x/a-v1", 0) == []
    assert find_runs([tmp_path / "runs"]) == [run]
    with pytest.raises(NotARunDirectory):
        load_run(tmp_path)


def test_intervals_and_the_paired_test():
    low = wilson(0, 10)
    assert low is not None and low.low == 0.0 and 0.27 < low.high < 0.28
    assert wilson(0, 0) is None
    assert mcnemar_exact(0, 6) == pytest.approx(0.03125)
    assert mcnemar_exact(3, 3) == 1.0
    interval = bootstrap_rate({"a": [True, True], "b": [False, False], "c": [True, False]})
    assert interval is not None and interval.estimate == pytest.approx(0.5) and interval.low < 0.5 < interval.high
    assert bootstrap_rate({"a": [True]}) == bootstrap_rate({"a": [True]})  # fixed-seed: reproducible
    a = {("p", 0): True, ("q", 0): True, ("r", 0): False, ("s", 0): True}
    b = {("p", 0): False, ("q", 0): True, ("r", 0): False, ("t", 0): True}
    result = paired(a, b)
    assert (result.pairs, result.a_only, result.b_only, result.both, result.neither) == (3, 1, 0, 1, 1)
    assert result.difference is not None and result.difference.estimate == pytest.approx(1 / 3)
