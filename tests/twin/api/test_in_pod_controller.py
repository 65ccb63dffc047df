"""A finalizer-owning controller running in a pod, seen with the real kubectl: while its
ClusterRole is read-only the deleted ConfigMap stays Terminating (with its finalizer and
deletionTimestamp) and the controller logs the API server's Forbidden text; with write access
restored it removes its finalizer and the ConfigMap is gone."""

from __future__ import annotations

import json
from typing import Any

import yaml

NS = "default"
FINALIZER = "cleanup.example.io/pending"


def _manifests(verbs: list[str]) -> str:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "cleaner", "namespace": NS}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cleaner"},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "cleaner"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cleaner"},
         "subjects": [{"kind": "ServiceAccount", "name": "cleaner", "namespace": NS}]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cleaner", "namespace": NS},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "cleaner"}},
                  "template": {"metadata": {"labels": {"app": "cleaner"}}, "spec": {
                      "serviceAccountName": "cleaner",
                      "containers": [{"name": "manager",
                                      "image": "ghcr.io/reservation-platform/cleanup-controller:v0.4.2",
                                      "env": [{"name": "FINALIZER", "value": FINALIZER},
                                              {"name": "RESYNC_PERIOD", "value": "5s"}]}]}}}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "token", "namespace": NS, "finalizers": [FINALIZER]}, "data": {"k": "v"}},
    ]
    return yaml.safe_dump_all(docs)


def test_finalizer_holds_the_object_until_the_controller_may_write(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_manifests(["get", "list", "watch"]), user="admin")
    kube.advance(15)
    assert "configmap \"token\" deleted" in kube.ok("delete", "configmap", "token", "--wait=false")
    kube.advance(20)
    held = yaml.safe_load(kube.ok("get", "configmap", "token", "-o", "yaml"))
    assert held["metadata"]["finalizers"] == [FINALIZER]
    assert held["metadata"]["deletionTimestamp"]
    logs = kube.ok("logs", "deploy/cleaner")
    errors = [json.loads(line) for line in logs.splitlines() if '"Reconciler error"' in line]
    assert errors and ('configmaps "token" is forbidden: User "system:serviceaccount:default:cleaner" cannot '
                       'patch resource "configmaps" in API group "" in the namespace "default"') in errors[-1]["error"]

    # Write access back: the controller finishes its cleanup on its next resync.
    kube.ok("apply", "-f", "-", input=_manifests(["get", "list", "watch", "patch", "update"]), user="admin")
    kube.advance(10)
    gone = kube.kubectl("get", "configmap", "token")
    assert gone.returncode == 1 and 'configmaps "token" not found' in gone.stderr
    assert '"finalizer removed"' in kube.ok("logs", "deploy/cleaner")


def test_scaled_to_zero_controller_leaves_the_object_terminating(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_manifests(["get", "list", "watch", "patch"]), user="admin")
    kube.ok("scale", "deployment", "cleaner", "--replicas=0")
    kube.advance(15)
    kube.ok("delete", "configmap", "token", "--wait=false")
    kube.advance(30)
    held = json.loads(kube.ok("get", "configmap", "token", "-o", "json"))
    assert held["metadata"]["finalizers"] == [FINALIZER] and held["metadata"]["deletionTimestamp"]
    kube.ok("scale", "deployment", "cleaner", "--replicas=1")
    kube.advance(20)
    assert kube.kubectl("get", "configmap", "token").returncode == 1


def test_the_token_mounted_in_a_pod_authenticates_over_the_wire_as_its_service_account(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=_manifests(["get", "list", "watch"]), user="admin")
    shell = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "toolbox", "namespace": NS},
             "spec": {"serviceAccountName": "cleaner",
                      "containers": [{"name": "sh", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}}
    kube.ok("apply", "-f", "-", input=json.dumps(shell), user="admin")
    kube.advance(15)
    pod = kube.ok("get", "pods", "-l", "app=cleaner", "-o", "name").strip()
    token = kube.ok("exec", "toolbox", "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token",
                    user="admin").strip()
    assert "configmap/token" in kube.ok("--token", token, "get", "configmap", "token", "-o", "name")
    denied = kube.kubectl("--token", token, "delete", "configmap", "token")
    assert denied.returncode == 1
    assert ('User "system:serviceaccount:default:cleaner" cannot delete resource "configmaps" in API group "" '
            'in the namespace "default"') in denied.stderr
    # The ServiceAccount deleted: its pods' tokens stop authenticating (401), inside and outside.
    kube.ok("delete", "serviceaccount", "cleaner", user="admin")
    gone = kube.kubectl("--token", token, "get", "configmap", "token")
    assert gone.returncode == 1 and "Unauthorized" in gone.stderr
    kube.advance(10)
    assert '"error": "failed to list *v1.ConfigMap: Unauthorized"' in kube.ok("logs", pod, user="admin")
