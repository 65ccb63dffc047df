"""Tool schemas come from signatures and docstrings; calls never raise; outputs are compact."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.tools import AppContext, ToolResult, ToolSession, tool_spec
from sregym.tools.output import compact
from sregym.tools.timeparse import TimeParseError, parse_duration_s, parse_time


class FakeBackend:
    """A backend that records what the session asks for (no cluster)."""

    phases = ("diagnosis", "mitigation")
    phase = "diagnosis"

    def __init__(self) -> None:
        self.recorded: list[tuple[str, dict[str, Any], ToolResult]] = []
        self.queries: list[tuple[str, str, list[tuple[str, str]]]] = []

    def kubectl(self, command: str) -> tuple[str, bool]:
        return f"ran {command}", False

    def query(self, api: str, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        self.queries.append((api, path, params))
        if "bad" in dict(params).get("query", ""):
            return 400, {"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}
        if path == "/api/v1/query":
            return 200, {"status": "success", "data": {"resultType": "vector", "result": [
                {"metric": {"__name__": "up", "job": "x"}, "value": [1000.0, "1"]}]}}
        return 200, {"status": "success", "data": {"alerts": []}}

    def now(self) -> float:
        return 10_000.0

    def app_context(self) -> AppContext:
        return AppContext(app="shop", namespaces=("shop",), description="A shop.")

    def admit(self, tool: str) -> str | None:
        return None

    def record(self, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        self.recorded.append((tool, args, result))

    def submit_diagnosis(self, root_causes: list[str], mechanism: str, affected: list[str], explanation: str) -> str:
        return f"got {root_causes} {mechanism}"

    def submit_mitigation_done(self) -> str:
        return "done"


def test_specs_are_derived_from_signatures_and_docstrings() -> None:
    session = ToolSession(FakeBackend())
    specs = {s.name: s for s in session.specs()}
    assert list(specs) == ["kubectl", "promql_query", "promql_query_range", "get_alerts", "get_logs",
                           "get_services", "get_operations", "get_traces", "get_dependency_graph",
                           "get_app_context", "submit_diagnosis", "submit_mitigation_done"]
    traces = specs["get_traces"].input_schema
    assert traces["required"] == ["service"]
    assert traces["properties"]["limit"] == {"type": "integer", "default": 20,
                                             "description": "maximum number of traces."}
    assert traces["properties"]["error_only"]["type"] == "boolean"
    assert traces["properties"]["operation"]["type"] == "string"
    diag = specs["submit_diagnosis"].input_schema
    assert diag["properties"]["root_cause_entities"]["type"] == "array"
    assert "namespace/Kind/name" in diag["properties"]["root_cause_entities"]["description"]
    assert "\n" not in specs["kubectl"].description.split("\n\n")[0]
    assert specs["get_alerts"].input_schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_tool_spec_reads_google_docstrings() -> None:
    def probe(host: str, port: int = 80) -> str:
        """Open a connection.

        Args:
            host: where to connect,
                a DNS name.
            port: the TCP port.
        Returns:
            whatever.
        """
        return ""

    spec = tool_spec(probe)
    assert spec.description == "Open a connection."
    assert spec.input_schema["properties"]["host"]["description"] == "where to connect, a DNS name."
    assert spec.input_schema["properties"]["port"] == {"type": "integer", "default": 80, "description": "the TCP port."}


def test_bad_calls_are_observations_not_exceptions() -> None:
    backend = FakeBackend()
    session = ToolSession(backend)
    unknown = session.call("rm_rf", {})
    assert unknown.is_error and "unknown tool" in unknown.text
    missing = session.call("get_operations", {})
    assert missing.is_error and "missing required argument 'service'" in missing.text
    extra = session.call("get_alerts", {"verbose": True})
    assert extra.is_error and "unknown argument" in extra.text
    wrong = session.call("get_logs", {"query": "{}", "limit": "lots"})
    assert wrong.is_error and "limit" in wrong.text
    bad_time = session.call("promql_query_range", {"query": "up", "start": "yesterday-ish"})
    assert bad_time.is_error and "cannot read time" in bad_time.text
    bad_query = session.call("promql_query", {"query": "bad("})
    assert bad_query.is_error and "prometheus error (bad_data): parse error" in bad_query.text
    # Every admitted call was recorded, including the failed ones (unknown tools are not).
    assert [r[0] for r in backend.recorded] == ["get_operations", "get_alerts", "get_logs",
                                                "promql_query_range", "promql_query"]


def test_query_tools_render_compact_text_and_resolve_relative_times() -> None:
    backend = FakeBackend()
    session = ToolSession(backend)
    result = session.call("promql_query", {"query": "up", "time": "now-10m"})
    assert not result.is_error
    assert result.text == '1 series:\nup{job="x"} => 1'
    assert ("time", "9400.000") in backend.queries[-1][2]
    assert session.call("get_alerts").text == "no alerts are pending or firing"
    assert session.call("get_app_context").text.startswith("Application: shop\nNamespace(s): shop")
    assert session.call("kubectl", {"command": "get pods"}).text == "ran get pods"


def test_truncation_notice_keeps_head_and_tail() -> None:
    text = "\n".join(f"line {i:05d}" for i in range(5000))
    out = compact(text, 2000)
    assert len(out) < 2300
    assert out.startswith("line 00000") and out.endswith("line 04999")
    assert "output truncated" in out and "omitted" in out
    assert compact("short", 2000) == "short"


def test_time_forms() -> None:
    assert parse_duration_s("1h30m") == 5400
    assert parse_duration_s("500ms") == 0.5
    assert parse_time("now", 100.0) == 100.0
    assert parse_time("now-1m", 100.0) == 40.0
    assert parse_time("30s", 100.0) == 70.0
    assert parse_time("2026-01-05T09:00:00Z", 0.0) == 1767603600.0
    with pytest.raises(TimeParseError):
        parse_duration_s("soon")
