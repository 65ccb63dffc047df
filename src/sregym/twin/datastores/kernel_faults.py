"""KernelChaos on the stores' own syscalls: a failing journal sync kills mongod, a failing RDB
save stops Redis's writes.

mongod syncs its WiredTiger journal ten times a second whatever the load, so a KernelChaos whose
call chain covers `fsync` (or `write`) reaches it within the tick: WiredTiger logs the failed
`fdatasync`/`pwrite`, mongod logs `Fatal assertion` and aborts (exit 134), and every restart
fails the same way while the experiment runs. Redis saves its RDB snapshot when its `save`
points are reached (default `3600 1 300 100 60 10000`: changes within seconds): with `open`
failing, the child logs `Failed opening the RDB file dump.rdb (in server root dir /data) for
saving: Input/output error` (`Write error saving DB on disk: ...` for `write`/`fsync`), the
parent `Background saving error`, and with stop-writes-on-bgsave-error every write answers
`MISCONF ...` until a save succeeds; it retries every 5 s. The chaos controller runs
`kernel_tick` each tick; failing reads are answered per request by `datastores.disk`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.kernel import errno_of, syscalls
from sregym.twin.datastores import server_for
from sregym.twin.datastores.disk import journal_failure

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


def kernel_tick(twin: Twin, injections: list[Any]) -> None:
    """Per tick (chaos controller hook): mongod processes whose journal fsync/write fails under
    a KernelChaos abort, as WiredTiger panics on a failed journal sync."""
    live = [i for i in injections if i.kind == "KernelChaos" and syscalls(i.spec) & {"fsync", "write", "open"}]
    _redis_saves(twin, live)
    live = [i for i in live if syscalls(i.spec) & {"fsync", "write"}]
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


SAVE_POINTS = ((3600.0, 1.0), (300.0, 100.0), (60.0, 10000.0))
RETRY_DELAY = 5.0


def _redis_saves(twin: Twin, live: list[Any]) -> None:
    """Redis's save points under a failing open/write/fsync (and recovery once none fails)."""
    from sregym.twin.datastores.redis import Redis

    bank = twin.services.datastores
    if bank is None:
        return
    now = twin.clock.now
    for key in sorted(bank.instances):
        store = bank.instances[key]
        if not isinstance(store, Redis):
            continue
        pod = twin.store.peek("Pod", key[0], key[1])
        failing = None
        for injection in live:
            wanted = injection.containers.get(f"{key[0]}/{key[1]}")
            if f"{key[0]}/{key[1]}" in injection.pods and (not wanted or key[2] in wanted):
                failing = injection
        config = store.config
        last = float(config.setdefault("_last_save", now))
        dirty = float(config.get("_dirty", 0.0))
        due = next(((s, c) for s, c in _save_points(config) if now - last >= s and dirty >= c), None)
        if due is None or pod is None or now < float(config.get("_retry_at", 0.0)):
            continue
        seconds, changes = due
        stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%d %b %Y %H:%M:%S.%f")[:-3]
        child = 20 + int(now) % 9000
        lines = [f"1:M {stamp} * {int(changes)} changes in {int(seconds)} seconds. Saving...",
                 f"1:M {stamp} * Background saving started by pid {child}"]
        if failing is None:
            config.update(_last_save=now, _dirty=0.0, _bgsave_failed=False)
            lines += [f"{child}:C {stamp} * DB saved on disk", f"1:M {stamp} * Background saving terminated with success"]
        else:
            text = os.strerror(errno_of(failing.spec))
            calls = syscalls(failing.spec)
            lines.append(f"{child}:C {stamp} # Failed opening the RDB file dump.rdb (in server root dir /data) for "
                         f"saving: {text}" if "open" in calls else
                         f"{child}:C {stamp} # Write error saving DB on disk: {text}")
            lines.append(f"1:M {stamp} # Background saving error")
            config.update(_bgsave_failed=True, _retry_at=now + RETRY_DELAY)
        _container_log(twin, key, lines)


def _save_points(config: dict[str, Any]) -> tuple[tuple[float, float], ...]:
    """`save` as configured (`CONFIG SET save ""` turns snapshots off), else the defaults."""
    text = config.get("save")
    if text is None:
        return SAVE_POINTS
    numbers = [float(n) for n in str(text).split() if n.replace(".", "", 1).isdigit()]
    return tuple(zip(numbers[::2], numbers[1::2], strict=False))


def _container_log(twin: Twin, key: tuple[str, str, str], lines: list[str]) -> None:
    from sregym.twin.node.runtime import runtime_of

    instance = runtime_of(twin).instance(*key)
    logs = twin.services.logs
    if instance is None or logs is None:
        return
    for line in lines:
        logs.append(instance.container_id, twin.clock.now, "stdout", line)
