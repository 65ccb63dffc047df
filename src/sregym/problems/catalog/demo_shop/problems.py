"""Control-plane problems on demo-shop: they exercise the whole framework (faults, noise, ground
truth, semantic checks, gold, recover) without needing the data plane or a real application."""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.demo_shop import NAMESPACE
from sregym.problems.builders import (
    deployment_cause,
    keep,
    object_cause,
    pod_recreation,
    service_serves,
    workload_ready,
)
from sregym.problems.family import Param, family
from sregym.problems.model import Action, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "demo-shop"
IMPACT = ("unavailable", "not ready", "fail", "error", "down", "pending", "no endpoints", "refused",
          "cannot", "can't", "blocked", "outage")


_deploy_cause = partial(deployment_cause, NAMESPACE)
_cause = partial(object_cause, NAMESPACE)
CATALOG_READY = workload_ready("catalog")
CATALOG_SERVES = service_serves("catalog", 8080, "catalog")
CATALOG_RECREATE = pod_recreation("catalog")


def _variant(image: str) -> Problem:
    return Problem(
        id="demo-shop/bad-image-tag-v1" if image == "nginx:1.27.99" else f"demo-shop/bad-image-tag-{image.rsplit(':', 1)[-1].replace('.', '-')}-v1",
        title="catalog rollout stuck on an image tag that does not exist",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="easy", suites=("demo",)),
        faults=(FaultSpec(fault="set_image", params={"namespace": NAMESPACE, "name": "catalog", "image": image}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy_cause("catalog"),), mechanism="bad_image",
            detail=f"catalog container image changed to {image}, a tag the registry does not have",
            detail_keywords=(image, image.rsplit(":", 1)[-1]),
            affected=(_cause("Service", "catalog"),), impact_keywords=IMPACT,
            description="A release pointed the catalog Deployment at a non-existent image tag; new pods "
                        "sit in ErrImagePull/ImagePullBackOff and the rollout never completes."),
        # Old pods keep serving during the stuck rollout, so serving is a must_keep here.
        mitigation=MitigationSpec(must_fix=(CATALOG_READY,), must_keep=keep(CATALOG_SERVES)),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="catalog",
                     patch={"spec": {"template": {"spec": {"containers": [{"name": "catalog",
                                                                           "image": "nginx:1.27"}]}}}}),),
    )


@problem
def bad_image_tag() -> list[Problem]:
    """The catalog Deployment is updated to an image tag that was never pushed.

    Symptoms: new catalog pods in ErrImagePull then ImagePullBackOff, events `Failed to pull
    image ... not found`, the rollout stuck at one new unavailable pod. Old pods keep serving
    until they are gone. Fix: roll back or set an image that exists.
    """
    return [_variant("nginx:1.27.99"), _variant("nginx:1.29.7")]


@family(Param("key", ("version", "track")), Param("value", ("v2", "v3", "canary")))
def service_selector_mismatch(key: str = "version", value: str = "v2") -> Problem:
    """The catalog Service's selector gains a label no catalog pod carries.

    Symptoms: the Service has no endpoints, connections to catalog:8080 are refused, while every
    catalog pod is Running and Ready. Fix: make the selector match the catalog pods again.
    """
    return Problem(
        id="demo-shop/service-selector-mismatch-v1",
        title="catalog Service selects no pods",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="easy", suites=("demo",)),
        faults=(FaultSpec(fault="set_service_selector",
                          params={"namespace": NAMESPACE, "name": "catalog",
                                  "selector": {"app": "catalog", key: value}}),),
        ground_truth=GroundTruth(
            root_causes=(_cause("Service", "catalog"),), mechanism="service_selector",
            detail=f"catalog Service selector requires {key}={value}, which no catalog pod has",
            detail_keywords=(f"{key}={value}", f"{key}: {value}", value, f'"{key}"'),
            affected=(_cause("Deployment", "frontend"),), impact_keywords=IMPACT,
            description="The Service selector matches nothing, so it has no endpoints and every "
                        "connection to it is refused."),
        mitigation=MitigationSpec(must_fix=(CATALOG_SERVES,)),
        gold=(Action(op="patch", kind="Service", namespace=NAMESPACE, name="catalog", patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/selector", "value": {"app": "catalog"}}]),),
    )


@problem
def nonexistent_node_selector() -> Problem:
    """catalog's pod template requires a node label that no node has.

    Symptoms: new catalog pods Pending with `FailedScheduling ... didn't match Pod's node
    affinity/selector`, the rollout stuck. Fix: drop or correct the nodeSelector.
    """
    return Problem(
        id="demo-shop/nonexistent-node-selector-v1",
        title="catalog pods cannot be scheduled",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("k8s",), difficulty="easy", suites=("demo",)),
        faults=(FaultSpec(fault="set_node_selector",
                          params={"namespace": NAMESPACE, "name": "catalog", "node_selector": {"disktype": "ssd"}}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy_cause("catalog"),), mechanism="node_selector",
            detail="catalog pod template nodeSelector disktype=ssd matches no node",
            detail_keywords=("disktype", "ssd"),
            affected=(), impact_keywords=IMPACT,
            description="Pods of the new ReplicaSet stay Pending: no node carries disktype=ssd."),
        mitigation=MitigationSpec(must_fix=(CATALOG_READY,)),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="catalog", patch_type="json",
                     patch=[{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]),),
    )


@problem
def missing_configmap_key() -> Problem:
    """A key that catalog reads through `configMapKeyRef` is removed from its ConfigMap.

    Symptoms: after the pods are replaced, containers fail with CreateContainerConfigError
    (`couldn't find key CATALOG_MODE in ConfigMap demo-shop/catalog-config`), the Service empties.
    Fix: restore the key (or stop referencing it).
    """
    return Problem(
        id="demo-shop/missing-configmap-key-v1",
        title="catalog pods cannot start after a config change",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="medium", suites=("demo",)),
        faults=(FaultSpec(fault="remove_configmap_key",
                          params={"namespace": NAMESPACE, "name": "catalog-config", "key": "CATALOG_MODE"}),
                FaultSpec(fault="delete_pods", params={"namespace": NAMESPACE, "label_selector": "app=catalog"})),
        ground_truth=GroundTruth(
            root_causes=(_cause("ConfigMap", "catalog-config"),), mechanism="missing_config",
            detail="key CATALOG_MODE removed from ConfigMap catalog-config",
            detail_keywords=("CATALOG_MODE",),
            affected=(_deploy_cause("catalog"), _cause("Service", "catalog")), impact_keywords=IMPACT,
            description="catalog's env references a ConfigMap key that no longer exists; new "
                        "containers cannot be created."),
        mitigation=MitigationSpec(must_fix=(CATALOG_READY, CATALOG_SERVES)),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name="catalog-config",
                     patch={"data": {"CATALOG_MODE": "full"}}),),
    )


QUOTA: dict[str, Any] = {
    "apiVersion": "v1", "kind": "ResourceQuota",
    "metadata": {"name": "compute-resources", "namespace": NAMESPACE},
    "spec": {"hard": {"requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8", "limits.memory": "16Gi"}},
}


@problem
def resourcequota_blocks_recreation() -> Problem:
    """A ResourceQuota with `limits.*` is added to the namespace; catalog declares no limits.

    Symptoms: once catalog pods are replaced, the ReplicaSet reports FailedCreate `must specify
    limits.cpu for: catalog; limits.memory for: catalog`; the Deployment has no ready pods.
    Fix: remove/relax the quota, or give the pods limits (a durability check recreates a pod).
    """
    return Problem(
        id="demo-shop/resourcequota-blocks-recreation-v1",
        title="catalog pods are not recreated",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("control-plane",), difficulty="medium", suites=("demo",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": [QUOTA]}),
                FaultSpec(fault="delete_pods", params={"namespace": NAMESPACE, "label_selector": "app=catalog"})),
        ground_truth=GroundTruth(
            root_causes=(_cause("ResourceQuota", "compute-resources"),), mechanism="resource_quota",
            detail="ResourceQuota compute-resources sets limits.cpu/limits.memory, so pods without limits are rejected",
            detail_keywords=("limits.memory", "limits.cpu", "compute-resources", "must specify"),
            affected=(_deploy_cause("catalog"),), impact_keywords=IMPACT,
            description="Quota admission rejects every new catalog pod because it declares no limits."),
        mitigation=MitigationSpec(must_fix=(CATALOG_READY, CATALOG_SERVES),
                                  durability=(CATALOG_RECREATE,)),
        gold=(Action(op="delete", kind="ResourceQuota", namespace=NAMESPACE, name="compute-resources"),),
    )


WEBHOOK: dict[str, Any] = {
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "pod-policy.platform.io"},
    "webhooks": [{
        "name": "validate-pods.platform.io",
        "clientConfig": {"service": {"namespace": "policy-system", "name": "pod-policy-webhook",
                                     "path": "/validate", "port": 443}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                   "scope": "Namespaced"}],
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                    "values": ["kube-system"]}]},
        "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
    }],
}


@problem
def validating_webhook_outage() -> Problem:
    """A validating webhook for pod creation points at a Service that does not exist, with
    `failurePolicy: Fail`.

    Symptoms: the catalog ReplicaSet reports FailedCreate `Internal error occurred: failed
    calling webhook "validate-pods.platform.io": ... service "pod-policy-webhook" not found`.
    Fix: remove the webhook configuration (or make it fail open); pods must be creatable again.
    """
    return Problem(
        id="demo-shop/validating-webhook-outage-v1",
        title="no new pods can be created in demo-shop",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("control-plane",), difficulty="hard", suites=("demo",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": [
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-system"}}, WEBHOOK]}),
                FaultSpec(fault="delete_pods", params={"namespace": NAMESPACE, "label_selector": "app=catalog"})),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "ValidatingWebhookConfiguration", "pod-policy.platform.io"),),
            mechanism="admission_webhook",
            detail="ValidatingWebhookConfiguration pod-policy.platform.io calls the missing Service "
                   "policy-system/pod-policy-webhook with failurePolicy Fail",
            detail_keywords=("pod-policy-webhook", "pod-policy.platform.io", "failurePolicy", "policy-system"),
            affected=(_deploy_cause("catalog"),), impact_keywords=IMPACT,
            description="Every pod CREATE outside kube-system fails admission, so catalog cannot "
                        "replace its pods."),
        mitigation=MitigationSpec(must_fix=(CATALOG_READY, CATALOG_SERVES),
                                  durability=(CATALOG_RECREATE,)),
        gold=(Action(op="delete", kind="ValidatingWebhookConfiguration", name="pod-policy.platform.io"),),
    )
