"""`twin.services.chaos`: the running experiments, as the data plane asks about them.

The chaos controller publishes, after each reconcile, the set of *injected* records of every
experiment (an `Injection`). Queries are answered from that set and memoised until it changes,
so the data plane can ask per flow per tick at the cost of a dict lookup:

- `network(src_pod, dst_pod) -> NetworkEffect | None`
- `http(dst_pod, port, method, path) -> HttpEffect | None`
- `dns(pod, name) -> "error" | "random" | None`
- `io(pod, path, *, container=None, method=None) -> IOEffect | None` (`path` is the volume's
  mount path or a file under it)
- `stress(pod) -> (cpu_cores, memory_bytes)` the stressors' demand in that pod
- `time_offset(pod, container=None) -> float` seconds the pod's clock is off: its node's offset
  (`nodeos`) plus TimeChaos

Pods are passed as the stored dicts (or None for traffic from outside the cluster).
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.devices import BadDisks
from sregym.twin.chaos.effects import HttpEffect, IOEffect, NetworkEffect
from sregym.twin.chaos.goduration import parse_duration, parse_percent, parse_rate, parse_size
from sregym.twin.chaos.http_rewrite import headers_match
from sregym.twin.chaos.injection import Injection
from sregym.twin.chaos.stress_kills import live_workers
from sregym.twin.machinery.quantity import cpu_cores, memory_bytes

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.twin import Twin

NETEM_ACTIONS = ("delay", "loss", "duplicate", "corrupt", "bandwidth")


def _key(pod: dict[str, Any] | None) -> str | None:
    if pod is None:
        return None
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"


class ChaosService:
    """Answers "what chaos applies here" from the controller's published injections."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.injections: list[Injection] = []
        self.version = 0
        # (experiment uid, "ns/pod", container) -> containerID the stressor was started in.
        self.stress_instances: dict[tuple[str, str, str], str] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._by_kind: dict[str, list[Injection]] = {}
        self._hooked = False
        self.bad_disks = BadDisks(twin)

    def ensure_usage_hook(self) -> None:
        """Register the stress usage hook on first use: any hook makes the kubelet re-check
        memory-limited pods every tick, a cost not worth paying in twins without StressChaos."""
        if not self._hooked:
            from sregym.twin.node.runtime import runtime_of

            runtime_of(self.twin).add_usage_hook(self.usage_hook)
            self._hooked = True

    # ------------------------------------------------------------- publishing
    def publish(self, injections: list[Injection]) -> None:
        signature = [(i.kind, i.ref, i.pods, i.targets, tuple(sorted(i.containers.items())),
                      repr(i.spec)) for i in injections]
        current = [(i.kind, i.ref, i.pods, i.targets, tuple(sorted(i.containers.items())),
                    repr(i.spec)) for i in self.injections]
        if signature == current:
            return
        self.injections = injections
        self._by_kind = {}
        for injection in injections:
            self._by_kind.setdefault(injection.kind, []).append(injection)
        self.version += 1
        self._memo.clear()

    def active(self, kind: str) -> list[Injection]:
        return self._by_kind.get(kind, [])

    # ---------------------------------------------------------------- network
    def network(self, src_pod: dict[str, Any] | None, dst_pod: dict[str, Any] | None) -> NetworkEffect | None:
        if not self._by_kind.get("NetworkChaos"):
            return None
        src, dst = _key(src_pod), _key(dst_pod)
        memo_key = ("net", src, dst)
        if memo_key in self._memo:
            return self._memo[memo_key]
        effect: NetworkEffect | None = None
        for injection in self._by_kind["NetworkChaos"]:
            for shaped in _shaped_directions(injection, src, dst):
                effect = shaped if effect is None else effect.combine(shaped)
        self._memo[memo_key] = effect
        return effect

    # ------------------------------------------------------------------- http
    def http(self, dst_pod: dict[str, Any] | None, port: int, method: str = "GET",
             path: str = "/", headers: dict[str, str] | None = None) -> HttpEffect | None:
        dst = _key(dst_pod)
        if dst is None or not self._by_kind.get("HTTPChaos"):
            return None
        for injection in self._by_kind["HTTPChaos"]:
            if dst not in injection.pods:
                continue
            spec = injection.spec
            if spec.get("port") is not None and int(spec["port"]) != int(port):
                continue
            if spec.get("method") and str(spec["method"]).upper() != method.upper():
                continue
            pattern = spec.get("path") or "*"
            if not fnmatch.fnmatchcase(path.split("?", 1)[0], pattern):
                continue
            if not headers_match(spec.get("request_headers"), headers):
                continue
            return HttpEffect(target=spec.get("target") or "Request", abort=bool(spec.get("abort")),
                              delay_ms=(parse_duration(spec.get("delay")) or 0.0) * 1000,
                              replace=dict(spec.get("replace") or {}), patch=dict(spec.get("patch") or {}),
                              source=injection.ref,
                              match_code=int(spec["code"]) if spec.get("code") is not None else None,
                              response_headers=dict(spec.get("response_headers") or {}))
        return None

    # -------------------------------------------------------------------- dns
    def dns(self, pod: dict[str, Any] | None, name: str) -> str | None:
        key = _key(pod)
        if key is None or not self._by_kind.get("DNSChaos"):
            return None
        query = name.lower().rstrip(".")
        for injection in self._by_kind["DNSChaos"]:
            if key not in injection.pods:
                continue
            patterns = injection.spec.get("patterns") or []
            if not patterns or any(fnmatch.fnmatchcase(query, p.lower().rstrip(".")) for p in patterns):
                return injection.spec.get("action") or "error"
        return None

    # --------------------------------------------------------------------- io
    def io(self, pod: dict[str, Any] | None, path: str, *, container: str | None = None,
           method: str | None = None) -> IOEffect | None:
        key = _key(pod)
        if key is None or not self._by_kind.get("IOChaos"):
            return None
        for injection in self._by_kind["IOChaos"]:
            injected = injection.containers.get(key)
            if not injected or (container is not None and container not in injected):
                continue
            spec = injection.spec
            volume = (spec.get("volumePath") or "").rstrip("/") or "/"
            if not (path == volume or path.startswith(volume.rstrip("/") + "/") or volume == "/"):
                continue
            pattern = spec.get("path")
            if pattern and path != volume and not fnmatch.fnmatchcase(path, pattern):
                continue
            effect = io_effect(spec, injection.ref)
            if effect.applies_to(method):
                return effect
        return self._disk_io(pod, path, container, method)

    def _disk_io(self, pod: dict[str, Any], path: str, container: str | None,
                 method: str | None) -> IOEffect | None:
        """A device-scoped fault on the disk behind `path`, whichever pod mounts it now."""
        injection = self.bad_disks.lookup(pod, path, container)
        if injection is None:
            return None
        effect = io_effect(injection.spec, injection.ref)
        return effect if effect.applies_to(method) else None

    # -------------------------------------------------------------------- jvm
    def jvm(self, namespace: str, pod: str, container: str) -> list[dict[str, Any]]:
        """The specs of the JVMChaos rules injected into one container's JVM (`dataplane/jvm_rules.py`)."""
        key = f"{namespace}/{pod}"
        return [i.spec for i in self._by_kind.get("JVMChaos", []) if container in i.containers.get(key, ())]

    # ----------------------------------------------------------------- stress
    def stress(self, pod: dict[str, Any] | None) -> tuple[float, int]:
        key = _key(pod)
        if key is None or not self._by_kind.get("StressChaos"):
            return 0.0, 0
        meta = (pod or {}).get("metadata") or {}
        cpu, memory = 0.0, 0
        for name in [c.get("name", "") for c in ((pod or {}).get("spec") or {}).get("containers") or []]:
            c_cpu, c_mem = self._container_stress(meta.get("namespace", "default"), meta.get("name", ""), name, None)
            cpu += c_cpu
            memory += c_mem
        return cpu, memory

    def _container_stress(self, namespace: str, pod: str, container: str,
                          instance: ContainerInstance | None) -> tuple[float, int]:
        key = f"{namespace}/{pod}"
        cpu, memory = 0.0, 0
        for injection in self._by_kind.get("StressChaos", []):
            if container not in injection.containers.get(key, ()):
                continue
            started_in = self.stress_instances.get((injection.uid, key, container))
            if instance is not None and started_in is not None and started_in != instance.container_id:
                continue  # the stressor died with the container instance it ran in
            stressors = injection.spec.get("stressors") or {}
            cpu_stress = stressors.get("cpu") or {}
            stress_key = (injection.uid, key, container)
            if cpu_stress:
                workers = len(live_workers(self, stress_key, "cpu", int(cpu_stress.get("workers") or 1)))
                load = float(cpu_stress.get("load") if cpu_stress.get("load") is not None else 100)
                cpu += workers * max(0.0, min(100.0, load)) / 100.0
            mem_stress = stressors.get("memory") or {}
            if mem_stress and live_workers(self, stress_key, "memory", 1):
                memory += parse_size(mem_stress.get("size"), self._node_memory(namespace, pod))
        return cpu, memory

    def _node_memory(self, namespace: str, pod: str) -> int:
        obj = self.twin.store.peek("Pod", namespace, pod)
        node = self.twin.store.peek("Node", None, ((obj or {}).get("spec") or {}).get("nodeName") or "")
        capacity = (((node or {}).get("status") or {}).get("capacity") or {}).get("memory")
        return memory_bytes(capacity) if capacity else 0

    def usage_hook(self, namespace: str, pod: str, container: str,
                   instance: ContainerInstance) -> tuple[float, float]:
        """Runtime usage hook: the stressors run inside the container's cgroup, so their memory
        counts toward its limit (OOM kill) and their CPU is capped by its quota (throttling)."""
        if not self._by_kind.get("StressChaos"):
            return 0.0, 0.0
        cpu, memory = self._container_stress(namespace, pod, container, instance)
        if cpu:
            obj = self.twin.store.peek("Pod", namespace, pod)
            spec = next((c for c in ((obj or {}).get("spec") or {}).get("containers") or []
                         if c.get("name") == container), {})
            limit = ((spec.get("resources") or {}).get("limits") or {}).get("cpu")
            if limit:
                cpu = min(cpu, max(0.0, cpu_cores(limit) - instance.cpu_cores))
        return cpu, float(memory)

    # ------------------------------------------------------------------- time
    def time_offset(self, pod: dict[str, Any] | None, container: str | None = None) -> float:
        if pod is None:
            return 0.0
        offset = 0.0
        nodeos = self.twin.services.nodeos
        node = (pod.get("spec") or {}).get("nodeName")
        if nodeos is not None and node:
            offset += nodeos.clock_offset(node)
        key = _key(pod)
        for injection in self._by_kind.get("TimeChaos", []):
            injected = injection.containers.get(key or "")
            if not injected or (container is not None and container not in injected):
                continue
            offset += parse_duration(injection.spec.get("timeOffset")) or 0.0
        return offset


def io_effect(spec: dict[str, Any], source: str = "") -> IOEffect:
    action = spec.get("action") or "latency"
    percent = spec.get("percent")
    return IOEffect(action=action,
                    latency_ms=(parse_duration(spec.get("delay")) or 0.0) * 1000 if action == "latency" else 0.0,
                    errno=int(spec.get("errno") or 0) if action == "fault" else 0,
                    percent=float(percent) if percent is not None else 100.0,
                    methods=tuple(spec.get("methods") or ()), attr=dict(spec.get("attr") or {}),
                    volume_path=spec.get("volumePath") or "", source=source)


def _netem(spec: dict[str, Any], source: str) -> NetworkEffect:
    """The effect of one shaped direction."""
    action = spec.get("action") or "delay"
    if action == "partition":
        return NetworkEffect(partition=True, sources=(source,))
    use_all = action == "netem"
    delay = spec.get("delay") or {}
    loss = spec.get("loss") or {}
    duplicate = spec.get("duplicate") or {}
    corrupt = spec.get("corrupt") or {}
    bandwidth = spec.get("bandwidth") or {}
    return NetworkEffect(
        delay_ms=(parse_duration(delay.get("latency")) or 0.0) * 1000 if use_all or action == "delay" else 0.0,
        jitter_ms=(parse_duration(delay.get("jitter")) or 0.0) * 1000 if use_all or action == "delay" else 0.0,
        loss=parse_percent(loss.get("loss")) if use_all or action == "loss" else 0.0,
        duplicate=parse_percent(duplicate.get("duplicate")) if use_all or action == "duplicate" else 0.0,
        corrupt=parse_percent(corrupt.get("corrupt")) if use_all or action == "corrupt" else 0.0,
        bandwidth=parse_rate(bandwidth.get("rate")) if action == "bandwidth" else None,
        sources=(source,))


def _shaped_directions(injection: Injection, src: str | None, dst: str | None) -> list[NetworkEffect]:
    """The shaped links between `src` and `dst` (either way: a TCP exchange needs both).

    direction `to` shapes selected → target, `from` shapes target → selected, `both` both; a
    missing target selector means every peer (pods and anything outside the cluster)."""
    spec = injection.spec
    direction = spec.get("direction") or "to"
    selected, targets = injection.pods, injection.targets

    def in_targets(key: str | None) -> bool:
        return targets is None or (key is not None and key in targets)

    def in_selected(key: str | None) -> bool:
        return key is not None and key in selected

    def shaped(a: str | None, b: str | None) -> bool:
        forward = direction in ("to", "both") and in_selected(a) and in_targets(b)
        backward = direction in ("from", "both") and targets is not None and in_targets(a) and in_selected(b)
        return forward or backward

    links = sum(1 for a, b in ((src, dst), (dst, src)) if shaped(a, b))
    if not links:
        return []
    one = _netem(spec, injection.ref)
    return [one] * links
