"""`/proc` inside a container, generated when it is read.

Nothing here is stored: the container filesystem (`fs.ContainerFS`) and the exec's file map ask
this provider for any path under `/proc` (and `cgroupfs` for `/sys/fs/cgroup`), and the answer
is computed from the runtime at that instant, the way the kernel computes it:

- per process (`processes.process_table`): `cmdline` (NUL-separated argv), `comm`, `status`
  (kernel 6.1 layout), `stat`, `statm`, `environ`, `limits` (containerd's rlimits),
  `cgroup`, `fd/` (one link per open descriptor), `cwd`/`exe`/`root` links; `/proc/self` links to
  the reading process;
- the node as a container sees it (no LXCFS on kind nodes): `meminfo`, `loadavg`, `uptime`,
  `stat`, `cpuinfo` (`nodeview`), `version`;
- the pod's network namespace: `net/tcp`, `net/tcp6` (listeners and established connections in
  the kernel's hex format), `mounts` (the container's mount table).

A missing PID or entry is simply absent, so `cat` prints its own "No such file or directory".
"""

from __future__ import annotations

import posixpath
import shlex
import zlib
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.diskio import diskstats
from sregym.twin.userland.fs import Node
from sregym.twin.userland.nodeview import MODES, NodeView, node_kernel, node_view
from sregym.twin.userland.processes import Proc, process_table

if TYPE_CHECKING:
    from sregym.twin.node.shell import ShellContext

USER_HZ = 100
KERNEL_BUILD = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)"
TOP = ("buddyinfo", "cgroups", "cmdline", "cpuinfo", "diskstats", "filesystems", "loadavg", "meminfo",
       "mounts", "net", "self", "stat", "swaps", "sys", "uptime", "version", "vmstat")
PER_PID = ("cgroup", "cmdline", "comm", "cwd", "environ", "exe", "fd", "limits", "mounts", "net", "root",
           "stat", "statm", "status")
CAPS = "00000000a80425fb"  # containerd's default capability set


class ProcProvider:
    """The `/proc` (and, through `cgroupfs`, `/sys/fs/cgroup`) of one exec, computed on read."""

    def __init__(self, ctx: ShellContext) -> None:
        self.ctx = ctx
        self._procs: list[Proc] | None = None
        self._view: NodeView | None = None

    # ------------------------------------------------------------------ state
    @property
    def now(self) -> float:
        return self.ctx.start_time

    def procs(self) -> list[Proc]:
        if self._procs is None:
            self._procs = process_table(self.ctx, self.now, self._reader_argv())
        return self._procs

    def view(self) -> NodeView:
        if self._view is None:
            self._view = node_view(self.ctx, self.now)
        return self._view

    def _reader_argv(self) -> list[str]:
        """The reading process's argv: the exec's command, or the first command of `sh -c`."""
        argv = list(self.ctx.extras.get("exec_argv") or ["cat"])
        if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("sh", "bash", "ash", "dash") and argv[1] == "-c":
            try:
                words = shlex.split(argv[2].split("|")[0].split(";")[0])
            except ValueError:
                words = []
            if words:
                return words
        return argv

    def proc(self, pid: int) -> Proc | None:
        return next((p for p in self.procs() if p.pid == pid), None)

    @property
    def self_pid(self) -> int:
        return max(p.pid for p in self.procs())

    # ---------------------------------------------------------------- the tree
    @staticmethod
    def handles(path: str) -> bool:
        return path == "/proc" or path.startswith("/proc/") or path.startswith("/sys/fs/cgroup")

    def node(self, path: str) -> Node | None:
        """The entry at `path` (never following a final symlink), or None."""
        if path.startswith("/sys/fs/cgroup"):
            from sregym.twin.userland.cgroupfs import cgroup_files

            rel = path[len("/sys/fs/cgroup"):].lstrip("/")
            files = cgroup_files(self)
            if not rel:
                return Node("dir", mode=0o555, mtime=self.now)
            return Node("file", content=files[rel], mode=0o644, mtime=self.now) if rel in files else None
        parts = [p for p in path.split("/") if p][1:]
        if not parts:
            return Node("dir", mode=0o555, mtime=self.now)
        head = parts[0]
        if head == "self":
            if len(parts) == 1:
                return Node("link", target=str(self.self_pid), mode=0o777, mtime=self.now)
            return self.node("/proc/" + "/".join([str(self.self_pid), *parts[1:]]))
        if head == "mounts" and len(parts) == 1:
            return Node("link", target="self/mounts", mode=0o777, mtime=self.now)
        if head == "net":
            if len(parts) == 1:
                return Node("link", target="self/net", mode=0o777, mtime=self.now)
            return self.node("/proc/" + "/".join([str(self.self_pid), *parts]))
        if head.isdigit():
            proc = self.proc(int(head))
            return self._pid_node(proc, parts[1:]) if proc is not None else None
        if len(parts) == 1 and head == "sys":
            return Node("dir", mode=0o555, mtime=self.now)
        if len(parts) == 1:
            text = self._top_file(head)
            return Node("file", content=text, mode=0o444, mtime=self.now) if text is not None else None
        return None

    def children(self, path: str) -> list[str] | None:
        node = self.node(path)
        if node is None or node.kind != "dir":
            return None
        if path.startswith("/sys/fs/cgroup"):
            from sregym.twin.userland.cgroupfs import cgroup_files

            return sorted(cgroup_files(self))
        parts = [p for p in path.split("/") if p][1:]
        if not parts:
            return sorted([str(p.pid) for p in self.procs()] + list(TOP))
        if parts[0].isdigit() and len(parts) == 1:
            return sorted(PER_PID)
        if parts[0].isdigit() and parts[1:] == ["fd"]:
            return [str(fd) for fd, _t in self._fds(self.proc(int(parts[0])))]  # type: ignore[arg-type]
        if parts[0].isdigit() and parts[1:] == ["net"]:
            return ["netstat", "snmp", "tcp", "tcp6", "udp", "udp6"]
        return []

    def dirs(self) -> set[str]:
        out = {"/proc", "/proc/sys", "/proc/net", "/sys/fs/cgroup"}
        for p in self.procs():
            out.update({f"/proc/{p.pid}", f"/proc/{p.pid}/fd", f"/proc/{p.pid}/net"})
        out.update({"/proc/self", "/proc/self/fd", "/proc/self/net"})
        return out

    def read(self, path: str) -> str | None:
        """A file's content with symlinks followed (for `cat`, `grep`, redirections)."""
        for _ in range(4):
            node = self.node(path)
            if node is None:
                return None
            if node.kind == "file":
                return node.content
            if node.kind != "link":
                return None
            path = posixpath.normpath(posixpath.join(posixpath.dirname(path), node.target))
        return None

    # ------------------------------------------------------------- per process
    def _pid_node(self, proc: Proc, rest: list[str]) -> Node | None:
        if not rest:
            return Node("dir", mode=0o555, mtime=proc.start)
        name = rest[0]
        if name == "fd":
            if len(rest) == 1:
                return Node("dir", mode=0o500, mtime=proc.start)
            targets = dict(self._fds(proc))
            if len(rest) == 2 and rest[1].isdigit() and int(rest[1]) in targets:
                return Node("link", target=targets[int(rest[1])], mode=0o700, mtime=proc.start)
            return None
        if name == "net":
            if len(rest) == 1:
                return Node("dir", mode=0o555, mtime=proc.start)
            text = self._net(rest[1]) if len(rest) == 2 else None
            return Node("file", content=text, mode=0o444, mtime=self.now) if text is not None else None
        if len(rest) != 1:
            return None
        if name in ("cwd", "root"):
            return Node("link", target="/", mode=0o777, mtime=proc.start)
        if name == "exe":
            return Node("link", target=self._exe(proc), mode=0o777, mtime=proc.start)
        makers = {"cmdline": self._cmdline, "comm": lambda p: p.name + "\n", "status": self._status,
                  "environ": self._environ, "limits": self._limits, "stat": self._stat, "statm": self._statm,
                  "cgroup": lambda p: "0::/\n", "mounts": lambda p: self._mounts()}
        maker = makers.get(name)
        if maker is None:
            return None
        mode = 0o400 if name == "environ" else 0o444
        return Node("file", content=maker(proc), mode=mode, mtime=self.now)

    def _exe(self, proc: Proc) -> str:
        name = proc.name
        if name in ("sh", "ash"):
            return "/bin/busybox" if self.ctx.shell_flavour == "ash" else "/usr/bin/dash"
        return f"/usr/bin/{name}" if not proc.argv or not proc.argv[0].startswith("/") else proc.argv[0]

    @staticmethod
    def _cmdline(proc: Proc) -> str:
        if proc.comm and proc.argv and (proc.argv[0].endswith(":") or len(proc.argv) == 1):
            return " ".join(proc.argv) + "\0"  # a process title written over argv (nginx, stress-ng)
        return "".join(arg + "\0" for arg in proc.argv)

    def _environ(self, proc: Proc) -> str:
        env = proc.env or (dict(self.ctx.env) if proc.pid == self.self_pid else {})
        return "".join(f"{k}={v}\0" for k, v in env.items())

    def _fds(self, proc: Proc) -> list[tuple[int, str]]:
        inode = 30_000_000 + zlib.crc32(f"{self.ctx.container}{proc.pid}".encode()) % 9_000_000
        if proc.pid == self.self_pid:
            return [(0, "/dev/null"), (1, f"pipe:[{inode}]"), (2, f"pipe:[{inode + 1}]"),
                    (3, f"/proc/{proc.pid}/fd")]
        out = [(0, "/dev/null"), (1, f"pipe:[{inode}]"), (2, f"pipe:[{inode + 1}]")]
        sockets = len(self._listening()) if proc.pid == 1 else 0
        extra = {1: 4, 0: 1}.get(proc.ppid if proc.pid != 1 else 1, 1)
        for i in range(sockets + extra):
            out.append((3 + i, f"socket:[{inode + 2 + i}]" if i < sockets else "anon_inode:[eventpoll]"
                        if i == sockets else "anon_inode:[eventfd]"))
        return out

    def _status(self, proc: Proc) -> str:
        view = self.view()
        kb = lambda b: f"{b // 1024:8d} kB"  # noqa: E731
        rss = proc.rss
        file_part = min(rss, 6 << 20) // 2
        states = {"R": "R (running)", "S": "S (sleeping)", "D": "D (disk sleep)", "Z": "Z (zombie)"}
        cpus = view.cpus
        sigq = view.mem_total // 4096 // 64
        mems = ",".join(["00000000"] * 31 + ["00000001"])
        lines = [f"Name:\t{proc.name}", "Umask:\t0022", f"State:\t{states.get(proc.state, 'S (sleeping)')}",
                 f"Tgid:\t{proc.pid}", "Ngid:\t0", f"Pid:\t{proc.pid}", f"PPid:\t{proc.ppid}", "TracerPid:\t0",
                 f"Uid:\t{proc.uid}\t{proc.uid}\t{proc.uid}\t{proc.uid}",
                 f"Gid:\t{proc.uid}\t{proc.uid}\t{proc.uid}\t{proc.uid}",
                 f"FDSize:\t{64 if len(self._fds(proc)) <= 64 else 256}", "Groups:\t ",
                 f"NStgid:\t{proc.pid}", f"NSpid:\t{proc.pid}", f"NSpgid:\t{proc.pid if proc.ppid == 0 else proc.ppid}",
                 f"NSsid:\t{proc.pid if proc.ppid == 0 else proc.ppid}",
                 f"VmPeak:\t{kb(int(proc.vsz * 1.02))}", f"VmSize:\t{kb(proc.vsz)}", f"VmLck:\t{kb(0)}",
                 f"VmPin:\t{kb(0)}", f"VmHWM:\t{kb(rss)}", f"VmRSS:\t{kb(rss)}",
                 f"RssAnon:\t{kb(rss - file_part)}", f"RssFile:\t{kb(file_part)}", f"RssShmem:\t{kb(0)}",
                 f"VmData:\t{kb(max(rss, proc.vsz // 3))}", f"VmStk:\t{kb(132 << 10)}", f"VmExe:\t{kb(1028 << 10)}",
                 f"VmLib:\t{kb(3808 << 10)}", f"VmPTE:\t{kb(max(48 << 10, rss // 500))}", f"VmSwap:\t{kb(0)}",
                 f"HugetlbPages:\t{kb(0)}", "CoreDumping:\t0", "THP_enabled:\t1", f"Threads:\t{proc.threads}",
                 f"SigQ:\t0/{sigq}", "SigPnd:\t0000000000000000", "ShdPnd:\t0000000000000000",
                 "SigBlk:\t0000000000000000", "SigIgn:\t0000000000001000", "SigCgt:\t0000000180014a07",
                 "CapInh:\t0000000000000000", f"CapPrm:\t{CAPS if proc.uid == 0 else '0' * 16}",
                 f"CapEff:\t{CAPS if proc.uid == 0 else '0' * 16}", f"CapBnd:\t{CAPS}",
                 "CapAmb:\t0000000000000000", "NoNewPrivs:\t0", "Seccomp:\t0", "Seccomp_filters:\t0",
                 "Speculation_Store_Bypass:\tthread vulnerable", "SpeculationIndirectBranch:\tconditional enabled",
                 f"Cpus_allowed:\t{(1 << cpus) - 1:x}", f"Cpus_allowed_list:\t0-{cpus - 1}" if cpus > 1
                 else "Cpus_allowed_list:\t0", f"Mems_allowed:\t{mems}", "Mems_allowed_list:\t0",
                 f"voluntary_ctxt_switches:\t{int(proc.cpu_s * 40) + 12}",
                 f"nonvoluntary_ctxt_switches:\t{int(proc.cpu_s * 3) + 1}"]
        return "\n".join(lines) + "\n"

    def _main_nofile(self) -> str:
        """The container's main process's open-file limit: what a wrapper's `ulimit -n` left it."""
        from sregym.twin.dataplane.open_files import CONTAINERD_NOFILE, nofile_limit

        twin, pod = self.ctx.twin, self.ctx.pod or {}
        runtime = twin.services.runtime if twin is not None else None
        meta = pod.get("metadata") or {}
        instance = runtime.instance(meta.get("namespace", ""), meta.get("name", ""), self.ctx.container) \
            if runtime is not None else None
        return str(nofile_limit(instance) if instance is not None else CONTAINERD_NOFILE)

    def _limits(self, proc: Proc) -> str:
        nproc = self.view().mem_total // 4096 // 64
        nofile = self._main_nofile() if proc.pid == 1 else "1048576"
        rows = [("Max cpu time", "unlimited", "unlimited", "seconds"),
                ("Max file size", "unlimited", "unlimited", "bytes"),
                ("Max data size", "unlimited", "unlimited", "bytes"),
                ("Max stack size", "8388608", "unlimited", "bytes"),
                ("Max core file size", "unlimited", "unlimited", "bytes"),
                ("Max resident set", "unlimited", "unlimited", "bytes"),
                ("Max processes", "unlimited", "unlimited", "processes"),
                ("Max open files", nofile, nofile, "files"),
                ("Max locked memory", "8388608", "8388608", "bytes"),
                ("Max address space", "unlimited", "unlimited", "bytes"),
                ("Max file locks", "unlimited", "unlimited", "locks"),
                ("Max pending signals", str(nproc), str(nproc), "signals"),
                ("Max msgqueue size", "819200", "819200", "bytes"),
                ("Max nice priority", "0", "0", ""),
                ("Max realtime priority", "0", "0", ""),
                ("Max realtime timeout", "unlimited", "unlimited", "us")]
        head = f"{'Limit':<26}{'Soft Limit':<21}{'Hard Limit':<21}{'Units':<10}\n"
        return head + "".join(f"{a:<26}{b:<21}{c:<21}{d:<10}\n" for a, b, c, d in rows)

    def _stat(self, proc: Proc) -> str:
        view = self.view()
        ticks = lambda s: int(s * USER_HZ)  # noqa: E731
        start = ticks(max(0.0, proc.start - view.boot_time))
        pgrp = proc.pid if proc.ppid == 0 else proc.ppid
        fields = [proc.pid, f"({proc.name})", proc.state, proc.ppid, pgrp, pgrp, 0, -1, 4194560, 1200, 0, 0, 0,
                  ticks(proc.cpu_s * 0.8), ticks(proc.cpu_s * 0.2), 0, 0, 20, 0, proc.threads, 0, start,
                  proc.vsz, proc.rss // 4096, "18446744073709551615"]
        fields += [1] * 3 + [0] * 19 + [0]
        return " ".join(str(f) for f in fields[:52]) + "\n"

    @staticmethod
    def _statm(proc: Proc) -> str:
        pages = proc.rss // 4096
        return f"{proc.vsz // 4096} {pages} {min(pages, 1536) // 2} 257 0 {max(pages, proc.vsz // 12288)} 0\n"

    # ---------------------------------------------------------------- top level
    def _top_file(self, name: str) -> str | None:
        view = self.view()
        if name == "version":
            return (f"Linux version {node_kernel(self.ctx)} (debian-kernel@lists.debian.org) (gcc-12 (Debian "
                    f"12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) {KERNEL_BUILD}\n")
        if name == "loadavg":
            running = sum(1 for p in self.procs() if p.state == "R")
            last = 40_000 + zlib.crc32(f"{self.ctx.node}{int(self.now)}".encode()) % 20_000
            return (f"{view.load[0]:.2f} {view.load[1]:.2f} {view.load[2]:.2f} "
                    f"{max(1, running)}/{400 + 12 * len(self.procs())} {last}\n")
        if name == "uptime":
            up = max(0.0, self.now - view.boot_time)
            idle = sum(cpu.get("idle", 0.0) for cpu in view.cpu_seconds)
            return f"{up:.2f} {idle:.2f}\n"
        if name == "meminfo":
            return _meminfo(view)
        if name == "stat":
            return self._proc_stat(view)
        if name == "cpuinfo":
            return "".join(_cpuinfo(i, view.cpus) for i in range(view.cpus))
        if name == "cmdline":
            return "BOOT_IMAGE=/boot/vmlinuz-" + node_kernel(self.ctx) + " root=/dev/sda1 ro quiet\n"
        if name == "filesystems":
            return ("nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tcgroup2\nnodev\tdevpts\nnodev\tmqueue\n"
                    "\text4\nnodev\toverlay\n")
        if name == "swaps":
            return "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        if name == "cgroups":
            return "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
        if name == "diskstats":
            return diskstats(self.ctx.twin, self.ctx.node) if self.ctx.twin is not None and self.ctx.node else ""
        if name in ("buddyinfo", "vmstat"):
            return ""
        return None

    def _proc_stat(self, view: NodeView) -> str:
        def row(label: str, cpu: dict[str, float]) -> str:
            return label + " " + " ".join(str(int(cpu.get(m, 0.0) * USER_HZ)) for m in MODES) + " 0 0\n"

        total = {m: sum(cpu.get(m, 0.0) for cpu in view.cpu_seconds) for m in MODES}
        lines = row("cpu ", total) + "".join(row(f"cpu{i}", cpu) for i, cpu in enumerate(view.cpu_seconds))
        up = max(0.0, self.now - view.boot_time)
        running = sum(1 for p in self.procs() if p.state == "R")
        return (lines + f"intr {int(up * 900)}\nctxt {int(up * 2100)}\nbtime {int(view.boot_time)}\n"
                f"processes {int(up * 3) + 400}\nprocs_running {max(1, running)}\nprocs_blocked 0\n"
                f"softirq {int(up * 400)}\n")

    # ------------------------------------------------------------------ network
    def _listening(self) -> list[tuple[int, str]]:
        runtime = self.ctx.twin.services.runtime if self.ctx.twin is not None else None
        meta = (self.ctx.pod or {}).get("metadata") or {}
        pod_rt = runtime.pod(meta.get("namespace", ""), meta.get("name", "")) if runtime is not None else None
        out: list[tuple[int, str]] = []
        if pod_rt is None:
            return out
        for name in sorted(pod_rt.containers):
            instance = pod_rt.containers[name].current
            if instance is not None and instance.running:
                out.extend(sorted(instance.listening))
        return out

    def _net(self, name: str) -> str | None:
        if name in ("snmp", "netstat"):
            from sregym.twin.userland.netstat_stats import proc_net_file

            return proc_net_file(self.ctx.twin, self.ctx.pod, name) if self.ctx.twin is not None else None
        if name in ("sockstat", "sockstat6"):
            from sregym.twin.userland.sockets import namespace_sockstat

            stat = namespace_sockstat(self.ctx)
            return stat.proc_file() if name == "sockstat" else stat.proc_file6()
        if name not in ("tcp", "tcp6", "udp", "udp6"):
            return None
        from sregym.twin.userland.netfiles import net_table

        return net_table(self, name)

    def _mounts(self) -> str:
        from sregym.twin.userland.netfiles import mount_table

        return mount_table(self)


def _meminfo(view: NodeView) -> str:
    kib = lambda b: int(b) // 1024  # noqa: E731
    total, free, cached, buffers = view.mem_total, view.mem_free, view.cached, view.buffers
    anon = max(0, view.mem_used - (600 << 20))
    rows: list[tuple[str, Any]] = [
        ("MemTotal", kib(total)), ("MemFree", kib(free)), ("MemAvailable", kib(view.mem_available)),
        ("Buffers", kib(buffers)), ("Cached", kib(cached)), ("SwapCached", 0),
        ("Active", kib(anon * 0.6 + cached * 0.4)), ("Inactive", kib(anon * 0.4 + cached * 0.6)),
        ("Active(anon)", kib(anon * 0.55)), ("Inactive(anon)", kib(anon * 0.4)),
        ("Active(file)", kib(cached * 0.4)), ("Inactive(file)", kib(cached * 0.6)), ("Unevictable", 0),
        ("Mlocked", 0), ("SwapTotal", 0), ("SwapFree", 0), ("Zswap", 0), ("Zswapped", 0),
        ("Dirty", 1860), ("Writeback", 0), ("AnonPages", kib(anon)), ("Mapped", kib(cached * 0.25)),
        ("Shmem", kib(cached * 0.02)), ("KReclaimable", kib(total * 0.01)), ("Slab", kib(total * 0.015)),
        ("SReclaimable", kib(total * 0.01)), ("SUnreclaim", kib(total * 0.005)), ("KernelStack", 11_264),
        ("PageTables", kib(anon * 0.01)), ("SecPageTables", 0), ("NFS_Unstable", 0), ("Bounce", 0),
        ("WritebackTmp", 0), ("CommitLimit", kib(total / 2)), ("Committed_AS", kib(anon * 1.6)),
        ("VmallocTotal", 34359738367), ("VmallocUsed", 38_912), ("VmallocChunk", 0), ("Percpu", 3_456),
        ("HardwareCorrupted", 0), ("AnonHugePages", 0), ("ShmemHugePages", 0), ("ShmemPmdMapped", 0),
        ("FileHugePages", 0), ("FilePmdMapped", 0)]
    text = "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in rows)
    text += "".join(f"{name + ':':<16}{0:>8}\n" for name in
                    ("HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp"))
    text += (f"{'Hugepagesize:':<16}{2048:>8} kB\n{'Hugetlb:':<16}{0:>8} kB\n"
             f"{'DirectMap4k:':<16}{305_088:>8} kB\n{'DirectMap2M:':<16}{kib(total * 0.6):>8} kB\n"
             f"{'DirectMap1G:':<16}{kib(total * 0.42):>8} kB\n")
    return text


def _cpuinfo(index: int, cpus: int) -> str:
    return (f"processor\t: {index}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
            "model name\t: Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz\nstepping\t: 7\n"
            "microcode\t: 0x5003801\ncpu MHz\t\t: 2499.998\ncache size\t: 36608 KB\nphysical id\t: 0\n"
            f"siblings\t: {cpus}\ncore id\t\t: {index // 2}\ncpu cores\t: {max(1, cpus // 2)}\n"
            f"apicid\t\t: {index}\ninitial apicid\t: {index}\nfpu\t\t: yes\nfpu_exception\t: yes\n"
            "cpuid level\t: 13\nwp\t\t: yes\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca "
            "cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good "
            "nopl xtopology nonstop_tsc cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 "
            "x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm "
            "3dnowprefetch invpcid_single pti fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid mpx avx512f "
            "avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves "
            "ida arat pku ospke\nbugs\t\t: cpu_meltdown spectre_v1 spectre_v2 spec_store_bypass swapgs "
            "taa itlb_multihit mmio_stale_data retbleed gds\nbogomips\t: 4999.99\nclflush size\t: 64\n"
            "cache_alignment\t: 64\naddress sizes\t: 46 bits physical, 48 bits virtual\npower management:\n\n")


__all__ = ["ProcProvider"]
