"""Query evaluation off the event loop, without ever seeing a half-written tick.

The twin is single-threaded: handlers run on the server's loop and the clock ticks between
requests (`serve.py`). A PromQL or LogQL query can take seconds, though, and the real services keep
answering other clients meanwhile, so the query APIs evaluate on worker threads. Queries only read
the telemetry stores, which only change while the twin steps; the gate keeps the two apart:

- a query enters on the loop (`await gate.enter()`), runs on a worker thread and leaves when the
  thread is done — even if its client went away;
- anything that changes the twin (`TwinServer` ticks and `call`s) waits on the loop, without
  blocking it, until no query is running (`await gate.idle()`); while it waits, new queries
  queue behind it, so a stream of queries cannot starve the clock.

Every query is bounded by its own time budget, so a writer never waits longer than that.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

T = TypeVar("T")
_POLL_S = 0.002
# Concurrent query evaluations per twin (further queries wait on the loop, not in a thread);
# each is bounded by its sample budget, so this bounds the memory queries hold at once.
MAX_CONCURRENT_QUERIES = 2


class QueryGate:
    """Readers (queries on worker threads) versus writers (the twin stepping on the loop)."""

    def __init__(self, max_concurrent: int = MAX_CONCURRENT_QUERIES) -> None:
        self._lock = threading.Lock()
        self._readers = 0
        self._writers_waiting = 0
        self.max_concurrent = max_concurrent
        self._pool: ThreadPoolExecutor | None = None
        self._pid = os.getpid()

    def _after_fork(self) -> None:
        """A forked twin (warm starts) inherits no worker threads and maybe a held lock."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._lock = threading.Lock()
            self._readers = self._writers_waiting = 0
            self._pool = None

    @property
    def busy(self) -> bool:
        return self._readers > 0

    def _try_enter(self) -> bool:
        self._after_fork()
        with self._lock:
            if self._writers_waiting or self._readers >= self.max_concurrent:
                return False
            self._readers += 1
            return True

    def _leave(self) -> None:
        with self._lock:
            self._readers -= 1

    async def idle(self) -> None:
        """Wait (on the loop, yielding) until no query runs; new queries wait meanwhile."""
        self._after_fork()
        if not self._readers:
            return
        with self._lock:
            self._writers_waiting += 1
        try:
            while self._readers:
                await asyncio.sleep(_POLL_S)
        finally:
            with self._lock:
                self._writers_waiting -= 1

    async def run(self, fn: Callable[[], T]) -> T:
        """Evaluate `fn` on a worker thread once no writer is pending; return its result."""
        while not self._try_enter():
            await asyncio.sleep(_POLL_S)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.max_concurrent, thread_name_prefix="sregym-query")

        def work() -> T:
            try:
                return fn()
            finally:
                self._leave()

        try:
            future = asyncio.get_running_loop().run_in_executor(self._pool, work)
        except BaseException:
            self._leave()
            raise
        return await future


def gate_for(twin: Twin) -> QueryGate:
    """The twin's one gate (shared by its Prometheus, Loki and Jaeger apps and its server)."""
    gate = twin.services.query_gate
    if gate is None:
        gate = twin.services.query_gate = QueryGate()
    return gate


__all__ = ["MAX_CONCURRENT_QUERIES", "QueryGate", "gate_for"]
