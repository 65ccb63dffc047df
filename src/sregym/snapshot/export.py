"""Export one problem as an offline incident snapshot.

The incident is produced exactly like a live attempt prepares it (`Conductor._prepare`): a fresh
twin with the seed, the app deployed, a healthy baseline period (checked), the baseline recorded,
noise started, the faults injected; then an observation window runs in steps of at most a minute
(noise ticks inside `ProblemRun.advance`), capturing the alert list every minute. At the end
everything else is gathered through the agent's views (`collect`) and written in the documented
layout (`layout`). The ground truth goes to a separate file outside the snapshot directory.

Everything written depends only on (problem, seed, noise, window, baseline): the twin runs on
its simulated clock and seeded RNG streams, and every row is sorted.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sregym.snapshot import collect, layout
from sregym.snapshot.jsonfile import write_json
from sregym.snapshot.layout import HISTORY_S
from sregym.snapshot.tsv import write_tsv

if TYPE_CHECKING:
    from sregym.problems.model import Problem
    from sregym.problems.run import ProblemRun

Progress = Callable[[str], None]


class SnapshotError(RuntimeError):
    """The incident could not be produced (the app never became healthy, bad parameters)."""


def resolve_problem(problem: str | Problem) -> Problem:
    if isinstance(problem, str):
        from sregym.problems import get_problem

        return get_problem(problem)
    return problem


def ground_truth_doc(problem: Problem, seed: int, noise: str) -> dict[str, Any]:
    gt = problem.ground_truth
    return {"format": layout.GROUND_TRUTH_FORMAT, "problem": problem.id, "seed": int(seed), "noise": noise,
            "root_causes": [{"kind": rc.entity.kind, "namespace": rc.entity.namespace, "name": rc.entity.name}
                            for rc in gt.root_causes],
            "ground_truth": gt.model_dump(mode="json")}


def export_snapshot(problem: str | Problem, out: Path, *, seed: int = 0, noise: str = "none",
                    window_s: float = 900.0, baseline_s: float = 300.0,
                    progress: Progress | None = None) -> Path:
    """Write `out/snapshot/` (the agent's directory) and `out/ground_truth.json`; return the
    snapshot directory."""
    out = Path(out)
    return write_snapshot(problem, out / layout.SNAPSHOT_DIR, out / layout.GROUND_TRUTH_JSON, seed=seed,
                          noise=noise, window_s=window_s, baseline_s=baseline_s, progress=progress)


def write_snapshot(problem: str | Problem, snapshot_dir: Path, ground_truth_path: Path, *, seed: int = 0,
                   noise: str = "none", window_s: float = 900.0, baseline_s: float = 300.0,
                   progress: Progress | None = None) -> Path:
    """Run the incident and write the snapshot directory and the ground-truth file. An existing
    snapshot directory is replaced."""
    spec = resolve_problem(problem)
    if noise not in ("none", "low", "high"):
        raise SnapshotError(f"noise must be none, low or high, got {noise!r}")
    if not window_s > 0 or not baseline_s >= 0:
        raise SnapshotError(f"the window must be positive and the baseline not negative "
                            f"(window {window_s}, baseline {baseline_s})")
    say = progress or (lambda _m: None)
    incident = run_incident(spec, seed=seed, noise=noise, window_s=window_s, baseline_s=baseline_s, progress=say)
    snapshot_dir = Path(snapshot_dir)
    if snapshot_dir.exists():
        shutil.rmtree(snapshot_dir)
    snapshot_dir.mkdir(parents=True)
    say(f"{spec.id} seed {seed}: writing {snapshot_dir}")
    write_files(incident, snapshot_dir)
    write_json(Path(ground_truth_path), ground_truth_doc(spec, seed, noise))
    return snapshot_dir


# --------------------------------------------------------------------- run
class TwinView:
    """The agent's views of an in-process twin (`collect`); `remote_view.RemoteView` is the same
    over the wire, for `--backend kube`."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    def objects(self) -> list[dict[str, Any]]:
        return collect.agent_objects(self.cluster)

    def event_rows(self) -> list[tuple[str, ...]]:
        return collect.event_rows(self.cluster)

    def alerts_now(self) -> list[dict[str, Any]]:
        return collect.alerts_now(self.cluster.twin)

    def metric_rows(self, start: float, end: float, *, service_namespaces: dict[str, str]) -> Any:
        return collect.metric_rows(self.cluster.twin, start, end, service_namespaces=service_namespaces)

    def log_rows(self, start: float, end: float) -> list[tuple[str, ...]]:
        return collect.log_rows(self.cluster.twin, start, end)

    def spans(self, start: float, end: float) -> list[Any]:
        return collect.visible_spans(self.cluster.twin)


class Incident:
    """What was observed while the incident ran (filled by `run_incident`)."""

    def __init__(self, problem: Problem, run: ProblemRun, view: Any = None) -> None:
        self.problem = problem
        self.run = run
        self.view: Any = view if view is not None else TwinView(run.cluster)
        self.ready_time = 0.0  # the app became ready: the healthy period runs from here to `start`
        self.baseline_time = 0.0
        self.start = 0.0
        self.end = 0.0
        self.baseline_objects: list[dict[str, Any]] = []
        self.alerts: list[tuple[float, list[dict[str, Any]]]] = []


def run_incident(problem: Problem, *, seed: int, noise: str, window_s: float, baseline_s: float,
                 progress: Progress) -> Incident:
    from sregym.cluster.twin import TwinCluster
    from sregym.env.conductor import BASELINE_CHECKS
    from sregym.oracles.mitigation import evaluate
    from sregym.problems.run import ProblemRun
    from sregym.problems.warm_prefix import shared_run

    shared = shared_run(problem, seed, noise, baseline_s)
    if shared is not None:  # forked from a warm prefix: deployed, baseline period run
        run, ready_time = shared
        cluster = run.cluster
        incident = Incident(problem, run)
        incident.ready_time = ready_time
    else:
        cluster = TwinCluster.new(seed)
        run = ProblemRun(problem, cluster, seed=seed, noise=noise)
        incident = Incident(problem, run)
        progress(f"{problem.id} seed {seed}: deploying {run.app.name}")
        try:
            run.deploy()
        except RuntimeError as exc:
            raise SnapshotError(f"{problem.id}: deploy failed: {exc}") from None
        incident.ready_time = cluster.now()
        run.advance(baseline_s)
    run.record_baseline()
    bad = [c for c in evaluate(run.check_context(), BASELINE_CHECKS, "must_keep") if not c.passed]
    if bad:
        raise SnapshotError(f"{problem.id}: baseline unhealthy: " + "; ".join(f"{c.name}: {c.detail}" for c in bad))
    observe(incident, window_s, progress, f"{problem.id} seed {seed}")
    return incident


def observe(incident: Incident, window_s: float, progress: Progress, label: str) -> None:
    """From a recorded, healthy baseline: note the baseline objects, start the noise, inject, then
    run the observation window, taking the alert list every `ALERT_INTERVAL_S`."""
    run, view, cluster = incident.run, incident.view, incident.run.cluster
    incident.baseline_time = cluster.now()
    incident.baseline_objects = view.objects()
    run.start_noise()
    run.inject()
    incident.start = cluster.now()
    progress(f"{label}: observing {window_s:.0f}s")
    incident.alerts.append((cluster.now(), view.alerts_now()))
    remaining = float(window_s)
    while remaining > 1e-9:
        step = min(float(layout.ALERT_INTERVAL_S), remaining)
        run.advance(step)
        remaining -= step
        incident.alerts.append((cluster.now(), view.alerts_now()))
    incident.end = cluster.now()


# ------------------------------------------------------------------- write
def write_files(incident: Incident, root: Path) -> None:
    run, view = incident.run, incident.view
    namespaces = [run.app.namespace]
    objects = view.objects()
    spans = view.spans(incident.ready_time, incident.end)
    # Time series reach back HISTORY_S (as the live tools' default look-back does), healthy period
    # included: a Service nobody can reach any more still shows up as called before the fault.
    history = max(incident.ready_time, min(incident.start, incident.end - HISTORY_S))
    window_spans = collect.spans_between(spans, history, incident.end)
    healthy_spans = collect.spans_between(spans, incident.ready_time, incident.start - 1e-6)

    (root / layout.README).write_text(layout.README_TEXT, encoding="utf-8", newline="\n")
    write_json(root / layout.SNAPSHOT_JSON, {
        "format": layout.SNAPSHOT_FORMAT, "app": run.app.name, "namespaces": namespaces,
        "window": {"start": collect.iso_s(incident.start), "end": collect.iso_s(incident.end)},
        "history": {"start": collect.iso_s(history), "end": collect.iso_s(incident.end)},
        "snapshot_time": collect.iso_s(incident.end), "baseline_time": collect.iso_s(incident.baseline_time)})
    write_json(root / layout.APP_JSON, app_doc(incident, namespaces, collect.service_calls(spans, healthy_spans)))
    write_json(root / layout.TOPOLOGY_JSON,
               collect.topology(objects, collect.service_calls(spans, window_spans)))
    for at, alerts in incident.alerts:
        write_json(root / layout.alerts_file(collect.iso_s(at)), alerts)
    write_tsv(root / layout.EVENTS_TSV, layout.EVENT_COLUMNS, view.event_rows())
    write_tsv(root / layout.OBJECTS_TSV, layout.OBJECT_COLUMNS,
              collect.object_rows("baseline", incident.baseline_objects) + collect.object_rows("snapshot", objects))
    metrics = view.metric_rows(history, incident.end,
                               service_namespaces=collect.service_namespaces(objects, namespaces))
    (root / layout.METRICS_DIR).mkdir(exist_ok=True)
    for (kind, namespace, name), rows in sorted(metrics.items(), key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                                                 kv[0][2])):
        write_tsv(root / layout.metrics_file(kind, namespace, name), layout.METRIC_COLUMNS, rows)
    write_tsv(root / layout.LOGS_TSV, layout.LOG_COLUMNS, view.log_rows(history, incident.end))
    write_tsv(root / layout.TRACES_TSV, layout.TRACE_COLUMNS, collect.trace_rows(spans, window_spans))


def app_doc(incident: Incident, namespaces: list[str], architecture: list[dict[str, Any]]) -> dict[str, Any]:
    """What the on-call engineer is told about the app (the conductor's `AppContext`), plus the
    entry point, the app's Services and the call graph seen while it was healthy."""
    run = incident.run
    entry_service, entry_port = run.app.entry
    description = run.app.description or (
        f"The {run.app.name} application runs in namespace {run.app.namespace}; its entry point is "
        f"the {entry_service} Service on port {entry_port}.")
    services = sorted({o["metadata"]["name"] for o in incident.baseline_objects
                       if o.get("kind") == "Service" and o["metadata"].get("namespace") in namespaces})
    doc: dict[str, Any] = {"app": run.app.name, "namespaces": namespaces, "description": description,
                           "entry_point": {"service": entry_service, "port": entry_port},
                           "services": services}
    edges = [{"source": c["source"], "target": c["target"]} for c in architecture]
    if edges:
        doc["architecture"] = edges
    return doc


__all__ = ["SnapshotError", "export_snapshot", "ground_truth_doc", "resolve_problem", "write_json",
           "write_snapshot"]
