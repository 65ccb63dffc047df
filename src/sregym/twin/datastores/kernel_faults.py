"""KernelChaos on the stores' own syscalls: a failing journal sync kills mongod.

mongod syncs its WiredTiger journal ten times a second whatever the load, so a KernelChaos whose
call chain covers `fsync` (or `write`) reaches it within the tick: WiredTiger logs the failed
`fdatasync`/`pwrite`, mongod logs `Fatal assertion` and aborts (exit 134), and every restart
fails the same way while the experiment runs. The chaos controller runs `kernel_tick` each tick;
failing reads are answered per request by `datastores.disk`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.kernel import errno_of, syscalls
from sregym.twin.datastores import server_for
from sregym.twin.datastores.disk import journal_failure

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


def kernel_tick(twin: Twin, injections: list[Any]) -> None:
    """Per tick (chaos controller hook): mongod processes whose journal fsync/write fails under
    a KernelChaos abort, as WiredTiger panics on a failed journal sync."""
    live = [i for i in injections if i.kind == "KernelChaos" and syscalls(i.spec) & {"fsync", "write"}]
    if not live:
        return
    rng = twin.rng.stream("chaos-kernel")
    for injection in live:
        probability = float((injection.spec.get("failKernRequest") or {}).get("probability") or 100) / 100.0
        for key in sorted(injection.pods):
            ns, name = key.split("/", 1)
            pod = twin.store.peek("Pod", ns, name)
            if pod is None:
                continue
            wanted = injection.containers.get(key)
            for container in [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]:
                if wanted and container not in wanted:
                    continue
                store = server_for(twin, pod, container)
                if store is None or store.kind != "mongodb":
                    continue
                # ten journal syncs per second: at any probability one fails within the tick
                if rng.random() < 1.0 - (1.0 - probability) ** 10:
                    call = "fsync" if "fsync" in syscalls(injection.spec) else "write"
                    journal_failure(store, call, errno_of(injection.spec))
