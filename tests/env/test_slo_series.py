"""The entry-SLO series in the result line: recorded on a real attempt with the baseline, the
drop after the injection, each agent action, done and the window; bounded; the same for the same
seed; and kept out of everything the agent is shown."""

from __future__ import annotations

import json

from sregym.agents import make_agent
from sregym.env import Conductor
from sregym.env.slo_series import MAX_POINTS, bucket_width

PROBLEM = "hotel-reservation/service-selector-nothing-v1"  # an app with entry traffic
NO_TRAFFIC = "demo-shop/service-selector-mismatch-v1"  # demo-shop has no data-plane workload


def attempt(agent: str, seed: int = 3, problem: str = PROBLEM):
    with Conductor(problem, seed=seed, agent_name=agent) as conductor:
        brief = conductor.start()
        conductor.run_agent(make_agent(agent), brief)
        return conductor.result(), conductor.trajectory, brief


def test_gold_attempt_records_the_slo_through_the_attempt() -> None:
    result, trajectory, _ = attempt("gold")
    series = result.entry_slo
    assert series is not None
    assert 0 < len(series.points) <= MAX_POINTS
    assert series.baseline_start < 0 < series.agent_start
    assert series.actions == tuple(e.sim_time for e in trajectory if e.kind == "tool")
    assert series.diagnosis == result.sim_seconds_to_diagnosis
    assert series.done == result.sim_seconds_to_mitigation
    assert result.mitigation is not None
    assert series.window == (series.done, series.done + result.mitigation.window_s)
    times = [p[0] for p in series.points]
    assert times == sorted(times) and times[0] <= series.baseline_start and times[-1] < series.window[1]
    baseline = [p for p in series.points if p[0] + series.bucket_s <= 0]
    after_injection = [p for p in series.points if p[0] >= 0 and p[0] + series.bucket_s <= series.agent_start]
    window_end = [p for p in series.points if p[0] >= series.window[1] - 2 * series.bucket_s]
    # The broken selector makes the entry fail until the agent acts; the baseline meets the SLO and so does the fixed app.
    assert baseline and all(p[1] is not None and p[1] >= series.slo_success_ratio for p in baseline)
    assert after_injection and all(p[1] is not None and p[1] < series.slo_success_ratio for p in after_injection)
    assert window_end and all(p[1] is not None and p[1] >= series.slo_success_ratio for p in window_end)


def test_same_seed_same_series_and_not_in_what_the_agent_sees() -> None:
    first, trajectory, brief = attempt("gold", seed=5)
    second, _, _ = attempt("gold", seed=5)
    assert first.entry_slo is not None
    assert first.entry_slo.model_dump() == second.entry_slo.model_dump()
    # A result line carries it (JSON round trip), the agent's page and observations never do.
    line = json.loads(first.model_dump_json())
    assert line["entry_slo"]["points"] == [list(p) for p in first.entry_slo.points]
    shown = brief.text + "".join(e.observation for e in trajectory)
    assert "entry_slo" not in shown and "baseline_start" not in shown


def test_noop_attempt_has_no_done_and_no_window() -> None:
    result, _, _ = attempt("noop")
    assert result.entry_slo is not None
    assert result.entry_slo.done is None and result.entry_slo.window is None and result.entry_slo.actions == ()
    assert result.entry_slo.points[-1][1] < result.entry_slo.slo_success_ratio  # nobody fixed it


def test_an_app_without_entry_traffic_records_no_series() -> None:
    result, _, _ = attempt("gold", problem=NO_TRAFFIC)
    assert result.passed and result.entry_slo is None


def test_bucket_width_keeps_the_series_bounded() -> None:
    for span in (1.0, 299.0, 900.0, 3600.0, 7200.0, 50_000.0):
        assert span / bucket_width(span) <= MAX_POINTS
    assert bucket_width(600.0) == 10.0
