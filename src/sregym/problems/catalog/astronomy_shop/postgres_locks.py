"""Astronomy Shop lock contention in PostgreSQL: a ledger export Job holds an `ACCESS EXCLUSIVE`
lock on `accounting."order"` (SREGym's and ITBench's database lock-contention scenario).

The Job's psql opens a transaction, locks the table and then runs for hours; the twin's
PostgreSQL model keeps the lock for as long as that backend lives. accounting's inserts queue
behind it (`wait_event` `Lock`/`relation`), each one until Npgsql's 30 s command timeout, so its
Kafka consumer handles one order per 30 s and the `accounting` group's lag grows while every pod
is Running and Ready. The blocking chain is visible to an engineer: `pg_stat_activity` joined
with `pg_locks`, or `pg_blocking_pids()`.

The fix has two halves, both needed: the backend must end (`pg_terminate_backend`; deleting the
Job's pod alone does not do it, the server notices a gone client only when the statement ends),
and the Job must not run again (it retries a failed pod, and the retry takes the lock again).
Restarting accounting changes nothing.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems import mechanisms
from sregym.problems.catalog.astronomy_shop.app_parity import QUEUE_IMPACT, keeps_up
from sregym.problems.catalog.astronomy_shop.common import APP, SUITE, deploy, mitigation, obj
from sregym.problems.model import Action, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

mechanisms({"lock_contention": ("lock", "locked", "blocking", "blocked", "access exclusive", "accessexclusivelock",
                                "pg_locks", "pg_blocking_pids", "lock wait", "long-running transaction",
                                "long running transaction", "idle in transaction", "pg_terminate_backend")},
           related={"lock_contention": ("retry_storm", "connection_pool")})

JOB = "ledger-export"
HOLD_S = 7200  # the export's statement runs far longer than any problem window
LOCKING_SQL = f'BEGIN; LOCK TABLE accounting."order" IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({HOLD_S}); COMMIT;'
# The shop places a few orders a minute and the blocked consumer still handles one per 30 s: the
# backlog needs a few minutes to stand out from the consumer's normal lag of one or two records.
LAG_SETTLE_S = 240.0
TERMINATE_SQL = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{JOB}'"


def export_job() -> dict[str, Any]:
    """The Job a DBA started: psql from the database image, as the superuser the chart creates."""
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": JOB, "namespace": NAMESPACE, "labels": {"app.kubernetes.io/name": JOB}},
        "spec": {"backoffLimit": 6, "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": JOB}},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "psql", "image": "postgres:17.6",
                "command": ["psql", "-h", "postgresql", "-U", "root", "-d", "otel", "-v", "ON_ERROR_STOP=1",
                            "-c", LOCKING_SQL],
                "env": [{"name": "PGPASSWORD", "value": "otel"}, {"name": "PGAPPNAME", "value": JOB}],
                "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}}}]}}},
    }


@problem
def postgres_lock_contention() -> Problem:
    """A ledger export Job holds an `ACCESS EXCLUSIVE` lock on `accounting."order"` for hours.

    accounting's inserts wait behind the lock until their command timeout and fail
    (`Timeout during reading attempt`); its consumer group's lag on `orders` grows while every pod
    is Running. `pg_stat_activity` shows accounting's backend waiting (`Lock`/`relation`) and the
    Job's backend active in `pg_sleep` inside its transaction; `pg_blocking_pids()` names it.
    Fix: delete the Job (it retries and locks again) and end its backend with
    `pg_terminate_backend`."""
    return Problem(
        id="astronomy-shop/postgres-lock-contention-v1",
        title="orders pile up in Kafka while every pod is running",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:postgres_lock_contention_product_catalog",)),
        faults=(FaultSpec(fault="postgres_session_job", params={"job": export_job(), "application_name": JOB,
                                                                "database": "otel"}),),
        ground_truth=GroundTruth(
            root_causes=(obj("Job", JOB), deploy("postgresql")), mechanism="lock_contention",
            detail=f"Job {JOB}'s psql session (application_name {JOB}) holds an ACCESS EXCLUSIVE lock on "
                   "accounting.order in PostgreSQL inside a transaction that never ends (pg_sleep); accounting's "
                   "INSERTs wait on the lock (wait_event Lock/relation, pg_blocking_pids names the Job's backend) "
                   "until Npgsql's command timeout",
            detail_keywords=("lock", "ACCESS EXCLUSIVE", "accounting.order", JOB, "pg_locks", "pg_stat_activity",
                             "pg_blocking_pids", "pg_terminate_backend", "transaction"),
            affected=(deploy("accounting"),), impact_keywords=(*QUEUE_IMPACT, "timeout"),
            description="A long-running transaction of a maintenance Job blocks accounting's writes to its orders "
                        "table; accounting processes one order per command timeout and its Kafka lag grows."),
        mitigation=mitigation(keeps_up("accounting")),
        gold=(Action(op="delete", kind="Job", namespace=NAMESPACE, name=JOB),
              Action(op="exec", kind="Deployment", namespace=NAMESPACE, name="postgresql",
                     command=("psql", "-U", "root", "-d", "otel", "-c", TERMINATE_SQL))),
        settle_s=LAG_SETTLE_S,
    )
