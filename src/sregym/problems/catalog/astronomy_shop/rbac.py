"""Astronomy Shop problem in RBAC: frontend moved to a ServiceAccount that may not read the
ConfigMap its new init container fetches with `kubectl` (SREGym's rbac_misconfiguration).

The builder's docstring is the problem card. The faults are Kubernetes writes with the admin
credential: a ServiceAccount, a ClusterRole that grants only pods/services reads and its
ClusterRoleBinding (`create_objects`), then frontend's pod template switched to that account with
an init container running `bitnami/kubectl` (`patch_objects`). The twin runs `kubectl` in the pod
as the account (`twin/node/kubectl_image.py`), so the init container gets the API server's real
Forbidden answer, exits 1 and the new pod stays in `Init:Error`/`Init:CrashLoopBackOff`; the old
pod keeps serving, so the rollout is what breaks. The agent may not write ClusterRoles, so the
gold fix grants the read in the namespace (a Role and RoleBinding); dropping the init container
or the account change passes the same checks.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.problems.builders import keep, service_serves
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    SETTLE_S,
    SUITE,
    deploy,
    mitigation,
    obj,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

RBAC_API = "rbac.authorization.k8s.io"
ACCOUNT = "frontend"
READER_ROLE = "frontend-reader"
CONFIGMAP = "flagd-config"

mechanisms({
    "rbac": ("rbac", "forbidden", "403", "clusterrole", "cluster role", "rolebinding", "role binding",
             "permission", "cannot get", "serviceaccount", "service account", "authorization"),
}, related={"rbac": ("missing_config",)})

FETCH_INIT = {
    "name": "fetch-flags", "image": "bitnami/kubectl:1.32",
    "command": ["kubectl", "get", "configmap", CONFIGMAP, "-n", NAMESPACE, "-o", "json"],
}


def _account_objects() -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": "frontend"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": ACCOUNT, "namespace": NAMESPACE, "labels": labels}},
        {"apiVersion": f"{RBAC_API}/v1", "kind": "ClusterRole", "metadata": {"name": READER_ROLE, "labels": labels},
         "rules": [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": f"{RBAC_API}/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": READER_ROLE, "labels": labels},
         "roleRef": {"apiGroup": RBAC_API, "kind": "ClusterRole", "name": READER_ROLE},
         "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE}]},
    ]


@problem
def rbac_misconfiguration() -> Problem:
    """The frontend rollout never finishes: the new frontend pod stays in `Init:Error` /
    `Init:CrashLoopBackOff` while the old one keeps serving. Its template now runs as
    ServiceAccount `frontend` with an init container `fetch-flags` (`bitnami/kubectl`) that reads
    ConfigMap `flagd-config`; the account is bound (ClusterRoleBinding `frontend-reader`) to
    ClusterRole `frontend-reader`, which grants get/list/watch on pods and services only. The init
    container's log is `Error from server (Forbidden): configmaps "flagd-config" is forbidden: User
    "system:serviceaccount:astronomy-shop:frontend" cannot get resource "configmaps" ...`.
    Restarting does not help. Fix: grant the account read on configmaps (a Role and RoleBinding in
    astronomy-shop, or the ClusterRole), or take the init container / account change back.
    """
    return Problem(
        id="astronomy-shop/rbac-misconfiguration-v1",
        title="the frontend rollout does not finish",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("k8s", "config"), difficulty="easy", suites=(SUITE,),
                  sources=("sregym:rbac_misconfiguration",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": _account_objects()}),
                FaultSpec(fault="patch_objects", params={"patches": [{
                    "kind": "Deployment", "namespace": NAMESPACE, "name": "frontend", "patch_type": "strategic",
                    "patch": {"spec": {"template": {"spec": {"serviceAccountName": ACCOUNT,
                                                             "initContainers": [FETCH_INIT]}}}}}]})),
        ground_truth=GroundTruth(
            root_causes=(deploy("frontend"), obj("ServiceAccount", ACCOUNT)),
            mechanism="rbac",
            detail=f"frontend runs as ServiceAccount {ACCOUNT}, bound to ClusterRole {READER_ROLE} (pods/services "
                   f"get/list/watch only); its init container fetch-flags runs kubectl get configmap {CONFIGMAP} "
                   "and is Forbidden, so the new pod never gets past Init",
            detail_keywords=(READER_ROLE, "clusterrole", "forbidden", "configmaps", "fetch-flags", CONFIGMAP,
                             "serviceaccount", "init container", "cannot get"),
            affected=(), impact_keywords=("rollout", "init", "stuck", "not ready", "crashloop", "forbidden"),
            description="frontend's new ServiceAccount may not read the ConfigMap its init container fetches, so "
                        "the init container fails with Forbidden and the rollout is stuck."),
        mitigation=mitigation(CheckSpec(check="workloads_ready", params={"names": ["frontend"]}),
                              must_keep=keep(service_serves("frontend", PORTS["frontend"], "frontend"))),
        gold=(Action(op="apply", manifest={
                  "apiVersion": f"{RBAC_API}/v1", "kind": "Role",
                  "metadata": {"name": "frontend-config-reader", "namespace": NAMESPACE},
                  "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]}),
              Action(op="apply", manifest={
                  "apiVersion": f"{RBAC_API}/v1", "kind": "RoleBinding",
                  "metadata": {"name": "frontend-config-reader", "namespace": NAMESPACE},
                  "roleRef": {"apiGroup": RBAC_API, "kind": "Role", "name": "frontend-config-reader"},
                  "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE}]})),
        settle_s=SETTLE_S,
    )
