"""The resource metrics pipeline the HPA controller reads: what metrics-server serves.

A kind cluster with metrics-server gives the HPA controller exactly what `kubectl top pod`
shows: the `metrics.k8s.io` PodMetrics of the pod, its containers' CPU and memory summed. The
twin serves that API in every mode (in-process, `twin up`, attempts), so the HPA must read the
same figures in every mode too; this provider is wired in `Twin.__init__` rather than by whoever
serves the API, which is how `twin up` once ended with `<unknown>/50%` while `kubectl top` worked.

The samples themselves (PodMetrics and NodeMetrics at 15 s boundaries of the simulated clock, in
resource.Quantity's canonical form) are computed here too, below the API layer: the
`metrics.k8s.io` handlers (`api/kube/metrics.py`) and the kubelet proxy serve them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.clock import format_time, parse_time
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import parse_quantity

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

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



class ServedPodMetrics:
    """`pod_usage(namespace, pod) -> (cpu_cores, memory_bytes) | None` from the PodMetrics the
    API serves (None where metrics-server would have no sample: pod not running, or no container
    running since the last sample)."""

    def __init__(self, twin: Twin) -> None:
        self._twin = twin

    def pod_usage(self, namespace: str, pod: str) -> tuple[float, int] | None:
        obj = self._twin.store.peek("Pod", namespace, pod)
        item = pod_metrics(self._twin, obj) if obj is not None else None
        if item is None:
            return None
        cpu = sum(float(parse_quantity(c["usage"]["cpu"])) for c in item["containers"])
        memory = sum(int(parse_quantity(c["usage"]["memory"])) for c in item["containers"])
        return cpu, memory


__all__ = ["ServedPodMetrics"]
