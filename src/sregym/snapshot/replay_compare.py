"""The `baseline` agent live and offline on the same incident: the two diagnosis scores.

Issue 9 asks that the baseline agent, run over snapshots, score within 10 points of its live
diagnosis score. Both sides here see the same moment of the same incident:

- live: a `Conductor` (diagnosis phase only, stepped clock) prepares the incident exactly as a
  run does — `baseline_s` of healthy traffic, injection, `problem.settle_s` to let the fault take
  hold — and the agent starts right then; its root-cause score is the conductor's oracle's;
- offline: the problem is exported with the same seed, noise and `baseline_s`, and a window of
  `problem.settle_s`, so `snapshot_time` is the very moment the live agent starts at; the agent
  runs over the replay (`run_baseline`) and its `output.json` is scored by the offline scorer
  (`snapshot.score.score_repeat`, which validates the file and calls the live oracle's
  `root_cause_score` on `ground_truth.json`).

What still differs: live, simulated time advances 15 s per tool call, so later calls see a
slightly older incident; offline every call sees snapshot time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LIVE_BASELINE_S = 300.0


@dataclass(frozen=True)
class Comparison:
    problem: str
    live: float
    offline: float
    valid: bool  # the offline output.json validated
    reason: str  # why the offline side scored 0, if it did
    live_wall_s: float
    export_wall_s: float
    offline_wall_s: float
    offline_entities: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def live_score(problem_id: str, *, seed: int = 0, noise: str = "none") -> tuple[float, float]:
    """(root-cause score, wall seconds) of the baseline agent on a live diagnosis-only attempt."""
    from sregym.agents.baseline import BaselineAgent
    from sregym.env import Conductor

    wall0 = time.perf_counter()
    with Conductor(problem_id, seed=seed, noise=noise, phases=("diagnosis",), baseline_s=LIVE_BASELINE_S,
                   agent_name="baseline") as conductor:
        brief = conductor.start()
        error = None
        try:
            BaselineAgent().run(conductor.session, brief)
        except Exception as exc:  # scored as it stands, like the runner does
            error = f"{type(exc).__name__}: {exc}"
        result = conductor.result(agent_error=error)
    diagnosis = result.diagnosis
    score = diagnosis.root_cause_score if diagnosis is not None and diagnosis.submitted else 0.0
    return float(score), time.perf_counter() - wall0


def offline_score(problem_id: str, workdir: Path, *, seed: int = 0, noise: str = "none",
                  window_s: float | None = None) -> tuple[float, bool, str, tuple[str, ...], float, float]:
    """Export the incident to `workdir`, run the baseline over the replay and score its output:
    (score, output valid, reason, submitted entities, export wall s, agent wall s)."""
    from sregym.problems import get_problem
    from sregym.snapshot import layout
    from sregym.snapshot.export import export_snapshot
    from sregym.snapshot.index import load_ground_truth
    from sregym.snapshot.replay import run_baseline
    from sregym.snapshot.score import score_repeat

    problem = get_problem(problem_id)
    window = float(problem.settle_s if window_s is None else window_s)
    wall0 = time.perf_counter()
    snapshot = export_snapshot(problem, workdir / "export", seed=seed, noise=noise, window_s=window,
                               baseline_s=LIVE_BASELINE_S)
    export_wall = time.perf_counter() - wall0
    repeat = workdir / "repeat-1"
    status = run_baseline(snapshot, repeat / layout.OUTPUT_JSON, repeat / layout.TRAJECTORY_JSONL)
    truth = load_ground_truth(workdir / "export" / layout.GROUND_TRUTH_JSON)
    scored = score_repeat(truth, repeat, 1)
    reason = scored.reason or (status.get("error") or "")
    return (float(scored.score), bool(scored.valid), reason, tuple(scored.entities), export_wall,
            float(status["wall_s"]))


def compare(problem_id: str, workdir: Path, *, seed: int = 0, noise: str = "none") -> Comparison:
    live, live_wall = live_score(problem_id, seed=seed, noise=noise)
    offline, valid, reason, entities, export_wall, offline_wall = offline_score(problem_id, workdir, seed=seed,
                                                                                 noise=noise)
    return Comparison(problem=problem_id, live=live, offline=offline, valid=valid, reason=reason,
                      live_wall_s=round(live_wall, 3), export_wall_s=round(export_wall, 3),
                      offline_wall_s=round(offline_wall, 3), offline_entities=entities)


__all__ = ["LIVE_BASELINE_S", "Comparison", "compare", "live_score", "offline_score"]
