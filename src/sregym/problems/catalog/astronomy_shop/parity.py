"""Astronomy Shop problems whose mechanisms sregym already carries on Hotel Reservation or the
Social Network, built on the shop as SREGym's Astronomy Shop scenarios place them: probes (a
readiness probe a feature flag fails, a liveness probe on a path the frontend does not serve, a
liveness probe too impatient for ad's JVM start), pod templates (an env var defined twice in
frontend-proxy, a sidecar taking the frontend's port, replicas sharing one ReadWriteOnce claim,
a host port node-exporter holds, a wrong port behind an unschedulable rollout), cluster DNS (a
CoreDNS template answering NXDOMAIN for one Service or for every one) and traffic policy (a
Service that keeps traffic on the caller's node).

Every fault is the write an operator could have made; the checks read the symptom (the workload
rolled out and ready, its callers reaching it, its spans error-free), so any valid fix passes.
The gold solutions are the kubectl writes an SRE would make.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.problems.builders import keep, object_cause, service_serves
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    WINDOW_S,
    chart_object,
    deploy,
    mitigation,
    obj,
    restart,
    selector,
)
from sregym.problems.catalog.astronomy_shop.feature_flags import CONFIGMAP, KEY
from sregym.problems.model import Action, CheckSpec, Difficulty, FaultSpec, Layer, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth, RootCause

# A Service whose traffic policy leaves a caller without an endpoint looks, from the caller, like
# a Service with no endpoints (service_selector) or a policy dropping packets (network_policy).
mechanisms({"traffic_policy": ("internaltrafficpolicy", "internal traffic policy", "traffic policy",
                               "no local endpoint", "local endpoint", "node-local")},
           related={"traffic_policy": ("service_selector", "network_policy")})

PARITY_IMPACT = (*IMPACT, "restart", "restarts", "crashloopbackoff", "pending", "stuck", "rollout",
                 "timeout", "no such host", "nxdomain", "connection refused")
MISSING_NODE = "worker-highmem-1"  # a node name no node of the cluster has


# ------------------------------------------------------------------------------ helpers
def _container(name: str) -> dict[str, Any]:
    return chart_object("Deployment", name)["spec"]["template"]["spec"]["containers"][0]


def _serves(service: str) -> CheckSpec:
    return service_serves(service, PORTS[service], service)


def _ready(*names: str) -> CheckSpec:
    return CheckSpec(check="workloads_ready", params={"names": list(names)})


def _stays_up(name: str) -> CheckSpec:
    return CheckSpec(check="sustained_ready", params={"deployment": name, "seconds": 60})


def _reaches(deployment: str, *services: str) -> CheckSpec:
    return CheckSpec(check="deployment_reaches",
                     params={"deployment": deployment, "targets": [[s, PORTS[s]] for s in services]})


def _error_free(service: str, span_name: str | None = None) -> CheckSpec:
    params: dict[str, Any] = {"service": service, "window_s": 60.0}
    if span_name:
        params["span_name"] = span_name
    return CheckSpec(check="service_error_free", params=params)


def _template(name: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A strategic-merge edit of a Deployment's pod template (and other spec fields)."""
    return {"kind": "Deployment", "namespace": NAMESPACE, "name": name, "patch_type": "strategic",
            "patch": {"spec": {**extra, "template": {"spec": spec}}}}


def _patches(*edits: dict[str, Any]) -> FaultSpec:
    return FaultSpec(fault="patch_objects", params={"patches": list(edits)})


def _json(name: str, *ops: dict[str, Any], kind: str = "Deployment") -> Action:
    return Action(op="patch", kind=kind, namespace=NAMESPACE, name=name, patch_type="json", patch=list(ops))


def _default_coredns() -> dict[str, Any]:
    """CoreDNS's ConfigMap as the cluster ships it (what the DNS gold solutions re-apply)."""
    from sregym.twin.topology import COREFILE

    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "coredns", "namespace": "kube-system"},
            "data": {"Corefile": COREFILE}}


@dataclass(frozen=True)
class ParityCase:
    """One SREGym Astronomy Shop scenario: the writes, the entities an SRE names, who suffers,
    the checks that are green once it is fixed, and the operator's fix."""

    slug: str
    title: str
    source: str  # the SREGym scenario id
    faults: tuple[FaultSpec, ...]
    root_causes: tuple[RootCause, ...]
    mechanism: str
    detail: str
    keywords: tuple[str, ...]
    affected: tuple[RootCause, ...]
    description: str
    must_fix: tuple[CheckSpec, ...]
    gold: tuple[Action, ...]
    layers: tuple[Layer, ...] = ("k8s",)
    difficulty: Difficulty = "medium"
    must_keep: tuple[CheckSpec, ...] | None = None
    window_s: float = WINDOW_S


def parity_problem(case: ParityCase) -> Problem:
    return Problem(
        id=f"astronomy-shop/{case.slug}-v1",
        title=case.title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=case.layers, difficulty=case.difficulty, suites=(SUITE,), sources=(f"sregym:{case.source}",)),
        faults=case.faults,
        ground_truth=GroundTruth(
            root_causes=case.root_causes, mechanism=case.mechanism, detail=case.detail,
            detail_keywords=case.keywords, affected=case.affected, impact_keywords=PARITY_IMPACT,
            description=case.description),
        mitigation=mitigation(*case.must_fix, must_keep=keep(*case.must_keep) if case.must_keep else None).model_copy(update={"window_s": case.window_s}),
        gold=case.gold,
        settle_s=SETTLE_S,
    )


# -------------------------------------------------------------------------------- probes
CART_GRPC_READINESS = {"grpc": {"port": PORTS["cart"]}, "periodSeconds": 5, "failureThreshold": 2}
# Next.js's default port, copied from its docs; the chart runs the frontend on 8080.
FRONTEND_BAD_LIVENESS = {"httpGet": {"path": "/healthz", "port": 3000}, "initialDelaySeconds": 5,
                         "periodSeconds": 10, "failureThreshold": 3}
AD_AGGRESSIVE_LIVENESS = {"tcpSocket": {"port": PORTS["ad"]}, "initialDelaySeconds": 0, "periodSeconds": 1,
                          "timeoutSeconds": 1, "failureThreshold": 1}
AD_PATIENT_LIVENESS = {"tcpSocket": {"port": PORTS["ad"]}, "initialDelaySeconds": 15, "periodSeconds": 10,
                       "timeoutSeconds": 5, "failureThreshold": 3}


def _flag_restored() -> tuple[Action, ...]:
    original = chart_object("ConfigMap", CONFIGMAP)["data"][KEY]
    return (Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP, patch_type="merge",
                   patch={"data": {KEY: original}}), restart("flagd"))


def _probe_cases() -> tuple[ParityCase, ...]:
    return (
        ParityCase(
            "cart-failed-readiness-probe", "the cart rollout never becomes ready",
            "astronomy_shop_failed_readiness_probe",
            (FaultSpec(fault="set_flag_variant", params={
                "namespace": NAMESPACE, "flags": {"failedReadinessProbe": "on"}, "configmap": CONFIGMAP, "key": KEY,
                "restart_selector": selector("flagd")}),
             FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE, "label_selector": selector("flagd")}),
             FaultSpec(fault="set_probe", params={
                 "namespace": NAMESPACE, "name": "cart", "container": "cart", "probe_kind": "readinessProbe",
                 "probe": CART_GRPC_READINESS})),
            (obj("ConfigMap", CONFIGMAP), deploy("cart")), "feature_flag",
            f"the failedReadinessProbe flag's defaultVariant is on in ConfigMap {CONFIGMAP} ({KEY}): cart's "
            "gRPC health service answers NOT_SERVING, so the gRPC readinessProbe on port 8080 of the new cart "
            "pod never passes",
            ("failedReadinessProbe", CONFIGMAP, "NOT_SERVING", "readiness", "readinessProbe", "grpc"),
            (obj("Service", "cart"),),
            "A feature flag makes cart report itself unhealthy; the new cart pod's readiness probe fails for "
            "ever, so it never joins the Service and the cart rollout is stuck.",
            (_ready("cart"),), _flag_restored(), layers=("app", "k8s")),
        ParityCase(
            "frontend-liveness-probe", "the frontend keeps restarting",
            "liveness_probe_misconfiguration_astronomy_shop",
            (FaultSpec(fault="set_probe", params={
                "namespace": NAMESPACE, "name": "frontend", "container": "frontend", "probe_kind": "livenessProbe",
                "probe": FRONTEND_BAD_LIVENESS}),),
            (deploy("frontend"),), "probe",
            f"frontend livenessProbe httpGet :3000/healthz, but the frontend listens on {PORTS['frontend']}: "
            "the probe is refused and the kubelet kills a healthy container every ~30 s",
            ("liveness", "livenessProbe", "3000", "/healthz"),
            (obj("Service", "frontend"), deploy("frontend-proxy")),
            "The kubelet restarts the frontend each time its liveness probe fails, which it always does; the "
            "shop is down while the container restarts and CrashLoopBackOff stretches the gaps.",
            (_stays_up("frontend"), _serves("frontend")),
            (_json("frontend", {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
                                "value": {"tcpSocket": {"port": PORTS["frontend"]}, "initialDelaySeconds": 5,
                                          "periodSeconds": 10, "failureThreshold": 3}}),),
            layers=("config",), difficulty="easy"),
        ParityCase(
            "ad-liveness-probe-too-aggressive", "the ad service keeps restarting",
            "liveness_probe_too_aggressive_astronomy_shop",
            (_patches(_template("ad", {"terminationGracePeriodSeconds": 0, "containers": [
                {"name": "ad", "livenessProbe": AD_AGGRESSIVE_LIVENESS}]})),),
            (deploy("ad"),), "probe",
            "ad livenessProbe tcpSocket 8080 with initialDelaySeconds 0, periodSeconds 1, failureThreshold 1 (and "
            "terminationGracePeriodSeconds 0): the JVM is killed before it listens",
            ("liveness", "initialDelaySeconds", "periodSeconds", "failureThreshold", "8080"),
            (obj("Service", "ad"), deploy("frontend")),
            "ad's JVM needs a few seconds before it listens; the liveness probe checks it at once and the "
            "kubelet kills it at the first failure, so ad never stays up and ads fail.",
            (_stays_up("ad"), _serves("ad")),
            (_json("ad", {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
                          "value": AD_PATIENT_LIVENESS},
                   {"op": "replace", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 30}),),
            layers=("config",)),
    )


@problem
def parity_probes() -> list[Problem]:
    """A probe turns a workload of the shop against itself: the failedReadinessProbe flag makes
    cart's gRPC health answer NOT_SERVING under a new gRPC readiness probe (the rollout never
    finishes); the frontend's liveness probe asks port 3000, where nothing listens (restart
    loop); ad's liveness probe allows no start-up time, so its JVM is killed before it listens
    (CrashLoopBackOff). Fix: turn the flag off, or make the probe ask what the server answers,
    when it can answer.
    """
    return [parity_problem(c) for c in _probe_cases()]


# ----------------------------------------------------------------------- pod templates
def _proxy_env_length() -> int:
    return len(_container("frontend-proxy").get("env") or [])


FRONTEND_CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "frontend-cache", "namespace": NAMESPACE},
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
FRONTEND_SPREAD = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
    "labelSelector": {"matchLabels": {"opentelemetry.io/name": "frontend"}}, "topologyKey": "kubernetes.io/hostname"}]}}
STATSD_FLAGS = ["--statsd.listen-udp=:9125", "--statsd.listen-tcp=:9125"]
# The declared port says what was meant (the exporter's default 9102); the flag says otherwise.
FRONTEND_SIDECAR = {"name": "metrics", "image": "prom/statsd-exporter:v0.26.1",
                    "args": [f"--web.listen-address=:{PORTS['frontend']}", *STATSD_FLAGS],
                    "ports": [{"containerPort": 9102, "name": "metrics"}, {"containerPort": 9125, "protocol": "UDP"}]}


def _template_cases() -> tuple[ParityCase, ...]:
    catalog_port = PORTS["product-catalog"]
    return (
        ParityCase(
            "frontend-proxy-env-shadowed", "the shop's pages fail while every pod is running",
            "env_variable_shadowing_astronomy_shop",
            (FaultSpec(fault="shadow_env_var", params={
                "namespace": NAMESPACE, "name": "frontend-proxy", "env": "FRONTEND_HOST", "value": "localhost"}),),
            (deploy("frontend-proxy"),), "env_shadowing",
            "frontend-proxy's container env defines FRONTEND_HOST twice; the later localhost shadows frontend, so "
            "Envoy sends the shop's pages to itself instead of the frontend",
            ("FRONTEND_HOST", "localhost", "duplicate", "twice"), (deploy("frontend"),),
            "A duplicate env entry points the edge proxy's frontend upstream at localhost; every page request "
            "fails while frontend itself is healthy and idle.",
            (_error_free("frontend-proxy"),),
            (_json("frontend-proxy", {"op": "remove",
                                      "path": f"/spec/template/spec/containers/0/env/{_proxy_env_length()}"}),),
            layers=("config",)),
        ParityCase(
            "frontend-duplicate-pvc-mounts", "the frontend scale-out never completes",
            "duplicate_pvc_mounts_astronomy_shop",
            (FaultSpec(fault="create_objects", params={"objects": [FRONTEND_CLAIM]}),
             _patches(_template("frontend", {
                 "affinity": FRONTEND_SPREAD,
                 "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": "frontend-cache"}}],
                 "containers": [{"name": "frontend", "volumeMounts": [{"name": "cache", "mountPath": "/app/.next/cache"}]}]},
                 replicas=3))),
            (deploy("frontend"), obj("PersistentVolumeClaim", "frontend-cache")), "volume_attach",
            "3 frontend replicas share ReadWriteOnce PVC frontend-cache while a required hostname anti-affinity "
            "spreads them over nodes (Multi-Attach error)",
            ("Multi-Attach", "ReadWriteOnce", "frontend-cache", "anti-affinity", "podAntiAffinity"), (),
            "Only the frontend pod on the node holding the volume can start; the others wait for the volume and "
            "the rollout is stuck.",
            (_ready("frontend"),),
            # Co-locate the replicas with the volume and replace pods without overlap.
            (_json("frontend", {"op": "remove", "path": "/spec/template/spec/affinity"},
                   {"op": "replace", "path": "/spec/strategy", "value": {"type": "Recreate"}}),)),
        ParityCase(
            "frontend-sidecar-port-conflict", "the shop is down since the last frontend rollout",
            "sidecar_port_conflict_astronomy_shop",
            (_patches(_template("frontend", {"containers": [FRONTEND_SIDECAR]})),),
            (deploy("frontend"),), "port_conflict",
            f"frontend sidecar container metrics (statsd-exporter) --web.listen-address=:{PORTS['frontend']}, the "
            "port the frontend server already binds in the pod (address already in use)",
            ("address already in use", str(PORTS["frontend"]), "metrics", "sidecar", "web.listen-address",
             "statsd-exporter"),
            (obj("Service", "frontend"), deploy("frontend-proxy")),
            "The sidecar cannot bind the port the frontend holds, so it crash-loops and the frontend pod is not "
            "Ready; the frontend Service has no endpoints and every page fails.",
            (_stays_up("frontend"), _serves("frontend")),
            (Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend", patch_type="strategic",
                    patch={"spec": {"template": {"spec": {"containers": [
                        {"name": "metrics", "args": ["--web.listen-address=:9102", *STATSD_FLAGS]}]}}}}),),
            layers=("config",)),
        ParityCase(
            "ad-host-port-conflict", "the ad rollout never finishes",
            "service_port_conflict_astronomy_shop",
            (_patches(_template("ad", {"containers": [
                {"name": "ad", "ports": [{"containerPort": PORTS["ad"], "hostPort": 9100}]}]})),),
            (deploy("ad"),), "unschedulable",
            "ad's container asks for hostPort 9100, held on every node by node-exporter",
            ("hostPort", "9100", "free ports", "node-exporter"), (),
            "No node can take the new ad pod because its host port is in use, so the rollout is stuck.",
            (_ready("ad"),),
            (_json("ad", {"op": "remove", "path": "/spec/template/spec/containers/0/ports/0/hostPort"}),),
            must_keep=(_serves("ad"),)),
        ParityCase(
            "checkout-unschedulable-wrong-port", "the checkout rollout is stuck Pending",
            "unschedulable_incorrect_port_assignment",
            (_patches(_template("checkout", {
                "nodeSelector": {"kubernetes.io/hostname": MISSING_NODE},
                "containers": [{"name": "checkout", "env": [
                    {"name": "PRODUCT_CATALOG_ADDR", "value": "product-catalog:8082"}]}]})),),
            (deploy("checkout"),), "node_selector",
            f"one change to checkout set nodeSelector kubernetes.io/hostname={MISSING_NODE} (no such node) and "
            f"PRODUCT_CATALOG_ADDR product-catalog:8082 (the Service listens on {catalog_port})",
            ("nodeSelector", MISSING_NODE, "PRODUCT_CATALOG_ADDR", "8082"), (deploy("frontend"),),
            "The new checkout pod cannot be scheduled, so the rollout is stuck on the old pod; once it is "
            "scheduled, its wrong product-catalog port makes every PlaceOrder fail.",
            # The old pod serves with the right port while the rollout is stuck: a fix that only
            # unpins the rollout brings the wrong port live and breaks what must be kept.
            (_ready("checkout"),),
            (_json("checkout", {"op": "remove", "path": "/spec/template/spec/nodeSelector"}),
             Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="checkout", patch={
                 "spec": {"template": {"spec": {"containers": [{"name": "checkout", "env": [
                     {"name": "PRODUCT_CATALOG_ADDR", "value": f"product-catalog:{catalog_port}"}]}]}}}})),
            layers=("k8s", "config"), difficulty="hard",
            must_keep=(_error_free("checkout", "oteldemo.CheckoutService/PlaceOrder"),)),
    )


@problem
def parity_pod_templates() -> list[Problem]:
    """A change to a pod template breaks a workload of the shop: frontend-proxy defines
    FRONTEND_HOST twice and the later `localhost` wins; frontend is scaled to three replicas that
    share a ReadWriteOnce claim while an anti-affinity spreads them (Multi-Attach); a sidecar in
    frontend binds the frontend's port; ad asks for hostPort 9100, which node-exporter holds;
    checkout is pinned to a node that does not exist while its product-catalog port is wrong
    (both must be fixed). Fix: undo the write, or make the constraints compatible.
    """
    return [parity_problem(c) for c in _template_cases()]


# ------------------------------------------------------------------ DNS, traffic policy
def _traffic_cases() -> tuple[ParityCase, ...]:
    frontend_fqdn = f"frontend.{NAMESPACE}.svc.cluster.local"
    return (
        ParityCase(
            "frontend-dns-nxdomain", "the shop cannot find its frontend",
            "service_dns_resolution_failure_astronomy_shop",
            (FaultSpec(fault="corefile_template", params={"names": [frontend_fqdn]}),),
            (object_cause("kube-system", "ConfigMap", "coredns"),), "dns",
            f"Corefile template block answers NXDOMAIN for {frontend_fqdn}",
            ("template", "NXDOMAIN", "Corefile", "frontend"),
            (deploy("frontend-proxy"), obj("Service", "frontend")),
            "Cluster DNS denies the frontend Service's name, so the edge proxy cannot resolve the frontend and "
            "every page fails while the frontend is healthy.",
            (_reaches("frontend-proxy", "frontend"), _error_free("frontend-proxy")),
            (Action(op="apply", manifest=_default_coredns()),), layers=("network",)),
        ParityCase(
            "coredns-stale-service-zone", "requests between the shop's services fail everywhere",
            "stale_coredns_config_astronomy_shop",
            (FaultSpec(fault="corefile_template", params={"names": ["svc.cluster.local"]}),),
            (object_cause("kube-system", "ConfigMap", "coredns"),), "dns",
            "Corefile template block answers NXDOMAIN for the whole svc.cluster.local zone: no Service name "
            "resolves",
            ("template", "NXDOMAIN", "Corefile", "svc.cluster.local"),
            (deploy("frontend-proxy"), deploy("frontend"), deploy("checkout")),
            "Cluster DNS answers NXDOMAIN for every Service name; every call between the shop's services fails "
            "at name resolution although every pod is healthy.",
            (_reaches("frontend-proxy", "frontend"), _reaches("frontend", "cart", "product-catalog"),
             _reaches("checkout", "payment", "shipping")),
            (Action(op="apply", manifest=_default_coredns()),), layers=("network",), difficulty="easy"),
        ParityCase(
            "recommendation-traffic-policy-local", "recommendations time out",
            "internal_traffic_policy_local_astronomy_shop",
            (FaultSpec(fault="set_node_selector", params={
                "namespace": NAMESPACE, "name": "recommendation", "node_selector": {"kubernetes.io/hostname": "kind-worker"}}),
             FaultSpec(fault="set_node_selector", params={
                 "namespace": NAMESPACE, "name": "frontend", "node_selector": {"kubernetes.io/hostname": "kind-worker2"}}),
             FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE,
                                                          "label_selector": selector("frontend")}),
             _patches({"kind": "Service", "namespace": NAMESPACE, "name": "recommendation", "patch_type": "merge",
                       "patch": {"spec": {"internalTrafficPolicy": "Local"}}})),
            (obj("Service", "recommendation"),), "traffic_policy",
            "Service recommendation has internalTrafficPolicy Local; its only pod runs on kind-worker and the "
            "frontend on kind-worker2, so kube-proxy on kind-worker2 has no local endpoint and drops the calls",
            ("internalTrafficPolicy", "Local", "kube-proxy", "kind-worker2", "same node"),
            (deploy("frontend"), deploy("recommendation")),
            "The recommendation Service only routes to endpoints on the caller's node; the frontend runs where "
            "no recommendation pod does, so its calls hang until they time out although every pod is Ready.",
            (_reaches("frontend", "recommendation"),),
            (_json("recommendation", {"op": "replace", "path": "/spec/internalTrafficPolicy", "value": "Cluster"},
                   kind="Service"),),
            layers=("network",), difficulty="hard"),
    )


@problem
def parity_dns_and_traffic() -> list[Problem]:
    """A request between the shop's services no longer arrives: CoreDNS's Corefile gained a
    template that answers NXDOMAIN for the frontend Service's name, or for the whole
    `svc.cluster.local` zone; or the recommendation Service was set to `internalTrafficPolicy:
    Local` while its only pod runs on another node than the frontend. Every pod stays Ready.
    Fix: take the template out of the Corefile; set the policy back to Cluster (or run a
    recommendation pod on every node).
    """
    return [parity_problem(c) for c in _traffic_cases()]
