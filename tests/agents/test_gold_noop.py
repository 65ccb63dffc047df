"""`gold` solves problems through the tools (real kubectl, agent credential) and `noop` fails,
on the demo app and on Hotel Reservation (where the fix is an `exec` into a workload's pod)."""

from __future__ import annotations

import pytest

from sregym.agents import make_agent
from sregym.env import Conductor

HOTEL = "hotel-reservation/mongodb-role-revoked-geo-v1"


@pytest.mark.parametrize("problem", ["demo-shop/missing-configmap-key-v1", HOTEL])
def test_gold_passes_and_acts_only_through_tools(problem: str) -> None:
    with Conductor(problem, seed=1, noise="low", agent_name="gold") as conductor:
        brief = conductor.start()
        conductor.run_agent(make_agent("gold"), brief)
        result = conductor.result()
        trajectory = conductor.trajectory
    assert result.passed, result.model_dump_json()
    assert result.diagnosis is not None and result.diagnosis.root_cause_score == 1.0
    assert {e.tool for e in trajectory} == {"kubectl", "submit_diagnosis", "submit_mitigation_done"}
    assert not any(e.is_error for e in trajectory)
    if problem == HOTEL:
        execs = [e for e in trajectory if e.args.get("command", "").startswith("exec deployment/mongodb-geo")]
        assert len(execs) == 1


def test_noop_fails_on_hotel_reservation() -> None:
    with Conductor(HOTEL, seed=1, agent_name="noop") as conductor:
        brief = conductor.start()
        make_agent("noop").run(conductor.session, brief)
        result = conductor.result()
    assert not result.passed and result.tool_calls == 0 and not result.environment_failure
