"""Runs survive stuck attempts: the watchdog stops an attempt that outlives its wall-time limit
(an environment failure, the run goes on), and SIGTERM stops a run within seconds even while an
attempt is stuck, keeping what was recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sregym.runner import run

PROBLEM = "demo-shop/bad-image-tag-v1"

HANGER = '''
import os
import time

from sregym.agents import Agent, agent


@agent
class Hanger(Agent):
    """The first attempt to claim the marker hangs (as a runaway call would); the others give up."""
    name = "hanger"
    known_options = {"marker_dir": None}

    def run(self, session, brief):
        session.call("kubectl", {"command": "get pods"})
        try:
            fd = os.open(os.path.join(self.options["marker_dir"], "hung"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        time.sleep(3600)
'''


def _agents(tmp_path: Path) -> Path:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "hanger.py").write_text(HANGER)
    return agents


def test_a_stuck_attempt_is_stopped_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = run([PROBLEM], agent="hanger", agent_options={"marker_dir": str(tmp_path)},
                  agents_dirs=[_agents(tmp_path)], seeds=2, jobs=1, out_dir=out, progress=False,
                  attempt_timeout_s=40)
    lines = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    assert [ln["seed"] for ln in lines] == [0, 1]
    stuck, other = lines
    assert stuck["environment_failure"]
    assert "exceeded its wall-time limit of 40s" in stuck["environment_failure_reason"]
    assert not other["environment_failure"] and other["tool_calls"] == 1  # the run went on
    assert summary.overall.environment_failures == 1
    assert json.loads((out / "run.json").read_text())["worker"]["attempt_timeout_s"] == 40


def test_sigterm_stops_a_run_with_a_stuck_attempt_within_seconds(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "-p", PROBLEM, "--seeds", "2", "--agent", "hanger",
           "--agents-dir", str(_agents(tmp_path)), "-o", f"marker_dir={json.dumps(str(tmp_path))}",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "hung").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert (tmp_path / "hung").exists(), "the attempt never got stuck"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)  # the stuck attempt would sleep for an hour
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert f"sregym run --resume {out}" in err and "Traceback" not in err
    assert json.loads((out / "run.json").read_text())["interrupted"] is True
