"""Workload controllers, defaulting and garbage collection.

Most tests isolate the workload controllers from the scheduler and kubelet (other subsystems) by
replacing them with a tiny stand-in kubelet whose behaviour the test chooses (which pods become
Ready, which Succeed). The end-to-end tests at the bottom use the real ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sregym.errors import ApiError, Forbidden
from sregym.twin import Twin
from sregym.twin.machinery.objects import clone
from sregym.twin.workloads.rollout import rollout_history, rollout_restart, rollout_status, rollout_undo
from sregym.twin.workloads.shared import compute_hash, safe_encode, scaled_value

NODE_SUBSYSTEMS = {"scheduler", "kubelet", "volume-binding", "volume-attach", "attachdetach", "volumes"}


class StandInKubelet:
    """Marks pods Running (Ready when `healthy(pod)`), Succeeded when `succeeds(pod)`, and removes
    terminating pods at once."""

    name = "stand-in-kubelet"

    def __init__(self, twin: Twin, healthy: Callable[[dict[str, Any]], bool] = lambda p: True,
                 succeeds: Callable[[dict[str, Any]], bool] = lambda p: False) -> None:
        self.twin = twin
        self.healthy = healthy
        self.succeeds = succeeds

    def reconcile(self) -> None:
        store = self.twin.store
        now = self.twin.clock.iso()
        for pod in list(store.scan("Pod")):
            meta = pod["metadata"]
            if meta.get("deletionTimestamp"):
                store.remove_now("Pod", meta["namespace"], meta["name"])
                continue
            status = pod.get("status") or {}
            if status.get("phase") in ("Succeeded", "Failed"):
                continue
            if self.succeeds(pod):
                phase, ready = "Succeeded", "False"
            else:
                phase, ready = "Running", "True" if self.healthy(pod) else "False"
            old_ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), None)
            if status.get("phase") == phase and old_ready and old_ready["status"] == ready:
                continue
            since = old_ready["lastTransitionTime"] if old_ready and old_ready["status"] == ready else now

            def put(o: dict[str, Any], phase: str = phase, ready: str = ready, since: str = since) -> None:
                o["status"] = {**(o.get("status") or {}), "phase": phase,
                               "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since}]}

            store.mutate("Pod", meta["namespace"], meta["name"], put, status=True)


def isolated_twin(seed: int = 0, **kubelet: Any) -> Twin:
    twin = Twin(seed=seed)
    twin.controllers = [c for c in twin.controllers if c.name not in NODE_SUBSYSTEMS]
    twin.controllers.append(StandInKubelet(twin, **kubelet))  # type: ignore[arg-type]
    return twin


def deployment(name: str, replicas: int = 3, image: str = "nginx:1.27", **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": image}]}}, **spec}}


def live_pods(twin: Twin, app: str, ns: str = "default") -> list[dict[str, Any]]:
    return [p for p in twin.list("pods", ns, label_selector=f"app={app}")
            if not p["metadata"].get("deletionTimestamp")]


def images(pods: list[dict[str, Any]]) -> list[str]:
    return sorted(p["spec"]["containers"][0]["image"] for p in pods)


def good_image(pod: dict[str, Any]) -> bool:
    return not pod["spec"]["containers"][0]["image"].endswith("-bad")


def messages(twin: Twin, reason: str, ns: str = "default") -> list[str]:
    return [e["message"] for e in twin.event_list(ns, reason=reason)]


# ---------------------------------------------------------------------------------- defaulting
def test_defaults_visible_on_created_objects() -> None:
    twin = Twin(seed=1)
    dep = twin.apply(deployment("web"))[0]
    spec = dep["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"], pod_spec["schedulerName"],
            pod_spec["terminationGracePeriodSeconds"], pod_spec["securityContext"]) == \
        ("Always", "ClusterFirst", "default-scheduler", 30, {})
    assert "serviceAccountName" not in pod_spec and "tolerations" not in pod_spec  # pods only
    container = pod_spec["containers"][0]
    assert (container["imagePullPolicy"], container["terminationMessagePath"],
            container["terminationMessagePolicy"], container["resources"]) == \
        ("IfNotPresent", "/dev/termination-log", "File", {})

    pod = twin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                       "spec": {"containers": [{
                           "name": "c", "image": "busybox", "ports": [{"containerPort": 80}],
                           "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                           "readinessProbe": {"httpGet": {"port": 80}}}]}})
    ps = pod["spec"]
    c = ps["containers"][0]
    assert c["imagePullPolicy"] == "Always"  # no tag means :latest
    assert c["ports"][0]["protocol"] == "TCP"
    assert c["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert c["readinessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                   "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert (ps["serviceAccountName"], ps["enableServiceLinks"], ps["priority"], ps["preemptionPolicy"]) == \
        ("default", True, 0, "PreemptLowerPriority")
    assert {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 300} in ps["tolerations"]
    assert pod["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}

    svc = twin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
                       "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080}]}})["spec"]
    assert (svc["type"], svc["sessionAffinity"], svc["ports"][0], svc["ipFamilies"], svc["ipFamilyPolicy"],
            svc["internalTrafficPolicy"]) == ("ClusterIP", "None", {"port": 8080, "protocol": "TCP",
                                                                     "targetPort": 8080},
                                              ["IPv4"], "SingleStack", "Cluster")
    pvc = twin.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": "d", "namespace": "default"},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert (pvc["spec"]["storageClassName"], pvc["spec"]["volumeMode"]) == ("standard", "Filesystem")
    ns = twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    assert ns["spec"] == {"finalizers": ["kubernetes"]} and ns["status"] == {"phase": "Active"}
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "shop"}

    job = twin.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                       "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                      "containers": [{"name": "c", "image": "busybox:1.36"}]}}}})
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "j"
    assert (job["spec"]["completions"], job["spec"]["parallelism"], job["spec"]["backoffLimit"],
            job["spec"]["completionMode"], job["spec"]["suspend"]) == (1, 1, 6, "NonIndexed", False)
    sts = twin.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
                       "spec": {"selector": {"matchLabels": {"app": "db"}},
                                "template": {"metadata": {"labels": {"app": "db"}},
                                             "spec": {"containers": [{"name": "db", "image": "redis:7.2"}]}}}})
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady"
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}


def test_defaulting_is_idempotent_on_update() -> None:
    twin = Twin(seed=2)
    dep = twin.apply(deployment("web"))[0]
    again = twin.apply(deployment("web"))[0]
    assert again["metadata"]["generation"] == dep["metadata"]["generation"] == 1


# ---------------------------------------------------------------------------------- helpers
def test_template_hash_has_kube_shape() -> None:
    assert safe_encode("0123456789") == "456789bcdf"
    digest = compute_hash({"spec": {"containers": [{"name": "a"}]}})
    assert set(digest) <= set("456789bcdf") and 8 <= len(digest) <= 10
    assert compute_hash({"a": 1}) == compute_hash({"a": 1}) != compute_hash({"a": 1}, 1)
    # maxSurge rounds up, maxUnavailable rounds down
    assert scaled_value("25%", 10, True) == 3 and scaled_value("25%", 10, False) == 2
    assert scaled_value(2, 10, True) == 2


# ---------------------------------------------------------------------------------- ReplicaSet
def test_replicaset_creates_and_scales_down_unready_first() -> None:
    twin = isolated_twin(seed=3, healthy=lambda p: not p["metadata"]["name"].endswith(("b", "d", "f", "h")))
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "cache", "namespace": "default"},
          "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "cache"}},
                   "template": {"metadata": {"labels": {"app": "cache"}},
                                "spec": {"containers": [{"name": "c", "image": "redis:7.2"}]}}}}
    created = twin.apply(rs)[0]
    twin.advance(3)
    pods = live_pods(twin, "cache")
    assert len(pods) == 4
    assert all(p["metadata"]["name"].startswith("cache-") and len(p["metadata"]["name"]) == len("cache-") + 5
               for p in pods)
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"] for p in pods)
    assert len(messages(twin, "SuccessfulCreate")) == 4
    status = twin.get("rs", "default", "cache")["status"]
    ready = [p for p in pods if p["status"]["conditions"][0]["status"] == "True"]
    assert status["replicas"] == 4 and status.get("readyReplicas", 0) == len(ready)
    twin.patch("rs", "default", "cache", {"spec": {"replicas": len(ready)}}, patch_type="merge")
    twin.advance(2)
    remaining = live_pods(twin, "cache")
    assert sorted(p["metadata"]["name"] for p in remaining) == sorted(p["metadata"]["name"] for p in ready)


def test_failed_create_backs_off_and_recovers() -> None:
    twin = isolated_twin(seed=4)
    blocked = {"on": True}

    def deny(op: Any) -> None:
        if blocked["on"] and op.verb == "CREATE" and op.kind.kind == "Pod":
            raise Forbidden(f'pods "{op.name}" is forbidden: exceeded quota: compute')

    twin.store.add_validator("test-deny", deny, 190)
    twin.apply(deployment("q", replicas=2))
    twin.advance(120)
    failed = twin.event_list("default", reason="FailedCreate")
    assert failed and failed[0]["message"].startswith('Error creating: pods "q-')
    assert "exceeded quota: compute" in failed[0]["message"]
    # Each attempt names a new generated pod, so after ten the recorder combines them, as kube does.
    combined = [e for e in failed if e["message"].startswith("(combined from similar events): Error creating:")]
    assert len(failed) == 10 and len(combined) == 1
    assert 10 < sum(e["count"] for e in failed) < 60  # grows, but backs off instead of once per tick
    rs = twin.list("rs", "default")[0]
    cond = rs["status"]["conditions"][0]
    assert (cond["type"], cond["reason"]) == ("ReplicaFailure", "FailedCreate")
    dep_conds = {c["type"]: c for c in twin.get("deploy", "default", "q")["status"]["conditions"]}
    assert dep_conds["ReplicaFailure"]["reason"] == "FailedCreate"
    blocked["on"] = False
    twin.advance(310)
    assert len(live_pods(twin, "q")) == 2
    assert "ReplicaFailure" not in {c["type"] for c in twin.get("deploy", "default", "q")["status"]["conditions"]}


# ---------------------------------------------------------------------------------- Deployment
def test_deployment_rs_naming_annotations_status_and_event_wording() -> None:
    twin = isolated_twin(seed=5)
    twin.apply(deployment("web"))
    twin.advance(5)
    (rs,) = twin.list("rs", "default")
    digest = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{digest}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": digest}
    assert rs["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1",
                                             "deployment.kubernetes.io/desired-replicas": "3",
                                             "deployment.kubernetes.io/max-replicas": "4"}
    dep = twin.get("deploy", "default", "web")
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    status = dep["status"]
    assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"],
            status["availableReplicas"]) == (3, 3, 3, 3)
    conds = {c["type"]: c for c in status["conditions"]}
    assert conds["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    assert conds["Progressing"]["message"] == f'ReplicaSet "web-{digest}" has successfully progressed.'
    assert messages(twin, "ScalingReplicaSet") == [f"Scaled up replica set web-{digest} to 3"]
    assert rollout_status(twin, "default", "web") == ('deployment "web" successfully rolled out\n', True)
    twin.patch("deploy", "default", "web", {"spec": {"replicas": 5}}, patch_type="merge")
    twin.advance(3)
    assert messages(twin, "ScalingReplicaSet")[-1] == f"Scaled up replica set web-{digest} to 5 from 3"
    assert len(live_pods(twin, "web")) == 5


def _set_image(twin: Twin, name: str, image: str) -> None:
    dep = twin.get("deploy", "default", name)
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = image
    twin.update(dep)


def test_rolling_update_max_unavailable_zero_keeps_old_pods_then_undo() -> None:
    twin = isolated_twin(seed=6, healthy=good_image)
    twin.apply(deployment("roll", strategy={"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}))
    twin.advance(5)
    _set_image(twin, "roll", "nginx:1.28-bad")
    twin.advance(30)
    pods = live_pods(twin, "roll")
    assert images(pods) == ["nginx:1.27"] * 3 + ["nginx:1.28-bad"]  # one surge pod, old ones stay
    assert rollout_status(twin, "default", "roll")[0] == \
        'Waiting for deployment "roll" rollout to finish: 1 out of 3 new replicas have been updated...\n'
    history = rollout_history(twin, "default", "roll")
    assert "REVISION  CHANGE-CAUSE\n1         <none>\n2         <none>" in history
    assert rollout_undo(twin, "default", "roll") == "deployment.apps/roll rolled back"
    twin.advance(10)
    assert images(live_pods(twin, "roll")) == ["nginx:1.27"] * 3
    revs = {rs["spec"]["template"]["spec"]["containers"][0]["image"]:
            rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for rs in twin.list("rs", "default")}
    assert revs == {"nginx:1.27": "3", "nginx:1.28-bad": "2"}
    old = next(rs for rs in twin.list("rs", "default") if rs["spec"]["replicas"] == 3)
    assert old["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"


def test_rolling_update_max_unavailable_100_percent_takes_everything_down() -> None:
    twin = isolated_twin(seed=7, healthy=good_image)
    twin.apply(deployment("all", strategy={"type": "RollingUpdate",
                                           "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}))
    twin.advance(5)
    _set_image(twin, "all", "nginx:1.28-bad")
    twin.advance(10)
    pods = live_pods(twin, "all")
    assert images(pods) == ["nginx:1.28-bad"] * 3
    assert not any(good_image(p) for p in pods)
    status = twin.get("deploy", "default", "all")["status"]
    assert "availableReplicas" not in status and status["unavailableReplicas"] == 3
    # 100 % may be unavailable, so kube still calls this "minimum availability".
    assert {c["type"]: c for c in status["conditions"]}["Available"]["status"] == "True"


def test_rolling_update_steps_respect_surge_and_unavailable() -> None:
    twin = isolated_twin(seed=8)
    twin.apply(deployment("steps", replicas=4))  # 25 %/25 % of 4: surge 1, unavailable 1
    twin.advance(5)
    _set_image(twin, "steps", "nginx:1.28")
    peak = 0
    low = 4
    for _ in range(30):
        twin.step()
        pods = live_pods(twin, "steps")
        peak = max(peak, len(pods))
        ready = [p for p in pods if p.get("status", {}).get("conditions")]
        low = min(low, len(ready))
    assert images(live_pods(twin, "steps")) == ["nginx:1.28"] * 4
    assert peak <= 5 and low >= 3


def test_recreate_strategy_scales_old_to_zero_first() -> None:
    twin = isolated_twin(seed=9)
    twin.apply(deployment("re", strategy={"type": "Recreate"}))
    twin.advance(5)
    _set_image(twin, "re", "nginx:1.28")
    twin.step()
    assert live_pods(twin, "re") == [] or images(live_pods(twin, "re")) == ["nginx:1.28"] * 3
    twin.advance(5)
    assert images(live_pods(twin, "re")) == ["nginx:1.28"] * 3


def test_rollout_restart_and_history_limit() -> None:
    twin = isolated_twin(seed=10)
    twin.apply(deployment("r", replicas=1, revisionHistoryLimit=2))
    twin.advance(3)
    for _ in range(4):
        twin.advance(1)
        rollout_restart(twin, "default", "r")
        twin.advance(8)
    rss = twin.list("rs", "default")
    assert len(rss) == 3  # the current one plus two old revisions
    assert len(live_pods(twin, "r")) == 1
    restarted = twin.get("deploy", "default", "r")["spec"]["template"]["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/restartedAt" in restarted


def test_progress_deadline_exceeded() -> None:
    twin = isolated_twin(seed=11, healthy=good_image)
    twin.apply(deployment("slow", replicas=1, image="nginx:1.27-bad", progressDeadlineSeconds=30))
    twin.advance(45)
    cond = {c["type"]: c for c in twin.get("deploy", "default", "slow")["status"]["conditions"]}["Progressing"]
    assert (cond["status"], cond["reason"]) == ("False", "ProgressDeadlineExceeded")
    with pytest.raises(ApiError, match="exceeded its progress deadline"):
        rollout_status(twin, "default", "slow")


def test_paused_deployment_does_not_roll() -> None:
    twin = isolated_twin(seed=12)
    twin.apply(deployment("p", replicas=2))
    twin.advance(3)
    dep = twin.get("deploy", "default", "p")
    dep["spec"]["paused"] = True
    twin.update(dep)
    _set_image(twin, "p", "nginx:1.28")
    twin.advance(5)
    assert images(live_pods(twin, "p")) == ["nginx:1.27"] * 2
    cond = {c["type"]: c for c in twin.get("deploy", "default", "p")["status"]["conditions"]}["Progressing"]
    assert (cond["status"], cond["reason"]) == ("Unknown", "DeploymentPaused")


# ---------------------------------------------------------------------------------- GC
def test_deleting_deployment_cascades_in_background() -> None:
    twin = isolated_twin(seed=13)
    twin.apply(deployment("gone", replicas=2))
    twin.advance(3)
    twin.delete("deployments", "default", "gone")
    twin.advance(3)
    assert twin.list("rs", "default") == [] and twin.list("pods", "default") == []


def test_foreground_deletion_waits_for_dependents() -> None:
    twin = Twin(seed=14)
    twin.controllers = [c for c in twin.controllers if c.name not in NODE_SUBSYSTEMS]
    rs = twin.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "fg", "namespace": "default"},
                     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "fg"}},
                              "template": {"metadata": {"labels": {"app": "fg"}},
                                           "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})[0]
    twin.advance(2)
    (pod,) = twin.list("pods", "default")
    twin.store.mutate("Pod", "default", pod["metadata"]["name"],
                      lambda o: o["metadata"].__setitem__("finalizers", ["example.com/hold"]))
    twin.delete("rs", "default", "fg", propagation="Foreground")
    twin.advance(3)
    owner = twin.get("rs", "default", "fg")
    assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]  # Terminating, waiting
    held = twin.get("pods", "default", pod["metadata"]["name"])
    assert held["metadata"]["deletionTimestamp"]  # the finalizer keeps it Terminating
    twin.store.mutate("Pod", "default", pod["metadata"]["name"], lambda o: o["metadata"].pop("finalizers"))
    twin.advance(2)
    assert twin.try_get("pods", "default", pod["metadata"]["name"]) is None
    assert twin.try_get("rs", "default", "fg") is None
    assert rs["metadata"]["uid"]


def test_dangling_owner_reference_is_collected_and_partial_owner_is_stripped() -> None:
    twin = isolated_twin(seed=15)
    cm = twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": "default"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": cm["metadata"]["uid"]}
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "00000000-0000-4000-8000-000000000000"}
    twin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "orphan", "namespace": "default",
                                                                      "ownerReferences": [ghost]}})
    twin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "shared", "namespace": "default",
                                                                      "ownerReferences": [ref, ghost]}})
    twin.advance(1)
    assert twin.try_get("secrets", "default", "orphan") is None
    assert twin.get("secrets", "default", "shared")["metadata"]["ownerReferences"] == [ref]
    twin.delete("configmaps", "default", "owner")
    twin.advance(1)
    assert twin.try_get("secrets", "default", "shared") is None


def test_namespace_defaults_and_deletion() -> None:
    twin = isolated_twin(seed=16)
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    twin.advance(1)
    assert twin.get("sa", "shop", "default")
    root = twin.get("cm", "shop", "kube-root-ca.crt")
    assert root["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----\nMIIC")
    twin.apply(clone({**deployment("web", replicas=2), "metadata": {"name": "web", "namespace": "shop",
                                                                      "labels": {"app": "web"}}}))
    twin.advance(3)
    twin.create({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "held", "namespace": "shop", "finalizers": ["example.com/hold"]}})
    twin.delete("namespaces", None, "shop")
    with pytest.raises(Forbidden, match="because it is being terminated"):
        twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "shop"}})
    twin.advance(3)
    ns = twin.get("namespaces", None, "shop")
    conds = {c["type"]: c for c in ns["status"]["conditions"]}
    assert ns["status"]["phase"] == "Terminating"
    assert conds["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: configmaps. has 1 resource instances"
    assert "example.com/hold in 1 resource instances" in conds["NamespaceFinalizersRemaining"]["message"]
    twin.store.mutate("ConfigMap", "shop", "held", lambda o: o["metadata"].pop("finalizers"))
    twin.advance(2)
    assert twin.try_get("namespaces", None, "shop") is None


# ---------------------------------------------------------------------------------- StatefulSet
def statefulset(replicas: int = 3, policy: str = "OrderedReady") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
            "spec": {"serviceName": "db", "replicas": replicas, "podManagementPolicy": policy,
                     "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "db", "image": "redis:7.2"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"],
                                                        "resources": {"requests": {"storage": "1Gi"}}}}]}}


def test_statefulset_ordered_ordinals_and_claims() -> None:
    twin = isolated_twin(seed=17, healthy=lambda p: p["metadata"]["name"] != "db-1")
    twin.apply(statefulset())
    twin.advance(6)
    names = sorted(p["metadata"]["name"] for p in live_pods(twin, "db"))
    assert names == ["db-0", "db-1"]  # db-1 never Ready, so db-2 waits (OrderedReady)
    pod = twin.get("pods", "default", "db-0")
    assert pod["spec"]["hostname"] == "db-0" and pod["spec"]["subdomain"] == "db"
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-0" and labels["apps.kubernetes.io/pod-index"] == "0"
    assert labels["controller-revision-hash"].startswith("db-")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}} in pod["spec"]["volumes"]
    assert sorted(c["metadata"]["name"] for c in twin.list("pvc", "default")) == ["data-db-0", "data-db-1"]
    assert 'create Claim data-db-0 Pod db-0 in StatefulSet db success' in messages(twin, "SuccessfulCreate")
    assert "create Pod db-0 in StatefulSet db successful" in messages(twin, "SuccessfulCreate")


def test_statefulset_parallel_scale_down_keeps_claims_and_recreates_same_name() -> None:
    twin = isolated_twin(seed=18)
    twin.apply(statefulset(policy="Parallel"))
    twin.advance(2)
    assert sorted(p["metadata"]["name"] for p in live_pods(twin, "db")) == ["db-0", "db-1", "db-2"]
    twin.patch("sts", "default", "db", {"spec": {"replicas": 1}}, patch_type="merge")
    twin.advance(3)
    assert [p["metadata"]["name"] for p in live_pods(twin, "db")] == ["db-0"]
    assert len(twin.list("pvc", "default")) == 3  # whenScaled: Retain
    twin.delete("pods", "default", "db-0")
    twin.advance(3)
    assert [p["metadata"]["name"] for p in live_pods(twin, "db")] == ["db-0"]
    status = twin.get("sts", "default", "db")["status"]
    assert (status["replicas"], status["readyReplicas"], status["currentRevision"]) == \
        (1, 1, status["updateRevision"])


def test_statefulset_rolling_update_goes_from_highest_ordinal() -> None:
    twin = isolated_twin(seed=19)
    twin.apply(statefulset())
    twin.advance(8)
    sts = twin.get("sts", "default", "db")
    sts["spec"]["template"]["spec"]["containers"][0]["image"] = "redis:7.4"
    twin.update(sts)
    twin.step()
    assert twin.try_get("pods", "default", "db-2") is None or \
        twin.get("pods", "default", "db-2")["spec"]["containers"][0]["image"] == "redis:7.4"
    assert twin.get("pods", "default", "db-0")["spec"]["containers"][0]["image"] == "redis:7.2"
    twin.advance(10)
    assert images(live_pods(twin, "db")) == ["redis:7.4"] * 3


# ---------------------------------------------------------------------------------- DaemonSet
def daemonset(tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "agent", "image": "fluent/fluent-bit:3.1"}]}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}}, "spec": spec}}}


def _pinned(pod: dict[str, Any]) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return terms["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]


def test_daemonset_one_pod_per_worker_not_on_tainted_control_plane() -> None:
    twin = isolated_twin(seed=20)
    twin.apply(daemonset())
    twin.advance(3)
    pods = live_pods(twin, "agent")
    assert sorted(_pinned(p) for p in pods) == ["kind-worker", "kind-worker2", "kind-worker3"]
    tolerations = {(t["key"], t["effect"]) for t in pods[0]["spec"]["tolerations"]}
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tolerations
    assert ("node.kubernetes.io/disk-pressure", "NoSchedule") in tolerations
    assert pods[0]["metadata"]["labels"]["pod-template-generation"] == "1"
    status = twin.get("ds", "default", "agent")["status"]
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"]) == (3, 3, 3)


def test_daemonset_tolerating_control_plane_runs_everywhere_and_rolls() -> None:
    twin = isolated_twin(seed=21)
    twin.apply(daemonset([{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                           "effect": "NoSchedule"}]))
    twin.advance(3)
    assert len(live_pods(twin, "agent")) == 4
    ds = twin.get("ds", "default", "agent")
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "fluent/fluent-bit:3.2"
    twin.update(ds)
    twin.advance(12)
    assert images(live_pods(twin, "agent")) == ["fluent/fluent-bit:3.2"] * 4


# ---------------------------------------------------------------------------------- Job / CronJob
def job(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox:1.36"}]}}, **spec}}


def test_job_completes_when_its_pod_succeeds() -> None:
    twin = isolated_twin(seed=22, succeeds=lambda p: p["metadata"].get("labels", {}).get("job-name") == "ok")
    twin.apply(job("ok", completions=2, parallelism=1))
    twin.advance(6)
    status = twin.get("jobs", "default", "ok")["status"]
    types = [c["type"] for c in status["conditions"]]
    assert types == ["SuccessCriteriaMet", "Complete"]
    assert status["succeeded"] == 2 and status["completionTime"] and status["uncountedTerminatedPods"] == {}
    pods = twin.list("pods", "default", label_selector="job-name=ok")
    assert len(pods) == 2 and all("finalizers" not in p["metadata"] for p in pods)
    labels = pods[0]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "ok" and labels["controller-uid"]
    assert messages(twin, "Completed") == ["Job completed"]


def test_job_backoff_limit_exceeded() -> None:
    twin = isolated_twin(seed=23)

    def fail_pods() -> None:
        for pod in list(twin.store.scan("Pod", "default")):
            if pod.get("status", {}).get("phase") != "Failed" and not pod["metadata"].get("deletionTimestamp"):
                twin.store.mutate("Pod", "default", pod["metadata"]["name"],
                                  lambda o: o.__setitem__("status", {"phase": "Failed"}), status=True)

    twin.controllers.insert(0, type("Failer", (), {"name": "failer", "reconcile": staticmethod(fail_pods)})())
    twin.apply(job("bad", backoffLimit=2))
    twin.advance(120)
    status = twin.get("jobs", "default", "bad")["status"]
    conds = {c["type"]: c for c in status["conditions"]}
    assert conds["Failed"]["reason"] == "BackoffLimitExceeded"
    assert conds["Failed"]["message"] == "Job has reached the specified backoff limit"
    assert status["failed"] == 3
    starts = sorted(e["firstTimestamp"] for e in twin.event_list("default", reason="SuccessfulCreate"))
    assert len(starts) == 3 and starts[0] < starts[1] < starts[2]  # back-off between retries


def test_job_active_deadline() -> None:
    twin = isolated_twin(seed=24)
    twin.apply(job("slow", activeDeadlineSeconds=20))
    twin.advance(30)
    conds = {c["type"]: c for c in twin.get("jobs", "default", "slow")["status"]["conditions"]}
    assert conds["Failed"]["reason"] == "DeadlineExceeded"


def test_cronjob_creates_jobs_on_schedule_and_trims_history() -> None:
    twin = isolated_twin(seed=25, succeeds=lambda p: True)
    twin.apply({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick", "namespace": "default"},
                "spec": {"schedule": "*/2 * * * *", "successfulJobsHistoryLimit": 2,
                         "jobTemplate": {"spec": {"template": {"spec": {
                             "restartPolicy": "OnFailure",
                             "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}})
    twin.advance(7 * 60)
    jobs = sorted(j["metadata"]["name"] for j in twin.list("jobs", "default"))
    assert len(jobs) == 2
    for name in jobs:
        minutes = int(name.removeprefix("tick-"))
        assert minutes % 2 == 0
        scheduled = twin.get("jobs", "default", name)["metadata"]["annotations"][
            "batch.kubernetes.io/cronjob-scheduled-timestamp"]
        assert scheduled.endswith(":00Z")
    created = messages(twin, "SuccessfulCreate")
    assert sum(m.startswith("Created job tick-") for m in created) >= 3
    assert any(m.startswith("Saw completed job: tick-") and m.endswith("condition: Complete")
               for m in messages(twin, "SawCompletedJob"))
    status = twin.get("cronjobs", "default", "tick")["status"]
    assert status["lastScheduleTime"] and status["lastSuccessfulTime"]


def test_cronjob_forbid_skips_while_active() -> None:
    twin = isolated_twin(seed=26)  # pods run forever
    twin.apply({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "once", "namespace": "default"},
                "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                         "jobTemplate": {"spec": {"template": {"spec": {
                             "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}})
    twin.advance(200)
    assert len(twin.list("jobs", "default")) == 1
    assert messages(twin, "JobAlreadyActive")


# ---------------------------------------------------------------------------------- HPA
def hpa() -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 2, "maxReplicas": 6,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 50}}}]}}


def _with_requests(dep: dict[str, Any]) -> dict[str, Any]:
    dep["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    return dep


def test_hpa_without_metrics_reports_failed_get_resource_metric_but_enforces_min() -> None:
    twin = isolated_twin(seed=27)
    twin.services.metrics = None  # a cluster without metrics-server
    twin.apply(_with_requests(deployment("web", replicas=1)))
    twin.apply(hpa())
    twin.advance(20)
    assert twin.get("deploy", "default", "web")["spec"]["replicas"] == 2  # below minReplicas
    twin.advance(20)
    conds = {c["type"]: c for c in twin.get("hpa", "default", "web")["status"]["conditions"]}
    assert (conds["ScalingActive"]["status"], conds["ScalingActive"]["reason"]) == ("False", "FailedGetResourceMetric")
    assert "unable to fetch metrics from resource metrics API" in conds["ScalingActive"]["message"]
    assert messages(twin, "FailedGetResourceMetric")


def test_hpa_scales_up_from_provider_usage() -> None:
    twin = isolated_twin(seed=28)

    class Metrics:
        def pod_usage(self, namespace: str, name: str) -> tuple[float, int]:
            return (0.2, 50 * 2**20)  # 200 % of a 100m request

    twin.services.metrics = Metrics()
    twin.apply(_with_requests(deployment("web", replicas=2)))
    twin.apply(hpa())
    twin.advance(60)
    assert twin.get("deploy", "default", "web")["spec"]["replicas"] == 6  # capped at maxReplicas
    status = twin.get("hpa", "default", "web")["status"]
    assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 200
    assert any(m.startswith("New size: 6; reason: cpu resource utilization (percentage of request) above target")
               or m.startswith("New size: 4;") for m in messages(twin, "SuccessfulRescale"))


def test_new_hpa_waits_a_stabilization_window_before_scaling_down() -> None:
    # The controller seeds each new HPA's history with the current replica count.
    twin = isolated_twin(seed=30)

    class Metrics:
        def pod_usage(self, namespace: str, name: str) -> tuple[float, int]:
            return (0.01, 50 * 2**20)  # 10 % of a 100m request

    twin.services.metrics = Metrics()
    twin.apply(_with_requests(deployment("web", replicas=5)))
    twin.advance(20)
    twin.apply(hpa())
    twin.advance(240)
    assert twin.get("deploy", "default", "web")["spec"]["replicas"] == 5
    twin.advance(120)
    assert twin.get("deploy", "default", "web")["spec"]["replicas"] == 2  # minReplicas


# ---------------------------------------------------------------------------------- determinism
def test_same_seed_same_workload_state() -> None:
    def run() -> str:
        twin = isolated_twin(seed=29)
        twin.apply(deployment("web", replicas=3))
        twin.apply(statefulset())
        twin.advance(10)
        _set_image(twin, "web", "nginx:1.28")
        twin.advance(20)
        return twin.dump()

    assert run() == run()


# ---------------------------------------------------------------------------------- end to end
def test_e2e_job_regular_sidecar_never_completes_native_sidecar_does() -> None:
    twin = Twin(seed=30)

    def sidecar_job(name: str, native: bool) -> dict[str, Any]:
        main = {"name": "work", "image": "busybox:1.36", "command": ["sh", "-c", "echo done; sleep 3"]}
        side = {"name": "shipper", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do sleep 1; done"]}
        spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [main]}
        if native:
            spec["initContainers"] = [{**side, "restartPolicy": "Always"}]
        else:
            spec["containers"].append(side)
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
                "spec": {"template": {"spec": spec}}}

    twin.apply(sidecar_job("native", True))
    twin.apply(sidecar_job("regular", False))
    twin.advance(90)
    native = twin.get("jobs", "default", "native")["status"]
    regular = twin.get("jobs", "default", "regular")["status"]
    assert [c["type"] for c in native.get("conditions", [])] == ["SuccessCriteriaMet", "Complete"]
    assert native["succeeded"] == 1
    assert not regular.get("conditions") and regular["active"] == 1


def test_e2e_daemonset_pods_bound_to_their_nodes() -> None:
    twin = Twin(seed=31)
    twin.advance(20)
    proxies = [p for p in twin.list("pods", "kube-system") if p["metadata"]["name"].startswith("kube-proxy-")]
    assert sorted(p["spec"].get("nodeName") for p in proxies) == sorted(_pinned(p) for p in proxies)
    assert len({_pinned(p) for p in proxies}) == 4  # kube-proxy tolerates everything
    twin.apply(daemonset())
    twin.advance(20)
    agents = live_pods(twin, "agent")
    assert sorted(p["spec"].get("nodeName") for p in agents) == ["kind-worker", "kind-worker2", "kind-worker3"]
    assert twin.get("ds", "default", "agent")["status"]["numberReady"] == 3
