"""Agents get what their class declares: a tool session always, shell access for SHELL, gold
hooks for GOLD only — and nothing reaches into the conductor to get more."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from sregym.agents import Agent, get_agent
from sregym.env import Brief, Capability, Conductor, GoldHooks, Grants, ShellAccess
from sregym.tools import ToolSession

PROBLEM = "demo-shop/bad-image-tag-v1"


class Reacher(Agent):
    """Declares `declared` and, when run, tries every kind of access and keeps what it got."""

    name = "reacher-test"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.TOOLS})

    def run(self, session: ToolSession, brief: Brief) -> None:
        self.got: dict[str, Any] = {}
        for what in ("shell", "gold"):
            try:
                self.got[what] = getattr(self, what)
            except PermissionError as exc:
                self.got[what] = exc
        if isinstance(self.got["shell"], ShellAccess) and self.got["shell"].kubeconfig is not None:
            self.kubeconfig_text = Path(self.got["shell"].kubeconfig).read_text()


class ShellReacher(Reacher):
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.TOOLS, Capability.SHELL})


class GoldReacher(Reacher):
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.TOOLS, Capability.GOLD})


def _no_gold() -> GoldHooks:
    return GoldHooks(commands=list, diagnosis=dict)


def test_an_agent_that_does_not_declare_gold_cannot_be_given_gold_hooks() -> None:
    with pytest.raises(PermissionError, match="does not declare GOLD"):
        Reacher().grant(Grants(gold=_no_gold()))
    with pytest.raises(PermissionError, match="does not declare SHELL"):
        GoldReacher().grant(Grants(shell=ShellAccess(kubeconfig=None, urls={}, token="t", clock="realtime",
                                                      poll=lambda: False, record_program=lambda *a: None)))
    with pytest.raises(PermissionError, match="GOLD access: the noop agent does not declare it"):
        _ = get_agent("noop")().gold
    GoldReacher().grant(Grants(gold=_no_gold()))  # the declared one is accepted


def test_the_conductor_hands_each_agent_exactly_what_it_declares() -> None:
    tools_only, shell, gold = Reacher(), ShellReacher(), GoldReacher()
    with Conductor(PROBLEM, seed=0, agent_name="reacher-test") as conductor:
        brief = conductor.start()
        for agent in (tools_only, shell, gold):
            conductor.run_agent(agent, brief)
        token, urls = conductor.agent_token, conductor.urls
    assert isinstance(tools_only.got["shell"], PermissionError)
    assert isinstance(tools_only.got["gold"], PermissionError)
    assert isinstance(shell.got["gold"], PermissionError)
    assert isinstance(gold.got["shell"], PermissionError)
    access = shell.got["shell"]
    assert isinstance(access, ShellAccess)
    assert access.token == token and access.urls == urls and set(urls) == {"prometheus", "loki", "jaeger"}
    assert access.kubeconfig is not None and access.kubeconfig.name == "kubeconfig"
    assert token in shell.kubeconfig_text  # the agent credential, and only it
    hooks = gold.got["gold"]
    assert isinstance(hooks, GoldHooks)
    assert hooks.diagnosis()["root_cause_entities"]  # written from the ground truth


def test_cli_agents_declare_shell_and_only_gold_declares_gold() -> None:
    from sregym.agents import all_agent_names

    for name in ("command", "claude-code", "codex"):
        assert get_agent(name).capabilities == {Capability.TOOLS, Capability.SHELL}, name
    assert [n for n in all_agent_names() if Capability.GOLD in get_agent(n).capabilities] == ["gold"]
    assert get_agent("react").capabilities == {Capability.TOOLS}
