"""Running one attempt: the conductor, its limits, the incident brief and the attempt result,
and the Gymnasium-style session over them."""

from __future__ import annotations

from sregym.env.conductor import PHASES, Conductor, EnvironmentFailure, gold_commands, gold_diagnosis
from sregym.env.gym import Session, make, reward_of
from sregym.env.models import (
           AttemptResult,
           Brief,
           DiagnosisOutcome,
           Limits,
           MitigationOutcome,
           TrajectoryEntry,
)

__all__ = ["PHASES", "AttemptResult", "Brief", "Conductor", "DiagnosisOutcome", "EnvironmentFailure", "Limits",
           "MitigationOutcome", "Session", "TrajectoryEntry", "gold_commands", "gold_diagnosis", "make", "reward_of"]
