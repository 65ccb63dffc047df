"""Datasets of snapshots: index, card, ground truth beside the tasks, byte-identical for any -j."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.snapshot.dataset import build_dataset

PROBLEMS = ["hotel-reservation/service-selector-nothing-v1", "hotel-reservation/nonexistent-node-v1"]
runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial")
    lines: list[str] = []
    build_dataset(PROBLEMS, out, seeds=2, noise="none", window_s=120, baseline_s=90, jobs=1, progress=lines.append)
    assert len(lines) == 4 and lines[-1].startswith("[4/4] tasks/task-0004")
    return out


def test_index_lists_tasks_in_problem_then_seed_order(serial: Path, tree_digest: Callable[[Path], str]) -> None:
    index = json.loads((serial / "index.json").read_text())
    assert index["format"] == "sregym-dataset/1" and index["noise"] == "none"
    assert index["window_s"] == 120 and index["seeds"] == [0, 1]
    assert [(t["task"], t["problem"], t["seed"]) for t in index["tasks"]] == [
        ("task-0001", PROBLEMS[0], 0), ("task-0002", PROBLEMS[0], 1),
        ("task-0003", PROBLEMS[1], 0), ("task-0004", PROBLEMS[1], 1)]
    for task in index["tasks"]:
        assert task["snapshot"] == f"tasks/{task['task']}"
        assert (serial / task["snapshot"] / "snapshot.json").exists()
        gt = json.loads((serial / task["ground_truth"]).read_text())
        assert (gt["problem"], gt["seed"]) == (task["problem"], task["seed"])
    assert sorted(p.name for p in serial.iterdir()) == ["DATASET.md", "ground_truth", "index.json", "tasks"]
    # Different seeds give different incidents.
    assert tree_digest(serial / "tasks" / "task-0001") != tree_digest(serial / "tasks" / "task-0002")


def test_dataset_card(serial: Path) -> None:
    card = (serial / "DATASET.md").read_text()
    assert "4 tasks = 2 problems × 2 seed(s)" in card
    assert "| network | 2 |" in card and "| k8s | 2 |" in card
    assert "sregym snapshot score" in card and "ground_truth/" in card
    # The card names the problems (it is for the dataset's owner) but no task's answer.
    assert "reservation Service" not in card


def test_parallel_build_is_byte_identical(serial: Path, tmp_path: Path, tree_digest: Callable[[Path], str]) -> None:
    build_dataset(PROBLEMS, tmp_path, seeds=2, noise="none", window_s=120, baseline_s=90, jobs=2)
    assert tree_digest(tmp_path) == tree_digest(serial)


def test_refuses_non_empty_out_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        build_dataset(PROBLEMS[:1], tmp_path, window_s=60, baseline_s=90)
    with pytest.raises(KeyError):
        build_dataset(["hotel-reservation/no-such-problem-v1"], tmp_path / "new", window_s=60)
    assert not (tmp_path / "new").exists()
    build_dataset(PROBLEMS[:1], tmp_path, window_s=60, baseline_s=90, force=True)
    assert (tmp_path / "keep.txt").exists() and (tmp_path / "tasks" / "task-0001").is_dir()


def test_cli_dataset(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    result = runner.invoke(app, ["snapshot", "dataset", PROBLEMS[0], "--seeds", "1", "--window", "1m",
                                 "--baseline", "90s", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "[1/1] tasks/task-0001" in result.output and "1 tasks" in result.output
    assert json.loads((out / "index.json").read_text())["tasks"][0]["problem"] == PROBLEMS[0]
    again = runner.invoke(app, ["snapshot", "dataset", PROBLEMS[0], "--out", str(out)])
    assert again.exit_code == 2 and "--force" in again.output
    none = runner.invoke(app, ["snapshot", "dataset", "--out", str(tmp_path / "e")])
    assert none.exit_code == 2 and "no problems" in none.output
    unknown = runner.invoke(app, ["snapshot", "dataset", "nope/nothing-v1", "--out", str(tmp_path / "u")])
    assert unknown.exit_code == 2 and "unknown problem 'nope/nothing-v1'" in unknown.output
