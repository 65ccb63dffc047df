"""`/api/v1/nodes/NAME/proxy/...`: the API server relaying to a node's kubelet (port 10250).

SREs reach a kubelet this way for its health, the pods it runs and its resource metrics. The twin's
kubelet answers the cheap, commonly read endpoints:

- `/healthz` → `ok`;
- `/pods` → the PodList of the pods bound to the node (what the kubelet runs);
- `/stats/summary` → the Summary API's CPU and memory for the node, its pods and containers;
- `/metrics/resource` → the resource-metrics exposition metrics-server scrapes
  (`node_cpu_usage_seconds_total`, `node_memory_working_set_bytes`, `container_*`, `pod_*`,
  `scrape_error`), from the same usage figures as `kubectl top`;
- anything else → the kubelet mux's `404 page not found`.

A node that does not exist is the API server's 404; a NotReady node's kubelet is unreachable
(503 `error trying to reach service: dial tcp IP:10250: connect: no route to host`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from sregym.errors import ApiError, not_found
from sregym.twin.api.kube.encoding import error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource
from sregym.twin.api.kube.proxy import ServiceUnavailable, proxied_path
from sregym.twin.clock import format_time, parse_time
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import parse_quantity
from sregym.twin.node import resource_metrics as metrics
from sregym.twin.node.bound_pods import pods_on

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

KUBELET_PORT = 10250
_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def _node_ip(node: dict[str, Any]) -> str:
    for address in get_path(node, "status", "addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address") or "")
    return ""


def _pods_on(twin: Twin, node_name: str) -> list[dict[str, Any]]:
    return list(pods_on(twin.store, node_name))


def resource_metrics(twin: Twin, node: dict[str, Any]) -> str:
    """The kubelet's `/metrics/resource` exposition (cumulative CPU approximated as the current
    rate times the container's running time; the node's is the sum of its containers')."""
    name = get_path(node, "metadata", "name")
    now_ms = int(metrics.sample_time(twin.clock.now) * 1000)
    pods = _pods_on(twin, name)
    rows: list[tuple[str, str, str, float, int, float]] = []
    for pod in pods:
        ns, pod_name = get_path(pod, "metadata", "namespace"), get_path(pod, "metadata", "name")
        for cs in get_path(pod, "status", "containerStatuses") or []:
            if "running" not in (cs.get("state") or {}):
                continue
            cpu, mem = metrics.container_usage(twin, ns, pod_name, cs.get("name", ""))
            started_at = cs["state"]["running"].get("startedAt")
            started = parse_time(started_at) if started_at else twin.clock.now
            rows.append((ns, pod_name, cs.get("name", ""), cpu, mem, cpu * max(0.0, twin.clock.now - started)))
    node_cpu = sum(r[5] for r in rows)
    node_mem = sum(r[4] for r in rows)
    lines = ["# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the "
             "container in core-seconds", "# TYPE container_cpu_usage_seconds_total counter"]
    for ns, pod_name, container, _, _, seconds in rows:
        lines.append(f'container_cpu_usage_seconds_total{{container="{container}",namespace="{ns}",'
                     f'pod="{pod_name}"}} {seconds:.9f} {now_ms}')
    lines += ["# HELP container_memory_working_set_bytes [STABLE] Current working set of the "
              "container in bytes", "# TYPE container_memory_working_set_bytes gauge"]
    for ns, pod_name, container, _, mem, _ in rows:
        lines.append(f'container_memory_working_set_bytes{{container="{container}",namespace="{ns}",'
                     f'pod="{pod_name}"}} {mem} {now_ms}')
    lines += ["# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node "
              "in core-seconds", "# TYPE node_cpu_usage_seconds_total counter",
              f"node_cpu_usage_seconds_total {node_cpu:.9f} {now_ms}",
              "# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes",
              "# TYPE node_memory_working_set_bytes gauge",
              f"node_memory_working_set_bytes {node_mem} {now_ms}",
              "# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, "
              "0 otherwise", "# TYPE scrape_error gauge", "scrape_error 0"]
    return "\n".join(lines) + "\n"


def _usage(seconds_running: float, cores: float, working_set: int, now: str,
           capacity: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    cpu = {"time": now, "usageNanoCores": round(cores * 1e9),
           "usageCoreNanoSeconds": round(cores * max(0.0, seconds_running) * 1e9)}
    memory: dict[str, Any] = {"time": now}
    if capacity is not None:
        memory["availableBytes"] = max(0, capacity - working_set)
    memory.update({"usageBytes": working_set, "workingSetBytes": working_set, "rssBytes": working_set,
                   "pageFaults": 0, "majorPageFaults": 0})
    return cpu, memory


def stats_summary(twin: Twin, node: dict[str, Any]) -> dict[str, Any]:
    """The kubelet Summary API (`/stats/summary`): CPU and memory of the node, its pods and their
    containers (the figures `kubectl top` shows)."""
    name = get_path(node, "metadata", "name")
    now = twin.clock.now
    stamp = format_time(metrics.sample_time(now))
    pods_out: list[dict[str, Any]] = []
    node_cores, node_bytes = 0.0, 0
    for pod in _pods_on(twin, name):
        meta = pod.get("metadata") or {}
        containers, pod_cores, pod_bytes, pod_started = [], 0.0, 0, now
        for cs in get_path(pod, "status", "containerStatuses") or []:
            running = (cs.get("state") or {}).get("running")
            if not running:
                continue
            started_at = running.get("startedAt")
            started = parse_time(started_at) if started_at else now
            cores, mem = metrics.container_usage(twin, meta.get("namespace", ""), meta.get("name", ""),
                                                 cs.get("name", ""))
            cpu, memory = _usage(now - started, cores, mem, stamp)
            containers.append({"name": cs.get("name", ""), "startTime": started_at or stamp, "cpu": cpu,
                               "memory": memory})
            pod_cores, pod_bytes, pod_started = pod_cores + cores, pod_bytes + mem, min(pod_started, started)
        start = get_path(pod, "status", "startTime")
        cpu, memory = _usage(now - pod_started, pod_cores, pod_bytes, stamp)
        pods_out.append({"podRef": {"name": meta.get("name"), "namespace": meta.get("namespace"),
                                    "uid": meta.get("uid")},
                         "startTime": start or stamp, "containers": containers, "cpu": cpu,
                         "memory": memory, "process_stats": {"process_count": len(containers)}})
        node_cores, node_bytes = node_cores + pod_cores, node_bytes + pod_bytes
    created = get_path(node, "metadata", "creationTimestamp")
    capacity = int(parse_quantity(get_path(node, "status", "capacity", "memory") or 0))
    since = parse_time(created) if created else now
    cpu, memory = _usage(now - since, node_cores, node_bytes, stamp, capacity)
    return {"node": {"nodeName": name, "startTime": created or stamp, "cpu": cpu, "memory": memory},
            "pods": pods_out}


@subresource("nodes", "proxy")
async def node_proxy(request: Request, ctx: RequestContext, namespace: str | None, name: str) -> Response:
    twin = ctx.twin
    node_name = name.split(":")[-2] if name.count(":") == 2 else name.split(":")[0]
    node = twin.store.peek("Node", None, node_name)
    try:
        if node is None:
            raise not_found("nodes", node_name)
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in get_path(node, "status", "conditions") or [])
        if not ready:
            raise ServiceUnavailable(f"error trying to reach service: dial tcp {_node_ip(node)}:"
                                     f"{KUBELET_PORT}: connect: no route to host")
    except ApiError as err:
        return error_response(err)
    path = proxied_path(request).split("?", 1)[0].rstrip("/") or "/"
    if path == "/healthz":
        return PlainTextResponse("ok")
    if path == "/pods":
        items = _pods_on(twin, node_name)
        doc = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}
        return Response(json.dumps(doc), media_type="application/json")
    if path == "/stats/summary":
        return Response(json.dumps(stats_summary(twin, node), indent=2), media_type="application/json")
    if path == "/metrics/resource":
        return Response(resource_metrics(twin, node), media_type=_TEXT)
    return PlainTextResponse("404 page not found\n", status_code=404,
                             headers={"X-Content-Type-Options": "nosniff"})


__all__ = ["node_proxy", "resource_metrics", "stats_summary"]
