"""Attempts as Ray tasks (`sregym run --executor ray`): the same attempts, on a Ray cluster.

Each attempt is one Ray task that runs `worker.run_attempt_in_worker` — the function a local pool
worker runs — so it builds its own twin from its own seed on whichever node Ray picks, and its
result is the same as with `-j 1`. The parent stays the only writer of the run directory: it
hands each outcome to `on_outcome` the moment `ray.wait` returns it (the runner stores it and
shows progress), so results stream into the one `results.jsonl` and `--resume` works as with the
pool.

Why a Ray task, not an actor: an attempt needs nothing from the previous one, and a task lost with
its worker or node is simply submitted again. Ray's own retry (`max_retries`) is off so that the
retry policy is ours and visible: a task whose worker process dies, whose node dies or that is
cancelled by someone else is submitted once more, and a second loss is recorded as an
environment failure naming what happened (which `--resume` re-runs). An error raised by the task
itself (the package missing on a node, a runtime environment that cannot be built) is not
retried: it would fail the same way.

At most as many attempts are in flight as the cluster has CPUs (one CPU per task, read again as
the cluster grows or shrinks), so an attempt starts when it is submitted and the per-attempt
wall-time watchdog measures its run, not its wait in Ray's queue; an attempt over its limit is
cancelled (its worker killed) and recorded as an environment failure, as the pool does.

Without an address a local Ray is started for the run (`num_cpus` = `-j`) and shut down after it;
with one (`auto`, `ray://host:10001`, `host:6379`) the run connects to that cluster. A Ray that
this process already initialised (a test, a notebook) is used as it is and left running.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sregym.errors import SetupError
from sregym.extras import require
from sregym.runner.plan import AttemptSpec
from sregym.runner.worker import AttemptOutcome, WorkerConfig, environment_failure, run_attempt_in_worker

POLL_S = 5.0  # longest wait for a result before the watchdog and the cluster size are looked at again
FEATURE = "--executor ray"


def _run_attempt_task(config_json: str, spec_json: str) -> str:
    """The body of each Ray task: exactly what a pool worker runs (JSON in and out)."""
    return run_attempt_in_worker(config_json, spec_json)


def lost_worker_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's errors for a task whose process or node went away (or that was cancelled): the
    attempt itself did not fail, its environment did, so it deserves one more try."""
    exc = ray.exceptions
    # ObjectLostError: the task finished but the node holding its result died before we read it.
    names = ("WorkerCrashedError", "NodeDiedError", "TaskCancelledError", "ObjectLostError")
    return tuple(getattr(exc, n) for n in names if isinstance(getattr(exc, n, None), type))


@contextlib.contextmanager
def ray_session(address: str | None, num_cpus: int) -> Iterator[Any]:
    """The `ray` module, connected: to `address`, to a Ray this process already started, or to a
    local Ray with `num_cpus` CPUs started here (and shut down on the way out)."""
    ray = require("ray", FEATURE)
    if ray.is_initialized():
        yield ray
        return
    # Workers print nothing the run needs (an outcome carries its reasons).
    if address:
        _init_keeping_sigterm(ray, address=address, log_to_driver=False)
    else:
        # "local": a new Ray of our own, even when RAY_ADDRESS or a `ray start` on this machine names
        # another; no dashboard, and no INFO lines to break up the progress bar.
        _init_keeping_sigterm(ray, address="local", num_cpus=max(1, int(num_cpus)), log_to_driver=False,
                              include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield ray
    finally:
        ray.shutdown()


def _init_keeping_sigterm(ray: Any, **options: Any) -> None:
    """`ray.init` replaces the SIGTERM handler with one that exits at once; the runner's own (a
    SIGTERM ends the run like Ctrl-C: tasks cancelled, results put in order, summary written) is
    put back."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        _init_with_retries(ray, options)
    except Exception as exc:  # no cluster there, a wrong token, versions that differ: the machine's setup
        where = "start a local Ray" if options.get("address") == "local" else \
            f"connect to the Ray cluster at {options.get('address')}"
        raise SetupError(f"{FEATURE} could not {where}: {type(exc).__name__}: {_first_line(exc)}") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# A Ray Client server starts one server process per client and gives up on it after 30 s by
# default; on a loaded head that start is slower, and the client sees an "Initialization failure
# from server" that a second try a few seconds later does not. Anything else (no cluster, a wrong
# token, different versions) is the machine's setup and is not retried.
CLIENT_INIT_TRIES = 3
CLIENT_INIT_BACKOFF_S = (3.0, 10.0)


def _transient_client_failure(exc: BaseException) -> bool:
    return isinstance(exc, ConnectionAbortedError) and str(exc).startswith("Initialization failure from server")


def _init_with_retries(ray: Any, options: dict[str, Any]) -> None:
    """`ray.init(**options)`, tried again (after a pause, with a line on stderr) when a Ray Client
    server failed to start the client's server process in time."""
    for attempt in range(CLIENT_INIT_TRIES):
        try:
            ray.init(**options)
            return
        except Exception as exc:
            if attempt == CLIENT_INIT_TRIES - 1 or not _transient_client_failure(exc):
                raise
            with contextlib.suppress(Exception):
                ray.shutdown()
            pause = CLIENT_INIT_BACKOFF_S[min(attempt, len(CLIENT_INIT_BACKOFF_S) - 1)]
            print(f"{FEATURE}: the Ray Client server at {options.get('address')} did not start a server for "
                  f"this client in time; trying again in {pause:g} s", file=sys.stderr, flush=True)
            time.sleep(pause)


@dataclass
class _InFlight:
    spec: AttemptSpec
    started: float
    tries: int  # 1 for the first submission, 2 for the retry


class RayExecutor:
    """Runs a run's attempts as Ray tasks; the same `run(todo, on_start=, on_outcome=)` as
    `pool.AttemptPool`. `ray` is the connected module (`ray_session`)."""

    def __init__(self, ray: Any, config: WorkerConfig, *, timeout_s: float | None,
                 task_options: dict[str, Any] | None = None) -> None:
        self.ray = ray
        self.config = config
        self.config_json = config.model_dump_json()
        self.timeout_s = timeout_s
        # num_cpus=1: one attempt per CPU. Ray retries nothing by itself: we do (module docstring).
        options = {"num_cpus": 1, "max_retries": 0, "retry_exceptions": False, **(task_options or {})}
        self._task = ray.remote(**options)(_run_attempt_task)
        self._lost = lost_worker_errors(ray)
        self._inflight: dict[Any, _InFlight] = {}

    def capacity(self) -> int:
        """How many attempts may run at once: the cluster's CPUs now."""
        try:
            return max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        except Exception:
            return 1

    # ----------------------------------------------------------------- run
    def run(self, todo: list[AttemptSpec], *, on_start: Callable[[AttemptSpec], None],
            on_outcome: Callable[[AttemptOutcome], None]) -> None:
        """Run every attempt of `todo`; `on_outcome` gets each result as it arrives. Returns when
        all are recorded; an interrupt propagates after cancelling what is in flight."""
        queue: list[tuple[AttemptSpec, int]] = [(spec, 1) for spec in todo]
        try:
            while queue or self._inflight:
                self._dispatch(queue, on_start)
                for item in self._collect():
                    if isinstance(item, AttemptOutcome):
                        on_outcome(item)
                    else:
                        queue.insert(0, item)  # a lost worker's attempt goes again, first
        finally:
            self.close()

    def close(self) -> None:
        """Cancel every task still in flight (force: its worker process is killed)."""
        for ref in list(self._inflight):
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)
        self._inflight.clear()

    def _dispatch(self, queue: list[tuple[AttemptSpec, int]], on_start: Callable[[AttemptSpec], None]) -> None:
        if not queue:
            return
        free = self.capacity() - len(self._inflight)
        while queue and free > 0:
            spec, tries = queue.pop(0)
            on_start(spec)
            ref = self._task.remote(self.config_json, spec.model_dump_json())
            self._inflight[ref] = _InFlight(spec=spec, started=time.monotonic(), tries=tries)
            free -= 1

    def _collect(self) -> list[AttemptOutcome | tuple[AttemptSpec, int]]:
        """Wait (briefly) for finished tasks and overruns: each gives an outcome or a retry
        (the attempt and its try number)."""
        if not self._inflight:
            return []
        ready, _ = self.ray.wait(list(self._inflight), num_returns=1, timeout=self._wait_s())
        if ready:  # take every task finished by now, not just the first
            ready, _ = self.ray.wait(list(self._inflight), num_returns=len(self._inflight), timeout=0)
        out = [self._finished(ref) for ref in ready]
        out += [self._overrun(ref) for ref in self._overruns()]
        return out

    def _wait_s(self) -> float:
        if self.timeout_s is None:
            return POLL_S
        soonest = min(f.started + self.timeout_s for f in self._inflight.values()) - time.monotonic()
        return max(0.01, min(POLL_S, soonest))

    def _finished(self, ref: Any) -> AttemptOutcome | tuple[AttemptSpec, int]:
        flight = self._inflight.pop(ref)
        elapsed = time.monotonic() - flight.started
        try:
            return AttemptOutcome.model_validate_json(self.ray.get(ref))
        except self._lost as exc:
            if flight.tries < 2:
                return (flight.spec, flight.tries + 1)
            reason = (f"the Ray worker running the attempt was lost twice ({type(exc).__name__}: "
                      f"{_first_line(exc)}); it was retried once")
            return self._failure(flight.spec, reason, elapsed)
        except Exception as exc:  # raised by the task itself (package missing, runtime env): no retry
            return self._failure(flight.spec, f"the Ray task failed ({type(exc).__name__}): {_clip(exc)}", elapsed)

    def _overruns(self) -> list[Any]:
        if self.timeout_s is None:
            return []
        now = time.monotonic()
        return [ref for ref, f in self._inflight.items() if now - f.started >= self.timeout_s]

    def _overrun(self, ref: Any) -> AttemptOutcome:
        flight = self._inflight.pop(ref)  # no longer waited for: its cancellation is not a loss
        with contextlib.suppress(Exception):
            self.ray.cancel(ref, force=True)
        return self._failure(flight.spec, f"the attempt exceeded its wall-time limit of {self.timeout_s:g}s and was "
                                          f"stopped (raise it with --attempt-timeout)",
                             time.monotonic() - flight.started)

    def _failure(self, spec: AttemptSpec, reason: str, elapsed: float) -> AttemptOutcome:
        return AttemptOutcome(spec=spec, trajectory=[],
                              result=environment_failure(self.config, spec, reason, elapsed))


def run_on_ray(config: WorkerConfig, todo: list[AttemptSpec], *, address: str | None, num_cpus: int,
               on_start: Callable[[AttemptSpec], None], on_outcome: Callable[[AttemptOutcome], None]) -> None:
    """What `runner.run` calls for `--executor ray`: connect (or start a local Ray), run `todo`."""
    with ray_session(address, num_cpus) as ray:
        RayExecutor(ray, config, timeout_s=config.attempt_timeout_s).run(todo, on_start=on_start,
                                                                         on_outcome=on_outcome)


def _clip(exc: BaseException, limit: int = 4000) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + " [...]"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"


__all__ = ["FEATURE", "RayExecutor", "lost_worker_errors", "ray_session", "run_on_ray"]
