"""Astronomy Shop problems fixed by moving a Kafka consumer group's committed offsets, the way the
coordinator allows it: only while the group is inactive.

`kafka-consumer-groups.sh --reset-offsets` on a group that still has members is refused ("...
can only be reset if the group ... is inactive, but the current state is Stable"), so the fix is
four steps: scale the consumer to 0, wait until the group is Empty, reset, scale it back.
fraud-detection's loop never closes its consumer, so its member outlives its pod by the
session timeout (45 s) and the wait is not optional. `reset_gold` writes those steps for any
group; the unreadable-record problem (`app_parity.py`) uses it too.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.model import Action

GROUPS = "/opt/kafka/bin/kafka-consumer-groups.sh"
BOOTSTRAP = ("--bootstrap-server", "localhost:9092")
EMPTY_AFTER_S = 60.0  # the consumer's pod stops at once; its member expires after the 45 s session timeout


def scale(deployment: str, replicas: int) -> Action:
    return Action(op="patch", kind="Deployment", namespace=NAMESPACE, name=deployment,
                  patch={"spec": {"replicas": replicas}})


def groups_command(*args: str) -> Action:
    """`kafka-consumer-groups.sh` run in the broker's pod."""
    return Action(op="exec", kind="Deployment", namespace=NAMESPACE, name="kafka", command=(GROUPS, *BOOTSTRAP, *args))


def reset_gold(deployment: str, group: str, *plan: str, replicas: int = 1) -> tuple[Action, ...]:
    """Stop the group's consumer, wait (watching `--describe --state`) until the group is Empty,
    reset its offsets with `plan`, start the consumer again."""
    watch = groups_command("--describe", "--group", group, "--state")
    return (scale(deployment, 0),
            Action(op="wait", seconds=EMPTY_AFTER_S, kind="Deployment", namespace=NAMESPACE, name="kafka",
                   command=watch.command),
            groups_command("--reset-offsets", "--group", group, *plan, "--execute"),
            scale(deployment, replicas))
