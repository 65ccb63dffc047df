"""One episode of one problem, run in this process or in a child forked from a warm twin.

Every episode of a problem begins the same way: a fresh twin with the seed, the app deployed,
`baseline_s` of healthy traffic. Only then does the problem matter (baseline recorded, noise
started, faults injected). That prefix is most of the cost of a cold reset, and it depends on
nothing but (app, seed, baseline_s), so a warm reset builds it once in this process
(`problems.warm_prefix.share`) and forks a child per episode: the child continues from its own
copy of the prepared twin (the `Conductor` finds it through `warm_prefix.shared_run`) and serves
the episode's tool calls over a pipe. A deep copy cannot do this — the twin holds running
container programs (parked generators) — but a forked child inherits them as they are.

Forking is only safe while this process runs a single thread (`warm.can_fork`); otherwise, or
with `warm=False`, the episode runs in-process from a cold twin. Both give the same observations
for the same seed and calls (the twin is deterministic; tests/gym/test_gym_warm_fork.py).
"""

from __future__ import annotations

import dataclasses
import os
import traceback
import weakref
from dataclasses import dataclass, field
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any

from sregym.env.config import FIELDS, AttemptConfig
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

    def __init__(self, problem: str | Problem, seed: int, options: dict[str, Any]) -> None:
        self._conductor = Conductor(problem, seed=seed, **options)
        self._seed = int(seed)
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


class EpisodeFailed(RuntimeError):
    """The forked episode's child raised or died (its traceback is the message)."""


class ForkedEpisode:
    """An episode in a child forked from this process, which holds the prepared twin. Calls go
    over a pipe; `acall` awaits the answer without blocking the event loop."""

    warm = True

    def __init__(self, problem: str | Problem, seed: int, options: dict[str, Any]) -> None:
        parent_end, child_end = Pipe()
        pid = os.fork()
        if pid == 0:  # child: serve the episode, never return into the caller's stack
            status = 0
            try:
                parent_end.close()
                for other in list(_PARENT_ENDS):
                    other.close()
                _serve(child_end, problem, seed, options)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        child_end.close()
        self._pid = pid
        self._conn = parent_end
        _PARENT_ENDS.add(parent_end)

    def start(self) -> Opening:
        return dataclasses.replace(self._answer(), warm=True)

    def call(self, tool: str, args: dict[str, Any]) -> Turn:
        self._conn.send(("call", tool, args))
        return self._answer()  # type: ignore[no-any-return]

    async def acall(self, tool: str, args: dict[str, Any]) -> Turn:
        """`call` for an asyncio loop: the child works while other episodes' calls proceed."""
        import asyncio

        self._conn.send(("call", tool, args))
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = self._conn.fileno()
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        return self._answer()  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._pid == 0:
            return
        try:
            self._conn.send(("close",))
            self._answer()
        except (EpisodeFailed, OSError, EOFError):
            pass
        finally:
            self._conn.close()
            os.waitpid(self._pid, 0)
            self._pid = 0

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


def _serve(conn: Connection, problem: str | Problem, seed: int, options: dict[str, Any]) -> None:
    """The child's loop: start the episode, then answer calls until told to close (or the
    parent goes away)."""
    episode = LocalEpisode(problem, seed, options)
    try:
        try:
            conn.send(("ok", episode.start()))
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
                episode.close()
                conn.send(("ok", None))
                return
            try:
                conn.send(("ok", episode.call(message[1], message[2])))
            except Exception:
                conn.send(("error", traceback.format_exc()))
    finally:
        episode.close()


Episode = LocalEpisode | ForkedEpisode


def baseline_of(options: dict[str, Any]) -> float:
    """The healthy baseline period the conductor will run with these options."""
    config = options.get("config") or AttemptConfig()
    return float(config.replace(**{k: v for k, v in options.items() if k in FIELDS}).baseline_s)


def open_episode(problem: Problem, seed: int, options: dict[str, Any], *, warm: bool = True) -> Episode:
    """A started-to-be episode: forked from the warm prefix of (problem's app, seed) when `warm`
    and forking is safe here (the prefix is built on first use), else in-process and cold."""
    from sregym.problems.warm import can_fork
    from sregym.problems.warm_prefix import share

    if warm and can_fork():
        try:
            share(problem, seed, baseline_of(options))
        except Exception:  # noqa: BLE001 - a cold episode then reports what went wrong
            return LocalEpisode(problem, seed, options)
        return ForkedEpisode(problem, seed, options)
    return LocalEpisode(problem, seed, options)


__all__ = ["OVER", "Episode", "EpisodeFailed", "ForkedEpisode", "LocalEpisode", "Opening", "Turn", "baseline_of",
           "open_episode"]
