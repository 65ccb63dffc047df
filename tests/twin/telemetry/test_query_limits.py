"""Query engines in linear time and within budgets.

Regexes in PromQL and LogQL run on RE2, as in Prometheus and Loki: a pattern that makes a
backtracking engine explode (`(\\w+)+x` against a long name without an `x`: 2^n paths for Python's
`re`) is answered at once, and syntax RE2 refuses (lookarounds, backreferences) is refused with
Go's wording. Every query has a sample and time budget that fails with Prometheus' own errors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sregym.twin.telemetry import logql
from sregym.twin.telemetry.promql import Engine, PromQLError
from sregym.twin.telemetry.promql.budget import Budget
from sregym.twin.telemetry.regex import RegexError, check, compile_anchored
from sregym.twin.telemetry.tsdb import TSDB, Matcher

# 60 word characters and no "x": Python's `re` would try ~2^60 ways to split it per series.
LONG = "a" * 30 + "_" + "b" * 29


@pytest.fixture(scope="module")
def tsdb() -> TSDB:
    db = TSDB()
    for i in range(400):
        for t in range(0, 600_000, 15_000):
            db.append({"__name__": f"{LONG}{i}", "job": "j"}, t, float(i))
    for t in range(0, 600_000, 15_000):
        db.append({"__name__": "matching_x", "job": "j"}, t, 1.0)
        db.append({"__name__": "up", "job": "j"}, t, 1.0)
    return db


def test_catastrophic_pattern_is_answered_correctly(tsdb: TSDB) -> None:
    result = Engine(tsdb).instant(r'{__name__=~"(\\w+)+x"}', 300_000)
    assert [s.labels["__name__"] for s in result.value] == ["matching_x"]
    result = Engine(tsdb).instant(r'{__name__=~"(\\w+)+b9"}', 300_000)
    assert [s.labels["__name__"] for s in result.value] == [f"{LONG}9"]
    negated = Engine(tsdb).instant(r'count({__name__!~"(\\w+)+x", job="j"})', 300_000)
    assert negated.value[0].value == 401.0  # the 400 long names and `up`


def test_label_replace_and_matchers_use_the_same_engine(tsdb: TSDB) -> None:
    query = r'label_replace(up, "first", "$1", "job", "((\\w+)+)+z|(j)")'
    result = Engine(tsdb).instant(query, 300_000)
    assert result.value[0].labels.get("first") is None  # $1 is the unmatched first group
    with pytest.raises(PromQLError, match=r"invalid regular expression in label_replace\(\): \(\?=x\)"):
        Engine(tsdb).instant('label_replace(up, "a", "b", "job", "(?=x)")', 300_000)


@pytest.mark.parametrize(("pattern", "message"), [
    ("(?=x)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("a(?<!b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"),
    (r"(a)\1", r"error parsing regexp: invalid escape sequence: `\1`"),
    ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
    ("(", "error parsing regexp: missing closing ): `^(?:()$`"),
])
def test_go_regexp_errors(pattern: str, message: str) -> None:
    assert check(pattern, anchored=True) == message
    with pytest.raises(RegexError):
        compile_anchored(pattern)


def test_logql_regexes_are_re2() -> None:
    line = "x" * 40
    entries = [(1_000_000_000 + i, line + str(i)) for i in range(50)]

    def source(matchers: list[Matcher]) -> Iterator[tuple[dict[str, str], list[tuple[int, str]]]]:
        labels = {"job": "j", "name": LONG}
        if all(m.matches(labels) for m in matchers):
            yield labels, entries

    expr = logql.parse(r'{job="j", name=~"(\\w+)+x"} |~ "(x+x+)+y"')
    assert logql.select_logs(expr, source, 0, 10**12) == []
    expr = logql.parse(r'{job="j"} |~ "(x+x+)+4$"')
    assert [e[1] for _labels, es in logql.select_logs(expr, source, 0, 10**12) for e in es] == [
        line + "4"]
    for bad, text in (('{job=~"(?=j)"}', "invalid or unsupported Perl syntax: `(?=`"),
                      (r'{job="j"} |~ "(a)\\1"', r"invalid escape sequence: `\1`")):
        with pytest.raises(logql.LogQLError, match=text.replace("(", r"\(").replace(")", r"\)")
                           .replace("?", r"\?").replace("\\1", r"\\1")):
            logql.parse(bad)


def test_sample_budget(tsdb: TSDB) -> None:
    small = Engine(tsdb, max_samples=1000)
    assert small.instant("up", 300_000).value  # one sample: within budget
    with pytest.raises(PromQLError) as err:
        small.instant(f'count_over_time({{__name__=~"{LONG[:5]}.*"}}[10m])', 600_000)
    assert err.value.kind == "execution"
    assert err.value.message == ("query processing would load too many samples into memory in "
                                 "query execution")


def test_year_long_subquery_fails_before_allocating(tsdb: TSDB) -> None:
    engine = Engine(tsdb, max_samples=5_000_000)
    with pytest.raises(PromQLError, match="too many samples"):
        engine.instant("max_over_time(up[1y:1s])", 600_000)
    # The same shape within budget still answers.
    assert engine.instant("max_over_time(up[5m:15s])", 600_000).value[0].value == 1.0


def test_timeout_budget(tsdb: TSDB) -> None:
    with pytest.raises(PromQLError) as err:
        Engine(tsdb, timeout_s=0).instant("sum(up)", 300_000)
    assert err.value.kind == "timeout"
    assert err.value.message == "query timed out in expression evaluation"
    assert Engine(tsdb, timeout_s=60).instant("sum(up)", 300_000).value[0].value == 1.0


def test_budget_counts_and_expires() -> None:
    now = [0.0]
    budget = Budget(max_samples=10, timeout_s=5, clock=lambda: now[0])
    budget.charge(10)
    with pytest.raises(PromQLError, match="too many samples"):
        budget.charge(1)
    now[0] = 5.0
    with pytest.raises(PromQLError, match="timed out"):
        budget.check_time()


def test_logql_regexp_parser_extracts_named_groups() -> None:
    entries = [(1, "GET /api/users 200 12ms"), (2, "POST /x 500 1ms"), (3, "garbage")]

    def source(_matchers: list[Matcher]) -> Iterator[tuple[dict[str, str], list[tuple[int, str]]]]:
        yield {"job": "a"}, entries

    expr = logql.parse(r'{job="a"} | regexp "(?P<method>\\w+) (?P<path>\\S+) (?P<status>\\d+)" | status="500"')
    assert logql.select_logs(expr, source, 0, 10) == [
        ({"job": "a", "method": "POST", "path": "/x", "status": "500"}, [(2, "POST /x 500 1ms")])]
    with pytest.raises(logql.LogQLError, match=r"^at least one named capture must be supplied$"):
        logql.parse(r'{job="a"} | regexp "(\\w+)"')
    with pytest.raises(logql.LogQLError, match=r"invalid or unsupported Perl syntax"):
        logql.parse(r'{job="a"} | regexp "(?P<x>a)(?=b)"')
