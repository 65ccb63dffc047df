"""A Job whose PostgreSQL session holds locks: created like any workload a DBA starts, undone the
way a DBA would undo it (delete the Job, then end its backend with `pg_terminate_backend`).

Deleting the Job alone would not do: the twin's PostgreSQL, like the real one, keeps a backend
that is running a statement after its client went away, and the backend keeps its locks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.app_config import running_pod
from sregym.faults.base import Fault, FaultParams, fault

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class SessionJobParams(FaultParams):
    job: dict[str, Any]  # the Job manifest (its psql sets PGAPPNAME to `application_name`)
    application_name: str
    deployment: str = "postgresql"  # where recover runs psql
    database: str = "postgres"
    admin_user: str = "root"


@fault
class PostgresSessionJob(Fault):
    """Create a Job whose psql session holds a transaction open; recover deletes the Job and
    terminates the backends with its `application_name`."""

    name = "postgres_session_job"
    Params = SessionJobParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, SessionJobParams)
        cluster.create(p.job)
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, SessionJobParams)
        meta = p.job["metadata"]
        if cluster.get("Job", meta["namespace"], meta["name"]) is not None:
            cluster.delete("Job", meta["namespace"], meta["name"])
        pod = running_pod(cluster, meta["namespace"], p.deployment)
        sql = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{p.application_name}'"
        result = cluster.exec(meta["namespace"], pod, ["psql", "-U", p.admin_user, "-d", p.database, "-c", sql])
        if result.exit_code != 0:
            raise RuntimeError(f"psql in {pod} failed ({result.exit_code}): {result.stderr or result.stdout}")
