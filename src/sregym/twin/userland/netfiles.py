"""`/proc/net/tcp`, `/proc/net/tcp6`, `/proc/net/udp*` and `/proc/self/mounts` of a container.

The socket tables are the pod's network namespace (shared by its containers): every port a
running container listens on, in the kernel's format (hex address:port in host byte order,
state `0A` LISTEN / `07` for UDP, rows padded to 149 columns in the IPv4 tables). Which family a
server binds follows the program: Go servers (`net.Listen("tcp", ":port")`) bind the dual-stack
`[::]` and appear only in `tcp6`; nginx, Redis and PostgreSQL bind both; mongod and memcached only
IPv4. The mount table is the container's: overlay root, proc, the kubelet's tmpfs and the
volumes mounted from the node's disk.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.userland.procfiles import ProcProvider

TCP_HEAD = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
            "inode")
TCP6_HEAD = ("  sl  local_address                         remote_address                        st tx_queue "
             "rx_queue tr tm->when retrnsmt   uid  timeout inode")
UDP_HEAD = ("   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
            "inode ref pointer drops")
BOTH = ("nginx", "redis-server", "postgres", "valkey-server")
V4_ONLY = ("mongod", "memcached")


def _families(program: str) -> tuple[bool, bool]:
    """(IPv4 socket, IPv6 socket) a server program opens for one listening port."""
    if program in BOTH:
        return True, True
    if program in V4_ONLY:
        return True, False
    return False, True


def _listeners(provider: ProcProvider) -> list[tuple[int, str, str]]:
    """(port, protocol, program) for every listening socket of the pod."""
    from sregym.twin.userland.processes import real_argv

    ctx = provider.ctx
    runtime = ctx.twin.services.runtime if ctx.twin is not None else None
    meta = (ctx.pod or {}).get("metadata") or {}
    pod_rt = runtime.pod(meta.get("namespace", ""), meta.get("name", "")) if runtime is not None else None
    out: list[tuple[int, str, str]] = []
    if pod_rt is None:
        return out
    for name in sorted(pod_rt.containers):
        instance = pod_rt.containers[name].current
        if instance is None or not instance.running:
            continue
        program = real_argv(ctx, instance)[0].rsplit("/", 1)[-1]
        for port, protocol in sorted(instance.listening):
            out.append((port, protocol, program))
    return out


def _inode(provider: ProcProvider, port: int, family: str) -> int:
    return 100_000 + zlib.crc32(f"{provider.ctx.pod and get_path(provider.ctx.pod, 'metadata', 'uid')}"
                                f"{port}{family}".encode()) % 900_000


def net_table(provider: ProcProvider, name: str) -> str:
    tcp = name.startswith("tcp")
    v6 = name.endswith("6")
    rows: list[str] = []
    for port, protocol, program in _listeners(provider):
        if (protocol == "TCP") != tcp:
            continue
        v4_sock, v6_sock = _families(program)
        if (v6 and not v6_sock) or (not v6 and not v4_sock):
            continue
        state = "0A" if tcp else "07"
        inode = _inode(provider, port, name)
        index = len(rows)
        if v6:
            rows.append(f"{index:4d}: {'0' * 32}:{port:04X} {'0' * 32}:0000 {state} 00000000:00000000 "
                        f"00:00000000 00000000     0        0 {inode} 1 0000000000000000 100 0 0 10 0")
        elif tcp:
            row = (f"{index:4d}: 00000000:{port:04X} 00000000:0000 {state} 00000000:00000000 00:00000000 "
                   f"00000000     0        0 {inode} 1 0000000000000000 100 0 0 10 0")
            rows.append(row.ljust(149))
        else:
            rows.append(f"{index:5d}: 00000000:{port:04X} 00000000:0000 {state} 00000000:00000000 00:00000000 "
                        f"00000000     0        0 {inode} 2 0000000000000000 0")
    if tcp:
        head = TCP6_HEAD if v6 else TCP_HEAD.ljust(149)
    else:
        head = UDP_HEAD.replace("local_address rem_address  ", "local_address                         "
                                "remote_address                       ") if v6 else UDP_HEAD
    return "\n".join([head, *rows]) + "\n"


def mount_table(provider: ProcProvider) -> str:
    """The container's `/proc/self/mounts`."""
    ctx = provider.ctx
    cid = get_path(ctx.pod or {}, "metadata", "uid", default="") or "0"
    snap = 100 + zlib.crc32(str(cid).encode()) % 800
    base = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots"
    lines = [f"overlay / overlay rw,relatime,lowerdir={base}/{snap - 2}/fs:{base}/{snap - 3}/fs,"
             f"upperdir={base}/{snap}/fs,workdir={base}/{snap}/work 0 0",
             "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
             "tmpfs /dev tmpfs rw,nosuid,size=65536k,mode=755 0 0",
             "devpts /dev/pts devpts rw,nosuid,noexec,relatime,gid=5,mode=620,ptmxmode=666 0 0",
             "mqueue /dev/mqueue mqueue rw,nosuid,nodev,noexec,relatime 0 0",
             "sysfs /sys sysfs ro,nosuid,nodev,noexec,relatime 0 0",
             "cgroup /sys/fs/cgroup cgroup2 ro,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot 0 0"]
    container = next((c for c in get_path(ctx.pod or {}, "spec", "containers", default=[]) or []
                      if c.get("name") == ctx.container), {})
    volumes = {v.get("name"): v for v in get_path(ctx.pod or {}, "spec", "volumes", default=[]) or []}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        mode = "ro" if mount.get("readOnly") else "rw"
        path = str(mount.get("mountPath") or "")
        if volume.get("secret") or volume.get("projected") or (volume.get("emptyDir") or {}).get("medium") == "Memory":
            lines.append(f"tmpfs {path} tmpfs {mode},relatime,size=1048576k,noswap 0 0")
        else:
            lines.append(f"/dev/sda1 {path} ext4 {mode},relatime 0 0")
    for path in ("/etc/hosts", "/dev/termination-log", "/etc/hostname", "/etc/resolv.conf"):
        lines.append(f"/dev/sda1 {path} ext4 rw,relatime 0 0")
    lines.append("shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0")
    if ctx.files.get("/var/run/secrets/kubernetes.io/serviceaccount/token") is not None:
        lines.append("tmpfs /run/secrets/kubernetes.io/serviceaccount tmpfs ro,relatime,size=1048576k,noswap 0 0")
    lines += ["proc /proc/bus proc ro,nosuid,nodev,noexec,relatime 0 0",
              "proc /proc/fs proc ro,nosuid,nodev,noexec,relatime 0 0",
              "proc /proc/irq proc ro,nosuid,nodev,noexec,relatime 0 0",
              "proc /proc/sys proc ro,nosuid,nodev,noexec,relatime 0 0",
              "tmpfs /proc/acpi tmpfs ro,relatime 0 0",
              "tmpfs /proc/kcore tmpfs rw,nosuid,size=65536k,mode=755 0 0",
              "tmpfs /sys/firmware tmpfs ro,relatime 0 0"]
    return "\n".join(lines) + "\n"


__all__ = ["mount_table", "net_table"]
