"""Disk sector errors and the metastable retry collapse: faults, checks, mechanisms, problems."""

from __future__ import annotations

import pytest

from sregym.cluster.twin import TwinCluster
from sregym.errors import Forbidden
from sregym.faults.base import make_fault
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_disk_and_metastable import service_calls_succeed
from sregym.oracles.mechanisms import RELATED, classify
from sregym.problems.registry import select
from support.problem_runs import deployed

NS = "hotel-reservation"
DISK = "hotel-reservation/disk-sector-errors-geo-v1"
STORM = "hotel-reservation/metastable-retry-collapse-v1"


def _pods(cluster: TwinCluster, namespace: str, selector: str) -> list[dict]:
    return [p for p in cluster.list("Pod", namespace, label_selector=selector)
            if not p["metadata"].get("deletionTimestamp")]


# ------------------------------------------------------------------------------ disk
def test_sector_errors_survive_a_restart_of_the_database_and_show_in_the_kernel_log() -> None:
    cluster, run = deployed(DISK)
    ctx = run.check_context()
    assert service_calls_succeed(ctx, service="geo")[0]
    run.inject()
    # the injection is an IOChaos object in the hidden namespace, nothing in the app's namespace
    assert cluster.get("IOChaos", "chaos-mesh", "volume-health") is not None
    with pytest.raises(Forbidden):
        cluster.as_user("agent").list("IOChaos", "chaos-mesh")
    run.advance(60)
    ok, detail = service_calls_succeed(ctx, service="geo")
    assert not ok and "failed" in detail
    assert cluster.entry_stats(30).success_ratio < 0.9
    db = _pods(cluster, NS, "io.kompose.service=mongodb-geo")[0]
    cluster.delete("Pod", NS, db["metadata"]["name"])
    run.advance(90)
    fresh = _pods(cluster, NS, "io.kompose.service=mongodb-geo")
    assert fresh and fresh[0]["metadata"]["uid"] != db["metadata"]["uid"]
    assert not service_calls_succeed(ctx, service="geo")[0]  # same disk, same errors
    geo = _pods(cluster, NS, "io.kompose.service=geo")[0]["metadata"]["name"]
    assert "Input/output error" in cluster.logs(NS, geo)
    node = fresh[0]["spec"]["nodeName"]
    kernel = [line.text for line in cluster.twin.services.logs.node_lines(node, "kernel")]
    assert any(t.startswith("blk_update_request: I/O error, dev sdb, sector ") for t in kernel)


def test_gold_moves_geo_to_a_fresh_volume_and_recover_clears_the_disk() -> None:
    cluster, run = deployed(DISK)
    run.inject()
    run.advance(30)
    run.apply_gold()
    run.advance(120)
    assert service_calls_succeed(run.check_context(), service="geo")[0]
    pvc = cluster.get("Deployment", NS, "mongodb-geo")["spec"]["template"]["spec"]["volumes"][0]
    assert pvc["persistentVolumeClaim"]["claimName"] == "geo-data"
    run.recover()
    run.advance(5)  # the chaos controller recovers the records, then drops its finalizer
    assert cluster.get("IOChaos", "chaos-mesh", "volume-health") is None
    assert not cluster.twin.services.chaos.bad_disks.by_disk


def test_service_calls_succeed_needs_traffic() -> None:
    cluster = TwinCluster.new(1)
    ctx = CheckContext(cluster=cluster, namespace=NS)
    ok, detail = service_calls_succeed(ctx, service="geo")
    assert not ok and "no calls" in detail


# --------------------------------------------------------------------------- bursts
def test_scale_burst_multiplies_the_generator_for_the_given_seconds_only() -> None:
    cluster, run = deployed(STORM)
    before = cluster.get("Deployment", "sregym-system", "sregym-loadgen")["spec"]["replicas"]
    fault = make_fault("scale_burst", {"multiplier": 4, "seconds": 10})
    state = fault.inject(cluster)
    assert state == {"replicas": before}
    assert cluster.get("Deployment", "sregym-system", "sregym-loadgen")["spec"]["replicas"] == before
    assert cluster.entry_stats(10).requests > 3000  # ×4 of 100 req/s during the last ten seconds
    run.advance(30)
    assert len(_pods(cluster, "sregym-system", "app.kubernetes.io/name=sregym-loadgen")) == before
    assert 1800 <= cluster.entry_stats(20).requests <= 2200  # base rate at once, not after a grace period


def test_retry_collapse_stays_until_the_policy_changes() -> None:
    cluster, run = deployed(STORM)
    run.inject()
    run.advance(120)
    assert cluster.entry_stats(30).success_ratio < 0.9  # burst over, still collapsed
    run.apply_gold()
    run.advance(150)
    assert cluster.entry_stats(30).success_ratio > 0.99
    score = run.verify(window_s=60)
    assert score.passed, [c for c in score.checks if not c.passed]


# ------------------------------------------------------------------------ mechanisms
@pytest.mark.parametrize(("text", "mechanism"), [
    ("Multi-Attach error: ReadWriteOnce PVC frontend-cache used from two nodes", "volume_attach"),
    ("FailedAttachVolume for the frontend-cache volume", "volume_attach"),
    ("maxUnavailable 100% and maxSurge 0 took every geo pod down", "rollout_strategy"),
    ("the new pod hangs in its init container", "rollout_strategy"),
    ("fluent-bit runs as a regular sidecar container and never exits, jobs never complete", "sidecar_lifecycle"),
    ("bad sectors on mongodb-geo's disk: Input/output error", "disk"),
    ("blk_update_request errors on the node's block device", "disk"),
    ("search's GRPC_CLIENT_TIMEOUT of 15ms with GRPC_CLIENT_RETRIES_ON_ERROR=5 is a retry storm", "retry_storm"),
])
def test_cue_phrases_name_the_mechanism(text: str, mechanism: str) -> None:
    assert mechanism in classify(text)


def test_new_cues_do_not_claim_unrelated_mechanisms() -> None:
    # a disk answer that mentions where the volume is attached is still only a disk answer
    assert classify("the volume attached to worker2 has bad sectors; reads fail with EIO") == {"disk"}
    assert classify("ImagePullBackOff: the tag does not exist") == {"bad_image"}
    assert "cpu_throttling" in RELATED["retry_storm"]


def test_every_problem_names_a_known_mechanism() -> None:
    # each against its problem set's vocabulary (node_os problems add their own mechanisms)
    from sregym.problems.vocabulary import vocabulary_of

    unknown = {p.id: p.ground_truth.mechanism for p in select()
               if not p.is_control and p.ground_truth.mechanism not in vocabulary_of(p.id)}
    assert not unknown


def test_both_problems_are_in_lite_with_their_layers() -> None:
    lite = {p.id: p for p in select(suite="lite")}
    assert lite[DISK].tags.layers == ("hardware",)
    assert lite[STORM].tags.layers == ("metastable",)
