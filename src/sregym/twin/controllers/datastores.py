"""Backing stores over time: cache warm-up per tick, CPU queues, and their CPU/memory as container usage.

Runs after the data plane engine (order 85) so a tick's served load is complete: memcached
applies the fills of that tick's misses, a CPU-limited MongoDB serves the tick's work through its
queue (`datastores/cpu_queue.py`), then the tick's load becomes the usage the runtime reports
for the store containers (cAdvisor, `kubectl top`, OOM kills).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.twin.controller import Controller, controller
from sregym.twin.datastores import Memcached, bank_of
from sregym.twin.datastores.cpu_queue import advance, cpu_limit, queue_of
from sregym.twin.node.runtime import runtime_of

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.twin import Twin

GC_EVERY = 30  # ticks between dropping servers of vanished containers


@controller
class DatastoreController(Controller):
    name = "datastores"
    order = 86

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.bank = bank_of(twin)
        self.ticks = 0
        runtime_of(twin).add_usage_hook(self._usage)

    def _usage(self, namespace: str, pod: str, container: str,
               instance: ContainerInstance) -> tuple[float, float]:
        key = (namespace, pod, container)
        store = self.bank.instances.get(key)
        if store is None or store.config.get("_instance") != instance.container_id:
            return 0.0, 0.0
        if store.kind == "mongodb" and cpu_limit(store) is not None:  # CFS caps it; the rest waits in its queue
            return queue_of(store).cores_used, float(store.memory_bytes())
        load = self.bank.last_loads.get(key)
        return (load.cpu_seconds if load else 0.0), float(store.memory_bytes())

    def reconcile(self) -> None:
        tick = self.twin.clock.tick
        for key in sorted(self.bank.instances):
            store = self.bank.instances[key]
            if isinstance(store, Memcached):
                store.tick(tick)
            if store.kind == "mongodb":
                advance(store, self.bank.loads.get(key), tick)
        self.bank.roll()
        self.ticks += 1
        if self.ticks % GC_EVERY == 0:
            runtime = runtime_of(self.twin)
            for key in sorted(self.bank.instances):
                instance = runtime.instance(*key)
                if instance is None or instance.container_id != self.bank.instances[key].config.get("_instance"):
                    del self.bank.instances[key]
