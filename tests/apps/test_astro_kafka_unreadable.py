"""A record fraud-detection cannot deserialize, on the Astronomy Shop twin: a text line produced
to `orders` with the image's console producer blocks fraud-detection's partition at that offset
(its committed offset freezes, its lag grows with every order, it logs the same failure at the
same offset again and again, its pod stays Running), accounting keeps up, and moving the group
one record past it with `kafka-consumer-groups.sh --reset-offsets --shift-by 1 --execute` lets
it drain the backlog -- once fraud-detection is scaled to 0 and its group is Empty (a live group
is refused). A dry run changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401 - registers the kafka tools
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec
from support.astro_twin import warm_astro_twin

NS = "astronomy-shop"
BIN = "/opt/kafka/bin/"
FAILURE = "Error processing record orders-0 offset {offset}, retrying: com.google.protobuf." \
          "InvalidProtocolBufferException"


@pytest.fixture(scope="module")
def shop() -> Twin:
    return warm_astro_twin(seed=11, advance_s=120)


def _pod(twin: Twin, prefix: str) -> dict[str, Any]:
    return next(p for p in twin.list("pods", NS)
                if p["metadata"]["name"].startswith(prefix + "-") and not p["metadata"].get("deletionTimestamp"))


def _kafka(twin: Twin, *args: str, stdin: str = "") -> tuple[int, str, str]:
    result = run_exec(exec_context(twin, _pod(twin, "kafka"), "kafka"), [BIN + args[0], *args[1:]], stdin)
    return result.exit_code, result.stdout, result.stderr


def _row(twin: Twin, group: str) -> list[str]:
    """The group's `--describe` row for orders-0: GROUP TOPIC PARTITION CURRENT END LAG ..."""
    code, out, err = _kafka(twin, "kafka-consumer-groups.sh", "--bootstrap-server", "kafka:9092", "--describe",
                            "--group", group)
    assert code == 0, out + err
    return next(line for line in out.splitlines() if line.startswith(group + " ")).split()


def _reset(twin: Twin, *plan: str) -> tuple[int, str, str]:
    return _kafka(twin, "kafka-consumer-groups.sh", "--bootstrap-server", "kafka:9092", "--reset-offsets",
                  "--group", "fraud-detection", "--topic", "orders:0", *plan)


def test_unreadable_record_blocks_fraud_detection_until_skipped(shop: Twin) -> None:
    end = int(_row(shop, "fraud-detection")[4])
    code, _, err = _kafka(shop, "kafka-console-producer.sh", "--bootstrap-server", "kafka:9092", "--topic", "orders",
                          stdin="not-an-order\n")
    assert code == 0, err
    poison = end  # the text line is the next record of the single partition
    shop.advance(60)
    first = _row(shop, "fraud-detection")
    shop.advance(60)
    second = _row(shop, "fraud-detection")
    assert int(first[3]) == int(second[3]) == poison  # committed offset frozen at the record
    assert int(second[5]) > int(first[5]) >= 1  # lag grows with every order behind it
    accounting = _row(shop, "accounting")
    assert int(accounting[5]) <= 1 and int(accounting[3]) > poison  # the other group moved on
    pod = _pod(shop, "fraud-detection")
    assert pod["status"]["phase"] == "Running"
    logs = shop.logs(NS, pod["metadata"]["name"], "fraud-detection")
    assert logs.count(FAILURE.format(offset=poison)) >= 6  # the same failure on every retry

    code, out, _ = _reset(shop, "--shift-by", "1", "--execute")  # the group is live: the coordinator refuses
    assert code == 0 and "Error: Assignments can only be reset if the group 'fraud-detection' is inactive, but " \
                         "the current state is Stable." in out
    assert int(_row(shop, "fraud-detection")[3]) == poison
    shop.patch("Deployment", NS, "fraud-detection", {"spec": {"replicas": 0}})
    shop.advance(60)  # its loop never closes the consumer: the member goes at the session timeout

    code, out, _ = _reset(shop, "--shift-by", "1")  # no --execute: a dry run with the CLI's warning
    assert code == 0 and out.startswith("WARN: No action will be performed as the --execute option is missing.")
    assert out.split("\n")[-2].split() == ["fraud-detection", "orders", "0", str(poison + 1)]
    assert int(_row(shop, "fraud-detection")[3]) == poison
    code, _, err = _reset(shop, "--to-offset")  # a plan without its value
    assert code == 1 and "takes exactly one of these options" in err

    code, out, err = _reset(shop, "--shift-by", "1", "--execute")
    assert code == 0 and "Error" not in out, err
    assert out.split("\n")[-2].split() == ["fraud-detection", "orders", "0", str(poison + 1)]
    shop.patch("Deployment", NS, "fraud-detection", {"spec": {"replicas": 1}})
    shop.advance(60)
    row = _row(shop, "fraud-detection")
    assert int(row[3]) > poison + 1 and int(row[5]) <= 1  # it drained the backlog behind the record
    pod = _pod(shop, "fraud-detection")
    assert FAILURE.format(offset=poison) not in shop.logs(NS, pod["metadata"]["name"], "fraud-detection")
