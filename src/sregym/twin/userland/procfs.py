"""`df`, `ip addr`, `ss` and `netstat` inside a container: what the process listens on, how
full its disks are (`ps` and `top` are in ps.py and top.py).

They read the runtime's truth (`twin.services.runtime`): the container's main process (its
argv, start time, CPU and memory including the data plane's load-dependent usage), the sockets
every container of the pod listens on (containers share the pod's network namespace, but only
the exec'd container's processes are visible in its PID namespace, so `-p` names only those),
and the pod's address. Disk figures come from `twin.services.nodeos` when the node-OS model
provides them (`filesystem(node, ns, pod, mount) -> (size, used)` or `disk(node)` with
`capacity_bytes`/`used_bytes`), else from the node's ephemeral-storage capacity.
"""

from __future__ import annotations

import zlib
from typing import Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import memory_bytes
from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.netdiag import busybox
from sregym.twin.userland.netstat_stats import netstat_statistics
from sregym.twin.userland.processes import real_argv
from sregym.twin.userland.shm import SHM, shm_row, tmpfs_rows
from sregym.twin.userland.sockets import namespace_sockstat

GIB = 1 << 30


def _node_memory(call: Invocation) -> int:
    node = call.ctx.twin.store.peek("Node", None, call.ctx.node) if call.ctx.twin and call.ctx.node else None
    text = get_path(node, "status", "capacity", "memory", default="16Gi") if node else "16Gi"
    return memory_bytes(str(text)) or 16 * GIB


# ======================================================================================== df
def _human(n: float, *, busybox_style: bool) -> str:
    units = ["", "K", "M", "G", "T"]
    value, unit = float(n), 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    if busybox_style:
        return f"{value:.1f}{units[unit]}" if unit else f"{int(value)}"
    if unit == 0:
        return str(int(value))
    if value < 10:
        shown = -(-value * 10 // 1) / 10
        return f"{shown:.1f}{units[unit]}"
    return f"{int(-(-value // 1))}{units[unit]}"


def _node_disk(call: Invocation) -> tuple[int, int]:
    twin, node_name = call.ctx.twin, call.ctx.node
    node = twin.store.peek("Node", None, node_name) if twin is not None and node_name else None
    size = memory_bytes(str(get_path(node, "status", "capacity", "ephemeral-storage",
                                     default="102626232Ki"))) if node else 102626232 * 1024
    used = int(size * 0.153)
    nodeos = twin.services.nodeos if twin is not None else None
    disk = getattr(nodeos, "disk", None) if nodeos is not None else None
    if callable(disk):
        info = disk(node_name)
        if info is not None:
            size = int(_field(info, "capacity_bytes", "capacity", default=size))
            used = int(_field(info, "used_bytes", "used", default=used))
    return size, used


def _field(info: Any, *names: str, default: Any) -> Any:
    for name in names:
        if isinstance(info, dict) and name in info:
            return info[name]
        if hasattr(info, name):
            return getattr(info, name)
    return default


def _mounts(call: Invocation) -> list[tuple[str, int, int, str]]:
    """(filesystem, size, used, mount point) rows as the container sees them."""
    size, used = _node_disk(call)
    device = "/dev/sda1"  # kind nodes: the Docker host disk
    memory = _node_memory(call)
    rows = [("overlay", size, used, "/"), ("tmpfs", 64 << 20, 0, "/dev"), shm_row(call.ctx),
            (device, size, used, "/etc/hosts")]
    pod = call.ctx.pod or {}
    container = None
    for item in get_path(pod, "spec", "containers", default=None) or []:
        if item.get("name") == call.ctx.container:
            container = item
    volumes = {v.get("name"): v for v in get_path(pod, "spec", "volumes", default=None) or []}
    nodeos = call.ctx.twin.services.nodeos if call.ctx.twin is not None else None
    fs_hook = getattr(nodeos, "filesystem", None) if nodeos is not None else None
    meta = pod.get("metadata") or {}
    for mount in (container or {}).get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        path = str(mount.get("mountPath") or "")
        if (volume.get("emptyDir") or {}).get("medium") == "Memory" and path != SHM:
            rows.append(next(row for row in tmpfs_rows(call.ctx) if row[3] == path))
            continue
        if (volume.get("emptyDir") or {}).get("medium") == "Memory":
            continue  # mounted over /dev/shm: its row is the shm row's
        if volume.get("secret") or volume.get("projected"):
            rows.append(("tmpfs", memory // 2, 12 << 10, path))
            continue
        if volume.get("configMap") or volume.get("downwardAPI"):
            continue  # on the node disk: df folds them into the /etc/hosts device row
        row = (device, size, used, path)
        if callable(fs_hook):
            found = fs_hook(call.ctx.node, meta.get("namespace", ""), meta.get("name", ""), path)
            if found is not None:
                row = (device, int(found[0]), int(found[1]), path)
        rows.append(row)
    rows.append(("tmpfs", memory // 2, 0, "/proc/acpi"))
    rows.append(("tmpfs", memory // 2, 0, "/sys/firmware"))
    return rows


@command("df")
def df(call: Invocation) -> int:
    human = any(a.startswith("-") and "h" in a for a in call.args)
    wanted = [a for a in call.args if not a.startswith("-")]
    rows = _mounts(call)
    if wanted:  # one row per operand: the mount holding it
        rows = [[r for r in rows if w == r[3] or w.startswith(r[3].rstrip("/") + "/")][-1] for w in wanted]
    bb = busybox(call)
    if bb:
        call.write("Filesystem                Size      Used Available Use% Mounted on\n" if human else
                   "Filesystem           1K-blocks      Used Available Use% Mounted on\n")
    else:
        call.write("Filesystem      Size  Used Avail Use% Mounted on\n" if human else
                   "Filesystem     1K-blocks     Used Available Use% Mounted on\n")
    for fs, size, used, mount in rows:
        avail = max(0, size - used)
        pct = f"{-(-100 * used // size) if size else 0}%"
        if human and bb:
            call.write(f"{fs:<20}{_human(size, busybox_style=True):>10}{_human(used, busybox_style=True):>10}"
                       f"{_human(avail, busybox_style=True):>10}{pct:>5} {mount}\n")
        elif human:
            call.write(f"{fs:<15}{_human(size, busybox_style=False):>5} {_human(used, busybox_style=False):>5} "
                       f"{_human(avail, busybox_style=False):>5} {pct:>4} {mount}\n")
        elif bb:
            call.write(f"{fs:<20}{size // 1024:>10}{used // 1024:>10}{avail // 1024:>10}{pct:>5} {mount}\n")
        else:
            call.write(f"{fs:<14}{size // 1024:>10} {used // 1024:>8} {avail // 1024:>9} {pct:>4} {mount}\n")
    return 0


# ======================================================================================== ip
def _mac(seed: str) -> str:
    digest = zlib.crc32(seed.encode()).to_bytes(4, "big") + zlib.crc32(seed[::-1].encode()).to_bytes(4, "big")
    octets = [digest[0] & 0xFE | 0x02, *digest[1:6]]
    return ":".join(f"{o:02x}" for o in octets)


@command("ip")
def ip(call: Invocation) -> int:
    args = [a for a in call.args if not a.startswith("-")]
    pod = call.ctx.pod or {}
    pod_ip = str(get_path(pod, "status", "podIP", default="") or "")
    uid = str(get_path(pod, "metadata", "uid", default="") or pod_ip)
    if not args or args[0] not in ("a", "addr", "address", "r", "route", "link", "l"):
        call.error('Object "{}" is unknown, try "ip help".'.format(args[0] if args else "")
                   if args else "Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }")
        return 1 if args else 255
    peer = 5 + zlib.crc32(uid.encode()) % 40
    gateway = ".".join([*pod_ip.split(".")[:3], "1"]) if pod_ip else "10.244.0.1"
    if args[0] in ("r", "route"):
        call.write(f"default via {gateway} dev eth0 \n{'.'.join(gateway.split('.')[:3])}.0/24 via {gateway} dev eth0 src {pod_ip} \n"
                   f"{gateway} dev eth0 scope link src {pod_ip} \n")
        return 0
    lines = ["1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000",
             "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00"]
    if args[0] not in ("link", "l"):
        lines += ["    inet 127.0.0.1/8 scope host lo", "       valid_lft forever preferred_lft forever",
                  "    inet6 ::1/128 scope host proto kernel_lo", "       valid_lft forever preferred_lft forever"]
    lines += [f"2: eth0@if{peer}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default ",
              f"    link/ether {_mac(uid)} brd ff:ff:ff:ff:ff:ff link-netnsid 0"]
    if args[0] not in ("link", "l") and pod_ip:
        brd = ".".join([*pod_ip.split(".")[:3], "255"])
        lines += [f"    inet {pod_ip}/24 brd {brd} scope global eth0", "       valid_lft forever preferred_lft forever"]
    call.write("\n".join(lines) + "\n")
    return 0


# ================================================================================= ss, netstat
def _listeners(call: Invocation) -> list[tuple[str, int, str, bool]]:
    """(protocol, port, process name, visible to this container's PID namespace) per socket."""
    ctx = call.ctx
    runtime = ctx.twin.services.runtime if ctx.twin is not None else None
    if runtime is None or ctx.pod is None:
        return []
    meta = ctx.pod.get("metadata") or {}
    pod_rt = runtime.pod(meta.get("namespace", ""), meta.get("name", ""))
    if pod_rt is None:
        return []
    out = []
    for name in sorted(pod_rt.containers):
        instance = pod_rt.containers[name].current
        if instance is None or not instance.running:
            continue
        proc = real_argv(ctx, instance)[0].rsplit("/", 1)[-1][:15]
        for (port, protocol) in sorted(instance.listening):
            out.append((protocol, port, proc, name == ctx.container))
    return out


@command("ss")
def ss(call: Invocation) -> int:
    flags = "".join(a[1:] for a in call.args if a.startswith("-") and not a.startswith("--"))
    if "s" in flags or "--summary" in call.args:
        call.write(namespace_sockstat(call.ctx).ss_summary())
        return 0
    want_tcp = "t" in flags or "u" not in flags
    want_udp = "u" in flags
    rows = [(p, port, proc, vis) for p, port, proc, vis in _listeners(call)
            if (p == "TCP" and want_tcp) or (p == "UDP" and want_udp)]
    show_proc = "p" in flags
    udp_too = want_udp and want_tcp
    head = ("Netid " if udp_too else "") + "State  Recv-Q Send-Q Local Address:Port  Peer Address:Port"
    call.write(head + ("Process" if show_proc else "") + "\n")
    for protocol, port, proc, visible in rows:
        state = "LISTEN" if protocol == "TCP" else "UNCONN"
        local = f"0.0.0.0:{port}"
        line = (f"{protocol.lower():<6}" if udp_too else "") + \
            f"{state:<6} {0:<6} {4096 if protocol == 'TCP' else 0:<6} {local:>18} {'0.0.0.0:*':>18}"
        if show_proc and visible:
            line += f' users:(("{proc}",pid=1,fd={3 + port % 5}))'
        call.write(line + "\n")
    return 0


@command("netstat")
def netstat(call: Invocation) -> int:
    flags = "".join(a[1:] for a in call.args if a.startswith("-") and not a.startswith("--"))
    if "s" in flags:
        return netstat_statistics(call)
    want_tcp = "t" in flags or "u" not in flags
    want_udp = "u" in flags
    call.write("Active Internet connections (only servers)\n"
               "Proto Recv-Q Send-Q Local Address           Foreign Address         State       "
               + ("PID/Program name    " if "p" in flags else "") + "\n")
    for protocol, port, proc, visible in _listeners(call):
        if (protocol == "TCP" and not want_tcp) or (protocol == "UDP" and not want_udp):
            continue
        local = f"0.0.0.0:{port}"
        state = "LISTEN" if protocol == "TCP" else ""
        line = f"{protocol.lower():<5} {0:>6} {0:>6} {local:<23} {'0.0.0.0:*':<23} {state:<11} "
        if "p" in flags:
            line += f"{'1/' + proc if visible else '-':<20}"
        call.write(line.rstrip() + "\n")
    return 0
