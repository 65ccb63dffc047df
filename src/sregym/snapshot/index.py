"""Reading a dataset: its `index.json` and the ground-truth files beside the tasks.

`dataset` writes a dataset; the runner (`run`) and the scorer (`score`) read it, and must agree on
what a task is, where its snapshot and ground truth are, and what makes an index unusable. Both go
through `read_index`, which checks everything that does not need the files themselves: the
format, a non-empty list of uniquely named tasks, and snapshot paths that stay inside the dataset
(a copied snapshot must never be the dataset root, which holds the answers).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sregym.errors import SregymError
from sregym.snapshot import layout
from sregym.snapshot.jsonfile import read_json

if TYPE_CHECKING:
    from sregym.types import GroundTruth

_HOW = "point --dataset at a directory written by `sregym snapshot dataset ... --out DIR`"
_REBUILD = "the dataset is damaged: build it again with `sregym snapshot dataset`"


class DatasetError(SregymError, ValueError):
    """A directory that is not a usable dataset; the message says what to do about it."""


@dataclass(frozen=True)
class DatasetTask:
    """One task of the index, paths resolved against the dataset root."""

    name: str
    snapshot: Path
    ground_truth: Path | None = None
    problem: str = ""
    seed: int | None = None
    layers: tuple[str, ...] | None = None  # only if the index lists them


@dataclass(frozen=True)
class DatasetIndex:
    root: Path
    doc: dict[str, Any]  # index.json as read
    tasks: tuple[DatasetTask, ...]
    fingerprint: str  # sha256 of index.json: tells a run on this dataset from a run on another one


def index_fingerprint(dataset: Path) -> str:
    return hashlib.sha256((Path(dataset) / layout.INDEX_JSON).read_bytes()).hexdigest()


def read_index(dataset: Path) -> DatasetIndex:
    """The dataset's index, checked (raises `DatasetError`)."""
    root = Path(dataset).resolve()
    if not root.is_dir():
        raise DatasetError(f"dataset directory not found: {dataset}; {_HOW}")
    path = root / layout.INDEX_JSON
    if not path.is_file():
        raise DatasetError(f"{dataset} has no {layout.INDEX_JSON}: {_HOW}")
    doc = read_json(path, "dataset index", DatasetError)
    if not isinstance(doc, dict) or doc.get("format") != layout.DATASET_FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise DatasetError(f"{path} is not a {layout.DATASET_FORMAT} index (format: {found!r}); {_HOW}")
    entries = doc.get("tasks")
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "task" in e for e in entries):
        raise DatasetError(f"{path}: `tasks` must be a list of objects with a `task` key")
    if not entries:
        raise DatasetError(f"{path} lists no tasks: build the dataset again with at least one problem")
    tasks: list[DatasetTask] = []
    seen: set[str] = set()
    for entry in entries:
        name = str(entry.get("task", ""))
        if not name or "/" in name or name.startswith("."):
            raise DatasetError(f"{path}: bad task entry {entry!r}")
        if name in seen:
            raise DatasetError(f"{path}: task {name} is listed twice")
        seen.add(name)
        snapshot = (root / str(entry.get("snapshot") or f"{layout.TASKS_DIR}/{name}")).resolve()
        if not snapshot.is_relative_to(root) or snapshot == root:
            raise DatasetError(f"{path}: the snapshot of {name} must be a directory inside the dataset")
        truth = root / str(entry.get("ground_truth") or f"{layout.GROUND_TRUTH_DIR}/{name}.json")
        seed = entry.get("seed")
        layers = entry.get("layers")
        tasks.append(DatasetTask(name=name, snapshot=snapshot, ground_truth=truth.resolve(),
                                 problem=str(entry.get("problem", "")),
                                 seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
                                 layers=tuple(str(x) for x in layers) if isinstance(layers, list) else None))
    return DatasetIndex(root=root, doc=doc, tasks=tuple(tasks), fingerprint=index_fingerprint(root))


def load_ground_truth(path: Path, what: str = "ground truth") -> GroundTruth:
    """The `GroundTruth` of a `ground_truth.json`, rebuilt exactly as the live oracle holds it
    (aliases included); raises `DatasetError`."""
    from pydantic import ValidationError

    from sregym.types import GroundTruth

    data = read_json(path, what, DatasetError)
    if not isinstance(data, dict) or not isinstance(data.get("ground_truth"), dict):
        raise DatasetError(f"{path}: no valid `ground_truth` object (missing); {_REBUILD}")
    try:
        return GroundTruth.model_validate(data["ground_truth"])
    except ValidationError as err:
        detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'ground_truth'}: {e['msg']}" for e in err.errors()[:3])
        raise DatasetError(f"{path}: no valid `ground_truth` object ({detail}); {_REBUILD}") from None


__all__ = ["DatasetError", "DatasetIndex", "DatasetTask", "index_fingerprint", "load_ground_truth", "read_index"]
