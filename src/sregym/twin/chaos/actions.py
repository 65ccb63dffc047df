"""What applying and recovering one record means, per Chaos Mesh kind and action.

Each `Action` mirrors a `chaosimpl` of Chaos Mesh v2: it lists the record ids a CR targets
(`<ns>/<pod>` for pod-level chaos, `<ns>/<pod>/<container>` for container-level chaos, with the
selector key `.` or `.Target`), and applies / recovers one record, returning the record's new
phase. Pod-level writes go through the store as the controller manager's service account would;
container kills go through the runtime (what chaos-daemon does over the CRI). Effects that the
data plane reads (network, http, dns, io, stress, time) only need the record to be `Injected`:
`ChaosService` answers from the injected records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.chaos.selection import SelectError, apply_mode, candidate_pods, container_names, pod_key
from sregym.twin.chaos.stress_kills import forget
from sregym.twin.node.runtime import runtime_of

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

INJECTED = "Injected"
NOT_INJECTED = "Not Injected"
PAUSE_IMAGE = "gcr.io/google-containers/pause:latest"
MANAGER_USER = "system:serviceaccount:chaos-mesh:chaos-controller-manager"


class ApplyError(Exception):
    """Applying or recovering failed; the message goes into the record's events."""


@dataclass(frozen=True)
class Target:
    id: str
    selector_key: str


def _selected_pods(twin: Twin, obj: dict[str, Any], block: dict[str, Any]) -> list[dict[str, Any]]:
    pods = candidate_pods(twin, block.get("selector"), obj["metadata"].get("namespace", "default"))
    return apply_mode(pods, block.get("mode"), block.get("value"), twin.rng.stream("chaos"))


class Action:
    """Default: pod-level, long-running, effect read by `ChaosService`."""

    container_level = False

    def one_shot(self, obj: dict[str, Any]) -> bool:
        return False

    def targets(self, twin: Twin, obj: dict[str, Any]) -> list[list[Target]]:
        """One list per selector key; an empty list means that selector picked nothing."""
        spec = obj.get("spec") or {}
        pods = _selected_pods(twin, obj, spec)
        if not self.container_level:
            return [[Target(pod_key(p), ".") for p in pods]]
        wanted = spec.get("containerNames")
        return [[Target(f"{pod_key(p)}/{c}", ".") for p in pods for c in container_names(p, wanted)]]

    def apply(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        return INJECTED

    def recover(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        return NOT_INJECTED


class ContainerAction(Action):
    container_level = True


# ---------------------------------------------------------------------------------- PodChaos
class PodChaosAction(Action):
    """pod-kill (delete with gracePeriod), pod-failure (image swapped to pause), container-kill."""

    def _action(self, obj: dict[str, Any]) -> str:
        return (obj.get("spec") or {}).get("action") or "pod-kill"

    def one_shot(self, obj: dict[str, Any]) -> bool:
        return self._action(obj) in ("pod-kill", "container-kill")

    def targets(self, twin: Twin, obj: dict[str, Any]) -> list[list[Target]]:
        spec = obj.get("spec") or {}
        pods = _selected_pods(twin, obj, spec)
        if self._action(obj) == "container-kill":
            wanted = spec.get("containerNames") or []
            if not wanted:
                raise SelectError("the name of container should not be empty on container-kill action")
            return [[Target(f"{pod_key(p)}/{c}", ".") for p in pods for c in container_names(p, wanted)]]
        return [[Target(pod_key(p), ".") for p in pods]]

    def apply(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        action = self._action(obj)
        if action == "pod-kill":
            ns, name = record["id"].split("/", 1)
            if twin.store.peek("Pod", ns, name) is None:
                raise ApplyError(f'pods "{name}" not found')
            grace = int((obj.get("spec") or {}).get("gracePeriod") or 0)
            twin.store.delete("Pod", ns, name, grace_period=grace, user=MANAGER_USER)
            return INJECTED
        if action == "container-kill":
            ns, name, container = record["id"].split("/", 2)
            if not kill_container(twin, ns, name, container):
                raise ApplyError(f"container {container} of pod {ns}/{name} is not running")
            return INJECTED
        if action == "pod-failure":
            ns, name = record["id"].split("/", 1)
            _swap_images(twin, obj, ns, name, inject=True)
            return INJECTED
        raise ApplyError(f"unknown action {action}")

    def recover(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        if self._action(obj) == "pod-failure":
            ns, name = record["id"].split("/", 1)
            if twin.store.peek("Pod", ns, name) is not None:
                _swap_images(twin, obj, ns, name, inject=False)
        return NOT_INJECTED


def image_annotation(obj: dict[str, Any], container: str) -> str:
    """`annotation.GenKeyForImage`: falls back to the container name past 63 characters."""
    spec = obj.get("spec") or {}
    key = f"chaos-mesh-{obj['metadata']['name']}-{spec.get('action', 'pod-failure')}-{container}-image"
    return container if len(key) > 63 else key


def _swap_images(twin: Twin, obj: dict[str, Any], ns: str, name: str, *, inject: bool) -> None:
    """Patch the pod as Chaos Mesh does: every container's and init container's image becomes the
    pause image, the original kept in an annotation. That is all Chaos Mesh does; the kubelet sees
    the changed definitions and restarts the running containers (and native sidecars)."""

    def swap(pod: dict[str, Any]) -> None:
        annotations = pod["metadata"].setdefault("annotations", {})
        spec = pod.get("spec") or {}
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            key = image_annotation(obj, container["name"])
            if inject and key not in annotations:
                annotations[key] = container.get("image", "")
                container["image"] = PAUSE_IMAGE
            elif not inject and key in annotations:
                container["image"] = annotations.pop(key)
        if not annotations:
            pod["metadata"].pop("annotations", None)

    try:
        updated = twin.store.mutate("Pod", ns, name, swap, user=MANAGER_USER)
    except ApiError as exc:
        # The API server refused the pod update (Pod Security Admission rejects an image change
        # on a pod that violates the namespace's enforced level): Chaos Mesh reports it and retries.
        raise ApplyError(str(exc)) from exc
    if updated is None:
        raise ApplyError(f'pods "{name}" not found')


def kill_container(twin: Twin, ns: str, pod: str, container: str) -> bool:
    """SIGKILL the container's process now (chaos-daemon over the CRI); the kubelet sees it exit
    with 137 on its next sync, which this forces for the current tick."""
    runtime = runtime_of(twin)
    pod_runtime = runtime.pod(ns, pod)
    record = pod_runtime.containers.get(container) if pod_runtime is not None else None
    instance = record.current if record is not None else None
    if pod_runtime is None or instance is None or not instance.running:
        return False
    now = twin.clock.now
    instance.kill_reason = "chaos"
    instance.stopping_until = now
    instance.stop_exit_code = 137
    pod_runtime.next_wake = now
    return True


# ------------------------------------------------------------------------------ NetworkChaos
class NetworkChaosAction(Action):
    """Selected pods under `.`, the `target` block's pods under `.Target`."""

    def targets(self, twin: Twin, obj: dict[str, Any]) -> list[list[Target]]:
        spec = obj.get("spec") or {}
        out = [[Target(pod_key(p), ".") for p in _selected_pods(twin, obj, spec)]]
        if spec.get("target"):
            out.append([Target(pod_key(p), ".Target") for p in _selected_pods(twin, obj, spec["target"])])
        return out


# ------------------------------------------------------------------------------- StressChaos
class StressChaosAction(ContainerAction):
    """Stressors start inside the running container instance; they die with it."""

    def apply(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        ns, name, container = record["id"].split("/", 2)
        instance = runtime_of(twin).instance(ns, name, container)
        if instance is None or not instance.running:
            raise ApplyError(f"container {container} of pod {ns}/{name} is not running")
        service = twin.services.chaos
        service.ensure_usage_hook()
        service.stress_instances[(obj["metadata"].get("uid", ""), f"{ns}/{name}", container)] = instance.container_id
        forget(service, (obj["metadata"].get("uid", ""), f"{ns}/{name}", container))
        return INJECTED

    def recover(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        ns, name, container = record["id"].split("/", 2)
        twin.services.chaos.stress_instances.pop((obj["metadata"].get("uid", ""), f"{ns}/{name}", container), None)
        return NOT_INJECTED


ACTIONS: dict[str, Action] = {
    "PodChaos": PodChaosAction(),
    "NetworkChaos": NetworkChaosAction(),
    "StressChaos": StressChaosAction(),
    "IOChaos": ContainerAction(),
    "KernelChaos": ContainerAction(),
    "TimeChaos": ContainerAction(),
    "DNSChaos": Action(),
    "HTTPChaos": Action(),
}
