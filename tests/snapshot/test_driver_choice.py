"""`make_driver` picks the offline driver an agent class declares (subclasses inherit it), not a
list of agent names kept in the snapshot package."""

from __future__ import annotations

import pytest

from sregym.agents import Agent, agent
from sregym.agents.noop import NoopAgent
from sregym.snapshot.driver import NoopDriver, make_driver


@agent
class QuietControl(Agent):
    """A third-party agent that declares the noop driver."""

    name = "quiet-control-test"
    offline_driver = "noop"


@agent
class LiveOnly(NoopAgent):
    """A subclass of an offline agent that says it runs only live."""

    name = "live-only-test"
    offline_driver = None


def test_the_declared_driver_is_chosen() -> None:
    assert type(make_driver("quiet-control-test", {})) is NoopDriver
    assert type(make_driver("noop", {})) is NoopDriver
    from sregym.snapshot.command_driver import CommandDriver

    assert isinstance(make_driver("command", {"command": "true", "sandbox": False}), CommandDriver)


def test_an_agent_without_an_offline_driver_is_refused_with_the_offline_list() -> None:
    with pytest.raises(ValueError, match="the live-only-test agent cannot run on snapshots; offline agents: noop"):
        make_driver("live-only-test", {})
    with pytest.raises(ValueError, match="the gold agent cannot run on snapshots"):
        make_driver("gold", {})
