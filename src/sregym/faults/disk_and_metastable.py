"""Faults below and around the application: a disk with failing sectors, and a load burst.

`disk_sector_errors` creates a device-scoped IOChaos experiment in the hidden chaos-mesh
namespace (`sregym.twin.chaos.devices`): the sectors of the disk behind the selected pod's
volume fail reads and writes, and they stay bad for every pod that mounts that disk later —
recreating the database pod does not help, moving the data to another volume does. Recover
deletes the experiment (the disk is "replaced").

`scale_burst` is the trigger of a metastable failure: the hidden load generator is scaled up by a
factor for a few seconds and back, the way a marketing push or a retrying client fleet briefly
multiplies traffic. It first waits for the listed workloads to finish rolling out, so the
trigger hits the system in the state the other faults put it in. Both are Kubernetes writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE, ChaosExperiment, ExperimentParams
from sregym.twin.chaos.devices import DEVICE_SCOPE, SCOPE_ANNOTATION

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 1.0


# ----------------------------------------------------------------------- disk sectors
class DiskSectorErrorsParams(ExperimentParams):
    name: str = "volume-health"  # the experiment's name (hidden namespace)
    volume_path: str
    errno: int = 5  # EIO
    percent: int = 100
    methods: tuple[str, ...] = ("READ", "WRITE")


def sector_errors_chaos(p: DiskSectorErrorsParams) -> dict[str, Any]:
    """The IOChaos object: one pod's volume, every file under it, on its disk."""
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "IOChaos",
            "metadata": {"name": p.name, "namespace": CHAOS_NAMESPACE,
                         "annotations": {SCOPE_ANNOTATION: DEVICE_SCOPE}},
            "spec": {"action": "fault", "mode": "one", "volumePath": p.volume_path,
                     "path": p.volume_path.rstrip("/") + "/**", "errno": p.errno, "percent": p.percent,
                     "methods": list(p.methods),
                     "selector": {"namespaces": [p.namespace], "labelSelectors": dict(p.labels)}}}


@fault
class DiskSectorErrors(ChaosExperiment):
    """Latent sector errors on the disk behind a pod's volume (persist across pod restarts)."""

    name = "disk_sector_errors"
    twin_only = "device-scoped IOChaos (a disk's sectors or latency) is a twin extension of Chaos Mesh"
    Params = DiskSectorErrorsParams
    kind = "IOChaos"

    def manifest(self) -> dict[str, Any]:
        assert isinstance(self.params, DiskSectorErrorsParams)
        return sector_errors_chaos(self.params)


# --------------------------------------------------------------------------- bursts
class ScaleBurstParams(FaultParams):
    namespace: str = "sregym-system"
    name: str = "sregym-loadgen"
    multiplier: int = 5
    seconds: float = 10.0
    # "namespace/deployment" that must be rolled out before the burst.
    wait_rollout: tuple[str, ...] = ()
    wait_timeout_s: float = 180.0
    start_timeout_s: float = 60.0


def rolled_out(obj: dict[str, Any] | None) -> bool:
    """Whether a Deployment finished its rollout (every replica updated and ready, no old one left)."""
    if obj is None:
        return False
    spec, status, meta = obj.get("spec") or {}, obj.get("status") or {}, obj.get("metadata") or {}
    replicas = int(spec.get("replicas", 1) or 0)
    return (int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)
            and int(status.get("updatedReplicas") or 0) >= replicas
            and int(status.get("readyReplicas") or 0) >= replicas
            and int(status.get("replicas") or 0) <= replicas)


def _pods(cluster: Cluster, namespace: str, deploy: dict[str, Any]) -> list[dict[str, Any]]:
    labels = ((deploy.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return sorted(cluster.list("Pod", namespace, label_selector=selector), key=lambda p: p["metadata"]["name"])


def _running_pods(cluster: Cluster, namespace: str, deploy: dict[str, Any]) -> int:
    return sum(1 for p in _pods(cluster, namespace, deploy)
               if (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"))


def burst(cluster: Cluster, namespace: str, name: str, multiplier: int, seconds: float,
          start_timeout_s: float = 60.0) -> int:
    """Scale a Deployment ×`multiplier`, keep it there `seconds` once the extra pods run, then
    scale it back. Returns the replicas it returned to."""
    deploy = cluster.get("Deployment", namespace, name)
    if deploy is None:
        raise LookupError(f"Deployment {namespace}/{name} does not exist")
    base = int((deploy.get("spec") or {}).get("replicas", 1) or 0)
    target = base * multiplier
    cluster.patch("Deployment", namespace, name, {"spec": {"replicas": target}}, patch_type="merge")
    waited = 0.0
    while _running_pods(cluster, namespace, deploy) < target and waited < start_timeout_s:
        cluster.advance(POLL_S)
        waited += POLL_S
    cluster.advance(seconds)
    cluster.patch("Deployment", namespace, name, {"spec": {"replicas": base}}, patch_type="merge")
    # The generator's shell (PID 1) ignores SIGTERM and would run out its 30 s grace period:
    # stop the extra generators at once, as `kubectl delete pod --grace-period=0 --force` does.
    cluster.advance(POLL_S)
    for pod in _pods(cluster, namespace, deploy):
        if pod["metadata"].get("deletionTimestamp"):
            cluster.delete("Pod", namespace, pod["metadata"]["name"], grace_period=0)
    return base


@fault
class ScaleBurst(Fault):
    """A short traffic burst: the load generator scaled up for `seconds`, then back."""

    name = "scale_burst"
    Params = ScaleBurstParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ScaleBurstParams)
        for ref in p.wait_rollout:
            namespace, _, name = ref.partition("/")
            waited = 0.0
            while not rolled_out(cluster.get("Deployment", namespace, name)):
                if waited >= p.wait_timeout_s:
                    raise RuntimeError(f"cannot inject: Deployment {ref} not rolled out after {waited:.0f}s")
                cluster.advance(POLL_S)
                waited += POLL_S
        base = burst(cluster, p.namespace, p.name, p.multiplier, p.seconds, p.start_timeout_s)
        return {"replicas": base}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ScaleBurstParams)
        deploy = cluster.get("Deployment", p.namespace, p.name)
        replicas = state.get("replicas")
        if deploy is not None and replicas is not None and (deploy.get("spec") or {}).get("replicas") != replicas:
            cluster.patch("Deployment", p.namespace, p.name, {"spec": {"replicas": replicas}}, patch_type="merge")
