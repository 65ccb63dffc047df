"""Scheduler: placement, the exact FailedScheduling messages, back-off, affinity, priority and
preemption, asserted on scheduling-level facts (nodeName, conditions, events)."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.errors import Forbidden
from sregym.twin.twin import Twin

WORKERS = {"kind-worker", "kind-worker2", "kind-worker3"}
TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"


def make_pod(name: str, *, cpu: str | None = None, labels: dict[str, str] | None = None,
             **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    body = {"containers": [container], "terminationGracePeriodSeconds": 0, **spec}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": body}


def node_of(twin: Twin, name: str) -> str | None:
    return twin.get("pods", "default", name)["spec"].get("nodeName")


def scheduled_condition(twin: Twin, name: str) -> dict[str, Any]:
    pod = twin.get("pods", "default", name)
    return next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")


def failed_scheduling(twin: Twin, name: str) -> list[dict[str, Any]]:
    return twin.event_list("default", reason="FailedScheduling", involved_name=name)


@pytest.fixture
def twin() -> Twin:
    return Twin(seed=3)


def test_pods_spread_over_workers_and_get_scheduled_event(twin: Twin) -> None:
    for i in range(3):
        twin.create(make_pod(f"web-{i}"))
    twin.advance(2)
    # Unowned pods are placed by resource scoring alone (no owner spreading): each lands on a
    # worker, never on the tainted control plane.
    nodes = {node_of(twin, f"web-{i}") for i in range(3)}
    assert nodes <= WORKERS and len(nodes) >= 2
    cond = scheduled_condition(twin, "web-0")
    assert cond["status"] == "True"
    events = twin.event_list("default", reason="Scheduled", involved_name="web-0")
    assert events[0]["message"] == f"Successfully assigned default/web-0 to {node_of(twin, 'web-0')}"
    assert events[0]["source"]["component"] == "default-scheduler"


def test_replicas_of_one_owner_spread_over_workers(twin: Twin) -> None:
    # Pods of one controller are spread (the default PodTopologySpread/SelectorSpread scoring).
    rs = twin.create({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "owner", "namespace": "default"}})
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
             "uid": rs["metadata"]["uid"], "controller": True}
    for i in range(3):
        pod = make_pod(f"rep-{i}", cpu="10m")
        pod["metadata"]["ownerReferences"] = [owner]
        twin.create(pod)
    twin.advance(2)
    assert {node_of(twin, f"rep-{i}") for i in range(3)} == WORKERS


def test_node_selector_without_match_gives_exact_message_and_backoff(twin: Twin) -> None:
    twin.create(make_pod("picky", nodeSelector={"disktype": "ssd"}))
    twin.advance(1)
    assert node_of(twin, "picky") is None
    expected = (f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match Pod's node affinity/selector. "
                "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    cond = scheduled_condition(twin, "picky")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", expected)
    events = failed_scheduling(twin, "picky")
    assert len(events) == 1 and events[0]["type"] == "Warning"
    assert events[0]["message"] == expected
    assert events[0]["source"]["component"] == "default-scheduler"
    # Retries back off 1, 2, 4, 8 then 10 s: attempts at +0, +1, +3, +7, +15, +25 within 30 s.
    twin.advance(29)
    assert failed_scheduling(twin, "picky")[0]["count"] == 6
    # Labelling a worker fixes it without touching the pod.
    twin.patch("nodes", None, "kind-worker2", {"metadata": {"labels": {"disktype": "ssd"}}})
    twin.advance(10)
    assert node_of(twin, "picky") == "kind-worker2"


def test_control_plane_only_pod_reports_untolerated_taint(twin: Twin) -> None:
    twin.create(make_pod("cp", nodeSelector={"node-role.kubernetes.io/control-plane": ""}))
    twin.advance(1)
    msg = scheduled_condition(twin, "cp")["message"]
    assert msg.startswith(f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match")
    # Tolerating the taint lets it land on the control plane.
    twin.create(make_pod("cp-ok", nodeSelector={"node-role.kubernetes.io/control-plane": ""},
                         tolerations=[{"key": "node-role.kubernetes.io/control-plane",
                                       "operator": "Exists", "effect": "NoSchedule"}]))
    twin.advance(1)
    assert node_of(twin, "cp-ok") == "kind-control-plane"


def test_insufficient_cpu_and_memory(twin: Twin) -> None:
    twin.create(make_pod("huge", cpu="5"))
    big = make_pod("bigmem")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "5", "memory": "64Gi"}}
    twin.create(big)
    twin.advance(1)
    assert scheduled_condition(twin, "huge")["message"] == (
        f"0/4 nodes are available: {TAINT}, 3 Insufficient cpu. preemption: 0/4 nodes are available: "
        "1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.")
    assert scheduled_condition(twin, "bigmem")["message"].startswith(
        f"0/4 nodes are available: {TAINT}, 3 Insufficient cpu, 3 Insufficient memory.")


def test_requests_accumulate_on_nodes(twin: Twin) -> None:
    for i in range(3):
        twin.create(make_pod(f"fill-{i}", cpu="3"))
    twin.advance(1)
    assert {node_of(twin, f"fill-{i}") for i in range(3)} == WORKERS
    twin.create(make_pod("late", cpu="1500m"))
    twin.advance(1)
    assert node_of(twin, "late") is None
    assert "3 Insufficient cpu" in scheduled_condition(twin, "late")["message"]
    # A finished pod no longer holds its requests.
    twin.store.mutate("Pod", "default", "fill-1", lambda p: p.setdefault("status", {}).update(phase="Succeeded"),
                      status=True)
    twin.advance(3)
    assert node_of(twin, "late") == node_of(twin, "fill-1")


def test_cordoned_nodes_and_host_ports(twin: Twin) -> None:
    for node in sorted(WORKERS - {"kind-worker"}):
        twin.patch("nodes", None, node, {"spec": {"unschedulable": True}})
    ports = [{"containerPort": 80, "hostPort": 8080}]
    first = make_pod("hp-1")
    first["spec"]["containers"][0]["ports"] = ports
    second = make_pod("hp-2")
    second["spec"]["containers"][0]["ports"] = ports
    twin.create(first)
    twin.create(second)
    twin.advance(1)
    assert node_of(twin, "hp-1") == "kind-worker"
    assert scheduled_condition(twin, "hp-2")["message"] == (
        f"0/4 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, {TAINT}, "
        "2 node(s) were unschedulable. preemption: 0/4 nodes are available: "
        "1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.")


def anti_affinity(app: str) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}


def test_required_anti_affinity_one_per_node(twin: Twin) -> None:
    for i in range(4):
        twin.create(make_pod(f"db-{i}", labels={"app": "db"}, affinity=anti_affinity("db")))
    twin.advance(1)
    placed = [node_of(twin, f"db-{i}") for i in range(3)]
    assert set(placed) == WORKERS
    assert node_of(twin, "db-3") is None
    assert scheduled_condition(twin, "db-3")["message"] == (
        f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod.")


def test_existing_pods_anti_affinity_repels_newcomers(twin: Twin) -> None:
    twin.create(make_pod("loner", labels={"app": "loner"}, nodeSelector={"kubernetes.io/hostname": "kind-worker"},
                         affinity=anti_affinity("noisy")))
    twin.advance(1)
    twin.create(make_pod("noisy", labels={"app": "noisy"}, nodeSelector={"kubernetes.io/hostname": "kind-worker"}))
    twin.advance(1)
    assert "1 node(s) didn't satisfy existing pods anti-affinity rules" in \
        scheduled_condition(twin, "noisy")["message"]


def test_required_pod_affinity(twin: Twin) -> None:
    twin.create(make_pod("cache", labels={"app": "cache"}, nodeSelector={"kubernetes.io/hostname": "kind-worker3"}))
    twin.advance(1)
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    twin.create(make_pod("near-cache", affinity=affinity))
    lonely = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "ghost"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    twin.create(make_pod("near-ghost", affinity=lonely))
    twin.advance(1)
    assert node_of(twin, "near-cache") == "kind-worker3"
    assert scheduled_condition(twin, "near-ghost")["message"] == (
        f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match pod affinity rules. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")


def test_required_node_affinity_and_match_fields(twin: Twin) -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["kind-worker3"]}]}]}}}
    twin.create(make_pod("pinned", affinity=affinity))
    twin.advance(1)
    assert node_of(twin, "pinned") == "kind-worker3"


def test_pods_for_other_schedulers_are_left_alone(twin: Twin) -> None:
    twin.create(make_pod("custom", schedulerName="my-scheduler"))
    twin.advance(3)
    pod = twin.get("pods", "default", "custom")
    assert pod["spec"].get("nodeName") is None
    assert not failed_scheduling(twin, "custom")


# ---------------------------------------------------------------- priority
def priority_class(name: str, value: int, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, **extra}


def test_priority_admission_resolves_classes(twin: Twin) -> None:
    twin.create(priority_class("high", 1000))
    pod = twin.create(make_pod("vip", priorityClassName="high"))
    assert pod["spec"]["priority"] == 1000
    assert pod["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    plain = twin.create(make_pod("plain"))
    assert plain["spec"]["priority"] == 0
    with pytest.raises(Forbidden) as err:
        twin.create(make_pod("lost", priorityClassName="foo"))
    assert err.value.message == 'pods "lost" is forbidden: no PriorityClass with name foo was found'
    assert err.value.code == 403
    twin.create(priority_class("default-prio", 7, globalDefault=True, preemptionPolicy="Never"))
    defaulted = twin.create(make_pod("defaulted"))
    assert (defaulted["spec"]["priorityClassName"], defaulted["spec"]["priority"],
            defaulted["spec"]["preemptionPolicy"]) == ("default-prio", 7, "Never")
    with pytest.raises(Forbidden):
        twin.create(priority_class("second-default", 8, globalDefault=True))
    with pytest.raises(Exception, match="maximum allowed value of a user defined priority"):
        twin.create(priority_class("too-high", 2_000_000_000))


def fill_workers(twin: Twin, priority_class_name: str | None = None) -> None:
    for i, node in enumerate(sorted(WORKERS)):
        extra: dict[str, Any] = {"nodeSelector": {"kubernetes.io/hostname": node}}
        if priority_class_name:
            extra["priorityClassName"] = priority_class_name
        twin.create(make_pod(f"low-{i}", cpu="3", **extra))
    twin.advance(1)


def test_higher_priority_pod_preempts_lower_priority_pod(twin: Twin) -> None:
    twin.create(priority_class("high", 1000))
    fill_workers(twin)
    vip = twin.create(make_pod("vip", cpu="2", priorityClassName="high"))
    twin.advance(1)
    preempted = twin.event_list("default", reason="Preempted")
    assert len(preempted) == 1
    victim_name = preempted[0]["involvedObject"]["name"]
    victim_node = next(n for i, n in enumerate(sorted(WORKERS)) if f"low-{i}" == victim_name)
    assert preempted[0]["message"] == f"Preempted by pod {vip['metadata']['uid']} on node {victim_node}"
    assert preempted[0]["source"]["component"] == "default-scheduler"
    pod = twin.get("pods", "default", "vip")
    assert pod["status"]["nominatedNodeName"] == victim_node
    assert twin.try_get("pods", "default", victim_name) is None
    twin.advance(2)
    assert node_of(twin, "vip") == victim_node
    # The other low-priority pods were left alone.
    assert len([p for p in twin.list("pods", "default") if p["metadata"]["name"].startswith("low-")]) == 2


def test_preemption_policy_never_does_not_preempt(twin: Twin) -> None:
    twin.create(priority_class("polite", 1000, preemptionPolicy="Never"))
    fill_workers(twin)
    twin.create(make_pod("polite-pod", cpu="2", priorityClassName="polite"))
    twin.advance(1)
    assert not twin.event_list("default", reason="Preempted")
    assert scheduled_condition(twin, "polite-pod")["message"] == (
        f"0/4 nodes are available: {TAINT}, 3 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never.")


def test_equal_priority_cannot_preempt_and_queue_orders_by_priority(twin: Twin) -> None:
    twin.create(priority_class("high", 1000))
    fill_workers(twin, "high")
    twin.create(make_pod("peer", cpu="2", priorityClassName="high"))
    twin.advance(1)
    assert not twin.event_list("default", reason="Preempted")
    # The workers' only lower-priority pods are the monitoring stack's (no requests): evicting them
    # all still leaves too little CPU, so preemption reports the filter's reason, as upstream does.
    assert scheduled_condition(twin, "peer")["message"].endswith(
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
        "3 Insufficient cpu.")


def test_same_seed_same_schedule() -> None:
    def run() -> str:
        t = Twin(seed=11)
        for i in range(6):
            t.create(make_pod(f"p-{i}", cpu="500m", labels={"app": "x"}))
        t.create(make_pod("nowhere", nodeSelector={"zone": "mars"}))
        t.advance(15)
        return t.dump()

    assert run() == run()


def test_scheduling_gates_hold_the_pod_until_removed(twin: Twin) -> None:
    twin.create(make_pod("gated", schedulingGates=[{"name": "example.com/wait"}]))
    twin.advance(5)
    cond = scheduled_condition(twin, "gated")
    assert (cond["reason"], cond["message"]) == (
        "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    assert not failed_scheduling(twin, "gated")
    twin.store.mutate("Pod", "default", "gated", lambda p: p["spec"].pop("schedulingGates"))
    twin.advance(1)
    assert node_of(twin, "gated") in WORKERS
