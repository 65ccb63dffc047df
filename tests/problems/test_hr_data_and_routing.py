"""Hotel Reservation data and routing problems, seen and fixed with real kubectl as the agent: the
MongoDB update that cannot open its data files, and Calico route reflectors lost to a node-label
change. The full check protocol of each problem (gold passes, noop fails, recovery, same seed) runs
with the registry-wide tests and `sregym check`."""

from __future__ import annotations

from pathlib import Path

from sregym.oracles.checks_disk_and_metastable import service_calls_succeed
from sregym.problems.registry import PROBLEMS
from sregym.problems.vocabulary import vocabulary_of
from support.kube import serve_twin
from support.problem_runs import deployed

NS = "hotel-reservation"
UPGRADE = "hotel-reservation/update-incompatible-correlated-v1"
MONGO_GEO = "io.kompose.service=mongodb-geo"


def test_problems_are_tagged_with_the_sregym_scenarios_they_reproduce() -> None:
    assert PROBLEMS.get(UPGRADE).tags.sources == ("sregym:update_incompatible_correlated",)
    assert "incompatible_upgrade" in vocabulary_of(UPGRADE).classify(
        "mongod says Wrong mongod version: invalid featureCompatibilityVersion")


def test_mongod_release_candidate_refuses_the_old_data_files_until_rolled_back(tmp_path: Path) -> None:
    cluster, run = deployed(UPGRADE)
    run.inject()
    run.advance(90)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        pods = harness.ok("get", "pods", "-n", NS, "-l", MONGO_GEO)
        assert "CrashLoopBackOff" in pods or "Error" in pods
        logs = harness.ok("logs", "-n", NS, "deploy/mongodb-geo", "--previous")
        assert '"msg":"Wrong mongod version"' in logs
        assert "Invalid feature compatibility version value '4.4'; expected '7.0' or '8.0'" in logs
        assert '"exitCode":62' in logs
        described = harness.ok("describe", "pod", "-n", NS, "-l", MONGO_GEO)
        assert "Exit Code:    62" in described
        # One release up (5.0 reads FCV 4.4) is a valid upgrade path: that database comes back.
        harness.ok("set", "image", "-n", NS, "deploy/mongodb-rate", "hotel-reserv-rate-mongo=mongo:5.0.31")
        # The rollback an SRE makes for the rest.
        for name in ("geo", "profile", "recommendation", "reservation", "user"):
            harness.ok("set", "image", "-n", NS, f"deploy/mongodb-{name}", f"hotel-reserv-{name}-mongo=mongo:4.4.6")
    finally:
        harness.server.stop()
    run.advance(120)
    for name in ("geo", "rate", "user"):
        pods = cluster.list("Pod", NS, label_selector=f"io.kompose.service=mongodb-{name}")
        assert pods and all(p["status"]["phase"] == "Running" for p in pods), name
        assert all(c["ready"] for p in pods for c in p["status"]["containerStatuses"]), name


CORRUPTION = "hotel-reservation/silent-data-corruption-geo-v1"


def test_corrupting_disk_shows_only_as_checksum_errors_and_follows_the_volume_not_the_pod(tmp_path: Path) -> None:
    assert PROBLEMS.get(CORRUPTION).tags.sources == ("sregym:silent_data_corruption",)
    cluster, run = deployed(CORRUPTION)
    ctx = run.check_context()
    assert service_calls_succeed(ctx, service="geo")[0]
    run.inject()
    run.advance(60)
    assert not service_calls_succeed(ctx, service="geo")[0]
    db = cluster.list("Pod", NS, label_selector=MONGO_GEO)[0]
    node = db["spec"]["nodeName"]
    # The block layer says nothing: no I/O errors in the node's kernel log.
    kernel = [line.text for line in cluster.twin.services.logs.node_lines(node, "kernel")]
    assert not any("I/O error" in t for t in kernel)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        logs = harness.ok("logs", "-n", NS, "deploy/mongodb-geo", "--previous")
        assert "read checksum error for 4096B block" in logs and "Fatal assertion" in logs
        # Recreating the pod on the same volume changes nothing.
        harness.ok("delete", "pod", "-n", NS, db["metadata"]["name"], "--wait=false")
    finally:
        harness.server.stop()
    run.advance(90)
    assert not service_calls_succeed(ctx, service="geo")[0]
    # Data restored on a fresh volume (what the gold does, as kubectl writes): geo serves again.
    run.apply_gold()
    run.advance(120)
    assert service_calls_succeed(ctx, service="geo")[0]


ROUTING = "hotel-reservation/calico-route-reflector-label-drift-v1"
LEGACY = "node-role.kubernetes.io/master"


def _listening_pods(cluster) -> list[tuple[str, str, str, int]]:
    """(name, node, pod IP, first containerPort) of the app's running pods."""
    found = []
    for pod in cluster.list("Pod", NS):
        ports = [p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports") or []]
        if pod["status"].get("phase") == "Running" and ports and pod["status"].get("podIP"):
            found.append((pod["metadata"]["name"], pod["spec"]["nodeName"], pod["status"]["podIP"], ports[0]))
    return found


def test_route_reflectors_selected_by_a_vanished_label_cut_cross_node_traffic_only(tmp_path: Path) -> None:
    assert PROBLEMS.get(ROUTING).tags.sources == ("sregym:calico_route_reflector_label_drift_hotel_reservation",)
    cluster, run = deployed(ROUTING)
    run.inject()
    run.advance(30)
    pods = _listening_pods(cluster)
    frontend = next(p for p in pods if p[0].startswith("frontend-"))
    same = next(p for p in pods if p[1] == frontend[1] and p[0] != frontend[0])
    other = next(p for p in pods if p[1] != frontend[1])
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        peer = harness.ok("get", "bgppeers.crd.projectcalico.org", "peer-with-route-reflectors",
                          "-o", "jsonpath={.spec.peerSelector}")
        assert peer == f"has({LEGACY})"
        mesh = harness.ok("get", "bgpconfigurations.crd.projectcalico.org", "default",
                          "-o", "jsonpath={.spec.nodeToNodeMeshEnabled}")
        assert mesh == "false"
        assert "No resources found" in harness.kubectl("get", "nodes", "-l", LEGACY).stderr
        # Every pod still looks healthy.
        assert "CrashLoopBackOff" not in harness.ok("get", "pods", "-n", NS)

        def nc(ip: str, port: int):
            return harness.kubectl("exec", "-n", NS, frontend[0], "--", "nc", "-zv", "-w", "3", ip, str(port),
                                   check=False)

        assert nc(same[2], same[3]).returncode == 0, same
        crossing = nc(other[2], other[3])
        assert crossing.returncode != 0 and "timed out" in (crossing.stderr + crossing.stdout).lower(), crossing
        # The other fix the peer accepts: select reflectors by the label Kubernetes sets today.
        harness.ok("patch", "bgppeers.crd.projectcalico.org", "peer-with-route-reflectors", "--type=merge", "-p",
                   '{"spec":{"nodeSelector":"!has(node-role.kubernetes.io/control-plane)",'
                   '"peerSelector":"has(node-role.kubernetes.io/control-plane)"}}')
        assert nc(other[2], other[3]).returncode == 0
        # A reflector without its cluster ID does not reflect: only its direct peers learn routes.
        harness.ok("annotate", "node", "kind-control-plane", "projectcalico.org/RouteReflectorClusterID-")
        assert nc(other[2], other[3]).returncode != 0
    finally:
        harness.server.stop()
