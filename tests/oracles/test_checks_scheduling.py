"""The scheduling-policy checks on a bare twin: the global default priority, and a workload that
must keep what it declares (replicas and requests) even while it waits for room."""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_scheduling import default_priority, default_priority_at_most, workload_declared

NS = "default"


def _ctx() -> CheckContext:
    return CheckContext(cluster=TwinCluster.new(seed=0), namespace=NS)


def _priority_class(name: str, value: int, default: bool) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def test_default_priority_follows_the_global_default() -> None:
    ctx = _ctx()
    assert default_priority_at_most(ctx)[0]  # the built-in classes are not global defaults
    ctx.cluster.create(_priority_class("batch", 100000, True))
    ok, detail = default_priority_at_most(ctx)
    assert not ok and "batch" in detail and "100000" in detail
    assert default_priority_at_most(ctx, value=100000)[0]
    # A pod created now gets the class admission picked: the check agrees with the API server.
    ctx.cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
    pod = ctx.cluster.get("Pod", NS, "p")
    assert (pod["spec"]["priorityClassName"], pod["spec"]["priority"]) == default_priority(ctx.cluster)
    ctx.cluster.patch("PriorityClass", None, "batch", {"globalDefault": False}, patch_type="merge")
    assert default_priority_at_most(ctx)[0]


def test_workload_declared_guards_replicas_and_requests_not_readiness() -> None:
    ctx = _ctx()
    ctx.cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": NS},
                        "spec": {"replicas": 3, "selector": {"matchLabels": {"a": "w"}},
                                 "template": {"metadata": {"labels": {"a": "w"}}, "spec": {"containers": [{
                                     "name": "c", "image": "busybox:1.36",
                                     "resources": {"requests": {"memory": "15Gi"}}}]}}}})
    wanted = {"c": {"memory": "15Gi"}}
    # Nothing has run yet (no ready replica): declared is enough.
    assert workload_declared(ctx, name="w", replicas=3, requests=wanted)[0]
    assert workload_declared(ctx, name="w", replicas=3, requests={"c": {"memory": "15360Mi"}})[0]
    ctx.cluster.patch("Deployment", NS, "w", {"spec": {"replicas": 1}})
    ok, detail = workload_declared(ctx, name="w", replicas=3, requests=wanted)
    assert not ok and "1 replicas" in detail
    ctx.cluster.patch("Deployment", NS, "w", {"spec": {"replicas": 3, "template": {"spec": {"containers": [
        {"name": "c", "resources": {"requests": {"memory": "1Gi"}}}]}}}})
    ok, detail = workload_declared(ctx, name="w", replicas=3, requests=wanted)
    assert not ok and "memory 1Gi" in detail
    assert not workload_declared(ctx, name="w", requests={"sidecar": {"memory": "1Mi"}})[0]
    ctx.cluster.delete("Deployment", NS, "w")
    assert workload_declared(ctx, name="w")[1] == "Deployment/w does not exist"
