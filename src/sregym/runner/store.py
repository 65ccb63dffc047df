"""The results directory of one run, written so that an interrupted run loses nothing.

Layout:
    run.json                      the run's configuration (what `--resume` re-runs)
    results.jsonl                 one JSON line per finished attempt
    trajectories/<problem>__<seed>.jsonl   every tool call and observation of an attempt
    summary.json                  rates and means, rewritten at the end of the run

Each attempt's trajectory is written to a temporary file and renamed into place, then its result
line is appended with a single `write` on an `O_APPEND` descriptor and flushed to disk; so a
result line always has its trajectory, and a kill at any moment leaves either the whole line or
nothing. Lines that cannot be parsed (a torn write on a crashed disk) are ignored on resume.
When a run finishes, `results.jsonl` is rewritten (atomically) in plan order with the latest line
per attempt, so the file does not depend on `-j` or on how many times the run was resumed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sregym.runner.plan import AttemptSpec

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
TRAJECTORIES_DIR = "trajectories"


def result_key(line: dict[str, Any]) -> tuple[str, int]:
    return (str(line["problem_id"]), int(line["seed"]))


def is_environment_failure(line: dict[str, Any]) -> bool:
    return bool(line.get("environment_failure"))


def is_skipped(line: dict[str, Any]) -> bool:
    """An attempt the backend cannot run (a twin-only problem on `--backend kube`): recorded with
    its reason, never scored, never re-run by `--resume`."""
    return bool(line.get("skipped"))


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class ResultsStore:
    """Reads and writes one run directory."""

    def __init__(self, out_dir: str | Path) -> None:
        self.dir = Path(out_dir)

    @property
    def results_path(self) -> Path:
        return self.dir / RESULTS_FILE

    # ------------------------------------------------------------- run config
    def write_config(self, config: dict[str, Any]) -> None:
        _write_atomic(self.dir / RUN_FILE, (json.dumps(config, indent=2, sort_keys=True) + "\n").encode())

    def read_config(self) -> dict[str, Any]:
        path = self.dir / RUN_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: --resume needs a directory written by `sregym run`")
        return json.loads(path.read_text())

    # ---------------------------------------------------------------- results
    def read_results(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The latest parsable line per attempt."""
        out: dict[tuple[str, int], dict[str, Any]] = {}
        if not self.results_path.is_file():
            return out
        for raw in self.results_path.read_bytes().splitlines():
            try:
                line = json.loads(raw)
                out[result_key(line)] = line
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def pending(self, plan: Iterable[AttemptSpec]) -> list[AttemptSpec]:
        """Attempts of `plan` with no result yet or whose result is an environment failure."""
        done = self.read_results()
        return [a for a in plan if a.key not in done or is_environment_failure(done[a.key])]

    def write_attempt(self, spec: AttemptSpec, result: dict[str, Any],
                      trajectory: Iterable[dict[str, Any]]) -> None:
        """Trajectory first (atomic rename), then the result line (one appended write)."""
        body = "".join(_dumps(step) + "\n" for step in trajectory)
        _write_atomic(spec.trajectory_path(self.dir), body.encode())
        self.dir.mkdir(parents=True, exist_ok=True)
        data = (_dumps(result) + "\n").encode()
        fd = os.open(self.results_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a torn line from a crash: never glue the next one onto it
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def compact(self, plan: Iterable[AttemptSpec]) -> list[dict[str, Any]]:
        """Rewrite the results file in plan order, one (latest) line per attempt; returns them."""
        done = self.read_results()
        lines = [done[a.key] for a in plan if a.key in done]
        _write_atomic(self.results_path, "".join(_dumps(line) + "\n" for line in lines).encode())
        return lines

    def write_summary(self, summary: dict[str, Any]) -> None:
        _write_atomic(self.dir / SUMMARY_FILE, (json.dumps(summary, indent=2, sort_keys=True) + "\n").encode())


__all__ = ["RESULTS_FILE", "RUN_FILE", "SUMMARY_FILE", "TRAJECTORIES_DIR", "ResultsStore",
           "is_environment_failure", "is_skipped", "result_key"]
