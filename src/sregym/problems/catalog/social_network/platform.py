"""Social Network problems in how the platform runs a pod: a mutating admission webhook that
rewrites what the API server stores, a liveness probe too impatient for a slow start, and a sidecar
that takes the port of the container it sits beside.

Each is SREGym's Social Network scenario of the same name, built from Kubernetes writes only; the
symptoms come from the twin's admission chain, prober and the pod's shared network namespace.
The Hotel Reservation equivalents live in `catalog/hotel_reservation/platform.py` and
`catalog/hotel_reservation/network.py`; the webhook server is the same image and objects.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.social_network import PORTS
from sregym.problems.builders import object_cause, pod_recreation, service_serves
from sregym.problems.catalog.hotel_reservation.platform import DEFAULTER_NS, resource_defaulter_objects
from sregym.problems.catalog.social_network.common import (
    NS,
    deploy,
    mitigation,
    obj,
    restart,
    selector,
    serves,
    social_problem,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, Problem
from sregym.problems.registry import problem

FRONT = "nginx-thrift"
USER = "user-service"
MONGO = "post-storage-mongodb"
MONGO_PORT = 27017


def _json(name: str, *ops: dict[str, Any]) -> Action:
    return Action(op="patch", kind="Deployment", namespace=NS, name=name, patch_type="json", patch=list(ops))


def _pod_spec_patch(name: str, spec: dict[str, Any]) -> FaultSpec:
    """A strategic-merge edit of a Deployment's pod template, as `kubectl patch` makes it."""
    return FaultSpec(fault="patch_objects", params={"patches": [
        {"kind": "Deployment", "namespace": NS, "name": name, "patch_type": "strategic",
         "patch": {"spec": {"template": {"spec": spec}}}}]})


# ----------------------------------------------------------------- mutating webhook
@problem
def mutating_webhook_resource_limits() -> Problem:
    """A mutating admission webhook (`resource-defaults`, served by `platform-policy/
    resource-defaulter`) overwrites the memory limit of every container created in the
    social-network namespace with 8Mi; then the nginx-thrift pod is recreated (SREGym
    `mutating_webhook_resource_limits_social_network`).

    The Deployment still asks for what it always did, but the pod the API server stored carries
    the webhook's limit: nginx-thrift is OOMKilled as it starts, loops in CrashLoopBackOff, and
    every request to the site fails. An inert `cert-manager-webhook` configuration is a decoy.
    Fix: delete the webhook configuration (or correct the defaulter) and recreate nginx-thrift;
    a durability check recreates the pod again.
    """
    memory = "8Mi"
    return social_problem(
        "mutating-webhook-resource-limits", "nginx-thrift keeps crashing since its pod was recreated",
        layers=("control-plane",), difficulty="hard",
        sources=("sregym:mutating_webhook_resource_limits_social_network",),
        faults=(FaultSpec(fault="create_objects_recreate_pods", params={
            "objects": resource_defaulter_objects(memory, NS),
            "wait_ready": [f"{DEFAULTER_NS}/resource-defaulter"],
            "recreate": [{"namespace": NS, "label_selector": selector(FRONT)}]}),),
        root_causes=(object_cause(None, "MutatingWebhookConfiguration", "resource-defaults"),),
        mechanism="admission_webhook",
        detail=f"MutatingWebhookConfiguration resource-defaults (platform-policy/resource-defaulter) "
               f"overrides container memory limits to {memory} on pod CREATE in social-network",
        keywords=("resource-defaults", "resource-defaulter", memory, "memory limit", "mutating"),
        affected=(deploy(FRONT), obj("Service", FRONT)),
        description="Every pod created in social-network gets a tiny memory limit from the webhook; "
                    "nginx-thrift is OOMKilled in a loop and every request to the site fails.",
        mitigation=mitigation(CheckSpec(check="no_recent_oomkill", params={"deployment": FRONT}), serves(FRONT),
                              durability=(pod_recreation(FRONT),)),
        gold=(Action(op="delete", kind="MutatingWebhookConfiguration", name="resource-defaults"), restart(FRONT)))


# --------------------------------------------------------------- aggressive liveness
AGGRESSIVE_LIVENESS = {"tcpSocket": {"port": MONGO_PORT}, "initialDelaySeconds": 0, "periodSeconds": 1,
                       "timeoutSeconds": 1, "failureThreshold": 1}
PATIENT_LIVENESS = {"tcpSocket": {"port": MONGO_PORT}, "initialDelaySeconds": 15, "periodSeconds": 10,
                    "timeoutSeconds": 5, "failureThreshold": 3}


@problem
def liveness_probe_too_aggressive() -> Problem:
    """post-storage-mongodb gets a liveness probe with no initial delay, a 1 s period and
    failureThreshold 1, and `terminationGracePeriodSeconds: 0` (SREGym
    `liveness_probe_too_aggressive_social_network`, which puts it on an extra service).

    mongod needs about two seconds before it listens on 27017; the first probe lands before that
    (`Liveness probe failed: dial tcp <ip>:27017: connect: connection refused`), the kubelet kills
    it at once, and every restart is killed the same way: CrashLoopBackOff, posts cannot be stored
    and timeline reads that miss the cache fail. Unlike the misconfigured probe, this one probes
    the right port: it is only too impatient. Fix: give the probe an initial delay and tolerance
    (or remove it); post-storage-mongodb must then stay up without restarts.
    """
    return social_problem(
        "liveness-probe-too-aggressive", "post-storage-mongodb keeps restarting",
        layers=("config",), difficulty="medium",
        sources=("sregym:liveness_probe_too_aggressive_social_network",),
        faults=(_pod_spec_patch(MONGO, {"terminationGracePeriodSeconds": 0, "containers": [
            {"name": MONGO, "livenessProbe": AGGRESSIVE_LIVENESS}]}),),
        root_causes=(deploy(MONGO),), mechanism="probe",
        detail="post-storage-mongodb livenessProbe tcpSocket 27017 with initialDelaySeconds 0, periodSeconds 1, "
               "failureThreshold 1 (and terminationGracePeriodSeconds 0): mongod is killed before it listens",
        keywords=("liveness", "initialDelaySeconds", "failureThreshold", "periodSeconds", "27017"),
        affected=(deploy("post-storage-service"), deploy("compose-post-service")),
        description="The liveness probe checks mongod before it has started listening and the kubelet kills "
                    "it at the first failure, so post-storage-mongodb never stays up and posts fail.",
        mitigation=mitigation(CheckSpec(check="sustained_ready", params={"deployment": MONGO, "seconds": 60}),
                              service_serves(MONGO, MONGO_PORT, MONGO)),
        gold=(_json(MONGO, {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
                            "value": PATIENT_LIVENESS},
                    {"op": "replace", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 30}),))


# ------------------------------------------------------------------ sidecar port clash
THRIFT = PORTS[USER]
STATSD_FLAGS = ["--statsd.listen-udp=:9125", "--statsd.listen-tcp=:9125"]
# The declared port says what was meant (the exporter's default 9102); the flag says otherwise.
SIDECAR = {"name": "metrics", "image": "prom/statsd-exporter:v0.26.1",
           "args": [f"--web.listen-address=:{THRIFT}", *STATSD_FLAGS],
           "ports": [{"containerPort": 9102, "name": "metrics"}, {"containerPort": 9125, "protocol": "UDP"}]}


@problem
def sidecar_port_conflict() -> Problem:
    """A change to user-service adds a `metrics` sidecar (prom/statsd-exporter) whose web
    listener is set to `:9090` (its declared containerPort says 9102), the port the Thrift server
    already binds in the same pod
    (SREGym `sidecar_port_conflict_social_network`).

    Containers of a pod share one network namespace: the sidecar's bind fails (`level=error
    err="listen tcp :9090: bind: address already in use"`) and it exits 1. Neither container has a
    readiness probe, so the new pod counts as Ready for the second before the sidecar fails: the
    rollout completes and removes the old pod. From then on the sidecar crash-loops, the only
    user-service pod is 1/2 and not Ready, user-service has no endpoints and new posts fail.
    Fix: move the sidecar to a free port (statsd-exporter's default :9102) or remove it.
    """
    return social_problem(
        "sidecar-port-conflict", "new posts fail since the last user-service rollout",
        layers=("config",), difficulty="medium",
        sources=("sregym:sidecar_port_conflict_social_network",),
        faults=(_pod_spec_patch(USER, {"containers": [SIDECAR]}),),
        root_causes=(deploy(USER),), mechanism="port_conflict",
        detail=f"user-service sidecar container metrics (statsd-exporter) --web.listen-address=:{THRIFT}, the "
               "port the user-service Thrift server already binds in the pod (address already in use)",
        keywords=("address already in use", str(THRIFT), "metrics", "sidecar", "web.listen-address",
                  "statsd-exporter"),
        affected=(obj("Service", USER), deploy("compose-post-service")),
        description="The sidecar cannot bind the port the main container holds, so it crash-loops and the "
                    "user-service pod is not Ready; user-service has no endpoints and composing a post fails.",
        mitigation=mitigation(CheckSpec(check="sustained_ready", params={"deployment": USER, "seconds": 60}),
                              serves(USER)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=USER, patch_type="strategic",
                     patch={"spec": {"template": {"spec": {"containers": [
                         {"name": "metrics", "args": ["--web.listen-address=:9102", *STATSD_FLAGS]}]}}}}),))
