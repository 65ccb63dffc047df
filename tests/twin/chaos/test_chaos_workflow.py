"""Chaos Mesh Workflow (Serial, Suspend, chaos nodes), JVMChaos on JVM and non-JVM targets and HTTPChaos rewrites."""

from __future__ import annotations

import dataclasses

import pytest

from sregym.twin import Twin
from sregym.twin.node.images import catalogue_of, lookup
from support.chaos_web import WEB, chaos, ready_pods

AD = """
apiVersion: v1
kind: Pod
metadata: {name: ad, namespace: default, labels: {app: ad}}
spec:
  containers: [{name: ad, image: "ghcr.io/open-telemetry/demo:2.0.2-ad"}]
"""


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=9)
    nginx, _ = lookup("nginx:1.27")
    assert nginx is not None
    catalogue_of(twin).register(dataclasses.replace(nginx, repository="ghcr.io/open-telemetry/demo",
                                                    tags=("2.0.2-ad",), extras={**nginx.extras, "jvm": True}))
    twin.apply(WEB.replace("replicas: 4", "replicas: 2"))
    twin.apply(AD)
    assert twin.settle(60, until=lambda: len(ready_pods(twin)) == 2)
    return twin


def _owned(twin: Twin, kind: str, node: str) -> list[dict]:
    return [o for o in twin.list(kind, "default")
            if (o["metadata"].get("labels") or {}).get("chaos-mesh.org/controlled-by") == node]


def test_serial_workflow_runs_two_experiments_in_order(twin: Twin) -> None:
    pod = ready_pods(twin)[0]["metadata"]["name"]
    target = {"mode": "all", "selector": {"pods": {"default": [pod]}}}
    twin.create(chaos("Workflow", "steps", {"entry": "entry", "templates": [
        {"name": "entry", "templateType": "Serial", "deadline": "120s", "children": ["slow", "pause", "stress"]},
        {"name": "slow", "templateType": "NetworkChaos", "deadline": "20s",
         "networkChaos": {**target, "action": "delay", "delay": {"latency": "50ms"}}},
        {"name": "pause", "templateType": "Suspend", "deadline": "5s"},
        {"name": "stress", "templateType": "StressChaos", "deadline": "20s",
         "stressChaos": {**target, "stressors": {"cpu": {"workers": 1, "load": 50}}}},
    ]}, namespace="default"))
    twin.advance(3)
    workflow = twin.get("Workflow", "default", "steps")
    entry = workflow["status"]["entryNode"]
    assert entry.startswith("entry-") and {"type": "Scheduled", "status": "True", "reason": "EntryCreated"} in \
        workflow["status"]["conditions"]
    [slow_node] = _owned(twin, "workflownodes", entry)
    assert slow_node["spec"]["type"] == "NetworkChaos" and slow_node["metadata"]["labels"] == {
        "chaos-mesh.org/controlled-by": entry, "chaos-mesh.org/workflow": "steps"}
    [delay] = _owned(twin, "networkchaos", slow_node["metadata"]["name"])
    assert not twin.list("stresschaos", "default")
    node = twin.get("WorkflowNode", "default", slow_node["metadata"]["name"])
    assert {"type": "ChaosInjected", "status": "True", "reason": "ChaosCRCreated"} in node["status"]["conditions"]
    assert node["status"]["chaosResource"] == {"apiGroup": "chaos-mesh.org", "kind": "NetworkChaos",
                                               "name": delay["metadata"]["name"]}
    twin.advance(25)
    assert not _owned(twin, "networkchaos", slow_node["metadata"]["name"])  # deleted once its deadline passed
    node = twin.get("WorkflowNode", "default", slow_node["metadata"]["name"])
    assert {"type": "DeadlineExceed", "status": "True", "reason": "NodeDeadlineExceed"} in node["status"]["conditions"]
    twin.advance(8)
    assert len(twin.list("stresschaos", "default")) == 1  # the second experiment, after the suspend
    twin.advance(25)
    assert not twin.list("stresschaos", "default")
    workflow = twin.get("Workflow", "default", "steps")
    assert {"type": "Accomplished", "status": "True", "reason": ""} in workflow["status"]["conditions"]
    entry_node = twin.get("WorkflowNode", "default", entry)
    assert {"type": "Accomplished", "status": "True", "reason": "NodeAccomplished"} in \
        entry_node["status"]["conditions"]
    assert [c["name"].split("-")[0] for c in entry_node["status"]["finishedChildren"]] == ["slow", "pause", "stress"]


def test_jvmchaos_fails_on_a_non_jvm_container_and_injects_a_jvm_one(twin: Twin) -> None:
    pod = ready_pods(twin)[1]["metadata"]["name"]
    spec = {"action": "latency", "class": "Main", "method": "getAds", "latency": 500, "port": 9277, "mode": "all"}
    twin.create(chaos("JVMChaos", "not-java", {**spec, "selector": {"pods": {"default": [pod]}},
                                              "containerNames": ["nginx"]}, namespace="default"))
    twin.create(chaos("JVMChaos", "java", {**spec, "selector": {"labelSelectors": {"app": "ad"}}},
                      namespace="default"))
    twin.advance(3)
    failed = twin.get("JVMChaos", "default", "not-java")["status"]
    [record] = failed["experiment"]["containerRecords"]
    assert record["id"] == f"default/{pod}/nginx" and record["phase"] == "Not Injected"
    assert record["injectedCount"] == 0
    event = record["events"][-1]
    assert (event["type"], event["operation"]) == ("Failed", "Apply")
    assert "AttachNotSupportedException" in event["message"] and "HotSpot VM not loaded" in event["message"]
    conditions = {c["type"]: c["status"] for c in failed["conditions"]}
    assert conditions == {"AllInjected": "False", "AllRecovered": "True", "Paused": "False", "Selected": "True"}
    messages = [e["message"] for e in twin.list("events", "default") if e["involvedObject"]["name"] == "not-java"]
    assert any(m.startswith("Failed to apply chaos: rpc error: code = Unknown desc = ") for m in messages)
    ok = twin.get("JVMChaos", "default", "java")["status"]
    [record] = ok["experiment"]["containerRecords"]
    assert record["id"] == "default/ad/ad" and record["phase"] == "Injected" and record["injectedCount"] == 1
    assert {c["type"]: c["status"] for c in ok["conditions"]}["AllInjected"] == "True"


def test_httpchaos_response_rewrites_match_code_and_headers(twin: Twin) -> None:
    from sregym.twin.userland.context import exec_context, run_exec

    pod = ready_pods(twin)[0]
    twin.create(chaos("HTTPChaos", "teapot", {
        "mode": "all", "selector": {"pods": {"default": [pod["metadata"]["name"]]}}, "target": "Response",
        "port": 80, "path": "/", "code": 200,
        "replace": {"code": 418, "headers": {"X-Chaos": "1"}, "body": "eyJvayI6ZmFsc2V9"},
        "patch": {"headers": [["X-Extra", "yes"]]}}, namespace="default"))
    twin.advance(2)
    client = twin.store.peek("Pod", "default", ready_pods(twin)[1]["metadata"]["name"])
    ip = pod["status"]["podIP"]
    result = run_exec(exec_context(twin, client, "nginx"), ["curl", "-s", "-i", f"http://{ip}/"])
    assert result.stdout.startswith("HTTP/1.1 418 ") and "X-Chaos: 1\r\n" in result.stdout
    assert "X-Extra: yes\r\n" in result.stdout and result.stdout.endswith('{"ok":false}')
    # nginx's 404 for a missing page is not the matched code: it passes untouched.
    untouched = run_exec(exec_context(twin, client, "nginx"), ["curl", "-s", "-i", f"http://{ip}/missing"])
    assert untouched.stdout.startswith("HTTP/1.1 404 ")
