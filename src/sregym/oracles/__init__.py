"""Oracles: the diagnosis oracle (root-cause entities + checklist judge) and the mitigation oracle
(registered semantic checks over a verification window)."""

from __future__ import annotations

from sregym.oracles.diagnosis import root_cause_score, score_diagnosis

__all__ = ["root_cause_score", "score_diagnosis"]
