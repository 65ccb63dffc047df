"""`command`: benchmark any external program (a shell script, a coding agent) as an SRE agent.

The program runs as a subprocess with the `realtime` clock — it acts through the real `kubectl`
and HTTP query APIs while simulated time flows with wall time, as it would on a real cluster.
Its environment holds everything an on-call engineer's laptop would:

- `KUBECONFIG`: the agent credential only (never admin);
- `PROMETHEUS_URL`, `LOKI_URL`, `JAEGER_URL` and `SREGYM_AGENT_TOKEN` (bearer token of those APIs);
- `SREGYM_INSTRUCTIONS`: a Markdown file with the incident page and how to submit;
- `SREGYM_MCP_CONFIG`: an MCP client config (`mcpServers.sregym`) pointing at a streamable-HTTP
  MCP server of the *same* attempt, for agents that prefer tools to a shell;
- `SREGYM_SUBMIT_URL` and `SREGYM_SUBMIT_TOKEN`, used by `sregym-submit` (on `PATH`) to reach
  the submit tools through a loopback HTTP endpoint served here.

Submissions go through the `ToolSession`, so they appear in the trajectory like any tool call;
the program's exit code, stdout and stderr are appended as a final `command` entry. The program
is stopped when the attempt ends (both phases submitted, or a limit ran out) or when its own
`time_limit_s` passes.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.agents import prompts
from sregym.agents.base import Agent
from sregym.agents.registry import agent
from sregym.tools.output import compact

if TYPE_CHECKING:
    from sregym.env.conductor import Conductor
    from sregym.env.models import Brief
    from sregym.tools.session import ToolSession

DEFAULTS: dict[str, Any] = {
    "command": None,  # a shell command line (str) or an argv list
    "time_limit_s": 1800.0,  # wall seconds for the program
    "grace_s": 5.0,  # after the attempt ends, how long the program may take to exit on its own
    "output_chars": 20_000,  # stdout/stderr kept in the trajectory
    "mcp": True,  # serve the attempt's tools over MCP (streamable HTTP) too
    "env": {},  # extra environment variables
    "workdir": None,  # where the program runs (default: a fresh temporary directory)
    "model": None,  # reported with the result (presets pass it on to the CLI)
}


def conductor_of(session: ToolSession) -> Conductor:
    """The conductor behind `session`: a command agent needs the attempt's kubeconfig and URLs
    (what a shell agent is given instead of tools), never the problem."""
    from sregym.env.conductor import _Backend

    backend = session._backend
    if not isinstance(backend, _Backend):
        raise TypeError("the command agent needs a session made by a Conductor")
    return backend._c


@agent
class CommandAgent(Agent):
    """Runs `-o command=...` against the attempt; see the module docstring for its environment."""

    name = "command"
    clock: ClassVar[str | None] = "realtime"
    known_options: ClassVar[dict[str, Any]] = DEFAULTS

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(self.known_options))
        if unknown:
            raise ValueError(f"unknown {self.name} option(s) {', '.join(unknown)}; "
                             f"known: {', '.join(self.known_options)}")
        super().__init__(**{**self.known_options, **options})
        self.validate()
        self.exit_code: int | None = None
        self.stdout = ""
        self.stderr = ""

    def validate(self) -> None:
        if not self.options["command"]:
            raise ValueError("the command agent needs a command: -o command='./my-agent.sh'")

    def argv(self, instructions: str, files: dict[str, Path]) -> list[str] | str:
        """The program to run (presets build theirs from the instructions)."""
        command = self.options["command"]
        if isinstance(command, list):
            return [_absolute(str(command[0])), *(str(a) for a in command[1:])] if command else []
        head, sep, rest = str(command).strip().partition(" ")
        resolved = _absolute(head)
        return (shlex.quote(resolved) if resolved != head else head) + sep + rest

    # --------------------------------------------------------------- run
    def run(self, session: ToolSession, brief: Brief) -> None:
        conductor = conductor_of(session)
        if conductor.clock != "realtime":
            raise RuntimeError(f"the {self.name} agent needs the realtime clock (simulated time must flow "
                               "while an external program works); run it with clock='realtime'")
        own_dir = Path(tempfile.mkdtemp(prefix=f"sregym-{self.name}-"))
        submit = SubmitServer(session)
        mcp = _McpHttp(session, brief.text) if self.options["mcp"] else None
        try:
            submit.start()
            mcp_url = mcp.start() if mcp is not None else None
            files, instructions = self._write_files(own_dir, conductor, brief, mcp_url)
            env = self._environment(conductor, submit, files, brief)
            argv = self.argv(instructions, files)
            workdir = Path(self.options["workdir"] or own_dir / "work")
            workdir.mkdir(parents=True, exist_ok=True)
            phase = conductor.phase
            started = time.monotonic()
            status = self._supervise(session, conductor, argv, env, workdir)
            self._record_output(conductor, argv, phase, status, time.monotonic() - started)
        finally:
            submit.stop()
            if mcp is not None:
                mcp.stop()
            shutil.rmtree(own_dir, ignore_errors=True)

    def _write_files(self, root: Path, conductor: Conductor, brief: Brief,
                     mcp_url: str | None) -> tuple[dict[str, Path], str]:
        urls = conductor.urls
        namespace = brief.namespaces[0] if brief.namespaces else "default"
        mcp_line = (f"- The same tools are also served over MCP (streamable HTTP) at {mcp_url}; the client "
                    f"config is in $SREGYM_MCP_CONFIG.\n" if mcp_url else "")
        text = prompts.COMMAND_INSTRUCTIONS.format(
            brief=brief.text, kubeconfig=conductor.kubeconfig, namespace=namespace,
            prometheus=urls.get("prometheus", "?"), loki=urls.get("loki", "?"), jaeger=urls.get("jaeger", "?"),
            mcp_line=mcp_line, phases=", then ".join(brief.phases), time_limit=int(self.options["time_limit_s"]))
        files = {"instructions": root / "INSTRUCTIONS.md", "mcp": root / "mcp.json", "bin": root / "bin"}
        files["instructions"].write_text(text)
        servers = {"sregym": {"type": "http", "url": mcp_url}} if mcp_url else {}
        files["mcp"].write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
        # `sregym-submit` must be callable even when the console script was not (re)installed.
        files["bin"].mkdir()
        shim = files["bin"] / "sregym-submit"
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sregym.cli.submit \"$@\"\n")
        shim.chmod(0o755)
        return files, text

    def _environment(self, conductor: Conductor, submit: SubmitServer, files: dict[str, Path],
                     brief: Brief) -> dict[str, str]:
        env = dict(os.environ)
        for leaked in ("KUBECONFIG", "SREGYM_SUBMIT_URL", "SREGYM_SUBMIT_TOKEN"):
            env.pop(leaked, None)
        urls = conductor.urls
        env.update({
            "KUBECONFIG": str(conductor.kubeconfig),
            "PROMETHEUS_URL": urls.get("prometheus", ""),
            "LOKI_URL": urls.get("loki", ""),
            "JAEGER_URL": urls.get("jaeger", ""),
            "SREGYM_AGENT_TOKEN": conductor.agent_token,
            "SREGYM_INSTRUCTIONS": str(files["instructions"]),
            "SREGYM_MCP_CONFIG": str(files["mcp"]),
            "SREGYM_SUBMIT_URL": submit.url,
            "SREGYM_SUBMIT_TOKEN": submit.token,
            "SREGYM_NAMESPACE": brief.namespaces[0] if brief.namespaces else "default",
            "PATH": os.pathsep.join([str(files["bin"]), str(Path(sys.executable).parent), env.get("PATH", "")]),
        })
        env.update({str(k): str(v) for k, v in dict(self.options["env"] or {}).items()})
        return env

    def _supervise(self, session: ToolSession, conductor: Conductor, argv: list[str] | str,
                   env: dict[str, str], workdir: Path) -> str:
        """Run the program until it exits, the attempt ends or its time runs out; returns how
        it ended."""
        proc = subprocess.Popen(argv, shell=isinstance(argv, str), cwd=workdir, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        limit = self.options["output_chars"] * 4
        out: list[bytes] = []
        err: list[bytes] = []
        readers = [threading.Thread(target=_drain, args=(proc.stdout, out, limit), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, err, limit), daemon=True)]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + float(self.options["time_limit_s"])
        ended_at: float | None = None
        status = "exited"
        while proc.poll() is None:
            with session._lock:  # a submission may be finishing the attempt on another thread
                finished = conductor.poll()
            now = time.monotonic()
            if finished and ended_at is None:
                ended_at = now
            if ended_at is not None and now - ended_at >= float(self.options["grace_s"]):
                status = "stopped: the attempt is over"
                _stop(proc)
                break
            if now >= deadline:
                status = f"killed: time limit of {self.options['time_limit_s']:.0f}s reached"
                _stop(proc)
                break
            time.sleep(0.1)
        self.exit_code = proc.wait()
        for reader in readers:
            reader.join(timeout=5)
        self.stdout = b"".join(out).decode(errors="replace")
        self.stderr = b"".join(err).decode(errors="replace")
        return status

    def _record_output(self, conductor: Conductor, argv: list[str] | str, phase: str, status: str,
                       wall_s: float) -> None:
        """Append the program's output to the trajectory as a final `command` entry."""
        from sregym.env.models import TrajectoryEntry

        limit = int(self.options["output_chars"])
        text = (f"exit code {self.exit_code} ({status}) after {wall_s:.1f}s wall time\n"
                f"--- stdout ---\n{compact(self.stdout, limit)}\n--- stderr ---\n{compact(self.stderr, limit)}")
        shown = argv if isinstance(argv, str) else shlex.join(argv)
        sim = conductor._sim_elapsed() if conductor._run is not None else 0.0
        entries = conductor._trajectory
        entries.append(TrajectoryEntry(index=len(entries), phase=phase, kind="program", tool="command",
                                       args={"command": compact(shown, 2_000), "exit_code": self.exit_code,
                                             "status": status},
                                       observation=text, is_error=self.exit_code != 0, sim_time=round(sim, 3)))


def _absolute(program: str) -> str:
    """A relative program path (`./agent.sh`) is resolved against the directory sregym was
    started from, because the program itself runs in a fresh working directory."""
    if "/" in program and not program.startswith("/") and Path(program).exists():
        return str(Path(program).resolve())
    return program


def _drain(stream: Any, sink: list[bytes], limit: int) -> None:
    """Read a pipe to its end (so the program never blocks on a full pipe), keeping the first
    `limit` bytes and the most recent ones."""
    size = tail_size = 0
    dropped = False
    tail: deque[bytes] = deque()
    for chunk in iter(lambda: stream.read1(65536), b""):
        if size < limit:
            sink.append(chunk[: limit - size])
            size += len(sink[-1])
            chunk = chunk[len(sink[-1]):]
        if chunk:
            tail.append(chunk)
            tail_size += len(chunk)
            while tail_size - len(tail[0]) >= limit:
                tail_size -= len(tail.popleft())
                dropped = True
    kept = b"".join(tail)
    if len(kept) > limit:
        kept, dropped = kept[-limit:], True
    if kept:
        sink.append((b"\n[... middle of the output dropped ...]\n" if dropped else b"") + kept)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the program's process group (it was started in its own session), then SIGKILL."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


class SubmitServer:
    """Loopback HTTP endpoint for `sregym-submit`: POST /diagnosis, POST /done, GET /status,
    each with `Authorization: Bearer <token>`. Submissions run through the session, so they are
    validated, recorded and end the phases exactly like the submit tools."""

    def __init__(self, session: ToolSession) -> None:
        self.session = session
        self.token = secrets.token_urlsafe(24)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="sregym-submit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def handle(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method == "GET" and path == "/status":
            return 200, {"phase": self.session.phase}
        if method != "POST" or path not in ("/diagnosis", "/done"):
            return 404, {"message": f"no such endpoint {method} {path}"}
        tool = "submit_diagnosis" if path == "/diagnosis" else "submit_mitigation_done"
        result = self.session.call(tool, body if tool == "submit_diagnosis" else {})
        return (409 if result.is_error else 200), {"message": result.text, "phase": self.session.phase}


def _handler(server: SubmitServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self, method: str) -> None:
            if self.headers.get("Authorization") != f"Bearer {server.token}":
                self._reply(401, {"message": "missing or wrong SREGYM_SUBMIT_TOKEN"})
                return
            body: Any = {}
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    self._reply(400, {"message": "the request body is not JSON"})
                    return
            if not isinstance(body, dict):
                self._reply(400, {"message": "the request body must be a JSON object"})
                return
            self._reply(*server.handle(method, self.path.split("?", 1)[0], body))

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


class _McpHttp:
    """The attempt's tool catalogue over MCP streamable HTTP, on a loopback port, in a thread."""

    def __init__(self, session: ToolSession, instructions: str) -> None:
        self.session = session
        self.instructions = instructions
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> str | None:
        """Serve and return the endpoint URL, or None if MCP cannot be served here."""
        try:
            import socket

            import uvicorn

            from sregym.tools.mcp import build_server

            app = build_server(self.session, instructions=self.instructions).streamable_http_app()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            config = uvicorn.Config(app, log_level="warning", lifespan="on")
            self._server = uvicorn.Server(config)
            self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                            name="sregym-mcp", daemon=True)
            self._thread.start()
            deadline = time.monotonic() + 10
            while not self._server.started and time.monotonic() < deadline:
                time.sleep(0.02)
            if not self._server.started:
                self.stop()
                return None
            return f"http://127.0.0.1:{port}/mcp"
        except Exception as exc:  # MCP is a convenience: the shell route still works without it
            print(f"[sregym] {type(exc).__name__} while serving MCP for the command agent: {exc}", file=sys.stderr)
            return None

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None


__all__ = ["DEFAULTS", "CommandAgent", "SubmitServer", "conductor_of"]
