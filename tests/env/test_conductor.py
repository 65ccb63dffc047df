"""The conductor end to end on demo-shop problems: gold passes, noop fails, phases and limits,
the stepped clock, the agent-only kubeconfig, and no ground truth in what the agent sees."""

from __future__ import annotations

import pytest
import yaml

from sregym.agents import make_agent
from sregym.apps.catalog import AppSpec, register
from sregym.env import Conductor, EnvironmentFailure, Limits
from sregym.problems import get_problem
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.types import EntityRef, GroundTruth, RootCause

SELECTOR = "demo-shop/service-selector-mismatch-v1"
NODE_SELECTOR = "demo-shop/nonexistent-node-selector-v1"


def attempt(problem: str, agent: str, **options):
    with Conductor(problem, seed=3, agent_name=agent, **options) as conductor:
        brief = conductor.start()
        conductor.run_agent(make_agent(agent), brief)
        return conductor.result(), conductor.trajectory


def test_gold_passes_end_to_end() -> None:
    result, trajectory = attempt(SELECTOR, "gold")
    assert result.passed and not result.truncated and not result.environment_failure
    assert result.diagnosis is not None and result.diagnosis.passed and result.diagnosis.root_cause_score == 1.0
    assert result.mitigation is not None and result.mitigation.passed
    assert {c.name for c in result.mitigation.checks} >= {"service_serves", "baseline_intact", "entry_slo"}
    # The fix went through the real kubectl with the agent credential.
    patch = [e for e in trajectory if e.tool == "kubectl" and e.args["command"].startswith("patch")]
    assert patch and patch[0].observation == "service/catalog patched" and not patch[0].is_error
    assert [e.phase for e in trajectory] == ["diagnosis", "diagnosis", "mitigation", "mitigation"]
    assert result.sim_seconds_to_diagnosis is not None and result.sim_seconds_to_mitigation is not None
    assert result.sim_seconds_to_mitigation > result.sim_seconds_to_diagnosis


def test_noop_fails() -> None:
    result, trajectory = attempt(SELECTOR, "noop")
    assert not result.passed and trajectory == []
    assert result.diagnosis is not None and not result.diagnosis.submitted
    assert result.mitigation is not None and not result.mitigation.declared_done and not result.mitigation.passed
    assert result.truncation_reason == "agent stopped before finishing every phase"
    assert not result.environment_failure


def test_stepped_clock_and_agent_only_kubeconfig() -> None:
    with Conductor(SELECTOR, seed=1, seconds_per_call=20) as conductor:
        brief = conductor.start()
        assert "demo-shop" in brief.text and brief.phases == ("diagnosis", "mitigation")
        kubeconfig = yaml.safe_load(conductor.kubeconfig.read_text())
        assert [u["name"] for u in kubeconfig["users"]] == ["kind-kind"]
        assert kubeconfig["contexts"][0]["context"]["namespace"] == "demo-shop"
        first = conductor.session.call("kubectl", {"command": "get svc catalog"})
        second = conductor.session.call("kubectl", {"command": "get pods -n chaos-mesh"})
        assert "catalog" in first.text and not first.is_error
        assert "No resources found in chaos-mesh namespace." in second.text
        times = [e.sim_time for e in conductor.trajectory]
        assert times[1] - times[0] == 20.0
        rejected = conductor.session.call("kubectl", {"command": "get pods | wc -l"})
        assert rejected.is_error and "without a shell" in rejected.text
        manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  a: b\n"
        applied = conductor.session.call("kubectl", {"command": "apply -f -", "stdin": manifest})
        assert applied.text == "configmap/notes created" and not applied.is_error
        got = conductor.session.call("kubectl", {"command": "get cm notes -o jsonpath={.data.a}"})
        assert got.text == "b"


@pytest.mark.parametrize("problem_id", [SELECTOR, "hotel-reservation/crashing-image-geo-v1"])
def test_no_ground_truth_in_brief_or_observations(problem_id: str) -> None:
    problem = get_problem(problem_id)
    with Conductor(problem, seed=2, noise="low") as conductor:
        brief = conductor.start()
        s = conductor.session
        for command in ("get all -A", "get events -A", "describe svc catalog", "get svc -o yaml "
                        "--show-managed-fields", "get deploy -A -o yaml", "get ns", "api-resources",
                        "get cm -o yaml", "describe pods"):
            s.call("kubectl", {"command": command})
        s.call("get_alerts")
        s.call("promql_query", {"query": "up"})
        s.call("get_logs", {"query": '{namespace="demo-shop"}'})
        s.call("get_services")
        s.call("get_dependency_graph")
        s.call("get_app_context")
        seen = "\n".join([brief.text, *(e.observation for e in conductor.trajectory)])
        spec_text = "\n".join(f"{t.name} {t.description} {t.input_schema}" for t in s.specs())
    truth = problem.ground_truth
    secrets = [problem.id, problem.title, truth.description, truth.detail, truth.mechanism,
               *(f.fault for f in problem.faults), "ground truth", "ground_truth", "gold", "kind-admin", "sregym"]
    for secret in secrets:
        assert secret.lower() not in seen.lower(), secret
        assert secret.lower() not in spec_text.lower(), secret


def test_diagnosis_only_and_mitigation_only() -> None:
    diag, _ = attempt(SELECTOR, "gold", phases=("diagnosis",))
    assert diag.phases == ("diagnosis",) and diag.mitigation is None and diag.passed
    mitig, trajectory = attempt(NODE_SELECTOR, "gold", phases=("mitigation",))
    assert mitig.phases == ("mitigation",) and mitig.diagnosis is None and mitig.passed
    assert all(e.tool != "submit_diagnosis" for e in trajectory)
    with Conductor(NODE_SELECTOR, seed=0, phases=("mitigation",)) as conductor:
        conductor.start()
        assert "submit_diagnosis" not in [t.name for t in conductor.session.specs()]
        refused = conductor.session.call("submit_diagnosis", {"root_cause_entities": ["a/Pod/b"], "mechanism": "x"})
        assert refused.is_error


def test_phase_order_and_invalid_submission() -> None:
    with Conductor(SELECTOR, seed=0) as conductor:
        conductor.start()
        early = conductor.session.call("submit_mitigation_done")
        assert early.is_error and "after submit_diagnosis" in early.text
        bad = conductor.session.call("submit_diagnosis", {"root_cause_entities": ["catalog"], "mechanism": "x"})
        assert bad.is_error and "namespace/Kind/name" in bad.text and conductor.phase == "diagnosis"
        ok = conductor.session.call("submit_diagnosis", {"root_cause_entities": ["demo-shop/Deployment/cache"],
                                                         "mechanism": "cache is slow"})
        assert not ok.is_error and conductor.phase == "mitigation"
        again = conductor.session.call("submit_diagnosis", {"root_cause_entities": ["demo-shop/Service/catalog"],
                                                            "mechanism": "selector"})
        assert again.is_error
        result = conductor.result()
    assert result.diagnosis is not None and result.diagnosis.submitted and result.diagnosis.root_cause_score == 0
    assert not result.passed


def test_tool_call_limit_truncates_the_phase() -> None:
    with Conductor(SELECTOR, seed=0, limits=Limits(max_tool_calls=2)) as conductor:
        conductor.start()
        conductor.session.call("get_alerts")
        assert not conductor.finished
        conductor.session.call("get_alerts")
        assert conductor.finished and conductor.truncated
        after = conductor.session.call("get_alerts")
        assert after.is_error and "attempt is over" in after.text
        result = conductor.result()
    assert result.truncated and "tool-call limit" in (result.truncation_reason or "")
    assert result.tool_calls == 2 and not result.passed


def test_simulated_time_limit() -> None:
    with Conductor(SELECTOR, seed=0, seconds_per_call=60, limits=Limits(max_sim_seconds=120)) as conductor:
        conductor.start()
        conductor.session.call("get_alerts")
        assert not conductor.finished
        conductor.session.call("get_alerts")
        assert conductor.truncated
        assert "simulated-time limit" in (conductor.result().truncation_reason or "")


def test_unhealthy_baseline_is_an_environment_failure() -> None:
    register(AppSpec(name="never-ready", namespace="never-ready", objects_fn=lambda: [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "never-ready"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "never-ready"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "web", "image": "nginx:0.0.404"}]}}}}]))
    problem = Problem(
        id="never-ready/broken-v1", title="t", app="never-ready", namespace="never-ready",
        tags=Tags(layers=("config",)),
        faults=(FaultSpec(fault="delete_pods", params={"namespace": "never-ready", "label_selector": "app=web"}),),
        ground_truth=GroundTruth(root_causes=(RootCause(entity=EntityRef(kind="Deployment", namespace="never-ready",
                                                                         name="web")),),
                                 mechanism="bad_image", detail="d"),
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="workload_ready", params={"name": "web"}),)),
        gold=(Action(op="delete", kind="Pod", namespace="never-ready", name="x"),))
    conductor = Conductor(problem, seed=0)
    try:
        conductor.start()
        raise AssertionError("start() should have failed")
    except EnvironmentFailure as exc:
        assert "did not become ready" in str(exc)
    result = conductor.result()
    conductor.close()
    assert result.environment_failure and not result.passed
    assert "did not become ready" in (result.environment_failure_reason or "")


def test_same_seed_same_result_and_trajectory() -> None:
    def once() -> tuple[dict, list[dict]]:
        result, trajectory = attempt(NODE_SELECTOR, "gold")
        line = result.model_dump(mode="json")
        line.pop("wall_seconds")
        return line, [e.model_dump(mode="json") for e in trajectory]

    assert once() == once()


def test_realtime_clock_follows_wall_time_and_poll_enforces_limits() -> None:
    import time

    # The limit leaves ~5 wall seconds after the 90 s settle (at 200x), so the first poll is not
    # already past it on a loaded machine, and is still reached well inside the 30 s deadline.
    with Conductor(SELECTOR, seed=0, clock="realtime", realtime_speed=200.0,
                   limits=Limits(max_sim_seconds=1200)) as conductor:
        conductor.start()
        conductor.session.call("get_alerts")
        first = conductor.trajectory[0].sim_time
        assert not conductor.poll()
        deadline = time.monotonic() + 30
        while not conductor.poll() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert conductor.finished and conductor.truncated
        result = conductor.result()
    assert "simulated-time limit" in (result.truncation_reason or "") and result.clock == "realtime"
    assert first >= 90  # simulated seconds since injection: the 90 s settle came first


def test_agent_crash_is_an_agent_failure() -> None:
    with Conductor(SELECTOR, seed=0) as conductor:
        conductor.start()
        conductor.session.call("get_alerts")
        result = conductor.result(agent_error="ValueError: boom")
    assert result.agent_error == "ValueError: boom" and not result.environment_failure and not result.passed
    assert result.truncation_reason == "agent failed: ValueError: boom"
