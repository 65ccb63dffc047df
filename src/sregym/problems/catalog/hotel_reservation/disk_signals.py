"""Hotel Reservation problems under a database process: a slow disk, and a kernel that fails the
database's journal syncs.

Each builder's docstring is the problem card. Faults are Kubernetes writes with the admin
credential (`sregym.faults.disk_signals`: a device-scoped IOChaos latency, a Chaos Mesh
KernelChaos); the checks are E1's, the disk problems' (`service_calls_succeed`) and
`service_latency_within` (`sregym.oracles.checks_disk_signals`); the gold
solutions are kubectl-equivalent writes an agent could make.
"""

from __future__ import annotations

from functools import partial

from sregym.problems.builders import (
    deployment_cause,
    move_to_new_claim,
    object_cause,
    pod_recreation,
    rollout_restart,
)
from sregym.problems.model import CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
IMPACT = ("unavailable", "fail", "error", "down", "latency", "slow", "timeout", "cannot", "outage", "degraded",
          "crash", "restart", "i/o")

_deploy = partial(deployment_cause, NS)
_restart = partial(rollout_restart, NS, stamp="2024-06-01T00:00:00Z")


# ================================================================= slow disk under geo's database
@problem
def slow_disk_geo() -> Problem:
    """The disk behind `mongodb-geo`'s PersistentVolume (claim `geo-pvc`) has degraded: every IO
    to it waits about 600 ms (a failing drive retrying internally, a throttled cloud volume).

    Nothing errors: every pod is Running and Ready, geo's Nearby queries succeed, but each one
    waits on the disk, so searches through the frontend take over half a second (p95 above the
    SLO). mongod's log shows `"msg":"Slow query"` lines for `geo-db.geo` with `durationMillis`
    ≈ 600 and `storage.data.timeReadingMicros` ≈ 600000; node-exporter on the node the volume is
    attached to shows `sdb` busy (`rate(node_disk_io_time_seconds_total{device="sdb"}[1m])` near
    1) with ~600 ms per read (`node_disk_read_time_seconds_total` / `node_disk_reads_completed_total`);
    `/proc/diskstats` on that node says the same. The latency belongs to the disk, so restarting or
    recreating mongodb-geo on the same volume changes nothing. Fix: move the database onto a
    healthy volume — a new PVC for mongodb-geo (its init script recreates the users, geo re-seeds
    its data when restarted). A durability check recreates the mongodb-geo pod.
    """
    return Problem(
        id="hotel-reservation/slow-disk-geo-v1",
        title="searches are slow although nothing reports an error",
        app=APP, namespace=NS,
        tags=Tags(layers=("hardware",), difficulty="hard"),
        faults=(FaultSpec(fault="slow_disk", params={
            "namespace": NS, "labels": {"io.kompose.service": "mongodb-geo"}, "volume_path": "/data/db",
            "delay": "600ms"}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(NS, "PersistentVolumeClaim", "geo-pvc"), _deploy("mongodb-geo")),
            mechanism="disk",
            detail="the disk behind mongodb-geo's volume (PVC geo-pvc) is slow: every IO takes ~600 ms, mongod "
                   "logs slow queries and the node's sdb is 100% busy (node_disk_io_time_seconds_total)",
            detail_keywords=("geo-pvc", "disk", "latency", "slow", "io_time", "slow query", "/data/db", "sdb",
                             "iowait", "i/o"),
            affected=(_deploy("geo"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="mongodb-geo waits ~600 ms on its disk for every query; geo and every search through "
                        "the frontend are slow."),
        mitigation=MitigationSpec(
            # The entry SLO is a must_keep, sampled through the verification window.
            must_fix=(CheckSpec(check="service_latency_within", params={"service": "geo", "max_p95_ms": 100.0}),),
            durability=(pod_recreation("mongodb-geo"),)),
        gold=(*move_to_new_claim(NS, "mongodb-geo", volume="geo", claim="geo-data"), _restart("geo")),
    )


# ============================================== failing journal fsync in reservation's database
@problem
def kernel_fsync_eio_reservation_db() -> Problem:
    """The kernel fails the `fsync`/`fdatasync` requests of the mongod process in the
    `mongodb-reservation` pod with EIO (a Khaos-style kernel fault on one process: Chaos Mesh
    KernelChaos, failed bio on the fsync call chain).

    mongod syncs its journal ten times a second, so within a second of starting it logs
    `WiredTiger error` `__posix_sync ... /data/db/journal/WiredTigerLog...: handle-sync:
    fdatasync: Input/output error`, then `Fatal assertion` (msgid 50853) and `aborting after
    fassert() failure`; the container exits with 134 and the kubelet restarts it into
    CrashLoopBackOff. Reservations and availability checks that miss the cache fail. The node's
    kernel log, the disk's metrics and other pods on the same volume type are clean: the fault is
    on this process's syscalls, not on the disk. Restarting the container (the kubelet does) does
    not help; a new pod of mongodb-reservation is not under the fault. Fix: recreate the
    mongodb-reservation pod (delete it, or roll the Deployment). A durability check recreates it
    again.
    """
    return Problem(
        id="hotel-reservation/kernel-fsync-eio-reservation-db-v1",
        title="mongodb-reservation keeps crashing; reservations fail now and then",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="medium"),
        faults=(FaultSpec(fault="kernel_syscall_errors", params={
            "namespace": NS, "labels": {"io.kompose.service": "mongodb-reservation"}, "syscall": "fsync"}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("mongodb-reservation"),),
            mechanism="disk",
            detail="the kernel fails mongod's fsync/fdatasync in the mongodb-reservation pod with EIO "
                   "(Input/output error): WiredTiger's journal sync fails, mongod hits a fatal assertion and "
                   "aborts, CrashLoopBackOff",
            detail_keywords=("fsync", "fdatasync", "input/output error", "eio", "kernel", "syscall", "journal",
                             "fatal assertion", "wiredtiger", "crashloopbackoff"),
            affected=(_deploy("reservation"), _deploy("frontend")), impact_keywords=IMPACT,
            description="mongodb-reservation aborts on every journal sync and restarts in a loop; reservation "
                        "requests that reach it fail."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="workload_ready", params={"name": "mongodb-reservation"}),
                      CheckSpec(check="service_calls_succeed", params={"service": "reservation"})),
            durability=(pod_recreation("mongodb-reservation"),)),
        gold=(_restart("mongodb-reservation"),),
    )
