"""Hotel Reservation problems that bring the catalogue toward SREGym's Hotel Reservation set:
the same root causes on the same objects (revoked role and removed user on mongodb-rate, a
deleted Service, memory requests and limits, claim names, an autoscaler without a CPU request,
Pod Security Admission, the wrong binary, probes and init containers), written in sregym's own
specs on faults and checks that already exist.

Each builder's docstring is the problem card. The rate service reads through memcached, so a
broken mongodb-rate alone shows only on cache misses (a few percent of rate's calls, mostly hidden
by search's retries); the two credential problems also replace the rate pod after the database
change (`delete_pods`), so rate cannot initialise and searches fail outright.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import (
    app_manifest,
    deployment_cause,
    keep,
    object_cause,
    rollout_restart,
    service_serves,
    workload_ready,
)
from sregym.problems.model import BASELINE_KEEP, Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = NAMESPACE
IMPACT = ("unavailable", "fail", "error", "errors", "500", "crash", "crashloopbackoff", "not ready", "pending",
          "outage", "down", "refused", "restart", "unauthorized", "not authorized", "authentication failed",
          "stuck", "cannot", "oomkilled")
WINDOW_S = 180.0
SETTLE_S = 60.0
RESTARTED_AT = "2025-07-01T00:00:00Z"  # what `kubectl rollout restart` stamps (any value restarts)
MONGO_SERVICES = ("geo", "profile", "rate", "recommendation", "reservation", "user")

_deploy = partial(deployment_cause, NS)
_obj = partial(object_cause, NS)
_restart = partial(rollout_restart, NS, stamp=RESTARTED_AT, patch_type="strategic")


# ------------------------------------------------------------------------------ helpers
_manifest = partial(app_manifest, APP)


def _selector(service: str) -> str:
    return f"io.kompose.service={service}"


def _container(service: str) -> str:
    return f"hotel-reserv-{service}"


def _mongo_container(service: str) -> str:
    return f"hotel-reserv-{service}-mongo"


def _serves(service: str) -> CheckSpec:
    return service_serves(service, PORTS[service], service)


def _ready(*names: str) -> CheckSpec:
    return CheckSpec(check="workloads_ready", params={"names": list(names)})


def _error_free(service: str) -> CheckSpec:
    return CheckSpec(check="service_error_free", params={"service": service})


def _patch(name: str, patch: Any, patch_type: str = "strategic") -> dict[str, Any]:
    return {"kind": "Deployment", "namespace": NS, "name": name, "patch": patch, "patch_type": patch_type}


def _patch_fault(*patches: dict[str, Any]) -> FaultSpec:
    return FaultSpec(fault="patch_objects", params={"patches": list(patches)})


def _restart_pods(service: str) -> FaultSpec:
    return FaultSpec(fault="delete_pods", params={"namespace": NS, "label_selector": _selector(service)})


def _mongo_admin(deployment: str, script: str) -> Action:
    """`kubectl exec deploy/<mongodb> -- mongo admin -u root -p root ... --eval <script>`."""
    return Action(op="exec", kind="Deployment", namespace=NS, name=deployment,
                  command=("mongo", "admin", "--quiet", "-u", "root", "-p", "root", "--authenticationDatabase",
                           "admin", "--eval", script))


def _container_resources(container: str, resources: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [{"name": container, "resources": resources}]}}}}


def _mitigation(*must_fix: CheckSpec, must_keep: tuple[CheckSpec, ...] = BASELINE_KEEP) -> MitigationSpec:
    return MitigationSpec(must_fix=must_fix, must_keep=must_keep, window_s=WINDOW_S)


# --------------------------------------------------- 1. mongodb-rate: role revoked
@problem
def mongodb_role_revoked_rate() -> Problem:
    """The rate service's MongoDB user loses its `readWrite` role on `rate-db` inside
    `mongodb-rate` (`db.revokeRolesFromUser`), and the rate pod is then replaced.

    Symptoms: the new rate pod cannot load its inventory at start: it logs `not authorized on
    rate-db to execute command`, exits 1 and goes into CrashLoopBackOff; search cannot get rates
    and hotel searches fail. mongodb-rate itself is Running and Ready. Fix: grant the role back
    (or give rate a user that has it) and let rate start.
    """
    grant = "db.grantRolesToUser('admin', [{role: 'readWrite', db: 'rate-db'}])"
    return Problem(
        id="hotel-reservation/mongodb-role-revoked-rate-v1",
        title="rate keeps restarting and hotel searches fail",
        app=APP, namespace=NS,
        tags=Tags(layers=("app",), difficulty="medium", sources=("aiopslab:revoke_auth_mongodb-2", "sregym:revoke_auth_mongodb-2")),
        faults=(FaultSpec(fault="mongo_revoke_role", params={"namespace": NS, "deployment": "mongodb-rate",
                                                             "db": "rate-db"}),
                _restart_pods("rate")),
        ground_truth=GroundTruth(
            root_causes=(_deploy("mongodb-rate"),), mechanism="db_auth",
            detail="the readWrite role on rate-db was revoked from MongoDB user admin in mongodb-rate",
            detail_keywords=("readWrite", "revoke", "role", "not authorized"),
            affected=(_deploy("rate"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="rate still authenticates to mongodb-rate as admin, but the user lost readWrite on "
                        "rate-db: the restarted rate pod cannot read its data and crash-loops, so searches "
                        "fail."),
        mitigation=_mitigation(_ready("rate"), _error_free("rate")),
        gold=(_mongo_admin("mongodb-rate", grant), _restart("rate")),
        settle_s=SETTLE_S,
    )


# --------------------------------------------------- 2. mongodb-rate: user removed
@problem
def mongodb_user_removed_rate() -> Problem:
    """The MongoDB user the rate service logs in as is dropped from `mongodb-rate`, and the rate
    pod is then replaced.

    Symptoms: the new rate pod fails SCRAM authentication at start (`AuthenticationFailed`;
    mongod logs `UserNotFound`), exits and crash-loops; searches fail. Fix: recreate the user
    with its roles (or point rate at another valid user) and let rate start.
    """
    create = ("db.createUser({user: 'admin', pwd: 'admin', roles: [{role: 'userAdminAnyDatabase', db: 'admin'}, "
              "{role: 'readWrite', db: 'rate-db'}]})")
    return Problem(
        id="hotel-reservation/mongodb-user-removed-rate-v1",
        title="rate cannot start and hotel searches fail",
        app=APP, namespace=NS,
        tags=Tags(layers=("app",), difficulty="medium", sources=("aiopslab:user_unregistered_mongodb-2", "sregym:storage_user_unregistered-2")),
        faults=(FaultSpec(fault="mongo_drop_user", params={
                    "namespace": NS, "deployment": "mongodb-rate",
                    "roles": [["userAdminAnyDatabase", "admin"], ["readWrite", "rate-db"]]}),
                _restart_pods("rate")),
        ground_truth=GroundTruth(
            root_causes=(_deploy("mongodb-rate"),), mechanism="db_auth",
            detail="MongoDB user admin (the user rate logs in as) was dropped from mongodb-rate",
            detail_keywords=("dropUser", "user", "UserNotFound", "AuthenticationFailed", "removed", "deleted"),
            affected=(_deploy("rate"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="rate logs in to mongodb-rate with credentials of a user that no longer exists: the "
                        "restarted pod fails authentication, crash-loops, and searches fail."),
        mitigation=_mitigation(_ready("rate"), _error_free("rate")),
        gold=(_mongo_admin("mongodb-rate", create), _restart("rate")),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------ 3. mongodb-rate Service gone
@problem
def mongodb_rate_service_deleted() -> Problem:
    """The `mongodb-rate` Service is deleted; the database pod keeps running.

    Symptoms: rate serves from memcached, and every cache miss fails with `no reachable servers
    (dial tcp: lookup mongodb-rate ...: no such host)` in its logs and error spans (a few percent
    of its calls; search's retries hide most of them from users, and a restarted rate pod could
    not start). `kubectl get svc` has no mongodb-rate. Fix: recreate the Service (name, port
    27017, selector of the mongodb-rate pods).
    """
    return Problem(
        id="hotel-reservation/mongodb-rate-service-deleted-v1",
        title="rate logs database errors",
        app=APP, namespace=NS,
        tags=Tags(layers=("network",), difficulty="easy", sources=("sregym:missing_service_hotel_reservation",)),
        faults=(FaultSpec(fault="delete_object", params={"kind": "Service", "name": "mongodb-rate", "namespace": NS}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("Service", "mongodb-rate"),), mechanism="missing_service",
            detail="the mongodb-rate Service was deleted, so the name mongodb-rate no longer resolves",
            detail_keywords=("mongodb-rate", "service", "deleted", "missing", "no such host", "not found"),
            affected=(_deploy("rate"),), impact_keywords=IMPACT,
            description="Without its Service the rate database has no name: rate's reads that miss the cache "
                        "fail."),
        mitigation=_mitigation(service_serves("mongodb-rate", 27017, "mongodb-rate"), _error_free("rate")),
        gold=(Action(op="apply", manifest=_manifest("Service", "mongodb-rate")),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------- 4. memory request larger than a node
@problem
def memory_request_too_large() -> Problem:
    """`mongodb-rate`'s container is given a memory request of 64Gi, more than any node has.

    Symptoms: the Deployment recreates its pod (strategy Recreate), the new pod stays Pending
    with `FailedScheduling ... Insufficient memory`; rate's reads that miss its cache fail with
    server selection errors (a few percent of its calls; search's retries hide most of them).
    Fix: request what the database needs (or drop the request); mongodb-rate must run again.
    """
    request = "64Gi"
    return Problem(
        id="hotel-reservation/memory-request-too-large-v1",
        title="mongodb-rate is down after a resource change",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="easy", sources=("sregym:resource_request_too_large",)),
        faults=(_patch_fault(_patch("mongodb-rate", _container_resources(
            _mongo_container("rate"), {"requests": {"memory": request}}))),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("mongodb-rate"),), mechanism="unschedulable",
            detail=f"mongodb-rate requests {request} of memory, more than any node's allocatable memory",
            detail_keywords=(request, "insufficient memory", "request", "FailedScheduling", "pending"),
            affected=(_deploy("rate"),), impact_keywords=IMPACT,
            description="No node can hold the new mongodb-rate pod, so the rate database is down and rate's "
                        "cache misses fail."),
        mitigation=_mitigation(_ready("mongodb-rate"), _error_free("rate")),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="mongodb-rate", patch=_container_resources(
            _mongo_container("rate"), {"requests": {"memory": "256Mi"}})),),
        settle_s=SETTLE_S,
    )


# ---------------------------------------------------- 5. memory limit far too small
@problem
def memory_limit_too_small() -> Problem:
    """`mongodb-rate`'s container is given a memory limit of 10Mi.

    Symptoms: the recreated mongodb-rate pod is OOMKilled (exit code 137) as soon as mongod
    starts and goes into CrashLoopBackOff; rate's cache misses fail (a few percent of its calls;
    search's retries hide most of them). Fix: give the database a limit it fits in (or no memory
    limit); it must run without OOM kills.
    """
    limit = "10Mi"
    return Problem(
        id="hotel-reservation/memory-limit-too-small-v1",
        title="mongodb-rate keeps restarting",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="easy", sources=("sregym:resource_request_too_small",)),
        faults=(_patch_fault(_patch("mongodb-rate", _container_resources(
            _mongo_container("rate"), {"limits": {"memory": limit}}))),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("mongodb-rate"),), mechanism="oom",
            detail=f"mongodb-rate's container memory limit is {limit}, far below what mongod uses",
            detail_keywords=(limit, "memory limit", "OOMKilled", "137"),
            affected=(_deploy("rate"),), impact_keywords=IMPACT,
            description="mongod exceeds its tiny memory limit at start and is killed again and again, so "
                        "the rate database is down and rate's cache misses fail."),
        mitigation=_mitigation(CheckSpec(check="no_recent_oomkill", params={"deployment": "mongodb-rate"}),
                               _error_free("rate")),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="mongodb-rate", patch=_container_resources(
            _mongo_container("rate"), {"limits": {"memory": "1Gi"}})),),
        settle_s=SETTLE_S,
    )


# -------------------------------------------------- 6. every MongoDB claim renamed
def _claim(service: str, claim: str) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"volumes": [{"name": service, "persistentVolumeClaim": {"claimName": claim}}]}}}}


@problem
def pvc_claim_mismatch() -> Problem:
    """Every MongoDB Deployment's data volume is pointed at a claim name that does not exist
    (`<service>-data` instead of `<service>-pvc`).

    Symptoms: all six database pods are recreated (strategy Recreate) and stay Pending with
    `persistentvolumeclaim "geo-data" not found`; every service that reads a database fails,
    and so does most of the site. The PVCs themselves are Bound and unused. Fix: point each
    Deployment back at its existing claim.
    """
    mongos = tuple(f"mongodb-{s}" for s in MONGO_SERVICES)
    return Problem(
        id="hotel-reservation/pvc-claim-mismatch-v1",
        title="every database is down after a storage change",
        app=APP, namespace=NS,
        tags=Tags(layers=("k8s",), difficulty="medium", sources=("sregym:pvc_claim_mismatch",)),
        faults=(_patch_fault(*(_patch(f"mongodb-{s}", _claim(s, f"{s}-data")) for s in MONGO_SERVICES)),),
        ground_truth=GroundTruth(
            root_causes=tuple(_deploy(m) for m in mongos), mechanism="volume_claim",
            detail="each mongodb-* Deployment mounts a PersistentVolumeClaim <service>-data that does not "
                   "exist; the real claims are <service>-pvc",
            detail_keywords=("claimName", "-data", "-pvc", "not found", "persistentvolumeclaim"),
            affected=tuple(_deploy(s) for s in ("geo", "profile", "rate", "recommendation", "reservation", "user",
                                                "search", "frontend")),
            impact_keywords=IMPACT,
            description="No database pod can be scheduled because its volume names a claim that does not "
                        "exist, so every service backed by MongoDB fails."),
        mitigation=_mitigation(_ready(*mongos), _error_free("geo"), _error_free("profile")),
        gold=tuple(Action(op="patch", kind="Deployment", namespace=NS, name=f"mongodb-{s}", patch=_claim(s, f"{s}-pvc"))
                   for s in MONGO_SERVICES),
        settle_s=SETTLE_S,
    )


# ----------------------------------------------------- 7. profile runs the geo binary
@problem
def wrong_binary_profile() -> Problem:
    """The profile container's command is changed from `profile` to `geo`: the image holds every
    service's binary and the command picks one.

    Symptoms: the new profile pod is Running and Ready but it is a geo server (its logs say so,
    it listens on geo's port, not 8081); connections to the profile Service are refused and hotel
    searches and recommendations fail at the frontend when they fetch profiles. Fix: run the
    profile binary again.
    """
    return Problem(
        id="hotel-reservation/wrong-binary-profile-v1",
        title="hotel profiles fail to load after a deployment change",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="medium", sources=("aiopslab:wrong_bin_usage-1", "sregym:wrong_bin_usage")),
        faults=(_patch_fault(_patch("profile", {"spec": {"template": {"spec": {"containers": [
            {"name": _container("profile"), "command": ["geo"]}]}}}})),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("profile"),), mechanism="wrong_command",
            detail="the profile container's command runs the geo binary instead of profile",
            detail_keywords=("command", "geo", "binary", "entrypoint"),
            affected=(_obj("Service", "profile"), _deploy("frontend")), impact_keywords=IMPACT,
            description="The profile Deployment starts the geo server, which does not listen on 8081, so "
                        "frontend's profile calls are refused."),
        mitigation=_mitigation(_serves("profile"), _error_free("profile")),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="profile", patch={"spec": {"template": {
            "spec": {"containers": [{"name": _container("profile"), "command": ["profile"]}]}}}}),),
        settle_s=SETTLE_S,
    )


# --------------------------------------------------------- 8. liveness probe wrong
@problem
def liveness_probe_misconfigured() -> Problem:
    """`recommendation` gets a liveness probe on an HTTP path and port it does not serve
    (`GET /healthz` on 8080; the service speaks gRPC on 8085).

    Symptoms: the kubelet reports `Liveness probe failed: ... connection refused` and kills the
    container every ~30 s; the restart count climbs into CrashLoopBackOff, and recommendation
    requests fail while it is down. Fix: probe what the service answers (TCP or gRPC on 8085) or
    remove the broken probe; recommendation must stay up without restarts.
    """
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10,
             "failureThreshold": 3}
    good = {"tcpSocket": {"port": PORTS["recommendation"]}, "initialDelaySeconds": 5, "periodSeconds": 10,
            "failureThreshold": 3}
    return Problem(
        id="hotel-reservation/liveness-probe-misconfigured-v1",
        title="recommendation keeps restarting",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="easy", sources=("sregym:liveness_probe_misconfiguration_hotel_reservation",)),
        faults=(FaultSpec(fault="set_probe", params={"namespace": NS, "name": "recommendation",
                                                     "probe_kind": "livenessProbe", "probe": probe}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("recommendation"),), mechanism="probe",
            detail="recommendation's liveness probe checks GET /healthz on port 8080, which the gRPC service "
                   "does not serve",
            detail_keywords=("liveness", "/healthz", "8080", "probe"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="The kubelet kills a healthy recommendation container because its liveness probe "
                        "can never succeed; it restarts in a loop."),
        mitigation=_mitigation(CheckSpec(check="sustained_ready", params={"deployment": "recommendation"}),
                               _serves("recommendation")),
        # A JSON patch replaces the whole probe (a strategic merge would add a second handler).
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="recommendation", patch_type="json", patch=[
            {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe", "value": good}]),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------- 9. init container waits forever
WAIT_INIT = {"name": "wait-for-auth-service", "image": "busybox:1.36",
             "command": ["sh", "-c", "until nslookup auth-service.hotel-reservation.svc.cluster.local; "
                                     "do echo waiting for auth-service; sleep 2; done"]}


@problem
def init_container_dependency_hang() -> Problem:
    """A change to `frontend` adds an init container that waits for a Service, `auth-service`,
    that does not exist in the cluster.

    Symptoms: the new frontend pod sits in `Init:0/1` for ever (its init container logs `waiting
    for auth-service` and nslookup `NXDOMAIN`), the rollout never completes; the old pod keeps
    serving. Fix: remove the wait (or make what it waits for exist); the rollout must finish.
    """
    return Problem(
        id="hotel-reservation/init-container-dependency-hang-v1",
        title="frontend rollout never finishes",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="easy", sources=("sregym:init_container_dependency_hang_hotel_reservation",)),
        faults=(_patch_fault(_patch("frontend", {"spec": {"template": {"spec": {"initContainers": [WAIT_INIT]}}}})),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),), mechanism="rollout_strategy",
            detail="frontend's init container wait-for-auth-service waits for auth-service, a Service that "
                   "does not exist",
            detail_keywords=("init container", "wait-for-auth-service", "auth-service", "Init:0/1", "nslookup"),
            affected=(), impact_keywords=IMPACT,
            description="The new frontend pod never finishes initialising, so the rollout is stuck on it."),
        # The old pod keeps serving during the stuck rollout: serving is a must_keep here.
        mitigation=_mitigation(workload_ready("frontend"), must_keep=keep(_serves("frontend"))),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="frontend", patch_type="json", patch=[
            {"op": "remove", "path": "/spec/template/spec/initContainers"}]),),
        settle_s=SETTLE_S,
    )


# --------------------------------------------- 10. PodSecurity restricted on the namespace
PSA_LABELS = {"pod-security.kubernetes.io/enforce": "restricted",
              "pod-security.kubernetes.io/enforce-version": "latest"}


@problem
def pod_security_blocks_recreation() -> Problem:
    """The app's namespace is labelled `pod-security.kubernetes.io/enforce=restricted`, and the
    recommendation pod is replaced afterwards.

    Symptoms: running pods are untouched, but the recommendation ReplicaSet cannot create its
    pod: `FailedCreate ... violates PodSecurity "restricted:latest": allowPrivilegeEscalation !=
    false, runAsNonRoot != true, ...`; recommendation has no pod and recommendations fail. Fix:
    relax the namespace's enforce level (or make the pods comply) so the pod can be created.
    """
    return Problem(
        id="hotel-reservation/pod-security-blocks-recreation-v1",
        title="recommendation has no pod after a restart",
        app=APP, namespace=NS,
        tags=Tags(layers=("control-plane",), difficulty="medium", sources=("sregym:psa_restricted_blocks_recreation_hotel_reservation",)),
        faults=(FaultSpec(fault="set_object_labels", params={"kind": "Namespace", "name": NS, "labels": PSA_LABELS}),
                _restart_pods("recommendation")),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "Namespace", NS),), mechanism="pod_security",
            detail="namespace hotel-reservation enforces the PodSecurity restricted level, which the "
                   "recommendation pod does not meet",
            detail_keywords=("restricted", "pod-security", "podsecurity", "enforce"),
            affected=(_deploy("recommendation"), _deploy("frontend")), impact_keywords=IMPACT,
            description="Pod Security Admission rejects the recreated recommendation pod, so the Deployment "
                        "has no pod and recommendation requests fail."),
        mitigation=_mitigation(_ready("recommendation"), _serves("recommendation")),
        gold=(Action(op="patch", kind="Namespace", name=NS, patch_type="merge", patch={"metadata": {"labels": {
            "pod-security.kubernetes.io/enforce": None, "pod-security.kubernetes.io/enforce-version": None}}}),
              _restart("recommendation")),
        settle_s=SETTLE_S,
    )


# --------------------------------------------- 11. HPA on CPU, pods without a CPU request
FRONTEND_HPA = {
    "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "frontend", "namespace": NS},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "frontend"},
             "minReplicas": 1, "maxReplicas": 4,
             "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                           "target": {"type": "Utilization", "averageUtilization": 70}}}]},
}
FRONTEND_RESOURCES = {"requests": {"cpu": "100m"}, "limits": {"cpu": "1000m"}}


@problem
def hpa_missing_cpu_request() -> Problem:
    """An autoscaler on CPU utilisation is added for `frontend` in the same change that drops
    frontend's container `resources` (no CPU request, so none is defaulted from a limit).

    Symptoms: `kubectl describe hpa frontend` shows `ScalingActive False FailedGetResourceMetric`
    and `failed to get cpu utilization: missing request for cpu`; TARGETS reads `<unknown>/70%`
    and the frontend can never scale out under load. Fix: give frontend's containers a CPU
    request (the autoscaler must stay and become active).
    """
    limit = f"Deployment/frontend/{_container('frontend')}: limits.cpu"
    keep_list = (*(c for c in BASELINE_KEEP if c.check != "safeguards_kept"),
                 CheckSpec(check="safeguards_kept", params={"may_remove": [limit]}),
                 CheckSpec(check="autoscaler_kept", params={"deployment": "frontend"}))
    return Problem(
        id="hotel-reservation/hpa-missing-cpu-request-v1",
        title="the frontend autoscaler does not scale",
        app=APP, namespace=NS,
        tags=Tags(layers=("k8s",), difficulty="medium", sources=("sregym:hpa_missing_effective_cpu_request_hotel_reservation",)),
        faults=(_patch_fault(_patch("frontend", [{"op": "remove", "path": "/spec/template/spec/containers/0/resources"}],
                                    patch_type="json")),
                FaultSpec(fault="create_objects", params={"objects": [FRONTEND_HPA]})),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"), _obj("HorizontalPodAutoscaler", "frontend")), mechanism="autoscaling",
            detail="HPA frontend scales on CPU utilisation but frontend's container has no CPU request "
                   "(missing request for cpu)",
            detail_keywords=("missing request", "cpu request", "requests", "FailedGetResourceMetric", "unknown"),
            affected=(), impact_keywords=(*IMPACT, "scale", "autoscal", "unknown"),
            description="Without a CPU request the autoscaler cannot compute utilisation, so it is inactive "
                        "and frontend cannot scale out."),
        mitigation=_mitigation(CheckSpec(check="autoscaler_active", params={"deployment": "frontend"}),
                               must_keep=keep_list),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="frontend", patch=_container_resources(
            _container("frontend"), FRONTEND_RESOURCES)),),
        settle_s=SETTLE_S,
    )


# --------------------------------------------- 12. hostPort already held on every node
@problem
def host_port_conflict() -> Problem:
    """A change to `recommendation` publishes its port on the node as `hostPort: 9100`, the port
    the node-exporter DaemonSet (`monitoring`) already holds on every node.

    Symptoms: the new recommendation pod stays Pending with `FailedScheduling ... node(s) didn't
    have free ports for the requested pod ports`; the rollout never completes while the old pod
    keeps serving. Fix: drop the hostPort (or pick a free one); the rollout must finish.
    """
    return Problem(
        id="hotel-reservation/host-port-conflict-v1",
        title="recommendation rollout never finishes",
        app=APP, namespace=NS,
        tags=Tags(layers=("k8s",), difficulty="medium", sources=("sregym:service_port_conflict_hotel_reservation",)),
        faults=(_patch_fault(_patch("recommendation", {"spec": {"template": {"spec": {"containers": [
            {"name": _container("recommendation"),
             "ports": [{"containerPort": PORTS["recommendation"], "hostPort": 9100}]}]}}}})),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("recommendation"),), mechanism="unschedulable",
            detail="recommendation's container asks for hostPort 9100, already held on every node by the "
                   "node-exporter DaemonSet: no node has the port free",
            detail_keywords=("hostPort", "9100", "free ports", "node-exporter"),
            affected=(), impact_keywords=IMPACT,
            description="No node can take the new recommendation pod because its host port is in use, so "
                        "the rollout is stuck."),
        # The old pod keeps serving during the stuck rollout: serving is a must_keep here.
        mitigation=_mitigation(workload_ready("recommendation"), must_keep=keep(_serves("recommendation"))),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="recommendation", patch_type="json", patch=[
            {"op": "remove", "path": "/spec/template/spec/containers/0/ports/0/hostPort"}]),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------ 13. a sidecar binding frontend's port
STATSD_FLAGS = ["--statsd.listen-udp=:9125", "--statsd.listen-tcp=:9125"]


def _metrics_sidecar(web_port: int) -> dict[str, Any]:
    # The declared port says what was meant (the exporter's default 9102); the flag says otherwise.
    return {"name": "metrics", "image": "prom/statsd-exporter:v0.26.1",
            "args": [f"--web.listen-address=:{web_port}", *STATSD_FLAGS],
            "ports": [{"containerPort": 9102, "name": "metrics"}, {"containerPort": 9125, "protocol": "UDP"}]}


@problem
def sidecar_port_conflict() -> Problem:
    """A change to `frontend` adds a `metrics` sidecar (prom/statsd-exporter) whose web listener
    is set to `:5000` (its declared containerPort says 9102), the port frontend's HTTP server
    already binds in the same pod (SREGym `sidecar_port_conflict_hotel_reservation`).

    Containers of a pod share one network namespace: whichever binds second fails with `bind:
    address already in use` and exits. frontend has no readiness probe, so the new pod counts as
    Ready for the moment before the sidecar fails and the rollout replaces the old pod; from then
    on the sidecar crash-loops, the only frontend pod is 1/2 and not Ready, the frontend Service has
    no endpoints and every request to the site fails. Fix: move the sidecar to a free port
    (statsd-exporter's default :9102) or remove it.
    """
    port = PORTS["frontend"]
    return Problem(
        id="hotel-reservation/sidecar-port-conflict-v1",
        title="the site is down since the last frontend rollout",
        app=APP, namespace=NS,
        tags=Tags(layers=("config",), difficulty="medium", sources=("sregym:sidecar_port_conflict_hotel_reservation",)),
        faults=(_patch_fault(_patch("frontend", {"spec": {"template": {"spec": {"containers": [
            _metrics_sidecar(port)]}}}})),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),), mechanism="port_conflict",
            detail=f"frontend's sidecar container metrics (statsd-exporter) listens on --web.listen-address=:{port}, "
                   "the port frontend's server already binds in the pod (address already in use)",
            detail_keywords=("address already in use", str(port), "metrics", "sidecar", "web.listen-address",
                             "statsd-exporter"),
            affected=(_obj("Service", "frontend"),), impact_keywords=IMPACT,
            description="The sidecar cannot bind the port the frontend container holds, so it crash-loops and the "
                        "frontend pod is not Ready; the frontend Service has no endpoints and the site is down."),
        mitigation=_mitigation(CheckSpec(check="sustained_ready", params={"deployment": "frontend", "seconds": 60}),
                               _serves("frontend")),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="frontend", patch={"spec": {"template": {
            "spec": {"containers": [{"name": "metrics", "args": ["--web.listen-address=:9102", *STATSD_FLAGS]}]}}}}),),
        settle_s=SETTLE_S,
    )
