"""`sregym snapshot export --backend kube`: one problem's incident on a cluster reached by
kubeconfig, written in the layout of the twin's export.

The attempt's cluster side is the one `run --backend kube` uses (`env/kube/attempt.py`):
prerequisites, install by server-side apply, the healthy baseline, the agent's ServiceAccount;
then the observation window of the twin's export (`export.observe`), read through the agent's
credential and the cluster's query APIs (`remote_view.RemoteView`), and cleanup, always. The
files are those of `export.write_files`; the ground truth goes next to the snapshot as usual.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sregym.snapshot import layout
from sregym.snapshot.export import (
    Incident,
    Progress,
    SnapshotError,
    ground_truth_doc,
    observe,
    resolve_problem,
    write_files,
)
from sregym.snapshot.jsonfile import write_json

if TYPE_CHECKING:
    from sregym.env.kube.target import KubeTarget
    from sregym.problems.model import Problem


def export_on_cluster(problem: str | Problem, out: Path, target: KubeTarget, *, seed: int = 0, noise: str = "none",
                      window_s: float = 900.0, baseline_s: float = 300.0,
                      progress: Progress | None = None) -> Path:
    """Write `out/snapshot/` and `out/ground_truth.json` from an incident on `target`; return the
    snapshot directory. Everything the attempt created on the cluster is removed afterwards."""
    from sregym.env.conductor import BASELINE_CHECKS
    from sregym.env.kube.attempt import KubeAttempt
    from sregym.env.kube.target import ClusterNotReady
    from sregym.oracles.mitigation import evaluate
    from sregym.problems.run import ProblemRun

    spec = resolve_problem(problem)
    say = progress or (lambda _m: None)
    label = f"{spec.id} seed {seed}"
    attempt: Any = None
    run: Any = None
    access: Any = None
    try:
        attempt = KubeAttempt(target, spec, f"snapshot-{spec.id}-s{seed}-p{os.getpid()}", progress=say)
        attempt.check_prerequisites(noise=noise)
        run = ProblemRun(spec, attempt.cluster, seed=seed, noise=noise)
        attempt.install(run)
        ready_time = attempt.cluster.now()
        run.advance(baseline_s)
        run.record_baseline()
        bad = [c for c in evaluate(run.check_context(), BASELINE_CHECKS, "must_keep") if not c.passed]
        if bad:
            raise SnapshotError(f"{spec.id}: baseline unhealthy: " + "; ".join(f"{c.name}: {c.detail}" for c in bad))
        access = attempt.grant()
        incident = Incident(spec, run, _agent_view(access, target))
        incident.ready_time = ready_time
        observe(incident, window_s, say, label)
        snapshot_dir = Path(out) / layout.SNAPSHOT_DIR
        if snapshot_dir.exists():
            shutil.rmtree(snapshot_dir)
        snapshot_dir.mkdir(parents=True)
        say(f"{label}: writing {snapshot_dir}")
        write_files(incident, snapshot_dir)
        write_json(Path(out) / layout.GROUND_TRUTH_JSON, ground_truth_doc(spec, seed, noise))
        return snapshot_dir
    except ClusterNotReady as exc:
        raise SnapshotError(str(exc)) from None
    finally:
        if access is not None:
            access.close()
        if attempt is not None:
            for line in attempt.cleanup(run):
                say(f"cleanup: could not delete {line}")


def _agent_view(access: Any, target: KubeTarget) -> Any:
    """The agent's views: its kubeconfig (only its ServiceAccount token) and the query APIs."""
    from sregym.cluster.kube import KubeCluster
    from sregym.snapshot.remote_view import RemoteView

    agent = KubeCluster(str(access.kubectl.kubeconfig), prometheus_url=target.prometheus_url, speed=target.speed)
    return RemoteView(agent, target.urls, access.http)


__all__ = ["export_on_cluster"]
