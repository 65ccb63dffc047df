"""`sregym report` over `sregym snapshot score` results: the scored outputs directory (or its
`score.json`) is detected as a snapshot score and gives the same report — benchmark score, layers,
the task × repeat matrix, figures — with the numbers of `score.json`; two scored runs compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.types import EntityRef, GroundTruth, RootCause, workload_aliases
from support.report_page import ReportPage

NS = "hotel-reservation"
GEO = GroundTruth(root_causes=(RootCause(entity=EntityRef(kind="Deployment", namespace=NS, name="geo"),
                                         aliases=workload_aliases("Deployment", NS, "geo")),),
                  mechanism="bad_image", detail="image tag geo:9.9 does not exist", detail_keywords=("9.9",))
RATE = GroundTruth(root_causes=(RootCause(entity=EntityRef(kind="Service", namespace=NS, name="rate")),),
                   mechanism="service_selector", detail="selector matches nothing")
# Registered problems, so their layer tags and difficulty are looked up.
TASKS = [("hotel-reservation/service-target-port-geo-v1", GEO, 0),
         ("hotel-reservation/service-selector-nothing-v1", RATE, 0)]


def _dataset(root: Path) -> Path:
    entries = []
    for i, (problem, truth, seed) in enumerate(TASKS, start=1):
        task = f"task-{i:04d}"
        entries.append({"task": task, "snapshot": f"tasks/{task}", "ground_truth": f"ground_truth/{task}.json",
                        "problem": problem, "seed": seed})
        gt = root / "ground_truth" / f"{task}.json"
        gt.parent.mkdir(parents=True, exist_ok=True)
        gt.write_text(json.dumps({"format": "sregym-ground-truth/1", "problem": problem, "seed": seed, "noise": "low",
                                  "root_causes": [r.entity.model_dump(mode="json") for r in truth.root_causes],
                                  "ground_truth": truth.model_dump(mode="json")}))
    (root / "index.json").write_text(json.dumps({"format": "sregym-dataset/1", "noise": "low", "window_s": 900,
                                                 "seeds": [0], "tasks": entries}))
    return root


def _outputs(root: Path, agent: str, answers: dict[str, list[Any]]) -> Path:
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({"format": "sregym-snapshot-run/1", "agent": agent, "repeats": 3,
                                               "dataset": "x", "options": {}}))
    for task, per_repeat in answers.items():
        for k, answer in enumerate(per_repeat, start=1):
            (root / task / f"repeat-{k}").mkdir(parents=True)
            (root / task / f"repeat-{k}" / "output.json").write_text(json.dumps(answer))
    return root


def _ent(kind: str, name: str) -> dict[str, str]:
    return {"kind": kind, "namespace": NS, "name": name}


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("snapshot-report")
    dataset = _dataset(root / "ds")
    good = _outputs(root / "good", "baseline", {
        "task-0001": [{"entities": [_ent("Deployment", "geo")]}] * 2 + [{"entities": [_ent("Pod", "geo-7d9f8b6c5d-x2x4z"),
                                                                                     _ent("Service", "x")]}],
        "task-0002": [{"entities": [_ent("Service", "rate")], "explanation": "selector matches nothing"}] * 3})
    bad = _outputs(root / "bad", "noop", {"task-0001": [{"entities": []}] * 3, "task-0002": [{"entities": []}] * 3})
    for outputs in (good, bad):
        result = CliRunner().invoke(app, ["snapshot", "score", "--dataset", str(dataset), "--outputs", str(outputs)])
        assert result.exit_code == 0, result.output
    return good, bad


def _json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["report", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_scored_snapshot_run_reports_the_numbers_of_score_json(scored: tuple[Path, Path]) -> None:
    good, _ = scored
    score = json.loads((good / "score.json").read_text())
    (source,) = _json(str(good))["sources"]
    assert source["kind"] == "snapshot" and source["agent"] == "baseline" and source["noise"] == "low"
    assert source["column"] == "repeat" and source["columns"] == [1, 2, 3]
    assert source["overall"]["score"]["estimate"] == pytest.approx(score["score"], abs=1e-6)
    assert score["score"] == pytest.approx((2.5 / 3 + 1.0) / 2, abs=1e-6)  # the repeat with an extra entity: 0.5
    assert {k: v["score"]["estimate"] for k, v in source["by_layer"].items()} == \
        pytest.approx({k: v["score"] for k, v in score["layers"].items()}, abs=1e-6)
    cells = {row["problem"]: row["cells"] for row in source["matrix"]}
    assert cells == {t["task"]: {str(r["repeat"]): r["score"] for r in t["repeats"]} for t in score["tasks"]}
    # A repeat passes when it names exactly the root causes: 5 of 6; pass^3 counts task-0002 only.
    assert (source["overall"]["diagnosis"]["passes"], source["overall"]["diagnosis"]["n"]) == (5, 6)
    assert source["pass_hat_k"]["3"] == 0.5
    assert set(source["by_difficulty"]) and set(source["by_app"]) == {"hotel-reservation"}
    # score.json itself is accepted too, with the same numbers.
    assert _json(str(good / "score.json"))["sources"][0]["overall"] == source["overall"]


def test_two_scored_runs_compare_and_render_with_figures(scored: tuple[Path, Path], tmp_path: Path) -> None:
    good, bad = scored
    numbers = _json(str(good), str(bad))
    (pair,) = numbers["comparison"]["pairs"]
    assert (pair["pairs"], pair["a_only"], pair["b_only"], pair["neither"]) == (6, 5, 0, 1)
    assert [r["name"] for r in numbers["comparison"]["leaderboard"]] == ["good", "bad"]
    out = tmp_path / "snap.html"
    result = CliRunner().invoke(app, ["report", str(good), str(bad), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = ReportPage(out.read_text())
    assert set(page.charts) == {"overall", "by-layer", "score-distribution", "pass-k"}
    assert all(tags.get("svg") == 1 for tags in page.charts.values())
    assert page.values["good.overall.score"] == numbers["sources"][0]["overall"]["score"]["estimate"]
    assert page.values["good.matrix.task-0001.3"] == 0.5
    assert page.values["paired.good.bad.a_only"] == 5


def test_runs_and_snapshot_scores_are_not_mixed(scored: tuple[Path, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("")
    result = CliRunner().invoke(app, ["report", str(scored[0]), str(run), "--format", "json"])
    assert result.exit_code == 2 and "cannot compare runs with snapshot scores" in result.output
