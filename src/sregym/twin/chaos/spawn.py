"""What Chaos Mesh's Schedule and Workflow controllers share: the embedded experiment blocks
(`spec.networkChaos`, `spec.podChaos` ...), generated names, owner references and whether a
spawned experiment has finished.

The embedded block of kind `NetworkChaos` is `networkChaos` (`EmbedChaos` in api/v1alpha1);
spawned objects get `GenerateName`-style names (`<prefix><5 characters>`, from the alphabet of
apiserver's SimpleNameGenerator), drawn from the twin's `chaos-names` stream so runs repeat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.actions import ACTIONS, INJECTED, NOT_INJECTED
from sregym.twin.chaos.goduration import parse_duration
from sregym.twin.clock import parse_time

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

API_VERSION = "chaos-mesh.org/v1alpha1"
GROUP = "chaos-mesh.org"
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
EMBEDDED = {"PodChaos": "podChaos", "NetworkChaos": "networkChaos", "StressChaos": "stressChaos",
            "IOChaos": "ioChaos", "TimeChaos": "timeChaos", "DNSChaos": "dnsChaos", "HTTPChaos": "httpChaos",
            "JVMChaos": "jvmChaos"}
LABEL_CONTROLLED_BY = "chaos-mesh.org/controlled-by"
LABEL_WORKFLOW = "chaos-mesh.org/workflow"


def generate_name(twin: Twin, prefix: str) -> str:
    rng = twin.rng.stream("chaos-names")
    return prefix + "".join(NAME_ALPHABET[rng.randrange(len(NAME_ALPHABET))] for _ in range(5))


def owner_reference(obj: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": obj.get("apiVersion", API_VERSION), "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"].get("uid", ""), "controller": True, "blockOwnerDeletion": True}


def object_reference(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {"apiVersion": obj.get("apiVersion", API_VERSION), "kind": obj["kind"], "name": meta["name"],
            "namespace": meta.get("namespace", ""), "resourceVersion": meta.get("resourceVersion", ""),
            "uid": meta.get("uid", "")}


def embedded_spec(block: dict[str, Any], kind: str) -> dict[str, Any] | None:
    spec = block.get(EMBEDDED.get(kind, ""))
    return dict(spec) if isinstance(spec, dict) else None


def duration_left(twin: Twin, obj: dict[str, Any]) -> float | None:
    """Seconds until an experiment's `duration` runs out (<= 0: exceeded); None without one."""
    duration = parse_duration((obj.get("spec") or {}).get("duration"))
    created = obj["metadata"].get("creationTimestamp")
    if duration is None or not created:
        return None
    return parse_time(created) + duration - twin.clock.now


def experiment_finished(twin: Twin, obj: dict[str, Any]) -> bool:
    """`IsChaosFinished`: a one-shot experiment once every record was injected, any other once
    it was told to stop and every record is recovered."""
    if obj.get("kind") == "Workflow":
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Accomplished" and c.get("status") == "True" for c in conditions)
    experiment = (obj.get("status") or {}).get("experiment") or {}
    records = experiment.get("containerRecords") or []
    action = ACTIONS.get(obj.get("kind", ""))
    if action is not None and action.one_shot(obj):
        return bool(records) and all(r.get("phase") == INJECTED for r in records)
    left = duration_left(twin, obj)
    stopped = experiment.get("desiredPhase") == "Stop" or (left is not None and left <= 0)
    return stopped and all(r.get("phase") == NOT_INJECTED for r in records)
