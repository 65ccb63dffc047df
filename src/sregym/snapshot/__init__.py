"""Offline incident snapshots: any problem, at any seed and noise level, frozen into a directory of
alerts, Kubernetes events and objects, metrics, logs, traces and topology (format
`sregym-snapshot/1`, documented in `layout.README_TEXT` and docs/snapshots.md) with its ground
truth kept outside; datasets of many snapshots; and, in sibling modules, the agent output format,
running agents on snapshots and scoring them (precision at full recall). Heavy modules are
imported lazily so that readers (`read_tsv`) stay cheap to import.
"""

from __future__ import annotations

from sregym.lazy import lazy_attributes

_LAZY = {
    "export_snapshot": "sregym.snapshot.export",
    "write_snapshot": "sregym.snapshot.export",
    "SnapshotError": "sregym.snapshot.export",
    "build_dataset": "sregym.snapshot.dataset",
    "read_tsv": "sregym.snapshot.tsv",
    "write_tsv": "sregym.snapshot.tsv",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = sorted(_LAZY)
