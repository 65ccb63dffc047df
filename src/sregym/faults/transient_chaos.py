"""A Chaos Mesh experiment that runs for a while and ends: the trigger of a metastable failure
whose cause is short — a few seconds of extra network latency, a CPU-hungry neighbour process.

`transient_chaos` first waits for the listed workloads to finish rolling out (so the trigger
hits the system in the state the other faults put it in), then creates the experiment (any
kind: `NetworkChaos` delay, `StressChaos`, a `PodChaos` pod kill ...) with a `duration` in Chaos Mesh's hidden
namespace, lets it run out and deletes it. When the fault returns the trigger is gone; whatever
persists is the system's own doing. The metastable durability check
(`oracles/checks_metastable.py`) replays the same experiment with `run_experiment`. Kubernetes
writes only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE
from sregym.faults.disk_and_metastable import POLL_S, rolled_out

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class TransientChaosParams(FaultParams):
    name: str = "latency-shaping"  # the experiment's name (hidden namespace)
    kind: str = "NetworkChaos"
    namespace: str
    labels: dict[str, str]
    # The kind's own fields besides selector/mode/duration: {"action": "delay", "delay": {"latency": "30ms"}}.
    action: dict[str, Any]
    seconds: float = 20.0
    # "namespace/deployment" that must be rolled out before the experiment starts.
    wait_rollout: tuple[str, ...] = ()
    wait_timeout_s: float = 180.0


def experiment_manifest(*, name: str, kind: str, namespace: str, labels: dict[str, str], action: dict[str, Any],
                        seconds: float) -> dict[str, Any]:
    """The experiment on every selected pod for `seconds`."""
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": kind,
            "metadata": {"name": name, "namespace": CHAOS_NAMESPACE},
            "spec": {**action, "mode": "all", "duration": f"{int(seconds)}s",
                     "selector": {"namespaces": [namespace], "labelSelectors": dict(labels)}}}


def wait_rolled_out(cluster: Cluster, refs: tuple[str, ...], timeout_s: float) -> None:
    for ref in refs:
        namespace, _, name = ref.partition("/")
        waited = 0.0
        while not rolled_out(cluster.get("Deployment", namespace, name)):
            if waited >= timeout_s:
                raise RuntimeError(f"cannot inject: Deployment {ref} not rolled out after {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S


def run_experiment(cluster: Cluster, *, name: str, kind: str, namespace: str, labels: dict[str, str],
                   action: dict[str, Any], seconds: float) -> None:
    """Create the experiment, let it run `seconds`, delete it (the trigger is over)."""
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    if not cluster.list("Pod", namespace, label_selector=selector):
        raise LookupError(f"no pod matches {selector} in {namespace}")
    if cluster.get("Namespace", None, CHAOS_NAMESPACE) is None:
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CHAOS_NAMESPACE}})
    delete_and_wait(cluster, kind, name)
    cluster.create(experiment_manifest(name=name, kind=kind, namespace=namespace, labels=labels, action=action,
                                       seconds=seconds))
    cluster.advance(seconds)
    delete_and_wait(cluster, kind, name)


def delete_and_wait(cluster: Cluster, kind: str, name: str, timeout_s: float = 30.0) -> None:
    """Delete the experiment and wait until Chaos Mesh has released its finalizer."""
    delete_if_present(cluster, kind, CHAOS_NAMESPACE, name)
    waited = 0.0
    while cluster.get(kind, CHAOS_NAMESPACE, name) is not None and waited < timeout_s:
        cluster.advance(POLL_S)
        waited += POLL_S


@fault
class TransientChaos(Fault):
    """A Chaos Mesh experiment on a workload's pods that ends by itself (a metastable trigger)."""

    name = "transient_chaos"
    Params = TransientChaosParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, TransientChaosParams)
        wait_rolled_out(cluster, p.wait_rollout, p.wait_timeout_s)
        run_experiment(cluster, name=p.name, kind=p.kind, namespace=p.namespace, labels=p.labels, action=p.action,
                       seconds=p.seconds)
        return {"name": p.name, "kind": p.kind}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        delete_if_present(cluster, str(state.get("kind") or "NetworkChaos"), CHAOS_NAMESPACE,
                          str(state.get("name") or ""))
