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
