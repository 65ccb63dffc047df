"""Node-OS problems: the fault is a tuning DaemonSet's sysctl, the symptoms are the app's socket
errors and the node's kernel log, and the setting outlives the DaemonSet. (`sregym check` of
each problem runs in the registry-wide tests/problems/test_check_protocol.py.)"""

from __future__ import annotations

import pytest

from sregym.cluster.twin import TwinCluster
from sregym.oracles.checks_node_os import node_filefd_headroom, node_threads_headroom
from sregym.problems.registry import PROBLEMS
from sregym.problems.run import ProblemRun
from sregym.problems.vocabulary import vocabulary_of
from sregym.twin.chaos import node_kernel
from support.problem_runs import deployed

NS = "hotel-reservation"
FILE_MAX = "hotel-reservation/file-max-exhaustion-v1"
THREADS = "hotel-reservation/thread-exhaustion-v1"


def test_file_max_fault_breaks_profiles_sockets_until_the_setting_is_restored() -> None:
    cluster, run = deployed(FILE_MAX)
    ctx = run.check_context()
    assert node_filefd_headroom(ctx)[0]
    run.inject()
    run.advance(30)
    ok, detail = node_filefd_headroom(ctx)
    assert not ok and "fs.file-max" in detail
    profile = next(p for p in cluster.list("Pod", NS, label_selector="io.kompose.service=profile"))
    node = profile["spec"]["nodeName"]
    assert "socket: too many open files in system" in cluster.logs(NS, profile["metadata"]["name"])
    kernel = [line.text for line in cluster.twin.services.logs.node_lines(node, "kernel")]
    assert "VFS: file-max limit 1024 reached" in kernel
    # The sysctl outlives the DaemonSet that set it.
    cluster.delete("DaemonSet", "kube-system", "node-file-limits")
    run.advance(30)
    assert not node_filefd_headroom(ctx)[0]
    restore = PROBLEMS.get(FILE_MAX).gold[-1].manifest  # the gold's restoring DaemonSet
    assert restore is not None
    cluster.apply(restore)
    run.advance(45)
    assert node_filefd_headroom(ctx)[0]
    # The Go HTTP server (frontend) cannot accept connections on a node out of file handles.
    frontend = next(p for p in cluster.list("Pod", NS, label_selector="io.kompose.service=frontend"))
    node_kernel.write(cluster.twin, frontend["spec"]["nodeName"], "fs.file-max", "1024")
    run.advance(2)
    assert ("http: Accept error: accept tcp [::]:5000: accept4: too many open files in system; retrying in 5ms"
            in cluster.logs(NS, frontend["metadata"]["name"]))


@pytest.mark.parametrize(("problem_id", "text", "mechanism"), [
    ("hotel-reservation/conntrack-exhaustion-v1", "nf_conntrack table full, dropping packet", "conntrack"),
    ("hotel-reservation/ephemeral-port-exhaustion-v1", "connect: cannot assign requested address",
     "ephemeral_ports"),
    (FILE_MAX, "socket: too many open files in system", "file_descriptors"),
    (THREADS, "runtime: failed to create new OS thread (have 11 already; errno=11)", "thread_exhaustion"),
])
def test_the_signature_names_the_mechanism(problem_id: str, text: str, mechanism: str) -> None:
    assert PROBLEMS.get(problem_id).ground_truth.mechanism == mechanism  # loads the catalogue's cues
    assert vocabulary_of(problem_id).classify(text) == {mechanism}


def test_thread_exhaustion_crash_loops_the_nodes_go_services_without_pid_pressure() -> None:
    cluster = TwinCluster.new(3)
    run = ProblemRun(PROBLEMS.get(THREADS), cluster, seed=3, noise="none")
    run.deploy()
    run.advance(30)
    ctx = run.check_context()
    assert node_threads_headroom(ctx)[0]
    run.inject()
    run.advance(60)
    ok, detail = node_threads_headroom(ctx)
    assert not ok and "kernel.threads-max" in detail
    geo = next(p for p in cluster.list("Pod", NS, label_selector="io.kompose.service=geo"))
    status = geo["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 2 and status["lastState"]["terminated"]["exitCode"] == 2
    logs = cluster.logs(NS, geo["metadata"]["name"])
    assert "runtime: failed to create new OS thread (have " in logs
    assert "runtime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc" in logs
    node = cluster.get("Node", None, geo["spec"]["nodeName"])
    conditions = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert conditions["PIDPressure"] == "False" and conditions["Ready"] == "True"
