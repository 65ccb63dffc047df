"""`wait_pod_turnover` waits for a restart to finish, whether the restart deleted the pods or
patched the Deployment's template (right after a patch the old pods are still Ready and not yet
terminating, which once let the wait return at once)."""

from __future__ import annotations

from sregym.faults.base import make_fault
from support.problem_runs import deployed

NS = "demo-shop"


def _pods(cluster, selector: str) -> dict[str, bool]:
    return {p["metadata"]["name"]: bool(p["metadata"].get("deletionTimestamp"))
            for p in cluster.list("Pod", NS, label_selector=selector)}


def _a_deployment(cluster) -> tuple[str, str]:
    deployment = cluster.list("Deployment", NS)[0]
    labels = deployment["spec"]["selector"]["matchLabels"]
    return deployment["metadata"]["name"], ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def test_a_template_patch_is_waited_for_until_the_new_pods_serve() -> None:
    cluster, _ = deployed("demo-shop/bad-image-tag-v1")
    name, selector = _a_deployment(cluster)
    before = set(_pods(cluster, selector))
    cluster.patch("Deployment", NS, name, {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": "2026-12-03T00:00:00Z"}}}}})
    state = make_fault("wait_pod_turnover", {"namespace": NS, "label_selector": selector}).inject(cluster)
    assert state["waited_s"] > 0
    after = _pods(cluster, selector)
    assert after and not set(after) & before, (before, after)
    assert not any(after.values())


def test_a_deleted_pod_is_waited_for_and_a_settled_workload_is_not() -> None:
    cluster, _ = deployed("demo-shop/bad-image-tag-v1")
    _, selector = _a_deployment(cluster)
    settled = make_fault("wait_pod_turnover", {"namespace": NS, "label_selector": selector}).inject(cluster)
    assert settled["waited_s"] == 0
    before = set(_pods(cluster, selector))
    for pod in before:
        cluster.delete("Pod", NS, pod)
    state = make_fault("wait_pod_turnover", {"namespace": NS, "label_selector": selector}).inject(cluster)
    assert state["waited_s"] > 0
    assert not set(_pods(cluster, selector)) & before
