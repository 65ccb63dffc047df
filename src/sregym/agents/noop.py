"""`noop`: does nothing. Every problem must fail with it (the control of the benchmark)."""

from __future__ import annotations

from sregym.agents.base import Agent
from sregym.agents.registry import agent
from sregym.env.models import Brief
from sregym.tools.session import ToolSession


@agent
class NoopAgent(Agent):
    """Returns at once without calling a tool."""

    name = "noop"
    offline_driver = "noop"

    def run(self, session: ToolSession, brief: Brief) -> None:
        return None
