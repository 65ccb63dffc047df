"""The kube-apiserver's own `/metrics` (Prometheus text exposition), from the requests it served.

Every request the twin's API server answers is counted the way the real server instruments it:
`apiserver_request_total` and `apiserver_request_duration_seconds` by verb (GET for one object,
LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, CONNECT for exec/port-forward/proxy), group,
version, resource, subresource, scope (resource/namespace/cluster), component and code; each
storage read or write also lands in `etcd_request_duration_seconds` by operation and resource.
`apiserver_storage_objects` counts what the store holds now. Durations are the wall time the
twin took, which is what a real server measures; nothing here feeds the run's telemetry.

Family names, types, HELP texts, label names and bucket bounds are those of 1.32; labels are
written in sorted order as client_golang does.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

from sregym.twin.api.kube import discovery, paths

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
           10.0, 15.0, 20.0, 30.0, 45.0, 60.0)
_CONNECT = {"exec", "attach", "portforward", "proxy"}
_ETCD_OPS = {"GET": "get", "LIST": "listWithCount", "POST": "create", "PUT": "update",
             "PATCH": "update", "APPLY": "update", "DELETE": "delete"}
_HELP = {
    "apiserver_request_total": ("counter", "[STABLE] Counter of apiserver requests broken out for each "
                                "verb, dry run value, group, version, resource, scope, component, and "
                                "HTTP response code."),
    "apiserver_request_duration_seconds": ("histogram", "[STABLE] Response latency distribution in "
                                           "seconds for each verb, dry run value, group, version, "
                                           "resource, subresource, scope and component."),
    "etcd_request_duration_seconds": ("histogram", "[ALPHA] Etcd request latency in seconds for each "
                                      "operation and object type."),
    "apiserver_storage_objects": ("gauge", "[STABLE] Number of stored objects at the time of last "
                                  "check split by kind. In case of a fetching error, the value will "
                                  "be -1."),
    "apiserver_current_inflight_requests": ("gauge", "[STABLE] Maximal number of currently used "
                                            "inflight request limit of this apiserver per request "
                                            "kind in last second."),
    "kubernetes_build_info": ("gauge", "[ALPHA] A metric with a constant '1' value labeled by major, "
                              "minor, git version, git commit, git tree state, build date, Go "
                              "version, and compiler from which Kubernetes was built, and platform "
                              "on which it is running."),
}


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    total: float = 0.0
    n: int = 0

    def observe(self, value: float) -> None:
        i = bisect.bisect_left(BUCKETS, value)
        if i < len(BUCKETS):
            self.counts[i] += 1
        self.total += value
        self.n += 1


@dataclass
class ApiServerMetrics:
    """What one API server has counted since it started."""

    requests: dict[tuple[tuple[str, str], ...], int] = field(default_factory=lambda: defaultdict(int))
    durations: dict[tuple[tuple[str, str], ...], _Histogram] = field(
        default_factory=lambda: defaultdict(_Histogram))
    etcd: dict[tuple[tuple[str, str], ...], _Histogram] = field(default_factory=lambda: defaultdict(_Histogram))

    def record(self, method: str, path: str, query: Any, content_type: str, code: int,
               seconds: float) -> None:
        labels = classify(method, path, query, content_type)
        counted = {**labels, "code": str(code)}
        self.requests[_key(counted)] += 1
        self.durations[_key(labels)].observe(seconds)
        op = _ETCD_OPS.get(labels["verb"])
        if op and labels["resource"] and not labels["subresource"] and code < 500:
            resource = labels["resource"] + (f".{labels['group']}" if labels["group"] else "")
            self.etcd[_key({"operation": op, "type": resource})].observe(seconds / 2)

    def exposition(self, twin: Twin) -> str:
        out: list[str] = []
        _family(out, "apiserver_current_inflight_requests",
                [(f"{{request_kind={_q(k)}}}", 0 if k == "mutating" else 1) for k in ("mutating", "readOnly")])
        _family(out, "apiserver_request_duration_seconds", _histogram_lines(self.durations))
        _family(out, "apiserver_request_total", [(_labels(k), v) for k, v in sorted(self.requests.items())])
        _family(out, "apiserver_storage_objects", storage_objects(twin))
        _family(out, "etcd_request_duration_seconds", _histogram_lines(self.etcd))
        info = discovery.version_info()
        build = {"build_date": info.get("buildDate", ""), "compiler": info.get("compiler", ""),
                 "git_commit": info.get("gitCommit", ""), "git_tree_state": info.get("gitTreeState", ""),
                 "git_version": info.get("gitVersion", ""), "go_version": info.get("goVersion", ""),
                 "major": info.get("major", ""), "minor": info.get("minor", ""),
                 "platform": info.get("platform", "")}
        _family(out, "kubernetes_build_info", [(_labels(_key(build)), 1)])
        return "\n".join(out) + "\n"


def metrics_of(api: Any) -> ApiServerMetrics:
    """The counters of one API server app (created on first use)."""
    found = getattr(api, "request_metrics", None)
    if found is None:
        found = api.request_metrics = ApiServerMetrics()
    return found


def record(api: Any, method: str, path: str, query: Any, content_type: str, code: int,
           started: float) -> None:
    """Count one answered request (`started` is its `time.perf_counter()` at arrival)."""
    metrics_of(api).record(method, path, query, content_type, code, max(0.0, perf_counter() - started))


def classify(method: str, path: str, query: Any, content_type: str) -> dict[str, str]:
    """The request's metric labels (without the code)."""
    rp = paths.parse(path)
    if rp is None or not rp.plural:
        return {"component": "" if path.startswith(("/healthz", "/livez", "/readyz")) else "apiserver",
                "dry_run": "", "group": "", "resource": "", "scope": "", "subresource": path,
                "verb": method, "version": ""}
    sub = (rp.subresource or "").split("/")[0]
    watch = rp.legacy_watch or str(query.get("watch") or "").lower() in ("true", "1")
    verb = method
    if sub in _CONNECT:
        verb = "CONNECT"
    elif method == "GET":
        verb = "WATCH" if watch else ("GET" if rp.name else "LIST")
    elif method == "PATCH" and "apply-patch" in content_type:
        verb = "APPLY"
    elif method == "DELETE" and not rp.name:
        verb = "DELETE"
    if rp.name:
        scope = "resource"
    elif rp.namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    dry = "All" if str(query.get("dryRun") or "") == "All" else ""
    return {"component": "apiserver", "dry_run": dry, "group": rp.group, "resource": rp.plural,
            "scope": scope, "subresource": sub, "verb": verb, "version": rp.version}


def storage_objects(twin: Twin) -> list[tuple[str, float]]:
    seen: set[str] = set()
    lines: list[tuple[str, float]] = []
    for kind in twin.kinds.kinds:
        if kind.virtual:
            continue
        resource = kind.plural + (f".{kind.group}" if kind.group else "")
        if resource in seen:
            continue
        seen.add(resource)
        lines.append((f"{{resource={_q(resource)}}}", twin.store.count(kind)))
    return sorted(lines)


def _key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _labels(key: tuple[tuple[str, str], ...], extra: tuple[str, str] | None = None) -> str:
    items = list(key) + ([extra] if extra else [])
    return "{" + ",".join(f"{k}={_q(v)}" for k, v in items) + "}"


def _fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _histogram_lines(series: dict[tuple[tuple[str, str], ...], _Histogram]) -> list[tuple[str, float]]:
    lines: list[tuple[str, float]] = []
    for key, h in sorted(series.items()):
        running = 0
        for bound, count in zip(BUCKETS, h.counts, strict=True):
            running += count
            lines.append(("_bucket" + _labels(key, ("le", _fmt(bound))), running))
        lines.append(("_bucket" + _labels(key, ("le", "+Inf")), h.n))
        lines.append(("_sum" + _labels(key), h.total))
        lines.append(("_count" + _labels(key), h.n))
    return lines


def _family(out: list[str], name: str, samples: list[tuple[str, float]]) -> None:
    if not samples:
        return  # client_golang leaves out a family that has no series yet
    kind, text = _HELP[name]
    out.append(f"# HELP {name} {text}")
    out.append(f"# TYPE {name} {kind}")
    for suffix, value in samples:
        out.append(f"{name}{suffix} {_fmt(value)}")


__all__ = ["BUCKETS", "ApiServerMetrics", "classify", "metrics_of", "record", "storage_objects"]
