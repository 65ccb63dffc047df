"""The viewer's JSON for a scored snapshot run (`sregym snapshot run` + `sregym snapshot score`).

A snapshot run is not a run directory: its attempts are repeats of an agent on frozen exports,
scored by precision at full recall (`score.json`). It is read through the report's reader
(`report.source.load_source`) and numbers (`report.numbers.source_numbers`), so the viewer and
`sregym report` show the same benchmark score, layers and pass^k; the per-task rows add each
repeat's entities and, for a repeat that scored 0 because its output was unusable, the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sregym.snapshot.layout import RUN_FORMAT, RUN_JSON, SCORE_JSON


def is_snapshot_dir(path: Path) -> bool:
    """A directory `sregym snapshot run` wrote (scored or not), or one holding a `score.json`."""
    if (path / SCORE_JSON).is_file():
        return True
    try:
        info = json.loads((path / RUN_JSON).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("format") == RUN_FORMAT


def _unscored_card(path: Path, key: str) -> dict[str, Any]:
    return {"key": key, "name": path.name, "path": str(path), "kind": "snapshot", "scored": False, "agent": "?",
            "model": None, "noise": None, "started_at": None, "finished_at": None, "running": False,
            "attempts": 0, "planned": 0, "end_to_end": None, "score": None}


def snapshot_card(path: Path, key: str) -> dict[str, Any]:
    """One row of the runs list; an unscored run is listed, marked `scored: false`."""
    from sregym.report.source import NotAReportSource, load_source

    try:
        source = load_source(path)
    except NotAReportSource:
        return _unscored_card(path, key)
    recorded = source.recorded
    return {"key": key, "name": path.name, "path": str(path), "kind": "snapshot", "scored": True,
            "agent": source.agent, "model": source.model, "noise": source.noise, "started_at": None,
            "finished_at": None, "running": False, "attempts": len(source.attempts),
            "planned": len(source.attempts), "end_to_end": None, "score": recorded.get("score")}


def snapshot_view(path: Path, key: str) -> dict[str, Any]:
    """The run page of a scored snapshot run; raises `NotAReportSource` (with what to do) when
    it has not been scored."""
    from sregym.report.numbers import source_numbers
    from sregym.report.source import load_source

    source = load_source(path)
    numbers = source_numbers(source)
    recorded = source.recorded
    tasks = [{"task": t.get("task"), "problem": t.get("problem"), "seed": t.get("seed"),
              "layers": list(t.get("layers") or []), "score": t.get("score"), "checklist": t.get("checklist"),
              "repeats": [{k: r.get(k) for k in ("repeat", "score", "recall", "precision", "valid", "reason",
                                                 "entities")} for r in t.get("repeats") or []]}
             for t in recorded.get("tasks") or []]
    return {"kind": "snapshot", "run": snapshot_card(path, key),
            "score": recorded.get("score"), "checklist": recorded.get("checklist"), "judge": recorded.get("judge"),
            "repeats": recorded.get("repeats"), "dataset": recorded.get("dataset"),
            "layers": recorded.get("layers") or {}, "notes": list(recorded.get("notes") or []),
            "overall": numbers["overall"], "pass_hat_k": numbers["pass_hat_k"], "tasks": tasks}


__all__ = ["is_snapshot_dir", "snapshot_card", "snapshot_view"]
