"""The container runtime state the kubelet keeps outside the API objects.

A pod's status is a *report*; the truth lives here: which container instance is running, since
when, what its process is doing (its `shell.Process`), which ports it listens on, how much memory
and CPU it uses, its back-off timers and probe counters. Other subsystems read it through
`twin.services.runtime`:

- `container_usage(ns, pod, container) -> (cpu_cores, memory_bytes)` for metrics / `kubectl top`;
- `add_usage_hook(fn)`: the data plane adds load-dependent usage; `fn(ns, pod, container,
  instance) -> (extra_cpu_cores, extra_memory_bytes)`; extra memory counts toward OOM kills;
- `listener(ip, port, protocol)` answers "what serves this address", for the data plane and probes;
- `shell_context(ns, pod, container)` gives `kubectl exec` the running container's env and files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sregym.twin.node.shell import Listen, Process, ShellContext

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

UsageHook = Callable[[str, str, str, "ContainerInstance"], tuple[float, float]]


@dataclass
class ProbeState:
    next_at: float
    successes: int = 0
    failures: int = 0
    last_ok: bool | None = None


@dataclass
class ContainerInstance:
    """One start of a container (what containerd calls a container)."""

    name: str
    container_id: str  # 64 hex characters, without the `containerd://` prefix
    restart: int  # restartCount when it was started
    started_at: float
    process: Process
    ctx: ShellContext
    image: str  # canonical reference (`docker.io/library/nginx:1.27`)
    image_id: str
    argv: list[str] = field(default_factory=list)
    # The spec's `image` it was created from, as written: with the name, all the kubelet's container
    # hash covers, so a different value means "definition changed".
    spec_image: str = ""
    listening: dict[tuple[int, str], Listen] = field(default_factory=dict)
    memory_bytes: int = 0
    cpu_cores: float = 0.0
    partial: dict[str, str] = field(default_factory=dict)
    # Termination: set once the process has exited or was killed.
    finished_at: float | None = None
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    stopping_until: float | None = None  # SIGTERM sent; SIGKILL at this time
    stop_exit_code: int = 137
    kill_reason: str = ""  # why the kubelet stopped it (liveness, deletion, sidecar shutdown)
    # Probes.
    probes: dict[str, ProbeState] = field(default_factory=dict)
    startup_done: bool = False
    ready: bool = False

    @property
    def running(self) -> bool:
        return self.finished_at is None

    @property
    def env(self) -> dict[str, str]:
        return self.ctx.env

    @property
    def files(self) -> dict[str, str]:
        return self.ctx.files


@dataclass
class ContainerRecord:
    """Everything about one container name of a pod, across its instances."""

    name: str
    init: bool = False
    sidecar: bool = False
    current: ContainerInstance | None = None
    previous: ContainerInstance | None = None
    restart_count: int = 0
    # Crash-loop back-off, modelled on client-go's flowcontrol.Backoff used by the kubelet.
    backoff_seconds: float = 0.0
    backoff_updated: float | None = None
    next_start: float = 0.0
    # Image pulls.
    image_present: bool = False
    pulled_image: str = ""
    pull_backoff_seconds: float = 0.0
    pull_retry_at: float = 0.0
    pull_done_at: float | None = None
    pull_error: str = ""
    pull_image: str = ""  # the image of the pull in flight or that last failed (back-off is per image)
    next_backoff_event: float = 0.0  # when a sync in a back-off (crash loop, image pull) next reports it
    # What the status should say while no instance is running.
    waiting_reason: str = ""
    waiting_message: str = ""
    config_error: str = ""
    done: bool = False  # terminated and will not be restarted

    @property
    def in_backoff_until(self) -> float:
        return self.next_start


@dataclass
class PodRuntime:
    uid: str
    namespace: str
    name: str
    node: str
    ip: str
    host_ip: str
    started: float
    containers: dict[str, ContainerRecord] = field(default_factory=dict)
    sandbox_ready: bool = False
    volumes_ready: bool = False
    mount_retry_at: float = 0.0
    mount_attempts: int = 0
    mount_wait_since: float | None = None
    init_done: bool = False
    next_wake: float = 0.0
    seen_rv: str = ""
    terminating: bool = False
    status_sig: tuple[object, ...] = ()


class Runtime:
    """Per-twin container runtime state, keyed by pod uid."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.pods: dict[str, PodRuntime] = {}
        self._by_name: dict[tuple[str, str], str] = {}
        self._by_ip: dict[str, str] = {}
        self._by_node: dict[str, set[str]] = {}  # node -> uids of the pods it runs (node_usage, used_ips)
        self.usage_hooks: list[UsageHook] = []
        # Bumped whenever what `listener()` answers may change (a pod's runtime added or removed, a
        # container started or finished, a port opened or closed): routes cached across ticks
        # (`dataplane.route_inputs`) are re-evaluated when it moves.
        self.generation = 0

    def changed(self) -> None:
        """Record that listeners may have changed (see `generation`)."""
        self.generation += 1

    # ------------------------------------------------------------ bookkeeping
    def add(self, pod: PodRuntime) -> None:
        self.generation += 1
        replaced = self.pods.get(pod.uid)
        if replaced is not None:
            self._by_node.get(replaced.node, set()).discard(pod.uid)
        self.pods[pod.uid] = pod
        self._by_node.setdefault(pod.node, set()).add(pod.uid)
        self._by_name[(pod.namespace, pod.name)] = pod.uid
        if pod.ip != pod.host_ip:
            self._by_ip[pod.ip] = pod.uid

    def remove(self, uid: str) -> PodRuntime | None:
        pod = self.pods.pop(uid, None)
        if pod is not None:
            self.generation += 1
            self._by_node.get(pod.node, set()).discard(uid)
            if self._by_name.get((pod.namespace, pod.name)) == uid:
                del self._by_name[(pod.namespace, pod.name)]
            if self._by_ip.get(pod.ip) == uid:
                del self._by_ip[pod.ip]
        return pod

    def pod(self, namespace: str, name: str) -> PodRuntime | None:
        uid = self._by_name.get((namespace, name))
        return self.pods.get(uid) if uid else None

    def on_node(self, node: str) -> list[PodRuntime]:
        """The pods `node` runs, by namespace and name (sums over them add in that order)."""
        return sorted((self.pods[uid] for uid in self._by_node.get(node, ())), key=lambda p: (p.namespace, p.name))

    def used_ips(self, node: str) -> set[str]:
        return {self.pods[uid].ip for uid in self._by_node.get(node, ())}

    def record(self, namespace: str, pod: str, container: str) -> ContainerRecord | None:
        runtime = self.pod(namespace, pod)
        return runtime.containers.get(container) if runtime else None

    def instance(self, namespace: str, pod: str, container: str, *,
                 previous: bool = False) -> ContainerInstance | None:
        record = self.record(namespace, pod, container)
        if record is None:
            return None
        return record.previous if previous else record.current

    # ------------------------------------------------------------------ usage
    def add_usage_hook(self, hook: UsageHook) -> None:
        self.usage_hooks.append(hook)

    def container_usage(self, namespace: str, pod: str, container: str) -> tuple[float, int]:
        """(cpu cores, working-set bytes) of the running instance; (0, 0) when not running."""
        instance = self.instance(namespace, pod, container)
        if instance is None or not instance.running:
            return 0.0, 0
        cpu, memory = instance.cpu_cores, float(instance.memory_bytes)
        for hook in self.usage_hooks:
            extra_cpu, extra_memory = hook(namespace, pod, container, instance)
            cpu += extra_cpu
            memory += extra_memory
        return cpu, int(memory)

    def pod_usage(self, namespace: str, pod: str) -> dict[str, tuple[float, int]]:
        runtime = self.pod(namespace, pod)
        if runtime is None:
            return {}
        return {name: self.container_usage(namespace, pod, name)
                for name, record in runtime.containers.items()
                if record.current is not None and record.current.running}

    def node_usage(self, node: str) -> tuple[float, int]:
        cpu, memory = 0.0, 0
        for runtime in self.on_node(node):
            for c_cpu, c_mem in self.pod_usage(runtime.namespace, runtime.name).values():
                cpu += c_cpu
                memory += c_mem
        return cpu, memory

    # --------------------------------------------------------------- network
    def listener(self, ip: str, port: int, protocol: str = "TCP") -> tuple[PodRuntime, ContainerInstance,
                                                                           Listen] | None:
        """Which running container listens on ip:port (pod IPs; host-network pods by node IP)."""
        uid = self._by_ip.get(ip)
        candidates = [self.pods[uid]] if uid in self.pods else [
            p for p in self.pods.values() if p.ip == ip]
        for runtime in candidates:
            for record in runtime.containers.values():
                instance = record.current
                if instance is not None and instance.running:
                    found = instance.listening.get((port, protocol))
                    if found is not None:
                        return runtime, instance, found
        return None

    # ------------------------------------------------------------------ exec
    def shell_context(self, namespace: str, pod: str, container: str) -> ShellContext | None:
        """A context for `kubectl exec` in the running instance (shares its files and env)."""
        instance = self.instance(namespace, pod, container)
        if instance is None or not instance.running:
            return None
        base = instance.ctx
        return ShellContext(env=dict(base.env), files=base.files, pod=base.pod, container=container,
                            twin=self.twin, node=base.node, hostname=base.hostname, cwd=base.cwd,
                            start_time=self.twin.clock.now, shell_flavour=base.shell_flavour,
                            resolve=base.resolve, userland=base.userland, extras=dict(base.extras))


def runtime_of(twin: Twin) -> Runtime:
    runtime = twin.services.runtime
    if runtime is None:
        runtime = Runtime(twin)
        twin.services.runtime = runtime
    return runtime


__all__ = ["ContainerInstance", "ContainerRecord", "PodRuntime", "ProbeState", "Runtime", "runtime_of"]
