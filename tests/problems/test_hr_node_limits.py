"""Held connections against a limit: frontend under `ulimit -n 1024` with a soak client holding
1100 connections (EMFILE on accept), and a client pinned to frontend's node holding more
connections than the node's conntrack table (`table full, dropping packet`). `sregym check` of
each problem runs in the registry-wide tests/problems/test_check_protocol.py."""

from __future__ import annotations

from pathlib import Path

from sregym.oracles.checks import entry_slo
from sregym.oracles.checks_node_clock import node_clocks_in_sync
from sregym.oracles.checks_node_os import node_conntrack_headroom, node_filefd_headroom
from sregym.problems.catalog.hotel_reservation.node_limits import (
    CHECKER,
    CLIENT,
    FD_CLIENT,
    FRONTEND_CONTAINER,
    GATEWAY,
    TLS_CA,
)
from sregym.problems.registry import PROBLEMS
from sregym.problems.vocabulary import vocabulary_of
from support.kube import serve_twin
from support.problem_runs import deployed

NS = "hotel-reservation"
FD = "hotel-reservation/frontend-open-file-limit-v1"
CONNTRACK = "hotel-reservation/conntrack-client-flood-v1"
EMFILE = "http: Accept error: accept tcp [::]:5000: accept4: too many open files; retrying in"
TABLE_FULL = "nf_conntrack: nf_conntrack: table full, dropping packet"


def _pod(cluster, selector: str) -> dict:
    return next(p for p in cluster.list("Pod", NS, label_selector=selector)
                if (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"))


def test_the_soak_client_alone_is_served_by_a_frontend_with_the_default_limit() -> None:
    """Without the wrapper the same 1100 connections are far below containerd's 1048576."""
    cluster, run = deployed(FD)
    soak = PROBLEMS.get(FD).faults[1]
    cluster.apply(soak.params["objects"][0])
    run.advance(60)
    ctx = run.check_context()
    frontend = _pod(cluster, "io.kompose.service=frontend")
    assert EMFILE not in cluster.logs(NS, frontend["metadata"]["name"])
    client = _pod(cluster, f"app={FD_CLIENT}")
    assert "holding 1100/1100 connections" in cluster.logs(NS, client["metadata"]["name"])
    assert entry_slo(ctx)[0]


def test_a_low_ulimit_with_held_connections_fails_accept_with_emfile_until_the_wrapper_goes(
        tmp_path: Path) -> None:
    cluster, run = deployed(FD)
    ctx = run.check_context()
    run.inject()
    run.advance(60)
    frontend = _pod(cluster, "io.kompose.service=frontend")
    name = frontend["metadata"]["name"]
    logs = cluster.logs(NS, name)
    assert EMFILE + " 5ms" in logs and EMFILE + " 1s" in logs
    assert "too many open files in system" not in logs  # per process (EMFILE), not the node (ENFILE)
    assert node_filefd_headroom(ctx)[0]
    ok, detail = entry_slo(ctx)
    assert not ok, detail
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        limits = harness.ok("exec", "-n", NS, name, "--", "cat", "/proc/1/limits", user="admin")
        shell = harness.ok("exec", "-n", NS, name, "--", "cat", "/proc/self/limits", user="admin")
        described = harness.ok("get", "deploy", "frontend", "-n", NS, "-o", "jsonpath={.spec.template.spec}",
                               user="admin")
    finally:
        harness.server.stop()
    assert next(line for line in limits.splitlines() if line.startswith("Max open files")).split()[3:5] == \
        ["1024", "1024"]
    assert "1048576" in next(line for line in shell.splitlines() if line.startswith("Max open files"))
    assert "ulimit -n 1024" in described
    # The gold removes the wrapper; the client redials the new pod and is served.
    for action in PROBLEMS.get(FD).gold:
        assert action.patch is not None
        cluster.patch("Deployment", NS, action.name, action.patch, patch_type="json")
    run.advance(120)
    new = _pod(cluster, "io.kompose.service=frontend")
    assert new["metadata"]["name"] != name
    assert EMFILE not in cluster.logs(NS, new["metadata"]["name"])
    client = _pod(cluster, f"app={FD_CLIENT}")
    assert "connections closed by peer; redialing" in cluster.logs(NS, client["metadata"]["name"])
    assert entry_slo(ctx)[0]


def test_a_pinned_client_fills_its_nodes_conntrack_table_until_it_is_removed() -> None:
    cluster, run = deployed(CONNTRACK)
    ctx = run.check_context()
    assert node_conntrack_headroom(ctx)[0]
    run.inject()
    run.advance(45)
    frontend = _pod(cluster, "io.kompose.service=frontend")
    node = frontend["spec"]["nodeName"]
    client = _pod(cluster, f"app={CLIENT}")
    assert client["spec"]["nodeName"] == node
    assert all(p["spec"]["nodeName"] == node for p in cluster.list("Pod", NS, label_selector=f"app={GATEWAY}"))
    assert "holding 137626/137626 connections" in cluster.logs(NS, client["metadata"]["name"])
    kernel = {line.text for line in cluster.twin.services.logs.node_lines(node, "kernel")}
    assert TABLE_FULL in kernel
    others = {n["metadata"]["name"] for n in cluster.list("Node", None)} - {node}
    assert not any(TABLE_FULL in {line.text for line in cluster.twin.services.logs.node_lines(o, "kernel")}
                   for o in others)
    ok, detail = node_conntrack_headroom(ctx)
    node_ip = next(a["address"] for a in cluster.get("Node", None, node)["status"]["addresses"]
                   if a["type"] == "InternalIP")
    assert not ok and f"conntrack table of {node_ip}:9100 is 100% full" in detail
    assert not entry_slo(ctx)[0]
    # Stopping the flood closes its connections and the table drains.
    cluster.delete("Deployment", NS, CLIENT)
    run.advance(90)
    assert node_conntrack_headroom(ctx)[0]
    assert entry_slo(ctx)[0]


def test_the_signatures_name_their_mechanisms() -> None:
    assert PROBLEMS.get(FD).ground_truth.mechanism == "file_descriptors"
    assert vocabulary_of(FD).classify("accept tcp [::]:5000: accept4: too many open files") == {"file_descriptors"}
    assert vocabulary_of(CONNTRACK).classify(TABLE_FULL) == {"conntrack"}


CLOCK = "hotel-reservation/node-clock-drift-tls-v1"


def test_a_moved_node_clock_fails_the_valid_certificate_only_on_that_node(tmp_path: Path) -> None:
    cluster, run = deployed(CLOCK)
    ctx = run.check_context()
    assert node_clocks_in_sync(ctx)[0]
    run.inject()
    run.advance(60)
    frontend = _pod(cluster, "io.kompose.service=frontend")
    node = frontend["spec"]["nodeName"]
    checker = cluster.logs(NS, frontend["metadata"]["name"], container=CHECKER)
    assert "x509: certificate has expired or is not yet valid: current time " in checker and " is after " in checker
    ok, detail = node_clocks_in_sync(ctx)
    assert not ok and "2592000 s off" in detail
    # The same certificate checked from another node is valid: the clock is the node's.
    other = sorted({n["metadata"]["name"] for n in cluster.list("Node", None)
                    if "control-plane" not in str(n["metadata"].get("labels"))} - {node})[0]
    sidecar = next(c for c in frontend["spec"]["containers"] if c["name"] == CHECKER)
    sidecar = {**sidecar, "volumeMounts": [m for m in sidecar["volumeMounts"] if m["name"] == "tls-ca"]}
    cluster.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cert-probe", "namespace": NS},
                   "spec": {"nodeName": other, "containers": [sidecar],
                            "volumes": [{"name": "tls-ca", "configMap": {"name": TLS_CA}}]}})
    run.advance(20)
    assert "certificate valid until" in cluster.logs(NS, "cert-probe")
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        skewed = harness.ok("exec", "-n", NS, frontend["metadata"]["name"], "-c", FRONTEND_CONTAINER,
                            "--", "date", "+%s", user="admin")
        probe = harness.ok("get", "pod", "-n", "default", "-l", "app=node-probe", "-o",
                           "jsonpath={.items[0].spec.nodeName}", user="admin")
    finally:
        harness.server.stop()
    assert int(skewed) - int(cluster.now()) > 2592000 - 120
    assert probe == node
    # The gold: delete the probe, set the clocks from the hardware clock.
    for action in PROBLEMS.get(CLOCK).gold:
        if action.op == "delete":
            cluster.delete(action.kind, action.namespace, action.name)
        else:
            assert action.manifest is not None
            cluster.apply(action.manifest)
    run.advance(60)
    assert node_clocks_in_sync(ctx)[0]
    tail = cluster.logs(NS, frontend["metadata"]["name"], container=CHECKER).strip().splitlines()[-1]
    assert "certificate valid until" in tail
