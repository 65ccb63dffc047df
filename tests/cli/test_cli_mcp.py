"""`sregym mcp` over HTTP with the official MCP client: no fixed default port (8000 is vLLM's), the
endpoint printed at start, and the sregym version in the server's initialize result."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

from mcp import Client

from sregym import __version__
from support.processes import stop_group

PROBLEM = "demo-shop/service-selector-mismatch-v1"


def _endpoint(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    """The URL the server prints on stderr before it sets the problem up."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            assert proc.poll() is None, "sregym mcp exited before printing its endpoint"
            continue
        found = re.match(r"MCP endpoint: (http://127\.0\.0\.1:(\d+)/mcp)$", line.strip())
        if found:
            assert int(found.group(2)) not in (0, 8000)
            return found.group(1)
    raise AssertionError("no endpoint printed")


def test_default_port_is_a_free_one_and_the_version_is_served() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "sregym.cli.main", "mcp", "--problem", PROBLEM,
                             "--transport", "http"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        url = _endpoint(proc)

        async def main() -> tuple[str | None, set[str]]:
            deadline = time.monotonic() + 120
            while True:  # the endpoint is printed before the problem is set up: wait for it to serve
                try:
                    async with Client(url, read_timeout_seconds=120) as client:
                        info = client.server_info
                        tools = {t.name for t in (await client.list_tools()).tools}
                        return (info.version if info else None), tools
                except Exception:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise
                    await asyncio.sleep(0.2)

        version, tools = asyncio.run(main())
        assert version == __version__
        assert {"kubectl", "submit_diagnosis"} <= tools
    finally:
        stop_group(proc, timeout=20)


def test_a_busy_port_fails_before_the_problem_is_set_up() -> None:
    import socket

    from typer.testing import CliRunner

    from sregym.cli.main import app

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["mcp", "-p", PROBLEM, "--transport", "http", "--port", str(port)])
    assert result.exit_code == 3  # ENVIRONMENT: the machine, not the arguments
    assert result.stderr.strip().startswith(f"sregym mcp: cannot listen on 127.0.0.1:{port}")


def test_the_in_process_server_reports_the_version() -> None:
    from sregym.tools.mcp import build_server

    class Session:
        phase = "diagnosis"

        def specs(self) -> list:
            return []

    async def main() -> str | None:
        async with Client(build_server(Session(), instructions="page")) as client:  # type: ignore[arg-type]
            return client.server_info.version if client.server_info else None

    assert asyncio.run(main()) == __version__
