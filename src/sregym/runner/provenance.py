"""Where a run came from: the sregym version and source revision, Python and platform.

A results directory outlives the checkout that made it; a number in a paper must be traceable to
the code that produced it. The git revision is read when sregym runs from a git checkout (an
editable install); an installed wheel has none and says so (`null`).
"""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any


def now_iso() -> str:
    """The wall-clock time now, UTC, RFC 3339 (when a run started or ended)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@cache
def git_revision() -> tuple[str | None, bool | None]:
    """(commit, has uncommitted changes) of the checkout sregym is imported from, or (None, None)."""
    import sregym

    root = Path(sregym.__file__).resolve().parent.parent.parent
    if not (root / ".git").exists():
        return None, None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(dirty)


def provenance() -> dict[str, Any]:
    """The facts recorded in `run.json` about the software that ran."""
    from sregym import __version__

    revision, dirty = git_revision()
    return {"sregym_version": __version__, "git_revision": revision, "git_dirty": dirty,
            "python": platform.python_version(), "python_executable": sys.executable,
            "platform": platform.platform()}


__all__ = ["git_revision", "now_iso", "provenance"]
