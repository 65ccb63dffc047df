"""Node lifecycle problems: a host agent stopping the kubelet (and the lost-node fix), the
problems' registration, and the pressure check. One deployed run; the full check protocol of each
problem runs with the registry-wide tests."""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_disk_and_metastable import service_calls_succeed
from sregym.oracles.checks_node_lifecycle import node_repair_holds, nodes_without_pressure, pods_not_stranded
from sregym.oracles.mechanisms import MECHANISMS, RELATED
from sregym.problems.registry import PROBLEMS
from support.problem_runs import deployed

NS = "hotel-reservation"
STOPPED = "hotel-reservation/kubelet-stopped-by-host-agent-v1"
PRESSURE = "hotel-reservation/node-memory-pressure-evictions-v1"
CLOCK = "hotel-reservation/node-clock-set-back-v1"


def _ready(cluster: TwinCluster, node: str) -> str:
    obj = cluster.get("Node", None, node)
    return {c["type"]: c["status"] for c in obj["status"]["conditions"]}["Ready"]


def test_problems_are_registered_outside_every_suite() -> None:
    for pid, mechanism in ((STOPPED, "node_failure"), (PRESSURE, "memory_pressure"), (CLOCK, "clock_skew")):
        problem = PROBLEMS.get(pid)
        assert problem.tags.suites == ()
        assert problem.ground_truth.mechanism == mechanism in MECHANISMS
        assert problem.card
    assert "clock_skew" in RELATED["node_failure"]


def test_a_stopped_kubelet_strands_pods_until_the_node_is_given_up_and_the_agent_removed() -> None:
    cluster, run = deployed(STOPPED)
    ctx = run.check_context()
    assert pods_not_stranded(ctx)[0]
    run.inject()
    node = run.faults[0][1]["node"]
    agent = cluster.list("Pod", "kube-system", label_selector="app.kubernetes.io/name=node-maintenance-agent")[0]
    assert agent["spec"]["nodeName"] == node == "kind-worker"
    run.advance(90)
    assert _ready(cluster, node) == "Unknown"
    ok, detail = pods_not_stranded(ctx)
    assert not ok and "stranded on not-Ready node(s) kind-worker" in detail
    assert not service_calls_succeed(ctx, service="geo")[0]
    run.apply_gold()
    run.advance(120)
    assert pods_not_stranded(ctx)[0]
    assert service_calls_succeed(ctx, service="geo")[0]
    assert cluster.get("DaemonSet", "kube-system", "node-maintenance-agent") is None
    ok, detail = node_repair_holds(ctx, hold_s=90.0)
    assert ok, detail
    assert _ready(cluster, node) == "True"


def test_nodes_without_pressure_reads_the_conditions() -> None:
    cluster = TwinCluster.new(1)
    ctx = CheckContext(cluster=cluster, namespace=NS)
    cluster.advance(5)
    assert nodes_without_pressure(ctx) == (True, "no node reports MemoryPressure")
    cluster.twin.store.mutate("Node", None, "kind-worker", lambda obj: [
        c.update(status="True") for c in obj["status"]["conditions"] if c["type"] == "MemoryPressure"], status=True)
    assert nodes_without_pressure(ctx) == (False, "nodes under pressure: kind-worker (MemoryPressure)")
