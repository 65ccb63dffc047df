"""`pods/attach`: kubectl attach (and `kubectl run -i`, `kubectl debug -it`) to a running container.

The same WebSocket channel protocol as `pods/exec` (see `pod_exec`; kubectl 1.32 offers
`v5.channel.k8s.io`), but no command: the client joins the container's main process.

- Without stdin, the client sees the process's output from the moment it attached (what it wrote
  before is only in `kubectl logs`), line by line as the kubelet records it, until the container
  stops or the client goes away.
- With stdin, into a shell waiting on it (`sregym.twin.node.stdin`): without a TTY the input up to
  EOF is the shell's script (`kubectl run -i ... -- sh` fed from a pipe), with a TTY the keystrokes
  drive a terminal session; either way the session's output becomes the container's log and the
  shell's exit status its exit code. The shell printed its prompt before anyone attached, so a
  terminal shows nothing until Enter (hence kubectl's "If you don't see a command prompt, try
  pressing enter.").
- When the process ends the kubelet reports Success on the error channel: the exit status is the
  container's (`kubectl run` reads it from the pod status), not the stream's.

Errors before the upgrade are the API server's (404 for the pod, 400 for the container or an
unscheduled pod); a container that is not running fails after the upgrade like exec's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from sregym.errors import ApiError, BadRequest, not_found
from sregym.twin.api.kube.encoding import error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource, websocket_subresource
from sregym.twin.api.kube.pod_exec import (
    CLOSE,
    EXEC_SLICE_STEPS,
    STDERR,
    STDIN,
    STDOUT,
    ChannelSocket,
    ExecOptions,
    flag,
    read_stdin,
    running_pod,
    serve_upgrade,
    status_success,
)
from sregym.twin.api.wall_time import presenter
from sregym.twin.machinery.objects import get_path
from sregym.twin.userland.exec_target import resolve_container

# Wall seconds between looks at the container's log while streaming it.
POLL_SECONDS = 0.05


def preflight(ctx: RequestContext, namespace: str | None, name: str,
              params: Any) -> tuple[dict[str, Any], ExecOptions]:
    pod = ctx.twin.store.peek("Pod", namespace or "default", name)
    if pod is None:
        raise not_found("pods", name)
    opts = ExecOptions([], str(params.get("container") or ""), flag(params, "stdin"),
                       flag(params, "stdout"), flag(params, "stderr"), flag(params, "tty"))
    if not (opts.stdin or opts.stdout or opts.stderr):
        raise BadRequest("you must specify at least 1 of stdin, stdout, stderr")
    opts.container = resolve_container(pod, name, opts.container)
    if not get_path(pod, "spec", "nodeName"):
        raise BadRequest(f"pod {name} does not have a host assigned")
    return pod, opts


@websocket_subresource("pods", "attach")
async def attach_websocket(websocket: WebSocket, ctx: RequestContext, namespace: str | None,
                           name: str) -> None:
    await serve_upgrade(websocket, lambda: preflight(ctx, namespace, name, websocket.query_params),
                        lambda channels, pod, opts: _serve(channels, ctx, pod, opts))


async def _serve(channels: ChannelSocket, ctx: RequestContext, pod: dict[str, Any],
                 opts: ExecOptions) -> None:
    from sregym.twin.node.runtime import runtime_of
    from sregym.twin.node.stdin import is_waiting

    twin = ctx.twin
    namespace = str(get_path(pod, "metadata", "namespace") or "default")
    name = str(get_path(pod, "metadata", "name") or "")
    found = await running_pod(channels, twin, pod, opts.container)
    if found is None:
        return
    pod = found
    instance = runtime_of(twin).instance(namespace, name, opts.container)
    if opts.stdin and is_waiting(instance):
        assert instance is not None
        if opts.tty:
            await _terminal(channels, ctx, pod, opts, list(instance.argv))
        else:
            await _script(channels, ctx, pod, opts, list(instance.argv))
        await channels.send_status(status_success())
        return
    await _follow(channels, ctx, namespace, name, opts)
    await channels.send_status(status_success())


async def _script(channels: ChannelSocket, ctx: RequestContext, pod: dict[str, Any],
                  opts: ExecOptions, argv: list[str]) -> None:
    """stdin up to EOF is the waiting shell's script."""
    from sregym.twin.node.stdin import deliver
    from sregym.twin.userland.context import ExecRun, exec_context

    stdin = await read_stdin(channels)
    run = ExecRun(exec_context(ctx.twin, pod, opts.container, present_time=presenter()), argv, stdin)
    while not run.step(EXEC_SLICE_STEPS):
        await asyncio.sleep(0)
    result = run.result()
    if opts.stderr:
        await channels.send(STDERR, result.stderr)
    if opts.stdout:
        await channels.send(STDOUT, result.stdout)
    meta = pod["metadata"]
    deliver(ctx.twin, meta["namespace"], meta["name"], opts.container,
            [("stdout", result.stdout), ("stderr", result.stderr)], result.exit_code)


async def _terminal(channels: ChannelSocket, ctx: RequestContext, pod: dict[str, Any],
                    opts: ExecOptions, argv: list[str]) -> None:
    """Keystrokes into the waiting shell on its terminal; the transcript is its log."""
    from sregym.twin.node.stdin import deliver
    from sregym.twin.userland.context import exec_context, keep_writes
    from sregym.twin.userland.session import TtySession

    context = exec_context(ctx.twin, pod, opts.container, tty=True, present_time=presenter())
    session = TtySession(context, argv)
    transcript: list[str] = []
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
            transcript.append(echo)
            await channels.send(STDOUT, echo)
        elif channel == CLOSE and payload[:1] == bytes([STDIN]):
            break
    keep_writes(context)
    meta = pod["metadata"]
    text = "".join(transcript).replace("\r\n", "\n")
    deliver(ctx.twin, meta["namespace"], meta["name"], opts.container, [("stdout", text)],
            int(session.exit_code or 0))


async def _follow(channels: ChannelSocket, ctx: RequestContext, namespace: str, name: str,
                  opts: ExecOptions) -> None:
    """The container's output from now on, until it stops or the client leaves."""
    from sregym.twin.node.logs import log_store
    from sregym.twin.node.runtime import runtime_of

    instance = runtime_of(ctx.twin).instance(namespace, name, opts.container)
    if instance is None:
        return
    logs = log_store(ctx.twin)
    seen = len(logs.lines(instance.container_id))
    while True:
        lines = logs.lines(instance.container_id)
        for line in lines[seen:]:
            text = line.text + "\n"
            if opts.tty:
                await channels.send(STDOUT, text.replace("\n", "\r\n"))
            elif line.stream == "stderr" and opts.stderr:
                await channels.send(STDERR, text)
            elif line.stream != "stderr" and opts.stdout:
                await channels.send(STDOUT, text)
        seen = len(lines)
        if not instance.running:
            return
        try:
            message = await asyncio.wait_for(channels.ws.receive(), POLL_SECONDS)
        except TimeoutError:
            continue
        if message.get("type") == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))


@subresource("pods", "attach")
async def attach_http(request: Request, ctx: RequestContext, namespace: str | None,
                      name: str) -> Response:
    """A request that was not upgraded (kubectl's SPDY fallback): the checks, then the refusal."""
    try:
        preflight(ctx, namespace, name or "", request.query_params)
    except ApiError as err:
        return error_response(err)
    return error_response(BadRequest("Upgrade request required"))
