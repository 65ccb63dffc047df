"""The offline scorer: precision at full recall per repeat, means per task and benchmark, the checklist,
the table, the JSON and the CLI — on datasets and run outputs built by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from sregym.cli.snapshot_score import score as score_command
from sregym.snapshot.index import index_fingerprint
from sregym.snapshot.score import ScoreError, score_outputs
from sregym.types import EntityRef, GroundTruth, RootCause, workload_aliases

NS = "hotel-reservation"

# The ITBench-AA worked example: two independent root causes.
QUOTA_TRUTH = GroundTruth(
    root_causes=(RootCause(entity=EntityRef(kind="ResourceQuota", namespace=NS, name="q")),
                 RootCause(entity=EntityRef(kind="ConfigMap", namespace=NS, name="c"))),
    mechanism="resource_quota", detail="quota q requires limits", detail_keywords=("limits.memory",),
    affected=(RootCause(entity=EntityRef(kind="Deployment", namespace=NS, name="d"),
                        aliases=workload_aliases("Deployment", NS, "d")),),
    impact_keywords=("unavailable",), description="quota q blocks d's pods")

# A root-cause Deployment whose Pods and ReplicaSets stand for it.
GEO_TRUTH = GroundTruth(
    root_causes=(RootCause(entity=EntityRef(kind="Deployment", namespace=NS, name="geo"),
                           aliases=workload_aliases("Deployment", NS, "geo")),),
    mechanism="bad_image", detail="image tag geo:9.9 does not exist", detail_keywords=("9.9",))


def ent(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "name": name} | ({"namespace": namespace} if namespace else {})


Q, C, D = ent("ResourceQuota", "q"), ent("ConfigMap", "c"), ent("Deployment", "d", NS)


def make_dataset(root: Path, tasks: list[tuple[str, GroundTruth, int]]) -> Path:
    """index.json + ground_truth/<task>.json in the contract's layout (snapshot dirs are not read)."""
    entries = []
    for i, (problem, truth, seed) in enumerate(tasks, start=1):
        task = f"task-{i:04d}"
        entries.append({"task": task, "snapshot": f"tasks/{task}", "ground_truth": f"ground_truth/{task}.json",
                        "problem": problem, "seed": seed})
        gt = root / "ground_truth" / f"{task}.json"
        gt.parent.mkdir(parents=True, exist_ok=True)
        gt.write_text(json.dumps({"format": "sregym-ground-truth/1", "problem": problem, "seed": seed,
                                  "noise": "none", "root_causes": [r.entity.model_dump(mode="json")
                                                                   for r in truth.root_causes],
                                  "ground_truth": truth.model_dump(mode="json")}, sort_keys=True, indent=2))
    (root / "index.json").write_text(json.dumps({"format": "sregym-dataset/1", "noise": "none", "window_s": 900,
                                                 "seeds": sorted({s for *_, s in tasks}), "tasks": entries}))
    return root


def make_outputs(root: Path, answers: dict[str, list[Any]], *, repeats: int | None = None) -> Path:
    """OUT/<task>/repeat-<k>/output.json; an answer that is a str is written verbatim, None writes nothing."""
    root.mkdir(parents=True, exist_ok=True)
    if repeats is not None:
        (root / "run.json").write_text(json.dumps({"agent": "hand", "repeats": repeats, "dataset": "x",
                                                   "options": {}}))
    for task, per_repeat in answers.items():
        for k, answer in enumerate(per_repeat, start=1):
            rep = root / task / f"repeat-{k}"
            rep.mkdir(parents=True)
            if answer is not None:
                (rep / "output.json").write_text(answer if isinstance(answer, str) else json.dumps(answer))
    return root


def test_worked_example_by_hand(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/quota-and-config", QUOTA_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [{"entities": [Q, C, D]}, {"entities": [Q]},
                                                             {"entities": [C, Q]}]}, repeats=3)
    report = score_outputs(dataset, outputs)
    (task,) = report.tasks
    assert [r.score for r in task.repeats] == pytest.approx([2 / 3, 0.0, 1.0])
    assert [r.recall for r in task.repeats] == pytest.approx([1.0, 0.5, 1.0])
    assert task.score == pytest.approx(5 / 9) and report.score == pytest.approx(5 / 9)
    assert all(r.valid and r.reason is None for r in task.repeats)
    assert task.repeats[0].entities == ("ResourceQuota/q", "ConfigMap/c", f"{NS}/Deployment/d")
    table = report.table()
    row = next(line for line in table.splitlines() if line.startswith("task-0001"))
    assert row.split() == ["task-0001", "x/quota-and-config", "0", "0.667", "0.000", "1.000", "0.556", "-"]
    assert "benchmark score: 0.556" in table
    data = report.to_json()
    assert data["score"] == 0.555556 and data["tasks"][0]["repeats"][0]["score"] == 0.666667
    assert json.loads(json.dumps(data)) == data and data["format"] == "sregym-score/1"


def test_namespaced_answers_and_kind_spellings_match_like_live(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [
        {"entities": [ent("quota", "q", NS), ent("configmaps", "c", NS)]},
        {"entities": [ent("ResourceQuota", "q", "other-ns"), C]},  # wrong namespace: q missed
    ]}, repeats=2)
    assert [r.score for r in score_outputs(dataset, outputs).tasks[0].repeats] == [1.0, 0.0]


def test_alias_pod_of_root_cause_deployment_counts(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/geo", GEO_TRUTH, 0)])
    pod = ent("Pod", "geo-7d9f8b6c5d-x2x4z", NS)
    outputs = make_outputs(tmp_path / "out", {"task-0001": [
        {"entities": [pod]},
        {"entities": [ent("deploy", "geo", NS), pod]},  # two names of one root cause: no dilution
        {"entities": [ent("Pod", "geography-7d9f8b6c5d-x2x4z", NS)]},
        {"entities": [pod, ent("Service", "frontend", NS)]},
    ]}, repeats=4)
    assert [r.score for r in score_outputs(dataset, outputs).tasks[0].repeats] == [1.0, 1.0, 0.0, 0.5]


def test_missing_and_invalid_outputs_score_zero_with_reasons(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/geo", GEO_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [None, '{"entities": [', {"entities": [{"name": "geo"}]},
                                                             {"entities": [ent("Deployment", "geo", NS)]}]},
                           repeats=5)
    (outputs / "task-0001" / "repeat-1" / "status.json").write_text(json.dumps({"ok": False, "error": "timeout"}))
    report = score_outputs(dataset, outputs)
    reps = report.tasks[0].repeats
    assert [r.score for r in reps] == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert [r.valid for r in reps] == [False, False, False, True, False]
    assert "output.json does not exist" in reps[0].reason and "agent error: timeout" in reps[0].reason
    assert "not valid JSON" in reps[1].reason and "repeat-2/output.json" in reps[1].reason
    assert "entities[0].kind: missing" in reps[2].reason
    assert "repeat-5 does not exist (the repeat did not run)" in reps[4].reason
    assert report.tasks[0].score == pytest.approx(0.2)
    table = report.table()
    assert "0.000*" in table and "task-0001 repeat 3: invalid agent output" in table
    assert report.to_json()["tasks"][0]["repeats"][1]["reason"] == reps[1].reason


def test_benchmark_is_the_mean_over_tasks_and_layers(tmp_path: Path) -> None:
    real = "demo-shop/resourcequota-blocks-recreation-v1"  # a registered problem: its layer tags are looked up
    dataset = make_dataset(tmp_path / "ds", [(real, QUOTA_TRUTH, 0), ("x/geo", GEO_TRUTH, 1)])
    outputs = make_outputs(tmp_path / "out", {
        "task-0001": [{"entities": [Q, C, D]}, {"entities": [Q]}, {"entities": [Q, C]}],
        "task-0002": [{"entities": [ent("Deployment", "geo", NS)]}] * 3,
    }, repeats=3)
    (outputs / "stray" / "repeat-1").mkdir(parents=True)
    report = score_outputs(dataset, outputs)
    assert [t.score for t in report.tasks] == pytest.approx([5 / 9, 1.0])
    assert report.score == pytest.approx((5 / 9 + 1.0) / 2)
    assert report.tasks[0].layers == ("control-plane",) and report.tasks[1].layers == ()
    assert report.layers() == {"control-plane": (pytest.approx(5 / 9), 1)}
    table = report.table()
    assert "benchmark score: 0.778 (mean over 2 tasks, 3 repeats each)" in table
    assert "control-plane: 0.556 (1 task)" in table and "stray" in table  # noted as ignored
    assert report.to_json()["layers"] == {"control-plane": {"score": 0.555556, "tasks": 1}}


def test_repeats_without_run_json_come_from_the_directories(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0), ("x/geo", GEO_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [{"entities": [Q, C]}] * 3,
                                              "task-0002": [{"entities": [ent("Deployment", "geo", NS)]}]})
    report = score_outputs(dataset, outputs)
    assert report.repeats == 3 and any("no run.json" in n for n in report.notes)
    assert [r.score for r in report.tasks[1].repeats] == [1.0, 0.0, 0.0]  # fewer dirs than repeats: zeros


def test_checklist_only_where_an_explanation_is_given(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0)])
    text = ("ResourceQuota q requires limits.memory, so admission rejects the pods of deployment d, "
            "which is unavailable; configmap c is also broken")
    outputs = make_outputs(tmp_path / "out", {"task-0001": [{"entities": [Q, C], "explanation": text},
                                                             {"entities": [Q, C]},
                                                             {"entities": [Q, C], "explanation": "   "}]},
                           repeats=3)
    report = score_outputs(dataset, outputs)
    first, second, third = report.tasks[0].repeats
    assert second.checklist is None and third.checklist is None
    assert first.checklist is not None and first.checklist.judge == "deterministic"
    answers = {a.id: a.answer for a in first.checklist.checklist}
    # the explanation is read as the mechanism (C1) and for the detail (C2) and impact (S3)
    assert answers["C1"] and answers["C2"] and answers["S3"] and answers["L1"]
    assert not answers["S2"]  # the offline format names no affected entities
    assert report.tasks[0].checklist == pytest.approx(first.checklist.checklist_score)
    data = report.to_json()["tasks"][0]
    assert data["repeats"][1]["checklist"] is None and data["repeats"][0]["checklist"]["answers"][0]["id"] == "L1"
    assert data["checklist"] == round(first.checklist.checklist_score, 6)


def test_custom_judge_is_used_and_named(tmp_path: Path) -> None:
    from sregym.oracles.checklist import deterministic_judge

    calls: list[str] = []

    def judge(truth: GroundTruth, sub: Any) -> Any:
        calls.append(sub.explanation)
        return deterministic_judge(truth, sub)

    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [{"entities": [Q], "explanation": "quota"}]}, repeats=1)
    report = score_outputs(dataset, outputs, judge=judge, judge_name="llm", judge_model="m")
    assert calls == ["quota"] and report.judge == "llm"
    assert report.tasks[0].repeats[0].checklist.judge_model == "m"


def test_unusable_dataset_or_outputs_raise_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScoreError, match=r"has no index\.json"):
        score_outputs(tmp_path / "empty", tmp_path)
    with pytest.raises(ScoreError, match="dataset directory not found"):
        score_outputs(tmp_path / "nope", tmp_path)
    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0)])
    with pytest.raises(ScoreError, match="outputs directory not found"):
        score_outputs(dataset, tmp_path / "missing")
    with pytest.raises(ScoreError, match=r"no run\.json and no <task>/repeat-<k>/"):
        score_outputs(dataset, tmp_path / "empty")
    (tmp_path / "ds" / "ground_truth" / "task-0001.json").write_text('{"ground_truth": {"mechanism": 1}}')
    with pytest.raises(ScoreError, match=r"no valid `ground_truth` object .*build it again"):
        score_outputs(dataset, make_outputs(tmp_path / "o", {"task-0001": [{"entities": []}]}))
    index = json.loads((dataset / "index.json").read_text())
    for tasks, message in (([], "lists no tasks"), (index["tasks"] * 2, "listed twice")):
        (dataset / "index.json").write_text(json.dumps({**index, "tasks": tasks}))
        with pytest.raises(ScoreError, match=message):
            score_outputs(dataset, tmp_path / "o")


def test_outputs_of_a_run_on_another_dataset_are_refused(tmp_path: Path) -> None:
    """Task names repeat across datasets (task-0001 ...): scoring a run against the wrong dataset
    must fail, not score its answers against someone else's ground truth."""
    mine = make_dataset(tmp_path / "mine", [("x/q", QUOTA_TRUTH, 0)])
    other = make_dataset(tmp_path / "other", [("x/geo", GEO_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [{"entities": [ent("Deployment", "geo", NS)]}]},
                           repeats=1)
    run = json.loads((outputs / "run.json").read_text())
    (outputs / "run.json").write_text(json.dumps({**run, "dataset": str(other),
                                                  "index_sha256": index_fingerprint(other)}))
    assert score_outputs(other, outputs).score == 1.0
    with pytest.raises(ScoreError, match=r"another dataset .*--dataset .*other"):
        score_outputs(mine, outputs)


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command("score")(score_command)

    @app.callback()
    def main() -> None:
        """Test group."""

    return app


def test_cli_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0)])
    outputs = make_outputs(tmp_path / "out", {"task-0001": [{"entities": [Q, C, D]}, {"entities": [Q]},
                                                             {"entities": [Q, C]}]}, repeats=3)
    runner = CliRunner()
    result = runner.invoke(_cli(), ["score", "--dataset", str(dataset), "--outputs", str(outputs)])
    assert result.exit_code == 0, result.output
    assert "benchmark score: 0.556" in result.output and "0.667" in result.output
    written = json.loads((outputs / "score.json").read_text())
    assert written == score_outputs(dataset, outputs).to_json()
    custom = tmp_path / "reports" / "s.json"
    result = runner.invoke(_cli(), ["score", "--dataset", str(dataset), "--outputs", str(outputs), "--json",
                                    str(custom)])
    assert result.exit_code == 0 and json.loads(custom.read_text())["score"] == 0.555556


def test_cli_errors_exit_2_with_a_message(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(_cli(), ["score", "--dataset", str(tmp_path), "--outputs", str(tmp_path)])
    assert result.exit_code == 2 and "has no index.json" in result.output
    dataset = make_dataset(tmp_path / "ds", [("x/q", QUOTA_TRUTH, 0)])
    result = runner.invoke(_cli(), ["score", "--dataset", str(dataset), "--outputs", str(tmp_path / "none")])
    assert result.exit_code == 2 and "outputs directory not found" in result.output
