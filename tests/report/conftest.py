"""Two real runs for the report tests (`support.sample_runs`, shared with the viewer tests): the
`baseline` agent (which solves these problems) and the `noop` agent (which solves nothing) on the
same two demo-shop problems and seeds, so a comparison has something to count."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.sample_runs import PROBLEMS, SEEDS, linked, sample_runs

__all__ = ["PROBLEMS", "SEEDS"]


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = linked(sample_runs(tmp_path_factory), tmp_path_factory.mktemp("report-runs"),
                  {"baseline-run": "baseline", "noop-run": "noop"})
    return root / "baseline-run", root / "noop-run"
