"""A program's log channel: the container's stdout, the OpenTelemetry SDK's OTLP exporter, or both.

A service whose logger is bridged to the OpenTelemetry SDK (checkout's slog → otelslog, quote's
Monolog handler, Envoy's OpenTelemetry access logger) sends its records to the collector and
prints nothing: `kubectl logs` stays silent while the log backend has them. Others print and
export (.NET's console + OTLP providers, the Java agent's log4j capture), or only print. Every
place a program writes a line at run time goes through `write`, which honours
`ProgramSpec.log.sinks` (or an explicit `sinks`, e.g. Envoy's access log channel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.node.logs import log_store
from sregym.twin.telemetry.otlp_logs import LogRecord, otlp_logs, pod_resource

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

LEVELS = {"debug": "DEBUG", "info": "INFO", "warn": "WARN", "warning": "WARN", "error": "ERROR",
          "fatal": "FATAL", "panic": "FATAL"}


def to_stdout(sinks: str) -> bool:
    return sinks in ("stdout", "both")


def to_otlp(sinks: str) -> bool:
    return sinks in ("otlp", "both")


def service_name(twin: Twin, namespace: str, pod: str, container: str, default: str) -> str:
    """OTEL_SERVICE_NAME as the container resolves it (the chart sets it from the pod's
    `app.kubernetes.io/component` label), else the program's own name."""
    obj = twin.store.peek("Pod", namespace, pod)
    if obj is not None:
        labels = obj["metadata"].get("labels") or {}
        for spec in (obj.get("spec") or {}).get("containers") or []:
            if spec.get("name") != container:
                continue
            for env in spec.get("env") or []:
                if env.get("name") != "OTEL_SERVICE_NAME":
                    continue
                if env.get("value"):
                    return str(env["value"])
                path = ((env.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath", "")
                if path.startswith("metadata.labels['") and path.endswith("']"):
                    found = labels.get(path[len("metadata.labels['"):-2])
                    if found:
                        return str(found)
    return default


RESOURCE_MEMO_LIMIT = 4096  # (pod object, container, service) resources kept before starting over
_RESOURCES: dict[tuple[int, str, str], tuple[dict[str, Any], dict[str, str]]] = {}


def _resource(twin: Twin, namespace: str, pod: str, container: str, default_service: str) -> dict[str, str]:
    """A fresh copy of the record resource of a line from the container, derived once per stored pod
    object: the store replaces an object on every write (never edits it in place), so the same
    object means the same labels, env and owners, and a changed pod is a new object and a fresh
    derivation. Busy proxies log many lines a tick; each used to walk the pod twice."""
    obj = twin.store.peek("Pod", namespace, pod)
    if obj is None:
        return pod_resource(twin, namespace, pod, service_name(twin, namespace, pod, container, default_service))
    key = (id(obj), container, default_service)
    known = _RESOURCES.get(key)
    if known is None or known[0] is not obj:
        if len(_RESOURCES) >= RESOURCE_MEMO_LIMIT:
            _RESOURCES.clear()
        known = _RESOURCES[key] = (obj, pod_resource(twin, namespace, pod,
                                                     service_name(twin, namespace, pod, container, default_service)))
    return dict(known[1])


def export(twin: Twin, namespace: str, pod: str, container: str, default_service: str, at: float, body: str, *,
           level: str = "info", attributes: dict[str, Any] | None = None, scope: str = "",
           resource: dict[str, str] | None = None, trace: tuple[str, str] | None = None) -> None:
    """One OTLP log record from the container, into the log backend with the collector's resource;
    `trace` (trace id, span id) when the SDK emitted it inside a sampled span."""
    full = _resource(twin, namespace, pod, container, default_service)
    if resource:
        full.update({k: v for k, v in resource.items() if v})
    trace_id, span_id = trace or ("", "")
    record = LogRecord(at, body, LEVELS.get(level.lower(), level.upper()),
                       tuple(sorted((attributes or {}).items())), scope, trace_id, span_id, 1 if trace_id else 0)
    otlp_logs(twin).emit(full, record)


def write(twin: Twin, inst: Any, at: float, text: str, *, message: str | None = None, level: str = "info",
          attributes: dict[str, Any] | None = None, sinks: str | None = None, stream: str = "stdout",
          trace: tuple[str, str] | None = None) -> None:
    """A line `inst` (a ProgramInstance) logs at run time: `text` as printed on stdout, `message`
    (default `text`) as the OTLP record's body."""
    channel = sinks or inst.spec.log.sinks
    if to_stdout(channel):
        runtime = twin.services.runtime
        instance = runtime.instance(inst.namespace, inst.pod, inst.container) if runtime is not None else None
        if instance is not None:
            log_store(twin).append(instance.container_id, at, stream, text)
    if to_otlp(channel):
        export(twin, inst.namespace, inst.pod, inst.container, inst.spec.trace_name, at,
               text if message is None else message, level=level, attributes=attributes,
               scope=inst.spec.trace_name, trace=trace)


__all__ = ["export", "service_name", "to_otlp", "to_stdout", "write"]
