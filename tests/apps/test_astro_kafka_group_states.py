"""The Kafka coordinator's group states on the Astronomy Shop twin, read with the broker image's
`kafka-consumer-groups.sh` as an SRE would: an offset reset of a group that still has members is
refused (exit 0, the coordinator's error, no rows) and works once the group is Empty; accounting
(.NET, `Close()` on shutdown) leaves its group at once when scaled to 0, fraud-detection (a JVM
loop that never closes its consumer) and a SIGKILLed consumer stay members until the session
timeout; a rejoining consumer takes the group through PreparingRebalance to Stable."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401 - registers the kafka tools
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec
from support.astro_twin import warm_astro_twin

NS = "astronomy-shop"
GROUPS = "/opt/kafka/bin/kafka-consumer-groups.sh"
REFUSED = "Error: Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."


@pytest.fixture(scope="module")
def shop() -> Twin:
    return warm_astro_twin(seed=5, advance_s=90)


def _pods(twin: Twin, prefix: str) -> list[dict[str, Any]]:
    return [p for p in twin.list("pods", NS) if p["metadata"]["name"].startswith(prefix + "-")]


def _groups(twin: Twin, *args: str) -> tuple[int, str, str]:
    kafka = next(p for p in _pods(twin, "kafka") if not p["metadata"].get("deletionTimestamp"))
    result = run_exec(exec_context(twin, kafka, "kafka"), [GROUPS, "--bootstrap-server", "kafka:9092", *args])
    return result.exit_code, result.stdout, result.stderr


def _state(twin: Twin, group: str) -> tuple[str, int]:
    """(STATE, #MEMBERS) from `--describe --state`."""
    code, out, err = _groups(twin, "--describe", "--group", group, "--state")
    assert code == 0, out + err
    cells = next(line for line in out.splitlines() if line.startswith(group + " ")).split()
    return cells[-2], int(cells[-1])


def _committed(twin: Twin, group: str) -> int:
    code, out, err = _groups(twin, "--describe", "--group", group)
    assert code == 0, out + err
    return int(next(line for line in out.splitlines() if line.startswith(group + " ")).split()[3])


def _reset(twin: Twin, group: str, *plan: str) -> tuple[int, str, str]:
    return _groups(twin, "--reset-offsets", "--group", group, "--topic", "orders", *plan)


def _scale(twin: Twin, name: str, replicas: int) -> None:
    twin.patch("Deployment", NS, name, {"spec": {"replicas": replicas}})


def test_a_live_group_refuses_a_reset_until_it_is_empty(shop: Twin) -> None:
    assert _state(shop, "fraud-detection") == ("Stable", 1)
    before = _committed(shop, "fraud-detection")
    code, out, err = _reset(shop, "fraud-detection", "--to-earliest", "--execute")
    assert code == 0, err  # the real tool reports the refusal and still exits 0
    assert REFUSED.format(group="fraud-detection", state="Stable") in out.splitlines()
    assert out.rstrip().splitlines()[-1].split() == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]  # no rows
    assert _committed(shop, "fraud-detection") >= before > 0  # nothing was reset
    code, out, _ = _reset(shop, "fraud-detection", "--to-earliest", "--dry-run")
    assert code == 0 and REFUSED.format(group="fraud-detection", state="Stable") in out  # a dry run too

    # fraud-detection's loop never closes its consumer: stopped, it stays a member for the session timeout.
    _scale(shop, "fraud-detection", 0)
    shop.advance(15)
    assert not _pods(shop, "fraud-detection")
    assert _state(shop, "fraud-detection") == ("Stable", 1)
    assert REFUSED.format(group="fraud-detection", state="Stable") in _reset(shop, "fraud-detection",
                                                                              "--to-earliest", "--execute")[1]
    shop.advance(35)
    assert _state(shop, "fraud-detection") == ("Empty", 0)
    code, out, err = _reset(shop, "fraud-detection", "--to-earliest", "--execute")
    assert code == 0 and "Error" not in out, out + err
    assert out.rstrip().splitlines()[-1].split() == ["fraud-detection", "orders", "0", "0"]
    assert _committed(shop, "fraud-detection") == 0

    # Back at one replica: the group rebalances (the initial delay of an Empty group) and is Stable again.
    _scale(shop, "fraud-detection", 1)
    seen: list[str] = []
    for _ in range(40):
        shop.advance(1)
        state, _members = _state(shop, "fraud-detection")
        if not seen or seen[-1] != state:
            seen.append(state)
        if state == "PreparingRebalance":
            _, _, err = _groups(shop, "--describe", "--group", "fraud-detection")
            assert "Warning: Consumer group 'fraud-detection' is rebalancing." in err
        if state == "Stable":
            break
    assert seen == ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable"], seen
    shop.advance(30)
    assert _committed(shop, "fraud-detection") > 0  # it reprocesses the topic from the start
    kafka = next(p for p in _pods(shop, "kafka"))["metadata"]["name"]
    logs = shop.logs(NS, kafka, "kafka")
    assert "in group fraud-detection has failed, removing it from the group" in logs  # the session expired


def test_a_consumer_that_closes_leaves_at_once_and_a_killed_one_does_not(shop: Twin) -> None:
    assert _state(shop, "accounting") == ("Stable", 1)
    _scale(shop, "accounting", 0)
    shop.advance(5)
    assert _state(shop, "accounting") == ("Empty", 0)  # LeaveGroup on shutdown, no session timeout
    kafka = next(p for p in _pods(shop, "kafka"))["metadata"]["name"]
    assert "has left group accounting through explicit `LeaveGroup`" in shop.logs(NS, kafka, "kafka")
    code, out, err = _groups(shop, "--delete", "--group", "accounting")
    assert code == 0 and "Deletion of requested consumer groups ('accounting') was successful." in out, out + err
    code, out, _ = _groups(shop, "--list")
    assert "accounting" not in out.split()

    _scale(shop, "accounting", 1)
    shop.advance(30)
    assert _state(shop, "accounting") == ("Stable", 1)
    code, out, _ = _groups(shop, "--delete", "--group", "accounting")
    assert "GroupNotEmptyException: The group is not empty." in out
    (pod,) = _pods(shop, "accounting")
    shop.delete("Pod", NS, pod["metadata"]["name"], grace_period=0)  # SIGKILL: no LeaveGroup
    shop.advance(20)
    state, members = _state(shop, "accounting")
    assert members == 2 and state != "Empty"  # the killed member waits for its session to expire
    shop.advance(40)
    assert _state(shop, "accounting") == ("Stable", 1)
