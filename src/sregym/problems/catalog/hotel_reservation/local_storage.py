"""Hotel Reservation problems in a pod's local ephemeral storage: a workload that fills its own
emptyDir until the kubelet evicts it, again and again.

The builder's docstring is the problem card. The fault is a Kubernetes write with the admin
credential (E4's `patch_objects`: a strategic merge that adds a sidecar and its emptyDir to a
Deployment); the symptoms come from the twin's kubelet (`twin/controllers/storage_eviction.py`):
the emptyDir's usage is counted from what the sidecar writes, and the pod is evicted with the
kubelet's message when it outgrows its `sizeLimit`. The check is `no_recent_eviction`
(`sregym.oracles.checks_local_storage`); the gold solution is a kubectl-equivalent patch.
"""

from __future__ import annotations

from functools import partial

from sregym.problems.builders import deployment_cause, pod_recreation
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
IMPACT = ("unavailable", "fail", "error", "down", "evict", "restart", "flap", "outage", "degraded", "intermittent")

mechanisms({
    "ephemeral_storage": ("ephemeral storage", "ephemeral-storage", "emptydir", "sizelimit", "size limit",
                          "exceeds the limit", "local storage", "evicted", "eviction", "disk usage", "fills",
                          "filling", "capture"),
}, related={"ephemeral_storage": ("disk", "memory_pressure")})

_deploy = partial(deployment_cause, NS)

CAPTURE_SIDECAR = {
    "name": "pcap-debug", "image": "busybox:1.36",
    "command": ["sh", "-c", "while true; do dd if=/dev/urandom of=/captures/geo.pcap bs=1M count=4 oflag=append "
                            "conv=notrunc status=none; sleep 1; done"],
    "volumeMounts": [{"name": "captures", "mountPath": "/captures"}],
}
CAPTURE_VOLUME = {"name": "captures", "emptyDir": {"sizeLimit": "256Mi"}}


@problem
def emptydir_fill_eviction() -> Problem:
    """A debugging sidecar was left in `geo`: `pcap-debug` (busybox) appends a capture file to
    an emptyDir (`captures`, `sizeLimit: 256Mi`) at about 4 MiB/s and never rotates it.

    About a minute after each geo pod starts, the emptyDir outgrows its limit and the kubelet
    evicts the pod: `kubectl get pods` shows a growing list of geo pods `Failed` with reason
    `Evicted` and the message `Usage of EmptyDir volume "captures" exceeds the limit "256Mi". `,
    with a Warning `Evicted` event each time. The ReplicaSet replaces the pod, which starts filling
    again; while a replacement starts, searches that need geo fail. Nodes show no disk pressure:
    this is the pod's own local storage limit. Restarting geo does not help. Fix: remove the
    capture sidecar (and its volume) from geo — or stop it writing without bound.
    """
    return Problem(
        id="hotel-reservation/emptydir-fill-eviction-v1",
        title="geo pods keep getting evicted",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="easy"),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NS, "name": "geo", "patch_type": "strategic",
            "patch": {"spec": {"template": {"spec": {"containers": [CAPTURE_SIDECAR],
                                                     "volumes": [CAPTURE_VOLUME]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("geo"),),
            mechanism="ephemeral_storage",
            detail="the pcap-debug sidecar in geo appends /captures/geo.pcap to the captures emptyDir "
                   "(sizeLimit 256Mi) at ~4 MiB/s; the kubelet evicts each geo pod when the emptyDir exceeds "
                   "its limit",
            detail_keywords=("pcap-debug", "captures", "emptydir", "sizelimit", "256mi", "evicted",
                             "exceeds the limit", "geo.pcap", "sidecar"),
            affected=(_deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="geo's debugging sidecar fills the pod's emptyDir past its sizeLimit, so the kubelet "
                        "evicts every geo pod about a minute after it starts; searches fail while geo restarts."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="no_recent_eviction", params={"deployment": "geo", "within_s": 240.0}),),
            durability=(pod_recreation("geo"),)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="geo", patch={"spec": {"template": {"spec": {
            "containers": [{"name": "pcap-debug", "$patch": "delete"}],
            "volumes": [{"name": "captures", "$patch": "delete"}]}}}}),),
    )
