"""Agents: the `Agent` base, the `@agent` registry and the built-in `noop` and `gold` agents.

Importing this package stays light: agent modules are imported by the registry on first use.
"""

from __future__ import annotations

from sregym.agents.base import Agent
from sregym.agents.registry import AGENTS, agent, all_agent_names, get_agent, load_agents_dir, make_agent

__all__ = ["AGENTS", "Agent", "agent", "all_agent_names", "get_agent", "load_agents_dir", "make_agent"]
