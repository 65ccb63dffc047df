"""`baseline`: a deterministic, model-free SRE agent that follows an on-call runbook.

Only the tool catalogue is used (`session.call(...)`); the package never imports problem, fault
or oracle code, so it is evaluated on incidents it has never seen.
"""

from __future__ import annotations

from sregym.agents.baseline.agent import BaselineAgent

__all__ = ["BaselineAgent"]
