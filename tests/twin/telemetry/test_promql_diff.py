"""Differential test: every corpus query answers as Prometheus 2.42's promtool does."""

from __future__ import annotations

import re
import shutil

import promql_diff_harness as harness
import pytest

from sregym.twin.telemetry.promql import Engine, PromQLError


@pytest.fixture(scope="module")
def cases() -> list[harness.Case]:
    assert shutil.which("promtool") or harness.Path(harness.PROMTOOL).exists(), "promtool is required"
    return harness.run()


def test_corpus_is_large_and_covers_every_group() -> None:
    text = harness.CORPUS.read_text()
    queries = {c.query for c in harness.load_corpus()}
    assert len(queries) >= 150
    for group in ("offset and @", "subqueries", "vector matching", "set operators", "aggregations",
                  "histogram_quantile", "parse errors", "duplicate labelsets"):
        assert group in text


def test_every_query_agrees_with_promtool(cases: list[harness.Case]) -> None:
    bad = [f"line {c.line}: {c.query} @ {c.t_ms}ms: {c.detail}" for c in cases if c.verdict != "ok"]
    assert not bad, "\n".join(bad)


def test_rejections_agree_and_are_not_vacuous(cases: list[harness.Case]) -> None:
    rejected = [c for c in cases if c.t_ms is None]
    assert len(rejected) >= 25
    assert all(c.our_error for c in rejected)
    answered = [c for c in cases if c.t_ms is not None and c.ours]
    assert len(answered) >= 200  # most queries return data, so agreement is not trivially empty


def test_parse_errors_carry_prometheus_positions(cases: list[harness.Case]) -> None:
    exact = [c for c in cases if c.exact]
    assert len(exact) >= 60  # their full messages are compared with promtool's by the test above
    assert all(re.match(r"^\d+:\d+: parse error: ", c.our_error or "") for c in exact)


@pytest.mark.parametrize(("query", "message"), [
    # Multi-line queries cannot live in the one-line corpus; messages as promtool 2.42 prints them.
    ("up\n  + foo bar", '2:9: parse error: unexpected identifier "bar"'),
    ("sum(\n  rate(up)\n)",
     '2:8: parse error: expected type range vector in call to function "rate", got instant vector'),
    ('up{job="\u00e9"} +\n b\u00e4r baz', "2:3: parse error: unexpected character: '\u00e4'"),
    ("# only a comment", "1:1: parse error: no expression found in input"),
])
def test_multi_line_parse_error_positions(query: str, message: str) -> None:
    engine = Engine(harness.load_tsdb([]))
    with pytest.raises(PromQLError) as info:
        engine.instant(query, 0)
    assert info.value.kind == "bad_data"
    assert info.value.message == message


def test_range_queries_equal_instant_queries_at_each_step() -> None:
    engine = Engine(harness.load_tsdb(harness.build_series()))
    queries = sorted({c.query for c in harness.load_corpus() if c.t_ms is not None})
    checked = 0
    for query in queries:
        if "start()" in query or "end()" in query:
            continue  # @ start()/end() legitimately depend on the query's own range
        if "[" in query and ":" not in query.split("[", 1)[1].split("]")[0] and "_over_time" not in query \
                and "rate" not in query and "delta" not in query and "deriv" not in query \
                and "predict" not in query and "changes" not in query and "resets" not in query:
            continue  # a bare range selector cannot be a range query
        try:
            rng = engine.range(query, 20 * 60_000, 25 * 60_000, 60_000)
        except PromQLError:  # errors are covered by the promtool test
            continue
        by_step: dict[int, dict[tuple, float]] = {}
        for series in rng.value:
            for t, v in series.points:
                by_step.setdefault(t, {})[tuple(sorted(series.labels.items()))] = v
        for t in range(20 * 60_000, 25 * 60_000 + 1, 60_000):
            inst = engine.instant(query, t)
            if inst.type == "scalar":
                expected = {(): inst.value.value}
            else:
                expected = {tuple(sorted(s.labels.items())): s.value for s in inst.value}
            got = by_step.get(t, {})
            assert got.keys() == expected.keys(), (query, t)
            for k, v in expected.items():
                assert harness._close(got[k], v), (query, t, k)
        checked += 1
    assert checked >= 120
