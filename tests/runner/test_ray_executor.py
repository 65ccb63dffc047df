"""`--executor ray`: attempts as Ray tasks on a local Ray started here (2 CPUs, one per module).

The results equal a `-j 1` run's (line for line, wall times aside, trajectories too); `--resume`
runs only what is missing or failed; a worker process that dies mid-attempt is retried once, and
a second death is an environment failure; the CLI takes the flags."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.runner import run

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.xdist_group("ray")  # one Ray per module: every test here in one xdist worker

GOLD_PROBLEMS = ["demo-shop/bad-image-tag-v1", "demo-shop/service-selector-mismatch-v1"]
NOOP_PROBLEM = "demo-shop/bad-image-tag-v1"

EXITER = '''
import os

from sregym.agents import Agent, agent


@agent
class Exiter(Agent):
    """Kills the process it runs in (as an OOM kill or a lost node would) the first `deaths` times
    it is started; then it looks once and gives up. Each start is one line in `<marker_dir>/tries`."""
    name = "exiter"
    known_options = {"marker_dir": None, "deaths": 1}

    def run(self, session, brief):
        path = os.path.join(self.options["marker_dir"], "tries")
        with open(path, "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        with open(path) as fh:
            tries = len(fh.read().splitlines())
        if tries <= int(self.options["deaths"]):
            os._exit(1)
        session.call("kubectl", {"command": "get pods"})
'''

SLEEPER = '''
import os
import time

from sregym.agents import Agent, agent


@agent
class Sleeper(Agent):
    """Looks once, says where it runs (`<marker_dir>/sleeping` holds its pid), then hangs."""
    name = "sleeper"
    known_options = {"marker_dir": None}

    def run(self, session, brief):
        session.call("kubectl", {"command": "get pods"})
        with open(os.path.join(self.options["marker_dir"], "sleeping"), "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(3600)
'''


def _agents_dir(tmp_path: Path, name: str, code: str) -> Path:
    agents = tmp_path / "agents"
    agents.mkdir(exist_ok=True)
    (agents / f"{name}.py").write_text(code)
    return agents


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _lines(out: Path) -> list[dict]:
    lines = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    for line in lines:
        line.pop("wall_seconds")
    return lines


def _trajectories(out: Path) -> dict[str, str]:
    root = out / "trajectories"
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.jsonl"))}


@pytest.fixture(scope="module")
def gold_ray(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gold-ray")
    run(GOLD_PROBLEMS, agent="gold", seeds=2, executor="ray", out_dir=out, progress=False)
    return out


def test_gold_on_ray_equals_a_one_job_local_run(gold_ray: Path, tmp_path: Path) -> None:
    local = tmp_path / "gold-j1"
    run(GOLD_PROBLEMS, agent="gold", seeds=2, jobs=1, out_dir=local, progress=False)
    ray_lines = _lines(gold_ray)
    assert [(ln["problem_id"], ln["seed"]) for ln in ray_lines] == [(p, s) for p in GOLD_PROBLEMS for s in (0, 1)]
    assert all(ln["passed"] and not ln["environment_failure"] for ln in ray_lines)
    assert ray_lines == _lines(local)
    assert _trajectories(gold_ray) == _trajectories(local)
    assert json.loads((gold_ray / "summary.json").read_text())["overall"] == \
        json.loads((local / "summary.json").read_text())["overall"]


def test_noop_on_ray_equals_a_one_job_local_run(tmp_path: Path) -> None:
    on_ray, local = tmp_path / "ray", tmp_path / "local"
    run([NOOP_PROBLEM], agent="noop", seeds=2, executor="ray", out_dir=on_ray, progress=False)
    run([NOOP_PROBLEM], agent="noop", seeds=2, jobs=1, out_dir=local, progress=False)
    lines = _lines(on_ray)
    assert len(lines) == 2 and not any(ln["passed"] or ln["environment_failure"] for ln in lines)
    assert lines == _lines(local)


def test_resume_on_ray_runs_only_what_is_missing_or_failed(gold_ray: Path, tmp_path: Path) -> None:
    out = tmp_path / "partial"
    shutil.copytree(gold_ray, out)
    complete = (gold_ray / "results.jsonl").read_text().splitlines()
    first, failed = json.loads(complete[0]), json.loads(complete[1])
    failed.update(passed=False, environment_failure=True, environment_failure_reason="the node went away")
    # A run stopped after two attempts, one of which was an environment failure.
    (out / "results.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(failed) + "\n")
    ran: list[tuple[str, int]] = []
    summary = run(resume=out, executor="ray", progress=False, on_result=lambda o: ran.append(o.spec.key))
    assert (first["problem_id"], first["seed"]) == (GOLD_PROBLEMS[0], 0)
    assert sorted(ran) == [(GOLD_PROBLEMS[0], 1), (GOLD_PROBLEMS[1], 0), (GOLD_PROBLEMS[1], 1)]
    assert summary.ran == 3 and summary.missing == 0 and summary.overall.environment_failures == 0
    assert _lines(out) == _lines(gold_ray)


def _exiter_run(tmp_path: Path, deaths: int) -> tuple[dict, int]:
    agents = _agents_dir(tmp_path, "exiter", EXITER)
    out = tmp_path / "run"
    run([NOOP_PROBLEM], agent="exiter", agent_options={"marker_dir": str(tmp_path), "deaths": deaths},
        agents_dirs=[agents], seeds=1, executor="ray", out_dir=out, progress=False)
    [line] = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    return line, len((tmp_path / "tries").read_text().splitlines())


def test_a_worker_that_dies_twice_is_an_environment_failure_after_one_retry(tmp_path: Path) -> None:
    line, tries = _exiter_run(tmp_path, deaths=5)
    assert tries == 2  # the first start and one retry, no more
    assert line["environment_failure"] and not line["passed"]
    reason = line["environment_failure_reason"]
    assert "lost twice" in reason and "retried once" in reason and "WorkerCrashedError" in reason


def test_a_worker_that_dies_once_is_retried_and_the_attempt_scored(tmp_path: Path) -> None:
    line, tries = _exiter_run(tmp_path, deaths=1)
    assert tries == 2
    assert not line["environment_failure"] and line["tool_calls"] == 1


def test_the_cli_runs_on_ray_and_checks_its_flags(tmp_path: Path) -> None:
    from sregym.cli.main import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(app, ["run", "-p", NOOP_PROBLEM, "--agent", "gold", "--executor", "ray",
                                      "--out", str(out), "--progress", "none"])
    assert result.exit_code == 0, result.output
    [line] = _lines(out)
    assert line["passed"]
    assert json.loads((out / "run.json").read_text())["invocation"]["executor"] == "ray"
    bad = CliRunner().invoke(app, ["run", "-p", NOOP_PROBLEM, "--ray-address", "auto", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--executor ray" in bad.output
    bad = CliRunner().invoke(app, ["run", "-p", NOOP_PROBLEM, "--executor", "dask", "--out", str(tmp_path / "y")])
    assert bad.exit_code == 2


def test_an_attempt_over_its_wall_time_limit_is_cancelled_and_recorded(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run([NOOP_PROBLEM], agent="sleeper", agent_options={"marker_dir": str(tmp_path)},
        agents_dirs=[_agents_dir(tmp_path, "sleeper", SLEEPER)], seeds=1, executor="ray", out_dir=out,
        progress=False, attempt_timeout_s=20)
    [line] = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    assert line["environment_failure"]
    assert "exceeded its wall-time limit of 20s" in line["environment_failure_reason"]
    pid = int((tmp_path / "sleeping").read_text())
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid), "the cancelled attempt's worker process is still running"


def test_sigterm_stops_a_ray_run_and_keeps_what_was_recorded(tmp_path: Path) -> None:
    """The run starts its own local Ray (no address); `ray.init` must not take SIGTERM away from
    the runner, which then cancels the task, writes the summary and exits 130."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "-p", NOOP_PROBLEM, "--agent", "sleeper",
           "--agents-dir", str(_agents_dir(tmp_path, "sleeper", SLEEPER)),
           "-o", f"marker_dir={json.dumps(str(tmp_path))}", "--executor", "ray", "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            stdin=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "sleeping").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert (tmp_path / "sleeping").exists(), "the attempt never started"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=90)  # the attempt would sleep for an hour
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume" in err
    assert json.loads((out / "summary.json").read_text())["missing"] == 1
    assert json.loads((out / "run.json").read_text())["interrupted"] is True


def test_without_ray_installed_the_run_stops_before_writing_anything(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from sregym.cli.main import app

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    out = tmp_path / "never"
    result = CliRunner().invoke(app, ["run", "-p", NOOP_PROBLEM, "--executor", "ray", "--out", str(out)])
    assert result.exit_code == 3, result.output
    assert "pip install 'sregym[ray]'" in result.output
    assert not out.exists()


def test_a_cluster_that_refuses_the_connection_is_a_setup_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `ray.init` raises (a wrong token, versions that differ) becomes one `SetupError` line
    (exit 3 in the CLI), and the SIGTERM handler is the caller's again. The real Ray of this
    module is set aside for the test only: `ray_session` must try to connect."""
    from sregym.errors import SetupError
    from sregym.runner.ray_executor import ray_session

    def refuse(**options: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as ray.init does before it connects
        raise ConnectionError("Authentication token is missing or incorrect\nmore detail")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    mine = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SetupError) as caught, ray_session("10.0.0.9:6379", 1):
        pass
    assert str(caught.value) == ("--executor ray could not connect to the Ray cluster at 10.0.0.9:6379: "
                                 "ConnectionError: Authentication token is missing or incorrect")
    assert signal.getsignal(signal.SIGTERM) is mine
