"""Astronomy Shop problems in how a request reaches a service: a Service's targetPort (ITBench
scenario 30), a Service deleted (114) or selecting no pod, an ingress NetworkPolicy that admits
no port the frontend serves (31), a pod template whose DNS policy bypasses CoreDNS (43).

Every fault is one ordinary Kubernetes write and the broken component's pods stay Running and
Ready, so the agent has to follow the request's path (name → Service → endpoints → policy →
listening port) to where it stops. Root causes are ITBench's v2 ground-truth entities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.problems.builders import service_serves
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    WINDOW_S,
    chart_object,
    deploy,
    obj,
)
from sregym.problems.model import Action, CheckSpec, Difficulty, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth, RootCause

# The built-in `missing_service` is the same kind of fault (a deleted Service), and its clients
# see DNS failures.
mechanisms({"service_deleted": ("deleted", "service missing", "missing service", "service not found",
                                 "no such host", "does not exist")},
           related={"service_deleted": ("missing_service", "dns")})

AA = "itbench-aa"  # ITBench 30 and 114 join the suite (common.AA_SUITE_ALSO); no `itbench-aa` source
NETWORK_IMPACT = (*IMPACT, "timeout", "no such host", "no endpoints", "connection refused")


def _serves(service: str) -> CheckSpec:
    return service_serves(service, PORTS[service], service)


def _reaches(deployment: str, *services: str) -> CheckSpec:
    return CheckSpec(check="deployment_reaches",
                     params={"deployment": deployment, "targets": [[s, PORTS[s]] for s in services]})


@dataclass(frozen=True)
class PathCase:
    """One broken hop on a request's path: the write that breaks it, the entities ITBench names
    as its root cause, the callers that see it, the check that is green once the hop works, and
    the write that restores it."""

    slug: str
    title: str
    faults: tuple[FaultSpec, ...]
    root_causes: tuple[RootCause, ...]
    mechanism: str
    detail: str
    keywords: tuple[str, ...]
    affected: tuple[str, ...]
    description: str
    check: CheckSpec
    gold: tuple[Action, ...]
    sources: tuple[str, ...] = ()
    difficulty: Difficulty = "easy"
    suites: tuple[str, ...] = ()
    window_s: float = WINDOW_S  # a fix that rolls the frontend needs its new pod up before the window


def _service_patch(service: str, path: str, value: Any) -> Action:
    return Action(op="patch", kind="Service", namespace=NAMESPACE, name=service, patch_type="json",
                  patch=[{"op": "replace", "path": path, "value": value}])


FRONTEND_INGRESS: dict[str, Any] = {
    "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
    "metadata": {"name": "frontend-ingress", "namespace": NAMESPACE},
    "spec": {"podSelector": {"matchLabels": {"opentelemetry.io/name": "frontend"}},
             "policyTypes": ["Ingress"],
             "ingress": [{"ports": [{"protocol": "TCP", "port": 80}]}]},
}


def _cases() -> tuple[PathCase, ...]:
    ad_port = PORTS["ad"]
    return (
        PathCase(
            "ad-service-target-port", "ads are missing from every page",
            (FaultSpec(fault="set_service_target_port", params={
                "namespace": NAMESPACE, "name": "ad", "port": ad_port, "target_port": 9555}),),
            (obj("Service", "ad"),), "service_port",
            f"Service ad port {ad_port} has targetPort 9555; the ad container listens on {ad_port}",
            ("9555", "targetPort", "target port"), ("frontend",),
            "The ad Service keeps its ready endpoint, but connections go to a pod port where nothing "
            "listens: the frontend's GetAds calls are refused and ads disappear.",
            _serves("ad"), (_service_patch("ad", "/spec/ports/0/targetPort", ad_port),), ("itbench:30",),
            suites=("lite", AA)),
        PathCase(
            "product-catalog-service-deleted", "product pages and checkouts fail",
            (FaultSpec(fault="delete_object", params={
                "kind": "Service", "namespace": NAMESPACE, "name": "product-catalog"}),),
            (obj("Service", "product-catalog"),), "service_deleted",
            "the product-catalog Service was deleted; its Deployment and pod are still running",
            ("product-catalog", "deleted", "Service", "no such host"), ("frontend", "checkout", "recommendation"),
            "Without its Service the name product-catalog no longer resolves: every caller of the "
            "catalogue (frontend, checkout, recommendation, product-reviews) fails to look it up.",
            _serves("product-catalog"),
            (Action(op="apply", manifest=chart_object("Service", "product-catalog")),), ("itbench:114", "sregym:missing_service_astronomy_shop"), suites=(AA,)),
        PathCase(
            "recommendation-service-selector", "recommendations are missing",
            (FaultSpec(fault="set_service_selector", params={
                "namespace": NAMESPACE, "name": "recommendation",
                "selector": {"opentelemetry.io/name": "recommendations"}}),),
            (obj("Service", "recommendation"),), "service_selector",
            "recommendation Service selector opentelemetry.io/name=recommendations matches no pod",
            ("recommendations", "selector"), ("frontend",),
            "With no pod matching its selector the recommendation Service has no endpoints; the "
            "frontend's ListRecommendations calls are refused.",
            _serves("recommendation"),
            (_service_patch("recommendation", "/spec/selector",
                            chart_object("Service", "recommendation")["spec"]["selector"]),),
            ("sregym:wrong_service_selector_astronomy_shop",)),
        PathCase(
            "frontend-ingress-policy", "the shop does not load",
            (FaultSpec(fault="create_objects", params={"objects": [FRONTEND_INGRESS]}),),
            (deploy("frontend"), obj("NetworkPolicy", "frontend-ingress")), "network_policy",
            f"NetworkPolicy frontend-ingress selects the frontend pods and admits ingress only on TCP "
            f"port 80; the frontend serves on {PORTS['frontend']}",
            ("frontend-ingress", "port 80", "Ingress", "NetworkPolicy"), ("frontend-proxy",),
            "Packets to the frontend's serving port are dropped by the policy: frontend-proxy's "
            "requests to the frontend time out and users get errors.",
            _serves("frontend"),
            (Action(op="delete", kind="NetworkPolicy", namespace=NAMESPACE, name="frontend-ingress"),),
            # the users' requests held by the dropped packets time out before the load returns
            ("itbench:31",), "medium", window_s=WINDOW_S + 60.0),
        PathCase(
            "frontend-dns-policy", "every page fails while the frontend is running",
            (FaultSpec(fault="set_dns_policy", params={
                "namespace": NAMESPACE, "name": "frontend", "dns_policy": "None",
                "dns_config": {"nameservers": ["8.8.8.8"]}}),),
            (deploy("frontend"),), "dns",
            "frontend pod template dnsPolicy None with dnsConfig nameserver 8.8.8.8 (not CoreDNS)",
            ("dnsPolicy", "8.8.8.8", "None"), ("frontend-proxy",),
            "The frontend resolves through a public resolver that knows no cluster names, so none of "
            "its backends resolve and every page that needs one fails.",
            _reaches("frontend", "product-catalog", "cart"),
            (Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend", patch_type="json",
                    patch=[{"op": "replace", "path": "/spec/template/spec/dnsPolicy", "value": "ClusterFirst"},
                           {"op": "remove", "path": "/spec/template/spec/dnsConfig"}]),),
            ("itbench:43", "sregym:wrong_dns_policy_astronomy_shop"), "medium", window_s=WINDOW_S + 60.0),
    )


def path_problem(case: PathCase) -> Problem:
    """The problem of one broken hop."""
    return Problem(
        id=f"astronomy-shop/{case.slug}-v1",
        title=case.title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty=case.difficulty, suites=(SUITE, *case.suites), sources=case.sources),
        faults=case.faults,
        ground_truth=GroundTruth(
            root_causes=case.root_causes, mechanism=case.mechanism, detail=case.detail,
            detail_keywords=case.keywords, affected=tuple(deploy(s) for s in case.affected),
            impact_keywords=NETWORK_IMPACT, description=case.description),
        mitigation=MitigationSpec(must_fix=(case.check,), window_s=case.window_s),
        gold=case.gold,
        settle_s=SETTLE_S,
    )


CASES: dict[str, PathCase] = {c.slug: c for c in _cases()}


@problem
def request_path() -> list[Problem]:
    """One hop of a request's path is broken by a Kubernetes write: ad's Service targetPort
    (ITBench 30), the product-catalog Service deleted (114), recommendation's Service selector
    matching no pod, a NetworkPolicy `frontend-ingress` admitting only a port the frontend does not
    serve (31), the frontend's dnsPolicy `None` with a public nameserver (43).

    The pods behind the broken hop are Running and Ready; callers see refused connections,
    timeouts or `no such host`. Fix: restore the hop (port, Service, selector, policy, DNS policy).
    """
    return [path_problem(c) for c in CASES.values()]
