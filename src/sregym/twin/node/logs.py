"""Container and node logs, kept the way the kubelet/CRI keeps them.

Each container *instance* (one start of a container, identified by its containerID) has its own
log, so `kubectl logs --previous` reads the instance before the current one, exactly like the
files under /var/log/pods/<ns>_<pod>_<uid>/<container>/<restartCount>.log. Node logs (kubelet,
kernel, containerd journal sources) hang off the node name. Every line carries the simulated
time it was written; listeners (a Loki-like log pipeline, later) are told about each new line.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.errors import BadRequest, not_found

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# Per-instance cap (the kubelet rotates at 10 MiB; lines are a cheaper proxy here).
MAX_LINES = 5000


@dataclass(frozen=True)
class LogLine:
    at: float  # simulated epoch seconds
    stream: str  # "stdout" | "stderr" (node logs: the source, e.g. "kubelet", "kernel")
    text: str


LineListener = Callable[[str, LogLine, dict[str, Any]], None]


class LogStore:
    """Lines per container instance and per node source."""

    def __init__(self) -> None:
        self._containers: dict[str, deque[LogLine]] = {}
        self._labels: dict[str, dict[str, Any]] = {}
        self._nodes: dict[tuple[str, str], deque[LogLine]] = {}
        self.listeners: list[LineListener] = []

    def open(self, container_id: str, labels: dict[str, Any]) -> None:
        """Start the log of a new container instance; `labels` describe it to listeners
        (namespace, pod, container, node, restart)."""
        self._containers.setdefault(container_id, deque(maxlen=MAX_LINES))
        self._labels[container_id] = dict(labels)

    def append(self, container_id: str, at: float, stream: str, text: str) -> None:
        line = LogLine(at, stream, text)
        self._containers.setdefault(container_id, deque(maxlen=MAX_LINES)).append(line)
        if self.listeners:
            labels = self._labels.get(container_id, {})
            for listener in self.listeners:
                listener(container_id, line, labels)

    def lines(self, container_id: str) -> list[LogLine]:
        return list(self._containers.get(container_id, ()))

    def drop(self, container_id: str) -> None:
        self._containers.pop(container_id, None)
        self._labels.pop(container_id, None)

    def instances(self) -> list[tuple[str, dict[str, Any]]]:
        """(container_id, labels) of every container instance whose log was opened, in open
        order (read by the Loki API to build its streams)."""
        return [(cid, dict(labels)) for cid, labels in self._labels.items()]

    def node_sources(self) -> list[tuple[str, str]]:
        """(node, source) of every node log, sorted."""
        return sorted(self._nodes)

    def node_append(self, node: str, source: str, at: float, text: str) -> None:
        self._nodes.setdefault((node, source), deque(maxlen=MAX_LINES)).append(LogLine(at, source, text))

    def node_lines(self, node: str, source: str | None = None) -> list[LogLine]:
        if source is not None:
            return list(self._nodes.get((node, source), ()))
        merged = [line for (n, _s), lines in sorted(self._nodes.items()) if n == node for line in lines]
        merged.sort(key=lambda line: line.at)
        return merged


def log_store(twin: Twin) -> LogStore:
    store = twin.services.logs
    if store is None:
        store = LogStore()
        twin.services.logs = store
    return store


def format_timestamp(at: float) -> str:
    """RFC 3339 with nanoseconds, as `kubectl logs --timestamps` prints."""
    moment = datetime.fromtimestamp(at, tz=UTC)
    nanos = round((at - int(at)) * 1e9) % 1_000_000_000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


def render(lines: list[LogLine], *, tail: int | None = None, since: float | None = None,
           timestamps: bool = False) -> str:
    if since is not None:
        lines = [line for line in lines if line.at >= since]
    if tail is not None and tail >= 0:
        lines = lines[-tail:] if tail else []
    if timestamps:
        return "".join(f"{format_timestamp(line.at)} {line.text}\n" for line in lines)
    return "".join(f"{line.text}\n" for line in lines)


def _pick_container(pod: dict[str, Any], container: str | None) -> tuple[str, bool]:
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    regular = [c.get("name", "") for c in spec.get("containers") or []]
    init = [c.get("name", "") for c in spec.get("initContainers") or []]
    if not container:
        if len(regular) == 1:
            return regular[0], False
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(regular)}]"
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise BadRequest(message)
    if container in regular:
        return container, False
    if container in init:
        return container, True
    raise BadRequest(f"container {container} is not valid for pod {name}")


def container_logs(twin: Twin, namespace: str, pod: str, container: str | None = None, *,
                   previous: bool = False, tail: int | None = None, since_seconds: float | None = None,
                   timestamps: bool = False) -> str:
    """What `GET /api/v1/namespaces/<ns>/pods/<pod>/log` returns, with the kubelet's errors."""
    obj = twin.store.peek("Pod", namespace, pod)
    if obj is None:
        raise not_found("pods", pod)
    name, is_init = _pick_container(obj, container)
    status_key = "initContainerStatuses" if is_init else "containerStatuses"
    status = next((s for s in (obj.get("status") or {}).get(status_key) or [] if s.get("name") == name), {})
    runtime = twin.services.runtime
    record = runtime.record(namespace, pod, name) if runtime is not None else None
    since = twin.clock.now - since_seconds if since_seconds is not None else None
    store = log_store(twin)
    if previous:
        instance = record.previous if record is not None else None
        if instance is None:
            raise BadRequest(f'previous terminated container "{name}" in pod "{pod}" not found')
        return render(store.lines(instance.container_id), tail=tail, since=since, timestamps=timestamps)
    instance = record.current if record is not None else None
    if instance is None:
        waiting = (status.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason") or ("PodInitializing" if (obj.get("spec") or {}).get("initContainers")
                                           else "ContainerCreating")
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            raise BadRequest(f'container "{name}" in pod "{pod}" is waiting to start: image can\'t be pulled')
        raise BadRequest(f'container "{name}" in pod "{pod}" is waiting to start: {reason}')
    return render(store.lines(instance.container_id), tail=tail, since=since, timestamps=timestamps)
