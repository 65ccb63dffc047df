"""The results store (atomic lines, resume selection, canonical order) and the summary maths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sregym.runner.plan import AttemptSpec, plan_attempts, seed_list, select_problem_ids
from sregym.runner.store import ResultsStore
from sregym.runner.summary import pass_hat_k, summarize


def _line(pid: str, seed: int, *, passed: bool, env: bool = False, diag: bool | None = None) -> dict:
    d = passed if diag is None else diag
    return {"problem_id": pid, "seed": seed, "passed": passed and not env, "environment_failure": env,
            "diagnosis": {"passed": d}, "mitigation": {"passed": passed}, "steps": 4, "tool_calls": 4,
            "tokens_in": None, "tokens_out": None, "wall_seconds": 1.0}


def test_plan_is_problem_major_with_distinct_seeds() -> None:
    plan = plan_attempts(["a/x-v1", "a/y-v1"], seed_list(3))
    assert [a.key for a in plan] == [("a/x-v1", 0), ("a/x-v1", 1), ("a/x-v1", 2),
                                     ("a/y-v1", 0), ("a/y-v1", 1), ("a/y-v1", 2)]
    with pytest.raises(ValueError):
        seed_list(0)


def test_selection_by_suite_and_unknown_id() -> None:
    ids = select_problem_ids(suite="demo")
    assert ids == sorted(ids) and ids and all(i.startswith("demo-shop/") for i in ids)
    with pytest.raises(KeyError):
        select_problem_ids(["demo-shop/no-such-problem-v1"])
    with pytest.raises(ValueError):
        select_problem_ids()


def test_trajectory_path_nests_the_app() -> None:
    spec = AttemptSpec(problem_id="demo-shop/bad-image-tag-v1", seed=3)
    assert spec.trajectory_path(Path("/r")) == Path("/r/trajectories/demo-shop/bad-image-tag-v1__3.jsonl")


def test_store_writes_trajectory_then_line_and_resumes_missing_and_env_failed(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    plan = plan_attempts(["a/x-v1"], [0, 1, 2])
    store.write_attempt(plan[1], _line("a/x-v1", 1, passed=True), [{"tool": "kubectl", "observation": "ok"}])
    store.write_attempt(plan[2], _line("a/x-v1", 2, passed=False, env=True), [])
    # A torn last line (killed mid-write on a broken disk) is ignored.
    with open(store.results_path, "a") as fh:
        fh.write('{"problem_id": "a/x-v1", "se')
    assert [a.seed for a in store.pending(plan)] == [0, 2]
    traj = plan[1].trajectory_path(tmp_path).read_text().splitlines()
    assert json.loads(traj[0]) == {"observation": "ok", "tool": "kubectl"}
    store.write_attempt(plan[2], _line("a/x-v1", 2, passed=True), [])
    store.write_attempt(plan[0], _line("a/x-v1", 0, passed=True), [])
    assert store.pending(plan) == []
    lines = store.compact(plan)
    assert [ln["seed"] for ln in lines] == [0, 1, 2]
    assert [json.loads(raw)["seed"] for raw in store.results_path.read_text().splitlines()] == [0, 1, 2]
    assert not any(ln["environment_failure"] for ln in lines)


def test_pass_hat_k_is_the_unbiased_estimate() -> None:
    lines = [_line("a/x-v1", s, passed=p) for s, p in enumerate([True, True, False])]
    lines += [_line("a/y-v1", s, passed=True) for s in range(3)]
    got = pass_hat_k(lines)
    # x: c=2,n=3 -> k1 2/3, k2 1/3, k3 0; y: all 1.
    assert got == {"1": round((2 / 3 + 1) / 2, 6), "2": round((1 / 3 + 1) / 2, 6), "3": 0.5}


def test_summary_rates_exclude_environment_failures_and_group_by_layer() -> None:
    lines = [_line("a/x-v1", 0, passed=True), _line("a/x-v1", 1, passed=False, diag=True),
             _line("a/y-v1", 0, passed=False, env=True), _line("a/y-v1", 1, passed=False)]
    s = summarize(lines, layers={"a/x-v1": ("config",), "a/y-v1": ("network", "config")}, agent="t", model=None,
                  noise="none", seeds=[0, 1], planned=5)
    assert s.overall.attempts == 4 and s.overall.environment_failures == 1
    assert s.overall.diagnosis == round(2 / 3, 6) and s.overall.end_to_end == round(1 / 3, 6)
    assert s.by_layer["network"].attempts == 2 and s.by_layer["network"].end_to_end == 0.0
    assert s.by_layer["config"].attempts == 4
    assert s.missing == 1 and s.mean_steps == 4.0 and s.mean_tokens_in is None
