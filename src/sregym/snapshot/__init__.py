"""Offline incident snapshots: any problem, at any seed and noise level, frozen into a directory of
alerts, Kubernetes events and objects, metrics, logs, traces and topology (format
`sregym-snapshot/1`, documented in `layout.README_TEXT` and docs/snapshots.md) with its ground
truth kept outside; datasets of many snapshots; and, in sibling modules, the agent output format,
running agents on snapshots and scoring them (precision at full recall). Heavy modules are
imported lazily so that readers (`read_tsv`) stay cheap to import.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "export_snapshot": "sregym.snapshot.export",
    "write_snapshot": "sregym.snapshot.export",
    "SnapshotError": "sregym.snapshot.export",
    "build_dataset": "sregym.snapshot.dataset",
    "read_tsv": "sregym.snapshot.tsv",
    "write_tsv": "sregym.snapshot.tsv",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sregym.snapshot' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = sorted(_LAZY)
