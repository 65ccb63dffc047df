"""An async, multi-turn, tool-calling environment for LLM RL agent loops (docs/rl.md).

The shape LLM RL frameworks wrap: `await reset()` gives the opening messages (a short system
prompt and the incident page as the user turn) and the tool schemas (OpenAI `tools` entries;
`mcp_tools()` gives the same as MCP `inputSchema` entries); `await step(tool_call)` runs one
tool call from the model — an OpenAI tool call, an MCP-style `{"name", "arguments"}` or
sregym's `{"tool", "args"}` (`gym.actions`) — and returns the tool message to append, the
reward and whether the episode is done.

Rewards: by default the episode's only reward is the score when it ends (`env.gym.reward_of`,
in [0, 1]; 0 on every earlier step). `shaped=True` adds small *heuristic* partial rewards
(`Shaping`: a bonus when a phase is submitted, a penalty for a malformed tool call). They are
off by default, are not the benchmark's score (`info["score"]` always is), and never look at the
ground truth before the end.

Many environments can run in one event loop: with warm resets each episode lives in its own
forked child (`gym.episode`), and a step awaits the child's answer without blocking the loop,
so N episodes use up to N cores. The first reset of a (problem, seed) prepares the twin in this
process and blocks the loop while it does (seconds); later resets take a fraction of a second.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from sregym.gym.actions import MalformedCall, read_call
from sregym.gym.episode import Episode, ForkedEpisode, Opening, Turn, open_episode
from sregym.gym.text import MAX_OBSERVATION_CHARS, bounded
from sregym.problems import get_problem

SYSTEM_PROMPT = ("You are the on-call site reliability engineer for a Kubernetes application. Use the tools to "
                 "investigate, then act on the task in the incident page. Answer only with tool calls.")


@dataclass(frozen=True)
class Shaping:
    """The optional partial rewards (`shaped=True`); heuristics, not the score."""

    phase_submitted: float = 0.05  # a phase ended by its submission tool
    malformed_call: float = -0.02  # the model's tool call could not be read


@dataclass(frozen=True)
class Reset:
    messages: list[dict[str, Any]]  # the opening chat: system prompt, incident page
    tools: list[dict[str, Any]]  # OpenAI `tools` entries
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepResult:
    message: dict[str, Any]  # the tool message to append to the chat
    observation: str
    reward: float
    done: bool
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class ToolCallEnv:
    """One problem; episodes one after another. See the module docstring."""

    def __init__(self, problem_id: str, seed: int = 0, *, warm: bool = True, shaped: bool = False,
                 shaping: Shaping | None = None, max_observation_chars: int = MAX_OBSERVATION_CHARS,
                 **options: Any) -> None:
        self.problem = get_problem(problem_id)
        self.seed = int(seed)
        self.warm = warm
        self.shaped = shaped
        self.shaping = shaping or Shaping()
        self.max_observation_chars = max_observation_chars
        self._options = {"fixed_time": True, **options}
        self._episode: Episode | None = None
        self._opening: Opening | None = None
        self._done = True
        self.total_reward = 0.0

    async def reset(self, seed: int | None = None) -> Reset:
        """A new episode (`seed` replaces the twin seed from now on)."""
        await self.close()
        if seed is not None:
            self.seed = int(seed)
        episode = open_episode(self.problem, self.seed, dict(self._options), warm=self.warm)
        try:
            opening = await episode.astart() if isinstance(episode, ForkedEpisode) else episode.start()
        except BaseException:
            episode.close()
            raise
        self._episode, self._opening, self._done, self.total_reward = episode, opening, False, 0.0
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": bounded(opening.page, self.max_observation_chars)}]
        return Reset(messages=messages, tools=self.openai_tools(),
                     info={"seed": opening.seed, "phase": opening.phase, "phases": list(opening.phases),
                           "warm": opening.warm})

    def openai_tools(self) -> list[dict[str, Any]]:
        """The tools as OpenAI chat-completions `tools` entries (after `reset()`)."""
        return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                  "parameters": t["input_schema"]}} for t in self._tools()]

    def mcp_tools(self) -> list[dict[str, Any]]:
        """The tools as MCP `tools/list` entries (after `reset()`)."""
        return [{"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
                for t in self._tools()]

    async def step(self, tool_call: Any) -> StepResult:
        """Run one tool call; a malformed one is an error tool message, not an exception."""
        if self._episode is None or self._opening is None:
            raise RuntimeError("call reset() before step()")
        call_id = tool_call.get("id") if isinstance(tool_call, dict) else None
        try:
            call = read_call(tool_call)
        except MalformedCall as exc:
            partial = self.shaping.malformed_call if self.shaped else 0.0
            return self._result(call_id, str(exc), partial, self._opening.phase, is_error=True, turn=None)
        episode = self._episode
        turn = await episode.acall(call.tool, call.args) if isinstance(episode, ForkedEpisode) else episode.call(
            call.tool, call.args)
        partial = 0.0
        if self.shaped and turn.phase != self._opening.phase and not turn.truncated:
            partial = self.shaping.phase_submitted
        self._opening = dataclasses.replace(self._opening, phase=turn.phase)
        return self._result(call.call_id or call_id, turn.observation, partial + turn.reward, turn.phase,
                            is_error=turn.is_error, turn=turn)

    async def close(self) -> None:
        if self._episode is not None:
            episode, self._episode = self._episode, None
            episode.close()

    def _tools(self) -> tuple[dict[str, Any], ...]:
        if self._opening is None:
            raise RuntimeError("the tools are known after reset()")
        return self._opening.tools

    def _result(self, call_id: str | None, text: str, reward: float, phase: str, *, is_error: bool,
                turn: Turn | None) -> StepResult:
        content = bounded(text, self.max_observation_chars)
        message: dict[str, Any] = {"role": "tool", "content": content}
        if call_id:
            message["tool_call_id"] = call_id
        done = bool(turn and turn.finished)
        truncated = bool(turn and turn.finished and turn.truncated)
        self.total_reward = round(self.total_reward + reward, 6)
        self._done = done
        info: dict[str, Any] = {"phase": phase, "is_error": is_error}
        if turn is not None:
            info["tool_calls"] = turn.tool_calls
            if turn.result is not None:
                info["score"] = turn.reward
                info["result"] = turn.result
        return StepResult(message=message, observation=content, reward=round(reward, 6), done=done,
                          terminated=done and not truncated, truncated=truncated, info=info)


__all__ = ["SYSTEM_PROMPT", "Reset", "Shaping", "StepResult", "ToolCallEnv"]
