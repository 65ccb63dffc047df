"""Social Network problems in how a request reaches a Thrift service: the Service's targetPort and
selector, the Service itself, a pod's dnsPolicy and cluster DNS (one name, or every Service name).

The pods of the broken component stay Running and Ready in most of them; the agent has to follow
the call from nginx-thrift through compose-post (or a timeline service) to where it stops: name →
Service → endpoints → listening port.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.social_network import PORTS
from sregym.problems.builders import object_cause
from sregym.problems.catalog.social_network.common import (
    NS,
    deploy,
    error_free,
    manifest,
    mitigation,
    obj,
    serves,
    social_problem,
)
from sregym.problems.model import Action, FaultSpec, Problem
from sregym.problems.registry import problem

USER = "user-service"
THRIFT = PORTS[USER]
NET_KEYWORDS = ("connection refused", "refused")


def _coredns_configmap() -> dict[str, Any]:
    from sregym.twin.topology import COREFILE

    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "coredns", "namespace": "kube-system"},
            "data": {"Corefile": COREFILE}}


@problem
def user_service_target_port() -> Problem:
    """The user-service Service's targetPort is changed from 9090 to 9999 (SREGym and AIOpsLab
    `k8s_target_port-misconfig`).

    Symptoms: user-service's pod is Running, Ready and listed in the endpoints, yet compose-post's
    calls to it are refused (`TTransportException ... Connection refused` in compose-post's log,
    error spans on ComposeCreatorWithUserId), so every new post fails with a 500 at nginx-thrift
    while timelines load. `kubectl get endpoints user-service` shows `<pod-ip>:9999`. Fix: point
    the targetPort back at 9090.
    """
    return social_problem(
        "user-service-target-port", "new posts fail while timelines load",
        layers=("network",), difficulty="easy", suites=("lite",),
        # AIOpsLab's variants 2 and 3 change another Service's targetPort (partial rows)
        sources=("sregym:k8s_target_port-misconfig", "aiopslab:k8s_target_port-misconfig-1",
                 "aiopslab:k8s_target_port-misconfig-2", "aiopslab:k8s_target_port-misconfig-3"),
        faults=(FaultSpec(fault="set_service_target_port",
                          params={"namespace": NS, "name": USER, "port": THRIFT, "target_port": 9999}),),
        root_causes=(obj("Service", USER),), mechanism="service_port",
        detail=f"Service {USER} port {THRIFT} has targetPort 9999; the container listens on {THRIFT}",
        keywords=("9999", "targetPort", "target port"),
        affected=(deploy("compose-post-service"), deploy("nginx-thrift")),
        description="user-service keeps its ready endpoint, but every connection is sent to port 9999 where "
                    "nothing listens: compose-post's calls are refused and composing a post fails.",
        mitigation=mitigation(serves(USER)),
        gold=(Action(op="patch", kind="Service", namespace=NS, name=USER, patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/ports/0/targetPort", "value": THRIFT}]),))


@problem
def user_service_selector_nothing() -> Problem:
    """The user-service Service's selector gains `tier: backend`, a label no pod carries (SREGym
    `wrong_service_selector_social_network`).

    Symptoms: `kubectl get endpoints user-service` is empty although the pod is Running and Ready;
    compose-post's calls to user-service are refused and every new post fails. Fix: make the
    selector match the user-service pods again.
    """
    return social_problem(
        "user-service-selector-nothing", "new posts fail: a backend has no endpoints",
        layers=("network",), difficulty="easy",
        sources=("sregym:wrong_service_selector_social_network",),
        faults=(FaultSpec(fault="set_service_selector", params={
            "namespace": NS, "name": USER, "selector": {"service": USER, "tier": "backend"}}),),
        root_causes=(obj("Service", USER),), mechanism="service_selector",
        detail="user-service Service selector service=user-service,tier=backend matches no pod (no pod has tier)",
        keywords=("tier", "backend", "selector"),
        affected=(deploy("compose-post-service"), deploy("nginx-thrift")),
        description="No pod matches the Service's selector, so it has no endpoints and compose-post cannot "
                    "reach user-service: composing a post fails.",
        mitigation=mitigation(serves(USER)),
        gold=(Action(op="patch", kind="Service", namespace=NS, name=USER, patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/selector", "value": {"service": USER}}]),))


@problem
def user_service_missing() -> Problem:
    """The user-service Service is deleted; its Deployment and pod keep running (SREGym
    `missing_service_social_network`).

    Symptoms: compose-post cannot resolve user-service (`Could not resolve host for client socket`
    / no such host in its log), so every new post fails; `kubectl get svc` has no user-service.
    Fix: recreate the Service (port 9090, selector `service: user-service`).
    """
    return social_problem(
        "user-service-missing", "new posts fail: a backend cannot be found",
        layers=("network",), difficulty="easy",
        sources=("sregym:missing_service_social_network",),
        faults=(FaultSpec(fault="delete_object", params={"kind": "Service", "namespace": NS, "name": USER}),),
        root_causes=(obj("Service", USER),), mechanism="missing_service",
        detail="the user-service Service was deleted, so the name user-service no longer resolves",
        keywords=("user-service", "service", "deleted", "missing", "not found", "no such host"),
        affected=(deploy("compose-post-service"), deploy("nginx-thrift")),
        description="Without its Service user-service has no name: compose-post cannot reach it and "
                    "composing a post fails.",
        mitigation=mitigation(serves(USER)),
        gold=(Action(op="apply", manifest=manifest("Service", USER)),))


@problem
def text_service_dns_policy() -> Problem:
    """text-service's pod template is changed to `dnsPolicy: None` with `dnsConfig.nameservers:
    [8.8.8.8]` (SREGym `wrong_dns_policy_social_network`, here on the service whose calls every
    post needs).

    Symptoms: the new text-service pod is Running and Ready, but its resolv.conf points at 8.8.8.8
    with no cluster search domains: url-shorten-service and user-mention-service do not resolve,
    ComposeText fails and so does every new post. Fix: restore `dnsPolicy: ClusterFirst` (drop
    the dnsConfig).
    """
    text = "text-service"
    return social_problem(
        "text-service-dns-policy", "new posts fail after a text-service change",
        layers=("network",), difficulty="medium",
        sources=("sregym:wrong_dns_policy_social_network",),
        faults=(FaultSpec(fault="set_dns_policy", params={
            "namespace": NS, "name": text, "dns_policy": "None", "dns_config": {"nameservers": ["8.8.8.8"]}}),),
        root_causes=(deploy(text),), mechanism="dns",
        detail="text-service pod template dnsPolicy None with dnsConfig nameserver 8.8.8.8 (not CoreDNS)",
        keywords=("dnsPolicy", "8.8.8.8", "None", "dnsConfig"),
        affected=(deploy("compose-post-service"), deploy("nginx-thrift")),
        description="text-service resolves through a public resolver that knows no cluster names, so it "
                    "cannot reach url-shorten-service or user-mention-service and every post fails.",
        mitigation=mitigation(error_free(text)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=text, patch_type="json", patch=[
            {"op": "replace", "path": "/spec/template/spec/dnsPolicy", "value": "ClusterFirst"},
            {"op": "remove", "path": "/spec/template/spec/dnsConfig"}]),))


@problem
def user_service_nxdomain() -> Problem:
    """CoreDNS's Corefile (ConfigMap kube-system/coredns) gains a `template` block that answers
    NXDOMAIN for `user-service.social-network.svc.cluster.local` (SREGym
    `service_dns_resolution_failure_social_network`).

    Symptoms: compose-post cannot resolve user-service (no such host) although the Service and
    its pod are healthy; `nslookup user-service` from any pod returns NXDOMAIN; every new post
    fails. Fix: remove the template block from the Corefile.
    """
    fqdn = f"{USER}.{NS}.svc.cluster.local"
    return social_problem(
        "user-service-nxdomain", "new posts fail: a backend's name does not resolve",
        layers=("network",), difficulty="medium",
        sources=("sregym:service_dns_resolution_failure_social_network",),
        faults=(FaultSpec(fault="corefile_template", params={"names": [fqdn]}),),
        root_causes=(object_cause("kube-system", "ConfigMap", "coredns"),), mechanism="dns",
        detail=f"Corefile template block answers NXDOMAIN for {fqdn}",
        keywords=("template", "NXDOMAIN", "Corefile", "coredns"),
        affected=(deploy("compose-post-service"), obj("Service", USER)),
        description="Cluster DNS denies user-service's name, so compose-post cannot reach it and every "
                    "post fails.",
        mitigation=mitigation(serves(USER), error_free("compose-post-service")),
        gold=(Action(op="apply", manifest=_coredns_configmap()),))


@problem
def stale_coredns_config() -> Problem:
    """CoreDNS's Corefile gains a `template` block that answers NXDOMAIN for the whole
    `svc.cluster.local` zone, a leftover of a DNS migration (SREGym
    `stale_coredns_config_social_network`).

    Symptoms: no Service name resolves from any pod: nginx-thrift cannot reach the timeline or
    compose services, the services cannot reach their stores, almost every request fails, while
    every pod is Running and Ready and the CoreDNS pods are healthy. Fix: remove the template
    block from the Corefile.
    """
    return social_problem(
        "stale-coredns-config", "almost every request fails while every pod is healthy",
        layers=("network",), difficulty="medium", suites=("lite",),
        sources=("sregym:stale_coredns_config_social_network",),
        faults=(FaultSpec(fault="corefile_template", params={"names": ["svc.cluster.local"]}),),
        root_causes=(object_cause("kube-system", "ConfigMap", "coredns"),), mechanism="dns",
        detail="Corefile template block answers NXDOMAIN for the zone svc.cluster.local (every Service name)",
        keywords=("template", "NXDOMAIN", "Corefile", "svc.cluster.local", "coredns"),
        affected=(deploy("nginx-thrift"), deploy("home-timeline-service"), deploy("compose-post-service")),
        description="Cluster DNS answers NXDOMAIN for every Service name, so no component can reach another "
                    "and the site fails.",
        mitigation=mitigation(error_free("home-timeline-service"), error_free("user-timeline-service"),
                              error_free("compose-post-service")),
        gold=(Action(op="apply", manifest=_coredns_configmap()),))
