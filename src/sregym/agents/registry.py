"""The agent registry: `@agent`, lazy discovery of `sregym.agents`, and `--agents-dir` files.

A third-party agent is a Python file with a class decorated by `@agent`; `load_agents_dir(DIR)`
imports every `*.py` in DIR (sorted), exactly like `--problems-dir` for problems.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from sregym.agents.base import Agent
from sregym.registry import Registry, load_plugin_dir

AGENTS: Registry[type[Agent]] = Registry("agent", ("sregym.agents",))
A = TypeVar("A", bound=type[Agent])


def agent(cls: A) -> A:
    """Register an `Agent` subclass under its `name`."""
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise TypeError("@agent decorates subclasses of sregym.agents.Agent")
    if not cls.name:
        raise ValueError(f"agent class {cls.__name__} needs a `name`")
    AGENTS.register(cls.name, cls, replace=True)
    return cls


def load_agents_dir(directory: str | Path) -> list[str]:
    """Import every `*.py` of `directory`; returns the names of the agents they registered. Raises
    like `load_problems_dir` (a bad directory, or `PluginLoadError` naming the file and line)."""
    before = set(AGENTS.names())
    load_plugin_dir(directory, "sregym_user_agents", "agents directory")
    return sorted(set(AGENTS.names()) - before)


def get_agent(name: str) -> type[Agent]:
    return AGENTS.get(name)


def make_agent(name: str, **options: Any) -> Agent:
    """An instance of the agent registered as `name`, with its options."""
    return get_agent(name)(**options)


def all_agent_names() -> list[str]:
    return AGENTS.names()


__all__ = ["AGENTS", "agent", "all_agent_names", "get_agent", "load_agents_dir", "make_agent"]
