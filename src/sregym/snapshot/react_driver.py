"""The `react` agent offline: the live tool-calling loop over the snapshot tools of `file_tools`.

The model gets the snapshot prompts (one phase, diagnosis, answered by `submit_root_causes`) and
four investigation tools on the read-only copy; its `shell` runs confined with no network unless
`-o allow_network=1` says otherwise, and the run refuses to start if that cannot be guaranteed.
The tool options below are taken out of the options before the agent sees its own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sregym.agents import prompts
from sregym.agents.react import AgentBudgetExceeded, ReactAgent
from sregym.snapshot.driver import AgentResult, Driver, Trajectory
from sregym.snapshot.file_tools import SnapshotToolSession
from sregym.snapshot.sandbox import ConfinedShell, SandboxError, Workspace, namespace_problem
from sregym.snapshot.task_text import app_name, overview

# Options of the snapshot tools, taken out before the react agent sees its own options.
REACT_TOOL_OPTIONS: dict[str, Any] = {"allow_network": False, "shell_time_limit_s": 30.0,
                                      "shell_output_chars": 10_000}
REACT_OVERRIDES: dict[str, Any] = {"max_steps": 100}  # turns, like ITBench-AA's agent


class SnapshotReactAgent(ReactAgent):
    """`react` with the snapshot prompts: one phase (diagnosis), answered by submit_root_causes."""

    def run(self, session: Any, brief: Any) -> None:
        client = self._client()
        try:
            messages = [{"role": "system", "content": prompts.SNAPSHOT_SYSTEM_PROMPT},
                        {"role": "user", "content": prompts.SNAPSHOT_TASK.format(overview=brief.text)}]
            self._phase_loop(client, session, messages, "diagnosis")
        except AgentBudgetExceeded as exc:
            self.stop_reason = str(exc)
            print(f"[sregym] react: {exc}; stopping", file=sys.stderr)
        finally:
            client.close()


class ReactDriver(Driver):
    """The live `react` loop over `SnapshotToolSession`."""

    default_time_limit_s = 1800.0

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        options = dict(self.options)
        self.tool_options = {k: options.pop(k, v) for k, v in REACT_TOOL_OPTIONS.items()}
        self.tool_options["allow_network"] = _truthy(self.tool_options["allow_network"])
        self.agent_options = {**REACT_OVERRIDES, **options}
        try:
            SnapshotReactAgent(**self.agent_options)  # checks the model, key and options now
        except ValueError as exc:
            if "unknown react option" not in str(exc):
                raise
            raise ValueError(f"{exc}; snapshot tool options: {', '.join(REACT_TOOL_OPTIONS)}") from None
        problem = namespace_problem(network=self.tool_options["allow_network"])
        if problem is not None and not self.tool_options["allow_network"]:
            raise SandboxError(
                f"the react agent's shell cannot be cut off the network here: {problem}. It needs unprivileged "
                "user namespaces (`unshare -rn true` must work). Pass -o allow_network=1 to run the shell "
                "without that isolation.")

    def recorded_options(self) -> dict[str, Any]:
        return {**self.agent_options, **self.tool_options}

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        shell = ConfinedShell(ws.snapshot, scratch=ws.scratch,
                              time_limit_s=float(self.tool_options["shell_time_limit_s"]),
                              max_output_chars=int(self.tool_options["shell_output_chars"]),
                              allow_network=bool(self.tool_options["allow_network"]),
                              hide=(*self.hide, ws.work))
        session = SnapshotToolSession(ws.snapshot, answer, shell=shell, record=trajectory.write,
                                      time_limit_s=self.time_limit_s, cancelled=self.cancelled)
        model = SnapshotReactAgent(**self.agent_options)
        from sregym.env.models import Brief

        brief = Brief(text=overview(ws.snapshot), app=app_name(ws.snapshot), namespaces=(),
                      phases=("diagnosis",), started_at="")
        crash: str | None = None
        try:
            model.run(session, brief)  # type: ignore[arg-type]
        except Exception as exc:  # the endpoint failed for good: a result, with the calls made so far
            crash = f"{type(exc).__name__}: {exc}"
        trajectory.write({"event": "end", "steps": session.steps, "tokens_in": session.tokens_in,
                          "tokens_out": session.tokens_out, "stop_reason": model.stop_reason, "error": crash})
        if crash is not None and not session.submitted:
            return AgentResult(crash, session.tool_calls)
        if session.submitted:
            return AgentResult(None, session.tool_calls)
        return AgentResult(model.stop_reason or "the agent stopped without calling submit_root_causes",
                           session.tool_calls)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


__all__ = ["REACT_OVERRIDES", "REACT_TOOL_OPTIONS", "ReactDriver", "SnapshotReactAgent"]
