"""Fault injectors and checks run unchanged over the wire (KubeCluster → the twin's API server)
and in-process (TwinCluster); recover restores the pre-fault configuration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sregym.cluster.kube import KubeCluster
from sregym.cluster.twin import TwinCluster
from sregym.faults import FAULTS, make_fault
from sregym.problems import get_problem
from sregym.problems.run import ProblemRun
from sregym.twin import Twin
from sregym.twin.api.kubeconfig import context_name, make_tokens, write_kubeconfig
from sregym.twin.api.serve import TwinServer


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[KubeCluster]:
    twin = Twin(seed=7)
    tokens = make_tokens()
    server = TwinServer(twin, tokens=tokens, port=0, speed=0, shutdown_grace=0.2).start_in_thread()
    assert server.tls is not None
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url, tokens, ca_pem=server.tls.ca_pem)
    cluster = KubeCluster(str(kubeconfig), user="admin",
                          contexts={"admin": context_name("admin"), "agent": context_name("agent")},
                          advance_fn=server.advance, now_fn=lambda: server.call(lambda: twin.clock.now))
    try:
        yield cluster
    finally:
        server.stop()


def test_selector_fault_over_the_wire(wire: KubeCluster) -> None:
    problem = get_problem("demo-shop/service-selector-mismatch-v1")
    run = ProblemRun(problem, wire, seed=7, noise="none")
    run.deploy()
    run.record_baseline()
    before = run.state_view()
    assert all(r.passed for r in run.must_fix_now())
    run.inject()
    run.advance(30)
    assert wire.get("Service", "demo-shop", "catalog")["spec"]["selector"] == {"app": "catalog", "version": "v2"}
    fix = run.must_fix_now()
    assert not fix[0].passed and "no ready endpoints" in fix[0].detail
    run.recover()
    run.advance(30)
    assert run.state_view() == before
    assert all(r.passed for r in run.must_fix_now())


def test_exec_logs_and_agent_credential_over_the_wire(wire: KubeCluster) -> None:
    run = ProblemRun(get_problem("demo-shop/bad-image-tag-v1"), wire, seed=7, noise="none")
    run.deploy()
    pod = sorted(p["metadata"]["name"] for p in wire.list("Pod", "demo-shop", label_selector="app=catalog"))[0]
    result = wire.exec("demo-shop", pod, ["printenv", "CATALOG_MODE"])
    assert result.ok and result.stdout.strip() == "full"
    assert wire.exec("demo-shop", pod, ["sh", "-c", "exit 3"]).exit_code == 3
    probe = wire.connect("demo-shop", "catalog", 8080)
    assert probe.ok
    agent = wire.as_user("agent")
    # The benchmark's namespaces answer the agent as absent ones do: empty, not forbidden.
    assert agent.list("Pod", "chaos-mesh") == agent.list("Pod", "no-such-namespace") == []


def test_gold_over_the_wire_passes_mitigation(wire: KubeCluster) -> None:
    problem = get_problem("demo-shop/nonexistent-node-selector-v1")
    run = ProblemRun(problem, wire, seed=7, noise="none")
    run.deploy()
    run.record_baseline()
    run.inject()
    run.advance(60)
    assert not run.must_fix_now()[0].passed
    run.apply_gold()
    score = run.verify(window_s=120)
    assert score.passed, score.failed()


@pytest.mark.parametrize("problem_id", ["demo-shop/missing-configmap-key-v1",
                                        "demo-shop/validating-webhook-outage-v1"])
def test_recover_restores_state_in_process(problem_id: str) -> None:
    cluster = TwinCluster.new(4)
    run = ProblemRun(get_problem(problem_id), cluster, seed=4, noise="none")
    run.deploy()
    run.record_baseline()
    before = run.state_view()
    run.inject()
    run.advance(60)
    assert run.state_view() != before
    assert not all(r.passed for r in run.must_fix_now())
    run.recover()
    run.advance(120)
    assert run.state_view() == before
    assert all(r.passed for r in run.must_fix_now())


def test_fault_params_are_validated() -> None:
    assert {"set_image", "set_service_selector", "set_node_selector", "remove_configmap_key",
            "create_objects", "delete_pods"} <= set(FAULTS.names())
    with pytest.raises(ValueError):
        make_fault("set_image", {"namespace": "x", "name": "y"})  # image missing
    with pytest.raises(ValueError):
        make_fault("set_image", {"namespace": "x", "name": "y", "image": "z", "colour": "red"})
    with pytest.raises(LookupError):
        make_fault("set_image", {"namespace": "demo-shop", "name": "nope", "image": "z"}).inject(TwinCluster.new(1))
