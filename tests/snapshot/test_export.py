"""Snapshot export: layout, content, isolation, determinism and the `sregym snapshot export` CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.faults import FAULTS
from sregym.problems import get_problem
from sregym.snapshot import layout
from sregym.snapshot.export import export_snapshot
from sregym.snapshot.tsv import format_tsv, read_tsv, write_tsv
from sregym.types import GroundTruth

NETPOL = "hotel-reservation/network-policy-deny-all-v1"  # a NetworkPolicy object
# An exec into MongoDB, a Chaos Mesh IOChaos experiment, a mutating and a validating admission webhook.
ISOLATION = ("hotel-reservation/mongodb-role-revoked-geo-v1", "hotel-reservation/disk-sector-errors-geo-v1",
             "hotel-reservation/mutating-webhook-memory-limits-v1", "hotel-reservation/validating-webhook-outage-v1")
WINDOW_S = 300.0
BASELINE_S = 120.0
runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def netpol(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("netpol")
    export_snapshot(NETPOL, out, seed=0, noise="low", window_s=WINDOW_S, baseline_s=BASELINE_S)
    return out


# -------------------------------------------------------------------- TSV
def test_tsv_escaping_round_trips(tmp_path: Path) -> None:
    values = ["tab\there", "line\nbreak", "back\\slash \\n literal", "cr\rend", "", "plain"]
    path = write_tsv(tmp_path / "x.tsv", ("a", "b"), [(v, str(i)) for i, v in enumerate(values)])
    text = path.read_text()
    assert text.count("\n") == len(values) + 1  # one record per line
    assert "\\t" in text and "\\\\n" in text
    assert [r["a"] for r in read_tsv(path)] == values
    with pytest.raises(ValueError, match="expected 2"):
        format_tsv(("a", "b"), [("only one",)])


# ----------------------------------------------------------------- layout
def test_snapshot_has_documented_layout(netpol: Path) -> None:
    snap = netpol / "snapshot"
    assert {p.name for p in snap.iterdir()} == {
        "README.md", "snapshot.json", "app.json", "topology.json", "alerts", "metrics", "k8s_events.tsv",
        "k8s_objects.tsv", "logs.tsv", "traces.tsv"}
    assert (snap / "README.md").read_text() == layout.README_TEXT
    meta = json.loads((snap / "snapshot.json").read_text())
    assert meta["format"] == "sregym-snapshot/1" and meta["namespaces"] == ["hotel-reservation"]
    assert meta["app"] == "hotel-reservation" and meta["snapshot_time"] == meta["window"]["end"]
    fmt = "%Y-%m-%dT%H:%M:%SZ"


    start, end = (datetime.strptime(meta["window"][k], fmt) for k in ("start", "end"))
    assert (end - start).total_seconds() == WINDOW_S
    assert datetime.strptime(meta["baseline_time"], fmt) <= start
    # One alert list at the window start and one per minute up to snapshot time.
    alerts = sorted(p.name for p in (snap / "alerts").iterdir())
    assert len(alerts) == WINDOW_S / 60 + 1
    assert alerts[-1] == "alerts_" + meta["snapshot_time"].replace("-", "").replace(":", "") + ".json"
    for name, columns in (("k8s_events.tsv", layout.EVENT_COLUMNS), ("k8s_objects.tsv", layout.OBJECT_COLUMNS),
                          ("logs.tsv", layout.LOG_COLUMNS), ("traces.tsv", layout.TRACE_COLUMNS)):
        assert (snap / name).read_text().split("\n", 1)[0] == "\t".join(columns)
    for path in (snap / "metrics").iterdir():
        assert re.fullmatch(r"(pod|deployment|service|node)_[a-z0-9-_]+_[a-z0-9.-]+\.tsv", path.name), path.name
    # JSON files are sorted, indented and end with a newline.
    text = (snap / "app.json").read_text()
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_app_and_ground_truth(netpol: Path) -> None:
    app_doc = json.loads((netpol / "snapshot" / "app.json").read_text())
    assert app_doc["entry_point"] == {"service": "frontend", "port": 5000}
    assert {"frontend", "recommendation", "geo"} <= set(app_doc["services"])
    assert {"source": "frontend", "target": "recommendation"} in app_doc["architecture"]  # seen while healthy
    gt = json.loads((netpol / "ground_truth.json").read_text())
    assert gt["format"] == "sregym-ground-truth/1" and gt["problem"] == NETPOL and gt["seed"] == 0
    assert gt["noise"] == "low"
    assert gt["root_causes"] == [{"kind": "NetworkPolicy", "namespace": "hotel-reservation",
                                  "name": "recommendation-isolation"}]
    assert GroundTruth.model_validate(gt["ground_truth"]) == get_problem(NETPOL).ground_truth


def test_objects_show_the_change_between_baseline_and_snapshot(netpol: Path) -> None:
    rows = read_tsv(netpol / "snapshot" / "k8s_objects.tsv")
    policies = [(r["phase"], r["object_name"]) for r in rows if r["object_kind"] == "NetworkPolicy"]
    assert policies == [("snapshot", "recommendation-isolation")]
    body = json.loads(next(r["body"] for r in rows if r["object_kind"] == "NetworkPolicy"))
    assert body["metadata"]["namespace"] == "hotel-reservation" and "spec" in body
    kinds = {r["object_kind"] for r in rows}
    assert {"Pod", "Deployment", "ReplicaSet", "Service", "ConfigMap", "Node", "Namespace"} <= kinds
    assert "Event" not in kinds
    phases = [r["phase"] for r in rows]
    assert phases == sorted(phases)  # baseline rows first
    assert not [r for r in rows if r["namespace"] in ("chaos-mesh", "sregym-system")]


def test_alerts_fire_during_the_window(netpol: Path) -> None:
    files = sorted((netpol / "snapshot" / "alerts").iterdir())
    last = json.loads(files[-1].read_text())
    assert any(a["state"] == "firing" for a in last)
    for alert in last:
        assert {"labels", "annotations", "state", "activeAt", "value"} <= set(alert)


def test_metrics_per_entity(netpol: Path) -> None:
    metrics = netpol / "snapshot" / "metrics"
    front = read_tsv(metrics / "service_hotel-reservation_frontend.tsv")
    families = {r["metric_name"] for r in front}
    assert any("traces_span_metrics_calls_total" in f and "STATUS_CODE_ERROR" in f for f in families)
    errors = [float(r["value"]) for r in front if "STATUS_CODE_ERROR" in r["metric_name"]]
    assert max(errors) > 0  # recommendations time out behind the policy
    steps = sorted({r["timestamp"] for r in front})
    meta = json.loads((netpol / "snapshot" / "snapshot.json").read_text())
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    start, end = (datetime.strptime(meta["history"][k], fmt) for k in ("start", "end"))
    assert len(steps) == (end - start).total_seconds() // layout.METRIC_STEP_S + 1
    assert (end - start).total_seconds() > WINDOW_S  # the healthy minutes before the fault too
    pods = [p for p in metrics.iterdir() if p.name.startswith("pod_hotel-reservation_recommendation-")]
    assert pods
    cpu = [r for r in read_tsv(pods[0]) if "container_cpu_usage_seconds_total" in r["metric_name"]]
    assert cpu and json.loads(cpu[0]["labels"])["namespace"] == "hotel-reservation"
    assert (metrics / "deployment_hotel-reservation_recommendation.tsv").exists()
    assert (metrics / "node___kind-worker.tsv").exists()
    # Nothing of the benchmark machinery (load generator, chaos daemons).
    assert not [p for p in metrics.iterdir() if "sregym-system" in p.name or "chaos" in p.name]


def test_logs_traces_events_and_topology(netpol: Path) -> None:
    snap = netpol / "snapshot"
    meta = json.loads((snap / "snapshot.json").read_text())
    logs = read_tsv(snap / "logs.tsv")
    assert logs and all(meta["history"]["start"][:19] <= r["timestamp"][:19] <= meta["history"]["end"][:19]
                        for r in logs)
    # The history reaches back before the fault (the healthy period), never past snapshot time.
    assert meta["history"]["start"] < meta["window"]["start"] and meta["history"]["end"] == meta["snapshot_time"]
    assert any(r["pod"].startswith("frontend-") and r["source"] == "pod" for r in logs)
    assert [r["timestamp"] for r in logs] == sorted(r["timestamp"] for r in logs)
    spans = read_tsv(snap / "traces.tsv")
    ids = {(r["trace_id"], r["span_id"]) for r in spans}
    assert spans and {r["service"] for r in spans} >= {"frontend", "search"}
    assert all(r["kind"].startswith("SPAN_KIND_") for r in spans)
    assert not [r for r in spans if "loadgen" in r["service"] or "wrk" in r["service"]]
    children = [r for r in spans if r["parent_span_id"]]
    assert children and sum((r["trace_id"], r["parent_span_id"]) in ids for r in children) > len(children) / 2
    assert any(r["status_code"] == "STATUS_CODE_ERROR" for r in spans)
    events = read_tsv(snap / "k8s_events.tsv")
    assert events and all(json.loads(r["body"])["kind"] == "Event" for r in events)
    topo = json.loads((snap / "topology.json").read_text())
    ids_ = {e["id"] for e in topo["entities"]}
    assert "hotel-reservation/NetworkPolicy/recommendation-isolation" in ids_
    assert "_/Node/kind-worker" in ids_
    owned = {(o["owner"].split("/")[1], o["owned"].split("/")[1]) for o in topo["ownership"]}
    assert {("Deployment", "ReplicaSet"), ("ReplicaSet", "Pod")} <= owned
    recommendation = next(s for s in topo["services"] if s["service"] == "hotel-reservation/Service/recommendation")
    assert recommendation["selects"] and recommendation["selects"][0].startswith("hotel-reservation/Pod/recommendation-")
    calls = {(c["source"], c["target"]): c["calls"] for c in topo["calls"]}
    assert calls[("frontend", "search")] > 0 and calls[("search", "geo")] > 0
    assert all(set(c) == {"source", "target", "calls"} for c in topo["calls"])


# -------------------------------------------------------------- isolation
def forbidden_hits(problem_id: str, snapshot: Path) -> list[tuple[str, str]]:
    problem = get_problem(problem_id)
    gt = problem.ground_truth
    phrases = {problem.id, problem.id.split("/")[1], "chaos-mesh", "sregym-fault", "chaos.sregym", "inject",
               "sregym-system", gt.description, gt.detail}
    words = [*FAULTS.names(), "fault", "faults"] + ([gt.mechanism] if "_" in gt.mechanism else [])
    pattern = re.compile(r"(?<![a-z0-9_])(" + "|".join(re.escape(w.lower()) for w in words) + r")(?![a-z0-9_])")
    hits = []
    for path in sorted(p for p in snapshot.rglob("*") if p.is_file()):
        # Chaos Mesh's API group is an add-on every problem's cluster shows (its APIService); its
        # namespace, controller and the benchmark's experiments must not show.
        text = path.read_text().lower().replace("chaos-mesh.org", "")
        hits += [(path.name, p) for p in phrases if p and p.lower() in text]
        hits += [(path.name, m.group(0)) for m in pattern.finditer(text)]
    return sorted(set(hits))


def test_snapshots_name_no_fault(netpol: Path, tmp_path: Path) -> None:
    assert forbidden_hits(NETPOL, netpol / "snapshot") == []
    for problem_id in ISOLATION:
        out = tmp_path / problem_id.split("/")[1]
        export_snapshot(problem_id, out, seed=2, noise="low", window_s=WINDOW_S, baseline_s=BASELINE_S)
        assert forbidden_hits(problem_id, out / "snapshot") == [], problem_id
        assert (out / "ground_truth.json").exists() and not (out / "snapshot" / "ground_truth.json").exists()


def test_same_inputs_give_identical_bytes(netpol: Path, tmp_path: Path, tree_digest: Callable[[Path], str]) -> None:
    export_snapshot(NETPOL, tmp_path, seed=0, noise="low", window_s=WINDOW_S, baseline_s=BASELINE_S)
    assert tree_digest(tmp_path) == tree_digest(netpol)
    # Another interpreter with another string-hash seed (set iteration order) writes the same bytes.
    fresh = tmp_path / "fresh"
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    subprocess.run([sys.executable, "-m", "sregym.cli.main", "snapshot", "export", NETPOL, "--out", str(fresh),
                    "--noise", "low", "--window", f"{WINDOW_S:.0f}s", "--baseline", f"{BASELINE_S:.0f}"],
                   check=True, env=env, capture_output=True)
    assert tree_digest(fresh) == tree_digest(netpol)
    other = tmp_path / "seed1"
    export_snapshot(NETPOL, other, seed=1, noise="low", window_s=WINDOW_S, baseline_s=BASELINE_S)
    assert tree_digest(other / "snapshot") != tree_digest(netpol / "snapshot")


# -------------------------------------------------------------------- CLI
def test_cli_export_writes_snapshot_and_ground_truth(tmp_path: Path) -> None:
    out = tmp_path / "x"
    result = runner.invoke(app, ["snapshot", "export", NETPOL, "--out", str(out), "--window", "1m",
                                 "--baseline", "90s", "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert "deploying" in result.output  # progress lines (stderr, mixed in by CliRunner)
    assert (out / "snapshot" / "snapshot.json").exists() and (out / "ground_truth.json").exists()
    assert len(list((out / "snapshot" / "alerts").iterdir())) == 2
    again = runner.invoke(app, ["snapshot", "export", NETPOL, "--out", str(out), "--window", "1m"])
    assert again.exit_code == 2 and "not empty" in again.output and "--force" in again.output


@pytest.mark.parametrize(("args", "message"), [
    (["hotel-reservation/no-such-problem-v1"], "unknown problem 'hotel-reservation/no-such-problem-v1'"),
    ([NETPOL, "--window", "15x"], "cannot read '15x'"),
    ([NETPOL, "--window", "0"], "must be positive"),
    ([NETPOL, "--noise", "loud"], "must be one of none, low, high"),
])
def test_cli_export_rejects_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["snapshot", "export", *args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()


def test_window_parsing() -> None:
    from sregym.cli.snapshot import parse_window

    assert [parse_window(t) for t in ("15m", "900s", "900", "1h", "1h30m")] == [900, 900, 900, 3600, 5400]


def test_docs_describe_the_format() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "snapshots.md").read_text()
    for family in layout.METRIC_FAMILIES:
        assert family.query in docs, family.query
    for columns in (layout.EVENT_COLUMNS, layout.OBJECT_COLUMNS, layout.LOG_COLUMNS, layout.TRACE_COLUMNS):
        assert ", ".join(columns) in docs
    # The format section is the README every snapshot carries, word for word (headings one level down).
    body = layout.README_TEXT.partition("\n\n")[2].replace("\n## ", "\n### ")
    assert body.rstrip("\n") in docs


def test_trace_rows_cap_per_service_keeps_whole_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    from sregym.snapshot import collect
    from sregym.twin.telemetry.traces import Span

    def span(trace: str, sid: str, parent: str, service: str, start: int) -> Span:
        return Span(trace_id=trace * 32, span_id=sid * 16, parent_span_id=parent * 16 if parent else "",
                    service=service, operation="op", kind="server", start_us=start, duration_us=5,
                    error=trace == "c", status_code=None, tags={"pod": "p"}, process_tags={"hostname": "h"})

    spans = [span(t, s, p, svc, start) for t, s, p, svc, start in (
        ("c", "1", "", "frontend", 10), ("c", "2", "1", "search", 11),
        ("a", "3", "9", "frontend", 30), ("a", "4", "3", "search", 31),  # parent 9 is not visible
        ("b", "5", "", "frontend", 20), ("b", "6", "5", "search", 21))]
    monkeypatch.setattr(collect, "MAX_SPANS_PER_SERVICE", 2)
    rows = collect.trace_rows(spans, spans)
    assert [(r[1][0], r[4]) for r in rows] == [("b", "frontend"), ("b", "search"), ("a", "frontend"), ("a", "search")]
    assert rows[2][3] == "" and rows[3][3] == "3" * 16  # a parent the agent cannot see is dropped
    assert rows[0][6] == "SPAN_KIND_SERVER" and rows[0][7] == str(20 * 1000)
    assert json.loads(rows[0][11]) == {"hostname": "h", "pod": "p", "span.kind": "server"}
    assert collect.service_calls(spans, spans) == [{"source": "frontend", "target": "search", "calls": 3}]
