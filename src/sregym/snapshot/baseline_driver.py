"""The `baseline` agent offline: the live runbook agent, unchanged, over a replay of the snapshot.

The replay (`replay.run_baseline`) serves the snapshot as a frozen, read-only cluster to the real
`kubectl` and the query tools, so the agent needs no option and no knowledge of files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sregym.snapshot.driver import AgentResult, Driver, Trajectory
from sregym.snapshot.sandbox import Workspace


class BaselineDriver(Driver):
    default_time_limit_s = 300.0

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        if self.options:
            raise ValueError(f"the baseline agent takes no options (got {', '.join(sorted(self.options))})")
        from sregym.snapshot.replay import run_baseline  # fails early if the replay is unavailable

        self._run_baseline = run_baseline

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        limit = float(self.time_limit_s or self.default_time_limit_s)
        result = self._run_baseline(ws.snapshot, answer, trajectory.path, time_limit_s=limit)
        ok = bool(result.get("ok"))
        error = None if ok else str(result.get("error") or "the baseline agent failed")
        return AgentResult(error, int(result.get("tool_calls") or 0))


__all__ = ["BaselineDriver"]
