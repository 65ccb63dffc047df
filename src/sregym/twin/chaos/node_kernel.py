"""A node's kernel settings (`sysctl`) and the OS limits they put on the pods' connections.

Node-level faults on a real cluster are kernel settings someone changed: a privileged pod runs
`nsenter -t 1 ... sysctl -w net.netfilter.nf_conntrack_max=...`, and the value stays after the
pod is gone. This module keeps those values per node (overrides of a Debian 12 kubelet node's
defaults, in `NodeState.sysctls`) and turns them into the signatures a real node shows:

- `net.netfilter.nf_conntrack_max` below what the node already tracks (kubelet, kube-proxy, DNS
  and the pods' flows): the table is full, new flows are dropped (connections time out), the
  kernel logs `nf_conntrack: table full, dropping packet` and `node_nf_conntrack_stat_drop` rises;
- `fs.file-max` below the node's open files: every unprivileged process fails to open files or
  sockets with ENFILE (`socket: too many open files in system`), the kernel logs
  `VFS: file-max limit N reached` once per new high;
- `net.ipv4.ip_local_port_range` (per network namespace: a pod's own from its
  `securityContext.sysctls`, the node's for hostNetwork pods) narrower than the ports a process
  keeps busy (pooled and TIME-WAIT connections): outbound connects fail with EADDRNOTAVAIL
  (`connect: cannot assign requested address`).

Connections programs hold open (`dataplane/held_connections.py`) occupy conntrack entries too,
and a Go server at its own open-file limit logs EMFILE accept errors (`emfile_tick`).

`sysctl` in a host shell (`userland/node_host.py`) reads and writes through `read`/`write`; the
data plane asks `connect_failure` per connection; `NodeOS.tick` calls `tick`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.node_tasks import GO_HTTP_PORT, PID_MAX_DEFAULT, THREADS_MAX_DEFAULT
from sregym.twin.chaos.node_tasks import tick as tasks_tick
from sregym.twin.dataplane.held_connections import held_connections
from sregym.twin.node.bound_pods import pods_on
from sregym.twin.node.logs import log_store

if TYPE_CHECKING:
    from sregym.twin.chaos.nodeos import NodeOS, NodeState
    from sregym.twin.twin import Twin

CONNTRACK_DEFAULT = 131072
FILE_MAX_DEFAULT = 9223372036854775807  # systemd raises fs.file-max to LONG_MAX at boot
NR_OPEN_DEFAULT = 1073741816  # ... and fs.nr_open to the kernel's ceiling
PORT_RANGE_DEFAULT = (32768, 60999)
# The node's own load: conntrack flows (kube-proxy, kubelet, DNS) and open files of its daemons,
# plus what each running container adds.
CONNTRACK_BASE = 180
CONNTRACK_PER_CONTAINER = 9
FILES_BASE = 1856
FILES_PER_CONTAINER = 38
# Ports a service process keeps busy: pooled connections plus those lingering in TIME-WAIT
# (60 s) after short-lived ones (memcached, HTTP clients without keep-alive).
PORTS_PER_PROCESS = 28
NEW_FLOWS_PER_CONTAINER = 2.0  # connection attempts per second per container when the table is full

# Defaults of a Debian 12 node running the kubelet (which sets vm.overcommit_memory,
# kernel.panic and kernel.panic_on_oops, kernel.keys.*; systemd sets pid_max, file-max, nr_open).
DEFAULTS: dict[str, str] = {
    "fs.file-max": str(FILE_MAX_DEFAULT),
    "fs.nr_open": str(NR_OPEN_DEFAULT),
    "fs.inotify.max_user_instances": "128",
    "fs.inotify.max_user_watches": "122013",
    "kernel.keys.root_maxbytes": "25000000",
    "kernel.keys.root_maxkeys": "1000000",
    "kernel.panic": "10",
    "kernel.panic_on_oops": "1",
    "kernel.pid_max": str(PID_MAX_DEFAULT),
    "kernel.threads-max": str(THREADS_MAX_DEFAULT),
    "net.core.somaxconn": "4096",
    "net.ipv4.ip_forward": "1",
    "net.ipv4.ip_local_port_range": f"{PORT_RANGE_DEFAULT[0]}\t{PORT_RANGE_DEFAULT[1]}",
    "net.ipv4.tcp_fin_timeout": "60",
    "net.ipv4.tcp_max_tw_buckets": "65536",
    "net.ipv4.tcp_tw_reuse": "2",
    "net.netfilter.nf_conntrack_buckets": "32768",
    "net.netfilter.nf_conntrack_max": str(CONNTRACK_DEFAULT),
    "net.netfilter.nf_conntrack_tcp_timeout_established": "86400",
    "net.netfilter.nf_conntrack_tcp_timeout_time_wait": "120",
    "net.nf_conntrack_max": str(CONNTRACK_DEFAULT),
    "vm.dirty_background_ratio": "10",
    "vm.dirty_ratio": "20",
    "vm.max_map_count": "65530",
    "vm.min_free_kbytes": "67584",
    "vm.overcommit_memory": "1",
    "vm.panic_on_oom": "0",
    "vm.swappiness": "60",
}
# What the kernel accepts (proc_dointvec_minmax): fs.nr_open, kernel.pid_max between
# RESERVED_PIDS+1 and PID_MAX_LIMIT, kernel.threads-max between MIN_THREADS and FUTEX_TID_MASK.
BOUNDS: dict[str, tuple[int, int | None]] = {
    "fs.nr_open": (64, NR_OPEN_DEFAULT),
    "kernel.pid_max": (301, 4194304),
    "kernel.threads-max": (20, 1073741823),
}
# Computed, read-only entries.
READ_ONLY = ("fs.file-nr", "net.netfilter.nf_conntrack_count")
# Per network namespace: a pod's own values, unless it shares the host's network.
PER_NETNS = ("net.ipv4.", "net.core.somaxconn")
# Writable only from the initial network namespace (global tables).
GLOBAL_NET = ("net.netfilter.nf_conntrack_max", "net.nf_conntrack_max", "net.netfilter.nf_conntrack_buckets")


class SysctlError(Exception):
    """A write the kernel refuses: `reason` is the errno text sysctl prints."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _nodeos(twin: Twin) -> NodeOS:
    """The twin's NodeOS (its controller creates it with the twin; `nodeos` imports this module)."""
    nodeos = twin.services.nodeos
    if nodeos is None:
        raise LookupError("the twin has no node OS state")
    return nodeos


def known(key: str) -> bool:
    return key in DEFAULTS or key in READ_ONLY


def node_containers(twin: Twin, node: str) -> int:
    """Running containers on the node (each adds flows and open files)."""
    count = 0
    for pod in pods_on(twin.store, node):
        if (pod.get("status") or {}).get("phase") == "Running":
            count += len((pod.get("spec") or {}).get("containers") or [])
    return count


def files_allocated(twin: Twin, node: str) -> int:
    return FILES_BASE + FILES_PER_CONTAINER * node_containers(twin, node)


def read(twin: Twin, node: str, key: str, pod: dict[str, Any] | None = None) -> str:
    """The value `sysctl` prints for `key` on `node` (in `pod`'s network namespace for the
    per-namespace keys, when `pod` is given and not on the host network). KeyError if unknown."""
    state = _nodeos(twin).node(node)
    if key in ("net.netfilter.nf_conntrack_max", "net.nf_conntrack_max"):
        return str(state.conntrack_max)
    if key == "net.netfilter.nf_conntrack_count":
        return str(conntrack_count(twin, node))
    if key == "fs.file-nr":
        return f"{files_allocated(twin, node)}\t0\t{file_max(twin, node)}"
    if key not in DEFAULTS:
        raise KeyError(key)
    if pod is not None and key.startswith(PER_NETNS) and not (pod.get("spec") or {}).get("hostNetwork"):
        for item in ((pod.get("spec") or {}).get("securityContext") or {}).get("sysctls") or []:
            if item.get("name") == key:
                return "\t".join(str(item.get("value", "")).split()) if "range" in key else str(item.get("value"))
        return DEFAULTS[key]
    return state.sysctls.get(key, DEFAULTS[key])


def write(twin: Twin, node: str, key: str, value: str) -> str:
    """Set `key` on the node (as root in the host's namespaces); returns the value as stored.
    Raises KeyError for an unknown key, SysctlError for a value the kernel rejects."""
    if key in READ_ONLY:
        raise SysctlError("Invalid argument")
    if key not in DEFAULTS:
        raise KeyError(key)
    words = value.split()
    if "range" in key:
        if len(words) != 2 or not all(w.isdigit() for w in words):
            raise SysctlError("Invalid argument")
        low, high = int(words[0]), int(words[1])
        if not (0 < low <= high <= 65535):
            raise SysctlError("Invalid argument")
        stored = f"{low}\t{high}"
    else:
        if len(words) != 1 or not words[0].lstrip("-").isdigit():
            raise SysctlError("Invalid argument")
        number = int(words[0])
        if number < 0 or (key == "fs.file-max" and number > FILE_MAX_DEFAULT):
            raise SysctlError("Invalid argument")
        low, high = BOUNDS.get(key, (0, None))
        if number < low or (high is not None and number > high):
            raise SysctlError("Invalid argument")
        stored = str(number)
    nodeos = _nodeos(twin)
    state = nodeos.node(node)
    if key in ("net.netfilter.nf_conntrack_max", "net.nf_conntrack_max"):
        nodeos.set_conntrack_max(node, int(stored))
    elif stored == DEFAULTS[key]:
        state.sysctls.pop(key, None)
    else:
        state.sysctls[key] = stored
    return stored


def file_max(twin: Twin, node: str) -> int:
    return int(read(twin, node, "fs.file-max"))


def port_range(twin: Twin, node: str, pod: dict[str, Any] | None) -> tuple[int, int]:
    low, high = read(twin, node, "net.ipv4.ip_local_port_range", pod).split()
    return int(low), int(high)


def conntrack_count(twin: Twin, node: str) -> int:
    """Flows in the table: the node's own, its containers', and those the data plane added."""
    state = _nodeos(twin).node(node)
    own = CONNTRACK_BASE + CONNTRACK_PER_CONTAINER * node_containers(twin, node)
    return int(min(state.conntrack_max, own + state.conntrack_persistent + state.conntrack_transient
                   - state.kernel_floor))


# ---------------------------------------------------------------- the data plane's view
def connect_failure(twin: Twin, src_pod: dict[str, Any] | None, shown: str) -> tuple[float, str] | None:
    """(share of new connections that fail, the Go error text) for a connection from `src_pod`
    to `shown` (`ip:port`) that the source's kernel refuses before sending a SYN; None if none.

    ENFILE (fs.file-max reached) fails every socket() of an unprivileged process; a port range
    narrower than the ports the process keeps busy fails that share of connects."""
    if src_pod is None:
        return None
    node = (src_pod.get("spec") or {}).get("nodeName") or ""
    if not node:
        return None
    state = _nodeos(twin).nodes.get(node)
    if state is not None and "fs.file-max" in state.sysctls and \
            file_max(twin, node) <= files_allocated(twin, node):
        return 1.0, f"dial tcp {shown}: socket: too many open files in system"
    low, high = port_range(twin, node, src_pod)
    size = high - low + 1
    if size < PORTS_PER_PROCESS:
        return 1.0 - size / PORTS_PER_PROCESS, f"dial tcp {shown}: connect: cannot assign requested address"
    return None


# ------------------------------------------------------------------------- per tick
def tick(nodeos: NodeOS, state: NodeState, now: float) -> None:
    """Once per tick per node: a conntrack table smaller than the node's own flows is full (the
    data plane's new connections are dropped and logged); a file-max below the open files is
    reported by the kernel. Cheap unless a limit was lowered."""
    twin = nodeos.twin
    state.conntrack_persistent -= state.kernel_floor
    state.kernel_floor = 0.0
    _held_flows(nodeos, state)
    if state.conntrack_max < CONNTRACK_DEFAULT:
        containers = node_containers(twin, state.name)
        own = CONNTRACK_BASE + CONNTRACK_PER_CONTAINER * containers
        # When the node's own flows alone fill it (a table the data plane's flows filled
        # already drops through `add_connections`).
        if state.conntrack_max <= own:
            state.kernel_floor = float(own)
            state.conntrack_persistent += state.kernel_floor
            attempts = NEW_FLOWS_PER_CONTAINER * max(1, containers) * twin.clock.tick
            nodeos.add_connections(state.name, math.ceil(attempts))
    if "fs.file-max" in state.sysctls:
        limit = file_max(twin, state.name)
        allocated = files_allocated(twin, state.name)
        if allocated >= limit and allocated > state.file_max_reported:
            state.file_max_reported = allocated
            nodeos.kernel(state.name, f"VFS: file-max limit {limit} reached")
        if allocated >= limit:
            _accept_errors(twin, state.name, now)
    elif state.file_max_reported:
        state.file_max_reported = 0
    emfile_tick(twin, state.name, now)
    tasks_tick(nodeos, state, now)


def _held_flows(nodeos: NodeOS, state: NodeState) -> None:
    """Connections programs hold open keep their conntrack entries (established flows never
    expire); once they fill the table, the node's and its pods' new flows are dropped and logged."""
    table = held_connections(nodeos.twin)
    if not table.active() and not state.conntrack_held:
        return
    state.conntrack_persistent -= state.conntrack_held
    state.conntrack_held = float(table.node_flows(state.name))
    state.conntrack_persistent += state.conntrack_held
    if state.conntrack_held and nodeos.conntrack_full(state.name):
        containers = max(1, node_containers(nodeos.twin, state.name))
        nodeos.add_connections(state.name, math.ceil(NEW_FLOWS_PER_CONTAINER * containers * nodeos.twin.clock.tick))


ACCEPT_DELAYS = ("5ms", "10ms", "20ms", "40ms", "80ms", "160ms", "320ms", "640ms", "1s")


def _accept_errors(twin: Twin, node: str, now: float) -> None:
    """Go net/http servers on a node out of file handles: `accept4` fails with ENFILE and
    `Server.Serve` logs it through the standard logger, retrying with a doubling delay up to 1 s
    (gRPC servers log such errors only at a level not shown by default)."""
    runtime = twin.services.runtime
    if runtime is None:
        return
    for pod in sorted(runtime.pods.values(), key=lambda p: (p.namespace, p.name)):
        if pod.node != node:
            continue
        for record in pod.containers.values():
            instance = record.current
            if instance is None or not instance.running or GO_HTTP_PORT not in instance.ctx.extras:
                continue
            log_accept_errors(twin, instance, now, "too many open files in system")


def log_accept_errors(twin: Twin, instance: Any, now: float, errno_text: str) -> None:
    """One tick of a Go net/http server whose `accept4` fails with `errno_text`: `Server.Serve`
    logs each failure and retries, doubling the delay from 5 ms up to 1 s."""
    port = instance.ctx.extras[GO_HTTP_PORT]
    step = int(instance.ctx.extras.get("accept_retries", 0))
    delays = ACCEPT_DELAYS[step:] if step < len(ACCEPT_DELAYS) - 1 else ACCEPT_DELAYS[-1:]
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y/%m/%d %H:%M:%S")
    for delay in delays:
        log_store(twin).append(instance.container_id, now, "stderr",
                               f"{stamp} http: Accept error: accept tcp [::]:{port}: accept4: {errno_text}; "
                               f"retrying in {delay}")
    instance.ctx.extras["accept_retries"] = len(ACCEPT_DELAYS) - 1


def emfile_tick(twin: Twin, node: str, now: float) -> None:
    """Go net/http servers on `node` at their own open-file limit (`dataplane/open_files.py`):
    `accept4` fails with EMFILE and the server logs it. Cheap unless connections are held."""
    runtime = twin.services.runtime
    if runtime is None or not held_connections(twin).active():
        return
    from sregym.twin.dataplane.open_files import accept_blocked

    for pod in sorted(runtime.pods.values(), key=lambda p: (p.namespace, p.name)):
        if pod.node != node:
            continue
        for record in pod.containers.values():
            instance = record.current
            if instance is None or not instance.running or GO_HTTP_PORT not in instance.ctx.extras:
                continue
            if accept_blocked(twin, instance, pod.ip):
                log_accept_errors(twin, instance, now, "too many open files")
