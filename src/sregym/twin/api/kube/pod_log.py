"""`GET .../pods/<name>/log`: container logs as the API server relays them from the kubelet.

Query parameters are the real `PodLogOptions`: `container`, `previous`, `tailLines`,
`sinceSeconds`, `sinceTime`, `timestamps`, `limitBytes`, `follow`. The body is `text/plain`;
failures are `Status` JSON with the codes kubectl expects (404 unknown pod, 400 for an ambiguous
or unknown container, a container still waiting to start, or no previous instance; 422 for
invalid options), produced by `sregym.twin.node.logs.container_logs`.

`follow=true` streams: first the selected lines, then every new line of the same container
instance as the simulated clock advances. The stream ends when that instance stops (after its
last lines), when the pod goes away, or when the client disconnects, like `kubectl logs -f`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from sregym.errors import ApiError, BadRequest, MethodNotAllowed, invalid
from sregym.twin.api.kube.encoding import error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource
from sregym.twin.api.kube.wall_fields import present_instant, present_log_lines
from sregym.twin.clock import parse_time

POLL_SECONDS = 0.05
TEXT = "text/plain"


def _int(params: Any, name: str) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None


def _bool(params: Any, name: str) -> bool:
    raw = (params.get(name) or "").lower()
    if raw in ("", "false", "0"):
        return False
    if raw in ("true", "1"):
        return True
    raise BadRequest(f'strconv.ParseBool: parsing "{params.get(name)}": invalid syntax')


class LogOptions:
    """Parsed and validated `PodLogOptions`."""

    def __init__(self, params: Any, pod: str, now: float) -> None:
        self.container = params.get("container") or None
        self.previous = _bool(params, "previous")
        self.follow = _bool(params, "follow")
        self.timestamps = _bool(params, "timestamps")
        self.tail = _int(params, "tailLines")
        self.limit_bytes = _int(params, "limitBytes")
        since_seconds = _int(params, "sinceSeconds")
        since_time = params.get("sinceTime")
        causes: list[tuple[str, str, str]] = []
        if self.tail is not None and self.tail < 0:
            causes.append(("FieldValueInvalid", "tailLines",
                           f"Invalid value: {self.tail}: must be greater than or equal to 0"))
        if self.limit_bytes is not None and self.limit_bytes < 1:
            causes.append(("FieldValueInvalid", "limitBytes",
                           f"Invalid value: {self.limit_bytes}: must be greater than 0"))
        if since_seconds is not None and since_seconds < 1:
            causes.append(("FieldValueInvalid", "sinceSeconds",
                           f"Invalid value: {since_seconds}: must be greater than 0"))
        if since_seconds is not None and since_time:
            causes.append(("FieldValueForbidden", "",
                           "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"))
        if causes:
            raise invalid("PodLogOptions", pod, causes)
        self.since_seconds: float | None = float(since_seconds) if since_seconds is not None else None
        if since_time:
            try:
                moment = parse_time(str(since_time))
            except ValueError:
                raise BadRequest(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": '
                                 "cannot parse") from None
            self.since_seconds = max(0.0, now - moment)

    def limit(self, text: str) -> str:
        if self.limit_bytes is None:
            return text
        return text.encode()[: self.limit_bytes].decode("utf-8", errors="ignore")


def read_logs(ctx: RequestContext, namespace: str, name: str, opts: LogOptions) -> str:
    from sregym.twin.node.logs import container_logs

    return container_logs(ctx.twin, namespace, name, opts.container, previous=opts.previous,
                          tail=opts.tail, since_seconds=opts.since_seconds,
                          timestamps=opts.timestamps)


@subresource("pods", "log")
async def pod_log(request: Request, ctx: RequestContext, namespace: str | None,
                  name: str) -> Response:
    namespace = namespace or "default"
    try:
        if request.method != "GET":
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        # sinceTime and --timestamps are in the client's clock (api/wall_time.py).
        opts = LogOptions(request.query_params, name, present_instant(ctx.twin.clock.now))
        text = present_log_lines(read_logs(ctx, namespace, name, opts))
    except ApiError as err:
        return error_response(err)
    if not opts.follow or opts.previous:
        return Response(opts.limit(text).encode(), media_type=TEXT)
    follower = _Follower(ctx, namespace, name, opts)
    return StreamingResponse(follower.stream(request, text), media_type=TEXT)


class _Follower:
    """Tails one container instance's log as simulated time passes."""

    def __init__(self, ctx: RequestContext, namespace: str, pod: str, opts: LogOptions) -> None:
        self.twin = ctx.twin
        self.namespace = namespace
        self.pod = pod
        self.opts = opts
        self.sent_bytes = 0
        self.instance = self._current()
        lines = self._lines()
        self.last = lines[-1] if lines else None

    def _record(self) -> Any:
        runtime = self.twin.services.runtime
        if runtime is None:
            return None
        container = self.opts.container
        if container is None:
            pod = self.twin.store.peek("Pod", self.namespace, self.pod) or {}
            containers = (pod.get("spec") or {}).get("containers") or []
            container = containers[0].get("name") if containers else None
        return runtime.record(self.namespace, self.pod, container) if container else None

    def _current(self) -> Any:
        record = self._record()
        return record.current if record is not None else None

    def _lines(self) -> list[Any]:
        from sregym.twin.node.logs import log_store

        if self.instance is None:
            return []
        return log_store(self.twin).lines(self.instance.container_id)

    def _new_lines(self) -> list[Any]:
        lines = self._lines()
        if self.last is None:
            return lines
        for index in range(len(lines) - 1, -1, -1):
            if lines[index] is self.last:
                return lines[index + 1:]
        # The line we stopped at rotated out of the kept window: resume by time.
        return [line for line in lines if line.at > self.last.at]

    def _render(self, lines: list[Any]) -> str:
        from sregym.twin.node.logs import format_timestamp

        if self.opts.timestamps:
            return present_log_lines("".join(f"{format_timestamp(line.at)} {line.text}\n" for line in lines))
        return present_log_lines("".join(f"{line.text}\n" for line in lines))

    def _take(self, text: str) -> tuple[bytes, bool]:
        """Bytes to send under `limitBytes`, and whether the limit is now reached."""
        data = text.encode()
        if self.opts.limit_bytes is None:
            return data, False
        room = self.opts.limit_bytes - self.sent_bytes
        chunk = data[: max(0, room)]
        self.sent_bytes += len(chunk)
        return chunk, self.sent_bytes >= self.opts.limit_bytes

    def _finished(self) -> bool:
        if self.twin.store.peek("Pod", self.namespace, self.pod) is None:
            return True
        if self.instance is None:
            return True
        return not self.instance.running or self._current() is not self.instance

    async def stream(self, request: Request, first: str) -> AsyncIterator[bytes]:
        chunk, done = self._take(first)
        if chunk:
            yield chunk
        tick = self.twin.clock.ticks
        while not done:
            if self._finished():
                rest = self._new_lines()
                if rest:
                    chunk, _done = self._take(self._render(rest))
                    if chunk:
                        yield chunk
                return
            await asyncio.sleep(POLL_SECONDS)
            if await request.is_disconnected():
                return
            if self.twin.clock.ticks == tick:
                continue
            tick = self.twin.clock.ticks
            fresh = self._new_lines()
            if fresh:
                self.last = fresh[-1]
                chunk, done = self._take(self._render(fresh))
                if chunk:
                    yield chunk


__all__ = ["LogOptions", "pod_log"]
