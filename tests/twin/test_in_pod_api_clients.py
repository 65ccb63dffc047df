"""Programs in pods acting on the API with their ServiceAccount: `kubectl` in a Job, the in-pod
client's RBAC (stored Roles and bindings), and /dev/shm as a 64 MiB tmpfs for container processes."""

from __future__ import annotations

from typing import Any

from sregym.twin import Twin

NS = "default"
RBAC = "rbac.authorization.k8s.io/v1"


def _account(twin: Twin, name: str, rules: list[dict[str, Any]]) -> None:
    twin.apply([
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": NS}},
        {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, "namespace": NS}, "rules": rules},
        {"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": name, "namespace": NS},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NS}]},
    ])


def _job(twin: Twin, name: str, account: str, script: str, **pod: Any) -> str:
    twin.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
                "spec": {"backoffLimit": 0, "template": {"spec": {
                    "serviceAccountName": account, "restartPolicy": "Never", **pod,
                    "containers": [{"name": "kubectl", "image": "bitnami/kubectl:1.32",
                                    "command": ["sh", "-c", script]}]}}}})
    twin.advance(20)
    pods = twin.store.list("Pod", NS, f"job-name={name}")
    assert len(pods) == 1
    return twin.logs(NS, pods[0]["metadata"]["name"])


def _settings(twin: Twin) -> None:
    twin.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": NS},
                "data": {"mode": "a"}})


def test_kubectl_in_a_pod_is_held_to_its_service_account_rbac() -> None:
    twin = Twin(seed=3)
    _settings(twin)
    _account(twin, "reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}])
    logs = _job(twin, "read-then-write", "reader",
                "kubectl get configmap settings -o name; kubectl get cm; "
                "kubectl patch configmap settings --type=merge -p '{\"data\":{\"mode\":\"b\"}}'; echo rc=$?")
    assert "configmap/settings\n" in logs
    assert "NAME " in logs and "settings " in logs  # the table kubectl prints
    assert ('Error from server (Forbidden): configmaps "settings" is forbidden: User '
            '"system:serviceaccount:default:reader" cannot patch resource "configmaps" in API group "" '
            'in the namespace "default"') in logs
    assert "rc=1" in logs
    assert twin.store.get("ConfigMap", NS, "settings")["data"] == {"mode": "a"}

    # The same account once its Role allows patch: the write goes through, as that user.
    _account(twin, "reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "patch"]}])
    logs = _job(twin, "write-again", "reader",
                "kubectl patch configmap settings --type=merge -p '{\"data\":{\"mode\":\"b\"}}'")
    assert logs.strip() == "configmap/settings patched"
    assert twin.store.get("ConfigMap", NS, "settings")["data"] == {"mode": "b"}


def test_without_a_mounted_token_kubectl_is_anonymous() -> None:
    twin = Twin(seed=3)
    _settings(twin)
    _account(twin, "reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
    logs = _job(twin, "no-token", "reader", "kubectl get configmap settings", automountServiceAccountToken=False)
    assert 'User "system:anonymous" cannot get resource "configmaps"' in logs


def test_a_kubectl_job_really_patches_a_deployment() -> None:
    twin = Twin(seed=3)
    twin.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                             {"name": "web", "image": "nginx:1.27"}]}}}})
    _account(twin, "tuner", [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "patch"]}])
    logs = _job(twin, "tune", "tuner",
                "kubectl set resources deployment web -c web --limits=memory=96Mi,cpu=200m && "
                "kubectl -n default patch deployment web -p '{\"spec\":{\"replicas\":2}}' && "
                "kubectl delete deployment web")
    assert "deployment.apps/web resource requirements updated\n" in logs
    assert "deployment.apps/web patched\n" in logs
    assert 'cannot delete resource "deployments" in API group "apps"' in logs
    deploy = twin.store.get("Deployment", NS, "web")
    assert deploy["spec"]["replicas"] == 2
    assert deploy["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"memory": "96Mi",
                                                                                         "cpu": "200m"}
    twin.advance(30)  # the patched template really rolls out
    pods = [p for p in twin.store.list("Pod", NS, "app=web") if not p["metadata"].get("deletionTimestamp")]
    assert pods and all(p["spec"]["containers"][0]["resources"]["limits"]["memory"] == "96Mi" for p in pods)


def _shm_worker(twin: Twin, volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> dict[str, Any]:
    twin.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stager", "namespace": NS}, "spec": {
        "volumes": volumes, "containers": [{
            "name": "w", "image": "busybox:1.36", "volumeMounts": mounts,
            "command": ["sh", "-c", "dd if=/dev/zero of=/dev/shm/a bs=1M count=40 && "
                                   "dd if=/dev/zero of=/dev/shm/b bs=1M count=40 && echo staged && sleep 3600"]}]}})
    twin.advance(30)
    return twin.store.get("Pod", NS, "stager")


def test_dev_shm_is_a_64_mib_tmpfs_for_the_container_process() -> None:
    twin = Twin(seed=3)
    pod = _shm_worker(twin, [], [])
    logs = twin.logs(NS, "stager", previous=True)
    status = pod["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1
    assert "dd: error writing '/dev/shm/b': No space left on device" in logs
    assert "24+0 records out" in logs  # 64 MiB in all: 40 MiB of a, then 24 MiB of b
    assert "staged" not in logs

    roomy = Twin(seed=3)
    pod = _shm_worker(roomy, [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}}],
                      [{"name": "dshm", "mountPath": "/dev/shm"}])
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert "staged" in roomy.logs(NS, "stager")
