"""`sregym view`: a local web viewer of run directories.

A researcher looks at a run the way Inspect users open `inspect view`: the runs, each run's rates
with their uncertainty, the per-problem matrix, and every attempt down to each tool call, the
submitted diagnosis next to the ground truth and each mitigation check. It runs on the
researcher's machine (never the agent's), so it may show the ground truth from the problem
registry. Static HTML/JS/CSS ship with the package: no build step for users.
"""

from __future__ import annotations

from sregym.viewer.app import create_app

__all__ = ["create_app"]
