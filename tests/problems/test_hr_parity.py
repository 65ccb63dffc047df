"""Hotel Reservation parity problems: their registration, the `set_object_labels` fault (Pod
Security Admission on the namespace, seen and fixed with real kubectl as the agent) and the
autoscaler checks (an HPA whose pods have no CPU request). The full check protocol of each problem
runs with the registry-wide tests."""

from __future__ import annotations

import json
from pathlib import Path

from sregym.oracles.checks_parity import autoscaler_active, autoscaler_kept
from sregym.oracles.mechanisms import MECHANISMS, classify
from sregym.problems.registry import PROBLEMS
from support.chaos_web import chaos
from support.kube import serve_twin
from support.problem_runs import deployed

NS = "hotel-reservation"
PSA = "hotel-reservation/pod-security-blocks-recreation-v1"
HPA = "hotel-reservation/hpa-missing-cpu-request-v1"
PARITY = {
    "hotel-reservation/mongodb-role-revoked-rate-v1": "db_auth",
    "hotel-reservation/mongodb-user-removed-rate-v1": "db_auth",
    "hotel-reservation/mongodb-rate-service-deleted-v1": "missing_service",
    "hotel-reservation/memory-request-too-large-v1": "unschedulable",
    "hotel-reservation/memory-limit-too-small-v1": "oom",
    "hotel-reservation/pvc-claim-mismatch-v1": "volume_claim",
    "hotel-reservation/wrong-binary-profile-v1": "wrong_command",
    "hotel-reservation/liveness-probe-misconfigured-v1": "probe",
    "hotel-reservation/init-container-dependency-hang-v1": "rollout_strategy",
    "hotel-reservation/host-port-conflict-v1": "unschedulable",
    PSA: "pod_security",
    HPA: "autoscaling",
}


def test_parity_problems_are_registered_outside_every_suite() -> None:
    for pid, mechanism in PARITY.items():
        problem = PROBLEMS.get(pid)
        assert problem.tags.suites == (), pid
        assert problem.ground_truth.mechanism == mechanism in MECHANISMS
        assert problem.card and problem.settle_s <= 60 and problem.mitigation.window_s <= 180


def test_new_mechanisms_read_from_an_engineers_words() -> None:
    assert "pod_security" in classify('pods are rejected: violates PodSecurity "restricted:latest"')
    assert "autoscaling" in classify("the HPA cannot compute utilisation: missing request for cpu")
    assert "volume_claim" in classify("the mongodb deployments reference a claimName that does not exist")
    assert "unschedulable" in classify("the pod stays Pending with FailedScheduling")
    assert "wrong_command" in classify("the profile container command starts the wrong binary")
    assert "missing_service" in classify("the mongodb-rate Service was deleted")
    assert "unschedulable" in classify("no node had free ports for hostPort 9100")


def test_restricted_namespace_blocks_the_recreated_pod_until_the_agent_relaxes_it(tmp_path: Path) -> None:
    cluster, run = deployed(PSA)
    run.inject()
    run.advance(30)
    assert not cluster.list("Pod", NS, label_selector="io.kompose.service=recommendation")
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        labels = json.loads(harness.ok("get", "namespace", NS, "-o", "json"))["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
        events = harness.ok("get", "events", "-n", NS, "--field-selector", "reason=FailedCreate")
        assert 'violates PodSecurity "restricted:latest"' in events
        # The gold fix, as the agent would type it.
        harness.ok("label", "namespace", NS, "pod-security.kubernetes.io/enforce-",
                   "pod-security.kubernetes.io/enforce-version-")
        harness.ok("rollout", "restart", "deployment/recommendation", "-n", NS)
    finally:
        harness.server.stop()
    run.advance(90)
    pods = cluster.list("Pod", NS, label_selector="io.kompose.service=recommendation")
    assert pods and all(p["status"]["phase"] == "Running" for p in pods)


def test_set_object_labels_recover_removes_the_labels_it_added() -> None:
    cluster, run = deployed(PSA)
    before = dict(cluster.get("Namespace", None, NS)["metadata"].get("labels") or {})
    run.inject()
    assert cluster.get("Namespace", None, NS)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    run.recover()
    assert (cluster.get("Namespace", None, NS)["metadata"].get("labels") or {}) == before


def test_autoscaler_checks_see_a_missing_cpu_request_and_a_deleted_autoscaler() -> None:
    cluster, run = deployed(HPA)
    ctx = run.check_context()
    run.inject()
    run.advance(60)
    ok, detail = autoscaler_active(ctx, deployment="frontend")
    assert not ok and "missing request for cpu" in detail
    assert autoscaler_kept(ctx, deployment="frontend")[0]
    run.apply_gold()
    run.advance(90)
    ok, detail = autoscaler_active(ctx, deployment="frontend")
    assert ok, detail
    cluster.delete("HorizontalPodAutoscaler", NS, "frontend")
    ok, detail = autoscaler_kept(ctx, deployment="frontend")
    assert not ok and "no HorizontalPodAutoscaler" in detail


def test_pod_failure_chaos_in_a_restricted_namespace_is_refused_not_fatal() -> None:
    """Chaos Mesh's pod-failure swaps images with a pod update; Pod Security Admission refuses it in
    a namespace that now enforces `restricted`. The experiment reports the failure (as Chaos Mesh
    does) and the cluster keeps running (noise under this problem used to crash the twin)."""
    cluster, run = deployed(PSA)
    run.inject()
    if cluster.get("Namespace", None, "chaos-mesh") is None:
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "chaos-mesh"}})
    cluster.create(chaos("PodChaos", "pod-failure-reservation", {
        "action": "pod-failure", "mode": "one", "duration": "30s",
        "selector": {"namespaces": [NS], "labelSelectors": {"io.kompose.service": "reservation"}}}))
    run.advance(20)
    events = [e for e in cluster.list("Event", "chaos-mesh") if e.get("reason") == "Failed"]
    assert any('violates PodSecurity "restricted:latest"' in e.get("message", "") for e in events)
    pod = cluster.list("Pod", NS, label_selector="io.kompose.service=reservation")[0]
    assert "pause" not in pod["spec"]["containers"][0]["image"]
