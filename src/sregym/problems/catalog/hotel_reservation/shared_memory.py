"""Hotel Reservation problem in a pod's shared memory: a container that stages more in `/dev/shm`
than the container runtime's 64 MiB default allows (SREGym's dev_shm_exhaustion_hotel_reservation).

The builder's docstring is the problem card. The fault is a Kubernetes write with the admin
credential (`patch_objects`: a thumbnail-cache sidecar added to profile, as a team would ship
it); the symptom comes from the twin: every container gets a 64 MiB `/dev/shm` tmpfs unless a
`medium: Memory` emptyDir is mounted there (`twin/userland/shm.py`), so the sidecar's `dd` stops
with ENOSPC, the shell exits 1 and the kubelet backs it off into CrashLoopBackOff while the
node's disks are nearly empty; the new profile pod never becomes Ready and the rollout stalls.
SREGym ships the same need as a brand-new worker Deployment; here it arrives in an existing
workload so that recovery (the template restored) and the checks (profile rolled out and ready)
stay meaningful: a new worker deleted by recovery would leave nothing to judge. The gold fix
mounts a memory-backed emptyDir at `/dev/shm`, sized above what the sidecar stages; rolling the
sidecar back passes the same check.
"""

from __future__ import annotations

from functools import partial

from sregym.problems.builders import deployment_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
WORKER = "profile"
SIDECAR = "thumbnail-cache"
SCRATCH_MIB = 80  # two 40 MiB buffers: past the 64 MiB default, well inside a 256Mi memory emptyDir

mechanisms({
    "shared_memory": ("/dev/shm", "dev/shm", "shm", "shared memory", "no space left on device", "enospc",
                      "tmpfs", "medium: memory", "medium memory", "64mi", "64 mib", "64m"),
}, related={"shared_memory": ("disk", "oom", "memory_pressure")})

_deploy = partial(deployment_cause, NS)

THUMBNAIL_SIDECAR = {
    "name": SIDECAR, "image": "busybox:1.36",
    "command": ["sh", "-c",
                f"echo 'staging {SCRATCH_MIB} MiB of hotel thumbnails in /dev/shm'; "
                f"dd if=/dev/zero of=/dev/shm/thumbs-0 bs=1M count={SCRATCH_MIB // 2} && "
                f"dd if=/dev/zero of=/dev/shm/thumbs-1 bs=1M count={SCRATCH_MIB // 2} && "
                "echo 'thumbnails staged; serving' && while true; do sleep 30; done"],
    "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "512Mi"}},
}


@problem
def dev_shm_exhaustion() -> Problem:
    """The profile rollout never finishes: the new profile pod restarts again and again
    (CrashLoopBackOff, exit code 1, not Ready) while the old pod keeps serving. The new template
    adds a `thumbnail-cache` sidecar (busybox) that stages 80 MiB of hotel thumbnails in
    `/dev/shm` (two 40 MiB files); its log ends with `dd: error writing '/dev/shm/thumbs-1': No
    space left on device` once 64 MiB are used. The node's disks are nearly empty: `/dev/shm` is the
    container runtime's 64 MiB tmpfs, because the pod template mounts nothing there. Restarting
    does not help. Fix: mount an emptyDir with `medium: Memory` (sizeLimit above 80Mi, e.g.
    256Mi) at `/dev/shm` in the sidecar — or roll the sidecar back.
    """
    return Problem(
        id="hotel-reservation/dev-shm-exhaustion-v1",
        title="the profile rollout does not finish",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="medium", sources=("sregym:dev_shm_exhaustion_hotel_reservation",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NS, "name": WORKER, "patch_type": "strategic",
            "patch": {"spec": {"template": {"spec": {"containers": [THUMBNAIL_SIDECAR]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(WORKER),),
            mechanism="shared_memory",
            detail=f"the {SIDECAR} sidecar added to {WORKER} writes {SCRATCH_MIB} MiB to /dev/shm, but the pod "
                   "template mounts no memory-backed emptyDir there, so /dev/shm is the runtime's 64 MiB tmpfs and "
                   "dd fails with ENOSPC",
            detail_keywords=("/dev/shm", "no space left on device", "64mi", "tmpfs", "emptydir", "medium: memory",
                             SIDECAR, "enospc"),
            affected=(), impact_keywords=("crashloop", "crash", "restart", "not ready", "rollout", "stuck",
                                          "exit code 1"),
            description=f"{WORKER}'s new {SIDECAR} sidecar stages {SCRATCH_MIB} MiB in the default 64 MiB /dev/shm "
                        "and crash-loops on ENOSPC, so the rollout never completes."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="workloads_ready", params={"names": [WORKER]}),), window_s=120.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=WORKER, patch={"spec": {"template": {"spec": {
            "containers": [{"name": SIDECAR, "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}}]}}}}),),
        settle_s=60.0,
    )
