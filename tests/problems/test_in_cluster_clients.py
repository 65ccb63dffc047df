"""Problems caused by programs acting on the API from inside pods: the symptoms come from the
in-pod clients, and only the fixes that stop the cause pass. (`sregym check` of each problem runs
in the registry-wide tests/problems/test_check_protocol.py.)"""

from __future__ import annotations

from sregym.cluster.base import AGENT
from support.problem_runs import deployed

NS = "hotel-reservation"


def test_restoring_the_limit_alone_is_undone_by_the_next_cronjob_run() -> None:
    cluster, run = deployed("hotel-reservation/nightly-rebalance-oom-v1")
    run.inject()
    run.advance(90)
    jobs = cluster.list("Job", "kube-system", label_selector="app=vpa-updater")
    assert jobs, "the CronJob ran"
    pods = cluster.list("Pod", "kube-system", label_selector="app=vpa-updater")
    assert any("deployment.apps/recommendation patched" in cluster.logs("kube-system", p["metadata"]["name"])
               for p in pods)
    agent = cluster.as_user(AGENT)
    agent.patch("Deployment", NS, "recommendation", {"spec": {"template": {"spec": {"containers": [
        {"name": "hotel-reserv-recommendation", "resources": {"limits": {"memory": "256Mi"}}}]}}}})
    score = run.verify()
    assert not score.passed
    limit = cluster.get("Deployment", NS, "recommendation")["spec"]["template"]["spec"]["containers"][0]
    assert limit["resources"]["limits"]["memory"] == "4Mi"  # squeezed again by a later run


def test_finalizer_deadlock_is_fixed_by_removing_the_finalizer_too() -> None:
    cluster, run = deployed("hotel-reservation/finalizer-deadlock-controller-v1")
    run.inject()
    run.advance(30)
    held = cluster.get("ConfigMap", NS, "reservation-cleanup-token")
    assert held is not None and held["metadata"].get("deletionTimestamp")
    pod = cluster.list("Pod", NS, label_selector="app.kubernetes.io/name=cleanup-controller")[0]
    assert "cannot patch resource" in cluster.logs(NS, pod["metadata"]["name"])
    cluster.as_user(AGENT).patch("ConfigMap", NS, "reservation-cleanup-token",
                                 {"metadata": {"finalizers": None}}, patch_type="merge")
    assert run.verify().passed
