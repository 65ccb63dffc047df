"""Hotel Reservation platform problems: the control plane, the node OS and hardware, metastable
retry loops and concurrent faults — incidents whose cause sits below or beside the application.

Each builder's docstring is the problem card. The faults are Kubernetes writes with the admin
credential (`sregym.faults.platform`, E1's generic object faults, Chaos Mesh CRs); the checks are
semantic (`sregym.oracles.checks_platform` and E1's checks); every gold solution is a sequence of
kubectl-equivalent writes an agent could make.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.hotel_reservation import PORTS
from sregym.problems.builders import (
    deployment_cause,
    keep,
    object_cause,
    pod_recreation,
    rollout_restart,
    service_serves,
    workload_ready,
)
from sregym.problems.catalog.hotel_reservation.network import service_target_port
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
IMPACT = ("unavailable", "not ready", "fail", "error", "down", "pending", "oom", "crash", "restart",
          "latency", "slow", "timeout", "blocked", "cannot", "outage", "stuck")
SYSTEM_NAMESPACES = ["kube-system", "kube-public", "kube-node-lease"]


# ------------------------------------------------------------------------ helpers
_deploy = partial(deployment_cause, NS)
_obj = partial(object_cause, NS)
_restart = partial(rollout_restart, NS, stamp="2024-06-01T00:00:00Z")


def _selector(service: str) -> str:
    return f"io.kompose.service={service}"


def _serves(service: str) -> CheckSpec:
    return service_serves(service, PORTS[service], service)


def _no_oom(name: str) -> CheckSpec:
    return CheckSpec(check="no_recent_oomkill", params={"deployment": name})


def _recreating(objects: list[dict[str, Any]], recreate: tuple[str, ...], wait_ready: tuple[str, ...] = ()) -> FaultSpec:
    return FaultSpec(fault="create_objects_recreate_pods", params={
        "objects": objects, "wait_ready": list(wait_ready),
        "recreate": [{"namespace": NS, "label_selector": _selector(s)} for s in recreate]})


# ============================================================ 1. LimitRange OOM
def _limitrange(memory: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "mem-limit-range", "namespace": NS},
            "spec": {"limits": [{"type": "Container", "default": {"memory": memory},
                                 "defaultRequest": {"memory": memory}}]}}


@problem
def limitrange_oomkill() -> Problem:
    """A namespace LimitRange gives every container without a memory limit a default limit far
    below what the Hotel Reservation services use.

    Running pods are unaffected; once `profile` and `geo` pods are recreated (a node drain, an
    eviction) the LimitRanger admission plugin fills in `resources.limits.memory` (and records
    it in the `kubernetes.io/limit-ranger` annotation), the Go services exceed it at start and
    are OOMKilled (exit code 137) into CrashLoopBackOff. Search and hotel profiles fail through
    the frontend. Nothing in the Deployments changed. Fix: remove or raise the LimitRange
    default (or give the containers explicit, sufficient limits) and recreate the pods.
    """
    memory = "10Mi"
    return Problem(
        id="hotel-reservation/limitrange-oomkill-v1",
        title="profile and geo pods keep restarting after being rescheduled",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="medium", suites=("lite",)),
        faults=(_recreating([_limitrange(memory)], ("profile", "geo")),),
        ground_truth=GroundTruth(
            root_causes=(_obj("LimitRange", "mem-limit-range"),), mechanism="oom",
            detail=f"LimitRange mem-limit-range sets a default container memory limit of {memory}",
            detail_keywords=("mem-limit-range", memory, "limitrange", "default memory limit"),
            affected=(_deploy("profile"), _deploy("geo"), _deploy("frontend"), _deploy("search")),
            impact_keywords=IMPACT,
            description="Recreated profile and geo pods receive the LimitRange's default memory limit "
                        "and are OOMKilled in a loop; frontend requests that need them fail."),
        mitigation=MitigationSpec(
            must_fix=(_no_oom("profile"), _no_oom("geo"), _serves("profile"), _serves("geo")),
            must_keep=keep(), durability=(pod_recreation("profile"),)),
        gold=(Action(op="delete", kind="LimitRange", namespace=NS, name="mem-limit-range"),
              _restart("profile"), _restart("geo")),
    )


# ======================================================= 2. rolling update, 100 %
HANG_INIT = {"name": "wait-for-geo-cache", "image": "busybox:1.36",
             "command": ["sh", "-c", "until nslookup geo-cache.hotel-reservation.svc.cluster.local; "
                                     "do echo waiting for geo-cache; sleep 2; done"]}


@problem
def rolling_update_misconfigured() -> Problem:
    """A change to `geo` sets its rollout strategy to `maxUnavailable: 100%`, `maxSurge: 0` and
    adds an init container that waits for a cache Service that was never deployed.

    The rollout takes down every old geo pod at once; the new pod hangs in `Init:0/1` forever
    (its init container loops on `nslookup geo-cache...`), so geo has no endpoints and every
    search fails. Fix: remove (or fix) the hanging init container and change the strategy so a
    rollout can never take all pods down (e.g. maxUnavailable 0, maxSurge 1).
    """
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}
    return Problem(
        id="hotel-reservation/rolling-update-misconfigured-v1",
        title="geo went down during a rollout and has not come back",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="medium", suites=("lite",), sources=("sregym:rolling_update_misconfigured_hotel_reservation",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NS, "name": "geo", "patch_type": "strategic",
            "patch": {"spec": {"strategy": strategy, "template": {"spec": {"initContainers": [HANG_INIT]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("geo"),), mechanism="rollout_strategy",
            detail="geo strategy maxUnavailable 100% with maxSurge 0, and init container wait-for-geo-cache "
                   "waits forever for geo-cache",
            detail_keywords=("maxUnavailable", "100%", "maxSurge", "wait-for-geo-cache", "init container", "geo-cache"),
            affected=(_deploy("search"), _deploy("frontend"), _obj("Service", "geo")), impact_keywords=IMPACT,
            description="The rollout removed all geo pods at once and the replacement never finishes its "
                        "init container; search cannot reach geo."),
        mitigation=MitigationSpec(
            must_fix=(workload_ready("geo"), _serves("geo"), CheckSpec(check="rollout_keeps_capacity", params={"deployment": "geo"})),
            must_keep=keep(),
            durability=(CheckSpec(check="restart_keeps_available", params={"deployment": "geo"}),)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="geo", patch_type="json", patch=[
            {"op": "remove", "path": "/spec/template/spec/initContainers"},
            {"op": "replace", "path": "/spec/strategy",
             "value": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}}]),),
    )


# ====================================================== 3. duplicate RWO mounts
FRONTEND_CACHE_PVC = {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "frontend-cache", "namespace": NS},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}


@problem
def duplicate_pvc_mounts() -> Problem:
    """`frontend` is scaled to 3 replicas that all mount one ReadWriteOnce PVC
    (`frontend-cache`), with a required pod anti-affinity on `kubernetes.io/hostname`.

    The anti-affinity forces the replicas onto different nodes, but a ReadWriteOnce volume can
    be attached to one node only: the first pod runs, the others sit in ContainerCreating with
    `FailedAttachVolume ... Multi-Attach error for volume ... Volume is already used by pod(s)`
    and the rollout never completes. Fix: make the constraints compatible — drop the
    anti-affinity so the pods share the node (with a `Recreate` strategy so a surge pod does
    not wait for the volume elsewhere), or stop sharing the RWO claim.
    """
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"io.kompose.service": "frontend"}},
        "topologyKey": "kubernetes.io/hostname"}]}}
    patch = {"spec": {"replicas": 3, "template": {"spec": {
        "affinity": anti,
        "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": "frontend-cache"}}],
        "containers": [{"name": "hotel-reserv-frontend",
                        "volumeMounts": [{"name": "cache", "mountPath": "/var/cache/frontend"}]}]}}}}
    return Problem(
        id="hotel-reservation/duplicate-pvc-mounts-v1",
        title="frontend scale-out never completes",
        app=APP, namespace=NS,
        tags=Tags(layers=("k8s",), difficulty="medium", suites=(), sources=("sregym:duplicate_pvc_mounts_hotel_reservation",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": [FRONTEND_CACHE_PVC]}),
                FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NS, "name": "frontend", "patch": patch}]})),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"), _obj("PersistentVolumeClaim", "frontend-cache")),
            mechanism="volume_attach",
            detail="3 frontend replicas share ReadWriteOnce PVC frontend-cache while a required hostname "
                   "anti-affinity spreads them over nodes (Multi-Attach error)",
            detail_keywords=("Multi-Attach", "ReadWriteOnce", "frontend-cache", "anti-affinity", "podAntiAffinity"),
            affected=(), impact_keywords=IMPACT,
            description="Only the pod on the node holding the volume can start; the rollout is stuck."),
        # Pods that did get the volume keep serving, so serving is a must_keep here.
        mitigation=MitigationSpec(must_fix=(workload_ready("frontend"),), must_keep=keep(_serves("frontend"))),
        # Co-locate the replicas with the volume, and replace pods without overlap (a surge pod
        # on another node would wait for the volume forever).
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="frontend", patch_type="json", patch=[
            {"op": "remove", "path": "/spec/template/spec/affinity"},
            {"op": "replace", "path": "/spec/strategy", "value": {"type": "Recreate"}}]),),
    )


# ================================================= 4. validating webhook outage
VALIDATING_WEBHOOK: dict[str, Any] = {
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "pod-policy-validation"},
    "webhooks": [{
        "name": "pod-policy.validation.k8s.io",
        "clientConfig": {"service": {"namespace": "policy-system", "name": "pod-policy-webhook",
                                     "path": "/validate", "port": 443}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                   "scope": "Namespaced"}],
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                    "values": [*SYSTEM_NAMESPACES, "policy-system"]}]},
        "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 10,
    }],
}


def validating_webhook_outage_problem() -> Problem:
    """The webhook-outage problem (also one half of the concurrent problem)."""
    return Problem(
        id="hotel-reservation/validating-webhook-outage-v1",
        title="recommendation has no pods and none are being created",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="hard", suites=("lite",), sources=("sregym:admission_webhook_outage_hotel_reservation",)),
        faults=(_recreating([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-system"}},
                             VALIDATING_WEBHOOK], ("recommendation",)),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "ValidatingWebhookConfiguration", "pod-policy-validation"),),
            mechanism="admission_webhook",
            detail="ValidatingWebhookConfiguration pod-policy-validation calls the missing Service "
                   "policy-system/pod-policy-webhook with failurePolicy Fail",
            detail_keywords=("pod-policy-webhook", "pod-policy-validation", "pod-policy.validation.k8s.io",
                             "failurePolicy", "policy-system"),
            affected=(_deploy("recommendation"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Pod creation fails admission in the namespace, so the deleted recommendation "
                        "pod is never replaced and recommendations fail."),
        mitigation=MitigationSpec(must_fix=(workload_ready("recommendation"), _serves("recommendation")), must_keep=keep(),
                                  durability=(pod_recreation("recommendation"),)),
        gold=(Action(op="delete", kind="ValidatingWebhookConfiguration", name="pod-policy-validation"),),
    )


@problem
def validating_webhook_outage() -> Problem:
    """A ValidatingWebhookConfiguration sends every pod CREATE to
    `policy-system/pod-policy-webhook`, a Service that no longer exists, with
    `failurePolicy: Fail`; then a `recommendation` pod is deleted.

    The ReplicaSet cannot replace it: `FailedCreate ... Internal error occurred: failed calling
    webhook "pod-policy.validation.k8s.io": ... service "pod-policy-webhook" not found`.
    Recommendations fail while every existing pod looks healthy. Fix: remove the webhook
    configuration or make it fail open (or restore its backend); pods must be creatable again.
    """
    return validating_webhook_outage_problem()


# =================================================== 5. mutating webhook, memory
DEFAULTER_NS = "platform-policy"


def resource_defaulter_objects(memory: str, namespace: str = NS) -> list[dict[str, Any]]:
    """The resource-defaulter webhook (and an inert decoy) mutating pods created in `namespace`."""
    labels = {"app.kubernetes.io/name": "resource-defaulter"}
    inert_rules = [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["cert-manager.io"], "apiVersions": ["v1"],
                    "resources": ["certificates", "issuers"], "scope": "*"}]
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": DEFAULTER_NS}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "resource-defaulter", "namespace": DEFAULTER_NS, "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                      "name": "defaulter", "image": "ghcr.io/kube-policy/resource-defaulter:v1.0.0",
                      "ports": [{"containerPort": 8443, "name": "https"}],
                      "env": [{"name": "DEFAULT_MEMORY_LIMIT", "value": memory},
                              {"name": "DEFAULT_MEMORY_REQUEST", "value": memory},
                              {"name": "OVERRIDE", "value": "true"}]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "resource-defaulter", "namespace": DEFAULTER_NS},
         "spec": {"selector": labels, "ports": [{"port": 443, "targetPort": 8443, "name": "https"}]}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "resource-defaults"},
         "webhooks": [{
             "name": "resource-defaults.platform.io",
             "clientConfig": {"service": {"namespace": DEFAULTER_NS, "name": "resource-defaulter",
                                          "path": "/mutate", "port": 443}},
             "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                        "resources": ["pods"], "scope": "Namespaced"}],
             "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                                         "values": [namespace]}]},
             "failurePolicy": "Ignore", "sideEffects": "None", "admissionReviewVersions": ["v1"],
             "reinvocationPolicy": "Never", "timeoutSeconds": 5}]},
        # An inert webhook of a tool that is not installed: it matches no pod.
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "cert-manager-webhook"},
         "webhooks": [{"name": "webhook.cert-manager.io",
                       "clientConfig": {"service": {"namespace": "cert-manager", "name": "cert-manager-webhook",
                                                    "path": "/mutate", "port": 443}},
                       "rules": inert_rules, "failurePolicy": "Ignore", "sideEffects": "None",
                       "admissionReviewVersions": ["v1"], "timeoutSeconds": 10}]},
    ]


@problem
def mutating_webhook_memory_limits() -> Problem:
    """A mutating admission webhook (`resource-defaults`, served by `platform-policy/
    resource-defaulter`) overwrites the memory request and limit of every container created in
    the namespace with a value far too small; then the `rate` pod is recreated.

    The Deployment still says nothing about memory, but the pod the API server stored has
    `limits.memory` set by the webhook; the rate container is OOMKilled at start and loops in
    CrashLoopBackOff; search results fail. An inert `cert-manager-webhook` configuration is
    a decoy. Fix: remove the mutating webhook (or correct the defaulter's configuration) and
    recreate rate; a durability check recreates the pod again.
    """
    memory = "8Mi"
    return Problem(
        id="hotel-reservation/mutating-webhook-memory-limits-v1",
        title="rate keeps crashing since its pod was recreated",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="hard", suites=("lite",)),
        faults=(_recreating(resource_defaulter_objects(memory), ("rate",), wait_ready=(f"{DEFAULTER_NS}/resource-defaulter",)),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "MutatingWebhookConfiguration", "resource-defaults"),),
            mechanism="admission_webhook",
            detail=f"MutatingWebhookConfiguration resource-defaults (platform-policy/resource-defaulter) "
                   f"overrides container memory limits to {memory} on pod CREATE",
            detail_keywords=("resource-defaults", "resource-defaulter", memory, "memory limit", "mutating"),
            affected=(_deploy("rate"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Every recreated pod in hotel-reservation gets a tiny memory limit from the "
                        "webhook; rate is OOMKilled in a loop and searches fail."),
        mitigation=MitigationSpec(must_fix=(_no_oom("rate"), _serves("rate")), must_keep=keep(),
                                  durability=(pod_recreation("rate"),)),
        gold=(Action(op="delete", kind="MutatingWebhookConfiguration", name="resource-defaults"), _restart("rate")),
    )


# ================================================== 6. ResourceQuota recreation
MEMORY_QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "memory-limit-quota", "namespace": NS},
                "spec": {"hard": {"requests.memory": "2Gi", "limits.memory": "4Gi"}}}


@problem
def resourcequota_blocks_recreation() -> Problem:
    """A ResourceQuota on `requests.memory`/`limits.memory` is added to the namespace. None of
    the Hotel Reservation containers declares memory, and a `search` pod is then deleted.

    Quota admission rejects the replacement: ReplicaSet `FailedCreate ... is forbidden: failed
    quota: memory-limit-quota: must specify limits.memory for: hotel-reserv-search;
    requests.memory for: hotel-reserv-search`. Search has no pods; /hotels fails. Fix: remove
    or relax the quota, or give the workloads memory requests and limits (a durability check
    recreates a search pod).
    """
    return Problem(
        id="hotel-reservation/resourcequota-blocks-recreation-v1",
        title="search pods are not recreated",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="medium", suites=("lite", "detection"), sources=("sregym:namespace_memory_limit",)),
        faults=(_recreating([MEMORY_QUOTA], ("search",)),),
        ground_truth=GroundTruth(
            root_causes=(_obj("ResourceQuota", "memory-limit-quota"),), mechanism="resource_quota",
            detail="ResourceQuota memory-limit-quota constrains requests.memory/limits.memory, so pods "
                   "without memory requests and limits are rejected",
            detail_keywords=("memory-limit-quota", "limits.memory", "requests.memory", "must specify"),
            affected=(_deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Quota admission rejects the new search pod; searches fail."),
        mitigation=MitigationSpec(must_fix=(workload_ready("search"), _serves("search")), must_keep=keep(),
                                  durability=(pod_recreation("search"),)),
        gold=(Action(op="delete", kind="ResourceQuota", namespace=NS, name="memory-limit-quota"),),
    )


# ===================================================== 7. CronJob regular sidecar
SIDECAR = {"name": "fluent-bit-sidecar", "image": "fluent/fluent-bit:3.1.9",
           "volumeMounts": [{"name": "audit", "mountPath": "/var/log/audit"}]}
ARCHIVER = {"name": "archiver", "image": "busybox:1.36",
            "command": ["sh", "-c", "echo archiving audit logs; sleep 5; echo archived audit logs"],
            "volumeMounts": [{"name": "audit", "mountPath": "/var/log/audit"}]}


def _cronjob(sidecar_native: bool) -> dict[str, Any]:
    pod: dict[str, Any] = {"restartPolicy": "Never", "volumes": [{"name": "audit", "emptyDir": {}}]}
    if sidecar_native:
        pod.update(initContainers=[{**SIDECAR, "restartPolicy": "Always"}], containers=[ARCHIVER])
    else:
        pod.update(containers=[ARCHIVER, SIDECAR])
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "audit-log-archiver", "namespace": NS},
            "spec": {"schedule": "*/1 * * * *", "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                     "jobTemplate": {"spec": {"backoffLimit": 2, "template": {"spec": pod}}}}}


@problem
def cronjob_sidecar_blocks_completion() -> Problem:
    """A CronJob `audit-log-archiver` (every minute) runs its log shipper `fluent-bit-sidecar` as
    a regular second container next to the archiver.

    The archiver finishes in seconds, but the fluent-bit process never exits, so the pod stays
    `Running` (`1/2` ready... `NotReady`), no Job ever reaches `Complete`, and active Jobs pile up
    minute after minute. Fix: run the shipper as a native sidecar (an init container with
    `restartPolicy: Always`), which the kubelet stops once the main container is done; the
    CronJob and its shipper must be kept.
    """
    return Problem(
        id="hotel-reservation/cronjob-sidecar-blocks-completion-v1",
        title="audit-log-archiver jobs never finish",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="medium", suites=(), sources=("sregym:cronjob_sidecar_blocks_completion_hotel_reservation",)),
        faults=(FaultSpec(fault="create_objects", params={"objects": [_cronjob(sidecar_native=False)]}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("CronJob", "audit-log-archiver"),), mechanism="sidecar_lifecycle",
            detail="fluent-bit-sidecar runs as a regular container, so Jobs of audit-log-archiver never complete",
            detail_keywords=("fluent-bit-sidecar", "sidecar", "restartPolicy: Always", "initContainers",
                             "never complete"),
            affected=(), impact_keywords=IMPACT,
            description="The CronJob's pods keep running after the archiver exits; Jobs stay active."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="cronjob_runs_complete"),),
            must_keep=keep(CheckSpec(check="cronjob_kept", params={
                "name": "audit-log-archiver", "keep_images": ["fluent-bit", "busybox"]}))),
        gold=(Action(op="patch", kind="CronJob", namespace=NS, name="audit-log-archiver", patch_type="json", patch=[
            {"op": "remove", "path": "/spec/jobTemplate/spec/template/spec/containers/1"},
            {"op": "add", "path": "/spec/jobTemplate/spec/template/spec/initContainers",
             "value": [{**SIDECAR, "restartPolicy": "Always"}]}]),),
    )


# ======================================================== 8. CFS CPU throttling
def _cpu_limit_patch(service: str, cpu: str) -> dict[str, Any]:
    return {"kind": "Deployment", "namespace": NS, "name": service, "patch": {"spec": {"template": {"spec": {
        "containers": [{"name": f"hotel-reserv-{service}",
                        "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}}}}


@problem
def cfs_cpu_throttling() -> Problem:
    """A "right-sizing" change lowers CPU limits across the app: `rate`, `profile` and
    `reservation` get modest limits they never reach (decoys), while `geo` gets a limit below
    what it needs at normal load.

    geo's container is throttled in most CFS periods (`container_cpu_cfs_throttled_periods_total`
    climbs, the ContainerCPUThrottling alert fires), its requests queue, and searches slow down
    and time out; geo is Running and Ready the whole time and its CPU usage looks "low" (it is
    capped). Fix: raise geo's CPU limit (removing a limit the healthy deployment had is collateral
    damage; the decoy limits are harmless).
    """
    limit = "20m"
    decoys = {"rate": "500m", "profile": "500m", "reservation": "400m"}
    return Problem(
        id="hotel-reservation/cfs-cpu-throttling-v1",
        title="searches are slow and time out; every pod is running",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="hard", suites=("lite", "detection"), sources=("sregym:cfs_cpu_throttling_hotel_reservation",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
            _cpu_limit_patch("geo", limit), *(_cpu_limit_patch(s, c) for s, c in decoys.items())]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("geo"),), mechanism="cpu_throttling",
            detail=f"geo container CPU limit lowered to {limit}, so CFS throttles it at normal load",
            detail_keywords=(limit, "cpu limit", "throttl", "cfs"),
            affected=(_deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="geo cannot get enough CPU time under its CFS quota; its queue grows and search "
                        "requests through the frontend slow down and fail."),
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="cpu_not_throttled", params={"deployment": "geo"}),
                                            CheckSpec(check="entry_slo")),
                                  must_keep=keep()),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="geo",
                     patch={"spec": {"template": {"spec": {"containers": [{
                         "name": "hotel-reserv-geo", "resources": {"limits": {"cpu": "1000m"}}}]}}}}),),
    )


# ====================================================== 11. two faults at once
def _merge(problem_id: str, title: str, first: Problem, second: Problem) -> Problem:
    """Two independent faults at once: both must be found and both fixed."""
    a, b = first.ground_truth, second.ground_truth
    affected = tuple({str(r.entity): r for r in (*a.affected, *b.affected)
                      if not any(r.entity == c.entity for c in (*a.root_causes, *b.root_causes))}.values())
    return Problem(
        id=problem_id, title=title, app=APP, namespace=NS,
        tags=Tags(layers=("concurrent",), difficulty="hard", suites=("lite",)),
        faults=(*first.faults, *second.faults),
        ground_truth=GroundTruth(
            root_causes=(*a.root_causes, *b.root_causes), mechanism=a.mechanism,
            detail=f"{a.detail}; and independently {b.detail}",
            detail_keywords=tuple(dict.fromkeys((*a.detail_keywords, *b.detail_keywords))),
            affected=affected, impact_keywords=tuple(dict.fromkeys((*a.impact_keywords, *b.impact_keywords))),
            description=f"Two unrelated faults at once. {a.description} {b.description}"),
        mitigation=MitigationSpec(
            must_fix=(*first.mitigation.must_fix, *second.mitigation.must_fix),
            must_keep=first.mitigation.must_keep,
            durability=(*first.mitigation.durability, *second.mitigation.durability),
            window_s=max(first.mitigation.window_s, second.mitigation.window_s)),
        gold=(*first.gold, *second.gold),
        settle_s=max(first.settle_s, second.settle_s),
    )


@problem
def concurrent_target_port_and_webhook_outage() -> Problem:
    """Two independent faults at once: the `geo` Service's targetPort points at a port geo does
    not listen on, and a ValidatingWebhookConfiguration with `failurePolicy: Fail` whose Service
    is gone keeps a deleted `recommendation` pod from being recreated.

    Searches fail (geo connections refused on the pod's wrong port) and recommendations fail
    (no recommendation pod) at the same time; the two look like one "backend outage" from the
    frontend. Fixing one leaves the other; both must be found and fixed. The faults are those
    of `service-target-port-geo-v1` and `validating-webhook-outage-v1`.
    """
    return _merge("hotel-reservation/concurrent-target-port-and-webhook-outage-v1",
                  "searches and recommendations both fail",
                  service_target_port(), validating_webhook_outage_problem())
