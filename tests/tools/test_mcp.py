"""The official MCP client against `sregym mcp`, over stdio and over streamable HTTP: it lists
the catalogue, runs kubectl and PromQL, submits a diagnosis and sees the phase change, and the
attempt is scored when the agent declares the mitigation done."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from support.processes import stop_group

PROBLEM = "demo-shop/service-selector-mismatch-v1"
NAMESPACE = "demo-shop"
CATALOGUE = {"kubectl", "promql_query", "promql_query_range", "get_alerts", "get_logs", "get_services",
             "get_operations", "get_traces", "get_dependency_graph", "get_app_context", "submit_diagnosis",
             "submit_mitigation_done"}


def _text(result: object) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)  # type: ignore[attr-defined]


async def _exercise(client: Client, result_file: Path) -> None:
    assert "INCIDENT PAGE" in (client.instructions or "")
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == CATALOGUE
    assert tools["kubectl"].input_schema["required"] == ["command"]
    assert tools["kubectl"].description

    pods = await client.call_tool("kubectl", {"command": f"get pods -n {NAMESPACE}"})
    assert not pods.is_error and "READY" in _text(pods) and "Running" in _text(pods)
    prom = await client.call_tool("promql_query", {"query": f'kube_pod_status_phase{{namespace="{NAMESPACE}"}}'})
    assert not prom.is_error and "kube_pod_status_phase" in _text(prom)
    bad = await client.call_tool("promql_query", {"query": "sum(("})
    assert bad.is_error  # a bad query is an observation, the session goes on

    early = await client.call_tool("submit_mitigation_done", {})
    assert early.is_error and "after submit_diagnosis" in _text(early)
    diag = await client.call_tool("submit_diagnosis", {
        "root_cause_entities": [f"{NAMESPACE}/Service/catalog"], "mechanism": "service selector mismatch",
        "affected_entities": [f"{NAMESPACE}/Deployment/frontend"], "explanation": "selector matches no pods"})
    assert not diag.is_error and "mitigation phase starts now" in _text(diag)
    again = await client.call_tool("submit_diagnosis", {"root_cause_entities": ["x/Service/y"], "mechanism": "m"})
    assert again.is_error and "diagnosis phase is over" in _text(again)

    done = await client.call_tool("submit_mitigation_done", {})
    assert not done.is_error and "attempt is complete" in _text(done)
    after = await client.call_tool("kubectl", {"command": "get pods"})
    assert after.is_error and "attempt is over" in _text(after)
    line = json.loads(result_file.read_text())
    assert line["problem_id"] == PROBLEM and line["diagnosis"]["submitted"]
    assert line["mitigation"]["declared_done"] and not line["mitigation"]["passed"]  # nothing was fixed
    assert line["tool_calls"] >= 5


def test_mcp_over_stdio(tmp_path: Path) -> None:
    result_file = tmp_path / "result.json"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "sregym.cli.main", "mcp", "--problem", PROBLEM, "--seed", "0",
                                         "--result", str(result_file)],
                                   env={**os.environ})

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client, result_file)

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_mcp_over_streamable_http(tmp_path: Path) -> None:
    result_file = tmp_path / "result.json"
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sregym.cli.main", "mcp", "--problem", PROBLEM, "--transport",
                             "http", "--port", str(port), "--result", str(result_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as client:
                await _exercise(client, result_file)

        asyncio.run(main())
    finally:
        stop_group(proc, timeout=20)


class _FakeSession:
    """A `ToolSession` stand-in: real specs from the real catalogue, calls recorded."""

    phase = "diagnosis"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def specs(self) -> list:
        from sregym.tools.session import ToolSession
        from sregym.tools.spec import tool_spec

        return [tool_spec(getattr(ToolSession, n)) for n in ("kubectl", "get_traces")]

    def call(self, name: str, args: dict):
        from sregym.tools.spec import ToolResult

        self.calls.append((name, args))
        if args.get("command") == "edit deploy x":
            return ToolResult("interactive commands are not supported", True)
        return ToolResult(f"ran {name}", False)


def test_adapter_serves_the_catalogue_schema_and_maps_errors() -> None:
    from sregym.tools.mcp import build_server
    from sregym.tools.session import ToolSession
    from sregym.tools.spec import tool_spec

    session = _FakeSession()
    server = build_server(session, instructions="page")  # type: ignore[arg-type]

    async def main() -> None:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["get_traces"].input_schema == tool_spec(ToolSession.get_traces).input_schema
            ok = await client.call_tool("get_traces", {"service": "geo", "limit": 5})
            assert not ok.is_error and _text(ok) == "ran get_traces"
            bad = await client.call_tool("kubectl", {"command": "edit deploy x"})
            assert bad.is_error and "interactive commands are not supported" in _text(bad)
            missing = await client.call_tool("kubectl", {})
            assert missing.is_error

    asyncio.run(main())
    # Only what the client gave (plus SDK-filled non-None defaults) reaches the session; the
    # command string is passed through untouched (not JSON-decoded).
    assert session.calls[0] == ("get_traces", {"service": "geo", "since": "15m", "limit": 5, "error_only": False})
    assert session.calls[1] == ("kubectl", {"command": "edit deploy x"})
    assert len(session.calls) == 2
