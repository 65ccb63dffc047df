"""Registers the data plane's fluid engine (`sregym.twin.dataplane.engine`) as a controller."""

from __future__ import annotations

from sregym.twin.dataplane.engine import DataPlaneEngine

__all__ = ["DataPlaneEngine"]
