"""`sregym view` and `sregym report` over a real scored snapshot run: a small dataset exported
from two Hotel Reservation problems, `sregym snapshot run --agent baseline` (the offline baseline)
with two repeats, `sregym snapshot score`; the viewer lists it, its run page has
the per-task scores of `score.json`, and the report renders its summary. An unscored snapshot run
is listed as such and its page says to score it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from sregym.cli.main import app as cli
from sregym.viewer import create_app

PROBLEMS = ["hotel-reservation/crashing-image-geo-v1", "hotel-reservation/service-selector-nothing-v1"]  # conftest's


def _cli(*args: str) -> str:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def client(snapshot_runs: Path) -> Iterator[TestClient]:
    yield TestClient(create_app([snapshot_runs]))


def test_the_runs_list_shows_scored_and_unscored_snapshot_runs(client: TestClient, snapshot_runs: Path) -> None:
    score = json.loads((snapshot_runs / "baseline-snap" / "score.json").read_text())
    cards = {c["key"]: c for c in client.get("/api/runs").json()["runs"]}
    assert set(cards) == {"baseline-snap", "noop-snap"}
    assert cards["baseline-snap"]["kind"] == "snapshot" and cards["baseline-snap"]["scored"]
    assert cards["baseline-snap"]["agent"] == "baseline" and cards["baseline-snap"]["score"] == score["score"]
    assert cards["baseline-snap"]["attempts"] == 2 * len(PROBLEMS)
    assert cards["noop-snap"]["scored"] is False
    unscored = client.get("/api/runs/noop-snap")
    assert unscored.status_code == 404 and "sregym snapshot score" in unscored.json()["error"]


def test_the_run_page_has_the_per_task_scores_of_score_json(client: TestClient, snapshot_runs: Path) -> None:
    score = json.loads((snapshot_runs / "baseline-snap" / "score.json").read_text())
    view = client.get("/api/runs/baseline-snap").json()
    assert view["kind"] == "snapshot" and view["score"] == score["score"] and view["repeats"] == 2
    assert [(t["task"], t["problem"], t["score"]) for t in view["tasks"]] == \
        [(t["task"], t["problem"], t["score"]) for t in score["tasks"]]
    assert [[r["score"] for r in t["repeats"]] for t in view["tasks"]] == \
        [[r["score"] for r in t["repeats"]] for t in score["tasks"]]
    exact = sum(r["score"] >= 1 for t in score["tasks"] for r in t["repeats"])
    assert view["overall"]["diagnosis"]["passes"] == exact and view["overall"]["diagnosis"]["n"] == 4
    assert set(view["pass_hat_k"]) == {"1", "2"}
    assert view["layers"] == score["layers"]
    # A snapshot run has no attempt pages (no trajectory of a live attempt).
    assert client.get("/api/runs/baseline-snap/attempt", params={"problem": PROBLEMS[0], "seed": 0}).status_code == 404


def test_the_report_renders_the_snapshot_summary(snapshot_runs: Path) -> None:
    score = json.loads((snapshot_runs / "baseline-snap" / "score.json").read_text())
    numbers = json.loads(_cli("report", str(snapshot_runs / "baseline-snap"), "--format", "json"))
    (source,) = numbers["sources"]
    assert source["kind"] == "snapshot" and source["agent"] == "baseline"
    assert [row["problem"] for row in source["matrix"]] == [t["task"] for t in score["tasks"]]
    assert [row["score"] for row in source["matrix"]] == pytest.approx([t["score"] for t in score["tasks"]])
    page = _cli("report", str(snapshot_runs / "baseline-snap"), "--format", "md")
    assert "baseline" in page and score["tasks"][0]["task"] in page
