"""A Gymnasium-style session over the conductor, for RL training loops and scripted agents.

`reset()` starts a fresh attempt and returns the incident brief (the page an on-call engineer
gets) as the observation; `step({"tool": name, "args": {...}})` makes one tool call and returns
its observation. The reward is 0 until the attempt is scored, then the score (see `reward_of`).
`terminated` means the agent finished every phase by submitting; `truncated` means a limit ended
the attempt first — they are never both true, as Gymnasium requires for a clean bootstrap.
"""

from __future__ import annotations

from typing import Any

from sregym.env.conductor import Conductor
from sregym.env.models import AttemptResult
from sregym.problems.model import Problem


def reward_of(result: AttemptResult) -> float:
    """The mean over the attempt's phases of the phase score: diagnosis = root-cause score ×
    checklist score (0 when nothing was submitted), mitigation = 1 if verification passed, else
    0, detection = 1 if the yes/no answer was right, else 0. An environment failure scores 0."""
    if result.environment_failure:
        return 0.0
    scores = []
    if result.detection is not None:
        scores.append(1.0 if result.detection.passed else 0.0)
    if result.diagnosis is not None:
        d = result.diagnosis
        scores.append(d.root_cause_score * d.checklist_score if d.submitted else 0.0)
    if result.mitigation is not None:
        scores.append(1.0 if result.mitigation.passed else 0.0)
    return round(sum(scores) / len(scores), 6) if scores else 0.0


class Session:
    """One problem, many episodes (each `reset()` is a fresh twin and a fresh attempt)."""

    def __init__(self, problem: str | Problem, seed: int = 0, **conductor_options: Any) -> None:
        self.problem = problem
        self.seed = int(seed)
        self.options = dict(conductor_options)
        self._conductor: Conductor | None = None
        self._result: AttemptResult | None = None
        self._episode = 0

    # ---------------------------------------------------------------- API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start a new episode; `seed` replaces the session seed from now on."""
        self.close()
        if seed is not None:
            self.seed = int(seed)
        self._result = None
        self._episode += 1
        self._conductor = Conductor(self.problem, seed=self.seed, **{**self.options, **(options or {})})
        brief = self._conductor.start()
        info = {"seed": self.seed, "episode": self._episode, "phase": self._conductor.phase,
                "phases": list(brief.phases), "namespaces": list(brief.namespaces),
                "tools": [{"name": s.name, "description": s.description, "input_schema": s.input_schema}
                          for s in self._conductor.session.specs()]}
        return brief.text, info

    def step(self, action: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        conductor = self._require()
        if conductor.finished:
            return ("the episode is over; call reset() to start a new one", 0.0, not conductor.truncated,
                    conductor.truncated, self._info(is_error=True))
        tool, args, problem = _read_action(action)
        if problem:
            return problem, 0.0, False, False, self._info(is_error=True)
        observation = conductor.session.call(tool, args)
        reward = 0.0
        if conductor.finished:
            self._result = conductor.result()
            reward = reward_of(self._result)
        truncated = conductor.finished and conductor.truncated
        terminated = conductor.finished and not truncated
        return observation.text, reward, terminated, truncated, self._info(is_error=observation.is_error)

    def close(self) -> None:
        if self._conductor is not None:
            if not self._conductor.finished:
                self._conductor.result()
            self._conductor.close()
            self._conductor = None

    @property
    def conductor(self) -> Conductor | None:
        """The running attempt (for the runner and tests; an agent should not use it)."""
        return self._conductor

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ helpers
    def _require(self) -> Conductor:
        if self._conductor is None:
            raise RuntimeError("call reset() before step()")
        return self._conductor

    def _info(self, *, is_error: bool) -> dict[str, Any]:
        c = self._require()
        info: dict[str, Any] = {"phase": c.phase, "is_error": is_error, "tool_calls": c.session.tool_calls}
        if self._result is not None:
            info["result"] = self._result.model_dump(mode="json")
        return info


def _read_action(action: Any) -> tuple[str, dict[str, Any], str]:
    """(tool, args, problem): `problem` is non-empty when the action is malformed."""
    if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
        return "", {}, 'an action is a dict {"tool": name, "args": {...}}'
    args = action.get("args") or {}
    if not isinstance(args, dict):
        return "", {}, "action args must be a JSON object"
    extra = sorted(set(action) - {"tool", "args"})
    if extra:
        return "", {}, f"unknown action field(s) {', '.join(extra)}: use tool and args"
    return action["tool"], args, ""


def make(problem_id: str | Problem, seed: int = 0, **conductor_options: Any) -> Session:
    """A Gymnasium-style session for one problem (see `Conductor` for the options)."""
    return Session(problem_id, seed=seed, **conductor_options)


__all__ = ["Session", "make", "reward_of"]
