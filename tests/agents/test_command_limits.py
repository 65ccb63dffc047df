"""Runs survive their agents (issue #25, item 5): a `command` agent that forks background
processes, floods its output, fills its scratch disk or ignores SIGTERM is stopped at its limits,
and the attempt is still scored on what the agent submitted."""

from __future__ import annotations

import secrets
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sregym.agents import make_agent
from sregym.env import Conductor
from sregym.errors import SetupError

PROBLEM = "demo-shop/missing-configmap-key-v1"
DIAGNOSE = r"""
cat > diag.json <<'EOF'
{"root_cause_entities": ["demo-shop/ConfigMap/catalog-config"],
 "mechanism": "missing config key referenced by the catalog env",
 "explanation": "key CATALOG_MODE was removed from ConfigMap catalog-config"}
EOF
sregym-submit diagnosis --json diag.json
"""


def _run(tmp_path: Path, body: str, **options: Any) -> tuple[Any, Any, list[Any]]:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    agent = make_agent("command", command=[str(script)], mcp=False, **options)
    with Conductor(PROBLEM, seed=2, clock="realtime", realtime_speed=5.0, agent_name="command") as conductor:
        conductor.run_agent(agent, conductor.start())
        return agent, conductor.result(), conductor.trajectory


def _alive(marker: str) -> list[str]:
    """Processes on the whole machine whose command line is exactly `marker`."""
    out = subprocess.run(["pgrep", "-f", f"^{marker}$"], capture_output=True, text=True)
    return out.stdout.split()


def _gone(marker: str) -> bool:
    for _ in range(50):  # the namespace is torn down by the kernel; give it a moment
        if not _alive(marker):
            return True
        time.sleep(0.1)
    return False


def test_background_processes_die_with_the_attempt(tmp_path: Path) -> None:
    marker = f"sleep {secrets.randbelow(10**6) + 10**6}"
    body = DIAGNOSE + f"""
setsid {marker} &
( {marker} & ) &
nohup {marker} > /dev/null 2>&1 &
sh -c '{marker} & exit 0'
sleep 0.5
echo "daemons: $(pgrep -fc '^{marker}$')"
exit 0
"""
    agent, result, _ = _run(tmp_path, body, time_limit_s=60)
    assert "daemons: 4" in agent.stdout, agent.stdout + agent.stderr
    assert _gone(marker), _alive(marker)
    assert agent.exit_code == 0
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0


def test_a_flood_of_output_is_capped(tmp_path: Path) -> None:
    body = DIAGNOSE + "head -c 60000000 /dev/zero | tr '\\0' x\necho; echo the-end\n"
    agent, result, trajectory = _run(tmp_path, body, time_limit_s=120, output_chars=5_000)
    final = trajectory[-1]
    assert final.tool == "command" and final.args["exit_code"] == 0
    assert len(agent.stdout) < 60_000 and "the-end" in agent.stdout  # head and tail kept
    assert "middle of the output dropped" in agent.stdout
    assert len(final.observation) < 15_000
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0


def test_a_full_scratch_disk_stops_at_its_size(tmp_path: Path) -> None:
    body = """
dd if=/dev/zero of="$HOME/fill" bs=1M count=64
echo "home: $(du -sm "$HOME" | cut -f1) MB"
dd if=/dev/zero of=/tmp/fill2 bs=1M count=64
rm -f "$HOME/fill" /tmp/fill2
""" + DIAGNOSE
    agent, result, _ = _run(tmp_path, body, time_limit_s=60, scratch_mb=16)
    assert agent.stderr.count("No space left on device") == 2, agent.stdout + agent.stderr
    used = int(agent.stdout.split("home: ", 1)[1].split(" MB", 1)[0])
    assert used <= 16
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0  # it went on


def test_an_agent_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    marker = f"sleep {secrets.randbelow(10**6) + 2 * 10**6}"
    body = DIAGNOSE + f"""
trap '' TERM
sh -c "trap '' TERM; {marker}" &
while :; do sleep 1; done
"""
    agent, result, trajectory = _run(tmp_path, body, time_limit_s=4, stop_grace_s=1)
    final = trajectory[-1]
    assert "killed: time limit" in final.args["status"]
    assert agent.exit_code not in (0, None)
    assert _gone(marker), _alive(marker)
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0


def test_a_missing_program_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match=r"^the command agent's program no-such-agent-xyz is not found on PATH$"):
        make_agent("command", command="no-such-agent-xyz --fast")
    with pytest.raises(SetupError, match="does not exist"):
        make_agent("command", command=[str(tmp_path / "absent.sh")])
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(SetupError, match=r"is not executable \(chmod \+x"):
        make_agent("command", command=str(script))
    make_agent("command", command="cd /tmp && ./whatever")  # a shell line: left to the shell


def test_a_program_that_cannot_start_inside_is_a_setup_error(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    agent = make_agent("command", command=[str(script)], mcp=False, time_limit_s=30)
    with Conductor(PROBLEM, seed=2, clock="realtime", agent_name="command") as conductor:
        brief = conductor.start()
        with pytest.raises(SetupError, match=r"could not be run \(exit code 12[67]\)"):
            conductor.run_agent(agent, brief)
        trajectory = conductor.trajectory
    assert trajectory[-1].tool == "command" and trajectory[-1].args["exit_code"] in (126, 127)
