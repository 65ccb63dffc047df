"""Mitigation checks on Kafka consumers, read the way an SRE reads them: `kafka-consumer-groups.sh
--describe` run in the broker's pod. A group keeps up when it has live members and every
partition it reads is within a few records of the log end; a group stuck on a record (its
committed offset frozen, lag growing with every order) or without members fails. Any fix that
makes the consumers progress passes: skipping the record, a consumer that tolerates it.
"""

from __future__ import annotations

from sregym.oracles.checks import CheckContext, check

BIN = "/opt/kafka/bin/"


def _broker_pod(ctx: CheckContext, ns: str, deployment: str) -> str | None:
    obj = ctx.cluster.get("Deployment", ns, deployment)
    if obj is None:
        return None
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    text = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    for pod in sorted(ctx.cluster.list("Pod", ns, label_selector=text), key=lambda p: p["metadata"]["name"]):
        if (pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp"):
            return str(pod["metadata"]["name"])
    return None


@check("consumer_group_keeps_up")
def consumer_group_keeps_up(ctx: CheckContext, *, group: str, topic: str = "orders", max_lag: int = 2,
                            broker: str = "kafka", port: int = 9092,
                            namespace: str | None = None) -> tuple[bool, str]:
    """`group` has active members and its lag on every partition of `topic` is at most `max_lag`."""
    ns = namespace or ctx.namespace
    pod = _broker_pod(ctx, ns, broker)
    if pod is None:
        return False, f"Deployment {broker} has no running pod to ask"
    result = ctx.cluster.exec(ns, pod, [BIN + "kafka-consumer-groups.sh", "--bootstrap-server",
                                        f"localhost:{port}", "--describe", "--group", group])
    if result.exit_code != 0:
        return False, f"kafka-consumer-groups.sh failed ({result.exit_code}): {result.stderr.strip()[:200]}"
    if "has no active members" in result.stdout:
        return False, f"consumer group {group} has no active members"
    lags: dict[str, int] = {}
    for line in result.stdout.splitlines():
        cells = line.split()
        if len(cells) >= 6 and cells[0] == group and cells[1] == topic and cells[2].isdigit():
            if not cells[5].isdigit():
                return False, f"{group} has no committed offset on {topic}-{cells[2]}"
            lags[f"{topic}-{cells[2]}"] = int(cells[5])
    if not lags:
        return False, f"consumer group {group} reads no partition of {topic}"
    behind = {k: v for k, v in sorted(lags.items()) if v > max_lag}
    if behind:
        return False, f"{group} lags on " + ", ".join(f"{k} by {v}" for k, v in behind.items())
    return True, f"{group} keeps up on {topic} (lag " + ", ".join(f"{k}={v}" for k, v in lags.items()) + ")"
