"""Running one attempt: the conductor, its configuration and limits, what an agent may be
granted, the incident brief and the attempt result, and the Gymnasium-style session over them.

The conductor (which pulls in the twin) is imported lazily, so that the light modules here —
`config`, `capabilities`, `models` — can be imported by the command line and the agent base
class without it.
"""

from __future__ import annotations

from sregym.lazy import lazy_attributes

_LAZY = {
    "Capability": "sregym.env.capabilities",
    "GoldHooks": "sregym.env.capabilities",
    "Grants": "sregym.env.capabilities",
    "ShellAccess": "sregym.env.capabilities",
    "PHASES": "sregym.env.config",
    "AttemptConfig": "sregym.env.config",
    "Conductor": "sregym.env.conductor",
    "EnvironmentFailure": "sregym.env.conductor",
    "Session": "sregym.env.gym",
    "make": "sregym.env.gym",
    "reward_of": "sregym.env.gym",
    "AttemptResult": "sregym.env.models",
    "Brief": "sregym.env.models",
    "DiagnosisOutcome": "sregym.env.models",
    "Limits": "sregym.env.models",
    "MitigationOutcome": "sregym.env.models",
    "TrajectoryEntry": "sregym.env.models",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = sorted(_LAZY)
