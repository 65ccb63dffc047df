"""`gold`: applies the problem's reference solution through the tools (self-test only).

It is the one agent allowed to read ground truth: it declares the GOLD capability, so the
conductor hands it `GoldHooks`. It still acts like any agent — real kubectl with the agent
credential, one tool call at a time — so a gold pass proves the problem is solvable through the
catalogue, and the submitted diagnosis is derived from the ground truth's own entities and words
(so scoring is exercised too).
"""

from __future__ import annotations

from typing import ClassVar

from sregym.agents.base import Agent, Capability
from sregym.agents.registry import agent
from sregym.env.models import Brief
from sregym.tools.session import ToolSession


@agent
class GoldAgent(Agent):
    """Looks, answers detection from the problem, diagnoses from the ground truth, applies the
    gold solution, declares done."""

    name = "gold"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.TOOLS, Capability.GOLD})

    def run(self, session: ToolSession, brief: Brief) -> None:
        namespace = brief.namespaces[0] if brief.namespaces else "default"
        session.call("kubectl", {"command": f"get pods -n {namespace}"})
        if session.phase == "detection" and self.gold.detection is not None:
            session.call("submit_detection", self.gold.detection())
        if session.phase == "diagnosis":
            session.call("submit_diagnosis", self.gold.diagnosis())
        if session.phase != "mitigation":
            return
        for command in self.gold.commands():
            session.call("kubectl", {"command": command})
            if session.done:
                return
        session.call("submit_mitigation_done", {})
