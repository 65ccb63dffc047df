"""`ToolSession`: the agent's whole world for one attempt — the tool catalogue and nothing else.

An agent (in-process, over MCP or through the Gymnasium session) only ever holds a session. The
session knows how to reach the cluster with the agent credential (kubectl, the query APIs) and
how to tell whoever runs the attempt that a tool was called or a phase ended (`SessionBackend`),
but it never holds the problem, its ground truth or the admin credential, so nothing an agent can
call returns them.

Every tool is a typed method with a docstring; `specs()` derives the JSON schemas from them.
`call()` validates the arguments, runs the tool and returns a `ToolResult`; a wrong argument, a
rejected command or a failing query is an observation (`is_error=True`), never an exception.
"""

from __future__ import annotations

import inspect
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import TypeAdapter, ValidationError

from sregym.tools import render
from sregym.tools.spec import ToolResult, ToolSpec, tool_spec
from sregym.tools.timeparse import TimeParseError, parse_duration_s, parse_time

Phase = Literal["detection", "diagnosis", "mitigation", "done"]
QueryApi = Literal["prometheus", "loki", "jaeger"]

INVESTIGATION_TOOLS = ("kubectl", "promql_query", "promql_query_range", "get_alerts", "get_logs",
                       "get_services", "get_operations", "get_traces", "get_dependency_graph",
                       "get_app_context")
SUBMIT_TOOLS = {"detection": "submit_detection", "diagnosis": "submit_diagnosis",
                "mitigation": "submit_mitigation_done"}


@dataclass(frozen=True)
class AppContext:
    """What a new on-call engineer would be told about the application (no fault hints)."""

    app: str
    namespaces: tuple[str, ...]
    description: str

    def text(self) -> str:
        return (f"Application: {self.app}\nNamespace(s): {', '.join(self.namespaces)}\n"
                f"{self.description}".rstrip())


class SessionBackend(Protocol):
    """What a session needs from whoever runs the attempt (the conductor, or a test double)."""

    def kubectl(self, command: str, stdin: str | None = None) -> tuple[str, bool]:
        """Run kubectl with the agent credential: (output, is_error)."""
        ...

    def query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        """GET a query API with the agent credential: (HTTP status, decoded JSON)."""
        ...

    def now(self) -> float:
        """Simulated time, Unix seconds."""
        ...

    def app_context(self) -> AppContext: ...

    @property
    def phases(self) -> tuple[str, ...]:
        """The phases of this attempt, in order (a subset of detection, diagnosis, mitigation)."""
        ...

    @property
    def phase(self) -> Phase: ...

    def admit(self, tool: str) -> str | None:
        """None if the call may run now, else why not (a limit ran out, the attempt is over)."""
        ...

    def record(self, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        """A call finished: log it to the trajectory and let simulated time pass."""
        ...

    def submit_detection(self, incident: bool, started_at: str | None, evidence: str) -> str:
        """Store the detection answer and end the detection phase; returns the confirmation text."""
        ...

    def submit_diagnosis(self, root_causes: list[str], mechanism: str, affected: list[str],
                         explanation: str) -> str:
        """Store the diagnosis and end the diagnosis phase; returns the confirmation text."""
        ...

    def submit_mitigation_done(self) -> str: ...


class ToolSession:
    """The tool catalogue of one attempt."""

    def __init__(self, backend: SessionBackend) -> None:
        self._backend = backend
        self._tools: dict[str, Callable[..., str]] = {}
        for name in self.tool_names():
            self._tools[name] = getattr(self, name)
        self.tool_calls = 0
        self.steps = 0
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        # One call at a time even when a front end (MCP over HTTP) serves requests concurrently.
        self._lock = threading.RLock()

    # --------------------------------------------------------------- surface
    @property
    def phase(self) -> Phase:
        return self._backend.phase

    @property
    def done(self) -> bool:
        return self._backend.phase == "done"

    def tool_names(self) -> list[str]:
        """The tools of this attempt: investigation tools, then the submit tool of each phase."""
        names = list(INVESTIGATION_TOOLS)
        names += [tool for phase, tool in SUBMIT_TOOLS.items() if phase in self._backend.phases]
        return names

    def specs(self) -> list[ToolSpec]:
        return [tool_spec(getattr(type(self), name)) for name in self.tool_names()]

    def app_context(self) -> AppContext:
        return self._backend.app_context()

    def note_step(self, *, tokens_in: int | None = None, tokens_out: int | None = None) -> None:
        """An agent loop calls this once per model turn (so steps and tokens can be reported and
        limited); agents that make exactly one tool call per step need not call it."""
        self.steps += 1
        if tokens_in is not None:
            self.tokens_in = (self.tokens_in or 0) + int(tokens_in)
        if tokens_out is not None:
            self.tokens_out = (self.tokens_out or 0) + int(tokens_out)

    def note_message(self, content: str | None, *, tool_calls: list[dict[str, Any]] | None = None,
                     purpose: str = "turn") -> None:
        """An agent records its own words (model text, the tool calls it asked for, a hand-over
        note) in the trajectory, so a reader sees why it did what it did. Not a tool call: it
        costs no step and lets no time pass. Backends that keep no trajectory ignore it."""
        record = getattr(self._backend, "record_message", None)
        if record is not None:
            with self._lock:
                record(content or "", list(tool_calls or []), purpose)

    def call(self, name: str, args: dict[str, Any] | None = None) -> ToolResult:
        """Run one tool. Unknown tools, bad arguments and tool failures come back as error
        observations; limits and the end of the attempt too."""
        with self._lock:
            return self._call(name, dict(args or {}))

    def _call(self, name: str, args: dict[str, Any]) -> ToolResult:
        fn = self._tools.get(name)
        if fn is None:
            return ToolResult(f"unknown tool {name!r}; available tools: {', '.join(self._tools)}", True)
        refusal = self._backend.admit(name)
        if refusal is not None:
            return ToolResult(refusal, True)
        self.tool_calls += 1
        try:
            kwargs = validate(getattr(type(self), name), args)
        except ValueError as exc:
            result = ToolResult(f"invalid arguments for {name}: {exc}", True)
        else:
            try:
                result = _as_result(fn(**kwargs))
            except ToolError as exc:
                result = ToolResult(str(exc), True)
            except Exception as exc:  # a tool bug is an observation, never a crashed attempt
                result = ToolResult(f"{name} failed: {type(exc).__name__}: {exc}", True)
        self._backend.record(name, args, result)
        return result

    # ----------------------------------------------------------------- tools
    def kubectl(self, command: str, stdin: str | None = None) -> ToolResult:
        """Run one kubectl command against the cluster and return its output.

        The command runs without a shell and without a terminal: one command per call, no pipes,
        redirections or `$(...)`, and no interactive commands (edit, attach, port-forward,
        proxy, exec -it). Use kubectl's own flags (-o wide, -o yaml, -o jsonpath=..., -l,
        --field-selector, --sort-by, --tail) to shape the output.

        Args:
            command: the kubectl arguments, e.g. "get pods -n myapp -o wide" (a leading "kubectl"
                is accepted).
            stdin: text passed to kubectl on standard input, e.g. a YAML manifest for
                "apply -f -".
        """
        text, is_error = self._backend.kubectl(command, stdin) if stdin is not None else \
            self._backend.kubectl(command)
        return ToolResult(text, is_error)

    def promql_query(self, query: str, time: str | None = None) -> str:
        """Evaluate a PromQL expression at one instant (Prometheus instant query).

        Args:
            query: the PromQL expression.
            time: evaluation time: RFC 3339, Unix seconds, "now" or "now-10m"; default now.
        """
        params = [("query", query)]
        if time:
            params.append(("time", _time_param(time, self._backend.now())))
        data = self._query("prometheus", "/api/v1/query", params)
        return render.prom_instant(data)

    def promql_query_range(self, query: str, start: str, end: str = "now", step: str = "60s") -> str:
        """Evaluate a PromQL expression over a time range (Prometheus range query).

        Args:
            query: the PromQL expression.
            start: range start: RFC 3339, Unix seconds or relative like "now-30m" or "30m" (ago).
            end: range end, same forms; default now.
            step: resolution, e.g. "15s", "1m".
        """
        now = self._backend.now()
        params = [("query", query), ("start", _time_param(start, now)), ("end", _time_param(end, now)),
                  ("step", str(_duration_param(step)))]
        data = self._query("prometheus", "/api/v1/query_range", params)
        return render.prom_range(data)

    def get_alerts(self) -> str:
        """List the alerts that are currently pending or firing in Prometheus."""
        data = self._query("prometheus", "/api/v1/alerts", [])
        return render.alerts(data)

    def get_logs(self, query: str, since: str = "15m", limit: int = 100) -> str:
        """Search container logs with a LogQL query (Loki), newest lines last.

        Args:
            query: a LogQL query, e.g. '{namespace="myapp", container="frontend"} |= "error"'.
            since: how far back to look, e.g. "5m", "1h".
            limit: maximum number of log lines to return.
        """
        now = self._backend.now()
        start = now - _duration_param(since)
        params = [("query", query), ("start", str(int(start * 1e9))), ("end", str(int(now * 1e9))),
                  ("limit", str(max(1, min(int(limit), 5000)))), ("direction", "backward")]
        data = self._query("loki", "/loki/api/v1/query_range", params)
        return render.loki(data)

    def get_services(self) -> str:
        """List the services that have reported traces (Jaeger)."""
        data = self._query("jaeger", "/api/services", [])
        return render.jaeger_list(data, "services")

    def get_operations(self, service: str) -> str:
        """List the traced operations of one service (Jaeger).

        Args:
            service: a service name as listed by get_services.
        """
        data = self._query("jaeger", f"/api/services/{service}/operations", [])
        return render.jaeger_list(data, f"operations of {service}")

    def get_traces(self, service: str, operation: str | None = None, since: str = "15m", limit: int = 20,
                   min_duration: str | None = None, error_only: bool = False) -> str:
        """Find recent traces that pass through a service (Jaeger), one summary line per trace.

        Args:
            service: the service name.
            operation: only traces with this operation of the service.
            since: how far back to look, e.g. "15m".
            limit: maximum number of traces.
            min_duration: only traces at least this long, e.g. "500ms", "2s".
            error_only: only traces with an error span.
        """
        params = [("service", service), ("lookback", f"{int(_duration_param(since))}s"),
                  ("limit", str(max(1, min(int(limit), 200))))]
        if operation:
            params.append(("operation", operation))
        if min_duration:
            params.append(("minDuration", min_duration))
        if error_only:
            params.append(("tags", '{"error":"true"}'))
        data = self._query("jaeger", "/api/traces", params)
        return render.traces(data)

    def get_dependency_graph(self, since: str = "1h") -> str:
        """Show which services called which, with call counts, from recent traces (Jaeger).

        Args:
            since: how far back to look, e.g. "30m", "1h".
        """
        now = self._backend.now()
        params = [("endTs", str(int(now * 1000))), ("lookback", str(int(_duration_param(since) * 1000)))]
        data = self._query("jaeger", "/api/dependencies", params)
        return render.dependencies(data)

    def get_app_context(self) -> str:
        """Describe the application you are on call for: its namespace(s) and what it does."""
        return self._backend.app_context().text()

    def submit_detection(self, incident: bool, started_at: str | None = None, evidence: str = "") -> str:
        """Answer whether the system has an incident right now. This ends the detection phase;
        it can be submitted only once.

        Args:
            incident: true if something is wrong that needs an operator (users are affected or
                about to be), false if the system is operating normally.
            started_at: when the incident began, if there is one: RFC 3339, Unix seconds or
                relative like "now-10m".
            evidence: what you observed that supports the answer.
        """
        return self._backend.submit_detection(bool(incident), started_at, evidence)

    def submit_diagnosis(self, root_cause_entities: list[str], mechanism: str,
                         affected_entities: list[str] | None = None, explanation: str = "") -> str:
        """Submit your diagnosis of the incident. This ends the diagnosis phase; it can be
        submitted only once.

        Args:
            root_cause_entities: the Kubernetes objects where the fault originates, each as
                "namespace/Kind/name" (e.g. "shop/Deployment/cart"); an empty list if you found
                no root cause because nothing is wrong.
            mechanism: what is wrong with them, in a few words (the kind of fault).
            affected_entities: objects that show symptoms but are not the origin, same form.
            explanation: the evidence and the concrete detail (what changed, to which value).
        """
        return self._backend.submit_diagnosis(list(root_cause_entities), mechanism,
                                              list(affected_entities or []), explanation)

    def submit_mitigation_done(self) -> str:
        """Declare that you have mitigated the incident. This ends the mitigation phase; the
        system is then observed for a while to verify the fix."""
        return self._backend.submit_mitigation_done()

    # --------------------------------------------------------------- helpers
    def _query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> Any:
        status, data = self._backend.query(api, path, params)
        if status >= 400 or (isinstance(data, dict) and data.get("status") == "error"):
            raise ToolError(render.api_error(api, status, data))
        return data


class ToolError(Exception):
    """A tool failed in a way the agent should read (bad query, unknown service ...)."""


def _as_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    return ToolResult(str(value), False)


def _time_param(text: str, now: float) -> str:
    try:
        return f"{parse_time(text, now):.3f}"
    except TimeParseError as exc:
        raise ToolError(str(exc)) from None


def _duration_param(text: str) -> float:
    try:
        return parse_duration_s(text)
    except TimeParseError as exc:
        raise ToolError(str(exc)) from None


def validate(fn: Callable[..., Any], args: dict[str, Any]) -> dict[str, Any]:
    """Check `args` against the signature; coerce the way JSON clients send values."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    params = {n: p for n, p in sig.parameters.items() if n != "self"}
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise ValueError(f"unknown argument(s) {', '.join(unknown)}; expected: {', '.join(params)}")
    out: dict[str, Any] = {}
    for name, param in params.items():
        if name not in args:
            if param.default is inspect.Parameter.empty:
                raise ValueError(f"missing required argument {name!r}")
            continue
        try:
            out[name] = TypeAdapter(hints.get(name, Any)).validate_python(args[name])
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"{name}: {first.get('msg', 'invalid value')}") from None
    return out


__all__ = ["INVESTIGATION_TOOLS", "SUBMIT_TOOLS", "AppContext", "Phase", "QueryApi", "SessionBackend",
           "ToolError", "ToolSession"]
