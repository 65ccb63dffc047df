"""The replay twin: a real snapshot export served as a frozen, read-only cluster, and the live
tools (the real kubectl, alerts, LogQL, Jaeger, PromQL) answering from the snapshot's files."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from sregym.errors import Forbidden
from sregym.snapshot.export import export_snapshot
from sregym.snapshot.output import load_output
from sregym.snapshot.replay import SnapshotReplay, read_only_refusal, replay_attempt, run_baseline
from sregym.snapshot.replay_load import load_twin
from sregym.snapshot.tsv import read_tsv
from sregym.tools import render
from sregym.twin.clock import parse_time

PROBLEM = "hotel-reservation/crashing-image-geo-v1"
NS = "hotel-reservation"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_snapshot(PROBLEM, tmp_path_factory.mktemp("replay") / "export", seed=0, window_s=300)


@pytest.fixture(scope="module")
def attempt(snapshot: Path):
    with replay_attempt(snapshot) as opened:
        yield opened


def objects(snapshot: Path, kind: str) -> list[dict]:
    return [json.loads(r["body"]) for r in read_tsv(snapshot / "k8s_objects.tsv")
            if r["phase"] == "snapshot" and r["object_kind"] == kind and r["namespace"] == NS]


def kubectl(attempt, command: str, stdin: str | None = None):
    session = attempt[0]
    args = {"command": command} if stdin is None else {"command": command, "stdin": stdin}
    return session.call("kubectl", args)


def expected_status(pod: dict) -> str:
    """The STATUS column kubectl prints, for the states this snapshot has."""
    for status in pod["status"].get("containerStatuses") or []:
        state = status.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            return state["waiting"]["reason"]
        if state.get("terminated", {}).get("reason"):
            return state["terminated"]["reason"]
    return pod["status"]["phase"]


def test_get_pods_wide_shows_the_snapshot_pods(snapshot: Path, attempt) -> None:
    result = kubectl(attempt, f"get pods -n {NS} -o wide")
    assert not result.is_error
    rows = {cols[0]: cols for cols in (line.split() for line in result.text.splitlines()[1:])}
    pods = {p["metadata"]["name"]: p for p in objects(snapshot, "Pod")}
    assert set(rows) == set(pods)
    for name, pod in pods.items():
        assert rows[name][2] == expected_status(pod), name
        assert pod["spec"]["nodeName"] in rows[name]
    # The fault is visible as it was at snapshot time: geo's new pod crash-loops.
    assert any(name.startswith("geo-") and cols[2] == "CrashLoopBackOff" for name, cols in rows.items())


def test_warning_events_and_sort(snapshot: Path, attempt) -> None:
    result = kubectl(attempt, f"get events -n {NS} --field-selector type=Warning --sort-by=.lastTimestamp")
    warnings = [r for r in read_tsv(snapshot / "k8s_events.tsv") if r["type"] == "Warning" and r["namespace"] == NS]
    assert warnings and not result.is_error
    lines = result.text.splitlines()[1:]
    assert len(lines) == len(warnings)
    for line, event in zip(lines, sorted(warnings, key=lambda r: r["timestamp"]), strict=True):
        assert f"{event['object_kind'].lower()}/{event['object_name']}" in line and event["reason"] in line


def test_jsonpath_and_json(snapshot: Path, attempt) -> None:
    result = kubectl(attempt, f"get deployments -n {NS} -o jsonpath="
                              """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.replicas}{"\\n"}{end}'""")
    got = dict(line.split("\t") for line in result.text.splitlines())
    assert got == {d["metadata"]["name"]: str(d["spec"]["replicas"]) for d in objects(snapshot, "Deployment")}
    # Metadata comes back verbatim (uid, resourceVersion, ownerReferences are evidence).
    geo = next(d for d in objects(snapshot, "Deployment") if d["metadata"]["name"] == "geo")
    served = json.loads(kubectl(attempt, f"get deployment geo -n {NS} -o json").text)
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "annotations"):
        assert served["metadata"][key] == geo["metadata"][key]
    assert served["status"] == geo["status"]


def test_logs_of_a_deployment(snapshot: Path, attempt) -> None:
    result = kubectl(attempt, f"logs deployment/frontend -n {NS} --tail=5")
    lines = [r["body"] for r in read_tsv(snapshot / "logs.tsv") if r["pod"].startswith("frontend-")]
    assert not result.is_error and len(lines) > 5
    assert result.text == "\n".join(lines[-5:])


def test_previous_logs_of_a_crash_looping_container(snapshot: Path, attempt) -> None:
    pod = next(p for p in objects(snapshot, "Pod") if p["metadata"]["name"].startswith("geo-")
               and p["status"]["containerStatuses"][0]["restartCount"] > 1)
    name = pod["metadata"]["name"]
    status = pod["status"]["containerStatuses"][0]
    started = parse_time((status.get("state", {}).get("running") or status["lastState"]["terminated"])["startedAt"])
    rows = [r for r in read_tsv(snapshot / "logs.tsv") if r["pod"] == name]
    before = [r["body"] for r in rows if parse_time(r["timestamp"]) < started]
    after = [r["body"] for r in rows if parse_time(r["timestamp"]) >= started]
    current = kubectl(attempt, f"logs {name} -n {NS}")
    previous = kubectl(attempt, f"logs {name} -n {NS} --previous")
    assert not current.is_error and not previous.is_error
    # The lines split at the current instance's start, as the kubelet keeps one log per instance.
    assert before and after
    assert current.text == "\n".join(after) and previous.text == "\n".join(before)


@pytest.mark.parametrize("command", [
    "delete deployment geo", "scale deployment geo --replicas=0", "rollout undo deployment/geo",
    "rollout restart deployment/geo", "patch service geo -p '{\"spec\":{\"selector\":null}}'",
    "label pod --all x=y", "annotate deployment geo a=b", "set image deployment/geo x=y",
    "create configmap x --from-literal=a=b", "replace -f -", "exec deployment/geo -- ls",
    "cp geo:/etc/hosts hosts", "wait --for=condition=Ready pod --all", "auth reconcile -f -",
])
def test_mutating_and_runtime_commands_are_refused(attempt, command: str) -> None:
    result = kubectl(attempt, f"{command} -n {NS}")
    assert result.is_error
    assert "read-only replay" in result.text or "frozen snapshot" in result.text


def test_apply_is_refused_and_nothing_changes(snapshot: Path, attempt) -> None:
    before = kubectl(attempt, f"get deployment geo -n {NS} -o json").text
    manifest = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": NS}})
    result = kubectl(attempt, "apply -f -", stdin=manifest)
    assert result.is_error and "read-only" in result.text
    assert kubectl(attempt, f"get deployment geo -n {NS} -o json").text == before
    assert kubectl(attempt, f"get configmap x -n {NS}").is_error


def test_read_only_commands_pass_the_filter() -> None:
    for command in ("get pods -A", "-n x describe pod p", "logs deploy/geo --previous", "top pods",
                    "auth can-i list pods", "rollout history deployment/geo", "explain pods.spec",
                    "api-resources", "events -n x", "config view"):
        assert read_only_refusal(command) is None, command


def test_store_refuses_writes_that_reach_it(snapshot: Path) -> None:
    """Belt and braces: a write that got past the kubectl filter is refused by the store."""
    twin, _info = load_twin(snapshot)
    with pytest.raises(Forbidden, match="read-only replay"):
        twin.delete("Deployment", NS, "geo")
    with pytest.raises(Forbidden, match="read-only replay"):
        twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": NS}})
    assert twin.try_get("Deployment", NS, "geo") is not None


def test_alerts_render_the_last_alert_file(snapshot: Path, attempt) -> None:
    last = sorted((snapshot / "alerts").glob("alerts_*.json"))[-1]
    alerts = json.loads(last.read_text())
    assert alerts
    result = attempt[0].call("get_alerts", {})
    assert result.text == render.alerts({"status": "success", "data": {"alerts": alerts}})
    brief = attempt[2]
    firing = [a for a in alerts if a["state"] == "firing"]
    assert len(brief.alerts) == len(firing) and brief.namespaces == (NS,)
    assert brief.started_at == json.loads((snapshot / "snapshot.json").read_text())["snapshot_time"]


def test_logql_over_the_snapshot_logs(snapshot: Path, attempt) -> None:
    rows = [r for r in read_tsv(snapshot / "logs.tsv") if r["pod"].startswith("geo-")]
    result = attempt[0].call("get_logs", {"query": f'{{namespace="{NS}", container="hotel-reserv-geo"}}',
                                          "since": "10m", "limit": 5000})
    assert result.text.splitlines()[0] == f"{len(rows)} lines:"
    filtered = attempt[0].call("get_logs", {"query": f'{{namespace="{NS}"}} |= "connection refused"',
                                            "since": "10m", "limit": 5000})
    wanted = [r for r in read_tsv(snapshot / "logs.tsv") if "connection refused" in r["body"]]
    assert filtered.text.splitlines()[0] == f"{len(wanted)} lines:"


def test_kernel_logs_are_node_sources(tmp_path: Path) -> None:
    snapshot = export_snapshot("hotel-reservation/disk-sector-errors-geo-v1", tmp_path / "disk", window_s=90)
    kernel = [r for r in read_tsv(snapshot / "logs.tsv") if r["source"] == "kernel"]
    assert kernel
    with replay_attempt(snapshot) as (session, _backend, _brief):
        result = session.call("get_logs", {"query": '{source="kernel"} |= "I/O error"', "since": "10m", "limit": 50})
    assert not result.is_error
    assert f'node="{kernel[-1]["node"]}", source="kernel"' in result.text
    assert kernel[-1]["body"] in result.text


def test_dependency_graph_and_traces(snapshot: Path, attempt) -> None:
    calls = json.loads((snapshot / "topology.json").read_text())["calls"]
    result = attempt[0].call("get_dependency_graph", {"since": "15m"})
    shown = {tuple(line.split(" (")[0].split(" -> ")) for line in result.text.splitlines()[1:]}
    assert shown and shown <= {(c["source"], c["target"]) for c in calls}
    traces = attempt[0].call("get_traces", {"service": "search", "limit": 3, "error_only": True})
    assert not traces.is_error and traces.text.startswith("3 traces")
    services = attempt[0].call("get_services", {})
    assert "frontend" in services.text


def test_promql_over_exported_series(snapshot: Path, attempt) -> None:
    rows = read_tsv(next((snapshot / "metrics").glob("deployment_hotel-reservation_geo.tsv")))
    name = rows[0]["metric_name"]
    result = attempt[0].call("promql_query", {"query": name})
    files = [f for f in (snapshot / "metrics").glob("deployment_*.tsv")
             if any(r["metric_name"] == name for r in read_tsv(f))]
    assert not result.is_error and result.text.startswith(f"{len(files)} series:")
    assert 'deployment="geo", namespace="hotel-reservation"} => 1' in result.text
    # Only exported series exist: the raw exporter families are not in a replay.
    raw = attempt[0].call("promql_query", {"query": "kube_deployment_spec_replicas"})
    assert raw.text.startswith("no data")


def test_time_never_moves(snapshot: Path, attempt) -> None:
    session, backend, _brief = attempt
    first = kubectl(attempt, f"get pods -n {NS}").text
    for _ in range(3):
        session.call("get_alerts", {})
    assert kubectl(attempt, f"get pods -n {NS}").text == first
    assert backend.now() == backend._replay.twin.clock.now and backend._replay.twin.clock.ticks == 0


def test_run_baseline_writes_a_valid_output_and_tears_down(snapshot: Path, tmp_path: Path) -> None:
    before = {t.name for t in threading.enumerate()}
    status = run_baseline(snapshot, tmp_path / "out" / "output.json", tmp_path / "out" / "trajectory.jsonl")
    assert status["ok"] and status["error"] is None and status["wall_s"] > 0
    output = load_output(tmp_path / "out" / "output.json")
    assert [str(r) for r in output.refs()] == [f"{NS}/Deployment/geo"]
    assert output.explanation and "CrashLoopBackOff" in output.explanation
    steps = [json.loads(line) for line in (tmp_path / "out" / "trajectory.jsonl").read_text().splitlines()]
    assert len(steps) == status["tool_calls"] and steps[-1]["tool"] == "submit_diagnosis"
    assert steps[0]["tool"] == "get_alerts" and all("output" in s for s in steps)
    leftover = {t.name for t in threading.enumerate() if t.name.startswith("sregym-api")} - before
    assert not leftover


def test_run_baseline_on_something_that_is_no_snapshot(tmp_path: Path) -> None:
    status = run_baseline(tmp_path, tmp_path / "output.json", tmp_path / "trajectory.jsonl")
    assert not status["ok"] and "snapshot.json" in status["error"]
    assert not (tmp_path / "output.json").exists()


def test_time_limit_ends_the_attempt(snapshot: Path, tmp_path: Path) -> None:
    status = run_baseline(snapshot, tmp_path / "output.json", tmp_path / "trajectory.jsonl", time_limit_s=0)
    assert not status["ok"] and "time limit" in status["error"]
    assert not (tmp_path / "output.json").exists()


def test_replay_serves_only_an_agent_credential(snapshot: Path) -> None:
    with SnapshotReplay(snapshot) as replay:
        assert set(replay._access.server.tokens.values()) == {"agent"}
        config = replay.kubeconfig.read_text()
        assert "admin" not in config
