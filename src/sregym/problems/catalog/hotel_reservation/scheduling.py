"""Hotel Reservation problems in the scheduler's priority and preemption policy.

The anatomy follows SREGym's `priority_preemption_cascade_hotel_reservation` (after Grafana Labs'
Hosted Prometheus outage): a PriorityClass meant for one tenant is made the cluster's global
default, a tenant batch workload sized to a node preempts the one production pod that holds
memory on its node, and the replacement pod inherits the same default priority, so it can never
take its place back. Nothing in the application is wrong; the evidence is in scheduler events and
priority policy.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import deployment_cause, keep, object_cause, service_serves, workload_ready
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = NAMESPACE
TENANT_NS = "analytics-batch"
TENANT = "tenant-ingester"
MEDIUM = "platform-medium"
CRITICAL = "production-critical"
RESERVATION_MEMORY = "1536Mi"  # what reservation reserves: it must be preempted, it cannot squeeze in
TENANT_MEMORY = "15Gi"  # per replica, on 16Gi nodes: one per worker, leaving < 1Gi free
TENANT_REPLICAS = 3  # one per worker node

_deploy = partial(deployment_cause, NS)


def _reservation_resources(memory: str) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": "hotel-reserv-reservation", "resources": {"requests": {"memory": memory}}}]}}}}


def _priority_class(name: str, value: int, *, default: bool, description: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default, "preemptionPolicy": "PreemptLowerPriority",
            "description": description}


def _tenant_objects() -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": TENANT, "app.kubernetes.io/part-of": "analytics"}
    return [
        _priority_class(MEDIUM, 100000, default=True, description="Batch and ingestion workloads of the platform tenants."),
        _priority_class(CRITICAL, 200000, default=False, description="Customer-facing production services."),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT_NS}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": TENANT, "namespace": TENANT_NS, "labels": labels},
         "spec": {"replicas": TENANT_REPLICAS, "selector": {"matchLabels": {"app.kubernetes.io/name": TENANT}},
                  "template": {"metadata": {"labels": labels}, "spec": {
                      "priorityClassName": MEDIUM,
                      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                     "whenUnsatisfiable": "DoNotSchedule",
                                                     "labelSelector": {"matchLabels": {"app.kubernetes.io/name": TENANT}}}],
                      "containers": [{"name": "ingester", "image": "grafana/cortex:v1.16.1",
                                      "args": ["-target=ingester"],
                                      "ports": [{"containerPort": 9009, "name": "http"}, {"containerPort": 9095, "name": "grpc"}],
                                      "resources": {"requests": {"cpu": "250m", "memory": TENANT_MEMORY}}}]}}}},
    ]


@problem
def priority_preemption_cascade() -> Problem:
    """A platform change creates PriorityClasses `platform-medium` (100000, marked
    `globalDefault`) and `production-critical` (200000, used by nothing), and a tenant workload
    `analytics-batch/tenant-ingester` (3 replicas, `platform-medium`, 15Gi of memory each, one per
    node). `reservation` (which requests 1536Mi) holds the memory the tenant pod on its node needs.

    Symptoms: the scheduler preempts the reservation pod (`Preempted` event, `DisruptionTarget`
    condition `PreemptionByScheduler`); its replacement gets `platform-medium` from the global
    default, the same priority as the tenant, so it cannot preempt back: it stays Pending with
    `FailedScheduling ... Insufficient memory ... No preemption victims found`. Reservations fail
    while every other service is healthy. Fix: remove `globalDefault` from `platform-medium` and
    give reservation a class above the tenant's (e.g. `production-critical`). Deleting or
    shrinking the tenant workload, or cutting reservation's memory request, is collateral damage.
    """
    keep_list = keep(
        CheckSpec(check="workload_declared", params={
            "namespace": TENANT_NS, "name": TENANT, "replicas": TENANT_REPLICAS,
            "requests": {"ingester": {"memory": TENANT_MEMORY}}}),
        CheckSpec(check="workload_declared", params={
            "name": "reservation", "requests": {"hotel-reserv-reservation": {"memory": RESERVATION_MEMORY}}}))
    return Problem(
        id="hotel-reservation/priority-preemption-cascade-v1",
        title="reservations fail: the reservation pod is gone and its replacement stays Pending",
        app=APP, namespace=NS,
        tags=Tags(layers=("k8s",), difficulty="hard", sources=("sregym:priority_preemption_cascade_hotel_reservation",)),
        faults=(
            FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "Deployment", "namespace": NS, "name": "reservation",
                "patch": _reservation_resources(RESERVATION_MEMORY), "patch_type": "strategic"}]}),
            FaultSpec(fault="await_rollout", params={"namespace": NS, "names": ["reservation"]}),
            FaultSpec(fault="create_objects", params={"objects": _tenant_objects()}),
        ),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "PriorityClass", MEDIUM),),
            mechanism="priority_preemption",
            detail=f"PriorityClass {MEDIUM} (100000) is the global default: {TENANT_NS}/{TENANT} preempted the "
                   f"reservation pod, and its replacement inherits {MEDIUM} and cannot preempt back",
            detail_keywords=(MEDIUM, "globalDefault", "global default", "preempt", TENANT, "priority"),
            affected=(_deploy("reservation"), _deploy("frontend")),
            impact_keywords=("reservation", "pending", "preempted", "fail", "unavailable", "insufficient memory",
                             "error", "errors", "500", "down"),
            description="A mis-scoped global-default PriorityClass lets a tenant batch workload preempt "
                        "reservation, whose replacement pod is no more important than the tenant and "
                        "stays Pending."),
        mitigation=MitigationSpec(
            must_fix=(workload_ready("reservation"),
                      service_serves("reservation", PORTS["reservation"], "reservation"),
                      CheckSpec(check="default_priority_at_most", params={"value": 0})),
            must_keep=keep_list),
        gold=(Action(op="patch", kind="PriorityClass", name=MEDIUM, patch={"globalDefault": False},
                     patch_type="merge"),
              Action(op="patch", kind="Deployment", namespace=NS, name="reservation",
                     patch={"spec": {"template": {"spec": {"priorityClassName": CRITICAL}}}})),
        settle_s=90.0,
    )
