"""Node operating-system state: conntrack, disks, clock, kernel and kubelet logs.

What an SRE finds on a node with `dmesg`, `df`, `conntrack -C` or `journalctl -u kubelet` lives
here, per node, as `twin.services.nodeos` (a `NodeOS`):

- conntrack: `nf_conntrack_max` (default 131072) and the entries the data plane's connections
  occupy (`add_connections(node, n)`; short-lived ones expire like TIME_WAIT entries). A full
  table drops new connections (`conntrack_full(node)` for the data plane, which turns that into
  timeouts) and the kernel logs `nf_conntrack: nf_conntrack: table full, dropping packet`,
  rate-limited the way `net_ratelimit` does;
- disks: the root filesystem (`sda1` on `/`, the kubelet's nodefs) and a data disk (`sdb1` on
  `/var/local-path-provisioner`, where PersistentVolumes live), with capacity, usage, inodes and
  bad sectors. The kubelet's eviction manager (`controllers/eviction.py`) reads them for
  DiskPressure;
- clock offset in seconds (`set_clock_offset`), read by `chaos.time_offset` and node-exporter;
- block-layer I/O errors (`io_errors`), written by IOChaos faults with a device and sector.

Setters for fault injectors: `fill_disk`, `fill_inodes`, `set_conntrack_max`,
`set_conntrack_entries`, `set_clock_offset`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.node_kernel import tick as kernel_tick
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import memory_bytes
from sregym.twin.node.kubelet_config import default_text as default_kubelet_config
from sregym.twin.node.logs import log_store

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

CONNTRACK_MAX = 131072
CONNTRACK_LIFETIME = 120.0  # seconds a closed connection's entry lingers (TIME_WAIT)
RATELIMIT_INTERVAL = 5.0  # net_ratelimit: 10 messages per 5 s
RATELIMIT_BURST = 10
SECTOR_BYTES = 512
BLOCK_BYTES = 4096
DATA_MOUNT = "/var/local-path-provisioner"
GIB = 1 << 30


@dataclass
class Disk:
    device: str  # "sda"
    partition: str  # "sda1"
    mountpoint: str
    size_bytes: int
    used_bytes: int
    inodes: int
    inodes_used: int
    fstype: str = "ext4"
    bad_sectors: list[int] = field(default_factory=list)
    io_errors: int = 0
    io_time_seconds: float = 0.0

    @property
    def avail_bytes(self) -> int:
        return max(0, self.size_bytes - self.used_bytes)

    @property
    def inodes_free(self) -> int:
        return max(0, self.inodes - self.inodes_used)


@dataclass
class NodeState:
    name: str
    kubelet_pid: int
    conntrack_max: int = CONNTRACK_MAX
    conntrack_persistent: float = 0.0
    conntrack_transient: float = 0.0
    conntrack_drops: int = 0  # cumulative (node_nf_conntrack_stat_drop)
    clock_offset: float = 0.0
    kubelet_running: bool = True  # False after `systemctl stop kubelet` or a kubelet crash
    kubelet_starts: int = 0  # how many times the kubelet was (re)started since the node booted
    kubelet_config: str = field(default_factory=default_kubelet_config)  # /var/lib/kubelet/config.yaml
    # Kernel settings changed from the defaults, and what they hold (`node_kernel`).
    sysctls: dict[str, str] = field(default_factory=dict)
    kernel_floor: float = 0.0  # the node's own flows, counted while the table is full
    conntrack_held: float = 0.0  # entries of connections programs hold open (held_connections.py)
    file_max_reported: int = 0
    disks: dict[str, Disk] = field(default_factory=dict)
    # net_ratelimit window for the conntrack message.
    window_start: float = -math.inf
    window_printed: int = 0
    suppressed: int = 0

    @property
    def conntrack_entries(self) -> int:
        return int(min(self.conntrack_max, self.conntrack_persistent + self.conntrack_transient))


class NodeOS:
    """Per-node OS state, created lazily for every Node object."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.nodes: dict[str, NodeState] = {}

    # ------------------------------------------------------------------ state
    def node(self, name: str) -> NodeState:
        state = self.nodes.get(name)
        if state is None:
            state = self._boot(name)
            self.nodes[name] = state
        return state

    def _boot(self, name: str) -> NodeState:
        wobble = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
        obj = self.twin.store.peek("Node", None, name)
        capacity = get_path(obj or {}, "status", "capacity", "ephemeral-storage") or "102626232Ki"
        root_size = memory_bytes(capacity)
        root_used = int(root_size * (0.16 + (wobble % 500) / 10000))
        state = NodeState(name=name, kubelet_pid=600 + wobble % 300)
        state.disks["sda"] = Disk("sda", "sda1", "/", root_size, root_used, inodes=6_553_600,
                                  inodes_used=380_000 + wobble % 40_000)
        data_size = 200 * GIB
        state.disks["sdb"] = Disk("sdb", "sdb1", DATA_MOUNT, data_size, int(data_size * 0.02),
                                  inodes=13_107_200, inodes_used=1_200 + wobble % 300)
        return state

    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.twin.store.scan("Node")]

    # -------------------------------------------------------------- conntrack
    def add_connections(self, node: str, n: float, *, lifetime: float = CONNTRACK_LIFETIME) -> float:
        """Track `n` new connections through `node`; returns how many got an entry (the rest
        were dropped because the table is full)."""
        state = self.node(node)
        room = max(0.0, state.conntrack_max - state.conntrack_persistent - state.conntrack_transient)
        admitted = min(float(n), room)
        dropped = float(n) - admitted
        state.conntrack_transient += admitted * (lifetime / CONNTRACK_LIFETIME)
        if dropped > 0:
            self._drop(state, math.ceil(dropped))
        return admitted

    def conntrack_full(self, node: str) -> bool:
        state = self.node(node)
        return state.conntrack_persistent + state.conntrack_transient >= state.conntrack_max

    def conntrack(self, node: str) -> tuple[int, int]:
        """(entries, max) as node-exporter reports node_nf_conntrack_entries/_limit."""
        state = self.node(node)
        return state.conntrack_entries, state.conntrack_max

    def set_conntrack_max(self, node: str, n: int) -> None:
        self.node(node).conntrack_max = max(0, int(n))

    def set_conntrack_entries(self, node: str, n: int) -> None:
        """Long-lived entries (established connections a fault opened), independent of traffic."""
        self.node(node).conntrack_persistent = max(0.0, float(n))

    def _drop(self, state: NodeState, count: int) -> None:
        """Count drops and log them through the kernel's net_ratelimit (10 lines per 5 s, then
        `net_ratelimit: N callbacks suppressed` when the next window opens)."""
        state.conntrack_drops += count
        now = self.twin.clock.now
        if now - state.window_start >= RATELIMIT_INTERVAL:
            if state.suppressed:
                self.kernel(state.name, f"net_ratelimit: {state.suppressed} callbacks suppressed")
            state.window_start, state.window_printed, state.suppressed = now, 0, 0
        printable = max(0, min(count, RATELIMIT_BURST - state.window_printed))
        for _ in range(printable):
            self.kernel(state.name, "nf_conntrack: nf_conntrack: table full, dropping packet")
        state.window_printed += printable
        state.suppressed += count - printable

    # ------------------------------------------------------------------ disks
    def disks(self, node: str) -> list[Disk]:
        return list(self.node(node).disks.values())

    def disk(self, node: str, device: str = "sda") -> Disk:
        return self.node(node).disks[device]

    def filesystems(self, node: str) -> list[dict[str, Any]]:
        """node-exporter's view (node_filesystem_*): one entry per mounted filesystem."""
        return [{"device": f"/dev/{d.partition}", "mountpoint": d.mountpoint, "fstype": d.fstype,
                 "size_bytes": d.size_bytes, "avail_bytes": d.avail_bytes, "free_bytes": d.avail_bytes,
                 "files": d.inodes, "files_free": d.inodes_free} for d in self.disks(node)]

    def fill_disk(self, node: str, num_bytes: int, *, device: str = "sda") -> None:
        """Write `num_bytes` more to a disk (negative frees); usage stays within capacity."""
        disk = self.disk(node, device)
        disk.used_bytes = max(0, min(disk.size_bytes, disk.used_bytes + int(num_bytes)))

    def fill_inodes(self, node: str, count: int, *, device: str = "sda") -> None:
        disk = self.disk(node, device)
        disk.inodes_used = max(0, min(disk.inodes, disk.inodes_used + int(count)))

    def volume_device(self, pod: dict[str, Any], mount_path: str, container: str | None = None) -> str:
        """The disk backing a container's mount: PersistentVolumes live on the data disk."""
        spec = pod.get("spec") or {}
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        for c in spec.get("containers") or []:
            if container is not None and c.get("name") != container:
                continue
            for mount in c.get("volumeMounts") or []:
                path = (mount.get("mountPath") or "").rstrip("/")
                if mount_path == path or mount_path.startswith(path + "/"):
                    volume = volumes.get(mount.get("name")) or {}
                    return "sdb" if "persistentVolumeClaim" in volume or "hostPath" in volume else "sda"
        return "sda"

    def io_errors(self, node: str, device: str, count: int = 1, *, op: str = "READ") -> list[int]:
        """Failing block I/O: picks sectors, remembers them as bad and logs what the kernel logs."""
        disk = self.disk(node, device)
        rng = self.twin.rng.stream("nodeos")
        sectors = []
        for _ in range(max(0, count)):
            if disk.bad_sectors and rng.random() < 0.6:
                sector = disk.bad_sectors[rng.randrange(len(disk.bad_sectors))]
            else:
                sector = 2048 + rng.randrange(max(1, disk.size_bytes // SECTOR_BYTES - 4096)) // 8 * 8
                disk.bad_sectors.append(sector)
            disk.io_errors += 1
            sectors.append(sector)
            code = "0x0" if op == "READ" else "0x1"
            self.kernel(node, f"blk_update_request: I/O error, dev {device}, sector {sector} op {code}:({op}) "
                              "flags 0x0 phys_seg 1 prio class 0")
            block = (sector - 2048) * SECTOR_BYTES // BLOCK_BYTES
            kind = "async page read" if op == "READ" else "lost async page write"
            self.kernel(node, f"Buffer I/O error on dev {disk.partition}, logical block {block}, {kind}")
        return sectors

    # ------------------------------------------------------------------ clock
    def set_clock_offset(self, node: str, seconds: float) -> None:
        self.node(node).clock_offset = float(seconds)

    def clock_offset(self, node: str) -> float:
        state = self.nodes.get(node)
        return state.clock_offset if state is not None else 0.0

    # ---------------------------------------------------------------- kubelet
    def kubelet_running(self, node: str) -> bool:
        """Whether the node's kubelet process is up: the one switch node-level faults (a stopped
        or crashed kubelet) flip, and the kubelet, lease and status code consult."""
        state = self.nodes.get(node)
        return state.kubelet_running if state is not None else True

    def set_kubelet_running(self, node: str, running: bool) -> None:
        state = self.node(node)
        if running and not state.kubelet_running:
            state.kubelet_starts += 1
        state.kubelet_running = bool(running)

    def restart_kubelet(self, node: str) -> None:
        """`systemctl restart kubelet`: a new kubelet process, which reads its config afresh."""
        state = self.node(node)
        state.kubelet_running = True
        state.kubelet_starts += 1

    def kubelet_starts(self, node: str) -> int:
        state = self.nodes.get(node)
        return state.kubelet_starts if state is not None else 0

    def kubelet_config(self, node: str) -> str:
        state = self.nodes.get(node)
        return state.kubelet_config if state is not None else default_kubelet_config()

    def set_kubelet_config(self, node: str, text: str) -> None:
        """A write to the node's `/var/lib/kubelet/config.yaml` (read at the kubelet's next start)."""
        self.node(node).kubelet_config = text

    # ------------------------------------------------------------------- logs
    def kernel(self, node: str, text: str) -> None:
        log_store(self.twin).node_append(node, "kernel", self.twin.clock.now, text)

    def kubelet(self, node: str, text: str, *, level: str = "I", source: str = "kubelet.go:2468") -> None:
        """A klog line as `journalctl -u kubelet` shows its message part."""
        stamp = datetime.fromtimestamp(self.twin.clock.now, tz=UTC).strftime("%m%d %H:%M:%S.%f")
        pid = self.node(node).kubelet_pid
        log_store(self.twin).node_append(node, "kubelet", self.twin.clock.now,
                                         f"{level}{stamp} {pid:>7} {source}] {text}")

    # ------------------------------------------------------------------- tick
    def tick(self) -> None:
        now = self.twin.clock.now
        if self.twin.services.diskio is not None:  # deleted pods' ephemeral files free their space
            self.twin.services.diskio.release_vanished()
        decay = math.exp(-self.twin.clock.tick / CONNTRACK_LIFETIME)
        for name in self.node_names():
            state = self.node(name)
            state.conntrack_transient *= decay
            kernel_tick(self, state, now)


def nodeos_of(twin: Twin) -> NodeOS:
    service = twin.services.nodeos
    if service is None:
        service = NodeOS(twin)
        twin.services.nodeos = service
    return service


@controller
class NodeOSController(Controller):
    """Advances node OS state once per tick (conntrack expiry)."""

    name = "nodeos"
    order = 64
    user = "system:node"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.nodeos = nodeos_of(twin)

    def reconcile(self) -> None:
        self.nodeos.tick()
