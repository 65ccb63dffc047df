"""A broken setup is loud: each one is an environment failure with its reason on the terminal
and a non-zero exit code (3), checked once before the run where it can be (no kubectl, a missing
extra, a model endpoint that never answers) and per attempt otherwise; an agent that raises is the
agent's failure (`agent_error`), not the environment's. Without a terminal, `sregym run` prints
one line per finished attempt."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sregym.runner.plan import AttemptSpec
from sregym.runner.worker import WorkerConfig, run_attempt

PROBLEM = "demo-shop/bad-image-tag-v1"
CLI = [sys.executable, "-m", "sregym.cli.main"]


def _sregym(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 300,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess with stdout a pipe (not a terminal), as in CI or `| cat`."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})}, cwd=cwd)


def test_no_kubectl_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    out = tmp_path / "run"
    proc = _sregym(["run", "-p", PROBLEM, "--agent", "gold", "--out", str(out)], env={"PATH": str(empty)})
    assert proc.returncode == 3, proc.stderr
    assert "kubectl is not on PATH" in proc.stderr and "apt-get install kubernetes-client" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not out.exists(), "nothing should be written when the run cannot start"


def test_kubectl_vanishing_mid_run_is_an_environment_failure(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    outcome = run_attempt(WorkerConfig(agent="gold"), AttemptSpec(problem_id=PROBLEM, seed=0))
    assert outcome.result["environment_failure"] and not outcome.result["passed"]
    assert "kubectl is not on PATH" in outcome.result["environment_failure_reason"]


BLOCK_AND_RUN = r'''
import importlib.abc, sys

blocked = sys.argv.pop(1)


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
from sregym.cli.main import main
main()
'''


@pytest.mark.parametrize(("blocked", "args", "extra"), [
    ("openai", ["run", "-p", PROBLEM, "--agent", "react", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"],
     "llm"),
    ("mcp", ["mcp", "--problem", PROBLEM, "--transport", "stdio"], "mcp"),
])
def test_a_missing_extra_is_one_line_naming_the_install(blocked: str, args: list[str], extra: str,
                                                        tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", BLOCK_AND_RUN, blocked, *args], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert f"pip install 'sregym[{extra}]'" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) == 1, proc.stderr


def test_a_model_endpoint_that_never_answers_fails_fast(tmp_path: Path) -> None:
    """A socket that accepts connections (the kernel's backlog) but never replies."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        proc = _sregym(["run", "-p", PROBLEM, "--agent", "react", "--model", "m", "--base-url", url,
                        "-o", "preflight_timeout_s=1", "--out", str(tmp_path / "run")])
    assert proc.returncode == 3, proc.stderr
    assert f"the model endpoint {url} did not answer within 1s" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "run").exists()


def test_a_closed_model_port_fails_fast_with_the_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    proc = _sregym(["run", "-p", PROBLEM, "--agent", "react", "--model", "m",
                    "--base-url", f"http://127.0.0.1:{port}/v1", "--out", str(tmp_path / "run")])
    assert proc.returncode == 3, proc.stderr
    assert f"http://127.0.0.1:{port}/v1 cannot be reached" in proc.stderr and "ConnectError" in proc.stderr


AGENTS = '''
from sregym.agents import Agent, agent
from sregym.errors import SetupError


@agent
class Raiser(Agent):
    """Crashes: its own bug."""
    name = "raiser"

    def run(self, session, brief):
        session.call("kubectl", {"command": "get pods"})
        raise RuntimeError("boom in the agent")


@agent
class NeedsTool(Agent):
    """Finds, inside the attempt, that the machine lacks something it needs."""
    name = "needs-tool"

    def run(self, session, brief):
        raise SetupError("the frobnicator is not installed: apt-get install frobnicator")
'''


def test_an_agent_that_raises_is_an_agent_error_not_an_environment_failure(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "agents.py").write_text(AGENTS)
    out = tmp_path / "run"
    proc = _sregym(["run", "-p", PROBLEM, "--agent", "raiser", "--agents-dir", str(agents), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr  # it ran and was scored: the agent's failure
    (line,) = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    assert not line["environment_failure"] and not line["passed"]
    assert line["agent_error"].startswith("RuntimeError: boom in the agent")
    assert "Traceback" in line["agent_error"] and "agents.py" in line["agent_error"]
    assert line["truncation_reason"] == "agent failed: RuntimeError: boom in the agent"
    assert "FAIL" in proc.stdout and "agent error" in proc.stdout


def test_environment_failures_are_printed_as_they_happen_and_exit_3(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "agents.py").write_text(AGENTS)
    out = tmp_path / "run"
    proc = _sregym(["run", "-p", PROBLEM, "--seeds", "2", "--agent", "needs-tool", "--agents-dir", str(agents),
                    "--out", str(out)])
    assert proc.returncode == 3, proc.stderr
    err = proc.stderr
    # the first occurrence in full, the second counted
    assert f"environment failure on {PROBLEM} seed 0:\n    the frobnicator is not installed" in err
    assert f"environment failure on {PROBLEM} seed 1: same reason as before (2 attempts so far)" in err
    assert "2 attempts were environment failures, not scored:" in err
    assert f"sregym run --resume {out}" in err
    assert "Traceback" not in err + proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["environment_failures"] == 2
    assert summary["environment_failure_reasons"] == {
        "the frobnicator is not installed: apt-get install frobnicator": 2}


def test_without_a_terminal_run_prints_one_line_per_attempt(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _sregym(["run", "-p", PROBLEM, "-p", "demo-shop/service-selector-mismatch-v1", "--agent", "gold",
                    "--out", str(out), "-j", "2"])
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == 2, proc.stdout
    assert {ln.split("] ", 1)[1].split(":")[0] for ln in lines} == {
        f"{PROBLEM} seed 0", "demo-shop/service-selector-mismatch-v1 seed 0"}
    assert all("PASS (diagnosis pass, mitigation pass)" in ln for ln in lines)
    assert lines[0].startswith("[1/2]") and lines[1].startswith("[2/2]")
    # the final tables fit in 80 columns (a pipe gets rich's default width)
    assert "resolved 2/2" in proc.stdout and "overall" in proc.stdout
    table = proc.stdout[proc.stdout.index("problems"):]
    assert max(len(ln) for ln in table.splitlines() if not ln.startswith("results:")) <= 80


@pytest.mark.parametrize("case", ["missing", "not-executable"])
def test_an_agent_program_that_is_not_there_stops_the_run(case: str, tmp_path: Path) -> None:
    program = tmp_path / "agent.sh"
    if case == "not-executable":
        program.write_text("#!/bin/sh\nexit 0\n")
    proc = _sregym(["run", "-p", PROBLEM, "--agent", "command", "-o", f"command={program}",
                    "--out", str(tmp_path / "run")])
    assert proc.returncode == 3, proc.stderr
    assert str(program) in proc.stderr and ("does not exist" if case == "missing" else "not executable") in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) == 1, proc.stderr


def test_an_agent_program_that_cannot_start_is_an_environment_failure(tmp_path: Path) -> None:
    """Found only inside the attempt (its interpreter is missing): recorded, loud, exit 3."""
    program = tmp_path / "agent.sh"
    program.write_text("#!/nonexistent/interpreter\n")
    program.chmod(0o755)
    out = tmp_path / "run"
    proc = _sregym(["run", "-p", PROBLEM, "--agent", "command", "-o", f"command={program}",
                    "-o", "mcp=false", "-o", "time_limit_s=60", "--out", str(out)])
    assert proc.returncode == 3, proc.stderr
    assert f"environment failure on {PROBLEM} seed 0:" in proc.stderr and "could not be run" in proc.stderr
    assert "ENVIRONMENT FAILURE" in proc.stdout
    (line,) = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    assert line["environment_failure"] and "could not be run (exit code 12" in line["environment_failure_reason"]
