"""The `command` agent end to end: a shell script that investigates with kubectl, submits with
`sregym-submit`, fixes the fault with kubectl and declares done — on the realtime clock — plus the
submit client's refusals and the presets' clear errors when a binary or key is missing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sregym.agents import make_agent
from sregym.env import Conductor
from sregym.errors import SetupError

PROBLEM = "demo-shop/missing-configmap-key-v1"

SCRIPT = r"""#!/bin/sh
set -u
echo "env: $KUBECONFIG $PROMETHEUS_URL $LOKI_URL $JAEGER_URL"
test -f "$SREGYM_INSTRUCTIONS" && grep -q "sregym-submit done" "$SREGYM_INSTRUCTIONS" && echo "instructions ok"
grep -q '"url": "http://127.0.0.1' "$SREGYM_MCP_CONFIG" && echo "mcp config ok"
kubectl get pods -n demo-shop
sregym-submit status
# a refused submission: no entity
sregym-submit diagnosis --mechanism "guess" || echo "refused as expected ($?)"
sregym-submit done || echo "done refused before diagnosis ($?)"
cat > diag.json <<'EOF'
{"root_cause_entities": ["demo-shop/ConfigMap/catalog-config"],
 "mechanism": "missing config key referenced by the catalog env",
 "affected_entities": ["demo-shop/Deployment/catalog", "demo-shop/Service/catalog"],
 "explanation": "key CATALOG_MODE was removed from ConfigMap catalog-config; catalog pods fail with CreateContainerConfigError, service unavailable"}
EOF
sregym-submit diagnosis --json diag.json
kubectl patch configmap catalog-config -n demo-shop --type merge -p '{"data":{"CATALOG_MODE":"full"}}'
i=0
while [ $i -lt 120 ]; do
  ready=$(kubectl get deployment catalog -n demo-shop -o jsonpath='{.status.readyReplicas}')
  want=$(kubectl get deployment catalog -n demo-shop -o jsonpath='{.spec.replicas}')
  [ -n "$ready" ] && [ "$ready" = "$want" ] && break
  i=$((i+1)); sleep 0.5
done
echo "catalog ready: $ready/$want"
sregym-submit done
echo "script finished" >&2
"""


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "agent.sh"
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_command_agent_fixes_and_submits_end_to_end(tmp_path: Path) -> None:
    script = _script(tmp_path, SCRIPT)
    agent = make_agent("command", command=[str(script)], time_limit_s=240)
    assert agent.clock == "realtime"
    with Conductor(PROBLEM, seed=2, clock="realtime", realtime_speed=5.0, agent_name="command") as conductor:
        brief = conductor.start()
        conductor.run_agent(agent, brief)
        result = conductor.result()
        trajectory = conductor.trajectory
    assert "instructions ok" in agent.stdout and "mcp config ok" in agent.stdout
    assert "catalog-" in agent.stdout  # kubectl get pods worked with the agent kubeconfig
    assert "refused as expected (2)" in agent.stdout  # usage error: no --entity
    assert "done refused before diagnosis (1)" in agent.stdout
    assert agent.exit_code == 0, agent.stderr
    tools = [e.tool for e in trajectory]
    # the early `done` was refused before it ran (not a call); then diagnosis, done, the program output
    assert tools == ["submit_diagnosis", "submit_mitigation_done", "command"]
    assert not trajectory[0].is_error and not trajectory[1].is_error
    assert trajectory[0].args["root_cause_entities"] == ["demo-shop/ConfigMap/catalog-config"]
    final = trajectory[-1]
    assert final.args["exit_code"] == 0 and "script finished" in final.observation
    assert "catalog ready" in final.observation
    assert result.clock == "realtime" and not result.environment_failure
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0
    assert result.mitigation is not None and result.mitigation.passed, result.model_dump_json()
    assert result.passed


def test_command_agent_time_limit_kills_and_truncates(tmp_path: Path) -> None:
    script = _script(tmp_path, "#!/bin/sh\necho started\nsleep 60\n")
    agent = make_agent("command", command=str(script), time_limit_s=2, mcp=False)
    with Conductor(PROBLEM, seed=2, clock="realtime", agent_name="command") as conductor:
        brief = conductor.start()
        conductor.run_agent(agent, brief)
        result = conductor.result()
        trajectory = conductor.trajectory
    assert [e.tool for e in trajectory] == ["command"]
    assert "time limit" in trajectory[0].args["status"] and "started" in trajectory[0].observation
    assert result.truncated and not result.passed


def test_command_agent_needs_realtime_clock_and_a_command(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a command"):
        make_agent("command")
    with pytest.raises(ValueError, match="unknown command option"):
        make_agent("command", command="true", bogus=1)
    agent = make_agent("command", command="true")
    with Conductor(PROBLEM, seed=2, agent_name="command") as conductor:
        brief = conductor.start()
        with pytest.raises(RuntimeError, match="realtime clock"):
            conductor.run_agent(agent, brief)


def test_submit_client_without_an_attempt(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from sregym.cli.submit import main

    monkeypatch.delenv("SREGYM_SUBMIT_URL", raising=False)
    assert main(["done"]) == 2
    assert "SREGYM_SUBMIT_URL is not set" in capsys.readouterr().err


def _fake_binary(directory: Path, name: str) -> None:
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)


@pytest.mark.parametrize(("preset", "binary", "key"), [("claude-code", "claude", "ANTHROPIC_API_KEY"),
                                                       ("codex", "codex", "OPENAI_API_KEY")])
def test_presets_say_what_is_missing(preset: str, binary: str, key: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv(key, "k")
    with pytest.raises(SetupError, match=f"^{binary} not found on PATH: install "):
        make_agent(preset)
    bindir = tmp_path / "bin"
    _fake_binary(bindir, binary)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.delenv(key)
    with pytest.raises(SetupError, match=f"^{key} is not set"):
        make_agent(preset)
    monkeypatch.setenv(key, "k")
    built = make_agent(preset, model="m")
    argv = built.argv("PROMPT", {"mcp": tmp_path / "mcp.json"})  # type: ignore[attr-defined]
    assert argv[0] == str(bindir / binary) and "PROMPT" in argv and "m" in argv
    if preset == "claude-code":
        assert argv[1:3] == ["-p", "PROMPT"] and "--mcp-config" in argv
    else:
        assert argv[1] == "exec" and argv[-1] == "PROMPT"
    assert os.environ[key] == "k"


MCP_AGENT = r'''
import asyncio, json, os
from mcp import Client

async def main():
    config = json.load(open(os.environ["SREGYM_MCP_CONFIG"]))
    url = config["mcpServers"]["sregym"]["url"]
    async with Client(url, read_timeout_seconds=60) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        print("tools:", ",".join(names))
        pods = await client.call_tool("kubectl", {"command": "get pods -n demo-shop"})
        print("pods ok" if "catalog-" in pods.content[0].text else "pods missing")
        diag = await client.call_tool("submit_diagnosis", {
            "root_cause_entities": ["demo-shop/ConfigMap/catalog-config"], "mechanism": "missing config key",
            "explanation": "CATALOG_MODE removed"})
        print("diag:", diag.content[0].text)

asyncio.run(main())
'''


def test_command_agent_serves_the_same_attempt_over_mcp(tmp_path: Path) -> None:
    import sys

    (tmp_path / "mcp_agent.py").write_text(MCP_AGENT)
    agent = make_agent("command", command=[sys.executable, str(tmp_path / "mcp_agent.py")], time_limit_s=120)
    with Conductor(PROBLEM, seed=2, clock="realtime", phases=("diagnosis",), agent_name="command") as conductor:
        conductor.run_agent(agent, conductor.start())
        result = conductor.result()
        trajectory = conductor.trajectory
    assert agent.exit_code == 0, agent.stderr
    assert "submit_diagnosis" in agent.stdout and "pods ok" in agent.stdout
    assert "Diagnosis recorded" in agent.stdout
    assert [e.tool for e in trajectory] == ["kubectl", "submit_diagnosis", "command"]
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0


def test_relative_program_paths_resolve_against_the_launch_directory(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _script(tmp_path, "#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    script = str(tmp_path / "agent.sh")
    assert make_agent("command", command="./agent.sh --fast").argv("", {}) == f"{script} --fast"  # type: ignore[attr-defined]
    assert make_agent("command", command=["./agent.sh", "a b"]).argv("", {}) == [script, "a b"]  # type: ignore[attr-defined]
    assert make_agent("command", command="echo hi").argv("", {}) == "echo hi"  # type: ignore[attr-defined]


FAKE_CLAUDE = r"""#!/bin/sh
# Stands in for Claude Code: shows what it was given, then submits like an agent would.
echo "prompt: $(printf '%s' "$2" | head -1)"
shift 2
echo "flags: $*"
echo "key=${ANTHROPIC_API_KEY:-unset} base=${ANTHROPIC_BASE_URL:-unset} other=${SREGYM_TEST_SECRET:-unset}"
echo "sandbox=${IS_SANDBOX:-unset} home=$HOME"
for arg in "$@"; do case $arg in *mcp.json) grep -q mcpServers "$arg" && echo "mcp config readable";; esac; done
echo "processes: $(ls /proc | grep -c '^[0-9]')"
test -e /proc/$SREGYM_TEST_PARENT && echo "SEES THE SREGYM PROCESS"
sregym-submit diagnosis --entity demo-shop/ConfigMap/catalog-config --mechanism "missing config key" \
    --explanation "CATALOG_MODE removed"
"""


def test_presets_run_in_the_sandbox_with_only_their_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "claude"
    fake.write_text(FAKE_CLAUDE)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SREGYM_TEST_SECRET", "not-for-the-agent")
    agent = make_agent("claude-code", time_limit_s=60,
                       env={"SREGYM_TEST_PARENT": str(os.getpid())})
    with Conductor(PROBLEM, seed=2, clock="realtime", phases=("diagnosis",), agent_name="claude-code") as conductor:
        conductor.run_agent(agent, conductor.start())
        result = conductor.result()
    out = agent.stdout
    assert agent.exit_code == 0, agent.stderr
    assert "prompt: # sregym incident" in out and "--dangerously-skip-permissions" in out
    assert "key=sk-test base=http://127.0.0.1:9/v1 other=unset" in out
    assert "sandbox=1 home=/home/agent" in out and "mcp config readable" in out
    assert "SEES THE SREGYM PROCESS" not in out and int(out.split("processes: ")[1].split()[0]) < 10
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0
