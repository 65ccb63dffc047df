"""The PostgreSQL lock-contention problem on the Astronomy Shop: the blocking chain an engineer
finds, and the fixes that do not work (restarting accounting; terminating the backend while the
Job still retries)."""

from __future__ import annotations

from typing import Any

from tests.support.problem_runs import deployed

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.cluster.twin import TwinCluster
from sregym.problems.catalog.astronomy_shop.postgres_locks import JOB, TERMINATE_SQL
from sregym.problems.registry import get_problem

PID = "astronomy-shop/postgres-lock-contention-v1"
CHAIN = ("SELECT a.application_name, a.wait_event_type, a.wait_event, l.relation::regclass, l.mode, l.granted, "
         "cardinality(pg_blocking_pids(a.pid)) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
         "WHERE l.locktype = 'relation' ORDER BY l.granted DESC")


def _psql(cluster: TwinCluster, sql: str) -> Any:
    pod = next(p["metadata"]["name"] for p in cluster.list("Pod", NAMESPACE)
               if p["metadata"]["name"].startswith("postgresql-") and p["status"].get("phase") == "Running")
    return cluster.exec(NAMESPACE, pod, ["psql", "-U", "root", "-d", "otel", "-At", "-c", sql])


def test_the_problem_is_registered_with_its_sources_and_job_root_cause() -> None:
    problem = get_problem(PID)
    assert problem.tags.sources == ("sregym:postgres_lock_contention_product_catalog",)
    names = {(r.entity.kind, r.entity.name) for r in problem.ground_truth.root_causes}
    assert names == {("Job", JOB), ("Deployment", "postgresql")}


def test_restarting_accounting_leaves_it_blocked_and_terminating_alone_is_undone_by_the_job() -> None:
    cluster, run = deployed(PID)
    run.inject()
    run.advance(120)
    chain = _psql(cluster, CHAIN).stdout.splitlines()
    assert chain[0] == f'{JOB}|Timeout|PgSleep|accounting."order"|AccessExclusiveLock|t|0'
    assert chain[1] == '|Lock|relation|accounting."order"|RowExclusiveLock|f|1'
    accounting = next(p["metadata"]["name"] for p in cluster.list("Pod", NAMESPACE)
                      if p["metadata"]["name"].startswith("accounting-"))
    assert "Timeout during reading attempt" in cluster.logs(NAMESPACE, accounting)
    # A restart of the blocked service changes nothing: its new connection queues the same way.
    cluster.patch("Deployment", NAMESPACE, "accounting", {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": "2025-06-01T00:00:00Z"}}}}})
    score = run.verify(window_s=120)
    assert not score.passed
    assert {c.name for c in score.checks if not c.passed} >= {"consumer_group_keeps_up"}
    # Ending the backend while the Job still exists: the Job's retry takes the lock again.
    assert _psql(cluster, TERMINATE_SQL).stdout == "t\n"
    run.advance(60)
    again = _psql(cluster, CHAIN).stdout.splitlines()
    assert again and again[0].startswith(f'{JOB}|Timeout|PgSleep|accounting."order"|AccessExclusiveLock|t')
    failed_pods = [p for p in cluster.list("Pod", NAMESPACE)
                   if p["metadata"]["name"].startswith(JOB + "-") and p["status"].get("phase") == "Failed"]
    assert len(failed_pods) == 1
