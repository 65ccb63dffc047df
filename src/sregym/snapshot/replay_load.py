"""Rebuild a frozen, read-only twin from a snapshot directory (the *replay twin*).

A snapshot is what an agent credential could observe at one moment; a replay twin turns those
files back into the state the twin's own wire APIs serve, so the unchanged Kubernetes, Prometheus,
Loki and Jaeger handlers (and the real `kubectl`) answer from it:

- the object store holds the `snapshot`-phase objects of `k8s_objects.tsv` and the events of
  `k8s_events.tsv` verbatim (`ObjectStore.restore`: uid, resourceVersion, creationTimestamp,
  ownerReferences and status are the evidence, so nothing is re-defaulted or re-admitted);
- the clock stands at `snapshot_time` and never moves: no controller ever runs, so nothing
  reconciles, restarts or re-schedules, and AGE columns read as they did at snapshot time;
- container logs from `logs.tsv` sit in a `LogStore` behind a stand-in container runtime whose
  instances come from the pods' container statuses (so `kubectl logs` and `--previous` find the
  same instance they would have found live); node logs (kernel, kubelet) are node sources, so
  `{source="kernel"}` works in LogQL;
- the TSDB holds the exported metric series only: each row's `metric_name` (the PromQL expression
  that was evaluated at export) becomes the series' `__name__`, so the raw exporter series
  (`container_cpu_usage_seconds_total` ...) do not exist in a replay;
- the alert list is the last `alerts/alerts_*.json` (the one taken at snapshot time);
- traces come from `traces.tsv` (span kind, status and attributes mapped back to the twin's span
  model, so the Jaeger handlers encode them as they did live).

Every write through the store is refused (`ReadOnlySnapshot`), whoever asks.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sregym.errors import ApiError, Forbidden
from sregym.snapshot import layout
from sregym.snapshot.tsv import read_tsv
from sregym.twin.clock import parse_time
from sregym.twin.dataplane.log_channel import export
from sregym.twin.machinery.store import Operation
from sregym.twin.node.logs import LogStore
from sregym.twin.telemetry.traces import Span, TraceStore
from sregym.twin.telemetry.tsdb import TSDB
from sregym.twin.twin import Twin

READ_ONLY_MESSAGE = ("this cluster is a read-only replay of an incident snapshot: nothing can be created, "
                     "changed or deleted; use read-only commands (get, describe, logs, events, top, "
                     "explain, auth can-i)")
# Restore order: CRDs register their kinds, namespaces hold everything else.
_FIRST_KINDS = ("CustomResourceDefinition", "Namespace")
# The process (resource) attributes of the twin's spans; everything else is a span tag.
_PROCESS_KEYS = ("hostname", "ip", "jaeger.version", "pod", "namespace")
# Tags Jaeger derives from a span's status (`span_tags`); the span fields carry them again.
_DERIVED_TAGS = ("otel.status_code", "otel.status_description")


class SnapshotFormatError(ValueError):
    """A snapshot directory that cannot be replayed (missing file, unknown format)."""


@dataclass(frozen=True)
class SnapshotInfo:
    """What the replay needs from `snapshot.json` and `app.json`."""

    root: Path
    app: str
    namespaces: tuple[str, ...]
    description: str
    snapshot_time: float
    window_start: float
    alerts_file: Path | None
    metric_names: frozenset[str] = field(default_factory=frozenset)


@dataclass
class _Instance:
    """One container instance, as much of the kubelet's `ContainerInstance` as logs need."""

    container_id: str
    running: bool


@dataclass
class _Record:
    current: _Instance | None = None
    previous: _Instance | None = None


class SnapshotRuntime:
    """A stand-in for the kubelet runtime (`twin.services.runtime`, a `ContainerView`): which
    container instance `kubectl logs` reads, and the usage `kubectl top` shows (the last exported
    CPU and memory samples of the container)."""

    def __init__(self, tsdb: TSDB, now: float) -> None:
        self._records: dict[tuple[str, str, str], _Record] = {}
        self._tsdb = tsdb
        self._now_ms = round(now * 1000)
        self._usage_index: dict[tuple[str, str, str], dict[str, float]] | None = None

    def add(self, namespace: str, pod: str, container: str, record: _Record) -> None:
        self._records[(namespace, pod, container)] = record

    def record(self, namespace: str, pod: str, container: str) -> _Record | None:
        return self._records.get((namespace, pod, container))

    def instance(self, namespace: str, pod: str, container: str, *, previous: bool = False) -> _Instance | None:
        record = self.record(namespace, pod, container)
        if record is None:
            return None
        return record.previous if previous else record.current

    def container_usage(self, namespace: str, pod: str, container: str) -> tuple[float, int]:
        usage = self._usage().get((namespace, pod, container), {})
        return usage.get(_CPU_FAMILY, 0.0), int(usage.get(_MEMORY_FAMILY, 0.0))

    def _usage(self) -> dict[tuple[str, str, str], dict[str, float]]:
        """(namespace, pod, container) → the last CPU and memory samples at or before now."""
        if self._usage_index is None:
            self._usage_index = {}
            for series in self._tsdb.select(()):
                family = next((f for f in (_CPU_FAMILY, _MEMORY_FAMILY) if f in series.name), None)
                labels = series.labels
                if family is None or not labels.get("container"):
                    continue
                samples = [v for t, v in zip(series.timestamps, series.values, strict=True)
                           if t <= self._now_ms and not math.isnan(v)]
                if samples:
                    key = (labels.get("namespace", ""), labels.get("pod", ""), labels["container"])
                    self._usage_index.setdefault(key, {})[family] = samples[-1]
        return self._usage_index


_CPU_FAMILY = "rate(container_cpu_usage_seconds_total"
_MEMORY_FAMILY = "(container_memory_working_set_bytes"


class SnapshotAlerts:
    """A stand-in for the rule manager (`twin.services.alerts`, an `AlertSource`): the recorded
    alert list, filtered for the caller like the live one, and no rules (the snapshot does not
    carry them)."""

    def __init__(self, alerts: list[dict[str, Any]]) -> None:
        self._alerts = alerts

    def api_alerts(self, visible: Any) -> list[dict[str, Any]]:
        return [dict(a) for a in self._alerts if visible(a.get("labels") or {})]

    def api_rules(self, _visible: Any, **_filters: Any) -> list[dict[str, Any]]:
        return []

    def tick(self, _t_ms: int) -> None:  # the clock never moves; nothing to evaluate
        return None


def read_info(snapshot: Path) -> SnapshotInfo:
    root = Path(snapshot)
    meta = _json(root / layout.SNAPSHOT_JSON)
    if meta.get("format") != layout.SNAPSHOT_FORMAT:
        raise SnapshotFormatError(f"{root / layout.SNAPSHOT_JSON}: format {meta.get('format')!r} is not "
                                  f"{layout.SNAPSHOT_FORMAT!r}; export the snapshot again with this sregym")
    app = _json(root / layout.APP_JSON) if (root / layout.APP_JSON).is_file() else {}
    alerts = sorted((root / layout.ALERTS_DIR).glob("alerts_*.json")) if (root / layout.ALERTS_DIR).is_dir() else []
    window = meta.get("window") or {}
    now = parse_time(str(meta["snapshot_time"]))
    return SnapshotInfo(root=root, app=str(app.get("app") or meta.get("app") or ""),
                        namespaces=tuple(app.get("namespaces") or meta.get("namespaces") or ()),
                        description=" ".join(str(app.get("description") or "").split()),
                        snapshot_time=now,
                        window_start=parse_time(str(window["start"])) if window.get("start") else now,
                        alerts_file=alerts[-1] if alerts else None)


def load_twin(snapshot: Path) -> tuple[Twin, SnapshotInfo]:
    """A frozen replay twin for `snapshot` and what was read about it."""
    info = read_info(snapshot)
    twin = Twin(seed=0, bootstrap=False)
    twin.clock.start = info.snapshot_time
    _restore_objects(twin, info.root)
    tsdb, names = _load_metrics(info.root)
    twin.services.tsdb = tsdb
    runtime = SnapshotRuntime(tsdb, info.snapshot_time)
    twin.services.runtime = runtime
    twin.services.logs = _load_logs(twin, runtime, info.root)
    twin.services.traces = _load_traces(info.root)
    alerts = _json(info.alerts_file) if info.alerts_file is not None else []
    if isinstance(alerts, dict):  # tolerate the whole API body or its data part
        alerts = (alerts.get("data") or alerts).get("alerts") or []
    twin.services.alerts = SnapshotAlerts([a for a in alerts if isinstance(a, dict)])
    twin.store.add_mutator("snapshot-read-only", _refuse_writes, order=-10_000)
    return twin, replace(info, metric_names=frozenset(names))


# ------------------------------------------------------------------ objects
def _restore_objects(twin: Twin, root: Path) -> None:
    objects = [json.loads(r["body"]) for r in _rows(root / layout.OBJECTS_TSV) if r.get("phase") == "snapshot"]
    objects.sort(key=lambda o: _FIRST_KINDS.index(o.get("kind")) if o.get("kind") in _FIRST_KINDS
                 else len(_FIRST_KINDS))  # stable: file order otherwise
    events = [json.loads(r["body"]) for r in _rows(root / layout.EVENTS_TSV)]
    present = {o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"}
    wanted = sorted({(o.get("metadata") or {}).get("namespace") or "" for o in [*objects, *events]} - {""} - present)
    for obj in [*objects[:_namespaces_end(objects)], *(_namespace(ns) for ns in wanted),
                *objects[_namespaces_end(objects):], *events]:
        try:
            twin.store.restore(obj)
        except ApiError:  # a kind this twin does not know (no CRD for it): left out
            continue


def _namespaces_end(objects: list[dict[str, Any]]) -> int:
    return sum(1 for o in objects if o.get("kind") in _FIRST_KINDS)


def _namespace(name: str) -> dict[str, Any]:
    """A Namespace the snapshot does not list but its objects live in (the agent could not list
    namespaces, or the export left it out): Active, like any namespace holding objects."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {
        "kubernetes.io/metadata.name": name}}, "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"}}


def _refuse_writes(op: Operation) -> None:
    what = f'{op.kind.plural}{"." + op.kind.group if op.kind.group else ""}'
    name = f' "{op.name}"' if op.name else ""
    raise Forbidden(f"{what}{name} is forbidden: {READ_ONLY_MESSAGE}")


# ------------------------------------------------------------------ metrics
def _load_metrics(root: Path) -> tuple[TSDB, set[str]]:
    tsdb = TSDB()
    names: set[str] = set()
    directory = root / layout.METRICS_DIR
    for path in sorted(directory.glob("*.tsv")) if directory.is_dir() else []:
        for row in read_tsv(path):
            labels = json.loads(row.get("labels") or "{}")
            labels = {str(k): str(v) for k, v in labels.items()}
            labels["__name__"] = row["metric_name"]
            names.add(row["metric_name"])
            try:
                value = float(row["value"])
            except ValueError:
                continue
            tsdb.append(labels, round(parse_time(row["timestamp"]) * 1000), value)
    return tsdb, names


# --------------------------------------------------------------------- logs
def _load_logs(twin: Twin, runtime: SnapshotRuntime, root: Path) -> LogStore:
    """Node lines become node sources; container lines are split into instances at the current
    instance's start time (from the pod's container status)."""
    store = LogStore()
    lines: dict[tuple[str, str, str], list[tuple[float, str, str]]] = {}
    for row in _rows(root / layout.LOGS_TSV):
        at = parse_time(row["timestamp"])
        if row.get("source") == "otlp":  # the service's OTLP records, with the resource its pod gives
            export(twin, row.get("namespace", ""), row.get("pod", ""), "", row.get("container", ""), at, row["body"],
                   resource={"service.name": row.get("container", "")})
        elif row.get("source") == "pod" or row.get("pod"):
            key = (row.get("namespace", ""), row.get("pod", ""), row.get("container", ""))
            lines.setdefault(key, []).append((at, row.get("node", ""), row["body"]))
        else:
            store.node_append(row.get("node", ""), row.get("source") or "node", at, row["body"])
    containers: set[tuple[str, str, str]] = set(lines)
    for pod in twin.store.scan("Pod"):
        meta = pod["metadata"]
        for status in _container_statuses(pod):
            containers.add((meta.get("namespace", ""), meta["name"], str(status.get("name", ""))))
    for ns, pod_name, container in sorted(containers):
        pod = twin.store.peek("Pod", ns, pod_name)
        status = next((s for s in _container_statuses(pod) if s.get("name") == container), {}) if pod else {}
        node = ((pod or {}).get("spec") or {}).get("nodeName") or ""
        own = lines.get((ns, pod_name, container), [])
        record = _instances(status, own)
        runtime.add(ns, pod_name, container, record)
        base = {"namespace": ns, "pod": pod_name, "container": container,
                "node": node or (own[0][1] if own else "")}
        starts = {id(record.previous): -math.inf, id(record.current): _current_start(status)}
        for instance in (record.previous, record.current):
            if instance is None:
                continue
            store.open(instance.container_id, base)
        for at, _node, text in own:
            target = record.current
            if record.previous is not None and at < starts[id(record.current)]:
                target = record.previous
            if target is not None:
                store.append(target.container_id, at, "stdout", text)
    return store


def _container_statuses(pod: dict[str, Any] | None) -> list[dict[str, Any]]:
    status = (pod or {}).get("status") or {}
    return [s for key in ("initContainerStatuses", "containerStatuses") for s in status.get(key) or []
            if isinstance(s, dict)]


def _current_start(status: dict[str, Any]) -> float:
    """When the instance `kubectl logs` reads started: the running one, else the one that just
    terminated (a crash-looping container waits in back-off after it)."""
    state, last = status.get("state") or {}, status.get("lastState") or {}
    for moment in ((state.get("running") or {}).get("startedAt"), (state.get("terminated") or {}).get("startedAt"),
                   (last.get("terminated") or {}).get("startedAt")):
        if moment:
            return parse_time(str(moment))
    return -math.inf


def _instances(status: dict[str, Any], lines: list[tuple[float, str, str]]) -> _Record:
    """The current and previous instances of a container, as the kubelet keeps them: the current
    one is running, or has just terminated (a crash-looping container waits in back-off after it);
    the previous one exists once the container has restarted."""
    state, last = status.get("state") or {}, status.get("lastState") or {}
    if state.get("running") or state.get("terminated"):
        current_id = status.get("containerID") or (state.get("terminated") or {}).get("containerID")
        previous_id = (last.get("terminated") or {}).get("containerID")
    else:  # waiting: after a crash the instance kubectl reads is the one in lastState
        current_id = (last.get("terminated") or {}).get("containerID")
        previous_id = None
    if not current_id and not (not status and lines):
        return _Record()  # never started (image pull, config error): kubectl says it is waiting
    restarts = int(status.get("restartCount") or 0)
    name = str(status.get("name") or "container")
    current = _Instance(_strip(current_id) or f"replay-{name}-{restarts}", bool(state.get("running")))
    previous = None
    if restarts > 0:
        previous = _Instance(_strip(previous_id) or f"replay-{name}-{restarts - 1}", False)
    return _Record(current=current, previous=previous)


def _strip(container_id: str | None) -> str:
    return str(container_id or "").split("://", 1)[-1]


# ------------------------------------------------------------------- traces
def _load_traces(root: Path) -> TraceStore:
    store = TraceStore()
    for row in _rows(root / layout.TRACES_TSV):
        attributes = json.loads(row.get("attributes") or "{}")
        process = {k: attributes[k] for k in _PROCESS_KEYS if k in attributes}
        tags = {k: v for k, v in attributes.items() if k not in _DERIVED_TAGS and
                (k not in process or k == "pod")}
        code = tags.get("http.status_code", tags.get("rpc.grpc.status_code"))
        store.add(Span(trace_id=row["trace_id"], span_id=row["span_id"], parent_span_id=row.get("parent_span_id", ""),
                       service=row["service"], operation=row["operation"],
                       kind=row.get("kind", "").removeprefix("SPAN_KIND_").lower() or "internal",
                       start_us=int(row["start_unix_nano"]) // 1000, duration_us=int(row["duration_ns"]) // 1000,
                       error=row.get("status_code") == "STATUS_CODE_ERROR",
                       status_code=int(code) if isinstance(code, int | float) else None,
                       message=row.get("status_message", ""), tags=tags, process_tags=process))
    return store


# ------------------------------------------------------------------ helpers
def _rows(path: Path) -> list[dict[str, str]]:
    return read_tsv(path) if path.is_file() else []


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SnapshotFormatError(f"{path}: missing; is this a snapshot directory (it has {layout.SNAPSHOT_JSON})?") \
            from None
    except ValueError as exc:
        raise SnapshotFormatError(f"{path}: not valid JSON ({exc})") from None


__all__ = ["READ_ONLY_MESSAGE", "SnapshotAlerts", "SnapshotFormatError", "SnapshotInfo", "SnapshotRuntime",
           "load_twin", "read_info"]
