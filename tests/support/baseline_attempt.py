"""One attempt of the built-in baseline agent on a problem, through the conductor (seed and noise
as given), for the tests that ask whether the baseline solves a problem end to end."""

from __future__ import annotations

from sregym.agents import make_agent
from sregym.env import AttemptResult, Conductor


def baseline_result(problem: str, *, seed: int = 0, noise: str = "none") -> AttemptResult:
    with Conductor(problem, seed=seed, noise=noise, agent_name="baseline") as conductor:
        brief = conductor.start()
        make_agent("baseline").run(conductor.session, brief)
        return conductor.result()
