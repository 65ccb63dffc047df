"""Hotel Reservation problems caused by programs that act on the cluster from inside it, with
their own ServiceAccount: a cleanup operator whose ClusterRole was made read-only (SREGym's
finalizer_deadlock_controller_hotel_reservation), and a "rebalancing" CronJob in kube-system
whose `kubectl patch` squeezes recommendation's memory limit on every run (SREGym's
nightly_rebalance_oom_hotel_reservation).

The builders' docstrings are the problem cards. The faults are Kubernetes writes with the admin
credential (`create_objects`, `patch_objects`, `narrow_role`, `delete_held_object`); everything
after is done by the twin: the controller (`twin/node/cleanup_controller.py`) and `kubectl`
(`twin/node/kubectl_image.py`) run in pods and call the API as their ServiceAccount
(`twin/userland/kube_client.py`), authorized by the stored RBAC objects, so a 403 is in their logs
and a permitted patch really rolls the Deployment.

One departure from SREGym: the agent's credential may not write ClusterRoles (no privilege
escalation), so the finalizer deadlock's gold solution gives the controller back its write
access with a namespaced Role and RoleBinding; removing the finalizer by hand (what SREGym's
description also allows) passes the same check.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from sregym.problems.builders import deployment_cause, object_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
RBAC_API = "rbac.authorization.k8s.io"

mechanisms({
    "rbac": ("rbac", "forbidden", "403", "clusterrole", "cluster role", "rolebinding", "role binding",
             "permission", "not allowed", "cannot patch", "cannot get", "serviceaccount", "service account",
             "read-only", "readonly", "authorization"),
    "finalizer": ("finalizer", "terminating", "deletiontimestamp", "deletion timestamp", "stuck deleting",
                  "cannot be deleted", "pending-cleanup"),
}, related={"rbac": ("finalizer", "db_auth"), "finalizer": ("rbac",)})

_deploy = partial(deployment_cause, NS)
_obj = partial(object_cause, NS)

# ---------------------------------------------------------------------- finalizer deadlock
CONTROLLER = "cleanup-controller"
CONTROLLER_ROLE = "configmap-cleanup-controller"
HELD_CONFIGMAP = "reservation-cleanup-token"
FINALIZER = "cleanup.reservations.io/pending-cleanup"
CONTROLLER_IMAGE = "ghcr.io/reservation-platform/cleanup-controller:v0.4.2"
WRITE_RULES: tuple[dict[str, Any], ...] = (
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "patch", "update"]},
    {"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["patch", "update"]},
)
READ_ONLY_RULES: tuple[dict[str, Any], ...] = (
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
)


def _controller_objects() -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": CONTROLLER, "app.kubernetes.io/part-of": "reservation-platform"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": CONTROLLER, "namespace": NS,
                                                                    "labels": labels}},
        {"apiVersion": f"{RBAC_API}/v1", "kind": "ClusterRole",
         "metadata": {"name": CONTROLLER_ROLE, "labels": labels}, "rules": [dict(r) for r in WRITE_RULES]},
        {"apiVersion": f"{RBAC_API}/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": CONTROLLER_ROLE, "labels": labels},
         "roleRef": {"apiGroup": RBAC_API, "kind": "ClusterRole", "name": CONTROLLER_ROLE},
         "subjects": [{"kind": "ServiceAccount", "name": CONTROLLER, "namespace": NS}]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": CONTROLLER, "namespace": NS,
                                                                     "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": CONTROLLER}},
                  "template": {"metadata": {"labels": labels}, "spec": {
                      "serviceAccountName": CONTROLLER,
                      "containers": [{"name": "manager", "image": CONTROLLER_IMAGE,
                                      "env": [{"name": "FINALIZER", "value": FINALIZER},
                                              {"name": "RESYNC_PERIOD", "value": "10s"}],
                                      "resources": {"requests": {"cpu": "10m", "memory": "32Mi"},
                                                    "limits": {"memory": "64Mi"}}}]}}}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": HELD_CONFIGMAP, "namespace": NS, "finalizers": [FINALIZER],
                      "labels": {"app.kubernetes.io/component": "reservation-cleanup"}},
         "data": {"cleanup-token": "pending", "source": "reservation-maintenance"}},
    ]


@problem
def finalizer_deadlock_controller() -> Problem:
    """A ConfigMap, `reservation-cleanup-token`, was deleted during reservation maintenance but
    never goes away: `kubectl get configmap reservation-cleanup-token -o yaml` shows a
    `deletionTimestamp` and the finalizer `cleanup.reservations.io/pending-cleanup`. That finalizer
    belongs to the `cleanup-controller` Deployment (ServiceAccount `cleanup-controller`), whose
    ClusterRole `configmap-cleanup-controller` was narrowed to read-only (get/list/watch on
    configmaps): the controller sees the object, does its cleanup and tries to remove its
    finalizer, and its logs repeat `Reconciler error` with `configmaps "reservation-cleanup-token"
    is forbidden: User "system:serviceaccount:hotel-reservation:cleanup-controller" cannot patch
    resource "configmaps"`. Restarting the controller changes nothing. Fix: give the controller its
    write access back (restore the ClusterRole, or grant patch on configmaps in the namespace) so it
    completes the cleanup — or, once the cleanup is known to be done, remove the finalizer.
    """
    return Problem(
        id="hotel-reservation/finalizer-deadlock-controller-v1",
        title="a ConfigMap deletion in hotel-reservation never completes",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="medium",
                  sources=("sregym:finalizer_deadlock_controller_hotel_reservation",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": _controller_objects()}),
                FaultSpec(fault="narrow_role", params={"kind": "ClusterRole", "name": CONTROLLER_ROLE,
                                                       "rules": list(READ_ONLY_RULES)}),
                FaultSpec(fault="delete_held_object", params={"kind": "ConfigMap", "namespace": NS,
                                                              "name": HELD_CONFIGMAP, "finalizer": FINALIZER})),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "ClusterRole", CONTROLLER_ROLE), _obj("ConfigMap", HELD_CONFIGMAP)),
            mechanism="rbac",
            detail=f"ClusterRole {CONTROLLER_ROLE} was narrowed to get/list/watch on configmaps, so "
                   f"{CONTROLLER} (ServiceAccount {CONTROLLER}) is Forbidden from patching ConfigMap "
                   f"{HELD_CONFIGMAP} to remove its finalizer {FINALIZER}; the ConfigMap stays Terminating",
            detail_keywords=(CONTROLLER_ROLE, "clusterrole", "finalizer", FINALIZER, "terminating", "forbidden",
                             "read-only", "cannot patch", CONTROLLER, HELD_CONFIGMAP),
            affected=(_deploy(CONTROLLER),),
            impact_keywords=("terminating", "stuck", "cannot be deleted", "never completes", "blocked",
                             "deletion", "cleanup", "forbidden"),
            description="The cleanup controller's ClusterRole lost its write verbs, so it cannot remove its "
                        "finalizer and the deleted ConfigMap stays Terminating."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="object_released", params={"kind": "ConfigMap", "name": HELD_CONFIGMAP}),),
            window_s=120.0),
        gold=(Action(op="apply", manifest={
                  "apiVersion": f"{RBAC_API}/v1", "kind": "Role",
                  "metadata": {"name": f"{CONTROLLER}-configmaps", "namespace": NS},
                  "rules": [dict(r) for r in WRITE_RULES]}),
              Action(op="apply", manifest={
                  "apiVersion": f"{RBAC_API}/v1", "kind": "RoleBinding",
                  "metadata": {"name": f"{CONTROLLER}-configmaps", "namespace": NS},
                  "roleRef": {"apiGroup": RBAC_API, "kind": "Role", "name": f"{CONTROLLER}-configmaps"},
                  "subjects": [{"kind": "ServiceAccount", "name": CONTROLLER, "namespace": NS}]})),
        settle_s=60.0,
    )


# ---------------------------------------------------------------------- nightly rebalance
REBALANCER = "vpa-updater"
REBALANCER_NS = "kube-system"
VICTIM = "recommendation"
VICTIM_CONTAINER = "hotel-reserv-recommendation"
SQUEEZE = "4Mi"
SQUEEZE_PATCH = {"spec": {"template": {"spec": {"containers": [
    {"name": VICTIM_CONTAINER, "resources": {"limits": {"memory": SQUEEZE}}}]}}}}


def _rebalancer_objects() -> list[dict[str, Any]]:
    labels = {"app": REBALANCER}
    policy = json.dumps(SQUEEZE_PATCH, separators=(",", ":"))
    command = 'kubectl -n "$NAMESPACE" patch deployment "$TARGET" --type=strategic -p "$PATCH"'
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": REBALANCER, "namespace": REBALANCER_NS, "labels": labels}},
        {"apiVersion": f"{RBAC_API}/v1", "kind": "Role", "metadata": {"name": REBALANCER, "namespace": NS},
         "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "patch"]}]},
        {"apiVersion": f"{RBAC_API}/v1", "kind": "RoleBinding", "metadata": {"name": REBALANCER, "namespace": NS},
         "roleRef": {"apiGroup": RBAC_API, "kind": "Role", "name": REBALANCER},
         "subjects": [{"kind": "ServiceAccount", "name": REBALANCER, "namespace": REBALANCER_NS}]},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"{REBALANCER}-policy", "namespace": REBALANCER_NS, "labels": labels},
         "data": {"NAMESPACE": NS, "TARGET": VICTIM, "PATCH": policy}},
        {"apiVersion": "batch/v1", "kind": "CronJob",
         "metadata": {"name": REBALANCER, "namespace": REBALANCER_NS, "labels": labels},
         "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid", "successfulJobsHistoryLimit": 1,
                  "failedJobsHistoryLimit": 1,
                  "jobTemplate": {"metadata": {"labels": labels}, "spec": {"template": {
                      "metadata": {"labels": labels},
                      "spec": {"serviceAccountName": REBALANCER, "restartPolicy": "Never",
                               "containers": [{"name": "patch", "image": "bitnami/kubectl:1.32",
                                               "command": ["sh", "-c", command],
                                               "envFrom": [{"configMapRef": {"name": f"{REBALANCER}-policy"}}]}]}}}}}},
    ]


@problem
def nightly_rebalance_oom() -> Problem:
    """recommendation keeps getting OOMKilled and sits in CrashLoopBackOff; hotel recommendations
    fail. Its container now has `limits.memory: 4Mi`, far below the ~14 MiB the Go binary needs to
    start. Nobody on the team changed it: the CronJob `vpa-updater` in `kube-system` (ServiceAccount
    `vpa-updater`, allowed to get/patch deployments in hotel-reservation) runs `bitnami/kubectl`
    every minute and patches recommendation with the memory limit from its ConfigMap
    `vpa-updater-policy`; its Jobs' logs show `deployment.apps/recommendation patched`. Raising
    the limit back works only until the next run squeezes it again. Fix: stop the CronJob (suspend
    or delete it, or correct its policy) AND restore a sane memory limit on recommendation.
    """
    return Problem(
        id="hotel-reservation/nightly-rebalance-oom-v1",
        title="recommendation keeps crashing with OOMKilled",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane", "k8s"), difficulty="hard",
                  sources=("sregym:nightly_rebalance_oom_hotel_reservation",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
                    "kind": "Deployment", "namespace": NS, "name": VICTIM, "patch_type": "strategic",
                    "patch": SQUEEZE_PATCH}]}),
                FaultSpec(fault="create_objects", params={"objects": _rebalancer_objects()})),
        ground_truth=GroundTruth(
            root_causes=(object_cause(REBALANCER_NS, "CronJob", REBALANCER),),
            mechanism="oom",
            detail=f"CronJob {REBALANCER_NS}/{REBALANCER} runs kubectl patch every minute, setting "
                   f"{VICTIM}'s memory limit to {SQUEEZE} (from ConfigMap {REBALANCER}-policy); the container "
                   "is OOMKilled at start and crash-loops",
            detail_keywords=(REBALANCER, "cronjob", "kube-system", "kubectl patch", SQUEEZE.lower(), "memory limit",
                             "oomkilled", f"{REBALANCER}-policy"),
            affected=(_deploy(VICTIM), _deploy("frontend")),
            impact_keywords=("oom", "oomkilled", "crashloop", "restart", "recommendation", "fail", "error",
                             "unavailable"),
            description=f"A kube-system CronJob keeps patching {VICTIM}'s memory limit down to {SQUEEZE}; "
                        f"{VICTIM} is OOMKilled on every start."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="no_recent_oomkill", params={"deployment": VICTIM, "within_s": 150.0}),),
            durability=(CheckSpec(check="sustained_ready", params={"deployment": VICTIM, "seconds": 90.0}),),
            window_s=240.0),
        gold=(Action(op="delete", kind="CronJob", namespace=REBALANCER_NS, name=REBALANCER),
              Action(op="patch", kind="Deployment", namespace=NS, name=VICTIM, patch={"spec": {"template": {"spec": {
                  "containers": [{"name": VICTIM_CONTAINER, "resources": {"limits": {"memory": "256Mi"}}}]}}}})),
        settle_s=90.0,
    )
