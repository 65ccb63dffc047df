"""Worker processes that run attempts, one at a time each, under a watchdog.

Why not `concurrent.futures.ProcessPoolExecutor`: it cannot say which process runs which attempt,
so it can neither stop one stuck attempt nor blame one dead worker (a death breaks the whole pool
and every attempt in flight with it), and shutting it down waits for running work, so SIGTERM
could not stop a run whose attempt is stuck. Here each worker is a spawned process with its own
pipe; the parent knows what each one runs and since when, and:

- an attempt that outlives `timeout_s` (wall time) has its worker killed and is recorded as an
  environment failure; a fresh worker takes its place and the run goes on;
- a worker that dies fails only the attempt it was running (an environment failure), likewise;
- an interrupt (Ctrl-C, SIGTERM turned into `KeyboardInterrupt` by the runner) kills every
  worker at once, so the run stops within seconds whatever the attempts are doing; what was
  recorded stays.

Workers ignore SIGINT: Ctrl-C reaches the whole process group, and the parent alone decides.
Every attempt, even with `jobs=1`, runs in a worker, so the watchdog and the prompt stop always
hold.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from sregym.runner.plan import AttemptSpec
from sregym.runner.worker import AttemptOutcome, WorkerConfig, environment_failure, run_attempt_in_worker

POLL_S = 0.5  # how often the parent looks at the clock while every worker is busy


def _worker_main(conn: Connection, config_json: str) -> None:
    """A worker: receive an attempt (JSON), run it, send the outcome (JSON); `None` ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.setpgrp()  # its own process group: the parent can kill what it started too
    while True:
        try:
            spec_json = conn.recv()
        except (EOFError, OSError):
            return
        if spec_json is None:
            return
        conn.send(run_attempt_in_worker(config_json, spec_json))


@dataclass
class _Worker:
    process: Any
    conn: Connection
    spec: AttemptSpec | None = None
    started: float = 0.0


class AttemptPool:
    """`jobs` workers running the attempts of one run (see the module docstring)."""

    def __init__(self, config: WorkerConfig, jobs: int, *, timeout_s: float | None) -> None:
        self.config = config
        self.config_json = config.model_dump_json()
        self.jobs = max(1, int(jobs))
        self.timeout_s = timeout_s
        self._ctx = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []

    # ----------------------------------------------------------- lifecycle
    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=_worker_main, args=(child, self.config_json), daemon=True,
                                    name="sregym-attempt-worker")
        process.start()
        child.close()
        worker = _Worker(process=process, conn=parent)
        self._workers.append(worker)
        return worker

    def _kill(self, worker: _Worker) -> None:
        """SIGKILL the worker and its process group (programs it started), then reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(worker.process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            worker.process.kill()
        worker.process.join(timeout=10)
        with contextlib.suppress(OSError):
            worker.conn.close()
        if worker in self._workers:
            self._workers.remove(worker)

    def close(self) -> None:
        """Stop every worker now (idle ones politely, busy ones by force)."""
        for worker in list(self._workers):
            if worker.spec is None:
                with contextlib.suppress(OSError, ValueError):
                    worker.conn.send(None)
                worker.process.join(timeout=2)
            self._kill(worker)

    # ----------------------------------------------------------------- run
    def run(self, todo: list[AttemptSpec], *, on_start: Callable[[AttemptSpec], None],
            on_outcome: Callable[[AttemptOutcome], None]) -> None:
        """Run every attempt of `todo` (in order of start); `on_outcome` gets each result as it
        arrives. Returns when all are recorded; an interrupt propagates after killing workers."""
        queue = list(todo)
        try:
            while queue or any(w.spec is not None for w in self._workers):
                self._dispatch(queue, on_start)
                for outcome in self._collect():
                    on_outcome(outcome)
        finally:
            self.close()

    def _dispatch(self, queue: list[AttemptSpec], on_start: Callable[[AttemptSpec], None]) -> None:
        while queue:
            idle = next((w for w in self._workers if w.spec is None), None)
            if idle is None:
                if len(self._workers) >= self.jobs:
                    return
                idle = self._spawn()
            spec = queue.pop(0)
            idle.spec, idle.started = spec, time.monotonic()
            on_start(spec)
            with contextlib.suppress(OSError):  # a worker dead while idle: `_collect` finds it
                idle.conn.send(spec.model_dump_json())

    def _collect(self) -> list[AttemptOutcome]:
        """Wait (briefly) for results, deaths and overruns; returns the outcomes they make."""
        busy = [w for w in self._workers if w.spec is not None]
        if not busy:
            return []
        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        wait(handles, timeout=self._wait_s(busy))
        out = []
        for worker in busy:
            outcome = self._check(worker)
            if outcome is not None:
                out.append(outcome)
        return out

    def _wait_s(self, busy: list[_Worker]) -> float:
        if self.timeout_s is None:
            return POLL_S * 10
        soonest = min(w.started + self.timeout_s for w in busy) - time.monotonic()
        return max(0.01, min(POLL_S * 10, soonest))

    def _check(self, worker: _Worker) -> AttemptOutcome | None:
        spec = worker.spec
        assert spec is not None
        elapsed = time.monotonic() - worker.started
        try:
            if worker.conn.poll():
                outcome = AttemptOutcome.model_validate_json(worker.conn.recv())
                worker.spec = None
                return outcome
        except (EOFError, OSError):
            pass  # the pipe broke: the worker is dead or dying; its exit code says how
        if not worker.process.is_alive() or worker.conn.closed:
            worker.process.join(timeout=5)
            code = worker.process.exitcode
            self._kill(worker)
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            return self._failure(spec, f"worker process died ({how}) while running the attempt", elapsed)
        if self.timeout_s is not None and elapsed >= self.timeout_s:
            self._kill(worker)
            return self._failure(spec, f"the attempt exceeded its wall-time limit of {self.timeout_s:g}s and was "
                                       f"stopped (raise it with --attempt-timeout)", elapsed)
        return None

    def _failure(self, spec: AttemptSpec, reason: str, elapsed: float) -> AttemptOutcome:
        return AttemptOutcome(spec=spec, trajectory=[],
                              result=environment_failure(self.config, spec, reason, elapsed))


__all__ = ["AttemptPool"]
