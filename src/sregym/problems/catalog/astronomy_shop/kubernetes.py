"""Astronomy Shop problems in how Kubernetes runs a workload: scheduling (a nodeSelector no node
matches, ITBench 33; a pod anti-affinity no node satisfies, 44; a pinned pod whose node is
cordoned, 39), admission (a ResourceQuota too small for the pods, 102 and 52), pod start (an arm64-only image, 23; an init container that
hangs, 45, or crashes on its ConfigMap, 59; a readiness probe that can never pass, 49), scale
(accounting at zero, 58) and env vars (one pointing at the wrong port, 24; one removed, SREGym's
missing_env_variable); plus two at once (60, 52).

One builder per family, one row per scenario. Root causes are ITBench's v2 ground-truth entities
(a scenario that also names the edited Deployment keeps it). Checks read the symptom — the
workload ready, its Service serving — so any valid fix passes; the gold solutions are the
kubectl writes an operator would make.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.faults.foreign_arch import ARM64_CHECKOUT
from sregym.problems.builders import service_serves
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
from sregym.problems.catalog.astronomy_shop.feature_flags import CONFIGMAP, FLAGS, KEY
from sregym.problems.model import Action, CheckSpec, Difficulty, FaultSpec, Layer, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth, RootCause

mechanisms({
    "pod_anti_affinity": ("anti-affinity", "antiaffinity", "podantiaffinity", "affinity", "topologykey",
                          "didn't match pod anti-affinity"),
    "init_container": ("init container", "initcontainer", "init:", "init:crashloopbackoff", "init:0/1"),
    "image_architecture": ("exec format error", "architecture", "arm64", "amd64", "platform"),
})

K8S_IMPACT = (*IMPACT, "pending", "crashloopbackoff", "not ready", "stuck", "rollout", "forbidden", "quota")
AA = "itbench-aa"
QUOTA = "strict-resource-quota"


def _workloads(*names: str) -> CheckSpec:
    return CheckSpec(check="workloads_ready", params={"names": list(names)})


def _serves(service: str) -> CheckSpec:
    return service_serves(service, PORTS[service], service)


def _container(name: str) -> dict[str, Any]:
    return chart_object("Deployment", name)["spec"]["template"]["spec"]["containers"][0]


def _env_index(name: str, variable: str) -> int:
    return next(i for i, e in enumerate(_container(name).get("env") or []) if e["name"] == variable)


def _env_value(name: str, variable: str) -> str:
    return _container(name)["env"][_env_index(name, variable)]["value"]


def _template_patch(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Deployment", "namespace": NAMESPACE, "name": name, "patch_type": "strategic",
            "patch": {"spec": {"template": {"spec": spec}}}}


def _json_patch(name: str, *ops: dict[str, Any]) -> Action:
    return Action(op="patch", kind="Deployment", namespace=NAMESPACE, name=name, patch_type="json", patch=list(ops))


@dataclass(frozen=True)
class WorkloadCase:
    """One way Kubernetes stops running a workload: the writes, ITBench's root-cause entities,
    who suffers, the checks that are green once it runs again, and the operator's fix."""

    slug: str
    title: str
    faults: tuple[FaultSpec, ...]
    root_causes: tuple[RootCause, ...]
    mechanism: str
    detail: str
    keywords: tuple[str, ...]
    affected: tuple[RootCause, ...]
    description: str
    must_fix: tuple[CheckSpec, ...]
    gold: tuple[Action, ...]
    itbench: int = 0
    layers: tuple[Layer, ...] = ("k8s",)
    difficulty: Difficulty = "medium"
    suites: tuple[str, ...] = ()
    must_keep: tuple[CheckSpec, ...] | None = None
    # A replaced pod comes back after the ReplicaSet's create back-off; must_keep samples the
    # second half of the window, so admission problems get a longer one.
    window_s: float = WINDOW_S
    sources: tuple[str, ...] = ()  # scenarios of benchmarks other than ITBench


# ------------------------------------------------------------------------------ data
def _quota(limits_memory: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": QUOTA, "namespace": NAMESPACE},
            "spec": {"hard": {"limits.memory": limits_memory}}}


def _quota_fault(*recreate: str) -> FaultSpec:
    return FaultSpec(fault="create_objects_recreate_pods", params={
        "objects": [_quota("1Gi")], "wait_ready": [],
        "recreate": [{"namespace": NAMESPACE, "label_selector": selector(s)} for s in recreate]})


HANG_INIT = {"name": "wait-for-smtp", "image": "busybox:1.36",
             "command": ["sh", "-c", "until nslookup smtp-relay.astronomy-shop.svc.cluster.local; "
                                     "do echo waiting for smtp-relay; sleep 2; done"]}
RECOMMENDATION_CONFIG = {
    "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "recommendation-config", "namespace": NAMESPACE},
    "data": {"warmup.sh": "set -e\necho loading product cache\ncat /etc/recommendation/products.json\n"
                          "echo product cache loaded\n"}}
WARMUP_INIT = {"name": "warmup-cache", "image": "busybox:1.36",
               "command": ["sh", "/etc/recommendation/warmup.sh"],
               "volumeMounts": [{"name": "recommendation-config", "mountPath": "/etc/recommendation"}]}
ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
    "labelSelector": {"matchLabels": {"opentelemetry.io/name": "payment"}},
    "topologyKey": "kubernetes.io/os"}]}}


def _cases() -> dict[str, WorkloadCase]:
    checkout_image = _container("checkout")["image"]
    catalog_port = PORTS["product-catalog"]
    rows = (
        WorkloadCase(
            "ad-cart-node-selector", "ads and carts are not rolling out",
            tuple(FaultSpec(fault="set_node_selector", params={
                "namespace": NAMESPACE, "name": n, "node_selector": {"kubernetes.io/hostname": "worker-gpu-1"}})
                for n in ("ad", "cart")),
            (deploy("ad"), deploy("cart")), "node_selector",
            "ad and cart pod templates carry nodeSelector kubernetes.io/hostname=worker-gpu-1, a node that "
            "does not exist",
            ("worker-gpu-1", "nodeSelector", "node selector"), (),
            "The new ad and cart pods cannot be scheduled on any node (FailedScheduling); both rollouts "
            "are stuck.",
            (_workloads("ad", "cart"),),
            tuple(_json_patch(n, {"op": "remove", "path": "/spec/template/spec/nodeSelector"}) for n in ("ad", "cart")),
            itbench=33, difficulty="easy"),
        WorkloadCase(
            "payment-anti-affinity", "the payment rollout does not finish",
            (FaultSpec(fault="patch_objects", params={"patches": [_template_patch("payment", {"affinity": ANTI_AFFINITY})]}),),
            (deploy("payment"),), "pod_anti_affinity",
            "payment pod template has a required podAntiAffinity against payment pods with topologyKey "
            "kubernetes.io/os: every node shares that domain with the running payment pod",
            ("podAntiAffinity", "anti-affinity", "kubernetes.io/os", "topologyKey"), (),
            "The new payment pod stays Pending (no node satisfies its anti-affinity while the old pod "
            "runs), so the rollout never completes.",
            (_workloads("payment"),),
            (_json_patch("payment", {"op": "remove", "path": "/spec/template/spec/affinity"}),),
            itbench=44, suites=("lite",)),
        WorkloadCase(
            "payment-pinned-node-cordoned", "payments fail after node maintenance started",
            (FaultSpec(fault="pinned_node_cordoned", params={
                "namespace": NAMESPACE, "name": "payment", "labels": {"opentelemetry.io/name": "payment"}}),),
            (deploy("payment"),), "node_selector",
            "payment pod template pins it with nodeSelector kubernetes.io/hostname to one worker, and that "
            "worker is cordoned (SchedulingDisabled) and was drained",
            ("nodeSelector", "kubernetes.io/hostname", "cordon", "unschedulable", "SchedulingDisabled"),
            (deploy("checkout"),),
            "The drained payment pod cannot be replaced: its only allowed node is cordoned, so the new pod "
            "stays Pending and every Charge from checkout fails.",
            (_workloads("payment"), _serves("payment")),
            (_json_patch("payment", {"op": "remove", "path": "/spec/template/spec/nodeSelector"}),),
            itbench=39),
        WorkloadCase(
            "email-init-hang", "the email rollout does not finish",
            (FaultSpec(fault="patch_objects", params={"patches": [_template_patch("email", {"initContainers": [HANG_INIT]})]}),),
            (deploy("email"),), "init_container",
            "email pod template gained init container wait-for-smtp, which loops on nslookup of "
            "smtp-relay, a Service that does not exist",
            ("wait-for-smtp", "init container", "smtp-relay", "Init:0/1"), (),
            "The new email pod never gets past its init container (Init:0/1), so the rollout is stuck.",
            (_workloads("email"),),
            (_json_patch("email", {"op": "remove", "path": "/spec/template/spec/initContainers"}),),
            itbench=45, layers=("k8s", "config"),
            sources=("sregym:init_container_dependency_hang_astronomy_shop",)),
        WorkloadCase(
            "frontend-readiness-probe", "the frontend rollout never becomes ready",
            (FaultSpec(fault="set_probe", params={
                "namespace": NAMESPACE, "name": "frontend", "container": "frontend", "probe_kind": "readinessProbe",
                "probe": {"httpGet": {"path": "/healthz", "port": 3000}, "initialDelaySeconds": 5,
                          "periodSeconds": 5, "failureThreshold": 3}}),),
            (deploy("frontend"),), "probe",
            f"frontend readinessProbe httpGet :3000/healthz, but the frontend listens on {PORTS['frontend']}",
            ("readiness", "3000", "readinessProbe"), (obj("Service", "frontend"),),
            "The new frontend pod never passes its readiness probe, so it never joins the Service and "
            "the rollout cannot finish.",
            (_workloads("frontend"),),
            (_json_patch("frontend", {"op": "remove", "path": "/spec/template/spec/containers/0/readinessProbe"}),),
            itbench=49, layers=("config",), difficulty="easy",
            sources=("sregym:readiness_probe_misconfiguration_astronomy_shop",)),
        WorkloadCase(
            "ad-resource-quota", "ads disappear after the ad pod was replaced",
            (_quota_fault("ad"),),
            (deploy("ad"), obj("ResourceQuota", QUOTA)), "resource_quota",
            f"ResourceQuota {QUOTA} caps limits.memory at 1Gi, below what the namespace's pods already use: "
            "the replacement ad pod exceeds quota",
            (QUOTA, "limits.memory", "exceeded quota", "1Gi"), (deploy("frontend"),),
            "Quota admission rejects the new ad pod (FailedCreate: exceeded quota), so ad has no pod and "
            "ads fail.",
            (_workloads("ad"), _serves("ad")),
            (Action(op="delete", kind="ResourceQuota", namespace=NAMESPACE, name=QUOTA),),
            itbench=102, layers=("control-plane",), window_s=WINDOW_S + 60.0),
        WorkloadCase(
            "accounting-scaled-to-zero", "orders are no longer booked",
            (FaultSpec(fault="scale_workload", params={"namespace": NAMESPACE, "name": "accounting", "replicas": 0}),),
            (deploy("accounting"),), "scaled_to_zero",
            "accounting Deployment spec.replicas set to 0 (baseline 1)",
            ("replicas", "0", "zero", "scaled"), (),
            "accounting has no pods: nothing consumes the orders topic and the accounting consumer "
            "group's lag grows with every order.",
            (_workloads("accounting"),),
            (Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="accounting",
                    patch={"spec": {"replicas": 1}}, patch_type="merge"),),
            itbench=58, difficulty="easy", suites=(AA,)),
        WorkloadCase(
            "recommendation-init-crash", "recommendations are failing",
            (FaultSpec(fault="create_objects", params={"objects": [RECOMMENDATION_CONFIG]}),
             FaultSpec(fault="patch_objects", params={"patches": [_template_patch("recommendation", {
                 "initContainers": [WARMUP_INIT],
                 "volumes": [{"name": "recommendation-config",
                              "configMap": {"name": "recommendation-config"}}]})]})),
            (deploy("recommendation"), obj("ConfigMap", "recommendation-config")), "init_container",
            "recommendation's init container warmup-cache runs warmup.sh from ConfigMap recommendation-config, "
            "which reads /etc/recommendation/products.json, a key the ConfigMap does not have, and exits 1",
            ("warmup-cache", "recommendation-config", "warmup.sh", "products.json", "Init:CrashLoopBackOff"), (),
            "The new recommendation pod's init container fails on every start (Init:CrashLoopBackOff), so "
            "the rollout is stuck.",
            (_workloads("recommendation"),),
            (_json_patch("recommendation", {"op": "remove", "path": "/spec/template/spec/initContainers"}),),
            itbench=59, layers=("k8s", "config"), suites=(AA, "lite")),
        WorkloadCase(
            "checkout-arm64-image", "the checkout rollout keeps crashing",
            (FaultSpec(fault="set_image", params={"namespace": NAMESPACE, "name": "checkout", "image": ARM64_CHECKOUT}),),
            (deploy("checkout"),), "image_architecture",
            f"checkout image changed to {ARM64_CHECKOUT}, a linux/arm64-only build, on amd64 nodes",
            (ARM64_CHECKOUT, "arm64", "exec format error", "architecture"), (),
            "The new checkout container exits at once with `exec format error` (CrashLoopBackOff); the "
            "rollout is stuck on the old pod.",
            (_workloads("checkout"),),
            (Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="checkout", patch={
                "spec": {"template": {"spec": {"containers": [{"name": "checkout", "image": checkout_image}]}}}}),),
            itbench=23, layers=("app", "k8s"), sources=("itbench:57",)),
        WorkloadCase(
            "checkout-catalog-address", "checkouts fail while every pod is running",
            (FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "Deployment", "namespace": NAMESPACE, "name": "checkout",
                "patch": {"spec": {"template": {"spec": {"containers": [{"name": "checkout", "env": [
                    {"name": "PRODUCT_CATALOG_ADDR", "value": "product-catalog:8081"}]}]}}}}}]}),),
            (deploy("checkout"),), "service_port",
            f"checkout's PRODUCT_CATALOG_ADDR environment variable was changed from product-catalog:"
            f"{catalog_port} to product-catalog:8081",
            ("PRODUCT_CATALOG_ADDR", "product-catalog:8081", "environment variable", "env var"),
            (deploy("frontend"),),
            "checkout looks up each product of an order at the address in PRODUCT_CATALOG_ADDR; pointed "
            "at a port the Service does not expose, every PlaceOrder fails.",
            (CheckSpec(check="service_error_free",
                       params={"service": "checkout", "span_name": "oteldemo.CheckoutService/PlaceOrder",
                               "window_s": 60.0}),),
            (Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="checkout", patch={
                "spec": {"template": {"spec": {"containers": [{"name": "checkout", "env": [
                    {"name": "PRODUCT_CATALOG_ADDR", "value": f"product-catalog:{catalog_port}"}]}]}}}}),),
            itbench=24, layers=("config",), suites=(AA,),
            sources=("sregym:incorrect_port_assignment",)),
        WorkloadCase(
            "frontend-cart-address-missing", "carts fail to load while every pod is running",
            (FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "Deployment", "namespace": NAMESPACE, "name": "frontend", "patch_type": "json",
                "patch": [{"op": "remove", "path": f"/spec/template/spec/containers/0/env/{_env_index('frontend', 'CART_ADDR')}"}]}]}),),
            (deploy("frontend"),), "missing_config",
            "frontend's CART_ADDR environment variable was removed from its Deployment",
            ("CART_ADDR", "environment variable", "env var", "missing"), (deploy("frontend-proxy"),),
            "The frontend builds its cart client from CART_ADDR; without it every cart request fails "
            "(viewing, adding to and emptying carts), and so do checkouts.",
            (CheckSpec(check="service_error_free", params={"service": "frontend", "window_s": 60.0}),),
            (Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend", patch={
                "spec": {"template": {"spec": {"containers": [{"name": "frontend", "env": [
                    {"name": "CART_ADDR", "value": _env_value("frontend", "CART_ADDR")}]}]}}}}),),
            layers=("config",), sources=("sregym:missing_env_variable_astronomy_shop",)),
    )
    return {c.slug: c for c in rows}


CASES = _cases()


def workload_problem(case: WorkloadCase) -> Problem:
    """The problem of one workload Kubernetes no longer runs as it should."""
    sources = ((f"itbench:{case.itbench}",) * bool(case.itbench) + case.sources
               + tuple(s for s in case.suites if s == AA))
    return Problem(
        id=f"astronomy-shop/{case.slug}-v1",
        title=case.title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=case.layers, difficulty=case.difficulty, suites=(SUITE, *case.suites), sources=sources),
        faults=case.faults,
        ground_truth=GroundTruth(
            root_causes=case.root_causes, mechanism=case.mechanism, detail=case.detail,
            detail_keywords=case.keywords, affected=case.affected, impact_keywords=K8S_IMPACT,
            description=case.description),
        mitigation=mitigation(*case.must_fix, must_keep=case.must_keep).model_copy(update={"window_s": case.window_s}),
        gold=case.gold,
        settle_s=SETTLE_S,
    )


def _together(slug: str, title: str, cases: tuple[WorkloadCase, ...], *, itbench: int, layer: Layer,
              suites: tuple[str, ...] = (), extra: WorkloadCase | None = None) -> Problem:
    """Several causes at once: every root cause must be named and every one fixed."""
    parts = (*((extra,) if extra else ()), *cases)
    merged = WorkloadCase(
        slug, title, tuple(f for c in parts for f in c.faults),
        tuple(dict.fromkeys(r for c in parts for r in c.root_causes)), cases[0].mechanism,
        "; and ".join(c.detail for c in parts), tuple(dict.fromkeys(k for c in parts for k in c.keywords)),
        tuple(dict.fromkeys(a for c in parts for a in c.affected)),
        " ".join(c.description for c in parts), tuple(m for c in parts for m in c.must_fix),
        tuple(g for c in (*cases, *((extra,) if extra else ())) for g in c.gold), itbench=itbench, layers=(layer,), difficulty="hard",
        suites=suites, window_s=max(c.window_s for c in parts))
    return workload_problem(merged)


# Time between two writes: flagd's restart must finish before the quota admits no new pod.
FLAGD_BACK = FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE, "label_selector": selector("flagd")})


def _flood_case() -> WorkloadCase:
    """The load generator's homepage flood flag, as one part of ITBench 52 (flagd restarted and
    back before the quota lands)."""
    flag = FLAGS["loadGeneratorFloodHomepage"]
    original = chart_object("ConfigMap", CONFIGMAP)["data"][KEY]
    return WorkloadCase(
        "flood", "", (FaultSpec(fault="set_flag_variant", params={
            "namespace": NAMESPACE, "flags": {flag.flag: flag.variant}, "configmap": CONFIGMAP, "key": KEY,
            "restart_selector": selector("flagd")}), FLAGD_BACK),
        (obj("ConfigMap", CONFIGMAP),), "feature_flag",
        f"the defaultVariant of {flag.flag}={flag.variant} in ConfigMap {CONFIGMAP} ({KEY})",
        (flag.flag, CONFIGMAP, "defaultVariant"), (deploy("frontend"),), flag.symptom + ".", (flag.check,),
        (Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP, patch_type="merge",
                patch={"data": {KEY: original}}), restart("flagd")))


@problem
def workload_scheduling_and_start() -> list[Problem]:
    """A workload of the shop stops being run as it should: its new pods cannot be scheduled
    (a nodeSelector naming no node, ITBench 33; an anti-affinity no node satisfies, 44; a pin
    to a cordoned node, 39), are not
    admitted (a ResourceQuota below the namespace's use, 102), or cannot start or get ready (an
    arm64-only image, 23; a hanging or crashing init container, 45 and 59; a readiness probe on the wrong port, 49); or it was scaled to zero (58); or an env
    var points it at the wrong port (24) or is gone (frontend's CART_ADDR).

    Old pods keep serving during a stuck rollout where there is one; events, pod status and the
    rollout say why the new ones do not run. Fix: undo the write (or any equivalent change) so the
    workload is fully rolled out and ready.
    """
    return [workload_problem(c) for c in CASES.values()]


@problem
def workload_pairs() -> list[Problem]:
    """Two causes at once (ITBench 60 and 52): recommendation's init container crashes on its
    ConfigMap while checkout was moved to an arm64-only image; or a ResourceQuota keeps a replaced
    checkout pod from being admitted while the load generator floods the homepage through a
    feature flag. Both must be named and both fixed.
    """
    return [
        _together("recommendation-init-and-checkout-arch", "recommendations and checkouts are failing",
                  (CASES["recommendation-init-crash"], CASES["checkout-arm64-image"]), itbench=60,
                  layer="concurrent"),
        _together("checkout-quota-and-homepage-flood", "checkouts fail and the homepage is slow",
                  (replace(CASES["ad-resource-quota"], faults=(_quota_fault("checkout"),),
                           root_causes=(deploy("checkout"), obj("ResourceQuota", QUOTA)),
                           detail=f"ResourceQuota {QUOTA} caps limits.memory at 1Gi, below the namespace's use: "
                                  "the replacement checkout pod exceeds quota",
                           affected=(deploy("frontend"),),
                           description="Quota admission rejects the new checkout pod, so checkouts fail.",
                           must_fix=(_workloads("checkout"), _serves("checkout"))),),
                  itbench=52, layer="concurrent", suites=(AA, "lite"), extra=_flood_case()),
    ]
