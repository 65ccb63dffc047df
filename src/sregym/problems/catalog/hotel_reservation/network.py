"""Hotel Reservation problems in how traffic reaches a workload: Services (ports, selectors),
probes, scheduling and scale, NetworkPolicy and DNS (CoreDNS and a pod's dnsPolicy).

Every fault here is one ordinary Kubernetes write; the pods of the broken component usually look
healthy (Running), so the agent has to follow a request's path — name → Service → endpoints →
policy → listening port — to find where it stops.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import (
    deployment_cause,
    keep,
    object_cause,
    patch_container,
    service_serves,
    workload_ready,
)
from sregym.problems.family import Param, family
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
IMPACT = ("unavailable", "not ready", "fail", "error", "errors", "down", "pending", "refused", "timeout",
          "no endpoints", "cannot", "can't", "blocked", "outage", "500", "latency", "no such host")
SELECTOR_KEY = "io.kompose.service"
WINDOW_S = 180.0
SETTLE_S = 60.0


_deploy = partial(deployment_cause, NAMESPACE)
_obj = partial(object_cause, NAMESPACE)


def _serves(service: str, backend: str | None = None) -> CheckSpec:
    return service_serves(service, PORTS[service], backend or service)


def _mitigation(*must_fix: CheckSpec, also_keep: tuple[CheckSpec, ...] = (),
                durability: tuple[CheckSpec, ...] = ()) -> MitigationSpec:
    return MitigationSpec(must_fix=must_fix, must_keep=keep(*also_keep), durability=durability, window_s=WINDOW_S)


# The services a family may target, and the Deployments whose requests need each one (its callers
# up to the entry point): the affected entities of a fault on it.
SERVICE_CALLERS: dict[str, tuple[str, ...]] = {
    "search": ("frontend",), "geo": ("search", "frontend"), "rate": ("search", "frontend"),
    "profile": ("frontend",), "recommendation": ("frontend",), "reservation": ("frontend",), "user": ("frontend",),
}
TARGET_SERVICES = Param("service", ("geo", "rate", "search", "profile", "recommendation", "reservation", "user"))


def _container(service: str) -> str:
    return f"hotel-reserv-{service}"


def _patch_container(service: str, fields: dict[str, Any]) -> Action:
    """A strategic-merge patch of one container of the service's Deployment (kubectl patch)."""
    return patch_container(NAMESPACE, service, _container(service), fields)


# ------------------------------------------------------------------ 1. Service targetPort
def _target_port(service: str, wrong: int) -> Problem:
    port = PORTS[service]
    return Problem(
        id=f"hotel-reservation/service-target-port-{service}-v1",
        title=f"{service} Service forwards to the wrong container port",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="easy", suites=("lite", "detection")),
        faults=(FaultSpec(fault="set_service_target_port",
                          params={"namespace": NAMESPACE, "name": service, "port": port, "target_port": wrong}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("Service", service),), mechanism="service_port",
            detail=f"Service {service} port {port} has targetPort {wrong}; the {service} container listens on {port}",
            detail_keywords=(str(wrong), "targetPort", "target port"),
            affected=tuple(_deploy(caller) for caller in SERVICE_CALLERS[service]),
            impact_keywords=IMPACT,
            description=f"The {service} Service keeps its ready endpoint, but every connection is sent to "
                        f"port {wrong} on the pod, where nothing listens: callers get connection refused "
                        "and the requests that need it fail."),
        mitigation=_mitigation(_serves(service)),
        gold=(Action(op="patch", kind="Service", namespace=NAMESPACE, name=service, patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/ports/0/targetPort", "value": port}]),),
        settle_s=SETTLE_S,
    )


@family(TARGET_SERVICES, Param("port", (9999, 8080, 7000)))
def service_target_port(service: str = "geo", port: int = 9999) -> Problem:
    """The geo Service's targetPort is changed from 8083 to 9999.

    Symptoms: geo's pod is Running and Ready and listed in the Service's endpoints, yet search's
    calls to geo fail with `connection refused` (search logs, error spans on search → geo), so
    hotel searches fail at the frontend. `kubectl get endpoints geo` shows `<pod-ip>:9999`.
    Fix: set the Service's targetPort back to the port geo listens on (8083).
    """
    return _target_port(service, port)


# ------------------------------------------------------- 2. Service selector matches nothing
@problem
def service_selector_nothing() -> Problem:
    """The reservation Service's selector is edited to `io.kompose.service: reservations`, a
    value no pod carries.

    Symptoms: `kubectl get endpoints reservation` is empty; frontend's hotel searches and
    bookings fail with `connection refused` on reservation:8087 while the reservation pod itself is
    Running and Ready. Fix: make the selector match the reservation pods again.
    """
    return Problem(
        id="hotel-reservation/service-selector-nothing-v1",
        title="reservation Service has no endpoints",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="easy", suites=("lite",), sources=("sregym:wrong_service_selector_hotel_reservation",)),
        faults=(FaultSpec(fault="set_service_selector",
                          params={"namespace": NAMESPACE, "name": "reservation",
                                  "selector": {SELECTOR_KEY: "reservations"}}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("Service", "reservation"),), mechanism="service_selector",
            detail="reservation Service selector io.kompose.service=reservations matches no pod",
            detail_keywords=("reservations", "selector"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="With no pod matching its selector the reservation Service has no endpoints; "
                        "kube-proxy rejects every connection, so availability checks and bookings fail."),
        mitigation=_mitigation(_serves("reservation")),
        gold=(Action(op="patch", kind="Service", namespace=NAMESPACE, name="reservation", patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/selector", "value": {SELECTOR_KEY: "reservation"}}]),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------- 3. Service selecting the wrong pods
ROUTE_LABEL = {"service-route": "frontend"}


@problem
def service_wrong_pods() -> Problem:
    """The frontend Service's selector is broadened to `service-route: frontend`, a routing label
    that was added to the frontend pod template but also to the search pod template.

    Symptoms: `kubectl get endpoints frontend` lists the frontend pod and the search pod; the
    search pod listens on 8082, not 5000, so about half of the user requests are refused at the
    entry point. All pods are Running and Ready. Fix: select only frontend pods again (restore
    the selector, or take the label off search).
    """
    return Problem(
        id="hotel-reservation/service-wrong-pods-v1",
        title="frontend Service sends traffic to pods that are not frontend",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="medium", suites=(), sources=("sregym:service_wrong_pod_selection_hotel_reservation",)),
        faults=(FaultSpec(fault="add_pod_template_labels",
                          params={"namespace": NAMESPACE, "names": ["frontend", "search"], "labels": ROUTE_LABEL}),
                FaultSpec(fault="set_service_selector",
                          params={"namespace": NAMESPACE, "name": "frontend", "selector": ROUTE_LABEL})),
        ground_truth=GroundTruth(
            root_causes=(_obj("Service", "frontend"),), mechanism="service_selector",
            detail="frontend Service selector service-route=frontend also matches the search pod "
                   "(which carries the same label and listens on 8082, not 5000)",
            detail_keywords=("service-route", "search"),
            affected=(_deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="The entry Service load-balances over frontend and search pods; connections "
                        "that land on search are refused, so a large share of user requests fail."),
        mitigation=_mitigation(_serves("frontend")),
        gold=(Action(op="patch", kind="Service", namespace=NAMESPACE, name="frontend", patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/selector", "value": {SELECTOR_KEY: "frontend"}}]),),
        settle_s=SETTLE_S,
    )


# --------------------------------------------------------- 4. readiness probe, wrong port
@problem
def readiness_probe_wrong_port() -> Problem:
    """A readiness probe added to frontend checks TCP port 8080; frontend listens on 5000.

    Symptoms: the new frontend pod is Running but never Ready (`Readiness probe failed: dial tcp
    <ip>:8080: connect: connection refused`), the rollout is stuck with the old pod still
    serving and the new ReplicaSet at 0/1. Fix: probe the port frontend serves (or drop the
    probe); the rollout must complete.
    """
    probe = {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10,
             "timeoutSeconds": 1, "failureThreshold": 3}
    return Problem(
        id="hotel-reservation/readiness-probe-wrong-port-v1",
        title="frontend rollout never becomes ready",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="easy", suites=("lite", "detection"), sources=("sregym:readiness_probe_misconfiguration_hotel_reservation",)),
        faults=(FaultSpec(fault="set_probe",
                          params={"namespace": NAMESPACE, "name": "frontend", "container": _container("frontend"),
                                  "probe_kind": "readinessProbe", "probe": probe}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),), mechanism="probe",
            detail="frontend readinessProbe tcpSocket port 8080, but the frontend server listens on 5000",
            detail_keywords=("8080", "readiness"),
            affected=(_obj("Service", "frontend"),), impact_keywords=IMPACT,
            description="The new frontend pod never passes its readiness probe, so it never joins the "
                        "Service and the rollout cannot finish."),
        # The old pod keeps serving during the stuck rollout: serving is kept, readiness is fixed.
        mitigation=_mitigation(workload_ready("frontend"), also_keep=(_serves("frontend"),)),
        gold=(_patch_container("frontend", {"readinessProbe": {"tcpSocket": {"port": 5000}}}),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------------ 6. nodeSelector, no such node
@problem
def nonexistent_node() -> Problem:
    """user's pod template gets `nodeSelector: kubernetes.io/hostname: extra-node`; there is no
    such node.

    Symptoms: the new user pod stays Pending with `FailedScheduling ... 0/4 nodes are available:
    ... didn't match Pod's node affinity/selector`; the rollout is stuck. Fix: remove or correct
    the nodeSelector so the pod schedules on an existing worker.
    """
    return Problem(
        id="hotel-reservation/nonexistent-node-v1",
        title="user pods cannot be scheduled",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("k8s",), difficulty="easy", suites=("lite",)),
        faults=(FaultSpec(fault="set_node_selector",
                          params={"namespace": NAMESPACE, "name": "user",
                                  "node_selector": {"kubernetes.io/hostname": "extra-node"}}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("user"),), mechanism="node_selector",
            detail="user pod template nodeSelector kubernetes.io/hostname=extra-node matches no node",
            detail_keywords=("extra-node", "nodeSelector"),
            affected=(), impact_keywords=IMPACT,
            description="The user Deployment's new pod cannot be scheduled anywhere, so its rollout never "
                        "completes."),
        mitigation=_mitigation(workload_ready("user"), also_keep=(_serves("user"),)),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="user", patch_type="json",
                     patch=[{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------------------ 7. scaled to zero
# What fails at the entry point when a service has no pods: the title and the requests that fail.
ZERO_SYMPTOMS: dict[str, tuple[str, str]] = {
    "search": ("hotel search fails for every user", "every /hotels request"),
    "geo": ("hotel search fails for every user", "every /hotels request"),
    "rate": ("hotel search fails for every user", "every /hotels request"),
    "profile": ("hotel search and recommendations fail for every user", "every /hotels and /recommendations request"),
    "recommendation": ("recommendations fail for every user", "every /recommendations request"),
    "reservation": ("searches and bookings fail for every user", "every /hotels and /reservation request"),
    "user": ("logins and bookings fail for every user", "every /user and /reservation request"),
}


@family(Param("service", tuple(ZERO_SYMPTOMS)))
def scaled_to_zero(service: str = "search") -> Problem:
    """The search Deployment is scaled to 0 replicas.

    Symptoms: no search pods; `kubectl get endpoints search` is empty; every hotel search fails at
    the frontend with `connection refused` to search:8082 while recommendations still work. Fix:
    scale search back to its previous replica count (1).
    """
    title, failing = ZERO_SYMPTOMS[service]
    return Problem(
        id="hotel-reservation/scaled-to-zero-v1",
        title=title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("k8s",), difficulty="easy", suites=("detection",)),
        faults=(FaultSpec(fault="scale_workload", params={"namespace": NAMESPACE, "name": service, "replicas": 0}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(service),), mechanism="scaled_to_zero",
            detail=f"{service} Deployment spec.replicas set to 0 (baseline 1)",
            detail_keywords=("replicas", "0", "zero", "scaled"),
            affected=(_obj("Service", service), *(_deploy(caller) for caller in SERVICE_CALLERS[service])),
            impact_keywords=IMPACT,
            description=f"{service} has no pods, so its Service has no endpoints and {failing} "
                        "fails at the frontend."),
        mitigation=_mitigation(workload_ready(service), _serves(service)),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name=service,
                     patch={"spec": {"replicas": 1}}, patch_type="merge"),),
        settle_s=SETTLE_S,
    )


# ---------------------------------------------------------- 8. deny-all NetworkPolicy
DENY_ALL: dict[str, Any] = {
    "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
    "metadata": {"name": "recommendation-isolation", "namespace": NAMESPACE},
    "spec": {"podSelector": {"matchLabels": {SELECTOR_KEY: "recommendation"}},
             "policyTypes": ["Ingress", "Egress"]},
}


@problem
def network_policy_deny_all() -> Problem:
    """A NetworkPolicy `recommendation-isolation` selects the recommendation pods with
    `policyTypes: [Ingress, Egress]` and no rules: all traffic to and from them is dropped.

    Symptoms: frontend's /recommendations requests time out (`context deadline exceeded` on
    recommendation:8085), recommendation cannot reach mongodb-recommendation; the pod is Running
    and Ready and its Service has endpoints. Fix: remove the policy, or allow ingress from
    frontend and egress to MongoDB (and DNS).
    """
    return Problem(
        id="hotel-reservation/network-policy-deny-all-v1",
        title="recommendations time out",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="medium", suites=("lite",), sources=("sregym:network_policy_block",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": [DENY_ALL]}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("NetworkPolicy", "recommendation-isolation"),), mechanism="network_policy",
            detail="NetworkPolicy recommendation-isolation selects io.kompose.service=recommendation with "
                   "Ingress and Egress policy types and no allow rules (deny all)",
            detail_keywords=("recommendation-isolation", "deny", "Ingress", "Egress"),
            affected=(_deploy("recommendation"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Packets to and from the recommendation pods are dropped: frontend's calls time "
                        "out and recommendation cannot reach its database."),
        mitigation=_mitigation(_serves("recommendation"),
                               CheckSpec(check="deployment_reaches",
                                         params={"deployment": "recommendation",
                                                 "targets": [["mongodb-recommendation", 27017]]})),
        gold=(Action(op="delete", kind="NetworkPolicy", namespace=NAMESPACE, name="recommendation-isolation"),),
        settle_s=SETTLE_S,
    )


# ----------------------------------------------------------------- 9. CoreDNS NXDOMAIN
def _default_coredns_configmap() -> dict[str, Any]:
    from sregym.twin.topology import COREFILE

    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "coredns", "namespace": "kube-system"},
            "data": {"Corefile": COREFILE}}


@problem
def coredns_nxdomain() -> Problem:
    """CoreDNS's Corefile (ConfigMap kube-system/coredns) gains a `template` block that answers
    NXDOMAIN for `rate.hotel-reservation.svc.cluster.local`.

    Symptoms: search's calls to rate fail with `dial tcp: lookup rate ... no such host`; `nslookup
    rate` from any pod returns NXDOMAIN although the rate Service and pod are healthy; hotel
    searches fail. Fix: remove the template block from the Corefile.
    """
    fqdn = f"rate.{NAMESPACE}.svc.cluster.local"
    return Problem(
        id="hotel-reservation/coredns-nxdomain-v1",
        title="searches fail: rate cannot be found",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="medium", suites=("lite",)),
        faults=(FaultSpec(fault="corefile_template", params={"names": [fqdn]}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause("kube-system", "ConfigMap", "coredns"),), mechanism="dns",
            detail=f"Corefile template block answers NXDOMAIN for {fqdn}",
            detail_keywords=("template", "NXDOMAIN", "Corefile"),
            affected=(_deploy("search"), _obj("Service", "rate")), impact_keywords=IMPACT,
            description="Cluster DNS denies the rate Service's name, so search cannot resolve rate and "
                        "hotel searches fail."),
        mitigation=_mitigation(_serves("rate"),
                               CheckSpec(check="deployment_reaches",
                                         params={"deployment": "search", "targets": [["rate", PORTS["rate"]]]})),
        gold=(Action(op="apply", manifest=_default_coredns_configmap()),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------------------- 10. wrong dnsPolicy
@problem
def wrong_dns_policy() -> Problem:
    """profile's pod template is changed to `dnsPolicy: None` with `dnsConfig.nameservers:
    [8.8.8.8]`.

    Symptoms: the new profile pod is Running and Ready, but its resolv.conf points at 8.8.8.8
    with no cluster search domains, so `mongodb-profile` and `memcached-profile` do not resolve
    (`no such host`); profile lookups fail and so do hotel searches and recommendations. Fix:
    restore `dnsPolicy: ClusterFirst` (drop the dnsConfig).
    """
    return Problem(
        id="hotel-reservation/wrong-dns-policy-v1",
        title="profile cannot find its database",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",), difficulty="medium", suites=(), sources=("sregym:wrong_dns_policy_hotel_reservation",)),
        faults=(FaultSpec(fault="set_dns_policy",
                          params={"namespace": NAMESPACE, "name": "profile", "dns_policy": "None",
                                  "dns_config": {"nameservers": ["8.8.8.8"]}}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("profile"),), mechanism="dns",
            detail="profile pod template dnsPolicy None with dnsConfig nameserver 8.8.8.8 (not CoreDNS)",
            detail_keywords=("dnsPolicy", "8.8.8.8", "None"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="profile's pods resolve through a public resolver that knows no cluster names, "
                        "so profile cannot reach MongoDB or memcached."),
        mitigation=_mitigation(CheckSpec(check="deployment_reaches",
                                         params={"deployment": "profile",
                                                 "targets": [["mongodb-profile", 27017],
                                                             ["memcached-profile", 11211]]})),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="profile", patch_type="json",
                     patch=[{"op": "replace", "path": "/spec/template/spec/dnsPolicy", "value": "ClusterFirst"},
                            {"op": "remove", "path": "/spec/template/spec/dnsConfig"}]),),
        settle_s=SETTLE_S,
    )


# ----------------------------------------------------- 5. liveness probe too aggressive
LOADGEN_NAMESPACE = "sregym-system"
LOADGEN = "sregym-loadgen"
AGGRESSIVE_LIVENESS = {"httpGet": {"path": "/", "port": 5000}, "initialDelaySeconds": 5, "periodSeconds": 1,
                       "timeoutSeconds": 1, "failureThreshold": 1}


@problem
def liveness_probe_too_aggressive() -> Problem:
    """frontend gets a liveness probe with a 1 s period, 1 s timeout and failureThreshold 1, while
    user traffic grows about tenfold (a second batch of load generators starts).

    Symptoms: under the higher load the frontend's request queue grows past one second; its
    liveness probe times out (`Liveness probe failed: Get "http://<ip>:5000/": context deadline
    exceeded (Client.Timeout exceeded while awaiting headers)`) and the kubelet kills the
    container at the first miss, over and over (restart count climbing, CrashLoopBackOff), which
    turns slowness into an outage. Fix: make the probe tolerant (longer timeout/period, a higher
    failureThreshold, or no liveness probe) and give frontend the capacity the load needs (more
    replicas or CPU); frontend must then stay up without restarts.
    """
    return Problem(
        id="hotel-reservation/liveness-probe-too-aggressive-v1",
        title="frontend keeps restarting under load",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="hard", suites=(), sources=("sregym:liveness_probe_too_aggressive_hotel_reservation",)),
        faults=(FaultSpec(fault="set_probe",
                          params={"namespace": NAMESPACE, "name": "frontend", "container": _container("frontend"),
                                  "probe_kind": "livenessProbe", "probe": AGGRESSIVE_LIVENESS}),
                FaultSpec(fault="scale_workload",
                          params={"namespace": LOADGEN_NAMESPACE, "name": LOADGEN, "replicas": 10})),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),), mechanism="probe",
            detail="frontend livenessProbe periodSeconds 1, timeoutSeconds 1, failureThreshold 1: one slow "
                   "answer under load restarts the container",
            detail_keywords=("liveness", "failureThreshold", "timeoutSeconds", "1s"),
            affected=(_obj("Service", "frontend"),), impact_keywords=IMPACT,
            description="Under the higher load frontend answers slower than the probe's one-second budget; "
                        "the kubelet restarts it at the first missed probe, so it is killed again and again."),
        mitigation=_mitigation(CheckSpec(check="sustained_ready", params={"deployment": "frontend", "seconds": 60})),
        gold=(_patch_container("frontend", {"livenessProbe": {"periodSeconds": 10, "timeoutSeconds": 5,
                                                              "failureThreshold": 3}}),
              Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend",
                     patch={"spec": {"replicas": 2}}, patch_type="merge")),
        settle_s=SETTLE_S,
    )
