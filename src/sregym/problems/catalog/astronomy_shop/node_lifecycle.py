"""Astronomy Shop problems below Kubernetes: a worker whose kubelet was stopped (SREGym's
`kubelet_crash`), the Hotel Reservation mechanism (`catalog/hotel_reservation/node_lifecycle.py`)
on the node that runs the shop's frontend.

SREGym stops the kubelet on every worker and has it restarted out of band. With the agent's
credential a node whose kubelet is down cannot be repaired (the kubelet is Kubernetes' only way
onto the node), so here one worker is lost and the fix is the on-call one: remove what stops the
kubelet, and give the node up (the out-of-service taint) so its pods run elsewhere. Placement is
deterministic: frontend, cart, valkey-cart and postgresql run on kind-worker for every seed.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.builders import object_cause
from sregym.problems.catalog.astronomy_shop.common import APP, IMPACT, SUITE, deploy
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import EntityRef, GroundTruth, RootCause, workload_aliases

SYSTEM = "kube-system"
AGENT = "node-tuning-agent"
FRONTEND_NODE = "kind-worker"  # where frontend, cart, valkey-cart and postgresql run
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
NODE_IMPACT = (*IMPACT, "down", "timeout", "notready", "pending", "terminating", "evicted", "degraded")


def _agent_cause() -> RootCause:
    return RootCause(entity=EntityRef(kind="DaemonSet", namespace=SYSTEM, name=AGENT),
                     aliases=workload_aliases("DaemonSet", SYSTEM, AGENT))


@problem
def kubelet_stopped_on_frontend_node() -> Problem:
    """A privileged DaemonSet `node-tuning-agent` in kube-system, pinned to the worker that runs
    the shop's frontend (kind-worker), runs `nsenter -t 1 ... systemctl stop kubelet` on the host
    every minute (SREGym `kubelet_crash`, on one worker).

    The kubelet stops renewing its lease: the node goes NotReady/Unknown ("Kubelet stopped
    posting node status."), is tainted unreachable, and its pods (frontend, cart, valkey-cart,
    postgresql, email, quote, accounting, llm) turn NotReady and drop out of their Services; after
    300 s they are marked for deletion but stay Terminating, since no kubelet confirms it. The
    shop's pages fail. Fix: delete the agent and give the node up (out-of-service taint, or
    force-delete its pods) so the pods run on the other workers; the durability check has the
    node team restart the kubelet, and an agent left running stops it again.
    """
    return Problem(
        id="astronomy-shop/kubelet-stopped-on-frontend-node-v1",
        title="the shop is down; a worker node is NotReady and its pods are stuck Terminating",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("os",), difficulty="hard", suites=(SUITE,), sources=("sregym:kubelet_crash",)),
        faults=(FaultSpec(fault="host_agent", params={
            "name": AGENT, "target_namespace": NAMESPACE, "target_labels": {"opentelemetry.io/name": "frontend"},
            "script": "nsenter -t 1 -m -u -i -n -p -- systemctl stop kubelet"}),),
        ground_truth=GroundTruth(
            root_causes=(_agent_cause(),), mechanism="node_failure",
            detail=f"the privileged DaemonSet {AGENT} on {FRONTEND_NODE} runs `systemctl stop kubelet` on the host: "
                   "the kubelet stopped posting node status, the node is NotReady/Unknown and its pods are "
                   "NotReady, then Terminating",
            detail_keywords=(AGENT, "systemctl stop kubelet", "kubelet", "stopped", FRONTEND_NODE, "notready",
                             "unknown"),
            affected=(object_cause(None, "Node", FRONTEND_NODE), deploy("frontend"),
                      deploy("cart"), deploy("valkey-cart"), deploy("postgresql")),
            impact_keywords=NODE_IMPACT,
            description="A host agent stopped the kubelet of the node running the frontend, cart and the shop's "
                        "databases; their pods lost their endpoints and cannot be replaced while stranded there."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="pods_not_stranded"),
                      CheckSpec(check="service_calls_succeed", params={"service": "frontend"})),
            durability=(CheckSpec(check="node_repair_holds"),),
            window_s=300.0),
        gold=(Action(op="delete", kind="DaemonSet", namespace=SYSTEM, name=AGENT),
              Action(op="patch", kind="Node", name=FRONTEND_NODE, patch_type="json",
                     patch=[{"op": "add", "path": "/spec/taints/-", "value": dict(OUT_OF_SERVICE)}])),
    )
