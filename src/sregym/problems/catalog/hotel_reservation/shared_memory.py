"""Hotel Reservation problem in a pod's shared memory: a worker that stages more in `/dev/shm`
than the container runtime's 64 MiB default allows (SREGym's dev_shm_exhaustion_hotel_reservation).

The builder's docstring is the problem card. The fault is a Kubernetes write with the admin
credential (`create_objects`: the worker's Deployment, as a team would ship it); the symptom comes
from the twin: every container gets a 64 MiB `/dev/shm` tmpfs unless a `medium: Memory` emptyDir
is mounted there (`twin/userland/shm.py`), so the worker's `dd` stops with ENOSPC, the shell exits
1 and the kubelet backs it off into CrashLoopBackOff while the node's disks are nearly empty. The
check is `sustained_ready` on the worker; the gold fix mounts a memory-backed emptyDir at
`/dev/shm`, sized above what the worker stages.
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
WORKER = "media-processor"
SCRATCH_MIB = 80  # two 40 MiB buffers: past the 64 MiB default, well inside a 256Mi memory emptyDir

mechanisms({
    "shared_memory": ("/dev/shm", "dev/shm", "shm", "shared memory", "no space left on device", "enospc",
                      "tmpfs", "medium: memory", "medium memory", "64mi", "64 mib", "64m"),
}, related={"shared_memory": ("disk", "oom", "memory_pressure")})

_deploy = partial(deployment_cause, NS)

WORKER_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": WORKER, "namespace": NS, "labels": {"app": WORKER}},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": WORKER}},
             "template": {"metadata": {"labels": {"app": WORKER}}, "spec": {"containers": [{
                 "name": "worker", "image": "busybox:1.36",
                 "command": ["sh", "-c",
                             f"echo 'staging {SCRATCH_MIB} MiB of frame buffers in /dev/shm'; "
                             f"dd if=/dev/zero of=/dev/shm/frames-0 bs=1M count={SCRATCH_MIB // 2} && "
                             f"dd if=/dev/zero of=/dev/shm/frames-1 bs=1M count={SCRATCH_MIB // 2} && "
                             "echo 'buffers staged; processing' && while true; do sleep 30; done"],
                 "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "512Mi"}}}]}}},
}


@problem
def dev_shm_exhaustion() -> Problem:
    """A new `media-processor` worker in hotel-reservation (busybox) never starts working: its pod
    restarts again and again (CrashLoopBackOff, exit code 1). Its log shows it staging 80 MiB of
    frame buffers in `/dev/shm` (two 40 MiB files) and `dd: error writing '/dev/shm/frames-1': No
    space left on device` once 64 MiB are used. The node's disks are nearly empty: `/dev/shm` is the container runtime's
    64 MiB tmpfs, because the pod template mounts nothing there. Restarting does not help. Fix:
    mount an emptyDir with `medium: Memory` (sizeLimit above 80Mi, e.g. 256Mi) at `/dev/shm`.
    """
    return Problem(
        id="hotel-reservation/dev-shm-exhaustion-v1",
        title="media-processor keeps crash-looping",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="medium", sources=("sregym:dev_shm_exhaustion_hotel_reservation",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": [WORKER_DEPLOYMENT]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(WORKER),),
            mechanism="shared_memory",
            detail=f"{WORKER} writes {SCRATCH_MIB} MiB to /dev/shm, but its pod template mounts no memory-backed "
                   "emptyDir there, so /dev/shm is the runtime's 64 MiB tmpfs and dd fails with ENOSPC",
            detail_keywords=("/dev/shm", "no space left on device", "64mi", "tmpfs", "emptydir", "medium: memory",
                             "80", WORKER),
            affected=(), impact_keywords=("crashloop", "crash", "restart", "not ready", "fails", "exit code 1"),
            description=f"{WORKER} stages {SCRATCH_MIB} MiB in the default 64 MiB /dev/shm and crash-loops on "
                        "ENOSPC."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="sustained_ready", params={"deployment": WORKER, "seconds": 60.0}),),
            window_s=120.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=WORKER, patch={"spec": {"template": {"spec": {
            "containers": [{"name": "worker", "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}}]}}}}),),
        settle_s=60.0,
    )
