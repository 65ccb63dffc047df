"""An offset reset as an SRE types it, with the real kubectl against the served Astronomy Shop twin
(the unreadable-record problem): `kubectl exec` of `kafka-consumer-groups.sh --reset-offsets` is
refused while fraud-detection is a member, still refused right after `kubectl scale --replicas=0`
(its loop never closes the consumer, so its member lasts the session timeout), and works once
`--describe --state` says Empty; scaled back, the group keeps up. The gold's kubectl rendering
repeats its watching command for the wait."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.kube import serve_twin

from sregym.env.gold_commands import action_to_command, wait_repeats
from sregym.problems.model import Action
from sregym.problems.registry import get_problem
from support.problem_runs import deployed

NS = "astronomy-shop"
PROBLEM = "astronomy-shop/kafka-unreadable-record-v1"
GROUPS = ("/opt/kafka/bin/kafka-consumer-groups.sh", "--bootstrap-server", "localhost:9092")
RESET = ("--reset-offsets", "--group", "fraud-detection", "--topic", "orders:0", "--shift-by", "1", "--execute")
REFUSED = ("Error: Assignments can only be reset if the group 'fraud-detection' is inactive, but the current "
           "state is Stable.")


@pytest.fixture
def blocked(tmp_path: Path) -> Iterator:
    cluster, run = deployed(PROBLEM)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        harness.call(run.inject)
        harness.advance(60)
        yield run, harness
    finally:
        harness.server.stop()


def _groups(harness, *args: str):
    return harness.kubectl("-n", NS, "exec", "deployment/kafka", "--", *GROUPS, *args)


def _state(harness) -> list[str]:
    out = _groups(harness, "--describe", "--group", "fraud-detection", "--state")
    assert out.returncode == 0, out.stderr
    return next(line for line in out.stdout.splitlines() if line.startswith("fraud-detection ")).split()[-2:]


def _failing(harness, run) -> list[str]:
    return [r.name for r in harness.call(run.must_fix_now) if not r.passed]


def test_reset_refused_while_the_group_is_live_and_done_once_it_is_empty(blocked) -> None:
    run, harness = blocked
    assert _failing(harness, run) == ["consumer_group_keeps_up"]
    refused = _groups(harness, *RESET)
    assert refused.returncode == 0 and REFUSED in refused.stdout.splitlines()  # as the real tool: exit 0
    assert _failing(harness, run) == ["consumer_group_keeps_up"]  # nothing moved

    harness.ok("-n", NS, "scale", "deployment/fraud-detection", "--replicas=0")
    harness.advance(20)
    assert harness.ok("-n", NS, "get", "pods", "-l", "opentelemetry.io/name=fraud-detection", "-o", "name") == ""
    assert _state(harness) == ["Stable", "1"]  # the pod is gone, its member is not
    assert REFUSED in _groups(harness, *RESET).stdout
    harness.advance(30)
    assert _state(harness) == ["Empty", "0"]
    done = _groups(harness, *RESET)
    assert done.returncode == 0 and "Error" not in done.stdout, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1].split()[:3] == ["fraud-detection", "orders", "0"]

    harness.ok("-n", NS, "scale", "deployment/fraud-detection", "--replicas=1")
    harness.advance(60)
    assert _state(harness) == ["Stable", "1"]
    assert _failing(harness, run) == []


def test_gold_waits_between_stopping_and_resetting(tmp_path: Path) -> None:
    gold = get_problem(PROBLEM).gold
    commands = [action_to_command(a, tmp_path, i) for i, a in enumerate(gold) for _ in range(wait_repeats(a, 15.0))]
    assert commands[0].startswith("patch deployment fraud-detection -n astronomy-shop")
    watch = "exec deployment/kafka -n astronomy-shop -- /opt/kafka/bin/kafka-consumer-groups.sh --bootstrap-server " \
            "localhost:9092 --describe --group fraud-detection --state"
    assert commands[1:5] == [watch] * 4  # 60 s at 15 s per tool call
    assert "--reset-offsets" in commands[5] and commands[6].endswith("'{\"spec\":{\"replicas\":1}}'")
    assert wait_repeats(gold[0], 15.0) == 1
    plain = Action(op="wait", seconds=10, namespace=NS)
    assert action_to_command(plain, tmp_path) == "get pods -n astronomy-shop" and wait_repeats(plain, 15.0) == 1
    with pytest.raises(ValueError, match="seconds"):
        Action(op="wait", namespace=NS)
    with pytest.raises(ValueError, match="seconds"):
        Action(op="exec", seconds=5, namespace=NS)
