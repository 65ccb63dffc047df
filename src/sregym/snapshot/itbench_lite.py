"""The ITBench-Lite layout of an exported incident: `OUT/Scenario-<N>/` holding the snapshot's
files and `ground_truth.yaml`, ITBench's v2 ground truth (`itbench.io/v2`, kind `GroundTruth`,
`spec.entities` as Kubernetes object references), so tools written for ITBench-Lite's published
snapshots (whose loaders read `Scenario-N/ground_truth.yaml`) can read ours.

Why a second file next to sregym's own: ITBench names only the root-cause objects; sregym's
scorer needs its aliases and the mechanism, so `OUT/ground_truth/Scenario-<N>.json` (the format
`sregym snapshot score` reads, as in a dataset) is written outside the scenario directory.
`N` is the problem's ITBench scenario (tag `sources`, `itbench:<N>`) unless one is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sregym.snapshot import layout

if TYPE_CHECKING:
    from sregym.problems.model import Problem

GROUND_TRUTH_YAML = "ground_truth.yaml"
API_VERSIONS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
                "NetworkPolicy": "networking.k8s.io/v1", "HorizontalPodAutoscaler": "autoscaling/v2",
                "PodDisruptionBudget": "policy/v1", "Schedule": "chaos-mesh.org/v1alpha1",
                "NetworkChaos": "chaos-mesh.org/v1alpha1", "StressChaos": "chaos-mesh.org/v1alpha1"}


def scenario_number(problem: Problem) -> int | None:
    """The ITBench scenario a problem reproduces (its `itbench:<N>` source), or None."""
    for source in problem.tags.sources:
        benchmark, _, number = source.partition(":")
        if benchmark == "itbench" and number.isdigit():
            return int(number)
    return None


def scenario_dir(number: int) -> str:
    return f"Scenario-{number}"


def ground_truth_v2(problem: Problem, number: int) -> dict[str, Any]:
    """ITBench's v2 ground truth for `problem`: the root-cause objects as entities."""
    entities = []
    for rc in problem.ground_truth.root_causes:
        meta: dict[str, Any] = {"name": rc.entity.name}
        if rc.entity.namespace:
            meta["namespace"] = rc.entity.namespace
        entities.append({"apiVersion": API_VERSIONS.get(rc.entity.kind, "v1"), "kind": rc.entity.kind,
                         "metadata": meta})
    return {"apiVersion": "itbench.io/v2", "kind": "GroundTruth", "metadata": {"name": f"scenario-{number}"},
            "spec": {"alerts": [], "entities": entities}}


def export_scenario(problem: str | Problem, out: Path, *, scenario: int | None = None, seed: int = 0,
                    noise: str = "none", window_s: float = 900.0, baseline_s: float = 300.0,
                    progress: Any = None) -> Path:
    """Write `out/Scenario-<N>/` (snapshot + ground_truth.yaml) and `out/ground_truth/Scenario-<N>.json`;
    return the scenario directory. Raises SnapshotError when no scenario number is known."""
    from sregym.snapshot.export import SnapshotError, resolve_problem, write_snapshot

    spec = resolve_problem(problem)
    number = scenario if scenario is not None else scenario_number(spec)
    if number is None:
        raise SnapshotError(f"{spec.id} reproduces no ITBench scenario: pass a scenario number")
    target = Path(out) / scenario_dir(number)
    write_snapshot(spec, target, Path(out) / layout.GROUND_TRUTH_DIR / f"{scenario_dir(number)}.json", seed=seed,
                   noise=noise, window_s=window_s, baseline_s=baseline_s, progress=progress)
    text = yaml.safe_dump(ground_truth_v2(spec, number), default_flow_style=False, sort_keys=False)
    (target / GROUND_TRUTH_YAML).write_text(text)
    return target


__all__ = ["GROUND_TRUTH_YAML", "export_scenario", "ground_truth_v2", "scenario_dir", "scenario_number"]
