"""Real run directories for the viewer tests (`support.sample_runs`, shared with the report tests):
the gold agent (every attempt passes) and the noop agent (none does) on two cheap demo-shop
problems, plus a copy of the gold run rewound to look like a run still in progress."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.sample_runs import linked, sample_runs


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return linked(sample_runs(tmp_path_factory), tmp_path_factory.mktemp("runs"), {"gold": "gold", "noop": "noop"})


@pytest.fixture
def in_progress(runs_root: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """A copy of the gold run as if it were still going after one attempt: no `finished_at`, no
    `summary.json`, only the first result line. Returns its directory (alone under a parent, so
    a viewer of the parent lists only it) and the lines left out, for a test to append."""
    target = tmp_path / "live" / "gold-live"
    shutil.copytree(runs_root / "gold", target)
    config = json.loads((target / "run.json").read_text())
    config["finished_at"] = None
    (target / "run.json").write_text(json.dumps(config))
    (target / "summary.json").unlink()
    lines = (target / "results.jsonl").read_text().splitlines()
    (target / "results.jsonl").write_text(lines[0] + "\n")
    return target, lines[1:]


SLO_PROBLEM = "hotel-reservation/service-selector-nothing-v1"  # demo-shop has no entry traffic to plot


@pytest.fixture(scope="session")
def slo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real one-attempt gold run on a Hotel Reservation problem, whose line has an entry-SLO series."""
    from sregym.runner import run

    out = tmp_path_factory.mktemp("slo") / "hr-gold"
    run([SLO_PROBLEM], agent="gold", seeds=1, jobs=1, out_dir=out, progress=False)
    return out


SNAPSHOT_PROBLEMS = ["hotel-reservation/crashing-image-geo-v1", "hotel-reservation/service-selector-nothing-v1"]


def _cli(*args: str) -> None:
    from typer.testing import CliRunner

    from sregym.cli.main import app

    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="session")
def snapshot_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/ holding a scored snapshot run (`baseline-snap`) and an unscored one (`noop-snap`)."""
    from sregym.snapshot.dataset import build_dataset

    root = tmp_path_factory.mktemp("snapview")
    dataset = root / "dataset"
    build_dataset(SNAPSHOT_PROBLEMS, dataset, seeds=1, window_s=180.0, baseline_s=60.0)
    runs = root / "runs"
    _cli("snapshot", "run", "--dataset", str(dataset), "--agent", "baseline", "--repeats", "2",
         "--out", str(runs / "baseline-snap"))
    _cli("snapshot", "score", "--dataset", str(dataset), "--outputs", str(runs / "baseline-snap"))
    _cli("snapshot", "run", "--dataset", str(dataset), "--agent", "noop", "--repeats", "1", "--out", str(runs / "noop-snap"))
    return runs
