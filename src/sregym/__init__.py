"""sregym: a live benchmark and training gym for AI SRE agents.

Importing the package is cheap on purpose: heavy parts (the twin, servers, SDKs) load lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
