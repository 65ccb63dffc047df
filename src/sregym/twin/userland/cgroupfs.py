"""`/sys/fs/cgroup` inside a container: its own cgroup v2 directory (a private cgroup namespace).

The numbers are the container instance's, the same ones cAdvisor exports
(`telemetry/cadvisor.py` integrates CPU seconds and the CFS period/throttling counters per
instance, so `cpu.stat`'s `nr_throttled` moves with `container_cpu_cfs_throttled_periods_total`);
limits come from the pod spec (`cpu.max` is the CFS quota of `limits.cpu` over a 100 ms period,
`memory.max` the memory limit). A restarted container is a new cgroup: counters such as
`memory.events` start again at zero, which is why an OOM-killed container's successor shows no
`oom_kill` of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.twin.userland.processes import container_limit, main_instance
from sregym.twin.userland.shm import held_bytes

if TYPE_CHECKING:
    from sregym.twin.userland.procfiles import ProcProvider

CFS_PERIOD_US = 100_000


def _cpu_counters(provider: ProcProvider) -> tuple[float, float, float, float]:
    """(cpu seconds, periods, throttled periods, throttled seconds) of the running instance."""
    ctx = provider.ctx
    instance = main_instance(ctx)
    if instance is None:
        return 0.0, 0.0, 0.0, 0.0
    meta = (ctx.pod or {}).get("metadata") or {}
    scraper = ctx.twin.services.scraper if ctx.twin is not None else None
    cadvisor = getattr(scraper, "cadvisor", None)
    cg = cadvisor.usage_of(meta.get("namespace", ""), meta.get("name", ""), ctx.container) \
        if cadvisor is not None else None
    uptime = max(0.0, provider.now - instance.started_at)
    if cg is not None and cg.cid == instance.container_id:
        # cAdvisor integrates up to its last sample; the kernel counts to now.
        lag = max(0.0, provider.now - cg.last_t)
        cpu_now = sum(p.cpu for p in provider.procs())
        periods = cg.periods + (lag * 10 if container_limit(ctx, "cpu") else 0.0)
        return cg.cpu_s + cpu_now * lag, periods, cg.throttled_periods, cg.throttled_s
    cpu = sum(p.cpu for p in provider.procs())
    return cpu * uptime, uptime * 10 if container_limit(ctx, "cpu") else 0.0, 0.0, 0.0


def cgroup_files(provider: ProcProvider) -> dict[str, str]:
    """Every file of the container's cgroup directory, by name."""
    ctx = provider.ctx
    procs = provider.procs()
    cpucontainer_limit = container_limit(ctx, "cpu")
    memcontainer_limit = int(container_limit(ctx, "memory"))
    rss = sum(p.rss for p in procs)
    file_cache = min(64 << 20, rss // 8)
    current = rss + file_cache + held_bytes(ctx)  # /dev/shm and memory-backed emptyDir pages
    cpu_s, periods, throttled, throttled_s = _cpu_counters(provider)
    usage = int(cpu_s * 1e6)
    request = 0.0
    for container in ((ctx.pod or {}).get("spec") or {}).get("containers") or []:
        if container.get("name") == ctx.container:
            from sregym.twin.machinery.quantity import cpu_cores

            value = ((container.get("resources") or {}).get("requests") or {}).get("cpu")
            request = cpu_cores(str(value)) if value else (cpucontainer_limit or 0.0)
    shares = max(2, int(request * 1024)) if request else 2
    weight = 1 + ((shares - 2) * 9999) // 262142
    near = memcontainer_limit and current >= 0.9 * memcontainer_limit
    instance = main_instance(ctx)
    uptime = max(0.0, provider.now - instance.started_at) if instance is not None else 0.0
    max_events = int(uptime) if near else 0
    anon = rss - rss // 20
    threads = sum(p.threads for p in procs)
    files = {
        "cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n",
        "cgroup.events": "populated 1\nfrozen 0\n",
        "cgroup.freeze": "0\n",
        "cgroup.max.depth": "max\n",
        "cgroup.max.descendants": "max\n",
        "cgroup.procs": "".join(f"{p.pid}\n" for p in procs),
        "cgroup.stat": "nr_descendants 0\nnr_dying_descendants 0\n",
        "cgroup.threads": "".join(f"{p.pid}\n" for p in procs),
        "cgroup.type": "domain\n",
        "cpu.idle": "0\n",
        "cpu.max": f"{int(cpucontainer_limit * CFS_PERIOD_US)} {CFS_PERIOD_US}\n" if cpucontainer_limit else f"max {CFS_PERIOD_US}\n",
        "cpu.max.burst": "0\n",
        "cpu.stat": (f"usage_usec {usage}\nuser_usec {int(usage * 0.8)}\nsystem_usec {usage - int(usage * 0.8)}\n"
                     f"core_sched.force_idle_usec 0\nnr_periods {int(periods)}\nnr_throttled {int(throttled)}\n"
                     f"throttled_usec {int(throttled_s * 1e6)}\nnr_bursts 0\nburst_usec 0\n"),
        "cpu.weight": f"{weight}\n",
        "cpu.weight.nice": "0\n",
        "memory.current": f"{current}\n",
        "memory.events": f"low 0\nhigh 0\nmax {max_events}\noom 0\noom_kill 0\noom_group_kill 0\n",
        "memory.events.local": f"low 0\nhigh 0\nmax {max_events}\noom 0\noom_kill 0\noom_group_kill 0\n",
        "memory.high": "max\n",
        "memory.low": "0\n",
        "memory.max": f"{memcontainer_limit}\n" if memcontainer_limit else "max\n",
        "memory.min": "0\n",
        "memory.oom.group": "1\n",
        "memory.peak": f"{int(current * 1.05) if not memcontainer_limit else min(memcontainer_limit, int(current * 1.05))}\n",
        "memory.stat": _memory_stat(anon, file_cache, rss - anon, uptime),
        "memory.swap.current": "0\n",
        "memory.swap.max": "0\n",
        "pids.current": f"{threads}\n",
        "pids.events": "max 0\n",
        "pids.max": "max\n",
    }
    return files


def _memory_stat(anon: int, file: int, kernel: int, uptime: float) -> str:
    rows = [("anon", anon), ("file", file), ("kernel", kernel), ("kernel_stack", min(kernel, 16384 * 8)),
            ("pagetables", kernel // 4), ("sec_pagetables", 0), ("percpu", 480), ("sock", 0), ("vmalloc", 0),
            ("shmem", 0), ("zswap", 0), ("zswapped", 0), ("file_mapped", file // 2), ("file_dirty", 0),
            ("file_writeback", 0), ("swapcached", 0), ("anon_thp", 0), ("file_thp", 0), ("shmem_thp", 0),
            ("inactive_anon", anon), ("active_anon", 4096), ("inactive_file", file // 2),
            ("active_file", file - file // 2), ("unevictable", 0), ("slab_reclaimable", kernel // 3),
            ("slab_unreclaimable", kernel // 3), ("slab", 2 * (kernel // 3)), ("workingset_refault_anon", 0),
            ("workingset_refault_file", 0), ("workingset_activate_anon", 0), ("workingset_activate_file", 0),
            ("workingset_restore_anon", 0), ("workingset_restore_file", 0), ("workingset_nodereclaim", 0),
            ("pgscan", 0), ("pgsteal", 0), ("pgscan_kswapd", 0), ("pgscan_direct", 0), ("pgsteal_kswapd", 0),
            ("pgsteal_direct", 0), ("pgfault", anon // 4096 + int(uptime) * 3), ("pgmajfault", 12),
            ("pgrefill", 0), ("pgactivate", 1), ("pgdeactivate", 0), ("pglazyfree", 0), ("pglazyfreed", 0),
            ("zswpin", 0), ("zswpout", 0), ("thp_fault_alloc", 0), ("thp_collapse_alloc", 0)]
    return "".join(f"{name} {value}\n" for name, value in rows)


__all__ = ["cgroup_files"]
