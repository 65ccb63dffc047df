"""Block-device activity that programs cause: the IO a database does, and how long it takes.

node-exporter's `node_disk_*` counters and `/proc/diskstats` report what the kernel's block layer
counted per device: requests completed, sectors, milliseconds spent reading and writing, the time
the device was busy (`io_ticks`) and the queue-weighted time. Without the applications' IO the
twin only has a background trickle; this module adds what the data plane makes the stores do.
A store reports each tick's requests (`record(pod, mount_path, op=..., rate=..., latency_ms=...)`,
once per flow and tick, as the engine asks the store): each request costs a few block requests
on the device behind the volume (the data disk `sdb` for PersistentVolumes, the node's root disk
`sda` for emptyDir and the writable layer), each taking the device's service time plus what an
IOChaos latency adds. So a slowed volume shows as rising `node_disk_io_time_seconds_total`
(towards 100% busy), read/write time per request and queue-weighted time, in proportion to the
load the database really serves.

`diskstats(twin, node)` renders `/proc/diskstats` in the kernel's 20-field layout (Linux 5.5+:
reads, merged, sectors, ms, writes, merged, sectors, ms, in-flight, io_ticks, weighted, then
discards and flushes), from the same numbers node-exporter reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

READ_OPS = frozenset({"find", "count", "aggregate", "distinct", "select", "query", "get"})
READ_SECTORS = 32  # 16 KiB per read request (a WiredTiger/heap page plus readahead)
WRITE_SECTORS = 16  # 8 KiB per write request
WRITES_PER_OP = 2  # the journal/WAL record and the data page
READ_SERVICE_MS = 0.35  # a healthy SSD behind a kind node
WRITE_SERVICE_MS = 0.55
MAX_BUSY = 0.95  # io_ticks cannot exceed wall time; leave room for the background I/O
# Major/minor numbers of the SCSI disks a node shows (sd: major 8, 16 minors per disk).
DEVICE_NUMBERS = {"sda": (8, 0), "sdb": (8, 16)}


_NODEOS_OF: Any = None  # `chaos.nodeos.nodeos_of`, bound on first use by `device_of`

@dataclass
class DeviceIO:
    """Cumulative block-layer counters a workload added to one device of one node."""

    reads: float = 0.0
    writes: float = 0.0
    read_sectors: float = 0.0
    write_sectors: float = 0.0
    read_ms: float = 0.0
    write_ms: float = 0.0
    io_ms: float = 0.0
    weighted_ms: float = 0.0
    flushes: float = 0.0
    flush_ms: float = 0.0
    tick_at: float = -1.0
    tick_busy_ms: float = 0.0


class DiskIO:
    """Per (node, device) counters of application IO (`twin.services.diskio`), and the space
    files written from containers hold on node disks (`claims`), so that deleting a file, or the
    pod whose writable layer or emptyDir held it, gives the space back."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.devices: dict[tuple[str, str], DeviceIO] = {}
        # (pod uid, container, path) -> (node, device, bytes)
        self.claims: dict[tuple[str, str, str], tuple[str, str, int]] = {}
        self._next_gc = 0.0

    # ------------------------------------------------------------------ space
    def claim(self, pod_uid: str, container: str, path: str, node: str, device: str, nbytes: int) -> None:
        key = (pod_uid, container, path)
        _, _, held = self.claims.get(key, (node, device, 0))
        self.claims[key] = (node, device, held + int(nbytes))

    def release(self, pod_uid: str, container: str, path: str) -> None:
        found = self.claims.pop((pod_uid, container, path), None)
        nodeos = self.twin.services.nodeos
        if found is None or nodeos is None:
            return
        node, device, nbytes = found
        disk = nodeos.node(node).disks.get(device)
        if disk is not None:
            disk.used_bytes = max(0, disk.used_bytes - nbytes)

    def release_deleted(self, pod_uid: str, container: str, present: Any) -> None:
        """Files of this container that are gone (`rm`) give their space back."""
        for key in [k for k in self.claims if k[0] == pod_uid and k[1] == container and k[2] not in present]:
            self.release(*key)

    def release_vanished(self) -> None:
        """Every 10 s: pods that no longer exist free their writable layers and emptyDirs (the
        node's root disk); data on PersistentVolumes stays."""
        now = self.twin.clock.now
        if not self.claims or now < self._next_gc:
            return
        self._next_gc = now + 10.0
        live = {get_path(p, "metadata", "uid") for p in self.twin.store.scan("Pod")}
        for key in [k for k, v in self.claims.items() if k[0] not in live and v[1] == "sda"]:
            self.release(*key)

    def device_of(self, pod: dict[str, Any], mount_path: str, container: str | None = None) -> tuple[str, str] | None:
        """(node, device) behind a container's mount: PVs and hostPaths on the data disk."""
        node = get_path(pod, "spec", "nodeName")
        if not node:
            return None
        global _NODEOS_OF
        if _NODEOS_OF is None:  # bound on first use: nodeos imports this module
            from sregym.twin.chaos.nodeos import nodeos_of

            _NODEOS_OF = nodeos_of
        return str(node), _NODEOS_OF(self.twin).volume_device(pod, mount_path, container)

    def record(self, pod: dict[str, Any], mount_path: str, *, op: str, rate: float, latency_ms: float = 0.0,
               container: str | None = None) -> None:
        """`rate` requests/s of `op` this tick, each IO delayed by `latency_ms` (IOChaos)."""
        if rate <= 0:
            return
        where = self.device_of(pod, mount_path, container)
        if where is None:
            return
        dt = float(self.twin.clock.tick)
        dev = self.devices.setdefault(where, DeviceIO())
        if op.lower() in READ_OPS:
            n, sectors, service = rate * dt, READ_SECTORS, READ_SERVICE_MS + latency_ms
            dev.reads += n
            dev.read_sectors += n * sectors
            dev.read_ms += n * service
        else:
            n, sectors, service = rate * WRITES_PER_OP * dt, WRITE_SECTORS, WRITE_SERVICE_MS + latency_ms
            dev.writes += n
            dev.write_sectors += n * sectors
            dev.write_ms += n * service
            dev.flushes += rate * dt
            dev.flush_ms += rate * dt * service
        total = n * service
        dev.weighted_ms += total
        now = self.twin.clock.now
        if dev.tick_at != now:
            dev.tick_at, dev.tick_busy_ms = now, 0.0
        busy = max(0.0, min(total, dt * 1000.0 * MAX_BUSY - dev.tick_busy_ms))
        dev.tick_busy_ms += busy
        dev.io_ms += busy

    def activity(self, node: str, device: str) -> DeviceIO | None:
        return self.devices.get((node, device))


def diskio_of(twin: Twin) -> DiskIO:
    service = twin.services.diskio
    if service is None:
        service = DiskIO(twin)
        twin.services.diskio = service
    return service


def activity(twin: Twin, node: str, device: str) -> DeviceIO | None:
    """What applications added to a device's counters (None when nothing did): node-exporter's hook."""
    service = twin.services.diskio
    return service.activity(node, device) if service is not None else None


# ----------------------------------------------------------------------------- /proc/diskstats
def device_counters(twin: Twin, node: str) -> list[tuple[str, str, dict[str, float]]]:
    """Per whole disk, the kernel's counters as node-exporter reads them (same numbers as the
    `node_disk_*` series): the exporter's background plus the applications' IO."""
    from sregym.twin.chaos.nodeos import nodeos_of

    # node-exporter's integrated background (read, not imported: telemetry imports this module).
    exporter = getattr(twin.services.scraper, "node_exporter", None)
    base = getattr(exporter, "nodes", {}).get(node) if exporter is not None else None
    io_s, read_b, written_b = ((base.disk_io_s, base.disk_read, base.disk_written) if base is not None
                               else (0.0, 0.0, 0.0))
    out = []
    for index, disk in enumerate(nodeos_of(twin).disks(node)):
        share = 1.0 if index == 0 else 0.25
        extra_io = float(disk.io_time_seconds)
        extra = activity(twin, node, disk.device) or DeviceIO()
        reads = int(read_b * share / 16384) + extra.reads
        writes = int(written_b * share / 8192) + disk.io_errors + extra.writes
        out.append((disk.device, disk.partition, {
            "reads": reads, "read_merged": reads * 0.08,
            "read_sectors": int(read_b * share) / 512 + extra.read_sectors,
            "read_ms": (io_s * share * 0.2 + extra_io * 0.5) * 1000 + extra.read_ms,
            "writes": writes, "write_merged": writes * 0.35,
            "write_sectors": int(written_b * share) / 512 + extra.write_sectors,
            "write_ms": (io_s * share * 0.9 + extra_io * 0.5) * 1000 + extra.write_ms,
            "io_ms": (io_s * share + extra_io) * 1000 + extra.io_ms,
            "weighted_ms": (io_s * share + extra_io) * 1.6 * 1000 + extra.weighted_ms,
            "flushes": writes * 0.05 + extra.flushes, "flush_ms": writes * 0.05 * 0.4 + extra.flush_ms}))
    return out


def diskstats(twin: Twin, node: str) -> str:
    """`/proc/diskstats` of a node (what a container sees too: the file is not namespaced)."""
    lines = []

    def row(major: int, minor: int, name: str, c: dict[str, float], part: float) -> str:
        fields = [c["reads"], c["read_merged"], c["read_sectors"], c["read_ms"], c["writes"], c["write_merged"],
                  c["write_sectors"], c["write_ms"], 0, c["io_ms"], c["weighted_ms"], 0, 0, 0, 0,
                  c["flushes"], c["flush_ms"]]
        values = [int(v * part) for v in fields]
        if part < 1.0:  # partitions do not count flushes
            values[15] = values[16] = 0
        return f"{major:4d} {minor:7d} {name} " + " ".join(str(v) for v in values)

    for device, partition, counters in device_counters(twin, node):
        major, minor = DEVICE_NUMBERS.get(device, (8, 32))
        lines.append(row(major, minor, device, counters, 1.0))
        lines.append(row(major, minor + 1, partition, counters, 0.998))
    return "\n".join(lines) + "\n"
