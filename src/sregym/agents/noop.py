"""`noop`: does nothing. Every problem must fail with it (the control of the benchmark).

In a detection phase it answers "no incident" and stops: the answer of an agent that never
looks, so its false-positive rate is 0 and it misses every incident."""

from __future__ import annotations

from sregym.agents.base import Agent
from sregym.agents.registry import agent
from sregym.env.models import Brief
from sregym.tools.session import ToolSession


@agent
class NoopAgent(Agent):
    """Returns at once without calling a tool.

    In a detection phase it first answers "no incident" (one call)."""

    name = "noop"
    offline_driver = "noop"

    def run(self, session: ToolSession, brief: Brief) -> None:
        if session.phase == "detection":
            session.call("submit_detection", {"incident": False, "evidence": "not investigated"})
