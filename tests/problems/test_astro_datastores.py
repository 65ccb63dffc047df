"""Astronomy Shop backing-store problems: the case tables, the ITBench ground truths, the gold
fixes putting the chart's container fields back, and the psql fault's command and undo. The
check protocol of every problem runs in the registry-wide batch (`support/problem_batch.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.cluster.base import ExecResult
from sregym.faults.postgres_sql import PostgresSql
from sregym.problems.catalog.astronomy_shop.common import chart_object
from sregym.problems.catalog.astronomy_shop.datastores import CASES, GRANTS
from sregym.problems.registry import get_problem

IDS = [f"astronomy-shop/{c.slug}-v1" for c in (*CASES, *GRANTS)]
ITBENCH = {34: "valkey-cart-password", 40: "valkey-cart-oom"}  # scenario -> slug; v2 entity Deployment/valkey-cart


@pytest.mark.parametrize("problem_id", IDS)
def test_visible_texts_do_not_reveal(problem_id: str) -> None:
    problem = get_problem(problem_id)
    title = problem.title.lower()  # the id is not shown to the agent; the title is
    assert not any(w in title for w in ("fault", "inject", "sregym", "benchmark", "revoke", "oom", "password"))
    assert "astronomy-shop" in problem.suites


@pytest.mark.parametrize("scenario", sorted(ITBENCH))
def test_itbench_ground_truth_is_the_store_deployment(scenario: int) -> None:
    problem = get_problem(f"astronomy-shop/{ITBENCH[scenario]}-v1")
    assert [(rc.entity.kind, rc.entity.name) for rc in problem.ground_truth.root_causes] == \
        [("Deployment", "valkey-cart")]
    assert f"itbench:{scenario}" in problem.tags.sources
    assert "itbench-aa" not in problem.suites  # ITBench-AA did not release 34 or 40


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.slug)
def test_store_fault_and_gold_touch_one_container(case: Any) -> None:
    """The fault patches the store's own container; the gold patch sets exactly the chart's values back."""
    problem = get_problem(f"astronomy-shop/{case.slug}-v1")
    (patch,) = problem.faults[0].params["patches"]
    assert (patch["kind"], patch["name"]) == ("Deployment", case.store)
    (faulted,) = patch["patch"]["spec"]["template"]["spec"]["containers"]
    chart = chart_object("Deployment", case.store)["spec"]["template"]["spec"]["containers"][0]
    assert faulted["name"] == chart["name"] and any(faulted[k] != chart.get(k) for k in case.fields)
    (gold,) = problem.gold
    (restored,) = gold.patch["spec"]["template"]["spec"]["containers"]
    assert {k: v for k, v in restored.items() if k != "name"} == {k: chart.get(k) for k in case.fields}
    assert problem.ground_truth.root_causes[0].entity.name == case.store


@pytest.mark.parametrize("case", GRANTS, ids=lambda c: c.slug)
def test_grant_gold_undoes_the_revoke(case: Any) -> None:
    problem = get_problem(f"astronomy-shop/{case.slug}-v1")
    params = problem.faults[0].params
    assert params["statement"] == f"REVOKE {case.privilege} ON {case.table} FROM otelu"
    assert problem.gold[0].command[-1] == params["undo"] == f"GRANT {case.privilege} ON {case.table} TO otelu"
    assert [a.entity.name for a in problem.ground_truth.affected] == [case.client]


class _Cluster:
    """Just what the psql fault reads: a Deployment, its running pod, and exec."""

    def __init__(self, stderr: str = "") -> None:
        self.calls: list[list[str]] = []
        self.stderr = stderr

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        return {"spec": {"selector": {"matchLabels": {"app": name}}}}

    def list(self, kind: str, namespace: str | None, label_selector: str = "") -> list[dict[str, Any]]:
        return [{"metadata": {"name": "postgresql-abc-1"}, "status": {"phase": "Running"}}]

    def exec(self, namespace: str, pod: str, argv: list[str]) -> ExecResult:
        self.calls.append(argv)
        return ExecResult(stdout="REVOKE\n", stderr=self.stderr, exit_code=1 if self.stderr else 0)


def test_postgres_sql_runs_the_statement_then_its_undo() -> None:
    fault = PostgresSql({"namespace": "ns", "deployment": "postgresql", "database": "otel",
                         "statement": "REVOKE x", "undo": "GRANT x"})
    cluster = _Cluster()
    fault.recover(cluster, fault.inject(cluster))  # type: ignore[arg-type]
    assert cluster.calls == [["psql", "-U", "root", "-d", "otel", "-c", "REVOKE x"],
                             ["psql", "-U", "root", "-d", "otel", "-c", "GRANT x"]]
    with pytest.raises(RuntimeError, match="permission denied"):
        fault.inject(_Cluster(stderr="ERROR:  permission denied"))  # type: ignore[arg-type]
