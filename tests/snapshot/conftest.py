"""Shared by the snapshot tests: `tree_digest`, one hash over every file of a directory tree (paths
and bytes), for the byte-identical promises of exports and datasets."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@pytest.fixture
def tree_digest() -> Callable[[Path], str]:
    return _digest
