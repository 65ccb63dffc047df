"""`metrics.k8s.io/v1beta1`: PodMetrics and NodeMetrics, what `kubectl top` reads.

In a real cluster metrics-server scrapes every kubelet's resource endpoint every 15 s and serves
the latest sample. The twin serves the kubelet runtime's usage figures the same way:

- a sample is taken at 15 s boundaries of the simulated clock (`timestamp`) over a 15 s
  `window`; a container appears once it has been running at a sample, so a pod that just started
  has no metrics yet (`kubectl top` then says so, as it does against metrics-server);
- only running containers of running pods are reported; CPU is in nanocores and memory is the
  working set rounded to whole pages, serialised the way resource.Quantity does (`1234567n`,
  `5m`, `2916Ki`);
- node usage is the sum of the node's running containers plus what the node's own daemons
  (kubelet, containerd, systemd, kernel), which are not pods, use.

Figures are zero until the runtime reports usage (`twin.services.runtime
.container_usage(namespace, pod, container) -> (cpu_cores, memory_bytes)`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from sregym.errors import ApiError, Forbidden, MethodNotAllowed, NotFound
from sregym.twin.api.kube.handlers import RequestContext, virtual
from sregym.twin.api.kube.wall_fields import outgoing
from sregym.twin.clock import format_time, parse_time
from sregym.twin.machinery import authz
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.selectors import parse_field_selector, parse_label_selector

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

GROUP = "metrics.k8s.io"
API_VERSION = "metrics.k8s.io/v1beta1"
RESOLUTION = 15  # seconds between metrics-server scrapes (kind's --metric-resolution)
PAGE = 4096
# What a node's own daemons use besides its pods (kubelet, containerd, systemd, kernel).
SYSTEM_CPU_CORES = {"control-plane": 0.045, "worker": 0.020}
SYSTEM_MEMORY_BYTES = {"control-plane": 420 * 2**20, "worker": 260 * 2**20}


# ----------------------------------------------------------------------------- quantities
def cpu_quantity(cores: float) -> str:
    """Nanocores in resource.Quantity's canonical form (`0`, `5m`, `1234567n`, `2`)."""
    nanos = max(0, round(cores * 1e9))
    if nanos == 0:
        return "0"
    for suffix, scale in (("", 10**9), ("m", 10**6), ("u", 10**3)):
        if nanos % scale == 0:
            return f"{nanos // scale}{suffix}"
    return f"{nanos}n"


def memory_quantity(num_bytes: float) -> str:
    """Bytes as a binary-SI Quantity (`2916Ki`, `64Mi`, `0`), rounded down to whole pages."""
    value = max(0, int(num_bytes)) // PAGE * PAGE
    if value == 0:
        return "0"
    for suffix, scale in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(value)


# ---------------------------------------------------------------------------------- usage
def sample_time(now: float) -> float:
    """The time of the latest scrape at or before `now`."""
    return (now // RESOLUTION) * RESOLUTION


def container_usage(twin: Twin, namespace: str, pod: str, container: str) -> tuple[float, int]:
    runtime = twin.services.runtime
    if runtime is None or not hasattr(runtime, "container_usage"):
        return 0.0, 0
    try:
        usage = runtime.container_usage(namespace, pod, container)
    except Exception:  # no usage recorded for this container (yet)
        return 0.0, 0
    if not usage:
        return 0.0, 0
    cpu, memory = usage
    return float(cpu or 0.0), int(memory or 0)


def _running_since(status: dict[str, Any], sampled: float) -> bool:
    started = get_path(status, "state", "running", "startedAt")
    if not started:
        return False
    try:
        return parse_time(started) <= sampled
    except ValueError:
        return False


def pod_metrics(twin: Twin, pod: dict[str, Any]) -> dict[str, Any] | None:
    """The PodMetrics of one pod, or None when metrics-server would have none for it."""
    if get_path(pod, "status", "phase") != "Running":
        return None
    meta = pod.get("metadata") or {}
    now = twin.clock.now
    sampled = sample_time(now)
    containers = []
    for status in get_path(pod, "status", "containerStatuses", default=[]) or []:
        if not isinstance(status, dict) or not _running_since(status, sampled):
            continue
        cpu, memory = container_usage(twin, meta.get("namespace", ""), meta.get("name", ""),
                                      str(status.get("name")))
        containers.append({"name": status.get("name"),
                           "usage": {"cpu": cpu_quantity(cpu), "memory": memory_quantity(memory)}})
    if not containers:
        return None
    out_meta: dict[str, Any] = {"name": meta.get("name"), "namespace": meta.get("namespace"),
                                "creationTimestamp": format_time(now)}
    if meta.get("labels"):
        out_meta["labels"] = dict(meta["labels"])
    return {"kind": "PodMetrics", "apiVersion": API_VERSION, "metadata": out_meta,
            "timestamp": format_time(sampled), "window": f"{RESOLUTION}s", "containers": containers}


def _node_ready(node: dict[str, Any]) -> bool:
    for cond in get_path(node, "status", "conditions", default=[]) or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def node_metrics(twin: Twin, node: dict[str, Any], pods_by_node: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The NodeMetrics of one node (None for a node whose kubelet is not Ready)."""
    if not _node_ready(node):
        return None
    meta = node.get("metadata") or {}
    name = meta.get("name", "")
    now = twin.clock.now
    role = "control-plane" if "node-role.kubernetes.io/control-plane" in (meta.get("labels") or {}) \
        else "worker"
    # The node's own daemons are not pods; their usage is always there.
    cpu, memory = SYSTEM_CPU_CORES[role], SYSTEM_MEMORY_BYTES[role]
    for pod in pods_by_node.get(name, []):
        if get_path(pod, "status", "phase") != "Running":
            continue
        for status in get_path(pod, "status", "containerStatuses", default=[]) or []:
            if isinstance(status, dict) and get_path(status, "state", "running"):
                c, m = container_usage(twin, get_path(pod, "metadata", "namespace", default=""),
                                       get_path(pod, "metadata", "name", default=""),
                                       str(status.get("name")))
                cpu += c
                memory += m
    out_meta: dict[str, Any] = {"name": name, "creationTimestamp": format_time(now)}
    if meta.get("labels"):
        out_meta["labels"] = dict(meta["labels"])
    return {"kind": "NodeMetrics", "apiVersion": API_VERSION, "metadata": out_meta,
            "timestamp": format_time(sample_time(now)), "window": f"{RESOLUTION}s",
            "usage": {"cpu": cpu_quantity(cpu), "memory": memory_quantity(memory)}}


# ------------------------------------------------------------------------------- handlers
def _check(ctx: RequestContext, verb: str, resource: str, namespace: str | None,
           name: str | None) -> None:
    allowed, _reason = authz.authorize(ctx.user, verb, GROUP, resource, namespace, name)
    if not allowed:
        raise Forbidden(authz.forbidden_message(ctx.user, verb, GROUP, resource, namespace, name),
                        details={"name": name or "", "group": GROUP, "kind": resource})


def _selectors(request: Request) -> tuple[Any, Any]:
    return (parse_label_selector(request.query_params.get("labelSelector")),
            parse_field_selector(request.query_params.get("fieldSelector")))


def _require_read(request: Request) -> None:
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed("the server does not allow this method on the requested resource")


def _visible(ctx: RequestContext, objects: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    hidden = authz.hidden_namespaces(ctx.user)
    for obj in objects:
        if get_path(obj, "metadata", "namespace") not in hidden:
            yield obj


def _error(err: ApiError) -> JSONResponse:
    return JSONResponse(err.to_status(), status_code=err.code)


@virtual(GROUP, "pods")
async def pods(request: Request, ctx: RequestContext, namespace: str | None,
               name: str | None) -> JSONResponse:
    try:
        _require_read(request)
        twin = ctx.twin
        if name:
            _check(ctx, "get", "pods", namespace, name)
            pod = twin.store.peek("Pod", namespace or "default", name)
            item = pod_metrics(twin, pod) if pod is not None else None
            if item is None:
                raise NotFound(f'podmetrics.{GROUP} "{namespace or "default"}/{name}" not found',
                               details={"name": f"{namespace or 'default'}/{name}", "group": GROUP,
                                        "kind": "podmetrics"})
            return JSONResponse(outgoing(item))
        _check(ctx, "list", "pods", namespace, None)
        labels, fields = _selectors(request)
        items = []
        for pod in _visible(ctx, twin.store.scan("Pod", namespace or None)):
            if not labels.matches(get_path(pod, "metadata", "labels")) or not fields.matches(pod):
                continue
            item = pod_metrics(twin, pod)
            if item is not None:
                items.append(item)
        return JSONResponse({"kind": "PodMetricsList", "apiVersion": API_VERSION,
                             "metadata": {}, "items": outgoing(items)})
    except ApiError as err:
        return _error(err)


@virtual(GROUP, "nodes")
async def nodes(request: Request, ctx: RequestContext, namespace: str | None,
                name: str | None) -> JSONResponse:
    try:
        _require_read(request)
        twin = ctx.twin
        pods_by_node: dict[str, list[dict[str, Any]]] = {}
        for pod in twin.store.scan("Pod"):
            node_name = get_path(pod, "spec", "nodeName")
            if node_name:
                pods_by_node.setdefault(node_name, []).append(pod)
        if name:
            _check(ctx, "get", "nodes", None, name)
            node = twin.store.peek("Node", None, name)
            item = node_metrics(twin, node, pods_by_node) if node is not None else None
            if item is None:
                raise NotFound(f'nodemetrics.{GROUP} "{name}" not found',
                               details={"name": name, "group": GROUP, "kind": "nodemetrics"})
            return JSONResponse(outgoing(item))
        _check(ctx, "list", "nodes", None, None)
        labels, fields = _selectors(request)
        items = []
        for node in twin.store.scan("Node"):
            if not labels.matches(get_path(node, "metadata", "labels")) or not fields.matches(node):
                continue
            item = node_metrics(twin, node, pods_by_node)
            if item is not None:
                items.append(item)
        return JSONResponse({"kind": "NodeMetricsList", "apiVersion": API_VERSION,
                             "metadata": {}, "items": outgoing(items)})
    except ApiError as err:
        return _error(err)
