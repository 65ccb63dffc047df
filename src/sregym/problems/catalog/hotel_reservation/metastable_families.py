"""Hotel Reservation metastable failures whose sustaining loop lives in a Go runtime or a client
library rather than in a retry policy: GC-driven capacity degradation and connection-pool
exhaustion (issue #20's remaining families).

Each builder's docstring is the problem card. The trigger is a 10 s burst of the load generator
(`scale_burst`), over before the agent starts; the durability check (`replayed_burst_recovers`)
replays it after the agent's fix.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from sregym.problems.builders import app_manifest, deployment_cause, object_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
IMPACT = ("unavailable", "fail", "error", "down", "latency", "slow", "timeout", "cannot", "outage", "degraded",
          "collapse", "stuck", "overload", "saturat")
LOADGEN = {"namespace": "sregym-system", "name": "sregym-loadgen"}

_deploy = partial(deployment_cause, NS)


def _container_patch(container: str, env: dict[str, str] | None = None, cpu: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": container}
    if env is not None:
        body["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if cpu is not None:
        body["resources"] = {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}
    return {"spec": {"template": {"spec": {"containers": [body]}}}}


# ======================================================= GC-driven capacity degradation
GC_SERVICE = "profile"
GC_CONTAINER = "hotel-reserv-profile"
GOMEMLIMIT = "12MiB"  # a few MiB above profile's live heap at normal load
GC_CPU = "150m"
GC_BURST = {**LOADGEN, "multiplier": 3, "seconds": 10.0}


@problem
def metastable_gc_capacity() -> Problem:
    """`profile` runs with a Go soft memory limit a few MiB above its live heap (env
    `GOMEMLIMIT=12MiB`) and a CPU limit that normal traffic uses well below half. Then traffic
    briefly bursts (×3 for 10 s).

    Under the burst requests queue in profile; every queued request keeps its buffers live, the
    heap reaches GOMEMLIMIT and the Go collector runs nearly back to back — up to half of
    profile's CPU (the runtime's GC CPU limiter), so it serves about half as many requests as
    before. At normal traffic that is less than what arrives: the queue never drains, the heap
    stays at the limit and the GC keeps eating the CPU (go_memstats_gc_cpu_fraction near 0.5,
    go_memstats_heap_alloc_bytes at go_gc_gomemlimit_bytes, frequent go_gc_duration_seconds
    cycles); frontend's GetProfiles calls time out after 1 s and are retried, searches and
    recommendations fail. Restarting profile empties the queue only until the next burst. Fix:
    give the heap room (raise or remove GOMEMLIMIT) and roll profile out, or add enough CPU or
    replicas to serve normal traffic with the collector at its cap. SREGym's
    gc_capacity_degradation (GOGC=1 under tight limits) anatomy. A durability check replays the
    burst; the system must come back within 90 s.
    """
    return Problem(
        id="hotel-reservation/metastable-gc-capacity-v1",
        title="hotel searches and recommendations keep timing out since a traffic spike",
        app=APP, namespace=NS,
        # SREGym's gc_capacity_degradation runs on Blueprint HR, an app the twin does not run: its
        # coverage row names this problem as the same mechanism on HR instead of a source tag.
        tags=Tags(layers=("metastable",), difficulty="hard"),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NS, "name": GC_SERVICE,
                     "patch": _container_patch(GC_CONTAINER, {"GOMEMLIMIT": GOMEMLIMIT}, GC_CPU)}]}),
                FaultSpec(fault="scale_burst", params={**GC_BURST, "wait_rollout": [f"{NS}/{GC_SERVICE}"]})),
        ground_truth=GroundTruth(
            root_causes=(_deploy(GC_SERVICE),), mechanism="gc_pressure",
            detail=f"profile runs with GOMEMLIMIT={GOMEMLIMIT}, just above its live heap: after a burst the "
                   "queued requests keep the heap at the limit and Go's garbage collector takes half of its CPU, "
                   "so it cannot catch up at normal load",
            detail_keywords=("GOMEMLIMIT", GOMEMLIMIT, "garbage collect", "heap", "soft memory limit",
                             "metastable"),
            affected=(_deploy(GC_SERVICE), _deploy("frontend")), impact_keywords=IMPACT,
            description="A short burst filled profile's queue; the live heap reached GOMEMLIMIT and the Go GC "
                        "now consumes half of profile's CPU, which keeps the queue full at normal traffic."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            durability=(CheckSpec(check="replayed_burst_recovers", params=GC_BURST),),
            window_s=180.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=GC_SERVICE,
                     patch=_container_patch(GC_CONTAINER, {"GOMEMLIMIT": "512MiB"})),),
    )


# ====================================================== connection-pool exhaustion loop
POOL_SERVICE = "geo"
POOL_CONFIGMAP = "geo-config"
POOL_SIZE = 4
MONGO_ADDRESS = "mongodb-geo:27017"
MONGO_DELAY = {"name": "latency-shaping", "kind": "NetworkChaos", "namespace": NS,
               "labels": {"io.kompose.service": "mongodb-geo"},
               "action": {"action": "delay", "delay": {"latency": "100ms"}, "direction": "to"}, "seconds": 20.0}


def _geo_config(address: str) -> dict[str, Any]:
    """geo-config as deployed, with `GeoMongoAddress` set to `address` (the binary prefixes it
    with `mongodb://`, so URI options may follow it)."""
    text = app_manifest(APP, "ConfigMap", POOL_CONFIGMAP)["data"]["config.json"]
    config = json.loads(text)
    config["GeoMongoAddress"] = address
    return {"data": {"config.json": json.dumps(config, indent=2) + "\n"}}


def _restart(name: str, stamp: str) -> dict[str, Any]:
    return {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}


@problem
def metastable_connection_pool() -> Problem:
    """geo's MongoDB driver runs with a pool of four connections (`maxPoolSize=4` in
    `GeoMongoAddress` of ConfigMap `geo-config`), plenty while mongodb-geo answers in a
    millisecond. Then the network to mongodb-geo slows down by 100 ms for 20 s.

    During the slowdown four connections serve about 20 queries a second, fewer than arrive:
    geo's Nearby calls queue for a connection until search's 1 s deadline. Calls that get a
    connection with almost no deadline left are cancelled mid-read and the driver closes the
    connection; a replacement needs a TCP handshake and SCRAM authentication, at most two at a
    time. search and frontend retry the failed calls, so geo receives several times the normal
    rate — more than the rebuilt connections can serve once every checkout is late. After the
    slowdown the queue stays at the deadline: geo logs `timed out while checking out a connection
    from connection pool: context deadline exceeded; maxPoolSize: 4 ...` and `incomplete read of
    message header: context deadline exceeded`, searches fail, mongodb-geo itself is idle and
    fast. Restarting geo empties the pool's queue only until the next slowdown. Fix: a pool large
    enough for the slow periods (raise or drop maxPoolSize in geo-config and restart geo), or
    shed load. A durability check replays the 20 s slowdown; the system must come back within
    90 s or so.
    """
    return Problem(
        id="hotel-reservation/metastable-connection-pool-v1",
        title="hotel searches keep failing although the geo database is healthy",
        app=APP, namespace=NS,
        tags=Tags(layers=("metastable",), difficulty="hard"),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "ConfigMap", "namespace": NS, "name": POOL_CONFIGMAP, "field": "data",
                     "patch_type": "merge", "patch": _geo_config(f"{MONGO_ADDRESS}/?maxPoolSize={POOL_SIZE}")},
                    {"kind": "Deployment", "namespace": NS, "name": POOL_SERVICE,
                     "patch": _restart(POOL_SERVICE, "2024-06-01T00:00:00Z")}]}),
                FaultSpec(fault="transient_chaos", params={**MONGO_DELAY, "wait_rollout": [f"{NS}/{POOL_SERVICE}"]})),
        ground_truth=GroundTruth(
            root_causes=(object_cause(NS, "ConfigMap", POOL_CONFIGMAP), _deploy(POOL_SERVICE)),
            mechanism="connection_pool",
            detail=f"geo's MongoDB client pool is limited to maxPoolSize={POOL_SIZE} (GeoMongoAddress in "
                   "geo-config): after a short slowdown of mongodb-geo, calls wait for a connection past their "
                   "deadline, cancelled reads close connections and retries keep the pool exhausted",
            detail_keywords=(f"maxPoolSize={POOL_SIZE}", "GeoMongoAddress", "maxPoolSize", "connection pool",
                             "pool size", "checking out a connection", "geo-config", "metastable"),
            affected=(_deploy(POOL_SERVICE), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="A 20 s slowdown of mongodb-geo exhausted geo's four-connection pool; late calls close "
                        "their connections and retries keep the pool's queue at the deadline at normal traffic."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            durability=(CheckSpec(check="replayed_chaos_recovers", params={
                **MONGO_DELAY, "judge_window_s": 60.0, "recover_within_s": 120.0}),),
            window_s=180.0),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NS, name=POOL_CONFIGMAP, patch_type="merge",
                     patch=_geo_config(f"{MONGO_ADDRESS}/?maxPoolSize=100")),
              Action(op="patch", kind="Deployment", namespace=NS, name=POOL_SERVICE,
                     patch=_restart(POOL_SERVICE, "2024-06-02T00:00:00Z"))),
    )
