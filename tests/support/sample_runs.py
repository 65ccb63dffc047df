"""Real run directories that the viewer and report tests share, made once per test session.

`sregym view` and `sregym report` are tested on what `sregym run` really writes, and making runs is
the expensive part of those tests. Every xdist worker asks for them here: the first one makes them
(under a file lock in the session's shared temporary directory) and the others reuse its
directories. The problems are demo-shop ones, the cheapest real attempts there are: the `gold`,
`baseline` and `noop` agents on two problems with two seeds each (the baseline solves both, noop
neither), so a comparison has something to count.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

PROBLEMS = ["demo-shop/bad-image-tag-v1", "demo-shop/service-selector-mismatch-v1"]
SEEDS = 2
AGENTS = ("gold", "baseline", "noop")


def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{agent: its run directory} for AGENTS on PROBLEMS × SEEDS."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "sample-runs"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (root / ".done").exists():
                from sregym.runner import run

                for agent in AGENTS:
                    run(PROBLEMS, agent=agent, seeds=SEEDS, jobs=1, out_dir=root / agent, progress=False)
                (root / ".done").write_text("ok\n")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return {agent: root / agent for agent in AGENTS}


def linked(runs: dict[str, Path], parent: Path, names: dict[str, str]) -> Path:
    """`parent` holding symlinks `{name: runs[agent]}`: a folder of only the runs a test lists."""
    parent.mkdir(parents=True, exist_ok=True)
    for name, agent in names.items():
        link = parent / name
        if not link.exists():
            link.symlink_to(runs[agent], target_is_directory=True)
    return parent


__all__ = ["AGENTS", "PROBLEMS", "SEEDS", "linked", "sample_runs"]
