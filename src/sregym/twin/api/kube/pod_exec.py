"""`pods/exec` over the WebSocket channel protocol, as kubectl ≥ 1.30 speaks it.

kubectl opens `GET .../pods/<name>/exec?command=...&container=...&stdout=true&stderr=true` with
`Upgrade: websocket` and the subprotocol `v5.channel.k8s.io` (older clients offer v4 ... v1 and
the base64 variants). Every frame carries one channel: 0 stdin, 1 stdout, 2 stderr, 3 error (a
`Status` JSON written once at the end: Success, or Failure with reason `NonZeroExitCode` and the
exit code in `details.causes`), 4 terminal resize; v5 adds 255 = "close this channel" (the
client's stdin EOF). The server then closes the socket.

Errors reproduce what a real 1.32 API server + kubelet + containerd say, because agents read them:

- before the upgrade (API server): unknown pod ⇒ 404; ambiguous or unknown container, pod not yet
  scheduled ⇒ 400. kubectl then retries over SPDY (POST), which gets the same `Status`, so it
  prints `Error from server (BadRequest): ...`;
- after the upgrade (kubelet, relayed by the API server's stream translator): a container that is
  not running ⇒ `Internal error occurred: unable to upgrade connection: container not found
  ("web")`; an executable that does not exist ⇒ containerd's `OCI runtime exec failed: ...
  executable file not found in $PATH`, wrapped twice in "Internal error occurred";
- a command that exits non-zero ⇒ `command terminated with exit code N` and kubectl exits N.

Commands run in `sregym.twin.userland` (the shell plus exec tools) with the container's
environment and filesystem; `-it` into a shell gets an interactive session.

Limits (see `sregym.twin.node.shell`): the exec'd process shares the container's memory cgroup, so it
is OOM-killed (`command terminated with exit code 137`) when it outgrows the container's limit
minus what the container uses, or the server's per-process cap, whichever is lower. Only the
exec'd process dies and the container keeps running, with the kernel's "Memory cgroup out of
memory" line in the node's log when the container's limit was the one reached: that is a node
with `singleProcessOOMKill` (cgroup v1, or the kubelet option); a cgroup v2 node's default since
Kubernetes 1.28 (`memory.oom.group`) would kill the whole container and restart it as
`OOMKilled`, which the twin does not model for execs. The output is returned when the command
ends, at most `MAX_EXEC_OUTPUT_BYTES` of it (an exec that writes more is ended there with 137),
where a real kubectl streams without bound. The command runs in slices (`EXEC_SLICE_STEPS`), so a
busy loop that runs to its step budget does not stop the server answering other clients.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from sregym.errors import ApiError, BadRequest, InternalError, not_found
from sregym.twin.api.kube.encoding import error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource, websocket_subresource
from sregym.twin.api.wall_time import presenter
from sregym.twin.chaos.kubelet_tls import backend_error
from sregym.twin.machinery.objects import get_path
from sregym.twin.userland.exec_target import container_running, exec_start_error, resolve_container

if TYPE_CHECKING:
    pass

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
EXEC_START_SECONDS = 0.15  # wall time before the first frame (see `handle_exec`)
V5 = "v5.channel.k8s.io"
V4 = "v4.channel.k8s.io"
V4_BASE64 = "v4.base64.channel.k8s.io"
SUPPORTED = (V5, V4, V4_BASE64, "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io",
             "base64.channel.k8s.io")
# How long a non-interactive exec waits for more stdin when the client never signals EOF.
STDIN_IDLE_SECONDS = 1.0
# A real kubelet streams stdin into the process; the twin buffers it before running the command,
# so it keeps at most this much: the rest is read from the socket and discarded.
MAX_STDIN_BYTES = 16 << 20
# An exec runs on the server's event loop in slices of this many steps, other requests between.
EXEC_SLICE_STEPS = 2000


@dataclass
class ExecOptions:
    command: list[str]
    container: str
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


def flag(params: Any, name: str) -> bool:
    return str(params.get(name) or "").lower() in ("true", "1")


def parse_options(params: Any) -> ExecOptions:
    """The exec query string; the same validation the API server applies."""
    command = [str(c) for c in params.getlist("command")]
    opts = ExecOptions(command, str(params.get("container") or ""), flag(params, "stdin"),
                       flag(params, "stdout"), flag(params, "stderr"), flag(params, "tty"))
    if not command:
        raise BadRequest("you must specify at least one command for the container")
    if not (opts.stdin or opts.stdout or opts.stderr):
        raise BadRequest("you must specify at least 1 of stdin, stdout, stderr")
    return opts


def preflight(ctx: RequestContext, namespace: str | None, name: str,
              params: Any) -> tuple[dict[str, Any], ExecOptions]:
    """Everything the API server checks before it upgrades the connection."""
    pod = ctx.twin.store.peek("Pod", namespace or "default", name)
    if pod is None:
        raise not_found("pods", name)
    opts = parse_options(params)
    opts.container = resolve_container(pod, name, opts.container)
    if not get_path(pod, "spec", "nodeName"):
        raise BadRequest(f"pod {name} does not have a host assigned")
    unreachable = backend_error(ctx.twin, pod["spec"]["nodeName"], get_path(pod, "status", "hostIP") or "")
    if unreachable:
        raise InternalError(unreachable)
    return pod, opts


def status_success() -> dict[str, Any]:
    return {"metadata": {}, "status": "Success"}


def status_exit(argv: list[str], code: int) -> dict[str, Any]:
    """The kubelet's NonZeroExitCode status (kubectl prints "command terminated with exit code")."""
    command = " ".join(argv)
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command "
                       f"[{command}], exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def status_internal(message: str) -> dict[str, Any]:
    err = InternalError(f"Internal error occurred: {message}",
                        details={"causes": [{"message": message}]})
    status = err.to_status()
    status.pop("kind", None)
    status.pop("apiVersion", None)
    return status


# ----------------------------------------------------------------------------- framing
class ChannelSocket:
    """Frames for one negotiated channel protocol."""

    def __init__(self, websocket: WebSocket, protocol: str) -> None:
        self.ws = websocket
        self.protocol = protocol
        self.base64 = "base64" in protocol
        self.version = 5 if protocol == V5 else 4 if protocol.startswith("v4") else 1

    async def send(self, channel: int, data: bytes | str) -> None:
        payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        if not payload and channel in (STDOUT, STDERR):
            return
        if self.base64:
            await self.ws.send_text(str(channel) + base64.b64encode(payload).decode())
        else:
            await self.ws.send_bytes(bytes([channel]) + payload)

    async def send_status(self, status: dict[str, Any]) -> None:
        if self.version >= 4:
            await self.send(ERROR, json.dumps(status, separators=(",", ":")))
        elif status.get("status") != "Success":
            # v1-v3 carry the plain error text on the error channel.
            await self.send(ERROR, str(status.get("message") or ""))

    def decode(self, message: dict[str, Any]) -> tuple[int, bytes] | None:
        if message.get("bytes") is not None:
            raw: bytes = message["bytes"]
            if not raw:
                return None
            return raw[0], raw[1:]
        text = message.get("text")
        if not text:
            return None
        if self.base64:
            try:
                return int(text[0]), base64.b64decode(text[1:])
            except (ValueError, TypeError):
                return None
        encoded = text.encode()
        return encoded[0], encoded[1:]

    async def close(self) -> None:
        try:
            await self.ws.close(code=1000)
        except (RuntimeError, WebSocketDisconnect):
            return


def negotiate(websocket: WebSocket) -> str | None:
    offered = [p.strip() for p in websocket.scope.get("subprotocols") or []]
    for protocol in offered:
        if protocol in SUPPORTED:
            return protocol
    return None


async def deny(websocket: WebSocket, err: ApiError) -> None:
    """Refuse the upgrade with the API server's Status body (or a policy close)."""
    try:
        await websocket.send_denial_response(error_response(err))
    except RuntimeError:
        await websocket.close(code=1008, reason=err.message[:120])


async def open_channels(websocket: WebSocket) -> ChannelSocket | None:
    """Negotiate the channel protocol and accept the upgrade (exec and attach share it), or refuse
    it with the API server's message and return None."""
    protocol = negotiate(websocket)
    offered = websocket.scope.get("subprotocols") or []
    if protocol is None and offered:
        await deny(websocket, BadRequest(
            f"unable to upgrade: unable to negotiate protocol: client supports {offered}, "
            f"server accepts {list(SUPPORTED)}"))
        return None
    await websocket.accept(subprotocol=protocol)
    # client-go starts reading frames before it has registered its streams and drops frames for
    # streams it does not know yet ("Unknown stream id 3, discarding message"). A real exec spends
    # tens of milliseconds starting the process before anything is written, which hides that race;
    # wait as long before the first frame.
    await asyncio.sleep(EXEC_START_SECONDS)
    return ChannelSocket(websocket, protocol or "channel.k8s.io")


async def serve_upgrade(websocket: WebSocket, prepare: Callable[[], tuple[dict[str, Any], ExecOptions]],
                        serve: Callable[[ChannelSocket, dict[str, Any], ExecOptions], Awaitable[None]]) -> None:
    """One channel subresource (exec, attach): check the request (`prepare` raises the API error
    the upgrade is refused with), upgrade, `serve`, close; a client that hangs up ends it quietly."""
    try:
        pod, opts = prepare()
    except ApiError as err:
        await deny(websocket, err)
        return
    channels = await open_channels(websocket)
    if channels is None:
        return
    try:
        await serve(channels, pod, opts)
    except WebSocketDisconnect:
        return
    await channels.close()


async def running_pod(channels: ChannelSocket, twin: Any, pod: dict[str, Any],
                      container: str) -> dict[str, Any] | None:
    """The pod read again (it may have changed since the upgrade), or None once the client has
    been told the container is not running."""
    pod = twin.store.peek("Pod", get_path(pod, "metadata", "namespace"),
                          get_path(pod, "metadata", "name")) or pod
    if not container_running(pod, container):
        await channels.send_status(status_internal(
            f'unable to upgrade connection: container not found ("{container}")'))
        return None
    return pod


# ----------------------------------------------------------------------------- handlers
@websocket_subresource("pods", "exec")
async def exec_websocket(websocket: WebSocket, ctx: RequestContext, namespace: str | None,
                         name: str) -> None:
    await serve_upgrade(websocket, lambda: preflight(ctx, namespace, name, websocket.query_params),
                        lambda channels, pod, opts: _serve(channels, ctx, pod, opts))


async def _serve(channels: ChannelSocket, ctx: RequestContext, pod: dict[str, Any],
                 opts: ExecOptions) -> None:
    from sregym.twin.userland.context import ExecRun, exec_context, executable_exists, keep_writes
    from sregym.twin.userland.session import TtySession, is_interactive_shell

    twin = ctx.twin
    found = await running_pod(channels, twin, pod, opts.container)
    if found is None:
        return
    pod = found
    context = exec_context(twin, pod, opts.container, tty=opts.tty, present_time=presenter())
    if not executable_exists(context, opts.command[0]):
        message = exec_start_error(twin, pod, opts.container, opts.command[0])
        await channels.send_status(status_internal(message))
        return
    if opts.stdin and opts.tty and is_interactive_shell(opts.command):
        session = TtySession(context, opts.command)
        await channels.send(STDOUT, session.start())
        code = await _interactive(channels, session)
        keep_writes(context)
        await channels.send_status(status_success() if code == 0 else status_exit(opts.command, code))
        return
    stdin = await read_stdin(channels) if opts.stdin and not opts.tty else ""
    run = ExecRun(context, opts.command, stdin)
    while not run.step(EXEC_SLICE_STEPS):
        await asyncio.sleep(0)  # let the server answer other clients meanwhile
    result = run.result()
    stdout, stderr = result.stdout, result.stderr
    if opts.tty:
        # A TTY merges stderr into stdout and turns newlines into CRLF.
        stdout = (stdout + stderr).replace("\r\n", "\n").replace("\n", "\r\n")
        stderr = ""
    # Diagnostics first: a tool complains while it works (`tar: Removing leading ...`) and its
    # client may stop reading once stdout ends (`kubectl cp` after the archive's last block).
    if opts.stderr:
        await channels.send(STDERR, stderr)
    if opts.stdout:
        await channels.send(STDOUT, stdout)
    code = result.exit_code
    await channels.send_status(status_success() if code == 0 else status_exit(opts.command, code))


async def read_stdin(channels: ChannelSocket) -> str:
    """Collect stdin until the client's EOF (v5 close of channel 0), a disconnect, or silence."""
    data = bytearray()
    while True:
        try:
            message = await asyncio.wait_for(channels.ws.receive(), STDIN_IDLE_SECONDS)
        except TimeoutError:
            break
        if message.get("type") == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        frame = channels.decode(message)
        if frame is None:
            continue
        channel, payload = frame
        if channel == STDIN:
            data.extend(payload[:max(0, MAX_STDIN_BYTES - len(data))])
        elif channel == CLOSE and payload[:1] == bytes([STDIN]):
            break
    # surrogateescape: a tar archive streamed in by `kubectl cp` survives byte for byte.
    return data.decode("utf-8", errors="surrogateescape")


async def _interactive(channels: ChannelSocket, session: Any) -> int:
    """Relay keystrokes to a TTY session until the shell exits or the client goes away."""
    while session.exit_code is None:
        message = await channels.ws.receive()
        if message.get("type") == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        frame = channels.decode(message)
        if frame is None:
            continue
        channel, payload = frame
        if channel == STDIN:
            echo = session.feed(payload.decode("utf-8", errors="replace"))
            await channels.send(STDOUT, echo)
        elif channel == CLOSE and payload[:1] == bytes([STDIN]):
            break
    return int(session.exit_code or 0)


@subresource("pods", "exec")
async def exec_http(request: Request, ctx: RequestContext, namespace: str | None,
                    name: str) -> Response:
    """A plain HTTP (or SPDY, kubectl's fallback) exec request: the same checks, then the API
    server's answer for a connection that was not upgraded to WebSocket."""
    try:
        preflight(ctx, namespace, name or "", request.query_params)
    except ApiError as err:
        return error_response(err)
    return error_response(BadRequest("Upgrade request required"))
