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
from sregym.twin.machinery import authz
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.selectors import parse_field_selector, parse_label_selector
from sregym.twin.node.resource_metrics import (
    API_VERSION,
    node_metrics,
    pod_metrics,
)

if TYPE_CHECKING:
    pass

GROUP = "metrics.k8s.io"
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
