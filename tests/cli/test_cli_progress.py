"""Long commands without a terminal: one plain line per finished item as it finishes, a final
table no wider than 80 columns; and `snapshot run --resume DIR`, which finishes a run with the
settings stored in it, like `sregym run --resume DIR`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app

PROBLEMS = ["demo-shop/bad-image-tag-v1", "demo-shop/missing-configmap-key-v1"]
runner = CliRunner(env={"COLUMNS": "80"})
WIDTH = 80


def _invoke(argv: list[str]) -> tuple[str, str]:
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result.stdout, result.stderr


# Lines that print a user's path: as long as the path, whatever the layout.
PATH_LINES = ("dataset: ", "outputs: ", "score with: ", "report: ")


def _fits(text: str) -> None:
    too_wide = [line for line in text.splitlines() if len(line) > WIDTH and not line.startswith(PATH_LINES)]
    assert not too_wide, too_wide


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("progress") / "ds"
    stdout, _ = _invoke(["snapshot", "dataset", *PROBLEMS, "--seeds", "2", "-j", "2", "--window", "1m",
                         "--baseline", "90s", "--out", str(out)])
    task_lines = [line for line in stdout.splitlines() if line.startswith("[")]
    assert len(task_lines) == 4  # one per task, on stdout
    assert all(re.search(r"seed [01] \(\d+\.\ds\)$", line) for line in task_lines)
    assert "(4 tasks = 2 problems x 2 seeds" in stdout
    _fits(stdout)
    return out


def test_check_streams_one_line_per_problem_into_a_pipe() -> None:
    """Through a pipe (not a terminal) the first problem's line arrives while the second still
    runs; the final table fits 80 columns."""
    ids = ["demo-shop/service-selector-mismatch-v1", "demo-shop/nonexistent-node-selector-v1"]
    proc = subprocess.Popen([sys.executable, "-m", "sregym.cli.main", "check", *ids, "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "80"})
    assert proc.stdout is not None
    first = proc.stdout.readline()
    still_running = proc.poll() is None
    rest, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, (first, rest, err)
    assert re.match(r"PASS demo-shop/\S+  seed 0  \d+\.\ds$", first.strip()), first
    assert still_running, "the first line came only when everything was done"
    out = first + rest
    assert sum(line.startswith("PASS ") for line in out.splitlines()) == 2
    assert "problem" in out and "verdict" in out and "2 passed, 0 failed" in out
    _fits(out)
    assert "Traceback" not in out + err


def test_snapshot_run_lines_table_and_score_fit(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    stdout, _ = _invoke(["snapshot", "run", "--dataset", str(dataset), "--agent", "noop", "--repeats", "2",
                         "--out", str(out), "-j", "2"])
    repeat_lines = [line for line in stdout.splitlines() if line.startswith("[sregym] ")]
    assert len(repeat_lines) == 8
    assert all(re.search(r"task-000\d seed [01] repeat [12]/2: ok \(\d+\.\ds", line) for line in repeat_lines)
    assert "task-0004" in stdout and "2/2" in stdout and "8 repeats run (8 ok, 0 failed)" in stdout
    _fits(stdout)
    scored, _ = _invoke(["snapshot", "score", "--dataset", str(dataset), "--outputs", str(out)])
    assert "benchmark score: 0.000" in scored and "missing-configmap" in scored
    _fits(scored)


def test_snapshot_run_resume_dir_uses_the_stored_settings(dataset: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text('#!/bin/sh\necho "{\\"entities\\": []}" > "$SREGYM_OUTPUT"\n')
    script.chmod(0o755)
    out = tmp_path / "cmd-run"
    _invoke(["snapshot", "run", "--dataset", str(dataset), "--agent", "command", "--command", str(script),
             "--repeats", "1", "--time-limit", "60", "--out", str(out)])
    stored = json.loads((out / "run.json").read_text())
    gone = out / "task-0002" / "repeat-1" / "status.json"
    gone.unlink()
    stdout, stderr = _invoke(["snapshot", "run", "--resume", str(out), "--agent", "noop", "--repeats", "5"])
    assert "note: --resume runs the stored settings of that run; --agent, --repeats ignored" in stderr
    assert "resume: 3 of 4 repeats already done" in stdout
    assert "1 repeat run (1 ok, 0 failed, 3 already done)" in stdout
    assert json.loads(gone.read_text())["ok"] is True
    assert json.loads((out / "run.json").read_text()) == stored  # same agent, command and time limit
    assert stored["agent"] == "command" and stored["time_limit_s"] == 60.0


def test_snapshot_run_resume_asks_again_for_unstored_env(dataset: Path, tmp_path: Path) -> None:
    """`env` values are never written (they may be secrets): resuming needs them again."""
    script = tmp_path / "agent.sh"
    script.write_text('#!/bin/sh\n[ "$MY_TOKEN" = s3cret ] && echo "{\\"entities\\": []}" > "$SREGYM_OUTPUT"\n')
    script.chmod(0o755)
    out = tmp_path / "env-run"
    env = ["-o", 'env={"MY_TOKEN": "s3cret"}']
    _invoke(["snapshot", "run", "--dataset", str(dataset), "--agent", "command", "--command", str(script),
             "--repeats", "1", "--out", str(out), *env])
    assert "s3cret" not in (out / "run.json").read_text()
    (out / "task-0001" / "repeat-1" / "status.json").unlink()
    refused = runner.invoke(app, ["snapshot", "run", "--resume", str(out)])
    assert refused.exit_code == 2
    assert refused.stderr.strip().startswith("sregym snapshot run: --resume: the run's env option values")
    stdout, _ = _invoke(["snapshot", "run", "--resume", str(out), *env])
    assert "1 repeat run (1 ok, 0 failed, 3 already done)" in stdout


def test_snapshot_run_resume_refuses_a_directory_without_a_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["snapshot", "run", "--resume", str(tmp_path)])
    assert result.exit_code == 2
    assert "--resume: nothing to resume" in result.stderr and "Traceback" not in result.output
