"""`react`: a tool-calling LLM agent for any OpenAI-compatible chat-completions endpoint.

One model turn is one step: the model sees the conversation and the tool catalogue of the
current phase and answers with tool calls, which run through the `ToolSession` and come back as
(truncated) observations. The diagnosis phase ends with `submit_diagnosis`; the model then writes
a short hand-over note, and the mitigation phase starts from a fresh context holding the brief,
that note and the submitted diagnosis — long investigations do not drag their whole transcript
(and its token cost) into the fix.

Robustness is part of the agent, because a benchmark run must not die on an endpoint hiccup:
transient API errors (429, 5xx, connection, timeouts) are retried with exponential back-off;
malformed tool arguments go back to the model as an error observation; per-phase step budgets
and a whole-attempt token budget stop a runaway loop (the attempt then ends as truncated).
Tokens are reported through `session.note_step`, so they land in the results.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.agents import prompts
from sregym.agents.base import Agent
from sregym.agents.registry import agent
from sregym.tools.output import compact
from sregym.tools.session import INVESTIGATION_TOOLS, SUBMIT_TOOLS

if TYPE_CHECKING:
    from sregym.env.models import Brief
    from sregym.tools.session import ToolSession

DEFAULTS: dict[str, Any] = {
    "model": None,
    "base_url": None,
    "api_key_env": "OPENAI_API_KEY",
    "max_steps": 40,  # model turns per phase
    "max_tokens": 1_000_000,  # prompt + completion tokens over the whole attempt
    "max_observation_chars": 6_000,
    "keep_observations": 12,  # older tool outputs are elided from the context
    "max_retries": 5,
    "retry_base_s": 1.0,
    "retry_max_s": 30.0,
    "request_timeout_s": 120.0,
    "temperature": 0.0,
    "max_completion_tokens": None,
    "summarize": True,
    "preflight_timeout_s": 15.0,  # how long the endpoint may take to answer the check before a run
}
_ELIDED = "[older observation elided to save context; repeat the call if you need it]"


class AgentBudgetExceeded(Exception):
    """The agent's own budget (steps or tokens) ran out."""


@agent
class ReactAgent(Agent):
    """Reason-and-act loop over OpenAI-compatible tool calling."""

    name = "react"
    clock: ClassVar[str | None] = None  # either clock works; the run's choice stands
    offline_driver: ClassVar[str | None] = "react"
    known_options: ClassVar[dict[str, Any]] = DEFAULTS
    extras: ClassVar[tuple[str, ...]] = ("llm",)

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"unknown react option(s) {', '.join(unknown)}; known: {', '.join(DEFAULTS)}")
        super().__init__(**{**DEFAULTS, **options})
        if not self.options["model"]:
            raise ValueError("the react agent needs a model: --model NAME (and --base-url for a local server)")
        from sregym.extras import require

        require("openai", "the react agent")
        self.stop_reason: str | None = None
        self.transcript: list[dict[str, Any]] = []  # every request/response pair, for inspection
        self.tokens_in = 0
        self.tokens_out = 0
        self._api_key = self._resolve_key()

    # ------------------------------------------------------------ config
    def _resolve_key(self) -> str:
        """The API key from the environment. A local server (vLLM, Ollama) usually needs none,
        so a missing default key is fine when `--base-url` is given."""
        env_name = str(self.options["api_key_env"] or "OPENAI_API_KEY")
        key = os.environ.get(env_name, "")
        if key:
            return key
        if self.options["base_url"] and env_name == "OPENAI_API_KEY":
            return "sregym-no-key"
        if self.options["base_url"]:
            raise ValueError(f"{env_name} is not set (named by --api-key-env)")
        raise ValueError(f"{env_name} is not set: export it, or use --base-url for a local server")

    @property
    def endpoint(self) -> str:
        """The chat-completions base URL this agent talks to."""
        return str(self.options["base_url"] or "https://api.openai.com/v1").rstrip("/")

    def preflight(self) -> None:
        """Ask the endpoint for its model list once, so a server that is down, unreachable or
        rejects the key stops the run before the first attempt (not after a retry back-off in
        every attempt). Any HTTP answer other than an auth refusal counts as alive: some local
        servers do not implement `/models`."""
        import httpx

        from sregym.errors import SetupError

        url = f"{self.endpoint}/models"
        try:
            response = httpx.get(url, headers={"Authorization": f"Bearer {self._api_key}"},
                                 timeout=float(self.options["preflight_timeout_s"]))
        except httpx.TimeoutException:
            raise SetupError(f"the model endpoint {self.endpoint} did not answer within "
                             f"{self.options['preflight_timeout_s']:g}s (GET {url}); is the server up?") from None
        except httpx.HTTPError as exc:
            raise SetupError(f"the model endpoint {self.endpoint} cannot be reached (GET {url}): "
                             f"{type(exc).__name__}: {exc}") from None
        if response.status_code in (401, 403):
            raise SetupError(f"the model endpoint {self.endpoint} refused the API key from "
                             f"{self.options['api_key_env']} (HTTP {response.status_code} on GET {url})")

    def _client(self) -> Any:
        from sregym.extras import require

        openai = require("openai", "the react agent")

        return openai.OpenAI(api_key=self._api_key, base_url=self.options["base_url"] or None,
                             max_retries=0, timeout=float(self.options["request_timeout_s"]))

    # --------------------------------------------------------------- run
    def run(self, session: ToolSession, brief: Brief) -> None:
        client = self._client()
        summary: str | None = None
        try:
            if session.phase == "detection":
                messages = [{"role": "system", "content": prompts.DETECTION_SYSTEM_PROMPT},
                            {"role": "user", "content": prompts.DETECTION_TASK.format(brief=brief.text)}]
                self._phase_loop(client, session, messages, "detection")
            if session.phase == "diagnosis":
                task = prompts.DIAGNOSIS_TASK.format(brief=brief.text)
                if "detection" in brief.phases:
                    task += " " + prompts.AFTER_DETECTION
                messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT},
                            {"role": "user", "content": task}]
                submitted = self._phase_loop(client, session, messages, "diagnosis")
                if session.phase == "mitigation":
                    summary = self._hand_over(client, session, messages, submitted)
            if session.phase == "mitigation":
                intro = prompts.SUMMARY_INTRO if summary else prompts.MITIGATION_ONLY_INTRO
                task = prompts.MITIGATION_TASK.format(brief=brief.text, summary_intro=intro, summary=summary or "")
                messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT},
                            {"role": "user", "content": task.rstrip()}]
                self._phase_loop(client, session, messages, "mitigation")
        except AgentBudgetExceeded as exc:
            self.stop_reason = str(exc)
            print(f"[sregym] react: {exc}; stopping", file=sys.stderr)
        finally:
            client.close()

    def _phase_loop(self, client: Any, session: ToolSession, messages: list[dict[str, Any]],
                    phase: str) -> dict[str, Any] | None:
        """Model turns until the phase's submit tool succeeds (returns its arguments) or the
        attempt ends."""
        # A session may bring its own catalogue (the offline snapshot tools); the live one by default.
        submit_tool = getattr(session, "submit_tools", SUBMIT_TOOLS)[phase]
        names = set(getattr(session, "investigation_tools", INVESTIGATION_TOOLS)) | {submit_tool}
        tools = [s.to_openai() for s in session.specs() if s.name in names]
        for _ in range(int(self.options["max_steps"])):
            if session.phase != phase:
                return None
            self._check_tokens()
            message = self._complete(client, session, messages, tools)
            # Only function calls exist in this catalogue; anything else is treated as no call.
            calls = [c for c in (message.tool_calls or []) if getattr(c, "function", None) is not None]
            assistant: dict[str, Any] = {"role": "assistant", "content": message.content or (None if calls else "")}
            if calls:
                assistant["tool_calls"] = [{"id": c.id, "type": "function",
                                            "function": {"name": c.function.name,
                                                         "arguments": c.function.arguments or ""}}
                                           for c in calls]
            messages.append(assistant)
            session.note_message(message.content, tool_calls=[
                {"name": c.function.name, "arguments": c.function.arguments or ""} for c in calls])
            if not calls:
                messages.append({"role": "user", "content": prompts.NUDGE.format(submit_tool=submit_tool)})
                continue
            submitted: dict[str, Any] | None = None
            for call in calls:
                text, args, ok = self._run_call(session, call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                if ok and call.function.name == submit_tool:
                    submitted = args
            self._elide(messages)
            if submitted is not None and session.phase != phase:
                return submitted
        if session.phase == phase:
            raise AgentBudgetExceeded(f"{phase} phase step budget of the react agent used up "
                                      f"({self.options['max_steps']} model turns)")
        return None

    def _run_call(self, session: ToolSession, name: str, raw: str | None) -> tuple[str, dict[str, Any], bool]:
        """(observation, parsed args, succeeded). Bad JSON never reaches the session: the model
        is told and may try again."""
        try:
            args = json.loads(raw) if raw and raw.strip() else {}
        except json.JSONDecodeError as exc:
            return prompts.MALFORMED_ARGUMENTS.format(tool=name, detail=exc.msg), {}, False
        if not isinstance(args, dict):
            return prompts.MALFORMED_ARGUMENTS.format(tool=name, detail=f"got a JSON {type(args).__name__}"), {}, False
        result = session.call(name, args)
        text = compact(result.text, int(self.options["max_observation_chars"]))
        return (f"error: {text}" if result.is_error else text), args, not result.is_error

    def _hand_over(self, client: Any, session: ToolSession, messages: list[dict[str, Any]],
                   submitted: dict[str, Any] | None) -> str:
        """The note that carries the diagnosis phase into the mitigation phase: the submitted
        diagnosis verbatim, plus (optionally) the model's own hand-over note."""
        parts = []
        if submitted:
            parts.append("Submitted diagnosis: " + json.dumps(submitted, sort_keys=True))
        if self.options["summarize"]:
            self._check_tokens()
            request = [*messages, {"role": "user", "content": prompts.SUMMARY_REQUEST}]
            try:
                note = (self._complete(client, session, request, None, step=False).content or "").strip()
            except RuntimeError as exc:  # the submitted diagnosis alone still carries the phase over
                print(f"[sregym] react: no hand-over note ({exc})", file=sys.stderr)
                note = ""
            if note:
                parts.append("Your hand-over note:\n" + note)
                session.note_message(note, purpose="handover")
        return "\n\n".join(parts)

    # ---------------------------------------------------------- the API
    def _complete(self, client: Any, session: ToolSession, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None, *, step: bool = True) -> Any:
        """One chat completion, retried on transient errors; counts tokens."""
        import openai

        kwargs: dict[str, Any] = {"model": self.options["model"], "messages": messages,
                                  "temperature": float(self.options["temperature"])}
        if tools:
            kwargs["tools"] = tools
        if self.options["max_completion_tokens"]:
            kwargs["max_tokens"] = int(self.options["max_completion_tokens"])
        retries = int(self.options["max_retries"])
        for attempt in range(retries + 1):
            try:
                response = client.chat.completions.create(**kwargs)
                break
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                error: Exception = exc
            except openai.APIStatusError as exc:
                if exc.status_code not in (408, 409, 429) and exc.status_code < 500:
                    raise RuntimeError(f"the model endpoint refused the request: HTTP {exc.status_code}: "
                                       f"{exc.message}") from None
                error = exc
            if attempt == retries:
                raise RuntimeError(f"the model endpoint kept failing after {retries} retries: {error}") from None
            delay = self._backoff(attempt, error)
            self.transcript.append({"retry": attempt + 1, "error": f"{type(error).__name__}: {error}",
                                    "delay_s": delay})
            time.sleep(delay)
        usage = getattr(response, "usage", None)
        tin = getattr(usage, "prompt_tokens", None) if usage is not None else None
        tout = getattr(usage, "completion_tokens", None) if usage is not None else None
        self.tokens_in += int(tin or 0)
        self.tokens_out += int(tout or 0)
        if step:
            session.note_step(tokens_in=tin, tokens_out=tout)
        elif usage is not None:  # the hand-over note is not a step, but its tokens count
            session.tokens_in = (session.tokens_in or 0) + int(tin or 0)
            session.tokens_out = (session.tokens_out or 0) + int(tout or 0)
        if not response.choices:
            raise RuntimeError("the model endpoint returned no choices")
        message = response.choices[0].message
        self.transcript.append({"request_messages": len(messages), "content": message.content,
                                "tool_calls": [c.function.name for c in (message.tool_calls or [])],
                                "tokens_in": tin, "tokens_out": tout})
        return message

    def _backoff(self, attempt: int, error: Exception) -> float:
        """Exponential back-off, or the server's Retry-After when it gives one."""
        delay = float(self.options["retry_base_s"]) * (2 ** attempt)
        response = getattr(error, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        if header:
            with contextlib.suppress(ValueError):
                delay = float(header)
        return min(delay, float(self.options["retry_max_s"]))

    def _check_tokens(self) -> None:
        budget = self.options["max_tokens"]
        if budget is not None and self.tokens_in + self.tokens_out >= int(budget):
            raise AgentBudgetExceeded(f"token budget of the react agent used up "
                                      f"({self.tokens_in + self.tokens_out} >= {budget} tokens)")

    def _elide(self, messages: list[dict[str, Any]]) -> None:
        """Keep only the newest `keep_observations` tool outputs in full."""
        keep = int(self.options["keep_observations"])
        tool_msgs = [m for m in messages if m["role"] == "tool" and m["content"] != _ELIDED]
        for m in tool_msgs[:-keep] if keep > 0 else tool_msgs:
            m["content"] = _ELIDED


__all__ = ["DEFAULTS", "AgentBudgetExceeded", "ReactAgent"]
