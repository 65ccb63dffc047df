"""How `sregym snapshot run` drives one kind of agent: the `Driver` interface and the choice of driver.

A driver is built once per run, before any repeat, so that a bad option or a missing sandbox
fails the command instead of every repeat. `run(ws, answer, trajectory)` then works one repeat:
the agent sees the read-only copy `ws.snapshot`, must leave its answer at `answer`, and every step
worth keeping goes to `trajectory`. One module per agent family holds the rest:
`baseline_driver` (the live runbook agent over a replay), `command_driver` (a program in the
sandbox) and `react_driver` (the tool-calling loop over the snapshot tools); `noop`, the control,
is here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sregym.snapshot.jsonfile import dumps_line
from sregym.snapshot.output import AgentOutput, write_output
from sregym.snapshot.sandbox import Workspace

OFFLINE_AGENTS = "noop, baseline, command (and its presets claude-code, codex), react"


@dataclass(frozen=True)
class AgentResult:
    error: str | None  # None: the agent finished and should have written its answer
    tool_calls: int = 0


class Trajectory:
    """`trajectory.jsonl`, appended one JSON line per entry as the agent works (so a crash keeps
    what happened before it). Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(dumps_line(entry) + "\n")


class Driver:
    """How one kind of agent is run on a workspace. Built (and its options checked) once,
    before any repeat, so a bad option fails the command instead of every repeat."""

    default_time_limit_s: float | None = None  # wall seconds of one repeat when none is given

    def __init__(self, agent: str, options: dict[str, Any], time_limit_s: float | None,
                 hide: tuple[Path, ...]) -> None:
        self.cancelled: Callable[[], bool] = lambda: False  # set by run_dataset
        self.agent = agent
        self.options = options
        self.time_limit_s = time_limit_s if time_limit_s is not None else self.default_time_limit_s
        self.hide = hide  # directories a confined process must not see (the dataset, the run outputs)

    def recorded_options(self) -> dict[str, Any]:
        return dict(self.options)

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        raise NotImplementedError


class NoopDriver(Driver):
    """The control: answers no entity, so it scores 0 on every task."""

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        write_output(answer, AgentOutput(entities=()))
        trajectory.write({"event": "noop", "output": {"entities": []}})
        return AgentResult(None)


# The drivers by the name an agent class declares in `offline_driver` (module, class), imported
# only when chosen.
DRIVERS = {
    "noop": ("sregym.snapshot.driver", "NoopDriver"),
    "baseline": ("sregym.snapshot.baseline_driver", "BaselineDriver"),
    "command": ("sregym.snapshot.command_driver", "CommandDriver"),
    "react": ("sregym.snapshot.react_driver", "ReactDriver"),
}


def make_driver(agent: str, options: dict[str, Any], *, time_limit_s: float | None = None,
                hide: tuple[Path, ...] = ()) -> Driver:
    """The driver of a registered agent that can work offline (the one its class declares in
    `offline_driver`; subclasses inherit it), options checked."""
    import importlib

    from sregym.agents.registry import get_agent

    try:
        cls = get_agent(agent)
    except KeyError:  # the registry lists live-only agents too: name the ones that work here
        raise KeyError(f"unknown agent {agent!r}; offline agents: {OFFLINE_AGENTS}") from None
    if cls.offline_driver not in DRIVERS:
        raise ValueError(f"the {agent} agent cannot run on snapshots; offline agents: {OFFLINE_AGENTS}")
    module, name = DRIVERS[cls.offline_driver]
    driver: type[Driver] = getattr(importlib.import_module(module), name)
    return driver(agent, options, time_limit_s, hide)


__all__ = ["DRIVERS", "OFFLINE_AGENTS", "AgentResult", "Driver", "NoopDriver", "Trajectory", "make_driver"]
