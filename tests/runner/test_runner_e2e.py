"""`sregym run` end to end on a small problem set: gold scores 100 %, noop 0 %, results are
deterministic (same seeds, `-j 2` vs `-j 1`), and a run killed midway then resumed ends with
the same results as an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.env import AttemptConfig
from sregym.runner import run

PROBLEMS = ["demo-shop/bad-image-tag-v1", "demo-shop/service-selector-mismatch-v1"]
WALL_KEYS = ("wall_seconds",)


def _lines(out: Path) -> list[dict]:
    lines = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    for line in lines:
        for key in WALL_KEYS:
            line.pop(key)
    return lines


def _first_difference(a: list[dict], b: list[dict]) -> str:
    for x, y in zip(a, b, strict=False):
        if x != y:
            keys = sorted(k for k in x.keys() | y.keys() if x.get(k) != y.get(k))
            return f"{x['problem_id']} seed {x['seed']}: " + "; ".join(f"{k}: {x.get(k)!r} != {y.get(k)!r}" for k in keys)
    return f"{len(a)} lines vs {len(b)}"


def _trajectories(out: Path) -> dict[str, str]:
    root = out / "trajectories"
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.jsonl"))}


@pytest.fixture(scope="module")
def gold_j1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gold-j1")
    run(PROBLEMS, agent="gold", seeds=2, jobs=1, out_dir=out, progress=False)
    return out


def test_gold_scores_everything(gold_j1: Path) -> None:
    lines = _lines(gold_j1)
    assert [(ln["problem_id"], ln["seed"]) for ln in lines] == [(p, s) for p in PROBLEMS for s in (0, 1)]
    assert all(ln["passed"] and ln["diagnosis"]["passed"] and ln["mitigation"]["passed"] for ln in lines)
    assert not any(ln["environment_failure"] for ln in lines)
    summary = json.loads((gold_j1 / "summary.json").read_text())
    assert summary["overall"]["end_to_end"] == 1.0 and summary["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert set(summary["by_layer"]) == {"config", "network"}
    # Every attempt has its full trajectory, one JSON object per tool call.
    traj = _trajectories(gold_j1)
    assert sorted(traj) == sorted(f"{p}__{s}.jsonl" for p in PROBLEMS for s in (0, 1))
    for text in traj.values():
        steps = [json.loads(raw) for raw in text.splitlines()]
        assert steps and steps[-1]["tool"] == "submit_mitigation_done"
        assert any(s["tool"] == "submit_diagnosis" for s in steps)


def test_noop_scores_nothing(tmp_path: Path) -> None:
    summary = run(PROBLEMS, agent="noop", seeds=1, out_dir=tmp_path, progress=False)
    assert summary.overall.attempts == 2 and summary.overall.environment_failures == 0
    assert summary.overall.end_to_end == 0.0 and summary.overall.diagnosis == 0.0
    assert not any(ln["passed"] for ln in _lines(tmp_path))


def test_same_seeds_same_results_and_parallel_equals_serial(gold_j1: Path, tmp_path: Path) -> None:
    again, parallel = tmp_path / "again", tmp_path / "j2"
    run(PROBLEMS, agent="gold", seeds=2, jobs=1, out_dir=again, progress=False)
    run(PROBLEMS, agent="gold", seeds=2, jobs=2, out_dir=parallel, progress=False)
    assert _lines(again) == _lines(gold_j1), _first_difference(_lines(again), _lines(gold_j1))
    assert _lines(parallel) == _lines(gold_j1), _first_difference(_lines(parallel), _lines(gold_j1))
    assert _trajectories(parallel) == _trajectories(gold_j1) == _trajectories(again)


def test_killed_run_resumes_to_the_uninterrupted_result(gold_j1: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "--agent", "gold", "--seeds", "2", "--out", str(out),
           "--no-progress"]
    for pid in PROBLEMS:
        cmd += ["--problem", pid]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    results = out / "results.jsonl"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if results.is_file() and results.read_text().count("\n") >= 1:
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    written = results.read_text().splitlines()
    assert 1 <= len(written) < 4, "the run should have been killed midway"
    # Pretend the first finished attempt hit an environment failure: resume must run it again.
    first = json.loads(written[0])
    first.update(passed=False, environment_failure=True, environment_failure_reason="twin crashed")
    with open(results, "a") as fh:
        fh.write(json.dumps(first) + "\n")

    result = CliRunner().invoke(app, ["run", "--resume", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert _lines(out) == _lines(gold_j1)
    assert _trajectories(out) == _trajectories(gold_j1)
    assert json.loads((out / "summary.json").read_text())["overall"]["end_to_end"] == 1.0


def test_cli_run_with_a_plugin_agent_and_errors(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "blamer.py").write_text(
        "from sregym.agents import Agent, agent\n\n\n"
        "@agent\nclass Blamer(Agent):\n    name = 'blamer'\n    known_options = {'temperature': 0.0}\n\n"
        "    def run(self, session, brief):\n"
        "        session.call('kubectl', {'command': 'get pods -A'})\n"
        "        session.call('submit_diagnosis', {'root_cause_entities': ['kube-system/Deployment/coredns'],\n"
        "                                         'mechanism': 'dns outage'})\n"
        "        session.call('submit_mitigation_done', {})\n")
    runner = CliRunner(env={"COLUMNS": "200"})
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", "-p", PROBLEMS[0], "--agent", "blamer", "--agents-dir", str(agents),
                                 "--out", str(out), "--no-progress", "-o", "temperature=0.5"])
    assert result.exit_code == 0, result.output
    assert "overall" in result.output and "e2e" in result.output and "resolved 0/1" in result.output
    (line,) = _lines(out)
    assert line["agent"] == "blamer" and line["tool_calls"] == 3
    assert line["diagnosis"]["submitted"] and not line["passed"]
    assert json.loads((out / "run.json").read_text())["worker"]["agent_options"] == {"temperature": 0.5}

    bad = runner.invoke(app, ["run", "-p", PROBLEMS[0], "--agent", "nobody", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown agent 'nobody'" in bad.output
    none = runner.invoke(app, ["run", "--agent", "gold", "--out", str(tmp_path / "y")])
    assert none.exit_code == 2 and "no problems selected" in none.output


CRASHER = """
import os

from sregym.agents import Agent, agent


@agent
class Crasher(Agent):
    name = "crasher"

    def run(self, session, brief):
        me = session.call("kubectl", {"command": "get pods"}).text  # pod names differ per seed
        path = os.path.join(self.options["marker_dir"], "crashed")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            with open(path) as fh:
                if fh.read() == me:
                    os._exit(3)
            return
        os.write(fd, me.encode())
        os.close(fd)
        os._exit(3)
"""


def test_a_worker_that_dies_fails_only_its_own_attempt(tmp_path: Path) -> None:
    """The first attempt to claim a marker kills its worker outright, and does so again when it is
    re-run. The pool breaks, so both attempts in flight are re-run alone: the guilty one is
    recorded as an environment failure (resume would retry it), the innocent one completes."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "crasher.py").write_text(CRASHER)
    out = tmp_path / "out"
    summary = run([PROBLEMS[0]], agent="crasher", agent_options={"marker_dir": str(tmp_path)}, agents_dirs=[agents],
                  seeds=3, jobs=2, out_dir=out, progress=False)
    lines = {ln["seed"]: ln for ln in _lines(out)}
    assert sorted(lines) == [0, 1, 2]
    failed = [s for s, ln in lines.items() if ln["environment_failure"]]
    assert len(failed) == 1 and failed[0] in (0, 1), failed
    assert "worker process died" in lines[failed[0]]["environment_failure_reason"]
    assert all(ln["tool_calls"] == 1 for s, ln in lines.items() if s != failed[0])
    assert summary.overall.environment_failures == 1


def test_sigterm_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    out = tmp_path / "termed"
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "--agent", "noop", "--seeds", "3", "--out", str(out),
           "--no-progress", "--problem", PROBLEMS[0]]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    results = out / "results.jsonl"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if results.is_file() and results.read_text().count("\n") >= 1:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert f"sregym run --resume {out}" in err
    summary = json.loads((out / "summary.json").read_text())
    assert 1 <= summary["overall"]["attempts"] < 3 and summary["missing"] == 3 - summary["overall"]["attempts"]


def test_diagnosis_only_run_reports_no_mitigation(tmp_path: Path) -> None:
    summary = run([PROBLEMS[1]], agent="gold", attempt=AttemptConfig(phases=("diagnosis",)), out_dir=tmp_path,
                  progress=False)
    (line,) = _lines(tmp_path)
    assert line["phases"] == ["diagnosis"] and line["mitigation"] is None and line["passed"]
    assert summary.overall.diagnosis == 1.0 and summary.overall.mitigation is None
