"""The agent plug-in point: registry, --agents-dir loading, and what an agent receives."""

from __future__ import annotations

from pathlib import Path

from sregym.agents import AGENTS, Agent, agent, get_agent, load_agents_dir, make_agent
from sregym.env import Brief, Conductor
from sregym.problems.model import Problem
from sregym.tools import ToolSession
from sregym.types import GroundTruth


def test_builtin_agents_are_discovered() -> None:
    assert {"noop", "gold"} <= set(AGENTS.names())
    assert make_agent("noop", model="m").model == "m"
    assert get_agent("gold").name == "gold"


def test_agents_dir_loading(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from sregym.agents import Agent, agent\n\n"
        "@agent\nclass Mine(Agent):\n    name = 'mine-test'\n\n"
        "    def run(self, session, brief):\n        session.call('get_alerts')\n")
    assert load_agents_dir(tmp_path) == ["mine-test"]
    assert issubclass(get_agent("mine-test"), Agent)


class Recorder(Agent):
    """Keeps what it was given, and looks for the problem within reach of its arguments."""

    name = "recorder-test"

    def run(self, session: ToolSession, brief: Brief) -> None:
        self.received = (session, brief)
        reach = [session, brief, *vars(session).values(), *vars(brief).values()]
        backend = vars(session)["_backend"]
        reach += list(vars(backend).values())
        self.leaks = [type(x).__name__ for x in reach if isinstance(x, (Problem, GroundTruth))]
        session.call("kubectl", {"command": "get pods"})


def test_agent_receives_a_session_and_a_brief_never_the_problem() -> None:
    agent(Recorder)
    recorder = make_agent("recorder-test")
    with Conductor("demo-shop/bad-image-tag-v1", seed=0, agent_name=recorder.name) as conductor:
        brief = conductor.start()
        recorder.run(conductor.session, brief)
        result = conductor.result()
    session, got_brief = recorder.received
    assert type(session) is ToolSession and type(got_brief) is Brief
    assert recorder.leaks == []
    assert set(Brief.model_fields) == {"text", "alerts", "app", "namespaces", "phases", "started_at"}
    assert result.tool_calls == 1 and not result.passed and result.agent == "recorder-test"
