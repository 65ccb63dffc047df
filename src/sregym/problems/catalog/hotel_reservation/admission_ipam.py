"""Hotel Reservation problems in pod admission and pod networking that SREGym reproduces: a
webhook whose `caBundle` no longer matches its serving certificate, webhooks whose timeouts add
up past the API server's deadline, and a Calico IP pool that has run out of pod addresses.

Each builder's docstring is the problem card. In all three the application's own objects are
untouched: replacement pods are refused at admission (the ReplicaSet's `FailedCreate`) or wait
for an address (the kubelet's `FailedCreatePodSandBox`), so the incident shows as a workload that
lost its pods while everything it runs looks healthy.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.hotel_reservation import PORTS
from sregym.faults.certificates import certificate_authority, service_dns_names, serving_certificate
from sregym.problems.builders import (
    deployment_cause,
    keep,
    object_cause,
    pod_recreation,
    service_serves,
    workload_ready,
)
from sregym.problems.catalog.hotel_reservation.platform import APP, IMPACT, NS
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.twin.node.ipam import calico_crds, ip_pool
from sregym.types import EntityPattern, EntityRef, GroundTruth, RootCause

POLICY_NS = "policy-system"
POLICY_IMAGE = "ghcr.io/kube-policy/pod-policy-webhook:v1.5.1"
SCOPE = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": [NS]}]}


def _deploy(name: str) -> RootCause:
    return deployment_cause(NS, name)


def _serves(service: str) -> CheckSpec:
    return service_serves(service, PORTS[service], service)


def _recreating(objects: list[dict[str, Any]], recreate: tuple[str, ...], wait_ready: tuple[str, ...]) -> FaultSpec:
    """Create `objects`, wait for the named Deployments, then delete the pods of `recreate`."""
    return FaultSpec(fault="create_objects_recreate_pods", params={
        "objects": objects, "wait_ready": list(wait_ready),
        "recreate": [{"namespace": NS, "label_selector": f"io.kompose.service={s}"} for s in recreate]})


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def policy_server(name: str, *, tls_secret: str | None = None, env: list[dict[str, str]] | None = None,
                  labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """A pod-policy webhook server in `policy-system` (Deployment + Service on 443 -> 8443)."""
    selector = {"app": name}
    container: dict[str, Any] = {"name": "webhook", "image": POLICY_IMAGE, "env": env or [],
                                 "ports": [{"containerPort": 8443, "name": "https"}],
                                 "args": ["--port=8443", "--tls-cert-file=/etc/webhook/certs/tls.crt",
                                          "--tls-private-key-file=/etc/webhook/certs/tls.key"]}
    pod_spec: dict[str, Any] = {"containers": [container]}
    if tls_secret:
        container["volumeMounts"] = [{"name": "certs", "mountPath": "/etc/webhook/certs", "readOnly": True}]
        pod_spec["volumes"] = [{"name": "certs", "secret": {"secretName": tls_secret}}]
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": POLICY_NS, "labels": selector},
         "spec": {"replicas": 1, "selector": {"matchLabels": selector},
                  "template": {"metadata": {"labels": {**selector, **(labels or {})}}, "spec": pod_spec}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": POLICY_NS},
         "spec": {"selector": selector, "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}},
    ]


# ================================================= 1. webhook caBundle mismatch
TLS_SERVICE = "pod-policy-webhook"
TLS_CONFIG = "pod-policy-validation"
TLS_WEBHOOK = "pod-policy.validation.k8s.io"
TLS_SECRET = "pod-policy-webhook-tls"


def _tls_material() -> tuple[str, str, dict[str, Any]]:
    """(caBundle the configuration carries, caBundle that would verify, the serving Secret).

    The Secret is cert-manager shaped (`tls.crt`, `tls.key`, `ca.crt`): the CA that signed the
    rotated certificate is right there for an SRE to copy into the configuration."""
    import base64

    current = certificate_authority("hotel-reservation/pod-policy-webhook/2025", "pod-policy-webhook-ca")
    previous = certificate_authority("hotel-reservation/pod-policy-webhook/2024", "pod-policy-webhook-ca")
    secret = serving_certificate(current, service_dns_names(TLS_SERVICE, POLICY_NS)).secret(TLS_SECRET, POLICY_NS)
    secret["data"]["ca.crt"] = base64.b64encode(current.cert_pem).decode()
    return previous.bundle, current.bundle, secret


def _tls_webhook_config(ca_bundle: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": TLS_CONFIG},
        "webhooks": [{
            "name": TLS_WEBHOOK,
            "clientConfig": {"service": {"namespace": POLICY_NS, "name": TLS_SERVICE, "path": "/validate",
                                         "port": 443}, "caBundle": ca_bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                       "scope": "Namespaced"}],
            "namespaceSelector": SCOPE, "failurePolicy": "Fail", "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
        }],
    }


@problem
def admission_webhook_tls_mismatch() -> Problem:
    """A ValidatingWebhookConfiguration (`pod-policy-validation`, `failurePolicy: Fail`, scoped to
    the namespace) sends pod CREATEs to `policy-system/pod-policy-webhook`, a healthy, reachable
    server whose certificate was rotated to a new CA while the configuration's `caBundle` still
    holds the previous one; then the `recommendation` pod is deleted.

    The API server cannot verify the webhook's certificate, so the ReplicaSet cannot replace the
    pod: `FailedCreate ... failed calling webhook "pod-policy.validation.k8s.io": failed to call
    webhook: Post "https://pod-policy-webhook.policy-system.svc:443/validate?timeout=5s": tls:
    failed to verify certificate: x509: certificate signed by unknown authority`. Recommendations
    fail while the webhook pods and recommendation's Deployment look fine. Fix: put the CA that
    signed the serving certificate (the Secret's `ca.crt`) into the configuration's `caBundle`
    (or make the webhook fail open / remove it); pods must be creatable again.
    """
    stale, current, secret = _tls_material()
    objects = [_namespace(POLICY_NS), secret, *policy_server(TLS_SERVICE, tls_secret=TLS_SECRET),
               _tls_webhook_config(stale)]
    return Problem(
        id="hotel-reservation/admission-webhook-tls-mismatch-v1",
        title="recommendation has no pods and none are being created",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="hard",
                  sources=("sregym:admission_webhook_tls_mismatch_hotel_reservation",)),
        faults=(_recreating(objects, ("recommendation",), wait_ready=(f"{POLICY_NS}/{TLS_SERVICE}",)),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "ValidatingWebhookConfiguration", TLS_CONFIG),),
            mechanism="admission_webhook",
            detail="ValidatingWebhookConfiguration pod-policy-validation carries a stale caBundle: the "
                   "API server cannot verify pod-policy-webhook's serving certificate (x509: certificate "
                   "signed by unknown authority) and failurePolicy Fail rejects every pod CREATE",
            detail_keywords=("caBundle", "x509", "unknown authority", "certificate", "pod-policy-validation",
                             TLS_WEBHOOK),
            affected=(_deploy("recommendation"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Pod creation fails admission in the namespace, so the deleted recommendation "
                        "pod is never replaced and recommendations fail."),
        mitigation=MitigationSpec(must_fix=(workload_ready("recommendation"), _serves("recommendation")),
                                  must_keep=keep(), durability=(pod_recreation("recommendation"),)),
        gold=(Action(op="patch", kind="ValidatingWebhookConfiguration", name=TLS_CONFIG, patch_type="json",
                     patch=[{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": current}]),),
    )


# ================================================= 3. Calico IP pool exhaustion
BATCH_NS = "data-processing"
WORKLOAD_POOL = "workload-pool"
DEFAULT_POOL = "default-ipv4-ippool"
WORKLOAD_CIDR = "192.168.254.0/26"
RESCHEDULED = ("frontend", "search", "recommendation")


def _calico_objects() -> list[dict[str, Any]]:
    """Calico's IPAM resources with pod addressing moved to a /26 pool (the /16 default disabled)
    and a batch Deployment that holds every one of its 64 addresses."""
    labels = {"app": "data-pipeline"}
    pipeline = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "data-pipeline", "namespace": BATCH_NS, "labels": labels},
        "spec": {"replicas": 64, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": {**labels, "workload-type": "batch", "team": "data-engineering"}},
                              "spec": {"containers": [{"name": "worker", "image": "registry.k8s.io/pause:3.9",
                                                       "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}]}}},
    }
    return [*calico_crds(),
            {"apiVersion": "crd.projectcalico.org/v1", "kind": "IPAMConfig", "metadata": {"name": "default"},
             "spec": {"strictAffinity": False, "autoAllocateBlocks": True, "maxBlocksPerHost": 0}},
            ip_pool(DEFAULT_POOL, "10.244.0.0/16", disabled=True),
            ip_pool(WORKLOAD_POOL, WORKLOAD_CIDR),
            _namespace(BATCH_NS), pipeline]


@problem
def pod_cidr_exhaustion() -> Problem:
    """Calico hands out pod addresses from IPPools. The cluster's `/16` pool
    (`default-ipv4-ippool`) has been disabled and pods are addressed from `workload-pool`, a
    `/26`: 64 addresses, all held by the 64 pods of a batch Deployment (`data-processing/
    data-pipeline`). Then the frontend, search and recommendation pods are rescheduled.

    Their replacements are scheduled but never get an address: they stay ContainerCreating with
    `FailedCreatePodSandBox ... plugin type="calico" failed (add): failed to request IPv4
    addresses: Assigned 0 out of 1 requested IPv4 addresses; No IPs available in pools:
    [192.168.254.0/26]`. Pods that were already running keep their addresses and look healthy;
    the site is down. Fix: give pods address space again (re-enable the default pool or add a
    pool), or free addresses (scale the batch workload down); the pods must start and a
    recreated pod must get an address.
    """
    return Problem(
        id="hotel-reservation/pod-cidr-exhaustion-v1",
        title="frontend, search and recommendation pods never start after being rescheduled",
        app=APP, namespace=NS,
        tags=Tags(layers=("network",), difficulty="hard",
                  sources=("sregym:pod_cidr_exhaustion_hotel_reservation",)),
        faults=(_recreating(_calico_objects(), RESCHEDULED, wait_ready=(f"{BATCH_NS}/data-pipeline",)),),
        ground_truth=GroundTruth(
            root_causes=(RootCause(entity=EntityRef(kind="IPPool", name=WORKLOAD_POOL),
                                   aliases=(EntityPattern(kind="IPPool", name=DEFAULT_POOL),)),),
            mechanism="ip_exhaustion",
            detail="the only enabled Calico IPPool, workload-pool (192.168.254.0/26, 64 addresses), is "
                   "exhausted by data-pipeline's 64 pods while default-ipv4-ippool is disabled: new pods get "
                   "no IP (No IPs available in pools)",
            detail_keywords=("IPPool", "workload-pool", "192.168.254.0/26", "No IPs available", "ipam",
                             "default-ipv4-ippool", "disabled", "data-pipeline"),
            affected=tuple(_deploy(s) for s in RESCHEDULED), impact_keywords=IMPACT,
            description="Rescheduled pods stay ContainerCreating without an address, so the frontend, "
                        "search and recommendation are down."),
        mitigation=MitigationSpec(must_fix=(*(workload_ready(s) for s in RESCHEDULED), _serves("frontend")),
                                  must_keep=keep(), durability=(pod_recreation("frontend"),)),
        gold=(Action(op="patch", kind="IPPool", name=DEFAULT_POOL, patch_type="merge",
                     patch={"spec": {"disabled": False}}),),
    )


# ================================================= 2. cumulative webhook timeouts
COMPLIANCE = {"pod-resource-validator": 12, "audit-log-enforcer": 8, "image-policy-checker": 11,
              "tenant-quota-validator": 9}  # 40 s together, past the API server's 34 s write deadline
COMPLIANCE_TIER = {"tier": "compliance"}
NODE_NETWORK = "172.18.0.0/16"  # the nodes' addresses: where host-network callers come from


def _mutating_config(name: str, timeout: int) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": f"{name}.compliance.platform.io",
            "clientConfig": {"service": {"namespace": POLICY_NS, "name": name, "path": "/mutate", "port": 443}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                       "scope": "Namespaced"}],
            "namespaceSelector": SCOPE, "failurePolicy": "Ignore", "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "reinvocationPolicy": "Never", "timeoutSeconds": timeout,
        }],
    }


def _ingress_policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": POLICY_NS}, "spec": {"policyTypes": ["Ingress"], **spec}}


def _from_namespace(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": name}}}


def _compliance_objects() -> list[dict[str, Any]]:
    """Four compliance webhooks whose backends sit behind a default-deny namespace; the targeted
    allows (metrics, the namespace itself, kube-system pods) all miss the host-network API server."""
    backends = [obj for name in COMPLIANCE for obj in policy_server(name, labels=COMPLIANCE_TIER)]
    policies = [
        _ingress_policy("default-deny-ingress", {"podSelector": {}}),
        _ingress_policy("allow-metrics-ingress", {"podSelector": {"matchLabels": COMPLIANCE_TIER}, "ingress": [
            {"from": [_from_namespace("monitoring")], "ports": [{"port": 9090}]}]}),
        _ingress_policy("allow-intra-namespace", {"podSelector": {}, "ingress": [{"from": [{"podSelector": {}}]}]}),
        _ingress_policy("allow-control-plane", {"podSelector": {"matchLabels": COMPLIANCE_TIER}, "ingress": [
            {"from": [_from_namespace("kube-system")], "ports": [{"port": 8443}]}]}),
    ]
    configs = [_mutating_config(name, timeout) for name, timeout in COMPLIANCE.items()]
    return [_namespace(POLICY_NS), *backends, *policies, *configs]


APISERVER_ALLOW = _ingress_policy("allow-apiserver-webhooks", {
    "podSelector": {"matchLabels": COMPLIANCE_TIER},
    "ingress": [{"from": [{"ipBlock": {"cidr": NODE_NETWORK}}], "ports": [{"port": 8443, "protocol": "TCP"}]}]})


@problem
def cumulative_admission_webhook_timeout() -> Problem:
    """Four mutating webhooks (`pod-resource-validator` 12 s, `audit-log-enforcer` 8 s,
    `image-policy-checker` 11 s, `tenant-quota-validator` 9 s, all `failurePolicy: Ignore`,
    scoped to the namespace) call backends in `policy-system`, a namespace isolated by a
    default-deny NetworkPolicy whose targeted allows (metrics, intra-namespace, kube-system pods)
    all miss the API server, which runs on the host network. Then the `recommendation` pod is
    deleted.

    Every webhook call hangs for its whole timeout; each alone would be ignored, but mutating
    webhooks run one after another and the 40 s they take together pass the API server's 34 s
    write deadline. The ReplicaSet's creates fail with `Timeout: request did not complete within
    requested timeout - context deadline exceeded`, which names no webhook. Recommendations
    fail; the webhook pods are Running and Ready. Fix: let the API server reach the backends
    (an ingress allow from the node network on 8443), or bring the webhooks' timeouts under the
    deadline, or narrow their scope; pods must be creatable again.
    """
    return Problem(
        id="hotel-reservation/cumulative-admission-webhook-timeout-v1",
        title="recommendation has no pods and creating one times out",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="hard",
                  sources=("sregym:cumulative_admission_webhook_timeout_hotel_reservation",)),
        faults=(_recreating(_compliance_objects(), ("recommendation",),
                            wait_ready=tuple(f"{POLICY_NS}/{name}" for name in COMPLIANCE)),),
        ground_truth=GroundTruth(
            # One cause seen from two sides: the isolation with no allow for the API server, and the
            # webhooks whose timeouts it turns into waiting; naming either finds it.
            root_causes=(RootCause(
                entity=EntityRef(kind="NetworkPolicy", namespace=POLICY_NS, name="default-deny-ingress"),
                aliases=(EntityPattern(kind="NetworkPolicy", namespace=POLICY_NS, name_regex="allow-.*"),
                         EntityPattern(kind="MutatingWebhookConfiguration",
                                       name_regex="|".join(COMPLIANCE)))),),
            mechanism="admission_webhook",
            detail="four mutating webhooks (timeouts 12+8+11+9 = 40 s, failurePolicy Ignore) cannot reach their "
                   "backends because policy-system's default-deny NetworkPolicy has no allow for the API server; "
                   "their timeouts add up past the 34 s request deadline (context deadline exceeded)",
            detail_keywords=("timeoutSeconds", "deadline", "context deadline exceeded", "NetworkPolicy",
                             "default-deny-ingress", "MutatingWebhookConfiguration", "cumulative"),
            affected=(_deploy("recommendation"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Pod creation in the namespace times out in admission, so the deleted recommendation "
                        "pod is never replaced and recommendations fail."),
        mitigation=MitigationSpec(must_fix=(workload_ready("recommendation"), _serves("recommendation")),
                                  must_keep=keep(), durability=(pod_recreation("recommendation"),)),
        gold=(Action(op="apply", manifest=APISERVER_ALLOW),),
    )
