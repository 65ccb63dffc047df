"""`SREGymEnv`: one sregym problem as a Gymnasium environment (`gymnasium.make("sregym/...")`).

An episode is one attempt: `reset()` prepares the incident and returns the incident page,
`step(action)` makes one tool call (the action is the JSON text of a tool call, see
`gym.actions`) and returns its output. The reward is 0 until the attempt ends, then its score
(`env.gym.reward_of`, in [0, 1]); `terminated` means the agent submitted every phase,
`truncated` that a limit of the problem (or of `limits=`) ended the attempt first.

Spaces: observation and action are `Text` over printable ASCII (`gym.text`); observations are
cut to `max_observation_chars` with a marker, actions may be up to `MAX_ACTION_CHARS` long.

Seeds: the twin's seed is `seed=` at construction; `reset(seed=s)` replaces it from then on;
`reset()` without a seed replays the current one (a new twin, the same incident), so the same
seed and the same actions give the same observations. The served clock reads simulated time
(`fixed_time=True`, the default here) so observations carry no wall-clock instants.

Resets are forked from a warm twin when this process can fork (`gym.episode`), in well under a
second; `warm=False` builds every episode from scratch. The other keyword options are the
conductor's (`noise=`, `phases=`, `limits=`, `seconds_per_call=` ...).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sregym.extras import require

gymnasium = require("gymnasium", "the Gymnasium environments (sregym.gym)")

from gymnasium import spaces  # noqa: E402 - after the extra check, so a missing extra is one line

from sregym.env.config import FIELDS  # noqa: E402
from sregym.gym.actions import MalformedCall, read_call  # noqa: E402
from sregym.gym.episode import Episode, Opening, open_episode  # noqa: E402
from sregym.gym.text import CHARSET, MAX_ACTION_CHARS, MAX_OBSERVATION_CHARS, bounded  # noqa: E402
from sregym.problems import get_problem  # noqa: E402


class SREGymEnv(gymnasium.Env):  # type: ignore[misc]
    """One problem; many episodes. See the module docstring."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, problem_id: str, seed: int = 0, *, warm: bool = True,
                 max_observation_chars: int = MAX_OBSERVATION_CHARS, render_mode: str | None = None,
                 **options: Any) -> None:
        self.problem = get_problem(problem_id)
        self.problem_id = problem_id
        self.twin_seed = int(seed)
        self.warm = bool(warm)
        self.render_mode = render_mode
        self.max_observation_chars = int(max_observation_chars)
        self._options = {"fixed_time": True, **options}
        self.observation_space = spaces.Text(max_length=self.max_observation_chars, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=0, charset=CHARSET)
        self._episode: Episode | None = None
        self._opening: Opening | None = None
        self._episodes = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """A new attempt. `options` may override conductor settings (`noise`, `phases`,
        `limits` ...) for this episode only."""
        super().reset(seed=seed)
        if seed is not None:
            self.twin_seed = int(seed)
        unknown = sorted(set(options or {}) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown reset option(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}")
        self._end_episode()
        episode = open_episode(self.problem, self.twin_seed, {**self._options, **(options or {})}, warm=self.warm)
        try:
            opening = episode.start()
        except BaseException:
            episode.close()
            raise
        self._episode, self._opening = episode, opening
        self._episodes += 1
        info = {"seed": opening.seed, "episode": self._episodes, "phase": opening.phase,
                "phases": list(opening.phases), "namespaces": list(opening.namespaces),
                "tools": [dict(t) for t in opening.tools], "warm": opening.warm}
        return bounded(opening.page, self.max_observation_chars), info

    def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        try:
            call = read_call(action)
        except MalformedCall as exc:
            opening = self._opening
            return (bounded(str(exc), self.max_observation_chars), 0.0, False, False,
                    {"phase": opening.phase if opening else "", "is_error": True, "malformed": True})
        turn = self._episode.call(call.tool, call.args)
        if self._opening is not None:  # the phase moves on with submissions
            self._opening = dataclasses.replace(self._opening, phase=turn.phase)
        info: dict[str, Any] = {"phase": turn.phase, "is_error": turn.is_error, "tool_calls": turn.tool_calls}
        if turn.result is not None:
            info["result"] = turn.result
        truncated = turn.finished and turn.truncated
        terminated = turn.finished and not truncated
        return bounded(turn.observation, self.max_observation_chars), turn.reward, terminated, truncated, info

    def close(self) -> None:
        self._end_episode()
        super().close()

    def _end_episode(self) -> None:
        if self._episode is not None:
            episode, self._episode = self._episode, None
            episode.close()


def make_env(problem_id: str, seed: int = 0, **kwargs: Any) -> SREGymEnv:
    """The environment of `problem_id` (Gymnasium's entry point for every sregym id)."""
    return SREGymEnv(problem_id, seed=seed, **kwargs)


__all__ = ["SREGymEnv", "make_env"]
