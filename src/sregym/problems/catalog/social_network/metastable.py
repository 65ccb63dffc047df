"""Social Network metastable failures: a short trigger, a bad state that outlives it.

The builder's docstring is the problem card. The sustaining loop is a cache stampede that
cannot end by itself: post-storage-service reads posts cache-aside (memcached multi-get, MongoDB
for the misses, then `set` of what MongoDB returned). With an empty cache every timeline read
goes to post-storage-mongodb; when that is more than its CPU limit serves, its queue keeps every
find later than the service's `timeout_ms`, the finds fail, nothing is written back, and the cache
stays empty at the same traffic. A warm cache sends MongoDB almost nothing, so the same limit is
healthy until the cache is lost. The trigger is a restart of post-storage-memcached (a Chaos Mesh
pod-kill that runs out, `transient_chaos`); the durability check (`replayed_chaos_recovers`)
kills the cache again. Load-dependent MongoDB latency is `twin/datastores/cpu_queue.py`.
"""

from __future__ import annotations

from typing import Any

from sregym.problems.catalog.social_network.common import (
    NS,
    deploy,
    manifest,
    social_problem,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms

mechanisms({"cache_stampede": ("cache stampede", "stampede", "thundering herd", "cold cache", "cache is cold",
                               "cache miss", "cache misses", "cache warm", "warm the cache", "empty cache",
                               "cache was emptied", "cache restart", "metastable")},
           related={"cache_stampede": ("cpu_throttling", "retry_storm")})

POST_MONGO = "post-storage-mongodb"
POST_CACHE = "post-storage-memcached"
# About twice what post-storage-mongodb uses with a warm cache (StorePost inserts and the
# few misses), and under half of what it needs when every timeline read misses the cache.
MONGO_CPU = "10m"
CACHE_RESTART = {"name": "cache-restart", "kind": "PodChaos", "namespace": NS, "labels": {"service": POST_CACHE},
                 "action": {"action": "pod-kill"}, "seconds": 10.0}


def _resources(container: dict[str, Any]) -> dict[str, Any]:
    return dict(container.get("resources") or {})


def _cpu_patch(cpu: str) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": POST_MONGO, "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}}}


def _declared_resources() -> dict[str, Any]:
    """post-storage-mongodb's resources as the manifests declare them (a request, no limit)."""
    return _resources(manifest("Deployment", POST_MONGO)["spec"]["template"]["spec"]["containers"][0])


@problem
def metastable_post_cache_stampede() -> Problem:
    """post-storage-mongodb was resized to a 10m CPU limit (request and limit), about twice what
    it uses while post-storage-memcached is warm — then post-storage-memcached restarts and comes
    back empty (a pod kill that is over in seconds).

    With the cache empty every ReadPosts (home and user timeline reads, nine requests in ten)
    misses and goes to MongoDB: several times the finds 10m of CPU serves. mongod's queue grows
    past post-storage-service's `timeout_ms`; the finds are still executed but answered too late
    (mongod logs them as slow queries), post-storage fails ReadPosts with a timeout, and since a
    miss is only written back after MongoDB answered, memcached stays mostly empty: timelines keep
    failing at the same traffic long after memcached is back and Running, and new posts fail too
    (their StorePost inserts wait in the same queue). post-storage-mongodb is throttled at its
    limit. Restarting MongoDB or post-storage empties the queue, which fills again within seconds
    from the cold cache; restarting memcached changes nothing. Fix: give post-storage-mongodb the
    CPU to serve the reads of a cold cache (remove or raise the limit), so the misses are answered
    and written back. A durability check kills the cache again; the timelines must come back
    within two minutes.
    """
    return social_problem(
        "metastable-post-cache-stampede", "timelines keep failing after the post cache came back",
        layers=("metastable",), difficulty="hard",
        sources=("sregym:cache_flush_capacity_degradation",),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NS, "name": POST_MONGO, "patch": _cpu_patch(MONGO_CPU)}]}),
                FaultSpec(fault="transient_chaos", params={**CACHE_RESTART, "wait_rollout": [f"{NS}/{POST_MONGO}"]})),
        root_causes=(deploy(POST_MONGO),), mechanism="cache_stampede",
        detail=f"post-storage-mongodb's CPU limit ({MONGO_CPU}) serves a warm cache's misses but not the reads "
               "of an empty cache: after post-storage-memcached restarted, every timeline read misses, MongoDB's "
               "queue keeps the finds past post-storage-service's timeout, the misses are never written back "
               "and the cache stays cold",
        keywords=("cpu limit", MONGO_CPU, "throttl", "cache", "cold", "stampede", "memcached", "miss",
                  "timeout", "slow query", "metastable"),
        affected=(deploy(POST_CACHE), deploy("post-storage-service"), deploy("home-timeline-service"),
                  deploy("user-timeline-service"), deploy("nginx-thrift")),
        description="A post-cache restart sent every timeline read to a MongoDB with too little CPU for them; "
                    "its answers come too late to refill the cache, so the cache never warms and timelines keep "
                    "failing.",
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            durability=(CheckSpec(check="replayed_chaos_recovers", params={
                **CACHE_RESTART, "judge_window_s": 30.0, "recover_within_s": 120.0}),),
            window_s=180.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=POST_MONGO, patch_type="json", patch=[
            {"op": "replace", "path": "/spec/template/spec/containers/0/resources",
             "value": _declared_resources()}]),),
    )
