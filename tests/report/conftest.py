"""Two real runs for the report tests, made once per session: the `baseline` agent (which solves
these problems) and the `noop` agent (which solves nothing) on the same two lite problems and
seeds, so a comparison has something to count."""

from __future__ import annotations

from pathlib import Path

import pytest

from sregym.runner import run

PROBLEMS = ["hotel-reservation/service-target-port-geo-v1", "hotel-reservation/service-selector-nothing-v1"]
SEEDS = 2


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report-runs")
    baseline, noop = root / "baseline-run", root / "noop-run"
    run(PROBLEMS, agent="baseline", seeds=SEEDS, jobs=1, out_dir=baseline, progress=False)
    run(PROBLEMS, agent="noop", seeds=SEEDS, jobs=1, out_dir=noop, progress=False)
    return baseline, noop
