"""The viewer's JSON endpoints over real run directories (Starlette's TestClient): the numbers
match `summary.json`, the attempt page carries the trajectory, the submitted diagnosis, the
ground truth from the registry, the checklist and the checks, a run in progress is recomputed on
every request, and `sregym view` refuses paths that are not run directories."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from sregym.cli.main import app as cli
from sregym.problems import get_problem
from sregym.runner.stats import wilson
from sregym.viewer import create_app

BAD_IMAGE = "demo-shop/bad-image-tag-v1"


@pytest.fixture(scope="module")
def client(runs_root: Path) -> TestClient:
    return TestClient(create_app([runs_root]))


def test_runs_list_has_both_runs(client: TestClient) -> None:
    runs = {r["key"]: r for r in client.get("/api/runs").json()["runs"]}
    assert set(runs) == {"gold", "noop"}
    assert runs["gold"]["agent"] == "gold" and runs["gold"]["attempts"] == 4 and runs["gold"]["planned"] == 4
    assert runs["gold"]["end_to_end"] == 1.0 and runs["noop"]["end_to_end"] == 0.0
    assert not runs["gold"]["running"] and runs["gold"]["started_at"]


def test_run_summary_matches_summary_json(client: TestClient, runs_root: Path) -> None:
    summary = json.loads((runs_root / "noop" / "summary.json").read_text())
    view = client.get("/api/runs/noop").json()
    overall = view["overall"]
    assert overall["attempts"] == summary["overall"]["attempts"] == 4
    for phase in ("diagnosis", "mitigation", "end_to_end"):
        block = overall[phase]
        assert block["passed"] / block["n"] == summary["overall"][phase]
        assert block["interval"] == wilson(block["passed"], block["n"]).as_dict()
    assert view["pass_hat_k"] == summary["pass_hat_k"]
    assert set(view["by_layer"]) == set(summary["by_layer"]) == {"config", "network"}
    assert set(view["by_app"]) == {"demo-shop"}
    assert set(view["by_difficulty"]) == set(summary["by_difficulty"])


def test_gold_run_intervals_and_problem_rows(client: TestClient) -> None:
    view = client.get("/api/runs/gold").json()
    e2e = view["overall"]["end_to_end"]
    assert (e2e["passed"], e2e["n"]) == (4, 4)
    assert e2e["interval"]["high"] == 1.0 and 0.4 < e2e["interval"]["low"] < 0.6  # Wilson, 4/4
    assert view["overall"]["end_to_end_by_problem"] == {"estimate": 1.0, "low": 1.0, "high": 1.0}
    rows = {p["problem_id"]: p for p in view["problems"]}
    assert set(rows) == {BAD_IMAGE, "demo-shop/service-selector-mismatch-v1"}
    cells = rows[BAD_IMAGE]["seeds"]
    assert [c["seed"] for c in cells] == [0, 1] and all(c["verdict"] == "pass" for c in cells)
    assert all(c["steps"] and c["sim_seconds_to_diagnosis"] is not None and c["sim_seconds_to_mitigation"]
               for c in cells)


def test_problem_page(client: TestClient) -> None:
    view = client.get("/api/runs/noop/problem", params={"id": BAD_IMAGE}).json()
    assert view["problem"]["problem_id"] == BAD_IMAGE
    assert [a["verdict"] for a in view["attempts"]] == ["fail", "fail"]
    assert view["ground_truth"]["mechanism"] == get_problem(BAD_IMAGE).ground_truth.mechanism


def test_attempt_page_has_trajectory_diagnosis_ground_truth_and_checks(client: TestClient, runs_root: Path) -> None:
    view = client.get("/api/runs/gold/attempt", params={"problem": BAD_IMAGE, "seed": 1}).json()
    on_disk = [json.loads(raw) for raw in
               (runs_root / "gold" / "trajectories" / f"{BAD_IMAGE}__1.jsonl").read_text().splitlines()]
    assert view["trajectory"] == on_disk
    submitted = next(s["args"] for s in on_disk if s["tool"] == "submit_diagnosis")
    assert view["submitted_diagnosis"] == submitted
    truth = get_problem(BAD_IMAGE).ground_truth
    assert view["ground_truth"]["root_causes"][0]["entity"]["name"] == truth.root_causes[0].entity.name
    assert view["ground_truth"]["detail"] == truth.detail
    checklist = view["result"]["diagnosis"]["checklist"]
    assert len(checklist) == 9 and all(q["evidence"] for q in checklist)
    checks = view["result"]["mitigation"]["checks"]
    assert checks and all(c["passed"] for c in checks)
    svg = view["timeline_svg"]
    assert svg.startswith("<svg") and svg.count('class="mark ') == len(on_disk)
    assert "injection" in svg and "done" in svg and 'class="window"' in svg


def test_noop_attempt_has_no_submission(client: TestClient) -> None:
    view = client.get("/api/runs/noop/attempt", params={"problem": BAD_IMAGE, "seed": 0}).json()
    assert view["cell"]["verdict"] == "fail"
    assert view["submitted_diagnosis"] is None
    assert view["ground_truth"] is not None


@pytest.mark.parametrize(("url", "params", "status"), [
    ("/api/runs/nope", {}, 404),
    ("/api/runs/gold/problem", {"id": "demo-shop/nope-v1"}, 404),
    ("/api/runs/gold/attempt", {"problem": BAD_IMAGE, "seed": 7}, 404),
    ("/api/runs/gold/attempt", {"problem": BAD_IMAGE, "seed": "x"}, 400),
])
def test_unknown_things_are_json_errors(client: TestClient, url: str, params: dict, status: int) -> None:
    response = client.get(url, params=params)
    assert response.status_code == status and response.json()["error"]


def test_page_and_static_assets_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200


def test_a_run_in_progress_is_recomputed_on_every_request(in_progress: tuple[Path, list[str]]) -> None:
    path, remaining = in_progress
    client = TestClient(create_app([path.parent]))
    first = client.get(f"/api/runs/{path.name}").json()
    assert first["run"]["running"] and not first["summary_is_final"]
    assert first["overall"]["attempts"] == 1 and first["missing"] == 3
    with (path / "results.jsonl").open("a") as out:
        out.write(remaining[0] + "\n")
    second = client.get(f"/api/runs/{path.name}").json()
    assert second["overall"]["attempts"] == 2 and second["missing"] == 2
    assert client.get("/api/runs").json()["runs"][0]["attempts"] == 2


def test_cli_refuses_paths_that_are_not_run_directories(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["view", str(tmp_path / "absent"), "--no-browser"])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(cli, ["view", str(tmp_path / "empty"), "--no-browser"])
    assert empty.exit_code == 2 and "is not a run directory" in empty.output
    bad_port = runner.invoke(cli, ["view", str(tmp_path), "--port", "70000"])
    assert bad_port.exit_code == 2 and "--port" in bad_port.output


def test_cli_serves_a_run_directory(runs_root: Path) -> None:
    """`sregym view DIR --port 0 --no-browser` prints its URL and serves that run (and only it)."""
    proc = subprocess.Popen([sys.executable, "-m", "sregym.cli.main", "view", str(runs_root / "gold"),
                             "--port", "0", "--no-browser"], stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", first)
        assert url, f"sregym view printed {first!r}"
        with urllib.request.urlopen(url.group(1) + "api/runs", timeout=60) as response:
            runs = json.load(response)["runs"]
        assert [r["key"] for r in runs] == ["gold"] and runs[0]["attempts"] == 4
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
