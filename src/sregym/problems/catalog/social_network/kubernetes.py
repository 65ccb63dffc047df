"""Social Network problems in how Kubernetes runs a workload: scale (zero replicas), probes
(readiness that never passes, liveness that kills a healthy server), scheduling (a node that does
not exist, taints nobody tolerates, an anti-affinity no set of nodes satisfies, a volume pinned to
another node than the pod, a host port already taken, replicas spread over nodes sharing one
ReadWriteOnce claim) and rollouts (a strategy that drops every pod, an init container that waits
for ever).

Each is one bad change to objects, as SREGym's Social Network scenarios make it; events, pod status
and the rollout say why pods do not run. Checks read the symptom (the workload rolled out and
ready, its Service serving), so any valid fix passes.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.social_network import PORTS
from sregym.problems.builders import object_cause, workload_ready
from sregym.problems.catalog.social_network.common import (
    NS,
    deploy,
    mitigation,
    obj,
    selector,
    serves,
    social_problem,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, Problem
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms

mechanisms({
    "taint": ("taint", "toleration", "untolerated", "noschedule"),
    "pod_anti_affinity": ("anti-affinity", "antiaffinity", "podantiaffinity", "topologykey",
                          "didn't match pod anti-affinity"),
    "volume_node_affinity": ("volume node affinity", "node affinity conflict", "nodeaffinity",
                             "persistentvolume"),
}, related={"taint": ("unschedulable",), "pod_anti_affinity": ("unschedulable",),
            "volume_node_affinity": ("unschedulable", "node_selector")})

USER = "user-service"
THRIFT = PORTS[USER]
WORKERS = ("kind-worker", "kind-worker2", "kind-worker3")


def _template(name: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A strategic-merge edit of a Deployment's pod template (and other spec fields)."""
    return {"kind": "Deployment", "namespace": NS, "name": name, "patch_type": "strategic",
            "patch": {"spec": {**extra, "template": {"spec": spec}}}}


def _json(name: str, *ops: dict[str, Any]) -> Action:
    return Action(op="patch", kind="Deployment", namespace=NS, name=name, patch_type="json", patch=list(ops))


def _patches(*edits: dict[str, Any]) -> FaultSpec:
    return FaultSpec(fault="patch_objects", params={"patches": list(edits)})


def _recreate(name: str) -> FaultSpec:
    return FaultSpec(fault="delete_pods", params={"namespace": NS, "label_selector": selector(name)})


# ------------------------------------------------------------------------ scale, probes
@problem
def user_service_scaled_to_zero() -> Problem:
    """user-service is scaled to 0 replicas (SREGym `scale_pod_zero_social_net`, AIOpsLab
    `scale_pod_zero_social_net-*`).

    Symptoms: no user-service pod, its Service has no endpoints; compose-post's calls are refused
    and every new post fails while timelines load. Fix: scale user-service back to 1.
    """
    return social_problem(
        "user-service-scaled-to-zero", "new posts fail for every user",
        layers=("k8s",), difficulty="easy",
        sources=("sregym:scale_pod_zero_social_net", "aiopslab:scale_pod_zero_social_net-1"),
        faults=(FaultSpec(fault="scale_workload", params={"namespace": NS, "name": USER, "replicas": 0}),),
        root_causes=(deploy(USER),), mechanism="scaled_to_zero",
        detail="user-service Deployment spec.replicas set to 0 (baseline 1)",
        keywords=("replicas", "0", "zero", "scaled"),
        affected=(obj("Service", USER), deploy("compose-post-service")),
        description="user-service has no pods, so its Service has no endpoints and composing a post fails.",
        mitigation=mitigation(workload_ready(USER), serves(USER)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=USER, patch={"spec": {"replicas": 1}},
                     patch_type="merge"),))


@problem
def user_service_readiness_probe() -> Problem:
    """user-service gets a readiness probe on `GET /health` port 8080; the Thrift server listens on
    9090 and speaks no HTTP (SREGym `readiness_probe_misconfiguration_social_network`).

    Symptoms: the new user-service pod is Running but never Ready (`Readiness probe failed: ...
    connection refused`); the rollout is stuck at 0/1 updated with the old pod still serving.
    Fix: probe the port the server listens on (TCP 9090) or drop the probe; the rollout must
    complete.
    """
    probe = {"httpGet": {"path": "/health", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10,
             "failureThreshold": 3}
    return social_problem(
        "user-service-readiness-probe", "the user-service rollout never becomes ready",
        layers=("config",), difficulty="easy",
        sources=("sregym:readiness_probe_misconfiguration_social_network",),
        faults=(FaultSpec(fault="set_probe", params={"namespace": NS, "name": USER, "container": USER,
                                                     "probe_kind": "readinessProbe", "probe": probe}),),
        root_causes=(deploy(USER),), mechanism="probe",
        detail="user-service readinessProbe httpGet :8080/health, but the Thrift server listens on 9090",
        keywords=("readiness", "8080", "/health", "readinessProbe"),
        affected=(obj("Service", USER),),
        description="The new user-service pod never passes its readiness probe, so it never joins the "
                    "Service and the rollout cannot finish.",
        # The old pod keeps serving during the stuck rollout: serving is kept, readiness is fixed.
        mitigation=mitigation(workload_ready(USER), also_keep=(serves(USER),)),
        gold=(_json(USER, {"op": "replace", "path": "/spec/template/spec/containers/0/readinessProbe",
                           "value": {"tcpSocket": {"port": THRIFT}, "periodSeconds": 10}}),))


@problem
def user_service_liveness_probe() -> Problem:
    """user-service gets a liveness probe on `GET /healthz` port 8080, which the Thrift server
    does not serve (SREGym `liveness_probe_misconfiguration_social_network`).

    Symptoms: `Liveness probe failed: ... connection refused`; the kubelet kills the container
    every ~30 s, the restart count climbs into CrashLoopBackOff and new posts fail while it is
    down. Fix: probe what the server answers (TCP 9090) or remove the probe; user-service must
    stay up without restarts.
    """
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10,
             "failureThreshold": 3}
    return social_problem(
        "user-service-liveness-probe", "user-service keeps restarting",
        layers=("config",), difficulty="easy",
        sources=("sregym:liveness_probe_misconfiguration_social_network",),
        faults=(FaultSpec(fault="set_probe", params={"namespace": NS, "name": USER, "container": USER,
                                                     "probe_kind": "livenessProbe", "probe": probe}),),
        root_causes=(deploy(USER),), mechanism="probe",
        detail="user-service livenessProbe httpGet :8080/healthz, which the Thrift server (9090) does not serve",
        keywords=("liveness", "/healthz", "8080", "livenessProbe"),
        affected=(deploy("compose-post-service"),),
        description="The kubelet kills a healthy user-service container because its liveness probe can "
                    "never succeed; it restarts in a loop and posts fail while it is down.",
        mitigation=mitigation(CheckSpec(check="sustained_ready", params={"deployment": USER}), serves(USER)),
        gold=(_json(USER, {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
                           "value": {"tcpSocket": {"port": THRIFT}, "initialDelaySeconds": 5,
                                     "periodSeconds": 10, "failureThreshold": 3}}),))


# ------------------------------------------------------------------------- scheduling
@problem
def user_service_nonexistent_node() -> Problem:
    """user-service's pod template gets `nodeSelector: kubernetes.io/hostname: extra-node`; there
    is no such node (SREGym and AIOpsLab `assign_to_non_existent_node_social_net`).

    Symptoms: the new pod stays Pending (`FailedScheduling ... didn't match Pod's node
    affinity/selector`); the rollout is stuck with the old pod serving. Fix: remove or correct
    the nodeSelector.
    """
    return social_problem(
        "user-service-nonexistent-node", "user-service pods cannot be scheduled",
        layers=("k8s",), difficulty="easy",
        sources=("sregym:assign_to_non_existent_node", "aiopslab:assign_to_non_existent_node_social_net-1"),
        faults=(FaultSpec(fault="set_node_selector", params={
            "namespace": NS, "name": USER, "node_selector": {"kubernetes.io/hostname": "extra-node"}}),),
        root_causes=(deploy(USER),), mechanism="node_selector",
        detail="user-service pod template nodeSelector kubernetes.io/hostname=extra-node matches no node",
        keywords=("extra-node", "nodeSelector", "node selector"),
        affected=(),
        description="The new user-service pod cannot be scheduled anywhere, so its rollout never completes.",
        mitigation=mitigation(workload_ready(USER), also_keep=(serves(USER),)),
        gold=(_json(USER, {"op": "remove", "path": "/spec/template/spec/nodeSelector"}),))


TAINT = {"key": "dedicated", "value": "data-plane", "effect": "NoSchedule"}
OTHER_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}


@problem
def taint_no_toleration() -> Problem:
    """Every worker is tainted `dedicated=data-plane:NoSchedule`; user-service tolerates only
    `dedicated=batch`, and its pod is then replaced (SREGym `taint_no_toleration_social_network`).

    Symptoms: the replacement user-service pod stays Pending (`FailedScheduling ... untolerated
    taint {dedicated: data-plane}`), so user-service has no pod and every new post fails; pods
    that were already running elsewhere keep running. Fix: take the taint off the workers (or
    give user-service a matching toleration).
    """
    return social_problem(
        "taint-no-toleration", "new posts fail: user-service has no running pod",
        layers=("k8s",), difficulty="medium",
        sources=("sregym:taint_no_toleration_social_network",),
        faults=(_patches(*({"kind": "Node", "name": n, "patch_type": "merge", "patch": {"spec": {"taints": [TAINT]}}}
                           for n in WORKERS),
                         _template(USER, {"tolerations": [OTHER_TOLERATION]})),
                _recreate(USER)),
        root_causes=(*(object_cause(None, "Node", n) for n in WORKERS), deploy(USER)), mechanism="taint",
        detail="every worker node carries taint dedicated=data-plane:NoSchedule and user-service only "
               "tolerates dedicated=batch",
        keywords=("taint", "toleration", "dedicated", "data-plane", "NoSchedule", "untolerated"),
        affected=(deploy("compose-post-service"), obj("Service", USER)),
        description="No worker accepts the user-service pod, so user-service has no pod and composing a post "
                    "fails.",
        mitigation=mitigation(workload_ready(USER), serves(USER)),
        gold=tuple(Action(op="patch", kind="Node", name=n, patch_type="json",
                          patch=[{"op": "remove", "path": "/spec/taints"}]) for n in WORKERS))


ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
    "labelSelector": {"matchLabels": {"service": USER}}, "topologyKey": "kubernetes.io/hostname"}]}}


@problem
def pod_anti_affinity_deadlock() -> Problem:
    """user-service is scaled to 4 replicas with a required pod anti-affinity against its own
    pods on `kubernetes.io/hostname`: one pod per node, but there are only 3 schedulable workers
    (SREGym `pod_anti_affinity_deadlock`).

    Symptoms: three pods run; the fourth stays Pending (`FailedScheduling ... didn't match pod
    anti-affinity rules`) and the rollout never completes. Fix: relax the anti-affinity (preferred,
    or drop it) or ask for no more replicas than nodes; the Deployment must be fully rolled out.
    """
    return social_problem(
        "pod-anti-affinity-deadlock", "the user-service rollout never completes",
        layers=("k8s",), difficulty="medium",
        sources=("sregym:pod_anti_affinity_deadlock",),
        faults=(_patches(_template(USER, {"affinity": ANTI_AFFINITY}, replicas=4)),),
        root_causes=(deploy(USER),), mechanism="pod_anti_affinity",
        detail="user-service: 4 replicas with a required podAntiAffinity on kubernetes.io/hostname against "
               "its own pods, and only 3 schedulable worker nodes",
        keywords=("podAntiAffinity", "anti-affinity", "kubernetes.io/hostname", "replicas", "4"),
        affected=(),
        description="Each user-service pod needs a node of its own and there are fewer workers than "
                    "replicas, so one pod can never be scheduled and the rollout is stuck.",
        mitigation=mitigation(workload_ready(USER), also_keep=(serves(USER),)),
        gold=(_json(USER, {"op": "remove", "path": "/spec/template/spec/affinity"}),))


PV = "user-service-data"
PV_OBJECT = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": PV},
             "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "local-storage",
                      "local": {"path": "/mnt/disks/user-service"},
                      "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{
                          "key": "kubernetes.io/hostname", "operator": "In", "values": ["kind-worker"]}]}]}}}}
PVC_OBJECT = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": PV, "namespace": NS},
              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-storage", "volumeName": PV,
                       "resources": {"requests": {"storage": "1Gi"}}}}


@problem
def pv_node_affinity_violation() -> Problem:
    """user-service gets a data volume: a claim bound to a local PersistentVolume whose node
    affinity allows only `kind-worker`, while the same change pins the pod to `kind-worker2`
    with a nodeSelector (SREGym `persistent_volume_affinity_violation`).

    Symptoms: the new user-service pod stays Pending (`FailedScheduling ... node(s) had volume
    node affinity conflict`, `didn't match Pod's node affinity/selector`); the rollout is stuck.
    Fix: drop the nodeSelector (the pod then lands where its volume is) or the volume.
    """
    return social_problem(
        "pv-node-affinity-violation", "the user-service rollout is stuck Pending",
        layers=("k8s",), difficulty="hard",
        sources=("sregym:persistent_volume_affinity_violation",),
        faults=(FaultSpec(fault="create_objects", params={"objects": [PV_OBJECT, PVC_OBJECT]}),
                _patches(_template(USER, {
                    "nodeSelector": {"kubernetes.io/hostname": "kind-worker2"},
                    "volumes": [{"name": "user-data", "persistentVolumeClaim": {"claimName": PV}}],
                    "containers": [{"name": USER, "volumeMounts": [{"name": "user-data",
                                                                    "mountPath": "/var/lib/user-service"}]}]}))),
        root_causes=(deploy(USER), object_cause(None, "PersistentVolume", PV)), mechanism="volume_node_affinity",
        detail=f"user-service nodeSelector kubernetes.io/hostname=kind-worker2, but its claim {PV} is bound to "
               "a local PersistentVolume whose nodeAffinity allows only kind-worker",
        keywords=("volume node affinity", "nodeAffinity", "kind-worker2", "kind-worker", "nodeSelector", PV),
        affected=(obj("PersistentVolumeClaim", PV),),
        description="The pod must run on kind-worker2 but its volume can only be used on kind-worker, so no "
                    "node fits and the rollout is stuck.",
        mitigation=mitigation(workload_ready(USER), also_keep=(serves(USER),)),
        gold=(_json(USER, {"op": "remove", "path": "/spec/template/spec/nodeSelector"}),))


@problem
def media_service_host_port_conflict() -> Problem:
    """A change to media-service publishes its port on the node as `hostPort: 9100`, the port the
    node-exporter DaemonSet already holds on every node (SREGym
    `service_port_conflict_social_network`).

    Symptoms: the new media-service pod stays Pending (`FailedScheduling ... didn't have free
    ports for the requested pod ports`); the rollout never completes while the old pod serves.
    Fix: drop the hostPort (or pick a free one).
    """
    media = "media-service"
    return social_problem(
        "media-service-host-port-conflict", "the media-service rollout never finishes",
        layers=("k8s",), difficulty="medium",
        sources=("sregym:service_port_conflict_social_network",),
        faults=(_patches(_template(media, {"containers": [
            {"name": media, "ports": [{"containerPort": THRIFT, "hostPort": 9100}]}]})),),
        root_causes=(deploy(media),), mechanism="unschedulable",
        detail="media-service's container asks for hostPort 9100, held on every node by node-exporter",
        keywords=("hostPort", "9100", "free ports", "node-exporter"),
        affected=(),
        description="No node can take the new media-service pod because its host port is in use, so the "
                    "rollout is stuck.",
        mitigation=mitigation(workload_ready(media), also_keep=(serves(media),)),
        gold=(_json(media, {"op": "remove", "path": "/spec/template/spec/containers/0/ports/0/hostPort"}),))


HANG_INIT = {"name": "wait-for-user-cache", "image": "busybox:1.36",
             "command": ["sh", "-c", "until nslookup user-cache.social-network.svc.cluster.local; "
                                     "do echo waiting for user-cache; sleep 2; done"]}


@problem
def rolling_update_misconfigured() -> Problem:
    """A change to user-service sets its rollout strategy to `maxUnavailable: 100%`, `maxSurge: 0`
    and adds an init container that waits for a cache Service that was never deployed (SREGym
    `rolling_update_misconfigured_social_network`).

    The rollout takes the old pod down at once; the new one hangs in `Init:0/1` (its init
    container loops on `nslookup user-cache...`), so user-service has no endpoints and every new
    post fails. Fix: remove the hanging init container and use a strategy that keeps a pod
    available (e.g. maxUnavailable 0, maxSurge 1).
    """
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}
    return social_problem(
        "rolling-update-misconfigured", "user-service went down during a rollout",
        layers=("config",), difficulty="medium",
        sources=("sregym:rolling_update_misconfigured_social_network",),
        faults=(_patches(_template(USER, {"initContainers": [HANG_INIT]}, strategy=strategy)),),
        root_causes=(deploy(USER),), mechanism="rollout_strategy",
        detail="user-service strategy maxUnavailable 100% with maxSurge 0, and init container "
               "wait-for-user-cache waits forever for user-cache",
        keywords=("maxUnavailable", "100%", "maxSurge", "wait-for-user-cache", "init container", "user-cache"),
        affected=(obj("Service", USER), deploy("compose-post-service")),
        description="The rollout removed the only user-service pod at once and the replacement never "
                    "finishes its init container; composing a post fails.",
        mitigation=mitigation(workload_ready(USER), serves(USER),
                              CheckSpec(check="rollout_keeps_capacity", params={"deployment": USER})),
        gold=(_json(USER, {"op": "remove", "path": "/spec/template/spec/initContainers"},
                    {"op": "replace", "path": "/spec/strategy",
                     "value": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}}),))


WAIT_INIT = {"name": "wait-for-auth-service", "image": "busybox:1.36",
             "command": ["sh", "-c", "until nslookup auth-service.social-network.svc.cluster.local; "
                                     "do echo waiting for auth-service; sleep 2; done"]}


@problem
def init_container_dependency_hang() -> Problem:
    """A change to user-service adds an init container that waits for a Service, `auth-service`,
    that does not exist (SREGym `init_container_dependency_hang_social_network`).

    Symptoms: the new user-service pod sits in `Init:0/1` for ever (its init container logs
    `waiting for auth-service`, nslookup NXDOMAIN); the rollout never completes while the old pod
    keeps serving. Fix: remove the wait (or make what it waits for exist).
    """
    return social_problem(
        "init-container-dependency-hang", "the user-service rollout never finishes",
        layers=("config",), difficulty="easy",
        sources=("sregym:init_container_dependency_hang_social_network",),
        faults=(_patches(_template(USER, {"initContainers": [WAIT_INIT]})),),
        root_causes=(deploy(USER),), mechanism="rollout_strategy",
        detail="user-service's init container wait-for-auth-service waits for auth-service, a Service that "
               "does not exist",
        keywords=("init container", "wait-for-auth-service", "auth-service", "Init:0/1", "nslookup"),
        affected=(),
        description="The new user-service pod never finishes initialising, so the rollout is stuck on it.",
        mitigation=mitigation(workload_ready(USER), also_keep=(serves(USER),)),
        gold=(_json(USER, {"op": "remove", "path": "/spec/template/spec/initContainers"}),))


JAEGER_PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "jaeger-store", "namespace": NS},
              "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


@problem
def duplicate_pvc_mounts() -> Problem:
    """jaeger is scaled to 3 replicas that all mount one ReadWriteOnce claim (`jaeger-store`),
    with a required pod anti-affinity on `kubernetes.io/hostname` (SREGym
    `duplicate_pvc_mounts_social_network`).

    The anti-affinity spreads the replicas over nodes, but a ReadWriteOnce volume attaches to one
    node only: one pod runs, the others stay in ContainerCreating (`FailedAttachVolume ...
    Multi-Attach error`) and the rollout never completes. Fix: make the constraints compatible
    (drop the anti-affinity and replace pods without overlap, or stop sharing the claim).
    """
    jaeger = "jaeger"
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"service": jaeger}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return social_problem(
        "duplicate-pvc-mounts", "the jaeger scale-out never completes",
        layers=("k8s",), difficulty="medium",
        sources=("sregym:duplicate_pvc_mounts_social_network",),
        faults=(FaultSpec(fault="create_objects", params={"objects": [JAEGER_PVC]}),
                _patches(_template(jaeger, {
                    "affinity": anti,
                    "volumes": [{"name": "store", "persistentVolumeClaim": {"claimName": "jaeger-store"}}],
                    "containers": [{"name": jaeger, "volumeMounts": [{"name": "store", "mountPath": "/badger"}]}]},
                    replicas=3))),
        root_causes=(deploy(jaeger), obj("PersistentVolumeClaim", "jaeger-store")), mechanism="volume_attach",
        detail="3 jaeger replicas share ReadWriteOnce PVC jaeger-store while a required hostname anti-affinity "
               "spreads them over nodes (Multi-Attach error)",
        keywords=("Multi-Attach", "ReadWriteOnce", "jaeger-store", "anti-affinity", "podAntiAffinity"),
        affected=(),
        description="Only the jaeger pod on the node holding the volume can start; the rollout is stuck.",
        mitigation=mitigation(workload_ready(jaeger)),
        # Co-locate the replicas with the volume and replace pods without overlap (a surge pod on
        # another node would wait for the volume for ever).
        gold=(_json(jaeger, {"op": "remove", "path": "/spec/template/spec/affinity"},
                    {"op": "replace", "path": "/spec/strategy", "value": {"type": "Recreate"}}),))
