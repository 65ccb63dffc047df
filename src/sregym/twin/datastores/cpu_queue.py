"""A store's requests wait behind its CPU limit: load-dependent database latency.

A database container with a CPU limit serves at most `limit / cost` requests per second (CFS
throttles it beyond); more arrivals than that queue up, and every request's duration grows by
the work ahead of it — what mongod then reports as slow queries. A store without a CPU limit
keeps its fixed service time (the node is assumed to have room).

Unlike a gRPC server, mongod does not learn that a client gave up: a query whose driver timed out
(the DeathStarBench services' `timeout_ms`) still runs to the end and answers a closed socket, so
the queue is served however late (no abandoned work is discarded). Fed by more than its capacity
the queue keeps every request late, and nobody gets an answer in time — the property a cache
stampede needs to persist. The backlog is bounded at `MAX_WAIT_S` of work (client pools stop
handing out connections long before; what waits beyond is the clients' problem, already late).

Per tick the data plane asks for the wait (`wait_ms`, from the backlog and last tick's
utilisation) and charges each request's CPU (`DataStore.account`); the datastores controller
then moves the tick's work through the queue (`advance`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import cpu_cores

if TYPE_CHECKING:
    from sregym.twin.datastores.base import DataStore, Load

MAX_WAIT_S = 60.0
MAX_QUEUE_FACTOR = 20.0  # cap of the M/M/1 waiting multiplier just below saturation


@dataclass
class CpuQueue:
    """Carried across ticks for one running store container."""

    backlog_ms: float = 0.0  # CPU work (cpu-ms) queued behind the limit
    utilisation: float = 0.0  # last tick's offered work / capacity
    cores_used: float = 0.0  # what the limit let it use last tick (the container's CPU usage)


def cpu_limit(store: DataStore) -> float | None:
    """The store container's CPU limit in cores, or None when it has none."""
    for container in get_path(store.pod, "spec", "containers", default=[]) or []:
        if container.get("name") == store.container:
            limit = get_path(container, "resources", "limits", "cpu")
            return cpu_cores(limit) if limit else None
    return None


def queue_of(store: DataStore) -> CpuQueue:
    """The queue of this store process (a restarted container starts with an empty one)."""
    queue = store.config.get("_cpu_queue")
    if queue is None:
        queue = store.config["_cpu_queue"] = CpuQueue()
    return queue


def wait_ms(store: DataStore, service_ms: float) -> float:
    """How long a request arriving now waits before its `service_ms` of CPU: the backlog ahead of
    it, or below saturation the M/M/1 wait at last tick's utilisation."""
    cores = cpu_limit(store)
    if cores is None or cores <= 0:
        return 0.0
    queue = queue_of(store)
    if queue.backlog_ms > 0:
        return queue.backlog_ms / cores
    rho = queue.utilisation
    if rho <= 0:
        return 0.0
    factor = MAX_QUEUE_FACTOR if rho >= 1.0 else min(rho / (1.0 - rho), MAX_QUEUE_FACTOR)
    return service_ms * factor


def advance(store: DataStore, load: Load | None, dt: float) -> float:
    """Serve one tick: the tick's offered work joins the backlog, the limit serves what it can.
    Returns the cores used (at most the limit)."""
    offered = load.cpu_seconds if load is not None else 0.0  # cores demanded this tick
    cores = cpu_limit(store)
    if cores is None or cores <= 0:
        return offered
    queue = queue_of(store)
    capacity_ms = cores * 1000.0 * dt
    total = queue.backlog_ms + offered * 1000.0 * dt
    served = min(total, capacity_ms)
    queue.backlog_ms = min(total - served, MAX_WAIT_S * cores * 1000.0)
    queue.utilisation = offered / cores
    queue.cores_used = served / (1000.0 * dt)
    return queue.cores_used


__all__ = ["MAX_WAIT_S", "CpuQueue", "advance", "cpu_limit", "queue_of", "wait_ms"]
