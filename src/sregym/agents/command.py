"""`command`: benchmark any external program (a shell script, a coding agent) as an SRE agent.

The program runs in a sandbox (`sregym.sandbox`: its own user, mount and PID namespaces, a
private /proc, only the system directories and what it is given, a size-limited scratch HOME)
with the `realtime` clock — it acts through the real `kubectl`
and HTTP query APIs while simulated time flows with wall time, as it would on a real cluster.
Its environment holds everything an on-call engineer's laptop would:

- `KUBECONFIG`: a copy of the agent kubeconfig (the agent credential only, never admin);
- `PROMETHEUS_URL`, `LOKI_URL`, `JAEGER_URL` and `SREGYM_AGENT_TOKEN` (bearer token of those APIs);
- `SREGYM_INSTRUCTIONS`: a Markdown file with the incident page and how to submit;
- `SREGYM_MCP_CONFIG`: an MCP client config (`mcpServers.sregym`) pointing at a streamable-HTTP
  MCP server of the *same* attempt, for agents that prefer tools to a shell;
- `SREGYM_SUBMIT_URL` and `SREGYM_SUBMIT_TOKEN`, used by `sregym-submit` (on `PATH`; a
  standalone standard-library script, since the sregym package is hidden) to reach the submit
  tools through a loopback HTTP endpoint served here.

Nothing else of ours is visible: not our environment (variables pass only by name, `pass_env`),
not our files, not our process. The program is checked when the agent is built (a program that
is not there is a `SetupError`, so a run refuses before its first attempt), and a program that
exits 126/127 (an interpreter that is missing inside the sandbox, say) is a `SetupError` too: an
environment failure, not the agent's.

Submissions go through the `ToolSession`, so they appear in the trajectory like any tool call;
the program's exit code, stdout and stderr are appended as a final `command` entry. The program
is stopped when the attempt ends (both phases submitted, or a limit ran out) or when its own
`time_limit_s` passes: SIGTERM first, SIGKILL `stop_grace_s` later, and then the whole PID
namespace goes, background processes included.
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
from sregym.agents.base import Agent, Capability
from sregym.agents.registry import agent
from sregym.errors import SetupError
from sregym.sandbox import SAFE_PATH, SYSTEM_DIRS, Sandbox, require_sandbox
from sregym.tools.output import compact

if TYPE_CHECKING:
    from sregym.env.capabilities import ShellAccess
    from sregym.env.models import Brief
    from sregym.tools.session import ToolSession

DEFAULTS: dict[str, Any] = {
    "command": None,  # a shell command line (str) or an argv list
    "time_limit_s": 1800.0,  # wall seconds for the program
    "grace_s": 5.0,  # after the attempt ends, how long the program may take to exit on its own
    "output_chars": 20_000,  # stdout/stderr kept in the trajectory
    "mcp": True,  # serve the attempt's tools over MCP (streamable HTTP) too
    "env": {},  # extra environment variables
    "pass_env": [],  # names of our environment variables the program may see (nothing else passes)
    "workdir": None,  # a host directory the program runs in, read-write (default: its scratch HOME)
    "share": [],  # more host paths the program may read (its own files are shared already)
    "scratch_mb": 512,  # size of the scratch HOME (and /tmp), a tmpfs
    "stop_grace_s": 5.0,  # between SIGTERM and SIGKILL when the program is stopped
    "sandbox": True,  # false: run unconfined (the program can read the ground truth; debugging only)
    "model": None,  # reported with the result (presets pass it on to the CLI)
}

# Variables every program gets from our environment when set (a hosted model's CLI behind a proxy
# needs them; none of them is ours).
PASSED_ALWAYS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                 "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "TZ")
# First words of a shell command line that are not programs on PATH.
_SHELL_WORDS = frozenset({"!", ".", ":", "[", "[[", "{", "case", "cd", "command", "eval", "exec", "export", "for",
                          "if", "set", "source", "test", "time", "trap", "true", "false", "ulimit", "umask",
                          "unset", "until", "wait", "while", "echo", "printf", "read"})


@agent
class CommandAgent(Agent):
    """Runs `-o command=...` against the attempt; see the module docstring for its environment."""

    name = "command"
    clock: ClassVar[str | None] = "realtime"
    # The program gets the attempt's kubeconfig, URLs and token (SHELL); its submissions and the
    # MCP server go through the session (TOOLS).
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.TOOLS, Capability.SHELL})
    offline_driver: ClassVar[str | None] = "command"
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
        self.executable = check_program(self.options["command"], what=f"the {self.name} agent's program")
        self.check_sandbox()

    def check_sandbox(self) -> None:
        """Refuse now, before any attempt, when programs cannot be sandboxed here."""
        if truthy(self.options["sandbox"]):
            require_sandbox(f"the {self.name} agent's program")

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
        shell = self.shell
        if shell.clock != "realtime":
            raise RuntimeError(f"the {self.name} agent needs the realtime clock (simulated time must flow "
                               "while an external program works); run it with clock='realtime'")
        own_dir = Path(tempfile.mkdtemp(prefix=f"sregym-{self.name}-"))
        submit = SubmitServer(session)
        mcp = _McpHttp(session, brief.text) if self.options["mcp"] else None
        try:
            submit.start()
            mcp_url = mcp.start() if mcp is not None else None
            files, instructions = self._write_files(own_dir / "agent", shell, brief, mcp_url)
            argv = self.argv(instructions, files)
            command = ["/bin/sh", "-c", argv] if isinstance(argv, str) else list(argv)
            env = self._environment(shell, submit, files, brief)
            sandbox = self._sandbox(files, command)
            cwd = own_dir  # the sandbox changes into its own working directory
            if sandbox is not None:
                env = sandbox.environment(env)
                command = sandbox.wrap(command)
            else:
                print(f"[sregym] warning: the {self.name} agent's program runs UNCONFINED (-o sandbox=false): "
                      "it can read the ground truth; its scores mean nothing", file=sys.stderr)
                env = {**os.environ, **env}
                cwd = Path(self.options["workdir"] or own_dir / "work")
                cwd.mkdir(parents=True, exist_ok=True)
            phase = session.phase
            started = time.monotonic()
            status = self._supervise(session, shell, command, env, cwd)
            self._record_output(shell, argv, phase, status, time.monotonic() - started)
        finally:
            submit.stop()
            if mcp is not None:
                mcp.stop()
            shutil.rmtree(own_dir, ignore_errors=True)
        if self.exit_code in (126, 127):
            detail = compact(self.stderr.strip(), 2_000) or "(no output on stderr)"
            raise SetupError(f"the {self.name} agent's program could not be run (exit code {self.exit_code}): "
                             f"{detail} — its sandbox sees the system directories, sregym's Python, the "
                             "program's own files and what -o share=PATH names")

    def _write_files(self, root: Path, shell: ShellAccess, brief: Brief,
                     mcp_url: str | None) -> tuple[dict[str, Path], str]:
        """What the program is given, in one directory it sees read-only: the instructions, the
        MCP client config, a copy of the agent kubeconfig and the standalone `sregym-submit`."""
        root.mkdir(mode=0o755)
        files = {"instructions": root / "INSTRUCTIONS.md", "mcp": root / "mcp.json", "bin": root / "bin",
                 "kubeconfig": root / "kubeconfig"}
        if shell.kubeconfig is not None:
            shutil.copyfile(shell.kubeconfig, files["kubeconfig"])
            files["kubeconfig"].chmod(0o600)
        urls = shell.urls
        namespace = brief.namespaces[0] if brief.namespaces else "default"
        mcp_line = (f"- The same tools are also served over MCP (streamable HTTP) at {mcp_url}; the client "
                    f"config is in $SREGYM_MCP_CONFIG.\n" if mcp_url else "")
        text = prompts.COMMAND_INSTRUCTIONS.format(
            brief=brief.text, kubeconfig=files["kubeconfig"], namespace=namespace,
            prometheus=urls.get("prometheus", "?"), loki=urls.get("loki", "?"), jaeger=urls.get("jaeger", "?"),
            mcp_line=mcp_line, phases=", then ".join(brief.phases), time_limit=int(self.options["time_limit_s"]))
        files["instructions"].write_text(text)
        servers = {"sregym": {"type": "http", "url": mcp_url}} if mcp_url else {}
        files["mcp"].write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
        files["bin"].mkdir()
        write_submit_script(files["bin"] / "sregym-submit")
        return files, text

    def _environment(self, shell: ShellAccess, submit: SubmitServer, files: dict[str, Path],
                     brief: Brief) -> dict[str, str]:
        """The program's environment: what an on-call engineer's shell would hold, the variables
        named by `pass_env` (and the proxy/CA settings), nothing else of ours."""
        env = {name: os.environ[name] for name in (*PASSED_ALWAYS, *self.passed_env()) if name in os.environ}
        urls = shell.urls
        path = [str(files["bin"]), *self.program_dirs(), str(Path(sys.executable).parent), SAFE_PATH]
        env.update({
            "KUBECONFIG": str(files["kubeconfig"]),
            "PROMETHEUS_URL": urls.get("prometheus", ""),
            "LOKI_URL": urls.get("loki", ""),
            "JAEGER_URL": urls.get("jaeger", ""),
            "SREGYM_AGENT_TOKEN": shell.token,
            "SREGYM_INSTRUCTIONS": str(files["instructions"]),
            "SREGYM_MCP_CONFIG": str(files["mcp"]),
            "SREGYM_SUBMIT_URL": submit.url,
            "SREGYM_SUBMIT_TOKEN": submit.token,
            "SREGYM_NAMESPACE": brief.namespaces[0] if brief.namespaces else "default",
            "PATH": os.pathsep.join(dict.fromkeys(path)),
        })
        env.update({str(k): str(v) for k, v in dict(self.options["env"] or {}).items()})
        return env

    def passed_env(self) -> list[str]:
        """Names of our environment variables the program sees (`pass_env`)."""
        return names(self.options["pass_env"])

    def program_dirs(self) -> list[str]:
        """Directories to put on the program's PATH (where its binary was found)."""
        if self.executable and not _under_system_dirs(self.executable):
            return [str(Path(self.executable).parent)]
        return []

    def _sandbox(self, files: dict[str, Path], command: list[str]) -> Sandbox | None:
        """The program's sandbox (None when `sandbox=false`): its files read-only, the program and
        any path named on its command line read-only, `workdir` read-write."""
        if not truthy(self.options["sandbox"]):
            return None
        shared: list[Path] = [files["instructions"].parent]
        shared += shared_program_paths(command, self.executable)
        shared += [Path(p).expanduser().resolve() for p in names(self.options["share"])]
        workdir = Path(self.options["workdir"]).expanduser().resolve() if self.options["workdir"] else None
        if workdir is not None:
            workdir.mkdir(parents=True, exist_ok=True)
        return Sandbox(scratch_mb=int(self.options["scratch_mb"]), workdir=workdir,
                       read_only=tuple(dict.fromkeys(shared)), writable=(workdir,) if workdir else ())

    def _supervise(self, session: ToolSession, shell: ShellAccess, argv: list[str],
                   env: dict[str, str], workdir: Path) -> str:
        """Run the program until it exits, the attempt ends or its time runs out; returns how
        it ended."""
        proc = subprocess.Popen(argv, cwd=workdir, env=env,
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
                finished = shell.poll()
            now = time.monotonic()
            if finished and ended_at is None:
                ended_at = now
            if ended_at is not None and now - ended_at >= float(self.options["grace_s"]):
                status = "stopped: the attempt is over"
                _stop(proc, float(self.options["stop_grace_s"]))
                break
            if now >= deadline:
                status = f"killed: time limit of {self.options['time_limit_s']:.0f}s reached"
                _stop(proc, float(self.options["stop_grace_s"]))
                break
            time.sleep(0.1)
        self.exit_code = proc.wait()
        for reader in readers:
            reader.join(timeout=5)
        self.stdout = b"".join(out).decode(errors="replace")
        self.stderr = b"".join(err).decode(errors="replace")
        return status

    def _record_output(self, shell: ShellAccess, argv: list[str] | str, phase: str, status: str,
                       wall_s: float) -> None:
        """Append the program's output to the trajectory as a final `command` entry."""
        limit = int(self.options["output_chars"])
        text = (f"exit code {self.exit_code} ({status}) after {wall_s:.1f}s wall time\n"
                f"--- stdout ---\n{compact(self.stdout, limit)}\n--- stderr ---\n{compact(self.stderr, limit)}")
        shown = argv if isinstance(argv, str) else shlex.join(argv)
        shell.record_program(phase, {"command": compact(shown, 2_000), "exit_code": self.exit_code, "status": status},
                             text, self.exit_code != 0)


def _absolute(program: str) -> str:
    """A relative program path (`./agent.sh`) is resolved against the directory sregym was
    started from, because the program itself runs in a fresh working directory."""
    if "/" in program and not program.startswith("/") and Path(program).exists():
        return str(Path(program).resolve())
    return program


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "off")
    return bool(value)


def names(value: Any) -> list[str]:
    """A list option given as a list or as one comma-separated string (`-o pass_env=A,B`)."""
    if not value:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _under_system_dirs(path: str | Path) -> bool:
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d.rstrip("/") + "/") for d in SYSTEM_DIRS)


def _first_word(command: str | list[Any]) -> tuple[str, bool]:
    """(the program of `command`, whether the command is a shell line)."""
    if isinstance(command, list):
        return (str(command[0]) if command else ""), False
    try:
        words = shlex.split(str(command))
    except ValueError as exc:
        raise ValueError(f"cannot parse the command line ({exc}); check the quoting") from None
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        words = words[1:]  # VAR=value prefixes
    return (words[0] if words else ""), True


def check_program(command: str | list[Any], *, what: str = "the agent's program") -> str | None:
    """The absolute path of `command`'s program, or `SetupError` in one line when it is not there
    or not executable. A shell line starting with a builtin or keyword is left to the shell."""
    word, shell = _first_word(command)
    if not word:
        raise ValueError("the command is empty")
    if shell and word in _SHELL_WORDS:
        return None
    if "/" in word:
        path = Path(_absolute(word)).expanduser()
        if not path.exists():
            raise SetupError(f"{what} {word} does not exist")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise SetupError(f"{what} {word} is not executable (chmod +x {path})")
        return str(path.absolute())
    found = shutil.which(word)
    if found is None:
        raise SetupError(f"{what} {word} is not found on PATH")
    return found


def shared_program_paths(argv: list[str], executable: str | None) -> list[Path]:
    """Host paths a program needs to see to start at all: its executable (with the installation
    prefix it lives in, for `PREFIX/bin/NAME`) and every existing absolute path on its command
    line. System directories are visible anyway."""
    paths: list[Path] = []
    words = list(argv)
    if len(words) >= 3 and words[:2] == ["/bin/sh", "-c"]:
        with contextlib.suppress(ValueError):
            words = [*words[:2], *shlex.split(words[2])]
    candidates = [executable] if executable else []
    candidates += [w for w in words if w.startswith("/")]
    for word in candidates:
        if not word or not os.path.exists(word) or _under_system_dirs(word):
            continue
        path = Path(word).absolute()
        paths.append(path)
        real = Path(os.path.realpath(path))
        if real != path:
            paths.append(real)
        for exe in {path, real}:
            if exe.parent.name == "bin" and exe.parent.parent != Path("/") and word == executable:
                paths.append(exe.parent.parent)
    return list(dict.fromkeys(paths))


def write_submit_script(path: Path) -> Path:
    """`sregym-submit` as a standalone script: the standard-library client of `sregym.cli.submit`
    run by the base interpreter in isolated mode, so it works where the sregym package is hidden."""
    from sregym.cli import submit

    source = Path(submit.__file__).read_text(encoding="utf-8")
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    path.write_text(f"#!{python} -IS\n{source}", encoding="utf-8")
    path.chmod(0o755)
    return path


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


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM the program's process group (it was started in its own session), then SIGKILL
    it. Killing the group kills the sandbox's PID 1, and with it every process of the namespace,
    including those that left the group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.0, grace_s))
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class SubmitServer:
    """Loopback HTTP endpoint for `sregym-submit`: POST /detection, /diagnosis, /done, GET /status,
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
        tools = {"/detection": "submit_detection", "/diagnosis": "submit_diagnosis", "/done": "submit_mitigation_done"}
        if method != "POST" or path not in tools:
            return 404, {"message": f"no such endpoint {method} {path}"}
        tool = tools[path]
        result = self.session.call(tool, body if tool != "submit_mitigation_done" else {})
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

            secret = "/" + secrets.token_urlsafe(18)
            app = _behind(secret, build_server(self.session, instructions=self.instructions).streamable_http_app())
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
            return f"http://127.0.0.1:{port}{secret}/mcp"
        except Exception as exc:  # MCP is a convenience: the shell route still works without it
            print(f"[sregym] {type(exc).__name__} while serving MCP for the command agent: {exc}", file=sys.stderr)
            return None

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None


def _behind(prefix: str, app: Any) -> Any:
    """`app` served only under the unguessable path `prefix`: every agent shares the loopback
    interface, and another attempt's agent must not reach this attempt's tools."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            if not path.startswith(prefix + "/"):
                await send({"type": "http.response.start", "status": 404,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"not found"})
                return
            rest = path[len(prefix):]
            scope = {**scope, "path": rest, "raw_path": rest.encode()}
        await app(scope, receive, send)

    return guarded


__all__ = ["DEFAULTS", "CommandAgent", "SubmitServer", "check_program", "shared_program_paths",
           "write_submit_script"]
