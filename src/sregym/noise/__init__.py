"""Noise: seeded, scheduled, self-healing disturbances on uninvolved components."""

from __future__ import annotations

from sregym.noise.schedule import PROFILES, Disturbance, NoiseScheduler

__all__ = ["PROFILES", "Disturbance", "NoiseScheduler"]
