"""Hotel Reservation problems below Kubernetes: a node whose kubelet was stopped, nodes under
memory pressure, and a node whose clock was set a year back.

Each builder's docstring is the problem card. Faults are Kubernetes writes with the admin
credential (`sregym.faults.node_lifecycle`); the checks are semantic
(`sregym.oracles.checks_node_lifecycle` and E1's); the gold solutions are kubectl-equivalent
writes an agent could make.

Why the gold of a lost node does not repair the node: the kubelet is the only way Kubernetes
reaches a node — a pod that could run `systemctl start kubelet` or `date -s` there is started by
that kubelet, and `kubectl exec`/`logs` go through it — so with the agent credential the node
cannot be repaired, only given up on. What an on-call engineer does is remove whatever broke the
node (so a repaired node, or the next one, is not broken again) and declare the node out of
service (`node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`, Kubernetes' non-graceful
node shutdown), so its pods are force-deleted, their volumes detached and their replacements run
elsewhere at once. The durability check then has the node team repair the node. The workloads
are placed deterministically (geo runs on kind-worker for every seed), which is the node the
gold names.
"""

from __future__ import annotations

from functools import partial

from sregym.problems.builders import deployment_cause, object_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import EntityRef, GroundTruth, RootCause, workload_aliases

APP = "hotel-reservation"
NS = "hotel-reservation"
SYSTEM = "kube-system"
IMPACT = ("unavailable", "fail", "error", "down", "latency", "slow", "timeout", "cannot", "outage", "degraded",
          "evicted", "pending", "notready", "not ready")
GEO_NODE = "kind-worker"  # where geo (and search, rate, profile, consul) run
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
FALLBACK_TIME = "2025-01-05 09:00:00"
HOG = "nightly-report-builder"
HOG_NS = "analytics"

_deploy = partial(deployment_cause, NS)
_node_affected = (object_cause(None, "Node", GEO_NODE), _deploy("geo"), _deploy("search"), _deploy("rate"),
                  _deploy("profile"), _deploy("consul"), _deploy("frontend"))


def _daemonset(namespace: str, name: str) -> RootCause:
    return RootCause(entity=EntityRef(kind="DaemonSet", namespace=namespace, name=name),
                     aliases=workload_aliases("DaemonSet", namespace, name))


def _give_up_node(agent: str) -> tuple[Action, ...]:
    """Remove the host agent, then declare its node out of service."""
    return (Action(op="delete", kind="DaemonSet", namespace=SYSTEM, name=agent),
            Action(op="patch", kind="Node", name=GEO_NODE, patch_type="json",
                   patch=[{"op": "add", "path": "/spec/taints/-", "value": dict(OUT_OF_SERVICE)}]))


def _agent_on_geo_node(agent: str, script: str, env: dict[str, str] | None = None) -> FaultSpec:
    """A privileged host agent pinned to the node that runs geo, running `script` every minute."""
    return FaultSpec(fault="host_agent", params={
        "name": agent, "target_namespace": NS, "target_labels": {"io.kompose.service": "geo"},
        "script": script, **({"env": env} if env else {})})


def _lost_node_mitigation() -> MitigationSpec:
    return MitigationSpec(
        must_fix=(CheckSpec(check="pods_not_stranded"),
                  CheckSpec(check="service_calls_succeed", params={"service": "geo"})),
        durability=(CheckSpec(check="node_repair_holds"),),
        window_s=300.0)


# ============================================================ 1. kubelet stopped
@problem
def kubelet_stopped_by_host_agent() -> Problem:
    """A privileged DaemonSet `node-maintenance-agent` in kube-system, pinned to the node that
    runs geo (kind-worker), mounts the host's `/run/systemd`, shares the host's PID namespace and
    runs `nsenter -t 1 -m -u -i -n -p -- systemctl stop kubelet` every minute.

    The kubelet stops renewing its lease: after 50 s the node controller marks the node's
    conditions `Unknown` ("Kubelet stopped posting node status."), taints it `unreachable`, marks
    every pod on it NotReady so the endpoints of geo, search, rate, profile and consul drop them,
    and after 300 s the taint manager marks them for deletion: they stay Terminating because no
    kubelet confirms it, and mongodb-profile's replacement cannot attach the volume the
    stranded pod still holds. Searches fail. `kubectl exec` into a pod there fails ("error dialing
    backend: dial tcp ...:10250: connect: connection refused").
    Fix: delete the agent and give the node up — the out-of-service taint (or force-deleting
    its pods) lets everything run elsewhere; the node team then restarts the kubelet. The
    durability check repairs the node: an agent left running stops the kubelet again.
    """
    agent = "node-maintenance-agent"
    return Problem(
        id="hotel-reservation/kubelet-stopped-by-host-agent-v1",
        title="searches fail; a worker node is NotReady and its pods are stuck Terminating",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="medium", suites=()),
        faults=(_agent_on_geo_node(agent, "nsenter -t 1 -m -u -i -n -p -- systemctl stop kubelet"),),
        ground_truth=GroundTruth(
            root_causes=(_daemonset(SYSTEM, agent),),
            mechanism="node_failure",
            detail=f"the privileged DaemonSet {agent} on {GEO_NODE} runs `systemctl stop kubelet` on the host "
                   "(through /run/systemd and nsenter): the kubelet stopped posting node status, the node is "
                   "NotReady/Unknown and its pods are NotReady, then Terminating",
            detail_keywords=(agent, "systemctl stop kubelet", "kubelet", "stopped", GEO_NODE, "notready",
                             "unknown", "nodestatusunknown"),
            affected=_node_affected, impact_keywords=IMPACT,
            description="A host agent stopped the kubelet of the node running geo, search, rate, profile and "
                        "consul; their pods lost their endpoints and cannot be replaced while stranded there."),
        mitigation=_lost_node_mitigation(),
        gold=_give_up_node(agent),
    )


# ====================================================== 2. node memory pressure
@problem
def node_memory_pressure_evictions() -> Problem:
    """A batch Deployment `nightly-report-builder` in namespace `analytics` runs three workers
    that each request 15.5Gi and hold ~15.4Gi: one fits on each 16Gi worker, and each pushes
    its node below the kubelet's `memory.available<100Mi` eviction threshold.

    Every worker reports MemoryPressure and is tainted `node.kubernetes.io/memory-pressure`; the
    kubelet evicts the pods using the most memory above their requests — the MongoDB databases
    first (`The node was low on resource: memory. ...`) — and their replacements stay Pending
    ("3 node(s) had untolerated taint {node.kubernetes.io/memory-pressure: }"). The workers
    themselves use less than they request and are never evicted. Fix: scale the batch job down
    (or lower its memory); the pressure condition clears after the kubelet's 5-minute
    transition period and the Pending pods start.
    """
    return Problem(
        id="hotel-reservation/node-memory-pressure-evictions-v1",
        title="databases evicted; their replacements stay Pending",
        app=APP, namespace=NS,
        tags=Tags(layers=("os",), difficulty="medium", suites=()),
        faults=(FaultSpec(fault="memory_hog", params={"name": HOG, "namespace": HOG_NS}),),
        ground_truth=GroundTruth(
            root_causes=(deployment_cause(HOG_NS, HOG),),
            mechanism="memory_pressure",
            detail=f"Deployment {HOG_NS}/{HOG}: 3 replicas each requesting 15.5Gi and holding ~15.4Gi leave "
                   "every worker below memory.available<100Mi: MemoryPressure, evictions, memory-pressure taint",
            detail_keywords=(HOG, HOG_NS, "memorypressure", "memory pressure", "evicted", "15.5gi",
                             "memory.available", "memory-pressure"),
            affected=(_deploy("mongodb-geo"), _deploy("mongodb-profile"), _deploy("mongodb-rate"),
                      _deploy("mongodb-recommendation"), _deploy("frontend")),
            impact_keywords=IMPACT,
            description="A memory-hungry batch job drives every worker into memory pressure; the kubelets "
                        "evict the databases and the replacements cannot be scheduled."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="nodes_without_pressure"),
                      CheckSpec(check="workloads_ready", params={"names": [
                          "mongodb-geo", "mongodb-profile", "mongodb-rate", "mongodb-recommendation"]})),
            # The pressure condition clears 5 minutes after the last threshold crossing.
            window_s=600.0),
        gold=(Action(op="patch", kind="Deployment", namespace=HOG_NS, name=HOG, patch_type="merge",
                     patch={"spec": {"replicas": 0}}),),
    )


# ============================================================== 3. clock drift
@problem
def node_clock_set_back() -> Problem:
    """A privileged DaemonSet `time-sync-agent` in kube-system, pinned to the node that runs
    geo (kind-worker), shares the host's PID namespace and every minute runs
    `nsenter -t 1 -m -u -i -n -p -- date -s "$FALLBACK_TIME"` with a stale fallback time a year
    in the past.

    The node's clock is now before the API server certificate's NotBefore: the kubelet's TLS
    handshakes fail (`x509: certificate has expired or is not yet valid: current time ... is
    before ...` in `journalctl -u kubelet`), it renews no lease and posts no status, so the node
    goes Unknown and its pods NotReady and later Terminating, as for a stopped kubelet — but
    `systemctl status kubelet` shows it running. Pods on the node print the wrong date and
    node-exporter's `node_timex_offset_seconds` shows the offset (about -1 year). Fix: delete the
    agent and give the node up (out-of-service taint); the node team resets the clock
    (`hwclock --hctosys`) and the kubelet reconnects. The durability check repairs the node: an
    agent left running sets the clock back again.
    """
    agent = "time-sync-agent"
    return Problem(
        id="hotel-reservation/node-clock-set-back-v1",
        title="searches fail; a worker node went NotReady although its kubelet is running",
        app=APP, namespace=NS,
        tags=Tags(layers=("os", "hardware"), difficulty="hard", suites=(), sources=("sregym:node_clock_drift_hotel_reservation",)),
        faults=(_agent_on_geo_node(agent, 'nsenter -t 1 -m -u -i -n -p -- date -s "$FALLBACK_TIME"',
                                   {"FALLBACK_TIME": FALLBACK_TIME}),),
        ground_truth=GroundTruth(
            root_causes=(_daemonset(SYSTEM, agent),),
            mechanism="clock_skew",
            detail=f"the privileged DaemonSet {agent} on {GEO_NODE} sets the node clock to {FALLBACK_TIME} "
                   "(date -s via nsenter): before the API server certificate's NotBefore, the kubelet's TLS "
                   "fails with x509 certificate has expired or is not yet valid, the node goes NotReady",
            detail_keywords=(agent, "date -s", "clock", "x509", "not yet valid", FALLBACK_TIME, "2025",
                             "time", "certificate"),
            affected=_node_affected, impact_keywords=IMPACT,
            description="A host agent set the clock of the node running geo, search, rate, profile and consul "
                        "a year back; its kubelet can no longer talk to the API server."),
        mitigation=_lost_node_mitigation(),
        gold=_give_up_node(agent),
    )
