"""node-exporter on every node (job "node-exporter", instance `<InternalIP>:9100`).

The node's CPU and memory follow what its pods really use (the cAdvisor collector's per-node
aggregates of the runtime's usage) plus what the node's own daemons use: `node_cpu_seconds_total`
grows per CPU and mode, idle taking whatever is left; load averages are exponentially-damped
averages of runnable demand with Linux's 1/5/15-minute constants. Disks, conntrack and the clock
come from the node OS model (`twin.services.nodeos`: `filesystems(node)`, `disks(node)`,
`conntrack(node)`, `clock_offset(node)`), so a filled disk, a full conntrack table or a skewed
clock show up under the metric names the standard alerts use (NodeFilesystemSpaceFillingUp,
NodeHighNumberConntrackEntriesUsed, NodeClockSkewDetected). Without the node OS model, the
defaults of a fresh kind node are reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos import node_kernel, node_tasks
from sregym.twin.chaos.diskio import DeviceIO, activity
from sregym.twin.machinery.quantity import QuantityError, cpu_cores, memory_bytes
from sregym.twin.node.sockstat import SockStat, node_sockstat, sockstat_help, sockstat_metrics
from sregym.twin.telemetry.cadvisor import (
    SYSTEM_CPU_CORES,
    SYSTEM_MEMORY_BYTES,
    Cadvisor,
    NodeStats,
    node_role,
)
from sregym.twin.telemetry.exposition import (
    MONITORING_NAMESPACE,
    RELEASE,
    Batch,
    Family,
    RefTable,
    Target,
    node_internal_ip,
    node_reachable,
    stable_suffix,
)
from sregym.twin.telemetry.node_netstat import FAMILIES as NETSTAT_FAMILIES
from sregym.twin.telemetry.node_netstat import node_netstat

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

JOB = "node-exporter"
PORT = 9100
SERVICE = f"{RELEASE}-prometheus-node-exporter"
MIB, GIB = 2**20, 2**30
UPTIME_AT_START = 3 * 3600 + 17 * 60  # the node containers were booted a while before the twin
KERNEL_MEMORY = 380 * MIB
BASE_CACHED = 1200 * MIB
BUFFERS = 96 * MIB
CONNTRACK_MAX = 131072
CONNTRACK_BASE = 180  # kube-proxy, kubelet, DNS
CONNTRACK_PER_CONTAINER = 9
DISK_UTIL_BASE = 0.012
DISK_UTIL_PER_CONTAINER = 0.0015
DISK_READ_BPS = 6_000.0
DISK_WRITE_BPS = 160_000.0
NODE_BASE_RX_BPS, NODE_BASE_TX_BPS = 3_500.0, 2_800.0
MODES = ("idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user")
LOAD_WINDOWS = ((1, 60.0), (5, 300.0), (15, 900.0))


@dataclass
class NodeCounters:
    cpus: int
    boot_time: float
    last_t: float
    cpu: list[dict[str, float]] = field(default_factory=list)  # per CPU: mode -> seconds
    load: dict[int, float] = field(default_factory=dict)
    disk_io_s: float = 0.0
    disk_read: float = 0.0
    disk_written: float = 0.0
    rx: float = 0.0
    tx: float = 0.0
    busy: float = 0.0
    demand: float = 0.0


def _cores(node: dict[str, Any]) -> int:
    try:
        return max(1, math.ceil(cpu_cores(((node.get("status") or {}).get("capacity") or {}).get("cpu", "1"))))
    except (QuantityError, ValueError, ArithmeticError):
        return 1


def _memory(node: dict[str, Any]) -> float:
    try:
        return float(memory_bytes(((node.get("status") or {}).get("capacity") or {}).get("memory", "0")))
    except (QuantityError, ValueError, ArithmeticError):
        return 0.0


class NodeExporter:
    """node-exporter: one target per node, fed by cAdvisor's aggregates and the node OS model."""

    families: tuple[Family, ...]

    def __init__(self, twin: Twin, cadvisor: Cadvisor) -> None:
        self.twin = twin
        self.cadvisor = cadvisor
        self.families = FAMILIES
        self.nodes: dict[str, NodeCounters] = {}
        self._node_kind = twin.store.kind("Node")
        self._refs = RefTable()  # every sample's series, resolved once

    # ----------------------------------------------------------------- sampling
    def _counters(self, node: dict[str, Any], now: float) -> NodeCounters:
        name = node["metadata"]["name"]
        counters = self.nodes.get(name)
        if counters is None:
            cpus = _cores(node)
            boot = self.twin.clock.start - UPTIME_AT_START
            uptime = max(0.0, now - boot)
            counters = NodeCounters(cpus=cpus, boot_time=boot, last_t=now)
            for _ in range(cpus):
                counters.cpu.append({"idle": uptime * 0.968, "iowait": uptime * 0.002, "irq": 0.0,
                                     "nice": uptime * 0.0004, "softirq": uptime * 0.0016, "steal": 0.0,
                                     "system": uptime * 0.008, "user": uptime * 0.02})
            counters.load = {1: 0.35, 5: 0.3, 15: 0.28}
            counters.disk_io_s = uptime * DISK_UTIL_BASE
            counters.disk_read = uptime * DISK_READ_BPS
            counters.disk_written = uptime * DISK_WRITE_BPS
            counters.rx = uptime * NODE_BASE_RX_BPS
            counters.tx = uptime * NODE_BASE_TX_BPS
            self.nodes[name] = counters
        return counters

    def sample(self, now: float) -> None:
        """Integrate node CPU, disk and network counters since the previous sample."""
        for node in self.twin.store.scan(self._node_kind):
            counters = self._counters(node, now)
            dt = max(0.0, now - counters.last_t)
            counters.last_t = now
            stats = self.cadvisor.node_stats.get(node["metadata"]["name"], NodeStats())
            system = SYSTEM_CPU_CORES[node_role(node)]
            busy = min(float(counters.cpus), stats.busy_cores + system)
            demand = stats.demand_cores + system
            util = min(1.0, DISK_UTIL_BASE + DISK_UTIL_PER_CONTAINER * stats.containers)
            iowait = min(float(counters.cpus) - busy, util * 0.5)
            per_cpu_busy = busy / counters.cpus
            per_cpu_iowait = max(0.0, iowait) / counters.cpus
            idle = max(0.0, 1.0 - per_cpu_busy - per_cpu_iowait)
            for cpu in counters.cpu:
                cpu["user"] += per_cpu_busy * 0.72 * dt
                cpu["system"] += per_cpu_busy * 0.22 * dt
                cpu["softirq"] += per_cpu_busy * 0.05 * dt
                cpu["nice"] += per_cpu_busy * 0.01 * dt
                cpu["iowait"] += per_cpu_iowait * dt
                cpu["idle"] += idle * dt
            for minutes, window in LOAD_WINDOWS:
                decay = math.exp(-dt / window)
                counters.load[minutes] = counters.load[minutes] * decay + demand * (1 - decay)
            counters.disk_io_s += util * dt
            counters.disk_read += DISK_READ_BPS * dt
            counters.disk_written += (DISK_WRITE_BPS + 64.0 * stats.containers) * dt
            counters.rx += (NODE_BASE_RX_BPS + stats.rx_bps) * dt
            counters.tx += (NODE_BASE_TX_BPS + stats.tx_bps) * dt
            counters.busy, counters.demand = busy, demand

    # --------------------------------------------------------------- exposition
    def collect(self, now: float) -> list[Batch]:
        nodeos = self.twin.services.nodeos
        batches = []
        from sregym.twin.telemetry import stack

        with_stack = stack.installed(self.twin)
        for node in self.twin.store.scan(self._node_kind):
            name = node["metadata"]["name"]
            ip = node_internal_ip(node)
            instance = f"{ip}:{PORT}"
            pod_name = f"{SERVICE}-{stable_suffix(name)}"
            if with_stack:  # the DaemonSet's pod on this node, or no target without one
                pod = stack.stack_target_pod(self.twin, "prometheus-node-exporter", name)
                if pod is None:
                    continue
                pod_name = pod["metadata"]["name"]
            target = Target(JOB, instance, {
                "job": JOB, "instance": instance, "namespace": MONITORING_NAMESPACE,
                "pod": pod_name, "container": "node-exporter",
                "endpoint": "http-metrics", "service": SERVICE, "node": name},
                honor_labels=False, up=node_reachable(node))
            batch = Batch(target)
            batches.append(batch)
            if target.up:
                self._node(batch, node, self._counters(node, now), nodeos, now)
        return batches

    def _node(self, batch: Batch, node: dict[str, Any], c: NodeCounters, nodeos: Any, now: float) -> None:
        name = node["metadata"]["name"]
        add = self._refs.adder(batch)
        for index, cpu in enumerate(c.cpu):
            for mode in MODES:
                add("node_cpu_seconds_total", {"cpu": str(index), "mode": mode}, cpu[mode])
        for minutes, _ in LOAD_WINDOWS:
            add(f"node_load{minutes}", None, round(c.load[minutes], 2))
        stats = self.cadvisor.node_stats.get(name, NodeStats())
        total = _memory(node)
        used = stats.memory_bytes + SYSTEM_MEMORY_BYTES[node_role(node)] + KERNEL_MEMORY
        cached = min(BASE_CACHED + 0.1 * stats.memory_bytes, max(0.0, total - used - BUFFERS))
        free = max(0.0, total - used - cached - BUFFERS)
        available = min(total, free + cached * 0.85 + BUFFERS)
        for metric, value in (("MemTotal", total), ("MemFree", free), ("MemAvailable", available),
                              ("Buffers", BUFFERS), ("Cached", cached), ("Active", used * 0.6 + cached * 0.4),
                              ("Inactive", used * 0.2 + cached * 0.6), ("SwapTotal", 0.0), ("SwapFree", 0.0)):
            add(f"node_memory_{metric}_bytes", None, float(int(value)))
        self._filesystems(batch, node, nodeos)
        self._disks(batch, name, c, nodeos)
        entries, limit = self._conntrack(name, stats, nodeos)
        add("node_nf_conntrack_entries", None, entries)
        add("node_nf_conntrack_entries_limit", None, limit)
        drops = 0.0
        state = _call(nodeos, "node", name)
        if state is not None:
            drops = float(getattr(state, "conntrack_drops", 0) or 0)
        add("node_nf_conntrack_stat_drop", None, drops)
        if nodeos is not None:  # the filefd collector: /proc/sys/fs/file-nr
            add("node_filefd_allocated", None, float(node_kernel.files_allocated(self.twin, name)))
            add("node_filefd_maximum", None, float(node_kernel.file_max(self.twin, name)))
            for family, value in node_tasks.processes_metrics(self.twin, name):  # the processes collector
                add(family, None, value)
        for family, value in sockstat_metrics(node_sockstat(self.twin, name)):  # the sockstat collector
            add(family, None, float(value))
        offset = _call(nodeos, "clock_offset", name)
        offset = float(offset) if isinstance(offset, (int, float)) else 0.0
        add("node_timex_offset_seconds", None, offset)
        add("node_timex_sync_status", None, 1.0 if abs(offset) < 0.5 else 0.0)
        add("node_timex_maxerror_seconds", None, 0.0005 + abs(offset))
        add("node_timex_estimated_error_seconds", None, 0.0)
        add("node_time_seconds", None, now + offset)
        add("node_boot_time_seconds", None, float(int(c.boot_time)))
        for direction, value in (("receive", c.rx), ("transmit", c.tx)):
            add(f"node_network_{direction}_bytes_total", {"device": "eth0"}, float(int(value)))
            add(f"node_network_{direction}_packets_total", {"device": "eth0"}, float(int(value / 900)))
            add(f"node_network_{direction}_drop_total", {"device": "eth0"}, 0.0)
            add(f"node_network_{direction}_errs_total", {"device": "eth0"}, 0.0)
        add("node_network_up", {"device": "eth0"}, 1.0)
        for metric, value in node_netstat(self.twin, node):
            add(metric, None, value)
        add("node_procs_running", None, float(max(1, round(c.demand))))
        add("node_procs_blocked", None, 0.0)
        info = (node.get("status") or {}).get("nodeInfo") or {}
        add("node_uname_info", {"sysname": "Linux", "release": info.get("kernelVersion", "6.1.0-28-amd64"),
                                "version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
                                "machine": "x86_64", "nodename": name, "domainname": "(none)"}, 1.0)
        add("node_os_info", {"id": "debian", "name": "Debian GNU/Linux", "pretty_name": info.get(
            "osImage", "Debian GNU/Linux 12 (bookworm)"), "version_id": "12", "version_codename": "bookworm"}, 1.0)
        add("node_exporter_build_info", {"version": "1.8.2", "goversion": "go1.22.5", "branch": "HEAD",
                                         "revision": "f1e0e8360aa60b6cb5e5cc1560bed348fc2c1895",
                                         "tags": "unknown"}, 1.0)

    def _filesystems(self, batch: Batch, node: dict[str, Any], nodeos: Any) -> None:
        filesystems = _call(nodeos, "filesystems", node["metadata"]["name"])
        if not filesystems:
            size = float(memory_bytes(((node.get("status") or {}).get("capacity") or {})
                                      .get("ephemeral-storage", "102626232Ki")))
            filesystems = [{"device": "/dev/sda1", "mountpoint": "/", "fstype": "ext4", "size_bytes": size,
                            "avail_bytes": size * 0.81, "free_bytes": size * 0.84, "files": 6_553_600,
                            "files_free": 6_150_000}]
        add = self._refs.adder(batch)
        for fs in filesystems:
            labels = {"device": str(fs.get("device", "")), "fstype": str(fs.get("fstype", "")),
                      "mountpoint": str(fs.get("mountpoint", ""))}
            add("node_filesystem_size_bytes", labels, float(fs.get("size_bytes", 0)))
            add("node_filesystem_avail_bytes", labels, float(fs.get("avail_bytes", 0)))
            add("node_filesystem_free_bytes", labels, float(fs.get("free_bytes", fs.get("avail_bytes", 0))))
            add("node_filesystem_files", labels, float(fs.get("files", 0)))
            add("node_filesystem_files_free", labels, float(fs.get("files_free", 0)))
            add("node_filesystem_readonly", labels, 1.0 if fs.get("readonly") else 0.0)
            add("node_filesystem_device_error", labels, 0.0)

    def _disks(self, batch: Batch, name: str, c: NodeCounters, nodeos: Any) -> None:
        disks = _call(nodeos, "disks", name) or []
        devices = [(str(getattr(d, "device", "sda")), float(getattr(d, "io_time_seconds", 0.0) or 0.0),
                    int(getattr(d, "io_errors", 0) or 0)) for d in disks] or [("sda", 0.0, 0)]
        add = self._refs.adder(batch)
        for index, (device, extra_io, errors) in enumerate(devices):
            share = 1.0 if index == 0 else 0.25  # the root disk carries most of the background I/O
            labels = {"device": device}
            x = activity(self.twin, name, device) or DeviceIO()  # the applications' own IO
            add("node_disk_io_time_seconds_total", labels, c.disk_io_s * share + extra_io + x.io_ms / 1000)
            add("node_disk_io_time_weighted_seconds_total", labels,
                      (c.disk_io_s * share + extra_io) * 1.6 + x.weighted_ms / 1000)
            add("node_disk_read_bytes_total", labels, float(int(c.disk_read * share) + int(x.read_sectors) * 512))
            add("node_disk_written_bytes_total", labels,
                      float(int(c.disk_written * share) + int(x.write_sectors) * 512))
            add("node_disk_reads_completed_total", labels, float(int(c.disk_read * share / 16384) + int(x.reads)))
            add("node_disk_writes_completed_total", labels,
                      float(int(c.disk_written * share / 8192)) + errors + int(x.writes))
            add("node_disk_read_time_seconds_total", labels,
                      c.disk_io_s * share * 0.2 + extra_io * 0.5 + x.read_ms / 1000)
            add("node_disk_write_time_seconds_total", labels,
                      c.disk_io_s * share * 0.9 + extra_io * 0.5 + x.write_ms / 1000)

    def _conntrack(self, name: str, stats: NodeStats, nodeos: Any) -> tuple[float, float]:
        reading = _call(nodeos, "conntrack", name)
        base = float(CONNTRACK_BASE + CONNTRACK_PER_CONTAINER * stats.containers)
        if isinstance(reading, tuple) and len(reading) == 2:
            # The model tracks the data plane's connections; the node's own (kubelet, kube-proxy,
            # DNS) come on top, and the table never holds more than its limit.
            entries, limit = float(reading[0]), float(reading[1])
            return min(limit, entries + base), limit
        return base, float(CONNTRACK_MAX)



def _call(service: Any, method: str, *args: Any) -> Any:
    """Call an optional provider method; None when the provider or method is absent."""
    fn = getattr(service, method, None) if service is not None else None
    if fn is None:
        return None
    try:
        return fn(*args)
    except (KeyError, LookupError, ValueError):
        return None


def _families() -> tuple[Family, ...]:
    out = [
        Family("node_cpu_seconds_total", "counter", "Seconds the CPUs spent in each mode."),
        Family("node_load1", "gauge", "1m load average."),
        Family("node_load5", "gauge", "5m load average."),
        Family("node_load15", "gauge", "15m load average."),
    ]
    for metric in ("MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "Active", "Inactive", "SwapTotal",
                   "SwapFree"):
        out.append(Family(f"node_memory_{metric}_bytes", "gauge", f"Memory information field {metric}_bytes."))
    out += [
        Family("node_filesystem_size_bytes", "gauge", "Filesystem size in bytes."),
        Family("node_filesystem_avail_bytes", "gauge", "Filesystem space available to non-root users in bytes."),
        Family("node_filesystem_free_bytes", "gauge", "Filesystem free space in bytes."),
        Family("node_filesystem_files", "gauge", "Filesystem total file nodes."),
        Family("node_filesystem_files_free", "gauge", "Filesystem total free file nodes."),
        Family("node_filesystem_readonly", "gauge", "Filesystem read-only status."),
        Family("node_filesystem_device_error", "gauge",
               "Whether an error occurred while getting statistics for the given device."),
        Family("node_disk_io_time_seconds_total", "counter", "Total seconds spent doing I/Os."),
        Family("node_disk_io_time_weighted_seconds_total", "counter",
               "The weighted # of seconds spent doing I/Os."),
        Family("node_disk_read_bytes_total", "counter", "The total number of bytes read successfully."),
        Family("node_disk_written_bytes_total", "counter", "The total number of bytes written successfully."),
        Family("node_disk_reads_completed_total", "counter", "The total number of reads completed successfully."),
        Family("node_disk_writes_completed_total", "counter",
               "The total number of writes completed successfully."),
        Family("node_disk_read_time_seconds_total", "counter", "The total number of seconds spent by all reads."),
        Family("node_disk_write_time_seconds_total", "counter",
               "This is the total number of seconds spent by all writes."),
        Family("node_nf_conntrack_entries", "gauge", "Number of currently allocated flow entries for connection "
                                                     "tracking."),
        Family("node_nf_conntrack_entries_limit", "gauge", "Maximum size of connection tracking table."),
        Family("node_nf_conntrack_stat_drop", "gauge", "Number of packets dropped due to conntrack failure."),
        *(Family(family, "gauge", sockstat_help(family)) for family, _ in sockstat_metrics(SockStat())),
        Family("node_filefd_allocated", "gauge", "File descriptor statistics: allocated."),
        Family("node_filefd_maximum", "gauge", "File descriptor statistics: maximum."),
        Family("node_processes_pids", "gauge", "Number of PIDs"),
        Family("node_processes_max_processes", "gauge", "Number of max PIDs limit"),
        Family("node_processes_threads", "gauge", "Allocated threads in system"),
        Family("node_processes_max_threads", "gauge", "Limit of threads in the system"),
        Family("node_timex_offset_seconds", "gauge", "Time offset in between local system and reference clock."),
        Family("node_timex_sync_status", "gauge", "Is clock synchronized to a reliable server (1 = yes, 0 = no)."),
        Family("node_timex_maxerror_seconds", "gauge", "Maximum error in seconds."),
        Family("node_timex_estimated_error_seconds", "gauge", "Estimated error in seconds."),
        Family("node_time_seconds", "gauge", "System time in seconds since epoch (1970)."),
        Family("node_boot_time_seconds", "gauge", "Node boot time, in unixtime."),
        Family("node_network_up", "gauge", "Value is 1 if operstate is 'up', 0 otherwise."),
        Family("node_procs_running", "gauge", "Number of processes in runnable state."),
        Family("node_procs_blocked", "gauge", "Number of processes blocked waiting for I/O to complete."),
        Family("node_uname_info", "gauge", "Labeled system information as provided by the uname system call."),
        Family("node_os_info", "gauge", "A metric with a constant '1' value labeled by build_id, id, id_like, "
                                        "image_id, image_version, name, pretty_name, variant, variant_id, "
                                        "version, version_codename, version_id."),
        Family("node_exporter_build_info", "gauge", "A metric with a constant '1' value labeled by version, "
                                                    "revision, branch, goversion from which node_exporter was "
                                                    "built, and the goos and goarch for the build."),
    ]
    for direction in ("receive", "transmit"):
        out += [
            Family(f"node_network_{direction}_bytes_total", "counter",
                   f"Network device statistic {direction}_bytes."),
            Family(f"node_network_{direction}_packets_total", "counter",
                   f"Network device statistic {direction}_packets."),
            Family(f"node_network_{direction}_drop_total", "counter", f"Network device statistic {direction}_drop."),
            Family(f"node_network_{direction}_errs_total", "counter", f"Network device statistic {direction}_errs."),
        ]
    return (*out, *NETSTAT_FAMILIES)


FAMILIES = _families()
