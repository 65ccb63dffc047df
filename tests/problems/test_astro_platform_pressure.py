"""Astronomy Shop platform-pressure problems, driven with the real kubectl against the served twin:
the producer flood takes the Kafka broker's heap (its log shows the JVM's OutOfMemoryError, every
client loses it while the pod stays Running), a broker restart alone does not fix it, removing the
producer does. (`sregym check` of each problem runs in tests/problems/test_check_protocol.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.kube import serve_twin

from sregym.problems.registry import get_problem
from sregym.twin.datastores.kafka_heap import APPEND_BYTES_PER_S, MIB, RESTING_SHARE, BrokerHeap
from support.problem_runs import deployed

NS = "astronomy-shop"
FLOOD = "astronomy-shop/kafka-producer-flood-v1"
OOM = "java.lang.OutOfMemoryError: Java heap space"
PERF = "/opt/kafka/bin/kafka-producer-perf-test.sh"


@pytest.fixture
def flood(tmp_path: Path) -> Iterator:
    cluster, run = deployed(FLOOD)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        yield cluster, run, harness
    finally:
        harness.server.stop()


def _pod(harness, label: str) -> str:
    out = harness.ok("-n", NS, "get", "pods", "-l", f"opentelemetry.io/name={label}",
                     "--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].metadata.name}")
    return sorted(out.split())[-1]


def _failing(harness, run) -> list[str]:
    return [r.name for r in harness.call(run.must_fix_now) if not r.passed]


def test_flood_exhausts_the_broker_heap_restart_alone_fails_removing_the_producer_fixes(flood) -> None:
    _cluster, run, harness = flood
    assert _failing(harness, run) == []
    harness.call(run.inject)
    harness.advance(60)
    kafka = _pod(harness, "kafka")
    logs = harness.ok("-n", NS, "logs", kafka)
    assert OOM in logs and "Uncaught exception in thread 'data-plane-kafka-network-thread-1" in logs
    assert harness.ok("-n", NS, "get", "pod", kafka, "-o", "jsonpath={.status.phase}") == "Running"
    described = harness.kubectl("-n", NS, "exec", kafka, "--", "/opt/kafka/bin/kafka-consumer-groups.sh",
                                "--bootstrap-server", "localhost:9092", "--describe", "--group", "accounting")
    assert described.returncode == 1 and "Timed out waiting for a node assignment" in described.stdout
    assert sorted(_failing(harness, run)) == ["consumer_group_keeps_up", "consumer_group_keeps_up"]

    # The sidecar keeps sending; its batches expire once delivery.timeout.ms has passed.
    harness.advance(130)
    checkout = _pod(harness, "checkout")
    sidecar = harness.ok("-n", NS, "logs", checkout, "-c", "order-events-producer")
    assert "records sent" in sidecar and "TimeoutException: Expiring" in sidecar

    # A restart gives a fresh heap, and the flood fills it again.
    harness.ok("-n", NS, "rollout", "restart", "deployment/kafka")
    harness.advance(90)
    restarted = _pod(harness, "kafka")
    assert restarted != kafka
    assert OOM in harness.ok("-n", NS, "logs", restarted)
    assert _failing(harness, run)

    harness.call(run.apply_gold)
    harness.advance(150)
    fixed = _pod(harness, "kafka")
    assert OOM not in harness.ok("-n", NS, "logs", fixed)
    assert _failing(harness, run) == []


def test_broker_refuses_records_above_message_max_bytes_and_the_client_above_max_request_size(flood) -> None:
    _cluster, _run, harness = flood
    kafka = _pod(harness, "kafka")
    base = ["-n", NS, "exec", kafka, "--", PERF, "--topic", "bulk", "--num-records", "3", "--throughput", "-1"]
    too_big = harness.kubectl(*base, "--record-size", "2000000", "--producer-props",
                              "bootstrap.servers=localhost:9092", "max.request.size=20971520")
    assert too_big.returncode == 1
    assert "RecordTooLargeException: The request included a message larger than the max message size" in too_big.stderr
    client_side = harness.kubectl(*base, "--record-size", "2000000", "--producer-props",
                                  "bootstrap.servers=localhost:9092")
    assert client_side.returncode == 1 and "value of the max.request.size configuration" in client_side.stderr
    small = harness.kubectl(*base, "--record-size", "1000", "--producer-props", "bootstrap.servers=localhost:9092")
    assert small.returncode == 0
    assert OOM not in harness.ok("-n", NS, "logs", kafka)


def test_heap_backlog_grows_only_above_the_append_rate() -> None:
    cap = 400 * MIB
    steady = BrokerHeap(cap)
    assert all(steady.receive(float(t), APPEND_BYTES_PER_S * 0.9) for t in range(600))
    flood = BrokerHeap(cap)
    ok = [flood.receive(float(t), APPEND_BYTES_PER_S + 50 * MIB) for t in range(20)]
    first_failure = ok.index(False)
    # The backlog after the k-th second is one append-second plus (k + 1) x 50 MiB; 260 MiB are free.
    assert cap * (1 - RESTING_SHARE) == 260 * MIB
    assert first_failure == 3
    assert flood.exhausted and not any(ok[first_failure:])
    assert not flood.receive(100.0, 1.0)  # exhausted for the life of the process


def test_flood_problem_names_checkout_and_tags_the_sregym_id() -> None:
    problem = get_problem(FLOOD)
    assert [(rc.entity.kind, rc.entity.name) for rc in problem.ground_truth.root_causes] == [("Deployment", "checkout")]
    assert "sregym:kafka_producer_leak" in problem.tags.sources
    assert not any(w in problem.title.lower() for w in ("fault", "inject", "flood", "leak", "sidecar"))


# ----------------------------------------------------------------------- kube-proxy balancing
BALANCE = "astronomy-shop/kube-proxy-uneven-balancing-v1"


def test_split_shares_follow_the_rule_probabilities() -> None:
    from sregym.twin.dataplane.kube_proxy_modes import even, fixed_half

    assert even(4) == [0.25] * 4
    assert fixed_half(5) == [0.5, 0.25, 0.125, 0.0625, 0.0625]
    assert fixed_half(1) == [1.0] and sum(fixed_half(7)) == pytest.approx(1.0)


@pytest.fixture
def balance(tmp_path: Path) -> Iterator:
    cluster, run = deployed(BALANCE)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        yield cluster, run, harness
    finally:
        harness.server.stop()


def _frontend_cpu(harness) -> list[float]:
    out = harness.ok("-n", NS, "top", "pods", "-l", "opentelemetry.io/name=frontend", "--no-headers")
    return sorted((float(line.split()[1].rstrip("m")) for line in out.splitlines() if line.strip()), reverse=True)


def test_custom_kube_proxy_build_sends_one_frontend_pod_most_traffic_until_the_upstream_image_is_back(balance) -> None:
    _cluster, run, harness = balance
    harness.call(run.inject)
    harness.advance(120)
    image = harness.ok("-n", "kube-system", "get", "ds", "kube-proxy", "-o",
                       "jsonpath={.spec.template.spec.containers[0].image}")
    assert image == "ghcr.io/platform-netops/kube-proxy:v1.32.2-np1"
    ready = harness.ok("-n", NS, "get", "deploy", "frontend", "-o", "jsonpath={.status.readyReplicas}")
    assert ready == "5"
    cpu = _frontend_cpu(harness)
    assert len(cpu) == 5 and cpu[0] >= 14 and cpu[-1] <= 5  # the hot pod at its 15m limit, the last nearly idle
    assert [r.passed for r in harness.call(run.must_fix_now)] == [False]

    harness.ok("-n", "kube-system", "set", "image", "daemonset/kube-proxy",
               "kube-proxy=registry.k8s.io/kube-proxy:v1.32.2")
    harness.advance(150)
    cpu = _frontend_cpu(harness)
    assert max(cpu) - min(cpu) <= 2  # an even fifth each
    assert [r.passed for r in harness.call(run.must_fix_now)] == [True]


def test_imbalance_problem_names_the_daemonset_and_tags_the_sregym_id() -> None:
    problem = get_problem(BALANCE)
    assert [(rc.entity.kind, rc.entity.namespace, rc.entity.name) for rc in problem.ground_truth.root_causes] == \
        [("DaemonSet", "kube-system", "kube-proxy")]
    assert "sregym:workload_imbalance" in problem.tags.sources
    assert not any(w in problem.title.lower() for w in ("fault", "inject", "kube-proxy", "imbalance"))
