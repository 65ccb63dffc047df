"""End-to-end control-plane scenarios: every controller working together on a fresh twin.

Each test is one behaviour an SRE would recognise from a real cluster; together they are the
acceptance list of "The twin, part 1".
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.workloads.rollout import rollout_undo


def deployment(name: str, image: str = "nginx:1.27", replicas: int = 3, ns: str = "default",
               **pod_extra: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image, "ports": [{"containerPort": 80}]}
    container.update(pod_extra.pop("container", {}))
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [container], **pod_extra}}}}


def pod(name: str, ns: str = "default", **container: Any) -> dict[str, Any]:
    spec_container = {"name": "main", "image": "busybox:1.36"}
    spec_container.update(container)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [spec_container]}}


def pods_of(twin: Twin, app: str, ns: str = "default") -> list[dict[str, Any]]:
    return [p for p in twin.list("pods", ns, label_selector=f"app={app}")
            if not p["metadata"].get("deletionTimestamp")]


def is_ready(p: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in (p.get("status") or {}).get("conditions") or [])


def waiting_reason(p: dict[str, Any], index: int = 0) -> str | None:
    statuses = (p.get("status") or {}).get("containerStatuses") or []
    if len(statuses) <= index:
        return None
    return (statuses[index].get("state") or {}).get("waiting", {}).get("reason")


def reasons(twin: Twin, name: str, ns: str = "default") -> list[str]:
    return [e["reason"] for e in twin.event_list(ns, involved_name=name)]


def test_deployment_reaches_ready_spread_over_workers_with_endpoints() -> None:
    twin = Twin(seed=1)
    twin.apply(deployment("web", container={"readinessProbe": {"httpGet": {"path": "/", "port": 80}}}))
    twin.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    twin.advance(30)
    pods = pods_of(twin, "web")
    assert len(pods) == 3
    assert all(p["status"]["phase"] == "Running" and is_ready(p) for p in pods)
    nodes = {p["spec"]["nodeName"] for p in pods}
    assert nodes == {"kind-worker", "kind-worker2", "kind-worker3"}
    endpoints = twin.get("endpoints", "default", "web")
    ips = sorted(a["ip"] for s in endpoints["subsets"] for a in s["addresses"])
    assert ips == sorted(p["status"]["podIP"] for p in pods)
    dep = twin.get("deployments", "default", "web")
    assert dep["status"]["readyReplicas"] == 3 and dep["status"]["availableReplicas"] == 3


def test_unknown_image_tag_pull_back_off() -> None:
    twin = Twin(seed=2)
    twin.apply(pod("bad", image="nginx:9.99-nope", command=None))
    twin.advance(5)
    p = twin.get("pods", "default", "bad")
    assert waiting_reason(p) in ("ErrImagePull", "ImagePullBackOff")
    twin.advance(30)
    p = twin.get("pods", "default", "bad")
    assert waiting_reason(p) == "ImagePullBackOff"
    evs = twin.event_list("default", involved_name="bad")
    failed = [e for e in evs if e["reason"] == "Failed"]
    assert any("ErrImagePull" in e["message"] for e in failed)
    assert any("Failed to pull image" in e["message"] for e in failed)
    assert any(e["reason"] == "BackOff" and "Back-off pulling image" in e["message"] for e in evs)


def test_crash_on_start_crash_loop_back_off_with_growing_delays() -> None:
    twin = Twin(seed=3)
    twin.apply(pod("crash", command=["sh", "-c", "echo 'fatal: cannot open /etc/app/config.yaml'; exit 1"]))
    restarts_at: list[float] = []
    last_count = 0
    saw_crash_loop = False
    for _ in range(1300):
        twin.step()
        status = twin.get("pods", "default", "crash")["status"]["containerStatuses"][0]
        saw_crash_loop |= (status["state"].get("waiting") or {}).get("reason") == "CrashLoopBackOff"
        if status["restartCount"] != last_count:
            last_count = status["restartCount"]
            restarts_at.append(twin.clock.elapsed)
    assert saw_crash_loop
    gaps = [b - a for a, b in itertools.pairwise(restarts_at)]
    # the first restart is immediate; then back-off 10, 20, 40 ... capped at 300 s (as kubelet 1.32)
    expected = [10, 20, 40, 80, 160, 300]
    assert len(gaps) >= len(expected)
    for gap, want in zip(gaps, expected, strict=False):
        assert want <= gap <= want + 3, (gaps, expected)
    status = twin.get("pods", "default", "crash")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert status["lastState"]["terminated"]["reason"] == "Error"
    logs = twin.logs("default", "crash", previous=True)
    assert "fatal: cannot open /etc/app/config.yaml" in logs
    assert "BackOff" in reasons(twin, "crash")


def test_missing_configmap_key_then_fixed_by_creating_it() -> None:
    twin = Twin(seed=4)
    twin.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "namespace": "default"},
                "data": {"OTHER": "x"}})
    twin.apply(pod("cfg", image="nginx:1.27",
                   env=[{"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "LOG_LEVEL"}}}]))
    twin.advance(10)
    p = twin.get("pods", "default", "cfg")
    assert waiting_reason(p) == "CreateContainerConfigError"
    assert "couldn't find key LOG_LEVEL in ConfigMap default/app" in \
        p["status"]["containerStatuses"][0]["state"]["waiting"]["message"]
    twin.patch("configmaps", "default", "app", {"data": {"LOG_LEVEL": "debug"}}, patch_type="merge")
    twin.advance(20)
    p = twin.get("pods", "default", "cfg")
    assert p["status"]["phase"] == "Running"


def test_readiness_on_unserved_port_and_bad_liveness() -> None:
    twin = Twin(seed=5)
    twin.apply(deployment("ro", replicas=1, container={"readinessProbe": {"httpGet": {"path": "/", "port": 8081}}}))
    twin.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ro", "namespace": "default"},
                "spec": {"selector": {"app": "ro"}, "ports": [{"port": 80}]}})
    twin.apply(deployment("lv", replicas=1, container={
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5,
                          "failureThreshold": 2}}))
    twin.advance(90)
    (ro,) = pods_of(twin, "ro")
    assert ro["status"]["phase"] == "Running" and not is_ready(ro)
    endpoints = twin.get("endpoints", "default", "ro")
    assert not any(s.get("addresses") for s in endpoints.get("subsets") or [])
    (lv,) = pods_of(twin, "lv")
    assert lv["status"]["containerStatuses"][0]["restartCount"] >= 1
    evs = twin.event_list("default", involved_name=lv["metadata"]["name"])
    assert any(e["reason"] == "Unhealthy" and "Liveness probe failed" in e["message"] for e in evs)
    assert any(e["reason"] == "Killing" and "failed liveness probe" in e["message"] for e in evs)


def test_memory_limit_below_working_set_is_oom_killed() -> None:
    twin = Twin(seed=6)
    twin.apply(pod("hog", image="polinux/stress", command=["stress"],
                   args=["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"],
                   resources={"limits": {"memory": "100Mi"}, "requests": {"memory": "50Mi"}}))
    twin.advance(60)
    status = twin.get("pods", "default", "hog")["status"]["containerStatuses"][0]
    terminated = status["lastState"].get("terminated") or status["state"].get("terminated")
    assert terminated["reason"] == "OOMKilled" and terminated["exitCode"] == 137
    assert status["restartCount"] >= 1


def test_unschedulable_node_selector_and_taint() -> None:
    twin = Twin(seed=7)
    twin.apply(deployment("pinned", replicas=1, nodeSelector={"disktype": "ssd"}))
    twin.apply(deployment("cp", replicas=1, nodeSelector={"node-role.kubernetes.io/control-plane": ""}))
    twin.advance(10)
    (pinned,) = pods_of(twin, "pinned")
    assert pinned["status"]["phase"] == "Pending"
    msgs = [e["message"] for e in twin.event_list("default", reason="FailedScheduling",
                                                  involved_name=pinned["metadata"]["name"])]
    assert msgs and msgs[0].startswith("0/4 nodes are available:")
    assert "didn't match Pod's node affinity/selector" in msgs[0]
    (cp,) = pods_of(twin, "cp")
    cp_msgs = [e["message"] for e in twin.event_list("default", reason="FailedScheduling",
                                                     involved_name=cp["metadata"]["name"])]
    assert "untolerated taint {node-role.kubernetes.io/control-plane: }" in cp_msgs[0]


def test_quota_failed_create_and_limitrange_defaults() -> None:
    twin = Twin(seed=8)
    twin.apply({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "default"},
                "spec": {"limits": [{"type": "Container", "default": {"memory": "256Mi", "cpu": "200m"},
                                     "defaultRequest": {"memory": "128Mi", "cpu": "100m"}}]}})
    twin.apply({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute", "namespace": "default"},
                "spec": {"hard": {"limits.memory": "600Mi"}}})
    twin.apply(deployment("q", replicas=3))
    twin.advance(20)
    pods = pods_of(twin, "q")
    assert len(pods) == 2
    assert pods[0]["spec"]["containers"][0]["resources"]["limits"]["memory"] == "256Mi"
    rs_name = twin.list("replicasets", "default", label_selector="app=q")[0]["metadata"]["name"]
    failed = [e for e in twin.event_list("default", reason="FailedCreate", involved_name=rs_name)]
    assert failed and "exceeded quota: compute" in failed[0]["message"]


def test_failing_validating_webhook_blocks_pod_creation() -> None:
    twin = Twin(seed=9)
    twin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-system"}})
    twin.apply({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "pod-policy-webhook", "namespace": "policy-system"},
                "spec": {"selector": {"app": "pod-policy"}, "ports": [{"port": 443, "targetPort": 8443}]}})
    twin.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "pod-policy"},
                "webhooks": [{"name": "pod-policy.example.com", "failurePolicy": "Fail",
                              "sideEffects": "None", "admissionReviewVersions": ["v1"],
                              "clientConfig": {"service": {"name": "pod-policy-webhook",
                                                           "namespace": "policy-system", "path": "/validate"}},
                              "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                         "resources": ["pods"]}],
                              "namespaceSelector": {"matchExpressions": [
                                  {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                   "values": ["kube-system", "policy-system"]}]}}]})
    twin.apply(deployment("blocked", replicas=1))
    twin.advance(10)
    assert pods_of(twin, "blocked") == []
    rs_name = twin.list("replicasets", "default", label_selector="app=blocked")[0]["metadata"]["name"]
    failed = twin.event_list("default", reason="FailedCreate", involved_name=rs_name)
    assert failed and 'failed calling webhook "pod-policy.example.com"' in failed[0]["message"]
    assert 'no endpoints available for service "pod-policy-webhook"' in failed[0]["message"]


def _available(twin: Twin, app: str) -> int:
    return sum(1 for p in pods_of(twin, app) if is_ready(p))


def test_rolling_update_to_bad_image_keeps_old_pods_then_undo() -> None:
    twin = Twin(seed=10)
    dep = deployment("roll", replicas=3, container={"readinessProbe": {"httpGet": {"path": "/", "port": 80}}})
    dep["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    twin.apply(dep)
    twin.advance(30)
    assert _available(twin, "roll") == 3
    twin.patch("deployments", "default", "roll",
               {"spec": {"template": {"spec": {"containers": [{"name": "roll", "image": "nginx:9.99-nope"}]}}}})
    twin.advance(60)
    assert _available(twin, "roll") == 3  # old pods keep serving
    rollout_undo(twin, "default", "roll")
    twin.advance(60)
    pods = pods_of(twin, "roll")
    assert len(pods) == 3 and all(p["spec"]["containers"][0]["image"] == "nginx:1.27" for p in pods)
    assert all(is_ready(p) for p in pods)


def test_rolling_update_with_max_unavailable_100_percent_takes_everything_down() -> None:
    twin = Twin(seed=11)
    dep = deployment("all", replicas=3)
    dep["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}
    twin.apply(dep)
    twin.advance(30)
    twin.patch("deployments", "default", "all",
               {"spec": {"template": {"spec": {"containers": [{"name": "all", "image": "nginx:9.99-nope"}]}}}})
    twin.advance(60)
    assert _available(twin, "all") == 0


def test_deleting_deployment_cascades() -> None:
    twin = Twin(seed=12)
    twin.apply(deployment("gone", replicas=2))
    twin.advance(20)
    twin.delete("deployments", "default", "gone")
    twin.advance(60)
    assert twin.list("replicasets", "default", label_selector="app=gone") == []
    assert twin.list("pods", "default", label_selector="app=gone") == []


def job(name: str, sidecar: str) -> dict[str, Any]:
    main = {"name": "work", "image": "busybox:1.36", "command": ["sh", "-c", "echo archiving; sleep 5; echo done"]}
    side = {"name": "log-shipper", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do sleep 1; done"]}
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [main]}
    if sidecar == "regular":
        spec["containers"].append(side)
    else:
        spec["initContainers"] = [{**side, "restartPolicy": "Always"}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": spec}}}


def _job_complete(twin: Twin, name: str) -> bool:
    conds = (twin.get("jobs", "default", name).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conds)


def test_job_regular_sidecar_never_completes_native_sidecar_does() -> None:
    twin = Twin(seed=13)
    twin.apply(job("regular", "regular"))
    twin.apply(job("native", "native"))
    twin.advance(120)
    assert _job_complete(twin, "native")
    assert not _job_complete(twin, "regular")


def test_cronjob_creates_jobs_on_schedule() -> None:
    twin = Twin(seed=14)
    twin.apply({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick", "namespace": "default"},
                "spec": {"schedule": "*/1 * * * *",
                         "jobTemplate": {"spec": {"template": {"spec": {
                             "restartPolicy": "OnFailure",
                             "containers": [{"name": "c", "image": "busybox:1.36", "command": ["echo", "hi"]}]}}}}}})
    twin.advance(185)
    jobs = twin.list("jobs", "default")
    assert len(jobs) >= 3
    assert all(j["metadata"]["name"].startswith("tick-") for j in jobs)


def test_statefulset_pvcs_and_rwo_multi_attach() -> None:
    twin = Twin(seed=15)
    twin.apply({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
                "spec": {"serviceName": "db", "replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                         "template": {"metadata": {"labels": {"app": "db"}},
                                      "spec": {"containers": [{"name": "db", "image": "redis:7.2",
                                                               "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                         "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                                   "spec": {"accessModes": ["ReadWriteOnce"],
                                                            "resources": {"requests": {"storage": "1Gi"}}}}]}})
    twin.advance(60)
    pvcs = sorted(p["metadata"]["name"] for p in twin.list("pvc", "default"))
    assert pvcs == ["data-db-0", "data-db-1"]
    assert [p["metadata"]["name"] for p in twin.list("pods", "default", label_selector="app=db")] == ["db-0", "db-1"]
    # two pods pinned to different nodes sharing one RWO claim
    twin.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "shared", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    for name, node in (("a", "kind-worker"), ("b", "kind-worker2")):
        twin.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                    "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                             "containers": [{"name": "c", "image": "nginx:1.27",
                                             "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                             "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "shared"}}]}})
        twin.advance(20)
    assert twin.get("pods", "default", "a")["status"]["phase"] == "Running"
    b = twin.get("pods", "default", "b")
    assert b["status"]["phase"] == "Pending"
    attach = twin.event_list("default", reason="FailedAttachVolume", involved_name="b")
    assert attach and "Multi-Attach error" in attach[0]["message"]


def test_same_seed_same_dump_and_events() -> None:
    def run(seed: int) -> tuple[str, list[Any]]:
        twin = Twin(seed=seed)
        twin.apply(deployment("web", replicas=3))
        twin.apply(pod("bad", image="nginx:9.99-nope"))
        twin.advance(120)
        twin.patch("deployments", "default", "web", {"spec": {"replicas": 5}})
        twin.advance(60)
        return twin.dump(), twin.event_list()

    first, second, other = run(21), run(21), run(22)
    assert first == second
    assert first[0] != other[0]


@pytest.mark.parametrize("ns", ["kube-system"])
def test_system_components_run(ns: str) -> None:
    twin = Twin(seed=0)
    twin.advance(30)
    names = [p["metadata"]["name"] for p in twin.list("pods", ns) if p["status"].get("phase") == "Running"]
    assert sum(n.startswith("coredns-") for n in names) == 2
    assert sum(n.startswith("kube-proxy-") for n in names) == 4
