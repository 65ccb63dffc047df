"""The baseline's recent-change and node steps: a team's Chaos Mesh experiment or Schedule whose
selector picks the troubled workload, the latest rollout's command line and mounted config, and a
node's conditions, clock and kernel tables.

Unit tests feed made-up evidence (a small shop, other names and labels than the catalogue's) and
check what is blamed and what is left alone; the end-to-end tests run the agent on the twin on
problems whose ids it never sees (a Schedule variant on another victim, a descriptor limit, a
node clock moved by a privileged pod).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sregym.agents.baseline.chaos import (
    Workload,
    active,
    chaos_experiment,
    hit_workloads,
    parse_objects,
    selects,
)
from sregym.agents.baseline.context import Ctx
from sregym.agents.baseline.investigate import Alert, Facts, Pod
from sregym.agents.baseline.nodes import clock_signals, condition_signals, kernel_signals
from sregym.agents.baseline.rollouts import Change, classify, route_timeouts
from sregym.tools.spec import ToolResult
from support.baseline_attempt import baseline_result

NS = "shop"


class ScriptedSession:
    """Answers kubectl commands from a table (the longest key contained in the command wins)."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs
        self.tool_calls = 0

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        self.tool_calls += 1
        keys = [k for k in self.outputs if k in args.get("command", "")]
        return ToolResult(self.outputs[max(keys, key=len)]) if keys else ToolResult("", is_error=True)


# ------------------------------------------------------------------ Chaos Mesh selectors
PAYMENTS = Workload("payments", {"app": "payments", "tier": "backend"}, {}, ("payments-7d9f-abcde",))
LEDGER = Workload("ledger", {"app": "ledger", "tier": "backend"}, {}, ("ledger-5c4b-fghij",))


def test_label_selector_picks_the_matching_workload_only() -> None:
    selector = {"namespaces": [NS], "labelSelectors": {"app": "payments"}}
    assert selects(selector, NS, NS, PAYMENTS)
    assert not selects(selector, NS, NS, LEDGER)


def test_selector_scoped_to_another_namespace_picks_nothing_here() -> None:
    assert not selects({"namespaces": ["staging"], "labelSelectors": {"app": "payments"}}, NS, NS, PAYMENTS)
    # without `namespaces` the experiment's own namespace is meant
    assert selects({"labelSelectors": {"app": "payments"}}, NS, NS, PAYMENTS)
    assert not selects({"labelSelectors": {"app": "payments"}}, "staging", NS, PAYMENTS)


def test_expression_and_pod_selectors() -> None:
    backend = {"expressionSelectors": [{"key": "tier", "operator": "In", "values": ["backend"]},
                                       {"key": "app", "operator": "NotIn", "values": ["ledger"]}]}
    assert selects(backend, NS, NS, PAYMENTS) and not selects(backend, NS, NS, LEDGER)
    by_pod = {"pods": {NS: ["ledger-5c4b-fghij"]}}
    assert selects(by_pod, NS, NS, LEDGER) and not selects(by_pod, NS, NS, PAYMENTS)


def _row(kind: str, name: str, spec: dict, owner: str = "", paused: bool = False, phase: str = "Run") -> str:
    owners = json.dumps([{"kind": "Schedule", "name": owner}]) if owner else ""
    notes = json.dumps({"experiment.chaos-mesh.org/pause": "true"}) if paused else ""
    return "\t".join([kind, name, owners, notes, phase, json.dumps(spec)])


PAYMENTS_LOSS = {"action": "loss", "loss": {"loss": "80"}, "mode": "all",
                 "selector": {"namespaces": [NS], "labelSelectors": {"app": "payments"}}}
LISTING = "\n".join([
    _row("Schedule", "payments-loss", {"type": "NetworkChaos", "schedule": "*/2 * * * *", "networkChaos": PAYMENTS_LOSS}),
    _row("NetworkChaos", "payments-loss-x7k2p", PAYMENTS_LOSS, owner="payments-loss"),
    _row("PodChaos", "ledger-kill", {"action": "pod-kill", "mode": "one",
                                     "selector": {"labelSelectors": {"app": "ledger"}}}, paused=True),
    _row("StressChaos", "search-cpu", {"mode": "all", "selector": {"labelSelectors": {"app": "search"}},
                                       "stressors": {"cpu": {"workers": 2}}}),
])


def test_spawned_paused_and_unmatched_experiments_are_set_aside() -> None:
    objects = active(parse_objects(LISTING))
    assert [o.name for o in objects] == ["payments-loss", "search-cpu"]  # child and paused one dropped
    assert objects[0].experiment_kind == "NetworkChaos"
    assert hit_workloads(objects[0], NS, [PAYMENTS, LEDGER]) == (["payments"], [])
    assert hit_workloads(objects[1], NS, [PAYMENTS, LEDGER]) == ([], [])  # no such workload here


def _chaos_ctx(listing: str, troubled_pod: str) -> Ctx:
    outputs = {
        "podchaos,networkchaos": listing,
        "get deployments -n shop -o jsonpath":
            'payments\t{"app":"payments","tier":"backend"}\t\nledger\t{"app":"ledger","tier":"backend"}\t\n',
    }
    pods = [Pod("payments-7d9f-abcde", "1/1", "Running", "0", "n1"), Pod("ledger-5c4b-fghij", "1/1", "Running", "0", "n2")]
    alerts = [Alert("FIRING", "HighRequestErrorRate", {"service_name": troubled_pod})]
    return Ctx(ScriptedSession(outputs), Facts(NS, pods=pods, deployments=["ledger", "payments"],  # type: ignore[arg-type]
                                              alerts=alerts, edges=[("web", "payments"), ("web", "ledger")]))


def test_schedule_whose_experiment_hits_the_failing_workload_is_the_root_cause() -> None:
    finding = chaos_experiment(_chaos_ctx(LISTING, "payments"))
    assert finding is not None and finding.roots == ["shop/Schedule/payments-loss"]
    assert "chaos" in finding.mechanism.lower() and "NetworkChaos" in finding.mechanism
    assert "shop/Deployment/payments" in finding.affected
    commands = [c for c, _ in finding.fixes]
    assert commands[0] == "delete schedule payments-loss -n shop --ignore-not-found"
    assert "delete networkchaos payments-loss-x7k2p -n shop --ignore-not-found" in commands
    assert not any("ledger" in c or "search" in c for c in commands)


def test_experiment_on_a_healthy_workload_is_not_blamed_first() -> None:
    listing = _row("PodChaos", "ledger-kill", {"action": "pod-kill", "mode": "one",
                                               "selector": {"labelSelectors": {"app": "ledger"}}})
    assert chaos_experiment(_chaos_ctx(listing, "payments")) is None
    assert chaos_experiment(_chaos_ctx("", "payments")) is None


# ------------------------------------------------------------------ the latest rollout
def _change(command_line: str = "", mounted: tuple[str, ...] = ()) -> Change:
    commands = [f"api: 'api' -> {command_line!r}"] if command_line else []
    return Change("api", 3, 2, commands, list(mounted), command_line)


def test_descriptor_limit_read_from_the_log_and_the_new_command_line() -> None:
    mechanism, evidence = classify(_change("/bin/sh -c ulimit -n 512 && exec api"),
                                   "accept tcp [::]:80: accept4: too many open files", "", False)
    assert "too many open files" in mechanism and "ulimit -n 512" in evidence


def test_request_filter_and_route_timeout_read_from_the_mounted_config() -> None:
    lua = ('http_filters:\n  - name: envoy.filters.http.lua\n    inline_string: |\n'
           '      local RULE = "^%w[%w-]*%w+[%w-]*$"\n  - name: envoy.filters.http.router\n')
    mechanism, evidence = classify(_change(mounted=("edge-rules",)), "", lua, True)
    assert "request filter" in mechanism and "backtracking" in mechanism and "%w+" in evidence
    routes = ("routes:\n  - match: { prefix: \"/api\" }\n    route: { cluster: api, timeout: 0.05s }\n"
              "grpc_service:\n  envoy_grpc: { cluster_name: otel }\n  timeout: 0.250s\n")
    assert route_timeouts(routes) == [0.05]
    mechanism, evidence = classify(_change(mounted=("edge-routes",)), "", routes, False)
    assert "route timeout" in mechanism and "0.05s" in evidence


def test_a_change_nothing_ties_to_the_incident_is_left_for_other_steps() -> None:
    assert classify(_change(mounted=("extra-ca",)), "", "ca.crt: -----BEGIN CERTIFICATE-----", False) is None
    assert classify(_change("api --verbose"), "", "", False, crashing=False) is None
    assert "wrong command" in classify(_change("api-v2"), "", "", False, crashing=True)[0]


# ------------------------------------------------------------------ nodes
def test_x509_time_far_from_the_receive_time_is_a_clock_on_the_pods_node() -> None:
    skewed = ("2026-03-01T10:00:00Z shop/api-7d9f-abcde/tls-check x509: certificate has expired or is not yet "
              "valid: current time 2026-03-31T10:00:00Z is after 2026-03-02T10:00:00Z")
    signals = clock_signals([], skewed, {"api-7d9f-abcde": "node-b"})
    assert [(s.node, s.clock) for s in signals] == [("node-b", True)] and "clock skew" in signals[0].mechanism
    expired = skewed.replace("current time 2026-03-31T10:00:00Z", "current time 2026-03-01T10:00:00Z")
    assert clock_signals([], expired, {"api-7d9f-abcde": "node-b"}) == []  # a really expired certificate


def test_node_conditions_and_kernel_tables() -> None:
    rows = ('node-a\t[{"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}]\n'
            'node-b\t[{"type":"Ready","status":"Unknown","message":"Kubelet stopped posting node status."}]\n'
            'node-c\t[{"type":"Ready","status":"True"},{"type":"PIDPressure","status":"True"}]\n')
    assert [(s.node, s.mechanism.split(":")[0]) for s in condition_signals(rows)] == [
        ("node-b", "node failure"), ("node-c", "PIDPressure on the node (pid exhaustion)")]
    lines = ['2026-03-01T10:00:00Z {node="node-c", source="kernel"} nf_conntrack: table full, dropping packet',
             '2026-03-01T10:00:00Z {node="node-a", source="kernel"} eth0: link up']
    assert [s.node for s in kernel_signals(lines)] == ["node-c"]


# ------------------------------------------------------------------ end to end on the twin
@pytest.mark.parametrize("problem", [
    "hotel-reservation/user-scheduled-network-delay-v1@service=rate",  # a Schedule on a victim it was not built on
    "hotel-reservation/frontend-open-file-limit-v1",                   # the rollout's command line and the log
    "hotel-reservation/node-clock-drift-tls-v1",                       # x509 times, the node's newest workload
])
def test_baseline_solves_recent_change_and_node_problems_end_to_end(problem: str) -> None:
    result = baseline_result(problem)
    assert result.passed, result.model_dump_json()[:2000]
