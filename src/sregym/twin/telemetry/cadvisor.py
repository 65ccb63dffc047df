"""cAdvisor, as the kubelet exposes it on `/metrics/cadvisor` (job "kubelet").

A container here is one *instance* (one containerd container, one cgroup): its series carry the
64-hex container id as `name` and its systemd cgroup path as `id`, so a restarted container starts
new series and the old ones go stale — which is why `rate(container_cpu_usage_seconds_total[5m])`
behaves across restarts in the twin exactly as it does in a cluster.

Counters are integrated, not sampled: every few simulated seconds the runtime's usage
(`twin.services.runtime`, including the data plane's usage hooks) is integrated into the
container's CPU seconds, capped by the CFS quota of its CPU limit. CFS periods/throttling come from
the data plane (`twin.services.dataplane.cfs_counters(ns, pod, container) -> (periods,
throttled_periods, throttled_seconds)`, cumulative) when it provides them; otherwise they are
derived from demand vs quota. Network bytes come from `dataplane.network_counters(ns, pod) ->
(rx_bytes, tx_bytes)` when present, otherwise they follow CPU activity. Every counter is kept
monotonic per series whatever its provider does.

Cgroup layout is kind's: systemd driver, cgroup root `/kubelet.slice`, QoS slices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.quantity import QuantityError, cpu_cores, memory_bytes
from sregym.twin.telemetry.exposition import (
    Batch,
    Family,
    SeriesRef,
    Target,
    node_internal_ip,
    node_reachable,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

JOB = "kubelet"
METRICS_PATH = "/metrics/cadvisor"
KUBELET_PORT = 10250
SERVICE = "kube-prometheus-stack-kubelet"
CFS_PERIOD_S = 0.1
MIB = 2**20
# What a node's own daemons (kubelet, containerd, systemd, kernel threads) use, outside pods.
SYSTEM_CPU_CORES = {"control-plane": 0.045, "worker": 0.020}
SYSTEM_MEMORY_BYTES = {"control-plane": 420 * MIB, "worker": 260 * MIB}
# Fallback network traffic when the data plane does not report bytes: a little keep-alive and
# probe traffic, plus bytes proportional to the CPU spent serving.
BASE_RX_BPS, BASE_TX_BPS = 180.0, 140.0
RX_BYTES_PER_CPU_S, TX_BYTES_PER_CPU_S = 1.6e6, 2.4e6
AVG_PACKET_BYTES = 900.0
LOG_WRITE_BPS = 64.0


@dataclass
class ContainerCgroup:
    """Accumulated state of one container instance."""

    cid: str
    namespace: str
    pod: str
    container: str
    pod_uid: str
    node: str
    image: str
    cgroup: str
    started_at: float
    cpu_limit: float | None
    cpu_request: float
    memory_limit: int
    last_t: float
    cpu_s: float = 0.0
    demand: float = 0.0
    consumed: float = 0.0
    memory: float = 0.0
    # CFS counters (derived when the data plane does not provide them).
    periods: float = 0.0
    throttled_periods: float = 0.0
    throttled_s: float = 0.0
    cfs_base: tuple[float, float, float] | None = None  # the provider's last reading
    writes: float = 0.0
    keys: dict[str, SeriesRef] = field(default_factory=dict)
    keys_for: str = ""


@dataclass
class PodCgroup:
    """The pod-level cgroup (sum of its containers) and the pod's network namespace."""

    uid: str
    namespace: str
    pod: str
    node: str
    cgroup: str
    host_network: bool
    last_t: float
    cpu_s: float = 0.0
    memory: float = 0.0
    rx: float = 0.0
    tx: float = 0.0
    net_base: tuple[float, float] | None = None
    keys: dict[str, SeriesRef] = field(default_factory=dict)
    keys_for: str = ""


@dataclass
class NodeStats:
    """Per-node aggregates of the last usage sample (node-exporter builds on these)."""

    busy_cores: float = 0.0
    demand_cores: float = 0.0
    memory_bytes: float = 0.0
    containers: int = 0
    rx_bps: float = 0.0
    tx_bps: float = 0.0


def qos_slice(qos: str, uid: str) -> str:
    pod_unit = "pod" + uid.replace("-", "_")
    root = "/kubelet.slice/kubelet-kubepods.slice"
    if qos == "Guaranteed":
        return f"{root}/kubelet-kubepods-{pod_unit}.slice"
    tier = "besteffort" if qos == "BestEffort" else "burstable"
    return f"{root}/kubelet-kubepods-{tier}.slice/kubelet-kubepods-{tier}-{pod_unit}.slice"


def _quantity(parse: Any, value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(parse(value))
    except (QuantityError, ValueError, ArithmeticError):
        return None


def node_role(node: dict[str, Any]) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return "control-plane" if "node-role.kubernetes.io/control-plane" in labels else "worker"


class Cadvisor:
    """The cAdvisor endpoint of every kubelet."""

    families: tuple[Family, ...]

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.families = FAMILIES
        self.containers: dict[str, ContainerCgroup] = {}
        self.pods: dict[str, PodCgroup] = {}
        self.node_stats: dict[str, NodeStats] = {}
        self._pod_kind = twin.store.kind("Pod")
        self._node_kind = twin.store.kind("Node")
        # Latest provider readings per container/pod *name*, to baseline a restarted instance.
        self._cfs_seen: dict[tuple[str, str, str], tuple[float, float, float]] = {}
        self._net_seen: dict[tuple[str, str], tuple[float, float]] = {}
        self._last_sample: float | None = None

    # ----------------------------------------------------------------- sampling
    def sample(self, now: float) -> None:
        """Integrate usage since the previous sample into every running container's counters."""
        runtime = self.twin.services.runtime
        if runtime is None:
            return
        dataplane = self.twin.services.dataplane
        cfs_provider = getattr(dataplane, "cfs_counters", None)
        net_provider = getattr(dataplane, "network_counters", None)
        hooks = list(runtime.usage_hooks)
        alive: dict[str, ContainerCgroup] = {}
        alive_pods: dict[str, PodCgroup] = {}
        stats: dict[str, NodeStats] = {}
        for pr in runtime.pods.values():
            pod_cg: PodCgroup | None = None
            pod_memory = 0.0
            pod_consumed = 0.0
            for record in pr.containers.values():
                instance = record.current
                if instance is None or not instance.running:
                    continue
                cg = self.containers.get(instance.container_id)
                if cg is None:
                    cg = self._new_container(pr, instance, now)
                    if cg is None:
                        continue
                if pod_cg is None:
                    pod_cg = self.pods.get(pr.uid) or self._new_pod(pr, cg, now)
                cpu, memory = instance.cpu_cores, float(instance.memory_bytes)
                for hook in hooks:
                    extra_cpu, extra_memory = hook(pr.namespace, pr.name, record.name, instance)
                    cpu += extra_cpu
                    memory += extra_memory
                cpu = max(0.0, cpu)
                consumed = min(cpu, cg.cpu_limit) if cg.cpu_limit is not None else cpu
                dt = max(0.0, now - cg.last_t)
                cg.cpu_s += consumed * dt
                cg.writes += LOG_WRITE_BPS * dt
                cg.demand, cg.consumed, cg.memory, cg.last_t = cpu, consumed, max(0.0, memory), now
                if cg.cpu_limit is not None:
                    self._cfs(cg, dt, cfs_provider, pr.namespace, pr.name, record.name)
                alive[cg.cid] = cg
                pod_memory += cg.memory
                pod_consumed += consumed
                node = stats.setdefault(pr.node, NodeStats())
                node.busy_cores += consumed
                node.demand_cores += cpu
                node.memory_bytes += cg.memory
                node.containers += 1
            if pod_cg is None:
                continue
            dt = max(0.0, now - pod_cg.last_t)
            pod_cg.cpu_s += pod_consumed * dt
            pod_cg.memory = pod_memory
            rx0, tx0 = pod_cg.rx, pod_cg.tx
            self._network(pod_cg, dt, pod_consumed, net_provider)
            pod_cg.last_t = now
            alive_pods[pod_cg.uid] = pod_cg
            if dt > 0 and not pod_cg.host_network:
                node = stats.setdefault(pr.node, NodeStats())
                node.rx_bps += (pod_cg.rx - rx0) / dt
                node.tx_bps += (pod_cg.tx - tx0) / dt
        self.containers = alive
        self.pods = alive_pods
        self.node_stats = stats
        self._last_sample = now

    def _new_container(self, pr: Any, instance: Any, now: float) -> ContainerCgroup | None:
        pod = self.twin.store.peek(self._pod_kind, pr.namespace, pr.name)
        if pod is None or (pod.get("metadata") or {}).get("uid") != pr.uid:
            return None
        spec = pod.get("spec") or {}
        container = next((c for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                          if c.get("name") == instance.name), {})
        resources = container.get("resources") or {}
        limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
        cpu_limit = _quantity(cpu_cores, limits.get("cpu"))
        cpu_request = _quantity(cpu_cores, requests.get("cpu", limits.get("cpu")))
        memory_limit = _quantity(memory_bytes, limits.get("memory"))
        qos = (pod.get("status") or {}).get("qosClass", "BestEffort")
        pod_slice = qos_slice(qos, pr.uid)
        started = min(float(instance.started_at), now)
        cg = ContainerCgroup(
            cid=instance.container_id, namespace=pr.namespace, pod=pr.name, container=instance.name,
            pod_uid=pr.uid, node=pr.node, image=instance.image,
            cgroup=f"{pod_slice}/cri-containerd-{instance.container_id}.scope", started_at=started,
            cpu_limit=cpu_limit if cpu_limit else None, cpu_request=cpu_request or 0.0,
            memory_limit=int(memory_limit or 0), last_t=started)
        self.containers[cg.cid] = cg
        return cg

    def _new_pod(self, pr: Any, first: ContainerCgroup, now: float) -> PodCgroup:
        pod_slice = first.cgroup.rsplit("/", 1)[0]
        pod_cg = PodCgroup(uid=pr.uid, namespace=pr.namespace, pod=pr.name, node=pr.node, cgroup=pod_slice,
                           host_network=pr.ip == pr.host_ip, last_t=min(first.started_at, now))
        self.pods[pr.uid] = pod_cg
        return pod_cg

    def _cfs(self, cg: ContainerCgroup, dt: float, provider: Any, ns: str, pod: str, name: str) -> None:
        """CFS bandwidth counters of a container with a CPU limit.

        Two sources: the data plane's queue model (what its program's own load did to the
        cgroup) and demand vs quota from the runtime's usage (which also sees load other hooks
        add, e.g. a StressChaos). Each sample takes the larger increment of the two, so neither
        source can hide throttling the other one saw, and the counters stay monotonic.
        """
        derived = (0.0, 0.0, 0.0)
        if dt > 0 and cg.cpu_limit is not None and cg.demand > 0:
            periods = dt / CFS_PERIOD_S
            # A container with runnable work uses (nearly) every period; the closer demand gets
            # to the quota, the more periods end with the quota exhausted.
            ratio = cg.demand / cg.cpu_limit
            fraction = min(1.0, max(0.0, (ratio - 0.8) / 0.4))
            derived = (periods, periods * fraction,
                       max(0.0, cg.demand - cg.cpu_limit) * dt + periods * fraction * 0.004)
        provided = (0.0, 0.0, 0.0)
        if provider is not None:
            try:
                reading = tuple(float(v) for v in provider(ns, pod, name))
            except Exception:  # the data plane does not know this container (yet)
                reading = ()
            if len(reading) == 3:
                key = (ns, pod, name)
                if cg.cfs_base is None:
                    cg.cfs_base = self._cfs_seen.get(key, (0.0, 0.0, 0.0))
                if any(r < b for r, b in zip(reading, cg.cfs_base, strict=True)):
                    cg.cfs_base = (0.0, 0.0, 0.0)  # the provider counts per instance
                provided = tuple(max(0.0, r - b) for r, b in zip(reading, cg.cfs_base, strict=True))
                cg.cfs_base = reading  # type: ignore[assignment]
                self._cfs_seen[key] = reading  # type: ignore[assignment]
        cg.periods += max(provided[0], derived[0])
        cg.throttled_periods += max(provided[1], derived[1])
        cg.throttled_s += max(provided[2], derived[2])

    def _network(self, pod_cg: PodCgroup, dt: float, consumed: float, provider: Any) -> None:
        if pod_cg.host_network:
            return
        if provider is not None:
            try:
                rx, tx = (float(v) for v in provider(pod_cg.namespace, pod_cg.pod))
            except Exception:  # the data plane does not know this pod (yet)
                rx = tx = -1.0
            if rx >= 0 and tx >= 0:
                key = (pod_cg.namespace, pod_cg.pod)
                if pod_cg.net_base is None:
                    pod_cg.net_base = self._net_seen.get(key, (0.0, 0.0))
                if rx < pod_cg.net_base[0] or tx < pod_cg.net_base[1]:
                    pod_cg.net_base = (0.0, 0.0)
                self._net_seen[key] = (rx, tx)
                pod_cg.rx = max(pod_cg.rx, rx - pod_cg.net_base[0])
                pod_cg.tx = max(pod_cg.tx, tx - pod_cg.net_base[1])
                return
        pod_cg.rx += (BASE_RX_BPS + consumed * RX_BYTES_PER_CPU_S) * dt
        pod_cg.tx += (BASE_TX_BPS + consumed * TX_BYTES_PER_CPU_S) * dt

    # --------------------------------------------------------------- exposition
    def targets(self) -> list[tuple[dict[str, Any], Target]]:
        out = []
        for node in self.twin.store.scan(self._node_kind):
            name = node["metadata"]["name"]
            instance = f"{node_internal_ip(node)}:{KUBELET_PORT}"
            target = Target(JOB, instance, {
                "job": JOB, "instance": instance, "metrics_path": METRICS_PATH, "node": name,
                "endpoint": "https-metrics", "service": SERVICE, "namespace": "kube-system"},
                up=node_reachable(node))
            out.append((node, target))
        return out

    def collect(self, now: float) -> list[Batch]:
        by_node_c: dict[str, list[ContainerCgroup]] = {}
        for cg in self.containers.values():
            by_node_c.setdefault(cg.node, []).append(cg)
        by_node_p: dict[str, list[PodCgroup]] = {}
        for pod_cg in self.pods.values():
            by_node_p.setdefault(pod_cg.node, []).append(pod_cg)
        batches = []
        for node, target in self.targets():
            batch = Batch(target)
            batches.append(batch)
            if not target.up:
                continue
            name = node["metadata"]["name"]
            self._machine(batch, node, now)
            for cg in by_node_c.get(name, ()):
                self._container(batch, cg, now)
            for pod_cg in by_node_p.get(name, ()):
                self._pod(batch, pod_cg)
        return batches

    def _machine(self, batch: Batch, node: dict[str, Any], now: float) -> None:
        capacity = (node.get("status") or {}).get("capacity") or {}
        cores = _quantity(cpu_cores, capacity.get("cpu")) or 0.0
        memory = _quantity(memory_bytes, capacity.get("memory")) or 0.0
        role = node_role(node)
        stats = self.node_stats.get(node["metadata"]["name"], NodeStats())
        batch.add("machine_cpu_cores", None, cores)
        batch.add("machine_cpu_physical_cores", None, cores)
        batch.add("machine_cpu_sockets", None, 1)
        batch.add("machine_memory_bytes", None, memory)
        root = {"id": "/"}
        batch.add("container_memory_working_set_bytes", root,
                  stats.memory_bytes + SYSTEM_MEMORY_BYTES[role])
        batch.add("container_last_seen", root, now)

    def _container(self, batch: Batch, cg: ContainerCgroup, now: float) -> None:
        if cg.keys_for != batch.target.instance:
            labels = {"container": cg.container, "id": cg.cgroup, "image": cg.image, "name": cg.cid,
                      "namespace": cg.namespace, "pod": cg.pod}
            cg.keys = {name: batch.ref(name, labels) for name in _CONTAINER_SERIES}
            cg.keys["container_cpu_usage_seconds_total"] = batch.ref(
                "container_cpu_usage_seconds_total", {**labels, "cpu": "total"})
            for name in ("container_fs_reads_bytes_total", "container_fs_writes_bytes_total",
                         "container_fs_usage_bytes", "container_fs_limit_bytes"):
                cg.keys[name] = batch.ref(name, {**labels, "device": "/dev/sda1"})
            cg.keys_for = batch.target.instance
        keys, add = cg.keys, batch.add_ref
        ws = cg.memory
        cache = 0.08 * ws + 2 * MIB if ws > 0 else 0.0
        rss = max(0.0, ws - cache / 2)
        add(keys["container_cpu_usage_seconds_total"], cg.cpu_s)
        add(keys["container_cpu_user_seconds_total"], cg.cpu_s * 0.82)
        add(keys["container_cpu_system_seconds_total"], cg.cpu_s * 0.18)
        add(keys["container_memory_working_set_bytes"], float(int(ws)))
        add(keys["container_memory_usage_bytes"], float(int(rss + cache)))
        add(keys["container_memory_rss"], float(int(rss)))
        add(keys["container_memory_cache"], float(int(cache)))
        add(keys["container_memory_swap"], 0.0)
        add(keys["container_memory_failcnt"], 0.0)
        add(keys["container_spec_memory_limit_bytes"], float(cg.memory_limit))
        add(keys["container_spec_cpu_shares"], float(max(2, int(cg.cpu_request * 1024))))
        if cg.cpu_limit is not None:
            add(keys["container_spec_cpu_period"], 100000.0)
            add(keys["container_spec_cpu_quota"], float(round(cg.cpu_limit * 100000)))
            add(keys["container_cpu_cfs_periods_total"], float(int(cg.periods)))
            add(keys["container_cpu_cfs_throttled_periods_total"], float(int(cg.throttled_periods)))
            add(keys["container_cpu_cfs_throttled_seconds_total"], cg.throttled_s)
        add(keys["container_fs_reads_bytes_total"], 0.0)
        add(keys["container_fs_writes_bytes_total"], float(int(cg.writes)))
        add(keys["container_fs_usage_bytes"], float(int(24576 + cg.writes)))
        add(keys["container_fs_limit_bytes"], 105088000000.0)
        add(keys["container_start_time_seconds"], cg.started_at)
        add(keys["container_last_seen"], now)

    def _pod(self, batch: Batch, pod_cg: PodCgroup) -> None:
        if pod_cg.keys_for != batch.target.instance:
            labels = {"id": pod_cg.cgroup, "namespace": pod_cg.namespace, "pod": pod_cg.pod}
            keys = {"container_cpu_usage_seconds_total": batch.ref("container_cpu_usage_seconds_total",
                                                                   {**labels, "cpu": "total"}),
                    "container_memory_working_set_bytes": batch.ref("container_memory_working_set_bytes",
                                                                    labels)}
            net = {**labels, "interface": "eth0"}
            for name in _NETWORK_SERIES:
                keys[name] = batch.ref(name, net)
            pod_cg.keys, pod_cg.keys_for = keys, batch.target.instance
        keys, add = pod_cg.keys, batch.add_ref
        add(keys["container_cpu_usage_seconds_total"], pod_cg.cpu_s)
        add(keys["container_memory_working_set_bytes"], float(int(pod_cg.memory)))
        if pod_cg.host_network:
            return
        add(keys["container_network_receive_bytes_total"], float(int(pod_cg.rx)))
        add(keys["container_network_transmit_bytes_total"], float(int(pod_cg.tx)))
        add(keys["container_network_receive_packets_total"], float(int(pod_cg.rx / AVG_PACKET_BYTES)))
        add(keys["container_network_transmit_packets_total"], float(int(pod_cg.tx / AVG_PACKET_BYTES)))
        add(keys["container_network_receive_errors_total"], 0.0)
        add(keys["container_network_transmit_errors_total"], 0.0)
        add(keys["container_network_receive_packets_dropped_total"], 0.0)
        add(keys["container_network_transmit_packets_dropped_total"], 0.0)

    # ------------------------------------------------------------------ queries
    def usage_of(self, namespace: str, pod: str, container: str) -> ContainerCgroup | None:
        """The running instance's cgroup state (tests and the metrics API may read it)."""
        for cg in self.containers.values():
            if cg.namespace == namespace and cg.pod == pod and cg.container == container:
                return cg
        return None


_CONTAINER_SERIES = (
    "container_cpu_user_seconds_total", "container_cpu_system_seconds_total",
    "container_memory_working_set_bytes", "container_memory_usage_bytes", "container_memory_rss",
    "container_memory_cache", "container_memory_swap", "container_memory_failcnt",
    "container_spec_memory_limit_bytes", "container_spec_cpu_shares", "container_spec_cpu_period",
    "container_spec_cpu_quota", "container_cpu_cfs_periods_total", "container_cpu_cfs_throttled_periods_total",
    "container_cpu_cfs_throttled_seconds_total", "container_start_time_seconds", "container_last_seen",
)
_NETWORK_SERIES = (
    "container_network_receive_bytes_total", "container_network_transmit_bytes_total",
    "container_network_receive_packets_total", "container_network_transmit_packets_total",
    "container_network_receive_errors_total", "container_network_transmit_errors_total",
    "container_network_receive_packets_dropped_total", "container_network_transmit_packets_dropped_total",
)

FAMILIES: tuple[Family, ...] = (
    Family("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds."),
    Family("container_cpu_user_seconds_total", "counter", "Cumulative user cpu time consumed in seconds."),
    Family("container_cpu_system_seconds_total", "counter", "Cumulative system cpu time consumed in seconds."),
    Family("container_cpu_cfs_periods_total", "counter", "Number of elapsed enforcement period intervals."),
    Family("container_cpu_cfs_throttled_periods_total", "counter", "Number of throttled period intervals."),
    Family("container_cpu_cfs_throttled_seconds_total", "counter",
           "Total time duration the container has been throttled."),
    Family("container_memory_working_set_bytes", "gauge", "Current working set in bytes."),
    Family("container_memory_usage_bytes", "gauge",
           "Current memory usage in bytes, including all memory regardless of when it was accessed"),
    Family("container_memory_rss", "gauge", "Size of RSS in bytes."),
    Family("container_memory_cache", "gauge", "Number of bytes of page cache memory."),
    Family("container_memory_swap", "gauge", "Container swap usage in bytes."),
    Family("container_memory_failcnt", "counter", "Number of memory usage hits limits"),
    Family("container_spec_memory_limit_bytes", "gauge", "Memory limit for the container."),
    Family("container_spec_cpu_shares", "gauge", "CPU share of the container."),
    Family("container_spec_cpu_period", "gauge", "CPU period of the container."),
    Family("container_spec_cpu_quota", "gauge", "CPU quota of the container."),
    Family("container_fs_reads_bytes_total", "counter", "Cumulative count of bytes read"),
    Family("container_fs_writes_bytes_total", "counter", "Cumulative count of bytes written"),
    Family("container_fs_usage_bytes", "gauge", "Number of bytes that are consumed by the container on this "
                                                "filesystem."),
    Family("container_fs_limit_bytes", "gauge", "Number of bytes that can be consumed by the container on "
                                                "this filesystem."),
    Family("container_network_receive_bytes_total", "counter", "Cumulative count of bytes received"),
    Family("container_network_transmit_bytes_total", "counter", "Cumulative count of bytes transmitted"),
    Family("container_network_receive_packets_total", "counter", "Cumulative count of packets received"),
    Family("container_network_transmit_packets_total", "counter", "Cumulative count of packets transmitted"),
    Family("container_network_receive_errors_total", "counter",
           "Cumulative count of errors encountered while receiving"),
    Family("container_network_transmit_errors_total", "counter",
           "Cumulative count of errors encountered while transmitting"),
    Family("container_network_receive_packets_dropped_total", "counter",
           "Cumulative count of packets dropped while receiving"),
    Family("container_network_transmit_packets_dropped_total", "counter",
           "Cumulative count of packets dropped while transmitting"),
    Family("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds."),
    Family("container_last_seen", "gauge", "Last time a container was seen by the exporter"),
    Family("machine_cpu_cores", "gauge", "Number of logical CPU cores."),
    Family("machine_cpu_physical_cores", "gauge", "Number of physical CPU cores."),
    Family("machine_cpu_sockets", "gauge", "Number of CPU sockets."),
    Family("machine_memory_bytes", "gauge", "Amount of memory installed on the machine."),
)
