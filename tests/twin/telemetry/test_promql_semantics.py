"""Unit tests of PromQL semantics that are easy to get subtly wrong, and of the public interface."""

from __future__ import annotations

import math

import pytest

from sregym.twin.telemetry.promql import Engine, PromQLError, Result
from sregym.twin.telemetry.promql.result import format_value
from sregym.twin.telemetry.tsdb import STALE_NAN, TSDB

S = 1000
M = 60 * S


def _engine(samples: dict[tuple[tuple[str, str], ...], list[tuple[int, float]]]) -> Engine:
    db = TSDB()
    for key, points in samples.items():
        for t, v in points:
            db.append(dict(key), t, v)
    return Engine(db)


def _values(result: Result) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(s.labels.items())): s.value for s in result.value}


FOO = (("__name__", "foo"), ("job", "a"))


def test_lookback_is_five_minutes_inclusive_and_stale_marker_ends_series() -> None:
    engine = _engine({FOO: [(0, 1.0), (60 * S, 2.0)]})
    assert _values(engine.instant("foo", 60 * S + 5 * M)) == {FOO: 2.0}  # exactly 5 m back: still seen
    assert engine.instant("foo", 60 * S + 5 * M + 1).value == []
    stale = _engine({FOO: [(0, 1.0), (60 * S, 2.0), (120 * S, STALE_NAN)]})
    assert stale.instant("foo", 119 * S).value[0].value == 2.0
    assert stale.instant("foo", 120 * S).value == []  # the staleness marker hides it at once
    assert stale.instant("count_over_time(foo[5m])", 130 * S).value[0].value == 2.0  # marker not counted


def test_rate_extrapolates_and_handles_counter_reset() -> None:
    # 10/s counter sampled every 15 s, reset to 0 at t=150 s.
    points = [(i * 15 * S, float(i * 150)) for i in range(10)] + \
             [(150 * S + i * 15 * S, float(i * 150)) for i in range(10)]
    engine = _engine({FOO: points})
    rate = engine.instant("rate(foo[2m])", 285 * S).value[0].value
    assert rate == pytest.approx(10.0)
    across_reset = engine.instant("increase(foo[1m])", 165 * S).value[0].value
    assert across_reset == pytest.approx(450.0)  # 1050,1200,1350,0,150: the reset counts as +0


def test_rate_start_is_clamped_at_counter_zero() -> None:
    # Counter starting at 0 one sample into the window: no extrapolation below zero.
    engine = _engine({FOO: [(100 * S, 0.0), (115 * S, 15.0), (130 * S, 30.0)]})
    inc = engine.instant("increase(foo[1m])", 130 * S).value[0].value
    assert inc == pytest.approx(30.0 * (30 + 0 + 0) / 30)


def test_metric_name_dropped_by_arithmetic_but_kept_by_comparison_and_last_over_time() -> None:
    engine = _engine({FOO: [(0, 3.0)]})
    assert engine.instant("foo * 2", 0).value[0].labels == {"job": "a"}
    assert engine.instant("foo > 1", 0).value[0].labels == {"__name__": "foo", "job": "a"}
    assert engine.instant("foo > bool 1", 0).value[0].labels == {"job": "a"}
    assert engine.instant("last_over_time(foo[1m])", 0).value[0].labels["__name__"] == "foo"


def test_duplicate_labelset_is_an_execution_error() -> None:
    engine = _engine({FOO: [(0, 1.0)], (("__name__", "bar"), ("job", "a")): [(0, 2.0)]})
    with pytest.raises(PromQLError) as err:
        engine.instant('abs({job="a"})', 0)
    assert err.value.kind == "execution"
    assert err.value.message == "vector cannot contain metrics with the same labelset"



def test_range_function_duplicates_are_checked_unless_one_name_is_selected() -> None:
    # rate() drops the name: two names with one label set collide, so the check must still run
    # when the selector matches several names ...
    engine = _engine({(("__name__", "foo"), ("job", "a")): [(0, 1.0), (30 * S, 2.0)],
                      (("__name__", "bar"), ("job", "a")): [(0, 1.0), (30 * S, 4.0)]})
    for query in ('rate({job="a"}[1m])', 'rate({__name__=~"foo|bar"}[1m])'):
        with pytest.raises(PromQLError, match="same labelset"):
            engine.instant(query, 30 * S)
    # ... and one name selected (the skipped check) still returns each series once, with its rate.
    for query in ('rate(foo{job="a"}[1m])', 'rate({__name__="bar"}[1m])'):
        result = engine.instant(query, 30 * S).value
        assert len(result) == 1 and result[0].labels == {"job": "a"}


def test_many_to_many_error_names_the_side() -> None:
    engine = _engine({(("__name__", "x"), ("a", "1"), ("b", "1")): [(0, 1.0)],
                      (("__name__", "x"), ("a", "1"), ("b", "2")): [(0, 1.0)]})
    with pytest.raises(PromQLError, match="on the right hand-side of the operation"):
        engine.instant("x + on(a) x", 0)
    with pytest.raises(PromQLError, match="many-to-one matching must be explicit"):
        engine.instant("x + on(a) sum by (a) (x)", 0)
    grouped = engine.instant("x + on(a) group_left sum by (a) (x)", 0).value
    assert sorted(s.labels["b"] for s in grouped) == ["1", "2"]


def test_go_float_semantics() -> None:
    engine = _engine({FOO: [(0, 2.0)]})
    assert engine.instant("foo / 0", 0).value[0].value == math.inf
    assert math.isnan(engine.instant("(foo - 2) / 0", 0).value[0].value)
    assert math.isnan(engine.instant("ln(-foo)", 0).value[0].value)
    assert engine.instant("ln(foo - 2)", 0).value[0].value == -math.inf
    assert math.isnan(engine.instant("foo % 0", 0).value[0].value)


def test_parse_errors_are_bad_data_with_position() -> None:
    engine = _engine({})
    with pytest.raises(PromQLError) as err:
        engine.instant("foo{", 0)
    assert err.value.kind == "bad_data"
    assert err.value.message == "1:5: parse error: unexpected end of input inside braces"
    with pytest.raises(PromQLError, match="parse error: expected type range vector"):
        engine.instant("rate(foo)", 0)


def test_api_shapes() -> None:
    engine = _engine({FOO: [(0, 1.5), (30 * S, 2.0)]})
    assert engine.instant("foo", 30 * S).to_api() == {
        "resultType": "vector", "result": [{"metric": {"__name__": "foo", "job": "a"}, "value": [30, "2"]}]}
    assert engine.instant("1 / 3", 1500).to_api() == {"resultType": "scalar",
                                                      "result": [1.5, "0.3333333333333333"]}
    assert engine.instant('"hi"', 0).to_api() == {"resultType": "string", "result": [0, "hi"]}
    matrix = engine.instant("foo[1m]", 30 * S).to_api()
    assert matrix["resultType"] == "matrix"
    assert matrix["result"][0]["values"] == [[0, "1.5"], [30, "2"]]
    ranged = engine.range("foo * 2", 0, 30 * S, 15 * S).to_api()
    assert ranged["result"] == [{"metric": {"job": "a"}, "values": [[0, "3"], [15, "3"], [30, "4"]]}]
    assert engine.range("time()", 0, 10 * S, 5 * S).to_api()["result"] == [
        {"metric": {}, "values": [[0, "0"], [5, "5"], [10, "10"]]}]


def test_range_query_errors() -> None:
    engine = _engine({FOO: [(0, 1.0)]})
    with pytest.raises(PromQLError, match='invalid expression type "range vector"'):
        engine.range("foo[5m]", 0, 60 * S, 15 * S)
    with pytest.raises(PromQLError, match="zero or negative query resolution step"):
        engine.range("foo", 0, 60 * S, 0)
    with pytest.raises(PromQLError, match="11,000 points"):
        engine.range("foo", 0, 20_000 * S, S)


def test_format_value_matches_go() -> None:
    assert format_value(1e21) == "1000000000000000000000"
    assert format_value(1e-7) == "0.0000001"
    assert format_value(0.1 + 0.2) == "0.30000000000000004"
    assert format_value(-math.inf) == "-Inf"
    assert format_value(math.nan) == "NaN"
    assert format_value(-0.0) == "-0"


def test_subquery_steps_are_aligned_to_absolute_time() -> None:
    engine = _engine({FOO: [(i * 10 * S, float(i)) for i in range(100)]})
    # [5m:1m] at t=330s evaluates the inner query at 60,120,...,300 (aligned), not 30,90,...
    assert engine.instant("count_over_time(foo[5m:1m])", 330 * S).value[0].value == 5.0
    assert engine.instant("min_over_time(foo[5m:1m])", 330 * S).value[0].value == 6.0


def test_topk_keeps_labels_and_sort_orders() -> None:
    engine = _engine({(("__name__", "m"), ("i", str(i))): [(0, float(v))] for i, v in enumerate([5, 1, 9, 3])})
    top = engine.instant("topk(2, m)", 0).value
    assert [s.labels["i"] for s in top] == ["2", "0"]
    assert [s.value for s in engine.instant("sort_desc(m)", 0).value] == [9, 5, 3, 1]
    assert [s.value for s in engine.instant("sort(m)", 0).value] == [1, 3, 5, 9]
