"""Hotel Reservation problems below and around the services: a failing disk under a database, and
a metastable retry collapse between search and rate.

Each builder's docstring is the problem card. Faults are Kubernetes writes with the admin
credential (`sregym.faults.disk_and_metastable`, E4's `patch_objects`); the checks are semantic
(`sregym.oracles.checks_disk_and_metastable` and E1's); the gold solutions are kubectl-equivalent
writes an agent could make.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.problems.builders import (
    deployment_cause,
    move_to_new_claim,
    object_cause,
    pod_recreation,
    rollout_restart,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
IMPACT = ("unavailable", "fail", "error", "down", "latency", "slow", "timeout", "cannot", "outage", "degraded",
          "collapse", "stuck", "i/o")
LOADGEN = {"namespace": "sregym-system", "name": "sregym-loadgen"}


_deploy = partial(deployment_cause, NS)
_restart = partial(rollout_restart, NS, stamp="2024-06-01T00:00:00Z")


# ============================================================ 9. latent sector errors
@problem
def disk_sector_errors_geo() -> Problem:
    """The disk behind `mongodb-geo`'s PersistentVolume (claim `geo-pvc`) develops latent sector
    errors: reads and writes of the database files fail with EIO.

    mongod logs `WiredTiger error (5) [/data/db: read error]: Input/output error`, geo returns
    errors for every Nearby query and searches through the frontend fail; the kernel of the node
    the volume is attached to logs `blk_update_request: I/O error, dev sdb, sector ...` and
    `Buffer I/O error on dev sdb1`. Every pod is Running and Ready. The errors belong to the
    disk, so restarting or rescheduling the mongodb-geo pod onto the same volume changes
    nothing. Fix: move the database onto a healthy volume — a new PVC for mongodb-geo (its init
    script recreates the users on first start, geo re-seeds its data when restarted) — the broken
    volume can then be retired. A durability check recreates the mongodb-geo pod.
    """
    return Problem(
        id="hotel-reservation/disk-sector-errors-geo-v1",
        title="searches fail; geo reports database errors although every pod is running",
        app=APP, namespace=NS,
        tags=Tags(layers=("hardware",), difficulty="hard", suites=("lite",), sources=("sregym:latent_sector_error",)),
        faults=(FaultSpec(fault="disk_sector_errors", params={
            "namespace": NS, "labels": {"io.kompose.service": "mongodb-geo"}, "volume_path": "/data/db"}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(NS, "PersistentVolumeClaim", "geo-pvc"),
                         _deploy("mongodb-geo")),
            mechanism="disk",
            detail="the disk behind mongodb-geo's volume (PVC geo-pvc) has bad sectors: reads of /data/db fail "
                   "with EIO (Input/output error), the node kernel logs blk_update_request I/O errors",
            detail_keywords=("geo-pvc", "sector", "i/o error", "input/output error", "eio", "disk",
                             "blk_update_request", "/data/db"),
            affected=(_deploy("geo"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="mongodb-geo cannot read its data files from the failing disk; geo's queries fail "
                        "and so does every search through the frontend."),
        mitigation=MitigationSpec(
            # The entry SLO is a must_keep, sampled through the verification window.
            must_fix=(CheckSpec(check="service_calls_succeed", params={"service": "geo"}),),
            durability=(pod_recreation("mongodb-geo"),)),
        gold=(*move_to_new_claim(NS, "mongodb-geo", volume="geo", claim="geo-data"), _restart("geo")),
    )


# ====================================================== 10. metastable retry collapse
RETRY_TIMEOUT = "15ms"
RETRIES = "5"
RATE_CPU = "116m"  # just under the burst: ~290 req/s of GetRates; base sends 60, the ×5 burst 300
BURST_MULTIPLIER = 5
BURST_SECONDS = 10.0


def _search_env(env: dict[str, str]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": "hotel-reserv-search", "env": [{"name": k, "value": v} for k, v in env.items()]}]}}}}


@problem
def metastable_retry_collapse() -> Problem:
    """search's gRPC client policy for its backends is set to a 15 ms timeout with 5 retries on
    error (env `GRPC_CLIENT_TIMEOUT`, `GRPC_CLIENT_RETRIES_ON_ERROR`), while `rate` runs with a
    modest CPU limit that is ample for normal load. Then traffic briefly bursts (×5 for 10 s).

    During the burst rate's queue grows past the 15 ms timeout; search abandons the calls and
    retries each up to 5 times, so rate receives several times the offered load and stays
    saturated: every call it serves has waited about as long as search's timeout and completes
    late, the calls whose deadline passed in its queue are cancelled (DeadlineExceeded server
    spans) — the system stays collapsed at base load long after the burst (a metastable
    failure). rate looks overloaded and CPU-throttled; search logs `DeadlineExceeded` on
    `/rate.Rate/GetRates`. Restarting rate or search alone does not help for long, and
    restarting rate clears its backlog only until the next burst. Fix: change search's
    retry/timeout policy (a timeout above rate's latency, few or no retries) and roll it out;
    rate's queue then holds only calls whose deadline passed, which it discards in seconds, so
    the system recovers without restarting rate. A durability check replays the burst and the
    system must come back within a minute or so.
    """
    trigger = {**LOADGEN, "multiplier": BURST_MULTIPLIER, "seconds": BURST_SECONDS}
    return Problem(
        id="hotel-reservation/metastable-retry-collapse-v1",
        title="searches time out since a traffic spike, although traffic is back to normal",
        app=APP, namespace=NS,
        tags=Tags(layers=("metastable",), difficulty="hard", suites=("lite",), sources=("sregym:search_rate_retry_collapse_hotel_reservation",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NS, "name": "rate", "patch": {"spec": {"template": {"spec": {
                        "containers": [{"name": "hotel-reserv-rate", "resources": {
                            "requests": {"cpu": RATE_CPU}, "limits": {"cpu": RATE_CPU}}}]}}}}},
                    {"kind": "Deployment", "namespace": NS, "name": "search",
                     "patch": _search_env({"GRPC_CLIENT_TIMEOUT": RETRY_TIMEOUT,
                                           "GRPC_CLIENT_RETRIES_ON_ERROR": RETRIES})}]}),
                FaultSpec(fault="scale_burst", params={
                    **trigger, "wait_rollout": [f"{NS}/rate", f"{NS}/search"]})),
        ground_truth=GroundTruth(
            root_causes=(_deploy("search"),), mechanism="retry_storm",
            detail=f"search's rate client uses GRPC_CLIENT_TIMEOUT={RETRY_TIMEOUT} with "
                   f"GRPC_CLIENT_RETRIES_ON_ERROR={RETRIES}: after a burst, retries keep rate overloaded",
            detail_keywords=("GRPC_CLIENT_TIMEOUT", "GRPC_CLIENT_RETRIES_ON_ERROR", RETRY_TIMEOUT, "retries",
                             "retry", "timeout", "metastable"),
            affected=(_deploy("rate"), _deploy("frontend")), impact_keywords=IMPACT,
            description="A short burst pushed rate's latency past search's tiny timeout; search's retries "
                        "multiply the load on rate, which stays saturated at normal traffic."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            durability=(CheckSpec(check="replayed_burst_recovers", params=trigger),),
            # Cancelled calls leave rate no backlog to drain: the entry recovers within seconds of
            # search's rollout (measured: ~3 s), and the SLO window (60 s) must then be clean at
            # every must_keep sample from the window's half on. 180 s puts the first sample at
            # 90 s, leaving ~25 s for a slower fix (a restart of rate as well: ~10 s). The
            # durability replay runs after the window (burst, then up to 90 s to recover).
            window_s=180.0),
        # The policy change rolls search out; rate discards the calls search already abandoned.
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="search",
                     patch=_search_env({"GRPC_CLIENT_TIMEOUT": "1s", "GRPC_CLIENT_RETRIES_ON_ERROR": "1"})),),
    )
