"""One episode of one problem, run in this process or in a child forked from a prepared twin.

Every episode of a problem with a given seed begins the same way: a fresh twin, the app deployed,
`baseline_s` of healthy traffic, the baseline recorded, the faults injected and left to take
hold. That is all of a cold reset's cost (seconds) and it depends on nothing the agent does, so a
warm reset does it once per (problem, seed, options) in this process (`Conductor.prepare`, kept
in `PreparedTwins`) and forks a child per episode: the child starts serving its own copy of the
prepared twin and answers the episode's tool calls over a pipe. A deep copy cannot do this — the
twin holds running container programs (parked generators) — but a forked child inherits them as
they are, and the parent's copy is never touched, so every episode starts from the same state.

Forking is only safe while this process runs a single thread (`problems.warm.can_fork`);
otherwise, or with `warm=False`, the episode runs in-process from a cold twin. Both give the same
observations for the same seed and calls (the twin is deterministic;
tests/gym/test_gym_warm_fork.py checks it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import sys
import traceback
import weakref
from dataclasses import dataclass, field
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any

from sregym.env.conductor import Conductor, EnvironmentFailure
from sregym.env.gym import reward_of
from sregym.problems.model import Problem


@dataclass(frozen=True)
class Opening:
    """What an episode starts with: the incident page and the facts an agent loop needs."""

    page: str
    seed: int
    phase: str
    phases: tuple[str, ...]
    namespaces: tuple[str, ...]
    tools: tuple[dict[str, Any], ...]  # {"name", "description", "input_schema"} per tool
    warm: bool = False  # forked from a prepared twin (True) or built from scratch (False)


@dataclass(frozen=True)
class Turn:
    """The outcome of one tool call."""

    observation: str
    is_error: bool
    phase: str
    tool_calls: int
    finished: bool = False
    truncated: bool = False
    reward: float = 0.0  # the score once the attempt is finished and scored, else 0
    result: dict[str, Any] | None = field(default=None, compare=False)  # AttemptResult as JSON


OVER = "the episode is over; call reset() to start a new one"


class LocalEpisode:
    """An episode in this process: a `Conductor` driven one tool call at a time."""

    warm = False

    def __init__(self, conductor: Conductor) -> None:
        self._conductor = conductor
        self._seed = conductor.seed
        self._result: dict[str, Any] | None = None

    def start(self) -> Opening:
        c = self._conductor
        brief = c.start()  # EnvironmentFailure when the app never became healthy
        tools = tuple({"name": s.name, "description": s.description, "input_schema": s.input_schema}
                      for s in c.session.specs())
        return Opening(page=brief.text, seed=self._seed, phase=c.phase, phases=tuple(brief.phases),
                       namespaces=tuple(brief.namespaces), tools=tools, warm=type(self).warm)

    def call(self, tool: str, args: dict[str, Any]) -> Turn:
        c = self._conductor
        if c.finished:
            return Turn(OVER, True, c.phase, c.session.tool_calls, finished=True, truncated=c.truncated,
                        result=self._result)
        observation = c.session.call(tool, args)
        reward = 0.0
        if c.finished:
            result = c.result()
            self._result = result.model_dump(mode="json")
            reward = reward_of(result)
        return Turn(observation.text, observation.is_error, c.phase, c.session.tool_calls, finished=c.finished,
                    truncated=c.finished and c.truncated, reward=reward, result=self._result)

    def close(self) -> None:
        c = self._conductor
        if not c.finished:
            c.result()
        c.close()


# Parent ends of the pipes of live forked episodes: a new child closes its copies, so an
# episode's child sees end-of-file when its parent goes away, whoever forked after it.
_PARENT_ENDS: weakref.WeakSet[Connection] = weakref.WeakSet()


_CLOSING: list[int] = []  # children told to close, not reaped yet


def reap_children(*, wait: bool = False) -> None:
    """Collect the exit status of closed episodes' children (all of them with `wait`)."""
    for pid in list(_CLOSING):
        try:
            done, _ = os.waitpid(pid, 0 if wait else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _CLOSING.remove(pid)


class EpisodeFailed(RuntimeError):
    """The forked episode's child raised or died (its traceback is the message)."""


class ForkedEpisode:
    """An episode in a child forked from this process, which holds the prepared twin. Calls go
    over a pipe; `acall` awaits the answer without blocking the event loop."""

    warm = True

    def __init__(self, prepared: Conductor) -> None:
        parent_end, child_end = Pipe()
        pid = os.fork()
        if pid == 0:  # child: serve the episode, never return into the caller's stack
            status = 0
            try:
                parent_end.close()
                for other in list(_PARENT_ENDS):
                    other.close()
                _serve(child_end, prepared)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        child_end.close()
        self._pid = pid
        self._conn = parent_end
        _PARENT_ENDS.add(parent_end)

    def start(self) -> Opening:
        opening, modules = self._answer()
        preload(modules)
        return dataclasses.replace(opening, warm=True)

    def call(self, tool: str, args: dict[str, Any]) -> Turn:
        self._conn.send(("call", tool, args))
        return self._answer()  # type: ignore[no-any-return]

    async def astart(self) -> Opening:
        """`start` for an asyncio loop."""
        await self._readable()
        return self.start()

    async def acall(self, tool: str, args: dict[str, Any]) -> Turn:
        """`call` for an asyncio loop: the child works while other episodes' calls proceed."""
        self._conn.send(("call", tool, args))
        await self._readable()
        return self._answer()  # type: ignore[no-any-return]

    async def _readable(self) -> None:
        import asyncio

        if self._conn.poll():
            return
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = self._conn.fileno()
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
        try:
            await ready
        finally:
            loop.remove_reader(fd)

    def close(self) -> None:
        """Tell the child to finish; it winds down (stops serving, removes its files) while
        the caller goes on, and is reaped later (`reap_children`)."""
        if self._pid == 0:
            return
        with contextlib.suppress(OSError):
            self._conn.send(("close",))
        self._conn.close()
        _CLOSING.append(self._pid)
        self._pid = 0
        reap_children()

    def _answer(self) -> Any:
        try:
            kind, payload = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise EpisodeFailed(f"the episode's process ended unexpectedly ({type(exc).__name__})") from None
        if kind == "environment_failure":
            raise EnvironmentFailure(payload)
        if kind == "error":
            raise EpisodeFailed(payload)
        return payload


def _serve(conn: Connection, prepared: Conductor) -> None:
    """The child's loop: start the episode, then answer calls until told to close (or the
    parent goes away)."""
    episode = LocalEpisode(prepared)
    loaded = set(sys.modules)
    try:
        try:
            opening = episode.start()
            conn.send(("ok", (opening, sorted(set(sys.modules) - loaded))))
        except EnvironmentFailure as exc:
            conn.send(("environment_failure", str(exc)))
            return
        except Exception:
            conn.send(("error", traceback.format_exc()))
            return
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message[0] == "close":
                return  # `finally` closes the episode
            try:
                conn.send(("ok", episode.call(message[1], message[2])))
            except Exception:
                conn.send(("error", traceback.format_exc()))
    finally:
        episode.close()


Episode = LocalEpisode | ForkedEpisode


def preload(modules: list[str]) -> None:
    """Import here the modules a child had to import to start its episode (the API servers,
    uvicorn, httpx ... load on first serve), so the next children inherit them loaded instead
    of importing them again: most of a warm start's cost until this was done."""
    import importlib

    for name in modules:
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:
                continue


class PreparedTwins:
    """Prepared conductors (`Conductor.prepare()` done, never started) by (problem, seed,
    options), the most recent `capacity` kept: each holds a whole twin."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self._kept: dict[str, Conductor] = {}

    def get(self, problem: Problem, seed: int, options: dict[str, Any]) -> Conductor:
        """The prepared conductor for this key (built on first use; `EnvironmentFailure` when
        the environment cannot be brought up, and then nothing is kept)."""
        key = repr((problem.id, int(seed), sorted(options.items(), key=lambda kv: kv[0])))
        conductor = self._kept.pop(key, None)
        if conductor is not None:
            self._kept[key] = conductor  # most recent last
            return conductor
        # Frozen objects are never collected, so thaw first: an evicted twin's cycles go now.
        gc.unfreeze()
        while len(self._kept) >= self.capacity:
            self._kept.pop(next(iter(self._kept)))
        conductor = Conductor(problem, seed=seed, **options)
        try:
            conductor.prepare()
        finally:
            gc.collect()
            gc.freeze()  # shared by every fork: out of the collector's reach, so children do not copy it
        self._kept[key] = conductor
        return conductor

    def clear(self) -> None:
        self._kept.clear()
        gc.unfreeze()


PREPARED = PreparedTwins()


def open_episode(problem: Problem, seed: int, options: dict[str, Any], *, warm: bool = True) -> Episode:
    """An episode to `start()`: forked from the prepared twin of (problem, seed, options) when
    `warm` and forking is safe here (prepared on first use), else in-process and cold."""
    from sregym.problems.warm import can_fork

    if warm and can_fork():
        return ForkedEpisode(PREPARED.get(problem, seed, options))
    return LocalEpisode(Conductor(problem, seed=seed, **options))


__all__ = ["OVER", "PREPARED", "Episode", "EpisodeFailed", "ForkedEpisode", "LocalEpisode", "Opening",
           "PreparedTwins", "Turn", "open_episode", "preload", "reap_children"]
