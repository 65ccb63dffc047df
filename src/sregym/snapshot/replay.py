"""Replay a snapshot as a frozen cluster, so live-tool agents run over files unchanged.

The `baseline` agent (and any agent written against `ToolSession`) reasons over kubectl tables,
`-o json`/`-o jsonpath`, alerts, LogQL and the Jaeger call graph. Rather than teach it files, the
snapshot is turned back into what those tools talk to: a *replay twin* (`replay_load`: the
snapshot's objects, events, logs, metrics, alerts and traces in the twin's own stores, the clock
standing at `snapshot_time`, no controller ever run) served by the twin's `TwinServer` with a
manual clock. The real `kubectl` runs through `KubectlRunner` with a kubeconfig that holds only
an agent token, and the query tools reach the twin's unchanged Prometheus, Loki and Jaeger
handlers over HTTP, so an observation reads the same as it would have live at snapshot time.

Differences from a live attempt, by construction: time does not pass between tool calls (the
live conductor advances 15 s per call, here every call sees snapshot time); only the exported
telemetry exists (metrics are the exported PromQL results, named by their expression; metrics,
logs and traces cover the snapshot's history, the alerts are the list at snapshot time; no alert
rules); nothing can be changed: mutating kubectl verbs are refused before kubectl runs, and the
store refuses any write that gets through (`replay_load.READ_ONLY_MESSAGE`); `exec`, `cp`,
`attach`, `port-forward` and `wait` have no running container or moving clock to act on and are
refused too. A replay has one phase, diagnosis.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from sregym.env.agent_access import AgentAccess
from sregym.snapshot.jsonfile import dumps_line
from sregym.snapshot.replay_load import READ_ONLY_MESSAGE, SnapshotInfo, load_twin
from sregym.tools.kubectl import CommandRejected, parse_command
from sregym.tools.session import AppContext, Phase, QueryApi, ToolError, ToolSession
from sregym.tools.spec import ToolResult
from sregym.types import DiagnosisSubmission

TRAJECTORY_OUTPUT_CHARS = 4000
# kubectl verbs that only read; `auth`, `config` and `rollout` are read-only for these sub-verbs.
READ_VERBS = frozenset({"get", "describe", "logs", "top", "explain", "api-resources", "api-versions", "version",
                        "cluster-info", "events", "options", "help"})
READ_SUBVERBS = {"auth": frozenset({"can-i", "whoami"}),
                 "config": frozenset({"view", "current-context", "get-contexts", "get-clusters", "get-users"}),
                 "rollout": frozenset({"history", "status"})}
NO_RUNTIME_VERBS = frozenset({"exec", "cp", "attach", "port-forward", "debug", "run", "wait", "proxy"})
_VALUE_FLAGS = frozenset({"-n", "--namespace", "-l", "--selector", "-o", "--output", "-c", "--container",
                          "--request-timeout", "--field-selector", "-v", "--v", "--cache-dir"})


def read_only_refusal(command: str) -> str | None:
    """Why `command` may not run against a snapshot, or None when it only reads."""
    try:
        tokens = parse_command(command)
    except CommandRejected:
        # KubectlRunner answers with its own message, except for the verbs a snapshot lacks
        # anyway (`cp` is also refused for its local paths; the snapshot reason comes first).
        try:
            tokens = shlex.split(command)
        except ValueError:
            return None
        if _words(tokens[1:] if tokens[:1] == ["kubectl"] else tokens)[:1] != ["cp"]:
            return None
    words = _words(tokens)
    verb = words[0] if words else ""
    if verb in READ_VERBS:
        return None
    if verb in READ_SUBVERBS and len(words) > 1 and words[1] in READ_SUBVERBS[verb]:
        return None
    if verb in NO_RUNTIME_VERBS:
        return (f"`kubectl {verb}` is not available: this is a frozen snapshot of the cluster, with no running "
                f"containers and no passing time. Read what was recorded instead (get, describe, logs, events).")
    what = f"`kubectl {' '.join(words[:2]) if verb in READ_SUBVERBS else verb}`"
    return f"{what} refused: {READ_ONLY_MESSAGE}."


def _words(tokens: list[str]) -> list[str]:
    """The non-flag words of a kubectl command line (verb first), before `--`."""
    out, skip = [], False
    for t in tokens[:tokens.index("--")] if "--" in tokens else tokens:
        if skip:
            skip = False
        elif t in _VALUE_FLAGS:
            skip = True
        elif not t.startswith("-"):
            out.append(t)
    return out


class SnapshotReplay:
    """A snapshot served as a frozen cluster: kubectl with the agent credential and the query
    APIs. Use as a context manager; `close()` always tears the server down."""

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = Path(snapshot)
        self._access: AgentAccess | None = None
        self.twin, self.info = load_twin(self.snapshot)
        # An exported metric is stored under its expression; the same text as a query finds it.
        self._metric_queries = {_squash(n): n for n in self.info.metric_names}

    # ------------------------------------------------------------ lifecycle
    def start(self) -> SnapshotReplay:
        from sregym.twin.api.kubeconfig import make_tokens, token_for

        token = token_for(make_tokens(("agent",)), "agent")
        namespace = self.info.namespaces[0] if self.info.namespaces else "default"
        # No admin token exists at all: the server accepts only the agent's. A snapshot is frozen
        # at its own instant: it is served on the fixed anchor (simulated time as recorded), the
        # same times its files and `now()` use.
        self._access = AgentAccess(self.twin, server_tokens={token: "agent"}, agent_token=token, speed=0.0,
                                   namespace=namespace, prefix="sregym-replay-", fixed_time=True)
        return self

    def close(self) -> None:
        if self._access is not None:
            self._access.close()
            self._access = None

    def __enter__(self) -> SnapshotReplay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- tools
    @property
    def kubeconfig(self) -> Path | None:
        return self._access.kubectl.kubeconfig if self._access is not None else None

    def kubectl(self, command: str, stdin: str | None = None) -> tuple[str, bool]:
        if self._access is None:
            return "the snapshot replay is not running", True
        refusal = read_only_refusal(command)
        if refusal is not None:
            return refusal, True
        return self._access.kubectl.run(command, stdin)  # type: ignore[no-any-return]

    def query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        if self._access is None:
            return 503, {"error": f"the {api} API is not available"}
        if api == "prometheus":
            params = [(k, self._exported_selector(v) if k == "query" else v) for k, v in params]
        return self._access.query(api, path, params)

    def _exported_selector(self, query: str) -> str:
        name = self._metric_queries.get(_squash(query))
        if name is None:
            return query
        return '{__name__="' + name.replace("\\", "\\\\").replace('"', '\\"') + '"}'

    def now(self) -> float:
        return self.info.snapshot_time

    def app_context(self) -> AppContext:
        info = self.info
        description = info.description or (f"The {info.app} application runs in namespace(s) "
                                           f"{', '.join(info.namespaces)}.")
        return AppContext(app=info.app, namespaces=info.namespaces, description=description)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


class ReplayBackend:
    """The `SessionBackend` of a replay: one diagnosis phase, an optional wall-time limit, every
    call written to a JSONL trajectory, and the submitted diagnosis kept for the caller."""

    def __init__(self, replay: SnapshotReplay, *, trajectory: IO[str] | None = None,
                 time_limit_s: float | None = None) -> None:
        self._replay = replay
        self._trajectory = trajectory
        self._limit = time_limit_s
        self._wall0 = time.perf_counter()
        self._phase: Phase = "diagnosis"
        self._calls = 0
        self.truncation: str | None = None
        self.submission: DiagnosisSubmission | None = None

    # The query and cluster side is the replay's.
    def kubectl(self, command: str, stdin: str | None = None) -> tuple[str, bool]:
        return self._replay.kubectl(command, stdin)

    def query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        return self._replay.query(api, path, params)

    def now(self) -> float:
        return self._replay.now()

    def app_context(self) -> AppContext:
        return self._replay.app_context()

    @property
    def phases(self) -> tuple[str, ...]:
        return ("diagnosis",)

    @property
    def phase(self) -> Phase:
        return self._phase

    def admit(self, tool: str) -> str | None:
        if self._phase == "done":
            why = f" ({self.truncation})" if self.truncation else ""
            return f"the attempt is over{why}; no more tool calls are accepted"
        if tool == "submit_mitigation_done":
            return "this attempt has no mitigation phase (a snapshot is read-only)"
        if self._limit is not None and time.perf_counter() - self._wall0 >= self._limit:
            self.truncation = f"time limit reached ({self._limit:.0f}s)"
            self._phase = "done"
            return f"the attempt is over ({self.truncation}); no more tool calls are accepted"
        return None

    def record(self, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        if self._trajectory is not None:
            text = result.text
            entry = {"index": self._calls, "tool": tool, "args": args, "is_error": result.is_error,
                     "output": text[:TRAJECTORY_OUTPUT_CHARS], "output_chars": len(text),
                     "wall_s": round(time.perf_counter() - self._wall0, 3)}
            self._trajectory.write(dumps_line(entry) + "\n")
            self._trajectory.flush()
        self._calls += 1

    def submit_diagnosis(self, root_causes: list[str], mechanism: str, affected: list[str],
                         explanation: str) -> str:
        try:
            sub = DiagnosisSubmission.from_texts(root_causes, mechanism, affected, explanation)
        except ValueError as exc:
            raise ToolError(f"diagnosis not accepted: {exc}") from None
        if not sub.root_causes:
            raise ToolError("diagnosis not accepted: name at least one root-cause entity")
        self.submission = sub
        self._phase = "done"
        return "Diagnosis recorded. The attempt is complete."

    def submit_mitigation_done(self) -> str:
        raise ToolError("this attempt has no mitigation phase (a snapshot is read-only)")


def snapshot_brief(replay: SnapshotReplay) -> Any:
    """The incident page at snapshot time, the live conductor's own (`conductor.incident_brief`)
    for a diagnosis-only attempt."""
    from sregym.env.conductor import incident_brief
    from sregym.twin.clock import format_time

    return incident_brief(replay.query("prometheus", "/api/v1/alerts", []), replay.app_context(),
                          format_time(replay.now()), ("diagnosis",))


@contextlib.contextmanager
def replay_attempt(snapshot: Path, *, trajectory: IO[str] | None = None,
                   time_limit_s: float | None = None) -> Iterator[tuple[ToolSession, ReplayBackend, Any]]:
    """(session, backend, brief) over a served replay of `snapshot`; torn down on exit."""
    with SnapshotReplay(snapshot) as replay:
        backend = ReplayBackend(replay, trajectory=trajectory, time_limit_s=time_limit_s)
        session = ToolSession(backend)
        yield session, backend, snapshot_brief(replay)


@contextlib.contextmanager
def replay_session(snapshot: Path, *, time_limit_s: float | None = None) -> Iterator[ToolSession]:
    """A diagnosis-only `ToolSession` over a served replay of `snapshot` (for tests and agents)."""
    with replay_attempt(snapshot, time_limit_s=time_limit_s) as (session, _backend, _brief):
        yield session


def run_baseline(snapshot: Path, output: Path, trajectory: Path, *, time_limit_s: float = 300) -> dict[str, Any]:
    """Run the `baseline` agent's diagnosis over `snapshot`; write its answer to `output`
    (`output.json`, the contract's format: entities, and mechanism + explanation as the
    explanation) and every tool call to `trajectory` (JSONL, outputs truncated).

    Returns {"ok", "error", "tool_calls", "wall_s"}. No `output` is written when the agent did
    not submit (the scorer then records a missing answer)."""
    from sregym.agents.baseline import BaselineAgent
    from sregym.snapshot.output import AgentOutput, write_output

    wall0 = time.perf_counter()
    error: str | None = None
    calls = 0
    submission: DiagnosisSubmission | None = None
    output, trajectory = Path(output), Path(trajectory)
    trajectory.parent.mkdir(parents=True, exist_ok=True)
    with trajectory.open("w", encoding="utf-8") as log:
        try:
            with replay_attempt(snapshot, trajectory=log, time_limit_s=time_limit_s) as (session, backend, brief):
                try:
                    BaselineAgent().run(session, brief)
                except Exception as exc:  # the agent's failure: reported, the replay still torn down
                    error = f"agent failed: {type(exc).__name__}: {exc}"
                calls = session.tool_calls
                submission = backend.submission
                if submission is None and error is None:
                    error = ("the agent stopped without submitting a diagnosis"
                             + (f" ({backend.truncation})" if backend.truncation else ""))
        except Exception as exc:  # the snapshot could not be replayed
            error = f"replay failed: {type(exc).__name__}: {exc}"
    if submission is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_output(output, AgentOutput.from_submission(submission))
    return {"ok": submission is not None and error is None, "error": error, "tool_calls": calls,
            "wall_s": round(time.perf_counter() - wall0, 3)}


__all__ = ["READ_VERBS", "ReplayBackend", "SnapshotInfo", "SnapshotReplay", "read_only_refusal", "replay_attempt",
           "replay_session", "run_baseline", "snapshot_brief"]
