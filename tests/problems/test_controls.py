"""No-incident controls: the model's rules for them, the adapted `check` protocol, mitigation that
punishes a disruptive "fix", full attempts of gold and baseline, and an agent view that does not
give them away."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from sregym.cluster.base import AGENT
from sregym.env.conductor import Conductor
from sregym.env.config import AttemptConfig
from sregym.problems import get_problem, select
from sregym.problems.model import CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.warm import in_fork, warm_start
from sregym.types import GroundTruth

CONTROLS = ("astronomy-shop/no-incident-noise-v1", "hotel-reservation/no-incident-noise-v1",
            "hotel-reservation/no-incident-rollout-v1", "hotel-reservation/no-incident-scale-up-v1",
            "social-network/no-incident-noise-v1")


def test_the_catalogue_has_the_controls_and_the_detection_suite_mixes_both_kinds() -> None:
    assert tuple(p.id for p in select(suite="controls")) == CONTROLS
    assert all(get_problem(pid).kind == "control" for pid in CONTROLS)
    suite = select(suite="detection")
    incidents = [p for p in suite if p.kind == "incident"]
    assert {p.id for p in suite if p.kind == "control"} == set(CONTROLS)
    assert len(incidents) == 6 and len({p.tags.layers[0] for p in incidents}) == 6


def _spec(**changes: object) -> dict:
    base = dict(id="x/c-v1", title="t", app="hotel-reservation", namespace="hotel-reservation", kind="control",
                tags=Tags(layers=("app",)), ground_truth=GroundTruth(root_causes=(), mechanism="none", detail=""),
                mitigation=MitigationSpec())
    return {**base, **changes}


def test_a_control_must_be_empty_where_an_incident_is_not() -> None:
    Problem(**_spec())
    fault = FaultSpec(fault="scale_up", params={"namespace": "n", "name": "a", "replicas": 2})
    with pytest.raises(ValidationError, match="a control problem has no faults"):
        Problem(**_spec(faults=(fault,)))
    with pytest.raises(ValidationError, match=r"mitigation\.must_fix"):
        Problem(**_spec(mitigation=MitigationSpec(must_fix=(CheckSpec(check="entry_slo"),))))
    with pytest.raises(ValidationError, match="at least one fault"):
        Problem(**_spec(kind="incident"))
    with pytest.raises(ValidationError, match="benign changes belong to control problems"):
        Problem(**_spec(kind="incident", changes=(fault,)))


# The check protocol on every control (noop passes, recover is a no-op, determinism) runs in the
# registry-wide batch: `tests/problems/test_check_protocol.py`.


def test_a_disruptive_fix_on_a_control_is_collateral_damage() -> None:
    """Scaling the operator's new capacity back down, or restarting the entry point, fails the
    control's must_keep checks; doing nothing passes (the check protocol shows that)."""
    problem = get_problem("hotel-reservation/no-incident-scale-up-v1")
    warm = warm_start(problem, 0)

    def fix_then_verify(write: str) -> tuple[bool, list[str]]:
        run = warm.run_for(problem, noise="none")
        run.record_baseline()
        run.inject()
        run.advance(problem.settle_s)
        agent = run.cluster.as_user(AGENT)
        if write == "scale-back":
            agent.patch("Deployment", problem.namespace, "frontend", {"spec": {"replicas": 1}})
        else:
            agent.delete("Deployment", problem.namespace, "geo")
        score = run.verify()
        return score.passed, [c.name for c in score.failed()]

    passed, failed = in_fork(lambda: fix_then_verify("scale-back"))
    assert not passed and "replicas_kept" in failed
    passed, failed = in_fork(lambda: fix_then_verify("delete"))
    assert not passed and "baseline_intact" in failed


@pytest.mark.parametrize("agent_name", ["gold", "baseline"])
def test_a_full_attempt_on_a_control_passes_for_an_agent_that_stands_down(agent_name: str) -> None:
    from sregym.agents.registry import make_agent

    config = AttemptConfig(phases=("detection", "diagnosis", "mitigation"), noise="low")
    with Conductor("hotel-reservation/no-incident-rollout-v1", config, agent_name=agent_name) as c:
        brief = c.start()
        c.run_agent(make_agent(agent_name), brief)
        result = c.result()
        submitted = [e.args for e in c.trajectory if e.tool == "submit_diagnosis"]
    assert result.detection is not None and result.detection.incident is False and result.detection.passed
    assert submitted and submitted[0]["root_cause_entities"] == []
    assert result.diagnosis is not None and result.diagnosis.passed
    assert result.mitigation is not None and result.mitigation.passed
    assert result.passed


def test_naming_a_root_cause_on_a_control_fails_diagnosis() -> None:
    config = AttemptConfig(phases=("diagnosis",), noise="none")
    with Conductor("hotel-reservation/no-incident-noise-v1", config) as c:
        c.start()
        c.session.call("submit_diagnosis", {"root_cause_entities": ["hotel-reservation/Deployment/geo"],
                                            "mechanism": "bad image"})
        result = c.result()
    assert result.diagnosis is not None and result.diagnosis.submitted and not result.diagnosis.passed


@pytest.mark.parametrize("problem_id", ["hotel-reservation/no-incident-rollout-v1",
                                        "hotel-reservation/no-incident-scale-up-v1"])
def test_the_agent_view_does_not_reveal_a_control(problem_id: str) -> None:
    problem = get_problem(problem_id)
    warm = warm_start(problem, 0)

    def sweep() -> str:
        run = warm.run_for(problem, noise="low")
        run.record_baseline()
        run.start_noise()
        run.inject()
        run.advance(problem.settle_s)
        agent = run.cluster.as_user(AGENT)
        text = []
        for kind in ("Pod", "Deployment", "ReplicaSet", "Event", "Service", "ConfigMap", "Namespace"):
            text.extend(json.dumps(o, sort_keys=True) for o in agent.list(kind))
        return "\n".join(text).lower()

    blob = in_fork(sweep)
    assert "restartedat" in blob or problem_id.endswith("scale-up-v1")  # the change itself is visible
    for word in (problem.id, problem.id.split("/")[1], "no-incident", "benign", "rollout_restart", "scale_up",
                 "fault", "inject"):
        assert not re.search(rf"(?<![a-z0-9]){re.escape(word.lower())}(?![a-z0-9])", blob), word
