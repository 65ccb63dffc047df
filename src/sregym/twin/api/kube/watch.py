"""Watch streams: newline-delimited JSON events over a chunked HTTP response.

Semantics follow the real API server: without a resourceVersion (or with "0") the stream starts
with a synthetic ADDED event per existing object, then follows changes; with a resourceVersion it
replays what happened after it, and a version older than the retained history yields an `ERROR`
event carrying a 410 `Expired` Status (kubectl and client-go then relist). With
`sendInitialEvents=true` the initial events end with a BOOKMARK annotated
`k8s.io/initial-events-end`. Table watches (`kubectl get -w`) carry one-row Tables, column
definitions only in the first. The stream ends at `timeoutSeconds`, when the client disconnects
(the response task is cancelled and the store subscription closed), when the client stops reading
for `MAX_PENDING_EVENTS` events, or when the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from sregym.errors import BadRequest, Gone
from sregym.twin.api.kube.encoding import encode_json, wants_table
from sregym.twin.api.kube.listing import field_selector_for, iter_visible, label_selector_for
from sregym.twin.api.kube.rest import Call
from sregym.twin.api.kube.wall_fields import outgoing
from sregym.twin.machinery.authz import hidden_namespaces
from sregym.twin.machinery.selectors import FieldSelector

DEFAULT_TIMEOUT = 1800.0
BOOKMARK_INTERVAL = 60.0
# Events queued for a client that does not read them. The real watch cache gives each watcher a
# bounded buffer and closes an unresponsive one ("Forcing watcher close due to unresponsiveness");
# the client sees its stream end and watches again. Without it, a stalled stream grows forever.
MAX_PENDING_EVENTS = 10_000


class WatchRegistry:
    """Open streams of one app, so the server can end them all when it stops."""

    def __init__(self) -> None:
        self.closing = asyncio.Event()
        self.open = 0

    def close_all(self) -> None:
        self.closing.set()


def _initial_end_bookmark(call: Call, rv: int) -> dict[str, Any]:
    return {"type": "BOOKMARK", "object": {
        "kind": call.kind.kind, "apiVersion": call.kind.api_version,
        "metadata": {"resourceVersion": str(rv),
                     "annotations": {"k8s.io/initial-events-end": "true"}}}}


def watch(call: Call, registry: WatchRegistry, name: str | None = None) -> Response:
    """Open a watch for `call` (collection, or one object when `name` is set)."""
    call.require("watch", name)
    q = call.query
    fields = field_selector_for(call.kind, q.get("fieldSelector"))
    if name is not None:
        fields = FieldSelector((*fields.terms, ("metadata.name", "=", name)))
    labels = label_selector_for(q.get("labelSelector"))
    rv = q.get("resourceVersion") or ""
    if rv and not rv.isdigit():
        raise BadRequest(f'resourceVersion: Invalid value: "{rv}": must be a valid resource version')
    send_initial = (q.get("sendInitialEvents") or "").lower() == "true"
    bookmarks = (q.get("allowWatchBookmarks") or "").lower() == "true"
    timeout = call.int_param("timeoutSeconds")
    timeout_s = float(timeout) if timeout and timeout > 0 else DEFAULT_TIMEOUT
    as_table = wants_table(call.accept)
    if as_table:
        call.include_object()  # reject a bad includeObject before streaming
    hidden = hidden_namespaces(call.user)
    store = call.store
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    opened: list[Any] = []  # the subscription, once open

    def notify() -> None:
        if opened and len(opened[0].events) > MAX_PENDING_EVENTS and not opened[0].closed:
            opened[0].close()  # an unresponsive watcher: drop its backlog, end its stream
            opened[0].events.clear()
        loop.call_soon_threadsafe(wake.set)

    replay = bool(rv) and rv != "0" and not send_initial

    def subscribe() -> tuple[Any, list[dict[str, Any]], int]:
        """Open the store subscription and snapshot the initial state in one synchronous step,
        so no change can fall between them."""
        sub = store.watch(call.kind, call.namespace, resource_version=rv if replay else None,
                          label_selector=labels, field_selector=fields, notify=notify)
        initial: list[dict[str, Any]] = []
        if not replay:
            initial = [o for o in iter_visible(store, call.kind, call.namespace, hidden)
                       if labels.matches((o.get("metadata") or {}).get("labels")) and fields.matches(o)]
        return sub, initial, store.resource_version

    first = [True]

    def encode(event_type: str, obj: dict[str, Any]) -> bytes:
        obj = call.present(obj)
        if as_table:
            tbl = call.as_table([obj], {"resourceVersion": (obj.get("metadata") or {}).get(
                "resourceVersion", "")})
            if not first[0]:
                tbl.pop("columnDefinitions", None)
            first[0] = False
            obj = tbl
        return encode_json({"type": event_type, "object": outgoing(obj)}) + b"\n"

    def visible(obj: dict[str, Any]) -> bool:
        if not hidden:
            return True
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") if call.kind.namespaced else (
            meta.get("name") if call.kind.key == ("", "Namespace") else None)
        return ns not in hidden

    async def stream() -> AsyncIterator[bytes]:
        registry.open += 1
        sub = None
        try:
            try:
                sub, initial, start_rv = subscribe()
            except Gone as exc:
                yield encode_json({"type": "ERROR", "object": exc.to_status()}) + b"\n"
                return
            opened.append(sub)
            for obj in initial:
                yield encode("ADDED", obj)
            if send_initial:
                yield encode_json(_initial_end_bookmark(call, start_rv)) + b"\n"
            deadline = loop.time() + timeout_s
            last_bookmark = loop.time()
            while not registry.closing.is_set() and not sub.closed:
                wake.clear()
                events = sub.drain()
                for event in events:
                    if visible(event.object):
                        yield encode(event.type, event.object)
                if events:
                    await asyncio.sleep(0)
                    continue
                now = loop.time()
                if now >= deadline:
                    return
                if bookmarks and now - last_bookmark >= BOOKMARK_INTERVAL:
                    last_bookmark = now
                    yield encode_json({"type": "BOOKMARK", "object": {
                        "kind": call.kind.kind, "apiVersion": call.kind.api_version,
                        "metadata": {"resourceVersion": str(store.resource_version)}}}) + b"\n"
                waiter = asyncio.ensure_future(wake.wait())
                closer = asyncio.ensure_future(registry.closing.wait())
                try:
                    await asyncio.wait({waiter, closer}, timeout=min(deadline - now, BOOKMARK_INTERVAL),
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for task in (waiter, closer):
                        task.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await task
        finally:
            registry.open -= 1
            if sub is not None:
                sub.close()

    return StreamingResponse(stream(), media_type="application/json",
                             headers={"Cache-Control": "no-cache, private"})


__all__ = ["WatchRegistry", "watch"]
