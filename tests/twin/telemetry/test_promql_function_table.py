"""One PromQL function table: the evaluator and `diagnose` (Prometheus' error messages) read the
same row per function, and every function the promtool corpus calls has one."""

from __future__ import annotations

import dataclasses
import re

import promql_diff_harness as harness
import pytest

from sregym.twin.telemetry.promql import Engine, PromQLError
from sregym.twin.telemetry.promql import functions as F
from sregym.twin.telemetry.promql.diagnose import diagnose
from sregym.twin.telemetry.promql.values import Vec, VSeries

_AGGREGATORS = {"sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
                "count_values", "group", "by", "without", "on", "ignoring", "group_left", "group_right",
                "bool", "offset", "and", "or", "unless", "atan2", "start", "end"}
_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


def _corpus_calls() -> tuple[set[str], set[str]]:
    """Function names the corpus calls: in queries that must evaluate, and in all of them."""
    evaluated: set[str] = set()
    called: set[str] = set()
    for line in harness.CORPUS.read_text().splitlines():
        if "|" not in line or line.startswith("#"):
            continue
        head, _, query = line.partition("|")
        names = {n for n in _CALL.findall(re.sub(r'"[^"]*"', '""', query)) if n not in _AGGREGATORS}
        called |= names
        if "error" not in head:
            evaluated |= names
    return evaluated, called


def test_every_function_the_corpus_calls_has_a_row() -> None:
    evaluated, called = _corpus_calls()
    assert len(evaluated) >= 30
    assert evaluated <= {name for name, fn in F.FUNCTIONS.items() if fn.call is not None}
    unknown = called - set(F.FUNCTIONS)
    # Misspelt names in parse-error lines are the only calls without a row.
    assert all(diagnose(f"{name}(up)") == f'1:1: parse error: unknown function with name "{name}"'
               for name in unknown)


def test_rows_are_consistent() -> None:
    for name, fn in F.FUNCTIONS.items():
        assert fn.name == name
        assert fn.return_type in (F.VECTOR, F.SCALAR)
        assert set(fn.arg_types) <= {F.VECTOR, F.MATRIX, F.SCALAR, F.STRING}
        if fn.variadic:
            assert fn.arg_types, name
        if fn.call is not None and fn.arg_types.count(F.MATRIX):
            assert fn.call in (F._range_call, F._absent_over_time_call)


def test_diagnose_and_evaluate_read_the_same_row(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(harness.load_tsdb([]))
    assert diagnose("abs(1, 2)") == '1:1: parse error: expected 1 argument(s) in call to "abs", got 2'
    assert engine.instant("abs(vector(-3))", 0).to_api()["result"][0]["value"][1] == "3"
    original = F.FUNCTIONS["abs"]
    # Change abs's row: diagnose checks calls against the new signature and return type ...
    monkeypatch.setitem(F.FUNCTIONS, "abs", dataclasses.replace(original, arg_types=(F.SCALAR,),
                                                                return_type=F.SCALAR))
    assert diagnose("abs(up)") == ('1:5: parse error: expected type scalar in call to function "abs", '
                                   'got instant vector')
    assert "got scalar instead" in (diagnose("abs(1)[5m:]") or "")
    # ... and the evaluator runs the row's call, or refuses a row without one.
    monkeypatch.setitem(F.FUNCTIONS, "abs", dataclasses.replace(
        original, call=lambda engine, fn, args, ctx: Vec([VSeries({}, [42.0] * ctx.n)])))
    assert engine.instant("abs(vector(-3))", 0).to_api()["result"][0]["value"][1] == "42"
    monkeypatch.setitem(F.FUNCTIONS, "abs", dataclasses.replace(original, call=None))
    with pytest.raises(PromQLError, match="not supported"):
        engine.instant("abs(vector(-3))", 0)
