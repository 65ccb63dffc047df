"""The process table of a container's PID namespace, as `ps`, `top` and `/proc` show it.

One list, derived at read time from the runtime (never stored), so every tool agrees:

- PID 1, the container's main process: the argv the runtime started it with after the image's
  entrypoint script `exec`s its server (`docker-entrypoint.sh --auth` runs `mongod --auth`), its
  start time, its CPU and memory (including the data plane's load-dependent usage); nginx adds
  its worker processes under the master, with the process titles nginx sets;
- stressors a StressChaos runs in the container: Chaos Mesh's chaos-daemon starts them in the
  target's PID namespace and cgroup, so they are visible here (`stress-ng` with one
  `stress-ng-cpu` child per CPU worker, `memStress` for a memory stressor), with the CPU and memory
  the chaos service charges to the container;
- the process the exec runs (`ps` itself), newest, with the highest PID.

Only the exec'd container's processes are visible: containers of a pod do not share a PID
namespace unless `shareProcessNamespace` is set (not modelled: each container sees its own).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sregym.twin.clock import parse_time
from sregym.twin.userland.shm import held_bytes

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.node.shell import ShellContext

NGINX_WORKERS = 4  # the stock image's `worker_processes auto;` on the twin's 4-core nodes


@dataclass
class Proc:
    """One process: what `ps -o` columns and `/proc/<pid>/*` files are made from."""

    pid: int
    ppid: int
    argv: list[str]
    start: float  # simulated epoch seconds
    cpu: float = 0.0  # cores in use now
    cpu_s: float = 0.0  # CPU seconds consumed since start
    rss: int = 0  # bytes
    vsz: int = 0  # bytes
    state: str = "S"  # R, S, D, Z
    stat_flags: str = ""  # the `s`, `l`, `+` ... after the state in `ps aux` STAT
    user: str = "root"
    uid: int = 0
    threads: int = 1
    comm: str = ""
    env: dict[str, str] = field(default_factory=dict)
    # A StressChaos stressor: ((experiment uid, "ns/pod", container), part) for `kill` to end it.
    stressor: tuple[tuple[str, str, str], str] | None = None

    @property
    def name(self) -> str:
        """The kernel's `comm`: the executable's basename, cut to 15 characters."""
        if self.comm:
            return self.comm[:15]
        return (self.argv[0].rsplit("/", 1)[-1] if self.argv else "")[:15]

    @property
    def command(self) -> str:
        return " ".join(self.argv) if self.argv else f"[{self.name}]"


def program_argv(argv: list[str], server: str = "") -> list[str]:
    """The argv of the process that really runs: entrypoint scripts `exec "$@"`, and an
    official image's entrypoint puts its server in front of a flag-only argv."""
    argv = list(argv) or ["/pause"]
    if len(argv) > 1 and argv[0].endswith("entrypoint.sh"):
        argv = argv[1:]
        if argv[0].startswith("-") and server:
            argv = [server, *argv]
    return argv


def _image_server(ctx: ShellContext, instance: ContainerInstance) -> str:
    """The server an official image's entrypoint runs for flag-only args (its CMD's program)."""
    from sregym.twin.node.images import lookup

    try:
        spec, _ref = lookup(instance.image or str(ctx.extras.get("image", "")), ctx.twin)
    except Exception:  # an unparsable reference has no catalogue entry
        return ""
    return str(spec.cmd[0]) if spec is not None and spec.cmd else ""


def real_argv(ctx: ShellContext, instance: ContainerInstance) -> list[str]:
    """The argv the container's main process runs with (`program_argv` with its image's server)."""
    return program_argv(instance.argv, _image_server(ctx, instance))


def _meta(ctx: ShellContext) -> tuple[str, str]:
    meta = (ctx.pod or {}).get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def main_instance(ctx: ShellContext) -> ContainerInstance | None:
    runtime = ctx.twin.services.runtime if ctx.twin is not None else None
    if runtime is None or ctx.pod is None:
        return None
    ns, name = _meta(ctx)
    return runtime.instance(ns, name, ctx.container)


Stressor = tuple[str, list[str], float, float, int, list[int], tuple[str, str, str]]


def _stressors(ctx: ShellContext, instance: ContainerInstance, now: float) -> list[Stressor]:
    """(kind, argv, start, cpu cores, memory bytes, live worker indices, stress key) per
    StressChaos stressor running in this container instance (none once killed)."""
    from sregym.twin.chaos.stress_kills import live_workers

    twin = ctx.twin
    chaos = twin.services.chaos if twin is not None else None
    by_kind = getattr(chaos, "_by_kind", None) if chaos is not None else None
    if not by_kind or not by_kind.get("StressChaos"):
        return []
    ns, pod = _meta(ctx)
    key = f"{ns}/{pod}"
    out = []
    limit_cpu = container_limit(ctx, "cpu")
    for injection in by_kind.get("StressChaos", []):
        if ctx.container not in injection.containers.get(key, ()):
            continue
        started_in = chaos.stress_instances.get((injection.uid, key, ctx.container))
        if started_in is not None and started_in != instance.container_id:
            continue
        obj = twin.store.peek(injection.kind, injection.namespace, injection.name) or {}
        created = (obj.get("metadata") or {}).get("creationTimestamp")
        start = max(instance.started_at, parse_time(created) if created else instance.started_at)
        start = min(start, now)
        stressors = injection.spec.get("stressors") or {}
        cpu_spec = stressors.get("cpu") or {}
        stress_key = (injection.uid, key, ctx.container)
        if cpu_spec:
            workers = max(1, int(cpu_spec.get("workers") or 1))
            live = live_workers(chaos, stress_key, "cpu", workers)
            load = float(cpu_spec.get("load") if cpu_spec.get("load") is not None else 100)
            cores = len(live) * max(0.0, min(100.0, load)) / 100.0
            if limit_cpu:
                cores = min(cores, max(0.0, limit_cpu - instance.cpu_cores))
            out.append(("cpu", ["stress-ng", "--cpu", str(workers), "--cpu-load", str(int(load))],
                        start, cores, 0, live, stress_key))
        mem_spec = stressors.get("memory") or {}
        if mem_spec:
            from sregym.twin.chaos.goduration import parse_size

            size = int(parse_size(mem_spec.get("size"), chaos._node_memory(ns, pod)))
            workers = max(1, int(mem_spec.get("workers") or 1))
            alive = bool(live_workers(chaos, stress_key, "memory", 1))
            out.append(("memory", ["memStress", "--size", str(mem_spec.get("size") or "256MB"),
                                   "--workers", str(workers)], start, 0.0, size if alive else 0,
                        list(range(workers)) if alive else [], stress_key))
    return out


def container_limit(ctx: ShellContext, resource: str) -> float:
    """The exec'd container's `resources.limits[resource]` (cores or bytes); 0 when unset."""
    from sregym.twin.machinery.quantity import cpu_cores, memory_bytes

    for container in ((ctx.pod or {}).get("spec") or {}).get("containers") or []:
        if container.get("name") == ctx.container:
            value = ((container.get("resources") or {}).get("limits") or {}).get(resource)
            if value:
                return cpu_cores(str(value)) if resource == "cpu" else float(memory_bytes(str(value)))
    return 0.0


def _own_pid(ctx: ShellContext, floor: int, now: float) -> int:
    """The exec's PID: above every process already there, by an amount that depends on how
    many execs the container has seen (other short-lived processes took the PIDs between).
    Pinned for the whole exec once known (`exec_pid`), so `$$` and `ps` agree."""
    pinned = ctx.extras.get("pid")
    if pinned:
        return int(pinned)
    return floor + 1 + zlib.crc32(f"{ctx.container}{int(now)}".encode()) % 40


def process_table(ctx: ShellContext, now: float, own_argv: list[str] | None = None) -> list[Proc]:
    """Every process in the exec'd container's PID namespace, by PID."""
    procs: list[Proc] = []
    instance = main_instance(ctx)
    if instance is not None and instance.running:
        runtime = ctx.twin.services.runtime
        ns, pod = _meta(ctx)
        total_cpu, total_mem = runtime.container_usage(ns, pod, ctx.container)
        stress = _stressors(ctx, instance, now)
        main_cpu = max(0.0, total_cpu - sum(s[3] for s in stress))
        main_mem = max(1 << 20, total_mem - sum(s[4] for s in stress) - held_bytes(ctx))  # tmpfs: not RSS
        uptime = max(0.0, now - instance.started_at)
        argv = real_argv(ctx, instance)
        main = Proc(1, 0, argv, instance.started_at, cpu=main_cpu, cpu_s=main_cpu * uptime, rss=main_mem,
                    vsz=main_mem * 3 + 1_200_000 * 1024, stat_flags="sl", threads=_threads(argv),
                    env=dict(instance.env))
        main.user, main.uid = _SERVICE_USERS.get(main.name, ("root", 0))
        procs.append(main)
        if argv[0].rsplit("/", 1)[-1] == "nginx":
            main.argv = ["nginx:", "master", "process", *argv]
            main.comm, main.stat_flags, main.threads, main.vsz = "nginx", "s", 1, 11472 * 1024
            main.rss = min(main.rss, 7 << 20)
            for i in range(NGINX_WORKERS):
                procs.append(Proc(29 + i, 1, ["nginx:", "worker", "process"], instance.started_at + 0.01,
                                  rss=2 << 20, vsz=11936 * 1024, user="nginx", uid=101, comm="nginx",
                                  cpu=main_cpu / NGINX_WORKERS, cpu_s=main_cpu * uptime / NGINX_WORKERS))
        next_pid = max(p.pid for p in procs) + 1
        for kind, s_argv, start, cores, memory, live, stress_key in stress:
            running = max(0.0, now - start)
            if not live:  # killed: its PIDs stay taken, the others' do not move
                next_pid = next_pid + 8 + int(s_argv[2]) + 1 if kind == "cpu" else next_pid + 9
                continue
            if kind == "cpu":
                parent = Proc(next_pid + 8, 0, s_argv, start, rss=4 << 20, vsz=37_000 * 1024, stat_flags="L",
                              stressor=(stress_key, "cpu"))
                procs.append(parent)
                for i in live:
                    share = cores / len(live)
                    procs.append(Proc(parent.pid + 1 + i, parent.pid, ["stress-ng-cpu"], start + 0.01,
                                      cpu=share, cpu_s=share * running, rss=3 << 20, vsz=37_000 * 1024,
                                      state="R" if share >= 0.5 else "S", stat_flags="L", comm="stress-ng-cpu",
                                      stressor=(stress_key, f"cpu/{i}")))
                next_pid = parent.pid + int(s_argv[2]) + 1
            else:
                workers = len(live)
                procs.append(Proc(next_pid + 8, 0, s_argv, start, cpu=0.02 * workers, cpu_s=0.02 * workers * running,
                                  rss=memory + (2 << 20), vsz=memory + 1_240_000 * 1024, stat_flags="l",
                                  threads=4 + workers, comm="memStress", stressor=(stress_key, "memory")))
                next_pid += 9
    floor = max((p.pid for p in procs), default=0)
    procs.append(Proc(_own_pid(ctx, max(floor, 6), now), 0, list(own_argv or ["ps"]), now, rss=3 << 20,
                      vsz=8648 * 1024, state="R", stat_flags="s"))
    return sorted(procs, key=lambda p: p.pid)


def exec_pid(ctx: ShellContext, now: float) -> int:
    """The PID an exec starting now gets (the shell's `$$`); remembered in the context."""
    if not ctx.extras.get("pid"):
        ctx.extras["pid"] = process_table(ctx, now)[-1].pid
    return int(ctx.extras["pid"])


# Official images' entrypoints drop root for their server (`gosu mongodb`, `su-exec redis`).
_SERVICE_USERS = {"mongod": ("mongodb", 999), "postgres": ("postgres", 999), "redis-server": ("redis", 999)}


def _threads(argv: list[str]) -> int:
    """Threads of a main process: Go and JVM servers run many, C servers few."""
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    return {"mongod": 33, "redis-server": 5, "memcached": 10, "postgres": 1, "sleep": 1, "sh": 1,
            "nginx": 1, "java": 40}.get(name, 1 if name in ("pause", "tail", "cat") else 12)


__all__ = ["Proc", "container_limit", "exec_pid", "main_instance", "process_table", "program_argv", "real_argv"]
