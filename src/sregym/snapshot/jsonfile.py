"""JSON files of snapshots, datasets and runs: written one canonical way, read with one kind of error.

Every JSON file sregym writes here (`snapshot.json`, `index.json`, `ground_truth.json`, `run.json`,
`status.json`, `score.json` ...) goes through `write_json`, so the same content always gives the same
bytes (sorted keys, two-space indent, UTF-8 not escaped, LF, trailing newline): snapshots and datasets
promise byte-identical output. JSON inside TSV cells and trajectory lines have their one form here too. `read_json` turns a missing or broken file into the caller's own
error type with a message naming the file, because the reader is a person who has to fix a path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def dumps_json(doc: Any) -> str:
    """The canonical text of `doc`."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def dumps_compact(doc: Any) -> str:
    """One-line JSON with sorted keys: a TSV cell (`body`, `labels`, `attributes`)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dumps_line(entry: dict[str, Any]) -> str:
    """One line of a JSONL trajectory (sorted keys; a value JSON cannot hold is written as text)."""
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, default=str)


def write_json(path: Path, doc: Any) -> Path:
    """Write `doc` canonically (parent directories created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_json(doc), encoding="utf-8", newline="\n")
    return path


def read_json(path: Path, what: str, error: type[Exception] = ValueError) -> Any:
    """The parsed content of `path`; raises `error` ("<what> not found: <path>" or "<what> <path>
    is not readable JSON: ...") when the file is missing or broken."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except (OSError, ValueError) as err:
        raise error(f"{what} {path} is not readable JSON: {err}") from None


__all__ = ["dumps_compact", "dumps_json", "dumps_line", "read_json", "write_json"]
