"""PodChaos: pod-kill, container-kill, pod-failure; records, conditions, finalizer."""

from __future__ import annotations

from sregym.twin import Twin
from sregym.twin.chaos.actions import PAUSE_IMAGE
from support.chaos_web import chaos, ready_pods


def _status(twin: Twin, kind: str, name: str) -> dict:
    return twin.get(kind, "chaos-mesh", name).get("status") or {}


def _conds(status: dict) -> dict[str, str]:
    return {c["type"]: c["status"] for c in status.get("conditions") or []}


def test_pod_kill_deletes_and_deployment_recreates(twin: Twin) -> None:
    before = {p["metadata"]["name"] for p in ready_pods(twin)}
    twin.create(chaos("PodChaos", "kill-one", {
        "action": "pod-kill", "mode": "one",
        "selector": {"namespaces": ["default"], "labelSelectors": {"app": "web"}}}))
    twin.advance(1)
    status = _status(twin, "PodChaos", "kill-one")
    records = status["experiment"]["containerRecords"]
    assert len(records) == 1 and records[0]["phase"] == "Injected" and records[0]["injectedCount"] == 1
    victim = records[0]["id"].split("/", 1)[1]
    assert victim in before
    assert twin.try_get("pods", "default", victim) is None
    assert _conds(status)["AllInjected"] == "True"
    assert twin.settle(60, until=lambda: len(ready_pods(twin)) == 4)
    after = {p["metadata"]["name"] for p in ready_pods(twin)}
    assert victim not in after and len(after - before) == 1
    # One-shot: it never kills again while the CR exists.
    twin.advance(30)
    assert {p["metadata"]["name"] for p in ready_pods(twin)} == after


def test_container_kill_restarts_container(twin: Twin) -> None:
    target = ready_pods(twin)[0]["metadata"]["name"]
    twin.create(chaos("PodChaos", "ck", {
        "action": "container-kill", "mode": "all", "containerNames": ["nginx"],
        "selector": {"pods": {"default": [target]}}}))
    twin.advance(2)
    pod = twin.get("pods", "default", target)
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert statuses["nginx"]["restartCount"] == 1
    assert statuses["nginx"]["lastState"]["terminated"]["exitCode"] == 137
    assert statuses["sidecar"]["restartCount"] == 0
    records = _status(twin, "PodChaos", "ck")["experiment"]["containerRecords"]
    assert [r["id"] for r in records] == [f"default/{target}/nginx"]


def test_pod_failure_not_ready_then_recovers_on_delete(twin: Twin) -> None:
    twin.create(chaos("PodChaos", "pf", {
        "action": "pod-failure", "mode": "fixed", "value": "2",
        "selector": {"namespaces": ["default"], "labelSelectors": {"app": "web"}}}))
    twin.advance(1)
    records = _status(twin, "PodChaos", "pf")["experiment"]["containerRecords"]
    victims = [r["id"].split("/", 1)[1] for r in records]
    assert len(victims) == 2
    pod = twin.get("pods", "default", victims[0])
    assert pod["spec"]["containers"][0]["image"] == PAUSE_IMAGE
    assert pod["metadata"]["annotations"]["chaos-mesh-pf-pod-failure-nginx-image"] == "nginx:1.27"
    twin.advance(15)
    assert len(ready_pods(twin)) == 2
    assert all(p["metadata"]["name"] not in victims for p in ready_pods(twin))
    cr = twin.get("PodChaos", "chaos-mesh", "pf")
    assert "chaos-mesh/records" in cr["metadata"]["finalizers"]
    twin.delete("PodChaos", "chaos-mesh", "pf")
    twin.advance(1)
    assert twin.try_get("PodChaos", "chaos-mesh", "pf") is None  # finalizer removed after recovery
    pod = twin.get("pods", "default", victims[0])
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert "chaos-mesh-pf-pod-failure-nginx-image" not in (pod["metadata"].get("annotations") or {})
    assert twin.settle(90, until=lambda: len(ready_pods(twin)) == 4)
    restarted = twin.get("pods", "default", victims[0])["status"]["containerStatuses"][0]
    assert restarted["restartCount"] == 2  # the kubelet restarts it once into pause, once back


def test_duration_expiry_recovers_and_records_phases(twin: Twin) -> None:
    twin.create(chaos("PodChaos", "pf-short", {
        "action": "pod-failure", "mode": "one", "duration": "20s",
        "selector": {"namespaces": ["default"], "labelSelectors": {"app": "web"}}}))
    twin.advance(2)
    status = _status(twin, "PodChaos", "pf-short")
    assert status["experiment"]["desiredPhase"] == "Run"
    twin.advance(25)
    status = _status(twin, "PodChaos", "pf-short")
    record = status["experiment"]["containerRecords"][0]
    assert status["experiment"]["desiredPhase"] == "Stop"
    assert record["phase"] == "Not Injected" and record["recoveredCount"] == 1
    assert [e["operation"] for e in record["events"]] == ["Apply", "Recover"]
    assert _conds(status) == {"AllInjected": "False", "AllRecovered": "True", "Paused": "False",
                              "Selected": "True"}
    name = record["id"].split("/", 1)[1]
    assert twin.get("pods", "default", name)["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_pause_annotation_recovers_and_resume_reinjects(twin: Twin) -> None:
    twin.create(chaos("PodChaos", "pf-pause", {
        "action": "pod-failure", "mode": "one",
        "selector": {"namespaces": ["default"], "labelSelectors": {"app": "web"}}}))
    twin.advance(1)
    twin.patch("PodChaos", "chaos-mesh", "pf-pause",
               {"metadata": {"annotations": {"experiment.chaos-mesh.org/pause": "true"}}}, patch_type="merge")
    twin.advance(1)
    status = _status(twin, "PodChaos", "pf-pause")
    assert _conds(status)["Paused"] == "True"
    assert status["experiment"]["containerRecords"][0]["phase"] == "Not Injected"
    twin.patch("PodChaos", "chaos-mesh", "pf-pause",
               {"metadata": {"annotations": {"experiment.chaos-mesh.org/pause": "false"}}}, patch_type="merge")
    twin.advance(1)
    record = _status(twin, "PodChaos", "pf-pause")["experiment"]["containerRecords"][0]
    assert record["phase"] == "Injected" and record["injectedCount"] == 2


def test_modes_select_counts_deterministically(twin: Twin) -> None:
    sel = {"namespaces": ["default"], "labelSelectors": {"app": "web"}}
    for name, mode, value in (("m-one", "one", None), ("m-fixed", "fixed", "3"),
                              ("m-pct", "fixed-percent", "50"), ("m-all", "all", None)):
        spec = {"action": "delay", "mode": mode, "selector": sel, "delay": {"latency": "10ms"}}
        if value is not None:
            spec["value"] = value
        twin.create(chaos("NetworkChaos", name, spec))
    twin.advance(1)
    picks = {}
    for name, expected in (("m-one", 1), ("m-fixed", 3), ("m-pct", 2), ("m-all", 4)):
        records = _status(twin, "NetworkChaos", name)["experiment"]["containerRecords"]
        assert len(records) == expected
        picks[name] = [r["id"] for r in records]
    # Same seed, same picks.
    from sregym.twin.chaos import install_chaos_mesh
    from support.chaos_web import WEB

    other = Twin(seed=11)
    install_chaos_mesh(other)
    other.apply(WEB)
    other.settle(60, until=lambda: len(ready_pods(other)) == 4)
    # Replay the same tick-for-tick history as the fixture (settle stops at the same tick).
    assert [p["metadata"]["name"] for p in ready_pods(other)] == [p["metadata"]["name"] for p in
                                                                   twin.list("pods", "default")]
    for name, mode, value in (("m-one", "one", None), ("m-fixed", "fixed", "3"),
                              ("m-pct", "fixed-percent", "50"), ("m-all", "all", None)):
        spec = {"action": "delay", "mode": mode, "selector": sel, "delay": {"latency": "10ms"}}
        if value is not None:
            spec["value"] = value
        other.create(chaos("NetworkChaos", name, spec))
    other.advance(1)
    for name, ids in picks.items():
        assert [r["id"] for r in _status(other, "NetworkChaos", name)["experiment"]["containerRecords"]] == ids


def test_nothing_selected_is_not_selected(twin: Twin) -> None:
    twin.create(chaos("PodChaos", "none", {
        "action": "pod-kill", "mode": "one",
        "selector": {"namespaces": ["default"], "labelSelectors": {"app": "missing"}}}))
    twin.advance(1)
    status = _status(twin, "PodChaos", "none")
    assert _conds(status)["Selected"] == "False"
    assert any(e["reason"] == "Failed" and "no target has been selected" in e["message"]
               for e in twin.event_list("chaos-mesh"))
    twin.delete("PodChaos", "chaos-mesh", "none")
    twin.advance(1)
    assert twin.try_get("PodChaos", "chaos-mesh", "none") is None
