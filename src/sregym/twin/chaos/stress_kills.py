"""Stressor processes an engineer kills from inside the stressed container.

Chaos Mesh's chaos-daemon starts `stress-ng` (CPU) and `memStress` (memory) in the target's PID
namespace through its background-process manager and never restarts one that dies: after
`kill <stress-ng pid>` the container's CPU drops back although the StressChaos still reads
`Injected` (its records are not updated), until the experiment injects again (a new apply
clears what was killed). Killing one `stress-ng-cpu` worker ends only that worker's share;
stress-ng's parent does not respawn it. Killing the parent ends its workers with it
(they die with their parent).

Parts are "cpu" (the parent: every worker), "cpu/<index>" (one worker) and "memory".
"""

from __future__ import annotations

from typing import Any

StressKey = tuple[str, str, str]  # (experiment uid, "ns/pod", container)


def _table(service: Any) -> dict[StressKey, set[str]]:
    table = getattr(service, "stress_killed", None)
    if table is None:
        table = {}
        service.stress_killed = table
    return table


def mark_killed(service: Any, key: StressKey, part: str) -> None:
    """Record that the stressor process `part` of experiment/pod/container `key` has died."""
    _table(service).setdefault(key, set()).add(part)


def forget(service: Any, key: StressKey) -> None:
    """The experiment injects again: its stressors run anew."""
    _table(service).pop(key, None)


def live_workers(service: Any, key: StressKey, kind: str, workers: int) -> list[int]:
    """Indices of the `kind` stressor's workers still running (none once the parent died)."""
    killed = _table(service).get(key)
    if not killed:
        return list(range(workers))
    if kind in killed:
        return []
    return [i for i in range(workers) if f"{kind}/{i}" not in killed]


__all__ = ["StressKey", "forget", "live_workers", "mark_killed"]
