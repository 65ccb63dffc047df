"""The `react` agent against a real loopback OpenAI-compatible server that scripts the model's
answers: a full run to both submissions (with malformed tool arguments, a 500 and a 429 along
the way), budget overruns (conductor step limit, the agent's token budget) and hard API errors.
The `openai` SDK talks real HTTP to the server, so retries and parsing are exercised for real."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sregym.agents import make_agent
from sregym.env import Conductor, Limits
from support.scripted_openai import ScriptedModel, error, text, tool_call

PROBLEM = "demo-shop/missing-configmap-key-v1"
@pytest.fixture(autouse=True)
def _no_real_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield


DIAGNOSIS = {"root_cause_entities": ["demo-shop/ConfigMap/catalog-config"],
             "mechanism": "missing config key referenced by the catalog container env",
             "affected_entities": ["demo-shop/Deployment/catalog", "demo-shop/Service/catalog"],
             "explanation": "key CATALOG_MODE was removed from ConfigMap catalog-config; catalog pods "
                            "fail with CreateContainerConfigError and the service is unavailable"}


def test_react_full_run_with_malformed_arguments_and_api_errors() -> None:
    script = [
        tool_call("kubectl", {"command": "get pods -n demo-shop"}),
        tool_call("kubectl", '{"command": "get configmap -n demo-shop'),  # malformed JSON
        error(500),  # transient: retried
        tool_call("get_alerts", {}),
        text("I think the catalog ConfigMap lost a key."),  # no tool call: nudged
        error(429, "rate limited"),  # transient: retried after Retry-After
        tool_call("submit_diagnosis", DIAGNOSIS),
        text("Hand-over: restore CATALOG_MODE=full in catalog-config.", tokens=(70, 30)),  # summary
        tool_call("kubectl", {"command": "patch configmap catalog-config -n demo-shop --type merge "
                                         "-p '{\"data\":{\"CATALOG_MODE\":\"full\"}}'"}),
        tool_call("submit_mitigation_done", {}),
    ]
    with ScriptedModel(script) as model, Conductor(PROBLEM, seed=3, agent_name="react") as conductor:
        agent = make_agent("react", model="scripted", base_url=model.base_url, retry_base_s=0.01)
        brief = conductor.start()
        agent.run(conductor.session, brief)
        result = conductor.result()
        everything = conductor.trajectory
        trajectory = [e for e in everything if e.kind == "tool"]

    assert [e.tool for e in trajectory] == ["kubectl", "get_alerts", "submit_diagnosis", "kubectl",
                                            "submit_mitigation_done"]
    # the model's own words are in the trajectory too: every turn (text and the calls it asked
    # for, the malformed one included) and the hand-over note, each before what it caused
    messages = [e for e in everything if e.kind == "message"]
    assert [m.args["purpose"] for m in messages] == ["turn"] * 5 + ["handover"] + ["turn"] * 2
    assert messages[1].args["tool_calls"][0]["arguments"].startswith('{"command": "get configmap')
    assert messages[3].observation == "I think the catalog ConfigMap lost a key." and not messages[3].args["tool_calls"]
    assert "Hand-over: restore CATALOG_MODE" in messages[5].observation and messages[5].phase == "mitigation"
    assert everything.index(messages[0]) < everything.index(trajectory[0])
    assert [e.index for e in everything] == list(range(len(everything)))
    assert "catalog-" in trajectory[0].observation
    assert trajectory[2].args == DIAGNOSIS and trajectory[3].phase == "mitigation"
    assert "patched" in trajectory[3].observation, trajectory[3].observation
    assert result.passed, result.model_dump_json()
    assert not result.truncated and agent.stop_reason is None
    # every request reached the model's chat-completions route; a local server needs no key
    assert set(model.paths) == {"/v1/chat/completions"} and model.auth[0] == "Bearer sregym-no-key"
    # the malformed arguments came back to the model as an error observation (never run)
    after_malformed = model.requests[2]["messages"]
    assert after_malformed[-1]["role"] == "tool" and "not a valid JSON object" in after_malformed[-1]["content"]
    assert model.requests[3] == model.requests[2]  # the 500 was retried with the same request
    # the text-only answer was followed by a nudge to use the tools
    assert "call submit_diagnosis" in model.requests[5]["messages"][-1]["content"]
    # diagnosis tools only offer the diagnosis submit tool; the summary request offers none
    names = {t["function"]["name"] for t in model.requests[0]["tools"]}
    assert "submit_diagnosis" in names and "submit_mitigation_done" not in names
    assert "tools" not in model.requests[7]
    # the mitigation phase starts from a fresh context holding the hand-over note
    first_mitigation = model.requests[8]["messages"]
    assert len(first_mitigation) == 2 and "Hand-over: restore CATALOG_MODE" in first_mitigation[1]["content"]
    assert "catalog-config" in first_mitigation[1]["content"]  # the submitted diagnosis too
    assert {t["function"]["name"] for t in model.requests[8]["tools"]} >= {"submit_mitigation_done"}
    # tokens: 7 successful tool/text turns at 100/10 or 50/20, plus the 70/30 summary
    assert result.tokens_in == 100 * 6 + 50 + 70 and result.tokens_out == 10 * 6 + 20 + 30
    assert result.steps == 7  # model turns (the summary is not a step)
    assert [r["retry"] for r in agent.transcript if "retry" in r] == [1, 1]


def test_react_step_budget_overrun_is_truncated() -> None:
    loop = lambda: tool_call("kubectl", {"command": "get pods -n demo-shop"}, tokens=(1000, 5))  # noqa: E731
    with ScriptedModel([], default=loop) as model, \
            Conductor(PROBLEM, seed=3, agent_name="react", limits=Limits(max_steps=4)) as conductor:
        agent = make_agent("react", model="scripted", base_url=model.base_url)
        agent.run(conductor.session, conductor.start())
        result = conductor.result()
        trajectory = [e for e in conductor.trajectory if e.kind == "tool"]
    assert result.truncated and "step limit reached (4 steps)" in (result.truncation_reason or "")
    assert len(trajectory) == 4 and len(model.requests) == 4
    assert result.tokens_in == 4000 and result.tokens_out == 20 and not result.passed


def test_react_token_budget_stops_the_agent() -> None:
    loop = lambda: tool_call("kubectl", {"command": "get pods -n demo-shop"}, tokens=(1000, 5))  # noqa: E731
    with ScriptedModel([], default=loop) as model, Conductor(PROBLEM, seed=3, agent_name="react") as conductor:
        agent = make_agent("react", model="scripted", base_url=model.base_url, max_tokens=2500,
                           max_observation_chars=200, keep_observations=1)
        agent.run(conductor.session, conductor.start())
        result = conductor.result()
        full = [e for e in conductor.trajectory if e.kind == "tool"][1].observation
    # long outputs are cut with a notice; older ones are elided from the context
    tool_msgs = [m["content"] for m in model.requests[2]["messages"] if m["role"] == "tool"]
    assert len(full) > 200 and "output truncated" in tool_msgs[-1] and len(tool_msgs[-1]) < len(full)
    assert tool_msgs[0].startswith("[older observation elided")
    assert len(model.requests) == 3  # 1005, 2010, 3015 tokens: the fourth turn is not requested
    assert agent.stop_reason is not None and "token budget" in agent.stop_reason
    assert result.truncated and result.tokens_in == 3000 and result.tool_calls == 3


def test_react_gives_up_on_persistent_and_hard_errors() -> None:
    with ScriptedModel([error(503)] * 3) as model, Conductor(PROBLEM, seed=3, agent_name="react") as conductor:
        agent = make_agent("react", model="scripted", base_url=model.base_url, max_retries=2, retry_base_s=0.01)
        with pytest.raises(RuntimeError, match="kept failing after 2 retries"):
            agent.run(conductor.session, conductor.start())
    assert len(model.requests) == 3
    with ScriptedModel([error(401, "bad key")]) as model, Conductor(PROBLEM, seed=3) as conductor:
        agent = make_agent("react", model="scripted", base_url=model.base_url)
        with pytest.raises(RuntimeError, match="HTTP 401"):
            agent.run(conductor.session, conductor.start())
    assert len(model.requests) == 1  # not retried


def test_react_options_and_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="needs a model"):
        make_agent("react")
    with pytest.raises(ValueError, match="OPENAI_API_KEY is not set"):
        make_agent("react", model="gpt")
    with pytest.raises(ValueError, match="MY_KEY is not set"):
        make_agent("react", model="m", base_url="http://127.0.0.1:1/v1", api_key_env="MY_KEY")
    with pytest.raises(ValueError, match="unknown react option"):
        make_agent("react", model="m", base_url="http://x/v1", nope=1)
    monkeypatch.setenv("MY_KEY", "secret")
    agent = make_agent("react", model="m", api_key_env="MY_KEY")
    assert agent._api_key == "secret" and agent.model == "m"


def test_react_detection_phase_gets_its_own_instructions_and_tool() -> None:
    from sregym.env import AttemptConfig

    script = [tool_call("kubectl", {"command": "get pods -n demo-shop"}),
              tool_call("submit_detection", {"incident": True, "started_at": "now-2m", "evidence": "pods failing"}),
              tool_call("submit_diagnosis", DIAGNOSIS)]
    config = AttemptConfig(phases=("detection", "diagnosis"))
    with ScriptedModel(script) as model, Conductor(PROBLEM, config, seed=3, agent_name="react") as conductor:
        agent = make_agent("react", model="scripted", base_url=model.base_url, retry_base_s=0.01)
        brief = conductor.start()
        agent.run(conductor.session, brief)
        result = conductor.result()
    first = model.requests[0]
    assert "Nobody has told you whether anything is wrong" in first["messages"][0]["content"]
    assert "Phase: DETECTION" in first["messages"][1]["content"]
    names = {t["function"]["name"] for t in first["tools"]}
    assert "submit_detection" in names and "submit_diagnosis" not in names
    # the diagnosis phase starts in a fresh context that allows "no root cause"
    diagnosis = next(r for r in model.requests if "Phase: DIAGNOSIS" in r["messages"][1]["content"])
    assert "empty root_cause_entities" in diagnosis["messages"][1]["content"]
    assert result.detection is not None and result.detection.incident is True and result.detection.passed
    assert result.diagnosis is not None and result.diagnosis.submitted
