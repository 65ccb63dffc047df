"""The emptyDir-fill problem: the sidecar's writes are counted against the emptyDir's sizeLimit and
the kubelet evicts geo with its own message, until the gold removes the sidecar. (`sregym check`
of the problem runs in the registry-wide tests/problems/test_check_protocol.py.)"""

from __future__ import annotations

from sregym.oracles.checks_local_storage import no_recent_eviction
from support.problem_runs import deployed

NS = "hotel-reservation"
PROBLEM = "hotel-reservation/emptydir-fill-eviction-v1"


def test_capture_sidecar_gets_geo_evicted_with_the_kubelet_message() -> None:
    cluster, run = deployed(PROBLEM)
    ctx = run.check_context()
    assert no_recent_eviction(ctx, deployment="geo")[0]
    run.inject()
    run.advance(100)
    pods = cluster.list("Pod", NS, label_selector="io.kompose.service=geo")
    evicted = [p for p in pods if p["status"].get("reason") == "Evicted"]
    message = 'Usage of EmptyDir volume "captures" exceeds the limit "256Mi". '
    assert evicted and {p["status"]["message"] for p in evicted} == {message}
    assert all(p["status"]["phase"] == "Failed" for p in evicted)
    assert any(e.get("reason") == "Evicted" and e.get("message") == message
               for e in cluster.list("Event", NS))
    ok, detail = no_recent_eviction(ctx, deployment="geo")
    assert not ok and "captures" in detail
    node = cluster.get("Node", None, evicted[0]["spec"]["nodeName"])
    pressure = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert pressure["DiskPressure"] == "False"  # the pod's own limit, not the node's disk
