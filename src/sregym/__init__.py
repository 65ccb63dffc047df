"""sregym: a live benchmark and training gym for AI SRE agents.

Importing the package is cheap on purpose: heavy parts (the twin, servers, SDKs) load lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.env.gym import Session


def make(problem_id: str, seed: int = 0, **options: Any) -> Session:
    """A Gymnasium-style session for one problem: `reset()` → (brief, info), `step(action)` →
    (observation, reward, terminated, truncated, info). Options go to `sregym.env.Conductor`."""
    from sregym.env.gym import make as _make

    return _make(problem_id, seed=seed, **options)


__all__ = ["__version__", "make"]
