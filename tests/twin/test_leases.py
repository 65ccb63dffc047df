"""Background churn: node leases, leader election, API server identity and node heartbeats.

A real cluster writes these all the time; without them the newest resourceVersion in the twin
points at whatever a fault just touched. These tests pin the real names, fields and cadences.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from sregym.twin import Twin
from sregym.twin.clock import parse_time
from sregym.twin.controllers.leases import ROUND_TRIP_S, apiserver_identity
from sregym.twin.topology import NodeSpec, node_object

NODES = ("kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3")


def _renewals(twin: Twin, namespace: str, seconds: float) -> dict[str, list[float]]:
    """renewTime of every Lease write in `namespace` over the next `seconds`, by lease name."""
    times: dict[str, list[float]] = defaultdict(list)
    with twin.store.watch("leases", namespace) as watch:
        twin.advance(seconds)
        for event in watch.drain():
            times[event.object["metadata"]["name"]].append(parse_time(event.object["spec"]["renewTime"]))
    return times


def test_every_kubelet_renews_its_node_lease_every_ten_seconds() -> None:
    twin = Twin(seed=3)
    times = _renewals(twin, "kube-node-lease", 120)
    assert sorted(times) == list(NODES)
    for node in NODES:
        lease = twin.get("leases", "kube-node-lease", node)
        uid = twin.get("nodes", None, node)["metadata"]["uid"]
        assert lease["spec"]["holderIdentity"] == node
        assert lease["spec"]["leaseDurationSeconds"] == 40
        assert lease["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": node,
                                                         "uid": uid}]
        # renewTime is a MicroTime.
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", lease["spec"]["renewTime"])
        gaps = [b - a for a, b in zip(times[node], times[node][1:], strict=False)]
        assert len(gaps) >= 10
        # 0.25 × 40 s, jittered by up to 4 %, plus the update's round trip.
        assert all(10.0 <= g <= 10.4 + ROUND_TRIP_S[1] + 1e-3 for g in gaps), gaps
    # The kubelets did not start in lockstep: their renewals fall at different moments.
    assert len({round(times[n][-1] % 10, 1) for n in NODES}) > 1


def test_leader_elected_components_renew_every_retry_period() -> None:
    twin = Twin(seed=3)
    acquired = {n: twin.get("leases", "kube-system", n)["spec"]["acquireTime"]
                for n in ("kube-controller-manager", "kube-scheduler")}
    times = _renewals(twin, "kube-system", 60)
    for name in ("kube-controller-manager", "kube-scheduler"):
        spec = twin.get("leases", "kube-system", name)["spec"]
        assert re.fullmatch(r"kind-control-plane_[0-9a-f-]{36}", spec["holderIdentity"])
        assert spec["leaseDurationSeconds"] == 15
        assert spec["leaseTransitions"] == 0
        assert spec["acquireTime"] == acquired[name]  # renewing never re-acquires
        gaps = [b - a for a, b in zip(times[name], times[name][1:], strict=False)]
        assert len(gaps) >= 25
        assert all(2.0 < g <= 2.0 + ROUND_TRIP_S[1] + 1e-3 for g in gaps), gaps
        # Acquiring the lease was announced the way a kind cluster shows it.
        events = [e for e in twin.event_list("kube-system", reason="LeaderElection")
                  if e["involvedObject"]["name"] == name]
        assert [e["message"] for e in events] == [f"{spec['holderIdentity']} became leader"]
        assert events[0]["involvedObject"]["kind"] == "Lease"
    sources = {e["source"]["component"] for e in twin.event_list("kube-system", reason="LeaderElection")}
    assert sources == {"kube-controller-manager", "default-scheduler"}


def test_the_api_server_publishes_its_identity_lease() -> None:
    twin = Twin(seed=3)
    name = apiserver_identity("kind-control-plane")
    assert re.fullmatch(r"apiserver-[a-z2-7]{26}", name)
    assert apiserver_identity("kind-control-plane2") != name
    times = _renewals(twin, "kube-system", 60)
    lease = twin.get("leases", "kube-system", name)
    assert lease["metadata"]["labels"] == {"apiserver.kubernetes.io/identity": "kube-apiserver",
                                           "kubernetes.io/hostname": "kind-control-plane"}
    assert lease["spec"]["leaseDurationSeconds"] == 3600
    assert lease["spec"]["holderIdentity"].startswith(f"{name}_")
    assert 5 <= len(times[name]) <= 6  # every 10 s


def test_a_node_lease_follows_its_node() -> None:
    twin = Twin(seed=3)
    twin.create(node_object(NodeSpec("kind-worker4"), 4, twin.clock.iso()))
    twin.advance(2)
    lease = twin.get("leases", "kube-node-lease", "kind-worker4")
    assert lease["metadata"]["ownerReferences"][0]["uid"] == twin.get("nodes", None, "kind-worker4")["metadata"]["uid"]
    # Replaced between two ticks (the node count does not change): the new kubelet takes over.
    twin.delete("nodes", None, "kind-worker4")
    twin.create(node_object(NodeSpec("kind-worker5"), 5, twin.clock.iso()))
    twin.advance(30)
    assert twin.try_get("leases", "kube-node-lease", "kind-worker4") is None
    assert twin.get("leases", "kube-node-lease", "kind-worker5")["spec"]["holderIdentity"] == "kind-worker5"
    # Someone deleting a live node's lease: the kubelet recreates it on its next renewal.
    twin.delete("leases", "kube-node-lease", "kind-worker")
    twin.advance(11)
    assert twin.get("leases", "kube-node-lease", "kind-worker")["spec"]["holderIdentity"] == "kind-worker"


def test_kubelets_report_node_status_every_five_minutes() -> None:
    twin = Twin(seed=3)
    beats: dict[str, list[float]] = defaultdict(list)
    with twin.store.watch("nodes") as watch:
        twin.advance(1500)
        for event in watch.drain():
            conditions = event.object["status"]["conditions"]
            stamps = {c["lastHeartbeatTime"] for c in conditions}
            assert len(stamps) == 1  # one report refreshes every condition
            at = parse_time(stamps.pop())
            name = event.object["metadata"]["name"]
            if not beats[name] or beats[name][-1] != at:
                beats[name].append(at)
    assert sorted(beats) == list(NODES)
    firsts = []
    for node in NODES:
        # The first report after start waits 5 min ± 2.5 min, the following ones 5 min each
        # (checked every 10 s, so up to one jittered sync period late).
        assert 4 <= len(beats[node]) <= 6, beats[node]
        gaps = [b - a for a, b in zip(beats[node], beats[node][1:], strict=False)]
        assert all(300 <= g <= 300 + 10.4 + 1 for g in gaps), gaps
        firsts.append(beats[node][0])
    assert len(set(firsts)) > 1  # nodes do not report in lockstep


def test_same_seed_same_churn() -> None:
    def run(seed: int) -> Twin:
        twin = Twin(seed=seed)
        twin.advance(400)
        return twin

    a, b, c = run(11), run(11), run(12)
    assert a.dump() == b.dump()
    assert a.store.resource_version == b.store.resource_version
    renew = {t.get("leases", "kube-node-lease", "kind-worker")["spec"]["renewTime"] for t in (a, c)}
    assert len(renew) == 2  # a different seed moves the phases


@pytest.mark.parametrize("seconds", [30, 90])
def test_the_newest_write_is_background_churn_when_nothing_else_happens(seconds: int) -> None:
    """The point of the churn: after a quiet spell, the objects written last are leases."""
    twin = Twin(seed=3)
    twin.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "namespace": "default"},
                "data": {"k": "v"}})
    twin.advance(seconds)
    newest = sorted(((int(o["metadata"]["resourceVersion"]), k.kind, o["metadata"]["name"])
                     for k, o in twin.store.all_objects() if k.kind != "Event"), reverse=True)
    rank = [name for _, _, name in newest].index("app") + 1
    assert rank > len(NODES) + 3  # every node lease, both leader leases and the identity lease
